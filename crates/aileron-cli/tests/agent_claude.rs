//! Aileron against the real Claude Code CLI (npm `@anthropic-ai/claude-code`
//! at the version `support::npm` pins), run for real against a scripted fake
//! Anthropic API on loopback (`support::anthropic`).
//!
//! One session per way of running it (hooks installed in the project,
//! `aileron launch --enforce none`, `aileron launch --enforce all`), each a
//! script of several tool calls, checked as a user would: which files exist,
//! which are unchanged, what the model was told, what never reached the
//! model, and what the audit log says. Claude Code runs with every
//! permission bypassed, so only Aileron can stop a call.
//!
//! Agent runs take the [`AGENT`] lock one at a time: the timing test then
//! measures Aileron, not the other sessions sharing the cores.

mod support;

use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;
use support::Project;
use support::anthropic::{ClaudeRun, Mode, result_text, run_claude};
use support::model::{Script, Step};

const POLICY: &str = r#"version: 1
default: ask
allow:
  - "touch allowed-*"
  - id: reads
    description: reading is fine, but for secrets
    when: {type: fs.read}
deny:
  - id: no-denied
    command: "touch denied-*"
    description: no denied files
  - id: no-secrets
    description: secrets stay on disk
    when:
      type: {in: [fs.read, fs.write]}
      fs.path: {path: "**/secret*"}
"#;

/// The secret file's content: must never be in a request to the model.
const MARK: &str = "AILERON-SECRET-7d41c0e9b2";
/// What a search for the secret looks for (not the whole marker, since the
/// model's own tool call is sent back to it).
const MARK_PREFIX: &str = "AILERON-SECRET";

/// The user's own Claude Code project settings, there before Aileron.
const USER_SETTINGS: &str =
    "{\n  \"permissions\": {\"allow\": [\"Bash(ls)\"]},\n  \"cleanupPeriodDays\": 7\n}\n";

/// One agent run at a time (see the module's doc).
static AGENT: Mutex<()> = Mutex::new(());

fn claude() -> Option<PathBuf> {
    support::npm::CLAUDE_CODE.installed()
}

fn run(p: &Project, claude: &std::path::Path, mode: Mode, script: &Script) -> ClaudeRun {
    let _one = AGENT.lock().unwrap_or_else(|e| e.into_inner());
    let r = run_claude(p, claude, mode, script);
    assert!(!r.timed_out, "claude was killed:\n{}", r.describe());
    r
}

/// A project with the policy, a secret, and the user's Claude settings.
fn project() -> Project {
    let p = Project::new(POLICY);
    p.write("secret.txt", &format!("{MARK}\n"));
    p.write(".claude/settings.json", USER_SETTINGS);
    p
}

fn bash(command: &str) -> Step {
    Step::tool(
        "Bash",
        json!({"command": command, "description": "scripted step"}),
    )
}

fn path(p: &Project, rel: &str) -> String {
    p.path(rel).to_string_lossy().into_owned()
}

/// The steps of the main session, by index (the tool results come back in
/// this order, with ids `toolu_fakeNNNN`).
mod step {
    pub const ALLOWED: usize = 0;
    pub const DENIED: usize = 1;
    pub const UNMATCHED: usize = 2;
    pub const READ_SECRET: usize = 3;
    pub const GREP_SECRET: usize = 4;
    pub const CAT_SECRET: usize = 5;
    pub const GREP_R_SECRET: usize = 6;
    pub const READ_POLICY: usize = 7;
    pub const WRITE_POLICY: usize = 8;
    pub const EDIT_POLICY: usize = 9;
    pub const READ_SETTINGS: usize = 10;
    pub const EDIT_SETTINGS: usize = 11;
    pub const WRITE_SETTINGS: usize = 12;
    pub const COUNT: usize = 13;
}

