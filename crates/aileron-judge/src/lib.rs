//! The LLM judge: a `judge` rule's action decided by a model.
//!
//! [`Judge::decide`] sends the action to the model as data (see
//! [`prompt`]), with the provider's structured-output mechanism (a JSON
//! schema for OpenAI-compatible servers, a forced tool call for
//! Anthropic), and parses the reply strictly: exactly one verdict, a known
//! decision, a reason. Anything else (an HTTP error, a refusal, a
//! timeout, an oversized or malformed reply, no key) is an [`Error`] with
//! a one-line reason; the caller turns it into the rule's `fail_closed`.
//! Retries (429 with `Retry-After`, 5xx, a lost connection) back off
//! inside the judge's timeout, itself capped at [`CEILING`]; a
//! `Retry-After` past it, a name that does not resolve or a failed TLS
//! handshake is the answer at once.
//!
//! The key is read by the caller from the variable the judge names and
//! handed in; it is sent in a header and never appears in an error, a
//! [`Exchange`] or `Debug` output.

pub mod bench;
pub mod cache;
pub mod prompt;
mod provider;

pub use bench::{Bench, Call};

use serde_json::Value;
use std::fmt;
use std::time::{Duration, Instant};

/// The longest a judged decision may take, retries included.
pub const CEILING: Duration = Duration::from_secs(30);
/// The largest reply read from a provider.
pub const MAX_REPLY: u64 = 256 * 1024;
/// A verdict's reason is kept to this many characters.
pub const MAX_REASON_CHARS: usize = 500;

/// Which wire format the judge's server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    /// `/chat/completions`: OpenAI, Ollama, vLLM, llama.cpp server, LM Studio.
    OpenAi,
    /// Anthropic's Messages API.
    Anthropic,
}

impl Provider {
    /// The name a policy uses (`openai`, `anthropic`).
    pub fn parse(name: &str) -> Option<Provider> {
        match name {
            "openai" => Some(Provider::OpenAi),
            "anthropic" => Some(Provider::Anthropic),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAi => "openai",
            Provider::Anthropic => "anthropic",
        }
    }
}

/// A judge as a policy defines it (`judges: {NAME: {...}}`).
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeConfig {
    pub name: String,
    pub provider: Provider,
    /// `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`, `https://api.anthropic.com`.
    pub base_url: String,
    pub model: String,
    /// The variable that holds the API key (none for a local server).
    pub api_key_env: Option<String>,
    /// At most [`CEILING`].
    pub timeout: Duration,
    pub max_tokens: u32,
    pub temperature: f32,
}

/// What the model decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JudgeDecision {
    Allow,
    Deny,
    /// Unclear: a human decides.
    Ask,
}

impl JudgeDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeDecision::Allow => "allow",
            JudgeDecision::Deny => "deny",
            JudgeDecision::Ask => "ask",
        }
    }

    pub fn parse(s: &str) -> Option<JudgeDecision> {
        match s {
            "allow" => Some(JudgeDecision::Allow),
            "deny" => Some(JudgeDecision::Deny),
            "ask" => Some(JudgeDecision::Ask),
            _ => None,
        }
    }
}

/// A verdict: the decision and its one-line reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub decision: JudgeDecision,
    pub reason: String,
}

/// Tokens as the provider reported them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
}

/// A judged decision and what it cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Ruling {
    pub verdict: Verdict,
    pub usage: Usage,
    pub model: String,
    pub latency: Duration,
    /// Reused from the cache: no request was made.
    pub cached: bool,
}

/// What the judge is asked about: the action as data.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    /// The rule that asked for judgement.
    pub rule: Option<&'a str>,
    /// The rule's own question (`prompt:`).
    pub rule_prompt: Option<&'a str>,
    /// `{type, summary, facets, commands}`: no id, time or session.
    pub action: &'a Value,
}

/// Why a judge gave no verdict; each is one line, without the key.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no API key: ${0} is not set")]
    NoKey(String),
    #[error("the judge cannot be reached: {0}")]
    Unreachable(String),
    #[error("the judge answered HTTP {status}: {body}")]
    Status { status: u16, body: String },
    #[error("the judge did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the judge's reply is over {MAX_REPLY} bytes")]
    TooLarge,
    #[error("the judge's reply is not a verdict: {0}")]
    Malformed(String),
    #[error("the model refused: {0}")]
    Refused(String),
}

