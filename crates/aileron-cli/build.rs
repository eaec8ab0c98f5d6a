//! Links `aileron-sh` and `aileron` as position-dependent executables.
//!
//! Both start once per agent action (`aileron hook`). As PIEs, the dynamic
//! loader first applied their relocations (16,000 for the shim, more for
//! `aileron`), writing tens of pages of read-only data; a fixed-address
//! executable needs none. `aileron-server`, the one that listens on the
//! network, stays a PIE and keeps its code's address randomized.
//! A static build (`crt-static`) is left as rustc links it.

fn main() {
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    if linux && !features.split(',').any(|f| f == "crt-static") {
        for bin in ["aileron-sh", "aileron"] {
            println!("cargo:rustc-link-arg-bin={bin}=-no-pie");
        }
    }
}