fn main_script(p: &Project) -> Script {
    Script::new(vec![
        bash("touch allowed-1"),
        bash("touch denied-1"),
        bash("touch unmatched-1"),
        Step::tool("Read", json!({"file_path": path(p, "secret.txt")})),
        // Claude Code 2.1.330 offers no Grep tool (it answers "No such tool
        // available"); asked anyway, in case a version brings it back.
        Step::tool(
            "Grep",
            json!({"pattern": MARK_PREFIX, "path": path(p, "."), "output_mode": "content"}),
        ),
        // Through the shell: in Claude Code 2.1.330 `grep` is a shell
        // function running its embedded ugrep.
        bash("cat secret.txt"),
        bash(&format!("grep -r {MARK_PREFIX} .")),
        // Write and Edit need a Read of the file first, or Claude Code
        // itself refuses: read them so that only Aileron can.
        Step::tool("Read", json!({"file_path": path(p, "aileron.yaml")})),
        Step::tool(
            "Write",
            json!({"file_path": path(p, "aileron.yaml"), "content": "version: 1\ndefault: allow\n"}),
        ),
        Step::tool(
            "Edit",
            json!({"file_path": path(p, "aileron.yaml"),
                   "old_string": "default: ask", "new_string": "default: allow"}),
        ),
        Step::tool(
            "Read",
            json!({"file_path": path(p, ".claude/settings.json")}),
        ),
        // A valid settings edit (Claude Code validates it before any hook).
        Step::tool(
            "Edit",
            json!({"file_path": path(p, ".claude/settings.json"),
                   "old_string": "\"cleanupPeriodDays\": 7",
                   "new_string": "\"disableAllHooks\": true"}),
        ),
        Step::tool(
            "Write",
            json!({"file_path": path(p, ".claude/settings.json"),
                   "content": "{\"disableAllHooks\": true}\n"}),
        ),
        Step::Say("finished".to_owned()),
    ])
}

/// The text of the tool result of step `i`.
fn result(r: &ClaudeRun, i: usize) -> String {
    let id = format!("toolu_fake{i:04}");
    r.tool_results()
        .iter()
        .find(|b| b["tool_use_id"] == id.as_str())
        .map(result_text)
        .unwrap_or_else(|| panic!("no tool result for step {i}:\n{}", r.describe()))
}

fn is_error(r: &ClaudeRun, i: usize) -> bool {
    let id = format!("toolu_fake{i:04}");
    r.tool_results()
        .iter()
        .any(|b| b["tool_use_id"] == id.as_str() && b["is_error"] == true)
}

/// The audit records of the hook's decisions of `ty` whose summary contains `needle`.
fn hook_records<'a>(audit: &'a [Value], ty: &str, needle: &str) -> Vec<&'a Value> {
    audit
        .iter()
        .filter(|r| {
            r["adapter"] == "hook:claude-code"
                && r["action"]["type"] == ty
                && r["action"]["summary"]
                    .as_str()
                    .is_some_and(|s| s.contains(needle))
        })
        .collect()
}

fn assert_audited(audit: &[Value], ty: &str, needle: &str, decision: &str, rule: Option<&str>) {
    let found = hook_records(audit, ty, needle);
    assert!(
        found
            .iter()
            .any(|r| r["decision"] == decision && rule.is_none_or(|id| r["rule"] == id)),
        "no {decision} ({rule:?}) of {ty} {needle:?} by the hook in the audit log; \
         its records for it: {found:#?}"
    );
}

