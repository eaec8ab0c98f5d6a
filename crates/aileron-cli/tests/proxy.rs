//! `aileron proxy` (issue 18) run for real, with real clients (curl,
//! python, node, git, kubectl) against servers the tests start on
//! loopback: what the client gets, whether the upstream saw the request,
//! and the audit line the decision left.

mod support;

use serde_json::{Value, json};
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};
use support::proxy::{
    INSPECT, ProxyProcess, assert_no_tunnel_decided, client, curl, curl_as, fetched, line_for,
    proxy_lines, read_response, status_of,
};
use support::upstream::{Reply, TestCa, Upstream, git_server};
use support::{Project, run, run_no_tty, text};

/// Reads under `/ok` allowed, `/secret` denied by a rule, uploads to
/// `/upload` allowed; anything else denied by the default.
const PLAIN: &str = r#"version: 1
default: deny
allow:
  - id: reads
    when: {type: http.request, http.method: GET, http.path: {glob: "/ok*"}}
  - id: uploads
    when: {type: http.request, http.method: POST, http.path: /upload}
deny:
  - id: no-secret
    description: the secret page
    when: {type: http.request, http.path: /secret}
"#;

/// Asserts that `body` is the proxy's deny, naming `rule`.
fn assert_denied_by(body: &str, rule: &str) {
    assert!(
        body.starts_with("aileron: denied: ")
            && body.trim_end().ends_with(&format!("(rule {rule})")),
        "not a deny naming {rule}: {body:?}"
    );
}

/// Asserts that the proxy's audit line of `summary` says `decision` by
/// `rule` (`None`: by the policy's default); returns the line.
fn assert_line(p: &Project, summary: &str, decision: &str, rule: Option<&str>) -> Value {
    let line = line_for(p, summary);
    assert_eq!(line["adapter"], "proxy", "{line}");
    assert_eq!(line["decision"], decision, "{line}");
    assert_eq!(line["action"]["type"], "http.request", "{line}");
    assert_eq!(line["rule"], json!(rule), "{line}");
    line
}

/// A project with `policy`, a plain upstream, and a proxy for them.
fn plain_setup(policy: &str) -> (Project, Upstream, ProxyProcess) {
    let p = Project::new(policy);
    let up = Upstream::http();
    let proxy = ProxyProcess::start(&p);
    (p, up, proxy)
}

/// Asserts that `up` saw nothing but [`ProxyProcess::assert_serves`]'s checks.
fn assert_only_checks_reached(up: &Upstream) {
    let targets = up.targets();
    assert!(
        targets
            .iter()
            .all(|t| t.starts_with("GET /ok/still-there/")),
        "{targets:?}"
    );
}

/// Kills a child a test started if the test ends before it does.
struct Killed(Option<std::process::Child>);

