//! Property tests of the evaluator (SPEC 4, 5, 7 and 8).
//!
//! Random policies (rules in the allow / ask / judge / deny buckets, short
//! and long forms, `when:` matchers, priorities, scopes, overrides, layers
//! profile / project / user, database rules, session approvals, `default:`)
//! are checked against random actions and random shell lines drawn from the
//! same small vocabulary, so that rules and inputs meet often.
//!
//! No property-testing crate: a splitmix64 generator seeded from
//! `AILERON_PROPS_SEED` (decimal or `0x` hex; a fixed default) runs
//! `AILERON_PROPS_CASES` cases per property (default [`DEFAULT_CASES`]).
//! A failure names the property, the seed and the case, and prints the
//! policy sources and the input.

mod common;

use aileron_engine::pattern::History;
use aileron_engine::{
    Action, Decision, DefaultPolicy, Layer, LineContext, LineVerdict, Policy, Rule, Sensitivity,
    Session, Source, State, Verdict, VerdictSource,
};
use common::*;
use serde_json::json;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

// ---------------------------------------------------------------- the generator

const DEFAULT_SEED: u64 = 0x00A1_1E50_2026;
/// Cases per property when `AILERON_PROPS_CASES` is unset.
const DEFAULT_CASES: usize = 48;

/// splitmix64: small, fast, and good enough to drive test generation.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        assert!(n > 0);
        (self.next_u64() % n as u64) as usize
    }

    /// True with probability `num / den`.
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next_u64() % den < num
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{name}={v:?} is not a number: {e}")))
}

fn seed() -> u64 {
    env_u64("AILERON_PROPS_SEED").unwrap_or(DEFAULT_SEED)
}

fn cases() -> usize {
    env_u64("AILERON_PROPS_CASES").map_or(DEFAULT_CASES, |n| n as usize)
}

/// FNV-1a, to give every property its own stream from one seed.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Runs `case` `cases()` times (times `scale`), each with its own generator.
/// Returns how many cases `case` counted as run (it returns false to skip
/// one whose inputs did not qualify).
fn run(name: &str, scale: usize, mut case: impl FnMut(&mut Rng) -> bool) -> usize {
    let (seed, n) = (seed(), cases() * scale);
    eprintln!("{name}: AILERON_PROPS_SEED={seed:#x} cases={n}");
    let mut counted = 0;
    for i in 0..n {
        let mut rng = Rng(Rng(seed ^ fnv(name) ^ ((i as u64) << 32)).next_u64());
        match catch_unwind(AssertUnwindSafe(|| case(&mut rng))) {
            Ok(true) => counted += 1,
            Ok(false) => {}
            Err(e) => {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                panic!(
                    "property `{name}` failed at case {i} (reproduce with \
                     AILERON_PROPS_SEED={seed:#x} AILERON_PROPS_CASES={}):\n{msg}",
                    (i + scale) / scale
                );
            }
        }
    }
    eprintln!("{name}: {counted} of {n} cases qualified");
    counted
}

// ---------------------------------------------------------------- vocabulary

/// Programs and the arguments they are given.
const PROGRAMS: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "status",
            "diff",
            "log",
            "push",
            "origin",
            "main",
            "feature",
            "--oneline",
            "HEAD",
        ],
    ),
    ("ls", &["-la", "src", "docs", "-R"]),
    ("cat", &["README.md", "src/a.rs", "docs/x.md", "notes.txt"]),
    ("rm", &["-f", "-rf", "x.txt", "build", "src/a.rs"]),
    ("make", &["build", "test", "clean"]),
    ("echo", &["hi", "x", "push", "main"]),
    ("docker", &["ps", "run", "alpine"]),
    (
        "curl",
        &["-s", "https://example.com", "https://api.example.com/v1"],
    ),
    ("grep", &["-r", "foo", "src", "-n"]),
    ("cp", &["a.txt", "b.txt", "src/a.rs"]),
    ("touch", &["new.txt", "src/b.rs"]),
    ("wc", &["-l", "README.md"]),
];

/// Command globs rules are written with (short form, `command:`).
const COMMAND_GLOBS: &[&str] = &[
    "git *",
    "git status",
    "git diff *",
    "git push *",
    "git push origin main",
    "git * main",
    "ls *",
    "cat *",
    "rm *",
    "rm -rf *",
    "rm -f *",
    "make *",
    "make test",
    "echo *",
    "docker *",
    "curl *",
    "grep *",
    "cp *",
    "touch *",
    "wc *",
    "*",
    "* main",
    "*push*",
    "?s *",
    "ca? *",
    "git\\*",
    "zz-unknown *",
];

/// Conditions of `when:` (flow YAML, one `field: condition` each, or a combinator).
const WHEN_CONDS: &[&str] = &[
    "type: shell.exec",
    "type: fs.write",
    "type: fs.read",
    "type: http.request",
    "type: [fs.read, fs.write]",
    "type: {in: [shell.exec, fs.write]}",
    "sensitivity: read",
    "sensitivity: write",
    "sensitivity: {in: [write, mutate]}",
    "tags: {contains: prod}",
    "tags: {contains: inline-interpreter}",
    "tags: {notContains: prod}",
    "fs.path: {path: \"src/**\"}",
    "fs.path: {path: \"/p/src/**\"}",
    "fs.path: {path: \"*.rs\"}",
    "fs.path: {path: \"./docs/\"}",
    "fs.path: {pattern: \"^/p/src/\"}",
    "fs.path: {glob: \"/p/*\"}",
    "fs.path: /p/README.md",
    "shell.command: {pattern: \"^git (status|diff)\"}",
    "shell.command: {pattern: \"^rm -\"}",
    "shell.command: {pattern: \"(?i)^GIT \"}",
    "shell.command: {glob: \"rm *\"}",
    "shell.command: {contains: push}",
    "shell.command: \"git status\"",
    "shell.binary: git",
    "shell.binary: {in: [git, rm, curl]}",
    "shell.args: {contains: main}",
    "shell.writes: {path: \"/p/**\"}",
    "shell.writes: {exists: true}",
    "http.host: {glob: \"*.example.com\"}",
    "http.host: example.com",
    "http.method: GET",
    "http.method: {in: [POST, DELETE]}",
    "summary: {contains: readme}",
    "session.plugin: gh",
    "not: {sensitivity: read}",
    "not: {type: shell.exec}",
    "any: [{shell.binary: rm}, {type: fs.write}]",
    "any: [{tags: {contains: prod}}, {http.method: DELETE}]",
    "all: [{type: fs.read}, {fs.path: {path: \"/p/**\"}}]",
];

const PLUGINS: &[&str] = &["gh", "x"];

/// Scopes of rules (SPEC 7: specificity integration 4 + profile 2 + plugin 1).
const SCOPES: &[&str] = &[
    "{plugin: gh}",
    "{plugin: x}",
    "{profile: prod}",
    "{integration: i1}",
    "{plugin: gh, profile: prod}",
    "{integration: i1, plugin: x}",
    "{integration: i1, profile: prod, plugin: gh}",
];

/// A rule as generated: enough to render it and to know its final id.
#[derive(Clone, Debug)]
struct GenRule {
    bucket: Decision,
    /// Explicit id; without one the rule gets `FILE:bucket[i]`.
    id: Option<String>,
    /// A short-form rule: only a command glob.
    short: Option<&'static str>,
    command: Option<&'static str>,
    binary: Option<&'static str>,
    args_contain: Option<&'static str>,
    when: Option<String>,
    priority: Option<i64>,
    /// `scope:` as flow YAML.
    scope: Option<&'static str>,
    override_of: Option<String>,
    enabled: bool,
}

#[derive(Clone, Debug)]
struct GenSource {
    name: &'static str,
    layer: Layer,
    base_dir: &'static str,
    default: Option<&'static str>,
    rules: Vec<GenRule>,
}

#[derive(Clone, Debug)]
struct GenPolicy {
    sources: Vec<GenSource>,
}

fn bucket_name(d: Decision) -> &'static str {
    d.as_str()
}

impl GenSource {
    fn new(layer: Layer) -> GenSource {
        let (name, base_dir) = match layer {
            Layer::Profile => ("/p/team.yaml", "/p"),
            Layer::Project => (FILE, DIR),
            Layer::User => (USER_FILE, "/home/u/.aileron"),
            l => panic!("no file for layer {l:?}"),
        };
        GenSource {
            name,
            layer,
            base_dir,
            default: None,
            rules: Vec::new(),
        }
    }

