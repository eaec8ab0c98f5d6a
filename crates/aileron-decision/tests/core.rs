//! The decision core's semantics, every answer and cascade once: what the
//! shim, the hooks, the launch session and the server all rely on.

use aileron_decision::{
    AlwaysScope, Answer, Channel, Core, Decided, Outcome, Pending, Request, SavedApproval, Step,
    Subject,
};
use aileron_engine::{
    Action, Decision, Environment, Layer, LineContext, Policy, Session, Source, VerdictSource,
};
use std::path::Path;
use std::time::Duration;

const DIR: &str = "/repo";

fn policy_at(path: &str, layer: Layer, text: &str) -> Policy {
    let src = Source {
        name: path.into(),
        text: text.into(),
        layer,
        base_dir: aileron_engine::paths::parent(path).to_owned(),
    };
    Policy::from_sources(&[src], &Environment::new("/home/u")).expect("policy loads")
}

fn policy(text: &str) -> Policy {
    policy_at("/repo/aileron.yaml", Layer::Project, text)
}

/// Asks about everything unlisted; `ls` is allowed, `rm` denied.
const ASK: &str =
    "version: 1\ndefault: ask\nsettings: {timeout: 7}\nallow: [\"ls *\"]\ndeny: [\"rm *\"]\n";

struct Fixture {
    session: Session,
    time: String,
    id: String,
}

impl Fixture {
    fn new(id: &str) -> Fixture {
        Fixture {
            session: Session {
                id: Some("s1".into()),
                cwd: Some(DIR.into()),
                ..Session::default()
            },
            time: "2026-03-01T10:00:00Z".into(),
            id: id.into(),
        }
    }

    fn req<'a>(&'a self, session: Option<&'a str>, subject: Subject<'a>) -> Request<'a> {
        Request {
            session,
            subject,
            cx: LineContext {
                cwd: DIR,
                session: &self.session,
                timestamp: self.time.parse().ok(),
                id: &self.id,
                exe: None,
            },
            now: self.time.parse().unwrap(),
            agent_asks: false,
            repeat: false,
            traffic: false,
            waiting_since: None,
            prompt_budget: None,
            default_timeout: Duration::from_secs(60),
            adjust: None,
        }
    }
}

fn done(step: Step) -> Decided {
    match step {
        Step::Done(d) => d,
        Step::Ask(p) => panic!("asked: {}", p.question.command),
    }
}

fn asked(step: Step) -> Pending {
    match step {
        Step::Ask(p) => p,
        Step::Done(d) => panic!("decided: {d:?}"),
    }
}

/// Decides `line` in session `s1`.
fn line(core: &Core, p: &Policy, line: &str) -> Step {
    let f = Fixture::new("a1");
    core.decide(p, &f.req(Some("s1"), Subject::Line(line)))
}

/// Decides `line`, asks, and answers.
fn answered(core: &Core, p: &Policy, text: &str, answer: Answer, channel: Channel) -> Step {
    let f = Fixture::new("a1");
    let req = f.req(Some("s1"), Subject::Line(text));
    let pending = asked(core.decide(p, &req));
    core.answer(p, &req, pending, answer, channel)
}

#[test]
fn the_policy_decides_what_it_can_without_asking() {
    let core = Core::new();
    let p = policy(ASK);
    let d = done(line(&core, &p, "ls -la"));
    assert!(d.allow);
    assert_eq!(d.outcome, None);
    let d = done(line(&core, &p, "rm -rf x"));
    assert!(!d.allow);
    assert_eq!(d.decision(), Decision::Deny);
    assert!(
        d.message
            .as_deref()
            .unwrap()
            .starts_with("aileron: denied: "),
        "{d:?}"
    );
}

