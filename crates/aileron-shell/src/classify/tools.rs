//! Developer tools, package managers, services and clients: mostly a
//! question of which subcommands only read.

use super::opts::{self, Spec};
use super::{Facts, PathRef, sql_is_destructive};
use crate::Sensitivity::{self, Destructive, Mutate, Read, Write};
use crate::words::Word;

fn text(args: &[Word], i: usize) -> &str {
    args.get(i).map_or("", |w| w.text.as_str())
}

/// Index of the subcommand: the first argument from `start` that is not an
/// option (and not a `+toolchain`), skipping the values of `val_opts`.
fn sub_index(args: &[Word], start: usize, val_opts: &[&str]) -> usize {
    let mut i = start;
    while i < args.len() {
        let t = text(args, i);
        if t == "--" {
            return i + 1;
        }
        if t.starts_with('+') {
            i += 1;
        } else if t.starts_with('-') {
            i += if val_opts.contains(&t) { 2 } else { 1 };
        } else {
            return i;
        }
    }
    args.len()
}

fn by_table(sub: &str, read: &[&str], write: &[&str], mutate_default: bool) -> Sensitivity {
    if read.contains(&sub) {
        Read
    } else if write.contains(&sub) || !mutate_default {
        Write
    } else {
        Mutate
    }
}

fn has(args: &[Word], from: usize, flags: &[&str]) -> bool {
    args.iter()
        .skip(from)
        .any(|w| flags.contains(&w.text.as_str()))
}

