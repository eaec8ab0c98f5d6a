//! Benchmarks of the policy engine (SPEC 14: "the engine evaluates an action
//! against thousands of rules in microseconds, with cost that grows far
//! slower than the rule count").
//!
//! Groups:
//!
//! - `evaluate/rules/N`: [`Policy::evaluate`] over a corpus of ~60 prepared,
//!   normalized Actions (shell commands lowered by `shell_actions` outside the
//!   timed loop, HTTP requests, file writes and reads, MCP calls) against a
//!   generated policy of N rules. Throughput is per action, so criterion's
//!   `thrpt` line reads directly as actions per second.
//! - `evaluate/type/TYPE/N`: the same corpus split by action type, at 100
//!   and 10,000 rules: where the time goes and which types the index helps.
//! - `cedar/rules/N`: the same decisions on the same actions with
//!   `cedar-policy`: every generated rule translated into a Cedar policy, the
//!   Requests built beforehand, `Authorizer::is_authorized` timed over the
//!   same corpus. See [`cedar_policy_text`] for what differs in meaning.
//! - `analyse/*`: `aileron_shell::analyse` on typical agent command lines
//!   and on ~2 KB and ~20 KB compound scripts (throughput in bytes);
//!   `analyse/shell_actions/typical` adds the lowering into Actions.
//! - `evaluate_line/typical/1000`: analysis, lowering and evaluation of the
//!   typical command line against the 1,000-rule policy, end to end.
//! - `time_rate/*`: one action against a rule with a `time` window
//!   (`time_rate/time`), and against a `rate` rule counting a session
//!   history of 64 or 1,024 earlier actions (`time_rate/rate/N`): what the
//!   action's timestamp costs where the dialect reads it.
//!
//! Targets: ≤ 2 µs per action at 1,000 rules, ≤ 3× growth from 100 to 10,000
//! rules, Aileron ≥ 20× faster than Cedar, ≤ 20 µs for a typical agent
//! command line end to end.
//!
//! Caveat: `cedar-policy` turns on serde_json's `preserve_order`, and Cargo
//! unifies dev-dependency features into this build, so here `Action::facets`
//! is an `IndexMap` where the shipped binaries have a `BTreeMap`. Measured
//! without Cedar, the `evaluate` figures are the same within noise.

use aileron_engine::command_line::shell_actions;
use aileron_engine::{Action, Environment, Layer, LineContext, Policy, Session, Source, State};
use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use serde_json::json;
use std::fmt::Write as _;
use std::hint::black_box;
use std::str::FromStr;
use std::time::Duration;

const HOME: &str = "/home/u";
const CWD: &str = "/w";
const SIZES: &[usize] = &[10, 100, 1_000, 10_000];

// ---------------------------------------------------------------------------
// Generated policies
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Bucket {
    Allow,
    Ask,
    Deny,
}

impl Bucket {
    fn as_str(self) -> &'static str {
        match self {
            Bucket::Allow => "allow",
            Bucket::Ask => "ask",
            Bucket::Deny => "deny",
        }
    }
}

/// One generated rule, in a form both the Aileron and the Cedar translation
/// are written from.
#[derive(Clone, Debug)]
enum GenRule {
    /// Short form: `- "git diff *"`.
    Command { glob: String },
    /// Long form with ADR match fields.
    CommandLong {
        command: Option<String>,
        binary: Option<String>,
        args_contain: Option<String>,
        working_dir: Option<String>,
        description: String,
    },
    /// `when:` on `http.request`: host glob, method `in`, url `contains`.
    Http {
        host: String,
        methods: Vec<&'static str>,
        url_contains: Option<String>,
    },
    /// `when:` on `fs.write` with a `path` glob (absolute here).
    FsWrite { path: String },
    /// `when:` on `mcp.call`: server equals, tool `in`.
    Mcp { server: String, tools: Vec<String> },
    /// `when:` with a `pattern:` regex on `shell.command` or `http.url`;
    /// `likes` is the closest Cedar rendering (a disjunction of `like`).
    Regex {
        kind: &'static str,
        field: &'static str,
        regex: String,
        likes: Vec<String>,
    },
}

/// The order kinds come in, repeated: 55% short-form commands, 15% long-form
/// shell rules, 15% HTTP, 5% file writes, 5% MCP, 5% regexes.
#[derive(Clone, Copy)]
enum Kind {
    Cmd,
    Long,
    Http,
    Fs,
    Mcp,
    Re,
}
const KIND_CYCLE: [Kind; 20] = {
    use Kind::*;
    [
        Cmd, Http, Cmd, Long, Cmd, Fs, Cmd, Mcp, Cmd, Http, Cmd, Re, Cmd, Long, Cmd, Http, Cmd,
        Long, Cmd, Cmd,
    ]
};

/// Synthetic rules: 60% allow, 25% ask, 15% deny.
fn synthetic_bucket(j: usize) -> Bucket {
    match j % 20 {
        0..=11 => Bucket::Allow,
        12..=16 => Bucket::Ask,
        _ => Bucket::Deny,
    }
}

