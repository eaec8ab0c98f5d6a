//! Locking Aileron's own files away from the agent's tree, whatever
//! program or system call it uses.
//!
//! Landlock grants rights to whole hierarchies and cannot take one file
//! out of a writable directory (a project's `aileron.yaml` beside its
//! sources). So the tree gets a private mount namespace in which each
//! protected path is bind-mounted read-only over itself: a write fails
//! with `EROFS`, a rename, unlink or link over it with `EBUSY` or `EXDEV`
//! (`O_TMPFILE` + `linkat` included), and the secrets (tokens, the
//! database) are covered by an empty read-only file ([`Spec::cover`]).
//! The seccomp filter refuses every call that changes mounts, so the
//! tree cannot undo this even as root. Landlock then adds what only it
//! can: the tree writes only in the places
//! `aileron launch` names (the project, the temporary directories, the
//! agent's state), cannot signal or trace processes outside it (the
//! supervisor) nor reach the abstract Unix sockets of the host (ABI 6).
//!
//! With [`Spec::listen`], the tree also gets a network namespace of its
//! own: loopback only, on which the child listens, before anything of the
//! agent runs, on the ports of the session's gateways (the egress proxy,
//! the database gateways) and hands each listener to `aileron launch`,
//! which passes it on to the gateway outside: the tree reaches the world
//! only through what those decide. With [`Spec::dns`] it also listens on
//! `127.0.0.1:53` (UDP and TCP) for the proxy's DNS responder, and the
//! file `/etc/resolv.conf` resolves to reads `nameserver 127.0.0.1` in
//! the tree's mount namespace: the C library asks the proxy.

use crate::Error;
use crate::overlay::Overlay;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What the child does, prepared before the fork (the child may not allocate).
pub struct Lockdown {
    /// Map our ids into a new user namespace (not root: mounts need it).
    id_maps: Option<IdMaps>,
    /// Bind mounts in order: read-only (with the flags a remount keeps) or,
    /// for a directory holding protected paths, read-write.
    mounts: Vec<(CString, Option<libc::c_ulong>)>,
    /// Files (and sockets) covered by [`Lockdown::cover`].
    hidden: Vec<CString>,
    /// Directories covered by an empty read-only tmpfs.
    emptied: Vec<CString>,
    cover: Cover,
    root: CString,
    /// The working directory, entered again once the mounts are in place:
    /// until then it is the directory under the new mount of its own path.
    cwd: CString,
    /// The Landlock ruleset, and the rights a writable place gets in it
    /// (given to each cache's overlay once it is mounted: a rule on the
    /// directory below a mount is not looked at).
    landlock: Option<(i32, u64)>,
    /// Loopback listeners made in the tree's own network namespace (None:
    /// the host's network).
    listen: Option<Vec<libc::sockaddr_in>>,
    /// The box's DNS at `127.0.0.1:53`, handed over after the listeners.
    resolver: Option<Resolver>,
    /// The package caches' overlays.
    overlays: Vec<Overlay>,
    /// The directories holding what is locked or masked: a name renamed
    /// or made there wakes the guard ([`Lockdown::watch`]).
    watched: Vec<CString>,
}

/// The box's DNS: its sockets at `127.0.0.1:53`, and the file (saying
/// so) bind-mounted over the one `/etc/resolv.conf` resolves to (None:
/// there is none, and the C library asks `127.0.0.1` anyway).
struct Resolver {
    conf: CString,
    over: Option<CString>,
}

/// What the box's `resolv.conf` says: the box's own loopback, where the
/// proxy answers.
const RESOLV_CONF: &str = "# aileron launch: names are answered by the session's proxy, by policy\nnameserver 127.0.0.1\n";
/// The port the C library asks.
const DNS_PORT: u16 = 53;

