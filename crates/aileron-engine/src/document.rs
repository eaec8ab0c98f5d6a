//! One policy source (`aileron.yaml`, a profile, the user's settings, a rule
//! from the database) parsed and validated into rules, settings and tests.
//!
//! The key lists below are the schema: [`crate::schema`] publishes them as
//! JSON Schema and the parser rejects anything else with a position.

use crate::action::{Action, FieldPath};
use crate::diagnostic::{Diagnostic, Pos};
use crate::glob::Glob;
use crate::pattern::{self, Cond, Cx, Matcher};
use crate::rule::{Approver, Decision, JudgeDef, JudgeSpec, Layer, Origin, Rule, Scope};
use crate::suggest::did_you_mean;
use crate::yaml::{self, Key, Node, Value as Y};
use serde::{Deserialize, Serialize};

pub const TOP_KEYS: &[&str] = &[
    "version", "profiles", "default", "settings", "env", "judges", "allow", "ask", "judge", "deny",
    "tests",
];
pub const MATCH_KEYS: &[&str] = &["command", "binary", "args_contain", "working_dir", "when"];
pub const META_KEYS: &[&str] = &[
    "id",
    "description",
    "priority",
    "override",
    "enabled",
    "scope",
];
pub const ASK_KEYS: &[&str] = &["approver", "timeout", "on_timeout"];
pub const JUDGE_KEYS: &[&str] = &["judge", "model", "prompt", "cache_ttl", "fail_closed"];
/// Keys of a judge's definition in `judges:`.
pub const JUDGE_DEF_KEYS: &[&str] = &[
    "provider",
    "base_url",
    "model",
    "api_key_env",
    "timeout",
    "max_tokens",
    "temperature",
];
/// The providers a judge can use.
pub const JUDGE_PROVIDERS: &[&str] = &["openai", "anthropic"];
/// The longest a judge may take, seconds.
pub const JUDGE_MAX_TIMEOUT: u64 = 30;
pub const SETTINGS_KEYS: &[&str] = &[
    "ask_mode",
    "audit_log",
    "timeout",
    "on_timeout",
    "enforce",
    "proxy",
    "gateways",
];
/// Keys of `settings.enforce`.
pub const ENFORCE_KEYS: &[&str] = &["writable", "readable", "sockets"];
/// Keys of `settings.proxy`.
pub const PROXY_KEYS: &[&str] = &["inspect"];
/// The kinds of gateway `settings.gateways` starts.
pub const GATEWAY_KINDS: &[&str] = &["postgres"];
/// Keys of a `postgres` gateway.
pub const POSTGRES_GATEWAY_KEYS: &[&str] = &["upstream", "listen"];
pub const ENV_KEYS: &[&str] = &["scrub", "passthrough"];
pub const SCOPE_KEYS: &[&str] = &["plugin", "profile", "integration"];
pub const TEST_KEYS: &[&str] = &["name", "command", "action", "cwd", "expect", "rule"];
pub const DEFAULTS: &[&str] = &["allow", "deny", "ask", "deny_writes"];
pub const ASK_MODES: &[&str] = &["terminal", "ui"];

/// One policy source as text, and where it sits among the layers.
#[derive(Clone, Debug)]
pub struct Source {
    /// Display name: a path, or `<builtin>/lang/go`.
    pub name: String,
    /// The YAML (or JSON) text.
    pub text: String,
    /// Where its rules rank: a higher layer wins ties but never outranks a lower deny.
    pub layer: Layer,
    /// Directory relative `path` patterns, profiles and tests are relative to.
    pub base_dir: String,
}

/// What `default:` says when no rule matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DefaultPolicy {
    /// Allow everything no rule decides.
    Allow,
    /// Deny everything no rule decides.
    Deny,
    /// Ask a human about everything no rule decides (the default).
    Ask,
    /// Allow read actions, deny the rest.
    DenyWrites,
}

impl DefaultPolicy {
    /// The word `default:` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            DefaultPolicy::Allow => "allow",
            DefaultPolicy::Deny => "deny",
            DefaultPolicy::Ask => "ask",
            DefaultPolicy::DenyWrites => "deny_writes",
        }
    }
}

