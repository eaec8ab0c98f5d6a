//! The compiled-policy cache: one file per combination of inputs, valid
//! only while every source file still has the content it was compiled
//! from. Corrupt or stale entries are ignored, never trusted.
//!
//! An entry is the hash of its payload (8 bytes, little-endian) followed by
//! the payload: its header ([`Entry`]) in postcard, a compact binary
//! encoding (the shim reads one on every command, and JSON took several
//! times longer to decode), then the policy as
//! [`Policy::to_cache_bytes`] wrote it.

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

/// What an entry says about itself, before the policy's bytes.
#[derive(Serialize, Deserialize)]
struct Entry {
    version: String,
    /// Every file source and the hash of the content it was compiled from.
    files: Vec<(String, u64)>,
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
    /// The files the key was computed from.
    pub(crate) fn read_paths(&self) -> impl Iterator<Item = &Path> {
        self.read.iter().map(|(p, _)| p.as_path())
    }

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

/// What tells this executable from another build: the linker's build ID
/// (read from memory, no system call), else its path, size and
/// modification time.
fn exe_identity() -> Option<Vec<u8>> {
    if let Some(id) = build_id() {
        return Some(id);
    }
    let exe = std::env::current_exe().ok()?;
    let meta = std::fs::metadata(&exe).ok()?;
    let mut h = DefaultHasher::new();
    (exe, meta.len(), meta.modified().ok()?).hash(&mut h);
    Some(h.finish().to_le_bytes().to_vec())
}

/// The GNU build ID note of the main program, when the linker wrote one.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn build_id() -> Option<Vec<u8>> {
    use std::ffi::{c_int, c_void};
    const NT_GNU_BUILD_ID: u32 = 3;

    unsafe extern "C" fn first_object(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        out: *mut c_void,
    ) -> c_int {
        // SAFETY: the C library hands a valid `info` for the duration of
        // the call, and `out` is the `Option` passed below.
        unsafe {
            let info = &*info;
            if info.dlpi_phdr.is_null() {
                return 1;
            }
            let headers = std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum));
            for h in headers.iter().filter(|h| h.p_type == libc::PT_NOTE) {
                let notes = std::slice::from_raw_parts(
                    (info.dlpi_addr as usize).wrapping_add(h.p_vaddr as usize) as *const u8,
                    h.p_memsz as usize,
                );
                let align = if h.p_align == 8 { 8 } else { 4 };
                if let Some(id) = find_note(notes, align, NT_GNU_BUILD_ID, b"GNU\0") {
                    *(out as *mut Option<Vec<u8>>) = Some(id.to_vec());
                    break;
                }
            }
        }
        1 // the first object is the main program: stop there
    }

    let mut id: Option<Vec<u8>> = None;
    // SAFETY: the callback only reads the headers and notes it is given.
    unsafe { libc::dl_iterate_phdr(Some(first_object), (&raw mut id).cast()) };
    id
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn build_id() -> Option<Vec<u8>> {
    None
}

/// The descriptor of the first ELF note of type `kind` owned by `name`
/// (with its NUL) in a note segment whose entries are padded to `align`
/// bytes (4, or 8 for a segment aligned so).
#[cfg(any(test, all(target_os = "linux", target_env = "gnu")))]
fn find_note<'a>(mut notes: &'a [u8], align: usize, kind: u32, name: &[u8]) -> Option<&'a [u8]> {
    let word = |b: &[u8], i: usize| -> Option<usize> {
        Some(u32::from_ne_bytes(b.get(i..i.checked_add(4)?)?.try_into().ok()?) as usize)
    };
    let padded = |n: usize| n.checked_next_multiple_of(align);
    while notes.len() >= 12 {
        let (name_len, desc_len, note_kind) = (word(notes, 0)?, word(notes, 4)?, word(notes, 8)?);
        let desc_at = padded(name_len)?.checked_add(12)?;
        let desc = notes.get(desc_at..desc_at.checked_add(desc_len)?)?;
        if note_kind == kind as usize && notes.get(12..12 + name_len)? == name {
            return Some(desc);
        }
        notes = notes.get(desc_at.checked_add(padded(desc_len)?)?..)?;
    }
    None
}

trait HashInto {
    fn hash_into(&self, h: &mut DefaultHasher);
}

impl HashInto for aileron_engine::Environment {
    fn hash_into(&self, h: &mut DefaultHasher) {
        let aileron_engine::Environment {
            home,
            data_dir,
            protected_files,
            config_home,
            runtime_dir,
            path_dirs,
        } = self;
        (
            home,
            data_dir,
            protected_files,
            config_home,
            runtime_dir,
            path_dirs,
        )
            .hash(h);
    }
}

