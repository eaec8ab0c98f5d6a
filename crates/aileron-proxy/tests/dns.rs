//! The proxy's DNS responder (`aileron_proxy::dns`), asked by real
//! clients: `dig` over UDP and TCP, and raw messages over a UDP socket
//! for what no client sends. Each name is decided by a real session
//! (`Decider`, a policy file, its audit log) before anything is resolved.

use aileron_proxy::{Config, Origin, Proxy};
use aileron_session::{Answer, Decider, Prompter, prompt::Question};
use serde_json::Value;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A person who would allow anything, and remembers being asked.
struct Person(Arc<Mutex<Vec<String>>>);

impl Prompter for Person {
    fn ask(&self, q: &Question) -> Answer {
        self.0.lock().unwrap().push(q.line.clone());
        Answer::Once
    }
}

/// A responder answering on `127.0.0.1:PORT` (UDP and TCP) for a session
/// deciding by `policy`.
struct Responder {
    _tmp: tempfile::TempDir,
    project: PathBuf,
    port: u16,
    asked: Arc<Mutex<Vec<String>>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Drop for Responder {
    /// Without waiting for decisions still running (a silent judge).
    fn drop(&mut self) {
        if let Some(r) = self.runtime.take() {
            r.shutdown_background();
        }
    }
}

impl Responder {
    fn start(policy: &str) -> Responder {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        let home = tmp.path().join("home");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(project.join("aileron.yaml"), policy).unwrap();
        let mut load = aileron_config::LoadOptions::from_env(project.clone());
        load.home = home.clone();
        load.data_dir = home.join(".aileron");
        load.user_settings = false;
        load.auto_profiles = false;
        let asked = Arc::new(Mutex::new(Vec::new()));
        let decider = Decider::new(
            aileron_session::Config {
                load,
                cache_dir: None,
                session_id: Some("dns-test".into()),
                agent: None,
                real_shell: "/bin/sh".into(),
                secrets: Vec::new(),
                adapter: "proxy".into(),
            },
            Box::new(Person(Arc::clone(&asked))),
        );
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let proxy = Proxy::new(Config {
            decide: Arc::new(decider),
            origin: Origin {
                cwd: project.to_string_lossy().into_owned(),
                session: Some("dns-test".into()),
                agent: None,
            },
            inspect: None,
            refused: Vec::new(),
            roots: rustls::RootCertStore::empty(),
            agent_apis: Vec::new(),
            usage_log: None,
        })
        .unwrap();
        let port = runtime.block_on(async {
            // The same port for both, as at 53 in the box.
            loop {
                let udp = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
                let port = udp.local_addr().unwrap().port();
                let Ok(tcp) = tokio::net::TcpListener::bind(("127.0.0.1", port)).await else {
                    continue;
                };
                tokio::spawn(Arc::clone(&proxy).serve_dns_udp(udp));
                tokio::spawn(Arc::clone(&proxy).serve_dns_tcp(tcp));
                break port;
            }
        });
        Responder {
            _tmp: tmp,
            project,
            port,
            asked,
            runtime: Some(runtime),
        }
    }

    /// `dig @127.0.0.1 -p PORT ARGS`; None when dig is missing (skipped,
    /// or failed in CI).
    fn dig(&self, args: &[&str]) -> Option<Dig> {
        let out = Command::new("dig")
            .args(["@127.0.0.1", "-p", &self.port.to_string()])
            .args(["+time=10", "+tries=1"])
            .args(args)
            .output();
        let Ok(out) = out else {
            assert!(
                std::env::var_os("CI").is_none_or(|v| v.is_empty()),
                "dig is missing (tests are never skipped in CI)"
            );
            eprintln!("SKIPPED: dig is missing");
            return None;
        };
        Some(Dig(String::from_utf8_lossy(&out.stdout).into_owned()))
    }

