//! `thread.mutex`: locking and unlocking a mutex, alone and fought over.
//!
//! Two mutexes: `std::sync::Mutex` (a futex word: one atomic exchange to lock, one to
//! unlock, a system call only when a waiter sleeps) and glibc's `pthread_mutex_t` (default
//! type), each around a one-word increment. `uncontended`: one thread locks and unlocks in a
//! loop, the fast path every lock takes when nobody else wants it. `contended`: the same
//! while a second thread, pinned to another CPU, locks and unlocks the same mutex in a loop,
//! so the line bounces between the CPUs and some locks wait for the other's release. The
//! contended figure is the measuring thread's cost per lock+unlock.

use super::with_contender;
use crate::peer::time_limit;
use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use std::cell::UnsafeCell;
use std::sync::{Arc, Mutex};

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "thread.mutex",
    method: "lock + increment + unlock of std::sync::Mutex and pthread_mutex_t, alone and against a second CPU",
    timing: crate::Timing::LessEmptyLoop,
    results: &[
        "thread.mutex/std/uncontended",
        "thread.mutex/std/contended",
        "thread.mutex/pthread/uncontended",
        "thread.mutex/pthread/contended",
    ],
    typical: Typical::quick_full(0.36, 3.9),
    extras: crate::Extras::NONE,
    presentation: latlab_engine::presentation::Presentation {
        headline: &[crate::headline_row(
            50,
            "Mutex lock/unlock",
            Some("mutex_lock_unlock"),
            UNCONTENDED,
            "",
        )],
        checked_by: &[latlab_engine::presentation::CheckedBy {
            check: latlab_engine::presentation::StabilityCheck::CoreToCore,
            results: &[
                "thread.mutex/std/contended",
                "thread.mutex/pthread/contended",
            ],
        }],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

const UNCONTENDED: &str = "thread.mutex/pthread/uncontended";

/// A default glibc mutex around a counter, shareable between threads.
struct PthreadMutex {
    mutex: UnsafeCell<libc::pthread_mutex_t>,
    value: UnsafeCell<u64>,
}

// SAFETY: the counter is only touched between lock and unlock of the mutex, and the mutex is
// made for sharing between threads; it never moves (it lives in an Arc).
unsafe impl Sync for PthreadMutex {}
// SAFETY: as above.
unsafe impl Send for PthreadMutex {}

impl PthreadMutex {
    fn new() -> Arc<PthreadMutex> {
        Arc::new(PthreadMutex {
            mutex: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
            value: UnsafeCell::new(0),
        })
    }

    fn increment(&self) -> u64 {
        // SAFETY: the mutex is initialised and pinned in its Arc; the counter is accessed only
        // while it is held.
        unsafe {
            libc::pthread_mutex_lock(self.mutex.get());
            let value = *self.value.get() + 1;
            *self.value.get() = value;
            libc::pthread_mutex_unlock(self.mutex.get());
            value
        }
    }
}

fn std_increment(mutex: &Mutex<u64>) -> u64 {
    let mut guard = mutex.lock().unwrap_or_else(|e| e.into_inner());
    *guard = guard.wrapping_add(1);
    *guard
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let limit = time_limit(ctx.runner);
    let mut results = Vec::new();
    let std_mutex = Arc::new(Mutex::new(0u64));
    let pthread_mutex = PthreadMutex::new();
    results.push(ctx.runner.bench(
        "thread.mutex/std/uncontended",
        "std::sync::Mutex lock + increment + unlock, one thread",
        || std_increment(&std_mutex),
    )?);
    results.push(ctx.runner.bench(
        UNCONTENDED,
        "pthread_mutex_lock + increment + unlock, one thread",
        || pthread_mutex.increment(),
    )?);
    let host = ctx.host().clone();
    let theirs = Arc::clone(&std_mutex);
    if let Some(result) = with_contender(
        &host,
        limit,
        move || {
            std_increment(&theirs);
        },
        |mine, other| {
            ctx.runner.bench(
                "thread.mutex/std/contended",
                &format!("std::sync::Mutex, CPU {mine} against a loop of the same on CPU {other}"),
                || std_increment(&std_mutex),
            )
        },
    )? {
        results.push(result?);
    }
    let theirs = Arc::clone(&pthread_mutex);
    if let Some(result) = with_contender(
        &host,
        limit,
        move || {
            theirs.increment();
        },
        |mine, other| {
            ctx.runner.bench(
                "thread.mutex/pthread/contended",
                &format!("pthread_mutex_t, CPU {mine} against a loop of the same on CPU {other}"),
                || pthread_mutex.increment(),
            )
        },
    )? {
        results.push(result?);
    }
    Ok(results)
}
