//! "Allow always for this project / for me": appending a rule to a policy
//! file without disturbing its comments or formatting.
//!
//! The edit is textual: the new entry goes at the end of the top-level
//! `allow:` list (block or one-line flow style), or a new `allow:` list is
//! appended. The result is parsed before it is written; a file the edit
//! would break is left untouched.

use crate::Error;
use crate::core::Amendment;
use crate::session::SavedApproval;
use std::path::Path;

impl Amendment {
    /// Appends the allow rule to the policy file at `path` (created if
    /// needed), at `priority` when the default would not outrank the rule
    /// that asked, with `comment` after it.
    pub fn write(
        &self,
        path: &Path,
        priority: Option<i64>,
        comment: &str,
        home: &str,
    ) -> Result<(), Error> {
        let item = match &self.approval {
            SavedApproval::Command { pattern, .. } => match priority {
                None => yaml_string(pattern),
                Some(p) => format!("{{command: {}, priority: {p}}}", yaml_string(pattern)),
            },
            SavedApproval::Action { kind, fields, .. } => {
                let when = std::iter::once(("type", kind.as_str()))
                    .chain(fields.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                    .map(|(k, v)| format!("{}: {}", yaml_string(k), yaml_string(v)))
                    .collect::<Vec<_>>()
                    .join(", ");
                match priority {
                    None => format!("{{when: {{{when}}}}}"),
                    Some(p) => format!("{{when: {{{when}}}, priority: {p}}}"),
                }
            }
        };
        append_item(path, &item, comment, home)
    }
}

fn append_item(path: &Path, item: &str, comment: &str, home: &str) -> Result<(), Error> {
    let io = |action: &'static str, at: &Path| {
        let path = at.to_path_buf();
        move |source| Error::Io {
            action,
            path,
            source,
        }
    };
    let original = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "version: 1\n".to_owned(),
        Err(e) => return Err(io("read", path)(e)),
    };
    let updated = with_allow_item(&original, item, comment)?;
    let name = path.to_string_lossy();
    let source = aileron_engine::Source {
        name: name.clone().into_owned(),
        text: updated.clone(),
        layer: aileron_engine::Layer::Project,
        base_dir: aileron_engine::paths::parent(&name).to_owned(),
    };
    aileron_engine::parse_document(&source, home)
        .map_err(|e| Error::WouldNotLoad(e[0].headline()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    }
    let tmp = path.with_extension(format!("yaml.aileron-{}.tmp", std::process::id()));
    std::fs::write(&tmp, &updated).map_err(io("write", &tmp))?;
    std::fs::rename(&tmp, path).map_err(io("replace", path))
}

/// The text with the rule added.
pub fn with_allow(text: &str, pattern: &str, comment: &str) -> Result<String, Error> {
    with_allow_item(text, &yaml_string(pattern), comment)
}

/// The text with `item` (one line of YAML) added to the `allow:` list.
fn with_allow_item(text: &str, item: &str, comment: &str) -> Result<String, Error> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let Some(at) = lines.iter().position(|l| l.starts_with("allow:")) else {
        let mut out = text.to_owned();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("allow:\n  - {item}  # {comment}\n"));
        return Ok(out);
    };
    let head = lines[at].trim_end_matches(['\n', '\r']);
    let rest = head["allow:".len()..].trim();
    let mut out = String::with_capacity(text.len() + item.len() + comment.len() + 16);
    if rest.is_empty() || rest.starts_with('#') {
        // Block style: after the last line that belongs to the list.
        let mut end = at + 1;
        let mut indent = None;
        for (i, l) in lines.iter().enumerate().skip(at + 1) {
            let t = l.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            if !l.starts_with(' ') && !l.starts_with('-') {
                break;
            }
            if t.starts_with("- ") || t == "-" {
                indent.get_or_insert(l.len() - l.trim_start().len());
            }
            end = i + 1;
        }
        let pad = " ".repeat(indent.unwrap_or(2));
        for l in &lines[..end] {
            out.push_str(l);
        }
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{pad}- {item}  # {comment}\n"));
        for l in &lines[end..] {
            out.push_str(l);
        }
    } else if rest.starts_with('[') && rest.trim_end_matches(|c: char| c != ']').ends_with(']') {
        // One-line flow style: before the closing bracket.
        let close = head.rfind(']').ok_or(Error::UneditableAllow)?;
        let inner = head["allow:".len()..close]
            .trim()
            .trim_start_matches('[')
            .trim();
        let sep = if inner.is_empty() { "" } else { ", " };
        for l in &lines[..at] {
            out.push_str(l);
        }
        out.push_str(&format!(
            "{}{sep}{item}]{}  # {comment}\n",
            &head[..close],
            &head[close + 1..]
        ));
        for l in &lines[at + 1..] {
            out.push_str(l);
        }
    } else {
        return Err(Error::UneditableAllow);
    }
    Ok(out)
}

/// A double-quoted YAML scalar.
fn yaml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::with_allow;

    #[test]
    fn appends_to_a_block_list_keeping_comments_and_what_follows() {
        let text = "# my policy\nversion: 1\nallow:\n    - \"git status\"   # keep me\n\n    # trailing note\ndeny:\n  - \"rm *\"\n";
        let out = with_allow(text, "git push *", "added").unwrap();
        assert_eq!(
            out,
            "# my policy\nversion: 1\nallow:\n    - \"git status\"   # keep me\n    - \"git push *\"  # added\n\n    # trailing note\ndeny:\n  - \"rm *\"\n"
        );
    }

    #[test]
    fn appends_to_a_flow_list_or_creates_one() {
        assert_eq!(
            with_allow("version: 1\nallow: [\"ls\"] # x\n", "cat *", "c").unwrap(),
            "version: 1\nallow: [\"ls\", \"cat *\"] # x  # c\n"
        );
        assert_eq!(
            with_allow("version: 1", "ls", "c").unwrap(),
            "version: 1\nallow:\n  - \"ls\"  # c\n"
        );
        assert_eq!(
            with_allow("allow: []\n", "ls", "c").unwrap(),
            "allow: [\"ls\"]  # c\n"
        );
    }

    #[test]
    fn quotes_what_needs_quoting() {
        let out = with_allow("allow:\n  - x\n", "echo \"a\\b\"", "c").unwrap();
        assert!(out.contains("  - \"echo \\\"a\\\\b\\\"\"  # c\n"), "{out}");
    }
}
