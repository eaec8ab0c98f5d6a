//! `aileron explain`: how one command or Action is decided.

use super::{EXIT_POLICY, current_dir, load, paint};
use aileron_cli::Error;
use aileron_engine::{
    Action, Explanation, LineContext, LineVerdict, Policy, Session, State, Verdict,
};
use serde_json::json;
use std::io::Read;
use std::path::PathBuf;

/// One command or Action, and the policy that decides it (`explain`,
/// `judge try`).
#[derive(clap::Args)]
pub struct Args {
    /// Policy file (default: the nearest aileron.yaml).
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// An Action as JSON (a file, or - for stdin) instead of a command.
    #[arg(long, conflicts_with = "command")]
    pub action: Option<PathBuf>,
    /// Working directory the command runs in (default: the current one).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// The command line; several words are joined with spaces. Everything
    /// from its first word on is the command (`git push --force`); put it
    /// after `--` when it starts with `-`.
    #[arg(
        trailing_var_arg = true,
        required_unless_present = "action",
        value_name = "COMMAND"
    )]
    pub command: Vec<String>,
}

const NOW: &str = "1970-01-01T00:00:00Z";

pub fn run(args: Args) -> Result<u8, Error> {
    if let Some(e) = args.policy.as_deref().and_then(super::policy_file_error) {
        return Err(e);
    }
    let cwd = working_dir(args.cwd)?;
    let loaded = match load(args.policy, cwd.clone()) {
        Ok(l) => l,
        Err(diags) => {
            if args.json {
                let out = json!({"decision": "deny", "rule": null, "source": "default",
                    "reason": "the policy does not load", "errors": diags.0, "commands": []});
                println!("{}", serde_json::to_string_pretty(&out).expect("JSON"));
            } else {
                println!("{diags}");
            }
            return Ok(EXIT_POLICY);
        }
    };
    let policy = loaded.policy;
    let state = State::default();
    let cwd_str = cwd.to_string_lossy().into_owned();
    let now = timestamp();
    if let Some(path) = args.action {
        let action = read_action(path, cwd_str, &now)?;
        let e = policy.explain(&action, &state);
        if args.json {
            let out = json!({
                "decision": e.verdict.decision, "rule": e.verdict.rule, "source": e.verdict.source,
                "reason": e.verdict.reason, "approver": e.verdict.approver, "action": action,
                "why": e.why, "matched": e.matched, "considered": e.considered,
                "commands": [],
            });
            println!("{}", serde_json::to_string_pretty(&out).expect("JSON"));
        } else {
            println!("action: {} ({})", action.summary, action.kind);
            print_explanation(&e, "  ");
            print_final(&e.verdict);
        }
        return Ok(0);
    }
    let line = args.command.join(" ");
    let lv = explain_line(&policy, &line, &cwd_str, &now);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&line_json(&line, &lv)).expect("JSON")
        );
    } else {
        print_line(&line, &lv);
    }
    Ok(0)
}

/// How `policy` decides `line` run in `cwd` at `now`, with every rule
/// that matched (no session history: a fresh session).
pub fn explain_line(policy: &Policy, line: &str, cwd: &str, now: &str) -> LineVerdict {
    let session = Session {
        cwd: Some(cwd.to_owned()),
        ..Session::default()
    };
    let cx = LineContext {
        cwd,
        session: &session,
        timestamp: now.parse().ok(),
        id: "explain",
        exe: None,
    };
    policy.explain_line(line, &cx, &State::default())
}

/// `--cwd`, resolved, or the current directory.
pub fn working_dir(cwd: Option<PathBuf>) -> Result<PathBuf, Error> {
    match cwd {
        Some(c) => std::fs::canonicalize(&c).map_err(|source| Error::BadPath {
            option: "--cwd",
            path: c,
            source,
        }),
        None => current_dir(),
    }
}

/// The Action in the JSON file at `path` (`-`: stdin), its time (`now`)
/// and working directory filled in when it has none.
pub fn read_action(path: PathBuf, cwd: String, now: &str) -> Result<Action, Error> {
    let text = if path.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(Error::ReadStdin)?;
        s
    } else {
        std::fs::read_to_string(&path).map_err(|source| Error::ReadAction {
            path: path.clone(),
            source,
        })?
    };
    let mut action: Action =
        serde_json::from_str(&text).map_err(|source| Error::InvalidAction { path, source })?;
    if action.timestamp.is_none() {
        action.timestamp = now.parse().ok();
    }
    if action.session.cwd.is_none() {
        action.session.cwd = Some(cwd);
    }
    action.normalize();
    Ok(action)
}

