//! How `aileron-sh` and `aileron` are linked: for start-up speed, since both
//! start once per agent action (`aileron-sh` for each shell command,
//! `aileron hook` for each tool call).
//!
//! - Both are position-dependent executables. As PIEs, the dynamic loader
//!   first applied their relocations (16,000 for the shim, more for
//!   `aileron`), writing tens of pages of read-only data.
//! - `aileron-sh` is also linked statically where the C library's static
//!   archives are installed (glibc's `libc.a`, in Debian's `libc6-dev`):
//!   no dynamic loader, no shared objects to map and bind, about a tenth
//!   less time per command (see `benches/shim.rs`). Elsewhere it is linked
//!   dynamically, as before.
//!
//! - Both place the functions of one decision next to each other
//!   (`hot-symbols.txt`, written by `scripts/hot-symbols`), so a start maps
//!   fewer pages of code: the order is handed to LLD, rustc's linker for
//!   x86-64 Linux, and skipped when another linker is chosen.
//!
//! `aileron-server`, the one that listens on the network, stays a PIE and
//! keeps its code's address randomized.
//!
//! Each of these is an optimisation, never a requirement: on other systems
//! and architectures the binaries link the usual way, and
//! `AILERON_PORTABLE_BUILD=1` switches all of them off (a PIE, dynamically
//! linked, std's entry point and the linker's own order), for packagers
//! and to check that such a build still works.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=AILERON_PORTABLE_BUILD");
    if std::env::var_os("AILERON_PORTABLE_BUILD").is_some_and(|v| !v.is_empty() && v != "0") {
        return;
    }
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    let glibc = std::env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    // A `crt-static` build is already static and chose its own relocation model.
    if !linux || features.split(',').any(|f| f == "crt-static") {
        return;
    }
    for bin in ["aileron-sh", "aileron"] {
        println!("cargo:rustc-link-arg-bin={bin}=-no-pie");
    }
    if links_with_rust_lld() {
        let hot = Path::new(env!("CARGO_MANIFEST_DIR")).join("hot-symbols.txt");
        println!("cargo:rerun-if-changed={}", hot.display());
        let script = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
            .join("hot-first.ld");
        let patterns = std::fs::read_to_string(&hot).unwrap_or_default();
        if std::fs::write(&script, hot_first_script(&patterns)).is_ok() {
            for bin in ["aileron-sh", "aileron"] {
                println!("cargo:rustc-link-arg-bin={bin}=-Wl,-T,{}", script.display());
            }
        }
    }
    // The shim's own entry point, which takes the launch session's path
    // before the C library starts (src/bin/aileron-sh.rs).
    // (x86-64 with 64-bit pointers: not x32.)
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64")
        && std::env::var("CARGO_CFG_TARGET_POINTER_WIDTH").as_deref() == Ok("64")
    {
        println!("cargo:rustc-link-arg-bin=aileron-sh=-Wl,--entry=aileron_sh_entry");
    }
    if !glibc {
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let dir = out.join("static-libs");
    let Some(cc) = target_compiler() else {
        println!(
            "cargo:warning=no C compiler named for the target (CC_<target>): aileron-sh is linked dynamically and starts slower"
        );
        return;
    };
    match static_library_scripts(&cc, &dir, &out) {
        Some(()) => {
            println!("cargo:rustc-link-arg-bin=aileron-sh=-static");
            println!("cargo:rustc-link-arg-bin=aileron-sh=-L{}", dir.display());
        }
        None => println!(
            "cargo:warning=glibc's static libraries (libc.a) are missing or do not link: aileron-sh is linked dynamically and starts slower"
        ),
    }
}

/// A linker script that puts the functions named in `patterns` (one
/// section-name glob per line: mangled names with their hashes left as
/// `*`, so the list holds across compilers and profiles) first in the
/// program's code, in that order.
fn hot_first_script(patterns: &str) -> String {
    let mut script = String::from("SECTIONS {\n  .text.hot : {\n");
    for pattern in patterns.lines().map(str::trim).filter(|p| !p.is_empty()) {
        script.push_str(&format!("    *(.text.{pattern})\n"));
    }
    script.push_str("  }\n} INSERT BEFORE .text;\n");
    script
}

