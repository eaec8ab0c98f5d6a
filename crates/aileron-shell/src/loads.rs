//! Files a runner loads as code or configuration: `make` its Makefile,
//! `npm test` `package.json` and `.npmrc`, `pytest` `conftest.py`, `cargo`
//! `build.rs` and `.cargo/config.toml`. A line that writes one of them and
//! runs the runner runs what it wrote, whatever the runner's entry says
//! about the runner alone.
//!
//! Knowledge of programs, kept apart from the program registry in
//! `classify/` so that it can move into the runners' entries there.

/// One runner: the program, the first operands that make it load its
/// project files (empty: any), and the files it loads.
struct Runner {
    program: &'static str,
    subcommands: &'static [&'static str],
    loads: &'static [&'static str],
}

/// A file name (`Makefile`), a path below any directory (`.cargo/config`),
/// a pattern of a name (`*.mk`), or a directory whose whole content is
/// loaded (`node_modules/`).
const MAKE: &[&str] = &["Makefile", "makefile", "GNUmakefile", "*.mk", "*.mak"];
const NODE: &[&str] = &[
    "package.json",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnpmfile.cjs",
    "pnpm-workspace.yaml",
    "bunfig.toml",
    "node_modules/",
    ".pnp.cjs",
    ".pnp.loader.mjs",
];
const JS_TEST: &[&str] = &[
    "package.json",
    "node_modules/",
    "jest.config.*",
    "vitest.config.*",
    "vite.config.*",
    ".mocharc*",
    "babel.config.*",
    ".babelrc*",
    "playwright.config.*",
];
const PYTEST: &[&str] = &[
    "conftest.py",
    "pytest.ini",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "pytest.py",
    "pytest/",
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
];
const PYTHON_PROJECT: &[&str] = &[
    "setup.py",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "noxfile.py",
    "conftest.py",
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
];
const CARGO: &[&str] = &[
    "build.rs",
    "Cargo.toml",
    ".cargo/config.toml",
    ".cargo/config",
    "rust-toolchain.toml",
    "rust-toolchain",
];
const GO: &[&str] = &["go.mod", "go.work", "*.go"];
const GRADLE: &[&str] = &[
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "settings.gradle.kts",
    "gradle.properties",
    "gradlew",
    "gradle/",
    "buildSrc/",
];
const MAVEN: &[&str] = &["pom.xml", ".mvn/", "mvnw"];

const NPM_RUN: &[&str] = &[
    "test",
    "t",
    "tst",
    "run",
    "run-script",
    "rum",
    "urn",
    "start",
    "stop",
    "restart",
    "install",
    "i",
    "add",
    "ci",
    "exec",
    "x",
    "rebuild",
    "pack",
    "publish",
    "build",
    "dev",
];

const RUNNERS: &[Runner] = &[
    Runner {
        program: "make",
        subcommands: &[],
        loads: MAKE,
    },
    Runner {
        program: "gmake",
        subcommands: &[],
        loads: MAKE,
    },
    Runner {
        program: "npm",
        subcommands: NPM_RUN,
        loads: NODE,
    },
    Runner {
        program: "pnpm",
        subcommands: &[],
        loads: NODE,
    },
    Runner {
        program: "yarn",
        subcommands: &[],
        loads: NODE,
    },
    Runner {
        program: "bun",
        subcommands: &[],
        loads: NODE,
    },
    Runner {
        program: "npx",
        subcommands: &[],
        loads: NODE,
    },
    Runner {
        program: "jest",
        subcommands: &[],
        loads: JS_TEST,
    },
    Runner {
        program: "vitest",
        subcommands: &[],
        loads: JS_TEST,
    },
    Runner {
        program: "mocha",
        subcommands: &[],
        loads: JS_TEST,
    },
    Runner {
        program: "pytest",
        subcommands: &[],
        loads: PYTEST,
    },
    Runner {
        program: "py.test",
        subcommands: &[],
        loads: PYTEST,
    },
    Runner {
        program: "tox",
        subcommands: &[],
        loads: PYTHON_PROJECT,
    },
    Runner {
        program: "nox",
        subcommands: &[],
        loads: PYTHON_PROJECT,
    },
    Runner {
        program: "pip",
        subcommands: &["install", "wheel", "download"],
        loads: PYTHON_PROJECT,
    },
    Runner {
        program: "cargo",
        subcommands: &[],
        loads: CARGO,
    },
    Runner {
        program: "go",
        subcommands: &["test", "build", "run", "generate", "vet", "install", "get"],
        loads: GO,
    },
    Runner {
        program: "gradle",
        subcommands: &[],
        loads: GRADLE,
    },
    Runner {
        program: "gradlew",
        subcommands: &[],
        loads: GRADLE,
    },
    Runner {
        program: "mvn",
        subcommands: &[],
        loads: MAVEN,
    },
    Runner {
        program: "mvnw",
        subcommands: &[],
        loads: MAVEN,
    },
    Runner {
        program: "rake",
        subcommands: &[],
        loads: &["Rakefile", "rakefile", "*.rake"],
    },
    Runner {
        program: "bundle",
        subcommands: &[],
        loads: &["Gemfile", ".bundle/", "Rakefile"],
    },
    Runner {
        program: "just",
        subcommands: &[],
        loads: &["justfile", "Justfile", ".justfile"],
    },
    Runner {
        program: "composer",
        subcommands: &[],
        loads: &["composer.json", "vendor/"],
    },
    Runner {
        program: "pre-commit",
        subcommands: &[],
        loads: &[".pre-commit-config.yaml"],
    },
];

