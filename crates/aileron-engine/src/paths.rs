//! Lexical path handling: no file system access, so the engine stays pure.

/// Makes `path` absolute against `cwd` (and `~` against `home`, when given)
/// and removes `.`, `..` and repeated slashes. `..` never climbs above `/`.
pub fn absolute(path: &str, cwd: &str, home: Option<&str>) -> String {
    let joined = match (path.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{home}/{rest}")
        }
        _ if path.starts_with('/') => path.to_owned(),
        _ => format!("{cwd}/{path}"),
    };
    normalize(&joined)
}

/// Removes `.`, `..` and repeated slashes from an absolute path (the shell
/// analyser's rule, so both crates resolve paths the same way).
pub fn normalize(path: &str) -> String {
    aileron_shell::normalize_path(path)
}

/// The directory part of a file path (`/a/b/c.yaml` → `/a/b`).
pub fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) => "/",
        Some(i) => &path[..i],
        None => ".",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_paths() {
        assert_eq!(absolute("a/../b/./c", "/w", None), "/w/b/c");
        assert_eq!(absolute("~/x", "/w", Some("/home/u")), "/home/u/x");
        assert_eq!(absolute("~", "/w", Some("/home/u")), "/home/u");
        assert_eq!(absolute("/../..//etc", "/w", None), "/etc");
        assert_eq!(absolute("..", "/", None), "/");
        assert_eq!(parent("/a/b.yaml"), "/a");
        assert_eq!(parent("/b.yaml"), "/");
    }
}
