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
//!
//! Leaving a barrier together is no proof of running together: a vCPU taken by the host, or
//! two threads on one CPU, time their parts one after the other, and read the uncontended
//! cost (the case is in the book's "Benchmark your own code"). Each
//! thread records the span of each part on the clock, and its own CPU time in it; a sample
//! whose threads' spans of a part overlap for less than [`MIN_OVERLAP`] of the longest, or
//! in which a thread was on a CPU for less than that share of its span, is set apart. The
//! result is the other samples' figure and says how many were set apart; where too few
//! samples' threads met, there is no figure.

use crate::bencher::Benchmark;
use crate::bencher::{Bencher, Pending, SetRunner};
use latlab_engine::names::key;
use latlab_engine::{BenchResult, Clock, Interrupted, Runner, thread_cpu_ns};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

/// The share of the longest thread's span of a part that the threads' spans must share,
/// and the share of its own span each thread must spend on a CPU, for a sample to count as
/// the threads' running together.
const MIN_OVERLAP: f64 = 0.5;

/// The most samples taken, as a multiple of those asked for, while looking for samples
/// whose threads met.
const MAX_SAMPLE_ATTEMPTS: usize = 3;

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
    /// Each thread's last sample: the clock at the start and end of its one-call part,
    /// then of its four-call part.
    spans: Vec<[AtomicU64; 4]>,
    /// Each thread's CPU time in its one-call part and in its four-call part, in ns.
    on_cpu: Vec<[AtomicU64; 2]>,
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

    /// Whether the threads ran together in the last sample: for each part, their spans
    /// share at least [`MIN_OVERLAP`] of the longest, and each thread was on a CPU for at
    /// least that share of its own span (two threads taking turns on one CPU stretch each
    /// other's spans over each other). One thread always meets itself.
    fn met(&self, clock: &Clock) -> bool {
        let on_cpu = (self.spans.iter().zip(&self.on_cpu)).all(|(span, cpu)| {
            [0, 1].iter().all(|&part| {
                let wall = clock.ticks_to_ns(
                    (span[2 * part + 1].load(Ordering::Relaxed))
                        .saturating_sub(span[2 * part].load(Ordering::Relaxed)),
                );
                // Where the thread's CPU time cannot be read (0), the spans alone judge.
                let cpu = cpu[part].load(Ordering::Relaxed) as f64;
                cpu == 0.0 || cpu >= MIN_OVERLAP * wall
            })
        });
        on_cpu
            && [0, 2].iter().all(|&part| {
                let span = |s: &[AtomicU64; 4]| {
                    (
                        s[part].load(Ordering::Relaxed),
                        s[part + 1].load(Ordering::Relaxed),
                    )
                };
                let spans: Vec<(u64, u64)> = self.spans.iter().map(span).collect();
                let latest_start = spans.iter().map(|s| s.0).max().unwrap_or(0);
                let earliest_end = spans.iter().map(|s| s.1).min().unwrap_or(0);
                let longest = (spans.iter())
                    .map(|s| s.1.saturating_sub(s.0))
                    .max()
                    .unwrap_or(0);
                let shared = earliest_end.saturating_sub(latest_start);
                longest == 0 || shared as f64 >= MIN_OVERLAP * longest as f64
            })
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
        let spans = &shared.spans[self.index];
        let on_cpu = &shared.on_cpu[self.index];
        let clock = &self.clock;
        while shared.gate.wait() && !shared.stop.load(Ordering::Acquire) {
            let turns = shared.turns.load(Ordering::Relaxed);
            if !shared.together() {
                return;
            }
            let cpu = thread_cpu_ns();
            spans[0].store(clock.start(), Ordering::Relaxed);
            one.store(body.one.time(clock, turns), Ordering::Relaxed);
            spans[1].store(clock.end(), Ordering::Relaxed);
            on_cpu[0].store(thread_cpu_ns().saturating_sub(cpu), Ordering::Relaxed);
            if !shared.together() {
                return;
            }
            let cpu = thread_cpu_ns();
            spans[2].store(clock.start(), Ordering::Relaxed);
            four.store(body.four.time(clock, turns), Ordering::Relaxed);
            spans[3].store(clock.end(), Ordering::Relaxed);
            on_cpu[1].store(thread_cpu_ns().saturating_sub(cpu), Ordering::Relaxed);
            if !shared.gate.wait() {
                return;
            }
        }
    }

    fn fail(&mut self, _name: &str, reason: String) {
        self.shared.fail(reason);
    }
}