impl Drop for Killed {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

// ---------------------------------------------------------------------------
// 1. Plain HTTP

#[test]
fn curl_plain_http_allowed_reaches_upstream_denied_does_not() {
    let (p, up, proxy) = plain_setup(PLAIN);

    let ok = curl(&p, &["-x", &proxy.url(), &up.url("/ok")]);
    ok.assert_upstream_answered("/ok");

    let denied = curl(&p, &["-x", &proxy.url(), &up.url("/secret")]);
    assert_eq!(denied.status, 403, "{denied:?}");
    assert_denied_by(&denied.body, "no-secret");

    let other = curl(&p, &["-x", &proxy.url(), &up.url("/elsewhere")]);
    assert_eq!(other.status, 403, "the default denies: {other:?}");

    assert_eq!(
        up.targets(),
        ["GET /ok"],
        "the upstream saw a denied request"
    );
    let line = assert_line(
        &p,
        &format!("GET {}", up.url("/ok")),
        "allow",
        Some("reads"),
    );
    assert_eq!(line["action"]["facets"]["http"]["host"], "127.0.0.1");
    assert_eq!(line["action"]["facets"]["http"]["port"], up.port());
    assert_line(
        &p,
        &format!("GET {}", up.url("/secret")),
        "deny",
        Some("no-secret"),
    );
    assert_line(&p, &format!("GET {}", up.url("/elsewhere")), "deny", None);
}

#[test]
fn a_50_mib_upload_streams_through_whole() {
    const FIRST: usize = 1 << 20;
    const TOTAL: usize = 50 << 20;
    let (p, up, proxy) = plain_setup(PLAIN);
    // `-T -`: curl sends stdin as it reads it (chunked), so a proxy that
    // waited for the whole body would hold the first MiB back.
    let mut cmd = client(&p, "curl");
    cmd.args([
        "-sS",
        "--max-time",
        "60",
        "-w",
        "\n@@curl@@ %{http_code} 0 x",
    ])
    .args(["-x", &proxy.url(), "-X", "POST", "-T", "-", "-H", "Expect:"])
    .arg(up.url("/upload"))
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = Killed(Some(cmd.spawn().expect("spawn curl")));
    let mut stdin = child.0.as_mut().unwrap().stdin.take().expect("stdin");
    let block = vec![b'x'; FIRST];
    stdin.write_all(&block).expect("write the first MiB");
    let deadline = Instant::now() + Duration::from_secs(10);
    while up.body_bytes() == 0 {
        assert!(
            Instant::now() < deadline,
            "the upstream got nothing of the body while the client was still sending it: the proxy buffers"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    for _ in 1..TOTAL / FIRST {
        stdin.write_all(&block).expect("write the body");
    }
    drop(stdin);
    let out = child.0.take().unwrap().wait_with_output().expect("curl");
    let got = fetched(out.stdout, out.stderr, out.status.code().unwrap_or(-1));
    assert_eq!(got.status, 200, "{got:?}");
    assert_eq!(
        got.body,
        format!("upstream: POST /upload ({TOTAL} bytes)\n"),
        "{got:?}"
    );
    let seen = up.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].body_len, TOTAL as u64);
    assert_line(
        &p,
        &format!("POST {}", up.url("/upload")),
        "allow",
        Some("uploads"),
    );
}

// ---------------------------------------------------------------------------
// 2. CONNECT without inspection

#[test]
fn connect_tunnels_to_an_allowed_port_and_refuses_another() {
    let ca = TestCa::new();
    let tls = Upstream::https(&ca);
    let elsewhere = Upstream::https(&ca);
    let p = Project::new(&format!(
        r#"version: 1
default: deny
allow:
  - id: tls-upstream
    when: {{type: http.request, http.host: 127.0.0.1, http.port: {}}}
"#,
        tls.port()
    ));
    let proxy = ProxyProcess::start(&p);
    let cacert = ca.pem.to_str().unwrap();

    let ok = curl(
        &p,
        &["-x", &proxy.url(), "--cacert", cacert, &tls.url("/ok")],
    );
    assert_eq!(ok.connect, 200, "{ok:?}");
    ok.assert_upstream_answered("/ok");
    let line = assert_line(
        &p,
        &format!("CONNECT 127.0.0.1:{}", tls.port()),
        "allow",
        Some("tls-upstream"),
    );
    assert_eq!(line["action"]["facets"]["http"]["tunnel"], true, "{line}");

    let no = curl(
        &p,
        &[
            "-x",
            &proxy.url(),
            "--cacert",
            cacert,
            &elsewhere.url("/ok"),
        ],
    );
    assert_eq!(no.connect, 403, "{no:?}");
    assert!(
        no.stderr.contains("CONNECT tunnel failed, response 403"),
        "{no:?}"
    );
    assert_eq!(
        elsewhere.connections(),
        0,
        "the proxy connected to a denied port"
    );
    assert_line(
        &p,
        &format!("CONNECT 127.0.0.1:{}", elsewhere.port()),
        "deny",
        None,
    );
}

// ---------------------------------------------------------------------------
// 3. TLS inspection

#[test]
fn inspected_tls_is_decided_request_by_request() {
    let ca = TestCa::new();
    let up = Upstream::https(&ca);
    let p = Project::new(INSPECT);
    let proxy = ProxyProcess::start_trusting(&p, &ca.pem);
    let (proxy_url, proxy_ca) = (proxy.url(), proxy.ca_pem());
    // curl OPTIONS through the proxy, trusting its CA, to `path` upstream.
    let get = |options: &[&str], path: &str| {
        let url = up.url(path);
        let mut args = vec!["-x", &proxy_url, "--cacert", proxy_ca.to_str().unwrap()];
        args.extend_from_slice(options);
        args.push(&url);
        curl(&p, &args)
    };

    // HTTP/1.1 and HTTP/2, as ALPN offers them to the proxy's TLS.
    let ok = get(&["--http1.1"], "/ok/one");
    assert_eq!(
        (ok.connect, ok.http_version.as_str()),
        (200, "1.1"),
        "{ok:?}"
    );
    ok.assert_upstream_answered("/ok/one");
    let h2 = get(&["--http2"], "/ok/h2");
    assert_eq!(h2.http_version, "2", "{h2:?}");
    h2.assert_upstream_answered("/ok/h2");
    for path in ["/ok/one", "/ok/h2"] {
        assert_line(&p, &format!("GET {}", up.url(path)), "allow", Some("reads"));
    }

    let denied = get(&[], "/secret");
    assert_eq!((denied.connect, denied.status), (200, 403), "{denied:?}");
    assert_denied_by(&denied.body, "no-secret");
    assert_line(
        &p,
        &format!("GET {}", up.url("/secret")),
        "deny",
        Some("no-secret"),
    );

    assert_eq!(up.targets(), ["GET /ok/one", "GET /ok/h2"]);
    assert_no_tunnel_decided(&p);
}

#[test]
fn the_proxy_ca_is_private_and_kept_across_runs() {
    use std::os::unix::fs::PermissionsExt;
    let ca = TestCa::new();
    let up = Upstream::https(&ca);
    let p = Project::new(INSPECT);
    let first = ProxyProcess::start_trusting(&p, &ca.pem);
    let key = first.ca_key();
    let mode = std::fs::metadata(&key)
        .expect("the CA key")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{} is {mode:o}", key.display());
    let cert = std::fs::read(first.ca_pem()).expect("the CA certificate");
    let key_bytes = std::fs::read(&key).unwrap();
    drop(first);

    let second = ProxyProcess::start_trusting(&p, &ca.pem);
    assert_eq!(std::fs::read(second.ca_pem()).unwrap(), cert, "a new CA");
    assert_eq!(std::fs::read(&key).unwrap(), key_bytes, "a new CA key");
    // A client that trusted the first run's CA trusts the second's hosts.
    let ok = curl(
        &p,
        &[
            "-x",
            &second.url(),
            "--cacert",
            second.ca_pem().to_str().unwrap(),
            &up.url("/ok"),
        ],
    );
    assert_eq!(ok.status, 200, "{ok:?}");
}

#[test]
fn an_upstream_certificate_the_proxy_does_not_trust_is_a_502() {
    let ca = TestCa::new();
    let up = Upstream::https(&ca);
    let p = Project::new(INSPECT);
    // The system's roots only: the test CA is nobody's.
    let proxy = ProxyProcess::start(&p);
    let cacert = proxy.ca_pem();
    let got = curl(
        &p,
        &[
            "-x",
            &proxy.url(),
            "--cacert",
            cacert.to_str().unwrap(),
            &up.url("/ok"),
        ],
    );
    assert_eq!((got.connect, got.status), (200, 502), "{got:?}");
    assert!(got.body.contains("invalid peer certificate"), "{got:?}");
    assert!(up.seen().is_empty(), "forwarded: {:?}", up.targets());
}

// ---------------------------------------------------------------------------
// 4. Other clients: python, node

/// `python3 -c SCRIPT URLS` through the proxy by its variables.
fn python(p: &Project, proxy: &ProxyProcess, script: &str, urls: &[String]) -> String {
    let mut cmd = client(p, "python3");
    cmd.arg("-c")
        .arg(script)
        .args(urls)
        .env("HTTP_PROXY", proxy.url())
        .env("http_proxy", proxy.url());
    let out = run(&mut cmd, b"");
    assert!(out.status.success(), "python: {}", text(&out.stderr));
    text(&out.stdout)
}

const URLLIB: &str = r#"
import sys, urllib.request, urllib.error
for url in sys.argv[1:]:
    try:
        r = urllib.request.urlopen(url, timeout=10)
        print(r.status, r.read().decode().strip())
    except urllib.error.HTTPError as e:
        print(e.code, e.read().decode().strip())
"#;

const REQUESTS: &str = r#"
import sys, requests
for url in sys.argv[1:]:
    r = requests.get(url, timeout=10)
    print(r.status_code, r.text.strip())
"#;

/// Node's `http.request` to the proxy with the absolute URL, as a client
/// that knows it talks to a proxy does (Node 20's `fetch` reads no proxy
/// variables).
const NODE: &str = r#"
const http = require('http');
const proxy = new URL(process.env.PROXY);
function get(url) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: proxy.hostname, port: proxy.port, path: url,
      headers: { host: new URL(url).host },
    }, res => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', d => body += d);
      res.on('end', () => resolve(res.statusCode + ' ' + body.trim()));
    });
    req.on('error', reject);
    req.end();
  });
}
(async () => {
  for (const url of process.argv.slice(1)) console.log(await get(url));
})().catch(e => { console.error(e); process.exit(1); });
"#;

