//! The policy linter: warnings about a policy that loads but does not do
//! what it says (`aileron check`, the server's rule editor). Pure: it reads
//! a compiled [`Policy`] and nothing else. A warning never keeps a policy
//! from loading.
//!
//! It looks at the rules of the user's layers (profiles named by path, the
//! project's `aileron.yaml`, the user's settings, the database rules), not
//! at the built-in rules or the built-in profiles, which are linted
//! against nothing; those do count as the rules that may hide a user's.
//!
//! - `shadowed-rule`: a rule that can never decide, because another rule
//!   matches every action it matches (in every session its scope admits)
//!   and always comes first in evaluation (SPEC 7: priority, scope
//!   specificity, layer, position), or is a deny rule of a lower layer,
//!   which nothing outranks. A deny rule is only reported as hidden by
//!   another deny rule of its own or a lower layer. An ask, judge or deny
//!   rule that can apply to `fs.*` actions is not reported: a shell
//!   command's file accesses are also decided by the strictest such rule
//!   that may match, whatever ranks first.
//! - `allow-overridden`: the same for an allow rule hidden by an ask, judge
//!   or deny rule, with the priority that would let it take effect, if one
//!   can (none can outrank a lower layer's deny or a structural built-in).
//! - `unknown-field`: a `when:` condition on a facet no action has: a
//!   misspelt facet (`htpp.method`), or a facet the rule's types never
//!   carry (`http.method` with `type: fs.read`). A facet that is neither
//!   close to a known one nor ruled out by the rule's types may be a
//!   plugin's, and is not reported.
//! - `sql-verb-only`: an allow rule for `sql.query` whose only condition
//!   on the statement is its verb, a verb that reads (`sql.verb: SELECT`):
//!   a `SELECT` may also write (`setval`, `SELECT INTO`) or call a
//!   function (`t.f` is `f(t)`), which only the gateway's built-in asks
//!   keep from it. Conditions on the database, the user or the session do
//!   not narrow what a statement does; any other condition does.
//!
//! "Matches every action it matches" is decided conservatively (see
//! [`covers`]): the same conditions, a list of values that includes the
//! other's, a command glob that covers the other (`git *` covers
//! `git push *`), a path glob `D/**` over a pattern below `D`, a literal
//! value any condition can be checked against. When it cannot be shown,
//! nothing is reported.
//!
//! [`allow_effect`] answers the same question for an allow rule that is
//! not written yet: the decision core asks it before it appends an
//! "always" answer to a policy file.

use crate::action::{ActionType, FieldPath, KNOWN_FACETS, Lookup};
use crate::builtin::{FIELD_CALL, WRITE_IN_READ};
use crate::diagnostic::{Code, Diagnostic, Pos};
use crate::pattern::{Comparison, Cond, Matcher, json_eq};
use crate::policy::{Policy, rank_order};
use crate::profiles::BUILTIN_PREFIX;
use crate::rule::{Decision, Layer, Origin, Rule, Scope};
use crate::suggest::distance;
use serde_json::Value;
use std::cmp::Ordering;

/// One warning about one rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The id of the rule the warning is about.
    pub rule: String,
    /// The id of the rule that hides it, for `shadowed-rule` and
    /// `allow-overridden`.
    pub by: Option<String>,
    /// The warning, at the rule's place (no source line: see
    /// [`crate::diagnostic::quote`]).
    pub diagnostic: Diagnostic,
}

/// The warnings about the user's rules of `policy`, in evaluation order.
pub fn lint(policy: &Policy) -> Vec<Diagnostic> {
    findings(policy).into_iter().map(|f| f.diagnostic).collect()
}

/// [`lint`] with the rules each warning is about.
pub fn findings(policy: &Policy) -> Vec<Finding> {
    let rules: Vec<&Rule> = policy.rules().collect();
    let mut out = Vec::new();
    for r in rules.iter().copied().filter(|r| is_users(r)) {
        unknown_fields(r, &mut out);
        sql_verb_only(r, &mut out);
        if matches_nothing(&r.matcher) || (r.decision != Decision::Allow && may_be_file(r)) {
            continue;
        }
        let beaters: Vec<&Rule> = rules
            .iter()
            .copied()
            .filter(|s| s.seq != r.seq && beats(s, r))
            .collect();
        let restrictive = beaters.iter().find(|s| s.decision != Decision::Allow);
        match (r.decision, restrictive, beaters.first()) {
            (Decision::Allow, Some(s), _) => {
                let fix = match winning_priority(r, &beaters) {
                    Some(p) => format!("give it `priority: {p}` to take effect"),
                    None => "no priority can make it take effect".to_owned(),
                };
                out.push(Finding {
                    rule: r.id.clone(),
                    by: Some(s.id.clone()),
                    diagnostic: warning(
                        Code::AllowOverridden,
                        r,
                        format!(
                            "this allow rule never takes effect: {} matches every action it matches and {}; {fix}",
                            describe(s),
                            why_first(s, r)
                        ),
                    ),
                });
            }
            (_, _, Some(s)) => {
                let redundant = if s.decision == r.decision {
                    "; it is redundant"
                } else {
                    ""
                };
                out.push(Finding {
                    rule: r.id.clone(),
                    by: Some(s.id.clone()),
                    diagnostic: warning(
                        Code::ShadowedRule,
                        r,
                        format!(
                            "this {} rule never decides: {} matches every action it matches and {}{redundant}",
                            r.decision.as_str(),
                            describe(s),
                            why_first(s, r)
                        ),
                    ),
                });
            }
            _ => {}
        }
    }
    out
}

