//! Messages on standard error that never end the process. std's `eprintln!` panics when
//! standard error is a closed pipe (`2>&1 | head -0`) or a full non-blocking one, and the
//! panic's own message cannot be printed there either: the process dies with status 101
//! and says nothing. Here a full pipe is waited for, as a blocking write would be, and a
//! closed or stalled one is given up on for the rest of the process: the run goes on, and
//! its exit status is what it would have been.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set once standard error could not take a message: later ones are not tried.
static STDERR_GONE: AtomicBool = AtomicBool::new(false);

/// Writes `text` to standard error as it is (no newline added), never panicking.
pub fn stderr_text(text: &str) {
    if STDERR_GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut stderr = std::io::stderr().lock();
    let stream = latlab_report::Stream::Stderr;
    if latlab_report::write_all_waiting(&mut stderr, stream, text.as_bytes()).is_err() {
        STDERR_GONE.store(true, Ordering::Relaxed);
    }
}

/// `eprintln!` that never panics: the line goes to standard error when it can
/// ([`stderr_text`]).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::stderr_text(&format!("{}\n", format_args!($($arg)*)))
    };
}
