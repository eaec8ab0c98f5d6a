//! One PostgreSQL cluster for a test binary (each test in a database of
//! its own), and a gateway in front of it deciding with a policy of the
//! test's and a human who answers as told.

#![allow(dead_code)]

pub mod cluster;

use aileron_config::LoadOptions;
use aileron_postgres::{Config, Gateway, Origin, Upstream};
use aileron_session::prompt::{Answer, Prompter, Question};
use aileron_session::{Decide, Decider};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio_postgres::{Client, NoTls};

/// The cluster of this test binary: started once, stopped at exit.
fn cluster() -> Option<u16> {
    static CLUSTER: OnceLock<Option<cluster::Cluster>> = OnceLock::new();
    extern "C" fn stop() {
        if let Some(Some(c)) = CLUSTER.get() {
            c.stop();
        }
    }
    CLUSTER
        .get_or_init(|| {
            let c = cluster::Cluster::start().map(|(c, _)| c);
            if c.is_some() {
                // SAFETY: registers a plain function, run once at exit.
                unsafe { libc::atexit(stop) };
            }
            c
        })
        .as_ref()
        .map(|c| c.port)
}

/// Whether the tests can run here; says so when not.
fn available() -> bool {
    let ok = cluster().is_some();
    if !ok {
        // In CI a missing server is a failure, not a pass.
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "no PostgreSQL (install Debian's `postgresql`)"
        );
        eprintln!("skipped: no PostgreSQL (install Debian's `postgresql`)");
    }
    ok
}

/// Answers asks as told, and records what was asked.
pub struct Human {
    pub answer: Mutex<Box<dyn Fn() -> Answer + Send>>,
    pub asked: Mutex<Vec<String>>,
}

struct Asks(Arc<Human>);

impl Prompter for Asks {
    fn ask(&self, q: &Question) -> Answer {
        self.0.asked.lock().unwrap().push(q.command.clone());
        (self.0.answer.lock().unwrap())()
    }
}

/// A gateway in front of a fresh database of the cluster.
pub struct Env {
    pub _tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub addr: SocketAddr,
    pub port: u16,
    pub db: String,
    pub human: Arc<Human>,
}

impl Env {
    /// Under `policy` (an aileron.yaml); the human rejects. `None` where
    /// PostgreSQL is not installed (the test then passes, saying so).
    pub async fn start(policy: &str) -> Option<Env> {
        if !available() {
            return None;
        }
        let port = cluster()?;
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let db = format!(
            "t{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let admin = connect_to(port, "postgres").await;
        admin
            .simple_query(&format!("CREATE DATABASE {db}"))
            .await
            .unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("proj");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(dir.join("aileron.yaml"), policy).unwrap();
        let mut load = LoadOptions::from_env(dir.clone());
        load.home = home.clone();
        load.data_dir = home.join(".aileron");
        let human = Arc::new(Human {
            answer: Mutex::new(Box::new(|| Answer::Reject)),
            asked: Mutex::new(Vec::new()),
        });
        // With a cache, as `aileron proxy postgres` runs: the policy is
        // compiled once, not per statement.
        let decider = Decider::new(
            aileron_session::Config {
                cache_dir: Some(load.data_dir.join("cache")),
                session_id: Some("pg-test".into()),
                agent: None,
                real_shell: String::new(),
                secrets: Vec::new(),
                adapter: aileron_postgres::ADAPTER.into(),
                load,
            },
            Box::new(Asks(Arc::clone(&human))),
        );
        let decide: Arc<dyn Decide> = Arc::new(decider);
        let gw = Gateway::new(Config {
            decide,
            origin: Origin {
                cwd: dir.to_string_lossy().into_owned(),
                session: Some("pg-test".into()),
                agent: None,
            },
            upstream: Upstream::Tcp {
                host: "127.0.0.1".into(),
                port,
            },
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(gw.serve(listener));
        Some(Env {
            _tmp: tmp,
            dir,
            addr,
            port,
            db,
            human,
        })
    }

    /// How many rows `table` has, as the server says directly.
    pub async fn count(&self, table: &str) -> String {
        let direct = self.direct().await;
        column(&direct, &format!("SELECT count(*) FROM {table}"))
            .await
            .remove(0)
    }

    /// The human answers `answer` from now on.
    pub fn answer(&self, answer: impl Fn() -> Answer + Send + 'static) {
        *self.human.answer.lock().unwrap() = Box::new(answer);
    }

    pub fn asked(&self) -> Vec<String> {
        self.human.asked.lock().unwrap().clone()
    }

    /// A client through the gateway.
    pub async fn client(&self) -> Client {
        connect_to(self.addr.port(), &self.db).await
    }

    /// Runs `sql` through the gateway, which must allow it.
    pub async fn run(&self, sql: &str) {
        self.client().await.batch_execute(sql).await.unwrap();
    }

    /// A client straight to the server (to check what really happened).
    pub async fn direct(&self) -> Client {
        connect_to(self.port, &self.db).await
    }

    /// The audit log's records.
    pub fn audit(&self) -> Vec<serde_json::Value> {
        let path = self.dir.join(".aileron").join("audit.jsonl");
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// `psql` through the gateway, `sql` on stdin: (status, stdout, stderr).
    pub fn psql(&self, args: &[&str], stdin: &str) -> (i32, String, String) {
        use std::io::Write;
        let mut child = std::process::Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.addr.port().to_string(),
                "-U",
                "aileron",
            ])
            .args(["-d", &self.db, "-X", "-q", "-v", "ON_ERROR_STOP=0"])
            .args(args)
            .env("PGSSLMODE", "prefer")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("psql");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

pub async fn connect_to(port: u16, db: &str) -> Client {
    let (client, conn) = tokio_postgres::connect(
        &format!("host=127.0.0.1 port={port} user=aileron dbname={db}"),
        NoTls,
    )
    .await
    .unwrap_or_else(|e| panic!("connect to {port}/{db}: {e}"));
    tokio::spawn(conn);
    client
}

/// The SQLSTATE and message of a failed call.
pub fn error_of(e: &tokio_postgres::Error) -> (String, String) {
    let db = e
        .as_db_error()
        .unwrap_or_else(|| panic!("not a server error: {e}"));
    (db.code().code().to_owned(), db.message().to_owned())
}

/// The one column of a query's rows, as text.
pub async fn column(c: &Client, sql: &str) -> Vec<String> {
    c.simple_query(sql)
        .await
        .unwrap()
        .into_iter()
        .filter_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).unwrap_or("").to_owned()),
            _ => None,
        })
        .collect()
}

