//! Evaluation (SPEC 7): the first rule, in priority / specificity / layer
//! order, whose scope admits the session and whose matcher holds decides;
//! no rule can outrank a matching deny of a lower layer; a shell line is
//! decided by its most restrictive command.

use crate::action::{Action, ActionType, FieldPath, Lookup};
use crate::command_line::{LineContext, shell_actions};
use crate::document::DefaultPolicy;
use crate::pattern::{Cond, History, Matcher};
use crate::policy::{KeyedIndex, Policy, rank_order};
use crate::rule::{Decision, Layer, Origin, Rule};
use aileron_shell::Sensitivity;
use serde::Serialize;
use serde_json::Value;

/// What the engine knows about the session besides the policy.
#[derive(Clone, Copy, Debug, Default)]
pub struct State<'a> {
    /// The session's "always" answers: allow rules of layer 8.
    pub approvals: &'a [Rule],
    /// Earlier actions of the session, for `rate`.
    pub history: &'a [Action],
}

/// Who or what reached a verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictSource {
    /// A rule of the policy's files or the database.
    Static,
    /// No rule matched: `default:` decided.
    Default,
    /// A built-in rule.
    Builtin,
    /// A human answered an ask.
    Human,
    /// A judge model answered.
    Llm,
    /// An "always" answer of this session.
    Session,
}

impl VerdictSource {
    /// The form the audit log and the API use.
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictSource::Static => "static",
            VerdictSource::Default => "default",
            VerdictSource::Builtin => "builtin",
            VerdictSource::Human => "human",
            VerdictSource::Llm => "llm",
            VerdictSource::Session => "session",
        }
    }
}

/// The outcome for one action.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// What happens to the action.
    pub decision: Decision,
    /// Who or what decided, for the audit log.
    pub source: VerdictSource,
    /// The deciding rule's id; `None` for the default.
    pub rule: Option<String>,
    /// The sentence shown to the agent and the human.
    pub reason: String,
    /// Who answers an `ask` (`terminal`, `dashboard`, a webhook id) or the judge's model.
    pub approver: Option<String>,
}

/// One rule that matched, for explanations.
#[derive(Clone, Debug, Serialize)]
pub struct RuleMatch {
    /// The rule's id.
    pub id: String,
    /// What it decides.
    pub decision: Decision,
    /// Its priority (ranks first).
    pub priority: i64,
    /// How specific its scope is (ranks second).
    pub specificity: u8,
    /// Its layer (ranks third).
    pub layer: Layer,
    /// Where it was written.
    pub origin: Origin,
    /// Its match fields as written.
    pub pattern: String,
    /// Its description, if any.
    pub description: Option<String>,
}

/// A verdict with the reasoning behind it.
#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    /// The verdict explained.
    pub verdict: Verdict,
    /// How many rules applied to this action's type and scope.
    pub considered: usize,
    /// Every rule that matched, in evaluation order.
    pub matched: Vec<RuleMatch>,
    /// Why the winner won, in people's words.
    pub why: String,
}

/// The outcome for one simple command of a line.
#[derive(Clone, Debug, Serialize)]
pub struct CommandVerdict {
    /// The command as the analysis reads it.
    pub command: String,
    /// The `shell.exec` action it was decided as.
    pub action: Action,
    /// The command it was found inside (`$(...)`, `bash -c`), by index.
    pub parent: Option<usize>,
    /// What the analysis noticed about it.
    pub notes: Vec<String>,
    /// Its own verdict, its files' included.
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    /// Why, when the line was explained.
    pub explanation: Option<Explanation>,
    /// The files the command reads or writes that a rule decides (with
    /// an explanation only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileVerdict>,
}

/// A file a shell command reads or writes, decided as the `fs.*` action
/// an agent's file tool would raise for it.
#[derive(Clone, Debug, Serialize)]
pub struct FileVerdict {
    /// `read PATH` or `write PATH`.
    pub access: String,
    /// How the policy decides that file.
    pub verdict: Verdict,
}

