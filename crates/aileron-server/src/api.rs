//! The HTTP API (the seed's shapes, plus evaluate, the action log and the
//! adapters' endpoints), the dashboard's files, and the protections every
//! response gets: bearer tokens with roles, a Host check against DNS
//! rebinding, no CORS, and headers that forbid framing and sniffing.

// Helpers return the error response itself; its size does not matter here.
#![allow(clippy::result_large_err)]

use crate::app::{self, App};
use crate::auth::{Caller, Role, constant_time_eq};
use crate::db::ActionQuery;
use crate::ops;
use crate::pending::{AnswerKind, PendingView, Resolution, ResolveError};
use crate::replicas::{self, NewAsk, Opened};
use crate::rules::{Invalid, entry_from_body};
use aileron_audit::AuditRecord;
use aileron_decision::Channel;
use aileron_engine::action::{KNOWN_FACETS, TOP_LEVEL_FIELDS};
use aileron_engine::pattern::History;
use aileron_engine::{Action, Decision};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::StreamExt;
use rust_embed::RustEmbed;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

type AppState = Arc<App>;

/// The OpenAPI 3.1 description of every endpoint (hand-written; a test
/// checks that it names every route of [`router`]).
pub const OPENAPI: &str = include_str!("openapi.json");

/// Lookback of the rule preview: default and ceiling (seed: capped at 500).
const PREVIEW_DEFAULT: i64 = 200;
const PREVIEW_MAX: i64 = 500;
const PREVIEW_SAMPLES: usize = 20;
/// Page size of the action log: default and ceiling.
const PAGE_DEFAULT: i64 = 100;
const PAGE_MAX: i64 = 1000;
/// Longest wait an adapter may ask for on `POST /api/pending-actions`.
const MAX_WAIT_SECS: u64 = 24 * 3600;

#[derive(RustEmbed)]
#[folder = "assets/"]
struct Assets;

pub fn router(app: AppState) -> Router {
    let agent = Router::new()
        .route("/api/evaluate", post(evaluate))
        .route("/api/actions", get(list_actions).post(record_action))
        .route(
            "/api/pending-actions",
            post(enqueue).get(list_pending_for_role),
        )
        .route("/api/action-schemas", get(action_schemas))
        .route("/api/openapi.json", get(openapi))
        .route_layer(middleware::from_fn_with_state(
            (app.clone(), Role::Agent),
            require,
        ));
    let approver = Router::new()
        .route("/api/rules", get(list_rules).post(upsert_rule))
        .route("/api/rules/preview", post(preview))
        .route("/api/rules/{id}", get(get_rule).delete(delete_rule))
        .route("/api/approvers", get(approvers))
        .route("/api/pending-actions/stream", get(stream))
        .route("/api/pending-actions/{id}/decision", post(decide))
        .route_layer(middleware::from_fn_with_state(
            (app.clone(), Role::Approver),
            require,
        ));
    Router::new()
        .merge(agent)
        .merge(approver)
        // Webhook callbacks authenticate with the approver's signature.
        .route("/api/approvers/{id}/{*path}", post(webhook))
        .route("/", get(index))
        .route("/assets/{*file}", get(asset))
        .fallback(not_found)
        // PROBES, written out: the OpenAPI test reads the routes here.
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(ops::metrics))
        .layer(middleware::from_fn_with_state(app.clone(), front))
        .with_state(app)
}

// ---- protections -----------------------------------------------------------

/// Probes and scrapers name the server by its address: no `Host` check
/// (`/metrics` checks it when it needs no token).
const PROBES: [&str; 3] = ["/healthz", "/readyz", "/metrics"];

/// Every request's one layer (one, not a layer for each: each layer moves
/// the request's future and clones the services under it): its id, metrics
/// and log line ([`ops::Observed`]), the `Host` check, the security headers.
async fn front(State(app): State<AppState>, mut req: Request, next: Next) -> Response {
    let observed = ops::Observed::begin(&mut req);
    let mut res = match host_refused(&app, req.headers(), req.uri()) {
        Some(refused) if !PROBES.contains(&req.uri().path()) => refused,
        _ => next.run(req).await,
    };
    security_headers(&mut res);
    observed.end(&app, &mut res);
    res
}

fn security_headers(res: &mut Response) {
    let h = res.headers_mut();
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert(
        "content-security-policy",
        HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'"),
    );
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    h.insert("cache-control", HeaderValue::from_static("no-store"));
}

