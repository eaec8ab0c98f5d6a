//! Reading the audit log back: filtering, following, and a one-line
//! format for people (`aileron audit`).

use crate::Error;
use crate::record::AuditRecord;
use crate::time::{parse_bound, parse_rfc3339};
use std::borrow::Cow;
use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, BufRead, BufReader};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Which records to show. Every field left `None` admits everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// `allow`, `deny`, `ask` or `judge`; several separated by commas
    /// (`deny,ask`). Case-insensitive.
    pub decision: Option<String>,
    /// The exact session id.
    pub session: Option<String>,
    /// Records at or after this time: RFC 3339, a date (`2026-11-22`,
    /// midnight UTC), `now`, or a duration before now (`10m`, `2h`, `1d`,
    /// `1w`, `1h30m`).
    pub since: Option<String>,
    /// Records at or before this time, written like `since`.
    pub until: Option<String>,
    /// Only the last `limit` matching records. [`follow`] ignores it.
    pub limit: Option<usize>,
}

/// A [`Filter`] with its times resolved.
struct Matcher {
    decisions: Option<Vec<String>>,
    session: Option<String>,
    since: Option<i128>,
    until: Option<i128>,
}

impl Filter {
    fn matcher(&self, now: SystemTime) -> Result<Matcher, Error> {
        let bound = |b: &Option<String>| -> Result<Option<i128>, Error> {
            b.as_deref().map(|s| parse_bound(s, now)).transpose()
        };
        Ok(Matcher {
            decisions: self.decision.as_deref().map(|d| {
                d.split(',')
                    .map(|d| d.trim().to_ascii_lowercase())
                    .filter(|d| !d.is_empty())
                    .collect()
            }),
            session: self.session.clone(),
            since: bound(&self.since)?,
            until: bound(&self.until)?,
        })
    }

    /// Checks `since` and `until` without reading anything; the error
    /// says what is wrong.
    pub fn validate(&self, now: SystemTime) -> Result<(), Error> {
        self.matcher(now).map(|_| ())
    }
}

impl Matcher {
    fn admits(&self, rec: &AuditRecord) -> bool {
        if let Some(ds) = &self.decisions
            && !ds.iter().any(|d| rec.decision.eq_ignore_ascii_case(d))
        {
            return false;
        }
        if let Some(s) = &self.session
            && rec.session.as_deref() != Some(s.as_str())
        {
            return false;
        }
        if self.since.is_some() || self.until.is_some() {
            // A record whose time cannot be read cannot be placed in a window.
            let Some(t) = parse_rfc3339(&rec.time) else {
                return false;
            };
            if self.since.is_some_and(|s| t < s) || self.until.is_some_and(|u| t > u) {
                return false;
            }
        }
        true
    }
}

/// What [`read`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadResult {
    /// The matching records, oldest first.
    pub records: Vec<AuditRecord>,
    /// Lines that were not an audit record (skipped).
    pub malformed: usize,
    /// The byte offset just after the last complete line read: pass it to
    /// [`FollowOptions::from`] to follow on without a gap or a repeat.
    pub end: u64,
}

/// Reads the log at `path` and returns the records `filter` admits.
/// Relative times in the filter count back from `now` ([`read_now`] reads
/// the clock). Malformed lines are skipped and counted, blank lines
/// ignored. A last line without its newline that is not (yet) a whole
/// record is left for [`follow`]: it may be a write in progress.
/// An invalid `since`/`until` is [`Error::BadTime`]; a missing file is an
/// [`Error::Read`] that [`Error::is_not_found`].
pub fn read(path: &Path, filter: &Filter, now: SystemTime) -> Result<ReadResult, Error> {
    let matcher = filter.matcher(now)?;
    let at = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = BufReader::with_capacity(64 * 1024, File::open(path).map_err(at)?);
    let mut records = VecDeque::new();
    let mut malformed = 0;
    let mut offset = 0u64;
    let mut end = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(at)?;
        if n == 0 {
            break;
        }
        offset += n as u64;
        let complete = line.last() == Some(&b'\n');
        match parse_line(&line) {
            Parsed::Blank => {}
            Parsed::Record(rec) => {
                if matcher.admits(&rec) {
                    records.push_back(*rec);
                    if filter.limit.is_some_and(|l| records.len() > l) {
                        records.pop_front();
                    }
                }
            }
            Parsed::Malformed if complete => malformed += 1,
            Parsed::Malformed => break,
        }
        end = offset;
    }
    Ok(ReadResult {
        records: records.into(),
        malformed,
        end,
    })
}

/// [`read`] with relative times counted back from the current time.
pub fn read_now(path: &Path, filter: &Filter) -> Result<ReadResult, Error> {
    read(path, filter, SystemTime::now())
}

enum Parsed {
    Blank,
    Record(Box<AuditRecord>),
    Malformed,
}

fn parse_line(line: &[u8]) -> Parsed {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Blank;
    }
    match serde_json::from_slice::<AuditRecord>(line) {
        Ok(rec) => Parsed::Record(Box::new(rec)),
        Err(_) => Parsed::Malformed,
    }
}

