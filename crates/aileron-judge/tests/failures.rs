//! Every way a judge call can fail (issue 16, "Bad input and attacks"):
//! each ends in an error (the caller's `fail_closed`), never a verdict,
//! within the judge's timeout, with a one-line reason that says which
//! failure it was and never shows the API key.

mod support;

use aileron_judge::{CEILING, Error, Judge, MAX_REPLY, Provider};
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use support::*;

const QUICK: Duration = Duration::from_millis(1500);

fn ok() -> Reply {
    Reply::json(openai(r#"{"decision": "allow", "reason": "fine"}"#))
}

/// A fake answering `replies`, and an OpenAI judge on it.
fn on(replies: Vec<Reply>, timeout: Duration) -> (Fake, Judge) {
    let fake = Fake::start(replies);
    let judge = judge(Provider::OpenAi, &fake.url, timeout);
    (fake, judge)
}

/// A fake answering one OpenAI message `content` or one Anthropic message.
fn replying(provider: Provider, reply: serde_json::Value) -> (Fake, Judge) {
    let fake = Fake::start(vec![Reply::json(reply)]);
    let judge = judge(provider, &fake.url, Duration::from_secs(5));
    (fake, judge)
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

// ---- The provider cannot be reached ----

#[test]
fn a_provider_that_hangs_up_fails_closed() {
    let mut down = ok();
    down.hang_up = true;
    let (fake, judge) = on(vec![down], QUICK);
    let (e, text, _) = fails(&judge);
    assert!(matches!(e, Error::Unreachable(_)), "{e:?}");
    assert!(text.starts_with("the judge cannot be reached: "), "{text}");
    assert!(text.contains("closed"), "{text}");
    assert!(fake.requests().len() >= 2, "a lost connection is retried");
}

#[test]
fn connection_refused_fails_closed() {
    let judge = judge(
        Provider::OpenAi,
        &format!("http://127.0.0.1:{}", closed_port()),
        QUICK,
    );
    let (e, text, _) = fails(&judge);
    assert!(matches!(e, Error::Unreachable(_)), "{e:?}");
    assert_eq!(text, "the judge cannot be reached: connection refused");
}

#[test]
fn an_unresolvable_host_fails_closed_at_once() {
    let judge = judge(Provider::OpenAi, "http://nonexistent.invalid", CEILING);
    let (e, text, took) = fails(&judge);
    assert!(matches!(e, Error::Unreachable(_)), "{e:?}");
    assert!(
        text.starts_with("the judge cannot be reached: no address for `nonexistent.invalid` (DNS"),
        "{text}"
    );
    // A name that does not resolve is not retried until the ceiling.
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

/// `https://` to a server that answers plain bytes: the handshake fails.
#[test]
fn tls_to_a_server_that_does_not_speak_tls_fails_closed() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            count.fetch_add(1, Ordering::SeqCst);
            let mut hello = [0u8; 512];
            let _ = stream.read(&mut hello);
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-length: 48\r\n\r\n{\"decision\": \"allow\", \"reason\": \"not TLS\"}\r\n",
            );
        }
    });
    let judge = judge(Provider::OpenAi, &format!("https://{addr}"), CEILING);
    let (e, text, took) = fails(&judge);
    assert!(matches!(e, Error::Unreachable(_)), "{e:?}");
    assert!(
        text.starts_with("the judge cannot be reached: TLS: "),
        "{text}"
    );
    assert!(took < Duration::from_secs(10), "not retried: took {took:?}");
    assert_eq!(accepted.load(Ordering::SeqCst), 1, "not retried");
}

