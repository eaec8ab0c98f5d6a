//! `judges:` and `judge` rules: definitions, which judge a rule asks, and
//! the load errors with file:line:col.

use aileron_engine::{Environment, Layer, Policy, Source};

fn load(text: &str) -> Result<Policy, String> {
    let src = Source {
        name: "/p/aileron.yaml".into(),
        text: text.into(),
        layer: Layer::Project,
        base_dir: "/p".into(),
    };
    Policy::from_sources(&[src], &Environment::new("/home/u")).map_err(|d| {
        d.iter()
            .map(|d| d.headline())
            .collect::<Vec<_>>()
            .join("\n")
    })
}

#[test]
fn a_rule_asks_the_judge_it_names_or_the_default_or_the_only_one() {
    let p = load(
        "version: 1\njudges:\n  fast: {provider: openai, base_url: \"http://127.0.0.1:9/v1\", model: m1, api_key_env: OPENAI_API_KEY, timeout: 5}\n  default: {provider: anthropic, model: m2}\njudge:\n  - {id: named, command: \"rm *\", judge: fast, prompt: only build output, cache_ttl: 60}\n  - {id: unnamed, command: \"curl *\"}\n",
    )
    .unwrap();
    let named = p.rule("named").unwrap();
    let j = p.judge_for(named).unwrap();
    assert_eq!(j.name, "fast");
    assert_eq!(j.provider, "openai");
    assert_eq!(j.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
    assert_eq!(j.timeout, Some(5));
    assert_eq!(named.judge.as_ref().unwrap().cache_ttl, Some(60));
    let unnamed = p.judge_for(p.rule("unnamed").unwrap()).unwrap();
    assert_eq!(unnamed.name, "default");
    assert_eq!(unnamed.base_url, "https://api.anthropic.com");
    // No judges at all: a judge rule is a human's to decide (no error).
    let p = load("version: 1\njudge: [\"rm *\"]\n").unwrap();
    assert!(p.judges.is_empty());
}

#[test]
fn judge_mistakes_are_load_errors_with_their_place() {
    let cases = [
        (
            "version: 1\njudges:\n  fast: {provider: openai, model: m}\njudge:\n  - {command: \"rm *\", judge: slow}\n",
            "/p/aileron.yaml:5:5: error: rule `/p/aileron.yaml:judge[0]` names judge `slow`, which no `judges:` defines; defined: fast",
        ),
        (
            "version: 1\njudges:\n  a: {provider: openai, model: m}\n  b: {provider: openai, model: m}\njudge: [\"rm *\"]\n",
            "must name its judge",
        ),
        (
            "version: 1\njudges:\n  fast: {provider: openai, model: m, timeout: 60}\n",
            "/p/aileron.yaml:3:47: error: a judge's `timeout` is at most 30 seconds",
        ),
        (
            "version: 1\njudges:\n  fast: {provider: openai, model: m, api_key_env: sk-abc123}\n",
            "never the key itself",
        ),
        (
            "version: 1\njudges:\n  fast: {provider: gemini, model: m}\n",
            "`provider`",
        ),
        (
            "version: 1\njudges:\n  fast: {model: m}\n",
            "judge `fast` needs `provider`",
        ),
        (
            "version: 1\njudges:\n  fast: {provider: openai}\n",
            "judge `fast` needs `model`",
        ),
        (
            "version: 1\njudges:\n  fast: {provider: openai, model: m, base_url: \"ftp://x\"}\n",
            "`base_url` must be an http:// or https:// URL",
        ),
        (
            "version: 1\njudges:\n  fast: {provider: openai, model: m, key: x}\n",
            "unknown key `key` in judge `fast`",
        ),
    ];
    for (text, want) in cases {
        let err = load(text).expect_err(text);
        assert!(err.contains(want), "{text}\n→ {err}");
    }
}
