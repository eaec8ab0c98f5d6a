//! What `aileron launch`'s enforcement costs, each figure paired with
//! `--enforce none` in interleaved runs:
//!
//! - the box's set-up at launch: `-- /bin/true` under `files,net` (writes
//!   confined, stores masked, host sockets closed, a network namespace
//!   whose listener the proxy adopts) and `all` (the box and the exec
//!   supervisor) less under `none` (issue 30: ≤ 50 ms);
//! - per exec of an allowed program: a loop of 200 `/bin/true` under
//!   `exec` and `all`, less the same loop under `none` and less the
//!   set-up above, over 200 (issue 13: ≤ 0.3 ms);
//! - per connect: 2000 connects of a Python program to a Unix socket of
//!   its own under `all` (the supervisor makes each), less `none` and the
//!   set-up;
//! - a real `cargo build` of a crate from the registry cache (serde_json
//!   and regex, offline) and `npm test` of a small package, under `exec`
//!   and `all` (issues 13 and 30: ≤ 1.1× `none`).
//!
//! The box's 16 MiB download through its in-namespace proxy is in the
//! `proxy` bench, beside its upstream.

mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use std::path::Path;
use std::time::Duration;

/// The execs each run of [`LOOP`] makes.
const EXECS: f64 = 200.0;

const LOOP: &str = "i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done";

/// The connects each run of [`CONNECT_LOOP`] makes.
const CONNECTS: f64 = 2000.0;

const CONNECT_LOOP: &str = "import os, socket\n\
try: os.unlink('bench.sock')\nexcept OSError: pass\n\
s = socket.socket(socket.AF_UNIX); s.bind('bench.sock'); s.listen(4096)\n\
for _ in range(2000):\n    c = socket.socket(socket.AF_UNIX); c.connect('bench.sock'); s.accept()[0].close(); c.close()\n";