    /// The id rule `k` of this source gets.
    fn final_id(&self, k: usize) -> String {
        let r = &self.rules[k];
        if let Some(id) = &r.id {
            return id.clone();
        }
        let i = self.rules[..k]
            .iter()
            .filter(|o| o.bucket == r.bucket)
            .count();
        format!("{}:{}[{i}]", self.name, bucket_name(r.bucket))
    }

    fn render(&self) -> String {
        let mut t = String::from("version: 1\n");
        if let Some(d) = self.default {
            writeln!(t, "default: {d}").unwrap();
        }
        for bucket in [
            Decision::Allow,
            Decision::Ask,
            Decision::Judge,
            Decision::Deny,
        ] {
            let rules: Vec<&GenRule> = self.rules.iter().filter(|r| r.bucket == bucket).collect();
            if rules.is_empty() {
                continue;
            }
            writeln!(t, "{}:", bucket_name(bucket)).unwrap();
            for r in rules {
                writeln!(t, "  - {}", r.render()).unwrap();
            }
        }
        t
    }

    fn source(&self) -> Source {
        source(self.name, &self.render(), self.layer, self.base_dir)
    }
}

impl GenRule {
    fn render(&self) -> String {
        if let Some(glob) = self.short {
            return format!("{glob:?}");
        }
        let mut parts = Vec::new();
        if let Some(id) = &self.id {
            parts.push(format!("id: {id:?}"));
        }
        if let Some(o) = &self.override_of {
            parts.push(format!("override: {o:?}"));
        }
        if let Some(c) = self.command {
            parts.push(format!("command: {c:?}"));
        }
        if let Some(b) = self.binary {
            parts.push(format!("binary: {b:?}"));
        }
        if let Some(a) = self.args_contain {
            parts.push(format!("args_contain: {a:?}"));
        }
        if let Some(w) = &self.when {
            parts.push(format!("when: {w}"));
        }
        if let Some(p) = self.priority {
            parts.push(format!("priority: {p}"));
        }
        if let Some(sc) = self.scope {
            parts.push(format!("scope: {sc}"));
        }
        if !self.enabled {
            parts.push("enabled: false".into());
        }
        if self.bucket == Decision::Judge {
            parts.push("model: m".into());
        }
        format!("{{{}}}", parts.join(", "))
    }
}

impl GenPolicy {
    fn sources(&self) -> Vec<Source> {
        self.sources.iter().map(GenSource::source).collect()
    }

    fn compile(&self) -> Result<Policy, String> {
        Policy::from_sources(&self.sources(), &environment())
            .map_err(|d| format!("{}\n{}", show(&d), self.dump()))
    }

    fn dump(&self) -> String {
        let mut out = String::new();
        for s in &self.sources {
            writeln!(out, "--- {} ({:?})\n{}", s.name, s.layer, s.render()).unwrap();
        }
        out
    }

    /// Every written rule with its source index, rule index and final id.
    fn rules(&self) -> Vec<(usize, usize, String)> {
        let mut out = Vec::new();
        for (si, s) in self.sources.iter().enumerate() {
            for k in 0..s.rules.len() {
                out.push((si, k, s.final_id(k)));
            }
        }
        out
    }
}

/// Can a `when:` condition hold for a `shell.exec` action? (A rule with
/// ADR match fields and a `when:` that requires another type is a load
/// error: it could never match.)
fn shell_compatible(cond: &str) -> bool {
    !cond.contains("type:")
        || cond.contains("shell.exec")
        || cond.starts_with("any:")
        || cond.starts_with("not:")
}

fn gen_when(rng: &mut Rng) -> String {
    gen_when_where(rng, |_| true)
}

fn gen_when_where(rng: &mut Rng, keep: impl Fn(&str) -> bool) -> String {
    let n = 1 + rng.below(3);
    let mut conds: Vec<&str> = Vec::new();
    let mut fields: Vec<&str> = Vec::new();
    let pool: Vec<&str> = WHEN_CONDS.iter().copied().filter(|c| keep(c)).collect();
    for _ in 0..n {
        let c = *rng.pick(&pool);
        let field = c.split(':').next().unwrap_or(c);
        if !fields.contains(&field) {
            fields.push(field);
            conds.push(c);
        }
    }
    format!("{{{}}}", conds.join(", "))
}

fn gen_priority(rng: &mut Rng) -> Option<i64> {
    if rng.chance(2, 3) {
        return None;
    }
    Some(*rng.pick(&[
        0,
        10,
        50,
        99,
        100,
        120,
        150,
        199,
        200,
        201,
        300,
        -5,
        1_000_000_000,
    ]))
}

/// A rule for `bucket`; `ids` numbers explicit ids across the whole policy.
fn gen_rule(rng: &mut Rng, bucket: Decision, ids: &mut usize, with_priority: bool) -> GenRule {
    let mut r = GenRule {
        bucket,
        id: None,
        short: None,
        command: None,
        binary: None,
        args_contain: None,
        when: None,
        priority: None,
        scope: None,
        override_of: None,
        enabled: true,
    };
    if rng.chance(1, 3) {
        r.short = Some(*rng.pick(COMMAND_GLOBS));
        return r;
    }
    if rng.chance(2, 3) {
        *ids += 1;
        r.id = Some(format!("r{ids}"));
    }
    match rng.below(6) {
        0 | 1 => r.command = Some(*rng.pick(COMMAND_GLOBS)),
        2 => r.binary = Some(*rng.pick(&["git", "rm", "r?", "*", "cat"])),
        3 => r.args_contain = Some(*rng.pick(&["push", "-rf", "main", "README"])),
        _ => {}
    }
    let adr = r.command.is_some() || r.binary.is_some() || r.args_contain.is_some();
    if !adr {
        r.when = Some(gen_when(rng));
    } else if rng.chance(1, 4) {
        r.when = Some(gen_when_where(rng, shell_compatible));
    }
    if with_priority {
        r.priority = gen_priority(rng);
    }
    if rng.chance(1, 5) {
        r.scope = Some(*rng.pick(SCOPES));
    }
    if rng.chance(1, 15) {
        r.enabled = false;
    }
    r
}

fn gen_bucket(rng: &mut Rng) -> Decision {
    match rng.below(10) {
        0..=3 => Decision::Allow,
        4..=5 => Decision::Ask,
        6 => Decision::Judge,
        _ => Decision::Deny,
    }
}

const DEFAULTS: &[&str] = &["allow", "deny", "ask", "deny_writes"];

struct PolicyShape {
    with_priority: bool,
    max_rules: usize,
}

fn gen_policy(rng: &mut Rng, shape: &PolicyShape) -> GenPolicy {
    let mut ids = 0;
    let mut sources = Vec::new();
    let mut layers = vec![Layer::Project];
    if rng.chance(1, 2) {
        layers.insert(0, Layer::Profile);
    }
    if rng.chance(1, 2) {
        layers.push(Layer::User);
    }
    for layer in layers {
        let mut s = GenSource::new(layer);
        if rng.chance(1, 2) {
            s.default = Some(*rng.pick(DEFAULTS));
        }
        let n = rng.below(shape.max_rules + 1);
        for _ in 0..n {
            let b = gen_bucket(rng);
            s.rules
                .push(gen_rule(rng, b, &mut ids, shape.with_priority));
        }
        sources.push(s);
    }
    // Overrides: a higher layer cancels an allow or ask of a lower one.
    for hi in 1..sources.len() {
        if !rng.chance(1, 3) {
            continue;
        }
        let targets: Vec<String> = sources[..hi]
            .iter()
            .flat_map(|s| {
                s.rules
                    .iter()
                    .filter(|r| {
                        matches!(r.bucket, Decision::Allow | Decision::Ask)
                            && r.id.is_some()
                            && r.enabled
                    })
                    .filter_map(|r| r.id.clone())
            })
            .collect();
        let already: Vec<String> = sources
            .iter()
            .flat_map(|s| s.rules.iter().filter_map(|r| r.override_of.clone()))
            .collect();
        let targets: Vec<String> = targets
            .into_iter()
            .filter(|t| !already.contains(t))
            .collect();
        if targets.is_empty() {
            continue;
        }
        let target = rng.pick(&targets).clone();
        let b = *rng.pick(&[Decision::Allow, Decision::Ask, Decision::Deny]);
        let mut r = gen_rule(rng, b, &mut ids, shape.with_priority);
        r.short = None;
        if r.command.is_none() && r.binary.is_none() && r.args_contain.is_none() {
            r.when.get_or_insert_with(|| "{type: shell.exec}".into());
        }
        r.override_of = Some(target);
        sources[hi].rules.push(r);
    }
    GenPolicy { sources }
}

