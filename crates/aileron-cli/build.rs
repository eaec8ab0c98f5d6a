//! Links `aileron-sh` as a position-dependent executable.
//!
//! The shim starts once per agent command. As a PIE, the dynamic loader
//! first applied ~16,000 relocations to it, writing ~80 pages of read-only
//! data (a third of its page faults); a fixed-address executable needs none.
//! A static build (`crt-static`) is left as rustc links it.

fn main() {
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    if linux && !features.split(',').any(|f| f == "crt-static") {
        println!("cargo:rustc-link-arg-bin=aileron-sh=-no-pie");
    }
}