pub(super) fn classify(name: &str, args: &[Word]) -> Option<Facts> {
    let f = match name {
        "cargo" => cargo(args),
        "rustup" => {
            let i = sub_index(args, 1, &[]);
            let sub = text(args, i);
            let read = matches!(
                sub,
                "show" | "--version" | "-V" | "which" | "doc" | "help" | ""
            ) || (matches!(sub, "toolchain" | "target" | "component")
                && text(args, i + 1) == "list");
            Facts::new(if read { Read } else { Write })
        }
        "rustc" | "rustdoc" | "gcc" | "g++" | "cc" | "c++" | "clang" | "clang++" | "javac"
        | "tsc" | "swiftc" | "zig" | "ld" => {
            let mut f = Facts::new(Write);
            if has(
                args,
                1,
                &["--version", "-V", "-v", "--help", "--print", "--noEmit"],
            ) && args.len() <= 3
            {
                f.sensitivity = Read;
            }
            if let Some(k) = (1..args.len()).find(|&k| text(args, k) == "-o") {
                f.write(k + 1);
            }
            f
        }
        "go" => {
            let i = sub_index(args, 1, &["-C"]);
            let sub = text(args, i);
            let mut s = by_table(
                sub,
                &["list", "version", "doc", "vet", "help", "env", ""],
                &[
                    "build", "test", "run", "mod", "get", "install", "fmt", "generate", "work",
                    "tool", "fix",
                ],
                true,
            );
            if sub == "env" && has(args, i + 1, &["-w", "-u"]) {
                s = Write;
            }
            if sub == "clean" {
                s = Mutate;
            }
            Facts::new(s)
        }
        "npm" | "pnpm" | "yarn" | "bun" => node_pm(name, args),
        "pip" | "pip3" | "pip2" => pip(args, 1),
        "uv" => {
            let i = sub_index(args, 1, &["--directory", "--project", "--python", "-p"]);
            match text(args, i) {
                "pip" => pip(args, i + 1),
                sub => Facts::new(by_table(
                    sub,
                    &["tree", "version", "--version", "help", "", "python"],
                    &[],
                    false,
                )),
            }
        }
        "pipx" => Facts::new(by_table(
            text(args, sub_index(args, 1, &[])),
            &["list", "environment", "--version", ""],
            &[
                "install",
                "inject",
                "upgrade",
                "upgrade-all",
                "reinstall",
                "reinstall-all",
                "ensurepath",
            ],
            true,
        )),
        "poetry" | "pdm" | "hatch" | "rye" | "pixi" | "conda" | "mamba" | "micromamba" => {
            let i = sub_index(args, 1, &[]);
            let sub = text(args, i);
            Facts::new(by_table(
                sub,
                &[
                    "show",
                    "check",
                    "list",
                    "info",
                    "search",
                    "--version",
                    "version",
                    "env",
                    "config",
                    "",
                ],
                &[
                    "install", "add", "lock", "update", "build", "new", "init", "sync", "create",
                    "remove", "run", "shell",
                ],
                true,
            ))
        }
        "make" | "gmake" | "cmake" | "ninja" | "meson" | "bazel" | "bazelisk" | "mvn" | "mvnw"
        | "gradle" | "gradlew" | "ant" | "sbt" | "dotnet" | "mix" | "rake" | "just" | "task"
        | "xcodebuild" | "swift" | "stack" | "cabal" | "dune" | "opam" | "composer" | "gem"
        | "bundle" | "flutter" | "dart" | "deno_task" => {
            let mut f = Facts::new(Write);
            if has(
                args,
                1,
                &[
                    "-n",
                    "--dry-run",
                    "--just-print",
                    "--recon",
                    "--version",
                    "-v",
                    "--help",
                    "-h",
                    "--list",
                    "-l",
                    "--summary",
                ],
            ) && name != "swift"
            {
                f.sensitivity = Read;
            }
            if let Some(k) = (1..args.len()).find(|&k| text(args, k) == "-C") {
                f.base = Some(PathRef::arg(k + 1));
            }
            f
        }
        "pytest" | "py.test" | "tox" | "nox" | "jest" | "vitest" | "mocha" | "ava" | "karma"
        | "playwright" | "cypress" | "pre-commit" | "nextest" | "ctest" | "phpunit" | "rspec" => {
            Facts::new(Write)
        }
        "eslint" | "stylelint" | "golangci-lint" | "rubocop" | "standard" | "biome"
        | "swiftlint" => Facts::new(
            if has(
                args,
                1,
                &["--fix", "-a", "--autocorrect", "-A", "--write", "--apply"],
            ) || text(args, 1) == "format"
            {
                Write
            } else {
                Read
            },
        ),
        "prettier" => Facts::new(if has(args, 1, &["--write", "-w"]) {
            Write
        } else {
            Read
        }),
        "black" | "isort" | "autopep8" | "yapf" | "autoflake" => Facts::new(
            if has(args, 1, &["--check", "--diff", "-c", "--check-only"])
                && !has(args, 1, &["-i", "--in-place"])
            {
                Read
            } else if name == "autopep8" || name == "yapf" || name == "autoflake" {
                if has(args, 1, &["-i", "--in-place"]) {
                    Write
                } else {
                    Read
                }
            } else {
                Write
            },
        ),
        "ruff" => {
            let sub = text(args, sub_index(args, 1, &[]));
            let fix = has(args, 1, &["--fix", "--unsafe-fixes"]);
            let check = has(args, 1, &["--check", "--diff"]);
            Facts::new(match sub {
                "format" if !check => Write,
                _ if fix => Write,
                _ => Read,
            })
        }
        "rustfmt" | "gofmt" | "goimports" | "clang-format" | "shfmt" | "terraform-fmt"
        | "stylua" | "taplo" | "dprint" => {
            let writes = has(args, 1, &["-w", "-i", "--write", "fmt", "format"])
                || (name == "rustfmt" && !has(args, 1, &["--check", "--emit=stdout"]));
            Facts::new(if writes { Write } else { Read })
        }
        "mypy" | "pyright" | "flake8" | "pylint" | "bandit" | "shellcheck" | "hadolint"
        | "yamllint" | "markdownlint" | "vulture" | "pydocstyle" | "cargo-deny" | "codespell"
        | "typos" | "actionlint" | "checkov" | "tflint" | "semgrep" | "trivy" | "gitleaks" => {
            Facts::new(
                if has(args, 1, &["-w", "--write", "--fix", "--write-changes"]) {
                    Write
                } else {
                    Read
                },
            )
        }
        "docker" | "podman" | "nerdctl" => docker(args),
        "kubectl" | "oc" | "k" => kubectl(args),
        "helm" => {
            let sub = text(
                args,
                sub_index(args, 1, &["-n", "--namespace", "--kube-context"]),
            );
            Facts::new(by_table(
                sub,
                &[
                    "list", "ls", "status", "get", "show", "search", "template", "version",
                    "history", "lint", "env", "help", "verify", "",
                ],
                &[],
                true,
            ))
        }
        "terraform" | "tofu" | "terragrunt" | "pulumi" => {
            let i = sub_index(args, 1, &["-chdir"]);
            let sub = text(args, i);
            let mut s = by_table(
                sub,
                &[
                    "plan",
                    "show",
                    "validate",
                    "output",
                    "version",
                    "providers",
                    "graph",
                    "console",
                    "preview",
                    "whoami",
                    "help",
                    "",
                    "-version",
                    "--version",
                ],
                &["init", "fmt", "get", "login"],
                true,
            );
            if sub == "state" && matches!(text(args, i + 1), "list" | "show" | "pull") {
                s = Read;
            }
            if sub == "fmt" && has(args, i + 1, &["-check", "-diff"]) {
                s = Read;
            }
            Facts::new(s)
        }
        "gh" => gh(args),
        "ssh" | "sftp" | "mosh" | "autossh" => ssh(name, args),
        "psql" | "mysql" | "mariadb" | "sqlite3" | "sqlite" | "duckdb" | "clickhouse-client"
        | "clickhouse" | "cockroach" | "mongosh" | "mongo" | "sqlcmd" | "pgcli" | "mycli"
        | "litecli" | "usql" | "redis-cli" | "valkey-cli" => sql_client(name, args),
        "systemctl" | "service" | "launchctl" | "sc" => {
            let i = sub_index(args, 1, &[]);
            let sub = if name == "service" {
                text(args, i + 1)
            } else {
                text(args, i)
            };
            Facts::new(match sub {
                "status" | "show" | "list-units" | "list-unit-files" | "is-active"
                | "is-enabled" | "is-failed" | "cat" | "list-timers" | "list-sockets"
                | "list-dependencies" | "list" | "print" | "" | "--version" | "help" | "query" => {
                    Read
                }
                _ => Mutate,
            })
        }
        "brew" | "port" => Facts::new(by_table(
            text(args, sub_index(args, 1, &[])),
            &[
                "list",
                "ls",
                "info",
                "search",
                "outdated",
                "deps",
                "config",
                "doctor",
                "--version",
                "leaves",
                "uses",
                "desc",
                "home",
                "--prefix",
                "--cellar",
                "commands",
                "",
                "installed",
            ],
            &[
                "install",
                "upgrade",
                "update",
                "tap",
                "reinstall",
                "link",
                "bundle",
            ],
            true,
        )),
        "apt" | "apt-get" | "apt-cache" | "dnf" | "yum" | "zypper" | "apk" | "snap" | "flatpak"
        | "nix-env" | "dpkg" | "rpm" => {
            let sub = text(args, sub_index(args, 1, &["-o", "-c", "-t"]));
            let read = matches!(
                sub,
                "list"
                    | "search"
                    | "show"
                    | "policy"
                    | "info"
                    | "depends"
                    | "rdepends"
                    | "madison"
                    | "showpkg"
                    | "stats"
                    | "dump"
                    | ""
                    | "--version"
                    | "help"
                    | "provides"
                    | "whatprovides"
                    | "repolist"
                    | "history"
                    | "-l"
                    | "-L"
                    | "-s"
                    | "-S"
                    | "-q"
                    | "-qa"
                    | "-qi"
                    | "-ql"
                    | "--list"
                    | "--status"
                    | "-W"
                    | "--query"
            ) || name == "apt-cache";
            Facts::new(if read {
                Read
            } else if matches!(
                sub,
                "install" | "update" | "upgrade" | "add" | "-i" | "refresh" | "makecache"
            ) {
                Write
            } else {
                Mutate
            })
        }
        "pacman" | "yay" | "paru" => {
            let op = text(args, 1);
            Facts::new(
                if op.starts_with("-Q")
                    || op.starts_with("-Ss")
                    || op.starts_with("-Si")
                    || op.starts_with("-F")
                {
                    Read
                } else if op.starts_with("-R") {
                    Mutate
                } else {
                    Write
                },
            )
        }
        "crontab" => Facts::new(if has(args, 1, &["-l"]) { Read } else { Mutate }),
        "ssh-keygen" => {
            let mut f = Facts::new(Write);
            if has(args, 1, &["-l", "-L", "-F", "-y", "-Y"]) && !has(args, 1, &["-R"]) {
                f.sensitivity = Read;
            }
            if let Some(k) = (1..args.len()).find(|&k| text(args, k) == "-f") {
                if f.sensitivity == Write {
                    f.write(k + 1);
                } else {
                    f.read(k + 1);
                }
            }
            f
        }
        "gpg" | "gpg2" => {
            let read = has(
                args,
                1,
                &[
                    "--list-keys",
                    "-k",
                    "--list-secret-keys",
                    "-K",
                    "--verify",
                    "--fingerprint",
                    "--version",
                    "--list-packets",
                ],
            );
            Facts::new(if read { Read } else { Mutate })
        }
        _ => return None,
    };
    Some(f)
}

