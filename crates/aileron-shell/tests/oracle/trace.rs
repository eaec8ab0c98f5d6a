//! Reads what a traced bash did from the output of
//! `strace -f -qq -y -s 65535 -o FILE -e trace=...`: the programs it
//! executed and the paths it wrote, created, deleted, renamed or changed.
//!
//! Relative paths are resolved against the working directory of the
//! process that used them: `-y` prints it for `AT_FDCWD` and decodes every
//! other descriptor, and for the old calls without a directory argument
//! (`rename`, `unlink`, `mkdir`, ...) the working directory is followed
//! through `chdir`, `fchdir` and the calls that create processes.

use std::collections::HashMap;

/// A successful `execve`/`execveat`.
#[derive(Clone, Debug)]
pub struct Exec {
    pub path: String,
    pub argv: Vec<String>,
}

/// What a call did to a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Opened for writing (`O_WRONLY`, `O_RDWR`, `O_CREAT`, `O_TRUNC`).
    Open {
        create: bool,
    },
    /// Created (directory, link, node).
    Create,
    /// Deleted.
    Delete,
    /// Renamed away (the new name is another event).
    RenameFrom,
    RenameTo,
    /// Mode, owner, times or size changed.
    Change,
}

/// A successful call that changed the file system.
#[derive(Clone, Debug)]
pub struct Write {
    /// The call as the report shows it (`openat O_WRONLY|O_CREAT`).
    pub call: String,
    pub kind: Kind,
    /// The path as named, resolved against the caller's working directory
    /// and normalized (`.` and `..` removed).
    pub path: String,
    /// The path the kernel reports for the descriptor an `open` returned:
    /// symbolic links resolved, or `pipe:[..]` and such.
    pub fd_path: Option<String>,
    /// For [`Kind::RenameFrom`]: the new name.
    pub renamed_to: Option<String>,
}

/// Everything of interest in one trace.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    /// Every successful exec but the first (the traced bash itself).
    pub execs: Vec<Exec>,
    pub writes: Vec<Write>,
}

/// Parses a whole trace. `cwd` is the working directory bash started in.
pub fn parse(text: &str, cwd: &str) -> Observed {
    let mut obs = Observed::default();
    let mut pending: HashMap<u32, String> = HashMap::new();
    let mut cwds: HashMap<u32, String> = HashMap::new();
    let mut first_exec = true;
    for raw in text.lines() {
        let Some((pid, rest)) = raw.split_once(' ') else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let rest = rest.trim_start();
        let joined;
        let call = if let Some(head) = rest.strip_suffix("<unfinished ...>") {
            pending.insert(pid, head.trim_end().to_owned());
            continue;
        } else if let Some(tail) = rest.strip_prefix("<... ") {
            let Some((_, after)) = tail.split_once(" resumed>") else {
                continue;
            };
            let head = pending.remove(&pid).unwrap_or_default();
            joined = format!("{head}{after}");
            joined.as_str()
        } else {
            rest
        };
        if call.starts_with("---") || call.starts_with("+++") {
            continue;
        }
        let Some(c) = Call::parse(call) else {
            continue;
        };
        let cwd_now = cwds.get(&pid).cloned().unwrap_or_else(|| cwd.to_owned());
        // Every `AT_FDCWD</dir>` tells the caller's working directory.
        for a in &c.args {
            if let Some(dir) = a
                .strip_prefix("AT_FDCWD<")
                .and_then(|d| d.strip_suffix('>'))
            {
                cwds.insert(pid, unquote_path(dir));
            }
        }
        let cwd_now = cwds.get(&pid).cloned().unwrap_or(cwd_now);
        c.record(pid, &cwd_now, &mut cwds, &mut obs, &mut first_exec);
    }
    obs
}

/// One system call line: name, top-level arguments, return value.
struct Call<'a> {
    name: &'a str,
    args: Vec<&'a str>,
    ret: &'a str,
}