/// `https://` to a server whose certificate no root vouches for: refused
/// before a byte of the request (or the key) is sent.
#[test]
fn a_self_signed_certificate_is_refused() {
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(cert.signing_key.serialize_der().into());
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![cert.cert.der().clone()], key)
    .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let received = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = received.clone();
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(tcp) = tcp else { return };
            tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let conn = rustls::ServerConnection::new(config.clone()).unwrap();
            let mut tls = rustls::StreamOwned::new(conn, tcp);
            let mut buf = [0u8; 4096];
            // A client that refuses the certificate ends the handshake here.
            if let Ok(n) = tls.read(&mut buf) {
                seen.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        }
    });
    let judge = judge(Provider::OpenAi, &format!("https://{addr}"), CEILING);
    let (e, text, took) = fails(&judge);
    assert!(matches!(e, Error::Unreachable(_)), "{e:?}");
    assert!(
        text.starts_with("the judge cannot be reached: TLS: ") && text.contains("certificate"),
        "{text}"
    );
    assert!(took < Duration::from_secs(10), "not retried: took {took:?}");
    assert!(received.lock().unwrap().is_empty(), "nothing was sent");
}

// ---- HTTP errors ----

#[test]
fn http_401_fails_at_once_without_a_retry() {
    for provider in [Provider::OpenAi, Provider::Anthropic] {
        // The provider quotes the key it refused: masked.
        let fake = Fake::start(vec![Reply::status(
            401,
            &format!(r#"{{"error": {{"message": "Incorrect API key provided: {KEY}"}}}}"#),
        )]);
        let judge = judge(provider, &fake.url, CEILING);
        let (e, text, took) = fails(&judge);
        assert!(matches!(e, Error::Status { status: 401, .. }), "{e:?}");
        assert!(text.starts_with("the judge answered HTTP 401: "), "{text}");
        assert!(text.contains("Incorrect API key provided: ***"), "{text}");
        assert!(took < Duration::from_secs(2), "took {took:?}");
        assert_eq!(fake.requests().len(), 1, "no retry");
    }
}

#[test]
fn http_429_waits_for_its_retry_after_within_the_timeout() {
    let mut busy = Reply::status(429, "slow down");
    busy.headers.push(("retry-after", "1".into()));
    let (fake, judge) = on(vec![busy, ok()], Duration::from_secs(5));
    let started = std::time::Instant::now();
    let r = rules(&judge);
    let took = started.elapsed();
    assert_eq!(r.verdict.reason, "fine");
    assert_eq!(fake.requests().len(), 2);
    assert!(
        took >= Duration::from_secs(1),
        "Retry-After honoured: {took:?}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// A Retry-After past the ceiling (or the time left) is not slept on: the
/// 429 is the answer at once.
#[test]
fn http_429_whose_retry_after_is_past_the_ceiling_fails_at_once() {
    let mut later = Reply::status(429, "later");
    later.headers.push(("retry-after", "120".into()));
    let (fake, judge) = on(vec![later], CEILING);
    let (e, text, took) = fails(&judge);
    assert!(matches!(e, Error::Status { status: 429, .. }), "{e:?}");
    assert_eq!(
        text,
        "the judge answered HTTP 429: later (it asked to retry after 120s, past the judge's timeout)"
    );
    assert!(took < Duration::from_secs(2), "not slept on: {took:?}");
    assert_eq!(fake.requests().len(), 1);
}

/// 429s without a Retry-After back off until the time runs out.
#[test]
fn http_429_again_and_again_fails_within_the_timeout() {
    let (fake, judge) = on(vec![Reply::status(429, "busy")], QUICK);
    let (e, text, _) = fails(&judge);
    assert!(matches!(e, Error::Status { status: 429, .. }), "{e:?}");
    assert_eq!(text, "the judge answered HTTP 429: busy");
    assert!(fake.requests().len() >= 2, "retried");
    // `Retry-After: 0` again and again still backs off.
    let mut now = Reply::status(429, "busy");
    now.headers.push(("retry-after", "0".into()));
    let (fake, judge) = on(vec![now], QUICK);
    fails(&judge);
    let n = fake.requests().len();
    assert!((2..=6).contains(&n), "{n} requests");
}

#[test]
fn http_5xx_is_retried_then_fails_closed() {
    for status in [500, 502, 503] {
        let (fake, judge) = on(vec![Reply::status(status, "boom\n  trace")], QUICK);
        let (e, text, took) = fails(&judge);
        assert!(
            matches!(e, Error::Status { status: s, .. } if s == status),
            "{e:?}"
        );
        assert_eq!(
            text,
            format!("the judge answered HTTP {status}: boom trace")
        );
        assert!(fake.requests().len() >= 2, "retried with backoff");
        assert!(took >= Duration::from_millis(200), "backed off: {took:?}");
    }
    // A 500 then a verdict: the retry's verdict holds.
    let (fake, judge) = on(vec![Reply::status(500, "boom"), ok()], QUICK);
    assert_eq!(rules(&judge).verdict.reason, "fine");
    assert_eq!(fake.requests().len(), 2);
}

#[test]
fn an_error_body_is_cut_short() {
    let long = "x".repeat(10_000);
    let (_, judge) = on(vec![Reply::status(400, &long)], QUICK);
    let (_, text, _) = fails(&judge);
    assert!(text.len() < 300, "{}", text.len());
}

// ---- Slow and large replies ----

/// `reply` is slow: the call ends in a timeout at the deadline.
fn times_out(reply: Reply) {
    let (_, judge) = on(vec![reply], QUICK);
    let (e, text, took) = fails(&judge);
    assert!(matches!(e, Error::Timeout(_)), "{e:?}");
    assert_eq!(text, "the judge did not answer within 1.5s");
    assert!(took >= QUICK - Duration::from_millis(100), "{took:?}");
}

#[test]
fn slow_headers_time_out() {
    let mut slow = ok();
    slow.stall_head = Duration::from_secs(10);
    times_out(slow);
}

#[test]
fn a_stalled_body_times_out() {
    let mut slow = ok();
    slow.stall_body = Duration::from_secs(10);
    times_out(slow);
}

/// A body that keeps arriving, a byte at a time, never long enough apart
/// for a read to time out: the whole call still ends at the deadline.
#[test]
fn a_trickling_body_times_out_at_the_deadline() {
    let mut slow = ok();
    slow.trickle = Some(Duration::from_millis(50));
    assert!(slow.body.len() > 100, "longer than the timeout to send");
    times_out(slow);
}

#[test]
fn a_reply_over_the_size_limit_fails_closed() {
    let huge = format!(
        r#"{{"choices": [{{"message": {{"content": "{}"}}}}]}}"#,
        "a".repeat(MAX_REPLY as usize)
    );
    for close_delimited in [false, true] {
        let mut big = Reply::status(200, &huge);
        big.close_delimited = close_delimited;
        let (fake, judge) = on(vec![big], QUICK);
        let (e, text, took) = fails(&judge);
        assert!(matches!(e, Error::TooLarge), "{e:?}");
        assert_eq!(text, "the judge's reply is over 262144 bytes");
        assert_eq!(fake.requests().len(), 1, "not retried");
        assert!(took < Duration::from_secs(1), "{took:?}");
    }
}

// ---- Replies that are not exactly one verdict ----

fn malformed(provider: Provider, reply: serde_json::Value, why: &str) {
    let (_, judge) = replying(provider, reply.clone());
    let (e, text, _) = fails(&judge);
    assert!(matches!(e, Error::Malformed(_)), "{reply}: {e:?}");
    assert_eq!(
        text,
        format!("the judge's reply is not a verdict: {why}"),
        "{reply}"
    );
}

#[test]
fn malformed_json_fails_closed() {
    for body in [
        "<html>oops</html>",
        r#"{"choices": [{"message": {"content": "{\"decision\""#,
        "",
    ] {
        let (_, judge) = on(vec![Reply::status(200, body)], QUICK);
        let (e, text, _) = fails(&judge);
        assert!(matches!(e, Error::Malformed(_)), "{body}: {e:?}");
        assert_eq!(
            text,
            "the judge's reply is not a verdict: the reply is not JSON"
        );
    }
    for content in [
        r#"{"decision": "allow", "reason": "ok""#,
        r#"{'decision': 'allow', 'reason': 'ok'}"#,
        "allow",
        r#"```json
{"decision": "allow", "reason": "ok"}
```"#,
    ] {
        malformed(
            Provider::OpenAi,
            openai(content),
            "the reply is not exactly one JSON verdict",
        );
    }
    malformed(
        Provider::OpenAi,
        json!({"error": {"message": "x"}}),
        "no `choices`",
    );
    malformed(
        Provider::Anthropic,
        json!({"type": "error", "error": {"type": "overloaded_error"}}),
        "no `content`",
    );
    malformed(
        Provider::Anthropic,
        anthropic(json!("allow")),
        "the verdict is not an object",
    );
}

#[test]
fn an_unknown_decision_word_fails_closed() {
    for word in ["approve", "ALLOW", "allow ", "yes", ""] {
        let verdict = json!({"decision": word, "reason": "ok"});
        let why = format!("an unknown decision `{}`", word.trim());
        malformed(Provider::OpenAi, openai(&verdict.to_string()), &why);
        malformed(Provider::Anthropic, anthropic(verdict), &why);
    }
    for decision in [json!(true), json!(1), json!(null), json!(["allow"])] {
        let verdict = json!({"decision": decision, "reason": "ok"});
        malformed(
            Provider::OpenAi,
            openai(&verdict.to_string()),
            "no decision",
        );
        malformed(Provider::Anthropic, anthropic(verdict), "no decision");
    }
    // A long word is quoted short.
    let verdict = json!({"decision": "a".repeat(5000), "reason": "ok"});
    let (_, judge) = replying(Provider::Anthropic, anthropic(verdict));
    let (_, text, _) = fails(&judge);
    assert!(text.len() < 120, "{text}");
}

#[test]
fn an_empty_reason_fails_closed() {
    for verdict in [
        json!({"decision": "allow", "reason": ""}),
        json!({"decision": "allow", "reason": " \n\t "}),
        json!({"decision": "allow", "reason": null}),
        json!({"decision": "allow", "reason": 42}),
        json!({"decision": "allow"}),
    ] {
        malformed(Provider::OpenAi, openai(&verdict.to_string()), "no reason");
        malformed(Provider::Anthropic, anthropic(verdict), "no reason");
    }
}

#[test]
fn two_verdicts_or_extra_fields_fail_closed() {
    let allow = json!({"decision": "allow", "reason": "a"});
    let deny = json!({"decision": "deny", "reason": "b"});
    // Two verdicts in one message, and one in each of two choices.
    malformed(
        Provider::OpenAi,
        openai(&format!("{allow} {deny}")),
        "the reply is not exactly one JSON verdict",
    );
    malformed(
        Provider::OpenAi,
        openai(&json!([allow, deny]).to_string()),
        "the verdict is not an object",
    );
    let mut two = openai(&allow.to_string());
    let choice = two["choices"][0].clone();
    two["choices"].as_array_mut().unwrap().push(choice);
    malformed(Provider::OpenAi, two, "2 choices, not one");
    malformed(
        Provider::OpenAi,
        json!({"choices": []}),
        "0 choices, not one",
    );
    // Two verdict tool calls, and a call of another tool.
    malformed(
        Provider::Anthropic,
        anthropic_content(
            json!([
                {"type": "tool_use", "id": "t1", "name": "verdict", "input": allow},
                {"type": "tool_use", "id": "t2", "name": "verdict", "input": deny}
            ]),
            "tool_use",
        ),
        "2 tool calls, not one `verdict` call",
    );
    malformed(
        Provider::Anthropic,
        anthropic_content(
            json!([{"type": "tool_use", "id": "t1", "name": "approve", "input": allow}]),
            "tool_use",
        ),
        "a call of another tool than `verdict`",
    );
    // Extra fields, in both formats.
    for extra in [
        json!({"decision": "allow", "reason": "ok", "override": true}),
        json!({"decision": "allow", "reason": "ok", "decision2": "deny"}),
    ] {
        let field = extra
            .as_object()
            .unwrap()
            .keys()
            .find(|k| *k != "decision" && *k != "reason")
            .unwrap()
            .clone();
        let why = format!("an unexpected field `{field}`");
        malformed(Provider::OpenAi, openai(&extra.to_string()), &why);
        malformed(Provider::Anthropic, anthropic(extra), &why);
    }
    // A long field name is quoted short.
    let mut extra = serde_json::Map::new();
    extra.insert("decision".into(), json!("allow"));
    extra.insert("reason".into(), json!("ok"));
    extra.insert("x".repeat(5000), json!(1));
    let (_, judge) = replying(Provider::Anthropic, anthropic(extra.into()));
    let (_, text, _) = fails(&judge);
    assert!(text.len() < 120, "{text}");
}

#[test]
fn a_refusal_fails_closed_saying_so() {
    let refusal = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "judge-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": "I can't help with\nthat."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 300, "completion_tokens": 5}
    });
    let (_, judge) = replying(Provider::OpenAi, refusal);
    let (e, text, _) = fails(&judge);
    assert!(matches!(e, Error::Refused(_)), "{e:?}");
    assert_eq!(text, "the model refused: I can't help with that.");
    // Anthropic: the refusal stop reason.
    let (_, judge) = replying(Provider::Anthropic, anthropic_content(json!([]), "refusal"));
    let (e, text, _) = fails(&judge);
    assert!(matches!(e, Error::Refused(_)), "{e:?}");
    assert_eq!(text, "the model refused: the model refused to answer");
    // Anthropic: text instead of the forced tool call.
    let (_, judge) = replying(
        Provider::Anthropic,
        anthropic_content(
            json!([{"type": "text", "text": "I won't judge\nthis."}]),
            "end_turn",
        ),
    );
    let (e, text, _) = fails(&judge);
    assert!(matches!(e, Error::Refused(_)), "{e:?}");
    assert_eq!(
        text,
        "the model refused: it wrote text, not a `verdict` call: I won't judge this."
    );
    // A long refusal is cut short.
    let long = openai("x");
    let mut long = long;
    long["choices"][0]["message"]["refusal"] = json!("no ".repeat(2000));
    let (_, judge) = replying(Provider::OpenAi, long);
    let (_, text, _) = fails(&judge);
    assert!(text.len() < 300, "{}", text.len());
}

#[test]
fn a_reply_cut_at_max_tokens_fails_closed() {
    malformed(
        Provider::OpenAi,
        json!({"choices": [{"message": {"content": "{\"decision\": \"al"}, "finish_reason": "length"}]}),
        "the reply was cut at max_tokens",
    );
    malformed(
        Provider::Anthropic,
        anthropic_content(json!([]), "max_tokens"),
        "the reply was cut at max_tokens",
    );
}

// ---- The key ----

#[test]
fn no_key_fails_closed_without_a_request() {
    let fake = Fake::start(vec![ok()]);
    let keyless = Judge::new(config(Provider::OpenAi, &fake.url, QUICK), None);
    let (e, text, _) = fails(&keyless);
    assert!(matches!(e, Error::NoKey(_)), "{e:?}");
    assert_eq!(text, "no API key: $AILERON_TEST_KEY is not set");
    assert!(fake.requests().is_empty());
}

/// The exchange (`aileron judge try` prints it) is the request sent, the
/// key masked; a judge's Debug shows no key either.
#[test]
fn the_key_never_appears_in_the_exchange_or_debug() {
    for (provider, header) in [
        (Provider::OpenAi, "authorization"),
        (Provider::Anthropic, "x-api-key"),
    ] {
        let fake = Fake::start(vec![Reply::json(match provider {
            Provider::OpenAi => openai(r#"{"decision": "allow", "reason": "ok"}"#),
            Provider::Anthropic => anthropic(json!({"decision": "allow", "reason": "ok"})),
        })]);
        let judge = judge(provider, &fake.url, QUICK);
        let a = action("make deploy");
        let exchange = judge.exchange(&input(&a));
        let shown = format!(
            "{exchange:?} {} {}",
            exchange.body,
            serde_json::to_string_pretty(&exchange.body).unwrap()
        );
        assert_no_key(&shown);
        assert!(
            exchange
                .headers
                .iter()
                .any(|(k, v)| k == header && v == "***"),
            "{:?}",
            exchange.headers
        );
        assert_no_key(&format!("{judge:?}"));
        rules(&judge);
        // What was sent is what the exchange shows, the key aside.
        assert_eq!(fake.sent(0), exchange.body);
        let (head, _) = &fake.requests()[0];
        assert!(head.contains(KEY), "the key went in the header: {head}");
    }
}