/// What a hidden path shows: an empty file bound read-only over it (it
/// reads as empty, a write fails with `EROFS`), or `/dev/null` without
/// one ([`Spec::cover`]; a write to it then succeeds, and goes nowhere).
struct Cover {
    path: CString,
    /// Its (device, inode): a path showing them is covered.
    id: (u64, u64),
    /// The flags a read-only remount of a file keeps (None: a device).
    read_only: Option<libc::c_ulong>,
}

/// What the box holds the tree to.
#[derive(Clone, Copy, Debug, Default)]
pub struct Spec<'a> {
    /// Read-only (those that exist).
    pub protect: &'a [PathBuf],
    /// Unreadable: a file or a socket reads as empty ([`Spec::cover`]), a
    /// directory as empty.
    pub secrets: &'a [PathBuf],
    /// An empty file the tree cannot write, bound read-only over each
    /// secret file (None: `/dev/null`, which the box may let the tree write).
    pub cover: Option<&'a Path>,
    /// The only places the tree may write, devices included (None:
    /// everywhere but `/proc`).
    pub writable: Option<&'a [PathBuf]>,
    /// Of `secrets`, those Landlock keeps unreadable too (files and
    /// directories outside the writable places): whatever the host puts in
    /// their place during the session stays out of reach.
    pub unreadable: &'a [PathBuf],
    /// A network namespace of the tree's own, listening on these ports of
    /// 127.0.0.1 (None: the host's network).
    pub listen: Option<&'a [u16]>,
    /// With `listen`: the box's DNS, answered by the proxy on
    /// `127.0.0.1:53`; the session's own directory (the tree cannot write
    /// it) where its `resolv.conf` is written.
    pub dns: Option<&'a Path>,
    /// Package caches the tree writes copy-on-write: each `(cache, dir)`
    /// an overlay whose changes land in `dir`, never in the host's cache
    /// ([`crate::overlay`]).
    pub caches: &'a [(PathBuf, PathBuf)],
}

struct IdMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

// Landlock's ABI (linux/landlock.h).
const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: u32 = 1;
const ACCESS_FS_WRITE: u64 = (1 << 1) // WRITE_FILE
    | (1 << 4) // REMOVE_DIR
    | (1 << 5) // REMOVE_FILE
    | (1 << 6) // MAKE_CHAR
    | (1 << 7) // MAKE_DIR
    | (1 << 8) // MAKE_REG
    | (1 << 9) // MAKE_SOCK
    | (1 << 10) // MAKE_FIFO
    | (1 << 11) // MAKE_BLOCK
    | (1 << 12); // MAKE_SYM
const ACCESS_FS_READ_FILE: u64 = 1 << 2;
const ACCESS_FS_READ_DIR: u64 = 1 << 3;
const ACCESS_FS_READ: u64 = ACCESS_FS_READ_FILE | ACCESS_FS_READ_DIR;
const ACCESS_FS_REFER: u64 = 1 << 13; // ABI 2
const ACCESS_FS_TRUNCATE: u64 = 1 << 14; // ABI 3
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0; // ABI 6
const SCOPE_SIGNAL: u64 = 1 << 1; // ABI 6

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock ABI version of the running kernel (0: none).
pub fn landlock_abi() -> u32 {
    // SAFETY: the version query takes no attribute.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    if r < 0 { 0 } else { r as u32 }
}

/// Whether this kernel lets an unprivileged process stop its execs for a
/// supervisor (seccomp user notification, Linux 5.0; killable waits, 5.19).
pub fn seccomp_notify_available() -> Result<(), Error> {
    const ACTIONS: &str = "/proc/sys/kernel/seccomp/actions_avail";
    let actions = std::fs::read_to_string(ACTIONS).map_err(|source| Error::KernelSetting {
        path: ACTIONS,
        source,
    })?;
    if actions.split_whitespace().any(|a| a == "user_notif") {
        Ok(())
    } else {
        Err(Error::NoSeccompNotify)
    }
}

/// Whether this system lets any process make a user namespace.
fn user_namespaces_allowed() -> bool {
    std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1)
        > 0
}

