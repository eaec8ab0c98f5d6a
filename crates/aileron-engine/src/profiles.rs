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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Environment, Layer, Policy, Source};

    /// Every built-in profile loads on its own and passes its own examples.
    #[test]
    fn each_builtin_profile_passes_its_examples() {
        for (name, text) in PROFILES {
            let src = Source {
                name: format!("/profiles/{name}.yaml"),
                text: (*text).to_owned(),
                layer: Layer::Profile,
                base_dir: "/profiles".into(),
            };
            let policy = Policy::from_sources(&[src], &Environment::new("/home/u"))
                .unwrap_or_else(|e| panic!("{name}: {e:?}"));
            assert!(!policy.tests.is_empty(), "{name} has no examples");
            for outcome in policy.run_tests() {
                assert!(
                    outcome.passed,
                    "{name}: {} {:?}",
                    outcome.name, outcome.failure
                );
            }
        }
    }

    #[test]
    fn language_markers_name_existing_profiles() {
        for (_, profile) in LANGUAGE_MARKERS {
            assert!(builtin(profile).is_some(), "{profile}");
        }
    }
}
