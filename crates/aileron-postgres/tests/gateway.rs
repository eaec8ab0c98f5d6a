//! The gateway in front of a real PostgreSQL (Debian's, started by the
//! tests), reached by `psql` and by a Rust client (tokio-postgres, which
//! speaks the extended protocol), and by hand for what no client sends.

mod support;

use aileron_session::prompt::Answer;
use support::raw::{self, Raw};
use support::{Env, column, error_of};

const DENY_DROP: &str = "version: 1
default: allow
deny:
  - id: no-drop
    description: the agent may not drop or truncate tables
    when: {type: sql.query, sql.verb: {in: [DROP, TRUNCATE]}}
";

#[tokio::test(flavor = "multi_thread")]
async fn a_drop_is_denied_while_select_works_and_the_table_stays() {
    let Some(env) = Env::start(DENY_DROP).await else {
        return;
    };
    let c = env.client().await;
    c.batch_execute("CREATE TABLE users (id int, name text); INSERT INTO users VALUES (1, 'ann')")
        .await
        .unwrap();
    let e = c.simple_query("DROP TABLE users").await.unwrap_err();
    let (code, message) = error_of(&e);
    assert_eq!(code, "42501");
    assert!(message.contains("no-drop"), "{message}");
    assert!(message.contains("may not drop"), "{message}");
    // The connection goes on.
    assert_eq!(column(&c, "SELECT name FROM users").await, ["ann"]);
    let e = c.simple_query("TRUNCATE users").await.unwrap_err();
    assert_eq!(error_of(&e).0, "42501");
    // The table is still there, with its row, as the server says directly.
    assert_eq!(env.count("users").await, "1");
    // Each decision is in the audit log, by the adapter `postgres`.
    let audit = env.audit();
    let drop = audit
        .iter()
        .find(|r| r["action"]["facets"]["sql"]["verb"] == "DROP")
        .expect("the DROP's audit line");
    assert_eq!(drop["decision"], "deny");
    assert_eq!(drop["adapter"], "postgres");
    assert_eq!(drop["rule"], "no-drop");
    assert_eq!(drop["action"]["facets"]["sql"]["tables"][0], "users");
    assert_eq!(drop["action"]["facets"]["sql"]["database"], env.db.as_str());
    assert_eq!(drop["action"]["facets"]["sql"]["user"], "aileron");
}

