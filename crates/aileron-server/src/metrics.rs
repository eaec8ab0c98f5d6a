//! The server's counters, in Prometheus' text format (`GET /metrics`).
//!
//! Every value is an `AtomicU64` in a fixed table, so that counting on the
//! hot path takes no lock and allocates nothing; the text is written only
//! when scraped.

use aileron_engine::{Decision, VerdictSource};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// The final decisions of `/api/evaluate`.
const DECISIONS: [Decision; 2] = [Decision::Allow, Decision::Deny];
const SOURCES: [VerdictSource; 6] = [
    VerdictSource::Static,
    VerdictSource::Default,
    VerdictSource::Builtin,
    VerdictSource::Human,
    VerdictSource::Llm,
    VerdictSource::Session,
];
/// What a judge said (`error`: it gave no verdict; the rule's
/// `fail_closed` decided).
const JUDGE_RESULTS: [&str; 4] = ["allow", "deny", "ask", "error"];
/// Upper bounds of the latency buckets of `/api/evaluate`, in seconds: a
/// decision takes a millisecond; an ask waits for a person (minutes).
const BUCKETS: [f64; 16] = [
    0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 60.0, 300.0,
    3600.0,
];
/// The routes counted by method and path; any other request counts as
/// `other` (the fallback: unknown paths, the dashboard's missing files).
pub const ROUTES: &[(&str, &str)] = &[
    ("POST", "/api/evaluate"),
    ("GET", "/api/actions"),
    ("POST", "/api/actions"),
    ("POST", "/api/pending-actions"),
    ("GET", "/api/pending-actions"),
    ("GET", "/api/action-schemas"),
    ("GET", "/api/openapi.json"),
    ("GET", "/api/rules"),
    ("POST", "/api/rules"),
    ("POST", "/api/rules/preview"),
    ("GET", "/api/rules/{id}"),
    ("DELETE", "/api/rules/{id}"),
    ("GET", "/api/approvers"),
    ("GET", "/api/pending-actions/stream"),
    ("POST", "/api/pending-actions/{id}/decision"),
    ("POST", "/api/approvers/{id}/{*path}"),
    ("GET", "/"),
    ("GET", "/assets/{*file}"),
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
];
/// Status codes 100 to 599, one counter each.
const STATUSES: usize = 500;

/// The counters of one server.
pub struct Metrics {
    decisions: [[AtomicU64; SOURCES.len()]; DECISIONS.len()],
    judge_calls: [AtomicU64; JUDGE_RESULTS.len()],
    /// Cumulative is computed when written: each slot counts its bucket
    /// alone (the last one: above every bound).
    evaluate_buckets: [AtomicU64; BUCKETS.len() + 1],
    evaluate_count: AtomicU64,
    evaluate_sum_us: AtomicU64,
    /// `(ROUTES.len() + 1) * STATUSES`: by route (or other), by status.
    http: Box<[AtomicU64]>,
    pruned: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            decisions: Default::default(),
            judge_calls: Default::default(),
            evaluate_buckets: Default::default(),
            evaluate_count: AtomicU64::new(0),
            evaluate_sum_us: AtomicU64::new(0),
            http: (0..(ROUTES.len() + 1) * STATUSES)
                .map(|_| AtomicU64::new(0))
                .collect(),
            pruned: AtomicU64::new(0),
        }
    }
}

impl Metrics {
    /// One answer of `/api/evaluate`: its final decision and what decided it.
    pub fn decided(&self, decision: Decision, source: VerdictSource) {
        let d = DECISIONS.iter().position(|x| *x == decision);
        let s = SOURCES.iter().position(|x| *x == source);
        if let (Some(d), Some(s)) = (d, s) {
            self.decisions[d][s].fetch_add(1, Relaxed);
        }
    }

    /// How long one `/api/evaluate` took, a person's wait included.
    pub fn evaluate_took(&self, took: Duration) {
        let secs = took.as_secs_f64();
        let i = BUCKETS
            .iter()
            .position(|b| secs <= *b)
            .unwrap_or(BUCKETS.len());
        self.evaluate_buckets[i].fetch_add(1, Relaxed);
        self.evaluate_count.fetch_add(1, Relaxed);
        self.evaluate_sum_us
            .fetch_add(took.as_micros().min(u64::MAX.into()) as u64, Relaxed);
    }

    /// The judge's call that made `step` (`allow`, `deny`, `ask`, `error`).
    pub fn judge_called(&self, step: &aileron_decision::Step) {
        let result = match step {
            aileron_decision::Step::Ask(_) => "ask",
            aileron_decision::Step::Done(d) => match &d.judge {
                Some(j) => j.verdict.as_str(),
                None => return,
            },
        };
        if let Some(i) = JUDGE_RESULTS.iter().position(|r| *r == result) {
            self.judge_calls[i].fetch_add(1, Relaxed);
        }
    }

    /// One HTTP answer: the route it matched (`None`: none), its status.
    pub fn http_answered(&self, method: &str, route: Option<&str>, status: u16) {
        let r = route
            .and_then(|path| ROUTES.iter().position(|x| *x == (method, path)))
            .unwrap_or(ROUTES.len());
        let s = usize::from(status).clamp(100, 599) - 100;
        self.http[r * STATUSES + s].fetch_add(1, Relaxed);
    }

    /// Rows of the action log deleted by the retention.
    pub fn pruned(&self, rows: u64) {
        self.pruned.fetch_add(rows, Relaxed);
    }

