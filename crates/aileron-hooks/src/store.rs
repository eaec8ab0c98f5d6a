//! A hook lives for one tool call; the agent session it belongs to lives
//! longer. Its "always" answers, its recent calls (doom loop) and history
//! (`rate`) are kept in a small file per session, read and written under
//! an exclusive lock held for the whole decision — which also keeps the
//! session to one prompt at a time when calls arrive in parallel.

use aileron_session::SavedSession;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// One agent session's file, locked while held.
pub struct SessionFile {
    path: PathBuf,
    /// Held for the lifetime of this value.
    _lock: File,
}

impl SessionFile {
    /// Opens (creating) and locks the state of `agent`'s `session` under
    /// `dir`, waiting for any other hook of the same session.
    pub fn lock(dir: &Path, agent: &str, session: &str) -> std::io::Result<SessionFile> {
        let dir = dir.join(agent);
        std::fs::create_dir_all(&dir)?;
        let name = file_name(session);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(format!("{name}.lock")))?;
        lock.lock()?;
        Ok(SessionFile {
            path: dir.join(format!("{name}.json")),
            _lock: lock,
        })
    }

    /// What the session's earlier calls left; nothing for a new session. A
    /// damaged file loses only convenience (approvals, loop counts), never safety.
    pub fn load(&self) -> SavedSession {
        let mut text = String::new();
        match File::open(&self.path).and_then(|mut f| f.read_to_string(&mut text)) {
            Ok(_) => serde_json::from_str(&text).unwrap_or_default(),
            Err(_) => SavedSession::default(),
        }
    }

    /// Replaces the saved state, in place: every reader holds the lock, so
    /// none sees a half-written file. (Neither write-and-rename nor
    /// truncate-and-write: ext4 flushes such files to disk, which made every
    /// hook call wait for the disk.) A write cut short leaves a file
    /// [`load`] ignores.
    ///
    /// [`load`]: SessionFile::load
    pub fn save(&self, saved: &SavedSession) -> std::io::Result<()> {
        let bytes = serde_json::to_vec(saved).map_err(std::io::Error::other)?;
        let mut f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.path)?;
        f.write_all(&bytes)?;
        // Cut what is left of a longer old state (never to zero first,
        // which ext4 would also flush).
        f.set_len(bytes.len() as u64)
    }
}

/// A file name that cannot escape the directory, whatever the agent sent.
fn file_name(session: &str) -> String {
    let clean: String = session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(128)
        .collect();
    match clean.trim_start_matches('.') {
        "" => "default".to_owned(),
        s => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_names_stay_in_their_directory() {
        assert_eq!(file_name("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(file_name(""), "default");
        assert_eq!(file_name("5f0c3a8e-2b1d"), "5f0c3a8e-2b1d");
    }

    #[test]
    fn saves_and_loads_under_a_lock() {
        let dir = tempfile::tempdir().unwrap();
        let f = SessionFile::lock(dir.path(), "codex", "s1").unwrap();
        assert!(f.load().recent.is_empty());
        let saved = SavedSession {
            recent: vec!["ls".into()],
            ..SavedSession::default()
        };
        f.save(&saved).unwrap();
        drop(f);
        let f = SessionFile::lock(dir.path(), "codex", "s1").unwrap();
        assert_eq!(f.load().recent, vec!["ls".to_owned()]);
    }
}
