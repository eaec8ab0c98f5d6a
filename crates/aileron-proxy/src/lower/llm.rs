//! `llm { provider, model, max_tokens, stream }`: a call to a model's API
//! (a POST), by the shape of its path, so that any OpenAI-compatible
//! server (Ollama, vLLM, OpenRouter, a gateway) is read as OpenAI is.
//!
//! - OpenAI: `…/chat/completions`, `…/v1/completions`, `…/v1/responses`,
//!   `…/v1/embeddings`; Anthropic: `…/v1/messages`,
//!   `…/v1/messages/count_tokens`; Gemini: `…/models/MODEL:generateContent`
//!   (`streamGenerateContent`, `countTokens`), under `/v1beta` or `/v1`,
//!   and Vertex AI's `…/publishers/google/models/MODEL:…`.
//! - `provider`: the host's where it is known (`api.openai.com`,
//!   `api.anthropic.com`, `generativelanguage.googleapis.com`, whatever
//!   API shape it serves), else the path's shape.
//! - `model`: Gemini's from the path; the others' from the JSON body's
//!   `model`. `max_tokens`: the largest of the body's `max_tokens`,
//!   `max_completion_tokens`, `max_output_tokens` and
//!   `generationConfig.maxOutputTokens`. `stream`: the body's `stream`
//!   (false when absent); Gemini's from the method
//!   (`streamGenerateContent`).
//!
//! The body is read only when it is whole and not compressed, and only as
//! unambiguous JSON: a body that is not JSON, is cut short, or names a
//! field twice (`{"model": "a", "model": "b"}`, which servers read in
//! different ways) gives no model, no `max_tokens` and no `stream`; the
//! facet then says what is known (the provider). A rule that allows
//! models by name should therefore not allow a call whose model is
//! unknown (`llm.model: {exists: false}`).

use super::{Facet, Seen, Target, decoded_path, lookup};
use http::{HeaderMap, Method, header};
use serde::Deserialize;
use serde_json::{Map, Value};

/// How much of an LLM API request's body the decision reads: 1 MiB.
pub const LLM_BODY_LIMIT: usize = 1 << 20;

/// An API shape: how the request says what it wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Api {
    /// The provider a call of this shape is taken for on an unknown host.
    fn provider(self) -> &'static str {
        match self {
            Api::OpenAi => "openai",
            Api::Anthropic => "anthropic",
            Api::Gemini => "gemini",
        }
    }
}

/// The ends of paths that are calls, and the API shape of each.
const ROUTES: &[(&str, Api)] = &[
    ("/chat/completions", Api::OpenAi),
    ("/v1/completions", Api::OpenAi),
    ("/v1/responses", Api::OpenAi),
    ("/v1/embeddings", Api::OpenAi),
    ("/v1/messages", Api::Anthropic),
    ("/v1/messages/count_tokens", Api::Anthropic),
];

/// Gemini's methods (`models/MODEL:METHOD`), and whether each streams.
const GEMINI_METHODS: &[(&str, bool)] = &[
    ("generateContent", false),
    ("streamGenerateContent", true),
    ("countTokens", false),
];

/// Hosts whose provider is known.
const HOSTS: &[(&str, &str)] = &[
    ("api.openai.com", "openai"),
    ("api.anthropic.com", "anthropic"),
    ("generativelanguage.googleapis.com", "gemini"),
];

/// A call, as its path says: the shape, and Gemini's model and streaming.
struct Call<'a> {
    api: Api,
    model: Option<&'a str>,
    stream: Option<bool>,
}

fn call<'a>(method: &str, path: &'a str) -> Option<Call<'a>> {
    if method != "POST" {
        return None;
    }
    if let Some((_, api)) = ROUTES.iter().find(|(end, _)| path.ends_with(end)) {
        return Some(Call {
            api: *api,
            model: None,
            stream: None,
        });
    }
    let (models, last) = path.rsplit_once('/')?;
    let (model, method) = last.rsplit_once(':')?;
    let (_, stream) = GEMINI_METHODS.iter().find(|(m, _)| *m == method)?;
    (models.ends_with("/models") && !model.is_empty()).then_some(Call {
        api: Api::Gemini,
        model: Some(model),
        stream: Some(*stream),
    })
}

/// How many bytes of the request body the decision needs: up to
/// [`LLM_BODY_LIMIT`] for a call to an LLM API (whose `model` and
/// `max_tokens` are in it), unless it is compressed; `None` otherwise.
/// Give [`super::lower`] all of the body when it is shorter.
pub fn body_wanted(method: &Method, target: &Target, headers: &HeaderMap) -> Option<usize> {
    let path = decoded_path(target.path());
    call(&method.as_str().to_ascii_uppercase(), &path)?;
    (!compressed(headers)).then_some(LLM_BODY_LIMIT)
}

fn compressed(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .any(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"))
}

/// The fields read of a request body. Typed as values so that a field of
/// an unexpected type leaves only that field unknown; named twice, it is
/// an error (serde refuses duplicate fields), so the body is not read.
#[derive(Deserialize)]
struct Body {
    model: Option<Value>,
    max_tokens: Option<Value>,
    max_completion_tokens: Option<Value>,
    max_output_tokens: Option<Value>,
    stream: Option<Value>,
    #[serde(rename = "generationConfig", alias = "generation_config")]
    generation_config: Option<GenerationConfig>,
}

#[derive(Deserialize)]
struct GenerationConfig {
    #[serde(rename = "maxOutputTokens", alias = "max_output_tokens")]
    max_output_tokens: Option<Value>,
}

pub(super) fn facet(seen: &Seen<'_>) -> Option<Facet> {
    let call = call(seen.method, &seen.path)?;
    let provider = lookup(HOSTS, &seen.target.host).unwrap_or(call.api.provider());
    let body = seen
        .body
        .filter(|_| !compressed(seen.headers))
        .and_then(|b| serde_json::from_slice::<Body>(b).ok());
    let mut llm = Map::new();
    llm.insert("provider".into(), Value::from(provider));
    let model = call
        .model
        .or_else(|| body.as_ref()?.model.as_ref()?.as_str());
    if let Some(m) = model {
        llm.insert("model".into(), Value::from(m));
    }
    if let Some(b) = &body {
        let limits = [
            &b.max_tokens,
            &b.max_completion_tokens,
            &b.max_output_tokens,
            &b.generation_config
                .as_ref()
                .and_then(|g| g.max_output_tokens.clone()),
        ];
        if let Some(n) = limits
            .into_iter()
            .filter_map(|v| v.as_ref()?.as_u64())
            .max()
        {
            llm.insert("max_tokens".into(), Value::from(n));
        }
    }
    let stream = call.stream.or_else(|| {
        let b = body.as_ref()?;
        Some(b.stream.as_ref().and_then(Value::as_bool).unwrap_or(false))
    });
    if let Some(s) = stream {
        llm.insert("stream".into(), Value::Bool(s));
    }
    Some(Facet {
        name: "llm",
        value: Value::Object(llm),
        sensitivity: None,
    })
}
