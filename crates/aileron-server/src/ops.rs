//! Running the server in production: `GET /healthz` (the process is up),
//! `GET /readyz` (the database answers, its migrations are applied, the
//! policy loads), `GET /metrics` (Prometheus), a request id on every
//! request and one log line (text or JSON) per request that failed, asked
//! or answered, and the drain at shutdown: the calls waiting for a person
//! get a 503 so that the adapters send them again elsewhere.

use crate::app::{App, EvalOutcome};
use crate::metrics::Metrics;
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The request id header: taken from the client when it is a sane token,
/// else made; always in the answer and the log line.
pub const REQUEST_ID: &str = "x-request-id";
/// The longest a readiness check waits for the database.
const READY_WAIT: Duration = Duration::from_secs(2);
/// How often a request being drained looks whether it waits for a person.
const DRAIN_POLL: Duration = Duration::from_millis(25);

/// How log lines are written (`--log-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// `TIME LEVEL key=value ...`
    #[default]
    Text,
    /// One JSON object a line.
    Json,
}

#[derive(Debug, thiserror::Error)]
#[error("`{0}`: the log format is json or text")]
pub struct BadLogFormat(pub String);

impl std::str::FromStr for LogFormat {
    type Err = BadLogFormat;

    fn from_str(s: &str) -> Result<LogFormat, BadLogFormat> {
        match s {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            _ => Err(BadLogFormat(s.to_owned())),
        }
    }
}

/// The operational state of a server: its counters and what readiness
/// compares against.
#[derive(Default)]
pub struct Ops {
    pub metrics: Metrics,
    baseline: OnceLock<Baseline>,
}

/// What the server started with: the migrations it saw applied, and its
/// SQLite file (device and inode).
struct Baseline {
    migrations: Vec<i64>,
    sqlite: Option<(PathBuf, u64, u64)>,
}

impl Ops {
    /// Notes the migrations and the database file the server starts with.
    pub async fn started(&self, app: &App) -> Result<(), crate::Error> {
        use std::os::unix::fs::MetadataExt;
        let migrations = app
            .db
            .applied_migrations()
            .await?
            .into_iter()
            .map(|(v, _)| v)
            .collect();
        let sqlite = crate::db::sqlite_path(&app.cfg.database_url()).and_then(|path| {
            let m = std::fs::metadata(&path).ok()?;
            Some((path, m.dev(), m.ino()))
        });
        let _ = self.baseline.set(Baseline { migrations, sqlite });
        Ok(())
    }
}

/// Why the server is not ready, if it is not.
pub async fn not_ready(app: &App) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    if *app.shutdown.borrow() {
        return Some("shutting down".into());
    }
    let Some(base) = app.ops.baseline.get() else {
        return Some("starting".into());
    };
    if let Some((path, dev, ino)) = &base.sqlite {
        let shown = path.display();
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Some(format!("database: {shown} is gone"));
            }
            Err(e) => return Some(format!("database: {shown}: {e}")),
            Ok(m) if (m.dev(), m.ino()) != (*dev, *ino) => {
                return Some(format!("database: {shown} was replaced"));
            }
            Ok(_) => {}
        }
        if let Err(e) = std::fs::File::open(path) {
            return Some(format!("database: {shown}: {e}"));
        }
    }
    let applied = match tokio::time::timeout(READY_WAIT, app.db.applied_migrations()).await {
        Err(_) => return Some("database: no answer within 2 s".into()),
        Ok(Err(e)) => return Some(format!("database: {e}")),
        Ok(Ok(a)) => a,
    };
    if let Some((v, _)) = applied.iter().find(|(_, ok)| !ok) {
        return Some(format!("database: migration {v} failed"));
    }
    if let Some(v) = base
        .migrations
        .iter()
        .find(|v| !applied.iter().any(|(a, _)| a == *v))
    {
        return Some(format!("database: migration {v} is not applied"));
    }
    if let Err(e) = app.policy_for(None).await {
        return Some(e.to_string());
    }
    None
}

