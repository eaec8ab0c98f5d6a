//! Benchmarks of policy loading (SPEC 14: "process start, policy load and
//! evaluation together well under a millisecond ... a compiled policy may be
//! cached on disk, keyed by the content of its sources").
//!
//! A temporary Go project holds ADR-0014's "Full policy" example as
//! `aileron.yaml` (naming a `./team-policy.yaml` profile as well) and a
//! `go.mod`, so the loader gathers os/linux, lang/go, the team profile and
//! the project file.
//!
//! - `load/source`: `load(&opts, None)`: find, read, parse and compile.
//! - `load/cache`: `load(&opts, Some(cache_dir))` with a warm cache: hash
//!   the inputs, read and deserialize the compiled policy, re-hash the
//!   source files to check they have not changed.

use aileron_config::{CacheOutcome, LoadOptions, load};
use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

/// ADR-0014's "Full policy" example, with the team profile added to `profiles:`.
const FULL_POLICY: &str = r#"version: 1
profiles: ["lang/go", "./team-policy.yaml"]
default: ask

settings:
  audit_log: .aileron/audit.jsonl
  timeout: 30

env:
  scrub:
    - "AWS_*"
    - "GITHUB_TOKEN"
    - "*_SECRET"
    - "OPENAI_*"
  passthrough:
    - "HOME"
    - "PATH"
    - "GOPATH"

allow:
  - "git status"
  - "git diff *"
  - "git log *"
  - "cat *"
  - "ls *"
  - "task *"

deny:
  - command: "git push origin main"
    description: "no direct push to main"
  - command: "rm -rf /*"
    description: "no recursive delete outside project"

ask:
  - "git add *"
  - "git commit *"
  - "git push *"
  - "docker *"
  - "curl *"
"#;

/// A team profile of the kind a platform team shares between repositories.
const TEAM_POLICY: &str = r#"version: 1
allow:
  - "make *"
  - "golangci-lint run *"
  - id: team:github-read
    when:
      type: http.request
      http.host: {glob: "*.github.com"}
      http.method: {in: [GET, HEAD]}
ask:
  - id: team:terraform
    command: "terraform apply *"
    description: "changes infrastructure"
  - id: team:mcp-writes
    when:
      type: mcp.call
      mcp.server: github
      mcp.tool: {in: [create_issue, create_pull_request]}
deny:
  - id: team:prod-secrets
    when:
      type: fs.write
      fs.path: {path: "~/.aws/**"}
    description: "no writes to cloud credentials"
  - id: team:metadata
    when:
      type: http.request
      http.url: {pattern: "^https?://169\\.254\\.169\\.254/"}
    description: "no cloud metadata endpoint"
tests:
  - {command: "make test", expect: allow}
  - {command: "terraform apply -auto-approve", expect: ask, rule: team:terraform}
"#;

const GO_MOD: &str = "module example.com/project\n\ngo 1.23\n";

fn options(project: &Path, home: &Path) -> LoadOptions {
    LoadOptions {
        cwd: project.join("cmd/server"),
        policy_path: None,
        home: home.to_path_buf(),
        data_dir: home.join(".aileron"),
        user_settings: true,
        auto_profiles: true,
        run_tests: false,
        server_rules: false,
    }
}

fn bench_load(c: &mut Criterion) {
    let root = tempfile::tempdir().expect("temp dir");
    let project = root.path().join("project");
    let home = root.path().join("home");
    std::fs::create_dir_all(project.join("cmd/server")).unwrap();
    std::fs::create_dir_all(home.join(".aileron")).unwrap();
    std::fs::write(project.join("aileron.yaml"), FULL_POLICY).unwrap();
    std::fs::write(project.join("team-policy.yaml"), TEAM_POLICY).unwrap();
    std::fs::write(project.join("go.mod"), GO_MOD).unwrap();
    let opts = options(&project, &home);
    let cache_dir = home.join(".aileron/cache");

    let loaded = load(&opts, None).unwrap_or_else(|e| panic!("policy does not load: {e:?}"));
    assert_eq!(loaded.cache, CacheOutcome::Disabled);
    let sources: Vec<&str> = loaded
        .policy
        .sources
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert!(
        sources.iter().any(|s| s.ends_with("lang/go")),
        "lang/go not detected: {sources:?}"
    );
    assert!(
        sources.iter().any(|s| s.ends_with("team-policy.yaml")),
        "team profile not loaded: {sources:?}"
    );
    eprintln!(
        "[load: {} sources ({}), {} rules]",
        sources.len(),
        sources.join(", "),
        loaded.policy.rules().len()
    );

    let warm = load(&opts, Some(&cache_dir)).expect("warm-up load");
    assert_eq!(warm.cache, CacheOutcome::Miss);
    let hit = load(&opts, Some(&cache_dir)).expect("cached load");
    assert_eq!(
        hit.cache,
        CacheOutcome::Hit,
        "the timed call must hit the cache"
    );
    let entry_bytes: u64 = std::fs::read_dir(&cache_dir)
        .unwrap()
        .filter_map(|e| e.ok()?.metadata().ok())
        .map(|m| m.len())
        .sum();
    eprintln!("[load: cache entry {entry_bytes} bytes]");

    let mut g = c.benchmark_group("load");
    g.measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1))
        .sample_size(30);
    g.bench_function("source", |b| {
        b.iter(|| load(black_box(&opts), None).expect("load"))
    });
    g.bench_function("cache", |b| {
        b.iter(|| {
            let l = load(black_box(&opts), Some(&cache_dir)).expect("load");
            assert_eq!(l.cache, CacheOutcome::Hit);
            l
        })
    });
    g.finish();
}

criterion_group!(benches, bench_load);
criterion_main!(benches);
