//! `thread.lifecycle`: running an empty procedure on a new thread and waiting for it, and the
//! parts of that cost.
//!
//! Each event is one `pthread_create` of a thread whose procedure only reads the clock twice,
//! followed by `pthread_join`, with five timestamps on the one clock all CPUs share: before
//! the create call, when it returned, the new thread's first and last instructions, and when
//! the join returned. The spans between them are the parts, and they add up to the whole
//! event by construction:
//!
//! * `create`: the `pthread_create` call (stack, `clone`).
//! * `start`: from that call's return until the new thread runs its first instruction (it
//!   waits for a CPU and for the kernel to switch to it). Negative when the new thread ran on
//!   another CPU before the call returned: rare on most machines, but in most events of
//!   some runs on a 2-vCPU guest, the create call's return path outlasting the new thread's
//!   start (the book's "How it measures", "The figures behind the rules").
//! * `run`: the procedure, two clock reads.
//! * `finish`: from the procedure's end until `pthread_join` returns, which a second
//!   experiment splits: the caller polls `pthread_tryjoin_np` instead of sleeping in
//!   `pthread_join`, and the moment it first succeeds is when the thread was gone:
//!   * `exit`: the thread's way out (thread-local destructors, the `exit` system call, the
//!     kernel clearing its id), measured by polling;
//!   * `join`: the rest of `finish`, the waking of a joiner that slept (the polled `exit`
//!     subtracted from `finish`, event by event).
//!
//! Raw pthreads are used, not `std::thread`, whose spawn adds an allocation and a handle;
//! the figures are what any language's threads pay at least.

use crate::helper::refused;
use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::{BenchResult, Clock};
use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "thread.lifecycle",
    method: "pthread_create of an empty procedure + pthread_join, timestamped: create, start, exit, join",
    timing: crate::Timing::Events,
    results: &[
        "thread.lifecycle/total",
        "thread.lifecycle/create",
        "thread.lifecycle/start",
        "thread.lifecycle/run",
        "thread.lifecycle/finish",
        "thread.lifecycle/exit",
        "thread.lifecycle/join",
    ],
    typical: Typical::quick_full(0.05, 0.05),
    extras: crate::Extras::NONE,
    presentation: latlab_engine::presentation::Presentation {
        headline: &[crate::headline_row(
            180,
            "Thread start + join",
            None,
            START_JOIN,
            "",
        )],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

const START_JOIN: &str = "thread.lifecycle/total";

/// What the new thread sees: the clock, and where to leave its two timestamps.
struct Shared<'a> {
    clock: &'a Clock,
    first: AtomicU64,
    last: AtomicU64,
}

extern "C" fn procedure(arg: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: `arg` is the `Shared` that `one_event` keeps alive until the thread is joined.
    let shared = unsafe { &*arg.cast::<Shared>() };
    shared.first.store(shared.clock.end(), Ordering::Relaxed);
    shared.last.store(shared.clock.end(), Ordering::Relaxed);
    std::ptr::null_mut()
}

/// How the caller waits for the thread.
#[derive(Clone, Copy)]
enum Wait {
    /// `pthread_join`: sleeps until the thread is gone.
    Join,
    /// `pthread_tryjoin_np` in a loop with `sched_yield`: sees the moment the thread is gone.
    Poll,
}

/// One event: fills `stamps` with [before create, create returned, first instruction, last
/// instruction, waited].
fn one_event(clock: &Clock, stamps: &mut [u64], wait: Wait) -> Result<(), String> {
    let shared = Shared {
        clock,
        first: AtomicU64::new(0),
        last: AtomicU64::new(0),
    };
    let mut thread: libc::pthread_t = 0;
    let arg = (&shared as *const Shared).cast_mut().cast::<libc::c_void>();
    stamps[0] = clock.start();
    // SAFETY: `thread` is writable; `procedure` has the C signature; `shared` outlives the
    // thread, which is joined below before `shared` goes out of scope.
    let created = unsafe { libc::pthread_create(&mut thread, std::ptr::null(), procedure, arg) };
    stamps[1] = clock.end();
    if created != 0 {
        return Err(refused(
            "latlab-lifecycle",
            &std::io::Error::from_raw_os_error(created),
        ));
    }
    stamps[4] = match wait {
        Wait::Join => {
            // SAFETY: `thread` was created above and is joined once.
            unsafe { libc::pthread_join(thread, std::ptr::null_mut()) };
            clock.end()
        }
        Wait::Poll => loop {
            if try_join(thread) {
                break clock.end();
            }
            // Yields rather than spins, so that a thread sharing this CPU (a pinned run) can
            // finish; with a CPU to itself the call returns at once.
            // SAFETY: sched_yield has no preconditions.
            unsafe { libc::sched_yield() };
        },
    };
    stamps[2] = shared.first.load(Ordering::Relaxed);
    stamps[3] = shared.last.load(Ordering::Relaxed);
    Ok(())
}