/// Cargo configuration keys known to change nothing but output, speed
/// and optimisation: `--config` with any other key (a runner, a linker,
/// rustflags, an alias, `env.*`, a source, a credential provider) or with
/// a file makes the command opaque. A trailing `.` takes the section; in
/// `profile.*.x` the `*` is one profile name.
const CARGO_INERT_KEYS: &[&str] = &[
    "term.",
    "net.retry",
    "net.offline",
    "http.timeout",
    "http.multiplexing",
    "build.jobs",
    "build.incremental",
    "cargo-new.vcs",
    "future-incompat-report.frequency",
    "profile.*.opt-level",
    "profile.*.debug",
    "profile.*.debug-assertions",
    "profile.*.overflow-checks",
    "profile.*.lto",
    "profile.*.panic",
    "profile.*.incremental",
    "profile.*.codegen-units",
    "profile.*.strip",
    "profile.*.split-debuginfo",
];

/// Keys whose value is a program cargo runs: it is analysed too.
const CARGO_PROGRAM_KEYS: &[&str] = &[
    "rustc-wrapper",
    "rustc-workspace-wrapper",
    "rustc",
    "rustdoc",
    "runner",
    "linker",
];

fn cargo_key_inert(key: &str) -> bool {
    let parts: Vec<&str> = key.split('.').collect();
    CARGO_INERT_KEYS.iter().any(|k| match k.strip_suffix('.') {
        Some(section) => parts.first() == Some(&section) && parts.len() > 1,
        None => match k.split_once(".*.") {
            Some((section, last)) => parts.len() == 3 && parts[0] == section && parts[2] == last,
            None => key == *k,
        },
    })
}

