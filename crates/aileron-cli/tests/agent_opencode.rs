//! The real opencode (npm `opencode-ai`, pinned in `support::npm`) under
//! Aileron, against a scripted fake model (OpenAI chat completions on
//! 127.0.0.1): with the gate plugin `aileron install opencode --project`
//! writes, and under `aileron launch` with and without the kernel's
//! enforcement. Every permission of opencode's own is "allow", so only
//! Aileron can stop a call; each mode is one opencode session whose script
//! tries everything, and the tests below check what it left behind.

mod support;

use serde_json::{Value, json};
use std::sync::{Mutex, OnceLock};
use support::Project;
use support::model::{Script, Step};
use support::openai_chat::{Mode, Run, result_of, run_opencode};

/// Only in the secret file; it must never reach the model.
const MARKER: &str = "zebra-quartz-5521";

const POLICY: &str = r#"version: 1
default: ask
allow:
  - "touch allowed-*"
  - "cat *"
  - id: reads
    when:
      type: {in: [fs.read, fs.list]}
deny:
  - id: no-denied-files
    command: "touch denied-*"
    description: no files named denied-*
  - id: no-secrets
    when:
      type: {in: [fs.read, fs.write]}
      fs.path: {path: "**/secret*"}
"#;

/// The user's own opencode files in the project, there before Aileron.
const USER_CONFIG: &str =
    "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"autoupdate\": false\n}\n";
const USER_CONFIG_C: &str =
    "// the user's project settings\n{\n  \"share\": \"disabled\" // no sharing\n}\n";

const PLUGIN: &str = ".opencode/plugins/aileron.js";

/// The steps, by index in the script.
const ALLOWED: usize = 0;
const DENIED: usize = 1;
const ASKED: usize = 2;
const WRITE_POLICY: usize = 3;
const EDIT_POLICY: usize = 4;
const READ_SECRET: usize = 5;
const GREP_SECRET: usize = 6;
const CAT_SECRET: usize = 7;
const WRITE_PLUGIN: usize = 8;
const EDIT_PLUGIN: usize = 9;

fn bash(command: &str) -> Step {
    Step::tool("bash", json!({"command": command, "description": "run it"}))
}

fn script(p: &Project) -> Script {
    let abs = |rel: &str| p.path(rel).to_string_lossy().into_owned();
    Script::new(vec![
        bash("touch allowed-1"),
        bash("touch denied-1"),
        bash("touch asked-1"),
        Step::tool(
            "write",
            json!({"filePath": abs("aileron.yaml"), "content": "version: 1\ndefault: allow\n"}),
        ),
        Step::tool(
            "edit",
            json!({"filePath": abs("aileron.yaml"), "oldString": "default: ask", "newString": "default: allow"}),
        ),
        Step::tool("read", json!({"filePath": abs("secret.txt")})),
        // The pattern is part of the marker, never the marker itself.
        Step::tool("grep", json!({"pattern": "quartz", "path": abs("")})),
        bash("cat secret.txt"),
        Step::tool(
            "write",
            json!({"filePath": abs(PLUGIN), "content": "export const Nothing = async () => ({});\n"}),
        ),
        Step::tool(
            "edit",
            json!({"filePath": abs(PLUGIN), "oldString": "throw new Error(why);", "newString": "return;"}),
        ),
    ])
}

/// One opencode session and what it left.
struct Session {
    p: Project,
    run: Run,
    policy_before: String,
    plugin_before: Option<Vec<u8>>,
    /// Read once the run ended (another test uninstalls the plugin).
    plugin_after: Option<Vec<u8>>,
}

fn project() -> Project {
    let p = Project::new(POLICY);
    p.write("secret.txt", &format!("the password is {MARKER}\n"));
    p.write("opencode.json", USER_CONFIG);
    p.write(".opencode/opencode.jsonc", USER_CONFIG_C);
    p
}