#[test]
fn an_ask_says_what_to_ask_with_the_settings_timeout() {
    let core = Core::new();
    let p = policy(ASK);
    let pending = asked(line(&core, &p, "git push origin main"));
    let q = &pending.question;
    assert_eq!(q.command, "git push origin main");
    assert_eq!(q.suggestion, "git push *");
    assert_eq!(q.timeout, Duration::from_secs(7));
    assert!(!q.allow_on_timeout);
    assert_eq!(pending.verdict.decision, Decision::Ask);
}

#[test]
fn an_agent_that_asks_its_human_gets_ask_back() {
    let core = Core::new();
    let p = policy(ASK);
    let f = Fixture::new("a1");
    let mut req = f.req(Some("s1"), Subject::Line("git push"));
    req.agent_asks = true;
    let d = done(core.decide(&p, &req));
    assert_eq!(d.decision(), Decision::Ask);
    assert_eq!(d.outcome, Some(Outcome::AskedAgent));
    // ... unless the policy sends asks to the dashboard.
    let ui = policy("version: 1\ndefault: ask\nsettings: {ask_mode: ui}\n");
    assert!(matches!(core.decide(&ui, &req), Step::Ask(_)));
}

#[test]
fn once_allows_once_and_records_the_channel() {
    let core = Core::new();
    let p = policy(ASK);
    let d = done(answered(
        &core,
        &p,
        "git push",
        Answer::Once,
        Channel::Dashboard,
    ));
    assert!(d.allow);
    assert_eq!(d.outcome, Some(Outcome::ApprovedOnce));
    assert_eq!(d.verdict.source, VerdictSource::Human);
    assert_eq!(d.verdict.approver.as_deref(), Some("dashboard"));
    let rec = d.record(&aileron_decision::Origin {
        time: "2026-03-01T10:00:00Z",
        adapter: "server",
        session: Some("s1"),
        agent: None,
        cwd: Some(DIR),
        latency_us: 5,
    });
    assert_eq!(rec.approver.as_deref(), Some("dashboard"));
    assert_eq!(rec.outcome.as_deref(), Some("approved-once"));
    assert_eq!(rec.decision, "ask");
    assert_eq!(rec.source, "human");
    // Once is once.
    assert!(matches!(line(&core, &p, "git push"), Step::Ask(_)));
}

#[test]
fn always_for_the_session_allows_what_its_pattern_covers_in_that_session_only() {
    let core = Core::new();
    let p = policy(ASK);
    let d = done(answered(
        &core,
        &p,
        "git push origin main",
        Answer::Always(AlwaysScope::Session, "git push *".into()),
        Channel::Terminal,
    ));
    assert_eq!(d.outcome, Some(Outcome::ApprovedAlwaysSession));
    assert!(d.amendments.is_empty(), "a session answer writes no file");
    let d = done(line(&core, &p, "git push origin other"));
    assert!(d.allow);
    assert_eq!(d.verdict.source, VerdictSource::Session);
    assert!(matches!(line(&core, &p, "git pull"), Step::Ask(_)));
    // Another session is not covered.
    let f = Fixture::new("b1");
    let req = f.req(Some("s2"), Subject::Line("git push origin main"));
    assert!(matches!(core.decide(&p, &req), Step::Ask(_)));
    // An empty pattern means exactly the command.
    done(answered(
        &core,
        &p,
        "make all",
        Answer::Always(AlwaysScope::Session, String::new()),
        Channel::Terminal,
    ));
    assert!(done(line(&core, &p, "make all")).allow);
    assert!(matches!(line(&core, &p, "make test"), Step::Ask(_)));
}