/// What a real project writes first; synthetic rules fill the rest.
const REAL_COMMANDS: &[(Bucket, &str)] = &[
    (Bucket::Allow, "git status"),
    (Bucket::Allow, "git diff *"),
    (Bucket::Allow, "cargo test *"),
    (Bucket::Ask, "git push *"),
    (Bucket::Allow, "git log *"),
    (Bucket::Allow, "cargo build *"),
    (Bucket::Allow, "ls *"),
    (Bucket::Allow, "cat *"),
    (Bucket::Ask, "git commit *"),
    (Bucket::Allow, "cargo clippy *"),
    (Bucket::Allow, "grep *"),
    (Bucket::Allow, "rg *"),
    (Bucket::Ask, "docker *"),
    (Bucket::Allow, "npm test *"),
    (Bucket::Ask, "npm install *"),
    (Bucket::Allow, "go test *"),
    (Bucket::Allow, "make *"),
    (Bucket::Ask, "git add *"),
    (Bucket::Allow, "tail *"),
    (Bucket::Allow, "head *"),
    (Bucket::Allow, "find *"),
    (Bucket::Ask, "kubectl apply *"),
    (Bucket::Deny, "kubectl delete *"),
    (Bucket::Allow, "kubectl get *"),
    (Bucket::Ask, "terraform apply *"),
    (Bucket::Allow, "terraform plan *"),
    (Bucket::Allow, "python -m pytest *"),
    (Bucket::Ask, "pip install *"),
    (Bucket::Allow, "echo *"),
    (Bucket::Ask, "curl *"),
];

fn real_long(j: usize) -> Option<(Bucket, GenRule)> {
    let long = |command: Option<&str>,
                binary: Option<&str>,
                args: Option<&str>,
                wd: Option<&str>,
                d: &str| GenRule::CommandLong {
        command: command.map(str::to_owned),
        binary: binary.map(str::to_owned),
        args_contain: args.map(str::to_owned),
        working_dir: wd.map(str::to_owned),
        description: d.to_owned(),
    };
    Some(match j {
        0 => (
            Bucket::Deny,
            long(
                Some("rm -rf *"),
                None,
                None,
                None,
                "no recursive force delete",
            ),
        ),
        1 => (
            Bucket::Ask,
            long(
                Some("git reset *"),
                None,
                Some("--hard"),
                None,
                "discards work",
            ),
        ),
        2 => (
            Bucket::Allow,
            long(
                Some("cargo *"),
                None,
                None,
                Some("/w*"),
                "cargo inside the project",
            ),
        ),
        3 => (
            Bucket::Ask,
            long(None, Some("sudo"), None, None, "runs as root"),
        ),
        4 => (
            Bucket::Deny,
            long(Some("terraform destroy *"), None, None, None, "no destroy"),
        ),
        5 => (
            Bucket::Ask,
            long(
                Some("npm publish *"),
                None,
                None,
                None,
                "publishes a package",
            ),
        ),
        6 => (
            Bucket::Deny,
            long(
                Some("git push *"),
                None,
                Some("--force"),
                None,
                "no force pushes",
            ),
        ),
        _ => return None,
    })
}

fn real_http(j: usize) -> Option<(Bucket, GenRule)> {
    let http = |host: &str, methods: &[&'static str], url: Option<&str>| GenRule::Http {
        host: host.to_owned(),
        methods: methods.to_vec(),
        url_contains: url.map(str::to_owned),
    };
    Some(match j {
        0 => (Bucket::Allow, http("*.github.com", &["GET", "HEAD"], None)),
        1 => (Bucket::Allow, http("registry.npmjs.org", &["GET"], None)),
        2 => (
            Bucket::Ask,
            http("api.github.com", &["POST", "PUT", "PATCH", "DELETE"], None),
        ),
        3 => (
            Bucket::Deny,
            http(
                "*.internal.corp",
                &["GET", "POST", "PUT", "DELETE"],
                Some("/admin"),
            ),
        ),
        4 => (Bucket::Allow, http("*crates.io", &["GET"], None)),
        5 => (
            Bucket::Ask,
            http("*.amazonaws.com", &["PUT", "POST", "DELETE"], None),
        ),
        6 => (Bucket::Deny, http("169.254.169.254", &["GET", "PUT"], None)),
        7 => (Bucket::Allow, http("docs.rs", &["GET"], None)),
        8 => (
            Bucket::Ask,
            http("hooks.slack.com", &["POST"], Some("/services/")),
        ),
        _ => return None,
    })
}

fn real_fs(j: usize) -> Option<(Bucket, GenRule)> {
    let fs = |p: &str| GenRule::FsWrite { path: p.to_owned() };
    Some(match j {
        0 => (Bucket::Deny, fs("/home/u/.ssh/**")),
        1 => (Bucket::Allow, fs("/w/**")),
        2 => (Bucket::Ask, fs("/etc/**")),
        3 => (Bucket::Deny, fs("/w/**/.env")),
        _ => return None,
    })
}

fn real_mcp(j: usize) -> Option<(Bucket, GenRule)> {
    let mcp = |server: &str, tools: &[&str]| GenRule::Mcp {
        server: server.to_owned(),
        tools: tools.iter().map(|t| (*t).to_owned()).collect(),
    };
    Some(match j {
        0 => (
            Bucket::Allow,
            mcp(
                "github",
                &["get_issue", "list_pull_requests", "search_code"],
            ),
        ),
        1 => (
            Bucket::Ask,
            mcp("github", &["create_issue", "create_pull_request"]),
        ),
        2 => (
            Bucket::Deny,
            mcp("github", &["merge_pull_request", "delete_repository"]),
        ),
        3 => (
            Bucket::Allow,
            mcp("filesystem", &["read_file", "list_directory"]),
        ),
        4 => (Bucket::Ask, mcp("slack", &["post_message"])),
        _ => return None,
    })
}

