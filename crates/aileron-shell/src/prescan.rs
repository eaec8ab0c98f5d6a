//! A cheap linear pre-scan of a command line, run before the real parser.
//!
//! It estimates how deeply the line nests (subshells, braces, substitutions,
//! backquotes, `if`/`while`/`for`/`case` blocks) and how many command
//! separators it has, so that a line over the limits is refused without
//! parsing. It also counts every byte that could open a nesting level in any
//! reading of the line (`raw`): that count is a true upper bound of the depth
//! the parser can reach, and decides how much stack the parse is given.

/// What the pre-scan found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    /// Estimated deepest nesting (also of unmatched `[`).
    pub depth: usize,
    /// Command separators seen outside quotes (`;`, `&`, `|`, `&&`, `||`,
    /// newlines).
    pub separators: usize,
    /// Upper bound of the nesting any parser can see: every `(`, `{`,
    /// backquote, quote, backslash and block keyword.
    pub raw: usize,
    /// A here-document the parser could choke on.
    pub bad_heredoc: Option<&'static str>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Paren,
    Brace,
    Backtick,
    Dq,
    Arith,
    Case,
    Block,
}

/// How many levels a context counts for: `((` is two parentheses to the
/// parser (which tries both readings of it).
fn weight(c: Ctx) -> usize {
    match c {
        Ctx::Dq => 0,
        Ctx::Arith => 2,
        _ => 1,
    }
}

const OPENERS: &[&str] = &["if", "while", "until", "for", "select", "case", "function"];

fn is_word_byte(b: u8) -> bool {
    !matches!(
        b,
        b' ' | b'\t'
            | b'\n'
            | b'\r'
            | b';'
            | b'&'
            | b'|'
            | b'('
            | b')'
            | b'{'
            | b'}'
            | b'<'
            | b'>'
            | b'"'
            | b'\''
            | b'`'
            | b'$'
            | b'\\'
    )
}

