//! `k8s { verb, namespace, resource, name, subresource, group, version }`:
//! a request to the Kubernetes API, read as kube-apiserver reads it
//! (`RequestInfoFactory` in k8s.io/apiserver), so that a rule names what
//! RBAC would:
//!
//! - `/api/v1/…` (the core group, `group: ""`) and `/apis/GROUP/VERSION/…`;
//! - `…/namespaces/NS/RESOURCE[/NAME[/SUBRESOURCE]]` (namespaced),
//!   `…/RESOURCE[/NAME[/SUBRESOURCE]]` (cluster-scoped), and
//!   `…/namespaces/NAME[/status|/finalize]`, a namespace itself (its
//!   `namespace` is its name);
//! - the verb from the method (GET and HEAD get, POST create, PUT update,
//!   PATCH patch, DELETE delete); a get without a name is a list, or a
//!   watch when `?watch=` is anything but `0` or `false`; a delete
//!   without a name is a deletecollection; the old `/watch/` and `/proxy/`
//!   prefixes are the verbs watch and proxy.
//!
//! The path is read decoded, as the apiserver reads it. Any API that
//! shapes its paths so (`/api/v1/users/5`) gets the facet too: the path
//! decides, not the host, since a cluster may be served under any name.
//! Paths without a resource (`/api`, `/apis/apps/v1`, `/version`) have none.

use super::{Facet, Seen, lookup};
use aileron_engine::Sensitivity;
use serde_json::{Map, Value};

/// Verbs by method, before the shape of the path refines them.
const VERBS: &[(&str, &str)] = &[
    ("GET", "get"),
    ("HEAD", "get"),
    ("POST", "create"),
    ("PUT", "update"),
    ("PATCH", "patch"),
    ("DELETE", "delete"),
];

/// Path prefixes that are verbs (`/api/v1/watch/pods`).
const SPECIAL_VERBS: &[&str] = &["watch", "proxy"];

/// What follows `namespaces/NAME` that is the namespace's, not a resource.
const NAMESPACE_SUBRESOURCES: &[&str] = &["status", "finalize"];

/// The verbs that are not `mutate`.
const SENSITIVITY: &[(&str, Sensitivity)] = &[
    ("get", Sensitivity::Read),
    ("list", Sensitivity::Read),
    ("watch", Sensitivity::Read),
    ("delete", Sensitivity::Destructive),
    ("deletecollection", Sensitivity::Destructive),
];

pub(super) fn facet(seen: &Seen<'_>) -> Option<Facet> {
    let parts: Vec<&str> = seen.path.trim_matches('/').split('/').collect();
    let (group, version, mut rest) = match parts[..] {
        ["api", version, ref rest @ ..] => ("", version, rest),
        ["apis", group, version, ref rest @ ..] => (group, version, rest),
        _ => return None,
    };
    if rest.is_empty() {
        return None;
    }
    let mut verb = match rest[0] {
        v if SPECIAL_VERBS.contains(&v) => {
            rest = &rest[1..];
            if rest.is_empty() {
                return None;
            }
            Some(v)
        }
        _ => lookup(VERBS, seen.method),
    };
    let mut namespace = None;
    if let ["namespaces", ns, ref more @ ..] = rest[..] {
        namespace = Some(ns);
        if more
            .first()
            .is_some_and(|p| !NAMESPACE_SUBRESOURCES.contains(p))
        {
            rest = more;
        }
    }
    let resource = rest.first().copied();
    let name = rest.get(1).copied().filter(|n| !n.is_empty());
    let subresource = rest.get(2).copied().filter(|_| verb != Some("proxy"));
    if name.is_none() {
        verb = match verb {
            Some("get") if watching(seen) => Some("watch"),
            Some("get") => Some("list"),
            Some("delete") => Some("deletecollection"),
            v => v,
        };
    }
    let mut k8s = Map::new();
    for (key, value) in [
        ("verb", verb),
        ("namespace", namespace),
        ("resource", resource),
        ("name", name),
        ("subresource", subresource),
    ] {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            k8s.insert(key.into(), Value::from(v));
        }
    }
    k8s.insert("group".into(), Value::from(group));
    k8s.insert("version".into(), Value::from(version));
    Some(Facet {
        name: "k8s",
        value: Value::Object(k8s),
        sensitivity: verb.map(|v| lookup(SENSITIVITY, v).unwrap_or(Sensitivity::Mutate)),
    })
}

/// `?watch=`, as the apiserver converts it: its first value, anything but
/// `0` or `false` (in any case) is true, the empty value too.
fn watching(seen: &Seen<'_>) -> bool {
    seen.query_values("watch")
        .next()
        .is_some_and(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}
