//! The startup message's settings: what a client sets before its first
//! statement, as parameters (`search_path=...`) or in `options`
//! (`-c search_path=...`, `--search_path=...`: libpq's `PGOPTIONS`).
//!
//! Those that change how names resolve or who runs the statements are
//! decided as `SET` would be, one `sql.query` Action each, before the
//! server sees the connection: the analysis trusts a function's name only
//! while `pg_catalog` is searched first. What `options` holds that the
//! analysis does not read is `unparsable` (a structural ask).

use crate::functions;
use crate::lower::{Context, action};
use aileron_engine::builtin::{DYNAMIC, UNPARSABLE};
use aileron_engine::{Action, Sensitivity};

/// The settings decided, and how each counts.
const WATCHED: &[(&str, Watch)] = &[
    ("search_path", Watch::SearchPath),
    ("role", Watch::Identity),
    ("session_authorization", Watch::Identity),
    ("local_preload_libraries", Watch::Loads),
    ("session_preload_libraries", Watch::Loads),
];

#[derive(Clone, Copy)]
enum Watch {
    /// Trusted when `pg_catalog` stays first.
    SearchPath,
    /// Changes who runs the statements: `mutate`.
    Identity,
    /// Loads a shared library into the server: dynamic.
    Loads,
}

/// Parameters of the startup message that are no setting.
const NOT_SETTINGS: &[&str] = &["user", "database", "options", "replication"];

/// The Actions for the settings of a startup message's `params` that the
/// policy decides; empty when none is there.
pub fn actions(params: &[(String, String)], cx: &Context) -> Vec<Action> {
    let mut out = Vec::new();
    for (name, value) in params {
        if name == "options" {
            options(value, cx, &mut out);
        } else if !NOT_SETTINGS.contains(&name.as_str()) && !name.starts_with("_pq_.") {
            setting(name, value, &format!("{name}={value}"), cx, &mut out);
        }
    }
    out
}

/// The settings of `options`, read as the server reads it: words split at
/// blanks (a backslash keeps the next character), then `-c NAME=VALUE`,
/// `-cNAME=VALUE` or `--NAME=VALUE`.
fn options(text: &str, cx: &Context, out: &mut Vec<Action>) {
    let words = split_options(text);
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let assignment = if let Some(long) = w.strip_prefix("--") {
            Some(long.to_owned())
        } else if w == "-c" {
            i += 1;
            words.get(i).cloned()
        } else {
            w.strip_prefix("-c").map(str::to_owned)
        };
        i += 1;
        let shown = format!("options={text}");
        match assignment.as_deref().and_then(|a| a.split_once('=')) {
            Some((name, value)) if !name.is_empty() => setting(name, value, &shown, cx, out),
            _ => {
                let mut a = startup_action(Sensitivity::Mutate, &shown, cx, UNPARSABLE);
                a.description = Some(format!(
                    "the startup option {w:?} is not one the gateway reads (-c NAME=VALUE, --NAME=VALUE)"
                ));
                out.push(a);
            }
        }
    }
}

/// `options` cut into words as the server cuts it (`pg_split_opts`).
fn split_options(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut escaped = false;
    let mut in_word = false;
    for c in text.chars() {
        if escaped {
            cur.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
            in_word = true;
        } else if is_c_space(c) {
            if in_word {
                words.push(std::mem::take(&mut cur));
                in_word = false;
            }
        } else {
            cur.push(c);
            in_word = true;
        }
    }
    if in_word {
        words.push(cur);
    }
    words
}

