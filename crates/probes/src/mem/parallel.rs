//! Running a bandwidth loop on every online CPU at once.
//!
//! One worker thread per online CPU, each pinned to its CPU, each with its own contiguous
//! share of the working set. A sample releases all workers through a barrier; each makes the
//! same number of passes over its share, reading the clock before its first and after its
//! last. The sample is the window from the earliest start to the latest end, so a worker
//! that wakes late makes the figure slower, never faster.

use super::kernels::Kernel;
use crate::ProbeError;
use crate::helper::{StartGate, settle, spawn_in};
use latlab_engine::{BenchResult, Clock, Host, Runner};
use std::hint::black_box;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// A sample of all CPUs lasts at least this long, so that waking the workers (tens of
/// microseconds on a busy VM) is a small part of it.
const MIN_SAMPLE: Duration = Duration::from_millis(10);

/// What a parallel measurement ran on.
pub(crate) struct Parallel {
    pub result: BenchResult,
    pub threads: usize,
    /// Workers that could not be pinned to their CPU and ran where the kernel put them.
    pub unpinned: usize,
}

/// Measures `kernel` on every online CPU at once over `data`, shared out in contiguous
/// pieces. `pass_ns` is one single-thread pass over the whole of `data`, to size the samples.
/// The result is per element visited, over all threads.
pub(crate) fn measure_all_cpus(
    runner: &mut Runner,
    name: &str,
    method: &str,
    kernel: Kernel,
    data: &mut [u64],
    pass_ns: f64,
) -> Result<Parallel, ProbeError> {
    // All online CPUs, even when this process was pinned to one with --pin.
    let host = runner.host().clone();
    let cpus = host.every_cpu();
    let threads = cpus.len().max(1);
    // The single-thread figure sizes the samples, bounded by one pass timed here: a figure
    // made up (the synthetic machine) or taken while the memory was quicker must not make a
    // sample of many seconds.
    let timed = std::time::Instant::now();
    black_box(kernel.pass(black_box(&mut *data)));
    let pass_ns = pass_ns.max(timed.elapsed().as_nanos() as f64);
    // Shares start on cache-line boundaries (8 words of a 64-byte line).
    let share_len = data.len().div_ceil(threads).next_multiple_of(8).max(8);
    let shares: Vec<&mut [u64]> = data.chunks_mut(share_len).collect();
    let elements_per_pass: usize = shares
        .iter()
        .map(|s| kernel.elements_visited(s.len()))
        .sum();
    let passes = passes_per_sample(runner, pass_ns, shares.len());

    let workers = shares.len();
    let crew = Crew {
        start: Barrier::new(workers + 1),
        end: Barrier::new(workers + 1),
        stop: AtomicBool::new(false),
        unpinned: AtomicUsize::new(0),
        gate: StartGate::default(),
        clock: runner.clock().clone(),
        kernel,
        passes,
    };
    let windows: Vec<(AtomicU64, AtomicU64)> = (0..workers)
        .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
        .collect();
    let samples = runner.config().samples;
    let result = std::thread::scope(|scope| {
        let mut refused = None;
        for ((share, window), &cpu) in shares.into_iter().zip(&windows).zip(cpus.iter().cycle()) {
            let (crew, host) = (&crew, &host);
            let worker = spawn_in(scope, "latlab-mem-parallel", move || {
                crew.work(host.as_ref(), cpu, share, window);
            });
            if let Err(reason) = worker {
                refused = Some(reason);
                break;
            }
        }
        crew.gate.open(refused.is_none());
        if let Some(reason) = refused {
            return Err(ProbeError::Failed(reason));
        }
        let operations = passes * elements_per_pass as u64;
        let result = runner.observe_operations(name, method, samples, operations, |_| {
            crew.start.wait();
            crew.end.wait();
            let first = windows.iter().map(|w| w.0.load(Ordering::Relaxed)).min();
            let last = windows.iter().map(|w| w.1.load(Ordering::Relaxed)).max();
            last.unwrap_or(0).saturating_sub(first.unwrap_or(0))
        });
        crew.stop.store(true, Ordering::Release);
        crew.start.wait();
        Ok(result?)
    })?;
    Ok(Parallel {
        result,
        threads: workers,
        unpinned: crew.unpinned.into_inner(),
    })
}

/// The passes each of `workers` makes in a sample, one pass of one thread over the whole
/// taking `pass_ns`: if every thread went as fast as one alone, the sample is at least the
/// target.
fn passes_per_sample(runner: &Runner, pass_ns: f64, workers: usize) -> u64 {
    let target_ns = runner
        .config()
        .target_sample_time
        .max(MIN_SAMPLE)
        .as_nanos() as f64;
    (target_ns / (pass_ns / workers as f64)).ceil().max(1.0) as u64
}

/// The workers of one measurement and what they share: each sample, every worker waits at
/// `start`, times `passes` passes of `kernel` over its share and waits at `end`.
struct Crew {
    start: Barrier,
    end: Barrier,
    stop: AtomicBool,
    /// Workers that could not be pinned to their CPU.
    unpinned: AtomicUsize,
    /// Until every worker has started: a worker the system refused (`ulimit -u`) would
    /// leave the others waiting at a barrier sized for all of them.
    gate: StartGate,
    clock: Clock,
    kernel: Kernel,
    passes: u64,
}

impl Crew {
    /// One worker on `cpu`: its sample windows into `window`, until `stop`.
    fn work(
        &self,
        host: &dyn Host,
        cpu: usize,
        share: &mut [u64],
        window: &(AtomicU64, AtomicU64),
    ) {
        if !self.gate.wait() {
            return;
        }
        if settle(host, cpu).is_err() {
            self.unpinned.fetch_add(1, Ordering::Relaxed);
        }
        // Copied out before timing: nothing is read through `self` between the clock reads.
        let (clock, kernel, passes) = (&self.clock, self.kernel, self.passes);
        loop {
            self.start.wait();
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            let t0 = clock.start();
            for _ in 0..passes {
                black_box(kernel.pass(share));
            }
            let t1 = clock.end();
            window.0.store(t0, Ordering::Relaxed);
            window.1.store(t1, Ordering::Relaxed);
            self.end.wait();
        }
    }
}