/// A client's two lines: `STATUS BODY` of the allowed GET of `path`, then
/// of the denied `/secret`.
fn assert_allowed_then_denied(out: &str, path: &str) {
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert_eq!(
        lines[0],
        format!("200 upstream: GET {path} (0 bytes)"),
        "{out}"
    );
    let denied = lines[1]
        .strip_prefix("403 ")
        .unwrap_or_else(|| panic!("not a 403: {out}"));
    assert_denied_by(denied, "no-secret");
}

#[test]
fn python_and_node_go_through_the_proxy() {
    let (p, up, proxy) = plain_setup(PLAIN);

    let urls = [up.url("/ok/urllib"), up.url("/secret")];
    assert_allowed_then_denied(&python(&p, &proxy, URLLIB, &urls), "/ok/urllib");

    let has_requests = client(&p, "python3")
        .args(["-c", "import requests"])
        .output()
        .is_ok_and(|o| o.status.success());
    if has_requests {
        let urls = [up.url("/ok/requests"), up.url("/secret")];
        let out = python(&p, &proxy, REQUESTS, &urls);
        assert_allowed_then_denied(&out, "/ok/requests");
    } else {
        eprintln!("python's requests is not installed: its part is skipped");
    }

    let mut node = client(&p, "node");
    node.arg("-e")
        .arg(NODE)
        .args([up.url("/ok/node"), up.url("/secret")])
        .env("PROXY", proxy.url());
    let out = run(&mut node, b"");
    assert!(out.status.success(), "node: {}", text(&out.stderr));
    assert_allowed_then_denied(&text(&out.stdout), "/ok/node");

    let mut saw = vec!["GET /ok/urllib"];
    if has_requests {
        saw.push("GET /ok/requests");
    }
    saw.push("GET /ok/node");
    assert_eq!(up.targets(), saw);
    assert_eq!(
        proxy_lines(&p)
            .iter()
            .filter(|l| l["decision"] == "deny" && l["rule"] == "no-secret")
            .count(),
        if has_requests { 3 } else { 2 }
    );
}

// ---------------------------------------------------------------------------
// 5. git over smart HTTP

/// `git ARGS` in `dir`, isolated, through `proxy` when given.
fn git(
    p: &Project,
    dir: &std::path::Path,
    proxy: Option<&ProxyProcess>,
    args: &[&str],
) -> std::process::Output {
    let mut cmd = client(p, "git");
    cmd.current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_AUTHOR_NAME", "Tester")
        .env("GIT_AUTHOR_EMAIL", "tester@example.com")
        .env("GIT_COMMITTER_NAME", "Tester")
        .env("GIT_COMMITTER_EMAIL", "tester@example.com");
    if let Some(proxy) = proxy {
        cmd.env("http_proxy", proxy.url());
    }
    run(&mut cmd, b"")
}

