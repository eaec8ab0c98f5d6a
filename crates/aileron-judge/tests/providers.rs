//! The judge against fake OpenAI-compatible and Anthropic servers on
//! 127.0.0.1 that answer with the real response shapes: verdicts, their
//! usage, the bytes sent, and the cache. (Every way a call can fail is in
//! `failures.rs`.)

mod support;

use aileron_judge::{JudgeDecision, Provider};
use serde_json::{Value, json};
use std::time::Duration;
use support::*;

#[test]
fn openai_verdicts_with_their_usage() {
    for (decision, expect) in [
        ("allow", JudgeDecision::Allow),
        ("deny", JudgeDecision::Deny),
        ("ask", JudgeDecision::Ask),
    ] {
        let fake = Fake::start(vec![Reply::json(openai(&format!(
            r#"{{"decision": "{decision}", "reason": "because"}}"#
        )))]);
        let a = action("rm -rf target");
        let r = judge(Provider::OpenAi, &fake.url, Duration::from_secs(5))
            .decide(&input(&a))
            .unwrap();
        assert_eq!(r.verdict.decision, expect);
        assert_eq!(r.verdict.reason, "because");
        assert_eq!(r.usage.prompt_tokens, Some(321));
        assert_eq!(r.usage.completion_tokens, Some(17));
        assert!(!r.cached);
        let (head, body) = &fake.requests()[0];
        assert!(head.starts_with("POST /v1/chat/completions "), "{head}");
        assert!(
            head.to_ascii_lowercase().contains(&format!(
                "authorization: bearer {}",
                KEY.to_ascii_lowercase()
            )),
            "{head}"
        );
        let sent: Value = serde_json::from_slice(body).unwrap();
        assert_eq!(sent["model"], "judge-model");
        assert_eq!(sent["response_format"]["type"], "json_schema");
        assert_eq!(sent["messages"][0]["role"], "system");
    }
}

#[test]
fn anthropic_verdicts_through_one_forced_tool_call() {
    let fake = Fake::start(vec![Reply::json(anthropic(
        json!({"decision": "deny", "reason": "deletes sources"}),
    ))]);
    let a = action("rm -rf src");
    let r = judge(Provider::Anthropic, &fake.url, Duration::from_secs(5))
        .decide(&input(&a))
        .unwrap();
    assert_eq!(r.verdict.decision, JudgeDecision::Deny);
    assert_eq!(r.usage.prompt_tokens, Some(400));
    assert_eq!(r.usage.completion_tokens, Some(30));
    let (head, body) = &fake.requests()[0];
    assert!(head.starts_with("POST /v1/messages "), "{head}");
    let lower = head.to_ascii_lowercase();
    assert!(lower.contains(&format!("x-api-key: {}", KEY.to_ascii_lowercase())));
    assert!(lower.contains("anthropic-version: 2023-06-01"));
    let sent: Value = serde_json::from_slice(body).unwrap();
    assert_eq!(
        sent["tool_choice"],
        json!({"type": "tool", "name": "verdict"})
    );
}

#[test]
fn the_timeout_is_capped_at_the_ceiling() {
    let j = judge(Provider::OpenAi, "http://x", Duration::from_secs(120));
    assert_eq!(j.config().timeout, aileron_judge::CEILING);
}

/// Identical actions within the TTL reuse the verdict: no second request,
/// from memory or (another process) from the disk cache.
#[test]
fn identical_actions_reuse_a_cached_verdict() {
    let fake = Fake::start(vec![Reply::json(openai(
        r#"{"decision": "deny", "reason": "deletes sources"}"#,
    ))]);
    let cfg = judge(Provider::OpenAi, &fake.url, Duration::from_secs(5))
        .config()
        .clone();
    let dir = tempfile::tempdir().unwrap();
    let keys = |_: &str| Some(KEY.to_owned());
    let bench = aileron_judge::Bench::with_disk(dir.path()).keys(keys);
    let a = action("rm -rf src");
    let call = aileron_judge::Call {
        judge: &cfg,
        input: input(&a),
        cache_ttl: Some(Duration::from_secs(60)),
    };
    let first = bench.decide(&call).unwrap();
    assert!(!first.cached);
    let second = bench.decide(&call).unwrap();
    assert!(second.cached);
    assert_eq!(second.verdict, first.verdict);
    // Another process, the same disk cache.
    let other = aileron_judge::Bench::with_disk(dir.path()).keys(keys);
    assert!(other.decide(&call).unwrap().cached);
    assert_eq!(fake.requests().len(), 1);
    // Another action is judged.
    let b = action("rm -rf target");
    let call_b = aileron_judge::Call {
        input: input(&b),
        ..call
    };
    assert!(!bench.decide(&call_b).unwrap().cached);
    // Without a TTL nothing is reused.
    let uncached = aileron_judge::Call {
        cache_ttl: None,
        ..call
    };
    assert!(!bench.decide(&uncached).unwrap().cached);
    assert_eq!(fake.requests().len(), 3);
}