/// The refusal of a request whose `Host` is not this server's, nor a
/// loopback name (DNS rebinding: a page of evil.example resolving to
/// 127.0.0.1). The host is the `Host` header and the target's authority
/// (HTTP/2's `:authority`, or an absolute HTTP/1 target): every one given
/// must name this server, and at least one must be given.
pub(crate) fn host_refused(
    app: &App,
    headers: &HeaderMap,
    uri: &axum::http::Uri,
) -> Option<Response> {
    let header = headers.get(header::HOST).map(|h| h.to_str().ok());
    let authority = uri.authority().map(|a| Some(a.as_str()));
    let mut names = header.into_iter().chain(authority).peekable();
    let served = names.peek().is_some()
        && names.all(|n| n.is_some_and(|n| app.cfg.host_allowed(&n.to_ascii_lowercase())));
    (!served).then(|| error(StatusCode::FORBIDDEN, "this Host is not served here"))
}

/// The refusal of a request without a valid token (any role).
pub(crate) async fn without_token(app: &App, headers: &HeaderMap) -> Option<Response> {
    let Some(token) = bearer_token(headers) else {
        return Some(unauthorized(
            "a bearer token is required (Authorization: Bearer TOKEN)",
        ));
    };
    match app.caller(token).await {
        Ok(Some(_)) => None,
        Ok(None) => Some(unauthorized("unknown token")),
        Err(e) => Some(error(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("cannot check the token: {e}"),
        )),
    }
}

/// The bearer token's caller, with at least `min` role.
async fn require(
    State((app, min)): State<(AppState, Role)>,
    mut req: Request,
    next: Next,
) -> Response {
    let token = bearer_token(req.headers());
    let Some(token) = token else {
        return unauthorized("a bearer token is required (Authorization: Bearer TOKEN)");
    };
    match app.caller(token).await {
        Err(e) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("cannot check the token: {e}"),
        ),
        Ok(None) => unauthorized("unknown token"),
        Ok(Some(c)) if c.role < min => error(
            StatusCode::FORBIDDEN,
            &format!(
                "this needs an approver token; this is an {} token",
                c.role.as_str()
            ),
        ),
        Ok(Some(c)) => {
            req.extensions_mut().insert(c);
            next.run(req).await
        }
    }
}

fn unauthorized(msg: &str) -> Response {
    let mut r = error(StatusCode::UNAUTHORIZED, msg);
    r.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    r
}

fn error(status: StatusCode, msg: &str) -> Response {
    (status, axum::Json(json!({"error": msg}))).into_response()
}

fn invalid(i: Invalid) -> Response {
    (
        StatusCode::BAD_REQUEST,
        axum::Json(json!({"error": i.message, "diagnostics": i.diagnostics})),
    )
        .into_response()
}

fn ok(v: Value) -> Response {
    axum::Json(v).into_response()
}

fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Response> {
    serde_json::from_slice(body)
        .map_err(|e| error(StatusCode::BAD_REQUEST, &format!("invalid JSON body: {e}")))
}

fn caller(req_caller: Option<axum::Extension<Caller>>) -> Caller {
    req_caller.map(|c| c.0).unwrap_or(Caller {
        role: Role::Agent,
        id: String::new(),
    })
}

/// The token of an `Authorization: Bearer TOKEN` header, if there is one.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// Unknown paths: under `/api`, a request without a valid token learns
/// nothing more than elsewhere (401).
async fn not_found(State(app): State<AppState>, req: Request) -> Response {
    if req.uri().path().starts_with("/api") {
        let token = bearer_token(req.headers());
        let known = match token {
            Some(t) => matches!(app.caller(t).await, Ok(Some(_))),
            None => false,
        };
        if !known {
            return unauthorized("a valid bearer token is required");
        }
    }
    error(StatusCode::NOT_FOUND, "no such endpoint")
}

// ---- evaluate and the action log -------------------------------------------

