//! Everyday package work in the box (issue 30): `npm install` and `cargo
//! fetch`, run as users run them (`aileron launch -- npm install`, the
//! default enforcement, the tools from `PATH`), against registry mirrors
//! the test serves on the host's loopback. Inside the box `127.0.0.1` is
//! the box's own loopback, so a request the mirror receives came through
//! the session's egress proxy, which connects from the host's side; each
//! one has its `http.request` audit line. A mirror the policy does not
//! allow is never reached: the install fails and the audit log says why.
//!
//! The packages are real: `npm pack` and `cargo package` build them from
//! sources the test writes, outside the box, and the package managers
//! check their integrity (`integrity`, `cksum`) as they would from the
//! public registries. The home and the places "outside" live under the
//! build's scratch directory, not under `/tmp`, which the box lets the
//! tree write.

#![cfg(target_os = "linux")]

mod support;

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::upstream::{Reply, Upstream};
use support::{Project, run_no_tty, text};

/// The id of the rule that allows the mirror.
const ALLOW_RULE: &str = "registry-mirror";
/// The id of the rule that denies it.
const DENY_RULE: &str = "no-mirror";

// ---------------------------------------------------------------------------
// What a user's machine has

/// Whether the test may go on with `what` (`support::available`).
fn available(what: &str, ok: bool) -> bool {
    support::available(what, ok)
}

/// Whether `program --version` runs in the user's environment.
fn runs(p: &Project, program: &str) -> bool {
    let mut cmd = p.command(program);
    as_user(&mut cmd);
    let ok = cmd
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    available(program, ok)
}

/// Where rustup keeps its toolchains for the user running the tests: a
/// user who installed rustup has them in `~/.rustup`, which the test's
/// home does not hold, so the test names the real one (`None`: cargo is
/// not rustup's).
fn rustup_home() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("RUSTUP_HOME") {
        return Some(dir.into());
    }
    let dir = PathBuf::from(std::env::var_os("HOME")?).join(".rustup");
    dir.is_dir().then_some(dir)
}

/// The environment of a user at a terminal: none of the variables `cargo
/// test` gives the test itself (`CARGO_HOME` among them: cargo's home is
/// `~/.cargo` of the test's home), none of npm's `npm_config_*`, and
/// rustup's toolchains where the user keeps them.
fn as_user(cmd: &mut Command) -> &mut Command {
    for (k, _) in std::env::vars_os() {
        let name = k.to_string_lossy().to_ascii_lowercase();
        if name.starts_with("cargo") || name.starts_with("npm_config_") {
            cmd.env_remove(&k);
        }
    }
    if let Some(dir) = rustup_home() {
        cmd.env("RUSTUP_HOME", dir);
    }
    cmd
}

/// `aileron launch -- ARGV` in the project, as its user runs it, to its end.
fn launch(p: &Project, argv: &[&str]) -> Output {
    launch_with(p, &[], argv)
}

/// `aileron launch OPTIONS -- ARGV`, likewise.
fn launch_with(p: &Project, options: &[&str], argv: &[&str]) -> Output {
    let mut cmd = p.aileron(&["launch"]);
    cmd.args(options).arg("--").args(argv);
    run_no_tty(as_user(&mut cmd))
}

/// What a launch printed and what the audit log holds, for a failure message.
fn show(p: &Project, out: &Output) -> String {
    format!(
        "{:?}\n--- stdout\n{}--- stderr\n{}--- audit\n{}",
        out.status,
        text(&out.stdout),
        text(&out.stderr),
        p.audit_text()
    )
}

/// A directory of its own under the build's scratch directory.
fn scratch_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(support::scratch()).expect("scratch dir")
}

// ---------------------------------------------------------------------------
// A registry mirror on the host's loopback

/// An HTTP/1.1 server on `127.0.0.1` that serves fixed files by path
/// (`404` for any other) and records every request it receives.
struct Mirror {
    up: Upstream,
    files: Arc<Mutex<BTreeMap<String, Vec<u8>>>>,
}

impl Mirror {
    fn start() -> Mirror {
        let files: Arc<Mutex<BTreeMap<String, Vec<u8>>>> = Arc::default();
        let served = Arc::clone(&files);
        let up = Upstream::http_with(move |seen| {
            let found = served.lock().unwrap().get(seen.path()).cloned();
            match found {
                Some(body) => Reply {
                    status: 200,
                    headers: Vec::new(),
                    body,
                },
                None => Reply {
                    status: 404,
                    ..Reply::text("not in this mirror\n")
                },
            }
        });
        Mirror { up, files }
    }

    /// Serves `body` at `path`.
    fn put(&self, path: &str, body: Vec<u8>) {
        self.files.lock().unwrap().insert(path.to_owned(), body);
    }

    fn port(&self) -> u16 {
        self.up.port()
    }

    /// `http://127.0.0.1:PORT{path}`.
    fn url(&self, path: &str) -> String {
        self.up.url(path)
    }

    /// `METHOD URL` of every request received, in order: as the proxy's
    /// audit lines summarise them.
    fn requests(&self) -> Vec<String> {
        self.up
            .seen()
            .iter()
            .map(|s| format!("{} {}", s.method, self.url(&s.target)))
            .collect()
    }