/// The outcome for a whole shell line.
#[derive(Clone, Debug, Serialize)]
pub struct LineVerdict {
    /// The most restrictive command's verdict.
    pub verdict: Verdict,
    /// Index of the command whose verdict is the line's.
    pub decisive: Option<usize>,
    /// Every simple command, in the order found.
    pub commands: Vec<CommandVerdict>,
    /// Why the line could not be analysed, if so.
    pub opaque: Option<String>,
}

const UNPARSABLE_RULE: &str = "builtin:unparsable";

/// The lowest layer whose rules decide the files of a shell command.
const FILE_RULES_FROM: Layer = Layer::Os;

enum Winner<'p> {
    Rule(&'p Rule),
    Default,
}

impl Policy {
    /// Decides one action.
    pub fn evaluate(&self, action: &Action, state: &State<'_>) -> Verdict {
        let winner = self.decide(action, state, None);
        let verdict = self.verdict_of(winner, action);
        let verdict = self.by_file_name(action, state, verdict);
        self.by_files_searched(action, state, verdict)
    }

    /// Decides one action and says why.
    pub fn explain(&self, action: &Action, state: &State<'_>) -> Explanation {
        let mut matched = Vec::new();
        let mut considered = 0;
        let winner = self.decide(action, state, Some((&mut matched, &mut considered)));
        let why = self.why(&winner, &matched);
        let verdict = self.verdict_of(winner, action);
        let verdict = self.by_file_name(action, state, verdict);
        let verdict = self.by_files_searched(action, state, verdict);
        Explanation {
            verdict,
            considered,
            matched: matched.iter().map(|r| rule_match(r)).collect(),
            why,
        }
    }

    /// A program given by its path (`/usr/bin/touch x`) is also decided as
    /// named by its file (`touch x`), and a rule written for that name that
    /// denies, asks or judges holds when it is stricter. An allow written
    /// for the name does not vouch for whatever file sits at the path.
    fn by_file_name(&self, action: &Action, state: &State<'_>, verdict: Verdict) -> Verdict {
        let Some(named) = named_by_file(action) else {
            return verdict;
        };
        let winner = self.decide(&named, state, None);
        if matches!(winner, Winner::Default) {
            return verdict;
        }
        let other = self.verdict_of(winner, &named);
        if other.decision != Decision::Allow
            && other.decision.restrictiveness() > verdict.decision.restrictiveness()
        {
            other
        } else {
            verdict
        }
    }

    /// An agent's search tool (`Grep`, `grep_search`: `fs.read` with op
    /// `search`) reads every file below its path, so it is also decided as
    /// the pattern `DIR/**`, as a recursive `grep` in the shell is.
    fn by_files_searched(&self, action: &Action, state: &State<'_>, verdict: Verdict) -> Verdict {
        if action.kind != ActionType::FsRead || action.facet_str("fs", "op") != Some("search") {
            return verdict;
        }
        let Some(dir) = action.facet_str("fs", "path") else {
            return verdict;
        };
        let mut below = action.clone();
        below.facets.insert(
            "fs".into(),
            serde_json::json!({"path": format!("{}/**", dir.trim_end_matches('/')), "op": "search"}),
        );
        match self.file_verdict(&below, state) {
            Some(v) if v.decision.restrictiveness() > verdict.decision.restrictiveness() => v,
            _ => verdict,
        }
    }

    /// Decides a shell line by its most restrictive command.
    pub fn evaluate_line(
        &self,
        line: &str,
        cx: &LineContext<'_>,
        state: &State<'_>,
    ) -> LineVerdict {
        self.line(line, cx, state, false)
    }

    /// Like [`Policy::evaluate_line`], with an explanation per command.
    pub fn explain_line(&self, line: &str, cx: &LineContext<'_>, state: &State<'_>) -> LineVerdict {
        self.line(line, cx, state, true)
    }

