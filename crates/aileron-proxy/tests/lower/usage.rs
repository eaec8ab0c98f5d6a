//! The tokens an LLM response reports, from a whole body or as it streams.

use aileron_proxy::lower::{Usage, UsageScanner, usage};

fn u(input_tokens: u64, output_tokens: u64) -> Option<Usage> {
    Some(Usage {
        input_tokens,
        output_tokens,
    })
}

/// The usage of `body` fed whole, byte by byte, and in pieces of every
/// size up to 64: the same whatever the pieces.
#[track_caller]
fn scanned(body: &str) -> Option<Usage> {
    let whole = usage(body.as_bytes());
    for size in 1..=64 {
        let mut s = UsageScanner::new();
        for piece in body.as_bytes().chunks(size) {
            s.feed(piece);
        }
        assert_eq!(s.usage(), whole, "in pieces of {size}");
    }
    whole
}

#[test]
fn whole_json_responses() {
    let openai = r#"{
  "id": "chatcmpl-1",
  "object": "chat.completion",
  "model": "gpt-4o",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": "the \"usage\": {\"prompt_tokens\": 999}"}}],
  "usage": {
    "prompt_tokens": 19,
    "completion_tokens": 10,
    "total_tokens": 29,
    "prompt_tokens_details": {"cached_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0}
  }
}"#;
    assert_eq!(scanned(openai), u(19, 10));
    let responses = r#"{"id":"resp_1","object":"response","output":[{"type":"message","content":[{"type":"output_text","text":"hi"}]}],"usage":{"input_tokens":36,"input_tokens_details":{"cached_tokens":0},"output_tokens":87,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":123}}"#;
    assert_eq!(scanned(responses), u(36, 87));
    let anthropic = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-1","content":[{"type":"text","text":"Hi"}],"stop_reason":"end_turn","usage":{"input_tokens":2095,"output_tokens":503,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}"#;
    assert_eq!(scanned(anthropic), u(2095, 503));
    let gemini = r#"{
  "candidates": [{"content": {"parts": [{"text": "Hi"}], "role": "model"}, "finishReason": "STOP"}],
  "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 12, "totalTokenCount": 16,
                    "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 4}]},
  "modelVersion": "gemini-2.5-flash"
}"#;
    assert_eq!(scanned(gemini), u(4, 12));
    let embeddings = r#"{"object":"list","data":[{"embedding":[0.1,-0.2]}],"model":"text-embedding-3-small","usage":{"prompt_tokens":8,"total_tokens":8}}"#;
    assert_eq!(scanned(embeddings), u(8, 0));
}

#[test]
fn openai_streams_report_usage_in_the_last_chunk() {
    let sse = concat!(
        "data: {\"id\":\"c1\",\"choices\":[{\"delta\":{\"content\":\"Hel\"}}],\"usage\":null}\n\n",
        "data: {\"id\":\"c1\",\"choices\":[{\"delta\":{\"content\":\"lo \\\"usage\\\":{\"}}],\"usage\":null}\n\n",
        "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2,\"total_tokens\":11}}\n\n",
        "data: [DONE]\n\n",
    );
    assert_eq!(scanned(sse), u(9, 2));
    // Without stream_options.include_usage: none.
    let bare = "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n";
    assert_eq!(scanned(bare), None);
    let responses = concat!(
        "event: response.created\n",
        "data: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"usage\":null}}\n\n",
        "event: response.output_text.delta\n",
        "data: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n",
        "event: response.completed\n",
        "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"usage\":{\"input_tokens\":12,\"output_tokens\":3,\"total_tokens\":15}}}\n\n",
    );
    assert_eq!(scanned(responses), u(12, 3));
}

#[test]
fn anthropic_streams_count_input_at_the_start_and_output_at_the_end() {
    let sse = concat!(
        "event: message_start\r\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-opus-4-1\",\"usage\":{\"input_tokens\":25,\"output_tokens\":1}}}\r\n\r\n",
        "event: ping\r\ndata: {\"type\": \"ping\"}\r\n\r\n",
        "event: content_block_delta\r\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"usage: {}\"}}\r\n\r\n",
        "event: message_delta\r\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":15}}\r\n\r\n",
        "event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n",
    );
    assert_eq!(scanned(sse), u(25, 15));
}

#[test]
fn gemini_streams_count_up_chunk_by_chunk() {
    let sse = concat!(
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"A\"}]}}],\"usageMetadata\":{\"promptTokenCount\":7,\"totalTokenCount\":7}}\r\n\r\n",
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"B\"}]}}],\"usageMetadata\":{\"promptTokenCount\":7,\"candidatesTokenCount\":20,\"totalTokenCount\":27}}\r\n\r\n",
    );
    assert_eq!(scanned(sse), u(7, 20));
    // Without alt=sse: a JSON array, pretty-printed.
    let array = "[{\n  \"candidates\": [{\"content\": {\"parts\": [{\"text\": \"A\"}]}}],\n  \"usageMetadata\": {\n    \"promptTokenCount\": 3,\n    \"totalTokenCount\": 3\n  }\n}\n,\r\n{\n  \"candidates\": [],\n  \"usageMetadata\": {\n    \"promptTokenCount\": 3,\n    \"candidatesTokenCount\": 5,\n    \"totalTokenCount\": 8\n  }\n}\n]";
    assert_eq!(scanned(array), u(3, 5));
}

#[test]
fn what_holds_no_usage_gives_none_and_never_panics() {
    for body in [
        "",
        "<html>502 Bad Gateway</html>",
        r#"{"error":{"message":"invalid key","type":"invalid_request_error"}}"#,
        r#"{"usage": null}"#,
        r#"{"usage": "lots"}"#,
        r#"{"usage": {"prompt_tokens": "9"}}"#,
        r#"{"usage": {"total_tokens": 9}}"#,
        r#"{"content": "\"usage\": {\"prompt_tokens\": 9}"}"#,
        r#"{"usage": {"prompt_tokens": 9"#,
        "}]}]\"\\\"usage\":{{{{",
        "\"usage\"\n:{\"prompt_tokens\":\n",
    ] {
        assert_eq!(scanned(body), None, "{body}");
    }
    // Invalid UTF-8, stray brackets: nothing, then the real usage.
    let mut s = UsageScanner::new();
    s.feed(b"\xff\xfe]]}}\"\n");
    s.feed(br#"{"usage":{"input_tokens":1,"output_tokens":2}}"#);
    assert_eq!(s.usage(), u(1, 2));
}

#[test]
fn memory_stays_bounded_on_endless_or_huge_input() {
    // A usage object that never closes is given up at 16 KiB, and the
    // next one is still read.
    let mut s = UsageScanner::new();
    s.feed(br#"{"usage":{"prompt_tokens":1,"pad":["#);
    for _ in 0..10_000 {
        s.feed(b"1,2,3,4,5,6,7,8,9,");
    }
    s.feed(b"0]}}\n");
    assert_eq!(s.usage(), None);
    s.feed(br#"data: {"usage":{"prompt_tokens":4,"completion_tokens":5}}"#);
    assert_eq!(s.usage(), u(4, 5));
    // A long content string is passed over without being kept.
    let long = format!(
        r#"{{"text":"{}","usage":{{"input_tokens":6,"output_tokens":7}}}}"#,
        "x".repeat(1 << 20)
    );
    assert_eq!(usage(long.as_bytes()), u(6, 7));
}
