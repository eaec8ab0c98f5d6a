//! A program that leaves the box by nature is decided on its own at its
//! exec, never by the allowed command that started it (issue 30). Under
//! `aileron launch` with a policy whose default asks (and no terminal to
//! ask on, so an ask refuses), an allowed `python3` or `make` starts
//! programs: those that stay in the box (`true`, `ls`, a plain copy of
//! `true`) run by the allowed command's give-way; `unshare`, `nsenter`,
//! `ip netns` and a setuid copy of `true` are refused at their exec, and
//! the audit log says they leave the box.

#![cfg(target_os = "linux")]

mod support;

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use support::{Project, run_no_tty, text};

/// `python3*`: the file `python3` runs is `python3.11` or another version.
const POLICY: &str = "version: 1\ndefault: ask\nallow: [\"python3* *\", \"make *\"]\n";

/// The allowed command (`child.py`): runs each `NAME=ARGV...` of its arguments and
/// prints `NAME: ran exit=N` or, when the exec itself is refused,
/// `NAME: refused`.
const CHILD: &str = r#"
import subprocess, sys
for spec in sys.argv[1:]:
    name, _, argv = spec.partition("=")
    try:
        r = subprocess.run(argv.split(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        print("%s: ran exit=%d" % (name, r), flush=True)
    except PermissionError:
        print("%s: refused" % name, flush=True)
"#;

/// The agent: runs the allowed `python3 child.py SPEC...`, then `make`.
const AGENT: &str = r#"
import subprocess, sys
subprocess.run(["/usr/bin/python3", "child.py"] + sys.argv[1:])
r = subprocess.run(["make", "-s"]).returncode
print("make: exit=%d" % r, flush=True)
"#;

/// Each step of a recipe its own line, so that one refused does not stop the next.
const MAKEFILE: &str = "all:\n\
\t-unshare -n true && echo unshare-ran\n\
\t-ls >/dev/null && echo ls-ran\n";

/// `aileron launch [ENFORCE...] -- python3 -c AGENT SPEC...` in the project.
fn launch(p: &Project, enforce: &[&str], specs: &[String]) -> String {
    let mut args = vec!["launch"];
    args.extend_from_slice(enforce);
    args.extend_from_slice(&["--", "/usr/bin/python3", "-c", AGENT]);
    args.extend(specs.iter().map(String::as_str));
    let out = run_no_tty(&mut p.aileron(&args));
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}\n{stdout}\n{}\n{}",
        out.status,
        text(&out.stderr),
        p.audit_text()
    );
    stdout
}

/// The line `NAME: ...` the child printed.
fn result<'a>(stdout: &'a str, name: &str) -> &'a str {
    let prefix = format!("{name}: ");
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no result for {name}:\n{stdout}"))
}

/// The supervisor's refused asks whose line starts with `program`.
fn refusals(p: &Project, program: &str) -> Vec<Value> {
    p.audit()
        .into_iter()
        .filter(|r| {
            r["adapter"] == "supervisor"
                && r["decision"] == "ask"
                && r["outcome"] == "no-terminal"
                && r["action"]["summary"]
                    .as_str()
                    .is_some_and(|s| s.starts_with(program))
        })
        .collect()
}

/// Asserts the audit log refused `program` saying `why` and that it was
/// decided on its own.
fn assert_refused_because(p: &Project, program: &str, why: &str) {
    let found = refusals(p, program);
    assert!(
        found.iter().any(|r| {
            r["reason"]
                .as_str()
                .is_some_and(|w| w.contains(why) && w.contains("decided on its own"))
        }),
        "no refusal of {program} saying {why:?}: {found:#?}\n{}",
        p.audit_text()
    );
}

#[test]
fn programs_that_leave_the_box_are_refused_inside_an_allowed_command() {
    refused_inside_an_allowed_command(&["--enforce", "exec"]);
}

/// The same in the whole box, as `aileron launch` starts by default.
#[test]
fn programs_that_leave_the_box_are_refused_inside_an_allowed_command_in_the_box() {
    refused_inside_an_allowed_command(&[]);
}

fn refused_inside_an_allowed_command(enforce: &[&str]) {
    let p = Project::new(POLICY);
    p.write("Makefile", MAKEFILE);
    p.write("child.py", CHILD);
    let plain = p.path("plain-true");
    let suid = p.path("helper");
    for (file, mode) in [(&plain, 0o755), (&suid, 0o4755)] {
        std::fs::copy("/usr/bin/true", file).expect("copy true");
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
    let specs = [
        "true=true".to_owned(),
        "ls=ls".to_owned(),
        format!("plain={}", plain.display()),
        "unshare=unshare -n true".to_owned(),
        "nsenter=nsenter -t 1 -n true".to_owned(),
        "ip=ip netns list".to_owned(),
        format!("setuid={}", suid.display()),
    ];
    let out = launch(&p, enforce, &specs);
    for stays in ["true", "ls", "plain"] {
        assert_eq!(result(&out, stays), "ran exit=0", "{out}");
    }
    for leaves in ["unshare", "nsenter", "ip", "setuid"] {
        assert_eq!(result(&out, leaves), "refused", "{out}");
    }
    for program in ["unshare", "nsenter", "ip"] {
        assert_refused_because(&p, program, &format!("`{program}` leaves the box"));
    }
    assert_refused_because(&p, "helper", "is set-user-ID");
    // `make`'s recipe: the shell line with `unshare` is refused, the next runs.
    assert!(out.contains("ls-ran"), "{out}");
    assert!(!out.contains("unshare-ran"), "{out}");
    assert_eq!(refusals(&p, "unshare").len(), 2, "{}", p.audit_text());
}