    fn line(
        &self,
        line: &str,
        cx: &LineContext<'_>,
        state: &State<'_>,
        explain: bool,
    ) -> LineVerdict {
        let lowered = shell_actions(line, cx, &self.environment.home);
        let mut commands = Vec::with_capacity(lowered.actions.len());
        for (((action, parent), notes), accesses) in lowered
            .actions
            .into_iter()
            .zip(lowered.parents)
            .zip(lowered.notes)
            .zip(lowered.files)
        {
            let (mut verdict, explanation) = if explain {
                let e = self.explain(&action, state);
                (e.verdict.clone(), Some(e))
            } else {
                (self.evaluate(&action, state), None)
            };
            let mut files = Vec::new();
            for access in &accesses {
                let Some(v) = self.file_verdict(access, state) else {
                    continue;
                };
                let stricter = v.decision.restrictiveness() > verdict.decision.restrictiveness();
                // As strict as the default: the rule explains more.
                let as_strict = v.decision == verdict.decision
                    && verdict.source == VerdictSource::Default
                    && v.decision != Decision::Allow;
                if stricter || as_strict {
                    verdict = Verdict {
                        reason: format!("{}: {}", access.summary, v.reason),
                        ..v.clone()
                    };
                }
                if explain {
                    files.push(FileVerdict {
                        access: access.summary.clone(),
                        verdict: v,
                    });
                }
            }
            commands.push(CommandVerdict {
                command: action.summary.clone(),
                action,
                parent,
                notes,
                verdict,
                explanation,
                files,
            });
        }
        let decisive = commands
            .iter()
            .enumerate()
            // Most restrictive; among equals, a part a rule decided (it explains
            // more than the default), then the first.
            .max_by_key(|(i, c)| {
                let by_rule = c.verdict.source != VerdictSource::Default;
                (
                    c.verdict.decision.restrictiveness(),
                    by_rule,
                    std::cmp::Reverse(*i),
                )
            })
            .map(|(i, _)| i);
        if let Some(why) = &lowered.opaque {
            for c in &mut commands {
                if c.verdict.rule.as_deref() == Some(UNPARSABLE_RULE) {
                    c.verdict.reason = format!("cannot analyse the command line: {why}");
                }
            }
        }
        let verdict = match decisive {
            Some(i) => commands[i].verdict.clone(),
            None => Verdict {
                decision: Decision::Allow,
                source: VerdictSource::Default,
                rule: None,
                reason: "the line runs no command".into(),
                approver: None,
            },
        };
        LineVerdict {
            verdict,
            decisive,
            commands,
            opaque: lowered.opaque,
        }
    }

    /// How the policy decides a file a shell command reads or writes
    /// (an `fs.*` action from [`crate::command_line::file_accesses`]), when
    /// a rule, not the default, says something about it: the command's own
    /// rules decide what may run, these what may be read or written, and
    /// the stricter holds. A path pattern (`/p/**` for `grep -r x .`) is
    /// decided by the most restrictive rule that could match a file it
    /// names, a deny becoming an ask; an allow says nothing about the other
    /// files of the pattern. The built-in rules are left out: they decide
    /// shell commands by their effects already, knowing what a command does
    /// with a path (`cp x .` names the project directory without replacing it).
    fn file_verdict(&self, access: &Action, state: &State<'_>) -> Option<Verdict> {
        let path = access.facet_str("fs", "path")?;
        if !crate::overlap::has_glob_chars(path) {
            return match self.decide_among(access, state, None, FILE_RULES_FROM) {
                Winner::Rule(r) => Some(self.verdict_of(Winner::Rule(r), access)),
                Winner::Default => None,
            };
        }
        let history = History {
            actions: state.history,
        };
        let mut lists: Vec<&[u32]> = vec![&self.index.any_type];
        if let Some(t) = self.index.by_type.get(access.kind.as_str()) {
            lists.push(&t.other);
            lists.extend(t.by_word.values().map(Vec::as_slice));
            lists.extend(
                t.keyed
                    .iter()
                    .flat_map(|k| k.rules.values().map(Vec::as_slice)),
            );
        }
        let mut strictest: Option<&Rule> = None;
        for i in merge_sorted(lists) {
            let rule = self.rules[i as usize].get();
            let stricter = strictest
                .is_none_or(|s| rule.decision.restrictiveness() > s.decision.restrictiveness());
            if rule.decision != Decision::Allow
                && rule.layer >= FILE_RULES_FROM
                && stricter
                && rule.scope.admits(&access.session)
                && rule.matcher.may_match(access, path, history)
            {
                strictest = Some(rule);
            }
        }
        let rule = strictest?;
        let mut verdict = self.verdict_of(Winner::Rule(rule), access);
        if verdict.decision == Decision::Deny {
            // Whether a file the rule denies is among those named is not
            // known before the command runs: a human decides.
            verdict.decision = Decision::Ask;
            verdict.reason = format!(
                "may {} a file that `{}` denies ({})",
                access.verb, rule.id, verdict.reason
            );
            verdict.approver = Some(self.default_approver().to_owned());
        }
        Some(verdict)
    }

