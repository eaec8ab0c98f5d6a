//! DNS in the box (issue 30): under `aileron launch` at its default
//! enforcement, the programs of the agent's tree resolve names only
//! through the session's proxy, by policy. A Python program and a Node
//! program as the launched agent look up a name the policy allows and one
//! it denies, through the C library (`getaddrinfo`, from Node's thread
//! pool too) and through c-ares (`dns.resolve4`, which reads
//! `/etc/resolv.conf` itself): the allowed name gets the host's own
//! addresses, the denied one nothing, and each lookup has its audit line.
//! UDP goes nowhere else: a datagram to the host's `127.0.0.1` is not
//! heard, and a query sent straight to a public resolver or to the host's
//! own nameserver fails at once.
//!
//! The names are real ones the host resolves through DNS (not its
//! `/etc/hosts`, which the box reads as the host does): the test is
//! skipped when the host cannot resolve them, except in CI.

#![cfg(target_os = "linux")]

mod support;

use serde_json::Value;
use std::net::{ToSocketAddrs, UdpSocket};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{Project, run_no_tty, spawn_lines, text};

/// A name the policy lets resolve, and one it denies.
const ALLOWED: &str = "deb.debian.org";
const DENIED: &str = "registry.npmjs.org";
/// The rule that denies it.
const DENY_RULE: &str = "no-npm-names";

/// Looks up argv[1] and argv[2] with `getaddrinfo`, sends a datagram to
/// the host's `127.0.0.1:argv[3]`, and a DNS query for argv[1] straight to
/// 8.8.8.8 and to the host's nameserver argv[4]; prints one JSON object.
const PYTHON: &str = r#"
import errno, json, socket, sys
allowed, denied, port, nameserver = sys.argv[1:5]
out = {}
def attempt(name, f):
    try:
        out[name] = f()
    except socket.gaierror as e:
        out[name] = "FAIL " + str(e)
    except OSError as e:
        out[name] = "FAIL " + errno.errorcode.get(e.errno, str(e.errno))
def lookup(name):
    return sorted({a[4][0] for a in socket.getaddrinfo(name, 443)})
def query(name):
    q = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00"
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\x00\x00\x01\x00\x01"
def send(to, data):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(data, to)
    return "sent"
attempt("allowed", lambda: lookup(allowed))
attempt("denied", lambda: lookup(denied))
attempt("udp-host", lambda: send(("127.0.0.1", int(port)), b"leak"))
attempt("udp-public", lambda: send(("8.8.8.8", 53), query(allowed)))
attempt("udp-nameserver", lambda: send((nameserver, 53), query(allowed)))
out["resolv.conf"] = open("/etc/resolv.conf").read()
print(json.dumps(out), flush=True)
"#;

/// Looks up argv[1] and argv[2] with `dns.lookup` (the C library, on
/// libuv's thread pool) and `dns.resolve4` (c-ares); prints one JSON object.
const NODE: &str = r#"
const dns = require("dns");
const [allowed, denied] = process.argv.slice(1);
const out = {};
const jobs = [];
for (const [label, name] of [["allowed", allowed], ["denied", denied]]) {
  jobs.push(dns.promises.lookup(name, { all: true })
    .then(a => { out["lookup-" + label] = a.map(x => x.address).sort(); })
    .catch(e => { out["lookup-" + label] = "FAIL " + e.code; }));
  jobs.push(dns.promises.resolve4(name)
    .then(a => { out["resolve4-" + label] = a.sort(); })
    .catch(e => { out["resolve4-" + label] = "FAIL " + e.code; }));
}
Promise.all(jobs).then(() => console.log(JSON.stringify(out)));
"#;

/// The addresses the host resolves `name` to, of the family `v4` says.
fn host_addresses(name: &str, v4: bool) -> Vec<String> {
    let mut a: Vec<String> = (name, 443)
        .to_socket_addrs()
        .map(|it| {
            it.filter(|s| s.is_ipv4() == v4)
                .map(|s| s.ip().to_string())
                .collect()
        })
        .unwrap_or_default();
    a.sort();
    a.dedup();
    a
}

