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
}

impl<'a> Opt<'a> {
    pub(crate) fn is(&self, short: char, long: &str) -> bool {
        match self.name {
            Name::Short(c) => c == short,
            Name::Long(l) => !long.is_empty() && l == long,
        }
    }

    pub(crate) fn is_long(&self, long: &str) -> bool {
        matches!(self.name, Name::Long(l) if l == long)
    }

    pub(crate) fn value_text<'w>(&self, args: &'w [Word]) -> Option<&'w str> {
        let (i, off) = self.value?;
        args.get(i)?.text.get(off..)
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
}

/// Options and operands of a command line.
#[derive(Debug, Default)]
pub(crate) struct Parsed<'a> {
    pub opts: Vec<Opt<'a>>,
    pub operands: Vec<usize>,
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
                });
            } else if spec.long_val.contains(&long) && i + 1 < n {
                p.opts.push(Opt {
                    name: Name::Long(long),
                    value: Some((i + 1, 0)),
                });
                i += 1;
            } else {
                p.opts.push(Opt {
                    name: Name::Long(long),
                    value: None,
                });
            }
        } else if a.len() > 1 && a.starts_with('-') {
            if spec.single_dash_long {
                let long = &a[1..];
                let takes = spec.long_val.contains(&long) && i + 1 < n;
                p.opts.push(Opt {
                    name: Name::Long(long),
                    value: takes.then_some((i + 1, 0)),
                });
                if takes {
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
                            });
                        } else if i + 1 < n {
                            p.opts.push(Opt {
                                name: Name::Short(ch),
                                value: Some((i + 1, 0)),
                            });
                            i += 1;
                        } else {
                            p.opts.push(Opt {
                                name: Name::Short(ch),
                                value: None,
                            });
                        }
                        break;
                    }
                    p.opts.push(Opt {
                        name: Name::Short(ch),
                        value: None,
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