/// Whether an allow rule would take effect, as [`allow_effect`] answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllowEffect {
    /// No ask, judge or deny rule provably decides everything it matches
    /// before it. (Other rules may still decide some of its actions.)
    TakesEffect,
    /// Every action it matches is decided first by this rule.
    Overridden(Overrider),
}

/// The rule that keeps an allow rule from taking effect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Overrider {
    /// Its id.
    pub rule: String,
    /// What it decides instead.
    pub decision: Decision,
    /// Its priority.
    pub priority: i64,
    /// Where it was written.
    pub origin: Origin,
    /// A priority at which the allow rule would take effect wherever it
    /// is written in its file: one above the rules that decide first, or
    /// the same where its layer wins the tie. `None` when none would (a
    /// deny of a lower layer, a structural built-in rule).
    pub winning_priority: Option<i64>,
}

impl Overrider {
    /// The warning (`ineffective-amendment`) for an allow rule of
    /// `pattern` about to be written at `pos` of `file`.
    pub fn warning(&self, file: &str, pos: Pos, pattern: &str) -> Diagnostic {
        let fix = match self.winning_priority {
            Some(p) => format!("at `priority: {p}` it would"),
            None => "no priority would make it take effect".to_owned(),
        };
        Diagnostic::new(
            Code::IneffectiveAmendment,
            file,
            pos,
            format!(
                "the new allow rule `{pattern}` would not take effect: `{}` ({} rule at {}, priority {}) decides every action it matches first; {fix}",
                self.rule,
                self.decision.as_str(),
                self.origin,
                self.priority
            ),
        )
    }
}

/// Would an allow rule with `matcher`, written at `priority` in `layer`
/// (appended after that layer's rules, no scope), take effect against
/// `policy`? It would not when an ask, judge or deny rule provably matches
/// every action it matches and is evaluated first, or is a deny rule of a
/// lower layer: "always allow" answered to an ask of an `ask:` rule at
/// priority 100 appends an allow rule at 50 that the ask rule keeps
/// deciding. Conservative: `Overridden` only when that is certain (see
/// [`covers`]), and then with the priority that would win, if any.
pub fn allow_effect(
    policy: &Policy,
    matcher: &Matcher,
    priority: i64,
    layer: Layer,
) -> AllowEffect {
    let mut candidate = Rule::new(
        "(new allow rule)".into(),
        Decision::Allow,
        layer,
        Origin::default(),
    );
    candidate.priority = priority;
    candidate.matcher = matcher.clone();
    candidate.seq = u32::MAX;
    if matches_nothing(matcher) {
        return AllowEffect::TakesEffect;
    }
    let beaters: Vec<&Rule> = policy.rules().filter(|s| beats(s, &candidate)).collect();
    match beaters.iter().find(|s| s.decision != Decision::Allow) {
        None => AllowEffect::TakesEffect,
        Some(s) => AllowEffect::Overridden(Overrider {
            rule: s.id.clone(),
            decision: s.decision,
            priority: s.priority,
            origin: s.origin.clone(),
            winning_priority: winning_priority(&candidate, &beaters),
        }),
    }
}

/// Rules of the user's layers: not the built-in rules, not the built-in profiles.
fn is_users(r: &Rule) -> bool {
    r.layer != Layer::Builtin
        && r.layer != Layer::Session
        && !r.origin.file.starts_with(BUILTIN_PREFIX)
}

/// A rule with only `override:` matches nothing.
fn matches_nothing(m: &Matcher) -> bool {
    matches!(m, Matcher::Any(ms) if ms.is_empty())
}

/// Whether `r` can apply to an `fs.*` action.
fn may_be_file(r: &Rule) -> bool {
    r.matcher
        .required_types()
        .is_none_or(|ts| ts.iter().any(|t| t.starts_with("fs.")))
}

fn warning(code: Code, r: &Rule, message: String) -> Diagnostic {
    Diagnostic::new(code, &r.origin.file, r.origin.pos(), message)
}

/// Whether `s` keeps `r` from ever being the verdict (SPEC 7 as
/// `Policy::evaluate` does it): `s` matches every action `r` matches in
/// every session `r` admits, and either ranks first or is a deny of a
/// lower layer. A deny `r` still decides after a winner of a higher layer
/// than its own, so only a deny of its layer or a lower one that ranks
/// first hides it.
fn beats(s: &Rule, r: &Rule) -> bool {
    let first = rank_order(s, r) == Ordering::Less;
    let order = if r.decision == Decision::Deny {
        s.decision == Decision::Deny && first && s.layer <= r.layer
    } else {
        first || (s.decision == Decision::Deny && s.layer < r.layer)
    };
    order
        && scope_covers(&s.scope, &r.scope)
        && quick_may_cover(s, r)
        && covers(&s.matcher, &r.matcher)
}

/// Every session `inner` admits, `outer` admits.
fn scope_covers(outer: &Scope, inner: &Scope) -> bool {
    let ok = |o: &Option<String>, i: &Option<String>| o.is_none() || o == i;
    ok(&outer.plugin, &inner.plugin)
        && ok(&outer.profile, &inner.profile)
        && ok(&outer.integration, &inner.integration)
}

