//! Self-protection by path and by effect (issue 12, families 5 and 6).
//!
//! Under a policy that allows everything else (`default: allow` and the
//! `os/linux` profile), the built-in rules must still deny writes to
//! Aileron's own files however they are named or reached (a directory that
//! holds them, another case, a glob), ask before files that run code later
//! (git configuration, shell start-up files, directories on `PATH`), and
//! deny reads of the data directory's secrets. Everyday lines stay allowed.
//!
//! The lines run in `/p`, whose `aileron.yaml` is the policy in force; the
//! home directory is `/home/u`.

mod common;

use aileron_engine::{Action, Environment, Layer, Policy, Session, State};
use common::{DIR, FILE, HOME, TS, builtin_profile, decide_line, source};
use serde_json::json;

const POLICY: &str = "version: 1\ndefault: allow\n";

/// `$XDG_CONFIG_HOME` in the tests.
const CONFIG_HOME: &str = "/home/u/cfg";

fn environment() -> Environment {
    Environment {
        config_home: CONFIG_HOME.into(),
        runtime_dir: "/run/user/1000".into(),
        path_dirs: vec![
            "/home/u/.cargo/bin".into(),
            "/opt/tools/bin".into(),
            "/usr/local/bin".into(),
            "/usr/bin".into(),
        ],
        ..Environment::new(HOME)
    }
}

fn policy_in(env: &Environment) -> Policy {
    let sources = [
        builtin_profile("os/linux"),
        source(FILE, POLICY, Layer::Project, DIR),
    ];
    Policy::from_sources(&sources, env).expect("policy loads")
}

fn policy() -> Policy {
    policy_in(&environment())
}

fn decide(policy: &Policy, line: &str) -> (String, Option<String>) {
    let v = decide_line(policy, line);
    (v.verdict.decision.as_str().to_owned(), v.verdict.rule)
}