    /// Walks candidate rules in evaluation order. With `trace`, walks them
    /// all and records every match; without, stops as soon as it can.
    fn decide<'p>(
        &'p self,
        action: &Action,
        state: &State<'p>,
        trace: Option<(&mut Vec<&'p Rule>, &mut usize)>,
    ) -> Winner<'p> {
        self.decide_among(action, state, trace, Layer::Builtin)
    }

    /// [`Policy::decide`] among the rules of layer `lowest` and above.
    fn decide_among<'p>(
        &'p self,
        action: &Action,
        state: &State<'p>,
        mut trace: Option<(&mut Vec<&'p Rule>, &mut usize)>,
        lowest: Layer,
    ) -> Winner<'p> {
        let history = History {
            actions: state.history,
        };
        let mut approvals: Vec<&Rule> = state.approvals.iter().filter(|r| r.enabled).collect();
        approvals.sort_by(|a, b| rank_order(a, b));
        let approvals = approvals.into_iter();
        let mut policy_rules = self
            .candidates(action)
            .map(|i| (Some(i as usize), self.rules[i as usize].get()))
            .peekable();
        let mut approvals = approvals.map(|r| (None, r)).peekable();
        let mut winner: Option<&Rule> = None;
        let mut lower_deny: Option<&Rule> = None;
        loop {
            let take_approval = match (approvals.peek(), policy_rules.peek()) {
                (Some((_, a)), Some((_, p))) => rank_order(a, p).is_le(),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let rule = if take_approval {
                approvals.next()
            } else {
                policy_rules.next()
            };
            let Some((rank, rule)) = rule else { break };
            if rule.layer < lowest || !rule.scope.admits(&action.session) {
                continue;
            }
            if let Some((_, considered)) = trace.as_mut() {
                **considered += 1;
            }
            if let (Some(w), None) = (winner, &trace) {
                // After a winner, only a deny of a lower layer can change the
                // outcome, and nothing can once a deny has won.
                if w.decision == Decision::Deny || lower_deny.is_some() {
                    break;
                }
                if rule.decision != Decision::Deny || rule.layer >= w.layer {
                    continue;
                }
            }
            if !rule.matcher.is_match(action, history) {
                continue;
            }
            if let Some((matched, _)) = trace.as_mut() {
                matched.push(rule);
            }
            match winner {
                None => {
                    winner = Some(rule);
                    // Nothing below can change a deny, nor a winner with no
                    // lower-layer deny after it.
                    let settled = rule.decision == Decision::Deny
                        || rank.is_some_and(|i| !self.lower_deny_after[i]);
                    if trace.is_none() && settled {
                        break;
                    }
                }
                Some(w) => {
                    if lower_deny.is_none()
                        && w.decision != Decision::Deny
                        && rule.decision == Decision::Deny
                        && rule.layer < w.layer
                    {
                        lower_deny = Some(rule);
                    }
                }
            }
        }
        match lower_deny.or(winner) {
            Some(r) => Winner::Rule(r),
            None => Winner::Default,
        }
    }

    /// Whether a rule of the policy's own (not a built-in) can deny an
    /// action of type `kind`: what makes it worth deciding many actions of
    /// that type ahead (the box's masked files). `false` is exact; `true`
    /// may be a rule whose other conditions never hold.
    pub fn may_deny(&self, kind: &str) -> bool {
        let mut lists: Vec<&[u32]> = vec![&self.index.any_type];
        if let Some(t) = self.index.by_type.get(kind) {
            lists.push(&t.other);
            lists.extend(t.by_word.values().map(Vec::as_slice));
            for k in &t.keyed {
                lists.extend(k.rules.values().map(Vec::as_slice));
            }
        }
        lists.iter().flat_map(|l| l.iter()).any(|&i| {
            let rule = self.rules[i as usize].get();
            rule.decision == Decision::Deny && rule.layer != Layer::Builtin
        })
    }

    /// Indexes of the rules that can apply to `action`, in evaluation order.
    /// (See [`named_by_file`] for a program given by its path.)
    fn candidates<'p>(&'p self, action: &Action) -> impl Iterator<Item = u32> + 'p {
        let mut lists: Vec<&'p [u32]> = vec![&self.index.any_type];
        if let Some(t) = self.index.by_type.get(action.kind.as_str()) {
            lists.push(&t.other);
            if let Some(command) = action.facet_str("shell", "command") {
                let word = command.split(' ').next().unwrap_or(command);
                lists.extend(t.by_word.get(word).map(Vec::as_slice));
            }
            for k in &t.keyed {
                let mut add = |key: &str| lists.extend(k.rules.get(key).map(Vec::as_slice));
                match action.lookup(&k.path) {
                    Some(Lookup::Str(v)) => k.keys_of(v, &mut add),
                    Some(Lookup::Json(Value::String(v))) => k.keys_of(v, &mut add),
                    // A list value: `in` matches on any element, and `path` on any path.
                    Some(Lookup::Strs(items)) => items.iter().for_each(|v| k.keys_of(v, &mut add)),
                    Some(Lookup::Json(Value::Array(items))) => items
                        .iter()
                        .filter_map(Value::as_str)
                        .for_each(|v| k.keys_of(v, &mut add)),
                    Some(Lookup::Time(t)) => time_keys(k, t, &mut add),
                    _ => {}
                }
            }
        }
        merge_sorted(lists)
    }

    fn verdict_of(&self, winner: Winner<'_>, action: &Action) -> Verdict {
        match winner {
            Winner::Rule(r) => Verdict {
                decision: r.decision,
                source: match r.layer {
                    Layer::Builtin => VerdictSource::Builtin,
                    Layer::Session => VerdictSource::Session,
                    _ => VerdictSource::Static,
                },
                rule: Some(r.id.clone()),
                reason: r.reason(),
                approver: match r.decision {
                    Decision::Ask => Some(
                        r.approver
                            .as_ref()
                            .and_then(|a| a.approver.clone())
                            .unwrap_or_else(|| self.default_approver().to_owned()),
                    ),
                    Decision::Judge => r.judge.as_ref().and_then(|j| j.model.clone()),
                    _ => None,
                },
            },
            Winner::Default => {
                let (decision, reason) = match self.default {
                    DefaultPolicy::DenyWrites if action.sensitivity == Some(Sensitivity::Read) => (
                        Decision::Allow,
                        "no rule matched; `default: deny_writes` allows read actions".to_owned(),
                    ),
                    DefaultPolicy::DenyWrites => (
                        Decision::Deny,
                        "default-deny for non-read actions".to_owned(),
                    ),
                    DefaultPolicy::Allow => (
                        Decision::Allow,
                        "no rule matched; `default: allow`".to_owned(),
                    ),
                    DefaultPolicy::Deny => (
                        Decision::Deny,
                        "no rule matched; `default: deny`".to_owned(),
                    ),
                    DefaultPolicy::Ask => {
                        (Decision::Ask, "no rule matched; `default: ask`".to_owned())
                    }
                };
                let approver =
                    (decision == Decision::Ask).then(|| self.default_approver().to_owned());
                Verdict {
                    decision,
                    source: VerdictSource::Default,
                    rule: None,
                    reason,
                    approver,
                }
            }
        }
    }

    fn default_approver(&self) -> &str {
        self.settings
            .ask_mode
            .unwrap_or_default()
            .default_approver()
    }

    fn why(&self, winner: &Winner<'_>, matched: &[&Rule]) -> String {
        let Winner::Rule(w) = winner else {
            return format!(
                "no rule matched, so `default: {}` decides",
                self.default.as_str()
            );
        };
        let first = matched[0];
        if first.id != w.id {
            return format!(
                "`{}` ranks first (priority {}), but `{}` is a deny rule of a lower layer ({}) and no layer can outrank a lower layer's deny",
                first.id,
                first.priority,
                w.id,
                w.layer.as_str()
            );
        }
        let Some(second) = matched.get(1) else {
            return format!("`{}` is the only rule that matched", w.id);
        };
        if w.priority != second.priority {
            format!(
                "`{}` has priority {}, higher than `{}` ({})",
                w.id, w.priority, second.id, second.priority
            )
        } else if w.scope.specificity() != second.scope.specificity() {
            format!(
                "`{}` and `{}` have the same priority; `{}` has the more specific scope",
                w.id, second.id, w.id
            )
        } else {
            format!(
                "`{}` and `{}` have the same priority and scope; `{}` comes later ({}), and among equals the last match wins",
                w.id, second.id, w.id, w.origin
            )
        }
    }
}

