//! Option parsing shared by the program classifiers.

use crate::words::Word;

/// One option seen on a command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Name<'a> {
    Short(char),
    Long(&'a str),
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Opt<'a> {
    pub name: Name<'a>,
    /// Where the value is: argument index and byte offset in it.
    pub value: Option<(usize, usize)>,
    /// The name is the full one, resolved by a [`Table`].
    pub resolved: bool,
}

impl<'a> Opt<'a> {
    /// Is this the option `-short` or `--long`? A long option seen by a
    /// lenient parse is taken for every name it abbreviates (`--out` is
    /// `--output`), so that a check for a dangerous option cannot be
    /// dodged by a prefix; a table parse has already resolved it.
    pub(crate) fn is(&self, short: char, long: &str) -> bool {
        match self.name {
            Name::Short(c) => c == short,
            Name::Long(l) => self.long_is(l, long),
        }
    }

    pub(crate) fn is_long(&self, long: &str) -> bool {
        matches!(self.name, Name::Long(l) if self.long_is(l, long))
    }

    fn long_is(&self, seen: &str, long: &str) -> bool {
        if self.resolved {
            seen == long
        } else {
            abbreviates(seen, long)
        }
    }

    pub(crate) fn value_text<'w>(&self, args: &'w [Word]) -> Option<&'w str> {
        let (i, off) = self.value?;
        args.get(i)?.text.get(off..)
    }
}

/// What an option takes, read from a [`Table`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Takes {
    Nothing,
    /// A value, attached or in the next argument.
    Value,
    /// A value only when attached (`-iSUF`, `--in-place=SUF`).
    Attached,
}

/// A program's complete option table, written as its own source declares
/// them, so that it can be checked against the manual line by line.
///
/// `short` is a getopt string: a letter, `:` after it when it takes a
/// value, `::` when the value is optional and only attached. `long` lists
/// the long names: `name`, `name=` (takes a value), `name=?` (optional,
/// only as `--name=VALUE`). Long options may be abbreviated to any
/// unambiguous prefix, as `getopt_long` allows; an option missing from the
/// table makes the command opaque.
#[derive(Debug)]
pub(crate) struct Table {
    pub short: &'static str,
    pub long: &'static [&'static str],
    pub operands: Operands,
    /// Options may follow operands (GNU tools); bash's builtins stop at the
    /// first operand.
    pub permute: bool,
}

/// What a program's operands are, for words whose value is not known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operands {
    /// Files it reads (or what its classifier says): an unknown operand is
    /// an unknown path.
    Files,
    /// Data (strings, numbers): an unknown operand is harmless, unless it
    /// can turn into an option.
    Data,
    /// Data, and every option is harmless too (`echo`).
    Free,
}

impl Table {
    pub(crate) fn short_takes(&self, c: char) -> Option<Takes> {
        for (i, ch) in self.short.char_indices() {
            if ch == ':' {
                continue;
            }
            if ch == c {
                let rest = &self.short[i + ch.len_utf8()..];
                return Some(if rest.starts_with("::") {
                    Takes::Attached
                } else if rest.starts_with(':') {
                    Takes::Value
                } else {
                    Takes::Nothing
                });
            }
        }
        None
    }

    fn entry(e: &'static str) -> (&'static str, Takes) {
        if let Some(n) = e.strip_suffix("=?") {
            (n, Takes::Attached)
        } else if let Some(n) = e.strip_suffix('=') {
            (n, Takes::Value)
        } else {
            (e, Takes::Nothing)
        }
    }

    /// The long option `name` stands for: an exact name, or the only one it
    /// is a prefix of.
    pub(crate) fn long_takes(&self, name: &str) -> Result<(&'static str, Takes), String> {
        let mut found: Option<(&'static str, Takes)> = None;
        let mut ambiguous = false;
        for &e in self.long {
            let (n, t) = Table::entry(e);
            if n == name {
                return Ok((n, t));
            }
            if n.starts_with(name) {
                ambiguous |= found.is_some();
                found = Some((n, t));
            }
        }
        match found {
            Some(f) if !ambiguous => Ok(f),
            Some(_) => Err(format!("`--{name}` is ambiguous")),
            None => Err(format!("`--{name}` is not an option it is known to take")),
        }
    }
}

/// How a program takes its options.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Spec<'s> {
    /// Short options that take a value (attached or in the next argument).
    pub short_val: &'s str,
    /// Long options that take a value in the next argument when written
    /// without `=`.
    pub long_val: &'s [&'s str],
    /// Options may follow operands (GNU argument permutation).
    pub permute: bool,
    /// Single-dash long options (`-name`, as `find` or Go tools have).
    pub single_dash_long: bool,
    /// The complete table of the program's options. Without one the parse
    /// is lenient: unknown options are kept as seen, and a long option
    /// matches every name it is a prefix of (see [`Opt::is`]).
    pub table: Option<&'static Table>,
}