/// A policy that loads (the generator is built to make loadable ones; a
/// rare one that does not is reported, not skipped, so that the generator
/// stays honest).
fn gen_loaded(rng: &mut Rng, shape: &PolicyShape) -> (GenPolicy, Policy) {
    let g = gen_policy(rng, shape);
    match g.compile() {
        Ok(p) => (g, p),
        Err(e) => panic!("a generated policy does not load:\n{e}"),
    }
}

// ---------------------------------------------------------------- inputs

fn gen_simple_command(rng: &mut Rng) -> String {
    let (prog, args) = rng.pick(PROGRAMS);
    let mut words = vec![(*prog).to_owned()];
    for _ in 0..rng.below(4) {
        words.push((*rng.pick(args)).to_owned());
    }
    words.join(" ")
}

/// A simple command, sometimes with a redirect.
fn gen_command(rng: &mut Rng) -> String {
    let mut c = gen_simple_command(rng);
    if rng.chance(1, 8) {
        let target = rng.pick(&["out.txt", "src/c.rs", "/dev/null", "docs/x.md"]);
        write!(c, " > {target}").unwrap();
    }
    c
}

/// A line of the grammar: commands joined by `;`, `&&`, `||`, `|`, and
/// `$(..)` substitutions.
fn gen_line(rng: &mut Rng) -> String {
    let n = 1 + rng.below(3);
    let mut line = String::new();
    for i in 0..n {
        if i > 0 {
            let sep = *rng.pick(&["; ", " && ", " || ", " | ", "\n"]);
            line.push_str(sep);
        }
        let mut c = gen_command(rng);
        if rng.chance(1, 6) {
            c = format!("echo $({c})");
        }
        line.push_str(&c);
    }
    line
}

fn gen_session(rng: &mut Rng) -> Session {
    Session {
        cwd: Some(DIR.into()),
        plugin: rng.chance(1, 3).then(|| (*rng.pick(PLUGINS)).to_owned()),
        profile: rng.chance(1, 3).then(|| "prod".to_owned()),
        integration: rng.chance(1, 3).then(|| "i1".to_owned()),
        ..Session::default()
    }
}

const SENSITIVITIES: &[Sensitivity] = &[
    Sensitivity::Read,
    Sensitivity::Write,
    Sensitivity::Mutate,
    Sensitivity::Destructive,
];

const FS_PATHS: &[&str] = &[
    "src/a.rs",
    "/p/src/lib/x.rs",
    "/p/README.md",
    "docs/x.md",
    "/p/docs/../src/a.rs",
    "/p//src/a.rs",
    "/etc/hosts",
    "notes.txt",
    "/home/u/src/a.rs",
];

/// A single action, built by hand (no shell analysis).
fn gen_action(rng: &mut Rng) -> Action {
    let session = gen_session(rng);
    let mut a = match rng.below(5) {
        0 | 1 => {
            let sens = *rng.pick(SENSITIVITIES);
            let mut tags = Vec::new();
            if rng.chance(1, 4) {
                tags.push(*rng.pick(&["prod", "inline-interpreter", "network"]));
            }
            let mut a = shell_with(&gen_simple_command(rng), DIR, sens, &tags);
            if rng.chance(1, 3) {
                let w = rng.pick(&["/p/out.txt", "/p/src/a.rs", "/tmp/x"]);
                a.facets.get_mut("shell").unwrap()["writes"] = json!([w]);
            }
            a
        }
        2 => action(json!({
            "type": rng.pick(&["fs.read", "fs.write", "fs.list"]),
            "facets": {"fs": {"path": rng.pick(FS_PATHS)}},
        })),
        3 => action(json!({
            "type": "http.request",
            "facets": {"http": {
                "method": rng.pick(&["GET", "POST", "delete"]),
                "url": rng.pick(&[
                    "https://api.example.com/v1",
                    "https://example.com/",
                    "https://evil.com/x.example.com",
                    "https://a.b.example.com:8443/x",
                ]),
            }},
        })),
        _ => action(json!({
            "type": rng.pick(&["tool.call", "sql.query"]),
            "summary": "readme",
            "tags": if rng.chance(1, 2) { json!(["prod"]) } else { json!([]) },
        })),
    };
    a.session = Session {
        cwd: a.session.cwd.take(),
        ..session
    };
    a
}

fn line_cx(session: &Session) -> LineContext<'_> {
    LineContext {
        cwd: DIR,
        session,
        timestamp: TS.parse().ok(),
        id: "l1",
        exe: None,
    }
}

fn eval_line(p: &Policy, line: &str, session: &Session, state: &State<'_>) -> LineVerdict {
    p.evaluate_line(line, &line_cx(session), state)
}

// ---------------------------------------------------------------- oracles

/// What `default:` decides for `a` (SPEC 5).
fn default_decision(d: DefaultPolicy, a: &Action) -> Decision {
    match d {
        DefaultPolicy::Allow => Decision::Allow,
        DefaultPolicy::Deny => Decision::Deny,
        DefaultPolicy::Ask => Decision::Ask,
        DefaultPolicy::DenyWrites if a.sensitivity == Some(Sensitivity::Read) => Decision::Allow,
        DefaultPolicy::DenyWrites => Decision::Deny,
    }
}

/// SPEC 7 by the letter, without the index: walk every rule (and the
/// session's approvals) in rank order; the first whose scope admits the
/// session and whose matcher holds wins, unless a matching deny of a lower
/// layer comes after it.
fn reference(p: &Policy, a: &Action, approvals: &[Rule]) -> (Decision, Option<String>) {
    reference_among(p, a, approvals, Layer::Builtin)
}

/// [`reference`] among the rules of layer `lowest` and above.
fn reference_among(
    p: &Policy,
    a: &Action,
    approvals: &[Rule],
    lowest: Layer,
) -> (Decision, Option<String>) {
    let history = History { actions: &[] };
    let key = |r: &Rule| (r.structural, r.priority, r.scope.specificity(), r.layer);
    let mut ordered: Vec<&Rule> = p.rules().filter(|r| r.layer >= lowest).collect();
    // Approvals are layer 8: they never tie with a policy rule. Among
    // themselves, the later (higher seq, here the later in the slice) first.
    let mut ap: Vec<(usize, &Rule)> = approvals.iter().filter(|r| r.enabled).enumerate().collect();
    ap.sort_by(|(i, x), (j, y)| key(y).cmp(&key(x)).then(j.cmp(i)));
    for (_, r) in ap {
        let at = ordered
            .iter()
            .position(|o| key(o) < key(r))
            .unwrap_or(ordered.len());
        ordered.insert(at, r);
    }
    let matching: Vec<&Rule> = ordered
        .into_iter()
        .filter(|r| r.scope.admits(&a.session) && r.matcher.is_match(a, history))
        .collect();
    let Some(w) = matching.first() else {
        return (default_decision(p.default, a), None);
    };
    let lower_deny = (w.decision != Decision::Deny)
        .then(|| {
            matching
                .iter()
                .find(|r| r.decision == Decision::Deny && r.layer < w.layer)
        })
        .flatten();
    let r = lower_deny.unwrap_or(w);
    (r.decision, Some(r.id.clone()))
}