/// One opencode at a time: several at once starve each other (and the
/// timings) on a small machine.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn session(mode: Mode) -> Option<Session> {
    let _one = one_at_a_time();
    let p = project();
    if mode == Mode::Direct {
        let out = support::run_no_tty(&mut p.aileron(&["install", "opencode", "--project"]));
        assert!(out.status.success(), "{}", support::text(&out.stderr));
    }
    let policy_before = p.read("aileron.yaml");
    let plugin_before = std::fs::read(p.path(PLUGIN)).ok();
    let run = run_opencode(&p, mode, script(&p), "Do the scripted steps.")?;
    eprintln!("opencode {mode:?}: {:?}", run.elapsed);
    for (i, (_, result)) in support::openai_chat::results_seen(&run.requests)
        .iter()
        .enumerate()
    {
        eprintln!("  step {i}: {}", result.lines().next().unwrap_or(""));
    }
    let plugin_after = std::fs::read(p.path(PLUGIN)).ok();
    Some(Session {
        p,
        run,
        policy_before,
        plugin_before,
        plugin_after,
    })
}

static PLUGIN_SESSION: OnceLock<Option<Session>> = OnceLock::new();
static LAUNCH_NONE: OnceLock<Option<Session>> = OnceLock::new();
static LAUNCH_ALL: OnceLock<Option<Session>> = OnceLock::new();

fn plugin_session() -> Option<&'static Session> {
    PLUGIN_SESSION
        .get_or_init(|| session(Mode::Direct))
        .as_ref()
}

fn launch_none() -> Option<&'static Session> {
    LAUNCH_NONE
        .get_or_init(|| session(Mode::Launch("none")))
        .as_ref()
}

fn launch_all() -> Option<&'static Session> {
    LAUNCH_ALL
        .get_or_init(|| session(Mode::Launch("all")))
        .as_ref()
}

impl Session {
    fn result(&self, step: usize) -> String {
        result_of(&self.run.requests, step).unwrap_or_else(|| {
            panic!(
                "the model never got the result of step {step}\n{}",
                self.run.describe()
            )
        })
    }

    /// The result of `step` says Aileron refused it.
    fn assert_refused(&self, step: usize, rule: &str) {
        let r = self.result(step);
        assert!(
            r.contains("aileron: denied") && r.contains(rule),
            "step {step}: the model got {r:?}, not Aileron's refusal naming {rule:?}\n{}",
            self.run.describe()
        );
    }

    fn assert_ran_to_the_end(&self) {
        assert!(
            self.run.status.success(),
            "opencode failed\n{}",
            self.run.describe()
        );
        // Every step's result reached the model, then it said "done".
        assert!(
            result_of(&self.run.requests, EDIT_PLUGIN).is_some(),
            "the script did not run to its end\n{}",
            self.run.describe()
        );
    }

    /// The audit records of this project, and a line for failures.
    fn audit(&self) -> (Vec<Value>, String) {
        let audit = self.p.audit();
        let text = self.p.audit_text();
        (audit, text)
    }

    fn assert_secret_never_sent(&self, step: usize) {
        let sent = self.run.sent();
        assert!(
            !sent.contains(MARKER),
            "the secret reached the model (step {step} got {:?})",
            result_of(&self.run.requests, step)
        );
    }
}

/// The decisions of the session in plain words, for the asserts.
fn decided(audit: &[Value], needle: &str, decision: &str) -> bool {
    audit.iter().any(|r| {
        let line = r.to_string();
        line.contains(needle) && r["decision"] == decision
    })
}

fn check_calls(s: &Session) {
    s.assert_ran_to_the_end();
    let p = &s.p;
    assert!(
        p.path("allowed-1").exists(),
        "the allowed command did not run\n{}",
        s.run.describe()
    );
    let r = s.result(ALLOWED);
    assert!(!r.contains("aileron"), "{r}");
    assert!(!p.path("denied-1").exists(), "the denied command ran");
    s.assert_refused(DENIED, "no-denied-files");
    assert!(!p.path("asked-1").exists(), "the default-ask command ran");
    s.assert_refused(ASKED, "");
}