/// `settings:`; every field optional so layers can be merged last-writer-wins.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Where asks go when a rule names no approver.
    pub ask_mode: Option<AskMode>,
    /// The audit log's path, when not the default.
    pub audit_log: Option<String>,
    /// Seconds an ask waits for an answer.
    pub timeout: Option<u64>,
    /// What an unanswered ask becomes (allow or deny).
    pub on_timeout: Option<Decision>,
    /// `enforce.writable`: under `aileron launch`, places the agent's tree
    /// writes besides the project, the temporary directories, the agent's
    /// state and the caches (Landlock).
    pub writable: Option<Vec<String>>,
    /// `enforce.readable`: credential stores the box masks that the agent's
    /// tree may read after all (`~/` is the home directory).
    pub readable: Option<Vec<String>>,
    /// `enforce.sockets`: Unix sockets of the host the box closes that the
    /// agent's tree may connect to after all (`~/` is the home directory).
    pub sockets: Option<Vec<String>>,
    /// `proxy.inspect`: the hosts whose TLS the egress proxy opens to decide
    /// each request by method and URL (host globs; `all` for every host).
    /// Other tunnels are decided by host and port.
    pub proxy_inspect: Option<Vec<String>>,
    /// `gateways`: the gateways `aileron launch` starts with the session
    /// (the agent's tree is pointed at them).
    pub gateways: Option<Vec<Gateway>>,
}

/// A gateway `aileron launch` starts with its session (`settings.gateways`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Gateway {
    /// `aileron proxy postgres`.
    Postgres {
        /// The real server, `postgres://HOST:PORT`.
        upstream: String,
        /// Where the gateway listens (`IP:PORT`); none: a free port on 127.0.0.1.
        listen: Option<String>,
    },
}

/// Where a policy sends its asks (`settings.ask_mode`): every adapter asks
/// there, and a verdict names who answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AskMode {
    /// The terminal; an agent that asks its human itself is told `ask`.
    #[default]
    Terminal,
    /// The dashboard of `aileron serve`, even when the agent could ask.
    Ui,
}

impl AskMode {
    /// The word `settings.ask_mode` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            AskMode::Terminal => "terminal",
            AskMode::Ui => "ui",
        }
    }

    /// The mode named `s`, as `settings.ask_mode` writes it.
    pub fn parse(s: &str) -> Option<AskMode> {
        match s {
            "terminal" => Some(AskMode::Terminal),
            "ui" => Some(AskMode::Ui),
            _ => None,
        }
    }

    /// Who answers an ask whose rule names nobody: a verdict's `approver`.
    pub fn default_approver(self) -> &'static str {
        match self {
            AskMode::Terminal => "terminal",
            AskMode::Ui => "dashboard",
        }
    }
}

/// `env:` patterns for the launched agent's environment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvPolicy {
    /// Variables (globs) taken out of the agent's environment.
    pub scrub: Vec<String>,
    /// Variables kept even when a scrub pattern names them.
    pub passthrough: Vec<String>,
}

/// An example of `tests:`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TestCase {
    /// The source that holds the example.
    pub file: String,
    /// Where, for the report.
    pub pos: Pos,
    /// Shown instead of the input when given.
    pub name: Option<String>,
    /// What is decided.
    pub input: TestInput,
    /// Working directory for `command:` examples (default: the file's directory).
    pub cwd: String,
    /// The decision the example expects.
    pub expect: Decision,
    /// The rule that should decide it, when the example names one.
    pub rule: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
/// What an example of `tests:` decides.
pub enum TestInput {
    /// A shell line, decided as the shim would.
    Command(String),
    /// An Action, decided as an adapter's would be.
    Action(Box<Action>),
}

/// A parsed and validated source.
#[derive(Clone, Debug)]
pub struct Document {
    /// The source's display name.
    pub name: String,
    /// The layer its rules take.
    pub layer: Layer,
    /// Directory relative paths are relative to.
    pub base_dir: String,
    /// `profiles:` to load below it, with where each is named.
    pub profiles: Vec<(String, Pos)>,
    /// `default:`, when the source says.
    pub default: Option<DefaultPolicy>,
    /// `settings:`.
    pub settings: Settings,
    /// `env:`.
    pub env: EnvPolicy,
    /// The rules, in the order written.
    pub rules: Vec<Rule>,
    /// `tests:`.
    pub tests: Vec<TestCase>,
    /// `judges:`, in the order written.
    pub judges: Vec<JudgeDef>,
}

