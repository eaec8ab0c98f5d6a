//! `aileron why ID`: one decision of the audit log, where its rule is
//! written, and how the policy in force now decides the same action.

use super::explain::{explain_line, print_explanation, print_final, print_line, timestamp};
use super::judge::{Subj, rebuild};
use super::{EXIT_POLICY, current_dir, load, paint};
use aileron_audit::{AuditRecord, Filter};
use aileron_cli::Error;
use aileron_engine::{Policy, Verdict};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The action id (at the end of each `aileron audit` line, in
    /// brackets; `action.id` in `--json`), or a unique beginning of it.
    pub id: String,
    /// The log file (default: `settings.audit_log` of the policy in force).
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// Policy to re-run the action against (default: the nearest
    /// aileron.yaml from the directory the action ran in).
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<u8, Error> {
    if let Some(e) = args.policy.as_deref().and_then(super::policy_file_error) {
        return Err(e);
    }
    let path = match super::audit::log_path(args.file)? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let rec = find(&path, &args.id)?;
    // The policy of the directory the action ran in, as it is now.
    let cwd = rec
        .cwd
        .as_deref()
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .map_or_else(current_dir, Ok)?;
    let policy = match load(args.policy, cwd) {
        Ok(l) => l.policy,
        Err(d) => {
            if args.json {
                let out = json!({"record": rec, "errors": d.0});
                println!("{}", serde_json::to_string_pretty(&out).expect("JSON"));
            } else {
                print_record(&rec, None);
                println!("\nthe current policy does not load:\n{d}");
            }
            return Ok(EXIT_POLICY);
        }
    };
    let origin = rec.rule.as_deref().map(|id| rule_origin(&policy, id));
    let now = rerun(&policy, &rec);
    if args.json {
        let out = json!({
            "record": rec,
            "rule": rec.rule.as_ref().map(|id| json!({"id": id, "at": origin.clone().flatten()})),
            "now": match &now {
                Ok((v, _)) => json!({"decision": v.decision, "rule": v.rule, "reason": v.reason,
                    "same": same(&rec, v)}),
                Err(why) => json!({"error": why}),
            },
        });
        println!("{}", serde_json::to_string_pretty(&out).expect("JSON"));
        return Ok(0);
    }
    print_record(&rec, origin);
    match now {
        Ok((v, print)) => {
            println!("\n{}", paint::bold("the current policy, run again:"));
            print();
            let verdict = |d: &str, r: Option<&str>| match r {
                Some(r) => format!("{} (rule {})", paint::decision(d, 0), paint::rule(r)),
                None => paint::decision(d, 0),
            };
            if same(&rec, &v) {
                println!(
                    "same as recorded: {}",
                    verdict(&rec.decision, rec.rule.as_deref())
                );
            } else {
                println!(
                    "{}: recorded {}, now {}",
                    paint::bad("differs"),
                    verdict(&rec.decision, rec.rule.as_deref()),
                    verdict(v.decision.as_str(), v.rule.as_deref())
                );
            }
        }
        Err(why) => println!("\ncannot run it again: {why}"),
    }
    Ok(0)
}

/// The record of `id`: the last with exactly that id, else the only id
/// that begins with it.
fn find(path: &Path, id: &str) -> Result<AuditRecord, Error> {
    let result = match aileron_audit::read(path, &Filter::default(), std::time::SystemTime::now()) {
        Ok(r) => r,
        Err(e) if e.is_not_found() => {
            return Err(Error::NoAuditLog {
                path: path.to_path_buf(),
            });
        }
        Err(e) => return Err(e.into()),
    };
    let mut records = result.records;
    if let Some(i) = records.iter().rposition(|r| r.action.id == id) {
        return Ok(records.swap_remove(i));
    }
    let mut ids: Vec<&str> = records
        .iter()
        .map(|r| r.action.id.as_str())
        .filter(|r| !id.is_empty() && r.starts_with(id))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    match ids.as_slice() {
        [one] => {
            let one = one.to_string();
            let i = records
                .iter()
                .rposition(|r| r.action.id == one)
                .expect("found above");
            Ok(records.swap_remove(i))
        }
        [] => Err(Error::NoSuchDecision {
            id: id.to_owned(),
            path: path.to_path_buf(),
        }),
        many => Err(Error::AmbiguousDecision {
            id: id.to_owned(),
            count: many.len(),
            path: path.to_path_buf(),
        }),
    }
}

/// Where the rule `id` is written in `policy` (`file:line:col`), if it
/// still is.
fn rule_origin(policy: &Policy, id: &str) -> Option<String> {
    policy
        .rules()
        .find(|r| r.id == id)
        .map(|r| r.origin.to_string())
}

type Print = Box<dyn FnOnce()>;

/// The verdict of the current policy on the record's action, and how to
/// print its trace; `Err`: why the action cannot be run again.
fn rerun(policy: &Policy, rec: &AuditRecord) -> Result<(Verdict, Print), String> {
    let (subject, cwd) = rebuild(rec)?;
    let now = timestamp();
    Ok(match subject {
        Subj::Line(line) => {
            let lv = explain_line(policy, &line, &cwd, &now);
            let verdict = lv.verdict.clone();
            (verdict, Box::new(move || print_line(&line, &lv)))
        }
        Subj::Action(action) => {
            let e = policy.explain(&action, &aileron_engine::State::default());
            let verdict = e.verdict.clone();
            (
                verdict,
                Box::new(move || {
                    println!("action: {} ({})", action.summary, action.kind);
                    print_explanation(&e, "  ");
                    print_final(&e.verdict);
                }),
            )
        }
    })
}

/// The current verdict is the recorded one: same decision, same rule.
fn same(rec: &AuditRecord, v: &Verdict) -> bool {
    rec.decision == v.decision.as_str() && rec.rule == v.rule
}

fn print_record(rec: &AuditRecord, origin: Option<Option<String>>) {
    println!("{}", super::audit::line(rec));
    let field = |name: &str, value: &str| {
        if !value.is_empty() {
            println!("  {name:<9}{}", aileron_audit::clean(value));
        }
    };
    field("time", &rec.time);
    field("adapter", &rec.adapter);
    field("agent", rec.agent.as_deref().unwrap_or_default());
    field("session", rec.session.as_deref().unwrap_or_default());
    field("cwd", rec.cwd.as_deref().unwrap_or_default());
    field(
        "action",
        &format!("{} ({})", rec.action.summary, rec.action.kind),
    );
    println!(
        "  {:<9}{} ({})",
        "decision",
        paint::decision(&rec.decision, 0),
        rec.source
    );
    field("outcome", rec.outcome.as_deref().unwrap_or_default());
    field("approver", rec.approver.as_deref().unwrap_or_default());
    field("reason", &rec.reason);
    if let Some(rule) = &rec.rule {
        let at = match origin.flatten() {
            Some(at) => format!("written at {}", paint::rule(&at)),
            None => "not in the current policy".to_owned(),
        };
        println!("  {:<9}{} — {at}", "rule", paint::rule(rule));
    }
    if let Some(j) = &rec.judge {
        let v: Value = json!(j);
        field("judge", &v.to_string());
    }
}
