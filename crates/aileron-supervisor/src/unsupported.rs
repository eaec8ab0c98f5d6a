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

    impl Lockdown {
        pub fn prepare(
            _protect: &[PathBuf],
            _secrets: &[PathBuf],
            _writable: Option<&[PathBuf]>,
        ) -> Result<Lockdown, Error> {
            Err(Error::NeedsLinux)
        }
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

    /// Fails: `on_listener` is never called.
    pub fn spawn(
        _cmd: Command,
        _program: &str,
        _enforce: Enforce,
        _lockdown: Option<Lockdown>,
        _on_listener: impl FnOnce(Listener) + Send + 'static,
    ) -> Result<Child, Error> {
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
