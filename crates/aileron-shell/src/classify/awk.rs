//! awk programs read by awk's own lexical rules, as a positive list: the
//! statements, built-in functions and variables the analysis models. A
//! command run (`system`, `|`, `|&`), a file written or read by
//! redirection, and anything not modelled (`@load`, `ENVIRON`, a call of a
//! function the program does not define, a `/` that awks split
//! differently) are reported.

use super::interp::AwkScan;

/// Functions every awk (or gawk) has that neither run commands nor
/// touch files other than by the redirections seen separately.
const BUILTINS: &[&str] = &[
    "length", "substr", "index", "split", "sub", "gsub", "gensub", "match", "sprintf", "sin",
    "cos", "atan2", "exp", "log", "sqrt", "int", "rand", "srand", "tolower", "toupper", "close",
    "fflush", "strftime", "systime", "mktime", "asort", "asorti", "patsplit", "and", "or", "xor",
    "lshift", "rshift", "compl", "strtonum", "isarray", "typeof",
];

/// Keywords: statements and patterns.
const KEYWORDS: &[&str] = &[
    "BEGIN",
    "END",
    "BEGINFILE",
    "ENDFILE",
    "if",
    "else",
    "while",
    "for",
    "do",
    "break",
    "continue",
    "next",
    "nextfile",
    "exit",
    "return",
    "delete",
    "in",
    "function",
    "func",
    "print",
    "printf",
    "getline",
    "switch",
    "case",
    "default",
];

/// Variables whose use the analysis does not model: the environment
/// (secrets), gawk's interpreter state, and the list of files awk reads.
const UNMODELLED_VARS: &[&str] = &["ENVIRON", "PROCINFO", "SYMTAB", "FUNCTAB", "ARGV", "ARGC"];

/// Keywords after which a `/` starts a regex.
const REGEX_AFTER: &[&str] = &["print", "printf", "return", "case", "do", "else", "in"];

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Num,
    Str(String),
    Regex,
    Punct(&'static str),
    Newline,
}

const PUNCTS: &[&str] = &[
    "**=", "||", "&&", "|&", ">>", ">=", "<=", "==", "!=", "++", "--", "+=", "-=", "*=", "/=",
    "%=", "^=", "**", "!~", "{", "}", "(", ")", "[", "]", ";", ",", "+", "-", "*", "/", "%", "^",
    "!", ">", "<", "|", "?", ":", "~", "=", "$",
];

/// Does a `/` after `prev` start a regex (an operand is expected there)?
fn regex_allowed(prev: Option<&Tok>) -> Result<bool, String> {
    Ok(match prev {
        None | Some(Tok::Newline) => true,
        Some(Tok::Ident(w)) => REGEX_AFTER.contains(&w.as_str()),
        Some(Tok::Num | Tok::Str(_) | Tok::Regex) => false,
        Some(Tok::Punct(")" | "]" | "$")) => false,
        Some(Tok::Punct("++" | "--")) => {
            return Err("has a `/` after `++` or `--`, a division or a regex".to_owned());
        }
        Some(Tok::Punct(_)) => true,
    })
}

/// The end of the regex whose opening `/` is at `at`. A `/` inside a
/// bracket expression ends it for some awks and not for others.
fn regex_end(b: &[u8], at: usize) -> Result<usize, String> {
    let mut i = at + 1;
    let mut bracket = false;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'\n' => break,
            b'[' if !bracket => {
                bracket = true;
                if b.get(i + 1) == Some(&b'^') {
                    i += 1;
                }
                if b.get(i + 1) == Some(&b']') {
                    i += 1;
                }
            }
            b'[' if b.get(i + 1) == Some(&b':') => {
                let close = b[i..].windows(2).position(|w| w == b":]");
                i += close.unwrap_or(0);
            }
            b']' if bracket => bracket = false,
            b'/' if bracket => {
                return Err(
                    "has a `/` inside a bracket expression, where awks end a regex differently"
                        .to_owned(),
                );
            }
            b'/' => return Ok(i + 1),
            _ => {}
        }
        i += 1;
    }
    Err("has a regex that does not end".to_owned())
}

