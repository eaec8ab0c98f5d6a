//! The shell shim; see the `aileron-shim` crate.
//!
//! It starts once per agent command, so it skips std's runtime start-up
//! and never frees (see `aileron_cli::lean`).

#![no_main]

use aileron_cli::lean::{self, OneShot};
use std::ffi::{c_char, c_int};

#[global_allocator]
static ALLOC: OneShot = OneShot::on();

#[unsafe(no_mangle)]
extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    // SAFETY: first thing in main.
    unsafe { lean::start() };
    lean::finish(aileron_shim::main())
}
