//! `aileron judge try` and `aileron judge replay`: the LLM judge run by
//! hand, on one action (the exact request sent, then the verdict) or over
//! the last actions of the audit log next to what was decided; and
//! `aileron audit --judge`, what the judge calls in the log cost.
//!
//! Both commands call the model afresh (no cache, unless `try --cache`):
//! someone tuning a prompt wants the model's answer to this prompt.

use super::explain::{read_action, timestamp, working_dir};
use super::{EXIT_POLICY, current_dir, options};
use aileron_audit::{AuditRecord, Filter, clean};
use aileron_cli::Error;
use aileron_config::{LoadOptions, Loaded};
use aileron_decision::{Core, JudgeAsk, Request, Step, Subject, judged_action};
use aileron_engine::{Action, Decision, LineContext, Policy, Session, Verdict};
use aileron_judge::{Bench, Call, Exchange, Input, JudgeConfig, Ruling};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args)]
pub struct TryArgs {
    /// The judge to ask (default: the matching `judge` rule's, else the
    /// policy's `default` or only one).
    #[arg(long)]
    pub judge: Option<String>,
    /// Use the rule's `cache_ttl` and the shared verdict cache, as the shim does.
    #[arg(long)]
    pub cache: bool,
    #[command(flatten)]
    pub subject: super::explain::Args,
}

pub struct ReplayArgs {
    pub policy: Option<PathBuf>,
    pub file: Option<PathBuf>,
    pub judge: Option<String>,
    pub last: usize,
    pub json: bool,
}

/// What to judge: a shell line, or any Action.
pub enum Subj {
    Line(String),
    Action(Box<Action>),
}

/// One judge call and what came of it.
struct Judged {
    ask: JudgeAsk,
    cfg: JudgeConfig,
    /// The policy's own verdict on the action.
    policy: Verdict,
    result: Result<Ruling, aileron_judge::Error>,
}

pub fn try_one(args: TryArgs) -> Result<u8, Error> {
    let TryArgs {
        judge: named,
        cache,
        subject: args,
    } = args;
    let cwd = working_dir(args.cwd)?;
    let (opts, loaded) = match load(args.policy, cwd.clone()) {
        Ok(l) => l,
        Err(code) => return Ok(code),
    };
    let policy = loaded.policy;
    let cwd = cwd.to_string_lossy().into_owned();
    let subject = match args.action {
        Some(path) => Subj::Action(Box::new(read_action(path, cwd.clone(), &timestamp())?)),
        None => Subj::Line(args.command.join(" ")),
    };
    let (verdict, ask) = match question(&policy, &subject, &cwd, named.as_deref()) {
        Ok(q) => q,
        Err(why) => return Ok(no_judge(&why)),
    };
    let bench = if cache {
        Bench::with_disk(&opts.data_dir.join("judge-cache"))
    } else {
        Bench::in_memory()
    };
    let (exchange, judged) = judge(&bench, verdict, ask, cache);
    if args.json {
        let mut out = judged.json();
        out.insert("request".into(), request_json(&exchange));
        println!(
            "{}",
            serde_json::to_string_pretty(&out).expect("JSON of strings and numbers")
        );
    } else {
        judged.print(&exchange);
    }
    Ok(if judged.result.is_ok() {
        0
    } else {
        EXIT_POLICY
    })
}

