//! A compiled policy: the documents of every layer merged (SPEC 4), the
//! overrides applied, the deny invariant checked, and the rules sorted and
//! indexed for evaluation.

use crate::action::{Action, FieldPath};
use crate::builtin::{self, Environment};
use crate::deferred::{Deferred, Unreadable};
use crate::diagnostic::{Code, Diagnostic, quote};
use crate::document::{
    DefaultPolicy, Document, EnvPolicy, Settings, Source, TestCase, parse_document,
};
use crate::error::Error;
use crate::pattern::IndexKey;
use crate::rule::{Decision, Layer, Rule};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Every layer's rules merged, checked, sorted and indexed: built once
/// from the sources ([`Policy::from_sources`]), then asked for any number
/// of decisions ([`Policy::evaluate`], [`Policy::evaluate_line`]). Adapters
/// that start once per action keep it on disk between runs
/// ([`Policy::to_cache_bytes`]); its layout is this build's alone.
#[derive(Clone, Debug)]
pub struct Policy {
    /// Enabled rules in evaluation order (priority, specificity, later first).
    pub(crate) rules: Vec<Deferred<Rule>>,
    /// Rules that are written but not evaluated: disabled or overridden.
    inactive: Deferred<Vec<(Rule, String)>>,
    pub(crate) index: Index,
    /// Per rule: a deny rule of a lower layer comes later in evaluation order.
    pub(crate) lower_deny_after: Vec<bool>,
    /// The longest `rate` window of any rule (kept here so that asking
    /// does not decode every rule).
    rate_window: Option<u64>,
    /// What decides when no rule matches.
    pub default: DefaultPolicy,
    /// `settings:` of every layer, the highest winning per key.
    pub settings: Settings,
    /// `env:` of every layer, for the launched agent's environment.
    pub env: EnvPolicy,
    /// The policy sources in force, lowest layer first.
    pub sources: Vec<(String, Layer)>,
    /// The `tests:` examples of the sources (the built-in profiles' left out).
    pub tests: Vec<TestCase>,
    /// The facts about the machine the built-in rules were derived from.
    pub environment: Environment,
    /// `judges:` of every layer by name, a higher layer's replacing a lower's.
    pub judges: std::collections::BTreeMap<String, crate::rule::JudgeDef>,
}

/// The cache encoding of a [`Policy`]: the same fields, through serde's
/// remote derive, so that `Policy` itself has no serde impls another crate
/// could come to rely on. Rules stay encoded until first read (`Deferred`).
#[derive(Serialize, Deserialize)]
#[serde(remote = "Policy")]
struct CacheForm {
    rules: Vec<Deferred<Rule>>,
    inactive: Deferred<Vec<(Rule, String)>>,
    index: Index,
    lower_deny_after: Vec<bool>,
    rate_window: Option<u64>,
    default: DefaultPolicy,
    settings: Settings,
    env: EnvPolicy,
    sources: Vec<(String, Layer)>,
    #[serde(with = "crate::json_text")]
    tests: Vec<TestCase>,
    environment: Environment,
    #[serde(with = "crate::json_text")]
    judges: std::collections::BTreeMap<String, crate::rule::JudgeDef>,
}

/// [`CacheForm`] as a value to serialize.
struct Cached<'a>(&'a Policy);

impl Serialize for Cached<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        CacheForm::serialize(self.0, s)
    }
}

impl Policy {
    /// The policy as bytes for an on-disk cache, read back by
    /// [`Policy::from_cache_bytes`] in the same build only: the encoding
    /// names no fields, so a cache must be keyed by the binary that wrote
    /// it. Rules read back are decoded when first reached.
    ///
    /// ```
    /// use aileron_engine::{Environment, Layer, Policy, Source};
    /// let src = Source {
    ///     name: "/p/aileron.yaml".into(),
    ///     text: "version: 1\ndeny: [\"rm *\"]\n".into(),
    ///     layer: Layer::Project,
    ///     base_dir: "/p".into(),
    /// };
    /// let policy = Policy::from_sources(&[src], &Environment::new("/home/u")).unwrap();
    /// let bytes = policy.to_cache_bytes().unwrap();
    /// let back = Policy::from_cache_bytes(&bytes).unwrap();
    /// assert_eq!(back.rules().count(), policy.rules().count());
    /// assert!(Policy::from_cache_bytes(b"not a policy").is_err());
    /// ```
    pub fn to_cache_bytes(&self) -> Result<Vec<u8>, Error> {
        postcard::to_stdvec(&Cached(self)).map_err(|e| Error::Cache(e.to_string()))
    }