/// What measuring a threaded benchmark gave, where no thread failed.
pub(crate) enum Threaded {
    Measured(Box<BenchResult>),
    Interrupted,
    /// No figure of the threads running together: too few samples met, or more threads
    /// than CPUs this process may run on. Why, in a sentence.
    NotTogether(String),
}

/// Measures `benchmark` on `threads` threads at once; each thread pinned to a CPU of its
/// own from `first_cpu` on when the run was pinned. `Err` with why when a thread failed.
/// More threads than the CPUs this process may run on are not measured: they could never
/// run at the same time.
pub(crate) fn measure(
    runner: &mut Runner,
    benchmark: &Benchmark,
    threads: usize,
    first_cpu: Option<usize>,
) -> Result<Threaded, String> {
    let threads = threads.max(1);
    let usable = runner.host().every_cpu().len();
    if usable > 0 && threads > usable {
        return Ok(Threaded::NotTogether(format!(
            "{threads} threads, and this process may run on {usable} CPU{}: they could never \
             run at the same time",
            if usable == 1 { "" } else { "s" }
        )));
    }
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
        spans: (0..threads).map(|_| Default::default()).collect(),
        on_cpu: (0..threads).map(|_| Default::default()).collect(),
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
                    (benchmark.run)(
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
    outcome(measured, threads)
}

/// The result of a threaded benchmark's samples, or why there is none.
fn outcome(measured: Result<Sampled, Interrupted>, threads: usize) -> Result<Threaded, String> {
    match measured {
        Err(Interrupted) => Ok(Threaded::Interrupted),
        Ok(Sampled::Failed) => Err("a thread stopped before it was measured".into()),
        Ok(Sampled::NeverMet { met: 0, samples }) => Ok(Threaded::NotTogether(format!(
            "the {threads} threads never ran at the same time in {samples} samples (one CPU \
             available?): no figure of them running together; --pin CPU places them one a CPU"
        ))),
        Ok(Sampled::NeverMet { met, samples }) => Ok(Threaded::NotTogether(format!(
            "the {threads} threads ran at the same time in only {met} of {samples} samples, \
             too few for a figure of them running together (one CPU available, or the host's \
             other guests on it?); --pin CPU places them one a CPU"
        ))),
        Ok(Sampled::Met {
            result,
            turns,
            set_apart,
            taken,
        }) => {
            let mut result = result
                .per_operation(3 * turns)
                .with_parameter(key::THREADS, threads as u64);
            if set_apart > 0 {
                result.warnings.push(latlab_engine::Warning::part_skipped(
                    &format!("{set_apart} of {taken} samples"),
                    &format!(
                        "the {threads} threads did not run at the same time for most of them \
                         (a vCPU taken by the host, or threads sharing a CPU): the figure is \
                         the other samples'"
                    ),
                ));
            }
            Ok(Threaded::Measured(Box::new(result)))
        }
    }
}

/// How a threaded benchmark's samples came out.
enum Sampled {
    /// A thread failed while the turns were found.
    Failed,
    /// Too few samples' threads ran together (`met` of `samples`) for a figure.
    NeverMet { met: usize, samples: usize },
    /// The result of the samples whose threads met, per `3 × turns` calls, and how many of
    /// the samples taken were set apart.
    Met {
        result: Box<BenchResult>,
        turns: u64,
        set_apart: usize,
        taken: usize,
    },
}

/// Finds the turns, then takes the run's samples, setting apart those whose threads did not
/// run together and taking more in their place (up to [`MAX_SAMPLE_ATTEMPTS`] times those
/// asked for, within the round's budget); the engine then takes the samples that met as
/// its observations. A thread that fails later ends the samples early (its failure is what
/// the caller reports).
fn sample_all(
    runner: &mut Runner,
    shared: &Shared,
    benchmark: &Benchmark,
) -> Result<Sampled, Interrupted> {
    let clock = runner.clock().clone();
    let quarter = runner.config().target_sample_time.as_nanos() as f64 / 4.0;
    let mut turns = 1u64;
    loop {
        if !shared.sample(turns) {
            // A thread failed: the caller reports why, and no sample is taken.
            return Ok(Sampled::Failed);
        }
        let (_, longest) = shared.last();
        if clock.ticks_to_ns(longest) >= quarter || turns >= 1 << 30 {
            break;
        }
        turns *= 2;
    }
    // As many as the engine takes of a benchmark in a round, and the cold one before them.
    let config = runner.config().clone();
    let wanted = config.samples_per_round(config.samples) + 1;
    let deadline = std::time::Instant::now() + config.budget_per_round();
    let (mut met, mut taken) = (Vec::with_capacity(wanted), 0);
    while met.len() < wanted && taken < MAX_SAMPLE_ATTEMPTS * wanted {
        if config.cancel.load(Ordering::Relaxed) {
            return Err(Interrupted);
        }
        if !shared.sample(turns) {
            break;
        }
        taken += 1;
        if shared.met(&clock) {
            met.push(shared.last().0);
        }
        if std::time::Instant::now() > deadline && met.len() > config.min_samples_per_round() {
            break;
        }
    }
    // The most samples the engine may be asked for that those met supply, the cold aside.
    let Some(count) = (1..=config.samples)
        .rev()
        .find(|&count| config.samples_per_round(count) < met.len())
    else {
        return Ok(Sampled::NeverMet {
            met: met.len(),
            samples: taken,
        });
    };
    let set_apart = taken - met.len();
    let mut kept = met.into_iter();
    let result = runner.observe(&benchmark.name, METHOD, count, |_| {
        kept.next()
            .expect("the engine takes no more samples than were met")
    })?;
    Ok(Sampled::Met {
        result: Box::new(result),
        turns,
        set_apart,
        taken,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two threads' last sample set by hand: each part's spans (clock ticks) and on-CPU
    /// shares of them.
    fn sampled(spans: [[u64; 4]; 2], on_cpu: f64, clock: &Clock) -> Shared {
        let cpu = |from: u64, to: u64| (clock.ticks_to_ns(to - from) * on_cpu) as u64;
        Shared {
            gate: Gate::new(3),
            together: SpinGate {
                parties: 2,
                arrived: AtomicU64::new(0),
            },
            broken: AtomicBool::new(false),
            turns: AtomicU64::new(1),
            stop: AtomicBool::new(false),
            ticks: (0..2).map(|_| Default::default()).collect(),
            spans: (spans.iter()).map(|s| s.map(AtomicU64::new)).collect(),
            on_cpu: (spans.iter())
                .map(|s| {
                    [
                        AtomicU64::new(cpu(s[0], s[1])),
                        AtomicU64::new(cpu(s[2], s[3])),
                    ]
                })
                .collect(),
            failure: Mutex::new(None),
        }
    }

    /// Threads whose parts overlap and who stayed on their CPUs met; threads whose parts
    /// followed one another, or who overlapped while taking turns on one CPU, did not.
    #[test]
    fn threads_meet_only_when_their_parts_overlap_on_cpus_of_their_own() {
        let clock = Clock::detect();
        let together = [[0, 1000, 2000, 4000], [50, 1040, 2100, 4050]];
        assert!(sampled(together, 0.95, &clock).met(&clock));
        let one_after_the_other = [[0, 1000, 2000, 4000], [1000, 2000, 4000, 6000]];
        assert!(!sampled(one_after_the_other, 0.95, &clock).met(&clock));
        // Spans stretched over each other by taking turns: each on its CPU half the time.
        assert!(!sampled(together, 0.45, &clock).met(&clock));
    }

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
