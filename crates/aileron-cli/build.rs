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
//! `aileron-server`, the one that listens on the network, stays a PIE and
//! keeps its code's address randomized.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
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
    if glibc {
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
        let dir = out.join("static-libs");
        if static_library_scripts(&dir).is_some() {
            println!("cargo:rustc-link-arg-bin=aileron-sh=-static");
            println!("cargo:rustc-link-arg-bin=aileron-sh=-L{}", dir.display());
        } else {
            println!(
                "cargo:warning=glibc's static libraries (libc.a) were not found: aileron-sh is linked dynamically and starts slower"
            );
        }
    }
}

/// rustc asks for the C libraries as shared ones (`-Bdynamic -lgcc_s -lc
/// ...`) and has no per-binary switch for that. For each, a linker script
/// named like the shared library is written to `dir`, naming the static
/// archive instead; `dir` is searched before the system's directories for
/// the shim alone. `None` when an archive is missing.
fn static_library_scripts(dir: &Path) -> Option<()> {
    const LIBRARIES: &[(&str, &[&str])] = &[
        // The unwinder and compiler support that libgcc_s.so holds.
        ("gcc_s", &["libgcc_eh.a", "libgcc.a"]),
        ("c", &["libc.a"]),
        ("m", &["libm.a"]),
        ("rt", &["librt.a"]),
        ("pthread", &["libpthread.a"]),
        ("dl", &["libdl.a"]),
        ("util", &["libutil.a"]),
    ];
    std::fs::create_dir_all(dir).ok()?;
    for (name, archives) in LIBRARIES {
        let paths = archives
            .iter()
            .map(|a| archive_path(a).map(|p| p.display().to_string()))
            .collect::<Option<Vec<_>>>()?;
        let script = format!("GROUP ( {} )\n", paths.join(" "));
        std::fs::write(dir.join(format!("lib{name}.so")), script).ok()?;
    }
    Some(())
}

/// Where the C compiler finds `name`; it echoes the bare name when it has none.
fn archive_path(name: &str) -> Option<PathBuf> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let out = Command::new(cc)
        .arg(format!("-print-file-name={name}"))
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    (path.is_absolute() && path.exists()).then_some(path)
}