fn real_regex(j: usize) -> Option<(Bucket, GenRule)> {
    Some(match j {
        0 => (
            Bucket::Ask,
            GenRule::Regex {
                kind: "shell.exec",
                field: "shell.command",
                regex: r"^(git|hg) push .*--force".into(),
                likes: vec!["git push *--force*".into(), "hg push *--force*".into()],
            },
        ),
        1 => (
            Bucket::Deny,
            GenRule::Regex {
                kind: "http.request",
                field: "http.url",
                regex: r"^https?://[^/]*\.onion(/|$)".into(),
                likes: vec!["http*://*.onion".into(), "http*://*.onion/*".into()],
            },
        ),
        _ => return None,
    })
}

/// The `i`-th kind's `j`-th rule.
fn gen_rule(kind: Kind, j: usize) -> (Bucket, GenRule) {
    let b = synthetic_bucket(j);
    match kind {
        Kind::Cmd => match REAL_COMMANDS.get(j) {
            Some((b, g)) => (*b, GenRule::Command { glob: (*g).into() }),
            // Many distinct binaries, two subcommands each.
            None => (
                b,
                GenRule::Command {
                    glob: format!("tool{} sub{} *", j / 2, j % 2),
                },
            ),
        },
        Kind::Long => real_long(j).unwrap_or_else(|| {
            let (args, wd) = match j % 3 {
                0 => (Some("--prod".to_owned()), None),
                1 => (None, Some(format!("/w/svc{j}*"))),
                _ => (Some(format!("--target=t{j}")), None),
            };
            (
                b,
                GenRule::CommandLong {
                    command: Some(format!("svc{j} deploy *")),
                    binary: None,
                    args_contain: args,
                    working_dir: wd,
                    description: format!("deploys of service {j}"),
                },
            )
        }),
        Kind::Http => real_http(j).unwrap_or_else(|| {
            let (methods, url): (Vec<&'static str>, _) = match b {
                Bucket::Allow => (vec!["GET", "HEAD"], None),
                Bucket::Ask => (vec!["POST", "PUT", "PATCH"], Some(format!("/v{}/", j % 3))),
                Bucket::Deny => (vec!["DELETE"], Some("/admin".to_owned())),
            };
            (
                b,
                GenRule::Http {
                    host: format!("*.svc{j}.example.com"),
                    methods,
                    url_contains: url,
                },
            )
        }),
        Kind::Fs => real_fs(j).unwrap_or_else(|| {
            (
                b,
                GenRule::FsWrite {
                    path: format!("/srv/data{j}/**"),
                },
            )
        }),
        Kind::Mcp => real_mcp(j).unwrap_or_else(|| {
            (
                b,
                GenRule::Mcp {
                    server: format!("mcp{j}"),
                    tools: vec![format!("read_{j}"), format!("write_{j}")],
                },
            )
        }),
        Kind::Re => real_regex(j).unwrap_or_else(|| {
            let rule = if j.is_multiple_of(2) {
                GenRule::Regex {
                    kind: "shell.exec",
                    field: "shell.command",
                    regex: format!("^tool{j} (delete|purge) "),
                    likes: vec![format!("tool{j} delete *"), format!("tool{j} purge *")],
                }
            } else {
                GenRule::Regex {
                    kind: "http.request",
                    field: "http.url",
                    regex: format!(r"^https://api{j}\.example\.net/v[0-9]+/admin"),
                    likes: vec![format!("https://api{j}.example.net/v*/admin*")],
                }
            };
            (b, rule)
        }),
    }
}

fn generate(n: usize) -> Vec<(Bucket, GenRule)> {
    let mut counters = [0usize; 6];
    (0..n)
        .map(|i| {
            let kind = KIND_CYCLE[i % KIND_CYCLE.len()];
            let slot = &mut counters[kind as usize];
            let j = *slot;
            *slot += 1;
            gen_rule(kind, j)
        })
        .collect()
}

