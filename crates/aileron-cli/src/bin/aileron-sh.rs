//! The shell shim; see the `aileron-shim` crate.
//!
//! It starts once per agent command, so it skips std's runtime start-up
//! (`no_main`), whose stack-guard set-up alone parsed `/proc/self/maps` and
//! made a dozen system calls, and does here the two parts the shim relies on.

#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ffi::{c_char, c_int};

#[unsafe(no_mangle)]
extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    // SAFETY: plain libc calls on the standard descriptors and one signal.
    unsafe {
        // A closed stdin, stdout or stderr is opened on /dev/null, so that
        // no file the shim opens (the audit log) takes its place.
        for fd in 0..3 {
            if libc::fcntl(fd, libc::F_GETFD) == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
                && libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) != fd
            {
                libc::abort();
            }
        }
        // A peer that went away is an error to handle, not death by SIGPIPE
        // (the real shell still gets the default: `exec` resets it).
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    c_int::from(aileron_shim::main())
}

/// The shim lives for one command and then execs or exits, so small blocks
/// are carved from large chunks and never freed: loading a cached policy
/// makes over a thousand allocations, and malloc's bookkeeping for them
/// cost about a fifth of the shim's instructions. Large blocks (scripts
/// read from stdin, big buffers) go to the system allocator as usual.
struct OneShot;

#[global_allocator]
static ALLOC: OneShot = OneShot;

/// Blocks above this size, or aligned more strictly, use the system allocator.
const SMALL: usize = 4096;
const CHUNK: usize = 256 * 1024;

thread_local! {
    /// This thread's free space: next byte and end of its current chunk
    /// (per thread, so no lock; freeing is a no-op from any thread).
    static ARENA: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

fn is_small(layout: Layout) -> bool {
    layout.size() <= SMALL && layout.align() <= SMALL
}

unsafe impl GlobalAlloc for OneShot {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !is_small(layout) {
            // SAFETY: forwarded as given.
            return unsafe { System.alloc(layout) };
        }
        let (next, mut end) = ARENA.get();
        let mut start = next.next_multiple_of(layout.align());
        if next == 0 || start + layout.size() > end {
            // SAFETY: CHUNK and SMALL are non-zero and SMALL is a power of two.
            let chunk = unsafe { System.alloc(Layout::from_size_align_unchecked(CHUNK, SMALL)) };
            if chunk.is_null() {
                return chunk;
            }
            start = chunk as usize;
            end = start + CHUNK;
        }
        ARENA.set((start + layout.size(), end));
        start as *mut u8
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !is_small(layout) {
            // SAFETY: a block that is not small came from `System.alloc` with this layout.
            unsafe { System.dealloc(ptr, layout) }
        }
    }
}
