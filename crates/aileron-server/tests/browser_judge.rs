//! The LLM judge in the dashboard, in headless Chromium against a real
//! server and a fake OpenAI-compatible provider on 127.0.0.1: a judge's
//! `ask` waits on the pending page with the judge's reason and model and a
//! person allows it; the action log shows judged decisions (source llm,
//! tokens, latency, cached); the rule editor offers the policy's judges and
//! round-trips a rule's judge fields, and saving a rule naming an unknown
//! judge shows the loader's error. The API key is never on the page.

#[path = "support/browser_support.rs"]
mod browser_support;
#[path = "support/fake_llm.rs"]
mod fake_llm;

use aileron_server::{Config, JudgeKeys, Server};
use browser_support::*;
use fake_llm::{Fake, KEY, Wire};
use serde_json::{Value, json};
use std::time::Duration;
use thirtyfour::prelude::*;

/// A stored rule, as the API returns it.
async fn stored_rule(http: &reqwest::Client, server: &Server, id: &str) -> Value {
    let res = http
        .get(format!("{}/api/rules/{id}", server.url))
        .bearer_auth(&server.admin_token)
        .send()
        .await
        .unwrap();
    res.json().await.unwrap()
}

async fn click(d: &WebDriver, testid: &str) {
    d.find(tid(testid)).await.unwrap().click().await.unwrap();
}

