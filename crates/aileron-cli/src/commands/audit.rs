//! `aileron audit`: show and follow the audit log.

use super::{EXIT_POLICY, current_dir, paint};
use aileron_audit::{AuditRecord, Filter, FollowOptions, clean, format_line};
use aileron_cli::Error;
use aileron_config::LoadOptions;
use std::path::PathBuf;

pub struct Args {
    pub file: Option<PathBuf>,
    pub filter: Filter,
    pub follow: bool,
    /// A summary of the judge's calls instead of the lines.
    pub judge: bool,
    pub json: bool,
}

pub fn run(args: Args) -> Result<u8, Error> {
    let path = match log_path(args.file)? {
        Ok(p) => p,
        Err(code) => return Ok(code),
    };
    let print = |rec: &aileron_audit::AuditRecord| {
        if args.json {
            println!("{}", rec.to_json_line().trim_end());
        } else {
            println!("{}", line(rec));
        }
    };
    let now = std::time::SystemTime::now();
    args.filter.validate(now)?;
    let result = match aileron_audit::read(&path, &args.filter, now) {
        Ok(r) => r,
        Err(e) if e.is_not_found() && args.follow => Default::default(),
        Err(e) if e.is_not_found() => return Err(Error::NoAuditLog { path }),
        Err(e) => return Err(e.into()),
    };
    if args.judge {
        super::judge::usage(&result.records, args.json);
    } else {
        result.records.iter().for_each(print);
    }
    if result.malformed > 0 {
        eprintln!(
            "aileron: skipped {} malformed line(s) in {}",
            result.malformed,
            path.display()
        );
    }
    if args.follow {
        let mut opts = FollowOptions::new(now);
        opts.from = Some(result.end);
        aileron_audit::follow(&path, &args.filter, &opts, |rec| {
            print(rec);
            true
        })?;
    }
    Ok(0)
}

/// `--file`, or the `settings.audit_log` of the policy in force; `Err`:
/// the exit code when that policy does not load (its errors printed).
pub fn log_path(file: Option<PathBuf>) -> Result<Result<PathBuf, u8>, Error> {
    if let Some(f) = file {
        return Ok(Ok(f));
    }
    let opts = LoadOptions::from_env(current_dir()?);
    Ok(match aileron_config::load(&opts, None) {
        Ok(l) => Ok(aileron_config::audit_log_path(
            &l.policy,
            l.project_file.as_deref(),
            &opts,
        )),
        Err(d) => {
            eprintln!("{d}");
            Err(EXIT_POLICY)
        }
    })
}

/// The words `--decision` takes.
const DECISIONS: [&str; 4] = ["allow", "deny", "ask", "judge"];

/// `--decision`: decision words, comma-separated; anything else is an
/// error that lists them (a typo would otherwise show nothing).
pub fn decisions(text: &str) -> Result<String, String> {
    for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        if !DECISIONS.iter().any(|d| d.eq_ignore_ascii_case(word)) {
            return Err(format!(
                "unknown decision `{word}`; expected one of: {} (comma-separated)",
                DECISIONS.join(", ")
            ));
        }
    }
    Ok(text.to_owned())
}

/// `format_line`, its decision in colour on a terminal, and the action's
/// id (what `aileron why` takes) at the end.
pub fn line(rec: &AuditRecord) -> String {
    let plain = format_line(rec);
    let word = clean(&rec.decision);
    let mut out = match plain.split_once("  ") {
        Some((time, rest)) if rest.starts_with(&*word) => {
            let width = word.chars().count().max(5);
            let after = rest.get(word.len().max(5)..).unwrap_or_default();
            format!(
                "{}  {}{after}",
                paint::dim(time),
                paint::decision(&word, width)
            )
        }
        _ => plain,
    };
    if !rec.action.id.is_empty() {
        out.push_str(&format!(
            "  {}",
            paint::dim(&format!("[{}]", clean(&rec.action.id)))
        ));
    }
    out
}