#[test]
fn always_for_an_action_pins_the_fields_the_human_saw() {
    let core = Core::new();
    let p = policy("version: 1\ndefault: ask\n");
    let http = |url: &str| {
        let mut a: Action = serde_json::from_value(serde_json::json!({
            "type": "http.request",
            "facets": {"http": {"method": "DELETE", "url": url}}
        }))
        .unwrap();
        a.normalize();
        a
    };
    let f = Fixture::new("h1");
    let first = [http("https://x.example/1")];
    let req = f.req(Some("s1"), Subject::Actions("DELETE", &first));
    let pending = asked(core.decide(&p, &req));
    let d = done(core.answer(
        &p,
        &req,
        pending,
        Answer::Always(AlwaysScope::Session, String::new()),
        Channel::Dashboard,
    ));
    assert!(d.allow);
    assert!(done(core.decide(&p, &req)).allow, "the same call again");
    let other = [http("https://x.example/2")];
    let req = f.req(Some("s1"), Subject::Actions("DELETE", &other));
    assert!(
        matches!(core.decide(&p, &req), Step::Ask(_)),
        "another URL on the same host is still asked"
    );
}

#[test]
fn always_for_the_project_becomes_an_amendment_that_outranks_the_asking_rule() {
    let core = Core::new();
    let text = "version: 1\ndefault: deny\nask:\n  - {id: ask-mkdir, command: \"mkdir *\", priority: 100}\n";
    let p = policy(text);
    let d = done(answered(
        &core,
        &p,
        "mkdir -p a",
        Answer::Always(AlwaysScope::Project, "mkdir *".into()),
        Channel::Terminal,
    ));
    assert_eq!(d.outcome, Some(Outcome::ApprovedAlwaysProject));
    let [amendment] = d.amendments.as_slice() else {
        panic!("{:?}", d.amendments)
    };
    assert_eq!(
        amendment.approval,
        SavedApproval::Command {
            pattern: "mkdir *".into(),
            priority: 100
        }
    );
    assert_eq!(amendment.asking_rule.as_deref(), Some("ask-mkdir"));
    let path = amendment.path(None, Path::new(DIR), Path::new("/home/u"));
    assert_eq!(path, Path::new("/repo/aileron.yaml"));
    // Appended after the asking rule in its own file: its priority is enough.
    assert_eq!(amendment.priority(&p, &path), Some(100));
    // From a lower layer it needs one more.
    let user_rule = policy_at("/home/u/.aileron/settings.yaml", Layer::User, text);
    assert_eq!(amendment.priority(&user_rule, &path), Some(101));

    // Written, the file loads and the rule wins.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("aileron.yaml");
    std::fs::write(&file, text).unwrap();
    let at = file.to_str().unwrap();
    let before = policy_at(at, Layer::Project, text);
    let priority = amendment.priority(&before, &file);
    amendment
        .write(&file, priority, "added by a test", "/home/u")
        .unwrap();
    let after = policy_at(at, Layer::Project, &std::fs::read_to_string(&file).unwrap());
    let fresh = Core::new();
    let d = done(line(&fresh, &after, "mkdir -p b"));
    assert!(d.allow, "{d:?}");
}

#[test]
fn always_for_me_and_the_default_ask_need_no_priority() {
    let core = Core::new();
    let p = policy("version: 1\ndefault: ask\n");
    let d = done(answered(
        &core,
        &p,
        "make",
        Answer::Always(AlwaysScope::User, String::new()),
        Channel::Terminal,
    ));
    assert_eq!(d.outcome, Some(Outcome::ApprovedAlwaysUser));
    let a = &d.amendments[0];
    let path = a.path(
        Some(Path::new("/repo/aileron.yaml")),
        Path::new(DIR),
        Path::new("/home/u"),
    );
    assert_eq!(path, Path::new("/home/u/.aileron/settings.yaml"));
    assert_eq!(a.priority(&p, &path), None);
}

