//! Systems other than Linux: no kernel enforcement. What `aileron launch`
//! names of `files`, `spawn` and `supervise`, with the same signatures,
//! so that its code compiles; nothing here can start a session:
//! availability is an error, [`files::Lockdown`] and
//! [`supervise::Supervisor`] have no values, and [`spawn::spawn`] fails.

pub mod files {
    use crate::Error;
    use std::path::PathBuf;

    /// Never made: [`Lockdown::prepare`] fails.
    pub enum Lockdown {}

    /// What the box would hold the tree to.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Spec<'a> {
        pub protect: &'a [PathBuf],
        pub secrets: &'a [PathBuf],
        pub cover: Option<&'a std::path::Path>,
        pub writable: Option<&'a [PathBuf]>,
        pub unreadable: &'a [PathBuf],
        pub listen: Option<&'a [u16]>,
        pub dns: Option<&'a std::path::Path>,
        pub caches: &'a [(PathBuf, PathBuf)],
    }

    impl Lockdown {
        pub fn prepare(_spec: &Spec) -> Result<Lockdown, Error> {
            Err(Error::NeedsLinux)
        }
    }

    /// No Landlock here.
    pub fn landlock_abi() -> u32 {
        0
    }

    pub fn seccomp_notify_available() -> Result<(), Error> {
        Err(Error::NeedsLinux)
    }

    pub fn mount_namespace_available() -> Result<(), Error> {
        Err(Error::NeedsLinux)
    }
}

pub mod spawn {
    use super::files::Lockdown;
    use super::supervise::Listener;
    use crate::{Enforce, Error};
    use std::process::{Child, Command};

    /// What the parent would receive from the child.
    pub struct Received<B, L> {
        pub on_box_listeners: B,
        pub on_listener: L,
    }

    /// Fails: nothing is received.
    pub fn spawn<B, L>(
        _cmd: Command,
        _program: &str,
        _enforce: Enforce,
        _lockdown: Option<Lockdown>,
        _received: Received<B, L>,
    ) -> Result<Child, Error>
    where
        B: FnOnce(Vec<std::os::fd::OwnedFd>) + Send + 'static,
        L: FnOnce(Listener) + Send + 'static,
    {
        Err(Error::NeedsLinux)
    }
}

pub mod supervise {
    use aileron_session::Decider;
    use std::sync::Arc;

    /// The seccomp listener a supervisor takes: none exists here.
    pub enum Listener {}

    /// Never made: it needs a [`Listener`].
    pub enum Supervisor {}

    impl Supervisor {
        pub fn new(
            listener: Listener,
            _decider: Arc<Decider>,
            _launch: Vec<String>,
            _env: &[(String, String)],
            _reach: crate::Reach,
        ) -> Arc<Supervisor> {
            match listener {}
        }

        pub fn set_root(&self, _pid: u32) {
            match *self {}
        }

        pub fn start(self: &Arc<Self>) {
            match **self {}
        }
    }
}
