//! The environment variables programs read, from the ENVIRONMENT sections
//! of their manuals: the ones that carry options, code, configuration or
//! a place to load from (`TAR_OPTIONS`, `LESSOPEN`, `PYTHONPATH`,
//! `npm_config_*`, `RUSTFLAGS`, `GIT_*`, `LD_*`, ...), and among them the
//! ones known inert. Setting a variable a program reads that is not inert
//! for it makes the command opaque: the analysis cannot say what the
//! program will do.

/// What one program (or family) reads from its environment.
struct Entry {
    programs: &'static [&'static str],
    /// `NAME`, or `PREFIX*` for every name that starts so.
    reads: &'static [&'static str],
    /// Of those, the ones that change nothing the analysis reports.
    inert: &'static [&'static str],
    /// The program reads these names in any case (`NPM_CONFIG_X`).
    fold: bool,
}

/// What every dynamically linked program reads: the loader's and the C
/// library's variables, and the ones that change how GNU tools read their
/// options (the analysis parses them with permutation).
const EVERY_PROGRAM: Entry = Entry {
    programs: &[],
    reads: &[
        "LD_*",
        "GCONV_PATH",
        "GLIBC_TUNABLES",
        "NLSPATH",
        "HOSTALIASES",
        "RESOLV_HOST_CONF",
        "POSIXLY_CORRECT",
        "_POSIX2_VERSION",
        "DYLD_*",
    ],
    inert: &[],
    fold: false,
};