/// What every mode must show after the main session. `settings` is the
/// content `.claude/settings.json` must still have.
fn check_main_session(p: &Project, r: &ClaudeRun, settings: &str) {
    let why = r.describe();
    assert!(r.status.success(), "{why}");
    assert_eq!(r.result()["result"], "finished", "{why}");
    assert_eq!(
        r.tool_results().len(),
        step::COUNT,
        "every step's result reached the model\n{why}"
    );

    // The denied command did not run, and the model was told why.
    assert!(!p.path("denied-1").exists(), "{why}");
    let denied = result(r, step::DENIED);
    assert!(
        denied.contains("aileron: denied") && denied.contains("no-denied"),
        "{denied}"
    );
    assert!(is_error(r, step::DENIED));

    // No rule matched (default ask) and nobody can be asked: it did not run.
    assert!(!p.path("unmatched-1").exists(), "{why}");
    assert!(is_error(r, step::UNMATCHED), "{why}");
    assert!(
        result(r, step::UNMATCHED).contains("aileron"),
        "{}",
        result(r, step::UNMATCHED)
    );

    // The secret never reached the model, whichever tool tried.
    assert!(
        result(r, step::READ_SECRET).contains("no-secrets"),
        "{}",
        result(r, step::READ_SECRET)
    );
    assert!(is_error(r, step::GREP_SECRET), "{why}");
    for i in [step::CAT_SECRET, step::GREP_R_SECRET] {
        assert!(is_error(r, i), "step {i}\n{why}");
        assert!(result(r, i).contains("no-secrets"), "step {i}\n{why}");
    }
    assert!(!r.model_saw(MARK), "the secret reached the model\n{why}");

    // The policy and the hook settings are refused to the file tools.
    assert!(
        result(r, step::READ_POLICY).contains("default: ask"),
        "{why}"
    );
    for i in [step::WRITE_POLICY, step::EDIT_POLICY] {
        let t = result(r, i);
        assert!(
            t.contains("aileron: denied") && t.contains("builtin:protect-policy"),
            "step {i}: {t}"
        );
    }
    assert_eq!(p.read("aileron.yaml"), POLICY);
    assert!(
        result(r, step::READ_SETTINGS).contains("cleanupPeriodDays"),
        "{why}"
    );
    for i in [step::EDIT_SETTINGS, step::WRITE_SETTINGS] {
        let t = result(r, i);
        assert!(
            t.contains("aileron: denied") && t.contains("builtin:protect-policy"),
            "step {i}: {t}"
        );
    }
    assert_eq!(p.read(".claude/settings.json"), settings);

    // The audit log has the hook's decisions.
    let audit = p.audit();
    assert_audited(
        &audit,
        "shell.exec",
        "touch allowed-1",
        "allow",
        Some(&format!("{}:allow[0]", path(p, "aileron.yaml"))),
    );
    assert_audited(
        &audit,
        "shell.exec",
        "touch denied-1",
        "deny",
        Some("no-denied"),
    );
    assert_audited(&audit, "shell.exec", "touch unmatched-1", "ask", None);
    assert_audited(&audit, "fs.read", "secret.txt", "deny", Some("no-secrets"));
    // `cat` names the file; `grep -r` may read it, so it is asked about.
    assert_audited(
        &audit,
        "shell.exec",
        "cat secret.txt",
        "deny",
        Some("no-secrets"),
    );
    assert_audited(
        &audit,
        "shell.exec",
        &format!("grep -r {MARK_PREFIX} ."),
        "ask",
        Some("no-secrets"),
    );
    let policy_writes = hook_records(&audit, "fs.write", "aileron.yaml");
    assert_eq!(policy_writes.len(), 2, "{policy_writes:#?}");
    assert!(
        policy_writes
            .iter()
            .all(|r| r["decision"] == "deny" && r["rule"] == "builtin:protect-policy"),
        "{policy_writes:#?}"
    );
    let settings_writes = hook_records(&audit, "fs.write", ".claude/settings.json");
    assert_eq!(settings_writes.len(), 2, "{settings_writes:#?}");
    assert!(
        settings_writes
            .iter()
            .all(|r| r["decision"] == "deny" && r["rule"] == "builtin:protect-policy"),
        "{settings_writes:#?}"
    );
}