/// A cheap test that rules out most pairs: two command globs of
/// different first words.
fn quick_may_cover(s: &Rule, r: &Rule) -> bool {
    match (
        s.matcher.required_first_word(),
        r.matcher.required_first_word(),
    ) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

/// Why `s` is evaluated before `r` (or decides over it).
fn why_first(s: &Rule, r: &Rule) -> String {
    if s.structural {
        "is a built-in rule that nothing outranks".to_owned()
    } else if rank_order(s, r) != Ordering::Less {
        format!(
            "is a deny rule of a lower layer ({}), which no rule can outrank",
            s.layer.as_str()
        )
    } else if s.priority != r.priority {
        format!("has a higher priority ({} > {})", s.priority, r.priority)
    } else if s.scope.specificity() != r.scope.specificity() {
        "has the same priority and a more specific scope".to_owned()
    } else if s.layer != r.layer {
        format!(
            "has the same priority and comes from a higher layer ({})",
            s.layer.as_str()
        )
    } else {
        "has the same priority and comes later (among equals the last rule wins)".to_owned()
    }
}

/// `s` for people: its id when it has one, else its pattern; its
/// decision, place and priority.
fn describe(s: &Rule) -> String {
    let name = if s.explicit_id || s.pattern.is_empty() {
        format!("`{}`", s.id)
    } else {
        format!("`{}`", s.pattern)
    };
    format!(
        "{name} ({} rule at {}, priority {})",
        s.decision.as_str(),
        s.origin,
        s.priority
    )
}

/// The lowest priority at which `r` would rank before every rule of
/// `beaters` (the rules that beat it now) whatever the order of the rules
/// in their files: one above each, or the same where a more specific
/// scope or a higher layer wins the tie. `None` when no priority can help.
/// Raising a priority only takes rules out of `beaters`.
fn winning_priority(r: &Rule, beaters: &[&Rule]) -> Option<i64> {
    let mut needed = r.priority;
    for s in beaters {
        if s.structural || (s.decision == Decision::Deny && s.layer < r.layer) {
            return None;
        }
        let tie_won = (r.scope.specificity(), r.layer) > (s.scope.specificity(), s.layer);
        let p = if tie_won {
            s.priority
        } else {
            s.priority.checked_add(1)?
        };
        needed = needed.max(p);
    }
    (needed != r.priority).then_some(needed)
}

// ---- coverage ----------------------------------------------------------------

/// Whether `outer` matches every action `inner` matches (with the same
/// history). Sound, not complete: `true` only when it follows from the
/// matchers' structure; `false` also means "cannot tell".
///
/// `outer` is read as a conjunction: each of its conditions must follow
/// from one condition of `inner` (a condition on the same field that
/// admits fewer values, or the very same condition), or, for an `any`,
/// one of its branches from all of `inner`. An `any` in `inner` is
/// covered when each of its branches is.
pub fn covers(outer: &Matcher, inner: &Matcher) -> bool {
    if let Matcher::Any(branches) = inner {
        return branches.iter().all(|b| covers(outer, b));
    }
    let mut have = Vec::new();
    conjuncts(inner, &mut have);
    let mut need = Vec::new();
    conjuncts(outer, &mut need);
    need.iter().all(|n| implied(n, inner, &have))
}

/// The conditions of a matcher read as a conjunction (nested `all`s flattened).
fn conjuncts<'m>(m: &'m Matcher, out: &mut Vec<&'m Matcher>) {
    match m {
        Matcher::All(ms) => ms.iter().for_each(|m| conjuncts(m, out)),
        m => out.push(m),
    }
}

/// Whether the condition `need` holds for every action `inner` (whose
/// conjuncts are `have`) matches.
fn implied(need: &Matcher, inner: &Matcher, have: &[&Matcher]) -> bool {
    if let Matcher::Any(branches) = need
        && branches.iter().any(|b| covers(b, inner))
    {
        return true;
    }
    have.iter().any(|h| match (h, need) {
        _ if same(h, need) => true,
        (Matcher::Any(branches), _) if !branches.is_empty() => {
            branches.iter().all(|b| covers(need, b))
        }
        (Matcher::Field(p, c), Matcher::Field(q, d)) => p == q && cond_implies(c, d),
        _ => false,
    })
}

