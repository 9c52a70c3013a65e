//! A benchmark of `threads = [..]`: its function run on N threads at once, each with its
//! own `Bencher` and closure (shared state is the user's: a static, an `Arc`), each pinned
//! to a CPU of its own when the run was pinned.
//!
//! Every sample starts the threads together: they wake at a barrier, then spin until all
//! have arrived (a wake-up on another CPU takes tens of microseconds on a VM, long enough
//! for the first thread to finish alone), each times its closure `turns` times at one call
//! a turn, spins until all are done, then `turns` times at four calls a turn, so that the
//! threads contend over both; its time per call is the slope between the two, as a
//! single-threaded benchmark's is, and the sample is the mean of the threads' figures: the
//! time per call per thread. The turns double, all threads together, until the four-call
//! part lasts a quarter of the target sample time.

use crate::bencher::{Bencher, Pending, SetRunner};
use crate::registry::Benchmark;
use latlab_engine::names::key;
use latlab_engine::{BenchResult, Clock, Interrupted, Runner};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

/// What every threaded benchmark's result says of its method.
pub(crate) const METHOD: &str = "latlab-bench: N threads started together, each timing its own \
     closure at 1 and at 4 calls a turn; the slope per thread, averaged over the threads";

/// A barrier that can be broken: a thread that failed (its function panicked, or returned
/// without calling `bench`) breaks it, and every wait then returns `false` instead of
/// waiting for ever for a party that will not come.
struct Gate {
    parties: usize,
    state: Mutex<GateState>,
    turned: Condvar,
}

#[derive(Default)]
struct GateState {
    arrived: usize,
    generation: u64,
    broken: bool,
}

impl Gate {
    fn new(parties: usize) -> Gate {
        Gate {
            parties,
            state: Mutex::new(GateState::default()),
            turned: Condvar::new(),
        }
    }

    /// Waits for every party; `false` when the gate is broken.
    fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.broken {
            return false;
        }
        state.arrived += 1;
        if state.arrived == self.parties {
            state.arrived = 0;
            state.generation += 1;
            self.turned.notify_all();
            return true;
        }
        let generation = state.generation;
        while state.generation == generation && !state.broken {
            state = self.turned.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        !state.broken
    }

    fn break_all(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.broken = true;
        self.turned.notify_all();
    }
}

/// A barrier the threads spin at, so that they leave it together; it gives up (`false`)
/// once `broken` is set.
struct SpinGate {
    parties: usize,
    arrived: AtomicU64,
}

impl SpinGate {
    fn wait(&self, broken: &AtomicBool) -> bool {
        let parties = self.parties as u64;
        let ticket = self.arrived.fetch_add(1, Ordering::AcqRel);
        let release = (ticket / parties + 1) * parties;
        let mut spins = 0u32;
        while self.arrived.load(Ordering::Acquire) < release {
            if broken.load(Ordering::Relaxed) {
                return false;
            }
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(1024) {
                // More threads than CPUs: let the ones still to come run.
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        true
    }
}

/// What the threads and the measuring thread share.
struct Shared {
    gate: Gate,
    together: SpinGate,
    broken: AtomicBool,
    turns: AtomicU64,
    stop: AtomicBool,
    /// Each thread's last sample: ticks at one call a turn, at four.
    ticks: Vec<(AtomicU64, AtomicU64)>,
    /// Why a thread failed, the first one's.
    failure: Mutex<Option<String>>,
}

impl Shared {
    fn fail(&self, reason: String) {
        let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        failure.get_or_insert(reason);
        drop(failure);
        self.broken.store(true, Ordering::Relaxed);
        self.gate.break_all();
    }

    /// One sample of every thread, with the turns set: `false` when a thread failed.
    fn sample(&self, turns: u64) -> bool {
        self.turns.store(turns, Ordering::Relaxed);
        self.gate.wait() && self.gate.wait()
    }

    /// Waits, spinning, until every thread is here.
    fn together(&self) -> bool {
        self.together.wait(&self.broken)
    }

    /// The threads' mean slope in the last sample, in ticks per `3 × turns` calls, and the
    /// longest four-call part.
    fn last(&self) -> (u64, u64) {
        let slopes = self.ticks.iter().map(|(one, four)| {
            four.load(Ordering::Relaxed)
                .saturating_sub(one.load(Ordering::Relaxed))
        });
        let mean = slopes.sum::<u64>() / self.ticks.len() as u64;
        let longest = (self.ticks.iter())
            .map(|(_, four)| four.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0);
        (mean, longest)
    }
}

/// One thread's side of a threaded benchmark: handed the closure by its `Bencher`, it
/// times it whenever the gate opens.
struct Worker<'s> {
    shared: &'s Shared,
    index: usize,
    clock: Clock,
}

impl SetRunner for Worker<'_> {
    fn next(&mut self, _rest: &[Benchmark], mut pending: Vec<Pending<'_>>) {
        let Some(body) = pending.pop() else {
            // `fail` said why; the gate is broken.
            return;
        };
        let shared = self.shared;
        let (one, four) = &shared.ticks[self.index];
        while shared.gate.wait() && !shared.stop.load(Ordering::Acquire) {
            let turns = shared.turns.load(Ordering::Relaxed);
            if !shared.together() {
                return;
            }
            one.store(body.one.time(&self.clock, turns), Ordering::Relaxed);
            if !shared.together() {
                return;
            }
            four.store(body.four.time(&self.clock, turns), Ordering::Relaxed);
            if !shared.gate.wait() {
                return;
            }
        }
    }

