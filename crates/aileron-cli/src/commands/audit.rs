//! `aileron audit`: show and follow the audit log.

use super::{EXIT_POLICY, current_dir};
use aileron_audit::{Filter, FollowOptions, format_line};
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
    let path = match args.file {
        Some(f) => f,
        None => {
            let opts = LoadOptions::from_env(current_dir()?);
            match aileron_config::load(&opts, None) {
                Ok(l) => {
                    aileron_config::audit_log_path(&l.policy, l.project_file.as_deref(), &opts)
                }
                Err(d) => {
                    eprintln!("{d}");
                    return Ok(EXIT_POLICY);
                }
            }
        }
    };
    let print = |rec: &aileron_audit::AuditRecord| {
        if args.json {
            println!("{}", rec.to_json_line().trim_end());
        } else {
            println!("{}", format_line(rec));
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