#[test]
fn reject_refuses_and_rejects_what_else_of_the_session_waits() {
    let core = Core::new();
    let p = policy(ASK);
    let f = Fixture::new("w1");
    let waiting_req = f.req(Some("s1"), Subject::Line("make deploy"));
    let waiting = asked(core.decide(&p, &waiting_req));
    let d = done(answered(
        &core,
        &p,
        "git push",
        Answer::Reject,
        Channel::Terminal,
    ));
    assert!(!d.allow);
    assert_eq!(d.outcome, Some(Outcome::Rejected));
    assert_eq!(
        d.message.as_deref(),
        Some("aileron: rejected: the user rejected `git push`")
    );
    // The other ask of the session, when it steps again.
    let d = done(core.resume(&p, &waiting_req, waiting));
    assert_eq!(d.outcome, Some(Outcome::Rejected));
    assert_eq!(
        d.message.as_deref(),
        Some(aileron_decision::REJECTED_EARLIER)
    );
    // A request from another process that started waiting before the reject.
    let mut late = f.req(Some("s1"), Subject::Line("make other"));
    late.waiting_since = Some("2026-03-01T09:59:00Z".parse().unwrap());
    let d = done(core.decide(&p, &late));
    assert_eq!(d.outcome, Some(Outcome::Rejected));
    // New requests are asked as usual.
    assert!(matches!(line(&core, &p, "make other"), Step::Ask(_)));
}

#[test]
fn feedback_rejects_with_the_words_for_the_agent() {
    let core = Core::new();
    let p = policy(ASK);
    let d = done(answered(
        &core,
        &p,
        "curl x",
        Answer::Feedback("use the sandbox".into()),
        Channel::Dashboard,
    ));
    assert!(!d.allow);
    assert_eq!(d.outcome, Some(Outcome::Corrected));
    assert_eq!(d.feedback.as_deref(), Some("use the sandbox"));
    assert_eq!(
        d.message.as_deref(),
        Some("aileron: rejected: use the sandbox")
    );
}

#[test]
fn no_answer_in_time_follows_on_timeout_and_nobody_to_ask_denies() {
    let core = Core::new();
    let p = policy(ASK);
    let d = done(answered(
        &core,
        &p,
        "git push",
        Answer::Timeout,
        Channel::Terminal,
    ));
    assert!(!d.allow);
    assert_eq!(d.outcome, Some(Outcome::Timeout { allowed: false }));
    assert_eq!(d.outcome.unwrap().as_str(), "timeout-deny");
    assert_eq!(d.verdict.source, VerdictSource::Default, "nobody decided");
    assert_eq!(
        d.message.as_deref(),
        Some("aileron: denied: no answer within 7s (default)")
    );
    let lenient =
        policy("version: 1\nask:\n  - {command: \"make *\", timeout: 2, on_timeout: allow}\n");
    let d = done(answered(
        &core,
        &lenient,
        "make all",
        Answer::Timeout,
        Channel::Terminal,
    ));
    assert!(d.allow);
    assert_eq!(d.outcome.unwrap().as_str(), "timeout-allow");
    let d = done(answered(
        &core,
        &p,
        "git push",
        Answer::Unavailable("there is no terminal to ask on".into()),
        Channel::Terminal,
    ));
    assert!(!d.allow);
    assert_eq!(d.outcome, Some(Outcome::NoApprover));
    assert_eq!(d.verdict.approver.as_deref(), Some("terminal"));
    assert_ne!(d.verdict.source, VerdictSource::Human);
}

#[test]
fn always_approves_the_waiting_requests_it_covers() {
    let core = Core::new();
    let p = policy(ASK);
    let f = Fixture::new("w1");
    let same = f.req(Some("s1"), Subject::Line("git push"));
    let same_waiting = asked(core.decide(&p, &same));
    let other = f.req(Some("s1"), Subject::Line("git pull"));
    let other_waiting = asked(core.decide(&p, &other));
    done(answered(
        &core,
        &p,
        "git push",
        Answer::Always(AlwaysScope::Session, String::new()),
        Channel::Dashboard,
    ));
    let d = done(core.resume(&p, &same, same_waiting));
    assert!(d.allow);
    assert_eq!(d.outcome, Some(Outcome::ApprovedOnce));
    assert_eq!(d.verdict.rule.as_deref(), Some("session:always[0]"));
    assert!(matches!(
        core.resume(&p, &other, other_waiting),
        Step::Ask(_)
    ));
}