/// Every line must be decided `decision` by the built-in rule `rule`.
#[track_caller]
fn expect(policy: &Policy, decision: &str, rule: &str, lines: &[&str]) {
    let wrong: Vec<String> = lines
        .iter()
        .filter_map(|line| {
            let (d, r) = decide(policy, line);
            let want = format!("builtin:{rule}");
            (d != decision || r.as_deref() != Some(&want))
                .then(|| format!("  {line:?}: {d} by {r:?}"))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "expected {decision} by builtin:{rule}:\n{}",
        wrong.join("\n")
    );
}

#[track_caller]
fn expect_allowed(policy: &Policy, lines: &[&str]) {
    let wrong: Vec<String> = lines
        .iter()
        .filter_map(|line| {
            let (d, r) = decide(policy, line);
            (d != "allow").then(|| format!("  {line:?}: {d} by {r:?}"))
        })
        .collect();
    assert!(wrong.is_empty(), "expected allow:\n{}", wrong.join("\n"));
}

#[test]
fn writes_to_a_directory_that_holds_protected_files_are_denied() {
    expect(
        &policy(),
        "deny",
        "protect-policy",
        &[
            // the lines
            "mv .claude x",
            "cp -rT d .claude",
            "cp -r d/. .claude/",
            "rsync -a d/ .claude/",
            "ln -sfn /tmp/x .claude",
            // a new tree where none was: its settings.json is a hook configuration
            "mv x .claude",
            "cp -r d .claude",
            "cp -r ~/evil/.claude .",
            "ln -s /tmp/x .claude",
            // deleting, hiding or moving away
            "rm -rf .claude",
            "rmdir .codex",
            "chmod 000 .claude",
            "mv ~/.claude /tmp/c",
            "rm -rf ~/.gemini",
            "mv ~/.config/opencode /tmp/o",
            "rm -rf ~/Documents/Cline",
            // the project directory holds the policy in force
            "cp -rT /tmp/evil .",
            "cp -r /tmp/evil/. .",
            "cp -r -t . /tmp/evil/.",
            "ln -sfn /tmp/evil /p",
            // globs that can name one
            "rm -rf .c*",
            "chmod -R 000 ./.cl[a]ude",
        ],
    );
}

#[test]
fn protected_names_match_in_any_case() {
    expect(
        &policy(),
        "deny",
        "protect-policy",
        &[
            "echo x > AILERON.YAML",
            "echo x > sub/Aileron.yml",
            "echo x > .Aileron/x",
            "echo x > .CLAUDE/settings.json",
            "echo x > .claude/Settings.Local.JSON",
            "cp x ~/.AILERON/settings.yaml",
            "echo x > ~/.Codex/config.toml",
            "mv x ~/.GEMINI",
            // HFS+ ignores zero-width joiners in names
            "echo x > .clau\u{200c}de/settings.json",
        ],
    );
}

#[test]
fn what_agents_run_before_every_command_is_denied() {
    expect(
        &policy(),
        "deny",
        "protect-policy",
        &[
            // Claude Code sources these before every command it runs
            "echo 'alias git=/tmp/g' > ~/.claude/shell-snapshots/snapshot-bash-1.sh",
            "rm -rf ~/.claude/shell-snapshots",
            "echo x > /home/u/cfg/opencode/plugins/x.js",
            // managed settings
            "echo '{}' | tee /etc/claude-code/managed-settings.json",
            // a launch session's shim link (the agent's $SHELL) and settings
            "ln -sf /bin/bash /tmp/aileron-1000/0a1b/bin/bash",
            "echo '{}' > /run/user/1000/aileron/0a1b/claude-settings.json",
            "rm -rf /tmp/aileron-1000",
            // the MCP servers it starts, which `aileron install` wraps
            "echo '{}' > .mcp.json",
            "sed -i s/aileron/node/ sub/.cursor/mcp.json",
            "echo '{}' > ~/.cursor/mcp.json",
            "rm opencode.jsonc",
        ],
    );
}

#[test]
fn git_files_that_run_code_later_ask() {
    let p = policy();
    expect(
        &p,
        "ask",
        "git-hooks",
        &[
            "echo x > ~/.config/git/config",
            "echo '* filter=x' > ~/.config/git/attributes",
            "echo x > /home/u/cfg/git/config",
            "rm -rf ~/.config/git",
            "echo 'gitdir: /tmp/g' > .git",
            "rm -rf .git",
            "mv .git /tmp/g",
            "echo x > .git/config.worktree",
            "echo /tmp/g > .git/commondir",
            "echo x > .git/modules/sub/config",
            "cp hook .git/modules/sub/hooks/pre-commit",
            "echo x > .git/worktrees/wt/config.worktree",
            "echo x | tee /etc/gitconfig",
        ],
    );
    expect_allowed(&p, &["echo target >> ~/.config/git/ignore"]);
}

#[test]
fn programs_on_path_ask() {
    let p = policy();
    expect(
        &p,
        "ask",
        "path-dirs",
        &[
            "cp x ~/.local/bin/git",
            "install -m 755 x ~/.local/bin/",
            "curl -o ~/.cargo/bin/cargo https://x/y",
            "echo x > /opt/tools/bin/ls",
            "echo x | tee /usr/local/bin/git",
            "ln -sfn /tmp/bin ~/.local/bin",
            "mv ~/.cargo/bin /tmp/b",
        ],
    );
    // Only the PATH Aileron was given: without it, /opt/tools/bin is a directory like any other.
    expect_allowed(
        &policy_in(&Environment::new(HOME)),
        &["echo x > /opt/tools/bin/ls"],
    );
}

#[test]
fn a_directory_on_path_guards_its_programs_not_its_subdirectories() {
    let env = Environment {
        path_dirs: vec!["/home/u".into(), "/".into()],
        ..Environment::new(HOME)
    };
    let p = policy_in(&env);
    expect(&p, "ask", "path-dirs", &["echo x > ~/git", "echo x > /git"]);
    expect_allowed(&p, &["echo x > ~/src/a.rs", "echo x > /tmp/y"]);
}

#[test]
fn shell_start_up_files_ask() {
    expect(
        &policy(),
        "ask",
        "startup-files",
        &[
            "echo x >> ~/.bash_aliases",
            "echo x > ~/.bashrc.d/x.sh",
            "echo x >> ~/.zlogout",
            "echo PATH=/tmp >> ~/.pam_environment",
            "echo x > ~/.config/environment.d/x.conf",
            "echo x > ~/.config/systemd/user/x.service",
            "echo x > /home/u/cfg/fish/config.fish",
            "echo x | tee /etc/profile.d/x.sh",
            "echo x | tee -a /etc/bash.bashrc",
            "echo x | tee -a /etc/profile",
            "echo x | tee -a /etc/zsh/zshrc",
        ],
    );
}

#[test]
fn secrets_under_the_data_directory_are_not_read() {
    let p = policy();
    expect(
        &p,
        "deny",
        "protect-secrets",
        &[
            "cat ~/.aileron/tok*/x",
            "grep -r x ~/.aileron/tokens",
            "grep -r token ~/.a*",
            "cat ~/.AILERON/aileron.db",
            "cat ~/.aileron/admin.TOKEN",
            "cat ~/.aileron/Tokens/x",
            "find ~ -name '*.token' -exec cat {} +",
        ],
    );
    expect_allowed(
        &p,
        &[
            "ls ~/.aileron",
            "ls ~/.aileron/tokens",
            "cat ~/.aileron/settings.yaml",
            // a walk that reads names only
            "find ~/.aileron -name settings.yaml",
            "find ~ -name '*.rs'",
        ],
    );
}

#[test]
fn programs_that_may_change_a_holder_ask() {
    // Extracting or patching into the project directory, the home directory or
    // /tmp may overwrite what they hold; only a person can tell.
    expect(
        &policy(),
        "ask",
        "protect-policy-dirs",
        &[
            "tar xzf a.tgz",
            "unzip a.zip",
            "patch -p1 < x.patch",
            "unzip a.zip -d ~",
            "cd /tmp && tar xzf a.tgz",
            "tar xzf a.tgz -C .claude",
        ],
    );
}

#[test]
fn everyday_lines_stay_allowed() {
    expect_allowed(
        &policy(),
        &[
            "touch src/new.rs",
            "cp a b",
            "mkdir -p build",
            "mv old.rs new.rs",
            "git status",
            "echo x > notes.txt",
            "rm -rf target",
            "rm -f *.o",
            "sed -i s/a/b/ src/*.rs",
            "chmod +x run.sh",
            // into the project or home directory, which exist: the child is checked by its name
            "cp x .",
            "mv ../x .",
            "cp -r ../lib .",
            "ln -s ../x .",
            "rsync -a /tmp/x ./",
            "mv -t . ../x",
            "cp -r --target-directory=. ../lib",
            "cp x ~",
            "mv x ~/",
            "cp -r dist /tmp",
            "rsync -a /tmp/x/ dst/",
            "cp -r src /tmp/x",
            "tar czf /tmp/a.tgz src",
            "git clone https://x/y",
            "tar xzf a.tgz -C build",
            // making (not replacing) an agent's directory, and what lies beside its hooks
            "mkdir .claude",
            "mkdir -p .claude/commands && cp x.md .claude/commands/",
            "touch .claude",
            "cp notes.md .claude/",
            "echo x > .claude/commands/x.md",
            "rm -rf .claude/commands",
            "echo x > ~/.claude/CLAUDE.md",
        ],
    );
}

#[test]
fn the_agents_own_file_tools_are_judged_alike() {
    let p = policy();
    let fs = |path: &str, op: &str| {
        let mut a = Action {
            id: "a1".into(),
            timestamp: TS.parse().ok(),
            kind: "fs.write".into(),
            primary: "fs".into(),
            session: Session {
                cwd: Some(DIR.into()),
                ..Session::default()
            },
            ..Action::default()
        };
        a.facets
            .insert("fs".into(), json!({"path": path, "op": op}));
        a.normalize();
        let v = p.evaluate(&a, &State::default());
        (v.decision.as_str().to_owned(), v.rule)
    };
    let rule = |r: &str| Some(format!("builtin:{r}"));
    assert_eq!(
        fs("/p/.CLAUDE/settings.json", "write"),
        ("deny".into(), rule("protect-policy"))
    );
    assert_eq!(
        fs("/p/.claude", "delete"),
        ("deny".into(), rule("protect-policy"))
    );
    assert_eq!(
        fs("/p/.claude", "write"),
        ("ask".into(), rule("protect-policy-dirs"))
    );
    assert_eq!(
        fs("/home/u/.local/bin/git", "write"),
        ("ask".into(), rule("path-dirs"))
    );
    assert_eq!(fs("/p/src/new.rs", "write"), ("allow".into(), None));
}

#[test]
fn a_cached_policy_decides_alike() {
    let p = policy();
    let bytes = p.to_cache_bytes().expect("encodes");
    let back = Policy::from_cache_bytes(&bytes).expect("decodes");
    for line in [
        "mv .claude x",
        "echo x > AILERON.YAML",
        "tar xzf a.tgz",
        "echo x >> ~/.profile",
        "cat ~/.aileron/tok*/x",
        "touch src/new.rs",
    ] {
        assert_eq!(decide(&back, line), decide(&p, line), "{line}");
    }
}

/// What the built-ins protected before: kept, in the tables above's terms.
#[test]
fn what_was_protected_stays_protected() {
    let p = policy();
    expect(
        &p,
        "deny",
        "protect-policy",
        &[
            // hook configurations in the home directory too (`/**/` covers it)
            "echo '{}' > ~/.claude/settings.json",
            "echo '{}' > ~/.claude/settings.local.json",
            "echo x > ~/.codex/config.toml",
            "echo '{}' > ~/.gemini/settings.json",
            "echo x > ~/.config/opencode/plugin/x.js",
            "mv . ../elsewhere",
            "rsync -a /tmp/evil/ .",
            "mv -T /tmp/evil /p",
            "mv x .aileron",
        ],
    );
    expect(
        &p,
        "ask",
        "git-hooks",
        &[
            "echo '[core] pager = /tmp/x' >> ~/.gitconfig",
            "ln -s /tmp/hooks .git/hooks",
            "echo x > sub/.git/hooks/pre-commit",
        ],
    );
    expect(
        &p,
        "ask",
        "startup-files",
        &[
            "echo x >> ~/.profile",
            "echo x >> ~/.bash_login",
            "echo x >> ~/.bash_logout",
            "echo Host x >> ~/.ssh/config",
        ],
    );
    expect(
        &p,
        "deny",
        "protect-secrets",
        &[
            "cat ~/.aileron/tokens/*",
            "cat ~/.aileron/[a-c]*",
            "cat ~/.aileron/?dmin.token",
            "find ~/.aileron -exec cat {} +",
            "tar czf /tmp/a.tgz ~/.aileron",
        ],
    );
}
