//! The engine's errors outside a policy source. A source's problems are
//! [`crate::Diagnostic`]s, collected with their position; these are the
//! failures of the building blocks an adapter calls directly (a field path,
//! a path glob) and of a cached policy, each a value a caller can match on.
//! A loader that turns one into a diagnostic quotes its message, so the
//! messages are part of the interface: tests pin them.

use crate::action::TOP_LEVEL_FIELDS;

/// Why the engine refused an input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An empty path or an empty segment (`http..method`).
    #[error("`{0}` is not a field path")]
    NotAFieldPath(String),
    /// `facets.NAME` with no field: a facet is an object, never a value.
    #[error("`facets.{0}` names a whole facet; name one of its fields, e.g. `facets.{0}.name`")]
    WholeFacet(String),
    /// `session.X` where X is not a field of the session.
    #[error(
        "unknown session field `{0}`; expected one of: session.id, session.agent, session.plugin, session.profile, session.integration, session.cwd"
    )]
    UnknownSessionField(String),
    /// A one-segment path that is not a top-level field.
    #[error(
        "unknown field `{0}`; expected a top-level field ({fields}) or a facet path such as `http.method`",
        fields = TOP_LEVEL_FIELDS.join(", ")
    )]
    UnknownField(String),
    /// A misspelt field of a facet whose fields are known: a rule on it
    /// would never match.
    #[error(
        "unknown field `{field}` of facet `{facet}`; expected one of: {expected}",
        expected = .expected.join(", ")
    )]
    UnknownFacetField {
        /// The facet (`http`).
        facet: &'static str,
        /// The field as written (`methd`).
        field: String,
        /// The facet's fields.
        expected: &'static [&'static str],
    },
    /// A path below a facet field that holds a value, not an object.
    #[error("`{facet}.{field}` has no fields below it")]
    NoFieldsBelow {
        /// The facet (`http`).
        facet: &'static str,
        /// The field (`method`).
        field: String,
    },
    /// A path glob that does not compile; `reason` is the glob
    /// compiler's account (the caller names the pattern as written).
    #[error("{reason}")]
    PathGlob {
        /// The absolute pattern.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A pattern of a path set that does not compile: a set has many, so
    /// the message names it.
    #[error("{pattern}: {reason}")]
    PathSet {
        /// The pattern.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Bytes that are not a policy this build encoded (`Policy::from_cache_bytes`).
    #[error("the cached policy cannot be read: {0}")]
    Cache(String),
}