/// A line's command: its own verdict, made stricter by a rule (not the
/// default) about a file it reads or writes; for a path pattern, by the
/// strictest non-allow rule that may match a file it names, a deny asking.
fn reference_command(p: &Policy, a: &Action, approvals: &[Rule]) -> (Decision, Option<String>) {
    let mut best = reference(p, a, approvals);
    let list = |k: &str| -> Vec<String> {
        a.facets["shell"][k]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let argv = list("argv");
    let binary = a.facet_str("shell", "binary").unwrap_or_default();
    let accesses = aileron_engine::command_line::file_accesses(
        a,
        binary,
        argv.get(1..).unwrap_or_default(),
        &list("reads"),
        &list("writes"),
    );
    for access in accesses {
        let path = access.facet_str("fs", "path").expect("fs.path");
        let found = if !path.contains(['*', '?', '[']) {
            // The built-ins decide shell commands by their effects already.
            match reference_among(p, &access, approvals, Layer::Os) {
                (_, None) => continue,
                k => k,
            }
        } else {
            let history = History { actions: &[] };
            let mut strictest: Option<&Rule> = None;
            for r in p.rules() {
                if r.decision != Decision::Allow
                    && r.layer >= Layer::Os
                    && strictest
                        .is_none_or(|s| r.decision.restrictiveness() > s.decision.restrictiveness())
                    && r.scope.admits(&access.session)
                    && r.matcher.may_match(&access, path, history)
                {
                    strictest = Some(r);
                }
            }
            match strictest {
                Some(r) if r.decision == Decision::Deny => (Decision::Ask, Some(r.id.clone())),
                Some(r) => (r.decision, Some(r.id.clone())),
                None => continue,
            }
        };
        let as_strict_as_default =
            found.0 == best.0 && best.1.is_none() && found.0 != Decision::Allow;
        if found.0.restrictiveness() > best.0.restrictiveness() || as_strict_as_default {
            best = found;
        }
    }
    best
}

fn key_of(v: &Verdict) -> (Decision, Option<String>) {
    (v.decision, v.rule.clone())
}

fn max_decision(ds: impl IntoIterator<Item = Decision>) -> Option<Decision> {
    ds.into_iter().max_by_key(|d| d.restrictiveness())
}

fn describe_action(a: &Action) -> String {
    serde_json::to_string(a).unwrap_or_else(|_| format!("{a:?}"))
}

// ---------------------------------------------------------------- properties

/// 1. The same policy and input give the same verdict every time; a policy
///    compiled twice, or read back from its cache encoding (as
///    `aileron-config` stores it), decides the same; `explain`
///    (which walks every rule) agrees with `evaluate` (which stops early).
#[test]
fn determinism_recompilation_and_cache_round_trips() {
    let shape = PolicyShape {
        with_priority: true,
        max_rules: 8,
    };
    run("determinism", 1, |rng| {
        let (g, p) = gen_loaded(rng, &shape);
        let bytes = p.to_cache_bytes().expect("policy encodes");
        let copies: Vec<(&str, Policy)> = vec![
            ("compiled twice", g.compile().unwrap()),
            (
                "read back from the cache encoding",
                Policy::from_cache_bytes(&bytes).expect("policy decodes"),
            ),
        ];
        for _ in 0..5 {
            let a = gen_action(rng);
            let st = State::default();
            let v = p.evaluate(&a, &st);
            let ctx = || format!("{}\naction: {}", g.dump(), describe_action(&a));
            assert_eq!(v, p.evaluate(&a, &st), "evaluated twice\n{}", ctx());
            assert_eq!(v, p.explain(&a, &st).verdict, "explain\n{}", ctx());
            for (how, q) in &copies {
                assert_eq!(v, q.evaluate(&a, &st), "{how}\n{}", ctx());
            }
        }
        for _ in 0..2 {
            let line = gen_line(rng);
            let session = gen_session(rng);
            let st = State::default();
            let v = eval_line(&p, &line, &session, &st).verdict;
            let ctx = || format!("{}\nline: {line:?}", g.dump());
            let twice = eval_line(&p, &line, &session, &st).verdict;
            assert_eq!(v, twice, "evaluated twice\n{}", ctx());
            let explained = p.explain_line(&line, &line_cx(&session), &st).verdict;
            assert_eq!(v, explained, "explain_line\n{}", ctx());
            for (how, q) in &copies {
                let w = eval_line(q, &line, &session, &st).verdict;
                assert_eq!(v, w, "{how}\n{}", ctx());
            }
        }
        true
    });
}

/// 1b. The evaluator (index, early exit) decides exactly as SPEC 7 read
///     literally over the rules in rank order, for hand-built actions and
///     for every command of analysed lines, with and without session
///     approvals and database rules; and the rules are in rank order.
#[test]
fn evaluator_agrees_with_a_linear_reference() {
    let shape = PolicyShape {
        with_priority: true,
        max_rules: 10,
    };
    run("reference", 2, |rng| {
        let (g, mut p) = gen_loaded(rng, &shape);
        let mut db_text = String::new();
        if rng.chance(1, 3) {
            // Database rules (layer 7), added as adapters add them.
            let mut extra = Vec::new();
            for k in 0..1 + rng.below(2) {
                let b = gen_bucket(rng);
                let mut ids = 1000 + k;
                let mut r = gen_rule(rng, b, &mut ids, true);
                r.short = None;
                r.override_of = None;
                r.id = Some(format!("db{k}"));
                if r.command.is_none() && r.binary.is_none() && r.args_contain.is_none() {
                    r.when.get_or_insert_with(|| gen_when(rng));
                }
                let mut body = r.render();
                body.insert_str(1, &format!("decision: {}, ", b.as_str()));
                writeln!(db_text, "{body}").unwrap();
                extra.push(
                    aileron_engine::parse_rule(
                        &source(&format!("<database>/db{k}"), &body, Layer::Database, DIR),
                        HOME,
                    )
                    .unwrap_or_else(|d| panic!("{}\n{body}", show(&d))),
                );
            }
            let overrides = g
                .sources
                .iter()
                .any(|s| s.rules.iter().any(|r| r.override_of.is_some()));
            match p.with_rules(extra) {
                Ok(q) => p = q,
                // The engine bug `database_rules_join_a_policy_that_overrides`.
                Err(d)
                    if overrides
                        && d.iter().all(|d| {
                            d.message.contains("no rule with that id in a lower layer")
                        }) =>
                {
                    db_text.clear();
                }
                Err(d) => panic!("{}\n{}{db_text}", show(&d), g.dump()),
            }
        }
        let approvals = gen_approvals(rng);
        let st = State {
            approvals: &approvals,
            history: &[],
        };
        let ctx = |input: &str| {
            let ap: Vec<String> = approvals
                .iter()
                .map(|r| format!("{} (priority {}): {}", r.id, r.priority, r.pattern))
                .collect();
            format!(
                "{}--- database\n{db_text}--- approvals\n{}\ninput: {input}",
                g.dump(),
                ap.join("\n")
            )
        };
        // Rank order (SPEC 7.2): structural first, then priority,
        // specificity and layer, each higher first.
        let keys: Vec<_> = p
            .rules()
            .map(|r| (r.structural, r.priority, r.scope.specificity(), r.layer))
            .collect();
        assert!(
            keys.windows(2).all(|w| w[0] >= w[1]),
            "rules out of rank order: {keys:?}\n{}",
            ctx("")
        );
        for _ in 0..8 {
            let a = gen_action(rng);
            let v = p.evaluate(&a, &st);
            assert_eq!(
                key_of(&v),
                reference(&p, &a, &approvals),
                "evaluate vs reference ({})\n{}",
                v.reason,
                ctx(&describe_action(&a))
            );
        }
        for _ in 0..3 {
            let line = gen_line(rng);
            let session = gen_session(rng);
            let lv = eval_line(&p, &line, &session, &st);
            for c in &lv.commands {
                assert_eq!(
                    key_of(&c.verdict),
                    reference_command(&p, &c.action, &approvals),
                    "command `{}` of the line vs reference\n{}",
                    c.command,
                    ctx(&format!("{line:?}\naction: {}", describe_action(&c.action)))
                );
            }
            // The line takes its most restrictive command (SPEC 7).
            let most = max_decision(lv.commands.iter().map(|c| c.verdict.decision));
            if let Some(most) = most {
                assert_eq!(
                    lv.verdict.decision,
                    most,
                    "line vs its commands\n{}",
                    ctx(&line)
                );
                let i = lv.decisive.expect("a decisive command");
                assert_eq!(lv.verdict, lv.commands[i].verdict, "{}", ctx(&line));
            } else {
                assert_eq!(lv.verdict.decision, Decision::Allow, "{}", ctx(&line));
            }
        }
        true
    });
}

/// Up to two "always" answers of a session: allow rules of layer 8.
fn gen_approvals(rng: &mut Rng) -> Vec<Rule> {
    (0..rng.below(3))
        .map(|k| {
            let when = gen_when(rng);
            let text = format!("{{decision: allow, when: {when}}}");
            let m =
                aileron_engine::parse_rule(&source("<session>", &text, Layer::Session, DIR), HOME)
                    .unwrap_or_else(|d| panic!("{}\n{text}", show(&d)))
                    .matcher;
            let prio = *rng.pick(&[50, 100, 150, 250, i64::MAX]);
            Rule::session_approval(&format!("s{k}"), &when, m, prio, k as u32)
        })
        .collect()
}

/// What the linter says of a rule that never decides (`shadowed-rule`,
/// `allow-overridden`) holds: it is never the rule of a verdict, for an
/// action, for the commands of a shell line, with a session's approvals.
#[test]
fn rules_the_linter_reports_never_decide() {
    let shape = PolicyShape {
        with_priority: true,
        max_rules: 10,
    };
    let qualified = run("lint", 4, |rng| {
        let (g, p) = gen_loaded(rng, &shape);
        let hidden: Vec<_> = aileron_engine::lint::findings(&p)
            .into_iter()
            .filter(|f| f.by.is_some())
            .collect();
        if hidden.is_empty() {
            return false;
        }
        let approvals = gen_approvals(rng);
        let st = State {
            approvals: &approvals,
            history: &[],
        };
        let check = |v: &Verdict, input: &str| {
            if let Some(f) = hidden.iter().find(|f| v.rule.as_deref() == Some(&f.rule)) {
                panic!(
                    "`{}` decided, but the linter said: {}\n{}input: {input}",
                    f.rule,
                    f.diagnostic,
                    g.dump()
                );
            }
        };
        // Whether a reported rule matched an input: the case tested something.
        let mut reached = false;
        let mut reaches = |a: &Action| {
            reached |= hidden.iter().any(|f| {
                p.rule(&f.rule)
                    .is_some_and(|r| r.matcher.is_match(a, History::default()))
            })
        };
        for _ in 0..16 {
            let a = gen_action(rng);
            reaches(&a);
            check(&p.evaluate(&a, &st), &describe_action(&a));
        }
        for _ in 0..6 {
            let line = gen_line(rng);
            let lv = eval_line(&p, &line, &gen_session(rng), &st);
            for c in &lv.commands {
                reaches(&c.action);
                check(&c.verdict, &format!("{line:?}, command `{}`", c.command));
            }
        }
        reached
    });
    assert!(qualified > 0, "no input reached a rule the linter reported");
}

/// The verdict of `p` for `a`, and the rule that gave it, if any.
fn winner<'p>(p: &'p Policy, v: &Verdict) -> Option<&'p Rule> {
    v.rule.as_deref().and_then(|id| p.rule(id))
}