async fn evaluate(
    State(app): State<AppState>,
    c: Option<axum::Extension<Caller>>,
    body: Bytes,
) -> Response {
    let started = std::time::Instant::now();
    let mut action: Action = match parse_json(&body) {
        Ok(a) => a,
        Err(r) => return r,
    };
    if action.id.is_empty() {
        // Its queue entry's id, should it ask (evaluate keeps it).
        action.id = crate::auth::new_uuid();
    }
    let id = action.id.clone();
    let caller = caller(c);
    // Boxed: the evaluation's state is kilobytes, and the layers above
    // move their futures (it was 5% of the CPU in memcpy).
    let work = Box::pin(app.evaluate(action, &caller));
    let out = match ops::unless_drained(&app, &id, work).await {
        Ok(out) => out,
        Err(drained) => return drained,
    };
    app.ops.metrics.decided(out.decision, out.source);
    app.ops.metrics.evaluate_took(started.elapsed());
    let note = ops::Note::evaluated(&out);
    let res = axum::Json(out).into_response();
    match note {
        Some(note) => note.on(res),
        None => res,
    }
}

async fn record_action(
    State(app): State<AppState>,
    c: Option<axum::Extension<Caller>>,
    body: Bytes,
) -> Response {
    let rec: AuditRecord = match parse_json(&body) {
        Ok(r) => r,
        Err(r) => return r,
    };
    if Decision::parse(&rec.decision).is_none() {
        return error(
            StatusCode::BAD_REQUEST,
            "`decision` must be one of allow, deny, ask, judge",
        );
    }
    if app::parse_time_us(&rec.time).is_none() {
        return error(StatusCode::BAD_REQUEST, "`time` must be RFC 3339");
    }
    let c = caller(c);
    match app.record(rec, None, Some(&c), None).await {
        Ok(seq) => ok(json!({"seq": seq})),
        Err(e) => error(StatusCode::SERVICE_UNAVAILABLE, &e.to_string()),
    }
}

#[derive(Deserialize, Default)]
struct ActionsQuery {
    session: Option<String>,
    decision: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    since: Option<String>,
    until: Option<String>,
    limit: Option<i64>,
    cursor: Option<String>,
}

/// `10m`, `2h`, `1d`, `30s` back from now, or RFC 3339 (or a bare date).
fn time_bound(s: &str) -> Option<i64> {
    if let Some(t) = app::parse_time_us(s) {
        return Some(t);
    }
    if s.len() == 10
        && let Some(t) = app::parse_time_us(&format!("{s}T00:00:00Z"))
    {
        return Some(t);
    }
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit())?);
    let n: i64 = num.parse().ok()?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        _ => return None,
    };
    Some(app::now_us() - secs * 1_000_000)
}