/// A client that speaks the protocol by hand: for what no library sends.
pub mod raw {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    pub struct Raw {
        pub s: TcpStream,
    }

    /// A message: type and body.
    pub type Msg = (u8, Vec<u8>);

    pub fn msg(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as i32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    pub fn query(text: &str) -> Vec<u8> {
        let mut b = text.as_bytes().to_vec();
        b.push(0);
        msg(b'Q', &b)
    }

    pub fn parse(name: &str, text: &str) -> Vec<u8> {
        let mut b = name.as_bytes().to_vec();
        b.push(0);
        b.extend_from_slice(text.as_bytes());
        b.push(0);
        b.extend_from_slice(&0i16.to_be_bytes());
        msg(b'P', &b)
    }

    /// Bind the statement `name` to the unnamed portal, no parameters.
    pub fn bind(name: &str) -> Vec<u8> {
        let mut b = vec![0u8];
        b.extend_from_slice(name.as_bytes());
        b.push(0);
        b.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        msg(b'B', &b)
    }

    pub fn execute() -> Vec<u8> {
        msg(b'E', &[0, 0, 0, 0, 0])
    }

    pub fn sync() -> Vec<u8> {
        msg(b'S', &[])
    }

    pub fn startup(db: &str) -> Vec<u8> {
        startup_with(db, &[])
    }

    /// A startup message with more parameters than the user and database.
    pub fn startup_with(db: &str, more: &[(&str, &str)]) -> Vec<u8> {
        let mut body = (3i32 << 16).to_be_bytes().to_vec();
        for (k, v) in [("user", "aileron"), ("database", db)]
            .into_iter()
            .chain(more.iter().copied())
        {
            body.extend_from_slice(k.as_bytes());
            body.push(0);
            body.extend_from_slice(v.as_bytes());
            body.push(0);
        }
        body.push(0);
        let mut m = (body.len() as i32 + 4).to_be_bytes().to_vec();
        m.extend_from_slice(&body);
        m
    }

    impl Raw {
        /// Connected and authenticated (trust): the first ReadyForQuery read.
        pub async fn connect(port: u16, db: &str) -> Raw {
            let mut r = Raw {
                s: TcpStream::connect(("127.0.0.1", port)).await.unwrap(),
            };
            r.send(&startup(db)).await;
            let msgs = r.until_ready().await;
            assert!(msgs.iter().any(|m| m.0 == b'R'), "{msgs:?}");
            r
        }

        /// Connected, nothing sent.
        pub async fn connect_raw(port: u16) -> Raw {
            Raw {
                s: TcpStream::connect(("127.0.0.1", port)).await.unwrap(),
            }
        }

        pub async fn send(&mut self, bytes: &[u8]) {
            self.s.write_all(bytes).await.unwrap();
        }

        /// The next message; `None` when the connection closed.
        pub async fn next(&mut self) -> Option<Msg> {
            let mut head = [0u8; 5];
            self.s.read_exact(&mut head).await.ok()?;
            let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize - 4;
            let mut body = vec![0u8; len];
            self.s.read_exact(&mut body).await.ok()?;
            Some((head[0], body))
        }

        /// Messages up to and including the next ReadyForQuery (or the end).
        pub async fn until_ready(&mut self) -> Vec<Msg> {
            let mut out = Vec::new();
            while let Some(m) =
                tokio::time::timeout(std::time::Duration::from_secs(20), self.next())
                    .await
                    .expect("an answer within 20 s")
            {
                let z = m.0 == b'Z';
                out.push(m);
                if z {
                    break;
                }
            }
            out
        }

        /// Whether the peer closed the connection (within a few seconds).
        pub async fn closed(&mut self) -> bool {
            let mut b = [0u8; 1024];
            loop {
                match tokio::time::timeout(std::time::Duration::from_secs(5), self.s.read(&mut b))
                    .await
                {
                    Ok(Ok(0)) | Ok(Err(_)) => return true,
                    Ok(Ok(_)) => continue,
                    Err(_) => return false,
                }
            }
        }
    }

    /// The SQLSTATE and message of an ErrorResponse body.
    pub fn error(body: &[u8]) -> (String, String) {
        let mut code = String::new();
        let mut message = String::new();
        for f in body.split(|&b| b == 0) {
            match f.first() {
                Some(b'C') => code = String::from_utf8_lossy(&f[1..]).into_owned(),
                Some(b'M') => message = String::from_utf8_lossy(&f[1..]).into_owned(),
                _ => {}
            }
        }
        (code, message)
    }

    /// The types of `msgs`, as letters.
    pub fn kinds(msgs: &[Msg]) -> String {
        msgs.iter().map(|m| m.0 as char).collect()
    }
}
