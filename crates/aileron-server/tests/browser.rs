//! The dashboard in a real browser: headless Chromium, driven through
//! Debian's chromedriver, against a real server on 127.0.0.1:0 with its
//! own data directory.
//!
//! One scenario, in the order a person would meet the page: sign in
//! (a pasted bad token, then the printed link), answer approvals that real
//! clients are waiting on — API calls, and real `aileron-sh` commands of a
//! project with `ask_mode: ui` that found the server through its
//! `server.json` — read the action log, write a rule (a typo, its error,
//! the preview, saving, deleting).
//!
//! The shim is `target/<profile>/aileron-sh`, brought up to date with
//! `cargo build -p aileron-cli --bin aileron-sh` before the browser starts
//! (usually nothing to do after `cargo test --workspace`).
//!
//! Screenshots of the three views go to a temporary directory; with
//! `AILERON_UPDATE_SCREENSHOTS=1` they replace `docs/dashboard-*.png`.

#[path = "support/browser_support.rs"]
mod browser_support;

use aileron_server::{Config, Server};
use browser_support::*;
use serde_json::{Value, json};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use thirtyfour::prelude::*;

const WIDTH: u32 = 1280;
const HEIGHT: u32 = 860;

const POLICY: &str = r#"version: 1
default: allow
allow:
  - "git status"
  - "cargo test *"
ask:
  - id: push-needs-review
    command: "git push *"
    description: pushing changes a shared branch
    timeout: 120
deny:
  - id: no-force-push
    command: "git push --force *"
    description: force pushes rewrite history
"#;

/// The project the shim runs in: its asks wait in the dashboard.
const SHIM_POLICY: &str = r#"version: 1
settings:
  ask_mode: ui
  timeout: 30
ask: ["touch *"]
"#;

struct Fixture {
    server: Server,
    /// `$AILERON_DATA`: the tokens and `server.json`, as `aileron serve` leaves them.
    data: PathBuf,
    project: PathBuf,
    http: reqwest::Client,
    _dirs: Vec<tempfile::TempDir>,
}

impl Fixture {
    async fn start() -> Fixture {
        let data = tempfile::tempdir().expect("data dir");
        let home = tempfile::tempdir().expect("home dir");
        let project = tempfile::tempdir().expect("project dir");
        std::fs::write(project.path().join("aileron.yaml"), POLICY).expect("policy");
        let mut cfg = Config::from_env();
        cfg.listen = "127.0.0.1:0".parse().expect("addr");
        cfg.database_url = None;
        cfg.data_dir = data.path().join("aileron");
        cfg.home = home.path().to_owned();
        cfg.cwd = project.path().to_owned();
        cfg.policy = None;
        cfg.user_settings = false;
        // What the shim reads to find the server.
        cfg.write_server_file = true;
        cfg.default_timeout = Duration::from_secs(120);
        let server = Server::start(cfg).await.expect("the server starts");
        Fixture {
            server,
            data: data.path().join("aileron"),
            project: project.path().to_owned(),
            http: reqwest::Client::new(),
            _dirs: vec![data, home, project],
        }
    }

    fn shell(&self, session: &str, line: &str) -> Value {
        json!({
            "type": "shell.exec",
            "summary": line,
            "facets": {"shell": {"command": line}},
            "session": {"id": session, "agent": "claude", "cwd": self.project.display().to_string()},
        })
    }

    /// `POST /api/evaluate` as the agent's adapter would; an ask waits here.
    async fn evaluate(&self, action: Value) -> Value {
        evaluate(
            self.http.clone(),
            self.server.url.clone(),
            self.server.agent_token.clone(),
            action,
        )
        .await
    }

    async fn admin(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.server.url))
            .bearer_auth(&self.server.admin_token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.expect("request");
        let status = res.status();
        let v: Value = res.json().await.expect("JSON answer");
        assert!(status.is_success(), "{path}: {status} {v}");
        v
    }
}

/// `aileron-sh` beside this test's directory (`target/<profile>/deps/`),
/// built first by the cargo that runs the test (usually a no-op: `cargo
/// test --workspace` builds it for aileron-cli's own tests).
fn shim_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test runs from target/<profile>/deps");
    let target_dir = profile_dir.parent().expect("target/<profile>");
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("a profile directory");
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .current_dir(&workspace)
        .args([
            "build",
            "--quiet",
            "-p",
            "aileron-cli",
            "--bin",
            "aileron-sh",
        ])
        .arg("--target-dir")
        .arg(target_dir);
    match profile {
        "debug" => {}
        "release" => {
            cargo.arg("--release");
        }
        other => {
            cargo.args(["--profile", other]);
        }
    }
    let bin = profile_dir.join("aileron-sh");
    let out = cargo.stdin(Stdio::null()).stdout(Stdio::null()).output();
    match out {
        Ok(o) if o.status.success() && bin.exists() => bin,
        Ok(o) => panic!(
            "could not build {} ({}): run `cargo build -p aileron-cli` (or `cargo test --workspace`) first\n{}",
            bin.display(),
            o.status,
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!(
            "could not run {} to build aileron-sh ({e}): run `cargo build -p aileron-cli` first",
            env!("CARGO")
        ),
    }
}