async fn list_actions(
    State(app): State<AppState>,
    c: Option<axum::Extension<Caller>>,
    Query(q): Query<ActionsQuery>,
) -> Response {
    let c = caller(c);
    let bound = |s: &Option<String>, what: &str| match s {
        None => Ok(None),
        Some(s) => time_bound(s).map(Some).ok_or_else(|| {
            error(
                StatusCode::BAD_REQUEST,
                &format!("`{what}`: expected RFC 3339, a date, or a duration such as 10m, 2h, 1d"),
            )
        }),
    };
    let since = match bound(&q.since, "since") {
        Ok(v) => v,
        Err(r) => return r,
    };
    let until = match bound(&q.until, "until") {
        Ok(v) => v,
        Err(r) => return r,
    };
    let before = match q.cursor.as_deref().map(str::parse::<i64>) {
        None => None,
        Some(Ok(c)) => Some(c),
        Some(Err(_)) => return error(StatusCode::BAD_REQUEST, "invalid `cursor`"),
    };
    let decisions: Vec<String> = q
        .decision
        .as_deref()
        .map(|d| {
            d.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let limit = q.limit.unwrap_or(PAGE_DEFAULT).clamp(1, PAGE_MAX);
    let query = ActionQuery {
        session: q.session,
        decisions,
        kind: q.kind,
        // An agent reads only the decisions it submitted.
        submitted_by: (!c.role.is_approver()).then(|| c.id.clone()),
        since_us: since,
        until_us: until,
        before_seq: before,
        limit,
    };
    match app.db.actions(&query).await {
        Err(e) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("database error: {e}"),
        ),
        Ok(rows) => {
            let next = (rows.len() as i64 == limit)
                .then(|| rows.last().map(|r| r.seq.to_string()))
                .flatten();
            let actions: Vec<Value> = rows
                .iter()
                .map(|r| {
                    let mut v: Value = serde_json::from_str(&r.record).unwrap_or(Value::Null);
                    if let Value::Object(m) = &mut v {
                        m.insert("seq".into(), json!(r.seq));
                    }
                    v
                })
                .collect();
            ok(json!({"actions": actions, "next_cursor": next}))
        }
    }
}

// ---- pending approvals -----------------------------------------------------

#[derive(Deserialize)]
struct EnqueueBody {
    action: Action,
    rule: Option<String>,
    reason: Option<String>,
    approver: Option<String>,
    timeout_secs: Option<u64>,
    on_timeout: Option<String>,
}

/// An adapter's ask: waits until a human answers or the timeout.
async fn enqueue(
    State(app): State<AppState>,
    axum::Extension(caller): axum::Extension<Caller>,
    body: Bytes,
) -> Response {
    let b: EnqueueBody = match parse_json(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let on_timeout = b.on_timeout.unwrap_or_else(|| "deny".into());
    if !matches!(on_timeout.as_str(), "allow" | "deny") {
        return error(
            StatusCode::BAD_REQUEST,
            "`on_timeout` must be allow or deny",
        );
    }
    let mut action = b.action;
    app.prepare(&mut action);
    let timeout = b
        .timeout_secs
        .map_or(app.cfg.default_timeout, Duration::from_secs)
        .min(Duration::from_secs(MAX_WAIT_SECS));
    let view = PendingView {
        id: action.id.clone(),
        action: app.masked_action(&action),
        session: action.session.id.clone(),
        rule: b.rule,
        reason: b.reason.unwrap_or_default(),
        approver: b.approver,
        created_at: aileron_audit::now_rfc3339(),
        timeout_secs: timeout.as_secs(),
        on_timeout,
        origin: "adapter".into(),
        judge: None,
        token: Some(caller.id),
    };
    let ask = NewAsk {
        fingerprint: replicas::fingerprint("adapter", &action),
        timeout,
        view,
    };
    // Asked again under its id (the adapter lost its server): the same ask.
    let res = match app.open_ask(ask).await {
        Ok(Opened::Waiting(mut ask)) => {
            match ops::until_drained(&app, app.answer_of(&mut ask)).await {
                Ok(Ok(res)) => res,
                Ok(Err(e)) => return unqueued(&e),
                Err(drained) => return drained,
            }
        }
        Ok(Opened::Decided(res)) => res,
        Ok(Opened::Taken) => {
            return error(StatusCode::CONFLICT, &crate::replicas::id_taken(&action.id));
        }
        Ok(Opened::Full(why)) => return error(StatusCode::TOO_MANY_REQUESTS, &why),
        Err(e) => return unqueued(&e),
    };
    let mut v = app::answer_json(&res);
    v["id"] = json!(action.id);
    let note = ops::Note(vec![
        ("action", json!(action.id)),
        ("answer", v["answer"].clone()),
        ("reviewer", json!(res.reviewer)),
    ]);
    note.on(ok(v))
}

async fn list_pending_for_role(
    State(app): State<AppState>,
    c: Option<axum::Extension<Caller>>,
) -> Response {
    if !caller(c).role.is_approver() {
        return error(
            StatusCode::FORBIDDEN,
            "this needs an approver token; this is an agent token",
        );
    }
    ok(json!({"pending": app.queue.snapshot()}))
}

async fn stream(State(app): State<AppState>) -> Response {
    let rx = app.queue.subscribe();
    let snapshot = app.queue.snapshot();
    let mut shutdown = app.shutdown.clone();
    let initial = futures_util::stream::iter(snapshot.into_iter().map(|v| {
        Ok::<_, Infallible>(
            SseEvent::default()
                .event("pending")
                .id(v.id.clone())
                .json_data(&v)
                .unwrap_or_default(),
        )
    }));
    let live = tokio_stream::wrappers::BroadcastStream::new(rx).filter_map(|e| async move {
        match e {
            Ok(ev) => Some(Ok::<_, Infallible>(
                SseEvent::default()
                    .event(ev.name())
                    .json_data(ev.data())
                    .unwrap_or_default(),
            )),
            // Lagged: tell the client to reload the snapshot.
            Err(_) => Some(Ok(SseEvent::default().event("resync").data("{}"))),
        }
    });
    let ended = async move {
        let _ = shutdown.wait_for(|s| *s).await;
    };
    let events = initial.chain(live).take_until(Box::pin(ended));
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

#[derive(Deserialize)]
struct DecisionBody {
    decision: String,
    reason: Option<String>,
    feedback: Option<String>,
    reviewer: Option<String>,
}

fn resolution_of(b: DecisionBody) -> Result<Resolution, Response> {
    let Some(answer) = AnswerKind::parse(&b.decision) else {
        return Err(error(
            StatusCode::BAD_REQUEST,
            "`decision` must be one of once, always, reject, feedback (or allow, deny)",
        ));
    };
    let reason = b.feedback.or(b.reason).filter(|r| !r.trim().is_empty());
    if answer == AnswerKind::Feedback && reason.is_none() {
        return Err(error(
            StatusCode::BAD_REQUEST,
            "`feedback` needs the feedback text in `reason`",
        ));
    }
    Ok(Resolution {
        answer,
        reason,
        reviewer: b.reviewer,
        channel: Some(Channel::Dashboard),
    })
}

/// An ask whose queue cannot be used: not decided here.
fn unqueued(e: &crate::Error) -> Response {
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        &format!("the approval queue cannot be used: {e}"),
    )
}

async fn resolve(app: &App, id: &str, res: Resolution) -> Response {
    let answer = res.answer.as_str();
    match app.decide_ask(id, res.clone()).await {
        Ok(()) => ok(json!({"ok": true, "id": id, "decision": answer})),
        Err(ResolveError::Resolved) => error(
            StatusCode::CONFLICT,
            "this action was already decided (or timed out)",
        ),
        Err(ResolveError::NotFound) => {
            error(StatusCode::NOT_FOUND, "no pending action with this id")
        }
        // Not stored: not a decision (the ask waits on).
        Err(ResolveError::Unstored(e)) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("the decision cannot be stored: {e}"),
        ),
    }
}

async fn decide(State(app): State<AppState>, Path(id): Path<String>, body: Bytes) -> Response {
    let b: DecisionBody = match parse_json(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    match resolution_of(b) {
        Ok(res) => resolve(&app, &id, res).await,
        Err(r) => r,
    }
}

// ---- rules -----------------------------------------------------------------

async fn list_rules(State(app): State<AppState>) -> Response {
    let set = app.rules.load_full();
    let mut rules: Vec<&crate::rules::StoredRule> = set.rules.iter().collect();
    // Seed order: priority descending, then id.
    rules.sort_by(|a, b| {
        b.rule
            .priority
            .cmp(&a.rule.priority)
            .then(a.entry.id.cmp(&b.entry.id))
    });
    let rules: Vec<Value> = rules.iter().map(|r| r.to_json()).collect();
    ok(json!({"rules": rules}))
}

/// A rule body: JSON, or YAML with a YAML content type.
fn rule_body(headers: &HeaderMap, body: &[u8]) -> Result<Value, Response> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if ct.contains("yaml") {
        let text = std::str::from_utf8(body)
            .map_err(|_| error(StatusCode::BAD_REQUEST, "the body is not UTF-8"))?;
        let node = aileron_engine::yaml::parse("request", text)
            .map_err(|d| invalid(Invalid::diags(vec![d])))?;
        Ok(node.to_json())
    } else {
        parse_json(body)
    }
}

async fn upsert_rule(
    State(app): State<AppState>,
    c: Option<axum::Extension<Caller>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let value = match rule_body(&headers, &body) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let entry = match entry_from_body(value, crate::auth::new_uuid) {
        Ok(e) => e,
        Err(i) => return invalid(i),
    };
    let c = caller(c);
    match app.upsert_rules(vec![entry], Some(&c)).await {
        Ok(saved) => {
            let r = &saved.rules[0];
            ok(json!({"id": r.entry.id, "rule": r.to_json(), "warnings": saved.warnings}))
        }
        Err(i) => invalid(i),
    }
}

async fn get_rule(State(app): State<AppState>, Path(id): Path<String>) -> Response {
    let set = app.rules.load_full();
    match set.rules.iter().find(|r| r.entry.id == id) {
        Some(r) => ok(r.to_json()),
        None => error(StatusCode::NOT_FOUND, "no rule with this id"),
    }
}

async fn delete_rule(State(app): State<AppState>, Path(id): Path<String>) -> Response {
    match app.delete_rule(&id).await {
        Ok(_) => ok(json!({"ok": true})),
        Err(e) => error(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("database error: {e}"),
        ),
    }
}

async fn preview(State(app): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    let value = match rule_body(&headers, &body) {
        Ok(v) => v,
        Err(r) => return r,
    };
    let Value::Object(mut m) = value else {
        return error(StatusCode::BAD_REQUEST, "expected {draft, lookbackLimit}");
    };
    let Some(draft) = m.remove("draft") else {
        return error(StatusCode::BAD_REQUEST, "`draft` (a rule) is required");
    };
    let limit = m
        .get("lookbackLimit")
        .or_else(|| m.get("lookback_limit"))
        .and_then(Value::as_i64)
        .unwrap_or(PREVIEW_DEFAULT)
        .clamp(1, PREVIEW_MAX);
    let entry = match entry_from_body(draft, || "draft".to_owned()) {
        Ok(e) => e,
        Err(i) => return invalid(i),
    };
    let home = app.cfg.home.to_string_lossy().into_owned();
    let rule = match entry.compile("draft", &home) {
        Ok(r) => r,
        Err(d) => return invalid(Invalid::diags(d)),
    };
    let warnings = app.draft_warnings(rule.clone()).await;
    let rows = match app
        .db
        .actions(&ActionQuery {
            limit,
            ..ActionQuery::default()
        })
        .await
    {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("database error: {e}"),
            );
        }
    };
    let mut matched = 0;
    let mut samples = Vec::new();
    for row in &rows {
        let record: Value = serde_json::from_str(&row.record).unwrap_or(Value::Null);
        let action: Option<Action> = row
            .action
            .as_deref()
            .and_then(|a| serde_json::from_str(a).ok())
            .or_else(|| {
                serde_json::from_value::<AuditRecord>(record.clone())
                    .ok()
                    .and_then(|r| serde_json::from_value(app::action_from_record(&r)).ok())
            });
        let Some(action) = action else { continue };
        // Scope is ignored: whether the matcher would have hit.
        let hit = app::matchable_actions(action, &home)
            .iter()
            .any(|a| rule.matcher.is_match(a, History::default()));
        if hit {
            matched += 1;
            if samples.len() < PREVIEW_SAMPLES {
                samples.push(json!({
                    "timestamp": record.get("time"),
                    "sessionId": record.get("session"),
                    "record": record,
                }));
            }
        }
    }
    ok(json!({"matched": matched, "total": rows.len(), "samples": samples, "warnings": warnings}))
}