    fn fail(&mut self, _name: &str, reason: String) {
        self.shared.fail(reason);
    }
}

/// Measures `benchmark` on `threads` threads at once; each thread pinned to a CPU of its
/// own from `first_cpu` on when the run was pinned. `Err` with why when a thread failed.
pub(crate) fn measure(
    runner: &mut Runner,
    benchmark: &Benchmark,
    threads: usize,
    first_cpu: Option<usize>,
) -> Result<Result<BenchResult, Interrupted>, String> {
    let threads = threads.max(1);
    let shared = Shared {
        gate: Gate::new(threads + 1),
        together: SpinGate {
            parties: threads,
            arrived: AtomicU64::new(0),
        },
        broken: AtomicBool::new(false),
        turns: AtomicU64::new(1),
        stop: AtomicBool::new(false),
        ticks: (0..threads)
            .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
            .collect(),
        failure: Mutex::new(None),
    };
    let host = runner.host().clone();
    let cpus = host.every_cpu();
    let clock = runner.clock().clone();
    let measured = std::thread::scope(|scope| {
        for index in 0..threads {
            let (shared, clock, host, cpus) = (&shared, clock.clone(), &host, &cpus);
            scope.spawn(move || {
                if let (Some(first), false) = (first_cpu, cpus.is_empty()) {
                    let at = cpus.iter().position(|&c| c == first).unwrap_or(0);
                    // Pinning is best effort: a CPU refused leaves the thread where it is.
                    let _ = host.pin_to_cpu(cpus[(at + index) % cpus.len()]);
                }
                let mut worker = Worker {
                    shared,
                    index,
                    clock,
                };
                let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    (benchmark.entry.run)(
                        Bencher::new(&mut worker, benchmark, &[], Vec::new()),
                        benchmark.arg_index,
                    );
                }));
                if let Err(panic) = ran {
                    let message = latlab_front::panic_message(panic.as_ref());
                    shared.fail(format!("panicked: {message}"));
                }
            });
        }
        let measured = sample_all(runner, &shared, benchmark);
        shared.stop.store(true, Ordering::Release);
        shared.gate.wait();
        measured
    });
    if let Some(reason) = shared
        .failure
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
    {
        return Err(reason);
    }
    match measured {
        Err(Interrupted) => Ok(Err(Interrupted)),
        Ok(None) => Err("a thread stopped before it was measured".into()),
        Ok(Some((result, turns))) => Ok(Ok(result
            .per_operation(3 * turns)
            .with_parameter(key::THREADS, threads as u64))),
    }
}

/// Finds the turns, then takes the run's samples; the result per `3 × turns` calls, and
/// the turns. `None` when a thread failed while the turns were found; one that fails later
/// ends the samples early (either way its failure is what the caller reports).
fn sample_all(
    runner: &mut Runner,
    shared: &Shared,
    benchmark: &Benchmark,
) -> Result<Option<(BenchResult, u64)>, Interrupted> {
    let clock = runner.clock().clone();
    let quarter = runner.config().target_sample_time.as_nanos() as f64 / 4.0;
    let mut turns = 1u64;
    loop {
        if !shared.sample(turns) {
            // A thread failed: the caller reports why, and no sample is taken.
            return Ok(None);
        }
        let (_, longest) = shared.last();
        if clock.ticks_to_ns(longest) >= quarter || turns >= 1 << 30 {
            break;
        }
        turns *= 2;
    }
    let samples = runner.config().samples;
    let result = runner.observe(&benchmark.name, METHOD, samples, |_| {
        if shared.sample(turns) {
            shared.last().0
        } else {
            0
        }
    })?;
    Ok(Some((result, turns)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A broken gate releases whoever waits at it, and every later wait.
    #[test]
    fn a_broken_gate_releases_its_waiters() {
        let gate = Gate::new(3);
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| gate.wait());
            std::thread::sleep(std::time::Duration::from_millis(20));
            gate.break_all();
            assert!(!waiter.join().unwrap());
        });
        assert!(!gate.wait());
    }

    #[test]
    fn a_gate_opens_when_every_party_has_come_and_again_after() {
        let gate = Gate::new(2);
        std::thread::scope(|scope| {
            let other = scope.spawn(|| gate.wait() && gate.wait());
            assert!(gate.wait() && gate.wait());
            assert!(other.join().unwrap());
        });
    }
}
