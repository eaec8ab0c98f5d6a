//! Threads that wait for work already, so that work is taken without
//! creating a thread or waking one on another CPU (most of a quick
//! decision's round trip), while a request that waits for a human never
//! holds up the others: a thread that takes the last waiting place starts
//! another first, and threads beyond a few idle ones end.
//!
//! The launch session's socket (`server`) and the exec supervisor's
//! notifications wait this way.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What a waiting thread got.
pub enum Waited<T> {
    Work(T),
    /// Nothing this time (a passing error): wait again.
    Again,
    /// The source is gone: the thread ends.
    Gone,
}

/// A source of work and how to do it.
pub trait Waiter: Send + Sync + 'static {
    type Work;
    /// Blocks until there is work.
    fn wait(&self) -> Waited<Self::Work>;
    fn handle(&self, work: Self::Work);
}

/// Threads that wait for `W`'s work, at most `max_waiting` idle.
pub struct Pool<W: Waiter> {
    waiter: W,
    name: &'static str,
    max_waiting: usize,
    /// Threads in, or about to be in, `wait`.
    waiting: AtomicUsize,
}

impl<W: Waiter> Pool<W> {
    /// Starts the first waiting thread.
    pub fn start(waiter: W, name: &'static str, max_waiting: usize) -> Arc<Pool<W>> {
        let pool = Arc::new(Pool {
            waiter,
            name,
            max_waiting,
            waiting: AtomicUsize::new(0),
        });
        pool.start_thread();
        pool
    }

    /// Starts a thread that waits. When none can be started, work queues
    /// until a busy thread comes back.
    fn start_thread(self: &Arc<Self>) {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let pool = Arc::clone(self);
        let started = std::thread::Builder::new()
            .name(self.name.into())
            .spawn(move || pool.work());
        if started.is_err() {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
        }
    }

    fn work(self: Arc<Self>) {
        loop {
            let waited = self.waiter.wait();
            if self.waiting.fetch_sub(1, Ordering::SeqCst) == 1 {
                // The last waiting thread: another takes its place before
                // this one may wait for a human.
                self.start_thread();
            }
            match waited {
                Waited::Work(w) => self.waiter.handle(w),
                Waited::Again => {}
                Waited::Gone => return,
            }
            // Back to waiting, unless enough threads wait already. The
            // count only ever includes threads that will reach `wait`.
            let rejoined = self
                .waiting
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |w| {
                    (w < self.max_waiting).then_some(w + 1)
                });
            if rejoined.is_err() {
                return;
            }
        }
    }
}
