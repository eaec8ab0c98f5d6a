//! What the process benches share: a Go project with a policy, the built
//! binaries, and paired timing.
//!
//! Criterion measures one function after the other, so a change in the
//! machine's load between them (other builds, the hypervisor) moves the
//! ratio the goals are stated in. Here the programs take turns, run by
//! run, and each one's median is reported beside the first one's.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A throw-away Go project (`proj/` with `aileron.yaml` and `go.mod`, so
/// the `lang/go` profile applies) and a home directory beside it.
pub struct Project {
    pub tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub home: PathBuf,
}

impl Project {
    pub fn go(policy: &str) -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("proj");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(dir.join("aileron.yaml"), policy).unwrap();
        std::fs::write(dir.join("go.mod"), "module example.com/x\n").unwrap();
        Project { tmp, dir, home }
    }
}

/// `program` run in `dir` with `home` as its home and no session or data
/// directory inherited from the bench's own environment.
pub fn isolated(program: impl AsRef<std::ffi::OsStr>, dir: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir)
        .env("HOME", home)
        .env_remove("AILERON_SOCKET")
        .env_remove("AILERON_DATA");
    cmd
}

/// A binary of this package as a user runs it: built beside the bench
/// (target/release/deps/BENCH-HASH → target/release/NAME), then copied into
/// `into`, as `cargo install` copies it.
///
/// The copy matters on Linux: the linker writes its output through a
/// shared mapping, which leaves the file in the page cache as 4 KiB pages,
/// while a copied file is cached in large folios that map faster at every
/// start. The same bytes run from target/ measured ~0.2 ms slower per
/// start on the development VM.
pub fn installed_binary(name: &str, into: &Path) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let built = exe.parent().unwrap().parent().unwrap().join(name);
    assert!(built.exists(), "build {name} first: {}", built.display());
    let bin = into.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let installed = bin.join(name);
    std::fs::copy(&built, &installed).unwrap();
    installed
}

/// Runs each program `runs` times, in turn, and prints every median and
/// its ratio to the first one's (the baseline, e.g. `bash -c true`); the
/// medians, in the programs' order, for the figures derived from them.
pub fn interleaved(
    title: &str,
    runs: usize,
    programs: &mut [(&str, &mut dyn FnMut())],
) -> Vec<Duration> {
    let names: Vec<&str> = programs.iter().map(|(name, _)| *name).collect();
    interleaved_timed(title, runs, &names, |i| {
        let start = Instant::now();
        (programs[i].1)();
        start.elapsed()
    })
}

/// Runs `run(0)`, `run(1)`, ... (one for each of `names`) in turn, `runs`
/// times, each returning its own time (a download's as its client reports
/// it, without the client's start); prints and returns each one's median.
pub fn interleaved_timed(
    title: &str,
    runs: usize,
    names: &[&str],
    mut run: impl FnMut(usize) -> Duration,
) -> Vec<Duration> {
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); names.len()];
    for _ in 0..runs {
        for (i, t) in times.iter_mut().enumerate() {
            t.push(run(i));
        }
    }
    let medians: Vec<Duration> = times
        .iter_mut()
        .map(|t| {
            t.sort();
            t[t.len() / 2]
        })
        .collect();
    println!("{title}: medians of {runs} interleaved runs each");
    for (name, median) in names.iter().zip(&medians) {
        println!(
            "  {name:<60} {:>7.3} ms  {:.2}×",
            median.as_secs_f64() * 1e3,
            median.as_secs_f64() / medians[0].as_secs_f64()
        );
    }
    medians
}
