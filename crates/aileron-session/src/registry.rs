//! The running launch sessions of this user, so that `aileron approve`
//! finds them: one small JSON file per session under
//! `$AILERON_DATA/sessions/` (its socket, pid, agent, policy, start time),
//! removed when the session ends, and beside it the session's approver
//! key (mode 0600; hidden from the agent under `--enforce files`). A
//! session answers "list" and "answer" on its socket only with that key.

use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// One running session, as its file says.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub id: String,
    pub socket: PathBuf,
    pub pid: u32,
    #[serde(default)]
    pub agent: Option<String>,
    /// The policy files in force when it started.
    #[serde(default)]
    pub policy: Vec<String>,
    #[serde(default)]
    pub cwd: String,
    /// RFC 3339.
    #[serde(default)]
    pub started: String,
}

/// The directory of the session files.
pub fn dir(data_dir: &Path) -> PathBuf {
    data_dir.join("sessions")
}

/// The approver key's file of session `id` (a secret: the agent must not read it).
pub fn key_path(data_dir: &Path, id: &str) -> PathBuf {
    dir(data_dir).join(format!("{id}.key"))
}

/// A session's files, removed when dropped.
pub struct Registration {
    files: Vec<PathBuf>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// Writes `entry` and its approver `key`.
pub fn register(data_dir: &Path, entry: &Entry, key: &str) -> std::io::Result<Registration> {
    let d = dir(data_dir);
    std::fs::create_dir_all(&d)?;
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700))?;
    let key_file = key_path(data_dir, &entry.id);
    let json_file = d.join(format!("{}.json", entry.id));
    let mut reg = Registration { files: Vec::new() };
    for (path, bytes) in [
        (&key_file, key.as_bytes().to_vec()),
        (&json_file, serde_json::to_vec(entry).unwrap_or_default()),
    ] {
        let tmp = path.with_extension("tmp");
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&bytes)?;
        std::fs::rename(&tmp, path)?;
        reg.files.push(path.clone());
    }
    Ok(reg)
}

/// The sessions running now, oldest first; files of sessions that are
/// gone (their process ended without removing them) are removed.
pub fn list(data_dir: &Path) -> Vec<Entry> {
    let Ok(entries) = std::fs::read_dir(dir(data_dir)) else {
        return Vec::new();
    };
    let mut found: Vec<Entry> = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Some(entry) = std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice::<Entry>(&b).ok())
        else {
            continue;
        };
        if alive(entry.pid) && entry.socket.exists() {
            found.push(entry);
        } else {
            let _ = std::fs::remove_file(&path);
            let _ = std::fs::remove_file(key_path(data_dir, &entry.id));
        }
    }
    found.sort_by(|a, b| a.started.cmp(&b.started).then(a.id.cmp(&b.id)));
    found
}

/// The approver key of session `id`, if this user can read it.
pub fn key(data_dir: &Path, id: &str) -> Option<String> {
    std::fs::read_to_string(key_path(data_dir, id))
        .ok()
        .map(|k| k.trim().to_owned())
        .filter(|k| !k.is_empty())
}

fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0
        && (unsafe { libc::kill(pid as libc::pid_t, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registration_is_listed_until_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let sock = tmp.path().join("s.sock");
        std::fs::write(&sock, "").unwrap();
        let entry = Entry {
            id: "abc".into(),
            socket: sock,
            pid: std::process::id(),
            agent: Some("claude".into()),
            ..Entry::default()
        };
        let reg = register(tmp.path(), &entry, "k3y").unwrap();
        assert_eq!(list(tmp.path()), vec![entry.clone()]);
        assert_eq!(key(tmp.path(), "abc").as_deref(), Some("k3y"));
        let mode = std::fs::metadata(key_path(tmp.path(), "abc"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        drop(reg);
        assert!(list(tmp.path()).is_empty());
        assert_eq!(key(tmp.path(), "abc"), None);
    }

    #[test]
    fn a_dead_session_s_files_are_cleaned_up() {
        let tmp = tempfile::tempdir().unwrap();
        let entry = Entry {
            id: "dead".into(),
            socket: tmp.path().join("gone.sock"),
            pid: std::process::id(),
            ..Entry::default()
        };
        let reg = register(tmp.path(), &entry, "k").unwrap();
        std::mem::forget(reg);
        assert!(list(tmp.path()).is_empty());
        assert!(!key_path(tmp.path(), "dead").exists());
    }
}