pub fn replay(args: ReplayArgs) -> Result<u8, Error> {
    let (opts, loaded) = match load(args.policy, current_dir()?) {
        Ok(l) => l,
        Err(code) => return Ok(code),
    };
    let policy = loaded.policy;
    // Say so once, before reading anything, when no judge can be chosen.
    let named = args.judge.as_deref();
    if policy.judges.is_empty() || named.is_some_and(|n| !policy.judges.contains_key(n)) {
        return Ok(no_judge(&why_no_judge(&policy, named)));
    }
    let path = args.file.unwrap_or_else(|| {
        aileron_config::audit_log_path(&policy, loaded.project_file.as_deref(), &opts)
    });
    let filter = Filter {
        limit: Some(args.last),
        ..Filter::default()
    };
    let read = match aileron_audit::read(&path, &filter, std::time::SystemTime::now()) {
        Ok(r) => r,
        Err(e) if e.is_not_found() => return Err(Error::NoAuditLog { path }),
        Err(e) => return Err(e.into()),
    };
    let bench = Bench::in_memory();
    if !args.json {
        println!(
            "{:<19}  {:<40}  {:<30}  {:<14}  REASON",
            "TIME", "ACTION", "DECIDED", "JUDGE"
        );
    }
    for rec in &read.records {
        let judged = rebuild(rec).and_then(|(subject, cwd)| {
            let (verdict, ask) = question(&policy, &subject, &cwd, named)?;
            Ok(judge(&bench, verdict, ask, false).1)
        });
        if args.json {
            let mut row = Map::new();
            row.insert("time".into(), rec.time.clone().into());
            row.insert("type".into(), rec.action.kind.clone().into());
            row.insert("action".into(), rec.action.summary.clone().into());
            row.insert(
                "decided".into(),
                json!({"decision": rec.decision, "source": rec.source,
                    "outcome": rec.outcome, "rule": rec.rule}),
            );
            match &judged {
                Ok(j) => row.insert("judge".into(), Value::Object(j.json())),
                Err(why) => row.insert("skipped".into(), why.clone().into()),
            };
            println!("{}", Value::Object(row));
        } else {
            let (said, reason) = match &judged {
                Ok(j) => (j.said(), j.reason()),
                Err(why) => ("skipped".to_owned(), why.clone()),
            };
            println!(
                "{:<19}  {:<40}  {:<30}  {:<14}  {}",
                // `2026-11-22T10:00:00.123Z` → `2026-11-22 10:00:00`.
                short(
                    &rec.time.get(..19).unwrap_or(&rec.time).replace('T', " "),
                    19
                ),
                short(&rec.action.summary, 40),
                short(&decided(rec), 30),
                said,
                short(&reason, 80)
            );
        }
    }
    if read.malformed > 0 {
        eprintln!(
            "aileron: skipped {} malformed line(s) in {}",
            read.malformed,
            path.display()
        );
    }
    Ok(0)
}

/// The policy (with its load options), or the exit code once its
/// diagnostics are printed.
fn load(policy: Option<PathBuf>, cwd: PathBuf) -> Result<(LoadOptions, Loaded), u8> {
    let opts = options(policy, cwd);
    match aileron_config::load(&opts, None) {
        Ok(l) => Ok((opts, l)),
        Err(diags) => {
            eprintln!("{diags}");
            Err(EXIT_POLICY)
        }
    }
}

/// The request for `subject` as an adapter would decide it (no session),
/// the policy's verdict, and what the judge is asked: the judge `named`,
/// else the matching `judge` rule's, else the policy's `default` or only
/// one; the rule's prompt when a `judge` rule matches.
fn question(
    policy: &Policy,
    subject: &Subj,
    cwd: &str,
    named: Option<&str>,
) -> Result<(Verdict, JudgeAsk), String> {
    let session = Session {
        cwd: Some(cwd.to_owned()),
        ..Session::default()
    };
    let now = timestamp();
    let cx = LineContext {
        cwd,
        session: &session,
        timestamp: now.parse().ok(),
        id: "judge",
        exe: None,
    };
    let actions: Vec<Action>;
    let subject = match subject {
        Subj::Line(line) => Subject::Line(line),
        Subj::Action(a) => {
            actions = vec![(**a).clone()];
            Subject::Actions(&a.summary, &actions)
        }
    };
    let req = Request {
        session: None,
        subject,
        cx,
        now: now.parse().unwrap_or_default(),
        agent_asks: false,
        repeat: true,
        traffic: false,
        waiting_since: None,
        prompt_budget: None,
        default_timeout: Duration::from_secs(60),
        adjust: None,
    };
    let core = Core::new();
    let (verdict, action) = match core.decide(policy, &req) {
        Step::Done(d) => (d.verdict, d.action),
        Step::Ask(p) => (p.verdict, p.action),
    };
    let lv = core.evaluate(policy, &req);
    let rule = verdict
        .rule
        .as_deref()
        .and_then(|id| policy.rule(id))
        .filter(|r| verdict.decision == Decision::Judge && r.judge.is_some());
    let rules_judge = rule.and_then(|r| policy.judge_for(r));
    let def = match named {
        Some(name) => policy.judges.get(name),
        None => rules_judge.or_else(|| policy.default_judge()),
    }
    .ok_or_else(|| why_no_judge(policy, named))?;
    let mut ask = JudgeAsk::new(def.clone(), rule, judged_action(&action, &lv));
    if rules_judge.is_some_and(|j| j.name != def.name) {
        // The rule's `model` is one of its own judge's.
        ask.model = None;
    }
    Ok((verdict, ask))
}

/// Why no judge can be used: none defined, the one `named` unknown, or
/// several, none `default` and no `judge` rule naming one.
fn why_no_judge(policy: &Policy, named: Option<&str>) -> String {
    let known = policy.judges.keys().cloned().collect::<Vec<_>>().join(", ");
    match named {
        _ if policy.judges.is_empty() => {
            "the policy defines no judge (`judges:` in aileron.yaml)".to_owned()
        }
        Some(name) => format!("no judge named `{name}` (the policy's judges: {known})"),
        None => format!(
            "no judge for this action: no `judge` rule naming one matches, and of {known} none is `default`; name one with --judge"
        ),
    }
}

