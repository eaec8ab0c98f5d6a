//! SPEC 5: every mistake in a policy file is a load error with file, line,
//! column and what was expected — never a rule that silently never matches.

mod common;

use aileron_engine::{Diagnostic, Layer, parse_rule};
use common::*;

/// (policy text, the text the error points at and its occurrence, message fragments)
type Case = (&'static str, (&'static str, usize), &'static [&'static str]);

#[track_caller]
fn check_all(cases: &[Case]) {
    for (text, (needle, nth), fragments) in cases {
        let d = load_err(text);
        assert_eq!(
            d.len(),
            1,
            "one error expected for:\n{text}\ngot:\n{}",
            show(&d)
        );
        assert_diag(&d[0], FILE, pos(text, needle, *nth), fragments);
    }
}

#[test]
fn unknown_keys() {
    check_all(&[
        (
            "version: 1\nalow:\n  - \"ls\"\n",
            ("alow", 0),
            &[
                "unknown key `alow`",
                "did you mean `allow`",
                "expected one of: version, profiles, default",
            ],
        ),
        (
            "version: 1\ndeny:\n  - id: x\n    comand: \"rm *\"\n",
            ("comand", 0),
            &[
                "unknown key `comand`",
                "`deny` rule",
                "did you mean `command`?",
            ],
        ),
        (
            "version: 1\nallow:\n  - {id: x, comand: \"ls\"}\n",
            ("comand", 0),
            &["unknown key `comand`", "did you mean `command`?"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, command: \"rm *\", args_contains: \"-rf\"}\n",
            ("args_contains", 0),
            &["did you mean `args_contain`?"],
        ),
        (
            "version: 1\nsettings:\n  timout: 30\n",
            ("timout", 0),
            &["unknown key `timout`", "did you mean `timeout`?"],
        ),
        (
            "version: 1\nenv:\n  scrubs: [\"AWS_*\"]\n",
            ("scrubs", 0),
            &["did you mean `scrub`?"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, command: \"rm *\", scope: {integraton: i}}\n",
            ("integraton", 0),
            &["unknown key `integraton`", "did you mean `integration`?"],
        ),
        // bucket-specific keys are errors elsewhere
        (
            "version: 1\nallow:\n  - {id: x, command: \"ls\", approver: dashboard}\n",
            ("approver", 0),
            &["unknown key `approver` in an `allow` rule"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, command: \"ls\", model: gpt-4o}\n",
            ("model", 0),
            &["unknown key `model` in a `deny` rule"],
        ),
        (
            "version: 1\nask:\n  - {id: x, command: \"ls\", prompt: \"?\"}\n",
            ("prompt", 0),
            &["unknown key `prompt` in an `ask` rule"],
        ),
    ]);
}

#[test]
fn unknown_operator_names_it_lists_the_valid_ones_and_points_at_it() {
    let text =
        "version: 1\ndeny:\n  - id: no-delete\n    when: {http.method: {equal: \"DELETE\"}}\n";
    let d = load_err1(text);
    assert_diag(
        &d,
        FILE,
        (4, 26),
        &[
            "unknown operator `equal`",
            "did you mean `equals`?",
            "expected one of: equals, in, pattern, contains, notContains, glob, exists, gt, gte, lt, lte, path, time",
        ],
    );
    assert_eq!((d.line, d.col), pos(text, "equal", 0));

    // Block style, deeper.
    let text = "version: 1\nask:\n  - id: x\n    when:\n      any:\n        - http.method: GET\n        - not:\n            http.url:\n              startsWith: \"https://\"\n";
    let d = load_err1(text);
    assert_diag(
        &d,
        FILE,
        (9, 15),
        &["unknown operator `startsWith`", "expected one of: equals"],
    );
}

#[test]
fn wrong_typed_arguments() {
    check_all(&[
        (
            "version: 1\ndeny:\n  - {id: x, when: {http.method: {in: \"x\"}}}\n",
            ("\"x\"", 0),
            &["`in` takes a list, found a string"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {llm.cost: {gt: \"a\"}}}\n",
            ("\"a\"", 0),
            &["`gt` takes a number, found a string"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {llm.cost: {lte: [1]}}}\n",
            ("[1]", 0),
            &["`lte` takes a number, found a list"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {http.query: {exists: \"yes\"}}}\n",
            ("\"yes\"", 0),
            &["`exists` takes true or false, found a string"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {http.url: {pattern: 5}}}\n",
            ("5", 0),
            &["`pattern` takes a string", "found an integer"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {http.host: {glob: [a]}}}\n",
            ("[a]", 0),
            &["`glob` takes a string", "found a list"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {http.url: {contains: {a: 1}}}}\n",
            ("{a: 1}", 0),
            &[
                "`contains` takes a string, number or boolean",
                "found a mapping",
            ],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {fs.path: {path: 7}}}\n",
            ("7", 0),
            &["`path` takes a string"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {http.method: {in: [GET, [POST]]}}}\n",
            ("[POST]", 0),
            &["`in` lists hold scalars, found a list"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {http.method: }}\n",
            (": }", 0),
            &["cannot be null", "exists: false"],
        ),
        // rule metadata
        (
            "version: 1\ndeny:\n  - {id: x, command: \"rm *\", priority: high}\n",
            ("high", 0),
            &["`priority` must be an integer, found a string"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, command: \"rm *\", enabled: \"false\"}\n",
            ("\"false\"", 0),
            &["`enabled` must be true or false, found a string"],
        ),
        (
            "version: 1\ndeny:\n  - {id: 7, command: \"rm *\"}\n",
            ("7", 0),
            &["`id` must be a string, found an integer"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, command: [rm]}\n",
            ("[rm]", 0),
            &["`command` must be a string, found a list"],
        ),
        (
            "version: 1\nask:\n  - {id: x, command: \"ls\", timeout: 0}\n",
            ("0}", 0),
            &["`timeout` must be at least 1"],
        ),
        (
            "version: 1\nask:\n  - {id: x, command: \"ls\", on_timeout: ask}\n",
            ("ask}", 0),
            &[
                "invalid `on_timeout` value `ask`",
                "expected one of: allow, deny",
            ],
        ),
        (
            "version: 1\njudge:\n  - {id: x, command: \"ls\", cache_ttl: soon}\n",
            ("soon", 0),
            &["`cache_ttl` must be an integer"],
        ),
        (
            "version: 1\njudge:\n  - {id: x, command: \"ls\", fail_closed: 1}\n",
            ("1}", 0),
            &["`fail_closed` must be true or false"],
        ),
        (
            "version: 1\nallow: \"ls\"\n",
            ("\"ls\"", 0),
            &["`allow` must be a list of rules, found a string"],
        ),
        (
            "version: 1\nallow:\n  - 5\n",
            ("5", 0),
            &["a rule is a command glob string or a mapping, found an integer"],
        ),
        (
            "version: 1\nprofiles: lang/go\n",
            ("lang/go", 0),
            &["`profiles` must be a list of strings"],
        ),
        (
            "version: 2\n",
            ("2", 0),
            &["unsupported `version`", "version 1"],
        ),
        (
            "version: 1\nsettings:\n  ask_mode: popup\n",
            ("popup", 0),
            &[
                "invalid `ask_mode` value `popup`",
                "expected one of: terminal, ui",
            ],
        ),
    ]);
}

#[test]
fn invalid_regexes_including_ones_that_would_not_run_in_linear_time() {
    check_all(&[
        (
            "version: 1\ndeny:\n  - {id: x, when: {http.url: {pattern: \"(unclosed\"}}}\n",
            ("\"(unclosed\"", 0),
            &["invalid regex `(unclosed`", "unclosed group"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {http.url: {pattern: \"(?=admin)\"}}}\n",
            ("\"(?=admin)\"", 0),
            &["invalid regex", "look-around"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {http.url: {pattern: \"(a)\\\\1\"}}}\n",
            ("\"(a)", 0),
            &["invalid regex"],
        ),
    ]);
}

#[test]
fn unknown_fields_of_known_facets_and_bad_paths() {
    check_all(&[
        (
            "version: 1\ndeny:\n  - {id: x, when: {http.methd: GET}}\n",
            ("http.methd", 0),
            &[
                "unknown field `methd` of facet `http`",
                "expected one of: method, url",
            ],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {facets.sql.verbs: DROP}}\n",
            ("facets.sql.verbs", 0),
            &["unknown field `verbs` of facet `sql`"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {any: [{shell.comand: ls}]}}\n",
            ("shell.comand", 0),
            &["unknown field `comand` of facet `shell`"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {methd: GET}}\n",
            ("methd", 0),
            &["unknown field `methd`", "top-level field"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {http.method.name: GET}}\n",
            ("http.method.name", 0),
            &["`http.method` has no fields below it"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {session.user: bob}}\n",
            ("session.user", 0),
            &["unknown session field"],
        ),
    ]);
    // Plugin facets accept any field.
    load("version: 1\ndeny:\n  - {id: x, when: {slack.channel: \"#ops\"}}\n");
}

#[test]
fn invalid_default_value() {
    check_all(&[
        (
            "version: 1\ndefault: maybe\n",
            ("maybe", 0),
            &[
                "invalid `default` value `maybe`",
                "expected one of: allow, deny, ask, deny_writes",
            ],
        ),
        (
            "version: 1\ndefault: deny-writes\n",
            ("deny-writes", 0),
            &["did you mean `deny_writes`?"],
        ),
        (
            "version: 1\ndefault: [deny]\n",
            ("[deny]", 0),
            &["`default` must be a string, found a list"],
        ),
    ]);
}

#[test]
fn invalid_yaml_syntax() {
    let text = "version: 1\nallow: [\"ls\"\n";
    let d = load_err1(text);
    assert_eq!(d.file, FILE);
    assert!(d.message.starts_with("invalid YAML: "), "{d}");
    assert!(d.line >= 2 && d.col >= 1, "{d}");

    let text = "version: 1\nallow:\n  - \"ls\"\n   - \"cat *\"\n";
    let d = load_err1(text);
    assert!(d.message.starts_with("invalid YAML: "), "{d}");
    assert!(d.line >= 3, "{d}");

    // Duplicate keys are errors too, not last-one-wins.
    let text = "version: 1\ndefault: allow\ndefault: deny\n";
    let d = load_err1(text);
    assert!(d.message.contains("duplicate"), "{d}");
    assert_eq!(d.line, 3, "{d}");

    // A policy is a mapping.
    let text = "- allow\n- deny\n";
    let d = load_err1(text);
    assert_diag(
        &d,
        FILE,
        (1, 1),
        &["the policy file must be a mapping, found a list"],
    );
}

#[test]
fn rules_that_match_nothing() {
    check_all(&[
        (
            "version: 1\ndeny:\n  - id: x\n    description: \"no match fields\"\n",
            ("id: x", 0),
            &[
                "this rule matches nothing",
                "command, binary, args_contain, working_dir, when",
            ],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {}}\n",
            ("{}", 0),
            &["empty matcher"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {any: []}}\n",
            ("[]", 0),
            &["`any` needs at least one matcher"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {http.method: {}}}\n",
            ("{}}", 0),
            &["empty operator mapping"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: \"http.method == GET\"}\n",
            ("\"http.method", 0),
            &["expected a matcher mapping", "found a string"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {all: {http.method: GET}}}\n",
            ("{http.method: GET}", 0),
            &["`all` takes a list of matchers, found a mapping"],
        ),
    ]);
}

#[test]
fn override_errors() {
    let team = "version: 1\nask:\n  - {id: team:ask-curl, command: \"curl *\"}\ndeny:\n  - {id: team:no-push, command: \"git push *\", description: \"never push\"}\n";
    let files = [profile_file("/p/team.yaml", team)];
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "version: 1\nprofiles: [./team.yaml]\nallow:\n  - {override: team:no-push, command: \"git push origin dev\"}\n",
            "team:no-push,",
            &[
                "`override: team:no-push`",
                "deny rules cannot be overridden",
                "/p/team.yaml:5:5",
            ],
        ),
        (
            "version: 1\nprofiles: [./team.yaml]\nallow:\n  - {override: team:ask-crul, command: \"curl x\"}\n",
            "team:ask-crul",
            &[
                "`override: team:ask-crul`",
                "no rule with that id in a lower layer",
                "did you mean `team:ask-curl`?",
            ],
        ),
        (
            "version: 1\nallow:\n  - {override: nothing-here, command: \"x\"}\n",
            "nothing-here",
            &["no rule with that id in a lower layer"],
        ),
        (
            // the same layer cannot be overridden
            "version: 1\nask:\n  - {id: mine, command: \"x *\"}\nallow:\n  - {override: mine, command: \"x y\"}\n",
            "mine,",
            &["`override: mine`", "same or a higher layer"],
        ),
        (
            "version: 1\nallow:\n  - {override: \"builtin:protect-policy\"}\n",
            "\"builtin:protect-policy\"",
            &["cannot be overridden"],
        ),
    ];
    for (text, needle, fragments) in cases {
        let d = errors_of(&with_profiles(project(text), &files));
        assert_eq!(d.len(), 1, "{text}\n{}", show(&d));
        // the `override:` value (the last occurrence of the needle)
        let nth = text.matches(needle).count() - 1;
        assert_diag(&d[0], FILE, pos(text, needle, nth), fragments);
    }
}

#[test]
fn duplicate_rule_ids() {
    let text =
        "version: 1\nallow:\n  - {id: a, command: \"a\"}\nask:\n  - {id: a, command: \"b\"}\n";
    let d = load_err1(text);
    assert_diag(
        &d,
        FILE,
        pos(text, "{id: a, command: \"b\"}", 0),
        &[
            "duplicate rule id `a`",
            "first defined at /p/aileron.yaml:3:5",
        ],
    );
    // Across layers, without `override`.
    let d = errors_of(&with_profiles(
        project(
            "version: 1\nprofiles: [lang/go]\nallow:\n  - {id: \"lang/go:test\", command: \"go test -short *\"}\n",
        ),
        &[],
    ));
    assert_eq!(d.len(), 1, "{}", show(&d));
    assert!(
        d[0].message.contains("duplicate rule id `lang/go:test`"),
        "{}",
        d[0]
    );
    assert!(d[0].message.contains("override: lang/go:test"), "{}", d[0]);
    // Replacing a lower layer's rule under the same id is what `override` is for.
    let p = load(
        "version: 1\nprofiles: [lang/go]\nallow:\n  - {id: \"lang/go:test\", override: \"lang/go:test\", command: \"go test -short *\"}\n",
    );
    assert_eq!(
        decide(&p, &shell("go test -short ./...")).rule.as_deref(),
        Some("lang/go:test")
    );
    assert_eq!(outcome(&decide(&p, &shell("go test ./..."))), ("ask", None));
}

#[test]
fn bad_time_and_rate_arguments() {
    check_all(&[
        (
            "version: 1\ndeny:\n  - {id: x, when: {timestamp: {time: {days: [mon, funday]}}}}\n",
            ("funday", 0),
            &["expected a weekday, one of: mon, tue, wed, thu, fri, sat, sun"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {timestamp: {time: {from: \"25:00\"}}}}\n",
            ("\"25:00\"", 0),
            &["expected a time of day as \"HH:MM\""],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {timestamp: {time: {to: \"9am\"}}}}\n",
            ("\"9am\"", 0),
            &["HH:MM"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {timestamp: {time: {tz: Mars/Olympus}}}}\n",
            ("Mars/Olympus", 0),
            &["unknown time zone `Mars/Olympus`"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {timestamp: {time: {weekdays: [mon]}}}}\n",
            ("weekdays", 0),
            &["unknown key `weekdays` in `time`", "days, from, to, tz"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {timestamp: {time: \"9-17\"}}}\n",
            ("\"9-17\"", 0),
            &["`time` takes a mapping"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {timestamp: {time: {days: mon}}}}\n",
            ("mon}", 0),
            &["`days` takes a list of weekdays"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {type: x, rate: {more_than: 3}}}\n",
            ("{more_than: 3}", 0),
            &["`rate` needs both `more_than` and `seconds`"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {type: x, rate: {more_than: 3, seconds: 0}}}\n",
            ("{more_than: 3, seconds: 0}", 0),
            &["`rate.seconds` must be at least 1"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {type: x, rate: {more_than: 3, seconds: 60, per: 60}}}\n",
            ("per", 0),
            &["unknown key `per` in `rate`", "more_than, seconds"],
        ),
        (
            "version: 1\ndeny:\n  - {id: x, when: {type: x, rate: 10}}\n",
            ("10", 0),
            &["`rate` takes a mapping"],
        ),
    ]);
}

#[test]
fn negative_rate_count_is_reported_where_it_is_written() {
    let text =
        "version: 1\ndeny:\n  - {id: x, when: {type: x, rate: {more_than: -1, seconds: 60}}}\n";
    let d = load_err(text);
    assert_diag(
        &d[0],
        FILE,
        pos(text, "-1", 0),
        &["`more_than` takes a non-negative integer"],
    );
}

#[test]
fn negative_rate_count_is_one_error() {
    let text =
        "version: 1\ndeny:\n  - {id: x, when: {type: x, rate: {more_than: -1, seconds: 60}}}\n";
    let d = load_err1(text);
    assert_diag(
        &d,
        FILE,
        pos(text, "-1", 0),
        &["`more_than` takes a non-negative integer"],
    );
}

#[test]
fn bad_test_entries() {
    let text = "version: 1\ntests:\n  - {command: ls}\n  - {command: ls, action: {type: x}, expect: allow}\n  - {action: {type: x, typo: 1}, expect: allow}\n  - {command: ls, expect: maybe}\n  - {command: ls, expect: allow, wat: 1}\n  - {expect: allow}\n";
    let d = load_err(text);
    assert_eq!(d.len(), 6, "{}", show(&d));
    assert_diag(
        &d[0],
        FILE,
        pos(text, "{command: ls}", 0),
        &["a test needs `expect`"],
    );
    assert_diag(
        &d[1],
        FILE,
        pos(text, "{command: ls, action", 0),
        &["exactly one of `command`", "or `action`"],
    );
    assert_diag(
        &d[2],
        FILE,
        pos(text, "{type: x, typo", 0),
        &["invalid action", "unknown field `typo`"],
    );
    assert_diag(
        &d[3],
        FILE,
        pos(text, "maybe", 0),
        &["invalid `expect` value `maybe`", "allow, deny, ask, judge"],
    );
    assert_diag(
        &d[4],
        FILE,
        pos(text, "wat", 0),
        &["unknown key `wat` in a test"],
    );
    assert_diag(
        &d[5],
        FILE,
        pos(text, "{expect: allow}", 0),
        &["exactly one of `command`"],
    );

    let text = "version: 1\ntests: {command: ls, expect: allow}\n";
    let d = load_err1(text);
    assert_diag(
        &d,
        FILE,
        pos(text, "{command", 0),
        &["`tests` must be a list of examples"],
    );

    let text = "version: 1\ntests:\n  - action: {type: x, sensitivity: huge}\n    expect: deny\n";
    let d = load_err1(text);
    assert_diag(
        &d,
        FILE,
        pos(text, "{type", 0),
        &["invalid action", "unknown sensitivity `huge`"],
    );
}

#[test]
fn every_problem_is_reported_not_just_the_first() {
    let text = "version: 1\ndefault: maybe\nallow:\n  - {id: a, comand: x}\ndeny:\n  - {id: b, when: {http.methd: GET, http.url: {glob: 1}}}\n";
    let d = load_err(text);
    let places: Vec<(u32, u32)> = d.iter().map(|d| (d.line, d.col)).collect();
    assert_eq!(
        places,
        [
            pos(text, "maybe", 0),
            pos(text, "comand", 0),
            pos(text, "http.methd", 0),
            pos(text, "1}", 0),
        ],
        "{}",
        show(&d)
    );
    // Errors of several sources are collected too.
    let d = errors_of(&[
        project("version: 1\ndefault: maybe\n"),
        user("version: 1\nalow: []\n"),
    ]);
    let files: Vec<&str> = d.iter().map(|d| d.file.as_str()).collect();
    assert_eq!(files, [FILE, USER_FILE]);
}

#[test]
fn display_shows_the_place_the_line_and_a_caret() {
    let text =
        "version: 1\ndeny:\n  - id: no-delete\n    when: {http.method: {equal: \"DELETE\"}}\n";
    let d = load_err1(text);
    let shown = d.to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 3, "{shown}");
    assert!(
        lines[0].starts_with("/p/aileron.yaml:4:26: error: unknown operator `equal`"),
        "{shown}"
    );
    assert_eq!(lines[1], "        when: {http.method: {equal: \"DELETE\"}}");
    assert_eq!(lines[2], format!("    {}^", " ".repeat(25)));
    assert_eq!(d.headline(), lines[0]);
    // The caret sits under the column in the quoted line.
    let caret = lines[2].find('^').unwrap();
    assert_eq!(&lines[1][caret..caret + 5], "equal");
}

#[test]
fn display_of_layer_errors_also_quotes_the_line() {
    let team = "version: 1\ndeny:\n  - {id: team:no-push, command: \"git push *\"}\n";
    let text = "version: 1\nprofiles: [./team.yaml]\nallow:\n  - {override: team:no-push, command: \"git push origin dev\"}\n";
    let d = errors_of(&with_profiles(
        project(text),
        &[profile_file("/p/team.yaml", team)],
    ));
    let shown = d[0].to_string();
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 3, "{shown}");
    assert_eq!(
        lines[1],
        "      - {override: team:no-push, command: \"git push origin dev\"}"
    );
    let caret = lines[2].find('^').unwrap();
    assert_eq!(&lines[1][caret..caret + 12], "team:no-push");

    let text = "version: 1\nallow:\n  - {id: a, command: \"a\"}\n  - {id: a, command: \"b\"}\n";
    let shown = load_err1(text).to_string();
    assert_eq!(shown.lines().count(), 3, "{shown}");
}

fn api_rule(text: &str) -> Result<aileron_engine::Rule, Vec<Diagnostic>> {
    parse_rule(&source("rule.json", text, Layer::Database, "/"), HOME)
}

#[test]
fn parse_rule_gives_the_same_messages_as_a_file() {
    // (rule body shared by both forms, the file's bucket)
    let bodies: &[(&str, &str)] = &[
        ("when: {http.method: {equal: DELETE}}", "deny"),
        ("when: {http.methd: DELETE}", "deny"),
        ("when: {http.url: {pattern: \"(x\"}}", "deny"),
        ("when: {http.method: {in: GET}}", "allow"),
        ("comand: \"rm *\"", "deny"),
        ("command: \"ls\", approver: dashboard", "allow"),
        ("description: \"nothing to match\"", "deny"),
    ];
    for (body, bucket) in bodies {
        let file_text = format!("version: 1\n{bucket}:\n  - {{id: r, {body}}}\n");
        let file_msgs: Vec<String> = load_err(&file_text)
            .into_iter()
            .map(|d| d.message)
            .collect();
        let api_text = format!("{{decision: {bucket}, id: r, {body}}}");
        let api_msgs: Vec<String> = api_rule(&api_text)
            .expect_err(&api_text)
            .into_iter()
            .map(|d| d.message)
            .collect();
        assert_eq!(api_msgs, file_msgs, "{body}");
    }
    // The API form as JSON, with positions in that text.
    let json = r#"{"decision": "deny", "when": {"http.method": {"equal": "DELETE"}}}"#;
    let d = api_rule(json).unwrap_err();
    assert_eq!(d.len(), 1);
    assert_diag(
        &d[0],
        "rule.json",
        pos(json, "\"equal\"", 0),
        &["unknown operator `equal`"],
    );

    // And what only the API form needs.
    let d = api_rule("{when: {http.method: GET}}").unwrap_err();
    assert!(d[0].message.contains("a rule needs `decision`"), "{}", d[0]);
    let d = api_rule("{decision: maybe, when: {http.method: GET}}").unwrap_err();
    assert_diag(
        &d[0],
        "rule.json",
        (1, 12),
        &["invalid `decision` value `maybe`"],
    );
    let d = api_rule("[1, 2]").unwrap_err();
    assert!(d[0].message.contains("expected a rule mapping"), "{}", d[0]);

    // A valid one.
    let r = api_rule(
        "{decision: ask, id: r1, when: {http.method: DELETE}, approver: dashboard, timeout: 60}",
    )
    .unwrap();
    assert_eq!(r.id, "r1");
    assert_eq!(r.priority, 100);
    assert_eq!(r.layer, Layer::Database);
}

#[test]
fn a_rule_that_can_never_match_is_a_load_error() {
    // `command:` makes the rule about `shell.exec`; `when` says `http.request`.
    let text = "version: 1\ndeny:\n  - {id: x, command: \"curl *\", when: {type: http.request}}\n";
    let d = load_err(text);
    assert_eq!(d.len(), 1, "{}", show(&d));
    assert_eq!(d[0].line, 3);
}
