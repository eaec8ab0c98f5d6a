//! A process start for the binaries that run before every agent action
//! (`aileron-sh` for each shell command, `aileron hook` for each tool call):
//! no std runtime set-up, and an allocator that never frees.
//!
//! Each binary declares `#![no_main]`, an `extern "C" fn main` that calls
//! [`start`] first, and a `#[global_allocator]` of type [`OneShot`].

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// What std's runtime start-up did that these binaries rely on. (It also
/// set up stack-overflow reporting, whose stack-guard lookup alone parsed
/// `/proc/self/maps` and made a dozen system calls.)
///
/// # Safety
/// Call once, first thing in `main`, before any file is opened.
pub unsafe fn start() {
    // SAFETY: plain libc calls on the standard descriptors and one signal.
    unsafe {
        // A closed stdin, stdout or stderr is opened on /dev/null, so that
        // no file opened later (the audit log) takes its place.
        for fd in 0..3 {
            if libc::fcntl(fd, libc::F_GETFD) == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
                && libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) != fd
            {
                libc::abort();
            }
        }
        // A peer that went away is an error to handle, not death by SIGPIPE
        // (std's `Command` restores the default for the programs it starts).
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// std's runtime flushed standard output when `main` returned; without it,
/// a binary must do so itself.
pub fn finish(code: u8) -> libc::c_int {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    libc::c_int::from(code)
}

/// An allocator for a process that lives for one decision and then execs
/// or exits: small blocks are carved from large chunks and never freed.
/// Loading a cached policy makes over a thousand allocations, and malloc's
/// bookkeeping for them cost about a fifth of the shim's instructions.
/// Large blocks (scripts, events, big buffers) use the system allocator.
///
/// Switched on before the first allocation, or never: a long-running
/// command (`aileron launch`) keeps the system allocator.
pub struct OneShot {
    on: AtomicBool,
}

impl OneShot {
    pub const fn on() -> OneShot {
        OneShot {
            on: AtomicBool::new(true),
        }
    }

    pub const fn off() -> OneShot {
        OneShot {
            on: AtomicBool::new(false),
        }
    }

    /// # Safety
    /// Only before anything has been allocated.
    pub unsafe fn switch_on(&self) {
        self.on.store(true, Ordering::Relaxed);
    }

    fn carves(&self, layout: Layout) -> bool {
        layout.size() <= SMALL && layout.align() <= SMALL && self.on.load(Ordering::Relaxed)
    }
}

/// Blocks above this size, or aligned more strictly, use the system allocator.
const SMALL: usize = 4096;
const CHUNK: usize = 256 * 1024;

thread_local! {
    /// This thread's free space: next byte and end of its current chunk
    /// (per thread, so no lock; freeing is a no-op from any thread).
    static ARENA: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

unsafe impl GlobalAlloc for OneShot {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !self.carves(layout) {
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
        if !self.carves(layout) {
            // SAFETY: a block that is not carved came from `System.alloc` with this layout.
            unsafe { System.dealloc(ptr, layout) }
        }
    }
}