/// `aileron launch --enforce ENFORCE -- PROGRAM` in `dir`, which must succeed.
fn launch(aileron: &Path, dir: &Path, home: &Path, enforce: &str, program: &[&str]) {
    let cargo_home = std::env::var("CARGO_HOME")
        .unwrap_or_else(|_| format!("{}/.cargo", std::env::var("HOME").unwrap_or_default()));
    let out = support::isolated(aileron, dir, home)
        // The build finds the registry cache where the bench's cargo does.
        .env("CARGO_HOME", cargo_home)
        .args(["launch", "--enforce", enforce, "--"])
        .args(program)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn bench(c: &mut Criterion) {
    let p = support::Project::go("version: 1\ndefault: allow\n");
    let aileron = support::installed_binary("aileron", p.tmp.path());
    support::installed_binary("aileron-sh", p.tmp.path());
    support::installed_binary("aileron-server", p.tmp.path());
    let (dir, home) = (p.dir.clone(), p.home.clone());
    let mut g = c.benchmark_group("enforce");
    g.measurement_time(Duration::from_secs(10)).sample_size(10);
    for enforce in ["none", "exec", "all"] {
        g.bench_function(format!("200 execs, --enforce {enforce}"), |b| {
            b.iter(|| launch(&aileron, &dir, &home, enforce, &["/bin/sh", "-c", LOOP]))
        });
    }
    g.finish();

    let true_in = |enforce: &str| launch(&aileron, &dir, &home, enforce, &["/bin/true"]);
    let setup = support::interleaved(
        "aileron launch -- /bin/true",
        30,
        &mut [
            ("--enforce none", &mut || true_in("none")),
            ("--enforce exec", &mut || true_in("exec")),
            ("--enforce files,net", &mut || true_in("files,net")),
            ("--enforce all", &mut || true_in("all")),
        ],
    );
    println!(
        "box set-up at launch (goal ≤ 50 ms): {:.1} ms (files,net less none); \
         {:.1} ms with the exec supervisor (all less none; exec alone {:.1} ms)",
        ms(setup[2], setup[0]),
        ms(setup[3], setup[0]),
        ms(setup[1], setup[0]),
    );

    let loop_in = |enforce: &str| launch(&aileron, &dir, &home, enforce, &["/bin/sh", "-c", LOOP]);
    let loops = support::interleaved(
        "200 execs of /bin/true from the launched shell",
        10,
        &mut [
            ("--enforce none", &mut || loop_in("none")),
            ("--enforce exec", &mut || loop_in("exec")),
            ("--enforce all", &mut || loop_in("all")),
        ],
    );
    // The loops' difference less the set-up's is what the execs add.
    let per_exec = |i: usize, j: usize| (ms(loops[i], loops[0]) - ms(setup[j], setup[0])) / EXECS;
    println!(
        "per exec, the set-up left out (goal ≤ 0.3 ms): {:.3} ms under exec, {:.3} ms under all",
        per_exec(1, 1),
        per_exec(2, 3),
    );

    // Per connect: the supervisor makes each one in a box with a network
    // of its own (`aileron_supervisor::sockets`). A Unix socket of the
    // program's own, connected CONNECTS times.
    let connects = |enforce: &str| {
        launch(
            &aileron,
            &dir,
            &home,
            enforce,
            &["/usr/bin/python3", "-c", CONNECT_LOOP],
        )
    };
    let connected = support::interleaved(
        "2000 connects to a Unix socket of the program's own",
        10,
        &mut [
            ("--enforce none", &mut || connects("none")),
            ("--enforce all", &mut || connects("all")),
        ],
    );
    println!(
        "per connect, the set-up left out: {:.3} ms under all",
        (ms(connected[1], connected[0]) - ms(setup[3], setup[0])) / CONNECTS
    );

    // `npm test` of a small package: npm runs its `test` script through a
    // shell, node's test runner starts a process per file, and the tests
    // start programs of their own.
    let package = p.tmp.path().join("pkg");
    std::fs::create_dir_all(package.join("test")).unwrap();
    std::fs::write(
        package.join("package.json"),
        r#"{"name": "pkg", "version": "1.0.0", "scripts": {"test": "node --test test/"}}"#,
    )
    .unwrap();
    std::fs::write(package.join("index.js"), "exports.add = (a, b) => a + b;\n").unwrap();
    for i in 0..4 {
        std::fs::write(
            package.join(format!("test/t{i}.test.js")),
            "const test = require('node:test');\nconst assert = require('node:assert');\n\
             const { execFileSync } = require('node:child_process');\n\
             const { add } = require('..');\n\
             test('adds', () => assert.strictEqual(add(2, 3), 5));\n\
             test('runs git', () => assert.match(execFileSync('git', ['--version']).toString(), /git/));\n",
        )
        .unwrap();
    }
    std::fs::write(package.join("aileron.yaml"), "version: 1\ndefault: allow\n").unwrap();
    let npm_test = |enforce: &str| {
        launch(
            &aileron,
            &package,
            &home,
            enforce,
            &["npm", "test", "--silent"],
        )
    };
    support::interleaved(
        "npm test (4 test files, node --test; goal ≤ 1.1×)",
        5,
        &mut [
            ("--enforce none", &mut || npm_test("none")),
            ("--enforce exec", &mut || npm_test("exec")),
            ("--enforce all", &mut || npm_test("all")),
        ],
    );

    // A real build from the registry cache: a crate using serde_json and
    // regex (build scripts, many rustc runs), resolved offline.
    let project = p.tmp.path().join("demo");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(
        project.join("Cargo.toml"),
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nserde_json = \"1\"\nregex = \"1\"\n",
    )
    .unwrap();
    std::fs::write(
        project.join("src/main.rs"),
        "fn main() { let v: serde_json::Value = serde_json::from_str(\"[1]\").unwrap(); println!(\"{v} {}\", regex::Regex::new(\"a+\").unwrap().is_match(\"aa\")); }\n",
    )
    .unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build = |enforce: &str| {
        let _ = std::fs::remove_dir_all(project.join("target"));
        launch(
            &aileron,
            &project,
            &home,
            enforce,
            &[&cargo, "build", "--offline", "-q"],
        )
    };
    std::fs::write(project.join("aileron.yaml"), "version: 1\ndefault: allow\n").unwrap();
    support::interleaved(
        "cargo build (serde_json + regex, from the registry cache; goal ≤ 1.1×)",
        3,
        &mut [
            ("--enforce none", &mut || build("none")),
            ("--enforce exec", &mut || build("exec")),
            ("--enforce all", &mut || build("all")),
        ],
    );
}

/// `a` less `b`, in milliseconds (negative when noise has it so).
fn ms(a: Duration, b: Duration) -> f64 {
    (a.as_secs_f64() - b.as_secs_f64()) * 1e3
}

criterion_group!(benches, bench);
criterion_main!(benches);
