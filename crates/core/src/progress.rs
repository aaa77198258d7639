//! Progress reporting through a callback: long library calls (encoding a corpus, ranking a
//! split, running a generation grid) report to a [`Progress`], and the caller decides how to
//! show it. Libraries never draw anything themselves; the `pgraphrag` CLI renders a bar.
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use pgraphrag_core::progress::{NoProgress, Progress};
//!
//! #[derive(Default)]
//! struct Count(AtomicU64);
//! impl Progress for Count {
//!     fn start(&self, _total: u64, _what: &str) {}
//!     fn advance(&self, n: u64) { self.0.fetch_add(n, Ordering::Relaxed); }
//! }
//! fn work(p: &dyn Progress) {
//!     p.start(3, "items");
//!     for _ in 0..3 { p.advance(1); }
//!     p.finish();
//! }
//! let c = Count::default();
//! work(&c);
//! assert_eq!(c.0.load(Ordering::Relaxed), 3);
//! work(&NoProgress); // or `&()`
//! ```

/// Receives progress of one long operation: [`start`](Progress::start) once, then
/// [`advance`](Progress::advance) as units finish, then [`finish`](Progress::finish).
///
/// Implementations must be cheap and must not fail; `Send + Sync` so one reporter can be
/// shared by worker threads.
pub trait Progress: Send + Sync {
    /// The operation starts: `total` units of `what` (e.g. `"users"`, `"texts"`, `"prompts"`).
    fn start(&self, total: u64, what: &str);
    /// `n` more units are done.
    fn advance(&self, n: u64);
    /// A short status line (e.g. `"12 cached, 3 generated"`). Ignored by default.
    fn message(&self, _message: &str) {}
    /// A line worth keeping in the log: a notice of the run (`"built and saved the index
    /// …"`) or one of its events (a training step, a checkpoint). Unlike
    /// [`message`](Progress::message), which the next message replaces, each note stays.
    /// Ignored by default.
    fn note(&self, _line: &str) {}
    /// The operation is over (done or failed). Nothing by default.
    fn finish(&self) {}
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _total: u64, _what: &str) {}
    fn advance(&self, _n: u64) {}
}

/// `()` reports nothing, like [`NoProgress`].
impl Progress for () {
    fn start(&self, _total: u64, _what: &str) {}
    fn advance(&self, _n: u64) {}
}

impl<P: Progress + ?Sized> Progress for &P {
    fn start(&self, total: u64, what: &str) {
        (**self).start(total, what)
    }
    fn advance(&self, n: u64) {
        (**self).advance(n)
    }
    fn message(&self, message: &str) {
        (**self).message(message)
    }
    fn note(&self, line: &str) {
        (**self).note(line)
    }
    fn finish(&self) {
        (**self).finish()
    }
}