/// `--config KEY=VALUE` or `--config FILE`, anywhere before `--`.
fn cargo_configs(f: &mut Facts, args: &[Word]) {
    let mut k = 1;
    while k < args.len() {
        let t = text(args, k);
        if t == "--" {
            break;
        }
        let value = if t == "--config" {
            k += 1;
            Some(k)
        } else if t.starts_with("--config=") {
            Some(k)
        } else {
            None
        };
        if let Some(v) = value {
            let w = args.get(v);
            let kv = w.map_or("", |w| w.text.strip_prefix("--config=").unwrap_or(&w.text));
            match kv.split_once('=') {
                _ if w.is_some_and(|w| w.dynamic) => {
                    f.opaque("the `cargo --config` value is not known before it runs");
                }
                Some((key, _)) if cargo_key_inert(key.trim().trim_matches('"')) => {}
                Some((key, val)) => {
                    f.opaque(format!(
                        "`cargo --config {}` is not a key the analysis knows to be inert (it may set a runner, a linker, flags or an alias)",
                        key.trim()
                    ));
                    let key = key.trim().to_ascii_lowercase();
                    if CARGO_PROGRAM_KEYS.iter().any(|s| key.ends_with(s)) {
                        let program = val.trim().trim_matches(['"', '\'']);
                        f.run_line(program, false, format!("program set by `cargo --config {key}`"));
                    }
                }
                None => f.opaque(format!(
                    "`cargo --config {kv}` loads a configuration file, which can make cargo run programs"
                )),
            }
            f.skip.push(v);
            f.data.push(v);
        }
        k += 1;
    }
}

fn cargo(args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    let val_opts = ["--config", "-Z", "--color", "-C", "--manifest-path"];
    let i = sub_index(args, 1, &val_opts);
    cargo_configs(&mut f, args);
    let sub = text(args, i);
    f.sensitivity = by_table(
        sub,
        &[
            "tree",
            "metadata",
            "version",
            "--version",
            "-V",
            "search",
            "locate-project",
            "pkgid",
            "verify-project",
            "help",
            "read-manifest",
            "--list",
            "info",
            "outdated",
            "audit",
            "deny",
            "machete",
            "",
            "-h",
            "--help",
        ],
        &[
            "build",
            "b",
            "check",
            "c",
            "test",
            "t",
            "run",
            "r",
            "bench",
            "doc",
            "d",
            "clippy",
            "fmt",
            "fix",
            "add",
            "remove",
            "rm",
            "update",
            "generate-lockfile",
            "fetch",
            "vendor",
            "install",
            "new",
            "init",
            "package",
            "rustc",
            "rustdoc",
            "miri",
            "nextest",
            "llvm-cov",
            "expand",
            "watch",
            "binstall",
            "udeps",
            "insta",
            "hack",
            "make",
            "xtask",
            "semver-checks",
            "tarpaulin",
            "msrv",
            "sort",
        ],
        true,
    );
    if sub == "fmt" && has(args, i + 1, &["--check"]) {
        f.sensitivity = Read;
    }
    f
}

