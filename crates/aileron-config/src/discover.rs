//! Which files make up the policy, in layer order.

use crate::{Confine, LoadOptions, POLICY_FILE, path_str};
use aileron_engine::profiles::{self, BUILTIN_PREFIX, LANGUAGE_MARKERS};
use aileron_engine::{Diagnostic, Diagnostics, Layer, Source, parse_document};
use std::path::{Path, PathBuf};

/// The nearest `aileron.yaml` in `cwd` or a parent directory.
pub fn find_project_file(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .map(|d| d.join(POLICY_FILE))
        .find(|p| p.is_file())
}

/// Reads every source of the policy, lowest layer first: OS and language
/// profiles, named profiles (depth first, each once), the project file, the
/// user's settings. Built-in rules (layer 1) are added by the engine.
pub fn gather_sources(
    opts: &LoadOptions,
    project_file: Option<&Path>,
) -> Result<Vec<Source>, Diagnostics> {
    gather(opts, project_file, None)
}

/// [`gather_sources`]; with `confine`, the project file and the profiles it
/// names are read only from inside the confined directories.
pub(crate) fn gather(
    opts: &LoadOptions,
    project_file: Option<&Path>,
    confine: Option<&Confine>,
) -> Result<Vec<Source>, Diagnostics> {
    let home = path_str(&opts.home);
    let mut g = Gatherer {
        home: &home,
        sources: Vec::new(),
        seen: Vec::new(),
        errors: Vec::new(),
        confine: None,
    };
    // A confined project's markers are its root's own files: a link
    // named `Cargo.toml` pointing anywhere would tell, by the profile it
    // adds, whether its target exists.
    let (project_dir, marked): (PathBuf, fn(&Path) -> bool) = match confine {
        Some(_) => (opts.cwd.clone(), |p| {
            std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file())
        }),
        None => (
            project_file
                .and_then(Path::parent)
                .unwrap_or(&opts.cwd)
                .to_path_buf(),
            Path::is_file,
        ),
    };
    if opts.auto_profiles {
        if let Some(os) = os_profile() {
            g.builtin(os, Layer::Os, None);
        }
        for (marker, profile) in LANGUAGE_MARKERS {
            if marked(&project_dir.join(marker)) {
                g.builtin(profile, Layer::Lang, None);
            }
        }
    }
    if let Some(p) = project_file {
        g.confine = confine;
        match g.read(p) {
            Err(Refused::Outside) => g.errors.push(Diagnostic::file(&path_str(p), OUTSIDE)),
            Ok(text) => g.file_with_profiles(p, text, Layer::Project),
            Err(Refused::Io(_)) if p.is_dir() => g.errors.push(Diagnostic::file(
                &path_str(p),
                "is a directory, not a policy file",
            )),
            Err(Refused::Io(e)) => g.errors.push(Diagnostic::file(
                &path_str(p),
                format!("cannot read policy file: {e}"),
            )),
        }
        g.confine = None;
    }
    if opts.user_settings {
        let user = opts.home.join(".aileron").join("settings.yaml");
        if let Ok(text) = std::fs::read_to_string(&user) {
            g.file_with_profiles(&user, text, Layer::User);
        }
    }
    if g.errors.is_empty() {
        Ok(g.sources)
    } else {
        Err(Diagnostics(g.errors))
    }
}

fn os_profile() -> Option<&'static str> {
    if cfg!(target_os = "linux") {
        Some("os/linux")
    } else if cfg!(target_os = "macos") {
        Some("os/darwin")
    } else {
        None
    }
}

struct Gatherer<'a> {
    home: &'a str,
    sources: Vec<Source>,
    /// Built-in names and absolute paths already loaded.
    seen: Vec<String>,
    errors: Vec<Diagnostic>,
    /// Set while the project file and its profiles are read for a server.
    confine: Option<&'a Confine>,
}

/// What a confined policy may not name, whatever the cause (outside, a
/// link out, missing, not a file): one message, so that it reveals nothing.
const OUTSIDE: &str = "not a readable file inside the project: `aileron serve` reads a project's policy and profiles only from the project's own files, never through a link out of it";

enum Refused {
    Outside,
    Io(std::io::Error),
}

impl Gatherer<'_> {
    fn read(&self, path: &Path) -> Result<String, Refused> {
        match self.confine {
            Some(c) => c.read(path).map_err(|_| Refused::Outside),
            None => std::fs::read_to_string(path).map_err(Refused::Io),
        }
    }

    fn builtin(
        &mut self,
        name: &str,
        layer: Layer,
        from: Option<(&Source, aileron_engine::diagnostic::Pos)>,
    ) {
        if self.seen.iter().any(|s| s == name) {
            return;
        }
        self.seen.push(name.to_owned());
        match profiles::builtin(name) {
            Some(text) => {
                let source = Source {
                    name: format!("{BUILTIN_PREFIX}{name}"),
                    text: text.to_owned(),
                    layer,
                    base_dir: "/".to_owned(),
                };
                self.with_profiles(source);
            }
            None => {
                let names: Vec<&str> = profiles::PROFILES.iter().map(|(n, _)| *n).collect();
                let msg = format!(
                    "profile `{name}` does not exist; built-in profiles are: {}; a profile file is a path starting with ./, ../, / or ~/",
                    names.join(", ")
                );
                self.errors.push(match from {
                    Some((src, pos)) => Diagnostic::at(&src.name, &src.text, pos, msg),
                    None => Diagnostic::file(name, msg),
                });
            }
        }
    }

    fn file_with_profiles(&mut self, path: &Path, text: String, layer: Layer) {
        let name = path_str(path);
        if self.seen.contains(&name) {
            return;
        }
        self.seen.push(name.clone());
        let base_dir = path.parent().map_or_else(|| "/".to_owned(), path_str);
        self.with_profiles(Source {
            name,
            text,
            layer,
            base_dir,
        });
    }

    /// Adds the profiles a source names (at profile layer or below), then the source.
    fn with_profiles(&mut self, source: Source) {
        // Parse errors are reported later, by the engine, with the rest.
        if let Ok(doc) = parse_document(&source, self.home) {
            let profile_layer = source.layer.min(Layer::Profile);
            for (name, pos) in &doc.profiles {
                if is_path(name) {
                    let path = PathBuf::from(aileron_engine::paths::absolute(
                        name,
                        &source.base_dir,
                        Some(self.home),
                    ));
                    match self.read(&path) {
                        Ok(text) => self.file_with_profiles(&path, text, profile_layer),
                        Err(Refused::Outside) => self.errors.push(Diagnostic::at(
                            &source.name,
                            &source.text,
                            *pos,
                            format!("profile `{name}`: {OUTSIDE}"),
                        )),
                        Err(Refused::Io(e)) => self.errors.push(Diagnostic::at(
                            &source.name,
                            &source.text,
                            *pos,
                            format!("cannot read profile `{name}` ({}): {e}", path.display()),
                        )),
                    }
                } else {
                    self.builtin(name, profile_layer, Some((&source, *pos)));
                }
            }
        }
        self.sources.push(source);
    }
}

fn is_path(name: &str) -> bool {
    name.starts_with("./")
        || name.starts_with("../")
        || name.starts_with('/')
        || name.starts_with("~/")
        || name.ends_with(".yaml")
        || name.ends_with(".yml")
}