#[tokio::test(flavor = "multi_thread")]
async fn psql_reads_the_denial_and_goes_on() {
    let Some(env) = Env::start(DENY_DROP).await else {
        return;
    };
    let (status, out, err) = env.psql(
        &[],
        "CREATE TABLE t (id int);\nINSERT INTO t VALUES (1), (2);\nDROP TABLE t;\nSELECT count(*) FROM t;\n",
    );
    assert_eq!(status, 0, "{out}\n{err}");
    assert!(
        err.contains(
            "ERROR:  aileron: denied: the agent may not drop or truncate tables (rule no-drop)"
        ),
        "{err}"
    );
    assert!(out.contains(" 2\n"), "{out}");
    // Through psql -c too, with TLS asked for where available (`prefer`: the
    // gateway says no, psql goes on in the clear).
    let (status, _, err) = env.psql(&["-c", "DROP TABLE t"], "");
    assert_eq!(status, 1, "{err}");
    assert!(
        err.contains("42501") || err.contains("aileron: denied"),
        "{err}"
    );
    assert_eq!(env.count("t").await, "2");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_string_with_a_hidden_drop_is_denied_as_a_whole() {
    let Some(env) = Env::start(DENY_DROP).await else {
        return;
    };
    let c = env.client().await;
    c.batch_execute("CREATE TABLE t (id int)").await.unwrap();
    for text in [
        "INSERT INTO t VALUES (9); DROP TABLE t",
        "INSERT INTO t VALUES (9); /* ; */ DROP TABLE t",
        "INSERT INTO t VALUES (9); -- x\nDROP TABLE t",
        "INSERT INTO t VALUES (9); SELECT $$ a $$; DROP TABLE t",
        "INSERT INTO t VALUES (9);SELECT E'\\'';DROP TABLE t",
    ] {
        let e = c.simple_query(text).await.unwrap_err();
        assert_eq!(error_of(&e).0, "42501", "{text}");
    }
    // What is hidden inside quotes and comments is no statement: allowed.
    for text in [
        "SELECT $$ ; DROP TABLE t $$",
        "SELECT 1 /* ; DROP TABLE t */",
        "SELECT E'\\'; DROP TABLE t; --'",
    ] {
        c.simple_query(text)
            .await
            .unwrap_or_else(|e| panic!("{text}: {e}"));
    }
    // None of the inserts ran: the whole string was refused.
    assert_eq!(env.count("t").await, "0");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_extended_protocol_is_decided_at_parse() {
    let Some(env) = Env::start(
        "version: 1
default: allow
deny:
  - id: no-delete
    description: no deletes
    when: {type: sql.query, sql.verb: DELETE}
",
    )
    .await
    else {
        return;
    };
    let c = env.client().await;
    c.batch_execute("CREATE TABLE t (id int, name text); INSERT INTO t VALUES (1, 'a'), (2, 'b')")
        .await
        .unwrap();
    let rows = c
        .query("SELECT name FROM t WHERE id = $1", &[&2i32])
        .await
        .unwrap();
    assert_eq!(rows[0].get::<_, String>(0), "b");
    let e = c
        .execute("DELETE FROM t WHERE id = $1", &[&1i32])
        .await
        .unwrap_err();
    let (code, message) = error_of(&e);
    assert_eq!(code, "42501");
    assert!(message.contains("no-delete"), "{message}");
    // A prepared statement refused stays refused; the connection goes on.
    assert!(c.prepare("DELETE FROM t").await.is_err());
    let n = c
        .execute("UPDATE t SET name = $1 WHERE id = $2", &[&"z", &1i32])
        .await
        .unwrap();
    assert_eq!(n, 1);
    // Pipelined: each answered in its place.
    let (a, b, d) = tokio::join!(
        c.query("SELECT id FROM t ORDER BY id", &[]),
        c.execute("DELETE FROM t WHERE id = $1", &[&2i32]),
        c.query("SELECT count(*) FROM t", &[]),
    );
    assert_eq!(a.unwrap().len(), 2);
    assert_eq!(error_of(&b.unwrap_err()).0, "42501");
    assert_eq!(d.unwrap()[0].get::<_, i64>(0), 2);
    // SQL's own PREPARE is decided as what it prepares, EXECUTE as it.
    let e = c
        .simple_query("PREPARE d (int) AS DELETE FROM t WHERE id = $1")
        .await
        .unwrap_err();
    assert_eq!(error_of(&e).0, "42501");
    assert_eq!(env.count("t").await, "2");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refusal_inside_a_batch_aborts_it_as_a_server_error_does() {
    let Some(env) = Env::start(DENY_DROP).await else {
        return;
    };
    env.run("CREATE TABLE t (id int)").await;
    let mut r = Raw::connect(env.addr.port(), &env.db).await;
    // P B E (an insert) then a refused Parse, then B E and Sync: the insert
    // is answered, then the refusal, and the server discards up to Sync and
    // rolls the implicit transaction back.
    let mut batch = Vec::new();
    batch.extend(raw::parse("", "INSERT INTO t VALUES (1)"));
    batch.extend(raw::bind(""));
    batch.extend(raw::execute());
    batch.extend(raw::parse("s2", "DROP TABLE t"));
    batch.extend(raw::bind("s2"));
    batch.extend(raw::execute());
    batch.extend(raw::sync());
    r.send(&batch).await;
    let msgs = r.until_ready().await;
    assert_eq!(raw::kinds(&msgs), "12CEZ", "{msgs:?}");
    let (code, message) = raw::error(&msgs[3].1);
    assert_eq!(code, "42501");
    assert!(message.contains("no-drop"), "{message}");
    assert_eq!(msgs[4].1, b"I");
    // Usable afterwards.
    r.send(&raw::query("SELECT count(*) FROM t")).await;
    let msgs = r.until_ready().await;
    assert_eq!(raw::kinds(&msgs), "TDCZ", "{msgs:?}");
    assert_eq!(&msgs[1].1[6..], b"0");
    // In a transaction block, the refusal fails the transaction as any error does.
    r.send(&raw::query("BEGIN; INSERT INTO t VALUES (5)")).await;
    r.until_ready().await;
    r.send(&raw::query("DROP TABLE t")).await;
    let msgs = r.until_ready().await;
    assert_eq!(raw::kinds(&msgs), "EZ");
    assert_eq!(msgs[1].1, b"E");
    r.send(&raw::query("ROLLBACK")).await;
    r.until_ready().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn copy_from_stdin_goes_through_under_an_allowing_rule() {
    let Some(env) = Env::start(
        "version: 1
default: deny
allow:
  - id: setup
    when: {type: sql.query, sql.verb: {in: [CREATE, SELECT]}}
  - id: load-t
    when: {type: sql.query, sql.verb: COPY, sql.tables: {in: [t]}}
",
    )
    .await
    else {
        return;
    };
    let c = env.client().await;
    c.batch_execute("CREATE TABLE t (id int, name text)")
        .await
        .unwrap();
    // The Rust client's COPY (the extended protocol).
    let sink = c.copy_in("COPY t FROM STDIN").await.unwrap();
    futures_util::pin_mut!(sink);
    use futures_util::SinkExt;
    sink.send(bytes::Bytes::from_static(b"1\ta\n2\tb\n"))
        .await
        .unwrap();
    assert_eq!(sink.finish().await.unwrap(), 2);
    // psql's (the simple protocol).
    let (status, out, err) = env.psql(&["-c", "\\copy t from stdin"], "3\tc\n\\.\n");
    assert_eq!(status, 0, "{out}\n{err}");
    // Into another table: denied by the default.
    c.batch_execute("CREATE TABLE u (id int)").await.unwrap();
    assert!(
        c.copy_in::<_, bytes::Bytes>("COPY u FROM STDIN")
            .await
            .is_err()
    );
    assert_eq!(column(&c, "SELECT count(*) FROM t").await, ["3"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ask_holds_the_query_until_the_human_answers() {
    let Some(env) = Env::start(
        "version: 1
default: allow
ask:
  - id: users-writes
    description: writes to users
    when: {type: sql.query, sql.tables: {in: [users]}, sensitivity: {in: [write, mutate, destructive]}}
",
    )
    .await else {
        return;
    };
    let c = env.client().await;
    // The CREATE names users and writes: the human is asked.
    env.answer(|| {
        std::thread::sleep(std::time::Duration::from_millis(300));
        Answer::Once
    });
    let t = std::time::Instant::now();
    c.batch_execute("CREATE TABLE users (id int)")
        .await
        .unwrap();
    assert!(t.elapsed() >= std::time::Duration::from_millis(300));
    assert_eq!(env.asked().len(), 1);
    c.batch_execute("INSERT INTO users VALUES (1)")
        .await
        .unwrap();
    env.answer(|| Answer::Reject);
    let e = c.simple_query("DELETE FROM users").await.unwrap_err();
    let (code, message) = error_of(&e);
    assert_eq!(code, "42501");
    assert!(message.contains("rejected"), "{message}");
    assert_eq!(column(&c, "SELECT count(*) FROM users").await, ["1"]);
    assert_eq!(env.asked().len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn do_blocks_and_functions_the_analysis_cannot_see_through_are_asked() {
    let Some(env) = Env::start("version: 1\ndefault: allow\n").await else {
        return;
    };
    let c = env.client().await;
    c.batch_execute("CREATE TABLE t (id int)").await.unwrap();
    env.answer(|| Answer::Reject);
    for text in [
        "DO $$ BEGIN EXECUTE 'DROP TABLE t'; END $$",
        "SELECT f()",
        "SELECT query_to_xml('DROP TABLE t', true, true, '')",
        "CHECKPOINT",
    ] {
        let e = c.simple_query(text).await.unwrap_err();
        assert_eq!(error_of(&e).0, "42501", "{text}");
    }
    assert_eq!(env.asked().len(), 4);
    let audit = env.audit();
    let rules: Vec<&str> = audit
        .iter()
        .filter(|r| r["decision"] == "ask" && r["outcome"] == "rejected")
        .filter_map(|r| r["rule"].as_str())
        .collect();
    assert_eq!(
        rules,
        [
            "builtin:sql-dynamic",
            "builtin:sql-dynamic",
            "builtin:sql-dynamic",
            "builtin:sql-unparsable"
        ]
    );
    // PostgreSQL's own functions are no code to ask about.
    column(&c, "SELECT lower('A'), count(*) FROM t").await;
    assert_eq!(env.asked().len(), 4);
    // A policy may let dynamic SQL through by overriding the built-in.
    let env =
        Env::start("version: 1\ndefault: allow\nallow:\n  - {override: \"builtin:sql-dynamic\"}\n")
            .await
            .expect("PostgreSQL");
    let c = env.client().await;
    c.batch_execute("DO $$ BEGIN PERFORM 1; END $$")
        .await
        .unwrap();
    assert!(env.asked().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_query_over_the_limit_is_refused_and_the_connection_kept() {
    let Some(env) = Env::start("version: 1\ndefault: allow\n").await else {
        return;
    };
    let mut r = Raw::connect(env.addr.port(), &env.db).await;
    let big = format!("SELECT '{}'", "x".repeat(aileron_postgres::wire::MAX_QUERY));
    r.send(&raw::query(&big)).await;
    let msgs = r.until_ready().await;
    assert_eq!(raw::kinds(&msgs), "EZ");
    assert_eq!(raw::error(&msgs[0].1).0, "54000");
    // And as a Parse.
    let mut batch = raw::parse("big", &big);
    batch.extend(raw::sync());
    r.send(&batch).await;
    let msgs = r.until_ready().await;
    assert_eq!(raw::kinds(&msgs), "EZ");
    assert_eq!(raw::error(&msgs[0].1).0, "54000");
    r.send(&raw::query("SELECT 1")).await;
    assert_eq!(raw::kinds(&r.until_ready().await), "TDCZ");
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_messages_end_the_connection_and_nothing_else() {
    let Some(env) = Env::start(DENY_DROP).await else {
        return;
    };
    env.run("CREATE TABLE t (id int)").await;
    let port = env.addr.port();
    let fatal = |msgs: &[raw::Msg]| {
        msgs.iter()
            .find(|m| m.0 == b'E')
            .map(|m| raw::error(&m.1).0)
            .unwrap_or_default()
    };
    // After authentication: lengths below the header, negative, an
    // unknown message type, a Query with bytes after its NUL, a Parse
    // that does not add up.
    let mut bad: Vec<Vec<u8>> = vec![
        vec![b'Q', 0, 0, 0, 3],
        vec![b'Q', 0xff, 0xff, 0xff, 0xf0],
        raw::msg(b'z', b"junk"),
        raw::msg(b'Q', b"SELECT 1\0; DROP TABLE t\0"),
        raw::msg(b'P', b"\0DROP TABLE t\0\x00\x05"),
        raw::msg(b'Q', b"no terminator"),
    ];
    bad.push(raw::msg(b'F', b"\x00\x01"));
    for m in bad {
        let mut r = Raw::connect(port, &env.db).await;
        r.send(&m).await;
        let msgs = r.until_ready().await;
        assert_eq!(fatal(&msgs), "08P01", "{m:?}: {msgs:?}");
        assert!(r.closed().await, "{m:?}");
    }
    // In the startup phase: too short, negative, over the limit, a protocol
    // that is not 3.
    for len in [3i32, -8, 20_000] {
        let mut s = tokio::net::TcpStream::connect(env.addr).await.unwrap();
        use tokio::io::AsyncWriteExt;
        s.write_all(&len.to_be_bytes()).await.unwrap();
        s.write_all(&[0u8; 16]).await.unwrap();
        let mut r = Raw { s };
        let msgs = r.until_ready().await;
        assert_eq!(fatal(&msgs), "08P01", "{len}");
    }
    let mut v2 = 8i32.to_be_bytes().to_vec();
    v2.extend_from_slice(&(2i32 << 16).to_be_bytes());
    let mut r = Raw {
        s: tokio::net::TcpStream::connect(env.addr).await.unwrap(),
    };
    r.send(&v2).await;
    assert_eq!(fatal(&r.until_ready().await), "0A000");
    // A message cut short, then the client gone.
    let mut r = Raw::connect(port, &env.db).await;
    r.send(&[b'Q', 0, 0, 0, 100, b'S']).await;
    drop(r);
    // Through it all, the gateway serves, and the table is there.
    let c = env.client().await;
    assert_eq!(column(&c, "SELECT count(*) FROM t").await, ["0"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn tls_and_gss_encryption_are_refused_and_a_cancel_passes_through() {
    let Some(env) = Env::start("version: 1\ndefault: allow\n").await else {
        return;
    };
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    for code in [80_877_103i32, 80_877_104] {
        let mut s = tokio::net::TcpStream::connect(env.addr).await.unwrap();
        let mut m = 8i32.to_be_bytes().to_vec();
        m.extend_from_slice(&code.to_be_bytes());
        s.write_all(&m).await.unwrap();
        let mut n = [0u8; 1];
        s.read_exact(&mut n).await.unwrap();
        assert_eq!(&n, b"N");
        // The startup goes on in the clear.
        s.write_all(&raw::startup(&env.db)).await.unwrap();
        let mut r = Raw { s };
        assert!(raw::kinds(&r.until_ready().await).ends_with('Z'));
    }
    // psql with sslmode=require is told no.
    let out = std::process::Command::new("psql")
        .args([
            &format!(
                "host=127.0.0.1 port={} user=aileron dbname={} sslmode=require",
                env.addr.port(),
                env.db
            ),
            "-c",
            "SELECT 1",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    // A cancel request reaches the server.
    let c = env.client().await;
    let token = c.cancel_token();
    let slow = tokio::spawn(async move { c.simple_query("SELECT pg_sleep(30)").await });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    token.cancel_query(tokio_postgres::NoTls).await.unwrap();
    let e = tokio::time::timeout(std::time::Duration::from_secs(10), slow)
        .await
        .expect("cancelled within 10 s")
        .unwrap()
        .unwrap_err();
    assert_eq!(error_of(&e).0, "57014");
}

#[tokio::test(flavor = "multi_thread")]
async fn text_the_server_may_read_otherwise_is_asked() {
    let Some(env) = Env::start(DENY_DROP).await else {
        return;
    };
    let c = env.client().await;
    c.batch_execute("CREATE TABLE t (id int)").await.unwrap();
    env.answer(|| Answer::Reject);
    // With standard_conforming_strings off, '\'' ends where the analysis
    // would not: backslashes are asked about from the moment it may be off.
    c.batch_execute("SET standard_conforming_strings = off")
        .await
        .unwrap();
    let e = c
        .simple_query("SELECT '\\''; DROP TABLE t; --'")
        .await
        .unwrap_err();
    assert_eq!(error_of(&e).0, "42501");
    let e = c.simple_query("SELECT 'a\\b'").await.unwrap_err();
    assert_eq!(error_of(&e).0, "42501");
    assert_eq!(column(&c, "SELECT 'plain'").await, ["plain"]);
    assert_eq!(env.count("t").await, "0");
}

/// Texts built to make a lexer disagree with the server's about where a
/// string, a dollar quote, a comment or an identifier ends.
fn tricky_texts() -> Vec<String> {
    let prefixes = [
        "SELECT 'a",
        "SELECT E'a\\",
        "SELECT E'\\\\",
        "SELECT 'a\\",
        "SELECT $$",
        "SELECT $a$",
        "SELECT $a$ $b$",
        "SELECT $A$",
        "SELECT /*",
        "SELECT /* /*",
        "SELECT /* */ /*",
        "SELECT --",
        "SELECT \"a",
        "SELECT U&'\\",
        "SELECT U&\"",
        "SELECT N'",
        "SELECT B'",
        "SELECT X'",
        "SELECT e'\\'",
        "SELECT 'a'' ",
        "SELECT $1$",
        "SELECT a$b$",
        "SELECT 1 --\r",
        "SELECT 1 +--",
        "SELECT 1 */",
        "SELECT $_$",
        "SELECT $a1$",
        "SELECT $1a$",
        "SELECT E'\\x27",
        "SELECT '\\'",
        "SELECT 1 /*/",
        "SELECT 1 /**/",
        "SELECT E'''",
        "SELECT $$$",
        "SELECT $ $",
        "SELECT 'a' 'b",
        "SELECT 'a'\n'b",
        "SELECT U&'\\0027",
        "SELECT 1 @--",
        "SELECT 1 !--",
        "SELECT 1 ~/*",
        "SELECT 1::text--",
    ];
    let suffixes = [
        "'",
        "$$",
        "$a$",
        "$A$",
        "*/",
        "*/ */",
        "\n",
        "\"",
        "$_$",
        "$1$",
        "$a1$",
        "$1a$",
        "' UESCAPE '!'",
        "\r",
        "",
        " --",
        "\\'",
        "''",
        "'$$",
    ];
    let mut out = Vec::new();
    for p in prefixes {
        for s in suffixes {
            out.push(format!("{p}; DROP TABLE x; {s}"));
            out.push(format!("{p}{s}; DROP TABLE x; SELECT 1"));
            out.push(format!("{p}{s}; DROP TABLE x; --"));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn every_drop_the_server_runs_is_seen_as_a_drop() {
    let Some(env) = Env::start("version: 1\ndefault: allow\n").await else {
        return;
    };
    let direct = env.direct().await;
    for escapes in [false, true] {
        let setting = if escapes { "off" } else { "on" };
        direct
            .batch_execute(&format!("SET standard_conforming_strings = {setting}"))
            .await
            .unwrap();
        let cx = aileron_postgres::lower::Context {
            backslash_escapes: escapes,
            ..aileron_postgres::lower::Context::new("d", "u")
        };
        let mut dropped = 0;
        for text in tricky_texts() {
            direct
                .batch_execute("DROP TABLE IF EXISTS x; CREATE TABLE x (i int)")
                .await
                .unwrap();
            let _ = direct.simple_query(&text).await;
            if column(&direct, "SELECT to_regclass('x') IS NULL").await != ["t"] {
                continue;
            }
            dropped += 1;
            let verbs: Vec<String> = aileron_postgres::lower::lower(&text, &cx)
                .actions
                .into_iter()
                .map(|a| a.verb)
                .collect();
            assert!(
                verbs.iter().any(|v| v == "DROP"),
                "the server dropped x for {text:?} (standard_conforming_strings {setting}); the analysis saw {verbs:?}"
            );
        }
        assert!(dropped > 50, "{dropped}");
    }
}

/// The red team's policy: reads allowed by their verb.
const ALLOW_SELECT: &str = "version: 1
default: deny
allow:
  - id: reads
    description: the agent may read
    when: {type: sql.query, sql.verb: SELECT}
";

/// A table with two rows, a function of its row type that empties it
/// (callable as `t.wipe` or `(t).wipe`), and a sequence at 10: made on
/// the server directly.
async fn victim(env: &Env) -> tokio_postgres::Client {
    let direct = env.direct().await;
    direct
        .batch_execute(
            "CREATE TABLE t (id int); INSERT INTO t VALUES (1), (2);
             CREATE FUNCTION wipe(t) RETURNS int LANGUAGE sql AS 'DELETE FROM t; SELECT 0';
             CREATE SEQUENCE s; SELECT setval('s', 10);",
        )
        .await
        .unwrap();
    direct
}

#[tokio::test(flavor = "multi_thread")]
async fn a_select_that_calls_or_writes_is_refused_under_a_rule_allowing_select() {
    let Some(env) = Env::start(ALLOW_SELECT).await else {
        return;
    };
    let direct = victim(&env).await;
    let c = env.client().await;
    env.answer(|| Answer::Reject);
    let attacks = [
        "SELECT t.wipe FROM t",
        "SELECT (t).wipe FROM t",
        "SELECT id FROM t WHERE t.wipe = 0",
        "SELECT setval('s', 1)",
        "SELECT nextval('s')",
        "VALUES ((SELECT setval('s', 1)))",
        "SELECT * INTO copy FROM t",
    ];
    for text in attacks {
        let e = c.simple_query(text).await.unwrap_err();
        assert_eq!(error_of(&e).0, "42501", "{text}");
        // The extended protocol too.
        let e = c.query(text, &[]).await.unwrap_err();
        assert_eq!(error_of(&e).0, "42501", "{text} (Parse)");
    }
    // Each was asked about (the human said no), by its built-in rule.
    assert_eq!(env.asked().len(), attacks.len() * 2);
    let rules: Vec<String> = env
        .audit()
        .iter()
        .filter(|r| r["outcome"] == "rejected")
        .map(|r| r["rule"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        rules.contains(&"builtin:sql-field-call".to_owned()),
        "{rules:?}"
    );
    assert!(
        rules.contains(&"builtin:sql-write-in-read".to_owned()),
        "{rules:?}"
    );
    // Nothing happened, as the server says directly.
    assert_eq!(column(&direct, "SELECT count(*) FROM t").await, ["2"]);
    assert_eq!(column(&direct, "SELECT last_value FROM s").await, ["10"]);
    assert_eq!(
        column(&direct, "SELECT to_regclass('copy') IS NULL").await,
        ["t"]
    );
    // Plain reads still pass, asking nobody.
    assert_eq!(column(&c, "SELECT id FROM t ORDER BY id").await, ["1", "2"]);
    assert_eq!(
        column(&c, "SELECT count(*) FROM t WHERE id > 1").await,
        ["1"]
    );
    assert_eq!(env.asked().len(), attacks.len() * 2);
    // An approved qualified column is a column where there is one.
    env.answer(|| Answer::Once);
    assert_eq!(
        column(&c, "SELECT t.id FROM t ORDER BY t.id").await,
        ["1", "2"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_project_whose_schema_has_no_such_function_may_allow_qualified_columns() {
    // The documented trade-off: `t.id` cannot be told from `id(t)`; a
    // project that knows its schema cancels the ask by id.
    let Some(env) = Env::start(&format!(
        "{ALLOW_SELECT}  - {{override: \"builtin:sql-field-call\"}}\n"
    ))
    .await
    else {
        return;
    };
    let direct = victim(&env).await;
    // The check docs/postgres.md gives finds the function a column may call.
    let check = "SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_type t ON t.oid = p.proargtypes[0] WHERE p.pronargs - p.pronargdefaults <= 1 AND (t.typtype = 'c' OR t.typtype = 'p' OR t.oid = 'record'::regtype) AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace);";
    let docs = include_str!("../../../docs/postgres.md");
    assert!(docs.contains(check), "docs/postgres.md gives another check");
    assert_eq!(column(&direct, check).await, ["wipe(t)"]);
    let c = env.client().await;
    env.answer(|| Answer::Reject);
    assert_eq!(
        column(
            &c,
            "SELECT a.id FROM t a JOIN t b ON a.id = b.id ORDER BY a.id"
        )
        .await,
        ["1", "2"]
    );
    assert!(env.asked().is_empty());
    // The writes are still asked about.
    let e = c.simple_query("SELECT setval('s', 1)").await.unwrap_err();
    assert_eq!(error_of(&e).0, "42501");
    assert_eq!(column(&direct, "SELECT last_value FROM s").await, ["10"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn startup_settings_of_name_resolution_are_decided_before_the_server_sees_them() {
    let Some(env) = Env::start(ALLOW_SELECT).await else {
        return;
    };
    victim(&env).await;
    env.answer(|| Answer::Reject);
    // libpq's PGOPTIONS and the like: `options` with -c.
    for options in [
        "-c search_path=public,pg_catalog",
        "--search_path=public,pg_catalog",
        // The server splits at C's isspace, the vertical tab too.
        "-c\x0bsearch_path=public,pg_catalog",
        "-c role=aileron",
    ] {
        let e = match with_options(&env, options).await {
            Ok(_) => panic!("{options}: connected"),
            Err(e) => e,
        };
        let (code, message) = error_of(&e);
        assert_eq!(code, "42501", "{options}");
        assert!(message.starts_with("aileron: "), "{message}");
    }
    // A parameter of its own in the startup message.
    let mut r = raw::Raw::connect_raw(env.addr.port()).await;
    r.send(&raw::startup_with(
        &env.db,
        &[("search_path", "public, pg_catalog")],
    ))
    .await;
    let msgs = r.until_ready().await;
    assert_eq!(raw::kinds(&msgs), "E", "{msgs:?}");
    assert_eq!(raw::error(&msgs[0].1).0, "42501");
    assert!(r.closed().await);
    // Each was decided: an audit line each; the search paths asked about
    // (builtin:sql-dynamic), the role denied by the default.
    assert_eq!(env.asked().len(), 4);
    let audit = env.audit();
    let startup: Vec<_> = audit
        .iter()
        .filter(|a| {
            a["action"]["facets"]["sql"]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("startup parameter"))
        })
        .collect();
    assert_eq!(startup.len(), 5, "{audit:?}");
    assert!(
        startup
            .iter()
            .all(|a| a["action"]["facets"]["sql"]["verb"] == "SET"),
        "{startup:?}"
    );
    // A path that keeps pg_catalog first, and the usual parameters, pass.
    let c = with_options(&env, "-c statement_timeout=5000")
        .await
        .unwrap();
    assert_eq!(column(&c, "SELECT count(*) FROM t").await, ["2"]);
}

/// A client through the gateway that sends `options` (as `PGOPTIONS`).
async fn with_options(
    env: &Env,
    options: &str,
) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let mut cfg = tokio_postgres::Config::new();
    cfg.host("127.0.0.1")
        .port(env.addr.port())
        .user("aileron")
        .dbname(&env.db)
        .application_name("app")
        .options(options);
    let (c, conn) = cfg.connect(tokio_postgres::NoTls).await?;
    tokio::spawn(conn);
    Ok(c)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_function_defined_under_a_trusted_name_is_asked_about() {
    // `SELECT lower(1)` calls a `public.lower(integer)` over pg_catalog's
    // `lower(text)` (a better match by argument type): the name the
    // analysis trusts would run the agent's code.
    let Some(env) = Env::start(
        "version: 1
default: deny
allow:
  - id: work
    when: {type: sql.query, sensitivity: {in: [read, write, mutate]}}
",
    )
    .await
    else {
        return;
    };
    let direct = victim(&env).await;
    let c = env.client().await;
    env.answer(|| Answer::Reject);
    let e = c
        .simple_query(
            "CREATE FUNCTION lower(integer) RETURNS int LANGUAGE sql AS 'DELETE FROM t; SELECT 1'",
        )
        .await
        .unwrap_err();
    assert_eq!(error_of(&e).0, "42501");
    assert_eq!(env.asked().len(), 1);
    // `SELECT lower(1)` finds no such function; the rows stay.
    assert!(c.simple_query("SELECT lower(1)").await.is_err());
    assert_eq!(column(&direct, "SELECT count(*) FROM t").await, ["2"]);
    // A function of a name of its own is the policy's to decide.
    c.simple_query("CREATE FUNCTION add_one(integer) RETURNS int LANGUAGE sql AS 'SELECT $1 + 1'")
        .await
        .unwrap();
    assert_eq!(env.asked().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn once_search_path_may_have_changed_only_pg_catalog_names_are_trusted() {
    let Some(env) = Env::start(
        "version: 1
default: deny
allow:
  - id: reads
    when: {type: sql.query, sensitivity: read}
",
    )
    .await
    else {
        return;
    };
    let direct = victim(&env).await;
    // A `lower(text)` of the agent's, as good a match as pg_catalog's: it
    // wins where public comes first.
    direct
        .batch_execute(
            "CREATE FUNCTION public.lower(text) RETURNS text LANGUAGE sql AS 'DELETE FROM t; SELECT ''x'''",
        )
        .await
        .unwrap();
    // The path is asked about; the human lets it through once.
    let c = env.client().await;
    env.answer(|| Answer::Once);
    c.simple_query("SET search_path = public, pg_catalog")
        .await
        .unwrap();
    assert_eq!(env.asked().len(), 1);
    // From now on `lower` may be the agent's: asked about, and rejected.
    env.answer(|| Answer::Reject);
    let e = c.simple_query("SELECT lower('A')").await.unwrap_err();
    assert_eq!(error_of(&e).0, "42501");
    assert_eq!(env.asked().len(), 2);
    assert_eq!(column(&direct, "SELECT count(*) FROM t").await, ["2"]);
    // Qualified by pg_catalog it is PostgreSQL's own.
    assert_eq!(column(&c, "SELECT pg_catalog.lower('A')").await, ["a"]);
    assert_eq!(env.asked().len(), 2);

    // The same after a startup path the human let through.
    env.answer(|| Answer::Once);
    let c = with_options(&env, "-c search_path=public,pg_catalog")
        .await
        .unwrap();
    assert_eq!(env.asked().len(), 3);
    env.answer(|| Answer::Reject);
    let e = c.simple_query("SELECT lower('A')").await.unwrap_err();
    assert_eq!(error_of(&e).0, "42501");
    assert_eq!(column(&direct, "SELECT count(*) FROM t").await, ["2"]);
    // A connection of its own still trusts PostgreSQL's names.
    let fresh = env.client().await;
    assert_eq!(column(&fresh, "SELECT lower('A')").await, ["a"]);
}
