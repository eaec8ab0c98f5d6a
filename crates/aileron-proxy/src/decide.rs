//! The request the session decides for one lowered web request (who
//! decides is `aileron_session::Decide`: the launch session's socket, or a
//! `Decider` of the proxy's own).

use aileron_engine::Action;
use aileron_session::Request;
use std::time::{SystemTime, UNIX_EPOCH};

/// Where requests are decided from: the directory whose policy applies,
/// and the session they belong to.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    pub cwd: String,
    pub session: Option<String>,
    pub agent: Option<String>,
}

impl Origin {
    /// A fresh id for an action (the audit record's, and its usage line's).
    pub fn action_id(&self) -> String {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        format!(
            "{nanos:x}-{}-p{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// `action` placed in this origin's session and directory, as the
    /// decider places it.
    pub fn placed(&self, mut action: Action) -> Action {
        action.session.id = self.session.clone();
        action.session.agent = self.agent.clone();
        action.session.cwd = Some(self.cwd.clone());
        action
    }

    /// The request the session decides for one lowered web request.
    pub fn request(&self, action: Action) -> Request {
        let waiting_since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .ok();
        Request {
            line: action.summary.clone(),
            cwd: self.cwd.clone(),
            actions: vec![action],
            session: self.session.clone(),
            agent: self.agent.clone(),
            adapter: Some("proxy".into()),
            traffic: true,
            waiting_since,
            ..Request::default()
        }
    }
}