fn node_pm(name: &str, args: &[Word]) -> Facts {
    let i = sub_index(
        args,
        1,
        &[
            "--prefix",
            "-C",
            "--dir",
            "--filter",
            "--cwd",
            "-w",
            "--workspace",
        ],
    );
    let sub = text(args, i);
    let read = [
        "ls",
        "list",
        "ll",
        "la",
        "view",
        "v",
        "info",
        "show",
        "outdated",
        "search",
        "s",
        "help",
        "whoami",
        "explain",
        "why",
        "doctor",
        "--version",
        "-v",
        "root",
        "prefix",
        "bin",
        "ping",
        "fund",
        "query",
        "licenses",
        "audit",
    ];
    let mutate = [
        "uninstall",
        "remove",
        "rm",
        "r",
        "un",
        "unlink",
        "publish",
        "unpublish",
        "deprecate",
        "owner",
        "access",
        "token",
        "logout",
        "login",
        "adduser",
    ];
    let mut s = if read.contains(&sub) {
        Read
    } else if mutate.contains(&sub) {
        Mutate
    } else {
        Write
    };
    if sub.is_empty() {
        s = if name == "npm" && args.len() == 1 {
            Read
        } else {
            Write
        };
    }
    match sub {
        "config" | "c" => {
            if matches!(text(args, i + 1), "get" | "list" | "ls" | "") {
                s = Read;
            }
        }
        "cache" => {
            if matches!(text(args, i + 1), "ls" | "list" | "verify" | "dir") {
                s = Read;
            } else {
                s = Mutate;
            }
        }
        "audit" if has(args, i + 1, &["fix"]) => s = Write,
        "version" => {
            s = if text(args, i + 1).is_empty() || text(args, i + 1).starts_with('-') {
                Read
            } else {
                Write
            };
        }
        "pkg" => {
            s = if text(args, i + 1) == "get" {
                Read
            } else {
                Write
            };
        }
        _ => {}
    }
    Facts::new(s)
}

fn pip(args: &[Word], start: usize) -> Facts {
    let i = sub_index(
        args,
        start,
        &[
            "--python",
            "-r",
            "--requirement",
            "--index-url",
            "-i",
            "--target",
            "-t",
            "--prefix",
            "--root",
            "--log",
            "--proxy",
            "--cert",
            "--client-cert",
            "--cache-dir",
            "--src",
            "--constraint",
            "-c",
        ],
    );
    let sub = text(args, i);
    let mut s = by_table(
        sub,
        &[
            "list",
            "show",
            "freeze",
            "check",
            "search",
            "index",
            "inspect",
            "debug",
            "help",
            "--version",
            "-V",
            "tree",
            "compile",
            "",
        ],
        &["install", "download", "wheel", "sync"],
        true,
    );
    match sub {
        "config" => {
            s = if matches!(text(args, i + 1), "list" | "get" | "debug") {
                Read
            } else {
                Write
            };
        }
        "cache" => {
            s = if matches!(text(args, i + 1), "list" | "dir" | "info") {
                Read
            } else {
                Mutate
            };
        }
        _ => {}
    }
    Facts::new(s)
}

fn docker(args: &[Word]) -> Facts {
    let i = sub_index(
        args,
        1,
        &[
            "-H",
            "--host",
            "--context",
            "-c",
            "--config",
            "--log-level",
            "-l",
        ],
    );
    let sub = text(args, i);
    let next = text(args, i + 1);
    let read = match sub {
        "ps" | "images" | "inspect" | "logs" | "version" | "info" | "stats" | "top" | "port"
        | "diff" | "events" | "search" | "history" | "" | "--version" | "help" => true,
        "image" | "container" | "network" | "volume" | "context" | "plugin" | "secret"
        | "config" | "node" | "service" | "stack" | "manifest" | "trust" => {
            matches!(
                next,
                "ls" | "list" | "inspect" | "history" | "logs" | "ps" | "show" | ""
            )
        }
        "system" => matches!(next, "df" | "info" | "events"),
        "compose" => matches!(
            next,
            "ps" | "logs" | "config" | "ls" | "images" | "top" | "version" | "port" | "events"
        ),
        "buildx" => matches!(next, "ls" | "version" | "inspect" | "du"),
        _ => false,
    };
    Facts::new(if read { Read } else { Mutate })
}

