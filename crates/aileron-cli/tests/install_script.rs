//! The repository's `install.sh`, run by `/bin/sh` (dash on Debian, so
//! POSIX sh) against a release made here from the freshly built binaries:
//! the archive `aileron-<version>-<target>.tar.gz` and `SHA256SUMS`, as
//! the release workflow (.github/workflows/release.yml) publishes them,
//! served from a local directory through `AILERON_DOWNLOAD_URL`. The
//! installed `aileron --version` runs; a tampered archive is refused and
//! nothing is installed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const VERSION: &str = env!("CARGO_PKG_VERSION");
const BINARIES: [(&str, &str); 3] = [
    ("aileron", env!("CARGO_BIN_EXE_aileron")),
    ("aileron-sh", env!("CARGO_BIN_EXE_aileron-sh")),
    ("aileron-server", env!("CARGO_BIN_EXE_aileron-server")),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// This system's release target, as install.sh names it.
fn target() -> String {
    let os = match std::env::consts::OS {
        "macos" => "apple-darwin",
        _ => "unknown-linux-gnu",
    };
    format!("{}-{os}", std::env::consts::ARCH)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("command runs")
}

fn sha256(file: &Path) -> String {
    let out = run(Command::new("sha256sum").arg(file));
    assert!(out.status.success(), "sha256sum: {}", text(&out.stderr));
    text(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}

/// A release directory: the archive of the built binaries with README and
/// LICENSE, and SHA256SUMS. Returns the archive's path.
fn make_release(dir: &Path) -> PathBuf {
    let name = format!("aileron-{VERSION}-{}", target());
    let stage = dir.join("stage").join(&name);
    std::fs::create_dir_all(&stage).unwrap();
    // Stripped of the debug build's symbols (as a release build has none):
    // half a gigabyte less to compress.
    for (bin, path) in BINARIES {
        let out = run(Command::new("strip")
            .arg("--strip-debug")
            .arg("-o")
            .arg(stage.join(bin))
            .arg(path));
        assert!(out.status.success(), "strip: {}", text(&out.stderr));
    }
    for doc in ["README.md", "LICENSE"] {
        std::fs::copy(repo().join(doc), stage.join(doc)).unwrap();
    }
    let release = dir.join("release");
    std::fs::create_dir_all(&release).unwrap();
    let archive = release.join(format!("{name}.tar.gz"));
    let out = run(Command::new("tar")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(dir.join("stage"))
        .arg(&name));
    assert!(out.status.success(), "tar: {}", text(&out.stderr));
    // Another target's line first, as in a real release.
    let sums = format!(
        "{}  aileron-{VERSION}-riscv64-unknown-linux-gnu.tar.gz\n{}  {name}.tar.gz\n",
        "0".repeat(64),
        sha256(&archive)
    );
    std::fs::write(release.join("SHA256SUMS"), sums).unwrap();
    archive
}

/// `sh install.sh ARGS` with `url` as the download location, a home of
/// its own and a PATH without the install directory.
fn install(tmp: &Path, url: &str, args: &[&str]) -> Output {
    run(&mut installer(tmp, url, args))
}

fn installer(tmp: &Path, url: &str, args: &[&str]) -> Command {
    let home = tmp.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = Command::new("/bin/sh");
    cmd.arg(repo().join("install.sh"))
        .args(args)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &home)
        .env("AILERON_DOWNLOAD_URL", url);
    cmd
}

#[test]
fn installs_the_release_archive_and_the_installed_aileron_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    make_release(tmp);
    let release = tmp.join("release");

    // The default place, ~/.local/bin, from a file:// URL, the latest release.
    let out = install(tmp, &format!("file://{}", release.display()), &[]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let bin = tmp.join("home/.local/bin");
    let name = format!("aileron-{VERSION}-{}", target());
    for (bin_name, _) in BINARIES {
        let installed = std::fs::read(bin.join(bin_name)).unwrap();
        let released = std::fs::read(tmp.join("stage").join(&name).join(bin_name)).unwrap();
        assert!(installed == released, "{bin_name} differs");
    }
    assert!(
        stdout.contains(&format!("installed aileron {VERSION} ({})", target())),
        "{stdout}"
    );
    // It says what to add to PATH.
    assert!(
        stdout.contains(&format!("export PATH=\"{}:$PATH\"", bin.display())),
        "{stdout}"
    );
    let version = run(Command::new(bin.join("aileron")).arg("--version"));
    assert!(version.status.success(), "{}", text(&version.stderr));
    assert_eq!(text(&version.stdout).trim(), format!("aileron {VERSION}"));

    // --dir and --version, from a plain directory, over an older install.
    let dir = tmp.join("opt/bin");
    let out = install(
        tmp,
        &release.display().to_string(),
        &[
            "--version",
            &format!("v{VERSION}"),
            "--dir",
            &dir.display().to_string(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let version = run(Command::new(dir.join("aileron")).arg("--version"));
    assert_eq!(text(&version.stdout).trim(), format!("aileron {VERSION}"));
    for (name, _) in BINARIES {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join(name))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755, "{name}");
    }
}

#[test]
fn a_tampered_archive_or_a_missing_build_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    let archive = make_release(tmp);
    let release = tmp.join("release");
    let dir = tmp.join("bin");

    // One byte changed after the sums were made.
    let mut bytes = std::fs::read(&archive).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&archive, bytes).unwrap();
    let out = install(
        tmp,
        &release.display().to_string(),
        &["--dir", &dir.display().to_string()],
    );
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{}", text(&out.stdout));
    assert!(err.contains("does not match its SHA-256"), "{err}");
    assert!(!dir.join("aileron").exists(), "installed anyway");

    // No build for the target asked for, and a version that is not there.
    let out = install(
        tmp,
        &release.display().to_string(),
        &[
            "--target",
            "sparc-sun-solaris",
            "--dir",
            &dir.display().to_string(),
        ],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("no build for sparc-sun-solaris"),
        "{}",
        text(&out.stderr)
    );
    let out = install(
        tmp,
        &release.display().to_string(),
        &["--version", "9.9.9", "--dir", &dir.display().to_string()],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("at version 9.9.9"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.exists() || std::fs::read_dir(&dir).unwrap().next().is_none());
}

#[test]
fn a_mac_is_given_the_apple_darwin_build_of_its_processor() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let tmp = tmp.path();
    // A release without macOS builds: the refusal names the build asked for.
    let release = tmp.join("release");
    std::fs::create_dir_all(&release).unwrap();
    let sums = format!(
        "{}  aileron-{VERSION}-x86_64-unknown-linux-gnu.tar.gz\n",
        "0".repeat(64)
    );
    std::fs::write(release.join("SHA256SUMS"), sums).unwrap();
    // uname and sysctl as macOS answers them (`translated`: a shell under
    // Rosetta 2 on Apple silicon), first on PATH.
    for (machine, translated, target) in [
        ("arm64", "0", "aarch64-apple-darwin"),
        ("x86_64", "0", "x86_64-apple-darwin"),
        ("x86_64", "1", "aarch64-apple-darwin"),
    ] {
        let fake = tmp.join(format!("mac-{machine}-{translated}"));
        std::fs::create_dir_all(&fake).unwrap();
        for (name, script) in [
            (
                "uname",
                format!("[ \"$1\" = -s ] && echo Darwin || echo {machine}\n"),
            ),
            ("sysctl", format!("echo {translated}\n")),
        ] {
            let path = fake.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{script}")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let out = run(installer(tmp, &release.display().to_string(), &[]).env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", fake.display()),
        ));
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{}", text(&out.stdout));
        assert!(
            err.contains(&format!("the release has no build for {target};")),
            "{machine}, translated {translated}: {err}"
        );
    }
}

#[test]
fn help_names_the_options() {
    let tmp = tempfile::tempdir().unwrap();
    let out = install(tmp.path(), "/nowhere", &["--help"]);
    assert!(out.status.success());
    let help = text(&out.stdout);
    for option in [
        "--version",
        "--dir",
        "--target",
        "AILERON_INSTALL_DIR",
        "AILERON_DOWNLOAD_URL",
    ] {
        assert!(help.contains(option), "{option}: {help}");
    }
    let out = install(tmp.path(), "/nowhere", &["--bogus"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("unknown option: --bogus"));
}