fn no_judge(why: &str) -> u8 {
    eprintln!("aileron: {why}");
    EXIT_POLICY
}

/// Asks the judge (the rule's cache only when `cache`), and the request
/// the call sends.
fn judge(bench: &Bench, policy: Verdict, ask: JudgeAsk, cache: bool) -> (Exchange, Judged) {
    let cfg = ask.config();
    let call = Call {
        judge: &cfg,
        input: Input {
            rule: ask.rule.as_deref(),
            rule_prompt: ask.prompt.as_deref(),
            action: &ask.action,
        },
        cache_ttl: ask.cache_ttl.filter(|_| cache),
    };
    let (exchange, result) = (bench.exchange(&call), bench.decide(&call));
    let judged = Judged {
        ask,
        cfg,
        policy,
        result,
    };
    (exchange, judged)
}

impl Judged {
    /// The decision that holds: the judge's, or the rule's `fail_closed`.
    fn decision(&self) -> &'static str {
        match &self.result {
            Ok(r) => r.verdict.decision.as_str(),
            Err(_) if self.ask.fail_closed => "deny",
            Err(_) => "allow",
        }
    }

    /// For the replay's table: the decision, or `failed: deny`.
    fn said(&self) -> String {
        match &self.result {
            Ok(_) => self.decision().to_owned(),
            Err(_) => format!("failed: {}", self.decision()),
        }
    }

    fn reason(&self) -> String {
        match &self.result {
            Ok(r) => r.verdict.reason.clone(),
            Err(e) => format!("no verdict ({e}); `fail_closed: {}`", self.ask.fail_closed),
        }
    }

    fn json(&self) -> Map<String, Value> {
        let v = &self.policy;
        let mut out = json!({
            "judge": self.cfg.name,
            "provider": self.cfg.provider.as_str(),
            "model": self.cfg.model,
            "rule": self.ask.rule,
            "policy": {"decision": v.decision, "source": v.source, "rule": v.rule, "reason": v.reason},
            "decision": self.decision(),
            "reason": self.reason(),
            "failed": self.result.is_err(),
        });
        if let (Value::Object(out), Ok(r)) = (&mut out, &self.result) {
            out.insert("prompt_tokens".into(), json!(r.usage.prompt_tokens));
            out.insert("completion_tokens".into(), json!(r.usage.completion_tokens));
            out.insert("latency_ms".into(), json!(r.latency.as_millis() as u64));
            out.insert("cached".into(), json!(r.cached));
        }
        match out {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn print(&self, exchange: &Exchange) {
        let v = &self.policy;
        let rule = v
            .rule
            .as_deref()
            .map(|r| format!(" (rule {r})"))
            .unwrap_or_default();
        println!(
            "policy: {}{rule}: {}",
            v.decision.as_str(),
            clean(&v.reason)
        );
        println!(
            "judge: {} ({}, model {})",
            self.cfg.name,
            self.cfg.provider.as_str(),
            self.cfg.model
        );
        println!("\nPOST {}", exchange.url);
        for (name, value) in &exchange.headers {
            println!("{name}: {value}");
        }
        println!(
            "\n{}\n",
            serde_json::to_string_pretty(&exchange.body).expect("JSON")
        );
        match &self.result {
            Ok(r) => {
                println!("verdict: {}: {}", self.decision(), clean(&r.verdict.reason));
                let tokens = |t: Option<u64>| t.map_or("?".to_owned(), |t| t.to_string());
                println!(
                    "model: {}, tokens: {} prompt + {} completion, latency: {} ms, {}",
                    r.model,
                    tokens(r.usage.prompt_tokens),
                    tokens(r.usage.completion_tokens),
                    r.latency.as_millis(),
                    if r.cached { "cached" } else { "not cached" }
                );
            }
            Err(_) => println!(
                "verdict: {} (the judge failed): {}",
                self.decision(),
                clean(&self.reason())
            ),
        }
    }
}

fn request_json(exchange: &Exchange) -> Value {
    let headers: Map<String, Value> = exchange
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone().into()))
        .collect();
    json!({"method": "POST", "url": exchange.url, "headers": headers, "body": exchange.body})
}