fn rule_match(r: &Rule) -> RuleMatch {
    RuleMatch {
        id: r.id.clone(),
        decision: r.decision,
        priority: r.priority,
        specificity: r.scope.specificity(),
        layer: r.layer,
        origin: r.origin.clone(),
        pattern: r.pattern.clone(),
        description: r.description.clone(),
    }
}

/// [`KeyedIndex::keys_of`] a timestamp, as written: out of line, since
/// rules are rarely indexed by one.
#[inline(never)]
fn time_keys(k: &KeyedIndex, t: jiff::Timestamp, add: &mut dyn FnMut(&str)) {
    k.keys_of(&t.to_string(), add)
}

/// Merges ascending lists of rule positions (a rule may be in several).
fn merge_sorted(mut lists: Vec<&[u32]>) -> impl Iterator<Item = u32> + '_ {
    let mut last = None;
    std::iter::from_fn(move || {
        loop {
            let (at, &m) = lists
                .iter()
                .enumerate()
                .filter_map(|(k, l)| l.first().map(|v| (k, v)))
                .min_by_key(|(_, v)| **v)?;
            lists[at] = &lists[at][1..];
            if last != Some(m) {
                last = Some(m);
                return Some(m);
            }
        }
    })
}

/// True when `matcher` denies every `tool.call` of `tool`, whatever its input.
pub(crate) fn is_blanket_tool_deny(matcher: &Matcher, tool: &str) -> bool {
    let Matcher::All(parts) = matcher else {
        return matches!(matcher, Matcher::Field(FieldPath::Facet(p), c) if is_tool_name(p) && names(c, tool));
    };
    let mut names_tool = false;
    for p in parts {
        match p {
            Matcher::Field(FieldPath::Type, Cond::Equals(t)) if t == "tool.call" => {}
            Matcher::Field(FieldPath::Facet(path), c) if is_tool_name(path) && names(c, tool) => {
                names_tool = true
            }
            _ => return false,
        }
    }
    names_tool
}