/// Whether the host resolves both names through DNS (the box reads the
/// host's `/etc/hosts` too: a name there would resolve without the proxy).
fn names_resolve_on_the_host() -> bool {
    let hosts = std::fs::read_to_string("/etc/hosts").unwrap_or_default();
    let ok = [ALLOWED, DENIED].iter().all(|n| {
        !host_addresses(n, true).is_empty()
            && !hosts.split_whitespace().any(|w| w.eq_ignore_ascii_case(n))
    });
    support::available(
        &format!("DNS resolution of {ALLOWED} and {DENIED} on this host"),
        ok,
    )
}

/// The host's nameserver, as its `/etc/resolv.conf` names it.
fn host_nameserver() -> String {
    std::fs::read_to_string("/etc/resolv.conf")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("nameserver").map(|s| s.trim().to_owned()))
        .filter(|ns| ns.parse::<std::net::Ipv4Addr>().is_ok())
        .unwrap_or_else(|| "127.0.0.53".into())
}

/// Whether `program --version` runs.
fn runs(program: &str) -> bool {
    let ok = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    support::available(program, ok)
}

/// A UDP socket on the host's loopback, and what reached it.
struct Listener {
    port: u16,
    heard: Arc<Mutex<Vec<String>>>,
}

impl Listener {
    fn new() -> Listener {
        let s = UdpSocket::bind("127.0.0.1:0").expect("a UDP socket on the host");
        let port = s.local_addr().unwrap().port();
        let heard = Arc::new(Mutex::new(Vec::new()));
        let h = Arc::clone(&heard);
        std::thread::spawn(move || {
            let mut buf = [0u8; 512];
            while let Ok(n) = s.recv(&mut buf) {
                h.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&buf[..n]).into());
            }
        });
        Listener { port, heard }
    }

    /// What it heard, after a moment for a datagram on its way.
    fn heard(&self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(200));
        self.heard.lock().unwrap().clone()
    }
}

