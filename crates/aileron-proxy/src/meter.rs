//! The token usage of an LLM API call, read from its response as it
//! streams to the client, and written to the audit log when it ends: what
//! a team's agents spend, per call, beside the call's decision.

use crate::lower::{Usage, UsageScanner};
use aileron_audit::{AuditAction, AuditLog, AuditRecord, Masker};
use aileron_engine::Action;
use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use serde_json::Value;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

/// Where usage lines go: the audit log of the policy in force.
pub struct UsageLog {
    pub path: PathBuf,
    pub masker: Masker,
}

impl UsageLog {
    /// Appends the line for `action`'s response (`usage`: what it said).
    pub fn record(&self, action: &Action, rule: Option<String>, usage: Option<Usage>) {
        let mut logged = AuditAction::from_action(action);
        logged.id = format!("{}.usage", action.id);
        let reason = match usage {
            Some(u) => {
                if let Some(Value::Object(llm)) = logged.facets.get_mut("llm") {
                    llm.insert("input_tokens".into(), u.input_tokens.into());
                    llm.insert("output_tokens".into(), u.output_tokens.into());
                }
                format!(
                    "the response of {} used {} input and {} output tokens",
                    action.id, u.input_tokens, u.output_tokens
                )
            }
            None => format!("the response of {} said no token usage", action.id),
        };
        let record = AuditRecord {
            time: aileron_audit::now_rfc3339(),
            session: action.session.id.clone(),
            agent: action.session.agent.clone(),
            adapter: "proxy".into(),
            cwd: action.session.cwd.clone(),
            action: logged,
            decision: "allow".into(),
            outcome: Some("response".into()),
            source: "proxy".into(),
            rule,
            reason,
            approver: None,
            latency_us: 0,
            judge: None,
        }
        .masked(&self.masker);
        // A lost usage line loses a count, not a decision.
        let _ = AuditLog::new(self.path.clone()).append(&record);
    }
}

/// A response body that counts the usage it carries and reports it once,
/// at its end (or when the client goes away first).
pub struct Metered {
    inner: Incoming,
    scanner: UsageScanner,
    done: Option<Box<dyn FnOnce(Option<Usage>) + Send + Sync>>,
}

impl Metered {
    pub fn new(
        inner: Incoming,
        done: impl FnOnce(Option<Usage>) + Send + Sync + 'static,
    ) -> Metered {
        Metered {
            inner,
            scanner: UsageScanner::new(),
            done: Some(Box::new(done)),
        }
    }

    fn finish(&mut self) {
        if let Some(done) = self.done.take() {
            done(self.scanner.usage());
        }
    }
}

impl Body for Metered {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.scanner.feed(data);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(None) => {
                this.finish();
                Poll::Ready(None)
            }
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Metered {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Records `usage` off the async threads.
pub fn report(log: Arc<UsageLog>, action: Action, rule: Option<String>, usage: Option<Usage>) {
    tokio::task::spawn_blocking(move || log.record(&action, rule, usage));
}