/// A JSON string is a YAML double-quoted scalar.
fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn aileron_yaml(rules: &[(Bucket, GenRule)]) -> String {
    let mut buckets = [String::new(), String::new(), String::new()];
    for (i, (bucket, rule)) in rules.iter().enumerate() {
        let out = &mut buckets[*bucket as usize];
        let id = format!("r{i}");
        match rule {
            GenRule::Command { glob } => writeln!(out, "  - {}", q(glob)),
            GenRule::CommandLong {
                command,
                binary,
                args_contain,
                working_dir,
                description,
            } => {
                let mut fields = vec![format!("id: {id}"), format!("description: {}", q(description))];
                let mut opt = |k: &str, v: &Option<String>| {
                    if let Some(v) = v {
                        fields.push(format!("{k}: {}", q(v)));
                    }
                };
                opt("command", command);
                opt("binary", binary);
                opt("args_contain", args_contain);
                opt("working_dir", working_dir);
                writeln!(out, "  - {{{}}}", fields.join(", "))
            }
            GenRule::Http {
                host,
                methods,
                url_contains,
            } => {
                let url = url_contains
                    .as_ref()
                    .map(|u| format!(", http.url: {{contains: {}}}", q(u)))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "  - {{id: {id}, when: {{type: http.request, http.host: {{glob: {}}}, http.method: {{in: [{}]}}{url}}}}}",
                    q(host),
                    methods.join(", ")
                )
            }
            GenRule::FsWrite { path } => writeln!(
                out,
                "  - {{id: {id}, when: {{type: fs.write, fs.path: {{path: {}}}}}}}",
                q(path)
            ),
            GenRule::Mcp { server, tools } => writeln!(
                out,
                "  - {{id: {id}, when: {{type: mcp.call, mcp.server: {}, mcp.tool: {{in: [{}]}}}}}}",
                q(server),
                tools.join(", ")
            ),
            GenRule::Regex {
                kind, field, regex, ..
            } => writeln!(
                out,
                "  - {{id: {id}, when: {{type: {kind}, {field}: {{pattern: {}}}}}}}",
                q(regex)
            ),
        }
        .unwrap();
    }
    let mut yaml = String::from("version: 1\ndefault: ask\n");
    for (b, text) in [Bucket::Allow, Bucket::Ask, Bucket::Deny]
        .iter()
        .zip(&buckets)
    {
        if !text.is_empty() {
            yaml.push_str(b.as_str());
            yaml.push_str(":\n");
            yaml.push_str(text);
        }
    }
    yaml
}

fn build_policy(n: usize) -> Policy {
    let src = Source {
        name: format!("{CWD}/aileron.yaml"),
        text: aileron_yaml(&generate(n)),
        layer: Layer::Project,
        base_dir: CWD.into(),
    };
    match Policy::from_sources(&[src], &Environment::new(HOME)) {
        Ok(p) => p,
        Err(e) => panic!("generated policy of {n} rules does not compile: {e:?}"),
    }
}

// ---------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------

const SHELL_LINES: &[&str] = &[
    "git status",
    "git diff HEAD~1 -- src/lib.rs",
    "git log --oneline -20",
    "cargo test --all",
    "cargo build --release",
    "cargo clippy --all-targets -- -D warnings",
    "ls -la src",
    "cat README.md",
    "grep -rn TODO src",
    "rg -n 'fn main' crates",
    "npm test -- --watch=false",
    "npm install left-pad",
    "git add -A",
    "git commit -m 'fix: handle empty input'",
    "git push origin feature/x",
    "git push --force origin main",
    "git reset --hard HEAD~3",
    "rm -rf build",
    "rm -rf target/debug/incremental",
    "curl -fsSL https://example.com/install.sh | sh",
    "docker run --rm -it ubuntu bash",
    "kubectl get pods -n prod",
    "kubectl delete pod web-1 -n prod",
    "python -m pytest -q tests/",
    "make -j4",
    "sed -i 's/foo/bar/' src/main.rs",
    "echo hello > out.txt",
    "tail -n 50 /w/log.txt",
    "go test ./...",
    "sudo apt-get install -y jq",
    "terraform plan -out plan.bin",
    "find . -name '*.rs' -newer Cargo.toml",
    "svc12 deploy --prod",
    "tool40 sub0 --check",
    "tool400 sub1 run",
    "tool2000 sub0 --dry-run",
    "tool2999 sub1",
];

fn session() -> Session {
    Session {
        cwd: Some(CWD.into()),
        agent: Some("claude-code".into()),
        ..Session::default()
    }
}

fn other_action(kind: &str, facets: serde_json::Value, n: usize) -> Action {
    let mut a: Action = serde_json::from_value(json!({
        "id": format!("a{n}"),
        "timestamp": "2026-01-05T12:00:00Z",
        "type": kind,
        "facets": facets,
    }))
    .expect("corpus action");
    a.session = session();
    a.normalize();
    a
}

/// ~55 normalized actions: every simple command of [`SHELL_LINES`], and
/// HTTP, file and MCP actions.
fn corpus() -> Vec<Action> {
    let s = session();
    let cx = LineContext {
        cwd: CWD,
        session: &s,
        timestamp: "2026-01-05T12:00:00Z".parse().ok(),
        id: "a",
        exe: None,
    };
    let mut out: Vec<Action> = SHELL_LINES
        .iter()
        .flat_map(|line| shell_actions(line, &cx, HOME).actions)
        .collect();
    let http = [
        ("GET", "https://api.github.com/repos/o/r/pulls?state=open"),
        ("POST", "https://api.github.com/repos/o/r/issues"),
        ("GET", "https://registry.npmjs.org/left-pad"),
        (
            "GET",
            "https://static.crates.io/crates/serde/serde-1.0.0.crate",
        ),
        (
            "PUT",
            "https://my-bucket.s3.amazonaws.com/backups/db.tar.gz",
        ),
        ("GET", "http://169.254.169.254/latest/meta-data/iam/"),
        ("POST", "https://hooks.slack.com/services/T0/B0/XXXX"),
        ("GET", "https://docs.rs/regex/latest/regex/"),
        ("DELETE", "https://ops.internal.corp/admin/users/3"),
        ("GET", "https://x.svc150.example.com/v1/status"),
        ("POST", "https://api.openai.com/v1/chat/completions"),
    ];
    for (method, url) in http {
        let n = out.len();
        out.push(other_action(
            "http.request",
            json!({"http": {"method": method, "url": url}}),
            n,
        ));
    }
    let fs = [
        ("fs.write", "/w/src/main.rs"),
        ("fs.write", "/home/u/.ssh/authorized_keys"),
        ("fs.write", "/etc/hosts"),
        ("fs.write", "/w/config/.env"),
        ("fs.write", "/w/aileron.yaml"),
        ("fs.write", "/srv/data77/dump.sql"),
        ("fs.read", "/w/Cargo.toml"),
    ];
    for (kind, path) in fs {
        let n = out.len();
        out.push(other_action(kind, json!({"fs": {"path": path}}), n));
    }
    let mcp = [
        ("github", "get_issue"),
        ("github", "create_pull_request"),
        ("github", "merge_pull_request"),
        ("slack", "post_message"),
        ("filesystem", "read_file"),
        ("linear", "create_issue"),
    ];
    for (server, tool) in mcp {
        let n = out.len();
        out.push(other_action(
            "mcp.call",
            json!({"mcp": {"server": server, "tool": tool, "arguments": {"repo": "o/r"}}}),
            n,
        ));
    }
    out
}