const ENTRIES: &[Entry] = &[
    Entry {
        programs: &["tar", "gtar", "bsdtar"],
        reads: &[
            "TAR_OPTIONS",
            "TAPE",
            "TAR_*",
            "SIMPLE_BACKUP_SUFFIX",
            "VERSION_CONTROL",
        ],
        inert: &[],
        fold: false,
    },
    Entry {
        programs: &["zip", "zipcloak", "zipsplit", "zipnote"],
        reads: &["ZIPOPT", "ZIP"],
        inert: &[],
        fold: false,
    },
    Entry {
        programs: &["unzip", "zipinfo", "funzip"],
        reads: &["UNZIP", "UNZIPOPT", "ZIPINFO", "ZIPINFOOPT"],
        inert: &[],
        fold: false,
    },
    Entry {
        programs: &[
            "less",
            "more",
            "most",
            "man",
            "git",
            "journalctl",
            "systemctl",
            "psql",
        ],
        reads: &[
            "LESS",
            "LESSOPEN",
            "LESSCLOSE",
            "LESSKEY",
            "LESSKEYIN",
            "LESSKEY_SYSTEM",
            "LESSKEYIN_SYSTEM",
            "LESSEDIT",
            "LESSSECURE",
            "LESSCHARSET",
            "LESSCHARDEF",
            "LESS_TERMCAP_*",
            "LESSHISTFILE",
            "MORE",
            "PAGER",
            "EDITOR",
            "VISUAL",
            "SHELL",
        ],
        inert: &["LESSSECURE", "LESSCHARSET", "LESSCHARDEF", "LESS_TERMCAP_*"],
        fold: false,
    },
    Entry {
        programs: &["man", "apropos", "whatis", "mandb"],
        reads: &[
            "MANPAGER",
            "MANOPT",
            "MANPATH",
            "MANSECT",
            "MANROFFOPT",
            "MANWIDTH",
            "BROWSER",
            "GROFF_*",
            "MAN_*",
        ],
        inert: &["MANWIDTH", "MANSECT", "MAN_KEEP_FORMATTING"],
        fold: false,
    },
    Entry {
        programs: &["make", "gmake"],
        reads: &[
            "MAKEFLAGS",
            "MAKEFILES",
            "MFLAGS",
            "GNUMAKEFLAGS",
            "MAKESHELL",
            "MAKE_*",
        ],
        inert: &[],
        fold: false,
    },
    Entry {
        // A Makefile expands any variable of the environment (`$(CC)`).
        programs: &["make", "gmake"],
        reads: &["*"],
        inert: &["NO_COLOR", "CI", "TERM", "LANG", "LC_*", "COLUMNS"],
        fold: false,
    },
    Entry {
        programs: &["git"],
        reads: &[
            "GIT_*",
            "EDITOR",
            "VISUAL",
            "PAGER",
            "SSH_ASKPASS",
            "XDG_CONFIG_HOME",
            "HOME",
            "EMAIL",
        ],
        inert: &[
            "GIT_TERMINAL_PROMPT",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_AUTHOR_DATE",
            "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL",
            "GIT_COMMITTER_DATE",
            "GIT_OPTIONAL_LOCKS",
            "GIT_FLUSH",
            "GIT_ADVICE",
            "GIT_MERGE_VERBOSITY",
            "GIT_LITERAL_PATHSPECS",
            "GIT_GLOB_PATHSPECS",
            "GIT_NOGLOB_PATHSPECS",
            "GIT_ICASE_PATHSPECS",
            "GIT_NO_REPLACE_OBJECTS",
            "GIT_PROGRESS_DELAY",
            "GIT_CEILING_DIRECTORIES",
            "EMAIL",
        ],
        fold: false,
    },
    Entry {
        programs: &[
            "python", "pytest", "py.test", "pip", "pip3", "uv", "poetry", "tox", "nox",
        ],
        reads: &[
            "PYTHON*",
            "PYTEST_*",
            "PIP_*",
            "VIRTUAL_ENV",
            "CONDA_PREFIX",
            "UV_*",
            "POETRY_*",
        ],
        inert: &[
            "PYTHONDONTWRITEBYTECODE",
            "PYTHONUNBUFFERED",
            "PYTHONIOENCODING",
            "PYTHONHASHSEED",
            "PYTHONUTF8",
            "PYTHONFAULTHANDLER",
            "PYTHONDEVMODE",
            "PYTHONOPTIMIZE",
            "PYTHONNOUSERSITE",
            "PYTHONLEGACYWINDOWSSTDIO",
            "PYTHON_COLORS",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
            "PYTEST_CURRENT_TEST",
            "PIP_DISABLE_PIP_VERSION_CHECK",
            "PIP_NO_INPUT",
            "PIP_QUIET",
            "PIP_PROGRESS_BAR",
            "UV_NO_PROGRESS",
            "UV_QUIET",
        ],
        fold: false,
    },
    Entry {
        programs: &[
            "node", "nodejs", "npm", "npx", "yarn", "pnpm", "bun", "deno", "corepack",
        ],
        reads: &[
            "NODE_*",
            "npm_config_*",
            "npm_package_*",
            "YARN_*",
            "PNPM_*",
            "COREPACK_*",
            "BUN_*",
            "DENO_*",
        ],
        inert: &[
            "NODE_ENV",
            "NODE_DEBUG",
            "NODE_NO_WARNINGS",
            "NODE_DISABLE_COLORS",
            "NODE_EXTRA_CA_CERTS",
            "npm_config_loglevel",
            "npm_config_yes",
            "npm_config_fund",
            "npm_config_audit",
            "npm_config_update_notifier",
            "npm_config_progress",
            "npm_config_color",
        ],
        fold: true,
    },
    Entry {
        programs: &[
            "cargo",
            "rustc",
            "rustdoc",
            "rustup",
            "cargo-clippy",
            "clippy-driver",
        ],
        reads: &["RUST*", "CARGO*", "__CARGO_*"],
        inert: &[
            "RUST_BACKTRACE",
            "RUST_LOG",
            "RUST_LOG_STYLE",
            "RUST_TEST_THREADS",
            "RUST_TEST_NOCAPTURE",
            "RUST_MIN_STACK",
            "CARGO_TERM_*",
            "CARGO_INCREMENTAL",
            "CARGO_BUILD_JOBS",
            "CARGO_NET_OFFLINE",
            "CARGO_NET_RETRY",
            "CARGO_HTTP_TIMEOUT",
        ],
        fold: false,
    },
    Entry {
        programs: &["bash", "sh", "dash", "zsh", "ksh", "mksh", "busybox"],
        reads: &[
            "BASH_ENV",
            "ENV",
            "SHELLOPTS",
            "BASHOPTS",
            "PS4",
            "BASH_XTRACEFD",
            "BASH_FUNC_*",
            "ZDOTDIR",
            "IFS",
            "GLOBIGNORE",
            "CDPATH",
            "PROMPT_COMMAND",
            "HISTFILE",
        ],
        inert: &[],
        fold: false,
    },
    Entry {
        programs: &["awk", "gawk"],
        reads: &["AWKPATH", "AWKLIBPATH", "AWKBUFSIZE", "GAWK_*"],
        inert: &["AWKBUFSIZE"],
        fold: false,
    },
    Entry {
        programs: &["grep", "egrep", "fgrep"],
        reads: &["GREP_OPTIONS", "GREP_COLOR", "GREP_COLORS"],
        inert: &["GREP_COLOR", "GREP_COLORS"],
        fold: false,
    },
    Entry {
        programs: &["curl"],
        reads: &[
            "CURL_HOME",
            "XDG_CONFIG_HOME",
            "HOME",
            "SSLKEYLOGFILE",
            "CURL_CA_BUNDLE",
            "SSL_CERT_FILE",
            "SSL_CERT_DIR",
        ],
        inert: &["CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR"],
        fold: false,
    },
    Entry {
        programs: &["wget"],
        reads: &["WGETRC", "SYSTEM_WGETRC", "HOME", "SSLKEYLOGFILE"],
        inert: &[],
        fold: false,
    },
    Entry {
        programs: &["rsync", "scp", "ssh", "sftp"],
        reads: &[
            "RSYNC_RSH",
            "RSYNC_CONNECT_PROG",
            "RSYNC_PROXY",
            "SSH_ASKPASS",
            "SSH_ASKPASS_REQUIRE",
            "DISPLAY",
        ],
        inert: &[],
        fold: false,
    },
];