/// Whether the child can have a private mount namespace.
pub fn mount_namespace_available() -> Result<(), Error> {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } == 0 {
        return Ok(());
    }
    let restricted = ["/proc/sys/kernel/unprivileged_userns_clone"]
        .iter()
        .any(|p| std::fs::read_to_string(p).is_ok_and(|v| v.trim() == "0"))
        || std::fs::read_to_string("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
            .is_ok_and(|v| v.trim() == "1");
    if !user_namespaces_allowed() || restricted {
        Err(Error::NoUserNamespaces)
    } else {
        Ok(())
    }
}

fn cstring(p: &Path) -> Result<CString, Error> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| Error::PathHoldsNul {
        path: p.to_path_buf(),
    })
}

impl Lockdown {
    /// Prepares the lockdown `spec` describes.
    pub fn prepare(spec: &Spec) -> Result<Lockdown, Error> {
        let Spec {
            protect,
            secrets,
            writable,
            unreadable,
            listen,
            dns,
            cover,
            caches,
        } = *spec;
        mount_namespace_available()?;
        // SAFETY: getuid/getgid have no preconditions.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        // Root too gets a user namespace of the tree's own, its ids mapped
        // to themselves: it keeps its rights over its own files, but not
        // the capabilities that reach past the box (CAP_DAC_READ_SEARCH
        // opens a masked file by its handle, CAP_NET_ADMIN moves an
        // interface into the host's network), which hold only in the
        // first namespace. (Other users' files then obey their mode bits.)
        let id_maps = (uid != 0 || user_namespaces_allowed()).then(|| IdMaps {
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
        });
        let mut read_only = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for p in protect {
            let Ok(real) = std::fs::canonicalize(p) else {
                continue;
            };
            if !seen.insert(real.clone()) {
                continue;
            }
            let c = cstring(&real)?;
            let flags = kept_flags(&c);
            read_only.push((c, flags));
        }
        // Each directory that holds a protected path becomes a mount point
        // of its own (read-write), so that it cannot be renamed or removed
        // and replaced by another holding other files (`EBUSY`).
        let holders: std::collections::BTreeSet<PathBuf> = seen
            .iter()
            .flat_map(|p| p.ancestors().skip(1))
            .filter(|a| a.parent().is_some() && !seen.contains(*a))
            .map(Path::to_path_buf)
            .collect();
        let mut mounts: Vec<(CString, Option<libc::c_ulong>)> = read_only
            .into_iter()
            .map(|(c, keep)| (c, Some(keep)))
            .collect();
        for h in holders {
            mounts.push((cstring(&h)?, None));
        }
        // Parents before what they hold, so that each lands on top.
        mounts.sort_by_key(|(c, _)| c.as_bytes().len());
        let (mut hidden, mut emptied) = (Vec::new(), Vec::new());
        for p in secrets {
            let Ok(real) = std::fs::canonicalize(p) else {
                continue;
            };
            match std::fs::metadata(&real) {
                Ok(m) if m.is_dir() => emptied.push(cstring(&real)?),
                Ok(_) => hidden.push(cstring(&real)?),
                Err(_) => {}
            }
        }
        let watched = watched_dirs(mounts.iter().map(|(c, _)| c).chain(&hidden));
        let landlock = Self::ruleset(writable, unreadable)?;
        Ok(Lockdown {
            id_maps,
            mounts,
            hidden,
            emptied,
            cover: Cover::prepare(cover)?,
            root: CString::from(c"/"),
            cwd: cstring(&std::env::current_dir().map_err(Error::WorkingDirectory)?)?,
            landlock,
            listen: listen.map(|ports| ports.iter().map(|p| loopback(*p)).collect()),
            resolver: match dns.filter(|_| listen.is_some()) {
                Some(dir) => Some(Resolver::prepare(dir)?),
                None => None,
            },
            watched,
            overlays: caches
                .iter()
                .filter(|(cache, _)| cache.is_dir())
                .map(|(cache, dir)| Overlay::prepare(cache, dir))
                .collect::<Result<_, _>>()?,
        })
    }