/// Whether rustc links with its own LLD: its default for x86-64 Linux,
/// unless a linker or the self-contained switch is chosen (GNU ld would
/// refuse the symbol order's options).
fn links_with_rust_lld() -> bool {
    let target = std::env::var("TARGET").unwrap_or_default();
    let linker_var = format!(
        "CARGO_TARGET_{}_LINKER",
        target.to_uppercase().replace('-', "_")
    );
    for var in ["RUSTC_LINKER", linker_var.as_str()] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    target == "x86_64-unknown-linux-gnu"
        && std::env::var_os("RUSTC_LINKER").is_none()
        && std::env::var_os(&linker_var).is_none()
        && !flags
            .split('\x1f')
            .any(|f| f.contains("linker") || f.contains("link-self-contained"))
}

/// The C compiler for the target, as the `cc` crate would choose it
/// (program and its leading arguments, e.g. `ccache gcc`). `None` when
/// cross-compiling without one named: the host's `cc` would find the
/// host's archives. Each variable consulted reruns this script when it
/// changes.
fn target_compiler() -> Option<Vec<String>> {
    let target = std::env::var("TARGET").ok()?;
    let host = std::env::var("HOST").ok()?;
    let named = [
        format!("CC_{target}"),
        format!("CC_{}", target.replace('-', "_")),
        "TARGET_CC".to_owned(),
    ]
    .into_iter()
    .chain((target == host).then(|| "CC".to_owned()))
    .find_map(|var| {
        println!("cargo:rerun-if-env-changed={var}");
        std::env::var(var).ok().filter(|v| !v.trim().is_empty())
    });
    let cc = match named {
        Some(cc) => cc,
        None if target == host => "cc".to_owned(),
        None => return None,
    };
    Some(cc.split_whitespace().map(str::to_owned).collect())
}

/// rustc asks for the C libraries as shared ones (`-Bdynamic -lgcc_s -lc
/// ...`) and has no per-binary switch for that. For each, a linker script
/// named like the shared library is written to `dir`, naming the static
/// archive instead; `dir` is searched before the system's directories for
/// the shim alone. `None` when an archive is missing or a static program
/// does not link with this compiler.
fn static_library_scripts(cc: &[String], dir: &Path, scratch: &Path) -> Option<()> {
    const LIBRARIES: &[(&str, &[&str])] = &[
        // The unwinder and compiler support that libgcc_s.so holds.
        ("gcc_s", &["libgcc_eh.a", "libgcc.a"]),
        // The C library calls into compiler support too (on aarch64: the
        // outline atomics, 128-bit float helpers, the C personality
        // routine), and GNU ld only looks back within a group.
        ("c", &["libc.a", "libgcc_eh.a", "libgcc.a"]),
        ("m", &["libm.a"]),
        ("rt", &["librt.a"]),
        ("pthread", &["libpthread.a"]),
        ("dl", &["libdl.a"]),
        ("util", &["libutil.a"]),
    ];
    let program = scratch.join("static-probe.c");
    std::fs::write(&program, "int main(void) { return 0; }\n").ok()?;
    let linked = compiler(cc)
        .args(["-static", "-o"])
        .arg(scratch.join("static-probe"))
        .arg(&program)
        .output()
        .ok()?;
    if !linked.status.success() {
        return None;
    }
    std::fs::create_dir_all(dir).ok()?;
    for (name, archives) in LIBRARIES {
        let mut paths = Vec::new();
        for archive in *archives {
            let path = archive_path(cc, archive)?;
            // A compiler upgrade that moves an archive reruns this script.
            println!("cargo:rerun-if-changed={}", path.display());
            paths.push(format!("\"{}\"", path.display()));
        }
        let script = format!("GROUP ( {} )\n", paths.join(" "));
        std::fs::write(dir.join(format!("lib{name}.so")), script).ok()?;
    }
    Some(())
}

fn compiler(cc: &[String]) -> Command {
    let mut cmd = Command::new(&cc[0]);
    cmd.args(&cc[1..]);
    cmd
}

/// Where the C compiler finds `name`; it echoes the bare name when it has none.
fn archive_path(cc: &[String], name: &str) -> Option<PathBuf> {
    let out = compiler(cc)
        .arg(format!("-print-file-name={name}"))
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    (path.is_absolute() && path.exists()).then_some(path)
}