impl<'a> Call<'a> {
    fn parse(line: &'a str) -> Option<Call<'a>> {
        let open = line.find('(')?;
        let name = &line[..open];
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return None;
        }
        let body = &line[open + 1..];
        let mut args = Vec::new();
        let mut depth = 0usize;
        let mut start = 0;
        let mut close = None;
        let bytes = body.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'"' => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        if bytes[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                }
                b'(' | b'[' | b'{' | b'<' => depth += 1,
                b']' | b'}' | b'>' => depth = depth.saturating_sub(1),
                b')' if depth == 0 => {
                    close = Some(i);
                    break;
                }
                b')' => depth -= 1,
                b',' if depth == 0 => {
                    args.push(body[start..i].trim());
                    start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        let close = close?;
        let last = body[start..close].trim();
        if !last.is_empty() {
            args.push(last);
        }
        let ret = body[close + 1..].trim_start().strip_prefix('=')?.trim();
        Some(Call { name, args, ret })
    }

    /// The return value as a number, when the call succeeded.
    fn ok(&self) -> Option<i64> {
        let digits: String = self
            .ret
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        digits.parse().ok()
    }

    /// The decoded descriptor of the return value (`3</path>`).
    fn ret_path(&self) -> Option<String> {
        let start = self.ret.find('<')?;
        let end = self.ret.rfind('>')?;
        (end > start).then(|| unquote_path(&self.ret[start + 1..end]))
    }

    fn record(
        &self,
        pid: u32,
        cwd: &str,
        cwds: &mut HashMap<u32, String>,
        obs: &mut Observed,
        first_exec: &mut bool,
    ) {
        let Some(ret) = self.ok() else {
            return;
        };
        let arg = |i: usize| self.args.get(i).copied().unwrap_or("");
        // A path argument, with the directory argument before it if any.
        let at = |dir: Option<usize>, i: usize| -> String {
            let p = string(arg(i));
            let base = match dir {
                Some(d) => fd_dir(arg(d)).unwrap_or_else(|| cwd.to_owned()),
                None => cwd.to_owned(),
            };
            resolve(&base, &p)
        };
        let mut push = |call: String, kind: Kind, path: String, renamed_to: Option<String>| {
            obs.writes.push(Write {
                call,
                kind,
                path,
                fd_path: None,
                renamed_to,
            });
        };
        match self.name {
            "execve" | "execveat" => {
                let (p, a) = if self.name == "execve" {
                    (at(None, 0), 1)
                } else {
                    (at(Some(0), 1), 2)
                };
                if std::mem::take(first_exec) {
                    return;
                }
                obs.execs.push(Exec {
                    path: p,
                    argv: array(arg(a)),
                });
            }
            "open" | "openat" | "openat2" | "creat" => {
                let (dir, i, flags) = match self.name {
                    "open" => (None, 0, arg(1)),
                    "creat" => (None, 0, "O_CREAT|O_WRONLY|O_TRUNC"),
                    _ => (Some(0), 1, arg(2)),
                };
                let writes = ["O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC"]
                    .iter()
                    .any(|f| flags.contains(f));
                if writes {
                    let flags = flags
                        .trim_start_matches('{')
                        .split([',', '}'])
                        .next()
                        .unwrap_or("")
                        .trim_start_matches("flags=");
                    obs.writes.push(Write {
                        call: format!("{} {flags}", self.name),
                        kind: Kind::Open {
                            create: flags.contains("O_CREAT"),
                        },
                        path: at(dir, i),
                        fd_path: self.ret_path(),
                        renamed_to: None,
                    });
                }
            }
            "rename" | "renameat" | "renameat2" => {
                let (from, to) = if self.name == "rename" {
                    (at(None, 0), at(None, 1))
                } else {
                    (at(Some(0), 1), at(Some(2), 3))
                };
                push(
                    self.name.to_owned(),
                    Kind::RenameFrom,
                    from,
                    Some(to.clone()),
                );
                push(self.name.to_owned(), Kind::RenameTo, to, None);
            }
            "unlink" | "rmdir" => push(self.name.to_owned(), Kind::Delete, at(None, 0), None),
            "unlinkat" => push(self.name.to_owned(), Kind::Delete, at(Some(0), 1), None),
            "mkdir" | "mknod" => push(self.name.to_owned(), Kind::Create, at(None, 0), None),
            "mkdirat" | "mknodat" => {
                push(self.name.to_owned(), Kind::Create, at(Some(0), 1), None);
            }
            "symlink" => push(self.name.to_owned(), Kind::Create, at(None, 1), None),
            "symlinkat" => push(self.name.to_owned(), Kind::Create, at(Some(1), 2), None),
            "link" => push(self.name.to_owned(), Kind::Create, at(None, 1), None),
            "linkat" => push(self.name.to_owned(), Kind::Create, at(Some(2), 3), None),
            "truncate" | "chmod" | "chown" | "lchown" | "utime" | "utimes" => {
                push(self.name.to_owned(), Kind::Change, at(None, 0), None);
            }
            "fchmodat" | "fchownat" | "utimensat" | "futimesat" => {
                // `utimensat(fd, NULL, ...)` changes the open file itself.
                if arg(1) == "NULL" {
                    if let Some(p) = fd_dir(arg(0)) {
                        push(self.name.to_owned(), Kind::Change, p, None);
                    }
                } else {
                    push(self.name.to_owned(), Kind::Change, at(Some(0), 1), None);
                }
            }
            "chdir" => {
                cwds.insert(pid, at(None, 0));
            }
            "fchdir" => {
                if let Some(p) = fd_dir(arg(0)) {
                    cwds.insert(pid, p);
                }
            }
            "clone" | "clone3" | "fork" | "vfork" => {
                if let Ok(child) = u32::try_from(ret)
                    && child > 0
                {
                    cwds.insert(child, cwd.to_owned());
                }
            }
            _ => {}
        }
    }
}

/// The path of a decoded descriptor argument (`AT_FDCWD</d>`, `3</d>`).
fn fd_dir(arg: &str) -> Option<String> {
    let start = arg.find('<')?;
    let inner = arg[start + 1..].strip_suffix('>')?;
    Some(unquote_path(inner))
}

/// A C string literal of strace (`"a\"b"`, maybe followed by `...`).
fn string(arg: &str) -> String {
    let s = arg.trim();
    let s = s.strip_suffix("...").unwrap_or(s);
    match s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) => unescape_c(inner),
        None => s.to_owned(),
    }
}