    /// A policy from [`Policy::to_cache_bytes`]. Bytes from another build
    /// or damaged may fail here or, in a rule, when it is first reached
    /// (it then denies; see `Deferred`): check a cache entry's integrity
    /// before this.
    pub fn from_cache_bytes(bytes: &[u8]) -> Result<Policy, Error> {
        let mut de = postcard::Deserializer::from_bytes(bytes);
        CacheForm::deserialize(&mut de).map_err(|e| Error::Cache(e.to_string()))
    }
}

/// Rule positions (into `Policy::rules`) by action type and command word.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Index {
    pub by_type: SortedMap<TypeIndex>,
    /// Rules that do not say which type they apply to.
    pub any_type: Vec<u32>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct TypeIndex {
    /// Shell rules by the first word of the command glob.
    pub by_word: SortedMap<Vec<u32>>,
    /// Rules by a value, domain or directory a field must hold.
    pub keyed: Vec<KeyedIndex>,
    pub other: Vec<u32>,
}

/// Rules by what one field of the action must be.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct KeyedIndex {
    pub kind: KeyKind,
    pub path: FieldPath,
    pub rules: SortedMap<Vec<u32>>,
}

/// Entries sorted by key, found by binary search: built once when a policy
/// compiles, read on every decision, and decoded from the cache without
/// hashing (the shim and each hook call decode the index every time).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct SortedMap<V>(Vec<(String, V)>);

impl<V> Default for SortedMap<V> {
    fn default() -> Self {
        SortedMap(Vec::new())
    }
}

impl<V> SortedMap<V> {
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().map(|(_, v)| v)
    }

    pub fn get(&self, key: &str) -> Option<&V> {
        self.0
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|i| &self.0[i].1)
    }

    fn from_unsorted(mut entries: Vec<(String, V)>) -> Self {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        SortedMap(entries)
    }
}

impl SortedMap<Vec<u32>> {
    /// Rule positions by key from (key, position) pairs given in rule
    /// order; each list keeps that order, once per position.
    fn grouped(mut pairs: KeyedPositions) -> Self {
        pairs.sort_by(|a, b| a.0.cmp(&b.0)); // stable: positions stay in order
        let mut out: Vec<(String, Vec<u32>)> = Vec::new();
        for (key, i) in pairs {
            match out.last_mut() {
                Some((k, list)) if *k == key => {
                    if list.last() != Some(&i) {
                        list.push(i);
                    }
                }
                _ => out.push((key, vec![i])),
            }
        }
        SortedMap(out)
    }
}

/// (key, rule position) pairs in rule order.
type KeyedPositions = Vec<(String, u32)>;

/// A type's index while it is built.
#[derive(Default)]
struct TypeIndexBuilder {
    by_word: KeyedPositions,
    keyed: Vec<(KeyKind, FieldPath, KeyedPositions)>,
    other: Vec<u32>,
}