/// Whether `thread` has ended, and is then joined (once).
#[cfg(not(target_os = "android"))]
fn try_join(thread: libc::pthread_t) -> bool {
    // SAFETY: a thread created and not yet joined; a successful try-join joins it, once.
    unsafe { libc::pthread_tryjoin_np(thread, std::ptr::null_mut()) == 0 }
}

/// Android has no try-join for this build: never called there ([`run`] leaves the polled
/// wait out).
#[cfg(target_os = "android")]
fn try_join(_thread: libc::pthread_t) -> bool {
    unreachable!("polling is refused on Android before a thread is made")
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let count = ctx.runner.config().samples;
    let mut error = None;
    let mut measure = |ctx: &mut ProbeContext, name: &str, wait: Wait, phases: &[(&str, &str)]| {
        ctx.runner
            .observe_phases(name, SPEC.method, phases, count, |clock, stamps| {
                if let Err(e) = one_event(clock, stamps, wait) {
                    error.get_or_insert(e);
                }
            })
    };
    let joined = measure(
        ctx,
        START_JOIN,
        Wait::Join,
        &[
            ("thread.lifecycle/create", "the pthread_create call"),
            (
                "thread.lifecycle/start",
                "pthread_create returned → the new thread's first instruction",
            ),
            ("thread.lifecycle/run", "the procedure: two clock reads"),
            (
                "thread.lifecycle/finish",
                "the procedure's end → pthread_join returned (exit + join)",
            ),
        ],
    )?;
    // Android's C library gives this build no pthread_tryjoin_np: the polled wait, and the
    // join derived from it, are left out there, and the first result says so.
    let polled = if cfg!(target_os = "android") {
        None
    } else {
        Some(measure(
            ctx,
            "thread.lifecycle/polled/total",
            Wait::Poll,
            &[
                ("thread.lifecycle/polled/create", "the pthread_create call"),
                ("thread.lifecycle/polled/start", "to the first instruction"),
                ("thread.lifecycle/polled/run", "the procedure"),
                (
                    "thread.lifecycle/exit",
                    "the procedure's end → pthread_tryjoin_np first succeeds (polled): the thread is gone",
                ),
            ],
        )?)
    };
    if let Some(e) = error {
        return Err(ProbeError::Failed(e));
    }
    let Some(polled) = polled else {
        let mut results = joined;
        if let Some(first) = results.first_mut() {
            first.warnings.push(latlab_engine::Warning::part_skipped(
                "the polled wait and the join derived from it",
                "pthread_tryjoin_np is not in Android's C library to this build",
            ));
        }
        return Ok(results);
    };
    let join = BenchResult::derived_difference(
        "thread.lifecycle/join",
        "finish − exit, event by event: waking the caller sleeping in pthread_join",
        &joined[4],
        &polled[4],
        1.0,
    );
    let mut results: Vec<BenchResult> = joined.into_iter().collect();
    results.push(polled.into_iter().nth(4).expect("four phases"));
    results.extend(join);
    Ok(results)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parts add up to the whole event by event, each part is where it belongs (the
    /// procedure, two clock reads, is typically far shorter than the create call), and the
    /// whole exceeds its smallest part.
    #[test]
    fn parts_add_up_to_the_whole() {
        let (results, _runner) =
            crate::run_for_test(&SPEC, 9, std::time::Duration::from_micros(200));
        let samples =
            |name: &str| &crate::named(&results, &format!("thread.lifecycle/{name}")).samples_ns;
        let total = samples("total");
        let parts = ["create", "start", "run", "finish"].map(samples);
        for (i, whole) in total.iter().enumerate() {
            let sum: f64 = parts.iter().map(|p| p[i]).sum();
            assert!((sum - whole).abs() < 1.0, "event {i}: {sum} vs {whole}");
        }
        let median = |name: &str| {
            let mut s = samples(name).clone();
            s.sort_by(f64::total_cmp);
            s[s.len() / 2]
        };
        assert!(median("run") < median("create"), "the procedure vs create");
        assert!(median("exit") > 0.0);
        assert!(median("total") > median("run"));
    }
}