fn kubectl(args: &[Word]) -> Facts {
    let i = sub_index(
        args,
        1,
        &[
            "-n",
            "--namespace",
            "--context",
            "--kubeconfig",
            "--cluster",
            "--user",
            "-s",
            "--server",
            "-l",
            "--selector",
            "-o",
            "--output",
        ],
    );
    let sub = text(args, i);
    let read = match sub {
        "get" | "describe" | "logs" | "explain" | "version" | "api-resources" | "api-versions"
        | "cluster-info" | "top" | "diff" | "events" | "" | "help" | "completion" | "plugin" => {
            true
        }
        "auth" => text(args, i + 1) == "can-i" || text(args, i + 1) == "whoami",
        "config" => matches!(
            text(args, i + 1),
            "view" | "get-contexts" | "current-context" | "get-clusters" | "get-users"
        ),
        "rollout" => matches!(text(args, i + 1), "status" | "history"),
        _ => false,
    };
    Facts::new(if read { Read } else { Mutate })
}

fn gh(args: &[Word]) -> Facts {
    let sub = text(args, 1);
    let verb = text(args, 2);
    let read = match sub {
        "pr" | "issue" | "repo" | "run" | "release" | "workflow" | "gist" | "label" | "secret"
        | "variable" | "cache" | "project" | "ruleset" | "codespace" | "org" | "extension" => {
            matches!(
                verb,
                "view" | "list" | "ls" | "status" | "diff" | "checks" | "watch" | "download" | ""
            )
        }
        "search" | "status" | "browse" | "--version" | "version" | "help" | "" | "completion" => {
            true
        }
        "auth" => matches!(verb, "status" | "token"),
        "api" => {
            let method = (1..args.len())
                .find(|&k| matches!(text(args, k), "-X" | "--method"))
                .map(|k| text(args, k + 1).to_ascii_uppercase());
            let fields = has(args, 2, &["-f", "-F", "--field", "--raw-field", "--input"]);
            match method.as_deref() {
                Some("GET") | Some("HEAD") => true,
                Some(_) => false,
                None => !fields,
            }
        }
        _ => false,
    };
    Facts::new(if read { Read } else { Mutate })
}

fn ssh(name: &str, args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    let p = opts::parse(
        args,
        1,
        &Spec {
            short_val: "BbcDEeFIiJLlmOopQRSWw",
            ..Spec::default()
        },
    );
    for o in &p.opts {
        let Some((i, off)) = o.value else { continue };
        f.skip.push(i);
        let v = args[i].text.get(off..).unwrap_or("");
        if o.is('o', "")
            && let Some(cmd) = super::files::ssh_option_command(v)
        {
            let start = off + (v.len() - cmd.len());
            f.run_line_arg(args, i, start, format!("command run by `{name} -o`"));
        } else if o.is('F', "") || o.is('i', "") {
            f.reads.push(PathRef::Arg { idx: i, off });
        } else if o.is('E', "") {
            f.write_at(i, off);
        }
    }
    // The remote command runs elsewhere: not paths here.
    for &k in &p.operands {
        f.skip.push(k);
    }
    f
}

fn sql_client(name: &str, args: &[Word]) -> Facts {
    let mut f = Facts::new(Mutate);
    f.sql = true;
    let destructive = args.iter().skip(1).any(|w| {
        sql_is_destructive(&w.text)
            || (name.starts_with("redis") || name.starts_with("valkey"))
                && matches!(w.text.to_ascii_lowercase().as_str(), "flushall" | "flushdb")
    });
    if destructive {
        f.sensitivity = Destructive;
        f.notes.push(format!("`{name}` drops or truncates data"));
    }
    for (k, w) in args.iter().enumerate().skip(1) {
        if w.text.contains(' ') {
            f.skip.push(k);
        }
    }
    f
}