/// The exact request a call sends (the key's header shown masked).
#[derive(Clone, Debug)]
pub struct Exchange {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

/// A judge, ready to call.
pub struct Judge {
    cfg: JudgeConfig,
    key: Option<String>,
    agent: std::sync::OnceLock<ureq::Agent>,
}

impl fmt::Debug for Judge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Judge")
            .field("cfg", &self.cfg)
            .field("key", &self.key.as_ref().map(|_| "***"))
            .finish()
    }
}

impl Judge {
    /// A judge with its key (read by the caller from `api_key_env`).
    pub fn new(mut cfg: JudgeConfig, key: Option<String>) -> Judge {
        cfg.timeout = cfg.timeout.min(CEILING);
        Judge {
            cfg,
            key: key.filter(|k| !k.is_empty()),
            agent: std::sync::OnceLock::new(),
        }
    }

    pub fn config(&self) -> &JudgeConfig {
        &self.cfg
    }

    /// The request a call would send, the key masked.
    pub fn exchange(&self, input: &Input<'_>) -> Exchange {
        let user = prompt::user_message(input.rule, input.rule_prompt, input.action);
        let mut headers: Vec<(String, String)> = provider::headers(&self.cfg)
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        if self.cfg.api_key_env.is_some() {
            let (name, _) = provider::key_header(&self.cfg, "");
            headers.push((name.to_owned(), "***".to_owned()));
        }
        Exchange {
            url: provider::url(&self.cfg),
            headers,
            body: provider::body(&self.cfg, prompt::SYSTEM, &user),
        }
    }

