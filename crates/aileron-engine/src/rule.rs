//! A compiled rule and the vocabulary of decisions.

use crate::diagnostic::Pos;
use crate::pattern::Matcher;
use serde::{Deserialize, Serialize};

/// What a rule (or the policy) decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Let it run.
    Allow,
    /// Refuse it.
    Deny,
    /// A human decides.
    Ask,
    /// An LLM decides.
    Judge,
}

impl Decision {
    /// The word rules, verdicts and the audit log use.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::Ask => "ask",
            Decision::Judge => "judge",
        }
    }

    /// The decision a word names.
    pub fn parse(s: &str) -> Option<Decision> {
        Some(match s {
            "allow" => Decision::Allow,
            "deny" => Decision::Deny,
            "ask" => Decision::Ask,
            "judge" => Decision::Judge,
            _ => return None,
        })
    }

    /// deny > ask > judge > allow: a compound line takes its most restrictive part.
    pub fn restrictiveness(self) -> u8 {
        match self {
            Decision::Allow => 0,
            Decision::Judge => 1,
            Decision::Ask => 2,
            Decision::Deny => 3,
        }
    }

    /// The bucket's default priority (SPEC 7).
    pub fn default_priority(self) -> i64 {
        match self {
            Decision::Allow => 50,
            Decision::Ask => 100,
            Decision::Judge => 120,
            Decision::Deny => 200,
        }
    }
}

/// Where a rule comes from, lowest first (SPEC 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// Rules compiled into Aileron.
    Builtin = 1,
    /// The operating system's profile.
    Os = 2,
    /// Profiles of the languages the project uses.
    Lang = 3,
    /// Profiles the project names.
    Profile = 4,
    /// The project's `aileron.yaml`.
    Project = 5,
    /// `~/.aileron/settings.yaml`.
    User = 6,
    /// Rules saved on the server.
    Database = 7,
    /// This session's "always" answers.
    Session = 8,
}

impl Layer {
    /// The layer as explanations name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Builtin => "builtin",
            Layer::Os => "os profile",
            Layer::Lang => "language profile",
            Layer::Profile => "profile",
            Layer::Project => "project",
            Layer::User => "user settings",
            Layer::Database => "database",
            Layer::Session => "session",
        }
    }
}

/// `scope: {plugin, profile, integration}`; an unset field is a wildcard.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scope {
    /// Only actions of this plugin.
    pub plugin: Option<String>,
    /// Only actions under this profile.
    pub profile: Option<String>,
    /// Only actions from this integration.
    pub integration: Option<String>,
}

impl Scope {
    /// integration 4 + profile 2 + plugin 1.
    pub fn specificity(&self) -> u8 {
        4 * u8::from(self.integration.is_some())
            + 2 * u8::from(self.profile.is_some())
            + u8::from(self.plugin.is_some())
    }

    /// Whether the rule applies to actions of `session`.
    pub fn admits(&self, session: &crate::action::Session) -> bool {
        let ok = |want: &Option<String>, have: &Option<String>| want.is_none() || want == have;
        ok(&self.plugin, &session.plugin)
            && ok(&self.profile, &session.profile)
            && ok(&self.integration, &session.integration)
    }
}

/// Who answers an `ask` rule and how long they get.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approver {
    /// `terminal`, `dashboard`, or a webhook approver's id.
    pub approver: Option<String>,
    /// Seconds to wait for an answer.
    pub timeout: Option<u64>,
    /// What no answer becomes.
    pub on_timeout: Option<Decision>,
}

/// How a `judge` rule asks an LLM.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeSpec {
    /// The judge it asks (`judges:`); `None`: `default`, or the only one.
    #[serde(default)]
    pub judge: Option<String>,
    /// The model to ask, in place of the judge's own.
    pub model: Option<String>,
    /// What to ask it, besides the action.
    pub prompt: Option<String>,
    /// How long its answer for the same action is kept, in seconds.
    pub cache_ttl: Option<u64>,
    /// Deny when the model cannot answer (the default).
    pub fail_closed: bool,
}

impl Default for JudgeSpec {
    fn default() -> Self {
        JudgeSpec {
            judge: None,
            model: None,
            prompt: None,
            cache_ttl: None,
            fail_closed: true,
        }
    }
}

/// A judge a policy defines (`judges: {NAME: {...}}`): a model that
/// decides the actions of `judge` rules.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgeDef {
    /// Its name in `judges:`.
    pub name: String,
    /// `openai` (any OpenAI-compatible server) or `anthropic`.
    pub provider: String,
    /// Where its API is.
    pub base_url: String,
    /// The model's name at the provider.
    pub model: String,
    /// The variable holding the API key; the key itself is never written.
    pub api_key_env: Option<String>,
    /// Seconds for a whole decision (at most 30).
    pub timeout: Option<u64>,
    /// Passed to the model.
    pub max_tokens: Option<u64>,
    /// Passed to the model.
    pub temperature: Option<f64>,
    /// Where it was defined.
    pub origin: Origin,
}

/// Where a rule was written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The source's display name.
    pub file: String,
    /// From 1; 0 for a rule not written in a file.
    pub line: u32,
    /// From 1.
    pub col: u32,
}

impl Origin {
    /// Where the rule starts, as a position.
    pub fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{}:{}:{}", self.file, self.line, self.col)
        }
    }
}

/// A rule ready to evaluate.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rule {
    /// Unique in the policy: overrides, explanations and the audit log name it.
    pub id: String,
    /// False when the id was generated from the rule's place in its file.
    pub explicit_id: bool,
    /// The reason given when it decides.
    pub description: Option<String>,
    /// What it decides.
    pub decision: Decision,
    /// Ranks first in evaluation order.
    pub priority: i64,
    /// Which sessions it applies to; a more specific scope ranks higher.
    pub scope: Scope,
    /// `enabled: false` keeps a rule written but out of evaluation.
    pub enabled: bool,
    /// Its source's layer.
    pub layer: Layer,
    /// Where it was written.
    pub origin: Origin,
    /// `override: ID` and where it was written.
    pub override_of: Option<(String, Pos)>,
    /// Built-in rules that nothing can cancel or outrank.
    pub structural: bool,
    /// The match fields as written, for explanations.
    pub pattern: String,
    /// The compiled match fields.
    pub matcher: Matcher,
    /// Who answers an ask rule.
    pub approver: Option<Approver>,
    /// How a judge rule asks.
    pub judge: Option<JudgeSpec>,
    /// Position in the merged source order, lowest layer first; breaks ties.
    pub(crate) seq: u32,
}

impl Rule {
    /// An enabled rule with its decision's default priority that matches nothing yet.
    pub fn new(id: String, decision: Decision, layer: Layer, origin: Origin) -> Rule {
        Rule {
            id,
            explicit_id: false,
            description: None,
            decision,
            priority: decision.default_priority(),
            scope: Scope::default(),
            enabled: true,
            layer,
            origin,
            override_of: None,
            structural: false,
            pattern: String::new(),
            matcher: Matcher::Any(Vec::new()),
            approver: None,
            judge: None,
            seq: 0,
        }
    }

    /// The sentence shown to the agent and the human.
    pub fn reason(&self) -> String {
        match &self.description {
            Some(d) => d.clone(),
            None if self.pattern.is_empty() => format!("rule {}", self.id),
            None => format!("matched `{}`", self.pattern),
        }
    }
}
