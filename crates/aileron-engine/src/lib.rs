//! Aileron's policy engine: one policy decides every action an AI agent
//! takes, whichever adapter saw it (the shim, the agent hooks, the exec
//! supervisor, the server).
//!
//! A pure library: it reads no files, no clock and no environment, and
//! holds no global state, so a decision depends only on what it is given
//! and every adapter gets the same one. Adapters read the policy sources
//! and the clock, and enforce the verdict.
//!
//! The API is small:
//!
//! - [`Policy`]: compiled once from the [`Source`]s of every layer
//!   ([`Policy::from_sources`]; its problems are [`Diagnostic`]s with a
//!   position), then asked for decisions. [`Policy::to_cache_bytes`] keeps
//!   it on disk for adapters that start once per action.
//! - [`Action`]: one thing an agent does, of an [`ActionType`];
//!   [`Policy::evaluate`] decides it.
//! - [`LineContext`]: where and when a shell line runs;
//!   [`Policy::evaluate_line`] decides the line by its most restrictive
//!   command.
//! - [`State`]: what the session adds to the policy (its "always" answers,
//!   its history for `rate` rules).
//! - [`Verdict`]: the decision, who reached it and why.
//!
//! ```
//! use aileron_engine::{Environment, Layer, LineContext, Policy, Session, Source, State};
//! let src = Source {
//!     name: "/p/aileron.yaml".into(),
//!     text: "version: 1\nallow: [\"git *\"]\n".into(),
//!     layer: Layer::Project,
//!     base_dir: "/p".into(),
//! };
//! let policy = Policy::from_sources(&[src], &Environment::new("/home/u")).unwrap();
//! let session = Session::default();
//! let cx = LineContext {
//!     cwd: "/p",
//!     session: &session,
//!     timestamp: "2026-01-05T12:00:00Z".parse().ok(),
//!     id: "a1",
//!     exe: None,
//! };
//! let v = policy.evaluate_line("git status; rm -rf x", &cx, &State::default());
//! assert_eq!(v.verdict.decision.as_str(), "ask"); // `rm -rf x` matches no rule
//! assert_eq!(v.commands[v.decisive.unwrap()].command, "rm -rf x");
//! ```
//!
//! An action of another kind, as an adapter or the server's API gets it:
//!
//! ```
//! use aileron_engine::{Action, ActionType, Decision, Environment, Layer, Policy, Source, State};
//! let src = Source {
//!     name: "/p/aileron.yaml".into(),
//!     text: "version: 1\ndeny:\n  - {id: no-delete, when: {type: http.request, http.method: DELETE}}\n".into(),
//!     layer: Layer::Project,
//!     base_dir: "/p".into(),
//! };
//! let policy = Policy::from_sources(&[src], &Environment::new("/home/u")).unwrap();
//! let mut action: Action = serde_json::from_str(
//!     r#"{"type": "http.request", "timestamp": "2026-01-05T12:00:00Z",
//!         "facets": {"http": {"method": "delete", "url": "https://api.example.com/x"}}}"#,
//! )
//! .unwrap();
//! action.normalize(); // fills the URL's parts, the verb, the sensitivity
//! assert_eq!(action.kind, ActionType::HttpRequest);
//! let v = policy.evaluate(&action, &State::default());
//! assert_eq!(v.decision, Decision::Deny);
//! assert_eq!(v.rule.as_deref(), Some("no-delete"));
//! ```
//!
//! A policy that does not load says where and why, every problem at once:
//!
//! ```
//! use aileron_engine::{Environment, Layer, Policy, Source};
//! let src = Source {
//!     name: "/p/aileron.yaml".into(),
//!     text: "version: 1\ndeny:\n  - {when: {http.metod: GET}}\n".into(),
//!     layer: Layer::Project,
//!     base_dir: "/p".into(),
//! };
//! let errors = Policy::from_sources(&[src], &Environment::new("/home/u")).unwrap_err();
//! let first = errors[0].to_string();
//! assert!(first.starts_with("/p/aileron.yaml:3:13: error: unknown field `metod` of facet `http`"));
//! ```
//!
//! The modules below are the building blocks adapters also use directly
//! (the shell lowering, path helpers, the pattern dialect, the YAML
//! reader, the linter); the compiled form of a policy and its cache
//! encoding are private.

#![deny(missing_docs)]

pub mod action;
pub mod builtin;
pub mod command_line;
pub mod credentials;
mod deferred;
pub mod diagnostic;
mod document;
mod error;
mod evaluate;
pub mod glob;
mod json_text;
pub mod lint;
mod overlap;
pub mod paths;
pub mod pattern;
mod policy;
pub mod profiles;
mod rule;
pub mod schema;
mod suggest;
mod testing;
pub mod yaml;

pub use action::{Action, ActionType, Sensitivity, Session};
pub use builtin::Environment;
pub use command_line::LineContext;
pub use diagnostic::{Code, Diagnostic, Diagnostics, Severity};
pub use document::{
    AskMode, DefaultPolicy, Document, EnvPolicy, Gateway, Settings, Source, TestCase, TestInput,
    parse_document, parse_rule,
};
pub use error::Error;
pub use evaluate::{
    CommandVerdict, Explanation, FileVerdict, LineVerdict, RuleMatch, State, Verdict, VerdictSource,
};
pub use policy::Policy;
pub use rule::{Approver, Decision, JudgeDef, JudgeSpec, Layer, Origin, Rule, Scope};
pub use testing::TestOutcome;