/// Position of rule `id` in evaluation order.
fn rank(p: &Policy, id: &str) -> usize {
    p.rules()
        .position(|r| r.id == id)
        .unwrap_or_else(|| panic!("no rule {id}"))
}

/// A policy with only rule `k` of source `si` (same file, same layer, same
/// id), under `default: allow`.
fn alone(g: &GenPolicy, si: usize, k: usize) -> Policy {
    let s = &g.sources[si];
    let mut alone = s.clone();
    let mut r = s.rules[k].clone();
    r.id = Some(s.final_id(k));
    r.short = None;
    if r.command.is_none() && r.binary.is_none() && r.args_contain.is_none() && r.when.is_none() {
        r.command = s.rules[k].short;
    }
    r.override_of = None;
    alone.rules = vec![r];
    alone.default = Some("allow");
    GenPolicy {
        sources: vec![alone],
    }
    .compile()
    .unwrap()
}

/// 2. A deny is never outranked from above (SPEC 4): when a deny rule D
///    matches an action (it denies it in a policy of its own), the full
///    policy allows the action only through an allow rule W of D's layer
///    or a lower one that ranks before D (SPEC 7.2). With the buckets'
///    default priorities, a matching deny always denies.
#[test]
fn a_matching_deny_is_never_outranked_from_above() {
    let (mut checked, mut matched, mut outranked) = (0, 0, 0);
    run("deny-not-outranked", 1, |rng| {
        let with_priority = rng.chance(1, 2);
        let shape = PolicyShape {
            with_priority,
            max_rules: 8,
        };
        let (g, p) = gen_loaded(rng, &shape);
        let denies: Vec<(usize, usize, String)> = g
            .rules()
            .into_iter()
            .filter(|&(si, k, _)| {
                let r = &g.sources[si].rules[k];
                r.bucket == Decision::Deny && r.enabled
            })
            .collect();
        if denies.is_empty() {
            return false;
        }
        checked += 1;
        let alone: Vec<Policy> = denies.iter().map(|&(si, k, _)| alone(&g, si, k)).collect();
        // Hand-built actions, and the commands of analysed lines.
        let mut actions: Vec<Action> = (0..4).map(|_| gen_action(rng)).collect();
        for _ in 0..2 {
            let line = gen_line(rng);
            let session = gen_session(rng);
            let lv = eval_line(&p, &line, &session, &State::default());
            actions.extend(lv.commands.into_iter().map(|c| c.action));
        }
        for a in actions {
            let v = p.evaluate(&a, &State::default());
            for ((_, _, id), only) in denies.iter().zip(&alone) {
                // Does D alone deny `a`?
                let d_alone = only.evaluate(&a, &State::default());
                if d_alone.decision != Decision::Deny || d_alone.rule.as_deref() != Some(id) {
                    continue;
                }
                let ctx = || {
                    format!(
                        "deny `{id}` matches\n{}action: {}\nverdict: {v:?}",
                        g.dump(),
                        describe_action(&a)
                    )
                };
                matched += 1;
                if v.decision != Decision::Allow {
                    continue;
                }
                outranked += 1;
                assert!(with_priority, "allowed at default priorities\n{}", ctx());
                let w = winner(&p, &v).unwrap_or_else(|| panic!("allowed by default\n{}", ctx()));
                let d = p.rule(id).unwrap();
                assert!(
                    w.layer <= d.layer,
                    "an allow of a higher layer outranks the deny\n{}",
                    ctx()
                );
                assert!(
                    rank(&p, &w.id) < rank(&p, id),
                    "the allow ranks after the deny\n{}",
                    ctx()
                );
            }
        }
        true
    });
    eprintln!(
        "deny-not-outranked: {checked} policies with denies; {matched} (action, matching deny) pairs; {outranked} allowed through a legitimate outrank"
    );
    assert!(
        matched > 0,
        "no deny ever matched: the generator is too weak"
    );
}

/// 2b. Adding a deny rule (any layer, any priority) never turns a
///     non-allow into allow, and where the added rule decides, it denies;
///     session approvals that allow everything, even at the highest
///     priority, never turn a deny a rule gave into allow.
#[test]
fn more_denies_and_approvals_never_loosen_a_deny() {
    let shape = PolicyShape {
        with_priority: true,
        max_rules: 8,
    };
    run("adding-deny", 1, |rng| {
        let (g, p) = gen_loaded(rng, &shape);
        let mut more = g.clone();
        let at = rng.below(more.sources.len());
        let mut ids = 900;
        let mut d = gen_rule(rng, Decision::Deny, &mut ids, true);
        d.enabled = true;
        d.id = Some("added-deny".into());
        d.short = None;
        if d.command.is_none() && d.binary.is_none() && d.args_contain.is_none() {
            d.when.get_or_insert_with(|| gen_when(rng));
        }
        more.sources[at].rules.push(d);
        let q = more.compile().unwrap();
        let everything = vec![Rule::session_approval(
            "s-all",
            "everything",
            aileron_engine::pattern::Matcher::All(Vec::new()),
            *rng.pick(&[0, 150, i64::MAX]),
            0,
        )];
        let approved = State {
            approvals: &everything,
            history: &[],
        };
        for _ in 0..8 {
            let a = gen_action(rng);
            let before = p.evaluate(&a, &State::default());
            let after = q.evaluate(&a, &State::default());
            let ctx = || {
                format!(
                    "{}action: {}\nbefore: {before:?}\nafter: {after:?}",
                    more.dump(),
                    describe_action(&a)
                )
            };
            if before.decision != Decision::Allow {
                assert_ne!(
                    after.decision,
                    Decision::Allow,
                    "a deny loosened\n{}",
                    ctx()
                );
            }
            if after.rule.as_deref() == Some("added-deny") {
                assert_eq!(after.decision, Decision::Deny, "{}", ctx());
            }
            if before.decision == Decision::Deny && before.source != VerdictSource::Default {
                let with = p.evaluate(&a, &approved);
                assert_eq!(
                    with.decision,
                    Decision::Deny,
                    "a session approval beat a deny: {with:?}\n{}",
                    ctx()
                );
            }
        }
        true
    });
}