    pub fn pruned_total(&self) -> u64 {
        self.pruned.load(Relaxed)
    }

    /// The exposition (text format 0.0.4); `pending`: the asks waiting now.
    pub fn render(&self, pending: usize) -> String {
        let mut out = String::with_capacity(4096);
        let o = &mut out;
        head(
            o,
            "aileron_build_info",
            "gauge",
            "The running server's version.",
        );
        line(
            o,
            "aileron_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))],
            1,
        );
        head(
            o,
            "aileron_decisions_total",
            "counter",
            "Final decisions of /api/evaluate, by decision and by what decided (static, default, builtin, human, llm, session).",
        );
        for (d, row) in DECISIONS.iter().zip(&self.decisions) {
            for (s, n) in SOURCES.iter().zip(row) {
                let labels = [("decision", d.as_str()), ("source", s.as_str())];
                line(o, "aileron_decisions_total", &labels, n.load(Relaxed));
            }
        }
        head(
            o,
            "aileron_evaluate_seconds",
            "histogram",
            "Time to answer /api/evaluate, a person's wait for an ask included.",
        );
        let mut cumulative = 0;
        for (i, n) in self.evaluate_buckets.iter().enumerate() {
            cumulative += n.load(Relaxed);
            let le = BUCKETS
                .get(i)
                .map_or_else(|| "+Inf".to_owned(), f64::to_string);
            line(
                o,
                "aileron_evaluate_seconds_bucket",
                &[("le", &le)],
                cumulative,
            );
        }
        let sum = self.evaluate_sum_us.load(Relaxed) as f64 / 1e6;
        let _ = writeln!(o, "aileron_evaluate_seconds_sum {sum}");
        let count = self.evaluate_count.load(Relaxed);
        line(o, "aileron_evaluate_seconds_count", &[], count);
        head(
            o,
            "aileron_pending_asks",
            "gauge",
            "Actions waiting for a person in this server's queue.",
        );
        line(o, "aileron_pending_asks", &[], pending as u64);
        head(
            o,
            "aileron_judge_calls_total",
            "counter",
            "Calls of an LLM judge by its verdict (error: none; the rule's fail_closed decided); a verdict from the cache counts too.",
        );
        for (r, n) in JUDGE_RESULTS.iter().zip(&self.judge_calls) {
            line(
                o,
                "aileron_judge_calls_total",
                &[("result", r)],
                n.load(Relaxed),
            );
        }
        head(
            o,
            "aileron_actions_pruned_total",
            "counter",
            "Rows of the action log deleted by the retention (--retain).",
        );
        line(o, "aileron_actions_pruned_total", &[], self.pruned_total());
        head(
            o,
            "aileron_http_requests_total",
            "counter",
            "HTTP requests answered, by method, route and status.",
        );
        for (i, n) in self.http.iter().enumerate() {
            let n = n.load(Relaxed);
            if n == 0 {
                continue;
            }
            let (method, route) = ROUTES.get(i / STATUSES).copied().unwrap_or(("", "other"));
            let status = (i % STATUSES + 100).to_string();
            let labels = [("method", method), ("route", route), ("status", &status)];
            let labels = if method.is_empty() {
                &labels[1..]
            } else {
                &labels[..]
            };
            line(o, "aileron_http_requests_total", labels, n);
        }
        out
    }
}

fn head(o: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

fn line(o: &mut String, name: &str, labels: &[(&str, &str)], value: u64) {
    o.push_str(name);
    if !labels.is_empty() {
        o.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                o.push(',');
            }
            // Label values here are fixed words and route templates.
            let _ = write!(
                o,
                "{k}=\"{}\"",
                v.replace('\\', "\\\\").replace('"', "\\\"")
            );
        }
        o.push('}');
    }
    let _ = writeln!(o, " {value}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition() {
        let m = Metrics::default();
        m.decided(Decision::Deny, VerdictSource::Builtin);
        m.decided(Decision::Deny, VerdictSource::Builtin);
        m.evaluate_took(Duration::from_micros(700));
        m.evaluate_took(Duration::from_secs(90));
        m.http_answered("POST", Some("/api/evaluate"), 200);
        m.http_answered("GET", Some("/nope"), 404);
        let text = m.render(3);
        for want in [
            "aileron_decisions_total{decision=\"deny\",source=\"builtin\"} 2\n",
            "aileron_decisions_total{decision=\"allow\",source=\"human\"} 0\n",
            "aileron_evaluate_seconds_bucket{le=\"0.0005\"} 0\n",
            "aileron_evaluate_seconds_bucket{le=\"0.001\"} 1\n",
            "aileron_evaluate_seconds_bucket{le=\"60\"} 1\n",
            "aileron_evaluate_seconds_bucket{le=\"300\"} 2\n",
            "aileron_evaluate_seconds_bucket{le=\"+Inf\"} 2\n",
            "aileron_evaluate_seconds_sum 90.0007\n",
            "aileron_evaluate_seconds_count 2\n",
            "aileron_pending_asks 3\n",
            "aileron_judge_calls_total{result=\"error\"} 0\n",
            "aileron_http_requests_total{method=\"POST\",route=\"/api/evaluate\",status=\"200\"} 1\n",
            "aileron_http_requests_total{route=\"other\",status=\"404\"} 1\n",
            "# TYPE aileron_evaluate_seconds histogram\n",
        ] {
            assert!(text.contains(want), "{want:?} missing from\n{text}");
        }
    }
}
