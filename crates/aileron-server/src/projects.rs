//! The projects an admin registered (`aileron serve --project
//! ROOT[=POLICY]`). A request's `session.cwd` only selects among them (the
//! longest root it lies in, compared as text): the server never looks at
//! the directory a request names, so an agent cannot make it read a
//! policy, or anything else, that its configuration did not name.

use std::path::{Component, Path, PathBuf};

/// A registered project: its root and its policy file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Project {
    /// Canonical, resolved once at start.
    pub root: PathBuf,
    /// `ROOT/aileron.yaml` unless the admin named another file; absolute,
    /// not resolved (a link there is followed, and checked, at each load).
    pub policy: PathBuf,
}

impl Project {
    /// Parses `ROOT[=POLICY]` (relative paths from `cwd`); the root must be
    /// a directory.
    pub fn parse(spec: &str, cwd: &Path) -> Result<Project, String> {
        let (root, policy) = match spec.split_once('=') {
            Some((r, p)) if !p.is_empty() => (r, Some(p)),
            _ => (spec, None),
        };
        if root.is_empty() {
            return Err(format!("`{spec}`: expected ROOT or ROOT=POLICY"));
        }
        let root = std::fs::canonicalize(cwd.join(root))
            .map_err(|e| format!("project root `{root}`: {e}"))?;
        if !root.is_dir() {
            return Err(format!(
                "project root `{}` is not a directory",
                root.display()
            ));
        }
        let policy = match policy {
            Some(p) => PathBuf::from(aileron_engine::paths::normalize(
                &cwd.join(p).to_string_lossy(),
            )),
            None => root.join(aileron_config::POLICY_FILE),
        };
        Ok(Project { root, policy })
    }

    /// Where this project's policy may read files from: its root, and the
    /// directory of a policy file the admin put elsewhere.
    pub fn confine(&self) -> std::io::Result<aileron_config::Confine> {
        let mut dirs = vec![self.root.clone()];
        if let Some(dir) = self.policy.parent()
            && !dir.starts_with(&self.root)
        {
            dirs.push(dir.to_path_buf());
        }
        aileron_config::Confine::new(dirs)
    }
}

/// Why a request's `session.cwd` selects nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadCwd {
    #[error("session.cwd `{0}` is not an absolute path")]
    Relative(String),
    #[error("session.cwd `{0}` holds `.` or `..`: send the directory's normalized path")]
    NotNormal(String),
}

/// The project a request's `cwd` lies in (`None`: the server's own
/// policy). `cwd` is compared as text, component by component.
pub fn select<'a>(
    projects: &'a [Project],
    cwd: Option<&str>,
) -> Result<Option<&'a Project>, BadCwd> {
    let Some(cwd) = cwd else { return Ok(None) };
    let path = Path::new(cwd);
    if !path.is_absolute() {
        return Err(BadCwd::Relative(cwd.to_owned()));
    }
    // `Path::components` drops inner `.`, so look at the text too.
    let dotted = cwd.split('/').any(|c| c == "." || c == "..");
    if dotted
        || path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return Err(BadCwd::NotNormal(cwd.to_owned()));
    }
    Ok(projects
        .iter()
        .filter(|p| path.starts_with(&p.root))
        .max_by_key(|p| p.root.components().count()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(root: &str) -> Project {
        Project {
            root: PathBuf::from(root),
            policy: Path::new(root).join("aileron.yaml"),
        }
    }

    #[test]
    fn the_longest_root_a_cwd_lies_in() {
        let ps = [
            project("/srv/a"),
            project("/srv/a/inner"),
            project("/srv/b"),
        ];
        let root = |cwd| select(&ps, Some(cwd)).unwrap().map(|p| p.root.clone());
        assert_eq!(root("/srv/a"), Some("/srv/a".into()));
        assert_eq!(root("/srv/a/src/x"), Some("/srv/a".into()));
        assert_eq!(root("/srv/a/inner/y"), Some("/srv/a/inner".into()));
        assert_eq!(root("/srv/ab"), None);
        assert_eq!(root("/elsewhere"), None);
        assert_eq!(select(&ps, None).unwrap(), None);
    }

    #[test]
    fn relative_and_dotted_cwds_select_nothing() {
        let ps = [project("/srv/a")];
        for cwd in ["srv/a", "", "./x"] {
            assert!(
                matches!(select(&ps, Some(cwd)), Err(BadCwd::Relative(_))),
                "{cwd}"
            );
        }
        for cwd in ["/srv/a/..", "/srv/a/../b", "/srv/a/./x", "/srv/b/../a"] {
            assert!(
                matches!(select(&ps, Some(cwd)), Err(BadCwd::NotNormal(_))),
                "{cwd}"
            );
        }
    }

    #[test]
    fn a_spec_names_a_root_and_maybe_a_policy() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir(base.join("p")).unwrap();
        let p = Project::parse("p", &base).unwrap();
        assert_eq!(p.root, base.join("p"));
        assert_eq!(p.policy, base.join("p/aileron.yaml"));
        let p = Project::parse("p=etc/../pol.yaml", &base).unwrap();
        assert_eq!(p.policy, base.join("pol.yaml"));
        assert_eq!(p.confine().unwrap().dirs(), &[base.join("p"), base.clone()]);
        assert!(Project::parse("missing", &base).is_err());
        assert!(Project::parse("=x", &base).is_err());
    }
}
