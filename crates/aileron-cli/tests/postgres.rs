//! `aileron proxy postgres` run for real, on its own and started by
//! `aileron launch` from `settings.gateways`, in front of Debian's
//! PostgreSQL (started by the test; without it the tests say so and pass),
//! reached by `psql`.

mod support;

#[path = "../../aileron-postgres/tests/support/cluster.rs"]
mod cluster;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use support::{Project, no_tty, run_no_tty, text};

const DENY_DROP: &str = "version: 1
default: allow
deny:
  - id: no-drop
    description: the agent may not drop tables
    when: {type: sql.query, sql.verb: DROP}
";

fn cluster() -> Option<cluster::Cluster> {
    let c = cluster::Cluster::start().map(|(c, _)| c);
    if c.is_none() {
        // In CI a missing server is a failure, not a pass.
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "no PostgreSQL (install Debian's `postgresql`)"
        );
        eprintln!("skipped: no PostgreSQL (install Debian's `postgresql`)");
    }
    c
}

/// `psql -X` in the project with `args`: (status, stdout, stderr).
fn psql(p: &Project, args: &[&str]) -> (i32, String, String) {
    let mut cmd = p.command("psql");
    cmd.arg("-X").args(args);
    let out = cmd.output().expect("psql");
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

/// The gateway's process, and the rest of what it prints (kept open: a
/// closed pipe would fail its next line).
struct Gateway {
    child: Child,
    _out: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Gateway {
    /// `aileron proxy postgres` in `p` in front of `db`, with no terminal
    /// to ask on: the gateway, its address and the first two lines it
    /// printed.
    fn start(p: &Project, db: &cluster::Cluster) -> (Gateway, String, [String; 2]) {
        let upstream = format!("postgres://127.0.0.1:{}", db.port);
        let mut cmd = p.aileron(&[
            "proxy",
            "postgres",
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &upstream,
        ]);
        let mut child = no_tty(&mut cmd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().unwrap().unwrap();
        let address = first
            .strip_prefix("aileron proxy postgres: listening on postgres://")
            .and_then(|r| r.split(' ').next())
            .unwrap_or_else(|| panic!("{first}"))
            .to_owned();
        let hint = lines.next().unwrap().unwrap();
        (Gateway { child, _out: lines }, address, [first, hint])
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn aileron_proxy_postgres_decides_each_statement() {
    let Some(db) = cluster() else {
        return;
    };
    let p = Project::new(DENY_DROP);
    let (_gw, address, [first, hint]) = Gateway::start(&p, &db);
    assert!(
        first.ends_with(&format!("for 127.0.0.1:{}", db.port)),
        "{first}"
    );
    let port = address.rsplit_once(':').unwrap().1;
    assert_eq!(hint, format!("  export PGHOST=127.0.0.1 PGPORT={port}"));
    let conn = format!("postgres://aileron@{address}/postgres");
    let (status, _, err) = psql(&p, &[&conn, "-c", "CREATE TABLE t (id int)"]);
    assert_eq!(status, 0, "{err}");
    let (status, _, err) = psql(&p, &[&conn, "-c", "DROP TABLE t"]);
    assert_eq!(status, 1);
    assert!(
        err.contains("ERROR:  aileron: denied: the agent may not drop tables (rule no-drop)"),
        "{err}"
    );
    let (status, out, err) = psql(&p, &[&conn, "-tA", "-c", "SELECT count(*) FROM t"]);
    assert_eq!((status, out.trim()), (0, "0"), "{err}");
    // The gateway is one session of its own, adapter `postgres`.
    let audit = p.audit();
    let drop = audit
        .iter()
        .find(|r| r["action"]["summary"] == "DROP TABLE t")
        .expect("the DROP's line");
    assert_eq!(drop["decision"], "deny");
    assert_eq!(drop["adapter"], "postgres");
    assert!(
        drop["session"].as_str().unwrap().starts_with("postgres-"),
        "{drop}"
    );
}

#[test]
fn under_launch_the_gateways_of_the_policy_start_with_the_session() {
    let Some(db) = cluster() else {
        return;
    };
    let upstream = format!("postgres://127.0.0.1:{}", db.port);
    let p = Project::new(&format!(
        "{DENY_DROP}settings:\n  gateways:\n    - postgres: {{upstream: \"{upstream}\"}}\n"
    ));
    let (status, _, err) = psql(
        &p,
        &[
            &format!("{upstream}/postgres?user=aileron"),
            "-c",
            "CREATE TABLE t (id int)",
        ],
    );
    assert_eq!(status, 0, "{err}");
    let script = r#"echo "PGHOST=$PGHOST PGPORT=$PGPORT"
echo "DATABASE_URL=$DATABASE_URL"
echo "session=$AILERON_SESSION"
psql -X -U aileron -d postgres -c 'DROP TABLE t'
psql -X "$DATABASE_URL" -tA -c 'SELECT count(*) FROM t'"#;
    let mut cmd = p.aileron(&["launch", "--enforce", "none", "--", "bash", "-c", script]);
    cmd.env(
        "DATABASE_URL",
        format!(
            "postgres://aileron@localhost:{}/postgres?application_name=x",
            db.port
        ),
    );
    let out = run_no_tty(&mut cmd);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let pg = lines[0]
        .strip_prefix("PGHOST=127.0.0.1 PGPORT=")
        .expect(&stdout);
    assert_ne!(pg, db.port.to_string());
    assert_eq!(
        lines[1],
        format!("DATABASE_URL=postgres://aileron@127.0.0.1:{pg}/postgres?application_name=x")
    );
    let session = lines[2].strip_prefix("session=").unwrap();
    assert!(
        stderr.contains("ERROR:  aileron: denied: the agent may not drop tables (rule no-drop)"),
        "{stderr}"
    );
    assert_eq!(lines[3], "0", "{stdout}");
    // Decided by the launch session: its id on the gateway's lines.
    let audit = p.audit();
    let drop = audit
        .iter()
        .find(|r| r["adapter"] == "postgres" && r["action"]["summary"] == "DROP TABLE t")
        .expect("the DROP's line");
    assert_eq!(drop["session"], session);
    assert_eq!(drop["decision"], "deny");
    // A gateway that cannot start stops the launch, saying why.
    let p = Project::new(
        "version: 1\ndefault: allow\nsettings:\n  gateways:\n    - postgres: {upstream: \"postgres://[::1\"}\n",
    );
    let out = run_no_tty(&mut p.aileron(&["launch", "--enforce", "none", "--", "true"]));
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("not launching: the database gateway for postgres://[::1 did not start"),
        "{err}"
    );
}

#[test]
fn check_warns_about_a_rule_allowing_select_and_the_gateway_refuses_what_it_hides() {
    let policy = "version: 1
default: deny
allow:
  - id: reads
    when: {type: sql.query, sql.verb: SELECT}
";
    let p = Project::new(policy);
    let out = p.aileron(&["check"]).output().unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a warning does not fail: {stdout}"
    );
    let file = p.dir.join("aileron.yaml");
    assert!(
        stdout.contains(&format!(
            "{}:4:5: warning: this rule allows SQL by its verb alone (SELECT)",
            file.display()
        )),
        "{stdout}"
    );
    assert!(stdout.contains("add `sensitivity: read`"), "{stdout}");
    assert!(stdout.contains("[sql-verb-only]"), "{stdout}");
    let out = p.aileron(&["check", "--deny-warnings"]).output().unwrap();
    assert_ne!(out.status.code(), Some(0));

    // What the warning is about, through the gateway: no one to ask (no
    // terminal), so what the built-ins ask about is refused.
    let Some(db) = cluster() else {
        return;
    };
    let direct = format!("postgres://aileron@127.0.0.1:{}/postgres", db.port);
    let (status, _, err) = psql(
        &p,
        &[
            &direct,
            "-c",
            "CREATE TABLE t (id int); INSERT INTO t VALUES (1), (2); \
             CREATE FUNCTION wipe(t) RETURNS int LANGUAGE sql AS 'DELETE FROM t; SELECT 0'; \
             CREATE SEQUENCE s; SELECT setval('s', 10)",
        ],
    );
    assert_eq!(status, 0, "{err}");
    let (_gw, address, _) = Gateway::start(&p, &db);
    let conn = format!("postgres://aileron@{address}/postgres");
    for sql in [
        "SELECT t.wipe FROM t",
        "SELECT (t).wipe FROM t",
        "SELECT setval('s', 1)",
        "SELECT nextval('s')",
        "VALUES ((SELECT setval('s', 1)))",
        "SELECT * INTO copy FROM t",
    ] {
        let (status, _, err) = psql(&p, &[&conn, "-c", sql]);
        assert_eq!(status, 1, "{sql}: {err}");
        assert!(err.contains("ERROR:  aileron: "), "{sql}: {err}");
    }
    let (status, out, err) = psql(
        &p,
        &[
            &direct,
            "-tA",
            "-c",
            "SELECT count(*), (SELECT last_value FROM s), to_regclass('copy') IS NULL FROM t",
        ],
    );
    assert_eq!((status, out.trim()), (0, "2|10|t"), "{err}");
    // A plain read passes; so does not a search_path putting pg_catalog last.
    let (status, out, err) = psql(&p, &[&conn, "-tA", "-c", "SELECT count(*) FROM t"]);
    assert_eq!((status, out.trim()), (0, "2"), "{err}");
    let mut cmd = p.command("psql");
    cmd.args(["-X", &conn, "-c", "SELECT 1"])
        .env("PGOPTIONS", "-c search_path=public,pg_catalog");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("aileron: "),
        "{}",
        text(&out.stderr)
    );
}
