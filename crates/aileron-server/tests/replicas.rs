//! Several `aileron serve` on one PostgreSQL database behave as one
//! service: an ask raised on one replica is on every replica's dashboard
//! (live, on the SSE stream) and decided on another, exactly one of many
//! concurrent decisions wins, a reject's or an always's cascade reaches
//! the asks waiting on the other replicas, a rule saved on one decides on
//! another within a second, and a replica killed with `kill -9` loses no
//! ask: an adapter with the list of servers gets its answer through
//! another. The database is a throw-away cluster of Debian's `postgresql`
//! (as tests/postgres.rs), or `AILERON_TEST_POSTGRES_URL`; without either,
//! the tests say so and pass.

mod support;

use reqwest::Method;
use serde_json::{Value, json};
use std::io::BufRead;
use std::time::{Duration, Instant};
use support::{Api, Env, WAIT, json_of, shell};

#[path = "../../aileron-postgres/tests/support/cluster.rs"]
mod cluster;
use cluster::Cluster;

/// The database's URL (and the cluster started for it).
fn database() -> Option<(Option<Cluster>, String)> {
    match std::env::var("AILERON_TEST_POSTGRES_URL") {
        Ok(u) if !u.is_empty() => Some((None, u)),
        _ => match Cluster::start() {
            Some((c, u)) => Some((Some(c), u)),
            None => {
                eprintln!(
                    "skipped: no PostgreSQL (install Debian's `postgresql`, or set AILERON_TEST_POSTGRES_URL)"
                );
                None
            }
        },
    }
}

/// A replica: its own data directory, the shared database and project.
async fn replica(env: &Env, url: &str, name: &str) -> Api {
    let mut cfg = env.config();
    cfg.data_dir = env.root.join(format!("data-{name}"));
    cfg.database_url = Some(url.to_owned());
    cfg.write_server_file = false;
    Api::new(
        aileron_server::Server::start(cfg)
            .await
            .expect("a replica starts"),
    )
}

/// Stops replicas shared with the tasks that have ended.
async fn stop(replicas: impl IntoIterator<Item = std::sync::Arc<Api>>) {
    for api in replicas {
        let api = std::sync::Arc::try_unwrap(api).ok().unwrap();
        api.server.shutdown().await;
    }
}

/// Saves, on the first replica, a rule asking (30 s) about `word *`, and
/// waits until every replica has it.
async fn ask_rule(word: &str, replicas: &[&Api]) {
    let id = unique("ask");
    let rule = json!({"id": id, "decision": "ask", "timeout": 30, "command": format!("{word} *")});
    let (s, v) = replicas[0].put_rule(&rule).await;
    assert_eq!(s, 200, "{v}");
    for r in replicas {
        until("the rule is on every replica", || async {
            r.get(&format!("/api/rules/{id}")).await.0 == 200
        })
        .await;
    }
}

/// Names of this run (a shared database may hold others').
fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", &aileron_server::auth::new_uuid()[..8])
}