/// A project of its own for the shim (`SHIM_POLICY`), and its `$HOME`.
struct ShimProject {
    bin: PathBuf,
    dir: PathBuf,
    home: PathBuf,
    root: PathBuf,
    _tmp: tempfile::TempDir,
}

impl ShimProject {
    fn new(bin: PathBuf) -> ShimProject {
        let tmp = tempfile::tempdir().expect("shim dir");
        // Canonical, so the command line is the path the shim reports.
        let root = std::fs::canonicalize(tmp.path()).expect("canonical temp dir");
        let dir = root.join("proj");
        let home = root.join("home");
        for d in [&dir, &home] {
            std::fs::create_dir_all(d).expect("create dir");
        }
        std::fs::write(dir.join("aileron.yaml"), SHIM_POLICY).expect("shim policy");
        ShimProject {
            bin,
            dir,
            home,
            root,
            _tmp: tmp,
        }
    }

    /// `aileron-sh -c LINE` in the project, as an agent would run it: a
    /// clean environment that names only the server's data directory, stdin
    /// closed, and no controlling terminal (a new session), so the only
    /// place its ask can go is the server.
    fn spawn(&self, name: &str, line: &str, data: &Path) -> ShimRun {
        let stdout = self.root.join(format!("{name}.stdout"));
        let stderr = self.root.join(format!("{name}.stderr"));
        let mut cmd = Command::new(&self.bin);
        cmd.args(["-c", line])
            .current_dir(&self.dir)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/bin:/bin")
            .env("LC_ALL", "C")
            .env("AILERON_DATA", data)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).expect("stdout file"))
            .stderr(std::fs::File::create(&stderr).expect("stderr file"));
        // SAFETY: setsid(2) is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{} starts: {e}", self.bin.display()));
        ShimRun {
            child,
            exited: None,
            stdout,
            stderr,
        }
    }
}

/// A running shim command. Dropped before it exits (a failed step), its
/// session's process group is killed, so nothing outlives the test.
struct ShimRun {
    child: Child,
    exited: Option<ExitStatus>,
    stdout: PathBuf,
    stderr: PathBuf,
}

struct ShimOutput {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl ShimRun {
    fn running(&mut self) -> bool {
        if self.exited.is_none() {
            self.exited = self.child.try_wait().expect("wait for the shim");
        }
        self.exited.is_none()
    }

