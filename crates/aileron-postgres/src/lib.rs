//! The database gateway: a PostgreSQL wire-protocol proxy that decides
//! every statement before the server sees it, for `aileron proxy postgres`
//! and the gateways `aileron launch` starts for its session.
//!
//! - [`wire`] reads and writes the protocol's messages (v3), bounded.
//! - [`lower`] turns SQL text into `sql.query` Actions (pure, like the
//!   engine): one per statement, and one per statement nested in another
//!   (a data-modifying `WITH`, `PREPARE`, `EXPLAIN ANALYZE`).
//! - [`startup`] turns the settings of a startup message that change name
//!   resolution or identity (`search_path`, `role`, `options`) into Actions.
//! - [`gateway`] relays a connection: startup settings decided,
//!   authentication passed through, each `Query`, `Parse` and `FunctionCall` decided, a refusal
//!   answered as the server answers an error.

pub mod client;
pub mod functions;
pub mod gateway;
pub mod lower;
pub mod startup;
pub mod wire;

pub use aileron_session::{Decide, SessionSocket};
pub use gateway::{Config, Gateway, Upstream};

/// The adapter's name in the audit log.
pub const ADAPTER: &str = "postgres";

/// Where requests are decided from (the session's, shared by the gateways).
pub use aileron_session::decide::Origin;

/// The request the session decides for the statements of one message
/// (`line`: the text, shortened): the most restrictive verdict of its
/// actions decides. A program's traffic, not a call of the agent's own
/// (no doom loop).
pub fn request(
    origin: &Origin,
    line: String,
    actions: Vec<aileron_engine::Action>,
) -> aileron_session::Request {
    let mut actions = actions.into_iter();
    let mut req = origin.request(actions.next().unwrap_or_default(), ADAPTER);
    req.actions.extend(actions);
    req.line = line;
    req.traffic = true;
    req
}
