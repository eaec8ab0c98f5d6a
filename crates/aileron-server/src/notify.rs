//! Outgoing notifications to webhook approvers: an action waiting for
//! approver `X` is posted to X's `url`, signed like the callbacks
//! (`X-Aileron-Signature: sha256=<hex HMAC-SHA256 of the body>`). The
//! approver answers through `POST /api/approvers/X/decision`. A
//! notification that fails is reported and changes nothing else: the action
//! still waits on the dashboard, then `on_timeout` decides.

use crate::WebhookApprover;
use crate::auth::hex;
use crate::pending::PendingView;
use hmac::{Hmac, Mac};
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::json;
use sha2::Sha256;
use std::time::Duration;

/// How long one notification may take.
const TIMEOUT: Duration = Duration::from_secs(10);

pub type HttpClient = Client<HttpConnector, Full<axum::body::Bytes>>;

pub fn client() -> HttpClient {
    Client::builder(TokioExecutor::new()).build_http()
}

/// The HMAC-SHA256 of `body` with `secret`, as the header value.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
    mac.update(body);
    format!("sha256={}", hex(&mac.finalize().into_bytes()))
}

/// Posts `view` to the approver's URL in the background.
pub fn pending(
    client: &HttpClient,
    approver: &WebhookApprover,
    view: &PendingView,
    server_url: &str,
) {
    let Some(url) = approver.url.clone() else {
        return;
    };
    let body = json!({
        "event": "pending",
        "approver": approver.id,
        "pending": view,
        "callback": format!("{server_url}/api/approvers/{}/decision", approver.id),
    })
    .to_string();
    let sig = signature(&approver.secret, body.as_bytes());
    let client = client.clone();
    let id = approver.id.clone();
    tokio::spawn(async move {
        let req = match axum::http::Request::post(&url)
            .header("content-type", "application/json")
            .header("x-aileron-signature", sig)
            .body(Full::new(axum::body::Bytes::from(body)))
        {
            Ok(r) => r,
            Err(e) => {
                eprintln!("aileron serve: approver `{id}`: bad url {url}: {e}");
                return;
            }
        };
        match tokio::time::timeout(TIMEOUT, client.request(req)).await {
            Ok(Ok(res)) if res.status().is_success() => {}
            Ok(Ok(res)) => eprintln!("aileron serve: approver `{id}` answered {}", res.status()),
            Ok(Err(e)) => eprintln!("aileron serve: approver `{id}` unreachable: {e}"),
            Err(_) => eprintln!("aileron serve: approver `{id}` did not answer in time"),
        }
    });
}