fn entry_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.bin"))
}

/// The entry for `probe`, with the content hash of each file it was
/// compiled from, when it is intact and every such file is unchanged.
pub(crate) fn read(dir: &Path, probe: &Probe) -> Option<(Policy, Vec<(String, u64)>)> {
    let bytes = std::fs::read(entry_path(dir, &probe.key)).ok()?;
    let (sum, payload) = bytes.split_first_chunk::<8>()?;
    if u64::from_le_bytes(*sum) != hash_bytes(payload) {
        return None;
    }
    let (entry, policy) = postcard::take_from_bytes::<Entry>(payload).ok()?;
    if entry.version != env!("CARGO_PKG_VERSION") || !files_unchanged(probe, &entry.files) {
        return None;
    }
    Some((Policy::from_cache_bytes(policy).ok()?, entry.files))
}

/// Whether every file still has the content hash given (files the probe
/// already read are not read again).
pub(crate) fn files_unchanged(probe: &Probe, files: &[(String, u64)]) -> bool {
    files.iter().all(|(path, want)| {
        let known = probe
            .read
            .iter()
            .find(|(p, _)| p.as_os_str() == path.as_str());
        let have = match known {
            Some((_, hash)) => *hash,
            None => std::fs::read(path).ok().map(|b| hash_bytes(&b)),
        };
        have == Some(*want)
    })
}

/// The file sources (named by absolute path) and their content hashes.
pub(crate) fn file_hashes(sources: &[Source]) -> Vec<(String, u64)> {
    sources
        .iter()
        .filter(|s| s.name.starts_with('/'))
        .map(|s| (s.name.clone(), hash_bytes(s.text.as_bytes())))
        .collect()
}

/// Best effort: a cache that cannot be written only costs speed.
pub(crate) fn write(dir: &Path, key: &str, sources: &[Source], policy: &Policy) {
    let files = file_hashes(sources);
    let entry = Entry {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        files,
    };
    let (Ok(mut payload), Ok(policy)) = (postcard::to_stdvec(&entry), policy.to_cache_bytes())
    else {
        return;
    };
    payload.extend_from_slice(&policy);
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
    use super::{HashInto, find_note, hash_bytes};
    use std::hash::{DefaultHasher, Hasher};

    #[test]
    fn the_key_changes_with_every_fact_of_the_environment() {
        let hash = |e: &aileron_engine::Environment| {
            let mut h = DefaultHasher::new();
            e.hash_into(&mut h);
            h.finish()
        };
        let base = aileron_engine::Environment::new("/home/u");
        let mut seen = vec![hash(&base)];
        let mut variants = Vec::new();
        let mut e = base.clone();
        e.path_dirs.push("/home/u/bin".into());
        variants.push(e);
        let mut e = base.clone();
        e.config_home = "/home/u/cfg".into();
        variants.push(e);
        let mut e = base.clone();
        e.runtime_dir = "/run/user/1".into();
        variants.push(e);
        let mut e = base.clone();
        e.protected_files.push("/p/.claude/settings.json".into());
        variants.push(e);
        for v in &variants {
            let h = hash(v);
            assert!(!seen.contains(&h), "{v:?}");
            seen.push(h);
        }
    }

    fn note(name: &[u8], kind: u32, desc: &[u8]) -> Vec<u8> {
        let mut n = Vec::new();
        n.extend((name.len() as u32).to_ne_bytes());
        n.extend((desc.len() as u32).to_ne_bytes());
        n.extend(kind.to_ne_bytes());
        n.extend(name);
        n.resize(n.len().next_multiple_of(4), 0);
        n.extend(desc);
        n.resize(n.len().next_multiple_of(4), 0);
        n
    }

    #[test]
    fn the_build_id_note_is_found_among_others() {
        let mut notes = note(b"GNU\0", 1, &[0; 16]); // ABI tag
        notes.extend(note(b"Go\0", 3, b"not-gnu"));
        notes.extend(note(b"GNU\0", 3, &[0xab; 20]));
        assert_eq!(find_note(&notes, 4, 3, b"GNU\0"), Some(&[0xab; 20][..]));
        assert_eq!(find_note(&notes, 4, 7, b"GNU\0"), None);
    }

    #[test]
    fn a_truncated_note_is_not_read_past_its_end() {
        let notes = note(b"GNU\0", 3, &[0xab; 20]);
        for cut in 0..notes.len() - 3 {
            assert_eq!(
                find_note(&notes[..cut], 4, 3, b"GNU\0"),
                None,
                "cut at {cut}"
            );
        }
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn this_test_binary_has_a_build_id() {
        let id = super::build_id().expect("the linker writes a build ID");
        assert!(id.len() >= 8, "{id:?}");
    }

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