    /// Asks the model; retries inside the timeout.
    pub fn decide(&self, input: &Input<'_>) -> Result<Ruling, Error> {
        let started = Instant::now();
        let deadline = started + self.cfg.timeout;
        let key = match (&self.cfg.api_key_env, &self.key) {
            (Some(var), None) => return Err(Error::NoKey(var.clone())),
            (_, key) => key.as_deref(),
        };
        let exchange = self.exchange(input);
        let body = serde_json::to_vec(&exchange.body).unwrap_or_default();
        let mut backoff = Duration::from_millis(200);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout(self.cfg.timeout));
            }
            let wait = match self.send(&exchange, &body, key, left) {
                Ok(response) => {
                    let (verdict, usage) = provider::verdict(&self.cfg, &response)?;
                    return Ok(Ruling {
                        verdict,
                        usage,
                        model: self.cfg.model.clone(),
                        latency: started.elapsed(),
                        cached: false,
                    });
                }
                Err(Attempt::Final(e)) => return Err(e),
                Err(Attempt::Retry(e, after)) => {
                    // Retry-After is a least wait: `0` does not make a
                    // busy loop of the time left.
                    let wait = after.map_or(backoff, |after| after.max(backoff));
                    // No time for another try: this one's failure is the answer.
                    if wait + Duration::from_millis(50)
                        >= deadline.saturating_duration_since(Instant::now())
                    {
                        return Err(match (e, after) {
                            (Error::Status { status, body }, Some(after)) => Error::Status {
                                status,
                                body: format!(
                                    "{body} (it asked to retry after {}s, past the judge's timeout)",
                                    after.as_secs()
                                ),
                            },
                            (e, _) => e,
                        });
                    }
                    wait
                }
            };
            std::thread::sleep(wait);
            backoff = (backoff * 2).min(Duration::from_secs(4));
        }
    }

    fn agent(&self) -> &ureq::Agent {
        self.agent.get_or_init(|| {
            ureq::Agent::config_builder()
                .proxy(None)
                .max_redirects(0)
                .max_redirects_will_error(false)
                .http_status_as_error(false)
                .user_agent(concat!("aileron/", env!("CARGO_PKG_VERSION")))
                .build()
                .new_agent()
        })
    }

    fn send(
        &self,
        exchange: &Exchange,
        body: &[u8],
        key: Option<&str>,
        left: Duration,
    ) -> Result<Value, Attempt> {
        let mut req = self
            .agent()
            .post(&exchange.url)
            .config()
            .timeout_global(Some(left))
            .build();
        for (name, value) in provider::headers(&self.cfg) {
            req = req.header(name, value);
        }
        if let Some(key) = key {
            let (name, value) = provider::key_header(&self.cfg, key);
            req = req.header(name, value);
        }
        let mut response = match req.send(body) {
            Ok(r) => r,
            Err(e) => return Err(self.failed(e, key)),
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = match response
            .body_mut()
            .with_config()
            .limit(MAX_REPLY)
            .read_to_vec()
        {
            Ok(t) => t,
            Err(e) => return Err(self.failed(e, key)),
        };
        if !(200..=299).contains(&status) {
            let mut body: String = provider::one_line(&String::from_utf8_lossy(&text));
            if let Some(key) = key {
                // A provider may quote the key it refused.
                body = body.replace(key, "***");
            }
            let body = provider::clip(&body, 200);
            let e = Error::Status { status, body };
            return Err(if status == 429 || status >= 500 {
                Attempt::Retry(e, retry_after)
            } else {
                Attempt::Final(e)
            });
        }
        serde_json::from_slice(&text)
            .map_err(|_| Attempt::Final(Error::Malformed("the reply is not JSON".into())))
    }

    /// A request that got no HTTP answer, said in a line: a lost
    /// connection is worth another try; a name that does not resolve, a
    /// failed TLS handshake, a timeout or an oversized reply are not.
    fn failed(&self, e: ureq::Error, key: Option<&str>) -> Attempt {
        use std::io::ErrorKind;
        let unreachable = |why: String| {
            let mut why = provider::one_line(&why);
            if let Some(key) = key {
                why = why.replace(key, "***");
            }
            Error::Unreachable(provider::clip(&why, 300))
        };
        let tls = self.cfg.base_url.starts_with("https:");
        match e {
            ureq::Error::Timeout(_) => Attempt::Final(Error::Timeout(self.cfg.timeout)),
            ureq::Error::BodyExceedsLimit(_) => Attempt::Final(Error::TooLarge),
            ureq::Error::HostNotFound => Attempt::Final(unreachable(format!(
                "no address for `{}` (DNS)",
                self.host()
            ))),
            ureq::Error::Rustls(e) => Attempt::Final(unreachable(format!("TLS: {e}"))),
            ureq::Error::Tls(e) => Attempt::Final(unreachable(format!("TLS: {e}"))),
            ureq::Error::TlsRequired => {
                Attempt::Final(unreachable("TLS: the connection is not secured".into()))
            }
            ureq::Error::Io(io) => match io.kind() {
                // rustls reports a failed handshake as invalid data around
                // its own error.
                ErrorKind::InvalidData if tls && io.get_ref().is_some() => {
                    Attempt::Final(unreachable(format!("TLS: {io}")))
                }
                ErrorKind::TimedOut | ErrorKind::WouldBlock => {
                    Attempt::Final(Error::Timeout(self.cfg.timeout))
                }
                ErrorKind::ConnectionRefused => {
                    Attempt::Retry(unreachable("connection refused".into()), None)
                }
                ErrorKind::UnexpectedEof
                | ErrorKind::ConnectionReset
                | ErrorKind::ConnectionAborted
                | ErrorKind::BrokenPipe => Attempt::Retry(
                    unreachable("the connection closed before a reply".into()),
                    None,
                ),
                // The resolver's own failure (getaddrinfo's).
                _ if io.to_string().starts_with("failed to lookup address") => Attempt::Final(
                    unreachable(format!("no address for `{}` (DNS: {io})", self.host())),
                ),
                _ => Attempt::Retry(unreachable(io.to_string()), None),
            },
            e => Attempt::Retry(unreachable(e.to_string()), None),
        }
    }

    /// The host of the judge's URL, without any credentials in it.
    fn host(&self) -> &str {
        let url = &self.cfg.base_url;
        let rest = url.split_once("://").map_or(url.as_str(), |(_, r)| r);
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        // Without the port (an IPv6 address keeps its brackets).
        match host.rsplit_once(':') {
            Some((h, port)) if !h.is_empty() && !port.contains(']') => h,
            _ => host,
        }
    }
}

/// One try's failure: worth another try (after a wait), or not.
enum Attempt {
    Retry(Error, Option<Duration>),
    Final(Error),
}