/// The same matcher, condition for condition.
fn same(a: &Matcher, b: &Matcher) -> bool {
    match (a, b) {
        (Matcher::All(x), Matcher::All(y)) | (Matcher::Any(x), Matcher::Any(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Matcher::Not(x), Matcher::Not(y)) => same(x, y),
        (Matcher::Field(p, c), Matcher::Field(q, d)) => p == q && same_cond(c, d),
        (
            Matcher::Rate {
                more_than: m1,
                seconds: s1,
                of: o1,
            },
            Matcher::Rate {
                more_than: m2,
                seconds: s2,
                of: o2,
            },
        ) => m1 == m2 && s1 == s2 && same(o1, o2),
        // Built-in checks only the built-in layer writes: never compared.
        _ => false,
    }
}

fn same_values(a: &[Value], b: &[Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| json_eq(x, y))
}

fn same_cond(a: &Cond, b: &Cond) -> bool {
    match (a, b) {
        (Cond::Equals(x), Cond::Equals(y)) => json_eq(x, y),
        (Cond::List(x), Cond::List(y)) | (Cond::In(x), Cond::In(y)) => same_values(x, y),
        (Cond::Pattern(x), Cond::Pattern(y)) => x.as_str() == y.as_str(),
        (Cond::Contains { value: x, .. }, Cond::Contains { value: y, .. })
        | (Cond::NotContains { value: x, .. }, Cond::NotContains { value: y, .. }) => x == y,
        (Cond::Glob(x), Cond::Glob(y)) => x == y,
        (Cond::Exists(x), Cond::Exists(y)) => x == y,
        (Cond::Compare(o1, n1), Cond::Compare(o2, n2)) => o1 == o2 && n1 == n2,
        (Cond::Path(x), Cond::Path(y)) => x.as_str() == y.as_str(),
        (Cond::Time(x), Cond::Time(y)) => x == y,
        (Cond::All(x), Cond::All(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_cond(a, b))
        }
        _ => false,
    }
}

/// Whether every value of a field that satisfies `have` satisfies `need`.
fn cond_implies(have: &Cond, need: &Cond) -> bool {
    if same_cond(have, need) {
        return true;
    }
    if let Cond::All(needs) = need {
        return needs.iter().all(|n| cond_implies(have, n));
    }
    if let Cond::All(haves) = have {
        return haves.iter().any(|h| cond_implies(h, need));
    }
    if matches!(need, Cond::Exists(true)) {
        // `have` holds for no absent field.
        return !have.holds(None);
    }
    match (have, need) {
        // The only values `Equals` of a scalar admits: that scalar (numbers by value).
        (Cond::Equals(v @ (Value::String(_) | Value::Number(_) | Value::Bool(_))), _) => match v {
            Value::String(s) => need.holds(Some(Lookup::Str(s))),
            v => need.holds(Some(Lookup::Json(v))),
        },
        // One of a list (or, on a list field, a list with one of them).
        (Cond::In(xs), Cond::In(ys)) => xs.iter().all(|x| ys.iter().any(|y| json_eq(x, y))),
        (Cond::List(xs), Cond::In(ys)) => {
            !xs.is_empty() && xs.iter().all(|x| ys.iter().any(|y| json_eq(x, y)))
        }
        (Cond::Glob(g), Cond::Glob(h)) => h.covers(g),
        // A glob without wildcards admits one string.
        (Cond::Glob(g), _) => g
            .literal()
            .is_some_and(|s| need.holds(Some(Lookup::Str(s)))),
        (Cond::Path(p), Cond::Path(q)) => path_covers(q.as_str(), p.as_str(), |s| q.is_match(s)),
        (Cond::Compare(o1, a), Cond::Compare(o2, b)) => bound_implies(*o1, *a, *o2, *b),
        _ => false,
    }
}

/// Whether every path the absolute path glob `inner` matches, `outer`
/// (whose matcher is `is_match`) matches: a literal path it matches, or
/// any pattern below the directory `D` of an `outer` of `D/**`.
fn path_covers(outer: &str, inner: &str, is_match: impl Fn(&str) -> bool) -> bool {
    let special = |s: &str| s.contains(['*', '?', '[', ']', '{', '}', '\\']);
    if !special(inner) {
        return is_match(inner);
    }
    match outer.strip_suffix("/**") {
        Some(dir) if !dir.is_empty() && !special(dir) => inner
            .strip_prefix(dir)
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|rest| !rest.is_empty()),
        _ => false,
    }
}

/// Whether `x OP1 a` implies `x OP2 b`.
fn bound_implies(o1: Comparison, a: f64, o2: Comparison, b: f64) -> bool {
    use Comparison::*;
    match (o1, o2) {
        (Gt, Gt) | (Gte, Gte) | (Gt, Gte) => a >= b,
        (Gte, Gt) => a > b,
        (Lt, Lt) | (Lte, Lte) | (Lt, Lte) => a <= b,
        (Lte, Lt) => a < b,
        _ => false,
    }
}

// ---- SQL by verb --------------------------------------------------------------

/// Verbs the database gateway gives statements that read by their verb but
/// may write or call a function (`SELECT` also stands for `VALUES` and
/// `WITH`).
const SQL_READ_VERBS: &[&str] = &["SELECT", "COPY", "DECLARE", "EXPLAIN", "SHOW", "SET"];

/// Conditions that say nothing of what a statement does: its type, where
/// and as whom it runs.
fn says_nothing_of_the_statement(path: &FieldPath) -> bool {
    match path {
        FieldPath::Type | FieldPath::Session(_) => true,
        FieldPath::Facet(f) => matches!(
            f.iter().map(String::as_str).collect::<Vec<_>>().as_slice(),
            ["sql", "database" | "user"]
        ),
        _ => false,
    }
}