/// Parses and validates one source. All problems are reported, not just the first.
pub fn parse_document(source: &Source, home: &str) -> Result<Document, Vec<Diagnostic>> {
    let root = yaml::parse(&source.name, &source.text).map_err(|d| vec![d])?;
    let mut errors = Vec::new();
    let mut p = Parser {
        cx: Cx {
            file: &source.name,
            text: &source.text,
            base_dir: &source.base_dir,
            home,
            errors: &mut errors,
        },
        layer: source.layer,
    };
    let mut doc = Document {
        name: source.name.clone(),
        layer: source.layer,
        base_dir: source.base_dir.clone(),
        profiles: Vec::new(),
        default: None,
        settings: Settings::default(),
        env: EnvPolicy::default(),
        rules: Vec::new(),
        tests: Vec::new(),
        judges: Vec::new(),
    };
    if let Some(entries) = p.map(&root, "the policy file", TOP_KEYS) {
        for (key, value) in entries {
            match key.name.as_str() {
                "version" => match value.value {
                    Y::Int(1) => {}
                    _ => p.err(
                        value.pos,
                        "unsupported `version`; this aileron reads version 1",
                    ),
                },
                "profiles" => doc.profiles = p.strings(value, "profiles").into_iter().collect(),
                "default" => {
                    doc.default = p.one_of(value, "default", DEFAULTS).map(|d| match d {
                        "allow" => DefaultPolicy::Allow,
                        "deny" => DefaultPolicy::Deny,
                        "ask" => DefaultPolicy::Ask,
                        _ => DefaultPolicy::DenyWrites,
                    })
                }
                "settings" => doc.settings = p.settings(value),
                "env" => doc.env = p.env(value),
                "judges" => doc.judges = p.judges(value),
                "allow" => p.bucket(value, Decision::Allow, &mut doc.rules),
                "ask" => p.bucket(value, Decision::Ask, &mut doc.rules),
                "judge" => p.bucket(value, Decision::Judge, &mut doc.rules),
                "deny" => p.bucket(value, Decision::Deny, &mut doc.rules),
                "tests" => doc.tests = p.tests(value),
                _ => {} // reported by map()
            }
        }
    }
    if errors.is_empty() {
        Ok(doc)
    } else {
        Err(errors)
    }
}

/// Parses one rule given as JSON or YAML (`{decision: deny, when: ...}`), as
/// the server's API stores them. Same validation and messages as a file.
pub fn parse_rule(source: &Source, home: &str) -> Result<Rule, Vec<Diagnostic>> {
    let root = yaml::parse(&source.name, &source.text).map_err(|d| vec![d])?;
    let mut errors = Vec::new();
    let mut p = Parser {
        cx: Cx {
            file: &source.name,
            text: &source.text,
            base_dir: &source.base_dir,
            home,
            errors: &mut errors,
        },
        layer: source.layer,
    };
    let mut rule = None;
    if let Y::Map(entries) = &root.value {
        let decision = entries.iter().find(|(k, _)| k.name == "decision");
        match decision {
            None => p.err(
                root.pos,
                "a rule needs `decision`: one of allow, ask, judge, deny",
            ),
            Some((_, d)) => {
                if let Some(decision) = p.one_of(d, "decision", &["allow", "ask", "judge", "deny"])
                {
                    let decision = Decision::parse(decision).expect("checked");
                    let rest = Node {
                        value: Y::Map(
                            entries
                                .iter()
                                .filter(|(k, _)| k.name != "decision")
                                .cloned()
                                .collect(),
                        ),
                        pos: root.pos,
                    };
                    rule = p.rule(&rest, decision, 0);
                }
            }
        }
    } else {
        p.err(
            root.pos,
            format!("expected a rule mapping, found {}", root.kind()),
        );
    }
    match rule {
        Some(r) if errors.is_empty() => Ok(r),
        _ => Err(errors),
    }
}

struct Parser<'a> {
    cx: Cx<'a>,
    layer: Layer,
}

