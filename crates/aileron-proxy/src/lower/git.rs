//! `git { remote, operation, service }`: git's smart HTTP protocol, as
//! `git fetch`, `clone`, `pull` and `push` speak it to any server.
//!
//! A fetch reads (`GET …/info/refs?service=git-upload-pack`, then
//! `POST …/git-upload-pack`) and is `read` although it POSTs; a push
//! (`…?service=git-receive-pack`, `POST …/git-receive-pack`) is `mutate`,
//! its first GET included, so that a rule that stops pushes stops them
//! before anything is sent.

use super::{Facet, Seen};
use aileron_engine::Sensitivity;
use serde_json::json;

/// The services, by their name on the wire: (wire name, `git.service`,
/// `git.operation`, sensitivity), the least strict first.
const SERVICES: &[(&str, &str, &str, Sensitivity)] = &[
    ("git-upload-pack", "upload-pack", "fetch", Sensitivity::Read),
    (
        "git-receive-pack",
        "receive-pack",
        "push",
        Sensitivity::Mutate,
    ),
];

/// The routes: (method, the path's end after the repository, the
/// service's wire name; `None`: the one `?service=` names).
const ROUTES: &[(&str, &str, Option<&str>)] = &[
    ("GET", "/info/refs", None),
    ("POST", "/git-upload-pack", Some("git-upload-pack")),
    ("POST", "/git-receive-pack", Some("git-receive-pack")),
];

pub(super) fn facet(seen: &Seen<'_>) -> Option<Facet> {
    let (repo, service) = ROUTES.iter().find_map(|(method, end, service)| {
        let repo = seen
            .path
            .strip_suffix(end)
            .filter(|_| *method == seen.method)?;
        Some((repo, *service))
    })?;
    // `?service=` given twice is read as the strictest it names.
    let wire = match service {
        Some(s) => s,
        None => SERVICES
            .iter()
            .rev()
            .map(|(wire, ..)| *wire)
            .find(|wire| seen.query_values("service").any(|v| v == *wire))?,
    };
    let (_, service, operation, sensitivity) = SERVICES.iter().find(|(w, ..)| *w == wire)?;
    Some(Facet {
        name: "git",
        value: json!({
            "remote": format!("{}{repo}", seen.target.origin()),
            "operation": operation,
            "service": service,
        }),
        sensitivity: Some(*sensitivity),
    })
}
