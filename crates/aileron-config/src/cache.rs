//! The compiled-policy cache: one file per combination of inputs, valid
//! only while every source file still has the content it was compiled
//! from. Corrupt or stale entries are ignored, never trusted.
//!
//! An entry is the hash of its payload (8 bytes, little-endian) followed by
//! the payload in postcard, a compact binary encoding: the shim reads one on
//! every command, and JSON took several times longer to decode.

use crate::{LoadOptions, path_str};
use aileron_engine::{Policy, Source};
use serde::{Deserialize, Serialize};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

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

/// A 64-bit digest of file contents and cache payloads: it tells an edited
/// source or a damaged entry from the one compiled, 8 bytes per step
/// (SipHash, at 1 byte per step, was a tenth of the shim's work). Not a
/// defence against forgery: whoever can write these files can write the
/// policy itself.
fn hash_bytes(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        h = (h ^ w).wrapping_mul(K).rotate_left(29);
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    h = (h ^ u64::from_le_bytes(tail)).wrapping_mul(K);
    // splitmix64's finalizer: every input bit reaches every output bit.
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// Which entry to look for, and the files already read to compute it.
pub(crate) struct Probe {
    pub key: String,
    /// Path and content hash of each file read for the key (`None`: unreadable),
    /// so that checking the entry does not read them again.
    read: Vec<(PathBuf, Option<u64>)>,
}

impl Probe {
    fn content_hash(&mut self, path: PathBuf) -> Option<u64> {
        let hash = std::fs::read(&path).ok().map(|b| hash_bytes(&b));
        self.read.push((path, hash));
        hash
    }
}

/// The inputs that decide which files are read (the project and user files'
/// content, the language markers present, the environment) and this binary.
pub(crate) fn key(opts: &LoadOptions, project_file: Option<&Path>) -> Probe {
    let mut probe = Probe {
        key: String::new(),
        read: Vec::new(),
    };
    let mut h = DefaultHasher::new();
    env!("CARGO_PKG_VERSION").hash(&mut h);
    // postcard does not name fields: a rebuilt binary, whose `Policy` may be
    // laid out differently, must not read an older binary's entries.
    exe_identity().hash(&mut h);
    opts.environment().hash_into(&mut h);
    (
        opts.user_settings,
        opts.auto_profiles,
        opts.run_tests,
        opts.server_rules,
    )
        .hash(&mut h);
    let project_dir = project_file.and_then(Path::parent).unwrap_or(&opts.cwd);
    if let Some(p) = project_file {
        path_str(p).hash(&mut h);
        probe.content_hash(p.to_path_buf()).hash(&mut h);
    }
    if opts.auto_profiles {
        for (marker, _) in aileron_engine::profiles::LANGUAGE_MARKERS {
            project_dir.join(marker).is_file().hash(&mut h);
        }
    }
    if opts.user_settings {
        probe
            .content_hash(opts.home.join(".aileron/settings.yaml"))
            .hash(&mut h);
    }
    if opts.server_rules {
        probe
            .content_hash(opts.data_dir.join(crate::server_rules::SERVER_RULES_FILE))
            .hash(&mut h);
    }
    probe.key = format!("{:016x}", h.finish());
    probe
}

/// This executable's path, size and modification time.
fn exe_identity() -> Option<(PathBuf, u64, std::time::SystemTime)> {
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(&exe).ok()?;
    Some((exe, meta.len(), meta.modified().ok()?))
}

trait HashInto {
    fn hash_into(&self, h: &mut DefaultHasher);
}

impl HashInto for aileron_engine::Environment {
    fn hash_into(&self, h: &mut DefaultHasher) {
        (&self.home, &self.data_dir, &self.protected_files).hash(h);
    }
}

fn entry_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.bin"))
}

pub(crate) fn read(dir: &Path, probe: &Probe) -> Option<Policy> {
    let bytes = std::fs::read(entry_path(dir, &probe.key)).ok()?;
    let (sum, payload) = bytes.split_first_chunk::<8>()?;
    if u64::from_le_bytes(*sum) != hash_bytes(payload) {
        return None;
    }
    let entry: Entry = postcard::from_bytes(payload).ok()?;
    if entry.version != env!("CARGO_PKG_VERSION") {
        return None;
    }
    for (path, want) in &entry.files {
        let known = probe
            .read
            .iter()
            .find(|(p, _)| p.as_os_str() == path.as_str());
        let have = match known {
            Some((_, hash)) => *hash,
            None => std::fs::read(path).ok().map(|b| hash_bytes(&b)),
        };
        if have != Some(*want) {
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
    let Ok(payload) = postcard::to_stdvec(&entry) else {
        return;
    };
    let mut bytes = hash_bytes(&payload).to_le_bytes().to_vec();
    bytes.extend_from_slice(&payload);
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!("{key}.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, entry_path(dir, key)).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::hash_bytes;

    #[test]
    fn digest_sees_every_byte_and_the_length() {
        let base = b"version: 1\nallow: [\"git *\"]\n".to_vec();
        let h = hash_bytes(&base);
        for i in 0..base.len() {
            let mut b = base.clone();
            b[i] ^= 1;
            assert_ne!(hash_bytes(&b), h, "a change at byte {i}");
        }
        let mut longer = base.clone();
        longer.push(0);
        assert_ne!(hash_bytes(&longer), h, "a trailing zero byte");
        assert_ne!(hash_bytes(b""), hash_bytes(&[0]));
        assert_eq!(hash_bytes(&base), h, "stable");
    }
}