// ---- catalogs ---------------------------------------------------------------

/// The action types adapters emit, for the rule builder.
const ACTION_TYPES: &[(&str, &str, &str, &str, &str)] = &[
    (
        "shell.exec",
        "Shell command",
        "A simple command of a shell line.",
        "shell",
        "write",
    ),
    (
        "fs.read",
        "Read a file",
        "An agent's file read tool.",
        "fs",
        "read",
    ),
    (
        "fs.write",
        "Write a file",
        "An agent's file write or edit tool.",
        "fs",
        "write",
    ),
    (
        "fs.list",
        "List a directory",
        "An agent's directory listing or search tool.",
        "fs",
        "read",
    ),
    (
        "http.request",
        "Web request",
        "A request through the egress proxy or a fetch tool; the proxy adds git, k8s, llm and ws facets to the requests it recognises.",
        "http",
        "read",
    ),
    (
        "mcp.call",
        "MCP tool call",
        "An MCP server's tools/call (mcp.tool, mcp.arguments, mcp.annotations), resources/read (mcp.resource) or prompts/get (mcp.prompt): from the agent hooks and the MCP gateway, aileron mcp.",
        "mcp",
        "write",
    ),
    (
        "tool.call",
        "Agent tool call",
        "Any other tool of the agent.",
        "tool",
        "write",
    ),
    (
        "sql.query",
        "SQL query",
        "A statement sent to a database (the PostgreSQL gateway: verb, tables, text, database, user; tags dynamic and unparsable).",
        "sql",
        "write",
    ),
    (
        "agent.doom_loop",
        "Doom loop",
        "The same tool with the same input three times in a row.",
        "agent",
        "read",
    ),
];