fn git_ok(
    p: &Project,
    dir: &std::path::Path,
    proxy: Option<&ProxyProcess>,
    args: &[&str],
) -> String {
    let out = git(p, dir, proxy, args);
    assert!(
        out.status.success(),
        "git {args:?}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout).trim().to_owned()
}

#[test]
fn git_clone_goes_through_and_push_is_denied_by_its_rule() {
    let p = Project::new(
        r#"version: 1
default: allow
deny:
  - id: no-git-push
    description: no pushes from here
    when: {type: http.request, git.operation: push}
"#,
    );
    let srv = p.root.join("srv");
    let seed = p.root.join("seed");
    std::fs::create_dir_all(&srv).unwrap();
    std::fs::create_dir_all(&seed).unwrap();
    git_ok(&p, &seed, None, &["init", "-q", "-b", "main"]);
    std::fs::write(seed.join("README"), "hello\n").unwrap();
    git_ok(&p, &seed, None, &["add", "README"]);
    git_ok(&p, &seed, None, &["commit", "-q", "-m", "first"]);
    git_ok(
        &p,
        &srv,
        None,
        &["clone", "-q", "--bare", seed.to_str().unwrap(), "repo.git"],
    );
    let bare = srv.join("repo.git");
    let before = git_ok(&p, &bare, None, &["rev-parse", "main"]);

    let server = git_server(&srv);
    let proxy = ProxyProcess::start(&p);
    git_ok(
        &p,
        &p.root,
        Some(&proxy),
        &["clone", "-q", &server.url("/repo.git"), "clone"],
    );
    let clone = p.root.join("clone");
    assert_eq!(
        std::fs::read_to_string(clone.join("README")).unwrap(),
        "hello\n"
    );
    let fetch = assert_line(
        &p,
        &format!(
            "GET {}",
            server.url("/repo.git/info/refs?service=git-upload-pack")
        ),
        "allow",
        None,
    );
    assert_eq!(
        fetch["action"]["facets"]["git"]["operation"], "fetch",
        "{fetch}"
    );

    std::fs::write(clone.join("README"), "changed\n").unwrap();
    git_ok(&p, &clone, None, &["commit", "-q", "-am", "second"]);
    let push = git(&p, &clone, Some(&proxy), &["push", "origin", "main"]);
    assert!(!push.status.success(), "the push went through");
    assert!(text(&push.stderr).contains("403"), "{}", text(&push.stderr));

    assert_eq!(
        git_ok(&p, &bare, None, &["rev-parse", "main"]),
        before,
        "the server's repository changed"
    );
    let targets = server.targets();
    assert!(
        targets.contains(&"POST /repo.git/git-upload-pack".to_owned()),
        "the clone did not fetch over smart HTTP: {targets:?}"
    );
    assert!(
        targets.iter().all(|t| !t.contains("receive-pack")),
        "the server was asked to receive: {targets:?}"
    );
    let denied = assert_line(
        &p,
        &format!(
            "GET {}",
            server.url("/repo.git/info/refs?service=git-receive-pack")
        ),
        "deny",
        Some("no-git-push"),
    );
    assert_eq!(
        denied["action"]["facets"]["git"]["operation"], "push",
        "{denied}"
    );
}

// ---------------------------------------------------------------------------
// 6. A Kubernetes-shaped API

/// A fake API server: lists pods in `prod`, deletes anything.
fn fake_apiserver() -> Upstream {
    Upstream::http_with(|seen| match (seen.method.as_str(), seen.path()) {
        ("GET", "/api/v1/namespaces/prod/pods") => Reply::json(
            200,
            &json!({"kind": "PodList", "apiVersion": "v1", "metadata": {},
                    "items": [{"metadata": {"name": "web-1", "namespace": "prod"}}]}),
        ),
        ("DELETE", _) => Reply::json(
            200,
            &json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}),
        ),
        _ => Reply::json(
            404,
            &json!({"kind": "Status", "status": "Failure", "code": 404}),
        ),
    })
}

const K8S: &str = r#"version: 1
default: allow
deny:
  - id: no-delete-in-prod
    description: nothing is deleted in prod
    when: {type: http.request, k8s.verb: delete, k8s.namespace: prod}
"#;

#[test]
fn a_delete_in_prod_is_denied_while_the_list_goes_through() {
    let p = Project::new(K8S);
    let api = fake_apiserver();
    let proxy = ProxyProcess::start(&p);

    let list = curl(
        &p,
        &["-x", &proxy.url(), &api.url("/api/v1/namespaces/prod/pods")],
    );
    assert_eq!(list.status, 200, "{list:?}");
    assert!(list.body.contains("PodList"), "{list:?}");
    let delete = curl(
        &p,
        &[
            "-x",
            &proxy.url(),
            "-X",
            "DELETE",
            &api.url("/api/v1/namespaces/prod/pods/web-1"),
        ],
    );
    assert_eq!(delete.status, 403, "{delete:?}");
    assert_denied_by(&delete.body, "no-delete-in-prod");

    assert_eq!(api.targets(), ["GET /api/v1/namespaces/prod/pods"]);
    let line = assert_line(
        &p,
        &format!("DELETE {}", api.url("/api/v1/namespaces/prod/pods/web-1")),
        "deny",
        Some("no-delete-in-prod"),
    );
    assert_eq!(
        line["action"]["facets"]["k8s"],
        json!({"verb": "delete", "namespace": "prod", "resource": "pods", "name": "web-1",
               "group": "", "version": "v1"}),
        "{line}"
    );
    let list = line_for(
        &p,
        &format!("GET {}", api.url("/api/v1/namespaces/prod/pods")),
    );
    assert_eq!(list["action"]["facets"]["k8s"]["verb"], "list", "{list}");
}