/// A form field's value (or a checkbox's state) in the rule editor.
async fn field(d: &WebDriver, name: &str) -> Value {
    d.execute(
        "const f = document.querySelector('[data-testid=rule-editor]').elements[arguments[0]]; \
         return f.type === 'checkbox' ? f.checked : f.value;",
        vec![Value::from(name)],
    )
    .await
    .unwrap()
    .json()
    .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_shows_and_edits_judges() {
    if !browser_available() {
        return;
    }
    let fake = Fake::start(Wire::OpenAi, Duration::ZERO, |seen| {
        if seen.user_text().contains("make clean") {
            json!({"decision": "ask", "reason": "cannot tell what clean removes"})
        } else {
            json!({"decision": "allow", "reason": "builds the project"})
        }
    });
    let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let project = dirs[2].path();
    std::fs::write(
        project.join("aileron.yaml"),
        format!(
            "version: 1\ndefault: allow\nsettings: {{timeout: 120}}\njudges:\n  fast: {{provider: openai, base_url: \"{}\", model: judge-model, api_key_env: JUDGE_KEY, timeout: 5}}\njudge:\n  - {{id: judge-make, command: \"make *\", prompt: \"Allow only building.\", cache_ttl: 600}}\n",
            fake.base_url
        ),
    )
    .unwrap();
    let mut cfg = Config::from_env();
    cfg.listen = "127.0.0.1:0".parse().unwrap();
    cfg.database_url = None;
    cfg.data_dir = dirs[0].path().join("aileron");
    cfg.home = dirs[1].path().to_owned();
    cfg.cwd = project.to_owned();
    cfg.policy = None;
    cfg.user_settings = false;
    cfg.write_server_file = false;
    cfg.judge_keys = Some(JudgeKeys::new([("JUDGE_KEY".into(), KEY.into())]));
    let server = Server::start(cfg).await.expect("the server starts");
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let shell = |line: &str| {
        json!({
            "type": "shell.exec", "summary": line, "facets": {"shell": {"command": line}},
            "session": {"id": "s-judge", "agent": "claude", "cwd": project.display().to_string()},
        })
    };
    let eval = |action: Value| {
        evaluate(
            http.clone(),
            server.url.clone(),
            server.agent_token.clone(),
            action,
        )
    };

    let browser = start_browser(1280, 860).await;
    let d = browser.driver().clone();
    d.goto(server.login_link()).await.expect("open the link");
    wait_shown(&d, "view-pending").await;

    // ---- a judge's ask: its reason and model on the card; a person allows
    let waiting = tokio::spawn(eval(shell("make clean")));
    let note = wait_text(&d, "pending-judge", "cannot tell what clean removes").await;
    assert!(note.contains("fast"), "{note}");
    assert!(note.contains("judge-model"), "{note}");
    let reason = wait_text(&d, "pending-list", "judge fast:").await;
    assert!(reason.contains("make clean"), "{reason}");
    click(&d, "pending-allow-once").await;
    let out = waiting.await.unwrap();
    assert_eq!(out["decision"], "allow", "{out}");
    assert_eq!(out["outcome"], "approved-once");
    wait_shown(&d, "pending-empty").await;

    // ---- the log: judged, then reused from the cache ---------------------
    for _ in 0..2 {
        let v = eval(shell("make build")).await;
        assert_eq!(v["source"], "llm", "{v}");
    }
    d.goto(format!("{}/#/actions", server.url)).await.unwrap();
    wait_shown(&d, "view-actions").await;
    let calls = wait_js(
        &d,
        "three judged rows",
        "const r = [...document.querySelectorAll('[data-testid=action-judge]')]; \
         return r.length === 3 ? r.map(e => [e.textContent, e.dataset.cached]) : null;",
        vec![],
    )
    .await;
    // Newest first: the cached one, the call, the ask a person answered.
    let cached = calls[0][0].as_str().unwrap();
    assert!(
        cached.starts_with("judge fast · judge-model · allow · cached · "),
        "{cached}"
    );
    assert_eq!(calls[0][1], "true");
    let call = calls[1][0].as_str().unwrap();
    assert!(
        call.starts_with("judge fast · judge-model · allow · 250 + 9 tokens · "),
        "{call}"
    );
    assert!(call.ends_with(" ms"), "{call}");
    assert!(
        calls[2][0]
            .as_str()
            .unwrap()
            .starts_with("judge fast · judge-model · ask · 250 + 9 tokens")
    );
    let rows = wait_text(&d, "actions-body", "llm").await;
    assert!(rows.contains("judge fast: builds the project"), "{rows}");

    // ---- the rule editor: the policy's judges, the judge fields ----------
    d.goto(format!("{}/#/rules", server.url)).await.unwrap();
    wait_shown(&d, "view-rules").await;
    click(&d, "rule-new").await;
    wait_shown(&d, "rule-editor").await;
    let offered = wait_js(
        &d,
        "the policy's judges offered",
        "const o = [...document.querySelectorAll('[data-testid=rule-judges] option')]; \
         return o.length ? o.map(x => [x.value, x.label]) : null;",
        vec![],
    )
    .await;
    assert_eq!(offered, json!([["fast", "fast (openai, judge-model)"]]));
    fill(&d, "rule-id", "judge-deploys").await;
    d.execute(
        "const s = document.querySelector('[data-testid=rule-decision]'); \
         s.value = 'judge'; s.dispatchEvent(new Event('change', {bubbles: true}));",
        vec![],
    )
    .await
    .unwrap();
    wait_shown(&d, "rule-judge").await;
    fill(&d, "rule-judge", "fast").await;
    fill(&d, "rule-prompt", "Only staging deploys.").await;
    fill(&d, "rule-cache-ttl", "900").await;
    click(&d, "rule-fail-closed").await;
    fill(
        &d,
        "rule-when",
        "type: shell.exec\nshell.command: {glob: \"deploy *\"}",
    )
    .await;
    click(&d, "rule-save").await;
    wait_text(&d, "rules-body", "judge-deploys").await;
    let stored = stored_rule(&http, &server, "judge-deploys").await;
    assert_eq!(stored["decision"], "judge", "{stored}");
    assert_eq!(stored["judge"], "fast", "{stored}");
    assert_eq!(stored["prompt"], "Only staging deploys.");
    assert_eq!(stored["cache_ttl"], 900);
    assert_eq!(stored["fail_closed"], false);
    // Opened again, the editor shows what was saved.
    let edit = wait_js(
        &d,
        "the rule's Edit button",
        "const r = document.querySelector('[data-rule-id=\"judge-deploys\"] [data-testid=rule-edit]'); \
         if (r) r.click(); return !!r;",
        vec![],
    )
    .await;
    assert_eq!(edit, true);
    wait_text(&d, "editor-title", "judge-deploys").await;
    assert_eq!(field(&d, "decision").await, "judge");
    assert_eq!(field(&d, "judge").await, "fast");
    assert_eq!(field(&d, "prompt").await, "Only staging deploys.");
    assert_eq!(field(&d, "cache_ttl").await, "900");
    assert_eq!(field(&d, "fail_closed").await, false);

    // A judge the policy does not define: the loader's error, nothing saved.
    fill(&d, "rule-judge", "fsat").await;
    click(&d, "rule-save").await;
    let error = wait_text(&d, "rule-validation", "fsat").await;
    assert!(
        error.contains("names judge `fsat`, which no `judges:` defines; defined: fast"),
        "{error}"
    );
    wait_text(&d, "rule-save-error", "Not saved").await;
    let stored = stored_rule(&http, &server, "judge-deploys").await;
    assert_eq!(stored["judge"], "fast", "unchanged: {stored}");

    // The key is nowhere on any page.
    for view in ["pending", "actions", "rules"] {
        d.goto(format!("{}/#/{view}", server.url)).await.unwrap();
        wait_shown(&d, &format!("view-{view}")).await;
        let html = d.source().await.unwrap();
        assert!(!html.contains(KEY), "the key is on the {view} page");
    }
    browser.quit().await;
    server.shutdown().await;
}