// ---- endpoints -------------------------------------------------------------

fn text(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

/// `GET /healthz`: the process answers.
pub async fn healthz() -> Response {
    text(StatusCode::OK, "ok\n".into())
}

/// `GET /readyz`: 200 `ok`, or 503 and why in one line.
pub async fn readyz(State(app): State<Arc<App>>) -> Response {
    match not_ready(&app).await {
        None => text(StatusCode::OK, "ok\n".into()),
        Some(why) => text(StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n")),
    }
}

/// `GET /metrics`: any valid token (an agent token is enough), or none
/// with `--metrics-public` (then, as the dashboard, only for this
/// server's `Host`).
pub async fn metrics(
    State(app): State<Arc<App>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Response {
    let denied = if app.cfg.metrics_public {
        crate::api::host_refused(&app, &headers, &uri)
    } else {
        crate::api::without_token(&app, &headers).await
    };
    if let Some(r) = denied {
        return r;
    }
    let body = app.ops.metrics.render(app.queue.snapshot().len());
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        body,
    )
        .into_response()
}

// ---- draining ----------------------------------------------------------------

/// The answer to a call that waited for a person when the server began to
/// stop: not decided here; the adapter sends it again (to another server).
pub fn draining() -> Response {
    let mut r = (
        StatusCode::SERVICE_UNAVAILABLE,
        axum::Json(json!({
            "error": "the server is shutting down; this action was not decided: send it again"
        })),
    )
        .into_response();
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// Runs `work`, a request that may come to wait for a person on the
/// queue entry `id`. When the server stops, `work` finishes unless it
/// waits (or comes to wait) for that person: then it is dropped, its ask
/// left undecided, and the answer is [`draining`].
pub async fn unless_drained<T>(
    app: &App,
    id: &str,
    work: impl std::future::Future<Output = T>,
) -> Result<T, Response> {
    tokio::pin!(work);
    let mut stop = app.shutdown.clone();
    tokio::select! {
        out = &mut work => return Ok(out),
        _ = stop.wait_for(|s| *s) => {}
    }
    loop {
        if app.queue.snapshot().iter().any(|p| p.id == id) {
            return Err(draining());
        }
        tokio::select! {
            out = &mut work => return Ok(out),
            _ = tokio::time::sleep(DRAIN_POLL) => {}
        }
    }
}

/// A wait for a person (an adapter's ask) that ends when the server stops.
pub async fn until_drained<T>(
    app: &App,
    wait: impl std::future::Future<Output = T>,
) -> Result<T, Response> {
    let mut stop = app.shutdown.clone();
    tokio::select! {
        out = wait => Ok(out),
        _ = stop.wait_for(|s| *s) => Err(draining()),
    }
}

// ---- request ids and the log -------------------------------------------------

/// The request's id, in its extensions.
#[derive(Clone, Debug)]
pub struct RequestId(pub String);

/// What a handler adds to its request's log line (in the response's
/// extensions); a note makes the line written even when the request
/// succeeded.
#[derive(Clone, Debug, Default)]
pub struct Note(pub Vec<(&'static str, Value)>);

impl Note {
    /// An evaluation that asked a person or a judge.
    pub fn evaluated(out: &EvalOutcome) -> Option<Note> {
        use aileron_engine::Decision;
        if !matches!(out.verdict.decision, Decision::Ask | Decision::Judge) {
            return None;
        }
        Some(Note(vec![
            ("action", json!(out.id)),
            ("decision", json!(out.decision.as_str())),
            ("outcome", json!(out.outcome)),
            ("rule", json!(out.rule)),
            ("reviewer", json!(out.reviewer)),
        ]))
    }

    /// Attaches the note to `res`.
    pub fn on(self, mut res: Response) -> Response {
        res.extensions_mut().insert(self);
        res
    }
}

/// A client's id is kept when it is 1 to 128 of `A-Z a-z 0-9 - _ . : / + = @`.
fn sane(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:/+=@".contains(&b))
}

/// A request being answered, for [`Observed::end`]: its id (kept or made,
/// also put in its extensions), method, route and path.
pub struct Observed {
    started: Instant,
    id: String,
    method: axum::http::Method,
    route: Option<MatchedPath>,
    path: String,
}

impl Observed {
    pub fn begin(req: &mut Request) -> Observed {
        let id = req
            .headers()
            .get(REQUEST_ID)
            .and_then(|v| v.to_str().ok())
            .filter(|v| sane(v))
            .map_or_else(crate::auth::new_uuid, str::to_owned);
        req.extensions_mut().insert(RequestId(id.clone()));
        Observed {
            started: Instant::now(),
            id,
            method: req.method().clone(),
            route: req.extensions().get::<MatchedPath>().cloned(),
            path: req.uri().path().to_owned(),
        }
    }

    /// The answer gets the request id; it is counted by route and status,
    /// and logged when it failed or has a [`Note`].
    pub fn end(self, app: &App, res: &mut Response) {
        if let Ok(v) = HeaderValue::from_str(&self.id) {
            res.headers_mut().insert(REQUEST_ID, v);
        }
        let status = res.status().as_u16();
        app.ops.metrics.http_answered(
            self.method.as_str(),
            self.route.as_ref().map(MatchedPath::as_str),
            status,
        );
        let note = res.extensions_mut().remove::<Note>();
        if status >= 400 || note.is_some() {
            let level = match status {
                500.. => "error",
                400.. => "warn",
                _ => "info",
            };
            let mut fields = vec![
                ("request_id", json!(self.id)),
                ("method", json!(self.method.as_str())),
                ("path", json!(self.path)),
                ("status", json!(status)),
                ("ms", json!(self.started.elapsed().as_secs_f64() * 1e3)),
            ];
            fields.extend(note.unwrap_or_default().0);
            write_line(app.cfg.log_format, level, "request", &fields);
        }
    }
}

/// A line about the server itself (not a request).
pub fn log_event(cfg: &crate::Config, level: &str, msg: &str) {
    write_line(cfg.log_format, level, msg, &[]);
}

/// Writes one log line to stderr: `msg` and `fields` (null fields left out).
pub fn write_line(format: LogFormat, level: &str, msg: &str, fields: &[(&str, Value)]) {
    let time = aileron_audit::now_rfc3339();
    let fields = fields.iter().filter(|(_, v)| !v.is_null());
    let line = match format {
        LogFormat::Json => {
            let mut m = serde_json::Map::new();
            m.insert("time".into(), json!(time));
            m.insert("level".into(), json!(level));
            m.insert("msg".into(), json!(msg));
            for (k, v) in fields {
                m.insert((*k).into(), v.clone());
            }
            Value::Object(m).to_string()
        }
        LogFormat::Text => {
            let mut s = format!("{time} {} {msg}", level.to_ascii_uppercase());
            for (k, v) in fields {
                let v = match v {
                    Value::String(t) if !t.is_empty() && t.bytes().all(plain) => t.clone(),
                    Value::Number(n) if n.is_f64() => format!("{:.3}", n.as_f64().unwrap_or(0.0)),
                    other => other.to_string(),
                };
                s += &format!(" {k}={v}");
            }
            s
        }
    };
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// A byte a text log value shows without quotes.
fn plain(b: u8) -> bool {
    b.is_ascii_graphic() && !matches!(b, b'"' | b'=' | b'\\')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_and_formats() {
        assert!(sane("abc-123_x.y:z/9+=@"));
        assert!(!sane(""));
        assert!(!sane("a b"));
        assert!(!sane("a\"b"));
        assert!(!sane(&"x".repeat(129)));
        assert_eq!("json".parse::<LogFormat>().unwrap(), LogFormat::Json);
        assert!("yaml".parse::<LogFormat>().is_err());
    }
}
