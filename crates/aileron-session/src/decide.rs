//! Who decides a request for an adapter that runs beside the agent (the
//! egress proxy, the MCP gateway, the database gateway): the launch session it was started for,
//! over its socket as the shim and the hooks ask it, or a [`Decider`] of
//! its own. Either way the decision is the session's, with its approvals,
//! asks and audit line: the adapter only lowers and enforces.

use crate::decider::Decider;
use crate::protocol::{Request, Response};
use aileron_engine::Action;
use std::path::PathBuf;

/// Decides one request; blocking (an ask may wait for a human).
pub trait Decide: Send + Sync + 'static {
    fn decide(&self, req: &Request) -> Response;
}

/// A launch session, reached over its Unix socket. A session that cannot
/// be reached is a refusal, never an allow.
pub struct SessionSocket(pub PathBuf);

impl Decide for SessionSocket {
    fn decide(&self, req: &Request) -> Response {
        crate::server::request(&self.0, req).unwrap_or_else(|e| {
            Response::refused(
                format!("aileron: denied: the session cannot be reached: {e}"),
                "",
            )
        })
    }
}

impl Decide for Decider {
    fn decide(&self, req: &Request) -> Response {
        Decider::decide(self, req)
    }
}

/// The request a gateway sends for one action it lowered, waiting from
/// now: decided by the policy of `cwd`, in `session` (`None`: the deciding
/// session's own), under the adapter name `adapter`.
pub fn action_request(
    action: Action,
    cwd: &str,
    session: Option<String>,
    agent: Option<String>,
    adapter: &str,
) -> Request {
    let waiting_since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .ok();
    Request {
        line: action.summary.clone(),
        cwd: cwd.to_owned(),
        actions: vec![action],
        session,
        agent,
        adapter: Some(adapter.to_owned()),
        waiting_since,
        ..Request::default()
    }
}

/// Where a gateway's requests are decided from: the directory whose policy
/// applies, and the session they belong to.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    pub cwd: String,
    /// The session (a launch session's id, or the gateway's own); `None`
    /// lets the deciding session name it.
    pub session: Option<String>,
    pub agent: Option<String>,
}

impl Origin {
    /// A fresh id for an action a gateway lowered, unique in this process
    /// (the decision's audit id, which a line written beside it names).
    pub fn action_id(&self) -> String {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        format!(
            "{nanos:x}-{}-g{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// The request for one action the gateway `adapter` lowered.
    pub fn request(&self, action: Action, adapter: &str) -> Request {
        action_request(
            action,
            &self.cwd,
            self.session.clone(),
            self.agent.clone(),
            adapter,
        )
    }

    /// `action` placed in this origin's session and directory, as the
    /// decider places it (for an audit line written beside a decision).
    pub fn placed(&self, mut action: Action) -> Action {
        action.session.id = self.session.clone();
        action.session.agent = self.agent.clone();
        action.session.cwd = Some(self.cwd.clone());
        action
    }
}