/// The files the command `words` (decoded, brace-expanded) loads as code
/// or configuration, if it is a runner. `python -m MOD` is the runner
/// `MOD`, and loads `MOD.py` or `MOD/` from its directory first.
pub(crate) fn loaded_by(words: &[&str]) -> Option<Vec<&'static str>> {
    let program = words.first().map(|w| crate::paths::basename(w))?;
    if !is_runner(program) {
        return None;
    }
    if is_python(program) {
        let m = words.iter().position(|w| *w == "-m")?;
        let module = *words.get(m + 1)?;
        let mut files = runner(module, &words[m + 1..]).unwrap_or(&[]).to_vec();
        files.extend(
            PYTHON_SHADOWS
                .iter()
                .filter(|(m, _)| *m == module)
                .flat_map(|(_, f)| f.iter()),
        );
        files.extend(&["sitecustomize.py", "usercustomize.py", "*.pth"]);
        return Some(files);
    }
    runner(program, words).map(<[_]>::to_vec)
}

/// What `python -m MOD` finds in the working directory before the
/// installed module.
const PYTHON_SHADOWS: &[(&str, &[&str])] = &[
    ("pytest", &["pytest.py", "pytest/"]),
    ("pip", &["pip.py", "pip/"]),
    ("unittest", &["unittest.py", "unittest/"]),
    ("mypy", &["mypy.py", "mypy/"]),
    ("black", &["black.py", "black/"]),
    ("ruff", &["ruff.py", "ruff/"]),
];

/// Whether `program` (a base name) may be a runner: cheap, for every
/// command.
pub(crate) fn is_runner(program: &str) -> bool {
    is_python(program) || RUNNERS.iter().any(|r| r.program == program)
}

fn is_python(program: &str) -> bool {
    program
        .strip_prefix("python")
        .is_some_and(|v| v.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
}

fn runner(program: &str, words: &[&str]) -> Option<&'static [&'static str]> {
    let r = RUNNERS.iter().find(|r| r.program == program)?;
    let first = words.iter().skip(1).find(|w| !w.starts_with('-'));
    (r.subcommands.is_empty() || first.is_some_and(|f| r.subcommands.contains(f)))
        .then_some(r.loads)
}

/// Whether writing the absolute path `write` (which may hold a pattern)
/// can change one of `loads`, for a runner in `cwd` (`None`: not known).
pub(crate) fn writes_loaded(write: &str, loads: &[&str], cwd: Option<&str>) -> bool {
    // A write of the runner's directory or one above it (`tar -x`, `cp -r
    // dir/. .`) may create any of its files.
    if let Some(cwd) = cwd
        && cwd
            .strip_prefix(write.trim_end_matches('/'))
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    {
        return true;
    }
    let parts: Vec<&str> = write.split('/').filter(|p| !p.is_empty()).collect();
    loads.iter().any(|l| {
        if let Some(dir) = l.strip_suffix('/') {
            return parts.iter().any(|p| glob(p, dir));
        }
        let want: Vec<&str> = l.split('/').collect();
        // The loaded path's last components, or a directory holding them.
        (0..parts.len()).any(|k| {
            let tail = &parts[k..];
            (tail.len() == want.len() && tail.iter().zip(&want).all(|(p, w)| glob(p, w)))
                || (tail.len() < want.len()
                    && tail.len() == 1
                    && k + 1 == parts.len()
                    && glob(tail[0], want[0]))
        })
    })
}

/// `pattern` (the written name, or the loaded name) against `name`: `*`
/// and `?` on either side, `[` classes in the written name taken as any
/// character.
fn glob(written: &str, loaded: &str) -> bool {
    fn m(p: &[u8], n: &[u8]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some(b'*'), _) => m(&p[1..], n) || (!n.is_empty() && m(p, &n[1..])),
            (_, Some(b'*')) => m(p, &n[1..]) || (!p.is_empty() && m(&p[1..], n)),
            (Some(b'['), Some(_)) => {
                let close = p.iter().position(|&c| c == b']').unwrap_or(0);
                m(&p[close + 1..], &n[1..])
            }
            (Some(a), Some(b)) => (a == b || *a == b'?' || *b == b'?') && m(&p[1..], &n[1..]),
            _ => false,
        }
    }
    m(written.as_bytes(), loaded.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runners() {
        assert!(loaded_by(&["make", "test"]).is_some());
        assert!(loaded_by(&["npm", "test"]).is_some());
        assert!(loaded_by(&["npm", "view", "x"]).is_none());
        assert!(
            loaded_by(&["/usr/bin/python3", "-m", "pytest"])
                .is_some_and(|f| f.contains(&"pytest.py"))
        );
        assert!(loaded_by(&["ls"]).is_none());
    }

    #[test]
    fn writes() {
        let cargo = loaded_by(&["cargo", "test"]).unwrap_or_default();
        assert!(writes_loaded(
            "/w/p/.cargo/config.toml",
            &cargo,
            Some("/w/p")
        ));
        assert!(writes_loaded("/w/p/.cargo", &cargo, Some("/w/p")));
        assert!(writes_loaded("/w/p/build.r?", &cargo, Some("/w/p")));
        assert!(writes_loaded("/w", &cargo, Some("/w/p")));
        assert!(!writes_loaded("/w/p/src/main.rs", &cargo, Some("/w/p")));
        assert!(!writes_loaded("/w/p/build.log", &cargo, None));
        let npm = loaded_by(&["npm", "test"]).unwrap_or_default();
        assert!(writes_loaded("/w/p/node_modules/.bin/jest", &npm, None));
        let make = loaded_by(&["make"]).unwrap_or_default();
        assert!(writes_loaded("/w/p/rules.mk", &make, None));
        assert!(!writes_loaded("/w/p/make.log", &make, None));
    }
}
