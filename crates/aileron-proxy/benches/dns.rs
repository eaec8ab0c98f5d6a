//! The box's DNS (`aileron_proxy::dns`): what a lookup costs a program in
//! the box, from its query to the proxy's answer, over UDP as the C
//! library sends it: an allowed name (decided by a session with a policy
//! file and its audit log, then resolved by the host's `getaddrinfo`,
//! here from `/etc/hosts`), a denied one (decided only), and beside them
//! `getaddrinfo` of the same name on its own.

use aileron_proxy::{Config, Origin, Proxy};
use aileron_session::{Answer, Decider, Prompter, prompt::Question};
use criterion::{Criterion, criterion_group, criterion_main};
use std::net::{ToSocketAddrs, UdpSocket};
use std::sync::Arc;

const POLICY: &str = "version: 1\ndefault: allow\ndeny:\n  - id: no-example\n    when: {type: http.request, http.host: denied.example}\n";

/// Nobody to ask: the bench's policy asks nothing.
struct Nobody;

impl Prompter for Nobody {
    fn ask(&self, _: &Question) -> Answer {
        Answer::Unavailable("a bench".into())
    }
}

/// A responder on `127.0.0.1:PORT`; the runtime and directory it needs.
fn responder() -> (u16, tokio::runtime::Runtime, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("aileron.yaml"), POLICY).unwrap();
    let mut load = aileron_config::LoadOptions::from_env(project.clone());
    load.home = tmp.path().to_path_buf();
    load.data_dir = tmp.path().join(".aileron");
    load.user_settings = false;
    load.auto_profiles = false;
    let decider = Decider::new(
        aileron_session::Config {
            load,
            cache_dir: None,
            session_id: Some("dns-bench".into()),
            agent: None,
            real_shell: "/bin/sh".into(),
            secrets: Vec::new(),
            adapter: "proxy".into(),
        },
        Box::new(Nobody),
    );
    let proxy = Proxy::new(Config {
        decide: Arc::new(decider),
        origin: Origin {
            cwd: project.to_string_lossy().into_owned(),
            session: Some("dns-bench".into()),
            agent: None,
        },
        inspect: None,
        refused: Vec::new(),
        roots: rustls::RootCertStore::empty(),
        agent_apis: Vec::new(),
        usage_log: None,
    })
    .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let port = runtime.block_on(async {
        let udp = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let port = udp.local_addr().unwrap().port();
        tokio::spawn(proxy.serve_dns_udp(udp));
        port
    });
    (port, runtime, tmp)
}

/// A query of type A for `name`.
fn query(name: &str) -> Vec<u8> {
    let mut m = vec![0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0];
    for label in name.split('.') {
        m.push(label.len() as u8);
        m.extend_from_slice(label.as_bytes());
    }
    m.extend_from_slice(&[0, 0, 1, 0, 1]);
    m
}

fn lookups(c: &mut Criterion) {
    let (port, _runtime, _dir) = responder();
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    client.connect(("127.0.0.1", port)).unwrap();
    let mut buf = [0u8; 512];
    let mut ask = |name: &str, rcode: u8| {
        client.send(&query(name)).unwrap();
        let n = client.recv(&mut buf).unwrap();
        assert_eq!(buf[3] & 0x0F, rcode, "{name}: {:?}", &buf[..n]);
    };
    let mut g = c.benchmark_group("dns");
    g.bench_function("allowed lookup (decided, resolved)", |b| {
        b.iter(|| ask("localhost", 0))
    });
    g.bench_function("denied lookup (decided only)", |b| {
        b.iter(|| ask("denied.example", 5))
    });
    g.bench_function("getaddrinfo alone", |b| {
        b.iter(|| ("localhost", 0).to_socket_addrs().unwrap().count())
    });
    g.finish();
}

criterion_group!(benches, lookups);
criterion_main!(benches);