/// The end of the string whose opening quote is at `at`, and its text.
fn string_end(prog: &str, at: usize) -> Result<(usize, String), String> {
    let b = prog.as_bytes();
    let mut i = at + 1;
    let mut text = String::new();
    while i < b.len() {
        match b[i] {
            b'\\' if b.get(i + 1) == Some(&b'\n') => i += 2,
            b'\\' => {
                // Escapes are kept as written: a file name with one is
                // not followed.
                text.push('\\');
                i += 1;
                if let Some(c) = prog.get(i..).and_then(|r| r.chars().next()) {
                    text.push(c);
                    i += c.len_utf8();
                }
            }
            b'\n' => break,
            b'"' => return Ok((i + 1, text)),
            _ => {
                let c = prog[i..].chars().next().unwrap_or('\0');
                text.push(c);
                i += c.len_utf8();
            }
        }
    }
    Err("has a string that does not end".to_owned())
}

fn lex(prog: &str) -> Result<Vec<Tok>, String> {
    let b = prog.as_bytes();
    let mut toks: Vec<Tok> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\r' => i += 1,
            b'\\' if b.get(i + 1) == Some(&b'\n') => i += 2,
            b'\\' if b.get(i + 1) == Some(&b'\r') && b.get(i + 2) == Some(&b'\n') => i += 3,
            b'\n' => {
                toks.push(Tok::Newline);
                i += 1;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' => {
                let (end, text) = string_end(prog, i)?;
                toks.push(Tok::Str(text));
                i = end;
            }
            b'/' if regex_allowed(toks.last())? => {
                i = regex_end(b, i)?;
                toks.push(Tok::Regex);
            }
            b'0'..=b'9' | b'.' if c != b'.' || b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                    i += 1;
                }
                toks.push(Tok::Num);
            }
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                toks.push(Tok::Ident(prog[start..i].to_owned()));
            }
            _ => match PUNCTS.iter().find(|p| b[i..].starts_with(p.as_bytes())) {
                Some(p) => {
                    toks.push(Tok::Punct(p));
                    i += p.len();
                }
                None => {
                    let ch = prog[i..].chars().next().unwrap_or('?');
                    return Err(format!(
                        "has `{ch}`, not part of the awk the analysis models"
                    ));
                }
            },
        }
    }
    Ok(toks)
}

fn ends_statement(t: Option<&Tok>) -> bool {
    matches!(t, None | Some(Tok::Newline | Tok::Punct(";" | "}")))
}

/// Reads `prog` exactly; see the module's documentation.
pub(crate) fn scan(prog: &str) -> AwkScan {
    let mut out = AwkScan::default();
    let toks = match lex(prog) {
        Ok(t) => t,
        Err(why) => {
            out.unknown = Some(why);
            return out;
        }
    };
    let defined: Vec<&str> = toks
        .windows(2)
        .filter_map(|w| match w {
            [Tok::Ident(k), Tok::Ident(name)] if k == "function" || k == "func" => {
                Some(name.as_str())
            }
            _ => None,
        })
        .collect();
    let mut printing = false;
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate() {
        let next = toks.get(k + 1);
        match t {
            Tok::Newline | Tok::Punct(";" | "{" | "}") => {
                printing = false;
                depth = 0;
            }
            Tok::Punct("(") => depth += 1,
            Tok::Punct(")") => depth = depth.saturating_sub(1),
            Tok::Punct("|" | "|&") => out.exec = true,
            Tok::Punct(">" | ">>") if printing && depth == 0 => match next {
                Some(Tok::Str(path)) if ends_statement(toks.get(k + 2)) => {
                    out.writes.push(path.clone());
                }
                _ => out.unknown_file = true,
            },
            Tok::Punct("<") if getline_before(&toks, k) => match next {
                Some(Tok::Str(path)) if ends_statement(toks.get(k + 2)) => {
                    out.reads.push(path.clone());
                }
                _ => out.unknown_file = true,
            },
            Tok::Ident(w) => {
                let w = w.as_str();
                if w == "print" || w == "printf" {
                    printing = true;
                    depth = 0;
                } else if w == "system" {
                    out.exec = true;
                } else if UNMODELLED_VARS.contains(&w) {
                    out.unknown.get_or_insert(format!("uses `{w}`"));
                } else if next == Some(&Tok::Punct("("))
                    && !BUILTINS.contains(&w)
                    && !KEYWORDS.contains(&w)
                    && !defined.contains(&w)
                {
                    out.unknown
                        .get_or_insert(format!("calls `{w}`, a function it does not define"));
                }
            }
            _ => {}
        }
    }
    out
}

