//! The shell shim; see the `aileron-shim` crate.
//!
//! It starts once per agent command, so it skips std's runtime start-up
//! and never frees (see `aileron_cli::lean`). Under a launch session it
//! does not even start the C library: its entry point (below, named to the
//! linker by build.rs) first tries `aileron_shim::prestart::run`.

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

// The process entry point. It keeps the initial stack pointer and `rdx`
// (the dynamic loader's exit function, when there is one) in registers the
// call preserves, tries the session path, and, if that returns, restores
// both and starts the C library through its own entry, `_start`, as if
// nothing had run.
#[cfg(all(
    target_os = "linux",
    target_arch = "x86_64",
    target_pointer_width = "64"
))]
std::arch::global_asm!(
    ".globl aileron_sh_entry",
    ".type aileron_sh_entry, @function",
    "aileron_sh_entry:",
    "mov r12, rsp",
    "mov r13, rdx",
    "mov rdi, rsp",
    "call {run}",
    "mov rsp, r12",
    "mov rdx, r13",
    "jmp _start",
    ".size aileron_sh_entry, . - aileron_sh_entry",
    run = sym aileron_shim::prestart::run,
);