#[test]
fn kubectl_itself_is_denied_a_delete_in_prod() {
    let p = Project::new(K8S);
    if client(&p, "kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_err()
    {
        eprintln!("kubectl is not installed: skipped");
        return;
    }
    let api = fake_apiserver();
    let proxy = ProxyProcess::start(&p);
    // Go skips proxies for loopback by the variables; a kubeconfig's
    // `proxy-url` is used for every address.
    let kubeconfig = p.root.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    proxy-url: {}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\nusers:\n- name: u\n  user: {{}}\n",
            api.url(""),
            proxy.url()
        ),
    )
    .unwrap();
    let kubectl = |args: &[&str]| {
        let mut cmd = client(&p, "kubectl");
        cmd.arg("--kubeconfig").arg(&kubeconfig).args(args);
        run(&mut cmd, b"")
    };
    let list = kubectl(&["get", "--raw", "/api/v1/namespaces/prod/pods"]);
    assert!(list.status.success(), "{}", text(&list.stderr));
    assert!(text(&list.stdout).contains("PodList"));
    let delete = kubectl(&["delete", "--raw", "/api/v1/namespaces/prod/pods/web-1"]);
    assert!(
        !delete.status.success(),
        "the delete went through: {}",
        text(&delete.stdout)
    );
    assert!(
        text(&delete.stderr).contains("Forbidden") || text(&delete.stderr).contains("403"),
        "{}",
        text(&delete.stderr)
    );
    // kubectl asks for /version first; never for the delete.
    let targets = api.targets();
    assert!(
        targets.contains(&"GET /api/v1/namespaces/prod/pods".to_owned()),
        "{targets:?}"
    );
    assert!(
        targets.iter().all(|t| !t.starts_with("DELETE")),
        "{targets:?}"
    );
    assert_line(
        &p,
        &format!("DELETE {}", api.url("/api/v1/namespaces/prod/pods/web-1")),
        "deny",
        Some("no-delete-in-prod"),
    );
}

// ---------------------------------------------------------------------------
// A WebSocket

#[test]
fn a_websocket_upgrade_is_decided_then_spliced() {
    use std::io::Read;
    let p = Project::new(
        r#"version: 1
default: allow
deny:
  - id: no-admin-socket
    when: {type: http.request, ws.url: {glob: "*/admin"}}
"#,
    );
    let up = Upstream::websocket_echo();
    let proxy = ProxyProcess::start(&p);
    let handshake = |path: &str| {
        format!(
            "GET {} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
            up.url(path),
            up.authority()
        )
    };
    let mut s = std::net::TcpStream::connect(proxy.addr).unwrap();
    s.write_all(handshake("/chat").as_bytes()).unwrap();
    let head = read_response(&mut s);
    assert_eq!(status_of(&head), 101, "{head}");
    assert!(
        head.to_ascii_lowercase().contains("upgrade: websocket"),
        "{head}"
    );
    // What passes now is bytes both ways, spliced.
    for message in ["first frame", "second frame"] {
        s.write_all(message.as_bytes()).unwrap();
        let mut back = vec![0u8; message.len()];
        s.read_exact(&mut back).unwrap();
        assert_eq!(text(&back), message);
    }
    drop(s);
    let line = assert_line(&p, &format!("GET {}", up.url("/chat")), "allow", None);
    assert_eq!(
        line["action"]["facets"]["ws"]["url"],
        format!("ws://{}/chat", up.authority()),
        "{line}"
    );

    let got = proxy.raw(handshake("/admin").as_bytes());
    assert_eq!(status_of(&got), 403, "{got:?}");
    assert!(got.contains("(rule no-admin-socket)"), "{got:?}");
    assert_eq!(up.targets(), ["GET /chat"]);
}

// ---------------------------------------------------------------------------
// 7. Bad input: each refused without harm, and the proxy still serves

#[test]
fn a_malformed_request_line_is_a_400() {
    let (p, up, mut proxy) = plain_setup(PLAIN);
    // What HTTP itself cannot read: hyper's 400, and the connection ends.
    for request in [
        &b"GARBAGE\r\n\r\n"[..],
        b"GET\r\n\r\n",
        b"GET http://127.0.0.1/ HTTP/1.1 trailing\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 a TLS hello, say\r\n\r\n",
    ] {
        let got = proxy.raw(request);
        assert_eq!(
            status_of(&got),
            400,
            "{:?} → {got:?}",
            String::from_utf8_lossy(request)
        );
        proxy.assert_serves(&p, &up);
    }
    // Targets two parsers could read two ways: the proxy's 400, saying why.
    for (target, why) in [
        ("http://127.0.0.1:1/a\\b", "has a backslash at byte 20"),
        ("http://a@b@127.0.0.1:1/", "has more than one `@`"),
        (
            "http://127.0.0.1:99999/",
            "a port is a number from 1 to 65535",
        ),
        ("ftp://127.0.0.1:1/", "unsupported scheme `ftp`"),
    ] {
        let got = proxy.raw(
            format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1:1\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        );
        assert_eq!(status_of(&got), 400, "{target} → {got:?}");
        assert!(got.contains("aileron proxy: not forwarded: "), "{got:?}");
        assert!(got.contains(why), "{target} → {got:?}");
        proxy.assert_serves(&p, &up);
    }
    // Nothing of them was decided, nor forwarded.
    assert!(
        proxy_lines(&p).iter().all(|l| l["action"]["summary"]
            .as_str()
            .unwrap()
            .contains("/ok/still-there/")),
        "{}",
        p.audit_text()
    );
    assert_only_checks_reached(&up);
}