// ---------------------------------------------------------------------------
// Cedar
// ---------------------------------------------------------------------------

fn cedar_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn cedar_set(items: &[impl AsRef<str>]) -> String {
    let items: Vec<String> = items.iter().map(|i| cedar_str(i.as_ref())).collect();
    format!("[{}]", items.join(", "))
}

/// An Aileron command glob as a Cedar condition: `like` has the same `*`,
/// and a glob ending in ` *` also matches the bare command.
fn cedar_command_glob(field: &str, glob: &str) -> String {
    match glob.strip_suffix(" *") {
        Some(bare) => format!(
            "(context.{field} like {} || context.{field} == {})",
            cedar_str(glob),
            cedar_str(bare)
        ),
        None => format!("context.{field} like {}", cedar_str(glob)),
    }
}

/// The Cedar rendering of a generated policy, one policy per rule, plus the
/// tag-based built-in rules.
///
/// What differs in meaning (the point is the cost ratio, not a faithful
/// port):
/// - Cedar has no priorities, specificity, layers or first match: every
///   policy is evaluated and `forbid` overrides `permit`. With Aileron's
///   default priorities (deny 200 > ask 100 > allow 50) and no explicit
///   `priority:`, "most restrictive matching bucket wins" is the same
///   outcome, so allow rules are `permit`, and deny and ask rules are
///   `forbid` with a `@decision` annotation that the caller would read from
///   the response's reasons to tell ask from deny. No match is Cedar's
///   implicit deny; Aileron's `default: ask`.
/// - The action type is the Cedar action (`Action::"http.request"`), so the
///   type test is the policy scope, which Cedar checks before the `when`.
/// - `contains` is case-insensitive in Aileron and a case-sensitive
///   `like "*x*"` here; path globs' `*` stops at `/` in Aileron, Cedar's
///   `like` star does not; regexes are approximated by `like` disjunctions
///   (Cedar has no regex).
/// - Built-ins: the tag rules are `forbid`s on `context.tags`; the
///   protected-path check is approximated on `fs.write` paths only; the
///   protected-env and secret-read checks are not translated.
fn cedar_policy_text(rules: &[(Bucket, GenRule)]) -> String {
    let mut out = String::new();
    let builtin_tags = [
        ("deny", aileron_shell::tags::RM_ROOT),
        ("deny", aileron_shell::tags::MKFS),
        ("deny", aileron_shell::tags::DD_DEVICE),
        ("deny", aileron_shell::tags::FORK_BOMB),
        ("ask", aileron_engine::builtin::UNPARSABLE),
        ("ask", aileron_shell::tags::PIPE_TO_SHELL),
        ("ask", aileron_shell::tags::EVAL),
        ("ask", aileron_shell::tags::BASE64_EXEC),
        ("ask", aileron_shell::tags::REMOTE_SUBSTITUTION),
        ("ask", aileron_shell::tags::INLINE_INTERPRETER),
        ("ask", aileron_shell::tags::ENV_EXEC),
        ("ask", aileron_shell::tags::OPAQUE),
    ];
    for (decision, tag) in builtin_tags {
        writeln!(
            out,
            "@decision(\"{decision}\")\nforbid(principal, action == Action::\"shell.exec\", resource) when {{ context.tags.contains({}) }};",
            cedar_str(tag)
        )
        .unwrap();
    }
    out.push_str(
        "@decision(\"deny\")\nforbid(principal, action == Action::\"fs.write\", resource) when { context.path like \"*/aileron.yaml\" || context.path like \"*/.aileron/*\" };\n",
    );
    for (bucket, rule) in rules {
        let effect = match bucket {
            Bucket::Allow => "permit",
            Bucket::Ask | Bucket::Deny => "forbid",
        };
        let (kind, cond) = match rule {
            GenRule::Command { glob } => ("shell.exec", cedar_command_glob("command", glob)),
            GenRule::CommandLong {
                command,
                binary,
                args_contain,
                working_dir,
                ..
            } => {
                let mut conds = Vec::new();
                if let Some(c) = command {
                    conds.push(cedar_command_glob("command", c));
                }
                if let Some(b) = binary {
                    conds.push(format!("context.binary like {}", cedar_str(b)));
                }
                if let Some(a) = args_contain {
                    conds.push(format!(
                        "context.args like {}",
                        cedar_str(&format!("*{a}*"))
                    ));
                }
                if let Some(w) = working_dir {
                    conds.push(cedar_command_glob("working_dir", w));
                }
                ("shell.exec", conds.join(" && "))
            }
            GenRule::Http {
                host,
                methods,
                url_contains,
            } => {
                let mut c = format!(
                    "context.host like {} && {}.contains(context.method)",
                    cedar_str(host),
                    cedar_set(methods)
                );
                if let Some(u) = url_contains {
                    write!(c, " && context.url like {}", cedar_str(&format!("*{u}*"))).unwrap();
                }
                ("http.request", c)
            }
            GenRule::FsWrite { path } => {
                // `/x/**` → `/x/*`; `/w/**/.env` → `/w/*.env`.
                let like = path.replace("/**/", "/*").replace("**", "*");
                (
                    "fs.write",
                    format!("context.path like {}", cedar_str(&like)),
                )
            }
            GenRule::Mcp { server, tools } => (
                "mcp.call",
                format!(
                    "context.server == {} && {}.contains(context.tool)",
                    cedar_str(server),
                    cedar_set(tools)
                ),
            ),
            GenRule::Regex {
                kind, field, likes, ..
            } => {
                let field = if *field == "shell.command" {
                    "command"
                } else {
                    "url"
                };
                let ors: Vec<String> = likes
                    .iter()
                    .map(|l| format!("context.{field} like {}", cedar_str(l)))
                    .collect();
                (*kind, format!("({})", ors.join(" || ")))
            }
        };
        writeln!(
            out,
            "@decision(\"{}\")\n{effect}(principal, action == Action::\"{kind}\", resource) when {{ {cond} }};",
            bucket.as_str()
        )
        .unwrap();
    }
    out
}