/// An action of which only the fields at some paths are known
/// ([`Policy::denies_all_like`]).
pub(crate) struct Known<'a> {
    pub action: &'a Action,
    pub fixed: &'a [FieldPath],
}

/// A field path as [`Policy::denies_all_like`] names it: as rules write
/// them, or a whole facet (`shell`).
pub(crate) fn known_path(f: &str) -> Option<FieldPath> {
    FieldPath::parse(f).ok().or_else(|| {
        (!f.is_empty() && !f.contains('.')).then(|| FieldPath::Facet(vec![f.to_owned()]))
    })
}

impl Known<'_> {
    /// The value at `path`, when it is one of the known fields.
    fn value(&self, path: &FieldPath) -> Option<Option<Lookup<'_>>> {
        let known = self.fixed.iter().any(|f| match (f, path) {
            (FieldPath::Facet(f), FieldPath::Facet(p)) => p.starts_with(f),
            (f, p) => f == p,
        });
        known.then(|| self.action.lookup(path))
    }

    /// Whether a built-in check holds, when every field it reads is known.
    fn check(&self, c: &crate::builtin::Check) -> Option<bool> {
        crate::builtin::Check::READS
            .iter()
            .all(|f| known_path(f).is_some_and(|f| self.value(&f).is_some()))
            .then(|| c.is_match(self.action))
    }

    /// `m` holds on every action with these known fields.
    pub fn certainly(&self, m: &Matcher) -> bool {
        match m {
            Matcher::All(ms) => ms.iter().all(|m| self.certainly(m)),
            Matcher::Any(ms) => ms.iter().any(|m| self.certainly(m)),
            Matcher::Not(m) => !self.possibly(m),
            Matcher::Field(path, cond) => self.value(path).is_some_and(|v| cond.holds(v)),
            Matcher::Builtin(c) => self.check(c) == Some(true),
            Matcher::Rate { .. } => false,
        }
    }

    /// `m` may hold on some action with these known fields.
    pub fn possibly(&self, m: &Matcher) -> bool {
        match m {
            Matcher::All(ms) => ms.iter().all(|m| self.possibly(m)),
            Matcher::Any(ms) => ms.iter().any(|m| self.possibly(m)),
            Matcher::Not(m) => !self.certainly(m),
            Matcher::Field(path, cond) => self.value(path).is_none_or(|v| cond.holds(v)),
            Matcher::Rate { of, .. } => self.possibly(of),
            Matcher::Builtin(c) => self.check(c) != Some(false),
        }
    }
}

