//! The compiled-policy cache: one JSON file per combination of inputs,
//! valid only while every source file still has the content it was
//! compiled from. Corrupt or stale entries are ignored, never trusted.

use crate::{LoadOptions, path_str};
use aileron_engine::{Policy, Source};
use serde::{Deserialize, Serialize};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;

/// Whether a load used the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheOutcome {
    Hit,
    Miss,
    Disabled,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    version: String,
    /// Every file source and the hash of the content it was compiled from.
    files: Vec<(String, u64)>,
    policy: Policy,
}

fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// The inputs that decide which files are read: the project and user files'
/// content, the language markers present, the environment and this binary.
pub(crate) fn key(opts: &LoadOptions, project_file: Option<&Path>) -> String {
    let mut h = DefaultHasher::new();
    env!("CARGO_PKG_VERSION").hash(&mut h);
    build_id().hash(&mut h);
    opts.environment().hash_into(&mut h);
    (opts.user_settings, opts.auto_profiles, opts.run_tests).hash(&mut h);
    let project_dir = project_file.and_then(Path::parent).unwrap_or(&opts.cwd);
    if let Some(p) = project_file {
        path_str(p).hash(&mut h);
        std::fs::read(p).ok().hash(&mut h);
    }
    if opts.auto_profiles {
        for (marker, _) in aileron_engine::profiles::LANGUAGE_MARKERS {
            project_dir.join(marker).is_file().hash(&mut h);
        }
    }
    if opts.user_settings {
        std::fs::read(opts.home.join(".aileron/settings.yaml"))
            .ok()
            .hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// The running executable's size and modification time: a rebuilt
/// binary may compile the same sources differently (new built-in rules),
/// so its cache entries are its own.
fn build_id() -> Option<(u64, std::time::SystemTime)> {
    let meta = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

trait HashInto {
    fn hash_into(&self, h: &mut DefaultHasher);
}

impl HashInto for aileron_engine::Environment {
    fn hash_into(&self, h: &mut DefaultHasher) {
        (&self.home, &self.data_dir, &self.protected_files).hash(h);
    }
}

pub(crate) fn read(dir: &Path, key: &str) -> Option<Policy> {
    let bytes = std::fs::read(dir.join(format!("{key}.json"))).ok()?;
    let entry: Entry = serde_json::from_slice(&bytes).ok()?;
    if entry.version != env!("CARGO_PKG_VERSION") {
        return None;
    }
    for (path, want) in &entry.files {
        if hash_bytes(&std::fs::read(path).ok()?) != *want {
            return None;
        }
    }
    Some(entry.policy)
}

/// Best effort: a cache that cannot be written only costs speed.
pub(crate) fn write(dir: &Path, key: &str, sources: &[Source], policy: &Policy) {
    let files = sources
        .iter()
        .filter(|s| s.name.starts_with('/'))
        .map(|s| (s.name.clone(), hash_bytes(s.text.as_bytes())))
        .collect();
    let entry = Entry {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        files,
        policy: policy.clone(),
    };
    let Ok(json) = serde_json::to_vec(&entry) else {
        return;
    };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!("{key}.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, json).is_ok()
        && std::fs::rename(&tmp, dir.join(format!("{key}.json"))).is_err()
    {
        let _ = std::fs::remove_file(&tmp);
    }
}