impl Parser<'_> {
    fn err(&mut self, pos: Pos, msg: impl Into<String>) {
        self.cx.error(pos, msg);
    }

    /// A mapping whose keys must all be in `allowed`.
    fn map<'n>(
        &mut self,
        node: &'n Node,
        what: &str,
        allowed: &[&str],
    ) -> Option<&'n [(Key, Node)]> {
        let Y::Map(entries) = &node.value else {
            self.err(
                node.pos,
                format!("{what} must be a mapping, found {}", node.kind()),
            );
            return None;
        };
        for (k, _) in entries {
            if !allowed.contains(&k.name.as_str()) {
                let hint = did_you_mean(&k.name, allowed);
                self.err(
                    k.pos,
                    format!(
                        "unknown key `{}` in {what}{hint}; expected one of: {}",
                        k.name,
                        allowed.join(", ")
                    ),
                );
            }
        }
        Some(entries)
    }

    fn string(&mut self, node: &Node, what: &str) -> Option<String> {
        match &node.value {
            Y::Str(s) => Some(s.clone()),
            _ => {
                self.err(
                    node.pos,
                    format!("`{what}` must be a string, found {}", node.kind()),
                );
                None
            }
        }
    }

    fn strings(&mut self, node: &Node, what: &str) -> Vec<(String, Pos)> {
        let Y::Seq(items) = &node.value else {
            self.err(
                node.pos,
                format!("`{what}` must be a list of strings, found {}", node.kind()),
            );
            return Vec::new();
        };
        items
            .iter()
            .filter_map(|i| self.string(i, what).map(|s| (s, i.pos)))
            .collect()
    }

    fn one_of<'v>(&mut self, node: &Node, what: &str, allowed: &[&'v str]) -> Option<&'v str> {
        let s = self.string(node, what)?;
        match allowed.iter().find(|a| **a == s) {
            Some(a) => Some(a),
            None => {
                let hint = did_you_mean(&s, allowed);
                self.err(
                    node.pos,
                    format!(
                        "invalid `{what}` value `{s}`{hint}; expected one of: {}",
                        allowed.join(", ")
                    ),
                );
                None
            }
        }
    }

    fn int(&mut self, node: &Node, what: &str, min: i64) -> Option<i64> {
        match node.value {
            Y::Int(i) if i >= min => Some(i),
            Y::Int(_) => {
                self.err(node.pos, format!("`{what}` must be at least {min}"));
                None
            }
            _ => {
                self.err(
                    node.pos,
                    format!("`{what}` must be an integer, found {}", node.kind()),
                );
                None
            }
        }
    }

    fn bool(&mut self, node: &Node, what: &str) -> Option<bool> {
        match node.value {
            Y::Bool(b) => Some(b),
            _ => {
                self.err(
                    node.pos,
                    format!("`{what}` must be true or false, found {}", node.kind()),
                );
                None
            }
        }
    }

    fn settings(&mut self, node: &Node) -> Settings {
        let mut s = Settings::default();
        for (k, v) in self
            .map(node, "`settings`", SETTINGS_KEYS)
            .unwrap_or_default()
        {
            match k.name.as_str() {
                "ask_mode" => {
                    s.ask_mode = self
                        .one_of(v, "ask_mode", ASK_MODES)
                        .and_then(AskMode::parse)
                }
                "audit_log" => s.audit_log = self.string(v, "audit_log"),
                "timeout" => s.timeout = self.int(v, "timeout", 1).map(|t| t as u64),
                "on_timeout" => {
                    s.on_timeout = self
                        .one_of(v, "on_timeout", &["allow", "deny"])
                        .and_then(Decision::parse)
                }
                "proxy" => {
                    for (k, v) in self
                        .map(v, "`settings.proxy`", PROXY_KEYS)
                        .unwrap_or_default()
                    {
                        if k.name == "inspect" {
                            s.proxy_inspect = Some(self.inspect_hosts(v));
                        }
                    }
                }
                "gateways" => s.gateways = Some(self.gateways(v)),
                "enforce" => {
                    for (k, v) in self
                        .map(v, "`settings.enforce`", ENFORCE_KEYS)
                        .unwrap_or_default()
                    {
                        let paths = Some(
                            self.strings(v, k.name.as_str())
                                .into_iter()
                                .map(|(p, _)| p)
                                .collect(),
                        );
                        match k.name.as_str() {
                            "writable" => s.writable = paths,
                            "readable" => s.readable = paths,
                            "sockets" => s.sockets = paths,
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        s
    }

    /// `settings.gateways`: a list of `{postgres: {upstream: URL, listen: IP:PORT}}`.
    fn gateways(&mut self, node: &Node) -> Vec<Gateway> {
        let Y::Seq(items) = &node.value else {
            self.err(
                node.pos,
                format!(
                    "`gateways` must be a list such as `[{{postgres: {{upstream: \"postgres://127.0.0.1:5432\"}}}}]`, found {}",
                    node.kind()
                ),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items {
            let Some(entries) = self.map(item, "a gateway", GATEWAY_KINDS) else {
                continue;
            };
            if entries.len() != 1 {
                self.err(
                    item.pos,
                    format!(
                        "a gateway names one kind ({}), found {}",
                        GATEWAY_KINDS.join(", "),
                        entries.len()
                    ),
                );
                continue;
            }
            let (kind, v) = &entries[0];
            if kind.name != "postgres" {
                continue;
            }
            let (mut upstream, mut listen, mut bad) = (None, None, false);
            for (k, v) in self
                .map(v, "a `postgres` gateway", POSTGRES_GATEWAY_KEYS)
                .unwrap_or_default()
            {
                let known = POSTGRES_GATEWAY_KEYS.contains(&k.name.as_str());
                let Some(text) = known.then(|| self.string(v, &k.name)).flatten() else {
                    bad = true;
                    continue;
                };
                if k.name == "upstream" {
                    let rest = text
                        .strip_prefix("postgres://")
                        .or_else(|| text.strip_prefix("postgresql://"));
                    if rest.is_none_or(|r| r.is_empty() || r.starts_with(['/', '?'])) {
                        self.err(
                            v.pos,
                            format!("invalid `upstream` `{text}`; expected postgres://HOST:PORT"),
                        );
                        bad = true;
                    }
                    upstream = Some(text);
                } else if k.name == "listen" {
                    if text.parse::<std::net::SocketAddr>().is_err() {
                        self.err(
                            v.pos,
                            format!(
                                "invalid `listen` `{text}`; expected IP:PORT such as 127.0.0.1:0"
                            ),
                        );
                        bad = true;
                    }
                    listen = Some(text);
                }
            }
            match upstream {
                Some(upstream) if !bad => out.push(Gateway::Postgres { upstream, listen }),
                None if !bad => self.err(
                    kind.pos,
                    "a `postgres` gateway needs `upstream: postgres://HOST:PORT`".to_owned(),
                ),
                _ => {}
            }
        }
        out
    }

    /// `settings.proxy.inspect`: `all`, or a list of host globs.
    fn inspect_hosts(&mut self, node: &Node) -> Vec<String> {
        if let Y::Str(s) = &node.value {
            if s == "all" {
                return vec!["*".to_owned()];
            }
            self.err(
                node.pos,
                format!("invalid `inspect` value `{s}`; expected `all` or a list of host globs"),
            );
            return Vec::new();
        }
        let hosts = self.strings(node, "inspect");
        for (h, pos) in &hosts {
            if h.is_empty() || h.contains(['/', ' ', ':']) {
                self.err(
                    *pos,
                    format!(
                        "invalid host pattern `{h}` in `inspect`; expected a host name glob such as `api.example.com` or `*.example.com`"
                    ),
                );
            }
        }
        hosts
            .into_iter()
            .map(|(h, _)| h.to_ascii_lowercase())
            .collect()
    }

    fn judges(&mut self, node: &Node) -> Vec<JudgeDef> {
        let mut out = Vec::new();
        let Y::Map(entries) = &node.value else {
            self.err(
                node.pos,
                format!("`judges` must be a mapping, found {}", node.kind()),
            );
            return out;
        };
        for (name, def) in entries {
            if let Some(j) = self.judge_def(&name.name, name.pos, def) {
                out.push(j);
            }
        }
        out
    }

    fn judge_def(&mut self, name: &str, at: Pos, node: &Node) -> Option<JudgeDef> {
        let what = format!("judge `{name}`");
        let entries = self.map(node, &what, JUDGE_DEF_KEYS)?;
        let mut j = JudgeDef {
            name: name.to_owned(),
            provider: String::new(),
            base_url: String::new(),
            model: String::new(),
            api_key_env: None,
            timeout: None,
            max_tokens: None,
            temperature: None,
            origin: Origin {
                file: self.cx.file.to_owned(),
                line: at.line,
                col: at.col,
            },
        };
        for (k, v) in entries {
            match k.name.as_str() {
                "provider" => {
                    j.provider = self
                        .one_of(v, "provider", JUDGE_PROVIDERS)
                        .unwrap_or_default()
                        .to_owned()
                }
                "base_url" => {
                    let url = self.string(v, "base_url").unwrap_or_default();
                    if !(url.starts_with("http://") || url.starts_with("https://")) {
                        self.err(v.pos, "`base_url` must be an http:// or https:// URL");
                    }
                    j.base_url = url;
                }
                "model" => j.model = self.string(v, "model").unwrap_or_default(),
                "api_key_env" => {
                    let var = self.string(v, "api_key_env").unwrap_or_default();
                    let is_name = var
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                        && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    if !is_name {
                        self.err(
                            v.pos,
                            "`api_key_env` names the environment variable that holds the key (OPENAI_API_KEY), never the key itself",
                        );
                    }
                    j.api_key_env = Some(var);
                }
                "timeout" => {
                    let t = self.int(v, "timeout", 1).map(|t| t as u64);
                    if t.is_some_and(|t| t > JUDGE_MAX_TIMEOUT) {
                        self.err(
                            v.pos,
                            format!("a judge's `timeout` is at most {JUDGE_MAX_TIMEOUT} seconds"),
                        );
                    }
                    j.timeout = t;
                }
                "max_tokens" => j.max_tokens = self.int(v, "max_tokens", 1).map(|t| t as u64),
                "temperature" => match v.value {
                    Y::Int(i) if (0..=2).contains(&i) => j.temperature = Some(i as f64),
                    Y::Float(f) if (0.0..=2.0).contains(&f) => j.temperature = Some(f),
                    _ => self.err(v.pos, "`temperature` must be a number from 0 to 2"),
                },
                _ => {}
            }
        }
        if !entries.iter().any(|(k, _)| k.name == "provider") {
            self.err(
                node.pos,
                format!(
                    "{what} needs `provider`: one of {}",
                    JUDGE_PROVIDERS.join(", ")
                ),
            );
        }
        if !entries.iter().any(|(k, _)| k.name == "model") {
            self.err(node.pos, format!("{what} needs `model`"));
        }
        if j.base_url.is_empty() {
            j.base_url = match j.provider.as_str() {
                "anthropic" => "https://api.anthropic.com".into(),
                _ => "https://api.openai.com/v1".into(),
            };
        }
        Some(j)
    }

    fn env(&mut self, node: &Node) -> EnvPolicy {
        let mut e = EnvPolicy::default();
        for (k, v) in self.map(node, "`env`", ENV_KEYS).unwrap_or_default() {
            let list = self
                .strings(v, &k.name)
                .into_iter()
                .map(|(s, _)| s)
                .collect();
            if k.name == "scrub" {
                e.scrub = list
            } else {
                e.passthrough = list
            }
        }
        e
    }

    fn bucket(&mut self, node: &Node, decision: Decision, out: &mut Vec<Rule>) {
        let Y::Seq(items) = &node.value else {
            self.err(
                node.pos,
                format!(
                    "`{}` must be a list of rules, found {}",
                    decision.as_str(),
                    node.kind()
                ),
            );
            return;
        };
        for (i, item) in items.iter().enumerate() {
            if let Some(rule) = self.rule(item, decision, i) {
                out.push(rule);
            }
        }
    }

    fn rule(&mut self, node: &Node, decision: Decision, index: usize) -> Option<Rule> {
        let before = self.cx.errors.len();
        let origin = Origin {
            file: self.cx.file.to_owned(),
            line: node.pos.line,
            col: node.pos.col,
        };
        let mut rule = Rule::new(
            format!("{}:{}[{index}]", self.cx.file, decision.as_str()),
            decision,
            self.layer,
            origin,
        );
        match &node.value {
            Y::Str(cmd) => {
                rule.matcher = shell_command_matcher(vec![command_cond(cmd)]);
                rule.pattern = cmd.clone();
                return Some(rule);
            }
            Y::Map(_) => {}
            _ => {
                self.err(
                    node.pos,
                    format!(
                        "a rule is a command glob string or a mapping, found {}",
                        node.kind()
                    ),
                );
                return None;
            }
        }
        let mut allowed: Vec<&str> = [MATCH_KEYS, META_KEYS].concat();
        match decision {
            Decision::Ask => allowed.extend(ASK_KEYS),
            Decision::Judge => allowed.extend(JUDGE_KEYS),
            _ => {}
        }
        let article = if matches!(decision, Decision::Allow | Decision::Ask) {
            "an"
        } else {
            "a"
        };
        let what = format!("{article} `{}` rule", decision.as_str());
        let entries = self.map(node, &what, &allowed)?;
        let mut shell_conds = Vec::new();
        let mut when = None;
        let mut pattern_text = Vec::new();
        for (k, v) in entries {
            match k.name.as_str() {
                "id" => {
                    if let Some(id) = self.string(v, "id") {
                        if id.trim().is_empty() {
                            self.err(v.pos, "`id` must not be empty");
                        }
                        rule.id = id;
                        rule.explicit_id = true;
                    }
                }
                "description" => rule.description = self.string(v, "description"),
                "priority" => {
                    rule.priority = self.int(v, "priority", i64::MIN).unwrap_or(rule.priority)
                }
                "override" => rule.override_of = self.string(v, "override").map(|s| (s, v.pos)),
                "enabled" => rule.enabled = self.bool(v, "enabled").unwrap_or(true),
                "scope" => rule.scope = self.scope(v),
                "command" => {
                    if let Some(c) = self.string(v, "command") {
                        pattern_text.push(format!("command: {c}"));
                        shell_conds.push(command_cond(&c));
                    }
                }
                "binary" => {
                    if let Some(b) = self.string(v, "binary") {
                        pattern_text.push(format!("binary: {b}"));
                        shell_conds.push(Matcher::Field(
                            shell_path("binary"),
                            Cond::Glob(Glob::plain(&b)),
                        ));
                    }
                }
                "args_contain" => {
                    if let Some(a) = self.string(v, "args_contain") {
                        pattern_text.push(format!("args_contain: {a}"));
                        shell_conds.push(Matcher::Field(
                            shell_path("args"),
                            Cond::Contains {
                                lower: a.to_lowercase(),
                                value: a.into(),
                            },
                        ));
                    }
                }
                "working_dir" => {
                    if let Some(w) = self.string(v, "working_dir") {
                        pattern_text.push(format!("working_dir: {w}"));
                        let w = match w.strip_prefix("~/") {
                            Some(rest) => format!("{}/{rest}", self.cx.home),
                            None => w,
                        };
                        shell_conds.push(Matcher::Field(
                            shell_path("working_dir"),
                            Cond::Glob(Glob::command(&w)),
                        ));
                    }
                }
                "when" => {
                    when = pattern::parse_matcher(v, &mut self.cx);
                    pattern_text.push(format!("when: {}", compact(v)));
                }
                "approver" => {
                    let a = self.string(v, "approver");
                    rule.approver.get_or_insert_with(Approver::default).approver = a;
                }
                "timeout" => {
                    let t = self.int(v, "timeout", 1).map(|t| t as u64);
                    rule.approver.get_or_insert_with(Approver::default).timeout = t;
                }
                "on_timeout" => {
                    let d = self
                        .one_of(v, "on_timeout", &["allow", "deny"])
                        .and_then(Decision::parse);
                    rule.approver
                        .get_or_insert_with(Approver::default)
                        .on_timeout = d;
                }
                "judge" => {
                    rule.judge.get_or_insert_with(JudgeSpec::default).judge =
                        self.string(v, "judge")
                }
                "model" => {
                    rule.judge.get_or_insert_with(JudgeSpec::default).model =
                        self.string(v, "model")
                }
                "prompt" => {
                    rule.judge.get_or_insert_with(JudgeSpec::default).prompt =
                        self.string(v, "prompt")
                }
                "cache_ttl" => {
                    let t = self.int(v, "cache_ttl", 0).map(|t| t as u64);
                    rule.judge.get_or_insert_with(JudgeSpec::default).cache_ttl = t;
                }
                "fail_closed" => {
                    let f = self.bool(v, "fail_closed").unwrap_or(true);
                    rule.judge
                        .get_or_insert_with(JudgeSpec::default)
                        .fail_closed = f;
                }
                _ => {}
            }
        }
        if decision == Decision::Judge {
            rule.judge.get_or_insert_with(JudgeSpec::default);
        }
        let has_override_only =
            rule.override_of.is_some() && shell_conds.is_empty() && when.is_none();
        rule.matcher = match (shell_conds.is_empty(), when) {
            (true, None) if self.cx.errors.len() == before && !has_override_only => {
                self.err(
                    node.pos,
                    format!(
                        "this rule matches nothing: give at least one of {}",
                        MATCH_KEYS.join(", ")
                    ),
                );
                return None;
            }
            (true, None) => Matcher::Any(Vec::new()),
            (true, Some(w)) => w,
            (false, Some(w))
                if w.required_types()
                    .is_some_and(|t| !t.iter().any(|t| t == "shell.exec")) =>
            {
                self.err(
                    node.pos,
                    "this rule can never match: `command`, `binary`, `args_contain` and `working_dir` apply to shell commands (type shell.exec), but `when` requires another type",
                );
                return None;
            }
            (false, w) => {
                let mut m = shell_conds;
                m.extend(w);
                shell_command_matcher(m)
            }
        };
        rule.pattern = pattern_text.join(", ");
        (self.cx.errors.len() == before).then_some(rule)
    }

    fn scope(&mut self, node: &Node) -> Scope {
        let mut s = Scope::default();
        for (k, v) in self.map(node, "`scope`", SCOPE_KEYS).unwrap_or_default() {
            let val = self.string(v, &k.name);
            match k.name.as_str() {
                "plugin" => s.plugin = val,
                "profile" => s.profile = val,
                _ => s.integration = val,
            }
        }
        s
    }

    fn tests(&mut self, node: &Node) -> Vec<TestCase> {
        let Y::Seq(items) = &node.value else {
            self.err(
                node.pos,
                format!("`tests` must be a list of examples, found {}", node.kind()),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for item in items {
            let Some(entries) = self.map(item, "a test", TEST_KEYS) else {
                continue;
            };
            let (mut input, mut expect, mut rule, mut name, mut cwd) =
                (None, None, None, None, None);
            for (k, v) in entries {
                match k.name.as_str() {
                    "name" => name = self.string(v, "name"),
                    "command" => input = self.string(v, "command").map(TestInput::Command),
                    "action" => match serde_json::from_value::<Action>(v.to_json()) {
                        Ok(a) => input = Some(TestInput::Action(Box::new(a))),
                        Err(e) => self.err(v.pos, format!("invalid action: {e}")),
                    },
                    "cwd" => cwd = self.string(v, "cwd"),
                    "expect" => {
                        expect = self
                            .one_of(v, "expect", &["allow", "deny", "ask", "judge"])
                            .and_then(Decision::parse)
                    }
                    "rule" => rule = self.string(v, "rule"),
                    _ => {}
                }
            }
            let has = |k: &str| entries.iter().any(|(key, _)| key.name == k);
            if has("command") == has("action") {
                self.err(
                    item.pos,
                    "a test needs exactly one of `command` (a shell line) or `action` (an Action)",
                );
            } else if !has("expect") {
                self.err(
                    item.pos,
                    "a test needs `expect`: one of allow, deny, ask, judge",
                );
            }
            if let (Some(input), Some(expect)) = (input, expect) {
                let cwd = cwd.map_or_else(
                    || self.cx.base_dir.to_owned(),
                    |c| crate::paths::absolute(&c, self.cx.base_dir, Some(self.cx.home)),
                );
                out.push(TestCase {
                    file: self.cx.file.to_owned(),
                    pos: item.pos,
                    name,
                    input,
                    cwd,
                    expect,
                    rule,
                });
            }
        }
        out
    }
}

fn shell_path(field: &str) -> FieldPath {
    FieldPath::Facet(vec!["shell".to_owned(), field.to_owned()])
}

fn command_cond(glob: &str) -> Matcher {
    Matcher::Field(shell_path("command"), Cond::Glob(Glob::command(glob)))
}

/// ADR match fields apply to shell commands only.
fn shell_command_matcher(mut conds: Vec<Matcher>) -> Matcher {
    conds.insert(
        0,
        Matcher::Field(FieldPath::Type, Cond::Equals("shell.exec".into())),
    );
    Matcher::All(conds)
}

/// A one-line rendering of a `when:` tree for explanations.
fn compact(node: &Node) -> String {
    node.to_json().to_string()
}