/// (a) and (b): hooks installed with `aileron install claude-code
/// --project`, then taken out again.
#[test]
fn hooks_installed_in_the_project_decide_every_tool_call() {
    let Some(claude) = claude() else { return };
    let p = project();
    let out = support::run_no_tty(&mut p.aileron(&["install", "claude-code", "--project"]));
    assert!(out.status.success(), "{}", support::text(&out.stderr));
    // In Claude Code's local settings: the team's `.claude/settings.json`
    // stays as it was.
    let installed = p.read(".claude/settings.local.json");
    assert!(installed.contains("hook claude-code"), "{installed}");
    assert_eq!(p.read(".claude/settings.json"), USER_SETTINGS);

    let r = run(&p, &claude, Mode::Direct, &main_script(&p));
    check_main_session(&p, &r, USER_SETTINGS);
    assert_eq!(p.read(".claude/settings.local.json"), installed);
    // The allowed command ran.
    assert!(p.path("allowed-1").exists(), "{}", r.describe());
    assert!(!is_error(&r, step::ALLOWED), "{}", r.describe());

    // (b) Uninstalling leaves the user's settings byte for byte as they were.
    let out = support::run_no_tty(&mut p.aileron(&["uninstall", "claude-code", "--project"]));
    assert!(out.status.success(), "{}", support::text(&out.stderr));
    assert_eq!(
        std::fs::read(p.path(".claude/settings.json")).unwrap(),
        USER_SETTINGS.as_bytes()
    );
    assert!(!p.path(".claude/settings.local.json").exists());
}

/// (c) `aileron launch --enforce none -- claude`: hooks for the one
/// session on Claude Code's command line, the user's files untouched.
#[test]
fn launch_without_enforcement_decides_every_tool_call() {
    let Some(claude) = claude() else { return };
    let p = project();
    let r = run(&p, &claude, Mode::LaunchNone, &main_script(&p));
    check_main_session(&p, &r, USER_SETTINGS);
    check_model_calls_went_through_the_proxy(&p, &r);
}

/// Under launch, Claude Code reaches its model through the session's
/// egress proxy (it honours `HTTPS_PROXY`), every turn decided and
/// allowed as the agent's own model API, never asked (no doom loop for
/// the turns, however alike), and the token usage written beside it.
fn check_model_calls_went_through_the_proxy(p: &Project, r: &ClaudeRun) {
    let why = r.describe();
    let audit = p.audit();
    let calls: Vec<&Value> = audit
        .iter()
        .filter(|a| {
            a["adapter"] == "proxy" && a["action"]["facets"]["llm"]["provider"] == "anthropic"
        })
        .collect();
    let decisions: Vec<&&Value> = calls.iter().filter(|a| a["outcome"].is_null()).collect();
    assert!(
        decisions.len() >= step::COUNT,
        "{} model calls through the proxy for {} steps\n{why}",
        decisions.len(),
        step::COUNT
    );
    for d in &decisions {
        assert_eq!(d["decision"], "allow", "{d}");
        assert_eq!(d["rule"], "builtin:agent-model-api", "{d}");
    }
    assert!(
        calls.iter().any(|a| a["outcome"] == "response"
            && a["action"]["facets"]["llm"]["output_tokens"].is_u64()),
        "no usage line\n{why}"
    );
}

/// (d) `aileron launch --enforce all -- claude`.
#[test]
fn launch_with_enforcement_decides_every_tool_call() {
    let Some(claude) = claude() else { return };
    let p = project();
    let r = run(&p, &claude, Mode::LaunchAll, &main_script(&p));
    check_main_session(&p, &r, USER_SETTINGS);
    // The box lets Claude Code keep its state outside the project, in a
    // home where nothing else may be written.
    let config = std::fs::read_to_string(p.home.join(".claude.json")).unwrap_or_default();
    assert!(
        config.contains("firstStartTime"),
        "Claude Code could not save ~/.claude.json: {config:?}\n{}",
        r.describe()
    );
}

/// An allowed shell command runs under launch: the hook allows it, then
/// the shim must see through Claude Code's wrapper to the same command.
fn launch_runs_allowed_commands(mode: Mode) {
    let Some(claude) = claude() else { return };
    let p = project();
    let script = Script::new(vec![
        bash("touch allowed-1"),
        bash("touch allowed-2 allowed-3"),
        bash("touch 'allowed-4 x'"),
        bash("touch allowed-5\ntouch allowed-6"),
    ]);
    let r = run(&p, &claude, mode, &script);
    let why = r.describe();
    assert!(r.status.success(), "{why}");
    for f in [
        "allowed-1",
        "allowed-2",
        "allowed-3",
        "allowed-4 x",
        "allowed-5",
        "allowed-6",
    ] {
        assert!(p.path(f).exists(), "{f} was not created\n{why}");
    }
}