fn line_json(line: &str, lv: &LineVerdict) -> serde_json::Value {
    let commands: Vec<_> = lv
        .commands
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let e = c.explanation.as_ref();
            json!({
                "index": i,
                "command": c.command,
                "binary": c.action.facet_str("shell", "binary"),
                "parent": c.parent,
                "notes": c.notes,
                "sensitivity": c.action.sensitivity.map(|s| s.as_str()),
                "tags": c.action.tags,
                "reads": c.action.facets.get("shell").and_then(|s| s.get("reads")),
                "writes": c.action.facets.get("shell").and_then(|s| s.get("writes")),
                "decision": c.verdict.decision,
                "rule": c.verdict.rule,
                "source": c.verdict.source,
                "reason": c.verdict.reason,
                "why": e.map(|e| &e.why),
                "matched": e.map(|e| &e.matched),
                "considered": e.map(|e| e.considered),
                "files": c.files,
            })
        })
        .collect();
    json!({
        "line": line,
        "decision": lv.verdict.decision,
        "rule": lv.verdict.rule,
        "source": lv.verdict.source,
        "reason": lv.verdict.reason,
        "approver": lv.verdict.approver,
        "decisive_command": lv.decisive,
        "opaque": lv.opaque,
        "commands": commands,
    })
}

pub fn print_line(line: &str, lv: &LineVerdict) {
    println!("line: {line}");
    if let Some(why) = &lv.opaque {
        println!("  cannot be analysed: {why}");
    }
    println!("{} simple command(s):", lv.commands.len());
    for (i, c) in lv.commands.iter().enumerate() {
        let via = c
            .parent
            .map(|p| format!(" (inside #{p})"))
            .unwrap_or_default();
        println!("\n{}{via}", paint::bold(&format!("#{i} {}", c.command)));
        let sens = c.action.sensitivity.map_or("?", |s| s.as_str());
        let tags = if c.action.tags.is_empty() {
            String::new()
        } else {
            format!(", tags: {}", c.action.tags.join(", "))
        };
        println!("  sensitivity: {sens}{tags}");
        for n in &c.notes {
            println!("  note: {n}");
        }
        if let Some(e) = &c.explanation {
            print_explanation(e, "  ");
        }
        for f in &c.files {
            let rule = f.verdict.rule.as_deref().unwrap_or("default");
            println!(
                "  file: {} => {} ({rule}: {})",
                f.access,
                f.verdict.decision.as_str(),
                f.verdict.reason
            );
        }
    }
    println!();
    if let Some(i) = lv.decisive
        && lv.commands.len() > 1
    {
        println!("most restrictive part: #{i} {}", lv.commands[i].command);
    }
    print_final(&lv.verdict);
}

pub fn print_explanation(e: &Explanation, indent: &str) {
    if e.matched.is_empty() {
        println!("{indent}no rule matched ({} considered)", e.considered);
    } else {
        println!(
            "{indent}matching rules ({} of {} considered), in evaluation order:",
            e.matched.len(),
            e.considered
        );
        for m in &e.matched {
            println!(
                "{indent}  {} {} [priority {}, {}] {} — {}",
                paint::decision(m.decision.as_str(), 5),
                paint::rule(&m.id),
                m.priority,
                m.layer.as_str(),
                paint::rule(&m.origin.to_string()),
                m.description.clone().unwrap_or_else(|| m.pattern.clone())
            );
        }
    }
    println!(
        "{indent}=> {} ({})",
        paint::decision(e.verdict.decision.as_str(), 0),
        e.why
    );
}

pub fn print_final(v: &Verdict) {
    let rule = v
        .rule
        .as_deref()
        .map(|r| format!(" (rule {})", paint::rule(r)))
        .unwrap_or_default();
    println!(
        "{}: {}{rule}: {}",
        paint::bold("decision"),
        paint::decision(v.decision.as_str(), 0),
        v.reason
    );
}

/// The current time as RFC 3339 (UTC), for `time` and `rate` matchers.
pub fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    aileron_engine::action::timestamp_from_unix(secs).unwrap_or_else(|| NOW.to_owned())
}