/// Does `var` match `pattern` (`NAME` or `PREFIX*`)?
fn matches(pattern: &str, var: &str, fold: bool) -> bool {
    let eq = |a: &str, b: &str| {
        if fold {
            a.eq_ignore_ascii_case(b)
        } else {
            a == b
        }
    };
    match pattern.strip_suffix('*') {
        Some(prefix) => {
            var.len() >= prefix.len() && var.get(..prefix.len()).is_some_and(|p| eq(p, prefix))
        }
        None => eq(pattern, var),
    }
}

/// The family whose entry names `program` (`python3.12` is `python`).
fn family(program: &str) -> &str {
    let base = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if base.is_empty() { program } else { base }
}

fn entry_risk(e: &Entry, var: &str) -> bool {
    e.reads.iter().any(|p| matches(p, var, e.fold))
        && !e.inert.iter().any(|p| matches(p, var, e.fold))
}

/// Why setting `var` for `program` makes it opaque, if it does.
pub(crate) fn risk(program: &str, var: &str) -> Option<String> {
    let fam = family(program);
    let hit = entry_risk(&EVERY_PROGRAM, var)
        || ENTRIES
            .iter()
            .filter(|e| e.programs.iter().any(|p| *p == program || *p == fam))
            .any(|e| entry_risk(e, var));
    hit.then(|| {
        format!("`{program}` reads `{var}`, which can carry its options, code or configuration")
    })
}

/// Why setting `var` for programs not known yet (`export VAR`) makes the
/// command opaque: some program the analysis knows reads it and it is not
/// inert for that program. A Makefile's variables are left out: any name
/// may be one.
pub(crate) fn risk_any(var: &str) -> Option<String> {
    let reader = if entry_risk(&EVERY_PROGRAM, var) {
        Some("every program")
    } else {
        ENTRIES
            .iter()
            .filter(|e| !e.reads.contains(&"*"))
            .find(|e| entry_risk(e, var))
            .and_then(|e| e.programs.first().copied())
    }?;
    Some(format!(
        "`{var}` is read by `{reader}` and can carry its options, code or configuration"
    ))
}

#[cfg(test)]
mod tests {
    use super::{risk, risk_any};

    #[test]
    fn per_program() {
        assert!(risk("tar", "TAR_OPTIONS").is_some());
        assert!(risk("tar", "HOME").is_none());
        assert!(risk("cat", "LD_PRELOAD").is_some());
        assert!(risk("cat", "TAR_OPTIONS").is_none());
        assert!(risk("python3.12", "PYTHONPATH").is_some());
        assert!(risk("python3", "PYTHONUNBUFFERED").is_none());
        assert!(risk("npm", "NPM_CONFIG_SCRIPT_SHELL").is_some());
        assert!(risk("npm", "NPM_CONFIG_LOGLEVEL").is_none());
        assert!(risk("cargo", "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER").is_some());
        assert!(risk("cargo", "RUST_BACKTRACE").is_none());
        assert!(risk("make", "CC").is_some());
        assert!(risk("git", "GIT_AUTHOR_NAME").is_none());
        assert!(risk("git", "GIT_ALLOW_PROTOCOL").is_some());
    }

    #[test]
    fn any_program() {
        assert!(risk_any("LESSKEYIN").is_some());
        assert!(risk_any("ZIPOPT").is_some());
        assert!(risk_any("NODE_ENV").is_none());
        assert!(risk_any("MY_VARIABLE").is_none());
        assert!(risk_any("RUST_LOG").is_none());
    }
}