impl Spec<'static> {
    /// Parses by `table`, with GNU argument permutation.
    pub(crate) fn of(table: &'static Table) -> Spec<'static> {
        Spec {
            permute: true,
            table: Some(table),
            ..Spec::default()
        }
    }
}

/// Options and operands of a command line.
#[derive(Debug, Default)]
pub(crate) struct Parsed<'a> {
    pub opts: Vec<Opt<'a>>,
    pub operands: Vec<usize>,
    /// Operands whose value is not known and may turn into an option.
    pub maybe_options: Vec<usize>,
    /// Arguments that are option values (whole or attached).
    pub values: Vec<usize>,
    /// What the table could not account for, for people.
    pub problems: Vec<String>,
}

impl<'a> Parsed<'a> {
    pub(crate) fn has(&self, short: char, long: &str) -> bool {
        self.opts.iter().any(|o| o.is(short, long))
    }

    pub(crate) fn has_long(&self, long: &str) -> bool {
        self.opts.iter().any(|o| o.is_long(long))
    }

    pub(crate) fn get(&self, short: char, long: &str) -> Option<&Opt<'a>> {
        self.opts.iter().find(|o| o.is(short, long))
    }

    pub(crate) fn all(&self, short: char, long: &str) -> impl Iterator<Item = &Opt<'a>> {
        self.opts.iter().filter(move |o| o.is(short, long))
    }
}

/// Parses `args[start..]` by `spec`.
pub(crate) fn parse<'a>(args: &'a [Word], start: usize, spec: &Spec) -> Parsed<'a> {
    if let Some(table) = spec.table {
        return parse_table(args, start, table);
    }
    let mut p = Parsed::default();
    let n = args.len();
    let mut i = start;
    while i < n {
        let a = args[i].text.as_str();
        if a == "--" {
            p.operands.extend(i + 1..n);
            break;
        }
        if let Some(long) = a.strip_prefix("--").filter(|l| !l.is_empty()) {
            if let Some(eq) = long.find('=') {
                p.opts.push(Opt {
                    name: Name::Long(&long[..eq]),
                    value: Some((i, 2 + eq + 1)),
                    resolved: false,
                });
                p.values.push(i);
            } else if spec.long_val.iter().any(|v| abbreviates(long, v)) && i + 1 < n {
                p.opts.push(Opt {
                    name: Name::Long(long),
                    value: Some((i + 1, 0)),
                    resolved: false,
                });
                p.values.push(i + 1);
                i += 1;
            } else {
                p.opts.push(Opt {
                    name: Name::Long(long),
                    value: None,
                    resolved: false,
                });
            }
        } else if a.len() > 1 && a.starts_with('-') {
            if spec.single_dash_long {
                let long = &a[1..];
                let takes = spec.long_val.contains(&long) && i + 1 < n;
                p.opts.push(Opt {
                    name: Name::Long(long),
                    value: takes.then_some((i + 1, 0)),
                    resolved: false,
                });
                if takes {
                    p.values.push(i + 1);
                    i += 1;
                }
            } else {
                for (pos, ch) in a[1..].char_indices() {
                    if spec.short_val.contains(ch) {
                        let off = 1 + pos + ch.len_utf8();
                        if off < a.len() {
                            p.opts.push(Opt {
                                name: Name::Short(ch),
                                value: Some((i, off)),
                                resolved: false,
                            });
                            p.values.push(i);
                        } else if i + 1 < n {
                            p.opts.push(Opt {
                                name: Name::Short(ch),
                                value: Some((i + 1, 0)),
                                resolved: false,
                            });
                            p.values.push(i + 1);
                            i += 1;
                        } else {
                            p.opts.push(Opt {
                                name: Name::Short(ch),
                                value: None,
                                resolved: false,
                            });
                        }
                        break;
                    }
                    p.opts.push(Opt {
                        name: Name::Short(ch),
                        value: None,
                        resolved: false,
                    });
                }
            }
        } else {
            p.operands.push(i);
            if !spec.permute {
                p.operands.extend(i + 1..n);
                break;
            }
        }
        i += 1;
    }
    p
}

/// Is `given` the long option `name` or a prefix of it (`getopt_long`
/// accepts any unambiguous one)?
pub(crate) fn abbreviates(given: &str, name: &str) -> bool {
    !given.is_empty() && name.starts_with(given)
}

