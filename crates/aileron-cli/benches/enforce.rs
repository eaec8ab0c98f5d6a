//! What `aileron launch --enforce exec` costs: per exec of an allowed
//! program (a loop of 200 `/bin/true` beside the same loop under
//! `--enforce none`), and a real `cargo build` of a crate from the
//! registry cache (a crate using serde_json and regex) and `npm test` of a
//! small package under each (issue 13's figures: ≤ 0.3 ms per exec,
//! ≤ 1.1× for the build).

mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use std::path::Path;
use std::time::Duration;

const LOOP: &str = "i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done";

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
    let (dir, home) = (p.dir.clone(), p.home.clone());
    let mut g = c.benchmark_group("enforce");
    g.measurement_time(Duration::from_secs(10)).sample_size(10);
    for enforce in ["none", "exec"] {
        g.bench_function(format!("200 execs, --enforce {enforce}"), |b| {
            b.iter(|| launch(&aileron, &dir, &home, enforce, &["/bin/sh", "-c", LOOP]))
        });
    }
    g.finish();

    support::interleaved(
        "200 execs of /bin/true from the launched shell",
        10,
        &mut [
            ("--enforce none", &mut || {
                launch(&aileron, &dir, &home, "none", &["/bin/sh", "-c", LOOP])
            }),
            ("--enforce exec", &mut || {
                launch(&aileron, &dir, &home, "exec", &["/bin/sh", "-c", LOOP])
            }),
        ],
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
        "npm test (4 test files, node --test)",
        5,
        &mut [
            ("--enforce none", &mut || npm_test("none")),
            ("--enforce exec", &mut || npm_test("exec")),
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
        "cargo build (serde_json + regex, from the registry cache)",
        3,
        &mut [
            ("--enforce none", &mut || build("none")),
            ("--enforce exec", &mut || build("exec")),
        ],
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