/// Scans `s`.
pub(crate) fn scan(s: &str) -> Scan {
    let b = s.as_bytes();
    let n = b.len();
    let mut out = Scan {
        raw: b
            .iter()
            .filter(|c| matches!(c, b'(' | b'{' | b'`' | b'\\' | b'\'' | b'"'))
            .count(),
        ..Scan::default()
    };
    // Unmatched `[` make brush-parser's array-subscript rules backtrack
    // (exponentially, with quotes or backquotes in between): count them as
    // nesting, whatever the quoting.
    let mut brackets = 0usize;
    for &c in b {
        match c {
            b'[' => {
                brackets += 1;
                out.depth = out.depth.max(brackets);
            }
            b']' => brackets = brackets.saturating_sub(1),
            _ => {}
        }
    }
    let mut stack: Vec<Ctx> = Vec::new();
    let mut depth = 0usize;
    let mut cmd_pos = true;
    let mut heredocs: Vec<(Vec<u8>, bool)> = Vec::new();
    let mut i = 0;

    macro_rules! push {
        ($c:expr) => {{
            stack.push($c);
            depth += weight($c);
            if depth > out.depth {
                out.depth = depth;
            }
        }};
    }
    macro_rules! pop {
        () => {{
            if let Some(c) = stack.pop() {
                depth -= weight(c);
            }
        }};
    }

    while i < n {
        let c = b[i];
        let top = stack.last().copied();
        if top == Some(Ctx::Dq) {
            match c {
                b'\\' => i += 1,
                b'"' => pop!(),
                b'`' => push!(Ctx::Backtick),
                b'$' if i + 2 < n && b[i + 1] == b'(' && b[i + 2] == b'(' => {
                    push!(Ctx::Arith);
                    i += 2;
                }
                b'$' if i + 1 < n && b[i + 1] == b'(' => {
                    push!(Ctx::Paren);
                    i += 1;
                    cmd_pos = true;
                }
                b'$' if i + 1 < n && b[i + 1] == b'{' => {
                    push!(Ctx::Brace);
                    i += 1;
                }
                _ => {}
            }
            i += 1;
            continue;
        }
        let in_arith = top == Some(Ctx::Arith);
        match c {
            b'\\' => {
                i += 2;
                cmd_pos = false;
                continue;
            }
            b'\'' => {
                i += 1;
                while i < n && b[i] != b'\'' {
                    i += 1;
                }
                cmd_pos = false;
            }
            b'"' => {
                push!(Ctx::Dq);
                cmd_pos = false;
            }
            b'`' => {
                if top == Some(Ctx::Backtick) {
                    pop!();
                    cmd_pos = false;
                } else {
                    push!(Ctx::Backtick);
                    cmd_pos = true;
                }
            }
            b'$' => {
                if i + 1 < n && b[i + 1] == b'\'' {
                    i += 2;
                    while i < n && b[i] != b'\'' {
                        if b[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                } else if i + 2 < n && b[i + 1] == b'(' && b[i + 2] == b'(' {
                    push!(Ctx::Arith);
                    i += 2;
                } else if i + 1 < n && b[i + 1] == b'(' {
                    push!(Ctx::Paren);
                    i += 1;
                    cmd_pos = true;
                    i += 1;
                    continue;
                } else if i + 1 < n && b[i + 1] == b'{' {
                    push!(Ctx::Brace);
                    i += 1;
                }
                cmd_pos = false;
            }
            b'(' => {
                if in_arith {
                    push!(Ctx::Paren);
                } else if cmd_pos && i + 1 < n && b[i + 1] == b'(' {
                    push!(Ctx::Arith);
                    i += 1;
                } else {
                    push!(Ctx::Paren);
                    cmd_pos = true;
                }
            }
            b')' => {
                if in_arith && i + 1 < n && b[i + 1] == b')' {
                    pop!();
                    i += 1;
                } else if top == Some(Ctx::Paren) {
                    pop!();
                }
                // A `)` that closes a case pattern, or stray: ignored.
                cmd_pos = top == Some(Ctx::Case);
            }
            b'{' => {
                push!(Ctx::Brace);
                cmd_pos = true;
            }
            b'}' => {
                if top == Some(Ctx::Brace) {
                    pop!();
                }
                cmd_pos = false;
            }
            b';' | b'&' | b'|' | b'\n' => {
                let redirect_amp = c == b'&'
                    && ((i > 0 && matches!(b[i - 1], b'>' | b'<'))
                        || (i + 1 < n && b[i + 1] == b'>'));
                if !redirect_amp && !in_arith {
                    out.separators += 1;
                    cmd_pos = true;
                    if c != b'\n' && i + 1 < n && (b[i + 1] == c || (c == b'|' && b[i + 1] == b'&'))
                    {
                        i += 1;
                    }
                }
                if c == b'\n' && !heredocs.is_empty() {
                    i = skip_heredoc_bodies(b, i + 1, &mut heredocs);
                    continue;
                }
            }
            b'#' if cmd_pos || (i > 0 && matches!(b[i - 1], b' ' | b'\t')) => {
                while i < n && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'<' if !in_arith && i + 1 < n && b[i + 1] == b'<' => {
                if i + 2 < n && b[i + 2] == b'<' {
                    i += 3;
                    continue;
                }
                i += 2;
                let strip = i < n && b[i] == b'-';
                if strip {
                    i += 1;
                }
                while i < n && matches!(b[i], b' ' | b'\t') {
                    i += 1;
                }
                let mut delim = Vec::new();
                let mut odd = false;
                while i < n
                    && !matches!(
                        b[i],
                        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
                    )
                {
                    match b[i] {
                        b'\'' | b'"' => {
                            let q = b[i];
                            i += 1;
                            while i < n && b[i] != q {
                                odd |= q == b'"' && matches!(b[i], b'$' | b'`' | b'\\');
                                odd |= b[i] == b'\n';
                                delim.push(b[i]);
                                i += 1;
                            }
                            odd |= i >= n;
                        }
                        b'\\' => {
                            if i + 1 < n {
                                odd |= !(b[i + 1].is_ascii_alphanumeric() || b[i + 1] == b'_');
                                delim.push(b[i + 1]);
                            }
                            i += 1;
                        }
                        other => {
                            odd |= !(other.is_ascii_alphanumeric()
                                || b"_.+-:@%/=,^~!?".contains(&other));
                            delim.push(other);
                        }
                    }
                    i += 1;
                }
                // brush-parser can loop forever on some malformed
                // here-documents: refuse anything unusual before it runs.
                if delim.is_empty() || odd {
                    out.bad_heredoc
                        .get_or_insert("here-document with an unusual delimiter");
                } else if !b[i.min(n)..].contains(&b'\n') {
                    out.bad_heredoc
                        .get_or_insert("here-document without a body");
                }
                heredocs.push((delim, strip));
                cmd_pos = false;
                continue;
            }
            b' ' | b'\t' | b'\r' => {}
            _ if is_word_byte(c) => {
                let start = i;
                while i < n && is_word_byte(b[i]) {
                    i += 1;
                }
                let word = &b[start..i];
                if OPENERS.iter().any(|o| o.as_bytes() == word) {
                    out.raw += 1;
                }
                if cmd_pos && !in_arith {
                    match word {
                        b"if" | b"while" | b"until" | b"for" | b"select" => {
                            push!(Ctx::Block);
                        }
                        b"case" => push!(Ctx::Case),
                        b"fi" | b"done" if top == Some(Ctx::Block) => pop!(),
                        b"esac" if top == Some(Ctx::Case) => pop!(),
                        _ => {}
                    }
                    cmd_pos = matches!(
                        word,
                        b"if"
                            | b"then"
                            | b"else"
                            | b"elif"
                            | b"do"
                            | b"while"
                            | b"until"
                            | b"!"
                            | b"time"
                    );
                } else if word.contains(&b'=') {
                    // An assignment keeps the command position.
                } else {
                    cmd_pos = false;
                }
                continue;
            }
            _ => {
                cmd_pos = false;
            }
        }
        i += 1;
    }
    out
}

/// Skips the bodies of pending here-documents starting at `i` (the byte after
/// a newline). Returns the index after the last body.
fn skip_heredoc_bodies(b: &[u8], mut i: usize, pending: &mut Vec<(Vec<u8>, bool)>) -> usize {
    for (delim, strip) in pending.drain(..) {
        loop {
            if i >= b.len() {
                return b.len();
            }
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            let mut line = &b[i..end];
            if strip {
                while let [b'\t', rest @ ..] = line {
                    line = rest;
                }
            }
            i = end + 1;
            if line == delim.as_slice() {
                break;
            }
        }
    }
    i.min(b.len())
}

#[cfg(test)]
mod tests {
    use super::scan;

    #[test]
    fn depth_of_common_lines() {
        assert_eq!(
            scan("git status && cargo test --all 2>&1 | tail -n 50").depth,
            0
        );
        assert_eq!(scan("echo $(ls)").depth, 1);
        assert_eq!(scan("echo \"$(echo $(ls))\"").depth, 2);
        assert_eq!(scan("echo '((((('").depth, 0);
        assert_eq!(scan("if true; then echo; fi").depth, 1);
        assert_eq!(scan("case x in a) ls;; esac").depth, 1);
        assert_eq!(scan("echo $(case x in a) $(ls);; esac)").depth, 3);
        assert_eq!(scan("cat <<'EOF'\n)))\nEOF\necho $(ls)").depth, 1);
        assert_eq!(scan("echo $(( (1 << 2) ))").depth, 3);
        assert_eq!(scan("((((((").depth, 6);
        assert_eq!(scan("a[b[c]]").depth, 2);
    }

    #[test]
    fn deep_lines_are_seen() {
        let line = "$(".repeat(5000);
        let s = scan(&line);
        assert!(s.depth >= 5000);
        assert!(s.raw >= 5000);
        let line = format!("{}ls{}", "if true; then ".repeat(40), "; fi".repeat(40));
        assert_eq!(scan(&line).depth, 40);
    }

    #[test]
    fn separators() {
        assert_eq!(scan("a; b && c || d | e & f").separators, 5);
        assert_eq!(scan("a >&2 2>&1 &>x").separators, 0);
    }

    #[test]
    fn heredocs() {
        assert_eq!(scan("cat <<EOF\nx\nEOF").bad_heredoc, None);
        assert_eq!(scan("cat <<-'EOF'\nx\nEOF").bad_heredoc, None);
        assert_eq!(scan("cat <<\"E_1\" >x\nx\nE_1").bad_heredoc, None);
        assert_eq!(scan("echo '1 << 2'").bad_heredoc, None);
        assert_eq!(scan("echo $((1 << 2))").bad_heredoc, None);
        assert!(scan("<<$[    ").bad_heredoc.is_some());
        assert!(scan("''<<'')#").bad_heredoc.is_some());
        assert!(scan("cat <<EOF").bad_heredoc.is_some());
        assert!(scan("cat <<''\nx\n").bad_heredoc.is_some());
        assert_eq!(scan("echo 'a;b;c'").separators, 0);
    }
}
