//! A real server on 127.0.0.1:0 with a SQLite file in a temporary directory.

#![allow(dead_code)]

use aileron_server::{Config, Server};
use reqwest::{Client, Method, RequestBuilder, Response};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest a test waits for anything.
pub const WAIT: Duration = Duration::from_secs(20);

pub struct Env {
    pub tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub data: PathBuf,
    pub home: PathBuf,
    pub proj: PathBuf,
}

impl Env {
    pub fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let (data, home, proj) = (root.join("data"), root.join("home"), root.join("proj"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&proj).unwrap();
        Env {
            tmp,
            root,
            data,
            home,
            proj,
        }
    }

    pub fn config(&self) -> Config {
        let mut c = Config::from_env();
        c.listen = "127.0.0.1:0".parse().unwrap();
        c.database_url = None;
        c.data_dir = self.data.clone();
        c.home = self.home.clone();
        c.cwd = self.proj.clone();
        c.policy = None;
        c.user_settings = false;
        c.default_timeout = Duration::from_secs(10);
        c
    }

    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    pub async fn start(&self) -> Api {
        Api::new(Server::start(self.config()).await.expect("server starts"))
    }
}

pub struct Api {
    pub server: Server,
    pub client: Client,
}

impl Api {
    pub fn new(server: Server) -> Api {
        Api {
            server,
            client: Client::builder().no_proxy().build().unwrap(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server.url)
    }

    pub fn req(&self, method: Method, path: &str, token: Option<&str>) -> RequestBuilder {
        let r = self.client.request(method, self.url(path));
        match token {
            Some(t) => r.bearer_auth(t),
            None => r,
        }
    }

    pub fn admin(&self) -> &str {
        &self.server.admin_token
    }

    pub fn agent(&self) -> &str {
        &self.server.agent_token
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        json_of(
            self.req(Method::GET, path, Some(self.admin()))
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    pub async fn post(&self, path: &str, token: &str, body: &Value) -> (u16, Value) {
        json_of(
            self.req(Method::POST, path, Some(token))
                .json(body)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    pub async fn evaluate(&self, action: &Value) -> Value {
        let (status, v) = self.post("/api/evaluate", self.agent(), action).await;
        assert_eq!(status, 200, "{v}");
        v
    }

    pub async fn put_rule(&self, rule: &Value) -> (u16, Value) {
        self.post("/api/rules", &self.server.admin_token, rule)
            .await
    }

    /// The SSE stream of the pending queue (`text/event-stream`).
    pub async fn stream(&self) -> Response {
        let res = self
            .req(
                Method::GET,
                "/api/pending-actions/stream",
                Some(self.admin()),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(res.headers()["content-type"], "text/event-stream");
        res
    }

    /// Polls the pending queue until `id` is there.
    pub async fn wait_pending(&self, id: &str) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let (_, v) = self.get("/api/pending-actions").await;
            if let Some(p) = v["pending"]
                .as_array()
                .and_then(|a| a.iter().find(|p| p["id"] == id))
            {
                return p.clone();
            }
            assert!(tokio::time::Instant::now() < deadline, "{id} never pending");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

pub async fn json_of(r: Response) -> (u16, Value) {
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, v)
}

pub fn shell(id: &str, command: &str, cwd: &Path, session: &str) -> Value {
    serde_json::json!({
        "id": id, "type": "shell.exec",
        "facets": {"shell": {"command": command}},
        "session": {"id": session, "cwd": cwd.to_string_lossy()},
    })
}

pub fn http(id: &str, method: &str, url: &str, session: &str) -> Value {
    serde_json::json!({
        "id": id, "type": "http.request",
        "facets": {"http": {"method": method, "url": url}},
        "session": {"id": session},
    })
}

/// The judge's verdicts in `db` (`judge_verdicts`, kept to 3 rows here):
/// read back until they expire, the expired and the soonest to expire
/// dropped first when the table is full.
pub fn check_judge_verdicts(db: &aileron_server::db::Db) {
    use aileron_judge::cache::{Key, VerdictStore};
    use aileron_judge::{Input, JudgeConfig, JudgeDecision, Provider, Verdict};
    use std::time::SystemTime;
    let store = aileron_server::verdicts::DbVerdicts::new(db.clone()).max_rows(3);
    let judge = JudgeConfig {
        // Its own keys, in a database another test may share.
        name: format!("j-{}", aileron_server::auth::new_uuid()),
        provider: Provider::OpenAi,
        base_url: "http://127.0.0.1:1/v1".into(),
        model: "m".into(),
        api_key_env: None,
        timeout: Duration::from_secs(2),
        max_tokens: 100,
        temperature: 0.0,
    };
    let key = |n: u64| {
        let action = serde_json::json!({"type": "shell.exec", "summary": format!("make t{n}")});
        let input = Input {
            rule: Some("r"),
            rule_prompt: None,
            action: &action,
        };
        Key::of(&judge, &input)
    };
    let v = Verdict {
        decision: JudgeDecision::Ask,
        reason: "unclear".into(),
    };
    let now = SystemTime::now();
    store.put(&key(0), &v, Duration::from_secs(1), now);
    assert_eq!(store.get(&key(0), now), Some(v.clone()));
    assert_eq!(store.get(&key(0), now + Duration::from_secs(2)), None);
    let later = now + Duration::from_secs(5);
    for n in 1..=5 {
        store.put(&key(n), &v, Duration::from_secs(100 + n), later);
    }
    for n in 0..=2 {
        assert_eq!(store.get(&key(n), later), None, "{n} was dropped");
    }
    for n in 3..=5 {
        assert_eq!(store.get(&key(n), later), Some(v.clone()), "{n} is kept");
    }
}

/// Concurrent decisions of one ask: their statuses, sorted, and the
/// decision of the one that won (200).
pub async fn statuses_and_winner(
    tasks: Vec<tokio::task::JoinHandle<(u16, Value)>>,
) -> (Vec<u16>, Option<String>) {
    let mut codes = Vec::new();
    let mut winner = None;
    for t in tasks {
        let (s, v) = t.await.unwrap();
        if s == 200 {
            winner = v["decision"].as_str().map(str::to_owned);
        }
        codes.push(s);
    }
    codes.sort();
    (codes, winner)
}
