//! The database gateways of a launch session (`settings.gateways`):
//! started before the agent, asking the session (over its socket) about
//! every statement, and named to the agent's tree through libpq's
//! variables (`PGHOST`, `PGPORT`) and `DATABASE_URL`, which most other
//! clients and frameworks read.

use super::launch_proxy::{self, ForSession, ServerChild};
use aileron_cli::Error;
use aileron_engine::Gateway;

/// A running database gateway; stopped when dropped.
pub struct SessionGateway {
    pub child: ServerChild,
    /// The server it stands in front of, as the policy names it.
    pub upstream: String,
    /// Where it listens: `IP:PORT`.
    pub address: String,
}

/// Starts every gateway the policy names, and waits until each listens.
/// With `boxed`, each also takes its listener in the box's network namespace.
pub fn start(
    s: &ForSession,
    gateways: &[Gateway],
    boxed: bool,
) -> Result<Vec<SessionGateway>, Error> {
    gateways
        .iter()
        .map(|g| match g {
            Gateway::Postgres { upstream, listen } => {
                let listen = listen.as_deref().unwrap_or("127.0.0.1:0");
                let cmd = s.command(&[
                    "proxy",
                    "postgres",
                    "--listen",
                    listen,
                    "--upstream",
                    upstream,
                ]);
                let (child, address) = launch_proxy::start_listening(
                    cmd,
                    "aileron proxy postgres: listening on postgres://",
                    &format!("the database gateway for {upstream}"),
                    boxed,
                )?;
                Ok(SessionGateway {
                    child,
                    upstream: upstream.clone(),
                    address,
                })
            }
        })
        .collect()
}

/// What the agent's tree gets (`aileron_postgres::client::env`: `PGHOST`,
/// `PGPORT`, and its `DATABASE_URL` rewritten when it names a gateway's
/// server; `None`: taken out).
pub fn env(
    gateways: &[SessionGateway],
    agent_env: &[(String, String)],
) -> Vec<(String, Option<String>)> {
    let running: Vec<(&str, &str)> = gateways
        .iter()
        .map(|g| (g.upstream.as_str(), g.address.as_str()))
        .collect();
    aileron_postgres::client::env(&running, agent_env)
}
