//! Aileron's policy engine.
//!
//! A pure library: it reads no files, no clock and no environment. Adapters
//! (the shim, the hooks, the server) load policy sources, build an
//! [`Action`] and call [`Policy::evaluate`] (or [`Policy::evaluate_line`] for
//! a shell command line) with the session's [`State`].
//!
//! ```
//! use aileron_engine::{Environment, Layer, Policy, Source, LineContext, Session, State};
//! let src = Source {
//!     name: "/p/aileron.yaml".into(),
//!     text: "version: 1\nallow: [\"git *\"]\n".into(),
//!     layer: Layer::Project,
//!     base_dir: "/p".into(),
//! };
//! let policy = Policy::from_sources(&[src], &Environment::new("/home/u")).unwrap();
//! let session = Session::default();
//! let cx = LineContext { cwd: "/p", session: &session, timestamp: "2026-01-01T00:00:00Z", id: "a1", exe: None };
//! let v = policy.evaluate_line("git status; rm -rf x", &cx, &State::default());
//! assert_eq!(v.verdict.decision.as_str(), "ask"); // `rm -rf x` matches no rule
//! ```

pub mod action;
pub mod builtin;
pub mod command_line;
mod deferred;
pub mod diagnostic;
pub mod document;
pub mod evaluate;
pub mod glob;
mod json_text;
pub mod lint;
mod overlap;
pub mod paths;
pub mod pattern;
pub mod policy;
pub mod profiles;
pub mod rule;
pub mod schema;
mod suggest;
pub mod testing;
pub mod yaml;

pub use action::{Action, Sensitivity, Session};
pub use builtin::Environment;
pub use command_line::LineContext;
pub use diagnostic::{Code, Diagnostic, Diagnostics, Severity};
pub use document::{DefaultPolicy, Document, Source, parse_document, parse_rule};
pub use evaluate::{CommandVerdict, Explanation, LineVerdict, State, Verdict, VerdictSource};
pub use policy::Policy;
pub use rule::{Decision, Layer, Rule};