fn is_tool_name(path: &[String]) -> bool {
    path.len() == 2 && path[0] == "tool" && path[1] == "name"
}

fn names(cond: &Cond, tool: &str) -> bool {
    match cond {
        Cond::Equals(v) => v == tool,
        Cond::In(vs) | Cond::List(vs) => vs.iter().any(|v| v == tool),
        Cond::Glob(g) => g.is_match(tool),
        _ => false,
    }
}

impl Rule {
    /// A session's "always" answer: allow what `matcher` matches, at the
    /// priority of the rule that asked (it can never outrank a deny).
    pub fn session_approval(
        id: &str,
        pattern: &str,
        matcher: Matcher,
        priority: i64,
        seq: u32,
    ) -> Rule {
        let mut r = Rule::new(
            id.to_owned(),
            Decision::Allow,
            Layer::Session,
            Origin {
                file: "<session>".into(),
                line: 0,
                col: 0,
            },
        );
        r.explicit_id = true;
        r.priority = priority;
        r.pattern = pattern.to_owned();
        r.matcher = matcher;
        r.seq = seq;
        r
    }
}

/// `action` with its program named by its file name, when a shell command
/// gives it by path (`/usr/bin/touch x` → `touch x`); None otherwise.
fn named_by_file(action: &Action) -> Option<Action> {
    let shell = action.facets.get("shell")?.as_object()?;
    let binary = shell.get("binary")?.as_str()?;
    let (_, name) = binary.rsplit_once('/')?;
    if name.is_empty() {
        return None;
    }
    let command = shell.get("command")?.as_str()?;
    let rest = command.strip_prefix(binary)?;
    let mut named = action.clone();
    named.summary = format!("{name}{rest}");
    named.verb = name.to_owned();
    if let Some(Value::Object(m)) = named.facets.get_mut("shell") {
        m.insert("binary".into(), name.into());
        m.insert("command".into(), format!("{name}{rest}").into());
        if let Some(Value::Array(argv)) = m.get_mut("argv")
            && let Some(first) = argv.first_mut()
        {
            *first = name.into();
        }
    }
    Some(named)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Environment, Source};

    /// The index and the early stop never change a decision: compare with
    /// a plain walk over every rule in evaluation order.
    #[test]
    fn indexed_evaluation_equals_a_full_scan() {
        let profile = "version: 1\ndeny:\n  - {id: p-deny-mcp, when: {type: mcp.call, mcp.server: github, mcp.tool: delete_repo}}\n  - {id: p-deny-get, when: {type: http.request, http.method: {in: [DELETE]}}}\n";
        let project = r#"version: 1
allow:
  - "git *"
  - {id: big, priority: 900, when: {type: mcp.call, mcp.server: {in: [github, gitlab]}}}
  - {id: gets, when: {type: http.request, http.method: {in: [GET, HEAD, DELETE]}}}
  - {id: any-tag, when: {tags: {in: [x]}, type: shell.exec}}
ask:
  - {id: mcp-other, when: {type: mcp.call, mcp.tool: {glob: "*"}}}
  - {id: verb, when: {type: http.request, verb: POST}}
  - {id: hosts, when: {type: http.request, http.host: {glob: "*.example.com"}, http.method: {in: [PUT]}}}
  - {id: deep-host, when: {type: http.request, http.host: {glob: "*.b.example.com"}}}
  - {id: data, when: {type: fs.write, fs.path: {path: "/srv/data/**"}}}
  - {id: shell-writes, when: {type: shell.exec, shell.writes: {path: "/srv/data/**"}}}
deny:
  - {id: rm, command: "rm *"}
  - {id: purge, when: {type: shell.exec, shell.command: {pattern: "^tool1 (delete|purge) "}}}
  - {id: alt, when: {type: shell.exec, shell.command: {pattern: "^git push|rm -rf"}}}
  - {id: api-admin, when: {type: http.request, http.url: {pattern: "^https://api1\\.example\\.net/v[0-9]+/admin"}}}
  - {id: optional-slash, when: {type: http.request, http.url: {pattern: "^https://q\\.test/?x"}}}
  - {id: data-secret, when: {type: fs.write, fs.path: {path: "/srv/data/secret/**"}}}
"#;
        let src = |name: &str, text: &str, layer| Source {
            name: name.into(),
            text: text.into(),
            layer,
            base_dir: "/p".into(),
        };
        let policy = Policy::from_sources(
            &[
                src("/p/team.yaml", profile, Layer::Profile),
                src("/p/aileron.yaml", project, Layer::Project),
            ],
            &Environment::new("/home/u"),
        )
        .unwrap();
        let mut actions = Vec::new();
        for server in ["github", "gitlab", "other"] {
            for tool in ["delete_repo", "list"] {
                actions.push(serde_json::json!({"type": "mcp.call", "facets": {"mcp": {"server": server, "tool": tool}}}));
            }
        }
        for method in ["GET", "HEAD", "DELETE", "POST", "PUT"] {
            actions.push(serde_json::json!({"type": "http.request", "facets": {"http": {"method": method, "url": "https://x.test/"}}}));
        }
        for cmd in [
            "git status",
            "rm -rf x",
            "ls",
            "tool1 purge all",
            "tool1 list",
            "echo rm -rf y",
        ] {
            actions.push(serde_json::json!({"type": "shell.exec", "tags": ["x"], "facets": {"shell": {"command": cmd, "writes": ["/tmp/a", "/srv/data/x"]}}}));
        }
        for host in [
            "a.example.com",
            "a.b.example.com",
            "example.com",
            "b.example.com",
            "x.org",
        ] {
            for method in ["PUT", "GET"] {
                let url = format!("https://{host}/p");
                actions.push(serde_json::json!({"type": "http.request", "facets": {"http": {"method": method, "url": url}}}));
            }
        }
        for path in [
            "/srv/data",
            "/srv/data/x",
            "/srv/data/secret/k",
            "/srv/other",
            "/srv/data2/x",
        ] {
            actions.push(serde_json::json!({"type": "fs.write", "facets": {"fs": {"path": path}}}));
        }
        for url in [
            "https://api1.example.net/v2/admin",
            "https://api1.example.net/v/admin",
            "https://api2.example.net/v2/admin",
            "https://q.testx",
            "https://q.test/x",
        ] {
            actions.push(serde_json::json!({"type": "http.request", "facets": {"http": {"method": "GET", "url": url}}}));
        }
        for cmd in ["git push x", "tool1 delete y"] {
            actions.push(
                serde_json::json!({"type": "shell.exec", "facets": {"shell": {"command": cmd}}}),
            );
        }
        for a in actions {
            let mut action: Action = serde_json::from_value(a).unwrap();
            action.normalize();
            let got = policy.evaluate(&action, &State::default()).rule;
            let matching: Vec<&Rule> = policy
                .rules()
                .filter(|r| r.matcher.is_match(&action, History::default()))
                .collect();
            let want = matching.first().map(|first| {
                let lower_deny = matching.iter().find(|r| {
                    first.decision != Decision::Deny
                        && r.decision == Decision::Deny
                        && r.layer < first.layer
                });
                lower_deny.unwrap_or(first).id.clone()
            });
            assert_eq!(got, want, "{}", action.summary);
        }
    }
}