    /// In the first process of the tree's PID namespace: a `/proc` of its
    /// own, which shows the tree's processes only (the host's environments,
    /// memory maps and roots out of sight). A system that refuses the
    /// mount (a container whose `/proc` is partly covered) keeps the
    /// host's, where Landlock still keeps the tree from other processes.
    ///
    /// # Safety
    /// Between fork and exec, before the seccomp filter (which refuses mounts).
    pub unsafe fn mount_proc(&self) {
        // SAFETY: a mount of a new procfs on /proc of the private namespace.
        unsafe {
            libc::mount(
                c"proc".as_ptr(),
                c"/proc".as_ptr(),
                c"proc".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            );
        }
    }

    /// An inotify descriptor watching the directories that hold what is
    /// locked or masked (-1: none): the guard covers again as soon as the
    /// host renames a file over a locked path, not at its next round.
    ///
    /// # Safety
    /// Between fork and exec (system calls on paths prepared before).
    pub unsafe fn watch(&self) -> i32 {
        // SAFETY: inotify calls on NUL-ended paths prepared before the fork.
        unsafe {
            let fd = libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC);
            if fd < 0 {
                return -1;
            }
            let events = libc::IN_MOVED_TO | libc::IN_CREATE | libc::IN_DELETE;
            for dir in &self.watched {
                libc::inotify_add_watch(fd, dir.as_ptr(), events);
            }
            fd
        }
    }

    /// Outside the tree, in its mount namespace: covers again what a
    /// process of the host uncovered by replacing it (an editor's save, a
    /// `git config`, a `docker login`: a new file renamed over the path
    /// detaches the mount that covered it), as [`Lockdown::enter`] did.
    /// Called when [`Lockdown::watch`] sees a change, and every few
    /// milliseconds, while the tree lives.
    ///
    /// # Safety
    /// Between fork and exec: plain system calls on prepared strings.
    pub unsafe fn cover_again(&self) {
        // SAFETY: stat and mount calls on NUL-ended paths prepared before the fork.
        unsafe {
            for (path, read_only) in &self.mounts {
                let Some(keep) = read_only else { continue };
                let mut st: libc::statvfs = std::mem::zeroed();
                if libc::statvfs(path.as_ptr(), &mut st) == 0 && st.f_flag & libc::ST_RDONLY == 0 {
                    let bound = libc::mount(
                        path.as_ptr(),
                        path.as_ptr(),
                        std::ptr::null(),
                        libc::MS_BIND,
                        std::ptr::null(),
                    ) == 0;
                    if bound {
                        libc::mount(
                            std::ptr::null(),
                            path.as_ptr(),
                            std::ptr::null(),
                            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | keep,
                            std::ptr::null(),
                        );
                    }
                }
            }
            for path in &self.hidden {
                let mut st: libc::stat = std::mem::zeroed();
                let covered = self.cover.covers(&mut st, path);
                if !covered && libc::lstat(path.as_ptr(), &mut st) == 0 {
                    let _ = self.cover.over(path);
                }
            }
        }
    }

    /// How many listeners [`Lockdown::enter`] sends: the gateways' (in
    /// the order of [`Spec::listen`]), then the DNS's UDP socket and TCP
    /// listener ([`Lockdown::dns_sockets`]).
    pub fn listeners(&self) -> usize {
        self.listen.as_ref().map_or(0, Vec::len) + self.dns_sockets()
    }

    /// How many of the listeners sent are the box's DNS (last).
    pub fn dns_sockets(&self) -> usize {
        if self.resolver.is_some() { 2 } else { 0 }
    }

    /// Whether the tree gets a network namespace of its own.
    pub fn own_network(&self) -> bool {
        self.listen.is_some()
    }

    /// The Landlock ruleset: signals confined to the tree (ABI 6), writes to
    /// `writable` (when given), and, with `unreadable`, reads to everything
    /// but those ([`read_rules`]). None when the kernel has nothing to add.
    /// The Landlock ruleset, and the rights a writable place gets in it.
    fn ruleset(
        writable: Option<&[PathBuf]>,
        unreadable: &[PathBuf],
    ) -> Result<Option<(i32, u64)>, Error> {
        let abi = landlock_abi();
        if writable.is_some() && abi == 0 {
            return Err(Error::NoLandlockForWritable);
        }
        if abi == 0 {
            return Ok(None);
        }
        let mut fs = ACCESS_FS_WRITE;
        if abi >= 2 {
            fs |= ACCESS_FS_REFER;
        }
        if abi >= 3 {
            fs |= ACCESS_FS_TRUNCATE;
        }
        let reads = read_rules(unreadable);
        let handled = if reads.is_empty() {
            fs
        } else {
            fs | ACCESS_FS_READ
        };
        let scoped = if abi >= 6 {
            SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET
        } else {
            0
        };
        let attr = RulesetAttr {
            handled_access_fs: handled,
            handled_access_net: 0,
            scoped,
        };
        let size = if abi >= 6 { 24 } else { 8 };
        // SAFETY: attr is a ruleset attribute of at least `size` bytes.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &attr as *const RulesetAttr,
                size as usize,
                0u32,
            )
        } as i32;
        if fd < 0 {
            return Err(Error::LandlockRuleset(std::io::Error::last_os_error()));
        }
        let places: Vec<PathBuf> = match writable {
            // The devices the tree writes are named there, one by one
            // (not the whole of /dev: a disk, /dev/kmsg, a file made there).
            Some(w) => w.to_vec(),
            // Everywhere but /proc: writing `/proc/PID/mem` would change an
            // allowed program after its exec was checked, as a debugger
            // would (and `ptrace` is refused).
            None => std::fs::read_dir("/")
                .map_err(Error::ListRoot)?
                .flatten()
                .filter(|e| e.file_name() != "proc")
                .map(|e| e.path())
                .collect(),
        };
        const FILE_RIGHTS: u64 = (1 << 1) | ACCESS_FS_TRUNCATE | ACCESS_FS_READ_FILE;
        // Where the tree writes, it reads too.
        let write_rights = if reads.is_empty() {
            fs
        } else {
            fs | ACCESS_FS_READ
        };
        let rules = places.into_iter().map(|p| (p, write_rights)).chain(reads);
        for (place, access) in rules {
            let Ok(target) = open_path(&place) else {
                continue;
            };
            let is_dir = target.metadata().is_ok_and(|m| m.is_dir());
            let access = if is_dir { access } else { access & FILE_RIGHTS };
            if let Err(source) = add_rule(fd, std::os::fd::AsRawFd::as_raw_fd(&target), access) {
                return Err(Error::LandlockRule {
                    path: place,
                    source,
                });
            }
        }
        Ok(Some((fd, write_rights)))
    }

    /// In the tree's first process, after its own `/proc` is mounted:
    /// lets the tree read it (a new mount, which the rules made before
    /// the fork do not name).
    ///
    /// # Safety
    /// Between fork and exec, before [`Lockdown::restrict`].
    pub unsafe fn read_new_proc(&self) {
        let Some((fd, _)) = self.landlock else { return };
        // SAFETY: an O_PATH descriptor of /proc and a rule naming it.
        unsafe {
            let proc = libc::open(c"/proc".as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
            if proc >= 0 {
                let _ = add_rule(fd, proc, ACCESS_FS_READ);
                libc::close(proc);
            }
        }
    }

    /// In the child: enters the private mount namespace and mounts the
    /// protected paths read-only, the secrets over with `/dev/null`; with
    /// a network namespace, sends its listeners over `sock`.
    pub fn enter(&self, sock: i32) -> std::io::Result<()> {
        let err = std::io::Error::last_os_error;
        // SAFETY: plain system calls on strings prepared before the fork.
        unsafe {
            let mut flags = if self.id_maps.is_some() {
                libc::CLONE_NEWUSER | libc::CLONE_NEWNS
            } else {
                libc::CLONE_NEWNS
            };
            if self.listen.is_some() {
                flags |= libc::CLONE_NEWNET;
            }
            // The child's next child is the first of a PID namespace of the
            // tree's own (`spawn`): when it ends, the kernel ends every
            // process left in it, and the tree sees none of the host's.
            flags |= libc::CLONE_NEWPID;
            // System V shared memory, semaphores and message queues of the
            // host's (a segment of the user's other programs) out of reach.
            flags |= libc::CLONE_NEWIPC;
            if libc::unshare(flags) != 0 {
                return Err(err());
            }
            if let Some(m) = &self.id_maps {
                write_file(c"/proc/self/setgroups", b"deny")?;
                write_file(c"/proc/self/uid_map", &m.uid_map)?;
                write_file(c"/proc/self/gid_map", &m.gid_map)?;
            }
            if let Some(addrs) = &self.listen {
                loopback_up()?;
                for addr in addrs {
                    let fd = listen_on(addr)?;
                    let sent = crate::fdpass::send_fd(sock, fd);
                    libc::close(fd);
                    sent?;
                }
            }
            if self.resolver.is_some() {
                for fd in dns_sockets()? {
                    let sent = crate::fdpass::send_fd(sock, fd);
                    libc::close(fd);
                    sent?;
                }
            }
            // Nothing done here reaches the rest of the system.
            if libc::mount(
                std::ptr::null(),
                self.root.as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return Err(err());
            }
            // Before the masks and locks: an overlay's own directory is
            // among Aileron's files, which are read-only below.
            let mut refused = false;
            for o in &self.overlays {
                let mounted = o.mount()?;
                refused |= !mounted;
                if mounted && let Some((ruleset, rights)) = self.landlock {
                    o.writable_in(ruleset, rights)?;
                }
            }
            if refused {
                let line = c"aileron: the box cannot give the package caches a copy of their own here (overlayfs refused): they are read-only in it\n";
                libc::write(2, line.as_ptr().cast(), line.count_bytes());
            }
            // Before the masks: they may cover the session's directory.
            if let Some(r) = &self.resolver {
                r.mount()?;
            }
            for (path, read_only) in &self.mounts {
                if libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(err());
                }
                let Some(keep) = read_only else {
                    continue;
                };
                if libc::mount(
                    std::ptr::null(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | keep,
                    std::ptr::null(),
                ) != 0
                {
                    return Err(err());
                }
            }
            if libc::chdir(self.cwd.as_ptr()) != 0 {
                return Err(err());
            }
            for path in &self.hidden {
                // Gone since it was listed (a host socket whose server
                // ended), or out of the box's reach anyway (in another
                // user's directory, which its user namespace cannot
                // enter): nothing left to hide.
                if let Err(e) = self.cover.over(path)
                    && !matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EACCES))
                {
                    return Err(e);
                }
            }
            for path in &self.emptied {
                if libc::mount(
                    c"none".as_ptr(),
                    path.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"size=4k,mode=0700".as_ptr().cast(),
                ) != 0
                {
                    let e = err();
                    if !matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EACCES)) {
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }

    /// In the child, after `PR_SET_NO_NEW_PRIVS`: applies the Landlock domain.
    pub fn restrict(&self) -> std::io::Result<()> {
        if let Some((fd, _)) = self.landlock {
            // SAFETY: fd is the ruleset created before the fork.
            let r = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) };
            if r != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// `path` opened `O_PATH` (no read right needed, nothing of a device's run).
fn open_path(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH)
        .open(path)
}

