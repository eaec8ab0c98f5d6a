//! The proxy's lowering: request targets as the proxy connects to them
//! and the policy sees them, the Action of a request with its facets,
//! the usage of LLM responses, and policies deciding lowered actions.

mod action;
mod policy;
mod target;
mod usage;

use aileron_engine::Action;
use aileron_proxy::lower::{Lowering, Target, lower, parse_target};
use http::{HeaderMap, HeaderName, HeaderValue, Method};

/// A target the proxy accepts.
#[track_caller]
pub fn target(method: &Method, request_target: &str) -> Target {
    parse_target(method, request_target)
        .unwrap_or_else(|e| panic!("{request_target} is refused: {e}"))
}

pub fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        h.append(
            HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    h
}

/// The action of a request through the proxy (absolute-form, or a CONNECT
/// decided as a tunnel), with these headers and, when given, this whole body.
#[track_caller]
pub fn lowered(method: &str, url: &str, hdrs: &[(&str, &str)], body: Option<&str>) -> Action {
    let method = Method::from_bytes(method.as_bytes()).unwrap();
    let t = target(&method, url);
    lower(&Lowering {
        method: &method,
        target: &t,
        headers: &headers(hdrs),
        tunnel: method == Method::CONNECT,
        body_size: body.map(|b| b.len() as u64),
        body: body.map(str::as_bytes),
    })
}