/// `aileron launch ENFORCE -- ARGV...` to its end; its last line as JSON.
fn launch(p: &Project, enforce: &[&str], argv: &[&str]) -> Value {
    let mut args = vec!["launch"];
    args.extend_from_slice(enforce);
    args.push("--");
    args.extend_from_slice(argv);
    let out = run_no_tty(&mut p.aileron(&args));
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{argv:?}: {:?}\n{stdout}\n{}",
        out.status,
        text(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", text(&out.stderr)))
}

/// The audit log's DNS lookups: (summary, decision, rule).
fn lookups(p: &Project) -> Vec<(String, String, String)> {
    let mut got: Vec<(String, String, String)> = p
        .audit()
        .into_iter()
        .filter(|l| l["action"]["facets"]["dns"].is_object())
        .map(|l| {
            let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (s(&l["action"]["summary"]), s(&l["decision"]), s(&l["rule"]))
        })
        .collect();
    got.sort();
    got.dedup();
    got
}

fn policy() -> String {
    format!(
        "version: 1\ndefault: allow\ndeny:\n  - id: {DENY_RULE}\n    when: {{type: http.request, http.host: {DENIED}}}\n"
    )
}

#[test]
fn a_python_program_resolves_only_what_the_policy_allows_and_sends_no_udp_elsewhere() {
    if !names_resolve_on_the_host() || !runs("/usr/bin/python3") {
        return;
    }
    let p = Project::new(&policy());
    let host_conf = std::fs::read("/etc/resolv.conf").unwrap_or_default();
    let nameserver = host_nameserver();
    let udp = Listener::new();
    let port = udp.port.to_string();
    let argv = [
        "/usr/bin/python3",
        "-c",
        PYTHON,
        ALLOWED,
        DENIED,
        &port,
        &nameserver,
    ];

    // Without the box the datagram reaches the host, and both names resolve.
    let open = launch(&p, &["--enforce", "none"], &argv);
    assert_eq!(udp.heard(), ["leak"], "{open:#}");
    assert!(open["denied"].is_array(), "{open:#}");
    udp.heard.lock().unwrap().clear();

    let got = launch(&p, &[], &argv);
    assert_eq!(
        got["allowed"],
        serde_json::json!(
            host_addresses(ALLOWED, true)
                .into_iter()
                .chain(host_addresses(ALLOWED, false))
                .collect::<std::collections::BTreeSet<_>>()
        ),
        "{got:#}"
    );
    let denied = got["denied"].as_str().unwrap_or_default();
    assert!(denied.starts_with("FAIL "), "{got:#}");
    // The box's own loopback: sent, and nobody on the host hears it.
    assert_eq!(got["udp-host"], "sent", "{got:#}");
    assert_eq!(udp.heard(), Vec::<String>::new(), "{got:#}");
    for direct in ["udp-public", "udp-nameserver"] {
        assert_eq!(got[direct], "FAIL ENETUNREACH", "{direct}: {got:#}");
    }
    let conf = got["resolv.conf"].as_str().unwrap_or_default();
    assert!(
        conf.lines()
            .filter(|l| l.starts_with("nameserver"))
            .eq(["nameserver 127.0.0.1"]),
        "{conf}"
    );
    // The host's own file is untouched.
    assert_eq!(
        std::fs::read("/etc/resolv.conf").unwrap_or_default(),
        host_conf
    );

    let seen = lookups(&p);
    for kind in ["A", "AAAA"] {
        let allow = (
            format!("DNS {kind} {ALLOWED}"),
            "allow".into(),
            String::new(),
        );
        let deny = (
            format!("DNS {kind} {DENIED}"),
            "deny".into(),
            DENY_RULE.into(),
        );
        assert!(seen.contains(&allow) && seen.contains(&deny), "{seen:#?}");
    }
}

#[test]
fn node_resolves_only_what_the_policy_allows_through_the_c_library_and_c_ares() {
    if !names_resolve_on_the_host() || !runs("node") {
        return;
    }
    let p = Project::new(&policy());
    let got = launch(&p, &[], &["node", "-e", NODE, ALLOWED, DENIED]);
    let mut v4 = host_addresses(ALLOWED, true);
    v4.sort();
    assert_eq!(got["resolve4-allowed"], serde_json::json!(v4), "{got:#}");
    let looked_up: Vec<String> = got["lookup-allowed"]
        .as_array()
        .unwrap_or_else(|| panic!("{got:#}"))
        .iter()
        .filter_map(|a| a.as_str().map(str::to_owned))
        .collect();
    assert!(v4.iter().all(|a| looked_up.contains(a)), "{got:#}");
    // getaddrinfo's answer to REFUSED, and c-ares's.
    assert_eq!(got["lookup-denied"], "FAIL EAI_AGAIN", "{got:#}");
    assert_eq!(got["resolve4-denied"], "FAIL EREFUSED", "{got:#}");
    let seen = lookups(&p);
    let deny = (
        format!("DNS A {DENIED}"),
        "deny".to_owned(),
        DENY_RULE.to_owned(),
    );
    assert!(seen.contains(&deny), "{seen:#?}");
}

/// Looks up argv[1], says `ready`, waits for the file argv[2], looks it
/// up again and sends a query for it to 8.8.8.8; prints one JSON object.
const AFTER_THE_PROXY: &str = r#"
import errno, json, os, socket, sys, time
name, go = sys.argv[1:3]
out = {}
def attempt(label, f):
    try:
        out[label] = f()
    except socket.gaierror as e:
        out[label] = "FAIL " + str(e)
    except OSError as e:
        out[label] = "FAIL " + errno.errorcode.get(e.errno, str(e.errno))
lookup = lambda: sorted({a[4][0] for a in socket.getaddrinfo(name, 443)})
attempt("before", lookup)
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.01)
attempt("after", lookup)
attempt("udp-public", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"q", ("8.8.8.8", 53)) and "sent")
print(json.dumps(out), flush=True)
"#;