fn check_policy_protected(s: &Session) {
    s.assert_ran_to_the_end();
    assert_eq!(s.p.read("aileron.yaml"), s.policy_before);
    s.assert_refused(WRITE_POLICY, "");
    s.assert_refused(EDIT_POLICY, "");
}

fn check_audit(s: &Session) {
    s.assert_ran_to_the_end();
    let (audit, text) = s.audit();
    assert!(
        decided(&audit, "touch allowed-1", "allow"),
        "no allow of `touch allowed-1` in the audit log:\n{text}"
    );
    assert!(
        decided(&audit, "touch denied-1", "deny") && text.contains("no-denied-files"),
        "no deny of `touch denied-1` by no-denied-files in the audit log:\n{text}"
    );
    assert!(
        !decided(&audit, "touch asked-1", "allow"),
        "`touch asked-1` allowed in the audit log:\n{text}"
    );
}

// (a) The plugin `aileron install opencode --project` writes.

#[test]
fn plugin_allowed_runs_denied_and_asked_do_not() {
    let Some(s) = plugin_session() else { return };
    check_calls(s);
}

#[test]
fn plugin_policy_and_plugin_file_cannot_be_changed() {
    let Some(s) = plugin_session() else { return };
    check_policy_protected(s);
    assert!(s.plugin_before.is_some(), "no plugin was installed");
    assert_eq!(s.plugin_after, s.plugin_before, "the plugin file changed");
    s.assert_refused(WRITE_PLUGIN, "");
    s.assert_refused(EDIT_PLUGIN, "");
}

#[test]
fn plugin_read_tool_never_sends_the_secret() {
    let Some(s) = plugin_session() else { return };
    s.assert_ran_to_the_end();
    s.assert_refused(READ_SECRET, "no-secrets");
    s.assert_secret_never_sent(READ_SECRET);
}

#[test]
fn plugin_grep_tool_never_sends_the_secret() {
    let Some(s) = plugin_session() else { return };
    s.assert_ran_to_the_end();
    s.assert_secret_never_sent(GREP_SECRET);
}

#[test]
fn plugin_bash_cat_never_sends_the_secret() {
    let Some(s) = plugin_session() else { return };
    s.assert_ran_to_the_end();
    s.assert_secret_never_sent(CAT_SECRET);
}

#[test]
fn plugin_audit_log_has_the_decisions() {
    let Some(s) = plugin_session() else { return };
    check_audit(s);
}

// (b) Uninstall leaves the user's own opencode files as they were.

#[test]
fn plugin_uninstall_leaves_the_user_config_byte_for_byte() {
    let Some(s) = plugin_session() else { return };
    s.assert_ran_to_the_end();
    let out = support::run_no_tty(&mut s.p.aileron(&["uninstall", "opencode", "--project"]));
    assert!(out.status.success(), "{}", support::text(&out.stderr));
    assert!(!s.p.path(PLUGIN).exists(), "the plugin is still there");
    assert_eq!(s.p.read("opencode.json"), USER_CONFIG);
    assert_eq!(s.p.read(".opencode/opencode.jsonc"), USER_CONFIG_C);
}

// (c) `aileron launch --enforce none -- opencode run ...`

#[test]
fn launch_none_allowed_runs_denied_and_asked_do_not() {
    let Some(s) = launch_none() else { return };
    check_calls(s);
}

#[test]
fn launch_none_policy_cannot_be_changed() {
    let Some(s) = launch_none() else { return };
    check_policy_protected(s);
}

#[test]
fn launch_none_read_tool_never_sends_the_secret() {
    let Some(s) = launch_none() else { return };
    s.assert_ran_to_the_end();
    s.assert_refused(READ_SECRET, "no-secrets");
    s.assert_secret_never_sent(READ_SECRET);
}

#[test]
fn launch_none_grep_tool_never_sends_the_secret() {
    let Some(s) = launch_none() else { return };
    s.assert_ran_to_the_end();
    s.assert_secret_never_sent(GREP_SECRET);
}

#[test]
fn launch_none_bash_cat_never_sends_the_secret() {
    let Some(s) = launch_none() else { return };
    s.assert_ran_to_the_end();
    s.assert_secret_never_sent(CAT_SECRET);
}

