//! A compiled rule and the vocabulary of decisions.

use crate::diagnostic::Pos;
use crate::pattern::Matcher;
use serde::{Deserialize, Serialize};

/// What a rule (or the policy) decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Allow,
    Deny,
    /// A human decides.
    Ask,
    /// An LLM decides.
    Judge,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::Ask => "ask",
            Decision::Judge => "judge",
        }
    }

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
    Builtin = 1,
    Os = 2,
    Lang = 3,
    Profile = 4,
    Project = 5,
    User = 6,
    Database = 7,
    Session = 8,
}

impl Layer {
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
    pub plugin: Option<String>,
    pub profile: Option<String>,
    pub integration: Option<String>,
}

impl Scope {
    /// integration 4 + profile 2 + plugin 1.
    pub fn specificity(&self) -> u8 {
        4 * u8::from(self.integration.is_some())
            + 2 * u8::from(self.profile.is_some())
            + u8::from(self.plugin.is_some())
    }

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
    pub timeout: Option<u64>,
    pub on_timeout: Option<Decision>,
}

/// How a `judge` rule asks an LLM.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeSpec {
    pub model: Option<String>,
    pub prompt: Option<String>,
    pub cache_ttl: Option<u64>,
    pub fail_closed: bool,
}

impl Default for JudgeSpec {
    fn default() -> Self {
        JudgeSpec {
            model: None,
            prompt: None,
            cache_ttl: None,
            fail_closed: true,
        }
    }
}

/// Where a rule was written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    pub file: String,
    pub line: u32,
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
    pub id: String,
    /// False when the id was generated from the rule's place in its file.
    pub explicit_id: bool,
    pub description: Option<String>,
    pub decision: Decision,
    pub priority: i64,
    pub scope: Scope,
    pub enabled: bool,
    pub layer: Layer,
    pub origin: Origin,
    /// `override: ID` and where it was written.
    pub override_of: Option<(String, Pos)>,
    /// Built-in rules that nothing can cancel or outrank.
    pub structural: bool,
    /// The match fields as written, for explanations.
    pub pattern: String,
    pub matcher: Matcher,
    pub approver: Option<Approver>,
    pub judge: Option<JudgeSpec>,
    /// Position in the merged source order, lowest layer first; breaks ties.
    pub(crate) seq: u32,
}

impl Rule {
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