/// Parses by a complete table, as `getopt_long` with permutation would:
/// abbreviations resolved to the full name, attached and separate values,
/// and everything the table does not know reported in `problems`.
fn parse_table<'a>(args: &'a [Word], start: usize, table: &Table) -> Parsed<'a> {
    let mut p = Parsed::default();
    let n = args.len();
    let mut i = start;
    while i < n {
        let w = &args[i];
        let a = w.text.as_str();
        let known = w.literal_len();
        if a == "--" && known == 2 {
            for j in i + 1..n {
                p.operands.push(j);
            }
            break;
        }
        if known == 0 && w.dynamic && !w.procsub {
            // `$x` may expand to an option, or to several words.
            p.operands.push(i);
            p.maybe_options.push(i);
            i += 1;
            continue;
        }
        if let Some(long) = a.strip_prefix("--").filter(|l| !l.is_empty()) {
            let eq = long.find('=');
            let given = &long[..eq.unwrap_or(long.len())];
            if 2 + given.len() > known {
                p.problems
                    .push(format!("the option `{a}` is not known before it runs"));
                i += 1;
                continue;
            }
            match table.long_takes(given) {
                Err(why) => p.problems.push(why),
                Ok((name, takes)) => {
                    let value = match (takes, eq) {
                        (Takes::Nothing, Some(_)) => {
                            p.problems.push(format!("`--{name}` does not take a value"));
                            None
                        }
                        (_, Some(e)) => {
                            p.values.push(i);
                            Some((i, 2 + e + 1))
                        }
                        (Takes::Value, None) if i + 1 < n => {
                            i += 1;
                            p.values.push(i);
                            Some((i, 0))
                        }
                        _ => None,
                    };
                    p.opts.push(Opt {
                        name: Name::Long(name),
                        value,
                        resolved: true,
                    });
                }
            }
        } else if a.len() > 1 && a.starts_with('-') {
            let mut consumed_next = false;
            for (pos, ch) in a[1..].char_indices() {
                let off = 1 + pos + ch.len_utf8();
                if off > known {
                    p.problems
                        .push(format!("the option `{a}` is not known before it runs"));
                    break;
                }
                match table.short_takes(ch) {
                    None => {
                        p.problems
                            .push(format!("`-{ch}` is not an option it is known to take"));
                        break;
                    }
                    Some(Takes::Nothing) => p.opts.push(Opt {
                        name: Name::Short(ch),
                        value: None,
                        resolved: true,
                    }),
                    Some(takes) => {
                        let value = if off < a.len() {
                            p.values.push(i);
                            Some((i, off))
                        } else if takes == Takes::Value && i + 1 < n {
                            consumed_next = true;
                            p.values.push(i + 1);
                            Some((i + 1, 0))
                        } else {
                            None
                        };
                        p.opts.push(Opt {
                            name: Name::Short(ch),
                            value,
                            resolved: true,
                        });
                        break;
                    }
                }
            }
            if consumed_next {
                i += 1;
            }
        } else {
            p.operands.push(i);
            if !table.permute {
                p.operands.extend(i + 1..n);
                break;
            }
        }
        i += 1;
    }
    p
}

/// Index of the first argument at or after `start` that is not an option,
/// skipping the values of options in `spec` (options stop at the first
/// operand). Returns `args.len()` when there is none.
pub(crate) fn first_operand(args: &[Word], start: usize, spec: &Spec) -> usize {
    let spec = Spec {
        permute: false,
        ..*spec
    };
    parse(args, start, &spec)
        .operands
        .first()
        .copied()
        .unwrap_or(args.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split(' ').map(Word::literal).collect()
    }

    #[test]
    fn clusters_and_values() {
        let a = words("tail -fn50 x --lines 3 -- -y");
        let p = parse(
            &a,
            1,
            &Spec {
                short_val: "n",
                long_val: &["lines"],
                permute: true,
                ..Spec::default()
            },
        );
        assert!(p.has('f', ""));
        assert_eq!(p.get('n', "").and_then(|o| o.value_text(&a)), Some("50"));
        assert_eq!(
            p.get(' ', "lines").and_then(|o| o.value_text(&a)),
            Some("3")
        );
        assert_eq!(p.operands, vec![2, 6]);
    }

    #[test]
    fn no_permutation_stops_at_operand() {
        let a = words("sudo -u root rm -rf x");
        assert_eq!(
            first_operand(
                &a,
                1,
                &Spec {
                    short_val: "u",
                    ..Spec::default()
                }
            ),
            3
        );
    }
}