/// 2c. Allow rules are monotone where no lower-layer deny can intervene:
///     removing an allow rule of the lowest file layer never turns a
///     non-allow into allow, and adding it never turns an allow into a
///     non-allow. (Higher up this does not hold; see the next test.)
#[test]
fn allows_of_the_lowest_layer_are_monotone() {
    let shape = PolicyShape {
        with_priority: true,
        max_rules: 8,
    };
    run("allow-monotone", 1, |rng| {
        let (g, with) = gen_loaded(rng, &shape);
        let targets: Vec<String> = g
            .sources
            .iter()
            .flat_map(|s| s.rules.iter().filter_map(|r| r.override_of.clone()))
            .collect();
        let low = &g.sources[0];
        let candidates: Vec<usize> = (0..low.rules.len())
            .filter(|&k| {
                let r = &low.rules[k];
                r.bucket == Decision::Allow
                    && r.override_of.is_none()
                    && !targets.contains(&low.final_id(k))
            })
            .collect();
        if candidates.is_empty() {
            return false;
        }
        let k = *rng.pick(&candidates);
        let mut less = g.clone();
        // Keep the other rules' generated ids: replace the rule by one that
        // matches nothing rather than shifting the bucket's positions.
        less.sources[0].rules[k] = GenRule {
            short: Some("zz-never-run"),
            ..g.sources[0].rules[k].clone()
        };
        let without = less.compile().unwrap();
        for _ in 0..8 {
            let a = gen_action(rng);
            let v_with = with.evaluate(&a, &State::default());
            let v_without = without.evaluate(&a, &State::default());
            let ctx = || {
                format!(
                    "allow `{}` removed\n{}action: {}\nwith: {v_with:?}\nwithout: {v_without:?}",
                    low.final_id(k),
                    g.dump(),
                    describe_action(&a)
                )
            };
            if v_with.decision != Decision::Allow {
                assert_ne!(
                    v_without.decision,
                    Decision::Allow,
                    "removing loosened\n{}",
                    ctx()
                );
            }
            if v_without.decision == Decision::Allow {
                assert_eq!(
                    v_with.decision,
                    Decision::Allow,
                    "adding tightened\n{}",
                    ctx()
                );
            }
        }
        true
    });
}

/// 2d. SPEC 7 says nothing outranks a matching deny of a lower layer, and
///     that the first rule in rank order decides. A case where removing
///     an allow rule turns a deny into an allow: the user's allow at 300
///     ranks first but cannot outrank the project's deny at 200, so the
///     deny wins; without the user's allow, the team profile's allow at
///     250 (a lower layer than the deny, so free to outrank it) wins.
///     The evaluator behaves as written in ARCHITECTURE.md ("first match
///     wins, but never over a matching deny of a lower layer"); whether
///     adding an allow should be able to turn an allow into a deny is a
///     question for the spec, pinned here so a change is noticed.
#[test]
fn adding_a_higher_layer_allow_can_turn_an_allow_into_a_deny() {
    let team = profile_file(
        "/p/team.yaml",
        "version: 1\nallow:\n  - {id: team-rm, command: \"rm *\", priority: 250}\n",
    );
    let proj = project("version: 1\ndeny:\n  - {id: no-rm, command: \"rm *\"}\n");
    let mine = user("version: 1\nallow:\n  - {id: my-rm, command: \"rm *\", priority: 300}\n");
    let without = compile(&[team.clone(), proj.clone()]);
    let with = compile(&[team, proj, mine]);
    let a = shell("rm x.txt");
    assert_eq!(outcome(&decide(&without, &a)), ("allow", Some("team-rm")));
    assert_eq!(outcome(&decide(&with, &a)), ("deny", Some("no-rm")));
}

/// 3. A line is decided by its most restrictive part (SPEC 7): for lines
///    `A; B` (also `&&`, `||`, `|`, newline) whose parts the analysis can read,
///    the decision is the maximum of `A`'s and `B`'s alone, the same as
///    `B; A`'s, and at least as restrictive as each part's.
#[test]
fn a_line_is_decided_by_its_most_restrictive_part() {
    let shape = PolicyShape {
        with_priority: true,
        max_rules: 8,
    };
    run("most-restrictive", 1, |rng| {
        let (g, p) = gen_loaded(rng, &shape);
        let mut qualified = false;
        for _ in 0..4 {
            let (a, b) = (gen_command(rng), gen_command(rng));
            let sep = *rng.pick(&["; ", " && ", " || ", "\n", ";", " | "]);
            let session = gen_session(rng);
            let st = State::default();
            let da = eval_line(&p, &a, &session, &st);
            let db = eval_line(&p, &b, &session, &st);
            let ab = eval_line(&p, &format!("{a}{sep}{b}"), &session, &st);
            let ba = eval_line(&p, &format!("{b}{sep}{a}"), &session, &st);
            if da.opaque.is_some() || db.opaque.is_some() {
                continue;
            }
            qualified = true;
            let ctx = || {
                format!(
                    "{}A = {a:?} → {:?}\nB = {b:?} → {:?}\nA{sep:?}B → {:?} ({:?})\nB{sep:?}A → {:?}",
                    g.dump(),
                    key_of(&da.verdict),
                    key_of(&db.verdict),
                    key_of(&ab.verdict),
                    ab.opaque,
                    key_of(&ba.verdict)
                )
            };
            assert!(
                ab.opaque.is_none() && ba.opaque.is_none(),
                "joined line opaque\n{}",
                ctx()
            );
            let want = max_decision([da.verdict.decision, db.verdict.decision]).unwrap();
            assert_eq!(ab.verdict.decision, want, "A;B\n{}", ctx());
            assert_eq!(ba.verdict.decision, want, "B;A\n{}", ctx());
            // The parts are the same commands, decided the same way.
            let parts = |lv: &LineVerdict| {
                let mut v: Vec<(String, Decision, Option<String>)> = lv
                    .commands
                    .iter()
                    .map(|c| {
                        (
                            c.command.clone(),
                            c.verdict.decision,
                            c.verdict.rule.clone(),
                        )
                    })
                    .collect();
                v.sort_by(|x, y| x.0.cmp(&y.0).then(x.2.cmp(&y.2)));
                v
            };
            let mut joined = parts(&da);
            joined.extend(parts(&db));
            joined.sort_by(|x, y| x.0.cmp(&y.0).then(x.2.cmp(&y.2)));
            assert_eq!(
                parts(&ab),
                joined,
                "A;B has other commands than A and B\n{}",
                ctx()
            );
        }
        qualified
    });
}

/// 4. `default:` decides only when no rule matches: under a policy whose
///    rules are about programs and types the input never has, every
///    command the built-in rules leave alone gets the default (SPEC 5), and
///    `deny_writes` allows exactly the ones classified `read`. The last
///    layer's `default:` wins (SPEC 4).
#[test]
fn default_decides_only_when_no_rule_matches() {
    // The built-in rules alone, to tell which commands they decide.
    let builtin_only = load("version: 1\n");
    run("default", 1, |rng| {
        let mut g = GenPolicy {
            sources: vec![GenSource::new(Layer::Project)],
        };
        let mut ids = 0;
        for _ in 0..rng.below(6) {
            let b = gen_bucket(rng);
            let mut r = gen_rule(rng, b, &mut ids, true);
            // About nothing the inputs do.
            r.short = None;
            r.binary = None;
            r.args_contain = None;
            r.scope = None;
            r.command = Some(*rng.pick(&["zz-unknown *", "nothing-here", "zz *"]));
            r.when = rng.chance(1, 2).then(|| "{type: shell.exec}".to_owned());
            g.sources[0].rules.push(r);
        }
        let last = *rng.pick(DEFAULTS);
        g.sources[0].default = Some(last);
        if rng.chance(1, 2) {
            let mut u = GenSource::new(Layer::User);
            u.default = Some(last);
            g.sources[0].default = Some(*rng.pick(DEFAULTS));
            g.sources.push(u);
        }
        let p = g.compile().unwrap();
        let want = match last {
            "allow" => DefaultPolicy::Allow,
            "deny" => DefaultPolicy::Deny,
            "ask" => DefaultPolicy::Ask,
            _ => DefaultPolicy::DenyWrites,
        };
        assert_eq!(p.default, want, "{}", g.dump());
        for _ in 0..4 {
            let line = gen_line(rng);
            let session = gen_session(rng);
            let st = State::default();
            let base = eval_line(&builtin_only, &line, &session, &st);
            let lv = eval_line(&p, &line, &session, &st);
            assert_eq!(base.commands.len(), lv.commands.len());
            for (b, c) in base.commands.iter().zip(&lv.commands) {
                let ctx = || format!("{}line: {line:?}\ncommand: {}", g.dump(), c.command);
                if b.verdict.source != VerdictSource::Default {
                    assert_eq!(key_of(&b.verdict), key_of(&c.verdict), "{}", ctx());
                    continue;
                }
                assert_eq!(c.verdict.source, VerdictSource::Default, "{}", ctx());
                assert_eq!(c.verdict.rule, None, "{}", ctx());
                let d = default_decision(want, &c.action);
                assert_eq!(c.verdict.decision, d, "{}", ctx());
                if want == DefaultPolicy::DenyWrites {
                    assert_eq!(
                        c.verdict.decision == Decision::Allow,
                        c.action.sensitivity == Some(Sensitivity::Read),
                        "{}",
                        ctx()
                    );
                }
            }
        }
        for _ in 0..4 {
            let a = gen_action(rng);
            let v = p.evaluate(&a, &State::default());
            let b = builtin_only.evaluate(&a, &State::default());
            let ctx = || format!("{}action: {}", g.dump(), describe_action(&a));
            if b.source == VerdictSource::Default {
                assert_eq!(v.source, VerdictSource::Default, "{}", ctx());
                assert_eq!(v.decision, default_decision(want, &a), "{}", ctx());
            }
        }
        true
    });
}

