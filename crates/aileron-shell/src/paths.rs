//! Path resolution and the path facts the classifier needs.

/// Makes `text` absolute and normalized: `~`, `~/…`, `$HOME`, `${HOME}` are
/// taken from `home`, a relative path is joined to `cwd`, and `.`/`..` are
/// resolved lexically. Glob characters are kept.
pub(crate) fn resolve(text: &str, cwd: &str, home: &str) -> String {
    if let Some(rest) = home_rest(text) {
        return join(home, rest);
    }
    if let Some(rest) = text.strip_prefix("~+")
        && (rest.is_empty() || rest.starts_with('/'))
    {
        return join(cwd, rest);
    }
    if let Some(user_path) = text.strip_prefix('~') {
        // `~user/...`: the home of another user, by convention.
        let (user, rest) = user_path.split_at(user_path.find('/').unwrap_or(user_path.len()));
        if !user.is_empty()
            && user
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        {
            let base = if user == "root" {
                "/root".to_owned()
            } else {
                format!("/home/{user}")
            };
            return join(&base, rest);
        }
    }
    if text.starts_with('/') {
        normalize(text)
    } else {
        join(cwd, text)
    }
}

/// The part after a leading home reference (`~`, `$HOME`, `${HOME}`), if any.
pub(crate) fn home_rest(text: &str) -> Option<&str> {
    for prefix in ["~", "$HOME", "${HOME}"] {
        if let Some(rest) = text.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            return Some(rest);
        }
    }
    None
}

fn join(base: &str, rest: &str) -> String {
    let mut s = String::with_capacity(base.len() + rest.len() + 1);
    s.push_str(base);
    s.push('/');
    s.push_str(rest);
    normalize(&s)
}

/// Lexically normalizes an absolute path: collapses `//`, drops `.`,
/// resolves `..` (never above `/`), drops a trailing `/`.
pub fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return "/".to_owned();
    }
    let mut out = String::with_capacity(path.len());
    for p in parts {
        out.push('/');
        out.push_str(p);
    }
    out
}

/// Is `path` (absolute, normalized) `/`, the home directory, an ancestor of
/// it, or one of those followed by `/*`?
pub(crate) fn is_root_or_home(path: &str, home: &str) -> bool {
    let base = match path.strip_suffix("/*") {
        Some("") => "/",
        Some(b) => b,
        None => path,
    };
    if base == "/" || base == "/*" || base == home {
        return true;
    }
    home.len() > base.len() && home.starts_with(base) && home.as_bytes()[base.len()] == b'/'
}

/// Special files that are not real write targets. The descriptors
/// (`/dev/stdout`, `/dev/fd/N`, ...) are not among them: they are
/// whatever file the descriptor is open on, see [`descriptor`].
pub(crate) fn is_harmless_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null" | "/dev/tty" | "/dev/zero" | "/dev/full" | "/dev/random" | "/dev/urandom"
    )
}

/// The descriptor a path reopens: `/dev/stdin` 0, `/dev/stdout` 1,
/// `/dev/stderr` 2, `/dev/fd/N`, `/proc/self/fd/N`. `Some(None)` for a
/// descriptor of another process (`/proc/PID/fd/N`), not known here.
pub(crate) fn descriptor(path: &str) -> Option<Option<u32>> {
    let n = match path {
        "/dev/stdin" => return Some(Some(0)),
        "/dev/stdout" => return Some(Some(1)),
        "/dev/stderr" => return Some(Some(2)),
        _ => path
            .strip_prefix("/dev/fd/")
            .or_else(|| path.strip_prefix("/proc/self/fd/"))
            .or_else(|| path.strip_prefix("/proc/thread-self/fd/")),
    };
    if let Some(n) = n {
        return Some(n.parse().ok());
    }
    let rest = path.strip_prefix("/proc/")?;
    let (_pid, fd) = rest.split_once("/fd/")?;
    let _ = fd;
    Some(None)
}

