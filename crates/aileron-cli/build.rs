//! Links `aileron-sh` as a position-dependent executable.
//!
//! The shim starts once per agent command. As a PIE, the dynamic loader
//! first applied ~16,000 relocations to it, writing ~80 pages of read-only
//! data (a third of its page faults); a fixed-address executable needs none.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bin=aileron-sh=-no-pie");
    }
}