#[test]
fn each_command_of_a_line_that_needs_an_answer_is_asked() {
    let core = Core::new();
    let p = policy(ASK);
    let f = Fixture::new("l1");
    let req = f.req(Some("s1"), Subject::Line("make a && make b"));
    let first = asked(core.decide(&p, &req));
    assert_eq!(first.question.command, "make a");
    let second = asked(core.answer(
        &p,
        &req,
        first,
        Answer::Always(AlwaysScope::Session, String::new()),
        Channel::Terminal,
    ));
    assert_eq!(second.question.command, "make b");
    let d = done(core.answer(
        &p,
        &req,
        second,
        Answer::Always(AlwaysScope::Session, String::new()),
        Channel::Terminal,
    ));
    assert!(d.allow);
}

#[test]
fn the_third_identical_request_in_a_row_is_a_doom_loop() {
    let core = Core::new();
    let p = policy(
        "version: 1\ndefault: allow\ndeny:\n  - {id: no-loops, when: {type: agent.doom_loop}}\n",
    );
    assert!(done(line(&core, &p, "cargo build")).allow);
    assert!(done(line(&core, &p, "cargo build")).allow);
    let d = done(line(&core, &p, "cargo build"));
    assert!(!d.allow);
    assert_eq!(d.verdict.rule.as_deref(), Some("no-loops"));
    assert_eq!(d.action.kind, "agent.doom_loop");
    // A repeat (a permission request for a call already counted) is
    // checked against the count, not added to it.
    let core = Core::new();
    let f = Fixture::new("r1");
    let mut again = f.req(Some("s1"), Subject::Line("make"));
    again.repeat = true;
    for _ in 0..2 {
        done(core.decide(&p, &f.req(Some("s1"), Subject::Line("make"))));
    }
    assert!(done(core.decide(&p, &again)).allow, "not added");
    assert!(!done(core.decide(&p, &f.req(Some("s1"), Subject::Line("make")))).allow);
    assert!(!done(core.decide(&p, &again)).allow, "checked");
}

#[test]
fn a_read_only_call_repeated_is_not_a_doom_loop_by_default() {
    let core = Core::new();
    let p = policy("version: 1\ndefault: allow\n");
    for _ in 0..4 {
        assert!(done(line(&core, &p, "ls")).allow);
    }
    // A call that can change something is.
    let core = Core::new();
    for _ in 0..2 {
        assert!(done(line(&core, &p, "touch x")).allow);
    }
    let pending = asked(line(&core, &p, "touch x"));
    assert_eq!(pending.verdict.rule.as_deref(), Some("builtin:doom-loop"));
    assert_eq!(pending.action.kind, "agent.doom_loop");
    assert_eq!(
        pending.action.sensitivity.map(|s| s.as_str()),
        Some("write")
    );
    // The loop's sensitivity is the call's: a policy can still stop reads.
    let core = Core::new();
    let p = policy(
        "version: 1\ndefault: allow\ndeny:\n  - {id: no-loops, when: {type: agent.doom_loop, sensitivity: read}}\n",
    );
    for _ in 0..2 {
        assert!(done(line(&core, &p, "ls")).allow);
    }
    assert_eq!(
        done(line(&core, &p, "ls")).verdict.rule.as_deref(),
        Some("no-loops")
    );
}

/// Regression: under `default: deny`, the third `ls` in a row was denied
/// by the default deciding its `agent.doom_loop` action (no rule matched
/// it, since the built-in leaves reads alone). A loop only a rule decides.
#[test]
fn a_loop_no_rule_decides_leaves_the_call_to_the_policy() {
    let core = Core::new();
    let p = policy("version: 1\ndefault: deny\nallow: [\"ls\"]\n");
    for i in 0..5 {
        let d = done(line(&core, &p, "ls"));
        assert!(d.allow, "ls #{i}: {d:?}");
    }
    // A loop of calls that change something is still the built-in's ask.
    let p = policy("version: 1\ndefault: deny\nallow: [\"touch x\"]\n");
    let core = Core::new();
    for _ in 0..2 {
        assert!(done(line(&core, &p, "touch x")).allow);
    }
    let pending = asked(line(&core, &p, "touch x"));
    assert_eq!(pending.verdict.rule.as_deref(), Some("builtin:doom-loop"));
}