#[test]
fn launch_none_audit_log_has_the_decisions_and_no_user_file_changed() {
    let Some(s) = launch_none() else { return };
    check_audit(s);
    assert!(!s.p.path(PLUGIN).exists(), "launch wrote a project plugin");
    assert_eq!(s.p.read("opencode.json"), USER_CONFIG);
    assert_eq!(s.p.read(".opencode/opencode.jsonc"), USER_CONFIG_C);
}

// (d) `aileron launch --enforce all -- opencode run ...`

#[test]
fn launch_all_allowed_runs_denied_and_asked_do_not() {
    let Some(s) = launch_all() else { return };
    check_calls(s);
}

#[test]
fn launch_all_policy_cannot_be_changed() {
    let Some(s) = launch_all() else { return };
    check_policy_protected(s);
}

#[test]
fn launch_all_read_tool_never_sends_the_secret() {
    let Some(s) = launch_all() else { return };
    s.assert_ran_to_the_end();
    s.assert_refused(READ_SECRET, "no-secrets");
    s.assert_secret_never_sent(READ_SECRET);
}

#[test]
fn launch_all_grep_tool_never_sends_the_secret() {
    let Some(s) = launch_all() else { return };
    s.assert_ran_to_the_end();
    s.assert_secret_never_sent(GREP_SECRET);
}

#[test]
fn launch_all_bash_cat_never_sends_the_secret() {
    let Some(s) = launch_all() else { return };
    s.assert_ran_to_the_end();
    s.assert_secret_never_sent(CAT_SECRET);
}

#[test]
fn launch_all_audit_log_has_the_decisions_and_no_user_file_changed() {
    let Some(s) = launch_all() else { return };
    check_audit(s);
    assert!(!s.p.path(PLUGIN).exists(), "launch wrote a project plugin");
    assert_eq!(s.p.read("opencode.json"), USER_CONFIG);
    assert_eq!(s.p.read(".opencode/opencode.jsonc"), USER_CONFIG_C);
}

// (e) What Aileron adds per tool call: reported, never asserted.

const CALLS: usize = 8;

fn timed(mode: Mode, plugin: bool) -> Option<Run> {
    let _one = one_at_a_time();
    let p = Project::new("version: 1\ndefault: ask\nallow: [\"touch allowed-*\"]\n");
    if plugin {
        let out = support::run_no_tty(&mut p.aileron(&["install", "opencode", "--project"]));
        assert!(out.status.success(), "{}", support::text(&out.stderr));
    }
    let steps = (0..CALLS)
        .map(|i| bash(&format!("touch allowed-{i}")))
        .collect();
    let run = run_opencode(&p, mode, Script::new(steps), "Touch the files.")?;
    assert!(run.status.success(), "{}", run.describe());
    for i in 0..CALLS {
        assert!(
            p.path(&format!("allowed-{i}")).exists(),
            "{}",
            run.describe()
        );
    }
    Some(run)
}

#[test]
fn overhead_per_tool_call() {
    let Some(base) = timed(Mode::Direct, false) else {
        return;
    };
    let plugin = timed(Mode::Direct, true).unwrap();
    let none = timed(Mode::Launch("none"), false).unwrap();
    let all = timed(Mode::Launch("all"), false).unwrap();
    let step = |r: &Run| r.per_step().unwrap_or_default();
    let b = step(&base);
    eprintln!(
        "opencode, {CALLS} bash calls: without Aileron {:?} per call ({:?} in all)",
        b, base.elapsed
    );
    for (name, r) in [
        ("installed plugin", &plugin),
        ("launch --enforce none", &none),
        ("launch --enforce all", &all),
    ] {
        let s = step(r);
        eprintln!(
            "opencode, {name}: {:?} per call, {:+.1} ms over no Aileron ({:?} in all)",
            s,
            s.as_secs_f64() * 1000.0 - b.as_secs_f64() * 1000.0,
            r.elapsed
        );
    }
}