/// Lines that write Aileron's policy or settings, or do what SPEC 8 lists
/// as structural: each is denied, whatever the project allows.
const STRUCTURAL_DENIED: &[&str] = &[
    "echo x > aileron.yaml",
    "echo x >> aileron.yaml",
    "echo x > ./aileron.yaml",
    "echo x > /p/aileron.yaml",
    "echo x > sub/aileron.yaml",
    "echo x > src/../aileron.yaml",
    "sed -i s/a/b/ aileron.yaml",
    "rm -f aileron.yaml",
    "rm aileron.yaml",
    "tee aileron.yaml",
    "cat a.txt | tee aileron.yaml",
    "cp a.txt aileron.yaml",
    "mv a.txt aileron.yaml",
    "git status; rm -f aileron.yaml",
    "ls && echo x > aileron.yaml",
    "echo $(rm -f aileron.yaml)",
    "echo x > ~/.aileron/settings.yaml",
    "rm -rf ~/.aileron",
    "rm -rf .aileron",
    "echo x > .aileron/x",
    "export AILERON_SOCKET=x",
    "AILERON_SOCKET=x ls",
    "SHELL=/bin/sh ls",
    "unset AILERON_SESSION",
    "rm -rf /",
    "rm -rf ~",
    "rm -rf $HOME",
    "rm -rf /*",
    "mkfs.ext4 /dev/sda1",
    "dd if=/dev/zero of=/dev/sda",
    ":(){ :|:& };:",
];

/// Allow rules a project might add to get its way.
const GREEDY_ALLOWS: &[&str] = &[
    "\"*\"",
    "{command: \"*\", priority: 9223372036854775807}",
    "{when: {type: shell.exec}, priority: 2000000000}",
    "{when: {sensitivity: {in: [read, write, mutate, destructive]}}, priority: 1000000}",
    "{command: \"rm *\", priority: 500}",
    "{command: \"echo *\", priority: 500}",
    "{when: {shell.writes: {path: \"/p/**\"}}, priority: 100000}",
    "{when: {fs.path: {path: \"/p/**\"}}, priority: 100000}",
    "{when: {not: {type: agent.doom_loop}}, priority: 9223372036854775807}",
];

/// 5. The structural built-in rules hold under any project and user policy
///    (SPEC 8): lines that write `aileron.yaml` or Aileron's settings, set
///    `AILERON_*` or `SHELL`, or destroy the system are denied, whatever
///    allow rules and `default: allow` the project and the user add, and
///    whatever the session has approved.
#[test]
fn structural_rules_hold_under_any_policy() {
    let total = run("structural", 1, |rng| {
        let mut text = String::from("version: 1\ndefault: allow\nallow:\n");
        for _ in 0..1 + rng.below(4) {
            writeln!(text, "  - {}", rng.pick(GREEDY_ALLOWS)).unwrap();
        }
        let mut sources = vec![project(&text)];
        if rng.chance(1, 2) {
            sources.push(user(&format!(
                "version: 1\ndefault: allow\nallow:\n  - {}\n",
                rng.pick(GREEDY_ALLOWS)
            )));
        }
        let p = compile(&sources);
        let everything = vec![Rule::session_approval(
            "s-all",
            "everything",
            aileron_engine::pattern::Matcher::All(Vec::new()),
            i64::MAX,
            0,
        )];
        let approved = State {
            approvals: &everything,
            history: &[],
        };
        let session = gen_session(rng);
        for _ in 0..4 {
            let line = *rng.pick(STRUCTURAL_DENIED);
            for st in [State::default(), approved] {
                let v = eval_line(&p, line, &session, &st).verdict;
                assert_eq!(
                    v.decision,
                    Decision::Deny,
                    "{line:?} not denied: {v:?}\n{text}\n{:?}",
                    sources.get(1).map(|s| &s.text)
                );
                assert_eq!(v.source, VerdictSource::Builtin, "{line:?}: {v:?}\n{text}");
            }
        }
        let fs_write = action(json!({
            "type": "fs.write",
            "facets": {"fs": {"path": rng.pick(&["aileron.yaml", "/p/sub/aileron.yaml", "/home/u/.aileron/settings.yaml", ".aileron/audit.log"])}},
        }));
        let v = p.evaluate(&fs_write, &approved);
        assert_eq!(
            v.decision,
            Decision::Deny,
            "{}: {v:?}\n{text}",
            describe_action(&fs_write)
        );
        true
    });
    assert!(total > 0);
}

/// Garbage for the YAML and shell parsers.
const YAML_NOISE: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ":",
    ": ",
    "- ",
    "-",
    " ",
    "\n",
    "\n  ",
    "\"",
    "'",
    "*",
    "&a ",
    "*a",
    "!!str ",
    "\t",
    "#",
    "when: ",
    "priority: 99999999999999999999",
    "~",
    "\\",
    "é",
    "\u{0}",
    "{not: ",
    "any: [",
    "pattern: \"(\"",
    "path: \"[\"",
    "? ",
    "|\n",
    ">-\n",
    "%YAML 1.2\n",
    "---\n",
    "...\n",
    "<<: *a\n",
    "id: r1",
    "override: r1",
    "type: ",
    "in: []",
    ",",
];

/// Words of a policy and what a mutation may put in their place.
const SWAPS: &[(&str, &[&str])] = &[
    ("allow", &["deny", "ask", "judge", "alow", "allow:"]),
    ("deny", &["allow", "deny_writes", "ask"]),
    ("ask", &["judge", "allow"]),
    (
        "priority: ",
        &[
            "priority: -",
            "priority: 1e3 #",
            "priority: 0x",
            "priority: '5' #",
        ],
    ),
    ("shell.exec", &["fs.read", "shell.*", "", "[shell.exec]"]),
    (
        "path",
        &["glob", "pattern", "contains", "in", "gt", "paths"],
    ),
    ("pattern", &["path", "glob", "equals"]),
    ("contains", &["notContains", "in", "exists"]),
    ("read", &["write", "destructive", "reed", "[read]"]),
    ("id: ", &["override: ", "id: r1 #", "description: "]),
    ("\"", &["'", ""]),
    ("when", &["command", "scope", "wen", "enabled"]),
    (
        "version: 1",
        &["version: 2", "version: '1'", "version:", ""],
    ),
    ("/**", &["/*", "/***", "/[", "/{a,b}", "\\"]),
    ("*", &["**", "\\*", "?", "[*]"]),
    ("{", &["{{", "[", "{ "]),
    (
        "default: ",
        &[
            "default: allow\ndefault: ",
            "default: [",
            "default: deny_write #",
        ],
    ),
];