/// `sql-verb-only`: an allow rule that admits a reading verb of `sql.query`
/// and says nothing else of the statement.
fn sql_verb_only(r: &Rule, out: &mut Vec<Finding>) {
    if r.decision != Decision::Allow
        || !r
            .matcher
            .required_types()
            .is_some_and(|ts| ts.iter().any(|t| t == "sql.query"))
    {
        return;
    }
    let mut have = Vec::new();
    conjuncts(&r.matcher, &mut have);
    let mut verbs = Vec::new();
    for m in have {
        match m {
            Matcher::Field(FieldPath::Verb, c) => verbs.push(c),
            Matcher::Field(FieldPath::Facet(f), c)
                if f.len() == 2 && f[0] == "sql" && f[1] == "verb" =>
            {
                verbs.push(c)
            }
            Matcher::Field(p, _) if says_nothing_of_the_statement(p) => {}
            _ => return,
        }
    }
    let admitted: Vec<&str> = SQL_READ_VERBS
        .iter()
        .copied()
        .filter(|v| verbs.iter().all(|c| c.holds(Some(Lookup::Str(v)))))
        .collect();
    if verbs.is_empty() || admitted.is_empty() {
        return;
    }
    out.push(Finding {
        rule: r.id.clone(),
        by: None,
        diagnostic: warning(
            Code::SqlVerbOnly,
            r,
            format!(
                "this rule allows SQL by its verb alone ({}): a statement of that verb may also write \
                 (`SELECT setval('s', 1)`, `SELECT * INTO t2 FROM t`) or call a function \
                 (`SELECT t.f FROM t` is `f(t)`), which only the built-in asks \
                 (tags `{WRITE_IN_READ}`, `{FIELD_CALL}`) keep from it; add `sensitivity: read` \
                 or a `sql.tables` condition to allow what it means",
                admitted.join(", ")
            ),
        ),
    });
}

// ---- fields ------------------------------------------------------------------

/// `unknown-field` warnings for the facets `r`'s matcher reads.
fn unknown_fields(r: &Rule, out: &mut Vec<Finding>) {
    let mut seen: Vec<String> = Vec::new();
    let mut report = |path: &[String], types: Option<&[String]>| {
        let facet = path[0].as_str();
        let field = path.join(".");
        if seen.contains(&field) {
            return;
        }
        let known: Vec<&str> = KNOWN_FACETS.iter().map(|(f, _)| *f).collect();
        let message = if known.contains(&facet) {
            None
        } else {
            misspelt(facet, &known).map(|known| {
                format!(
                    "`when:` reads `{field}`, but no action has a facet `{facet}` (did you mean `{known}`?); the condition can never hold"
                )
            })
        };
        let message = message.or_else(|| {
            let types = types?;
            let mut carried = false;
            for t in types {
                match ActionType::from(t.as_str()).facets() {
                    Some(facets) => carried |= facets.contains(&facet),
                    // A type whose facets are open, or a plugin's.
                    _ => return None,
                }
            }
            (!carried).then(|| {
                let names: Vec<String> = types.iter().map(|t| format!("`{t}`")).collect();
                format!(
                    "`when:` reads `{field}`, but no action of type {} has a facet `{facet}`; the condition can never hold",
                    names.join(" or ")
                )
            })
        });
        if let Some(message) = message {
            seen.push(field);
            out.push(Finding {
                rule: r.id.clone(),
                by: None,
                diagnostic: warning(Code::UnknownField, r, message),
            });
        }
    };
    facet_paths(&r.matcher, None, &mut report);
}

/// The known facet `facet` is a misspelling of, when that is likely
/// enough to say so of a name a plugin may also use: one edit away, two
/// for a name of five letters or more, or the same letters in another
/// order; never for a name of two letters (`ws`, `db` are a plugin's).
fn misspelt<'k>(facet: &str, known: &[&'k str]) -> Option<&'k str> {
    if facet.chars().count() < 3 {
        return None;
    }
    let sorted = |s: &str| {
        let mut c: Vec<char> = s.chars().collect();
        c.sort_unstable();
        c
    };
    known.iter().copied().find(|k| {
        let d = distance(facet, k);
        d <= 1 || (d == 2 && facet.chars().count() >= 5) || sorted(facet) == sorted(k)
    })
}

