//! Measures what the shell shim pays per command: in a fresh process, build
//! a `Masker` (with a few scrubbed values) and mask one command. The
//! credential patterns compile lazily, on first need, so the first call in
//! a process is the figure that matters; warm calls are shown for
//! long-lived adapters.
//!
//! With `--after-regex`, an unrelated regex is compiled and run first, as
//! in the shim, where the policy engine has already used the regex crate
//! by the time the decision is audited (the first regex of a process pays
//! a few hundred microseconds of page faults and one-time setup).
//!
//! `cargo run --release -p aileron-audit --example mask_bench -- [--after-regex] 'git status'`

use aileron_audit::Masker;
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let after_regex = args.first().is_some_and(|a| a == "--after-regex");
    if after_regex {
        args.remove(0);
        let re = regex::Regex::new(r"^git\s+(push|pull)\b.*--force").unwrap();
        black_box(re.is_match("git push origin main --force"));
    }
    let cmd = args.pop().unwrap_or_else(|| {
        "cargo test --workspace --all-features -- --nocapture 2>&1 | tee /tmp/out.log".into()
    });
    let secrets: Vec<String> = (0..5)
        .map(|i| format!("scrubbed-secret-{i}-value"))
        .collect();
    let t = Instant::now();
    let masker = Masker::new(black_box(secrets));
    let built = t.elapsed();
    let masked = masker.mask(black_box(&cmd));
    let cold = t.elapsed();
    let t = Instant::now();
    for _ in 0..1000 {
        black_box(masker.mask(black_box(&cmd)));
    }
    let warm = t.elapsed() / 1000;
    println!(
        "{:>4} bytes  cold new+mask {:>7.1}us (new {:>5.1}us)  warm mask {:>6.2}us  {masked}",
        cmd.len(),
        cold.as_secs_f64() * 1e6,
        built.as_secs_f64() * 1e6,
        warm.as_secs_f64() * 1e6,
    );
}