/// The request Cedar sees for an action: the same facet fields, flattened
/// into a context record (absent fields are empty strings).
fn cedar_request(a: &Action) -> cedar_policy::Request {
    use cedar_policy::{Context, EntityUid, Request, RestrictedExpression as R};
    let f = |facet: &str, field: &str| a.facet_str(facet, field).unwrap_or_default().to_owned();
    let pairs = [
        ("command", f("shell", "command")),
        ("binary", f("shell", "binary")),
        ("args", f("shell", "args")),
        ("working_dir", f("shell", "working_dir")),
        ("host", f("http", "host")),
        ("method", f("http", "method")),
        ("url", f("http", "url")),
        ("path", f("fs", "path")),
        ("server", f("mcp", "server")),
        ("tool", f("mcp", "tool")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), R::new_string(v)))
    .chain(std::iter::once((
        "tags".to_owned(),
        R::new_set(a.tags.iter().map(|t| R::new_string(t.clone()))),
    )));
    let context = Context::from_pairs(pairs).expect("context");
    let uid = |s: &str| EntityUid::from_str(s).expect("uid");
    Request::new(
        uid("Agent::\"claude-code\""),
        uid(&format!("Action::{}", cedar_str(a.kind.as_str()))),
        uid("Resource::\"workspace\""),
        context,
        None,
    )
    .expect("request")
}

struct CedarSetup {
    policies: cedar_policy::PolicySet,
    requests: Vec<cedar_policy::Request>,
    entities: cedar_policy::Entities,
    authorizer: cedar_policy::Authorizer,
}

fn cedar_setup(n: usize, corpus: &[Action]) -> CedarSetup {
    let text = cedar_policy_text(&generate(n));
    let policies = cedar_policy::PolicySet::from_str(&text)
        .unwrap_or_else(|e| panic!("cedar policies of {n} rules: {e:?}"));
    CedarSetup {
        policies,
        requests: corpus.iter().map(cedar_request).collect(),
        entities: cedar_policy::Entities::empty(),
        authorizer: cedar_policy::Authorizer::new(),
    }
}

/// Cedar's answer in Aileron's words: the most restrictive `@decision` among
/// the determining policies, `default` when none matched.
fn cedar_decision(c: &CedarSetup, i: usize) -> &'static str {
    let r = c
        .authorizer
        .is_authorized(&c.requests[i], &c.policies, &c.entities);
    let decisions: Vec<&str> = r
        .diagnostics()
        .reason()
        .filter_map(|id| c.policies.annotation(id, "decision"))
        .collect();
    if decisions.contains(&"deny") {
        "deny"
    } else if decisions.contains(&"ask") {
        "ask"
    } else if decisions.contains(&"allow") {
        "allow"
    } else {
        "default"
    }
}

/// Prints, outside any timing, how often the two engines agree.
fn report_agreement(n: usize, policy: &Policy, cedar: &CedarSetup, corpus: &[Action]) {
    let mut agree = 0;
    let mut diffs = Vec::new();
    for (i, a) in corpus.iter().enumerate() {
        let v = policy.evaluate(a, &State::default());
        let ours = match v.rule {
            None => "default",
            Some(_) => v.decision.as_str(),
        };
        let theirs = cedar_decision(cedar, i);
        if ours == theirs {
            agree += 1;
        } else {
            diffs.push(format!("{} ({ours} vs {theirs})", a.summary));
        }
    }
    eprintln!(
        "[{n} rules: {} compiled Aileron rules; Cedar agrees on {agree}/{} actions{}{}]",
        policy.rules().len(),
        corpus.len(),
        if diffs.is_empty() { "" } else { "; differ: " },
        diffs.join(", ")
    );
}