#[test]
fn a_header_flood_is_refused_not_a_crash() {
    let (p, up, mut proxy) = plain_setup(PLAIN);
    let head = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\n",
        up.url("/ok/flood"),
        up.authority()
    );

    let mut many = head.clone();
    for i in 0..150 {
        many.push_str(&format!("X-Flood-{i}: {i}\r\n"));
    }
    many.push_str("\r\n");
    let got = proxy.raw(many.as_bytes());
    assert_eq!(status_of(&got), 431, "{got:?}");
    proxy.assert_serves(&p, &up);

    let big = format!("{head}X-Big: {}\r\n\r\n", "a".repeat(100 << 10));
    let got = proxy.raw(big.as_bytes());
    assert_eq!(status_of(&got), 431, "{got:?}");
    proxy.assert_serves(&p, &up);

    assert_only_checks_reached(&up);
}

#[test]
fn a_stalled_client_does_not_hold_up_the_others() {
    let (p, up, mut proxy) = plain_setup(PLAIN);
    // Half a head each, then nothing.
    let stalled: Vec<std::net::TcpStream> = (0..32)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(proxy.addr).unwrap();
            write!(s, "GET {} HTTP/1.1\r\nHost: 127.0", up.url("/ok/slow")).unwrap();
            s
        })
        .collect();
    for _ in 0..3 {
        let start = Instant::now();
        proxy.assert_serves(&p, &up);
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "slow: {:?}",
            start.elapsed()
        );
    }
    // None of the stalled requests was decided or forwarded.
    for mut s in stalled {
        s.set_read_timeout(Some(Duration::from_millis(10))).unwrap();
        let mut buf = [0u8; 16];
        let n = std::io::Read::read(&mut s, &mut buf);
        assert!(n.is_err(), "a stalled client was answered: {n:?}");
    }
    assert_only_checks_reached(&up);
}

#[test]
fn userinfo_in_the_url_is_not_the_host_and_not_logged() {
    let (p, up, mut proxy) = plain_setup(PLAIN);
    let got = proxy.raw(
        format!(
            "GET http://user:pw-5ecret@{}/ok/userinfo HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            up.authority(),
            up.authority()
        )
        .as_bytes(),
    );
    assert_eq!(status_of(&got), 200, "{got:?}");
    let seen = up.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].target, "/ok/userinfo");
    assert!(seen[0].header("authorization").is_none(), "{:?}", seen[0]);
    let line = assert_line(
        &p,
        &format!("GET {}", up.url("/ok/userinfo")),
        "allow",
        Some("reads"),
    );
    assert_eq!(line["action"]["facets"]["http"]["host"], "127.0.0.1");
    assert!(!p.audit_text().contains("pw-5ecret"), "{}", p.audit_text());
    assert!(!p.audit_text().contains("user:"), "{}", p.audit_text());
    proxy.assert_serves(&p, &up);
}