/// Adds a path-beneath rule for the open `target` to the ruleset `fd`
/// (no allocation: also between fork and exec).
pub(crate) fn add_rule(fd: i32, target: i32, access: u64) -> std::io::Result<()> {
    let rule = PathBeneath {
        allowed_access: access,
        parent_fd: target,
    };
    // SAFETY: rule is a path-beneath attribute with an open descriptor.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            fd,
            RULE_PATH_BENEATH,
            &rule as *const PathBeneath,
            0u32,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The read rules that leave `unreadable` out, whatever later takes its
/// place: each directory above one of them may be listed, and each other
/// entry of those directories read beneath. A file the host renames over
/// a masked one (a new login's credentials) is then unreadable, where the
/// mount that covered the old one is gone. A link to one of them (or to
/// a directory above one) gets no rule.
pub fn read_rules(unreadable: &[PathBuf]) -> Vec<(PathBuf, u64)> {
    use std::collections::BTreeSet;
    let hidden: BTreeSet<PathBuf> = unreadable
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    let above: BTreeSet<PathBuf> = hidden
        .iter()
        .flat_map(|p| p.ancestors().skip(1))
        .map(Path::to_path_buf)
        .collect();
    let mut rules = Vec::new();
    for dir in &above {
        rules.push((dir.clone(), ACCESS_FS_READ_DIR));
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            let leads_in = |p: &Path| hidden.contains(p) || above.contains(p);
            if !leads_in(&path) && !leads_in(&real) && !hidden.iter().any(|h| h.starts_with(&real))
            {
                rules.push((path, ACCESS_FS_READ));
            }
        }
    }
    rules
}