/// A gateway's traffic (the egress proxy) is programs' requests, which
/// repeat by nature: never a doom loop, and it does not break the
/// agent's own count either.
#[test]
fn traffic_makes_no_doom_loop_nor_breaks_one() {
    let p = policy(
        "version: 1\ndefault: allow\ndeny:\n  - {id: no-loops, when: {type: agent.doom_loop}}\n",
    );
    let core = Core::new();
    let f = Fixture::new("t1");
    let web = aileron_engine::Action {
        kind: "http.request".into(),
        facets: serde_json::from_value(serde_json::json!({
            "http": {"method": "POST", "url": "http://127.0.0.1:9/poll"}
        }))
        .unwrap(),
        ..aileron_engine::Action::default()
    };
    let actions = [web];
    let mut traffic = f.req(Some("s1"), Subject::Actions("POST /poll", &actions));
    traffic.traffic = true;
    for i in 0..5 {
        assert!(done(core.decide(&p, &traffic)).allow, "request #{i}");
    }
    // Interleaved with the agent's own calls, it leaves their count alone.
    let make = f.req(Some("s1"), Subject::Line("make"));
    assert!(done(core.decide(&p, &make)).allow);
    assert!(done(core.decide(&p, &traffic)).allow);
    assert!(done(core.decide(&p, &make)).allow);
    assert!(done(core.decide(&p, &traffic)).allow);
    assert!(
        !done(core.decide(&p, &make)).allow,
        "the third make in a row"
    );
}

#[test]
fn rate_rules_count_the_session_s_history() {
    let core = Core::new();
    let p = policy(
        "version: 1\ndefault: allow\ndeny:\n  - {id: too-many, when: {type: shell.exec, shell.binary: curl, rate: {more_than: 2, seconds: 60}}}\n",
    );
    assert!(done(line(&core, &p, "curl a")).allow);
    assert!(done(line(&core, &p, "curl b")).allow);
    let d = done(line(&core, &p, "curl c"));
    assert_eq!(d.verdict.rule.as_deref(), Some("too-many"), "{d:?}");
}

#[test]
fn without_a_session_nothing_is_kept() {
    let core = Core::new();
    let p = policy(ASK);
    let f = Fixture::new("n1");
    let req = f.req(None, Subject::Line("git push"));
    let pending = asked(core.decide(&p, &req));
    done(core.answer(
        &p,
        &req,
        pending,
        Answer::Always(AlwaysScope::Session, String::new()),
        Channel::Dashboard,
    ));
    assert!(matches!(core.decide(&p, &req), Step::Ask(_)));
    assert!(!core.knows(""));
}

#[test]
fn a_session_saved_and_restored_keeps_its_approvals_and_rejects() {
    let core = Core::new();
    let p = policy(ASK);
    done(answered(
        &core,
        &p,
        "git push",
        Answer::Always(AlwaysScope::Session, String::new()),
        Channel::Terminal,
    ));
    done(answered(
        &core,
        &p,
        "curl x",
        Answer::Reject,
        Channel::Terminal,
    ));
    let saved = core.export_session("s1");
    let json = serde_json::to_string(&saved).unwrap();
    let next = Core::new();
    next.import_session("s1", serde_json::from_str(&json).unwrap());
    assert!(done(line(&next, &p, "git push")).allow);
    assert_eq!(next.export_session("s1").last_reject, saved.last_reject);
    assert!(saved.last_reject > 0);
}
