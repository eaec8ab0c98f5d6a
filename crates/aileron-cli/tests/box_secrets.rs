//! The box masks the user's credential stores (issue 30): under `aileron
//! launch` at its default enforcement, a Python program as the launched
//! agent itself reads each store (ssh private keys, cloud credentials,
//! registry tokens, keyrings) as absent or empty, also through a link it
//! plants in the project, while what holds no secret (public keys,
//! `known_hosts`) and what the policy gives back by name stay readable.
//! The same program without the box reads every secret, so that no test
//! passes because reading failed for another reason.

#![cfg(target_os = "linux")]

mod support;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use support::{Project, no_tty, text};

/// Reads each path given (and lists the directories), plants a symlink
/// and tries a hard link to a secret in the project, and prints one JSON
/// object: path → what was read (`null`: could not be read).
const READER: &str = r#"
import json, os, sys
out = {}
def read(p):
    try:
        if os.path.isdir(p):
            return "dir:" + ",".join(sorted(os.listdir(p)))
        with open(p, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None
home = os.environ["HOME"]
for rel in sys.argv[1:]:
    out[rel] = read(os.path.join(home, rel))
try:
    os.symlink(os.path.join(home, ".aws/credentials"), "aws-link")
except OSError:
    pass
out["link:aws"] = read("aws-link")
try:
    os.link(os.path.join(home, ".netrc"), "netrc-hard")
    out["hard:netrc"] = read("netrc-hard")
except OSError:
    out["hard:netrc"] = None
print(json.dumps(out))
"#;

const STORES: &[(&str, &str)] = &[
    (
        ".ssh/id_ed25519",
        "-----BEGIN OPENSSH PRIVATE KEY----- ssh-secret",
    ),
    (
        ".ssh/deploy",
        "-----BEGIN OPENSSH PRIVATE KEY----- deploy-secret",
    ),
    (".ssh/id_ed25519.pub", "ssh-ed25519 AAAA public"),
    (".ssh/known_hosts", "github.com ssh-ed25519 AAAA"),
    (".aws/credentials", "aws_secret_access_key = aws-secret"),
    (".config/gcloud/credentials.db", "gcloud-secret"),
    (".kube/config", "token: kube-secret"),
    (
        ".docker/config.json",
        "{\"auths\": {\"x\": {\"auth\": \"docker-secret\"}}}",
    ),
    (".netrc", "machine x login u password netrc-secret"),
    (".git-credentials", "https://u:git-secret@example.com"),
    (".npmrc", "//registry.example/:_authToken=npm-secret"),
    (".pypirc", "password = pypi-secret"),
    (".gnupg/private-keys-v1.d/k.key", "gpg-secret"),
];

fn run(p: &Project, enforce: &[&str]) -> Value {
    let mut args = vec!["launch", "--no-proxy"];
    args.extend_from_slice(enforce);
    // A real interpreter, not a wrapper script of a version manager.
    args.extend_from_slice(&["--", "/usr/bin/python3", "-c", READER]);
    let rels: Vec<&str> = STORES
        .iter()
        .map(|(r, _)| *r)
        .chain([".aws", ".gnupg"])
        .collect();
    args.extend_from_slice(&rels);
    let mut cmd = p.aileron(&args);
    let out = no_tty(&mut cmd)
        .stdin(Stdio::null())
        .output()
        .expect("aileron launch runs");
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{:?}\n{stdout}\n{}",
        out.status,
        text(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn project(policy: &str) -> Project {
    let p = Project::new(policy);
    for (rel, secret) in STORES {
        let path = p.home.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, secret).unwrap();
    }
    p
}

/// Nothing read holds a secret: each store is absent or empty.
fn assert_masked(got: &Value) {
    let all = got.to_string();
    for (_, secret) in STORES {
        if secret.contains("secret") {
            let word = secret.split_whitespace().last().unwrap();
            let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '-');
            assert!(!all.contains(word), "`{word}` was read in the box: {got:#}");
        }
    }
    assert_eq!(got[".aws"], "dir:", "{got:#}");
    assert_eq!(got[".gnupg"], "dir:", "{got:#}");
}

#[test]
fn the_box_masks_credential_stores_by_default() {
    let p = project("version: 1\ndefault: allow\n");
    // Without the box, every secret is there to read.
    let open = run(&p, &["--enforce", "none"]);
    assert_eq!(
        open[".aws/credentials"],
        "aws_secret_access_key = aws-secret"
    );
    assert_eq!(open["link:aws"], "aws_secret_access_key = aws-secret");
    let _ = std::fs::remove_file(p.path("aws-link"));
    let _ = std::fs::remove_file(p.path("netrc-hard"));

    let got = run(&p, &[]);
    assert_masked(&got);
    // What holds no secret stays.
    assert_eq!(got[".ssh/id_ed25519.pub"], "ssh-ed25519 AAAA public");
    assert_eq!(got[".ssh/known_hosts"], "github.com ssh-ed25519 AAAA");
    // The audit log names what was masked.
    let audit = p.audit_text();
    assert!(
        audit.contains("the box masks these credential stores"),
        "{audit}"
    );
    assert!(audit.contains(".aws"), "{audit}");
}

#[test]
fn a_policy_gives_a_store_back_by_name() {
    let p = project(
        "version: 1\ndefault: allow\nsettings:\n  enforce:\n    readable: [\"~/.npmrc\"]\n",
    );
    let got = run(&p, &[]);
    assert_eq!(got[".npmrc"], "//registry.example/:_authToken=npm-secret");
    // Masked: empty, or unreadable (Landlock keeps it so).
    assert!(got[".netrc"] == "" || got[".netrc"].is_null(), "{got:#}");
    assert_eq!(got[".aws"], "dir:", "{got:#}");
}

/// A project's files that a rule of the policy denies reading (its
/// `.env`) read as empty in the box, whatever program reads them; the
/// others stay, and the audit log names what was masked.
#[test]
fn files_a_rule_denies_reading_are_masked() {
    let p = project(
        "version: 1\ndefault: allow\ndeny:\n  - id: no-env\n    when: {type: fs.read, fs.path: {path: \"**/.env*\"}}\n",
    );
    p.write(".env", "DB_PASSWORD=env-secret\n");
    p.write("config/.env.local", "TOKEN=env-local-secret\n");
    p.write("src/app.py", "print('hello')\n");
    let reader = r#"
import json
out = {}
for rel in [".env", "config/.env.local", "src/app.py"]:
    with open(rel) as f:
        out[rel] = f.read()
# Through an alias of the working directory.
with open("/proc/self/cwd/.e" + "nv") as f:
    out["alias"] = f.read()
print(json.dumps(out))
"#;
    let mut cmd = p.aileron(&[
        "launch",
        "--no-proxy",
        "--",
        "/usr/bin/python3",
        "-c",
        reader,
    ]);
    let out = no_tty(&mut cmd).stdin(Stdio::null()).output().unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let got: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(got[".env"], "", "{got:#}");
    assert_eq!(got["config/.env.local"], "", "{got:#}");
    assert_eq!(got["alias"], "", "{got:#}");
    assert_eq!(got["src/app.py"], "print('hello')\n", "{got:#}");
    let audit = p.audit_text();
    assert!(audit.contains("a rule denies reading"), "{audit}");
    assert!(audit.contains("config/.env.local"), "{audit}");
}

/// Pushes a character into a terminal's input (`TIOCSTI`, on /dev/null:
/// a terminal answers it, anything else says it is none) and reads the
/// session keyring (`keyctl`), printing the errno of each (0: done).
const TERMINAL_AND_KEYRING: &str = r#"
import ctypes, fcntl, os, platform, termios
def errno_of(f):
    try:
        f()
        return 0
    except OSError as e:
        return e.errno
fd = os.open("/dev/null", os.O_RDWR)
print("tiocsti", errno_of(lambda: fcntl.ioctl(fd, termios.TIOCSTI, b"x")))
libc = ctypes.CDLL(None, use_errno=True)
# keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, create)
keyctl = {"x86_64": 250, "aarch64": 219}[platform.machine()]
r = libc.syscall(keyctl, 0, -3, 1)
print("keyctl", 0 if r >= 0 else ctypes.get_errno())
"#;

/// A program of the box can neither type into the terminal the shell
/// outside reads after the agent ends, nor read the kernel's keyrings;
/// outside the box the same calls get to the kernel (ENOTTY: /dev/null is
/// no terminal; the keyring is there).
#[test]
fn the_box_types_nothing_into_the_terminal_and_reads_no_keyring() {
    let p = Project::new("version: 1\ndefault: allow\n");
    let run = |enforce: &str| {
        let mut cmd = p.aileron(&[
            "launch",
            "--no-proxy",
            "--enforce",
            enforce,
            "--",
            "/usr/bin/python3",
            "-c",
            TERMINAL_AND_KEYRING,
        ]);
        let out = no_tty(&mut cmd)
            .stdin(Stdio::null())
            .output()
            .expect("aileron launch runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let boxed = run("all");
    assert!(boxed.contains("tiocsti 1\n"), "{boxed}");
    assert!(boxed.contains("keyctl 1\n"), "{boxed}");
    let open = run("none");
    assert!(open.contains("tiocsti 25\n"), "{open}");
    assert!(open.contains("keyctl 0\n"), "{open}");
}

/// Prints the user it runs as, its process number, what `~/.netrc` reads
/// as and whether an address outside answers.
const AS_A_USER: &str = r#"
import os, socket
print("uid", os.getuid(), "pid", os.getpid())
try:
    print("netrc", repr(open(os.path.expanduser("~/.netrc")).read()))
except OSError as e:
    print("netrc errno", e.errno)
try:
    socket.create_connection(("192.0.2.1", 80), timeout=2)
    print("net open")
except OSError as e:
    print("net errno", e.errno)
"#;

/// The box starts for a user other than root (its id maps written before
/// the processes that hold launch's memory stop being dumpable; the
/// supervisor, without CAP_SYS_PTRACE, reads the agent's exec). Run as
/// root, the test drops to `nobody` with `setpriv`, the binaries copied
/// where that user can run them.
#[test]
fn the_box_starts_for_a_user_other_than_root() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path();
    let (home, proj, bin) = (root.join("home"), root.join("proj"), root.join("bin"));
    for d in [&home, &proj, &bin] {
        std::fs::create_dir_all(d).unwrap();
    }
    for (name, from) in [
        ("aileron", support::AILERON),
        ("aileron-sh", support::SHIM),
        (
            "aileron-server",
            &Path::new(support::AILERON)
                .with_file_name("aileron-server")
                .to_string_lossy(),
        ),
    ] {
        std::fs::copy(from, bin.join(name)).expect("copy the binaries");
    }
    std::fs::write(proj.join("aileron.yaml"), "version: 1\ndefault: allow\n").unwrap();
    std::fs::write(home.join(".netrc"), "machine x password netrc-secret\n").unwrap();
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let mut cmd = if uid == 0 {
        for p in [root, &home, &proj, &bin] {
            std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
        }
        for f in [home.join(".netrc"), proj.join("aileron.yaml")] {
            std::os::unix::fs::chown(f, Some(65534), Some(65534)).unwrap();
        }
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
        c.arg(bin.join("aileron"));
        c
    } else {
        Command::new(bin.join("aileron"))
    };
    cmd.args(["launch", "--", "/usr/bin/python3", "-c", AS_A_USER])
        .current_dir(&proj)
        .env_clear()
        .env("HOME", &home)
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null());
    let out = no_tty(&mut cmd).output().expect("aileron launch runs");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let user = if uid == 0 { 65534 } else { uid };
    // Its own PID namespace: the agent is the second process in it.
    assert!(stdout.contains(&format!("uid {user} pid 2\n")), "{stdout}");
    assert!(!stdout.contains("netrc-secret"), "{stdout}");
    assert!(stdout.contains("net errno"), "{stdout}");
}