/// The facets an action type may carry besides its primary one: those the
/// egress proxy adds to the requests it recognises.
const EXTRA_FACETS: &[(&str, &[&str])] = &[("http.request", &["git", "k8s", "llm", "ws"])];

async fn action_schemas() -> Response {
    let schemas: Vec<Value> = ACTION_TYPES
        .iter()
        .map(|(ty, label, desc, primary, sens)| {
            let facets: Vec<&str> = std::iter::once(*primary)
                .chain(
                    EXTRA_FACETS
                        .iter()
                        .filter(|(t, _)| t == ty)
                        .flat_map(|(_, fs)| fs.iter().copied()),
                )
                .collect();
            let fields: Vec<String> = facets
                .iter()
                .filter_map(|f| KNOWN_FACETS.iter().find(|(k, _)| k == f))
                .flat_map(|(f, fs)| fs.iter().map(move |x| format!("{f}.{x}")))
                .collect();
            json!({
                "pluginId": "aileron", "type": ty, "label": label, "description": desc,
                "primary": primary, "defaultSensitivity": sens, "facets": facets,
                "fields": fields,
            })
        })
        .collect();
    let facets: HashMap<&str, &[&str]> = KNOWN_FACETS.iter().copied().collect();
    ok(json!({
        "schemas": schemas,
        "topLevelFields": TOP_LEVEL_FIELDS,
        "sessionFields": ["session.id", "session.agent", "session.plugin", "session.profile", "session.integration", "session.cwd"],
        "facets": facets,
        "operators": aileron_engine::pattern::OPERATORS,
    }))
}