/// What a path under `/proc` names: `/proc/self/cwd/X` is `cwd/X`,
/// `/proc/self/root/X` is `/X`; `Err` for another process's directories
/// (`/proc/PID/cwd`), which cannot be known here; `None` for any other path.
pub(crate) fn proc_alias(path: &str, cwd: &str) -> Option<Result<String, ()>> {
    let rest = path.strip_prefix("/proc/")?;
    let (who, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let (link, sub) = tail.split_once('/').unwrap_or((tail, ""));
    let own = matches!(who, "self" | "thread-self");
    Some(match link {
        "cwd" if own => Ok(join(cwd, sub)),
        "root" if own => Ok(join("/", sub)),
        "cwd" | "root" => Err(()),
        _ if who.bytes().all(|b| b.is_ascii_digit()) && link == "task" => Err(()),
        _ => return None,
    })
}

/// The directory part of an absolute path (`/` for `/x`).
pub(crate) fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// Block devices (disks, partitions, loop and mapper devices).
pub(crate) fn is_block_device(path: &str) -> bool {
    let Some(dev) = path.strip_prefix("/dev/") else {
        return false;
    };
    if dev.starts_with("mapper/") {
        return true;
    }
    if dev.contains('/') {
        return dev.starts_with("disk/by-");
    }
    [
        "sd", "nvme", "hd", "vd", "xvd", "mmcblk", "disk", "rdisk", "loop", "md", "dm-", "sr",
    ]
    .iter()
    .any(|p| dev.starts_with(p))
}

/// Does an argument look like a path: contains `/`, starts with `.` or `~`
/// or `$HOME`, or ends in a file extension?
pub(crate) fn looks_like_path(text: &str) -> bool {
    if text.is_empty() || text.starts_with('-') || text.contains("://") {
        return false;
    }
    if text.bytes().any(|b| b.is_ascii_whitespace()) {
        return false;
    }
    if text.contains('/')
        || text.starts_with('.')
        || text.starts_with('~')
        || home_rest(text).is_some()
    {
        return true;
    }
    if text.contains('=') {
        return false;
    }
    match text.rfind('.') {
        Some(dot) if dot > 0 => {
            let ext = &text[dot + 1..];
            !ext.is_empty()
                && ext.len() <= 10
                && ext.bytes().all(|b| b.is_ascii_alphanumeric())
                && ext.bytes().any(|b| b.is_ascii_alphabetic())
        }
        _ => false,
    }
}

/// The last component of a path.
pub(crate) fn basename(path: &str) -> &str {
    let trimmed = path.trim_end_matches('/');
    match trimmed.rfind('/') {
        Some(i) => &trimmed[i + 1..],
        None => trimmed,
    }
}

/// Is this binary path in a directory of system programs (so that its
/// basename can be trusted to be the well-known program)?
pub(crate) fn is_system_path(bin: &str) -> bool {
    if !bin.contains('/') {
        return true;
    }
    let dir = match bin.rfind('/') {
        Some(i) => &bin[..i],
        None => return true,
    };
    matches!(
        dir,
        "/bin"
            | "/sbin"
            | "/usr/bin"
            | "/usr/sbin"
            | "/usr/local/bin"
            | "/usr/local/sbin"
            | "/opt/homebrew/bin"
            | "/opt/homebrew/sbin"
            | "/run/current-system/sw/bin"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const CWD: &str = "/work/p";
    const HOME: &str = "/home/u";

    #[test]
    fn resolution() {
        for (text, want) in [
            ("aileron.yaml", "/work/p/aileron.yaml"),
            ("./a/../b", "/work/p/b"),
            ("../../../../x", "/x"),
            ("/", "/"),
            ("//", "/"),
            ("/.", "/"),
            ("/*", "/*"),
            ("~", "/home/u"),
            ("~/", "/home/u"),
            ("~/*", "/home/u/*"),
            ("$HOME", "/home/u"),
            ("${HOME}/.aileron/x", "/home/u/.aileron/x"),
            ("~root/x", "/root/x"),
            ("*.yaml", "/work/p/*.yaml"),
            ("$HOMEX", "/work/p/$HOMEX"),
        ] {
            assert_eq!(resolve(text, CWD, HOME), want, "{text}");
        }
    }

    #[test]
    fn roots() {
        for p in ["/", "/*", "/home/u", "/home/u/*", "/home", "/home/*"] {
            assert!(is_root_or_home(p, HOME), "{p}");
        }
        for p in ["/home/u/x", "/usr", "/home/us", "/work/p"] {
            assert!(!is_root_or_home(p, HOME), "{p}");
        }
    }

    #[test]
    fn devices() {
        assert!(is_block_device("/dev/sda"));
        assert!(is_block_device("/dev/nvme0n1p1"));
        assert!(is_block_device("/dev/mapper/root"));
        assert!(!is_block_device("/dev/null"));
        assert!(!is_block_device("/dev/stdout"));
        assert!(!is_harmless_device("/dev/fd/3"));
        assert_eq!(descriptor("/proc/self/fd/3"), Some(Some(3)));
        assert_eq!(descriptor("/proc/42/fd/3"), Some(None));
        assert_eq!(
            proc_alias("/proc/self/cwd/a", "/w"),
            Some(Ok("/w/a".to_owned()))
        );
        assert_eq!(proc_alias("/proc/1/root/etc", "/w"), Some(Err(())));
    }

    #[test]
    fn path_likeness() {
        for t in [
            "a/b",
            "./x",
            "~/.aileron",
            "$HOME/x",
            "notes.txt",
            ".env",
            "aileron.yaml",
        ] {
            assert!(looks_like_path(t), "{t}");
        }
        for t in [
            "-rf",
            "https://x.y/z",
            "1.5",
            "v1.2.3",
            "status",
            "a b.txt",
            "key=val",
        ] {
            assert!(!looks_like_path(t), "{t}");
        }
    }
}