/// How often [`follow`] looks at the file.
pub const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// Where and how [`follow`] starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FollowOptions {
    /// Relative times in the filter count back from here.
    pub now: SystemTime,
    /// The byte offset to start at ([`ReadResult::end`]); `None` starts at
    /// the end of the file as it is now. A file that does not exist yet is
    /// read from its beginning once it appears.
    pub from: Option<u64>,
    /// How often to look for new lines.
    pub poll: Duration,
}

impl FollowOptions {
    pub fn new(now: SystemTime) -> FollowOptions {
        FollowOptions {
            now,
            from: None,
            poll: POLL_INTERVAL,
        }
    }
}

/// Calls `on_record` with each record `filter` admits as it is appended to
/// the log at `path`, until `on_record` returns `false`; then returns the
/// number of malformed lines skipped. Polls the file every
/// [`FollowOptions::poll`]; waits for a file that does not exist yet;
/// starts over when the file is truncated or replaced (log rotation).
/// Only complete lines are delivered.
pub fn follow(
    path: &Path,
    filter: &Filter,
    opts: &FollowOptions,
    mut on_record: impl FnMut(&AuditRecord) -> bool,
) -> Result<usize, Error> {
    let matcher = filter.matcher(opts.now)?;
    let at = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut malformed = 0;
    let mut current: Option<(File, (u64, u64))> = None;
    let mut first = true;
    let mut offset = 0u64;
    let mut pending: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match fs::metadata(path) {
            Ok(meta) => {
                let id = (meta.dev(), meta.ino());
                if current.as_ref().map(|c| c.1) != Some(id) {
                    match File::open(path) {
                        Ok(file) => {
                            let m = file.metadata().map_err(at)?;
                            offset = if first {
                                opts.from.unwrap_or(m.len())
                            } else {
                                0
                            };
                            pending.clear();
                            current = Some((file, (m.dev(), m.ino())));
                        }
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                        Err(e) => return Err(at(e)),
                    }
                }
            }
            // Removed: keep reading the old file until a new one appears.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(at(e)),
        }
        // A file that appears after we started is new in its entirety.
        first = false;

        if let Some((file, _)) = &current {
            let len = file.metadata().map_err(at)?.len();
            if len < offset {
                offset = 0;
                pending.clear();
            }
            while offset < len {
                let want = chunk.len().min((len - offset) as usize);
                let n = file.read_at(&mut chunk[..want], offset).map_err(at)?;
                if n == 0 {
                    break;
                }
                offset += n as u64;
                pending.extend_from_slice(&chunk[..n]);
            }
            let mut start = 0;
            while let Some(nl) = pending[start..].iter().position(|&b| b == b'\n') {
                let line = &pending[start..start + nl + 1];
                start += nl + 1;
                match parse_line(line) {
                    Parsed::Blank => {}
                    Parsed::Malformed => malformed += 1,
                    Parsed::Record(rec) => {
                        if matcher.admits(&rec) && !on_record(&rec) {
                            return Ok(malformed);
                        }
                    }
                }
            }
            pending.drain(..start);
        }
        std::thread::sleep(opts.poll);
    }
}

/// One line for people:
/// `2026-11-22T10:00:00Z  deny   shim  s-1234  git push --force  (rule no-force-push: force pushes rewrite history)`.
///
/// Fractions of seconds are left out; a missing session shows as `-`; an
/// outcome after an `ask` is appended (`→ approved-once by terminal`).
/// Control characters (newlines, terminal escapes) and bidirectional
/// overrides are escaped, so that what an agent ran cannot redraw the
/// terminal of whoever reads the log.
pub fn format_line(rec: &AuditRecord) -> String {
    let mut out = format!(
        "{}  {:<5}  {}  {}  {}",
        display_time(&rec.time),
        clean(&rec.decision),
        clean(&rec.adapter),
        clean(rec.session.as_deref().unwrap_or("-")),
        clean(&rec.action.summary),
    );
    let by = match &rec.rule {
        Some(rule) => format!("rule {}", clean(rule)),
        None => clean(&rec.source).into_owned(),
    };
    match (by.is_empty(), rec.reason.is_empty()) {
        (true, true) => {}
        (false, true) => out.push_str(&format!("  ({by})")),
        (true, false) => out.push_str(&format!("  ({})", clean(&rec.reason))),
        (false, false) => out.push_str(&format!("  ({by}: {})", clean(&rec.reason))),
    }
    if let Some(outcome) = &rec.outcome {
        out.push_str(&format!("  → {}", clean(outcome)));
        if let Some(approver) = &rec.approver {
            out.push_str(&format!(" by {}", clean(approver)));
        }
    }
    out
}

/// `2026-11-22T10:00:00.123Z` → `2026-11-22T10:00:00Z`.
fn display_time(t: &str) -> Cow<'_, str> {
    let b = t.as_bytes();
    if b.len() > 20 && b[19] == b'.' {
        let digits = b[20..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 {
            return clean(&format!("{}{}", &t[..19], &t[20 + digits..]))
                .into_owned()
                .into();
        }
    }
    clean(t)
}

/// `s` safe to print on a terminal: control characters and bidirectional
/// overrides escaped (`\n`, `\u{1b}`).
pub fn clean(s: &str) -> Cow<'_, str> {
    let unsafe_char =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}