/// Calls `f` with every facet path `m` reads and the action types the
/// branch it is in requires, if it says.
fn facet_paths(
    m: &Matcher,
    types: Option<&[String]>,
    f: &mut impl FnMut(&[String], Option<&[String]>),
) {
    let own = m.required_types();
    let types = own.as_deref().or(types);
    match m {
        Matcher::All(ms) | Matcher::Any(ms) => ms.iter().for_each(|m| facet_paths(m, types, f)),
        Matcher::Not(m) => facet_paths(m, types, f),
        Matcher::Rate { of, .. } => facet_paths(of, types, f),
        Matcher::Field(FieldPath::Facet(path), _) => f(path, types),
        Matcher::Field(..) | Matcher::Builtin(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Environment, Source};

    const FILE: &str = "/p/aileron.yaml";

    fn policy(text: &str) -> Policy {
        let src = Source {
            name: FILE.into(),
            text: text.into(),
            layer: Layer::Project,
            base_dir: "/p".into(),
        };
        Policy::from_sources(&[src], &Environment::new("/home/u")).unwrap()
    }

    /// `(code, line, message)` of every warning.
    fn warnings(text: &str) -> Vec<(&'static str, u32, String)> {
        lint(&policy(text))
            .into_iter()
            .map(|d| (d.code.as_str(), d.line, d.message))
            .collect()
    }

    fn when(yaml: &str) -> Matcher {
        let text = format!("version: 1\nallow:\n  - {{id: x, when: {yaml}}}\n");
        policy(&text).rule("x").unwrap().matcher.clone()
    }

    #[test]
    fn an_allow_under_an_ask_of_higher_priority() {
        // The amendment bug: `always for this project` appended an allow at
        // the default priority under the ask rule that asked.
        let w = warnings(
            "version: 1\nask:\n  - \"git push *\"\nallow:\n  - \"git push origin feature\"\n",
        );
        assert_eq!(w.len(), 1, "{w:?}");
        let (code, line, msg) = &w[0];
        assert_eq!((*code, *line), ("allow-overridden", 5));
        assert_eq!(
            msg,
            "this allow rule never takes effect: `git push *` (ask rule at /p/aileron.yaml:3:5, priority 100) \
             matches every action it matches and has a higher priority (100 > 50); give it `priority: 101` to take effect"
        );
    }

    #[test]
    fn the_suggested_priority_takes_effect() {
        let fixed = warnings(
            "version: 1\nask:\n  - \"git push *\"\nallow:\n  - {command: \"git push origin feature\", priority: 101}\n",
        );
        assert_eq!(fixed, vec![]);
        // At the same priority, the later rule of the same file wins ...
        let same = warnings(
            "version: 1\nask:\n  - \"git push *\"\nallow:\n  - {command: \"git push origin feature\", priority: 100}\n",
        );
        assert_eq!(same, vec![]);
        // ... and an earlier one needs one more.
        let w = warnings(
            "version: 1\nallow:\n  - {command: \"git push origin feature\", priority: 100}\nask:\n  - \"git push *\"\n",
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].2.contains("comes later"), "{w:?}");
        assert!(
            w[0].2.ends_with("give it `priority: 101` to take effect"),
            "{w:?}"
        );
    }

    #[test]
    fn near_misses_are_not_reported() {
        for text in [
            // The ask matches less than the allow.
            "version: 1\nask:\n  - \"git push origin feature *\"\nallow:\n  - \"git push *\"\n",
            // Different commands.
            "version: 1\nask:\n  - \"git push *\"\nallow:\n  - \"git pull *\"\n",
            // The ask has a condition the allow does not.
            "version: 1\nask:\n  - {command: \"git push *\", when: {sensitivity: mutate}}\nallow:\n  - \"git push origin x\"\n",
            // The ask is scoped to one integration, the allow is not.
            "version: 1\nask:\n  - {command: \"git *\", scope: {integration: ci}}\nallow:\n  - \"git push\"\n",
            // Different types.
            "version: 1\nask:\n  - {id: a, when: {type: http.request}}\nallow:\n  - {id: b, when: {type: fs.read, fs.path: /p/x}}\n",
            // The allow ranks first.
            "version: 1\nask:\n  - \"git *\"\nallow:\n  - {command: \"git status\", priority: 101}\n",
            // A regex is not compared with a glob that has wildcards.
            "version: 1\nask:\n  - {id: a, when: {type: shell.exec, shell.command: {pattern: \"^git \"}}}\nallow:\n  - \"git st*\"\n",
        ] {
            assert_eq!(warnings(text), vec![], "{text}");
        }
    }

    #[test]
    fn a_literal_command_is_checked_against_any_condition() {
        let w = warnings(
            "version: 1\nask:\n  - {id: git, when: {type: shell.exec, shell.command: {pattern: \"^git \"}}}\nallow:\n  - \"git status\"\n",
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].0, "allow-overridden");
        assert!(
            w[0].2
                .contains("`git` (ask rule at /p/aileron.yaml:3:5, priority 100)"),
            "{w:?}"
        );
    }

    #[test]
    fn a_rule_no_action_reaches() {
        let w = warnings("version: 1\nallow:\n  - \"git status\"\n  - \"git *\"\n");
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!((w[0].0, w[0].1), ("shadowed-rule", 3));
        assert!(
            w[0].2.starts_with("this allow rule never decides: `git *` (allow rule at /p/aileron.yaml:4:5, priority 50)"),
            "{w:?}"
        );
        assert!(
            w[0].2
                .ends_with("comes later (among equals the last rule wins); it is redundant"),
            "{w:?}"
        );
        // In the other order each decides something.
        assert_eq!(
            warnings("version: 1\nallow:\n  - \"git *\"\n  - \"git status\"\n"),
            vec![]
        );
    }

    #[test]
    fn an_ask_under_a_broader_allow_of_higher_priority() {
        let w = warnings(
            "version: 1\nallow:\n  - {id: all-git, command: \"git *\", priority: 150}\nask:\n  - {id: push, command: \"git push *\"}\n",
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].0, "shadowed-rule");
        assert!(
            w[0].2
                .starts_with("this ask rule never decides: `all-git` (allow rule"),
            "{w:?}"
        );
    }

    #[test]
    fn a_deny_of_a_lower_layer_hides_an_allow_at_any_priority() {
        let profile = Source {
            name: "/p/team.yaml".into(),
            text: "version: 1\ndeny:\n  - {id: no-push, command: \"git push *\"}\n".into(),
            layer: Layer::Profile,
            base_dir: "/p".into(),
        };
        let project = Source {
            name: FILE.into(),
            text: "version: 1\nallow:\n  - {id: push, command: \"git push origin x\", priority: 900}\n"
                .into(),
            layer: Layer::Project,
            base_dir: "/p".into(),
        };
        let p = Policy::from_sources(&[profile, project], &Environment::new("/home/u")).unwrap();
        let f = findings(&p);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].rule, "push");
        assert_eq!(f[0].by.as_deref(), Some("no-push"));
        assert!(
            f[0].diagnostic.message.ends_with(
                "is a deny rule of a lower layer (profile), which no rule can outrank; no priority can make it take effect"
            ),
            "{f:?}"
        );
    }

    #[test]
    fn denies_are_only_hidden_by_denies() {
        // A deny decides after any winner of a higher layer ...
        let w = warnings(
            "version: 1\nallow:\n  - {command: \"rm *\", priority: 300}\ndeny:\n  - \"rm -rf *\"\n",
        );
        assert_eq!(w, vec![]);
        // ... but not after a deny of its layer that comes first.
        let w = warnings("version: 1\ndeny:\n  - \"rm -rf *\"\n  - \"rm *\"\n");
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!((w[0].0, w[0].1), ("shadowed-rule", 3));
    }

    #[test]
    fn file_rules_that_ask_or_deny_are_not_reported() {
        // A shell command's file accesses are decided by the strictest rule
        // that may match, whatever ranks first.
        let w = warnings(
            "version: 1\nallow:\n  - {id: all, priority: 300, when: {type: fs.read}}\ndeny:\n  - {id: env, when: {type: fs.read, fs.path: {path: \"**/.env\"}}}\n",
        );
        assert_eq!(w, vec![]);
    }

    #[test]
    fn when_conditions_that_cover() {
        let c = |a: &str, b: &str| covers(&when(a), &when(b));
        assert!(c(
            "{type: http.request}",
            "{type: http.request, http.method: GET}"
        ));
        assert!(c("{type: {in: [fs.read, fs.write]}}", "{type: fs.read}"));
        assert!(c(
            "{type: {in: [fs.read, fs.write]}}",
            "{type: {in: [fs.write]}}"
        ));
        assert!(!c(
            "{type: {in: [fs.read]}}",
            "{type: {in: [fs.read, fs.write]}}"
        ));
        assert!(c(
            "{http.host: {glob: \"*.example.com\"}}",
            "{http.host: a.example.com}"
        ));
        assert!(c("{http.method: {in: [PUT, POST]}}", "{http.method: POST}"));
        assert!(c(
            "{fs.path: {path: /p/**}}",
            "{fs.path: {path: /p/src/*.rs}}"
        ));
        assert!(c(
            "{fs.path: {path: \"**/*.rs\"}}",
            "{fs.path: /p/src/main.rs}"
        ));
        assert!(!c(
            "{fs.path: {path: /p/src/**}}",
            "{fs.path: {path: /p/**}}"
        ));
        assert!(c("{http.port: {gte: 8000}}", "{http.port: {gt: 9000}}"));
        assert!(!c("{http.port: {gt: 9000}}", "{http.port: {gte: 8000}}"));
        assert!(c("{http.port: {exists: true}}", "{http.port: {lt: 3}}"));
        assert!(c(
            "{any: [{http.method: GET}, {http.method: HEAD}]}",
            "{http.method: HEAD, http.host: x}"
        ));
        assert!(c(
            "{type: http.request}",
            "{any: [{type: http.request, http.method: GET}, {type: http.request}]}"
        ));
        assert!(!c(
            "{type: http.request}",
            "{any: [{type: http.request}, {type: fs.read}]}"
        ));
        assert!(c(
            "{not: {tags: {in: [x]}}}",
            "{not: {tags: {in: [x]}}, type: a}"
        ));
        assert!(!c(
            "{not: {tags: {in: [x]}}}",
            "{not: {tags: {in: [x, y]}}}"
        ));
        // A list condition against a list field is not a scalar one.
        assert!(!c("{tags: {contains: prod}}", "{tags: {in: [prod]}}"));
        assert!(!c(
            "{shell.command: {glob: \"git *\"}}",
            "{shell.command: {in: [\"git x\"]}}"
        ));
        assert!(!c(
            "{http.method: GET, rate: {more_than: 3, seconds: 60}}",
            "{http.method: GET}"
        ));
    }

    #[test]
    fn unknown_fields() {
        let w = warnings(
            "version: 1\nask:\n  - {id: a, when: {type: http.request, htpp.method: POST}}\n",
        );
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].0, "unknown-field");
        assert_eq!(
            w[0].2,
            "`when:` reads `htpp.method`, but no action has a facet `htpp` (did you mean `http`?); the condition can never hold"
        );
        for (typo, known) in [("shel", "shell"), ("mpc", "mcp"), ("agnet", "agent")] {
            let text = format!("version: 1\nallow:\n  - {{id: a, when: {{{typo}.x: y}}}}\n");
            let w = warnings(&text);
            assert_eq!(w.len(), 1, "{typo}: {w:?}");
            assert!(
                w[0].2.contains(&format!("(did you mean `{known}`?)")),
                "{w:?}"
            );
        }
        let w =
            warnings("version: 1\ndeny:\n  - {id: a, when: {type: fs.read, http.host: x.test}}\n");
        assert_eq!(
            w.iter().map(|w| w.2.as_str()).collect::<Vec<_>>(),
            vec![
                "`when:` reads `http.host`, but no action of type `fs.read` has a facet `http`; the condition can never hold"
            ]
        );
        let w = warnings(
            "version: 1\ndeny:\n  - {id: a, when: {any: [{type: fs.read, fs.path: /x}, {type: shell.exec, fs.path: /y}]}}\n",
        );
        assert_eq!(w.len(), 1, "only the branch that cannot: {w:?}");
        assert!(w[0].2.contains("of type `shell.exec`"), "{w:?}");
        for ok in [
            // A plugin's facet, on a plugin's type or on no type.
            "version: 1\nallow:\n  - {id: a, when: {type: slack.post, slack.channel: x}}\n",
            "version: 1\nallow:\n  - {id: a, when: {slack.channel: x}}\n",
            // The hooks keep the agent's tool on every action.
            "version: 1\nallow:\n  - {id: a, when: {type: fs.write, tool.name: Write}}\n",
            // Names of two letters are not taken for misspellings.
            "version: 1\nallow:\n  - {id: a, when: {type: ui.click, ui.path: x}}\n",
            "version: 1\nallow:\n  - {id: a, when: {db.name: x}}\n",
            // The proxy may add facets to web requests.
            "version: 1\nallow:\n  - {id: a, when: {type: http.request, git.service: upload-pack}}\n",
            "version: 1\nallow:\n  - {id: a, when: {type: http.request, llm.model: x}}\n",
            "version: 1\nallow:\n  - {id: a, when: {mcp.arguments.repo: x}}\n",
        ] {
            assert_eq!(warnings(ok), vec![], "{ok}");
        }
    }

    #[test]
    fn allow_effect_of_an_amendment() {
        let p = policy(
            "version: 1\nask:\n  - {id: push, command: \"git push *\"}\ndeny:\n  - {id: force, command: \"git push --force *\"}\n",
        );
        let m = when("{type: shell.exec, shell.command: {glob: \"git push origin feature\"}}");
        let AllowEffect::Overridden(o) = allow_effect(&p, &m, 50, Layer::Project) else {
            panic!("an allow at 50 under an ask at 100")
        };
        assert_eq!(o.rule, "push");
        assert_eq!(o.decision, Decision::Ask);
        assert_eq!(o.winning_priority, Some(101));
        assert_eq!(
            allow_effect(&p, &m, 101, Layer::Project),
            AllowEffect::TakesEffect
        );
        // Appended last, it wins a tie; a session's answer (layer 8) too.
        assert_eq!(
            allow_effect(&p, &m, 100, Layer::Project),
            AllowEffect::TakesEffect
        );
        assert_eq!(
            allow_effect(&p, &m, 100, Layer::Session),
            AllowEffect::TakesEffect
        );
        let AllowEffect::Overridden(o) = allow_effect(&p, &m, 50, Layer::User) else {
            panic!("an allow at 50 under an ask at 100")
        };
        assert_eq!(o.winning_priority, Some(100), "a higher layer wins the tie");
        // An allow the ask does not cover takes effect.
        let other = when("{type: shell.exec, shell.command: {glob: \"git pull\"}}");
        assert_eq!(
            allow_effect(&p, &other, 50, Layer::Project),
            AllowEffect::TakesEffect
        );
        // Under the deny: no priority of the user's settings outranks it.
        let forced = when("{type: shell.exec, shell.command: {glob: \"git push --force x\"}}");
        let AllowEffect::Overridden(o) = allow_effect(&p, &forced, 50, Layer::User) else {
            panic!("under a deny of a lower layer")
        };
        assert_eq!((o.rule.as_str(), o.winning_priority), ("force", None));
        let d = o.warning(FILE, Pos { line: 9, col: 5 }, "git push --force x");
        assert_eq!(d.code, Code::IneffectiveAmendment);
        assert!(d.is_warning());
        assert!(d.headline().starts_with(
            "/p/aileron.yaml:9:5: warning: the new allow rule `git push --force x` would not take effect: `force` (deny rule at /p/aileron.yaml:5:5, priority 200)"
        ), "{}", d.headline());
    }

    #[test]
    fn an_allow_of_sql_by_a_reading_verb_alone_is_reported() {
        for (text, line) in [
            (
                "version: 1\nallow:\n  - {id: reads, when: {type: sql.query, sql.verb: SELECT}}\n",
                3,
            ),
            (
                "version: 1\nallow:\n  - id: reads\n    when:\n      type: sql.query\n      sql.database: app\n      sql.verb: {in: [SELECT, SHOW]}\n",
                3,
            ),
            (
                "version: 1\nallow:\n  - {id: v, when: {type: sql.query, verb: {pattern: \"^S\"}}}\n",
                3,
            ),
        ] {
            let w = warnings(text);
            assert_eq!(w.len(), 1, "{text}: {w:?}");
            let (code, at, message) = &w[0];
            assert_eq!((*code, *at), ("sql-verb-only", line), "{text}");
            assert!(message.contains("add `sensitivity: read`"), "{message}");
            assert!(message.contains("SELECT"), "{message}");
        }
        // Narrowed by what the statement does, or a verb that writes by itself.
        for text in [
            "version: 1\nallow:\n  - {id: r, when: {type: sql.query, sql.verb: SELECT, sensitivity: read}}\n",
            "version: 1\nallow:\n  - {id: r, when: {type: sql.query, sql.verb: SELECT, sql.tables: {in: [users]}}}\n",
            "version: 1\nallow:\n  - {id: r, when: {type: sql.query, sql.verb: INSERT}}\n",
            "version: 1\nallow:\n  - {id: r, when: {type: sql.query, sensitivity: read}}\n",
            "version: 1\nask:\n  - {id: r, when: {type: sql.query, sql.verb: SELECT}}\n",
            "version: 1\nallow:\n  - {id: r, when: {type: http.request, verb: SET}}\n",
        ] {
            assert_eq!(warnings(text), [], "{text}");
        }
    }
}