    /// Waits up to [`STEP`] for the command to end.
    async fn finish(&mut self) -> ShimOutput {
        let deadline = Instant::now() + STEP;
        while self.running() {
            assert!(
                Instant::now() < deadline,
                "the shim command did not end within {STEP:?} of the answer"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        ShimOutput {
            status: self.exited.expect("exited"),
            stdout: read(&self.stdout),
            stderr: read(&self.stderr),
        }
    }
}

impl Drop for ShimRun {
    fn drop(&mut self) {
        if self.exited.is_some() || !matches!(self.child.try_wait(), Ok(None)) {
            return; // reaped: its id may be reused
        }
        // It leads its own session and process group (setsid in `spawn`).
        // SAFETY: kill(2) with a negative pid signals that process group only.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// A screenshot for the docs: toasts gone, no focus ring, from the top.
async fn shoot(d: &WebDriver, path: &Path) {
    d.execute(
        "document.querySelectorAll('.toast').forEach(t => t.remove()); \
         if (document.activeElement) document.activeElement.blur();",
        vec![],
    )
    .await
    .expect("tidy the page");
    screenshot_page(d, WIDTH, 720, path).await;
}

fn screenshot_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("dashboard-{name}.png"))
}

/// The computed text colour of the first element matching `css`.
async fn color_of(driver: &WebDriver, css: &str) -> String {
    let v = wait_js(
        driver,
        &format!("an element {css}"),
        "const e = document.querySelector(arguments[0]); return e ? getComputedStyle(e).color : null;",
        vec![Value::from(css)],
    )
    .await;
    v.as_str().unwrap_or_default().to_owned()
}

/// The `data-testid="pending-item"` card whose summary is `summary`, as a
/// CSS-free handle: its index among the cards.
async fn pending_card(driver: &WebDriver, summary: &str) -> WebElement {
    wait_js(
        driver,
        &format!("a pending card for {summary:?}"),
        "return [...document.querySelectorAll('[data-testid=pending-item]')]
           .some(c => c.querySelector('[data-testid=pending-summary]').textContent === arguments[0]);",
        vec![Value::from(summary)],
    )
    .await;
    // The list is redrawn live (SSE): a card found a moment ago may be
    // gone by the time it is read (a stale element). Look again.
    for _ in 0..50 {
        let Ok(cards) = driver.find_all(tid("pending-item")).await else {
            continue;
        };
        for card in cards {
            let Ok(found) = card.find(tid("pending-summary")).await else {
                continue;
            };
            if found.text().await.is_ok_and(|s| s == summary) {
                return card;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no pending card for {summary:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_end_to_end() {
    if !browser_available() {
        return;
    }
    let started = Instant::now();
    let shim = ShimProject::new(shim_binary());
    let built = started.elapsed();
    let fx = Fixture::start().await;
    let shots = tempfile::tempdir().expect("screenshot dir");

    // Some history for the log and the preview, and two stored rules.
    for line in ["git status", "cargo test --workspace", "rm -rf /"] {
        fx.evaluate(fx.shell("s-setup", line)).await;
    }
    fx.evaluate(json!({
        "type": "http.request",
        "summary": "GET https://docs.rs/serde",
        "facets": {"http": {"method": "GET", "url": "https://docs.rs/serde"}},
        "session": {"id": "s-setup", "agent": "claude", "cwd": fx.project.display().to_string()},
    }))
    .await;
    fx.admin(
        reqwest::Method::POST,
        "/api/rules",
        Some(json!({
            "id": "web-writes", "label": "requests that can change something",
            "decision": "ask", "priority": 100, "approver": "dashboard", "timeout": 300,
            "when": {"type": "http.request", "http.method": {"in": ["POST", "PUT", "PATCH", "DELETE"]}},
        })),
    )
    .await;
    fx.admin(
        reqwest::Method::POST,
        "/api/rules",
        Some(json!({
            "id": "mcp-judge", "decision": "judge", "enabled": false, "model": "gpt-4o-mini",
            "prompt": "Is this tool call safe?", "scope": {"plugin": "github"},
            "when": {"type": "mcp.call"},
        })),
    )
    .await;
    // Imported from an aileron.yaml: a command glob, no `when`.
    fx.admin(
        reqwest::Method::POST,
        "/api/rules",
        Some(json!({"id": "no-force-with-lease", "decision": "deny",
                    "command": "git push --force-with-lease *", "label": "no lease pushes"})),
    )
    .await;

    let browser = start_browser(WIDTH, HEIGHT).await;
    let d = browser.driver().clone();

    // ---- sign in: a bad token is refused, the printed link works --------
    d.goto(format!("{}/", fx.server.url)).await.expect("open");
    wait_shown(&d, "login-form").await;
    fill(&d, "login-token", "ail_not-a-real-token").await;
    d.find(tid("login-submit"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let msg = wait_text(&d, "login-message", "401").await;
    assert!(msg.contains("did not accept the token"), "{msg}");
    assert!(
        d.find(tid("login-form"))
            .await
            .unwrap()
            .is_displayed()
            .await
            .unwrap()
    );

    let link = fx.server.login_link();
    assert!(link.contains("/#token="), "{link}");
    d.goto(&link).await.expect("open the link");
    wait_shown(&d, "view-pending").await;
    let url = d.current_url().await.unwrap().to_string();
    assert!(
        !url.contains("token"),
        "the token stays in the address bar: {url}"
    );
    assert!(url.ends_with("#/pending"), "{url}");
    let stored = d
        .execute("return sessionStorage.getItem('aileron.token')", vec![])
        .await
        .unwrap();
    assert_eq!(stored.json().as_str(), Some(fx.server.admin_token.as_str()));
    wait_js(
        &d,
        "the live stream",
        "return document.querySelector('[data-testid=live-status]').dataset.state === 'live'",
        vec![],
    )
    .await;
    wait_shown(&d, "pending-empty").await;

    // ---- approvals: two real clients wait; the page answers them --------
    let push = "git push origin feature/login";
    let push_main = "git push origin main";
    let waiting_push = tokio::spawn(evaluate(
        fx.http.clone(),
        fx.server.url.clone(),
        fx.server.agent_token.clone(),
        fx.shell("s-1", push),
    ));
    let waiting_main = tokio::spawn(evaluate(
        fx.http.clone(),
        fx.server.url.clone(),
        fx.server.agent_token.clone(),
        fx.shell("s-2", push_main),
    ));
    let card = pending_card(&d, push).await;
    pending_card(&d, push_main).await;
    let count = wait_text(&d, "pending-count", "2").await;
    assert_eq!(count.trim(), "2");
    let card_text = card.text().await.unwrap();
    assert!(card_text.contains("push-needs-review"), "{card_text}");
    assert!(
        card_text.contains("pushing changes a shared branch"),
        "{card_text}"
    );
    assert!(!waiting_push.is_finished(), "the client waits for a person");
    shoot(&d, &screenshot_path(shots.path(), "pending")).await;

    // Allow once: the waiting call gets allow.
    card.find(tid("pending-allow-once"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let verdict = tokio::time::timeout(STEP, waiting_push)
        .await
        .expect("the waiting call returns")
        .expect("task");
    assert_eq!(verdict["decision"], "allow", "{verdict}");
    assert_eq!(verdict["outcome"], "approved-once", "{verdict}");
    assert_eq!(verdict["source"], "human", "{verdict}");

    // Reject with feedback: the agent gets the words.
    let card = pending_card(&d, push_main).await;
    card.find(tid("pending-feedback"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let text = card.find(tid("pending-feedback-text")).await.unwrap();
    text.send_keys("open a pull request instead").await.unwrap();
    card.find(tid("pending-feedback-send"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let verdict = tokio::time::timeout(STEP, waiting_main)
        .await
        .expect("the waiting call returns")
        .expect("task");
    assert_eq!(verdict["decision"], "deny", "{verdict}");
    assert_eq!(verdict["outcome"], "corrected", "{verdict}");
    assert_eq!(
        verdict["feedback"], "open a pull request instead",
        "{verdict}"
    );
    wait_shown(&d, "pending-empty").await;
    wait_js(
        &d,
        "the pending count to clear",
        "return document.querySelector('[data-testid=pending-count]').hidden",
        vec![],
    )
    .await;

    // Allow always: the session's other request for the same command is
    // answered too, and its card goes away by itself (the stream says so).
    let push_dev = "git push origin dev";
    let waiting_dev: Vec<_> = (0..2)
        .map(|_| {
            tokio::spawn(evaluate(
                fx.http.clone(),
                fx.server.url.clone(),
                fx.server.agent_token.clone(),
                fx.shell("s-3", push_dev),
            ))
        })
        .collect();
    wait_js(
        &d,
        "two cards for the same command",
        "return document.querySelectorAll('[data-testid=pending-item]').length === 2",
        vec![],
    )
    .await;
    pending_card(&d, push_dev)
        .await
        .find(tid("pending-allow-always"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let mut outcomes = Vec::new();
    for w in waiting_dev {
        let v = tokio::time::timeout(STEP, w)
            .await
            .expect("the waiting call returns")
            .expect("task");
        assert_eq!(v["decision"], "allow", "{v}");
        outcomes.push(v["outcome"].as_str().unwrap_or_default().to_owned());
    }
    outcomes.sort();
    assert_eq!(outcomes, ["approved-always-session", "approved-once"]);
    wait_shown(&d, "pending-empty").await;

    // An adapter's own ask (POST /api/pending-actions), rejected.
    let http = fx.http.clone();
    let url = format!("{}/api/pending-actions", fx.server.url);
    let token = fx.server.agent_token.clone();
    let body = json!({
        "action": {
            "type": "mcp.call", "summary": "github.delete_repo aileron-dev/aileron",
            "facets": {"mcp": {"server": "github", "tool": "delete_repo"}},
            "session": {"id": "s-4", "agent": "codex"},
        },
        "rule": "mcp-writes", "reason": "MCP tools that change things", "timeout_secs": 60,
    });
    let waiting_mcp = tokio::spawn(async move {
        let res = http
            .post(url)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .expect("enqueue");
        assert!(res.status().is_success(), "{}", res.status());
        res.json::<Value>().await.expect("JSON answer")
    });
    pending_card(&d, "github.delete_repo aileron-dev/aileron")
        .await
        .find(tid("pending-reject"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let answer = tokio::time::timeout(STEP, waiting_mcp)
        .await
        .expect("the waiting call returns")
        .expect("task");
    assert_eq!(answer["answer"], "reject", "{answer}");
    wait_shown(&d, "pending-empty").await;

    // A real shim command waits in the queue: allowed once, it runs.
    let server_file: Value = serde_json::from_str(
        &std::fs::read_to_string(fx.data.join("server.json")).expect("server.json"),
    )
    .expect("server.json is JSON");
    assert_eq!(server_file["url"], fx.server.url.as_str(), "{server_file}");
    let made = shim.dir.join("made-by-shim");
    let touch_made = format!("touch {}", made.display());
    let mut waiting = shim.spawn("allowed", &touch_made, &fx.data);
    let card = pending_card(&d, &touch_made).await;
    assert!(waiting.running(), "the shim command waits for a person");
    assert!(!made.exists(), "the command ran before the answer");
    card.find(tid("pending-allow-once"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let out = waiting.finish().await;
    assert_eq!(out.status.code(), Some(0), "{}", out.stderr);
    assert!(made.exists(), "the allowed command ran");
    assert_eq!(out.stdout, "");
    wait_shown(&d, "pending-empty").await;

    // Rejected with feedback: the words reach the agent, nothing runs.
    let refused = shim.dir.join("refused-by-shim");
    let touch_refused = format!("touch {}", refused.display());
    let mut waiting = shim.spawn("refused", &touch_refused, &fx.data);
    let card = pending_card(&d, &touch_refused).await;
    assert!(waiting.running(), "the shim command waits for a person");
    card.find(tid("pending-feedback"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    card.find(tid("pending-feedback-text"))
        .await
        .unwrap()
        .send_keys("use the Makefile target")
        .await
        .unwrap();
    card.find(tid("pending-feedback-send"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let out = waiting.finish().await;
    assert_eq!(out.status.code(), Some(126), "{}", out.stderr);
    assert_eq!(out.stderr, "aileron: rejected: use the Makefile target\n");
    assert!(!refused.exists(), "the rejected command did not run");
    wait_shown(&d, "pending-empty").await;

    // ---- the action log, with decision colours ---------------------------
    d.find(tid("tab-actions"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_shown(&d, "view-actions").await;
    wait_text(&d, "actions-body", push).await;
    let rows = wait_js(
        &d,
        "rows with decisions",
        "const rows = [...document.querySelectorAll('[data-testid=action-row]')];
         return rows.length >= 8 ? rows.map(r => [r.querySelector('.col-summary').innerText,
           r.querySelector('[data-testid=action-decision]').dataset.decision,
           r.querySelector('.outcome') ? r.querySelector('.outcome').innerText.replace(/^→ /, '') : '']) : null;",
        vec![],
    )
    .await;
    let rows: Vec<(String, String, String)> = serde_json::from_value(rows).expect("rows");
    let find = |s: &str| {
        rows.iter()
            .find(|r| r.0 == s)
            .unwrap_or_else(|| panic!("no row {s:?} in {rows:?}"))
    };
    assert_eq!(find("git status").1, "allow");
    assert_eq!(find("rm -rf /").1, "deny");
    assert_eq!(find(push).1, "ask");
    assert_eq!(find(push).2, "approved-once");
    assert_eq!(find(push_main).2, "corrected");
    // The shim's decisions, recorded by the shim itself.
    assert_eq!(find(&touch_made).1, "ask");
    assert_eq!(find(&touch_made).2, "approved-once");
    assert_eq!(find(&touch_refused).2, "corrected");
    // Newest first.
    assert_eq!(rows[0].0, touch_refused, "{rows:?}");
    assert_eq!(rows[1].0, touch_made, "{rows:?}");
    assert_eq!(rows[2].0, push_dev, "{rows:?}");
    let outcome_color = |summary: String| {
        let d = d.clone();
        async move {
            let v = wait_js(
                &d,
                &format!("the outcome of {summary:?}"),
                "const row = [...document.querySelectorAll('[data-testid=action-row]')]
                   .find(r => r.querySelector('.col-summary').innerText === arguments[0]);
                 const o = row && row.querySelector('[data-testid=action-outcome]');
                 return o ? getComputedStyle(o).color : null;",
                vec![Value::from(summary)],
            )
            .await;
            v.as_str().unwrap_or_default().to_owned()
        }
    };
    assert_eq!(outcome_color(touch_made.clone()).await, "rgb(26, 127, 55)");
    assert_eq!(
        outcome_color(touch_refused.clone()).await,
        "rgb(198, 40, 40)"
    );
    let log = fx
        .admin(reqwest::Method::GET, "/api/actions?limit=5", None)
        .await;
    let shim_rows: Vec<&Value> = log["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .filter(|a| a["action"]["summary"] == touch_made.as_str())
        .collect();
    assert_eq!(shim_rows.len(), 1, "{log}");
    assert_eq!(shim_rows[0]["adapter"], "shim", "{log}");
    assert_eq!(shim_rows[0]["action"]["type"], "shell.exec", "{log}");
    assert_eq!(
        color_of(&d, "[data-testid=action-row][data-decision=allow] .badge").await,
        "rgb(26, 127, 55)"
    );
    assert_eq!(
        color_of(&d, "[data-testid=action-row][data-decision=deny] .badge").await,
        "rgb(198, 40, 40)"
    );
    assert_eq!(
        color_of(&d, "[data-testid=action-row][data-decision=ask] .badge").await,
        "rgb(154, 103, 0)"
    );
    shoot(&d, &screenshot_path(shots.path(), "actions")).await;

    // A filter: only denials.
    d.execute(
        "document.querySelector('[data-testid=filter-decision]').value = 'deny';",
        vec![],
    )
    .await
    .unwrap();
    d.find(tid("filter-apply"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_js(
        &d,
        "only deny rows",
        "const rows = [...document.querySelectorAll('[data-testid=action-row]')];
         return rows.length > 0 && rows.every(r => r.dataset.decision === 'deny');",
        vec![],
    )
    .await;
    d.find(tid("filter-reset"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();

    // Paging, within one session: 55 decisions recorded by an adapter are
    // 50 on the first page and 5 on the next.
    for i in 0..55 {
        let rec = json!({
            "time": format!("2026-01-01T00:00:{:02}Z", i % 60),
            "session": "s-bulk", "adapter": "hook:test",
            "action": {"type": "tool.call", "summary": format!("tool call {i}")},
            "decision": if i % 2 == 0 { "allow" } else { "deny" },
            "source": "static", "reason": "bulk",
        });
        let res = fx
            .http
            .post(format!("{}/api/actions", fx.server.url))
            .bearer_auth(&fx.server.agent_token)
            .json(&rec)
            .send()
            .await
            .expect("record");
        assert!(res.status().is_success(), "{}", res.status());
    }
    fill(&d, "filter-session", "s-bulk").await;
    d.find(tid("filter-apply"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let page = |n: usize, first: &'static str| {
        let d = d.clone();
        async move {
            wait_js(
                &d,
                &format!("page with {n} rows starting at {first:?}"),
                "const rows = [...document.querySelectorAll('[data-testid=action-row]')];
                 return rows.length === arguments[0]
                   && rows[0].querySelector('.col-summary').innerText === arguments[1];",
                vec![Value::from(n), Value::from(first)],
            )
            .await;
        }
    };
    page(50, "tool call 54").await;
    wait_text(&d, "page-info", "1–50").await;
    d.find(tid("page-next"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    page(5, "tool call 4").await;
    wait_text(&d, "page-info", "51–55").await;
    let next = d.find(tid("page-next")).await.unwrap();
    assert!(!next.is_enabled().await.unwrap(), "no page after the last");
    d.find(tid("page-prev"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    page(50, "tool call 54").await;
    d.find(tid("filter-reset"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();

    // ---- rules: a typo, its error, the preview, save, delete -------------
    d.find(tid("tab-rules"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_shown(&d, "view-rules").await;
    wait_text(&d, "rules-body", "web-writes").await;
    wait_text(&d, "rules-body", "mcp-judge").await;

    // Edit shows a stored rule's fields, its matcher as YAML.
    d.find(By::Css(
        "[data-testid=rule-row][data-rule-id=\"web-writes\"]",
    ))
    .await
    .unwrap()
    .find(tid("rule-edit"))
    .await
    .unwrap()
    .click()
    .await
    .unwrap();
    wait_shown(&d, "rule-editor").await;
    let when = d
        .find(tid("rule-when"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap()
        .unwrap_or_default();
    assert_eq!(
        when,
        "type: http.request\nhttp.method: {in: [POST, PUT, PATCH, DELETE]}\n"
    );
    let decision = d.find(tid("rule-decision")).await.unwrap();
    assert_eq!(
        decision.prop("value").await.unwrap().as_deref(),
        Some("ask")
    );
    let timeout = d.find(tid("rule-timeout")).await.unwrap();
    assert!(
        timeout.is_displayed().await.unwrap(),
        "ask fields show for ask"
    );
    assert_eq!(timeout.prop("value").await.unwrap().as_deref(), Some("300"));
    wait_text(&d, "rule-preview-count", "Would have matched 0 of").await;
    let label = d.find(tid("rule-label")).await.unwrap();
    assert_eq!(
        label.prop("value").await.unwrap().as_deref(),
        Some("requests that can change something")
    );
    d.find(tid("rule-cancel"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();

    // Editing a command rule keeps its `command` (shown, not editable).
    d.find(By::Css(
        "[data-testid=rule-row][data-rule-id=\"no-force-with-lease\"]",
    ))
    .await
    .unwrap()
    .find(tid("rule-edit"))
    .await
    .unwrap()
    .click()
    .await
    .unwrap();
    wait_text(
        &d,
        "rule-extra",
        "command: \"git push --force-with-lease *\"",
    )
    .await;
    fill(&d, "rule-description", "rewrites what others pushed").await;
    wait_text(&d, "rule-validation", "The rule is valid").await;
    d.find(tid("rule-save"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_js(
        &d,
        "the saved notice",
        "return [...document.querySelectorAll('[data-testid=toast]')]
           .some(t => t.textContent === 'Saved rule no-force-with-lease');",
        vec![],
    )
    .await;
    let stored = fx
        .admin(reqwest::Method::GET, "/api/rules/no-force-with-lease", None)
        .await;
    assert_eq!(
        stored["command"], "git push --force-with-lease *",
        "{stored}"
    );
    assert_eq!(stored["label"], "no lease pushes", "{stored}");
    assert_eq!(
        stored["description"], "rewrites what others pushed",
        "{stored}"
    );
    assert!(stored.get("when").is_none(), "{stored}");

    d.find(tid("rule-new"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_shown(&d, "rule-editor").await;
    fill(&d, "rule-id", "no-root-rm").await;
    fill(&d, "rule-description", "never delete from the root").await;
    fill(
        &d,
        "rule-when",
        "type: shell.exec\nshell.command: {globb: \"rm -rf /*\"}",
    )
    .await;
    let err = wait_text(&d, "rule-validation", "globb").await;
    assert!(
        err.contains("globb") && err.contains("glob"),
        "the loader's message names the typo and the fix: {err}"
    );
    let headline = err.lines().next().unwrap_or_default();
    let parts: Vec<&str> = headline.splitn(4, ':').collect();
    assert!(
        parts.len() == 4
            && parts[1].parse::<u32>().is_ok()
            && parts[2].parse::<u32>().is_ok()
            && parts[3].starts_with(" error: "),
        "FILE:LINE:COL: error: ... expected, got {headline:?}"
    );
    let state = d
        .find(tid("rule-validation"))
        .await
        .unwrap()
        .attr("data-state")
        .await
        .unwrap();
    assert_eq!(state.as_deref(), Some("error"));

    // A YAML mistake is caught in the page, with its line and column.
    fill(
        &d,
        "rule-when",
        "type: shell.exec\nshell.command: {glob: \"rm *\"",
    )
    .await;
    let err = wait_text(&d, "rule-validation", "never closed").await;
    assert!(err.starts_with("when:2:16: error:"), "{err}");

    // Fixed: valid, and the preview counts what it would have matched.
    fill(
        &d,
        "rule-when",
        "type: shell.exec\nshell.command: {glob: \"rm -rf /*\"}",
    )
    .await;
    wait_text(&d, "rule-validation", "The rule is valid").await;
    let count = wait_text(&d, "rule-preview-count", "Would have matched").await;
    assert!(
        count.starts_with("Would have matched 1 of the last "),
        "{count}"
    );
    wait_text(&d, "rule-preview-samples", "rm -rf /").await;
    shoot(&d, &screenshot_path(shots.path(), "rules")).await;

    // Every control has a label, every button is a <button> with a name.
    let unlabelled = d
        .execute(
            "return [...document.querySelectorAll('input, select, textarea')]
               .filter(c => c.labels.length === 0 && !c.getAttribute('aria-label'))
               .map(c => c.outerHTML)
               .concat([...document.querySelectorAll('button')]
                 .filter(b => !b.textContent.trim() && !b.getAttribute('aria-label'))
                 .map(b => b.outerHTML))
               .concat([...document.querySelectorAll('[onclick], [role=button]')]
                 .map(e => e.outerHTML));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(unlabelled.json(), &json!([]), "controls without a name");

    d.find(tid("rule-save"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_js(
        &d,
        "the saved rule in the list",
        "return !!document.querySelector('[data-testid=rule-row][data-rule-id=\"no-root-rm\"]')",
        vec![],
    )
    .await;
    assert!(
        !d.find(tid("rule-editor"))
            .await
            .unwrap()
            .is_displayed()
            .await
            .unwrap()
    );
    let stored = fx
        .admin(reqwest::Method::GET, "/api/rules/no-root-rm", None)
        .await;
    assert_eq!(stored["decision"], "deny", "{stored}");
    assert_eq!(
        stored["description"], "never delete from the root",
        "{stored}"
    );
    assert!(
        stored.get("label").is_none(),
        "no label was given: {stored}"
    );
    assert_eq!(
        stored["when"],
        json!({"type": "shell.exec", "shell.command": {"glob": "rm -rf /*"}})
    );

    // Block YAML with a list and a comment reads as it would in aileron.yaml.
    d.find(tid("rule-new"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    fill(
        &d,
        "rule-when",
        "# pushes, and any web request\nany:\n  - shell.command: {glob: \"git push *\"}\n  - type: http.request\n",
    )
    .await;
    wait_text(&d, "rule-preview-count", "Would have matched 5 of").await;
    d.find(tid("rule-cancel"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();

    // A rule the policy keeps from deciding is valid and saves, with a
    // warning that names the rule that decides instead and the fix.
    d.find(tid("rule-new"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_shown(&d, "rule-editor").await;
    fill(&d, "rule-id", "push-feature").await;
    d.execute(
        "const s = document.querySelector('[data-testid=rule-decision]'); \
         s.value = 'allow'; s.dispatchEvent(new Event('change', {bubbles: true}));",
        vec![],
    )
    .await
    .unwrap();
    fill(
        &d,
        "rule-when",
        "type: shell.exec\nshell.command: {glob: \"git push origin feature\"}",
    )
    .await;
    wait_text(&d, "rule-validation", "The rule is valid").await;
    let warning = wait_text(&d, "rule-warnings", "never takes effect").await;
    assert!(
        warning.contains("`push-needs-review` (ask rule at")
            && warning.contains("`priority: 100`")
            && warning.contains("[allow-overridden]"),
        "{warning}"
    );
    d.find(tid("rule-save"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let saved = wait_text(
        &d,
        "rules-saved-warnings",
        "Saved rule push-feature, with a warning",
    )
    .await;
    assert!(saved.contains("push-needs-review"), "{saved}");
    wait_js(
        &d,
        "the saved rule in the list",
        "return !!document.querySelector('[data-testid=rule-row][data-rule-id=\"push-feature\"]')",
        vec![],
    )
    .await;

    // Delete, confirmed in the browser's dialog.
    let row = d
        .find(By::Css(
            "[data-testid=rule-row][data-rule-id=\"mcp-judge\"]",
        ))
        .await
        .unwrap();
    row.find(tid("rule-delete"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    accept_confirm(&d).await;
    wait_js(
        &d,
        "the deleted rule to go",
        "return !document.querySelector('[data-testid=rule-row][data-rule-id=\"mcp-judge\"]')",
        vec![],
    )
    .await;

    // ---- sign out, and a 401 later on: back to the login form ------------
    d.find(tid("logout")).await.unwrap().click().await.unwrap();
    wait_shown(&d, "login-form").await;
    let kept = d
        .execute("return sessionStorage.getItem('aileron.token')", vec![])
        .await
        .unwrap();
    assert_eq!(kept.json(), &Value::Null, "signing out forgets the token");

    // An agent's token (pasted as a whole link) may not see approvals.
    let agent_link = format!("{}/#token={}", fx.server.url, fx.server.agent_token);
    fill(&d, "login-token", &agent_link).await;
    d.find(tid("login-submit"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let banner = wait_text(&d, "banner", "approver token").await;
    assert!(banner.contains("not available with this token"), "{banner}");
    d.find(tid("logout")).await.unwrap().click().await.unwrap();
    wait_shown(&d, "login-form").await;
    assert!(
        !d.find(tid("banner"))
            .await
            .unwrap()
            .is_displayed()
            .await
            .unwrap()
    );
    d.execute(
        "sessionStorage.setItem('aileron.token', 'ail_revoked'); location.reload();",
        vec![],
    )
    .await
    .unwrap();
    let msg = wait_text(&d, "login-message", "401").await;
    assert!(msg.contains("paste"), "{msg}");

    let logs: Vec<Value> = d
        .execute(
            "return performance.getEntriesByType('resource').filter(e => !e.name.startsWith(location.origin)).map(e => e.name)",
            vec![],
        )
        .await
        .map(|r| r.json().as_array().cloned().unwrap_or_default())
        .unwrap_or_default();
    assert!(
        logs.is_empty(),
        "the page loads nothing from elsewhere: {logs:?}"
    );

    browser.quit().await;

    if std::env::var_os("AILERON_UPDATE_SCREENSHOTS").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        for name in ["pending", "actions", "rules"] {
            let from = screenshot_path(shots.path(), name);
            std::fs::copy(&from, docs.join(format!("dashboard-{name}.png")))
                .expect("copy the screenshot");
        }
    }
    fx.server.shutdown().await;
    eprintln!(
        "dashboard end to end: {:?} (building aileron-sh: {built:?})",
        started.elapsed()
    );
}
