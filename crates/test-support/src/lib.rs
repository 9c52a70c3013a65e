//! What latlab's tests share. A test that cannot run on the machine it finds (one CPU, a
//! tmpfs `/tmp`, an emulator, a GPU driver where the test needs none) does not pass having
//! asserted nothing in silence: it calls [`skip!`], which says so with the reason and counts
//! it where CI looks ([`SKIPPED_TESTS_VARIABLE`]). A test that waits for a process to get
//! somewhere polls with [`wait_until`], which fails it, naming what never came, at its limit;
//! one that stops a process with a signal sends it with [`send`] or [`interrupt`]. Series
//! with planted steps draw their noise from [`Draws`] (or come whole from [`Generated`]), are written as runs' summaries with
//! [`summary_text`], and are scored with [`scored`], Otava's change points of them found with
//! [`otava_change_points`].

// A test reads and writes files as it pleases: the doors are for what latlab itself does.
#![allow(clippy::disallowed_methods)]
use std::io::Write;

mod draws;
pub mod generated;
mod planted;
mod summaries;

pub use draws::Draws;
pub use generated::{Generated, PlantedStep};
pub use planted::{Scored, otava_change_points, scored};
pub use summaries::summary_text;

/// The variable naming a file where each skipped test adds a line (`TEST: WHY`): `.ci/run`
/// sets it, and reports the tests that skipped and why after each tier.
pub const SKIPPED_TESTS_VARIABLE: &str = "LATLAB_SKIPPED_TESTS";

/// Says that the calling test could not run here, and why (`format!` arguments), then
/// returns from the test. The test is named by its thread (libtest names each test's thread
/// after it), else by the module and line of the call.
#[macro_export]
macro_rules! skip {
    ($($why:tt)*) => {{
        $crate::skipped(module_path!(), line!(), &format!($($why)*));
        return;
    }};
}

/// Records a skipped test: a line on standard error (shown with `--nocapture`) and one in the
/// file [`SKIPPED_TESTS_VARIABLE`] names, when it does. `module` and `line` name the test
/// where its thread has no name.
pub fn skipped(module: &str, line: u32, why: &str) {
    let counted_in = std::env::var_os(SKIPPED_TESTS_VARIABLE);
    record(&test_name(module, line), why, counted_in.as_deref());
}

/// Says `test` skipped for `why`, and adds it to the file `counted_in`, if any.
fn record(test: &str, why: &str, counted_in: Option<&std::ffi::OsStr>) {
    eprintln!("skipped: {test}: {why}");
    let Some(path) = counted_in else {
        return;
    };
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| writeln!(file, "{test}: {why}"));
    if let Err(e) = appended {
        eprintln!(
            "could not count the skipped test in {}: {e}",
            std::path::Path::new(path).display()
        );
    }
}

/// Polls `ready` every 10 ms until it holds; fails the test with `what` after `limit`.
pub fn wait_until(what: &str, limit: std::time::Duration, mut ready: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !ready() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Sends `signal` to `child`, a process the test started and has not waited for, failing the
/// test where it cannot be sent.
#[cfg(unix)]
pub fn send(child: &std::process::Child, signal: i32) {
    let pid = libc::pid_t::try_from(child.id()).expect("a pid fits pid_t");
    // SAFETY: kill(2) on a child of this process that has not been waited for, so its pid
    // is not yet free to be reused.
    let sent = unsafe { libc::kill(pid, signal) };
    assert_eq!(
        sent,
        0,
        "kill({pid}, {signal}): {}",
        std::io::Error::last_os_error()
    );
}

/// Interrupts `child` as Ctrl-C would (SIGINT), waits for it, and returns its exit status
/// (`None` where a signal ended it).
#[cfg(unix)]
pub fn interrupt(child: &mut std::process::Child) -> Option<i32> {
    send(child, libc::SIGINT);
    child
        .wait()
        .expect("the interrupted child is waited for")
        .code()
}

/// The test running on this thread: its thread's name, else where the skip was called.
fn test_name(module: &str, line: u32) -> String {
    match std::thread::current().name() {
        Some(name) if name != "main" => name.to_string(),
        _ => format!("{module}:{line}"),
    }
}

/// A FIFO named `name` made in `dir`, with no reader or writer: what a read or write that
/// must not block is tried on.
#[cfg(unix)]
pub fn fifo(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path and a mode.
    let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) };
    assert_eq!(made, 0, "mkfifo {}", path.display());
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A skip is named by its test and counted a line each, beside the others.
    #[test]
    fn a_skipped_test_is_named_and_counted() {
        assert_eq!(
            test_name("here", 7),
            "tests::a_skipped_test_is_named_and_counted"
        );
        let dir = std::env::temp_dir().join(format!("latlab-skips-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let counted = dir.join("skipped");
        record("a", "one CPU", Some(counted.as_os_str()));
        record("b", "tmpfs", Some(counted.as_os_str()));
        let lines = std::fs::read_to_string(&counted).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(lines, "a: one CPU\nb: tmpfs\n");
    }
}