/// C's `isspace`, which the server splits `options` with: also the
/// vertical tab, which Rust's ASCII whitespace leaves out.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// The Action of one setting, if the policy decides it. Names as the
/// server reads them: case does not matter, `-` is `_`; a name of other
/// characters than a setting's is not read (unparsable).
fn setting(name: &str, value: &str, shown: &str, cx: &Context, out: &mut Vec<Action>) {
    let folded = name.to_ascii_lowercase().replace('-', "_");
    if !folded
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        let mut a = startup_action(Sensitivity::Mutate, shown, cx, UNPARSABLE);
        a.description = Some(format!(
            "the startup setting {name:?} is not a name the gateway reads"
        ));
        out.push(a);
        return;
    }
    let Some((_, watch)) = WATCHED.iter().find(|(n, _)| *n == folded) else {
        return;
    };
    let mut a = startup_action(Sensitivity::Read, shown, cx, "");
    let why = match watch {
        Watch::SearchPath if functions::search_path_trusted(list(value)) => {
            format!("the connection starts with search_path {value}")
        }
        Watch::SearchPath => {
            a.sensitivity = Some(Sensitivity::Mutate);
            a.tags.push(DYNAMIC.to_owned());
            functions::UNTRUSTED_PATH.to_owned()
        }
        Watch::Identity => {
            a.sensitivity = Some(Sensitivity::Mutate);
            format!("the connection starts as {folded} {value}")
        }
        Watch::Loads => {
            a.sensitivity = Some(Sensitivity::Mutate);
            a.tags.push(DYNAMIC.to_owned());
            format!("{folded} loads shared libraries into the server")
        }
    };
    a.description = Some(format!("a startup parameter: {why}"));
    out.push(a);
}

/// A `SET` Action for a startup parameter.
fn startup_action(sensitivity: Sensitivity, shown: &str, cx: &Context, tag: &str) -> Action {
    let tags = if tag.is_empty() {
        Vec::new()
    } else {
        vec![tag.to_owned()]
    };
    action(
        "SET",
        sensitivity,
        Vec::new(),
        &format!("startup parameter {shown}"),
        cx,
        tags,
    )
}

/// The names of a list setting as the server splits and folds them
/// (`SplitIdentifierString`): at commas, blanks around them dropped,
/// `"quoted"` names kept as written (`""` a quote), others in lower case;
/// `None` for an element it would reject.
fn list(value: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    let mut rest = value.trim_start();
    if rest.is_empty() {
        return out;
    }
    loop {
        let name = if let Some(q) = rest.strip_prefix('"') {
            let mut name = String::new();
            let mut chars = q.char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                if c != '"' {
                    name.push(c);
                } else if q[i + 1..].starts_with('"') {
                    name.push('"');
                    chars.next();
                } else {
                    end = Some(i + 1);
                    break;
                }
            }
            match end {
                Some(e) => {
                    rest = &q[e..];
                    Some(name)
                }
                None => {
                    rest = "";
                    None
                }
            }
        } else {
            let end = rest.find(|c: char| c == ',' || c.is_whitespace());
            let (word, tail) = rest.split_at(end.unwrap_or(rest.len()));
            rest = tail;
            (!word.is_empty()).then(|| word.to_ascii_lowercase())
        };
        out.push(name);
        rest = rest.trim_start();
        match rest.strip_prefix(',') {
            Some(r) => rest = r.trim_start(),
            None if rest.is_empty() => return out,
            None => {
                out.push(None);
                return out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_cut_as_the_server_cuts_them() {
        assert_eq!(
            split_options(r"-c search_path=a,b  --x=y\ z -cfoo=1"),
            ["-c", "search_path=a,b", "--x=y z", "-cfoo=1"]
        );
        assert_eq!(split_options("  "), Vec::<String>::new());
        // C's isspace: the vertical tab splits too.
        assert_eq!(
            split_options("-c\x0bsearch_path=a"),
            ["-c", "search_path=a"]
        );
    }

    #[test]
    fn a_list_is_read_as_the_server_reads_it() {
        let s = |v: &[Option<&str>]| -> Vec<Option<String>> {
            v.iter().map(|o| o.map(str::to_owned)).collect()
        };
        assert_eq!(
            list("Public, pg_catalog"),
            s(&[Some("public"), Some("pg_catalog")])
        );
        assert_eq!(list(r#""A""b", "x y""#), s(&[Some(r#"A"b"#), Some("x y")]));
        assert_eq!(list(r#"a, "b"#), s(&[Some("a"), None]));
        assert_eq!(list("a b"), s(&[Some("a"), None]));
        assert_eq!(list("a,,b"), s(&[Some("a"), None, Some("b")]));
    }
}