fn mutate(rng: &mut Rng, text: &str) -> String {
    if rng.chance(1, 2) {
        // A well-formed change of one word: the YAML usually still parses,
        // and the policy checks have to say what is wrong.
        let mut out = text.to_owned();
        for _ in 0..1 + rng.below(2) {
            let (from, tos) = rng.pick(SWAPS);
            let hits: Vec<usize> = out.match_indices(from).map(|(i, _)| i).collect();
            if hits.is_empty() {
                continue;
            }
            let at = *rng.pick(&hits);
            let to = *rng.pick(tos);
            out.replace_range(at..at + from.len(), to);
        }
        return out;
    }
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(chars.len() + 1);
        match rng.below(4) {
            0 if !chars.is_empty() => {
                let end = (at + 1 + rng.below(8)).min(chars.len());
                let at = at.min(end.saturating_sub(1));
                chars.drain(at..end);
            }
            1 => {
                let lines: Vec<&str> = text.lines().collect();
                let l = rng.pick(&lines);
                chars.splice(at..at, format!("{l}\n").chars());
            }
            _ => {
                chars.splice(at..at, (*rng.pick(YAML_NOISE)).chars());
            }
        }
    }
    chars.into_iter().collect()
}

const SHELL_NOISE: &[&str] = &[
    "git",
    " ",
    "'",
    "\"",
    "$(",
    ")",
    "`",
    "|",
    ";",
    "&&",
    "<<EOF\n",
    "\n",
    "${x",
    "}",
    "\\",
    "*",
    "~",
    "aileron.yaml",
    ">",
    "2>&1",
    "(",
    "{",
    "!",
    "=",
    "AILERON_X",
    "$HOME",
    "<(",
    "rm -rf",
    "&",
    "#",
    "\u{0}",
    "é",
    "$((1+",
    "[[",
    "]]",
    "eval ",
    "bash -c ",
];

/// 6. Nothing panics: mutated policy texts load or fail with diagnostics
///    (in every layer), and random token soup as a shell line is decided
///    (and an unreadable one is never allowed under a policy that allows
///    nothing).
#[test]
fn never_panics_on_random_policy_texts_or_lines() {
    let shape = PolicyShape {
        with_priority: true,
        max_rules: 6,
    };
    let mut loaded = 0;
    let deny_all = load("version: 1\ndefault: deny\n");
    let total = run("no-panics", 2, |rng| {
        let g = gen_policy(rng, &shape);
        let mut sources = g.sources();
        let at = rng.below(sources.len());
        sources[at].text = mutate(rng, &sources[at].text);
        let texts = || {
            sources
                .iter()
                .map(|s| format!("--- {}\n{}", s.name, s.text))
                .collect::<String>()
        };
        let r = catch_unwind(AssertUnwindSafe(|| {
            Policy::from_sources(&sources, &environment())
        }));
        let p = match r {
            Ok(Ok(p)) => {
                loaded += 1;
                p
            }
            Ok(Err(d)) => {
                assert!(!d.is_empty(), "an error without diagnostics\n{}", texts());
                deny_all.clone()
            }
            Err(_) => panic!("Policy::from_sources panicked on:\n{}", texts()),
        };
        let mut line = String::new();
        for _ in 0..1 + rng.below(12) {
            let token = *rng.pick(SHELL_NOISE);
            line.push_str(token);
        }
        let session = gen_session(rng);
        let lv = catch_unwind(AssertUnwindSafe(|| {
            eval_line(&p, &line, &session, &State::default())
        }))
        .unwrap_or_else(|_| panic!("evaluate_line panicked on {line:?} under\n{}", texts()));
        let blank = line.lines().all(|l| {
            let l = l.trim();
            l.is_empty() || l.starts_with('#')
        });
        if blank {
            return true;
        }
        if lv.opaque.is_some() {
            assert_ne!(lv.verdict.decision, Decision::Allow, "{line:?}: {lv:?}");
        }
        let v = eval_line(&deny_all, &line, &session, &State::default()).verdict;
        assert_ne!(
            v.decision,
            Decision::Allow,
            "{line:?} allowed under default: deny: {v:?}"
        );
        true
    });
    eprintln!("no-panics: {loaded} of {total} mutated policies still loaded");
}

/// Found by `evaluator_agrees_with_a_linear_reference`: adding database
/// rules (layer 7, as `aileron-server` does) to a policy in which a file
/// overrides a rule of a lower layer failed, whatever the database rule
/// was: `Policy::with_rules` re-merged the active rules and the disabled
/// ones, not the overridden ones, so the `override:` no longer found its
/// target. Fixed; kept as a regression.
#[test]
fn database_rules_join_a_policy_that_overrides() {
    let p = compile(&[
        project("version: 1\nask:\n  - {id: ask-rm, command: \"rm *\"}\n"),
        user("version: 1\nallow:\n  - {override: ask-rm, id: my-rm, command: \"rm *\"}\n"),
    ]);
    assert_eq!(
        outcome(&decide(&p, &shell("rm x"))),
        ("allow", Some("my-rm"))
    );
    let db = aileron_engine::parse_rule(
        &source(
            "<database>/r",
            "{decision: deny, id: db-curl, command: \"curl *\"}",
            Layer::Database,
            DIR,
        ),
        HOME,
    )
    .unwrap();
    let q = p
        .with_rules(vec![db])
        .unwrap_or_else(|d| panic!("with_rules failed:\n{}", show(&d)));
    assert_eq!(
        outcome(&decide(&q, &shell("rm x"))),
        ("allow", Some("my-rm"))
    );
    assert_eq!(
        outcome(&decide(&q, &shell("curl x"))),
        ("deny", Some("db-curl"))
    );
}

/// Policy texts nested as deep as the YAML budget allows (64 levels) and
/// deeper, in every construct that nests: `when:` maps, `not:`, `any:`,
/// lists. Each loads or is refused with a diagnostic.
fn deep_texts() -> Vec<String> {
    let mut out = Vec::new();
    for depth in [16, 40, 63, 64, 65, 300, 5000] {
        let nest = |open: &str, inner: &str, close: &str| {
            format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
        };
        let when = |m: String| format!("version: 1\nallow:\n  - {{when: {m}}}\n");
        out.push(when(nest("{a: ", "x", "}")));
        out.push(when(nest("{not: ", "{type: fs.read}", "}")));
        out.push(when(nest("{any: [", "{type: fs.read}", "]}")));
        out.push(when(format!("{{type: {}}}", nest("[", "x", "]"))));
        out.push(format!("version: 1\nallow: {}\n", nest("[", "", "]")));
    }
    out
}

/// Loads every text of [`deep_texts`] on a thread with `stack` bytes.
fn load_deep_texts(stack: usize) {
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(|| {
            for t in deep_texts() {
                if let Ok(p) = Policy::from_sources(&[project(&t)], &environment()) {
                    let a = action(json!({"type": "fs.read", "facets": {"fs": {"path": "/p/x"}}}));
                    p.evaluate(&a, &State::default());
                }
            }
        })
        .unwrap()
        .join()
        .expect("a deeply nested policy panicked");
}

/// 6b. Deeply nested policies are refused or loaded, never a crash, on a
///     stack the size of a main thread's (8 MiB).
#[test]
fn deeply_nested_policies_load_or_are_refused() {
    load_deep_texts(8 << 20);
}

/// Found while fuzzing the loader: in a debug build, a policy nested 64
/// levels deep (within the YAML depth budget, which refuses 65) overflows
/// the stack of a thread with Rust's default 2 MiB (test threads, and the
/// threads `aileron launch` answers requests on), and the process aborts.
/// The recursion is `aileron_engine::yaml::Raw`'s `Deserialize` through
/// serde-saphyr (about 16 frames a level); a release build needs much
/// less and passes even with 1 MiB. Runs the load in a child process (this
/// test binary, re-run) so that the abort fails this test only:
/// `AILERON_PROPS_DEEP_CHILD=1 cargo test -p aileron-engine --test
/// evaluator_props deep_policies_on_a_default_thread_stack -- --ignored`
/// shows the overflow itself.
#[test]
#[ignore = "engine bug (debug builds): a policy nested 64 deep overflows a 2 MiB thread stack"]
fn deep_policies_on_a_default_thread_stack() {
    if std::env::var_os("AILERON_PROPS_DEEP_CHILD").is_some() {
        load_deep_texts(2 << 20);
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "deep_policies_on_a_default_thread_stack",
            "--ignored",
            "--nocapture",
        ])
        .env("AILERON_PROPS_DEEP_CHILD", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "loading deeply nested policies on a 2 MiB stack failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
