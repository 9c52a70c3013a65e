//! The thread family: what creating, waking and synchronising threads costs.

pub(crate) mod atomic;
pub(crate) mod core_to_core;
pub(crate) mod handoff;
pub(crate) mod lifecycle;
pub(crate) mod mutex;
pub(crate) mod pool;
pub(crate) mod semaphore;

use crate::helper::spawn_pinned;
use latlab_engine::SharedHost;
use latlab_engine::host::{AffinityGuard, Host};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Where the two threads (or processes) of a pairwise measurement run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pair {
    /// Both on one CPU: every hand-off is a context switch there.
    SameCpu,
    /// On two CPUs of different cores where there are any: every hand-off crosses CPUs.
    TwoCpus,
}

impl Pair {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Pair::SameCpu => "same-cpu",
            Pair::TwoCpus => "two-cpus",
        }
    }

    pub(crate) fn describe(self, first: usize, second: usize) -> String {
        match self {
            Pair::SameCpu => format!("both pinned to CPU {first}"),
            Pair::TwoCpus => format!("pinned to CPUs {first} and {second}"),
        }
    }
}

/// The CPUs for `pair`: the first CPU this run may use, and for [`Pair::TwoCpus`] another
/// online CPU, on another core when there is one. `None` when the machine has one CPU.
pub(crate) fn cpu_pair(host: &dyn Host, pair: Pair) -> Option<(usize, usize)> {
    let first = host.first_allowed_cpu();
    match pair {
        Pair::SameCpu => Some((first, first)),
        Pair::TwoCpus => {
            let others: Vec<usize> = host
                .every_cpu()
                .into_iter()
                .filter(|&c| c != first)
                .collect();
            let siblings = host.thread_siblings(first);
            others
                .iter()
                .find(|c| !siblings.contains(c))
                .or(others.first())
                .map(|&second| (first, second))
        }
    }
}

/// Runs `body` pinned to one CPU while another thread, pinned to a second CPU, calls
/// `contend` in a loop, until `body` returns or `limit` passes. `None` when the machine has
/// one CPU, so nothing can contend at the same time.
pub(crate) fn with_contender<T>(
    host: &SharedHost,
    limit: Duration,
    contend: impl Fn() + Send + 'static,
    body: impl FnOnce(usize, usize) -> T,
) -> Result<Option<T>, crate::ProbeError> {
    let Some((mine, theirs)) = cpu_pair(host.as_ref(), Pair::TwoCpus) else {
        return Ok(None);
    };
    let _affinity = AffinityGuard::save(host);
    host.pin_to_cpu(mine).map_err(crate::ProbeError::Failed)?;
    let stop = Arc::new(AtomicBool::new(false));
    let running = Arc::new(AtomicBool::new(false));
    let contender = {
        let (stop, running) = (Arc::clone(&stop), Arc::clone(&running));
        // Its own limit too: it stops even if nobody tells it to.
        let deadline = Instant::now() + limit;
        spawn_pinned(host, "latlab-contender", theirs, move |_| {
            running.store(true, Ordering::Release);
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                for _ in 0..256 {
                    contend();
                }
            }
        })?
    };
    // Measure only once the contender is there.
    let deadline = Instant::now() + limit;
    while !running.load(Ordering::Acquire) && Instant::now() < deadline {
        std::thread::yield_now();
    }
    let out = body(mine, theirs);
    stop.store(true, Ordering::Relaxed);
    let _ = contender.join();
    Ok(Some(out))
}
