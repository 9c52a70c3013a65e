//! What the harness knows of the benchmark running, for when it does not come back.
//!
//! - As each set of benchmarks starts, its name is kept ([`starting`]).
//! - A set that runs far past its budget (a call that never returns, a blocking read) is
//!   named on standard error once, with how to stop it.
//! - After Ctrl-C (or SIGTERM, SIGHUP) the runner stops at its next sample; a set whose call
//!   never returns has no next sample, so if it has not come back within [`GRACE`], the
//!   watchdog writes what the sets before it measured and ends the process with the
//!   signal's status, naming it. (The first signal used to print nothing, and the run went
//!   on until killed.)
//! - A process ended by a benchmark (`std::process::exit(0)` inside it) is not a success:
//!   an `atexit` hook names the set that was running and makes the status 1. An abort
//!   (SIGABRT) names it too, before the default action.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use std::time::{Duration, Instant};

/// How long a set may go on after the stop signal before the watchdog ends the run without
/// it: a sample is at most a few milliseconds, a benchmark's setup rarely seconds.
pub(crate) const GRACE: Duration = Duration::from_secs(2);
/// How often the watchdog looks: four wake-ups a second, a few microseconds each, are all
/// it adds to a run.
const TICK: Duration = Duration::from_millis(250);

/// The set running, kept where a signal handler can read it: its name's bytes and length
/// (0 while no set runs: a set's name is never empty).
static NAME: [AtomicU8; 256] = [const { AtomicU8::new(0) }; 256];
static NAME_LENGTH: AtomicUsize = AtomicUsize::new(0);
/// Set when the harness ends on its own account: the `atexit` hook then says nothing.
static ENDING: AtomicBool = AtomicBool::new(false);

/// The set running, for the watchdog thread.
static RUNNING: Mutex<Option<Running>> = Mutex::new(None);

/// The set running: its name, since when, and how long it should take where its calls are
/// known to be slow.
#[derive(Clone)]
struct Running {
    name: String,
    started: Instant,
    expected: Option<Duration>,
}

/// The set `name` starts.
pub(crate) fn starting(name: &str) {
    *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = Some(Running {
        name: name.to_string(),
        started: Instant::now(),
        expected: None,
    });
    let bytes = &name.as_bytes()[..name.len().min(NAME.len())];
    NAME_LENGTH.store(0, Ordering::Relaxed);
    for (slot, &byte) in NAME.iter().zip(bytes) {
        slot.store(byte, Ordering::Relaxed);
    }
    NAME_LENGTH.store(bytes.len(), Ordering::Release);
}

/// The set that started last has come back.
pub(crate) fn finished() {
    NAME_LENGTH.store(0, Ordering::Release);
    *RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// The set running is expected to take about `time` in all: its calls are slow, and none
/// is stuck until it runs twice that.
pub(crate) fn expecting(time: Duration) {
    if let Some(running) = RUNNING.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        running.expected = Some(time);
    }
}

fn current() -> Option<Running> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The harness ends on its own account from here on (its exit status is its own).
pub(crate) fn ending() {
    ENDING.store(true, Ordering::Release);
}

/// Installs the `atexit` hook and the SIGABRT handler that name the set running when the
/// process ends under it.
pub(crate) fn install_hooks() {
    // SAFETY: atexit takes a function with C linkage and no arguments, which this is.
    unsafe { libc::atexit(at_exit) };
    // SAFETY: the handler only loads atomics and calls write, signal and raise, all
    // async-signal-safe.
    unsafe {
        libc::signal(
            libc::SIGABRT,
            on_abort as extern "C" fn(libc::c_int) as libc::sighandler_t,
        )
    };
}

/// Writes "latlab-bench: ", the running set's name and `rest` to standard error, with
/// write(2) alone (async-signal-safe).
fn say_running(before: &[u8], rest: &[u8]) {
    let length = NAME_LENGTH.load(Ordering::Acquire).min(NAME.len());
    let mut line = [0u8; 1024];
    let mut at = 0;
    let mut push = |bytes: &[u8]| {
        for &byte in bytes {
            if at < line.len() {
                line[at] = byte;
                at += 1;
            }
        }
    };
    push(before);
    for slot in &NAME[..length] {
        push(&[slot.load(Ordering::Relaxed)]);
    }
    push(rest);
    // SAFETY: writing `at` initialised bytes of `line` to standard error. (The C runtime's
    // `_write` on Windows counts in `u32`; the line is at most 1 KiB.)
    unsafe { libc::write(2, line.as_ptr().cast(), at as _) };
}

/// Whether a set is running now (between `starting` and `finished`).
fn in_set() -> bool {
    NAME_LENGTH.load(Ordering::Acquire) > 0
}

extern "C" fn at_exit() {
    if ENDING.load(Ordering::Acquire) || !in_set() {
        return;
    }
    say_running(
        b"latlab-bench: the process was ended while ",
        b" was running (std::process::exit inside the benchmark?): the benchmarks after it \
          were not measured, and the run is not a success (status 1)\n",
    );
    // SAFETY: _exit ends the process at once with this status, as the hook means to.
    unsafe { libc::_exit(1) };
}

extern "C" fn on_abort(signal: libc::c_int) {
    if in_set() {
        say_running(
            b"latlab-bench: the process was aborted while ",
            b" was running\n",
        );
    }
    // SAFETY: back to the default action, then the signal again: the process aborts as it
    // would have.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// The watchdog thread: names a set that runs far past `stuck_after` (or twice the time its
/// slow calls should take, where that is longer), and after the stop
/// flag is set, calls `rescue` with the set's name if it has not come back within [`GRACE`]
/// (`rescue` writes what was measured and ends the process).
pub(crate) fn watch(
    cancel: Arc<AtomicBool>,
    stuck_after: Duration,
    rescue: impl FnOnce(&str) + Send + 'static,
) {
    let spawned = std::thread::Builder::new()
        .name("latlab-bench-watchdog".into())
        .spawn(move || {
            let mut warned: Option<Instant> = None;
            let mut stop_seen: Option<Instant> = None;
            loop {
                std::thread::sleep(TICK);
                let current = current();
                if cancel.load(Ordering::Relaxed) {
                    let since = *stop_seen.get_or_insert_with(Instant::now);
                    if let Some(running) = &current
                        && since.elapsed() >= GRACE
                    {
                        rescue(&running.name);
                        return;
                    }
                    continue;
                }
                let Some(Running {
                    name,
                    started,
                    expected,
                }) = current
                else {
                    continue;
                };
                let limit = expected.map_or(stuck_after, |time| stuck_after.max(time * 2));
                if started.elapsed() >= limit && warned != Some(started) {
                    warned = Some(started);
                    latlab_front::say!(
                        "latlab-bench: {name} has been running for {} s, far past its budget \
                         (a call that never returns?); Ctrl-C stops the run and writes what \
                         was measured",
                        started.elapsed().as_secs()
                    );
                }
            }
        });
    if let Err(why) = spawned {
        latlab_front::say!(
            "latlab-bench: no watchdog ({why}): a benchmark that never returns is not named"
        );
    }
}