impl TypeIndexBuilder {
    fn finish(self) -> TypeIndex {
        TypeIndex {
            by_word: SortedMap::grouped(self.by_word),
            keyed: self
                .keyed
                .into_iter()
                .map(|(kind, path, pairs)| KeyedIndex {
                    kind,
                    path,
                    rules: SortedMap::grouped(pairs),
                })
                .collect(),
            other: self.other,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum KeyKind {
    /// Keyed by the whole value.
    Value,
    /// Keyed by a domain the value ends in (`*.example.com` → `example.com`).
    DomainSuffix,
    /// Keyed by a directory the value is below (`/srv/x/**` → `/srv/x`).
    Directory,
}

impl KeyedIndex {
    /// Calls `f` with every key under which rules that can match `value` are filed.
    pub fn keys_of<'v>(&self, value: &'v str, mut f: impl FnMut(&'v str)) {
        match self.kind {
            KeyKind::Value => f(value),
            KeyKind::DomainSuffix => value
                .match_indices('.')
                .for_each(|(i, _)| f(&value[i + 1..])),
            KeyKind::Directory => {
                f(value);
                value
                    .match_indices('/')
                    .filter(|(i, _)| *i > 0)
                    .for_each(|(i, _)| f(&value[..i]));
            }
        }
    }
}

impl Policy {
    /// Parses and compiles sources given lowest layer first. A source's
    /// `profiles:` must already be among `sources` (the loader resolves them).
    pub fn from_sources(sources: &[Source], env: &Environment) -> Result<Policy, Vec<Diagnostic>> {
        Policy::parse_and_compile(sources, env, None)
    }

    /// [`Policy::from_sources`] for a policy read on someone else's
    /// behalf (`aileron serve` deciding an agent's request with a
    /// project's files): what directs the reader's own I/O is the
    /// reader's, so no source's `judges:` or `settings.audit_log` is
    /// taken, and `judges` (the reader's own) are the policy's judges,
    /// which its `judge` rules may name.
    pub fn from_sources_judged_by(
        sources: &[Source],
        env: &Environment,
        judges: std::collections::BTreeMap<String, crate::rule::JudgeDef>,
    ) -> Result<Policy, Vec<Diagnostic>> {
        Policy::parse_and_compile(sources, env, Some(judges))
    }

    fn parse_and_compile(
        sources: &[Source],
        env: &Environment,
        judges: Option<std::collections::BTreeMap<String, crate::rule::JudgeDef>>,
    ) -> Result<Policy, Vec<Diagnostic>> {
        let mut docs = Vec::new();
        let mut errors = Vec::new();
        for s in sources {
            match parse_document(s, &env.home) {
                Ok(d) => docs.push(d),
                Err(e) => errors.extend(e),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        if judges.is_some() {
            for d in &mut docs {
                d.judges.clear();
                d.settings.audit_log = None;
            }
        }
        Policy::compile_judged(docs, env, judges).map_err(|mut errors| {
            // Merge errors are found after parsing; quote their lines too.
            quote(&mut errors, sources);
            errors
        })
    }

    /// Merges documents given lowest layer first.
    pub fn compile(docs: Vec<Document>, env: &Environment) -> Result<Policy, Vec<Diagnostic>> {
        Policy::compile_judged(docs, env, None)
    }

    /// [`Policy::compile`], with `judges` instead of the documents' own.
    fn compile_judged(
        docs: Vec<Document>,
        env: &Environment,
        judges_given: Option<std::collections::BTreeMap<String, crate::rule::JudgeDef>>,
    ) -> Result<Policy, Vec<Diagnostic>> {
        let policy_files: Vec<String> = docs
            .iter()
            .filter(|d| d.name.starts_with('/'))
            .map(|d| d.name.clone())
            .collect();
        let mut all: Vec<Rule> = builtin::rules(env, &policy_files);
        let mut default = None;
        let mut settings = Settings::default();
        let mut env_policy = EnvPolicy::default();
        let mut tests = Vec::new();
        let mut sources = Vec::new();
        let mut judges = std::collections::BTreeMap::new();
        for doc in docs {
            default = doc.default.or(default);
            let s = doc.settings;
            settings.ask_mode = s.ask_mode.or(settings.ask_mode);
            settings.audit_log = s.audit_log.or(settings.audit_log);
            settings.timeout = s.timeout.or(settings.timeout);
            settings.on_timeout = s.on_timeout.or(settings.on_timeout);
            settings.writable = s.writable.or(settings.writable);
            settings.readable = s.readable.or(settings.readable);
            settings.sockets = s.sockets.or(settings.sockets);
            settings.proxy_inspect = s.proxy_inspect.or(settings.proxy_inspect);
            settings.gateways = s.gateways.or(settings.gateways);
            for p in doc.env.scrub {
                if !env_policy.scrub.contains(&p) {
                    env_policy.scrub.push(p);
                }
            }
            for p in doc.env.passthrough {
                if !env_policy.passthrough.contains(&p) {
                    env_policy.passthrough.push(p);
                }
            }
            if !doc.name.starts_with(crate::profiles::BUILTIN_PREFIX) {
                tests.extend(doc.tests);
            }
            sources.push((doc.name, doc.layer));
            all.extend(doc.rules);
            for j in doc.judges {
                judges.insert(j.name.clone(), j);
            }
        }
        let (active, inactive) = merge_rules(all)?;
        let mut policy = Policy {
            rules: active.into_iter().map(Deferred::new).collect(),
            inactive: Deferred::new(inactive),
            index: Index::default(),
            lower_deny_after: Vec::new(),
            rate_window: None,
            default: default.unwrap_or(DefaultPolicy::Ask),
            settings,
            env: env_policy,
            sources,
            tests,
            environment: env.clone(),
            judges: judges_given.unwrap_or(judges),
        };
        policy.sort_and_index();
        policy.check_judges()?;
        Ok(policy)
    }

    /// The judge a `judge` rule asks: the one it names, else `default`,
    /// else the only one. `None` when the policy defines none (a human
    /// decides) or the rule names none of several.
    pub fn judge_for(&self, rule: &Rule) -> Option<&crate::rule::JudgeDef> {
        match rule.judge.as_ref().and_then(|j| j.judge.as_deref()) {
            Some(name) => self.judges.get(name),
            None => self.default_judge(),
        }
    }

    /// The judge named `default`, else the only one.
    pub fn default_judge(&self) -> Option<&crate::rule::JudgeDef> {
        self.judges
            .get("default")
            .or_else(|| (self.judges.len() == 1).then(|| self.judges.values().next())?)
    }

    /// Every `judge` rule's judge exists, when the policy defines judges.
    fn check_judges(&self) -> Result<(), Vec<Diagnostic>> {
        let mut errors = Vec::new();
        let known = || self.judges.keys().cloned().collect::<Vec<_>>().join(", ");
        for rule in self.rules().chain(self.inactive().iter().map(|(r, _)| r)) {
            let named = rule.judge.as_ref().and_then(|j| j.judge.as_deref());
            let at = |msg: String| Diagnostic {
                file: rule.origin.file.clone(),
                line: rule.origin.line,
                col: rule.origin.col,
                message: msg,
                source_line: None,
                severity: crate::diagnostic::Severity::Error,
                code: crate::diagnostic::Code::Invalid,
            };
            match named {
                Some(name) if !self.judges.contains_key(name) => errors.push(at(format!(
                    "rule `{}` names judge `{name}`, which no `judges:` defines{}",
                    rule.id,
                    if self.judges.is_empty() {
                        String::new()
                    } else {
                        format!("; defined: {}", known())
                    }
                ))),
                None if rule.decision == Decision::Judge
                    && self.judges.len() > 1
                    && self.judge_for(rule).is_none() =>
                {
                    errors.push(at(format!(
                        "rule `{}` must name its judge (`judge: NAME`): there are several and none is called `default`; defined: {}",
                        rule.id,
                        known()
                    )))
                }
                _ => {}
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// Adds rules of a higher layer (the database, layer 7) to a compiled
    /// policy, with the same override and deny checks as files.
    pub fn with_rules(&self, extra: Vec<Rule>) -> Result<Policy, Vec<Diagnostic>> {
        // Every rule goes through the merge again, the overridden ones too,
        // so that an `override:` still finds its target.
        let mut all: Vec<Rule> = self.rules().cloned().collect();
        all.extend(self.inactive().iter().map(|(r, _)| r.clone()));
        all.sort_by_key(|r| r.seq);
        all.extend(extra);
        let (active, inactive) = merge_rules(all)?;
        let mut policy = Policy {
            rules: active.into_iter().map(Deferred::new).collect(),
            inactive: Deferred::new(inactive),
            index: Index::default(),
            ..self.clone()
        };
        policy.sort_and_index();
        policy.check_judges()?;
        Ok(policy)
    }

    /// Enabled rules in evaluation order.
    pub fn rules(&self) -> impl ExactSizeIterator<Item = &Rule> + DoubleEndedIterator {
        self.rules.iter().map(Deferred::get)
    }

    /// The longest window of a `rate` condition in force, in seconds: how
    /// far back an adapter must keep a session's actions (`None`: none at all).
    pub fn rate_window(&self) -> Option<u64> {
        self.rate_window
    }

    /// Rules that are written but not evaluated, each with why (disabled, overridden).
    pub fn inactive(&self) -> &[(Rule, String)] {
        self.inactive.get()
    }

    /// The enabled rule called `id`.
    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules().find(|r| r.id == id)
    }

    /// Tool names a blanket deny makes useless (SPEC 10, disabled tools):
    /// a `tool.call` of that name with any input would be denied.
    pub fn disabled_tools<'t>(&self, tools: &[&'t str]) -> Vec<&'t str> {
        tools
            .iter()
            .copied()
            .filter(|tool| {
                self.rules().any(|r| {
                    r.decision == Decision::Deny
                        && r.scope == Default::default()
                        && crate::evaluate::is_blanket_tool_deny(&r.matcher, tool)
                })
            })
            .collect()
    }

    /// Whether every action like `template` is denied, whatever the fields
    /// not named in `fixed` hold (SPEC 10, disabled tools, for actions an
    /// adapter knows only in part: the MCP gateway hides a tool whose every
    /// call is denied, whatever its arguments). `fixed` names field paths as
    /// rules write them (`type`, `verb`, `mcp.tool`; a facet path covers the
    /// paths below it, and a facet's name the whole facet: `shell`), whose
    /// values in `template` (or their absence) every such action has.
    ///
    /// True only when a deny rule that applies to every session holds on
    /// every such action, and no rule that could decide otherwise comes
    /// before it (one of a lower layer, or of its own: a higher layer's allow
    /// loses to it anyway). A field path `fixed` does not name makes a deny
    /// uncertain and any other rule possible, so the answer errs towards
    /// `false`: a tool left listed is still decided at each call.
    pub fn denies_all_like(&self, template: &Action, fixed: &[&str]) -> bool {
        let fixed: Vec<FieldPath> = fixed
            .iter()
            .filter_map(|f| crate::evaluate::known_path(f))
            .collect();
        let known = crate::evaluate::Known {
            action: template,
            fixed: &fixed,
        };
        // The lowest layer of the rules met so far that could decide
        // otherwise: a deny wins over them only from a lower layer.
        let mut other = u8::MAX;
        for r in self.rules() {
            if r.decision == Decision::Deny {
                if (r.layer as u8) < other
                    && r.scope == Default::default()
                    && known.certainly(&r.matcher)
                {
                    return true;
                }
            } else if known.possibly(&r.matcher) {
                other = other.min(r.layer as u8);
            }
        }
        false
    }

    fn sort_and_index(&mut self) {
        self.rules.sort_by(|a, b| rank_order(a.get(), b.get()));
        let mut any_type = Vec::new();
        let mut by_type: HashMap<String, TypeIndexBuilder> = HashMap::new();
        for (i, r) in self.rules().enumerate() {
            let i = i as u32;
            match r.matcher.required_types() {
                None => any_type.push(i),
                Some(types) => {
                    let word = r.matcher.required_first_word();
                    let key = match r.matcher.index_key() {
                        Some(IndexKey::Values(p, vs)) => Some((
                            KeyKind::Value,
                            p,
                            vs.into_iter().map(str::to_owned).collect(),
                        )),
                        Some(IndexKey::DomainSuffix(p, s)) => {
                            Some((KeyKind::DomainSuffix, p, vec![s.to_owned()]))
                        }
                        Some(IndexKey::Directory(p, d)) => Some((KeyKind::Directory, p, vec![d])),
                        None => None,
                    };
                    for t in types {
                        let ti = by_type.entry(t).or_default();
                        match (&word, &key) {
                            (Some(w), _) => ti.by_word.push((w.clone(), i)),
                            (None, Some((kind, path, vals))) => {
                                let found = ti
                                    .keyed
                                    .iter()
                                    .position(|(k, p, _)| k == kind && p == *path);
                                let at = found.unwrap_or_else(|| {
                                    ti.keyed.push((*kind, (*path).clone(), Vec::new()));
                                    ti.keyed.len() - 1
                                });
                                for v in vals {
                                    ti.keyed[at].2.push(((*v).to_owned(), i));
                                }
                            }
                            (None, None) => ti.other.push(i),
                        }
                    }
                }
            }
        }
        let index = Index {
            by_type: SortedMap::from_unsorted(
                by_type.into_iter().map(|(t, b)| (t, b.finish())).collect(),
            ),
            any_type,
        };
        self.index = index;
        self.rate_window = self.rules().filter_map(|r| r.matcher.rate_window()).max();
        // For each rule: does a deny of a lower layer come after it? If
        // not, evaluation can stop as soon as it wins.
        let mut lowest_deny_after = u8::MAX;
        self.lower_deny_after = vec![false; self.rules.len()];
        for (i, r) in self.rules.iter().map(Deferred::get).enumerate().rev() {
            self.lower_deny_after[i] = lowest_deny_after < r.layer as u8;
            if r.decision == Decision::Deny {
                lowest_deny_after = lowest_deny_after.min(r.layer as u8);
            }
        }
    }
}

const DISABLED: &str = "disabled (`enabled: false`)";

/// Applies `override:`, rejects duplicate ids and overrides of deny rules,
/// and splits enabled rules from inactive ones. `all` is lowest layer first.
/// Rules that are evaluated, and rules that are not with the reason why.
type Merged = (Vec<Rule>, Vec<(Rule, String)>);

/// A rule whose cached encoding cannot be read denies everything it is
/// reached for, saying why.
impl Unreadable for Rule {
    fn unreadable(error: &str) -> Rule {
        let origin = crate::rule::Origin {
            file: "<cache>".into(),
            line: 0,
            col: 0,
        };
        let mut r = Rule::new(
            "aileron:unreadable-cache".into(),
            Decision::Deny,
            Layer::Builtin,
            origin,
        );
        r.description = Some(format!(
            "the cached compiled policy could not be read ({error}); delete $AILERON_DATA/cache"
        ));
        r.matcher = crate::pattern::Matcher::All(Vec::new());
        r
    }
}

/// Inactive rules only explain; none is lost from evaluation.
impl Unreadable for Vec<(Rule, String)> {
    fn unreadable(_: &str) -> Self {
        Vec::new()
    }
}

fn merge_rules(all: Vec<Rule>) -> Result<Merged, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    let mut cancelled: HashMap<usize, String> = HashMap::new();
    for (i, r) in all.iter().enumerate() {
        if let Some((target, pos)) = r.override_of.as_ref().filter(|_| r.enabled) {
            let err = |msg: String| Diagnostic::new(Code::Conflict, &r.origin.file, *pos, msg);
            match by_id.get(target.as_str()).map(|&j| (j, &all[j])) {
                None => {
                    let known: Vec<&str> = by_id.keys().copied().collect();
                    let hint = crate::suggest::did_you_mean(target, &known);
                    errors.push(err(format!("`override: {target}`: no rule with that id in a lower layer{hint}")));
                }
                Some((_, t)) if t.layer >= r.layer => errors.push(err(format!(
                    "`override: {target}`: that rule ({}) is in the same or a higher layer; only lower layers can be overridden",
                    t.origin
                ))),
                Some((_, t)) if t.structural => errors.push(err(format!(
                    "`override: {target}`: built-in structural rules cannot be overridden"
                ))),
                Some((_, t)) if t.decision == Decision::Deny => errors.push(err(format!(
                    "`override: {target}`: deny rules cannot be overridden (`{target}` is a deny rule at {})",
                    t.origin
                ))),
                Some((j, _)) => {
                    cancelled.insert(j, format!("overridden by `{}` ({})", r.id, r.origin));
                }
            }
        }
        match by_id.get(r.id.as_str()) {
            Some(&j) if r.override_of.as_ref().is_none_or(|(t, _)| *t != r.id) => errors.push(Diagnostic::new(
                Code::Conflict,
                &r.origin.file,
                r.origin.pos(),
                format!(
                    "duplicate rule id `{}` (first defined at {}); use `override: {}` to replace a lower layer's rule",
                    r.id, all[j].origin, r.id
                ),
            )),
            _ => {
                by_id.insert(&r.id, i);
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut active = Vec::new();
    let mut inactive = Vec::new();
    for (i, mut r) in all.into_iter().enumerate() {
        r.seq = i as u32;
        if let Some(why) = cancelled.remove(&i) {
            inactive.push((r, why));
        } else if !r.enabled {
            inactive.push((r, DISABLED.to_owned()));
        } else {
            active.push(r);
        }
    }
    Ok((active, inactive))
}

/// Evaluation order (SPEC 7): structural built-ins first (nothing outranks
/// them), then priority, then specificity, then later layer
/// and position first, so that among equals the last match wins.
pub(crate) fn rank_order(a: &Rule, b: &Rule) -> std::cmp::Ordering {
    b.structural
        .cmp(&a.structural)
        .then(b.priority.cmp(&a.priority))
        .then(b.scope.specificity().cmp(&a.scope.specificity()))
        .then(b.layer.cmp(&a.layer))
        .then(b.seq.cmp(&a.seq))
}