/// Polls `check` until it holds, at most [`WAIT`].
async fn until<F: Future<Output = bool>>(what: &str, mut check: impl FnMut() -> F) {
    let deadline = Instant::now() + WAIT;
    while !check().await {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The ids waiting on a replica's dashboard.
async fn pending_ids(api: &Api) -> Vec<String> {
    let (_, v) = api.get("/api/pending-actions").await;
    v["pending"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p["id"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

async fn decide(api: &Api, id: &str, decision: Value) -> (u16, Value) {
    api.post(
        &format!("/api/pending-actions/{id}/decision"),
        api.admin(),
        &decision,
    )
    .await
}

/// The SSE stream of a replica's queue, read into one text.
struct Stream {
    res: reqwest::Response,
    seen: String,
}

impl Stream {
    async fn open(api: &Api) -> Stream {
        Stream {
            res: api.stream().await,
            seen: String::new(),
        }
    }

    /// Reads until an event `event` about `id` has come.
    async fn wait_for(&mut self, event: &str, id: &str) {
        let deadline = Instant::now() + WAIT;
        let want = format!("event: {event}\n");
        let id = format!("\"id\":\"{id}\"");
        while !self
            .seen
            .split("\n\n")
            .any(|e| e.contains(&want) && e.contains(&id))
        {
            let left = deadline.saturating_duration_since(Instant::now());
            let chunk = tokio::time::timeout(left, self.res.chunk())
                .await
                .unwrap_or_else(|_| panic!("no {want} {id} in:\n{}", self.seen))
                .unwrap()
                .unwrap();
            self.seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

fn spawn_evaluate(api: &std::sync::Arc<Api>, action: Value) -> tokio::task::JoinHandle<Value> {
    let api = api.clone();
    tokio::spawn(async move { api.evaluate(&action).await })
}

/// An adapter's ask (`POST /api/pending-actions`), its answer.
fn spawn_adapter_ask(
    api: &std::sync::Arc<Api>,
    id: &str,
    command: &str,
    session: &str,
    timeout: u64,
) -> tokio::task::JoinHandle<(u16, Value)> {
    let api = api.clone();
    let body = adapter_ask(id, command, session, timeout);
    tokio::spawn(async move { api.post("/api/pending-actions", api.agent(), &body).await })
}

fn adapter_ask(id: &str, command: &str, session: &str, timeout: u64) -> Value {
    json!({
        "action": {"id": id, "type": "shell.exec", "facets": {"shell": {"command": command}},
            "session": {"id": session}},
        "rule": "adapter-rule", "reason": "asked by the adapter",
        "timeout_secs": timeout, "on_timeout": "deny",
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ask_on_one_replica_is_live_on_all_and_decided_on_another_with_its_cascades() {
    let Some((cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    env.write("proj/aileron.yaml", "version: 1\ndefault: allow\n");
    let a = std::sync::Arc::new(replica(&env, &url, "a").await);
    let b = std::sync::Arc::new(replica(&env, &url, "b").await);
    let c = std::sync::Arc::new(replica(&env, &url, "c").await);
    let word = unique("deploy");
    ask_rule(&word, &[&a, &b, &c]).await;
    let sh = |id: &str, cmd: &str, session: &str| {
        shell(id, &format!("{word} {cmd}"), &env.proj, session)
    };

    // Raised on A, live on B's stream, listed on C, decided on B.
    let mut on_b = Stream::open(&b).await;
    let s1 = unique("s1");
    let p1 = unique("p1");
    let started = Instant::now();
    let asked = spawn_evaluate(&a, sh(&p1, "prod", &s1));
    on_b.wait_for("pending", &p1).await;
    let shown_after = started.elapsed();
    c.wait_pending(&p1).await;
    assert!(!asked.is_finished(), "A's evaluate waits");
    let (s, v) = decide(&b, &p1, json!({"decision": "once", "reviewer": "bob"})).await;
    assert_eq!(s, 200, "{v}");
    for other in [&c, &a] {
        let (s, v) = decide(other, &p1, json!({"decision": "reject"})).await;
        assert_eq!(s, 409, "{v}");
    }
    let v = tokio::time::timeout(WAIT, asked).await.unwrap().unwrap();
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["outcome"], "approved-once");
    assert_eq!(v["reviewer"], "bob");
    assert_eq!(v["approver"], "dashboard");
    on_b.wait_for("removed", &p1).await;
    until("p1 leaves C's dashboard", || {
        let c = c.clone();
        let p1 = p1.clone();
        async move { !pending_ids(&c).await.contains(&p1) }
    })
    .await;
    eprintln!("an ask raised on A was on B's stream after {shown_after:?}");

    // "always" on C for an ask of A: B's waiting ask of the same command
    // in the session is allowed by it; another command waits on.
    let s2 = unique("s2");
    let (p2, p3, p4) = (unique("p2"), unique("p3"), unique("p4"));
    let first = spawn_evaluate(&a, sh(&p2, "web", &s2));
    a.wait_pending(&p2).await;
    let same = spawn_evaluate(&b, sh(&p3, "web", &s2));
    let other = spawn_evaluate(&c, sh(&p4, "db", &s2));
    c.wait_pending(&p3).await;
    c.wait_pending(&p4).await;
    let (s, v) = decide(&c, &p2, json!({"decision": "always"})).await;
    assert_eq!(s, 200, "{v}");
    let v = tokio::time::timeout(WAIT, first).await.unwrap().unwrap();
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["outcome"], "approved-always-session", "{v}");
    let v = tokio::time::timeout(WAIT, same).await.unwrap().unwrap();
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["outcome"], "approved-once", "{v}");
    assert!(!other.is_finished(), "another command still waits");
    // Once allowed "always", B allows it without asking.
    let v = b.evaluate(&sh(&unique("p2b"), "web", &s2)).await;
    assert_eq!(v["decision"], "allow", "{v}");

    // A reject on B of an ask of A: the session's asks waiting on every
    // replica are rejected (evaluations and adapters' asks); another
    // session's are not.
    let s3 = unique("s3");
    let (p5, p6, p7, p8, p9) = (
        unique("p5"),
        unique("p6"),
        unique("p7"),
        unique("p8"),
        unique("p9"),
    );
    let rejected = spawn_evaluate(&a, sh(&p5, "x", &s3));
    let on_b_too = spawn_evaluate(&b, sh(&p6, "y", &s3));
    let on_c_too = spawn_evaluate(&c, sh(&p7, "z", &s3));
    let adapter_on_c = spawn_adapter_ask(&c, &p8, "rm -rf build", &s3, 30);
    let elsewhere = spawn_evaluate(&a, sh(&p9, "x", &unique("s4")));
    for p in [&p5, &p6, &p7, &p8, &p9] {
        b.wait_pending(p).await;
    }
    let (s, v) = decide(
        &b,
        &p5,
        json!({"decision": "reject", "reason": "not today"}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let v = tokio::time::timeout(WAIT, rejected).await.unwrap().unwrap();
    assert_eq!(v["decision"], "deny", "{v}");
    assert_eq!(v["outcome"], "rejected", "{v}");
    assert_eq!(v["reason"], "not today", "{v}");
    for cascaded in [on_b_too, on_c_too] {
        let v = tokio::time::timeout(WAIT, cascaded).await.unwrap().unwrap();
        assert_eq!(v["decision"], "deny", "{v}");
        assert!(
            v["reason"].as_str().unwrap().contains("earlier request"),
            "{v}"
        );
    }
    let (s, v) = tokio::time::timeout(WAIT, adapter_on_c)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["answer"], "reject", "{v}");
    assert!(!elsewhere.is_finished(), "another session is not touched");
    // What still waits, decided on yet another replica.
    let (s, _) = decide(&c, &p9, json!({"decision": "once"})).await;
    assert_eq!(s, 200);
    assert_eq!(elsewhere.await.unwrap()["decision"], "allow");
    let (s, _) = decide(&a, &p4, json!({"decision": "once"})).await;
    assert_eq!(s, 200);
    assert_eq!(other.await.unwrap()["decision"], "allow");
    stop([a, b, c]).await;
    drop(cluster);
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_decisions_from_three_replicas_exactly_one_wins() {
    let Some((cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    let replicas = [
        std::sync::Arc::new(replica(&env, &url, "a").await),
        std::sync::Arc::new(replica(&env, &url, "b").await),
        std::sync::Arc::new(replica(&env, &url, "c").await),
    ];
    let session = unique("s");
    for round in 0..6 {
        let id = unique(&format!("c{round}"));
        let asker = &replicas[round % 3];
        let waiting = spawn_adapter_ask(asker, &id, "git push", &session, 30);
        for r in &replicas {
            r.wait_pending(&id).await;
        }
        let mut tasks = Vec::new();
        for i in 0..9 {
            let r = replicas[i % 3].clone();
            let id = id.clone();
            // Never a reject: its cascade would answer the next rounds' asks.
            let d = ["once", "always", "feedback"][i / 3];
            tasks.push(tokio::spawn(async move {
                decide(
                    &r,
                    &id,
                    json!({"decision": d, "reason": format!("from {i}")}),
                )
                .await
            }));
        }
        let (codes, winner) = support::statuses_and_winner(tasks).await;
        assert_eq!(codes, [200, 409, 409, 409, 409, 409, 409, 409, 409]);
        let (s, v) = tokio::time::timeout(WAIT, waiting).await.unwrap().unwrap();
        assert_eq!(s, 200, "{v}");
        assert_eq!(
            v["answer"].as_str(),
            winner.as_deref(),
            "the adapter gets the winner's answer"
        );
    }
    stop(replicas).await;
    drop(cluster);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_saved_on_one_replica_decides_on_another_within_a_second() {
    let Some((cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    env.write("proj/aileron.yaml", "version: 1\ndefault: allow\n");
    let a = replica(&env, &url, "a").await;
    let b = replica(&env, &url, "b").await;
    let word = unique("build");
    let session = unique("s");
    let rule = unique("r");
    let mut took = Vec::new();
    for i in 0..10 {
        // Alternately a deny and its deletion, saved on A, seen on B.
        let deny = i % 2 == 0;
        let saved = Instant::now();
        if deny {
            let (s, v) = a
                .put_rule(&json!({"id": rule, "decision": "deny", "command": format!("{word} *")}))
                .await;
            assert_eq!(s, 200, "{v}");
        } else {
            let r = a
                .req(
                    Method::DELETE,
                    &format!("/api/rules/{rule}"),
                    Some(a.admin()),
                )
                .send()
                .await
                .unwrap();
            assert_eq!(json_of(r).await.0, 200);
        }
        let want = if deny { "deny" } else { "allow" };
        let mut n = 0;
        loop {
            n += 1;
            let v = b
                .evaluate(&shell(
                    &unique("e"),
                    &format!("{word} {i}-{n}"),
                    &env.proj,
                    &session,
                ))
                .await;
            if v["decision"] == want {
                break;
            }
            assert!(saved.elapsed() < Duration::from_secs(5), "{v}");
        }
        took.push(saved.elapsed());
    }
    let max = took.iter().max().unwrap();
    let mean = took.iter().sum::<Duration>() / took.len() as u32;
    eprintln!("a rule saved on A decided on B after {mean:?} on average, {max:?} at most");
    assert!(*max < Duration::from_secs(1), "{took:?}");
    a.server.shutdown().await;
    b.server.shutdown().await;
    drop(cluster);
}

/// A replica in a child process (this test binary, running the ignored
/// test `replica_child`), which the test kills with SIGKILL.
struct Child {
    child: std::process::Child,
    url: String,
}

impl Child {
    fn start(url: &str, data: &std::path::Path, proj: &std::path::Path) -> Child {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["replica_child", "--exact", "--ignored", "--nocapture"])
            .args(["--test-threads=1"])
            .env("AILERON_REPLICA_DATABASE", url)
            .env("AILERON_REPLICA_DATA", data)
            .env("AILERON_REPLICA_PROJ", proj)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = std::io::BufReader::new(child.stdout.take().unwrap());
        let url = out
            .lines()
            .map_while(Result::ok)
            // After the harness's `test replica_child ... `, on its line.
            .find_map(|l| {
                l.split_once("REPLICA_URL=")
                    .map(|(_, u)| u.trim().to_owned())
            })
            .expect("the child replica says where it listens");
        Child { child, url }
    }

    /// `kill -9`.
    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "the replica a_replica_killed_with_kill_9_loses_no_ask kills, in a child process"]
async fn replica_child() {
    let (Ok(url), Ok(data), Ok(proj)) = (
        std::env::var("AILERON_REPLICA_DATABASE"),
        std::env::var("AILERON_REPLICA_DATA"),
        std::env::var("AILERON_REPLICA_PROJ"),
    ) else {
        return;
    };
    let env = Env::new();
    let mut cfg = env.config();
    cfg.database_url = Some(url);
    cfg.data_dir = data.into();
    cfg.cwd = proj.into();
    cfg.write_server_file = false;
    let server = aileron_server::Server::start(cfg).await.unwrap();
    println!("REPLICA_URL={}", server.url);
    std::future::pending::<()>().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replica_killed_with_kill_9_loses_no_ask() {
    let Some((cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    env.write("proj/aileron.yaml", "version: 1\ndefault: allow\n");
    let b = std::sync::Arc::new(replica(&env, &url, "b").await);
    let word = unique("ship");
    ask_rule(&word, &[&b]).await;
    // Started with the rule in force.
    let mut k = Child::start(&url, &env.root.join("data-k"), &env.proj);
    let session = unique("s");
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let on_k = |path: &str, body: &Value| {
        client
            .post(format!("{}{path}", k.url))
            .bearer_auth(b.agent())
            .json(body)
            .send()
    };

    // 1. An adapter with both servers, K first: its ask waits on K.
    let a1 = unique("a1");
    let action: aileron_engine::Action = serde_json::from_value(json!({
        "id": a1, "type": "shell.exec", "facets": {"shell": {"command": format!("{word} it")}},
        "session": {"id": session},
    }))
    .unwrap();
    let question = aileron_session::prompt::Question {
        line: format!("{word} it"),
        command: format!("{word} it"),
        rule: Some("ask".into()),
        reason: "ships".into(),
        suggestion: String::new(),
        timeout: Duration::from_secs(30),
        allow_on_timeout: false,
    };
    let remote =
        aileron_session::remote::Remote::new(&format!("{},{}", k.url, b.server.url), b.agent())
            .unwrap();
    let adapter = tokio::task::spawn_blocking(move || remote.ask(&action, &question));
    // 2. An evaluation waiting on K, whose client does not retry.
    let e1 = unique("e1");
    let evaluation = shell(&e1, &format!("{word} now"), &env.proj, &session);
    let lost = tokio::spawn(on_k("/api/evaluate", &evaluation));
    // 3. An adapter's ask on K that times out in 2 s, K dead by then.
    let t1 = unique("t1");
    let short = adapter_ask(&t1, "make t1", &session, 2);
    let timing_out = tokio::spawn(on_k("/api/pending-actions", &short));
    for id in [&a1, &e1, &t1] {
        b.wait_pending(id).await;
    }

    k.kill();
    // Nothing lost: all three still wait, on B.
    let left = pending_ids(&b).await;
    for id in [&a1, &e1, &t1] {
        assert!(left.contains(id), "{id} is not in {left:?}");
    }
    assert!(
        lost.await.unwrap().is_err(),
        "K's client lost its connection"
    );
    assert!(timing_out.await.unwrap().is_err());

    // The adapter asked B again (the same id): decided on B, it gets the answer.
    let (s, v) = decide(&b, &a1, json!({"decision": "once", "reviewer": "carol"})).await;
    assert_eq!(s, 200, "{v}");
    let answer = tokio::time::timeout(WAIT, adapter).await.unwrap().unwrap();
    assert_eq!(answer, aileron_session::prompt::Answer::Once);

    // The evaluation, decided on B, is answered at once when sent again.
    let (s, v) = decide(&b, &e1, json!({"decision": "once", "reviewer": "carol"})).await;
    assert_eq!(s, 200, "{v}");
    let asked_again = Instant::now();
    let v = b.evaluate(&evaluation).await;
    assert!(asked_again.elapsed() < Duration::from_secs(2));
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["outcome"], "approved-once", "{v}");
    assert_eq!(v["reviewer"], "carol", "{v}");
    // Another action under a decided ask's id is refused.
    let (s, v) = b
        .post(
            "/api/pending-actions",
            b.agent(),
            &adapter_ask(&e1, "rm -rf /", &session, 30),
        )
        .await;
    assert_eq!(s, 409, "{v}");

    // K's ask past its deadline is timed out by B, once.
    until("t1 times out on B", || {
        let b = b.clone();
        let t1 = t1.clone();
        async move { !pending_ids(&b).await.contains(&t1) }
    })
    .await;
    let (s, _) = decide(&b, &t1, json!({"decision": "once"})).await;
    assert_eq!(s, 409);
    let (s, v) = b.post("/api/pending-actions", b.agent(), &short).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["answer"], "timeout", "{v}");

    stop([b]).await;
    drop(cluster);
}

#[tokio::test(flavor = "multi_thread")]
async fn on_sqlite_an_ask_outlives_a_restart() {
    let env = Env::new();
    let api = std::sync::Arc::new(env.start().await);
    let session = unique("s");
    let id = unique("r1");
    let body = adapter_ask(&id, "git push", &session, 30);
    let waiting = spawn_adapter_ask(&api, &id, "git push", &session, 30);
    api.wait_pending(&id).await;
    // Stopped while the ask waits: the adapter is told to send it again.
    api.server.shutdown().await;
    let (s, v) = waiting.await.unwrap();
    assert_eq!(s, 503, "{v}");
    let api = std::sync::Arc::try_unwrap(api).ok().unwrap();
    drop(api);
    // Started again: the ask is there, decided, and the adapter asking
    // again under its id gets the answer at once.
    let api = env.start().await;
    api.wait_pending(&id).await;
    let (s, v) = decide(
        &api,
        &id,
        json!({"decision": "feedback", "reason": "not on main"}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let (s, v) = api.post("/api/pending-actions", api.agent(), &body).await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["answer"], "feedback", "{v}");
    assert_eq!(v["feedback"], "not on main", "{v}");
    api.server.shutdown().await;
}

/// An id allows one action: an answer that reached its caller is spent,
/// and the same action sent again under that id (a replay) is refused,
/// through `/api/evaluate` and through an adapter's ask alike.
#[tokio::test(flavor = "multi_thread")]
async fn an_answered_id_sent_again_is_refused_not_allowed_twice() {
    let env = Env::new();
    env.write(
        "proj/aileron.yaml",
        "version: 1\ndefault: allow\nask:\n  - {id: ask-push, command: \"git push*\"}\n",
    );
    let api = std::sync::Arc::new(env.start().await);
    let session = unique("s");
    let id = unique("e1");
    let action = shell(&id, "git push", &env.proj, &session);
    let waiting = spawn_evaluate(&api, action.clone());
    api.wait_pending(&id).await;
    let (s, v) = decide(&api, &id, json!({"decision": "once"})).await;
    assert_eq!(s, 200, "{v}");
    let v = waiting.await.unwrap();
    assert_eq!(v["decision"], "allow", "{v}");
    let again = api.evaluate(&action).await;
    assert_eq!(again["decision"], "deny", "{again}");
    assert!(
        again["reason"].as_str().unwrap().contains("was answered"),
        "{again}"
    );

    let id = unique("a1");
    let body = adapter_ask(&id, "git push", &session, 30);
    let waiting = spawn_adapter_ask(&api, &id, "git push", &session, 30);
    api.wait_pending(&id).await;
    let (s, v) = decide(&api, &id, json!({"decision": "once"})).await;
    assert_eq!(s, 200, "{v}");
    let (s, v) = waiting.await.unwrap();
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["answer"], "once", "{v}");
    let (s, v) = api.post("/api/pending-actions", api.agent(), &body).await;
    assert_eq!(s, 409, "{v}");
    stop([api]).await;
}