/// Is the `<` at `k` the input redirection of `getline` (`getline < f`,
/// `getline var < f`)?
fn getline_before(toks: &[Tok], k: usize) -> bool {
    let is_getline = |t: Option<&Tok>| matches!(t, Some(Tok::Ident(w)) if w == "getline");
    is_getline(k.checked_sub(1).and_then(|j| toks.get(j)))
        || (is_getline(k.checked_sub(2).and_then(|j| toks.get(j)))
            && matches!(toks.get(k - 1), Some(Tok::Ident(_))))
}

#[cfg(test)]
mod tests {
    use super::scan;

    #[test]
    fn continuation_does_not_hide_a_redirection() {
        let s = scan("{ print $0 \\\n > \"aileron.yaml\" }");
        assert_eq!(s.writes, vec!["aileron.yaml"]);
    }

    #[test]
    fn a_quote_in_a_regex_does_not_hide_system() {
        assert!(scan("{ print /\"/ ; system(\"id\") }").exec);
        assert!(scan("$0 ~ /\"/ { system(\"id\") }").exec);
    }

    #[test]
    fn unmodelled_constructs() {
        for p in [
            "BEGIN { print ENVIRON[\"HOME\"] }",
            "@load \"x\"; BEGIN {}",
            "BEGIN { ARGV[1] = \"aileron.yaml\" } { print }",
            "{ print mystery($1) }",
            "/[/\"]/ { print }",
            "{ x = \"unterminated }",
            "{ print `id` }",
            "{ a++ /2/ 1 }",
        ] {
            assert!(scan(p).unknown.is_some(), "{p}");
        }
    }

    #[test]
    fn everyday_programs_are_modelled() {
        for p in [
            "{print $1}",
            "NR > 1 && $3 ~ /^[0-9]+$/ { s += $3 } END { printf \"%d\\n\", s }",
            "$1 == \"x\" { c++ } END { print c+0 }",
            "function f(x) { return x * 2 } { print f($1) }",
            "{ n = split($0, a, \",\"); print a[n] }",
            "BEGIN { FS = \"\\t\" } length($0) > 80 { print FILENAME \": \" FNR }",
            "{ print $1 / 2 }",
            "!seen[$0]++",
        ] {
            let s = scan(p);
            assert!(
                s.unknown.is_none() && !s.exec && s.writes.is_empty(),
                "{p}: {s:?}"
            );
        }
    }

    #[test]
    fn redirections_are_read() {
        assert_eq!(scan("{ print > \"out.txt\" }").writes, vec!["out.txt"]);
        assert!(scan("{ print > $2 }").unknown_file);
        assert!(scan("{ print > \"out/\" $1 }").unknown_file);
        assert!(scan("{ printf(\"%s\", $1) >> \"log\" }").writes == vec!["log"]);
        assert!(scan("{ print ($1 > 2) }").writes.is_empty());
        assert_eq!(
            scan("{ getline l < \"/etc/passwd\" }").reads,
            vec!["/etc/passwd"]
        );
        assert!(scan("{ \"date\" | getline d }").exec);
    }
}