#[test]
fn launch_without_enforcement_runs_allowed_commands() {
    launch_runs_allowed_commands(Mode::LaunchNone);
}

#[test]
fn launch_with_enforcement_runs_allowed_commands() {
    launch_runs_allowed_commands(Mode::LaunchAll);
}

/// (e) What Aileron adds per tool call: the same session without Aileron,
/// with the hooks installed, and under launch. Printed, never asserted.
/// The whole session varies by hundreds of milliseconds with Claude Code's
/// own start; the tool loop (first answer to last request, timed by the
/// fake model) is what a tool call costs.
#[test]
fn overhead_per_tool_call() {
    let Some(claude) = claude() else { return };
    const CALLS: usize = 8;
    let script = |p: &Project| {
        let mut steps = Vec::new();
        for i in 0..CALLS / 2 {
            steps.push(bash(&format!("touch allowed-t{i}")));
            steps.push(Step::tool(
                "Read",
                json!({"file_path": path(p, "aileron.yaml")}),
            ));
        }
        Script::new(steps)
    };
    // Each way once per round, the rounds interleaved so that a change in
    // the machine's load falls on all of them; the best round counts.
    let ways = [
        ("without aileron", Mode::Direct, false),
        ("hooks installed", Mode::Direct, true),
        ("launch --enforce none", Mode::LaunchNone, false),
        ("launch --enforce all", Mode::LaunchAll, false),
    ];
    let mut best = [Duration::MAX; 4];
    let mut best_loop = [Duration::MAX; 4];
    // What Aileron's deciding itself took, by adapter (the audit's latency).
    let mut latencies: [Vec<(String, u64)>; 4] = Default::default();
    for _round in 0..3 {
        for (i, (name, mode, hooks)) in ways.iter().enumerate() {
            let p = project();
            if *hooks {
                let out =
                    support::run_no_tty(&mut p.aileron(&["install", "claude-code", "--project"]));
                assert!(out.status.success(), "{}", support::text(&out.stderr));
            }
            let r = run(&p, &claude, *mode, &script(&p));
            assert!(r.status.success(), "{name}: {}", r.describe());
            assert_eq!(r.tool_results().len(), CALLS, "{name}: {}", r.describe());
            best[i] = best[i].min(r.wall);
            best_loop[i] = best_loop[i].min(r.tool_loop());
            latencies[i].extend(p.audit().iter().filter_map(|a| {
                Some((a["adapter"].as_str()?.to_owned(), a["latency_us"].as_u64()?))
            }));
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    for (i, (name, _, _)) in ways.iter().enumerate() {
        eprintln!(
            "claude code, {CALLS} tool calls, best of 3, {name}: session {:.0} ms ({:+.1} ms per call), \
             tool loop {:.0} ms ({:.1} ms per call, {:+.1} ms per call)",
            ms(best[i]),
            (ms(best[i]) - ms(best[0])) / CALLS as f64,
            ms(best_loop[i]),
            ms(best_loop[i]) / CALLS as f64,
            (ms(best_loop[i]) - ms(best_loop[0])) / CALLS as f64
        );
        let mut adapters: Vec<&str> = latencies[i].iter().map(|(a, _)| a.as_str()).collect();
        adapters.sort();
        adapters.dedup();
        for adapter in adapters {
            let mut us: Vec<u64> = latencies[i]
                .iter()
                .filter(|(a, _)| a == adapter)
                .map(|(_, l)| *l)
                .collect();
            us.sort();
            eprintln!(
                "    {adapter}: {} decisions, median {} us, max {} us (audit latency)",
                us.len(),
                us[us.len() / 2],
                us[us.len() - 1]
            );
        }
    }
}
