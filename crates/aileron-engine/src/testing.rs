//! Runs a policy's `tests:` examples (`aileron test`, `aileron check`).

use crate::action::{Action, Session};
use crate::command_line::LineContext;
use crate::document::{TestCase, TestInput};
use crate::evaluate::{State, Verdict};
use crate::policy::Policy;
use serde::Serialize;

/// The outcome of one example.
#[derive(Clone, Debug, Serialize)]
pub struct TestOutcome {
    /// `FILE:LINE:COL` of the example.
    pub location: String,
    /// The example's name, or its input.
    pub name: String,
    /// Whether it decided as expected.
    pub passed: bool,
    /// The decision it expected.
    pub expected: String,
    /// What the policy decided.
    pub got: Verdict,
    /// Why it failed, in one line.
    pub failure: Option<String>,
}

/// Fixed inputs so examples decide the same way every run:
/// 2026-01-05T12:00:00Z, a Monday noon.
const TEST_TIME: jiff::Timestamp = jiff::Timestamp::constant(1_767_614_400, 0);

impl Policy {
    /// Runs every example of the policy's sources.
    pub fn run_tests(&self) -> Vec<TestOutcome> {
        self.tests.iter().map(|t| self.run_test(t)).collect()
    }

    /// Runs one example.
    pub fn run_test(&self, t: &TestCase) -> TestOutcome {
        let state = State::default();
        let (name, got) = match &t.input {
            TestInput::Command(line) => {
                let session = Session {
                    cwd: Some(t.cwd.clone()),
                    ..Session::default()
                };
                let cx = LineContext {
                    cwd: &t.cwd,
                    session: &session,
                    timestamp: Some(TEST_TIME),
                    id: "test",
                    exe: None,
                };
                (line.clone(), self.evaluate_line(line, &cx, &state).verdict)
            }
            TestInput::Action(a) => {
                let mut a: Action = (**a).clone();
                a.timestamp.get_or_insert(TEST_TIME);
                if a.session.cwd.is_none() {
                    a.session.cwd = Some(t.cwd.clone());
                }
                a.normalize();
                (a.summary.clone(), self.evaluate(&a, &state))
            }
        };
        let name = t.name.clone().unwrap_or(name);
        let mut failure = None;
        if got.decision != t.expect {
            failure = Some(format!(
                "expected {}, got {} ({})",
                t.expect.as_str(),
                got.decision.as_str(),
                match &got.rule {
                    Some(r) => format!("rule `{r}`: {}", got.reason),
                    None => got.reason.clone(),
                }
            ));
        } else if let Some(want) = &t.rule
            && got.rule.as_deref() != Some(want.as_str())
        {
            failure = Some(format!(
                "expected rule `{want}`, got {}",
                got.rule
                    .as_deref()
                    .map_or("the default".to_owned(), |r| format!("`{r}`"))
            ));
        }
        TestOutcome {
            location: format!("{}:{}:{}", t.file, t.pos.line, t.pos.col),
            name,
            passed: failure.is_none(),
            expected: t.expect.as_str().to_owned(),
            got,
            failure,
        }
    }
}