/// The parent directories of `paths`, each once.
fn watched_dirs<'a>(paths: impl Iterator<Item = &'a CString>) -> Vec<CString> {
    let mut dirs: Vec<CString> = paths
        .filter_map(|c| {
            let p = Path::new(std::ffi::OsStr::from_bytes(c.as_bytes()));
            CString::new(p.parent()?.as_os_str().as_bytes()).ok()
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// The flags a read-only remount of `path`'s mount keeps (a user
/// namespace may not drop them).
pub(crate) fn kept_flags(path: &CString) -> libc::c_ulong {
    // SAFETY: statvfs fills the struct for a NUL-ended path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ]
    .iter()
    .filter(|(st_flag, _)| st.f_flag & st_flag != 0)
    .fold(0, |m, (_, ms_flag)| m | ms_flag)
}

impl Cover {
    /// The empty file `file` (None: `/dev/null`).
    fn prepare(file: Option<&Path>) -> Result<Cover, Error> {
        use std::os::unix::fs::MetadataExt;
        let path = file.unwrap_or(Path::new("/dev/null"));
        let c = cstring(path)?;
        let m = std::fs::metadata(path).map_err(|source| Error::Cover {
            path: path.to_path_buf(),
            source,
        })?;
        let read_only = m.is_file().then(|| kept_flags(&c));
        Ok(Cover {
            path: c,
            id: (m.dev(), m.ino()),
            read_only,
        })
    }

    /// Binds the cover over `path`, read-only when it is a file.
    ///
    /// # Safety
    /// Between fork and exec: mount calls on prepared strings.
    unsafe fn over(&self, path: &CString) -> std::io::Result<()> {
        // SAFETY: mount calls on NUL-ended paths.
        unsafe {
            let bind = |flags, source: *const libc::c_char| {
                libc::mount(
                    source,
                    path.as_ptr(),
                    std::ptr::null(),
                    flags,
                    std::ptr::null(),
                )
            };
            if bind(libc::MS_BIND, self.path.as_ptr()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(keep) = self.read_only {
                let flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | keep;
                if bind(flags, std::ptr::null()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }

    /// Whether `path` shows the cover now (`st` is scratch space).
    ///
    /// # Safety
    /// `path` is NUL-ended.
    unsafe fn covers(&self, st: &mut libc::stat, path: &CString) -> bool {
        // SAFETY: stat fills `st` for a NUL-ended path.
        let found = unsafe { libc::stat(path.as_ptr(), st) } == 0;
        // dev_t and ino_t are not u64 on every target.
        #[allow(clippy::unnecessary_cast)]
        let id = (st.st_dev as u64, st.st_ino as u64);
        found && id == self.id
    }
}

impl Resolver {
    /// Writes the box's `resolv.conf` in `dir`, and finds the file it
    /// covers (`/etc/resolv.conf` is often a link into `/run`).
    fn prepare(dir: &Path) -> Result<Resolver, Error> {
        let conf = dir.join("resolv.conf");
        std::fs::write(&conf, RESOLV_CONF).map_err(|source| Error::ResolvConf {
            path: conf.clone(),
            source,
        })?;
        let over = match std::fs::canonicalize("/etc/resolv.conf") {
            Ok(real) => Some(cstring(&real)?),
            Err(_) => None,
        };
        Ok(Resolver {
            conf: cstring(&conf)?,
            over,
        })
    }

    /// Mounts the box's `resolv.conf` over the host's, read-only.
    ///
    /// # Safety
    /// Between fork and exec, in the tree's private mount namespace.
    unsafe fn mount(&self) -> std::io::Result<()> {
        let Some(over) = &self.over else {
            return Ok(());
        };
        // SAFETY: mount calls on NUL-ended paths prepared before the fork.
        unsafe {
            let bind = libc::MS_BIND;
            if libc::mount(
                self.conf.as_ptr(),
                over.as_ptr(),
                std::ptr::null(),
                bind,
                std::ptr::null(),
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            let read_only = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY;
            libc::mount(
                std::ptr::null(),
                over.as_ptr(),
                std::ptr::null(),
                read_only,
                std::ptr::null(),
            );
        }
        Ok(())
    }
}

/// The box's DNS sockets on `127.0.0.1:53`: UDP, then a TCP listener.
///
/// # Safety
/// Plain system calls; may run between fork and exec.
unsafe fn dns_sockets() -> std::io::Result<[i32; 2]> {
    let addr = loopback(DNS_PORT);
    // SAFETY: plain socket calls on a complete address.
    unsafe {
        let udp = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if udp < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        if libc::bind(udp, (&addr as *const libc::sockaddr_in).cast(), len) != 0 {
            let e = std::io::Error::last_os_error();
            libc::close(udp);
            return Err(e);
        }
        match listen_on(&addr) {
            Ok(tcp) => Ok([udp, tcp]),
            Err(e) => {
                libc::close(udp);
                Err(e)
            }
        }
    }
}

/// `127.0.0.1:port`.
fn loopback(port: u16) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
        },
        sin_zero: [0; 8],
    }
}

/// Brings up `lo` in a new network namespace (it starts down).
///
/// # Safety
/// Plain system calls; may run between fork and exec.
unsafe fn loopback_up() -> std::io::Result<()> {
    // SAFETY: an ifreq naming `lo`, filled by the kernel and given back.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut ifr: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            ifr.ifr_name[i] = *b as libc::c_char;
        }
        let mut r = libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut ifr);
        if r == 0 {
            ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            r = libc::ioctl(fd, libc::SIOCSIFFLAGS, &ifr);
        }
        let e = std::io::Error::last_os_error();
        libc::close(fd);
        if r != 0 { Err(e) } else { Ok(()) }
    }
}

/// A TCP socket listening on `addr`; its descriptor.
///
/// # Safety
/// Plain system calls; may run between fork and exec.
unsafe fn listen_on(addr: &libc::sockaddr_in) -> std::io::Result<i32> {
    // SAFETY: addr is a complete IPv4 socket address.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let ok = libc::bind(
            fd,
            (addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ) == 0
            && libc::listen(fd, 1024) == 0;
        if !ok {
            let e = std::io::Error::last_os_error();
            libc::close(fd);
            return Err(e);
        }
        Ok(fd)
    }
}

/// Writes `bytes` to `path` with plain system calls (after fork).
unsafe fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> std::io::Result<()> {
    // SAFETY: plain system calls; the caller is a forked child.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        if n != bytes.len() as isize {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