/// An array of strings (`["cat", "a.txt"]`).
fn array(arg: &str) -> Vec<String> {
    let inner = arg
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim();
    let mut out = Vec::new();
    let bytes = inner.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'"' {
            let start = i;
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                if bytes[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            out.push(string(&inner[start..(i + 1).min(inner.len())]));
        }
        i += 1;
    }
    out
}

/// A path decoded by `-y`, where strace escapes `<`, `>` and unprintables.
fn unquote_path(s: &str) -> String {
    unescape_c(s)
}

/// Decodes strace's C escapes (`\"`, `\\`, `\n`, `\t`, `\xHH`, `\NNN`).
fn unescape_c(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 == b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        match b[i] {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'x' => {
                let hex: String = s[i + 1..].chars().take(2).collect();
                if let Ok(v) = u8::from_str_radix(&hex, 16) {
                    out.push(v);
                    i += hex.len();
                }
            }
            b'0'..=b'7' => {
                let oct: String = s[i..]
                    .chars()
                    .take(3)
                    .take_while(|c| c.is_digit(8))
                    .collect();
                out.push(u8::from_str_radix(&oct, 8).unwrap_or(0));
                i += oct.len() - 1;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `path` against `base`, normalized lexically.
pub fn resolve(base: &str, path: &str) -> String {
    let joined = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("{base}/{path}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}
