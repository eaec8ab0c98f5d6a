//! Verdicts reused for identical actions within a rule's `cache_ttl`.
//!
//! The key is a SHA-256 of what the judge saw and who judged: the judge's
//! name and model, the rule and its prompt, and the action as data (type,
//! summary, facets, commands; never its id, time or session). A launch
//! session keeps a [`MemoryCache`]; shims and hooks, one process per
//! decision, share a [`DiskCache`] under `$AILERON_DATA`: one small file
//! per key written by rename (safe under concurrent processes), bounded in
//! number, and never trusted when it does not parse or has expired. Both
//! that and the server's database are a [`VerdictStore`] behind the memory.

use crate::{Input, JudgeConfig, JudgeDecision, Verdict};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Entries kept in memory, and files kept on disk.
pub const MAX_ENTRIES: usize = 4096;

/// A cache key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key([u8; 32]);

impl Key {
    pub fn of(judge: &JudgeConfig, input: &Input<'_>) -> Key {
        let mut h = Sha256::new();
        for part in [
            judge.name.as_str(),
            judge.provider.as_str(),
            judge.base_url.as_str(),
            judge.model.as_str(),
            input.rule.unwrap_or(""),
            input.rule_prompt.unwrap_or(""),
        ] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        // serde_json's maps are ordered: the same action, the same bytes.
        h.update(serde_json::to_vec(input.action).unwrap_or_default());
        Key(h.finalize().into())
    }

    /// The key as 64 lowercase hex digits (a file name, a database key).
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// A launch session's (or the server's) verdicts, in memory.
#[derive(Default)]
pub struct MemoryCache {
    entries: Mutex<HashMap<Key, (Instant, Verdict)>>,
}

impl MemoryCache {
    pub fn get(&self, key: &Key, now: Instant) -> Option<Verdict> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let (until, v) = entries.get(key)?;
        (now < *until).then(|| v.clone())
    }

    pub fn put(&self, key: Key, verdict: Verdict, ttl: Duration, now: Instant) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, (until, _)| *until > now);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(key, (now + ttl, verdict));
    }
}

/// Where verdicts outlive the process: a directory shared by shims and
/// hooks ([`DiskCache`]), the server's database. Synchronous: a
/// [`crate::Bench`] calls it on its blocking path. An implementation never
/// returns an expired verdict, nor one it cannot read back whole.
pub trait VerdictStore: Send + Sync {
    /// A verdict stored for `key` that is still valid at `now`.
    fn get(&self, key: &Key, now: SystemTime) -> Option<Verdict>;
    /// Stores a verdict for `ttl` (errors are ignored: a cache miss is
    /// only slower).
    fn put(&self, key: &Key, verdict: &Verdict, ttl: Duration, now: SystemTime);
}

/// Verdicts shared by the processes of one user, in a directory.
pub struct DiskCache {
    dir: PathBuf,
}

impl DiskCache {
    /// A cache in `dir` (created 0700 at the first write).
    pub fn new(dir: &Path) -> DiskCache {
        DiskCache {
            dir: dir.to_path_buf(),
        }
    }
}

impl VerdictStore for DiskCache {
    fn get(&self, key: &Key, now: SystemTime) -> Option<Verdict> {
        let text = std::fs::read_to_string(self.dir.join(key.hex())).ok()?;
        let mut parts = text.splitn(3, '\t');
        let until: u64 = parts.next()?.parse().ok()?;
        let decision = JudgeDecision::parse(parts.next()?)?;
        let reason = parts.next()?.trim_end_matches('\n');
        let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
        if now >= until || reason.is_empty() || reason.contains('\n') {
            return None;
        }
        Some(Verdict {
            decision,
            reason: reason.to_owned(),
        })
    }

    fn put(&self, key: &Key, verdict: &Verdict, ttl: Duration, now: SystemTime) {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let Ok(now) = now.duration_since(UNIX_EPOCH) else {
            return;
        };
        let until = (now + ttl).as_secs();
        let line = format!(
            "{until}\t{}\t{}\n",
            verdict.decision.as_str(),
            crate::provider::one_line(&verdict.reason)
        );
        if std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .is_err()
        {
            return;
        }
        let name = key.hex();
        let tmp = self.dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
        if written.is_err() || std::fs::rename(&tmp, self.dir.join(&name)).is_err() {
            let _ = std::fs::remove_file(&tmp);
            return;
        }
        // Bounded: now and then, the oldest files beyond the limit go.
        if key.0[0] == 0 {
            self.prune();
        }
    }
}

impl DiskCache {
    fn prune(&self) {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut files: Vec<(SystemTime, PathBuf)> = dir
            .filter_map(|e| {
                let e = e.ok()?;
                let m = e.metadata().ok()?;
                Some((m.modified().ok()?, e.path()))
            })
            .collect();
        if files.len() <= MAX_ENTRIES {
            return;
        }
        files.sort();
        for (_, path) in &files[..files.len() - MAX_ENTRIES] {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Provider;
    use serde_json::json;

    fn judge() -> JudgeConfig {
        JudgeConfig {
            name: "fast".into(),
            provider: Provider::OpenAi,
            base_url: "http://127.0.0.1:1/v1".into(),
            model: "m".into(),
            api_key_env: None,
            timeout: Duration::from_secs(5),
            max_tokens: 200,
            temperature: 0.0,
        }
    }

    #[test]
    fn keys_depend_on_what_was_judged_and_by_whom() {
        let a = json!({"type": "shell.exec", "summary": "rm -rf build"});
        let b = json!({"type": "shell.exec", "summary": "rm -rf src"});
        let input = |action| Input {
            rule: Some("r"),
            rule_prompt: None,
            action,
        };
        let j = judge();
        assert_eq!(Key::of(&j, &input(&a)), Key::of(&j, &input(&a)));
        assert_ne!(Key::of(&j, &input(&a)), Key::of(&j, &input(&b)));
        let mut other = judge();
        other.model = "m2".into();
        assert_ne!(Key::of(&j, &input(&a)), Key::of(&other, &input(&a)));
    }

    #[test]
    fn the_disk_cache_expires_and_never_trusts_a_broken_file() {
        let dir = tempfile::tempdir().unwrap();
        let cache = DiskCache::new(&dir.path().join("judge"));
        let key = Key([7; 32]);
        let v = Verdict {
            decision: JudgeDecision::Deny,
            reason: "deletes\nthe repo".into(),
        };
        let now = SystemTime::now();
        cache.put(&key, &v, Duration::from_secs(60), now);
        let got = cache.get(&key, now).unwrap();
        assert_eq!(got.decision, JudgeDecision::Deny);
        assert_eq!(got.reason, "deletes the repo");
        assert!(cache.get(&key, now + Duration::from_secs(61)).is_none());
        std::fs::write(dir.path().join("judge").join(key.hex()), "garbage").unwrap();
        assert!(cache.get(&key, now).is_none());
        std::fs::write(
            dir.path().join("judge").join(key.hex()),
            "99999999999\tallow-ish\tx\n",
        )
        .unwrap();
        assert!(cache.get(&key, now).is_none());
    }
}