/// The action of an audit record, as far as the record allows: a shell
/// command from its line (and working directory), any other action from
/// its type, summary and facets; `Err`: why not.
pub fn rebuild(rec: &AuditRecord) -> Result<(Subj, String), String> {
    let a = &rec.action;
    if a.kind == "agent.doom_loop" {
        return Err("a doom-loop record, not one action".to_owned());
    }
    let facets = Value::Object(a.facets.clone());
    if facets.to_string().contains("more bytes not logged]") {
        return Err("the action was clipped in the log".to_owned());
    }
    let shell = |key: &str| facets.get("shell")?.get(key)?.as_str();
    let cwd = shell("working_dir")
        .or(rec.cwd.as_deref())
        .ok_or("the record has no working directory")?
        .to_owned();
    if a.kind == "shell.exec" {
        let line = shell("line").unwrap_or(&a.summary);
        if line.trim().is_empty() {
            return Err("the record has no command line".to_owned());
        }
        return Ok((Subj::Line(line.to_owned()), cwd));
    }
    let mut action: Action =
        serde_json::from_value(json!({"type": a.kind, "summary": a.summary, "facets": facets}))
            .map_err(|e| format!("not an action: {e}"))?;
    action.session.cwd = Some(cwd.clone());
    action.normalize();
    Ok((Subj::Action(Box::new(action)), cwd))
}

/// What was decided: `deny/static`, `judge/llm judge-allowed`.
fn decided(rec: &AuditRecord) -> String {
    let mut out = format!("{}/{}", rec.decision, rec.source);
    if let Some(outcome) = &rec.outcome {
        out.push(' ');
        out.push_str(outcome);
    }
    out
}

/// `s` on one line, at most `max` characters (`…` marks a cut).
fn short(s: &str, max: usize) -> String {
    let s = clean(s);
    if s.chars().count() <= max {
        return s.into_owned();
    }
    let mut out: String = s.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// The judge calls in `records`, summed (`aileron audit --judge`).
pub fn usage(records: &[AuditRecord], json: bool) {
    #[derive(Default)]
    struct Model {
        calls: u64,
        prompt: u64,
        completion: u64,
    }
    let mut models: BTreeMap<&str, Model> = BTreeMap::new();
    let mut verdicts = [("allow", 0u64), ("deny", 0), ("ask", 0), ("failed", 0)];
    let (mut calls, mut hits) = (0u64, 0u64);
    let mut latencies = Vec::new();
    for j in records.iter().filter_map(|r| r.judge.as_ref()) {
        calls += 1;
        // `error`: the rule's `fail_closed` decided.
        let i = verdicts[..3]
            .iter()
            .position(|(d, _)| *d == j.verdict)
            .unwrap_or(3);
        verdicts[i].1 += 1;
        if j.cached {
            hits += 1;
            continue;
        }
        latencies.push(j.latency_ms);
        let m = models.entry(&j.model).or_default();
        m.calls += 1;
        m.prompt += j.prompt_tokens.unwrap_or(0);
        m.completion += j.completion_tokens.unwrap_or(0);
    }
    latencies.sort_unstable();
    let percentile = |p: usize| {
        // Nearest rank.
        let rank = (latencies.len() * p).div_ceil(100).max(1);
        latencies.get(rank - 1).copied()
    };
    let (p50, p95) = (percentile(50), percentile(95));
    let prompt: u64 = models.values().map(|m| m.prompt).sum();
    let completion: u64 = models.values().map(|m| m.completion).sum();
    if json {
        let per_model: Map<String, Value> = models
            .iter()
            .map(|(name, m)| {
                let v = json!({"calls": m.calls, "prompt_tokens": m.prompt, "completion_tokens": m.completion});
                (name.to_string(), v)
            })
            .collect();
        let out = json!({
            "calls": calls,
            "cache_hits": hits,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "models": per_model,
            "verdicts": verdicts.iter().map(|(d, n)| (d.to_string(), json!(n))).collect::<Map<_, _>>(),
            "latency_ms": {"p50": p50, "p95": p95},
        });
        println!("{out}");
        return;
    }
    println!(
        "judge calls: {calls} ({hits} from the cache, {} to a model)",
        calls - hits
    );
    println!("tokens: {prompt} prompt + {completion} completion");
    if models.len() > 1 {
        for (name, m) in &models {
            println!(
                "  {}: {} call(s), {} prompt + {} completion",
                clean(name),
                m.calls,
                m.prompt,
                m.completion
            );
        }
    }
    let counts: Vec<String> = verdicts.iter().map(|(d, n)| format!("{d} {n}")).collect();
    println!("verdicts: {}", counts.join(", "));
    match (p50, p95) {
        (Some(p50), Some(p95)) => {
            println!("latency: p50 {p50} ms, p95 {p95} ms (calls to a model)")
        }
        _ => println!("latency: no call reached a model"),
    }
}