#[test]
fn a_host_in_another_spelling_is_decided_as_the_canonical_one() {
    let (p, up, mut proxy) = plain_setup(PLAIN);
    let port = up.port();
    let get = |host: &str, path: &str| {
        proxy.raw(
            format!("GET http://{host}:{port}{path} HTTP/1.1\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
    };
    let spellings = [
        "2130706433",
        "0x7f.1",
        "127.000.000.001",
        "017700000001",
        "[::ffff:127.0.0.1]",
    ];
    for (i, host) in spellings.iter().enumerate() {
        let got = get(host, &format!("/ok/{i}"));
        assert_eq!(status_of(&got), 200, "{host}: {got:?}");
        let line = line_for(&p, &format!("GET http://127.0.0.1:{port}/ok/{i}"));
        assert_eq!(
            line["action"]["facets"]["http"]["host"], "127.0.0.1",
            "{line}"
        );
    }
    // The denied path is denied however the host is written.
    let got = get("0x7f.1", "/secret");
    assert_eq!(status_of(&got), 403, "{got:?}");
    assert!(got.contains("(rule no-secret)"), "{got:?}");
    // Percent escapes in the host: refused before anything is decided.
    let got = get("%31%32%37.0.0.1", "/ok/escaped");
    assert_eq!(status_of(&got), 400, "{got:?}");
    assert!(
        !p.audit_text().contains("/ok/escaped"),
        "{}",
        p.audit_text()
    );

    let forwarded: Vec<String> = (0..spellings.len())
        .map(|i| format!("GET /ok/{i}"))
        .collect();
    assert_eq!(up.targets(), forwarded);
    proxy.assert_serves(&p, &up);
}

#[test]
fn an_ipv6_literal_reaches_an_ipv6_upstream() {
    let Some(up) = Upstream::http_ipv6() else {
        eprintln!("no IPv6 loopback on this machine: skipped");
        return;
    };
    let p = Project::new(PLAIN);
    let mut proxy = ProxyProcess::start(&p);
    let got = curl(&p, &["-x", &proxy.url(), &up.url("/ok/v6")]);
    got.assert_upstream_answered("/ok/v6");
    let line = assert_line(
        &p,
        &format!("GET http://[::1]:{}/ok/v6", up.port()),
        "allow",
        Some("reads"),
    );
    assert_eq!(line["action"]["facets"]["http"]["host"], "::1", "{line}");
    proxy.assert_serves(&p, &up);
}

#[test]
fn an_idna_host_is_decided_as_its_punycode() {
    let (p, up, mut proxy) = plain_setup(
        r#"version: 1
default: allow
deny:
  - id: no-buecher
    when: {type: http.request, http.host: xn--bcher-kva.example}
"#,
    );
    // curl writes the name in punycode on the request line, whatever its case.
    for url in ["http://bücher.example/x", "http://BÜCHER.example/x"] {
        let mut utf8 = client(&p, "curl");
        utf8.env("LC_ALL", "C.UTF-8");
        let got = curl_as(utf8, &["-x", &proxy.url(), url]);
        assert_eq!(got.status, 403, "{url}: {got:?}");
        assert_denied_by(&got.body, "no-buecher");
    }
    // Raw UTF-8, or escaped, on the request line: refused, not guessed at.
    for target in ["http://bücher.example/x", "http://b%C3%BCcher.example/x"] {
        let got =
            proxy.raw(format!("GET {target} HTTP/1.1\r\nConnection: close\r\n\r\n").as_bytes());
        assert_eq!(status_of(&got), 400, "{target}: {got:?}");
    }
    let lines = proxy_lines(&p);
    assert_eq!(lines.len(), 2, "{}", p.audit_text());
    for l in &lines {
        assert_eq!(
            l["action"]["summary"], "GET http://xn--bcher-kva.example/x",
            "{l}"
        );
        assert_eq!(
            l["action"]["facets"]["http"]["host"],
            "xn--bcher-kva.example"
        );
        assert_eq!(l["rule"], "no-buecher");
    }
    proxy.assert_serves(&p, &up);
}

#[test]
fn the_upstream_sees_the_uri_s_host_not_a_disagreeing_host_header() {
    let (p, up, mut proxy) = plain_setup(PLAIN);
    let got = proxy.raw(
        format!(
            "GET {} HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n",
            up.url("/ok/host")
        )
        .as_bytes(),
    );
    assert_eq!(status_of(&got), 200, "{got:?}");
    let seen = up.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].header("host"),
        Some(up.authority().as_str()),
        "{:?}",
        seen[0]
    );
    let line = line_for(&p, &format!("GET {}", up.url("/ok/host")));
    assert_eq!(
        line["action"]["facets"]["http"]["host"], "127.0.0.1",
        "{line}"
    );
    proxy.assert_serves(&p, &up);
}

#[test]
fn a_request_to_the_proxy_itself_is_told_it_is_a_proxy() {
    let (p, up, mut proxy) = plain_setup(PLAIN);
    let got = curl(&p, &[&format!("{}/", proxy.url())]);
    assert_eq!(got.status, 400, "{got:?}");
    assert!(
        got.body
            .contains("a request to the proxy itself, not through it"),
        "{got:?}"
    );
    assert!(proxy_lines(&p).is_empty(), "{}", p.audit_text());
    proxy.assert_serves(&p, &up);
}

#[test]
fn a_request_through_the_proxy_to_itself_is_not_forwarded() {
    let (p, up, mut proxy) = plain_setup("version: 1\ndefault: allow\n");
    let port = proxy.addr.port();
    for host in ["127.0.0.1", "localhost", "0.0.0.0", "[::ffff:127.0.0.1]"] {
        let url = format!("http://{host}:{port}/ok/loop");
        let got = curl(&p, &["-x", &proxy.url(), &url]);
        assert_eq!(got.status, 502, "{url}: {got:?}");
        assert!(
            got.body.contains("Aileron's own address: not forwarded"),
            "{url}: {got:?}"
        );
        let tunnel = curl(
            &p,
            &["-x", &proxy.url(), &format!("https://{host}:{port}/")],
        );
        assert_eq!(tunnel.connect, 502, "{host}: {tunnel:?}");
    }
    // One decision each: nothing came back in.
    assert_eq!(proxy_lines(&p).len(), 8, "{}", p.audit_text());
    proxy.assert_serves(&p, &up);
}

// ---------------------------------------------------------------------------
// 8. Under `aileron launch`

#[test]
fn under_launch_the_agent_and_its_commands_go_through_the_session_s_proxy() {
    let p = Project::new(
        r#"version: 1
default: allow
deny:
  - id: no-secret
    when: {type: http.request, http.path: /secret}
"#,
    );
    let up = Upstream::http();
    let script = format!(
        r#"curl -sS -w ' %{{http_code}}\n' {ok}
$SHELL -c 'curl -sS -w " %{{http_code}}\n" {secret}'
echo "session=$AILERON_SESSION""#,
        ok = up.url("/ok/agent"),
        secret = up.url("/secret"),
    );
    let mut cmd = client(&p, support::AILERON);
    cmd.args(["launch", "--enforce", "none", "--", "bash", "-c", &script]);
    let out = run_no_tty(&mut cmd);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "upstream: GET /ok/agent (0 bytes)", "{stdout}");
    assert_eq!(lines[1], " 200", "{stdout}");
    assert!(
        lines[2].starts_with("aileron: denied: ") && lines[2].ends_with("(rule no-secret)"),
        "{stdout}"
    );
    assert_eq!(lines[3], " 403", "{stdout}");
    let session = lines[4].strip_prefix("session=").expect("the session's id");
    assert!(!session.is_empty());

    assert_eq!(up.targets(), ["GET /ok/agent"]);
    let ok = assert_line(&p, &format!("GET {}", up.url("/ok/agent")), "allow", None);
    let denied = assert_line(
        &p,
        &format!("GET {}", up.url("/secret")),
        "deny",
        Some("no-secret"),
    );
    assert_eq!(ok["session"], session, "{ok}");
    assert_eq!(denied["session"], session, "{denied}");
}