    /// The audit log's lines for DNS lookups.
    fn lookups(&self) -> Vec<Value> {
        let path = self.project.join(".aileron/audit.jsonl");
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| {
                v["action"]["summary"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("DNS "))
            })
            .collect()
    }

    /// Sends `msg` over UDP; the reply, if one comes within `wait`.
    fn raw(&self, msg: &[u8], wait: Duration) -> Option<Vec<u8>> {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_read_timeout(Some(wait)).unwrap();
        s.send_to(msg, ("127.0.0.1", self.port)).unwrap();
        let mut buf = [0u8; 4096];
        let (n, _) = s.recv_from(&mut buf).ok()?;
        Some(buf[..n].to_vec())
    }
}

/// What dig printed.
struct Dig(String);

impl Dig {
    fn status(&self) -> &str {
        self.0
            .split("status: ")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .unwrap_or_else(|| panic!("no status in dig's output:\n{}", self.0))
    }

    /// The answer section's records: (TTL, type, data).
    fn answers(&self) -> Vec<(u32, String, String)> {
        let Some(section) = self.0.split(";; ANSWER SECTION:\n").nth(1) else {
            return Vec::new();
        };
        section
            .lines()
            .take_while(|l| !l.trim().is_empty())
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f[1].parse().unwrap(), f[3].to_owned(), f[4].to_owned())
            })
            .collect()
    }
}

/// The addresses the host's resolver gives `name`, of one family.
fn host_addresses(name: &str, v4: bool) -> Vec<String> {
    let mut a: Vec<String> = (name, 0)
        .to_socket_addrs()
        .unwrap()
        .map(|s: SocketAddr| s.ip())
        .filter(|ip: &IpAddr| ip.is_ipv4() == v4)
        .map(|ip| ip.to_string())
        .collect();
    a.sort();
    a.dedup();
    a
}

const ALLOW_ALL: &str = "version: 1\ndefault: allow\n";

#[test]
fn an_allowed_name_is_answered_with_the_host_s_resolution_over_udp_and_tcp() {
    let r = Responder::start(ALLOW_ALL);
    for transport in ["+notcp", "+tcp"] {
        for (kind, v4) in [("A", true), ("AAAA", false)] {
            let Some(got) = r.dig(&[transport, "localhost", kind]) else {
                return;
            };
            assert_eq!(got.status(), "NOERROR", "{}", got.0);
            let mut data: Vec<String> = got
                .answers()
                .into_iter()
                .map(|(ttl, t, d)| {
                    assert_eq!((ttl, t.as_str()), (aileron_proxy::dns::TTL, kind));
                    d
                })
                .collect();
            data.sort();
            assert_eq!(data, host_addresses("localhost", v4), "{}", got.0);
        }
    }
    let lookups = r.lookups();
    assert_eq!(lookups.len(), 4, "{lookups:?}");
    for l in &lookups {
        assert_eq!(l["decision"], "allow", "{l}");
        assert_eq!(l["action"]["facets"]["dns"]["name"], "localhost", "{l}");
        assert_eq!(l["action"]["facets"]["http"]["host"], "localhost", "{l}");
    }
}