    /// Asserts that a request for `path` arrived (waiting a little: the
    /// mirror's thread may record it after the client has gone on).
    fn assert_served(&self, path: &str, p: &Project, out: &Output) {
        let deadline = Instant::now() + support::WAIT;
        while !self.up.seen().iter().any(|s| s.path() == path) {
            assert!(
                Instant::now() < deadline,
                "the mirror was not asked for {path}: {:?}\n{}",
                self.requests(),
                show(p, out)
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Asserts that nothing reached the mirror, not even a connection.
    fn assert_untouched(&self, p: &Project, out: &Output) {
        assert_eq!(
            self.up.connections(),
            0,
            "the mirror was reached: {:?}\n{}",
            self.requests(),
            show(p, out)
        );
    }
}

/// A policy that asks by default (with no terminal, an ask is refused at
/// once) and allows `command`; the mirror allowed by a rule, denied by
/// one, or named by none.
fn policy(command: &str, mirror: &Mirror, rule: Option<&str>) -> String {
    let mut text = format!("version: 1\ndefault: ask\nallow:\n  - \"{command}\"\n");
    let when = format!(
        "    when: {{type: http.request, http.host: 127.0.0.1, http.port: {}}}\n",
        mirror.port()
    );
    match rule {
        Some(ALLOW_RULE) => text.push_str(&format!("  - id: {ALLOW_RULE}\n{when}")),
        Some(id) => text.push_str(&format!(
            "deny:\n  - id: {id}\n    description: the registry mirror is closed\n{when}"
        )),
        None => {}
    }
    text
}

/// The proxy's audit lines about the mirror.
fn mirror_lines(p: &Project, mirror: &Mirror) -> Vec<Value> {
    support::proxy::proxy_lines(p)
        .into_iter()
        .filter(|r| {
            let http = &r["action"]["facets"]["http"];
            http["host"] == "127.0.0.1" && http["port"] == json!(mirror.port())
        })
        .collect()
}

/// Asserts that every request the mirror received came through the proxy
/// and was allowed by [`ALLOW_RULE`]: one audit line each, no more.
fn assert_each_request_audited(p: &Project, mirror: &Mirror, out: &Output) {
    let lines = mirror_lines(p, mirror);
    for line in &lines {
        assert_eq!(line["action"]["type"], "http.request", "{line}");
        assert_eq!(line["decision"], "allow", "{line}");
        assert_eq!(line["rule"], ALLOW_RULE, "{line}");
    }
    let mut audited: Vec<String> = lines
        .iter()
        .map(|l| {
            l["action"]["summary"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    let mut received = mirror.requests();
    audited.sort();
    received.sort();
    assert_eq!(audited, received, "{}", show(p, out));
}

/// What a refused install shows: the package manager's words for the
/// proxy's `403` and the path of the first request it makes.
struct Refused {
    says: &'static str,
    first: &'static str,
}

impl Refused {
    /// Asserts that the install failed saying so, that the mirror heard
    /// nothing, and that the audit log refused the first request: an ask
    /// no one could answer when no rule names the mirror, else `rule`'s deny.
    fn assert(&self, p: &Project, mirror: &Mirror, rule: Option<&str>, out: &Output) {
        assert!(
            !out.status.success(),
            "the install worked\n{}",
            show(p, out)
        );
        assert!(text(&out.stderr).contains(self.says), "{}", show(p, out));
        mirror.assert_untouched(p, out);
        let lines = mirror_lines(p, mirror);
        let want = format!("GET {}", mirror.url(self.first));
        assert!(
            lines.iter().any(|l| l["action"]["summary"] == want),
            "no audit line for {want}\n{}",
            show(p, out)
        );
        for line in &lines {
            match rule {
                Some(id) => {
                    assert_eq!(line["decision"], "deny", "{line}");
                    assert_eq!(line["rule"], id, "{line}");
                }
                None => {
                    assert_eq!(line["decision"], "ask", "{line}");
                    assert_eq!(line["outcome"], "no-terminal", "{line}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// npm

const NPM_VERSION: &str = "1.0.0";

/// A package the npm mirror serves: its name, its one dependency, its
/// `index.js`.
struct NpmPackage {
    name: &'static str,
    dependency: Option<&'static str>,
    code: &'static str,
}

/// The project depends on the first, which depends on the second.
const NPM_PACKAGES: [NpmPackage; 2] = [
    NpmPackage {
        name: "box-left-pad",
        dependency: Some("box-pad-char"),
        code: "const c = require('box-pad-char');\nmodule.exports = (s, n) => String(s).padStart(n, c);\n",
    },
    NpmPackage {
        name: "box-pad-char",
        dependency: None,
        code: "module.exports = '*';\n",
    },
];

impl NpmPackage {
    fn publish(&self, mirror: &Mirror) {
        let deps: BTreeMap<&str, String> = self
            .dependency
            .iter()
            .map(|d| (*d, format!("^{NPM_VERSION}")))
            .collect();
        let manifest = json!({"name": self.name, "main": "index.js", "dependencies": deps});
        publish_npm(mirror, manifest, &[("index.js", self.code)]);
    }
}

/// A tarball `npm pack` made, with what it said of it.
#[derive(Clone)]
struct Packed {
    file: String,
    integrity: Value,
    shasum: Value,
    bytes: Vec<u8>,
}

/// Packs `manifest` and `files` with `npm pack`, outside the box and with
/// a home of its own; once per process for the same contents (a tarball
/// does not depend on the mirror that serves it).
fn pack(manifest: &Value, files: &[(&str, &str)]) -> Packed {
    static PACKED: Mutex<BTreeMap<String, Packed>> = Mutex::new(BTreeMap::new());
    let key = format!("{manifest}{files:?}");
    if let Some(done) = PACKED.lock().unwrap().get(&key) {
        return done.clone();
    }
    let work = scratch_dir();
    let (src, out) = (work.path().join("src"), work.path().join("packed"));
    for d in [&src, &out] {
        std::fs::create_dir_all(d).expect("package dir");
    }
    std::fs::write(src.join("package.json"), manifest.to_string()).expect("manifest");
    for (file, content) in files {
        std::fs::write(src.join(file), content).expect("package file");
    }
    let packer = work.path().join("packer");
    let mut cmd = Command::new("npm");
    support::isolate(&mut cmd, &packer, &packer);
    let done = as_user(&mut cmd)
        .args(["pack", "--json", "--pack-destination"])
        .arg(&out)
        .current_dir(&src)
        .output()
        .expect("npm pack");
    assert!(done.status.success(), "npm pack: {}", text(&done.stderr));
    let info: Value = serde_json::from_slice(&done.stdout).expect("npm pack --json");
    let file = info[0]["filename"].as_str().expect("filename").to_owned();
    let packed = Packed {
        bytes: std::fs::read(out.join(&file)).expect("tarball"),
        file,
        integrity: info[0]["integrity"].clone(),
        shasum: info[0]["shasum"].clone(),
    };
    PACKED.lock().unwrap().insert(key, packed.clone());
    packed
}

/// Packs a package of `manifest` (its version and license added) and
/// `files`, and serves the tarball and its packument (what `GET /NAME`
/// answers).
fn publish_npm(mirror: &Mirror, mut manifest: Value, files: &[(&str, &str)]) {
    manifest["version"] = json!(NPM_VERSION);
    manifest["license"] = json!("MIT");
    let name = manifest["name"].as_str().expect("a name").to_owned();
    let packed = pack(&manifest, files);
    let tarball = format!("/{name}/-/{}", packed.file);
    manifest["dist"] = json!({
        "tarball": mirror.url(&tarball),
        "integrity": packed.integrity,
        "shasum": packed.shasum,
    });
    let packument = json!({
        "name": name,
        "dist-tags": {"latest": NPM_VERSION},
        "versions": {NPM_VERSION: manifest},
    });
    mirror.put(&format!("/{name}"), packument.to_string().into_bytes());
    mirror.put(&tarball, packed.bytes);
}

/// The project's `package.json`, depending on `deps`.
fn app_manifest(deps: &[&str]) -> String {
    let deps: BTreeMap<&str, String> = deps
        .iter()
        .map(|d| (*d, format!("^{NPM_VERSION}")))
        .collect();
    json!({"name": "app", "version": "1.0.0", "private": true, "dependencies": deps}).to_string()
}

/// A project depending on `box-left-pad`, its `.npmrc` naming the mirror,
/// and a home where npm has run before (`~/.npm` exists, empty), or not;
/// `None` when npm is missing.
fn npm_project(rule: Option<&str>, npm_used: bool) -> Option<(Project, Mirror)> {
    let mirror = Mirror::start();
    let p = Project::new(&policy("npm install*", &mirror, rule));
    if !runs(&p, "npm") {
        return None;
    }
    for pkg in &NPM_PACKAGES {
        pkg.publish(&mirror);
    }
    p.write("package.json", &app_manifest(&["box-left-pad"]));
    p.write(".npmrc", &format!("registry={}\n", mirror.url("/")));
    if npm_used {
        std::fs::create_dir_all(p.home.join(".npm")).expect("~/.npm");
    }
    Some((p, mirror))
}

/// Asserts that `npm install` in the box installed both packages from the
/// mirror, through the proxy, and that they work.
fn assert_npm_installed(p: &Project, mirror: &Mirror, out: &Output) {
    assert!(out.status.success(), "npm install failed\n{}", show(p, out));
    for pkg in &NPM_PACKAGES {
        assert!(
            p.path("node_modules")
                .join(pkg.name)
                .join("index.js")
                .is_file(),
            "{} not installed\n{}",
            pkg.name,
            show(p, out)
        );
        mirror.assert_served(&format!("/{}", pkg.name), p, out);
        mirror.assert_served(&format!("/{0}/-/{0}-{NPM_VERSION}.tgz", pkg.name), p, out);
    }
    assert_each_request_audited(p, mirror, out);
    // What the user does next, outside the box: use it.
    let used = p
        .command("node")
        .args([
            "-e",
            "process.stdout.write(require('box-left-pad')('ok', 5))",
        ])
        .output()
        .expect("node");
    assert_eq!(text(&used.stdout), "***ok", "{}", text(&used.stderr));
}

/// `npm install` in the box, the mirror allowed by a rule: both packages
/// come from the mirror through the proxy, each request audited, and
/// work afterwards.
#[test]
fn npm_install_fetches_from_a_mirror_on_loopback_through_the_proxy() {
    let Some((p, mirror)) = npm_project(Some(ALLOW_RULE), true) else {
        return;
    };
    let out = launch(&p, &["npm", "install"]);
    assert_npm_installed(&p, &mirror, &out);
}

/// npm's words for the proxy's refusal of the first packument.
const NPM_REFUSED: Refused = Refused {
    says: "403 Forbidden - GET",
    first: "/box-left-pad",
};

/// The mirror named by no rule (the default asks, and nobody can answer)
/// or denied by one: `npm install` fails, the mirror hears nothing.
#[test]
fn npm_install_from_a_mirror_the_policy_does_not_allow_fetches_nothing() {
    for rule in [None, Some(DENY_RULE)] {
        let Some((p, mirror)) = npm_project(rule, true) else {
            return;
        };
        let out = launch(&p, &["npm", "install"]);
        NPM_REFUSED.assert(&p, &mirror, rule, &out);
        assert!(!p.path("node_modules/box-left-pad").exists());
    }
}

// Fixed (launch makes a missing cache whose program is on PATH, and cargo's
// lock files); it was: a user who has never run npm has no `~/.npm`; the box makes
// only existing caches writable, and the home is read-only, so npm cannot
// create its cache: `npm error code EACCES`, `syscall mkdir`, `path
// ~/.npm`, followed by npm's misleading advice to `sudo chown` it. Left to
// the box's owner (launch_box.rs); this test passes once it is decided.
#[test]
fn npm_install_works_for_a_user_who_never_ran_npm() {
    let Some((p, mirror)) = npm_project(Some(ALLOW_RULE), false) else {
        return;
    };
    let out = launch(&p, &["npm", "install"]);
    assert_npm_installed(&p, &mirror, &out);
}

/// The registry token a user keeps in `~/.npmrc`.
const NPM_TOKEN: &str = "npm-mirror-token-secret";

/// [`npm_project`] for a user who names the mirror and its token in
/// `~/.npmrc`, as teams with a registry of their own do, not in the
/// project; with `readable`, the policy gives `~/.npmrc` back to the box
/// (`settings.enforce.readable`), as docs/enforcement.md says to.
fn user_npmrc_project(readable: bool) -> Option<(Project, Mirror)> {
    let (p, mirror) = npm_project(Some(ALLOW_RULE), true)?;
    std::fs::remove_file(p.path(".npmrc")).expect("the project's .npmrc");
    let npmrc = format!(
        "registry={}\n//127.0.0.1:{}/:_authToken={NPM_TOKEN}\n",
        mirror.url("/"),
        mirror.port()
    );
    std::fs::write(p.home.join(".npmrc"), npmrc).expect("~/.npmrc");
    if readable {
        let policy = policy("npm install*", &mirror, Some(ALLOW_RULE));
        let give_back = "settings:\n  enforce:\n    readable: [\"~/.npmrc\"]\n";
        p.write("aileron.yaml", &format!("{policy}{give_back}"));
    }
    Some((p, mirror))
}

/// `~/.npmrc` is a credential store, masked in the box: npm reads it as
/// empty and goes to its default registry, which the policy does not
/// allow (refused, nobody to ask). The mirror and its token are not used,
/// and the token reaches no one. (Were `~/.npmrc` readable, the install
/// would succeed from the mirror, as the next test shows.)
#[test]
fn a_mirror_named_in_the_masked_user_npmrc_is_not_used() {
    let Some((p, mirror)) = user_npmrc_project(false) else {
        return;
    };
    let out = launch(&p, &["npm", "install"]);
    assert!(
        !out.status.success(),
        "npm install worked\n{}",
        show(&p, &out)
    );
    mirror.assert_untouched(&p, &out);
    // Its default registry (`registry.npmjs.org`, unless the machine's
    // own npmrc names another): anywhere but the mirror.
    let elsewhere = support::proxy::proxy_lines(&p);
    assert!(!elsewhere.is_empty(), "{}", show(&p, &out));
    for line in &elsewhere {
        assert_ne!(
            line["action"]["facets"]["http"]["port"],
            json!(mirror.port()),
            "{line}"
        );
        assert_eq!(line["decision"], "ask", "{line}");
        assert_eq!(line["outcome"], "no-terminal", "{line}");
    }
    assert!(!p.audit_text().contains(NPM_TOKEN));
}

/// Given back by the policy, `~/.npmrc` names the mirror in the box: npm
/// installs from it through the proxy, sending the token (which the mirror
/// receives, and the audit log does not hold).
#[test]
fn a_mirror_named_in_the_user_npmrc_given_back_is_used_with_its_token() {
    let Some((p, mirror)) = user_npmrc_project(true) else {
        return;
    };
    let out = launch(&p, &["npm", "install"]);
    assert_npm_installed(&p, &mirror, &out);
    let bearer = format!("Bearer {NPM_TOKEN}");
    let seen = mirror.up.seen();
    let packument = seen
        .iter()
        .find(|s| s.path() == "/box-left-pad")
        .expect("the packument was fetched");
    assert_eq!(packument.header("authorization"), Some(bearer.as_str()));
    assert!(
        !p.audit_text().contains(NPM_TOKEN),
        "the token is in the audit log:\n{}",
        p.audit_text()
    );
}

/// What a poisoned package's script aims at, planted: the user's
/// `~/.bashrc` and a file outside the project (under the build's scratch
/// directory, which the box does not let the tree write), each with the
/// user's text; and where it reports, in the project.
struct Targets {
    before: [(PathBuf, String); 2],
    report: PathBuf,
    _outside: tempfile::TempDir,
}

impl Targets {
    fn plant(p: &Project, report: &str) -> Targets {
        let outside = scratch_dir();
        let before = [
            (p.home.join(".bashrc"), "# the user's\n"),
            (outside.path().join("notes.txt"), "the user's notes\n"),
        ]
        .map(|(f, t)| (f, t.to_owned()));
        for (file, text) in &before {
            std::fs::write(file, text).expect("plant");
        }
        Targets {
            before,
            report: p.path(report),
            _outside: outside,
        }
    }

    fn home(&self) -> &Path {
        &self.before[0].0
    }

    fn outside(&self) -> &Path {
        &self.before[1].0
    }

    /// What the script reported: `home`, `outside`, `direct` → `OK` or
    /// `FAIL ERRNO`.
    fn got(&self, p: &Project, out: &Output) -> BTreeMap<String, String> {
        let report = std::fs::read_to_string(&self.report)
            .unwrap_or_else(|e| panic!("the script left no report ({e})\n{}", show(p, out)));
        report
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    /// Asserts that the script, run without the box, did all it tried.
    fn assert_escaped(&self, p: &Project, mirror: &Mirror, out: &Output) {
        assert!(out.status.success(), "{}", show(p, out));
        let got = self.got(p, out);
        for label in ["home", "outside", "direct"] {
            assert_eq!(got[label], "OK", "{label} without the box: {got:?}");
        }
        mirror.assert_served("/direct", p, out);
    }

    /// Asserts that nothing the script tried left the box: both writes
    /// refused and the files as they were, the direct connection refused
    /// by the box's own loopback. (That the mirror received nothing but
    /// audited requests is [`assert_each_request_audited`]'s.)
    fn assert_held(&self, p: &Project, out: &Output) {
        let got = self.got(p, out);
        for label in ["home", "outside"] {
            assert!(
                ["FAIL EACCES", "FAIL EROFS"].contains(&got[label].as_str()),
                "{label} in the box: {got:?}"
            );
        }
        assert_eq!(got["direct"], "FAIL ECONNREFUSED", "{got:?}");
        for (file, text) in &self.before {
            assert_eq!(&std::fs::read_to_string(file).expect("planted"), text);
        }
    }
}

/// [`policy`] with every program and the mirror allowed: the box, not the
/// policy, is what must hold a poisoned package's script.
fn allowing_all(command: &str, mirror: &Mirror) -> String {
    policy(command, mirror, Some(ALLOW_RULE)).replace("default: ask", "default: allow")
}

/// A poisoned dependency's install script (`postinstall`, which npm runs
/// at install): it appends to `~/.bashrc` and to a file outside the
/// project, and sends a request straight to the mirror's port, not through
/// the proxy; it writes what each attempt gave (`LABEL OK` or `LABEL FAIL
/// ERRNO`) to its report.
const POSTINSTALL: &str = r#"
const T = __TARGETS__;
const fs = require('fs');
const net = require('net');
const report = [];
for (const [label, file] of [['home', T.home], ['outside', T.outside]]) {
  try {
    fs.appendFileSync(file, 'written by an install script\n');
    report.push(label + ' OK');
  } catch (e) {
    report.push(label + ' FAIL ' + e.code);
  }
}
const s = net.connect(T.port, '127.0.0.1');
s.setTimeout(5000);
let ended = false;
const done = (r) => {
  if (ended) return;
  ended = true;
  report.push('direct ' + r);
  s.destroy();
  fs.writeFileSync(T.report, report.join('\n') + '\n');
};
s.on('connect', () => s.end('GET /direct HTTP/1.0\r\n\r\n', () => done('OK')));
s.on('error', (e) => done('FAIL ' + e.code));
s.on('timeout', () => done('FAIL timeout'));
"#;

/// The package whose install script is [`POSTINSTALL`].
const POISONED: &str = "box-postinstall";

/// Publishes [`POISONED`], its script aimed at `p`'s targets, and makes
/// the project depend on it too, under [`allowing_all`].
fn depend_on_poisoned(p: &Project, mirror: &Mirror) -> Targets {
    let targets = Targets::plant(p, "postinstall-report");
    let aims = json!({
        "home": targets.home(),
        "outside": targets.outside(),
        "port": mirror.port(),
        "report": targets.report,
    });
    let script = POSTINSTALL.replace("__TARGETS__", &aims.to_string());
    let manifest = json!({"name": POISONED, "scripts": {"postinstall": "node install.js"}});
    publish_npm(mirror, manifest, &[("install.js", &script)]);
    p.write("package.json", &app_manifest(&["box-left-pad", POISONED]));
    p.write("aileron.yaml", &allowing_all("npm install*", mirror));
    targets
}

/// A poisoned dependency's install script runs in the box, as npm runs it,
/// and its effects stay there: its writes to the home directory and
/// outside the project fail and change nothing, its direct connection to
/// the mirror on the host's loopback finds nothing (the mirror receives
/// only what the proxy audited), and the install itself succeeds. Without
/// the box (`--enforce none`) the same script writes both files and
/// reaches the mirror, so the test cannot pass for another reason.
#[test]
fn a_dependencys_install_script_stays_in_the_box() {
    let Some((open, mirror)) = npm_project(Some(ALLOW_RULE), true) else {
        return;
    };
    let targets = depend_on_poisoned(&open, &mirror);
    let out = launch_with(&open, &["--enforce", "none"], &["npm", "install"]);
    targets.assert_escaped(&open, &mirror, &out);

    let Some((p, mirror)) = npm_project(Some(ALLOW_RULE), true) else {
        return;
    };
    let targets = depend_on_poisoned(&p, &mirror);
    let out = launch(&p, &["npm", "install"]);
    assert_npm_installed(&p, &mirror, &out);
    targets.assert_held(&p, &out);
}

// FINDING: the program `aileron launch` runs passes without a decision
// (docs/enforcement.md, "The program `aileron launch` was asked to run is
// its first exec and passes") and so is no context: what it starts is
// decided alone, its `default: ask` included. With `npm install*` allowed
// and nobody to ask, `aileron launch -- npm install` fails at the first
// dependency with an install script (`npm error code EACCES`, `syscall
// spawn sh`); the audit line is `shell.exec` `sh -c node install.js`,
// decision `ask`, outcome `no-terminal`, "no rule matched; `default:
// ask`". (A shell line `npm install` an agent runs is a
// context, and its scripts give way.) Left to the session's owner; this
// test passes once it is decided.
#[test]
#[ignore = "FINDING: a dependency's install script is refused under an ask default when npm is the launched program"]
fn npm_install_runs_a_dependencys_install_script_under_an_ask_default() {
    let Some((p, mirror)) = npm_project(Some(ALLOW_RULE), true) else {
        return;
    };
    let script = "require('fs').writeFileSync(process.env.INIT_CWD + '/postinstall-ran', 'ok');\n";
    let manifest = json!({"name": "box-builds", "scripts": {"postinstall": "node install.js"}});
    publish_npm(&mirror, manifest, &[("install.js", script)]);
    p.write(
        "package.json",
        &app_manifest(&["box-left-pad", "box-builds"]),
    );
    let out = launch(&p, &["npm", "install"]);
    assert_npm_installed(&p, &mirror, &out);
    assert_eq!(p.read("postinstall-ran"), "ok");
}

// ---------------------------------------------------------------------------
// cargo

const CRATE: &str = "boxed-util";
const CRATE_VERSION: &str = "0.1.0";
const CRATE_LIB: &str = "pub fn answer() -> u32 {\n    42\n}\n";

/// Where a crate's entry is in a registry index (cargo's layout: `1/a`,
/// `2/ab`, `3/a/abc`, `ab/cd/abcd...`).
fn index_path(name: &str) -> String {
    let n = name.to_ascii_lowercase();
    match n.len() {
        1 => format!("1/{n}"),
        2 => format!("2/{n}"),
        3 => format!("3/{}/{n}", &n[..1]),
        _ => format!("{}/{}/{n}", &n[..2], &n[2..4]),
    }
}

/// The SHA-256 of `file`, in hex (`sha256sum`).
fn sha256(file: &Path) -> String {
    let out = Command::new("sha256sum")
        .arg(file)
        .output()
        .expect("sha256sum");
    assert!(out.status.success(), "sha256sum: {}", text(&out.stderr));
    let sum = text(&out.stdout);
    sum.split_whitespace().next().expect("a sum").to_owned()
}

/// Builds the crate (with `build` as its `build.rs`) with `cargo package`
/// (outside the box, a cargo home of its own) and serves it with the
/// sparse index: `config.json`, its index entry and its download (`dl` +
/// `/NAME/VERSION/download`). Returns the `.crate` file's bytes and
/// checksum.
fn publish_crate(mirror: &Mirror, work: &Path, build: Option<&str>) -> (Vec<u8>, String) {
    let src = work.join(CRATE);
    std::fs::create_dir_all(src.join("src")).expect("crate dir");
    std::fs::write(
        src.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{CRATE}\"\nversion = \"{CRATE_VERSION}\"\nedition = \"2021\"\n\
             description = \"served by the box's registry mirror\"\nlicense = \"MIT\"\n\n\
             # Not a member of the workspace the build's directory is in.\n[workspace]\n"
        ),
    )
    .expect("crate manifest");
    std::fs::write(src.join("src/lib.rs"), CRATE_LIB).expect("lib.rs");
    if let Some(script) = build {
        std::fs::write(src.join("build.rs"), script).expect("build.rs");
    }
    let mut package = Command::new("cargo");
    support::isolate(&mut package, &work.join("packer"), &work.join("packer"));
    let out = as_user(&mut package)
        .args(["package", "--allow-dirty", "--no-verify", "--quiet"])
        .current_dir(&src)
        .output()
        .expect("cargo package");
    assert!(out.status.success(), "cargo package: {}", text(&out.stderr));
    let file = src.join(format!("target/package/{CRATE}-{CRATE_VERSION}.crate"));
    let bytes = std::fs::read(&file).expect("the .crate");
    let cksum = sha256(&file);
    let config = json!({"dl": mirror.url("/api/v1/crates"), "api": mirror.url("")});
    let entry = json!({
        "name": CRATE,
        "vers": CRATE_VERSION,
        "deps": [],
        "cksum": cksum,
        "features": {},
        "yanked": false,
    });
    mirror.put("/config.json", config.to_string().into_bytes());
    mirror.put(
        &format!("/{}", index_path(CRATE)),
        format!("{entry}\n").into_bytes(),
    );
    mirror.put(
        &format!("/api/v1/crates/{CRATE}/{CRATE_VERSION}/download"),
        bytes.clone(),
    );
    (bytes, cksum)
}

/// A crate the cargo mirror serves, and a project depending on it whose
/// `.cargo/config.toml` replaces crates.io with the mirror; its home as a
/// user's is after cargo was installed and `cargo_used` (`~/.cargo/registry`
/// exists, empty) or not (`~/.cargo/bin` only). `None` when cargo is missing.
fn cargo_project(
    rule: Option<&str>,
    cargo_used: bool,
) -> Option<(Project, Mirror, Vec<u8>, String)> {
    let mirror = Mirror::start();
    let p = Project::new(&policy("cargo fetch*", &mirror, rule));
    if !runs(&p, "cargo")
        || !available(
            "sha256sum",
            Command::new("sha256sum").arg("--version").output().is_ok(),
        )
    {
        return None;
    }
    let work = scratch_dir();
    let (bytes, cksum) = publish_crate(&mirror, work.path(), None);
    p.write(
        "Cargo.toml",
        &format!(
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [dependencies]\n{CRATE} = \"{CRATE_VERSION}\"\n\n\
             # A workspace of its own, wherever the test's project is.\n[workspace]\n"
        ),
    );
    p.write(
        "src/main.rs",
        "fn main() {\n    println!(\"{}\", boxed_util::answer());\n}\n",
    );
    p.write(
        ".cargo/config.toml",
        &format!(
            "[source.crates-io]\nreplace-with = \"mirror\"\n\n[source.mirror]\nregistry = \"sparse+{}\"\n",
            mirror.url("/")
        ),
    );
    let home_dir = if cargo_used {
        ".cargo/registry"
    } else {
        ".cargo/bin"
    };
    std::fs::create_dir_all(p.home.join(home_dir)).expect("~/.cargo");
    Some((p, mirror, bytes, cksum))
}

/// The files named `name` in the directories below `dir` (cargo names
/// them after the registry's URL and a hash).
fn below(dir: &Path, name: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join(name))
        .filter(|p| p.exists())
        .collect()
}

/// The box's copy of the user's cache `rel` (`.cargo/registry`): where
/// what the tree writes there lands, one per project (the host's cache
/// keeps its bytes).
fn box_copy(p: &Project, rel: &str) -> PathBuf {
    let name = rel.replace('/', "%");
    let copies: Vec<PathBuf> = std::fs::read_dir(p.home.join(".aileron/box-caches"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|project| {
            std::fs::read_dir(project.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.path())
        .filter(|d| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{name}-")))
        })
        .collect();
    assert_eq!(copies.len(), 1, "the box's copies of ~/{rel}: {copies:?}");
    copies[0].join("upper")
}

/// Asserts that `cargo fetch` in the box downloaded the crate from the
/// mirror, through the proxy, into the box's copy of `~/.cargo/registry`
/// (not the host's), and locked it.
fn assert_fetched(p: &Project, mirror: &Mirror, bytes: &[u8], cksum: &str, out: &Output) {
    assert!(out.status.success(), "cargo fetch failed\n{}", show(p, out));
    let host = p.home.join(".cargo/registry/cache");
    assert!(
        below(&host, &format!("{CRATE}-{CRATE_VERSION}.crate")).is_empty(),
        "the host's cache changed\n{}",
        show(p, out)
    );
    let registry = box_copy(p, ".cargo/registry");
    let cached = below(
        &registry.join("cache"),
        &format!("{CRATE}-{CRATE_VERSION}.crate"),
    );
    assert_eq!(cached.len(), 1, "{cached:?}\n{}", show(p, out));
    assert_eq!(std::fs::read(&cached[0]).expect("cached crate"), bytes);
    let unpacked = below(
        &registry.join("src"),
        &format!("{CRATE}-{CRATE_VERSION}/src/lib.rs"),
    );
    assert_eq!(unpacked.len(), 1, "{unpacked:?}\n{}", show(p, out));
    assert_eq!(
        std::fs::read_to_string(&unpacked[0]).expect("lib.rs"),
        CRATE_LIB
    );
    let lock = p.read("Cargo.lock");
    assert!(
        lock.contains(&format!("name = \"{CRATE}\"")) && lock.contains(cksum),
        "{lock}"
    );
    for path in [
        "/config.json".to_owned(),
        format!("/{}", index_path(CRATE)),
        format!("/api/v1/crates/{CRATE}/{CRATE_VERSION}/download"),
    ] {
        mirror.assert_served(&path, p, out);
    }
    assert_each_request_audited(p, mirror, out);
}

/// `cargo fetch` in the box, the mirror allowed by a rule: the crate comes
/// from the sparse index through the proxy, each request audited, into
/// `~/.cargo/registry`, and is locked in `Cargo.lock`.
#[test]
fn cargo_fetch_downloads_from_a_sparse_mirror_on_loopback_through_the_proxy() {
    let Some((p, mirror, bytes, cksum)) = cargo_project(Some(ALLOW_RULE), true) else {
        return;
    };
    let out = launch(&p, &["cargo", "fetch"]);
    assert_fetched(&p, &mirror, &bytes, &cksum, &out);
}

/// A poisoned crate's build script (`build.rs`, which cargo runs at
/// build): the same attempts as [`POSTINSTALL`], the same report.
const BUILD_RS: &str = r#"
use std::io::Write;

fn main() {
    let [home, outside, mirror, report]: [&str; 4] = __TARGETS__;
    let mut lines = String::new();
    for (label, file) in [("home", home), ("outside", outside)] {
        let wrote = std::fs::OpenOptions::new()
            .append(true)
            .open(file)
            .and_then(|mut f| f.write_all(b"written by a build script\n"));
        lines += &format!("{label} {}\n", outcome(wrote));
    }
    let sent = std::net::TcpStream::connect(mirror)
        .and_then(|mut s| s.write_all(b"GET /direct HTTP/1.0\r\n\r\n"));
    lines += &format!("direct {}\n", outcome(sent));
    std::fs::write(report, lines).expect("report");
}

fn outcome(r: std::io::Result<()>) -> String {
    let errno = |e: std::io::Error| match e.raw_os_error() {
        Some(13) => "EACCES".to_owned(),
        Some(30) => "EROFS".to_owned(),
        Some(111) => "ECONNREFUSED".to_owned(),
        other => format!("{other:?}"),
    };
    r.map_or_else(|e| format!("FAIL {}", errno(e)), |()| "OK".to_owned())
}
"#;

/// [`cargo_project`] whose crate has [`BUILD_RS`] as its build script,
/// aimed at the project's targets, under [`allowing_all`].
fn poisoned_crate_project() -> Option<(Project, Mirror, Vec<u8>, String, Targets)> {
    let (p, mirror, _, _) = cargo_project(Some(ALLOW_RULE), true)?;
    let targets = Targets::plant(&p, "build-report");
    let aims = [
        targets.home().display().to_string(),
        targets.outside().display().to_string(),
        mirror.up.authority(),
        targets.report.display().to_string(),
    ];
    let script = BUILD_RS.replace("__TARGETS__", &format!("{aims:?}"));
    let work = scratch_dir();
    let (bytes, cksum) = publish_crate(&mirror, work.path(), Some(&script));
    p.write("aileron.yaml", &allowing_all("cargo build*", &mirror));
    Some((p, mirror, bytes, cksum, targets))
}

/// A poisoned crate's build script runs in the box, as `cargo build` runs
/// it, and its effects stay there (as [`a_dependencys_install_script_stays_in_the_box`]
/// asserts of npm's), while the build, its download through the proxy
/// included, succeeds and its program runs. Without the box the same
/// script writes both files and reaches the mirror.
#[test]
fn a_crates_build_script_stays_in_the_box() {
    let Some((open, mirror, _, _, targets)) = poisoned_crate_project() else {
        return;
    };
    let out = launch_with(&open, &["--enforce", "none"], &["cargo", "build"]);
    targets.assert_escaped(&open, &mirror, &out);

    let Some((p, mirror, bytes, cksum, targets)) = poisoned_crate_project() else {
        return;
    };
    let out = launch(&p, &["cargo", "build"]);
    assert_fetched(&p, &mirror, &bytes, &cksum, &out);
    targets.assert_held(&p, &out);
    let ran = p.command(p.path("target/debug/app")).output().expect("app");
    assert_eq!(text(&ran.stdout), "42\n", "{}", text(&ran.stderr));
}

/// cargo's words for the proxy's refusal of the index's `config.json`.
const CARGO_REFUSED: Refused = Refused {
    says: "got 403",
    first: "/config.json",
};

/// The mirror named by no rule or denied by one: `cargo fetch` fails at
/// the index's `config.json`, the mirror hears nothing, the cache stays empty.
#[test]
fn cargo_fetch_from_a_mirror_the_policy_does_not_allow_fetches_nothing() {
    for rule in [None, Some(DENY_RULE)] {
        let Some((p, mirror, _, _)) = cargo_project(rule, true) else {
            return;
        };
        let out = launch(&p, &["cargo", "fetch"]);
        CARGO_REFUSED.assert(&p, &mirror, rule, &out);
        let cache = p.home.join(".cargo/registry/cache");
        assert!(
            below(&cache, &format!("{CRATE}-{CRATE_VERSION}.crate")).is_empty(),
            "{}",
            show(&p, &out)
        );
    }
}

// Fixed (launch makes a missing cache whose program is on PATH, and cargo's
// lock files); it was: a user who installed cargo with rustup but never fetched a
// crate has `~/.cargo/bin` and no `~/.cargo/registry`; the box makes only
// existing caches writable, so `cargo fetch` downloads the crate and then
// fails: `warning: failed to write cache, path:
// ~/.cargo/registry/index/127.0.0.1-HASH/.cache/...: Permission denied` and
// `error: failed to download replaced source registry crates-io ... failed
// to create directory ~/.cargo/registry/cache/127.0.0.1-HASH ... Permission
// denied (os error 13)`. Left to the box's owner (launch_box.rs); this test
// passes once it is decided.
#[test]
fn cargo_fetch_works_for_a_user_who_never_fetched_a_crate() {
    let Some((p, mirror, bytes, cksum)) = cargo_project(Some(ALLOW_RULE), false) else {
        return;
    };
    let out = launch(&p, &["cargo", "fetch"]);
    assert_fetched(&p, &mirror, &bytes, &cksum, &out);
}

// FINDING: the same for cargo. Launched through rustup's `cargo` (the
// tests above), rustup's proxy execs the toolchain's cargo, which the rule
// `cargo fetch*` allows and which is then the context of what it starts.
// Launched as a cargo that is not rustup's (a distribution's
// `/usr/bin/cargo`; here the toolchain's own file, which `cargo test`
// names in `CARGO`), cargo is the launched program, no context, and its
// `rustc -vV` is decided alone under `default: ask`: `error: could not
// execute process rustc -vV (never executed) ... Permission denied (os
// error 13)`; the audit lines are `rustc -vV`, decision `ask`, outcome
// `no-terminal`. Left to the session's owner; this test passes once it is
// decided.
#[test]
#[ignore = "FINDING: rustc is refused under an ask default when cargo itself is the launched program"]
fn cargo_fetch_launched_as_the_toolchains_own_cargo_runs_rustc() {
    let Some((p, mirror, bytes, cksum)) = cargo_project(Some(ALLOW_RULE), true) else {
        return;
    };
    let Some(cargo) = std::env::var_os("CARGO") else {
        available("the toolchain's cargo (CARGO)", false);
        return;
    };
    let cargo = cargo.to_string_lossy().into_owned();
    let out = launch(&p, &[&cargo, "fetch"]);
    assert_fetched(&p, &mirror, &bytes, &cksum, &out);
}

// Fixed (launch makes a missing cache whose program is on PATH, and cargo's
// lock files); it was: cargo cannot take its package-cache lock in the box: only
// `~/.cargo/registry` and `~/.cargo/git` are writable, and the lock is
// `~/.cargo/.package-cache` (with `.package-cache-mutate` and the
// last-use records `.global-cache` beside it). Cargo goes on without it,
// saying so only in its log (`CARGO_LOG=cargo::util::cache_lock=warn`:
// `failed to acquire cache lock .package-cache: failed to open:
// ~/.cargo/.package-cache ... Permission denied (os error 13)`), so a
// cargo in the box and one outside (or two in the box) are not kept from
// writing the registry cache at once, and `cargo clean gc` loses what the
// box's builds used. Left to the box's owner (launch_box.rs); this test
// passes once cargo holds its lock in the box.
#[test]
fn cargo_fetch_in_the_box_takes_cargos_package_cache_lock() {
    let Some((p, mirror, bytes, cksum)) = cargo_project(Some(ALLOW_RULE), true) else {
        return;
    };
    let out = launch(&p, &["cargo", "fetch"]);
    assert_fetched(&p, &mirror, &bytes, &cksum, &out);
    // The lock (`.global-cache`, cargo's record of what it used, needs a
    // journal beside it, which the box does not let it make in ~/.cargo).
    for file in [".package-cache", ".package-cache-mutate"] {
        assert!(
            p.home.join(".cargo").join(file).is_file(),
            "no ~/.cargo/{file}\n{}",
            show(&p, &out)
        );
    }
}