/// The `aileron-server proxy` process among the children of `launch`.
fn proxy_of(launch: u32) -> Option<u32> {
    let children = std::fs::read_to_string(format!("/proc/{launch}/task/{launch}/children"));
    children
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .find(|pid: &u32| {
            let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let argv: Vec<&[u8]> = argv.split(|b| *b == 0).collect();
            argv.first().is_some_and(|a| a.ends_with(b"aileron-server"))
                && argv.contains(&&b"proxy"[..])
        })
}

/// The proxy killed mid-session takes the box's DNS with it: a name that
/// resolved before resolves no more, and no other resolver is reached.
#[test]
fn a_killed_proxy_takes_the_box_s_dns_with_it() {
    if !names_resolve_on_the_host() || !runs("/usr/bin/python3") {
        return;
    }
    let p = Project::new(&policy());
    let go = p.path("proxy-killed");
    let go_arg = go.display().to_string();
    let args = [
        "launch",
        "--",
        "/usr/bin/python3",
        "-c",
        AFTER_THE_PROXY,
        ALLOWED,
        &go_arg,
    ];
    let mut cmd = p.aileron(&args);
    let (child, mut lines) = spawn_lines(&mut cmd);
    let ready = lines.by_ref().map_while(Result::ok).any(|l| l == "ready");
    let proxy = proxy_of(child.id());
    if let Some(pid) = proxy {
        // SAFETY: kill(2) of the proxy this test's launch started.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        while std::path::Path::new(&format!("/proc/{pid}")).exists()
            && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z")
        {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    std::fs::write(&go, "").expect("signal the program");
    let last = lines.map_while(Result::ok).last().unwrap_or_default();
    let out = child.wait_with_output().expect("aileron launch ends");
    assert!(
        ready && proxy.is_some(),
        "ready: {ready}, proxy: {proxy:?}\n{}",
        text(&out.stderr)
    );
    let got: Value = serde_json::from_str(&last).unwrap_or_else(|e| panic!("{e}: {last}"));
    assert!(got["before"].is_array(), "{got:#}");
    assert!(
        got["after"]
            .as_str()
            .is_some_and(|a| a.starts_with("FAIL ")),
        "{got:#}"
    );
    assert_eq!(got["udp-public"], "FAIL ENETUNREACH", "{got:#}");
}

/// `aileron launch -- dig ARGS` to its end: what dig printed.
fn dig(p: &Project, args: &[&str]) -> String {
    let mut launch = vec!["launch", "--", "dig", "+time=5", "+tries=1"];
    launch.extend_from_slice(args);
    let out = run_no_tty(&mut p.aileron(&launch));
    text(&out.stdout)
}

/// `dig` in the box asks the proxy over UDP and TCP: an allowed name's
/// addresses, a denied one REFUSED with the rule that denied it (an
/// Extended DNS Error), a TXT lookup REFUSED whatever the name.
#[test]
fn dig_in_the_box_asks_the_proxy_over_udp_and_tcp() {
    let dig_runs = Command::new("dig")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    if !names_resolve_on_the_host() || !support::available("dig", dig_runs) {
        return;
    }
    let p = Project::new(&policy());
    let v4 = host_addresses(ALLOWED, true);
    for transport in ["+notcp", "+tcp"] {
        let got = dig(&p, &[transport, "+short", ALLOWED, "A"]);
        let mut lines: Vec<&str> = got
            .lines()
            .filter(|l| l.parse::<std::net::Ipv4Addr>().is_ok())
            .collect();
        lines.sort();
        assert_eq!(lines, v4, "{transport}: {got}");
    }
    let denied = dig(&p, &[DENIED, "A"]);
    assert!(
        denied.contains("status: REFUSED") && denied.contains(DENY_RULE),
        "{denied}"
    );
    let txt = dig(&p, &[ALLOWED, "TXT"]);
    assert!(
        txt.contains("status: REFUSED") && txt.contains("only A and AAAA"),
        "{txt}"
    );
}