async fn approvers(State(app): State<AppState>) -> Response {
    let mut human = vec![json!({
        "id": "dashboard", "name": "Dashboard",
        "description": "The pending queue of this server (GET /api/pending-actions, the dashboard)."
    })];
    for a in &app.cfg.approvers {
        human.push(json!({
            "id": a.id, "name": a.name.clone().unwrap_or_else(|| a.id.clone()),
            "description": "A webhook approver: signed callbacks at /api/approvers/<id>/decision.",
            "kind": "webhook",
        }));
    }
    // The judges a `judge` rule may name: those of the server's own policy,
    // which stored rules are checked against (never a key, nor where it is).
    let llm: Vec<Value> = app
        .judges_defined()
        .await
        .into_iter()
        .map(|j| {
            json!({
                "id": j.name, "name": j.name, "kind": "judge",
                "provider": j.provider, "model": j.model,
            })
        })
        .collect();
    ok(json!({"llm": llm, "human": human}))
}

/// `POST /api/approvers/<id>/<path>`: a webhook approver's callback,
/// signed `X-Aileron-Signature: sha256=<hex HMAC-SHA256 of the body>`.
async fn webhook(
    State(app): State<AppState>,
    Path((id, path)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Some(approver) = app.cfg.approvers.iter().find(|a| a.id == id) else {
        return error(StatusCode::NOT_FOUND, "no approver with this id");
    };
    let sig = headers
        .get("x-aileron-signature")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("sha256="));
    let Some(sig) = sig else {
        return unauthorized("missing X-Aileron-Signature: sha256=<hex>");
    };
    let want = crate::notify::signature(&approver.secret, &body);
    let want = want.trim_start_matches("sha256=");
    if !constant_time_eq(want.as_bytes(), sig.to_ascii_lowercase().as_bytes()) {
        return unauthorized("bad signature");
    }
    match path.as_str() {
        "decision" => {
            #[derive(Deserialize)]
            struct Hook {
                id: String,
                #[serde(flatten)]
                decision: DecisionBody,
            }
            let mut h: Hook = match parse_json(&body) {
                Ok(h) => h,
                Err(r) => return r,
            };
            h.decision
                .reviewer
                .get_or_insert_with(|| approver.id.clone());
            match resolution_of(h.decision) {
                Ok(mut res) => {
                    res.channel = Some(Channel::Webhook(approver.id.clone()));
                    resolve(&app, &h.id, res).await
                }
                Err(r) => r,
            }
        }
        _ => error(StatusCode::NOT_FOUND, "this approver has no such webhook"),
    }
}

async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

// ---- the dashboard ----------------------------------------------------------

async fn index() -> Response {
    serve_asset("index.html")
}

async fn asset(Path(file): Path<String>) -> Response {
    serve_asset(&file)
}

fn serve_asset(file: &str) -> Response {
    let Some(f) = Assets::get(file) else {
        return error(StatusCode::NOT_FOUND, "no such file");
    };
    let mime = match file.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "json" => "application/json",
        "woff2" => "font/woff2",
        _ => "application/octet-stream",
    };
    Response::builder()
        .header(header::CONTENT_TYPE, mime)
        .body(Body::from(f.data.into_owned()))
        .unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "asset"))
}