#[test]
fn under_launch_no_proxy_sets_no_proxy_variables() {
    let p = Project::new("version: 1\ndefault: allow\n");
    let script = "env | grep -i -E '^(http|https|all|no)_proxy=' | sort; echo end";
    let mut with = client(&p, support::AILERON);
    with.args(["launch", "--enforce", "none", "--", "bash", "-c", script]);
    let out = run_no_tty(&mut with);
    let stdout = text(&out.stdout);
    let vars: Vec<&str> = stdout.lines().filter(|l| *l != "end").collect();
    assert_eq!(vars.len(), 6, "{stdout}{}", text(&out.stderr));
    let url = vars[0].split_once('=').unwrap().1;
    assert!(url.starts_with("http://127.0.0.1:"), "{stdout}");
    assert!(
        vars.iter().all(|v| v.ends_with(&format!("={url}"))),
        "{stdout}"
    );

    let mut without = client(&p, support::AILERON);
    without.args([
        "launch",
        "--enforce",
        "none",
        "--no-proxy",
        "--",
        "bash",
        "-c",
        script,
    ]);
    let out = run_no_tty(&mut without);
    assert_eq!(text(&out.stdout), "end\n", "{}", text(&out.stderr));
}

#[test]
fn under_launch_with_inspection_the_agent_s_tools_trust_the_proxy_by_the_variables() {
    let ca = TestCa::new();
    let up = Upstream::https(&ca);
    let p = Project::new(INSPECT);
    let script = format!(
        r#"curl -sS -w ' %{{http_code}}\n' {ok}
curl -sS -w ' %{{http_code}}\n' {secret}
grep -c "Aileron's local proxy CA" "$SSL_CERT_FILE"
for v in SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO CARGO_HTTP_CAINFO PIP_CERT NODE_EXTRA_CA_CERTS; do
  printf '%s=%s\n' "$v" "$(basename "${{!v}}")"
done"#,
        ok = up.url("/ok/inspected"),
        secret = up.url("/secret"),
    );
    let mut cmd = client(&p, support::AILERON);
    // The session's proxy trusts the upstream's CA, as it would a public one.
    cmd.args(["launch", "--enforce", "none", "--", "bash", "-c", &script])
        .env("SSL_CERT_FILE", &ca.pem)
        .env_remove("SSL_CERT_DIR");
    for v in [
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
        "GIT_SSL_CAINFO",
        "CARGO_HTTP_CAINFO",
        "PIP_CERT",
        "NODE_EXTRA_CA_CERTS",
    ] {
        cmd.env_remove(v);
    }
    let out = run_no_tty(&mut cmd);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines[..2],
        ["upstream: GET /ok/inspected (0 bytes)", " 200"],
        "{stdout}"
    );
    assert!(lines[2].ends_with("(rule no-secret)"), "{stdout}");
    assert_eq!(lines[3], " 403", "{stdout}");
    assert_eq!(lines[4], "1", "the bundle holds the proxy's CA: {stdout}");
    assert_eq!(
        lines[5..],
        [
            "SSL_CERT_FILE=ca-bundle.pem",
            "REQUESTS_CA_BUNDLE=ca-bundle.pem",
            "CURL_CA_BUNDLE=ca-bundle.pem",
            "GIT_SSL_CAINFO=ca-bundle.pem",
            "CARGO_HTTP_CAINFO=ca-bundle.pem",
            "PIP_CERT=ca-bundle.pem",
            "NODE_EXTRA_CA_CERTS=proxy-ca.pem",
        ],
        "{stdout}"
    );
    assert_eq!(up.targets(), ["GET /ok/inspected"]);
}

// ---------------------------------------------------------------------------
// Repeats: a gateway's traffic is not an agent's doom loop

/// Three TLS connections in a row to one host (a package manager, git or
/// an SDK over https) are the same `CONNECT host:443` action: not a loop.
#[test]
fn three_tunnels_in_a_row_to_one_host_all_go_through() {
    let ca = TestCa::new();
    let tls = Upstream::https(&ca);
    let p = Project::new("version: 1\ndefault: allow\n");
    let proxy = ProxyProcess::start(&p);
    let cacert = ca.pem.to_str().unwrap();
    for i in 0..3 {
        let url = tls.url(&format!("/ok/{i}"));
        let got = curl(&p, &["-x", &proxy.url(), "--cacert", cacert, &url]);
        assert_eq!((got.connect, got.status), (200, 200), "tunnel {i}: {got:?}");
    }
}

/// Polling one URL under `default: deny`, a rule allowing it.
#[test]
fn the_same_allowed_get_three_times_in_a_row_stays_allowed() {
    let (p, up, proxy) = plain_setup(PLAIN);
    for i in 0..3 {
        let got = curl(&p, &["-x", &proxy.url(), &up.url("/ok")]);
        assert_eq!(got.status, 200, "request {i}: {got:?}");
    }
}