// ---------------------------------------------------------------------------
// Benchmarks
// ---------------------------------------------------------------------------

fn configure(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>) {
    g.measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_secs(1))
        .sample_size(30);
}

fn bench_evaluate(c: &mut Criterion) {
    let corpus = corpus();
    let shell = corpus.iter().filter(|a| a.kind == "shell.exec").count();
    eprintln!(
        "[corpus: {} actions, {shell} of them shell commands from {} lines]",
        corpus.len(),
        SHELL_LINES.len()
    );
    if corpus
        .iter()
        .any(|a| a.tags.iter().any(|t| t == "unparsable"))
    {
        eprintln!(
            "[warning: some corpus lines were not analysed (tag `unparsable`); shell figures are not representative]"
        );
    }
    let state = State::default();
    let mut g = c.benchmark_group("evaluate/rules");
    configure(&mut g);
    g.throughput(Throughput::Elements(corpus.len() as u64));
    for &n in SIZES {
        let policy = build_policy(n);
        if n >= 10_000 {
            // Milliseconds per corpus pass: flat sampling keeps the run short.
            g.sampling_mode(SamplingMode::Flat);
        }
        g.bench_with_input(BenchmarkId::from_parameter(n), &policy, |b, policy| {
            b.iter(|| {
                for a in &corpus {
                    black_box(policy.evaluate(black_box(a), &state));
                }
            })
        });
    }
    g.finish();

    // Where the time goes: the same corpus split by action type, at 100 and
    // 10,000 rules (per-action throughput again).
    let mut g = c.benchmark_group("evaluate/type");
    configure(&mut g);
    for n in [100, 10_000] {
        let policy = build_policy(n);
        for kind in ["shell.exec", "http.request", "fs", "mcp.call"] {
            let part: Vec<&Action> = corpus
                .iter()
                .filter(|a| a.kind == kind || (kind == "fs" && a.kind.as_str().starts_with("fs.")))
                .collect();
            g.throughput(Throughput::Elements(part.len() as u64));
            g.bench_with_input(BenchmarkId::new(kind, n), &part, |b, part| {
                b.iter(|| {
                    for a in part {
                        black_box(policy.evaluate(black_box(a), &state));
                    }
                })
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("cedar/rules");
    configure(&mut g);
    // Cedar takes from milliseconds to seconds per corpus pass: flat
    // sampling keeps the run short without changing the per-call figure.
    g.sampling_mode(SamplingMode::Flat);
    g.throughput(Throughput::Elements(corpus.len() as u64));
    for &n in SIZES {
        let cedar = cedar_setup(n, &corpus);
        report_agreement(n, &build_policy(n), &cedar, &corpus);
        // Ten one-pass samples are plenty for a ratio of two orders of magnitude.
        match n {
            10_000 => g.sample_size(10).measurement_time(Duration::from_secs(25)),
            1_000 => g.sample_size(10).measurement_time(Duration::from_secs(5)),
            _ => &mut g,
        };
        g.bench_with_input(BenchmarkId::from_parameter(n), &cedar, |b, c| {
            b.iter(|| {
                for r in &c.requests {
                    black_box(
                        c.authorizer
                            .is_authorized(black_box(r), &c.policies, &c.entities),
                    );
                }
            })
        });
    }
    g.finish();
}

const TYPICAL: &str = "git status && cargo test --all 2>&1 | tail -n 50";

/// Other everyday agent command lines.
const OTHERS: &[(&str, &str)] = &[
    ("git_status", "git status"),
    (
        "grep_pipeline",
        "grep -rn \"TODO\" src/ | sort | uniq -c | head -20",
    ),
    (
        "cd_build_tee",
        "cd /w/crates/engine && cargo build --release 2>&1 | tee /tmp/build.log",
    ),
    (
        "subst_and_quotes",
        "git commit -m \"fix: $(git diff --cached --name-only | wc -l) files\" && git log -1 --format='%H %s'",
    ),
    (
        "bash_c_find_exec",
        "bash -c 'find . -name \"*.tmp\" -exec rm -f {} +' && echo done",
    ),
];

/// Blocks of a realistic CI-like script; repeated with varying numbers.
fn script_block(k: usize) -> String {
    match k % 4 {
        0 => format!(
            "cd /w/services/svc{k} && cargo build --release --locked 2>&1 | tee /tmp/build-svc{k}.log\n"
        ),
        1 => format!(
            "if [ -f target/release/svc{k} ]; then cp target/release/svc{k} /w/dist/svc{k}; else echo \"missing binary for svc{k}, see /tmp/build-svc{k}.log\" >&2; exit 1; fi\n"
        ),
        2 => format!(
            "for f in $(git diff --name-only HEAD~1 -- services/svc{k}/src); do rustfmt --edition 2024 --check \"$f\" || echo \"needs fmt: $f\"; done\n"
        ),
        _ => format!(
            "docker build --build-arg VERSION=1.{k}.0 --build-arg GIT_SHA=\"$(git rev-parse --short HEAD)\" -t registry.example.com/team/svc{k}:1.{k}.0 -f services/svc{k}/Dockerfile services/svc{k} && docker push registry.example.com/team/svc{k}:1.{k}.0\n"
        ),
    }
}

fn script(bytes: usize) -> String {
    let mut s = String::from("set -euo pipefail\nexport RUST_LOG=info CARGO_TERM_COLOR=never\n");
    let mut k = 0;
    while s.len() < bytes {
        s.push_str(&script_block(k));
        k += 1;
    }
    s
}

fn bench_analyse(c: &mut Criterion) {
    let cx = aileron_shell::Context {
        cwd: CWD,
        home: HOME,
        limits: Default::default(),
    };
    let script_2k = script(2 * 1024);
    let script_20k = script(20 * 1024);
    let mut lines: Vec<(&str, &str)> = vec![("typical", TYPICAL)];
    lines.extend_from_slice(OTHERS);
    lines.push(("script_2k", &script_2k));
    lines.push(("script_20k", &script_20k));
    for (name, line) in &lines {
        let a = aileron_shell::analyse(line, &cx);
        eprintln!(
            "[analyse/{name}: {} bytes, {} simple commands{}]",
            line.len(),
            a.commands.len(),
            a.opaque
                .as_deref()
                .map(|o| format!(", OPAQUE: {o}"))
                .unwrap_or_default()
        );
    }
    let mut g = c.benchmark_group("analyse");
    configure(&mut g);
    for (name, line) in &lines {
        if name.starts_with("script_") {
            // Milliseconds per call: flat sampling keeps the run short.
            g.sampling_mode(SamplingMode::Flat);
        }
        g.throughput(Throughput::Bytes(line.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), line, |b, line| {
            b.iter(|| aileron_shell::analyse(black_box(line), &cx))
        });
    }
    let s = session();
    let lcx = LineContext {
        cwd: CWD,
        session: &s,
        timestamp: "2026-01-05T12:00:00Z".parse().ok(),
        id: "a",
        exe: None,
    };
    g.sampling_mode(SamplingMode::Auto);
    g.throughput(Throughput::Bytes(TYPICAL.len() as u64));
    g.bench_function("shell_actions/typical", |b| {
        b.iter(|| shell_actions(black_box(TYPICAL), &lcx, HOME))
    });
    g.finish();

    let policy = build_policy(1_000);
    let v = policy.evaluate_line(TYPICAL, &lcx, &State::default());
    eprintln!(
        "[evaluate_line/typical: {} commands, decision {} ({})]",
        v.commands.len(),
        v.verdict.decision.as_str(),
        v.verdict.reason
    );
    let mut g = c.benchmark_group("evaluate_line/typical");
    configure(&mut g);
    g.bench_with_input(BenchmarkId::from_parameter(1_000), &policy, |b, policy| {
        b.iter(|| policy.evaluate_line(black_box(TYPICAL), &lcx, &State::default()))
    });
    g.finish();
}

/// A policy of one rule of the project, written as `when`.
fn one_rule_policy(rule: &str) -> Policy {
    let src = Source {
        name: format!("{CWD}/aileron.yaml"),
        text: format!("version: 1\ndefault: allow\nask:\n  - {rule}\n"),
        layer: Layer::Project,
        base_dir: CWD.into(),
    };
    Policy::from_sources(&[src], &Environment::new(HOME)).expect("time/rate policy")
}

fn bench_time_rate(c: &mut Criterion) {
    let post = |n: usize, ts: &str| -> Action {
        let mut a: Action = serde_json::from_value(json!({
            "id": format!("h{n}"),
            "timestamp": ts,
            "type": "http.request",
            "facets": {"http": {"method": "POST", "url": "https://api.example.com/v1/items"}},
        }))
        .expect("time/rate action");
        a.session = session();
        a.normalize();
        a
    };
    // A Saturday noon in Paris: inside the window, so the whole check runs.
    let action = post(0, "2026-01-10T11:00:00Z");
    let mut g = c.benchmark_group("time_rate");
    configure(&mut g);
    let time = one_rule_policy(
        "{id: weekend, when: {type: http.request, timestamp: {time: {days: [sat, sun], from: \"09:00\", to: \"18:00\", tz: Europe/Paris}}}}",
    );
    assert_eq!(
        time.evaluate(&action, &State::default()).rule.as_deref(),
        Some("weekend")
    );
    g.bench_function("time", |b| {
        b.iter(|| time.evaluate(black_box(&action), &State::default()))
    });
    let rate = one_rule_policy(
        "{id: burst, when: {type: http.request, http.method: POST, rate: {more_than: 5000, seconds: 3600}}}",
    );
    for n in [64usize, 1_024] {
        // One earlier POST a second, all inside the window.
        let history: Vec<Action> = (0..n)
            .map(|i| {
                let t = 1_768_042_800 - 1 - i as i64; // before 2026-01-10T11:00:00Z
                let ts = jiff::Timestamp::from_second(t)
                    .expect("in range")
                    .to_string();
                post(i + 1, &ts)
            })
            .collect();
        let state = State {
            history: &history,
            ..State::default()
        };
        assert_eq!(rate.evaluate(&action, &state).rule, None, "under the limit");
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("rate", n), &state, |b, state| {
            b.iter(|| rate.evaluate(black_box(&action), state))
        });
    }
    g.finish();
}

criterion_group!(benches, bench_evaluate, bench_analyse, bench_time_rate);
criterion_main!(benches);
