//! Built-in profiles: YAML files of the same schema, shipped in the binary.

/// Display-name prefix of built-in profile sources.
pub const BUILTIN_PREFIX: &str = "<builtin>/";

/// Every built-in profile: (name, YAML text).
pub const PROFILES: &[(&str, &str)] = &[
    ("os/linux", include_str!("../profiles/os/linux.yaml")),
    ("os/darwin", include_str!("../profiles/os/darwin.yaml")),
    ("lang/go", include_str!("../profiles/lang/go.yaml")),
    ("lang/rust", include_str!("../profiles/lang/rust.yaml")),
    ("lang/node", include_str!("../profiles/lang/node.yaml")),
    ("lang/python", include_str!("../profiles/lang/python.yaml")),
];

/// The text of a built-in profile.
pub fn builtin(name: &str) -> Option<&'static str> {
    PROFILES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// Project files that select a language profile (SPEC 4, layer 3).
pub const LANGUAGE_MARKERS: &[(&str, &str)] = &[
    ("go.mod", "lang/go"),
    ("Cargo.toml", "lang/rust"),
    ("package.json", "lang/node"),
    ("pyproject.toml", "lang/python"),
    ("requirements.txt", "lang/python"),
    ("setup.py", "lang/python"),
];