/// A denied name is REFUSED, with the rule's reason, though the host
/// resolves it: the answer never comes from the host's resolver. A name
/// that carries data in its labels is decided the same way.
#[test]
fn a_denied_name_is_refused_before_any_resolution() {
    let r = Responder::start(
        "version: 1\ndefault: allow\ndeny:\n  - id: no-local\n    when: {type: http.request, http.host: localhost}\n  - id: no-exfil\n    when: {type: http.request, http.host: {glob: \"*.exfil.example\"}}\n",
    );
    assert!(!host_addresses("localhost", true).is_empty());
    let Some(got) = r.dig(&["localhost", "A"]) else {
        return;
    };
    assert_eq!(got.status(), "REFUSED", "{}", got.0);
    assert!(got.answers().is_empty());
    assert!(
        got.0.contains("EDE: 15 (Blocked)") && got.0.contains("no-local"),
        "{}",
        got.0
    );
    let data = format!("{}.{}.exfil.example", "a".repeat(63), "b".repeat(63));
    let got = r.dig(&["+tcp", &data, "AAAA"]).unwrap();
    assert_eq!(got.status(), "REFUSED", "{}", got.0);
    let lookups = r.lookups();
    let denied: Vec<(&str, &str)> = lookups
        .iter()
        .map(|l| {
            (
                l["decision"].as_str().unwrap(),
                l["action"]["facets"]["dns"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(denied, [("deny", "localhost"), ("deny", data.as_str())]);
}

/// An ask never holds a lookup for a person: it is answered REFUSED at
/// once, and nobody is asked (the person here would have allowed it).
#[test]
fn an_ask_is_refused_at_once_and_nobody_is_asked() {
    let r = Responder::start("version: 1\ndefault: ask\n");
    let Some(got) = r.dig(&["localhost", "A"]) else {
        return;
    };
    assert_eq!(got.status(), "REFUSED", "{}", got.0);
    assert!(r.asked.lock().unwrap().is_empty());
    let lookups = r.lookups();
    assert_eq!(lookups.len(), 1, "{lookups:?}");
    // Recorded as an ask handed back to the one asking, not put to a person.
    assert_eq!(lookups[0]["decision"], "ask", "{}", lookups[0]);
    assert_eq!(lookups[0]["outcome"], "asked-agent", "{}", lookups[0]);
}

/// Only address lookups of class IN leave the box: other types and
/// classes are REFUSED, another opcode NOTIMP, an EDNS version past 0
/// BADVERS; none of them is decided or resolved.
#[test]
fn what_is_not_an_address_lookup_is_answered_as_the_rfc_says() {
    let r = Responder::start(ALLOW_ALL);
    for (args, status) in [
        (&["localhost", "TXT"][..], "REFUSED"),
        (&["localhost", "MX"], "REFUSED"),
        (&["localhost", "ANY"], "REFUSED"),
        (&["-c", "CH", "version.bind", "TXT"], "REFUSED"),
        (&["+opcode=status", "localhost", "A"], "NOTIMP"),
        (
            &["+edns=1", "+noednsnegotiation", "localhost", "A"],
            "BADVERS",
        ),
        (&["localhost", "A", "+subnet=192.0.2.0/24"], "NOERROR"),
    ] {
        let Some(got) = r.dig(args) else {
            return;
        };
        assert_eq!(got.status(), status, "{args:?}: {}", got.0);
    }
    assert_eq!(r.lookups().len(), 1, "only the A lookup is decided");
}

/// A query for `name` (labels as given, case kept) of type A, id 0xBEEF.
fn query(labels: &[&[u8]]) -> Vec<u8> {
    let mut m = vec![0xBE, 0xEF, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    for l in labels {
        m.push(l.len() as u8);
        m.extend_from_slice(l);
    }
    m.extend_from_slice(&[0, 0, 1, 0, 1]);
    m
}

/// Malformed messages get FORMERR (with their id) or nothing, and the
/// responder goes on answering; the question is echoed with its case.
#[test]
fn malformed_messages_get_formerr_or_nothing_and_the_responder_goes_on() {
    let r = Responder::start(ALLOW_ALL);
    let short = Duration::from_millis(300);
    // Less than a header, and a response: nothing.
    assert_eq!(r.raw(&[1, 2, 3], short), None);
    let mut response = query(&[b"localhost"]);
    response[2] |= 0x80;
    assert_eq!(r.raw(&response, short), None);
    let wait = Duration::from_secs(10);
    for bad in [
        {
            let mut m = query(&[b"localhost"]);
            m[5] = 2; // two questions
            m
        },
        {
            let mut m = query(&[b"localhost"]);
            m.truncate(m.len() - 3); // cut in the question
            m
        },
        {
            let mut m = query(&[b"localhost"]);
            m[12] = 0xC0; // a compression pointer
            m
        },
        {
            let mut m = query(&[b"localhost"]);
            m[7] = 1; // an answer in a query
            m
        },
    ] {
        let reply = r.raw(&bad, wait).expect("an answer");
        assert_eq!(&reply[..2], &[0xBE, 0xEF]);
        assert_eq!(reply[2] & 0x80, 0x80, "a response");
        assert_eq!(reply[3] & 0x0F, 1, "FORMERR: {reply:?}");
    }
    let reply = r.raw(&query(&[b"LocalHost"]), wait).expect("an answer");
    assert_eq!(reply[3] & 0x0F, 0, "NOERROR: {reply:?}");
    assert_eq!(&reply[13..22], b"LocalHost");
    assert_eq!(u16::from_be_bytes([reply[6], reply[7]]), 1, "one address");
    assert_eq!(&reply[reply.len() - 4..], &[127, 0, 0, 1]);
    // A label that no host name has: refused, not decided.
    let reply = r
        .raw(&query(&[b"a b", b"example"]), wait)
        .expect("an answer");
    assert_eq!(reply[3] & 0x0F, 5, "REFUSED: {reply:?}");
    assert_eq!(r.lookups().len(), 1);
}

/// A decision slower than a lookup waits (a judge that does not answer)
/// is SERVFAIL after [`aileron_proxy::dns::DECISION_WAIT`], which the
/// client may try again: never an answer the policy did not give.
#[test]
fn a_decision_slower_than_a_lookup_waits_is_servfail() {
    let (port, _held) = silent_judge();
    let r = Responder::start(&judged(port));
    let started = std::time::Instant::now();
    let Some(got) = r.dig(&["localhost", "A"]) else {
        return;
    };
    assert_eq!(got.status(), "SERVFAIL", "{}", got.0);
    assert!(got.answers().is_empty(), "{}", got.0);
    assert!(
        started.elapsed() >= aileron_proxy::dns::DECISION_WAIT,
        "answered before the decision could have come"
    );
}

/// A judge that takes connections and never answers; how many it took.
fn silent_judge() -> (u16, Arc<Mutex<Vec<std::net::TcpStream>>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = Arc::new(Mutex::new(Vec::new()));
    let h = Arc::clone(&held);
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            h.lock().unwrap().push(conn);
        }
    });
    (port, held)
}

/// A policy that sends every name to the judge on `port`.
fn judged(port: u16) -> String {
    format!(
        "version: 1\ndefault: allow\njudges:\n  slow: {{provider: openai, base_url: \"http://127.0.0.1:{port}/v1\", model: m, timeout: 20}}\njudge:\n  - id: judged-names\n    when: {{type: http.request, dns.name: {{exists: true}}}}\n    judge: slow\n    prompt: \"Allow lookups.\"\n"
    )
}

/// A flood of names under a judge that does not answer starts no more
/// decisions than `dns::CONCURRENT`: one answered SERVFAIL still counts
/// until its judge gives up.
#[test]
fn a_flood_of_names_starts_a_bounded_number_of_decisions() {
    let (port, held) = silent_judge();
    let r = Responder::start(&judged(port));
    let names: Vec<String> = (0..aileron_proxy::dns::CONCURRENT * 2)
        .map(|i| format!("n{i}.flood.example"))
        .collect();
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    for name in &names {
        let labels: Vec<&[u8]> = name.split('.').map(str::as_bytes).collect();
        s.send_to(&query(&labels), ("127.0.0.1", r.port)).unwrap();
    }
    // Past two rounds of SERVFAIL: a lookup let go would have let the
    // next ones start theirs.
    std::thread::sleep(aileron_proxy::dns::DECISION_WAIT * 2 + Duration::from_secs(1));
    let judged = held.lock().unwrap().len();
    assert!(judged > 0, "no lookup reached the judge");
    assert!(
        judged <= aileron_proxy::dns::CONCURRENT,
        "{judged} decisions under way at once"
    );
}
