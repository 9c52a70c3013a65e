//! The machine a run measures, as one injected trait of four facets.
//!
//! Everything a run learns from or does to the machine goes through a [`Host`]: the timer
//! that takes the samples, the environment (CPUs, caches, core classes, memory), wall time,
//! the lock between concurrent runs, and the controls that pin threads or change their
//! scheduling. Two implementations exist:
//!
//! * [`RealHost`] measures this machine: a calibrated cycle counter, sysfs and /proc.
//! * [`SyntheticHost`] is a fixed, imaginary machine (four CPUs, three cache levels, a clock
//!   whose every figure is derived from the benchmark's name). The benchmarks still run once
//!   each, so every probe is exercised, but what they report is the same on every machine, so
//!   renderers and the whole command line can be tested exactly.
//!
//! The synthetic host is its own type, not a flag: code that measures never asks which host
//! it has, which is what keeps the two honest (hyperfine's `Executor` and `MockExecutor` are
//! the model).
//!
//! A timer sees the benchmark as a [`LoopBody`]: one dynamic call per sample times a whole
//! monomorphised loop of the benchmark, so the choice of host costs nothing inside the loop.

mod real;
mod synthetic;
mod synthetic_model;
mod synthetic_noise;

pub use real::RealHost;
pub use synthetic::SyntheticHost;
pub use synthetic_model::{FigureModel, Machine};
pub use synthetic_noise::{Moved, Noise};

use crate::analysis::LoopSamples;
use crate::clock::{Clock, ClockInfo};
use crate::config::{Config, Interrupted};
use crate::environment::{CacheInfo, CoreClass, Environment, MemoryModule, PerfCounters};
use crate::locks::{LockRefused, RunLock};
use crate::model::{Integrity, RunRecord, RunSettings};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// A host shared by the runner, the probes and the threads they start.
pub type SharedHost = Arc<dyn Host>;

/// The machine: how it is timed ([`Timing`]), its CPUs ([`Cpus`]), what it is
/// ([`Inventory`]) and what can be done to it ([`Controls`]). Anything that is all four is
/// a host; code that needs one facet only names that one.
pub trait Host: Timing + Cpus + Inventory + Controls + Send + Sync {}

impl<T: Timing + Cpus + Inventory + Controls + Send + Sync> Host for T {}

/// How the machine is timed.
pub trait Timing {
    /// The timer every figure is taken with.
    fn timer(&self) -> &dyn Timer;

    /// The wall-clock time now.
    fn now(&self) -> SystemTime;

    /// How long something that began at `since` has taken.
    fn elapsed(&self, since: Instant) -> Duration;
}

/// The machine's CPUs, and where the calling thread may run.
pub trait Cpus {
    /// The CPUs the kernel has online, whatever this process's affinity; empty when unknown.
    fn online_cpus(&self) -> Vec<usize>;

    /// The CPUs the calling thread may run on.
    fn allowed_cpus(&self) -> Vec<usize>;

    /// Confines the calling thread (and the threads and processes it starts later) to `cpus`.
    fn set_allowed_cpus(&self, cpus: &[usize]) -> Result<(), String>;

    /// The hardware threads that share `cpu`'s core, itself included; empty when unknown.
    fn thread_siblings(&self, cpu: usize) -> Vec<usize>;

    /// The online CPUs grouped by what the kernel says of them, biggest first.
    fn core_classes(&self) -> Vec<CoreClass>;

    /// Every CPU the run may use: the online ones, within the affinity the process started
    /// with (a `taskset` around latlab fences CPUs off), whatever `--pin` did to the
    /// measuring thread since; the CPUs this process may use when the kernel does not say.
    fn every_cpu(&self) -> Vec<usize> {
        let online = self.online_cpus();
        if online.is_empty() {
            self.allowed_cpus()
        } else {
            online
        }
    }

    /// The first CPU this process may use.
    fn first_allowed_cpu(&self) -> usize {
        self.allowed_cpus().first().copied().unwrap_or(0)
    }

    /// Pins the calling thread (and the threads it starts later) to `cpu`.
    fn pin_to_cpu(&self, cpu: usize) -> Result<(), String> {
        self.set_allowed_cpus(&[cpu])
    }
}

/// What the machine is: its environment, caches, clock source, memory and load.
pub trait Inventory {
    /// The machine, its kernel and the build, as every run records them.
    fn environment(&self) -> Environment;

    /// The cache hierarchy, smallest level first.
    fn caches(&self) -> Vec<CacheInfo>;

    /// The kernel's clock source (`tsc`, `kvm-clock` …).
    fn clocksource(&self) -> Option<String>;

    /// The memory nodes (NUMA nodes), each with its CPUs and memory; empty when the kernel
    /// does not say.
    fn memory_nodes(&self) -> Vec<crate::environment::MemoryNode>;

    /// The memory modules the firmware describes (SMBIOS type 17), or why there are none.
    fn memory_modules(&self) -> Result<Vec<MemoryModule>, String>;

    /// Memory that can be allocated now without swapping.
    fn available_memory_bytes(&self) -> Option<u64>;

    /// The load average over 1, 5 and 15 minutes.
    fn load_average(&self) -> Option<[f64; 3]>;

    /// Whether perf counters can be opened, found by opening them: never just before a
    /// measurement (see [`Environment::perf_counters`]).
    fn perf_counters(&self) -> PerfCounters;
}

/// What a run does to the machine to measure undisturbed.
pub trait Controls {
    /// Takes the machine-wide lock between measuring runs, waiting up to `wait` for another
    /// run of this user and not at all for another user's; the wait stops when `cancel` is
    /// set.
    fn lock_runs(&self, wait: Duration, cancel: &AtomicBool) -> Result<RunLock, LockRefused>;

    /// Locks current and future memory into RAM.
    fn lock_memory(&self) -> Result<(), String>;

    /// Binds the pages the calling thread touches first from now on to memory node `node`,
    /// or with `None` returns it to the default policy (pages beside the CPU that touches
    /// them).
    fn bind_memory(&self, node: Option<usize>) -> Result<(), String>;

    /// The memory node of the page holding each of `addresses`, as the kernel reports it
    /// (`move_pages` asked where, moving nothing): `None` for a page it has not placed (not
    /// yet touched, or not mapped).
    fn nodes_of_pages(&self, addresses: &[*const u8]) -> Result<Vec<Option<usize>>, String>;

    /// Moves the calling thread to SCHED_FIFO, with RLIMIT_RTTIME as a safety net.
    fn enter_realtime(&self) -> Result<(), String>;
}

/// The calling thread's CPU affinity, restored when dropped: a probe that pins itself for a
/// while leaves the run as it found it.
pub struct AffinityGuard {
    host: SharedHost,
    saved: Vec<usize>,
}

impl AffinityGuard {
    /// Remembers the calling thread's current affinity.
    pub fn save(host: &SharedHost) -> AffinityGuard {
        AffinityGuard {
            host: Arc::clone(host),
            saved: host.allowed_cpus(),
        }
    }
}

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        if !self.saved.is_empty() {
            // Restoring a set the thread held a moment ago cannot be refused for lack of
            // rights; should the CPUs have gone offline since, there is nothing better to do.
            let _ = self.host.set_allowed_cpus(&self.saved);
        }
    }
}

/// A benchmark as a timer sees it: its type erased, its loop not.
pub trait LoopBody {
    /// Times `iterations` calls of the benchmark in one monomorphised loop; returns ticks of
    /// `clock`.
    fn time(&mut self, clock: &Clock, iterations: u64) -> u64;

    /// Times `iterations` turns of the same loop with an empty body.
    fn time_empty(&mut self, clock: &Clock, iterations: u64) -> u64;

    /// How many operations one call performs, for a timer that makes its figures up.
    fn operations(&self) -> u64 {
        1
    }

    /// The CPU time, in nanoseconds, that the last [`LoopBody::time`] or
    /// [`LoopBody::time_empty`] spent outside the regions it timed (making a batch's inputs,
    /// dropping its outputs). The timer takes it from the sample's CPU time, so that CPU time
    /// and wall time cover the same work: a sample of an empty loop whose inputs take a
    /// microsecond each to make must not read as a microsecond a call on the CPU. 0 for a
    /// body timed whole.
    fn untimed_cpu_ns(&self) -> u64 {
        0
    }
}

/// A closure that performs `operations` operations per call (1 for most benchmarks, the
/// unroll count for one of the two bodies of a slope), as a [`LoopBody`].
pub(crate) struct Closure<F> {
    pub body: F,
    pub operations: u64,
}

impl<F: FnMut() -> R, R> LoopBody for Closure<F> {
    fn time(&mut self, clock: &Clock, iterations: u64) -> u64 {
        clock.time_loop(iterations, &mut self.body)
    }

    fn time_empty(&mut self, clock: &Clock, iterations: u64) -> u64 {
        clock.time_loop(iterations, &mut || ())
    }

    fn operations(&self) -> u64 {
        self.operations
    }
}

/// How much a timer may sample, and when it must stop.
pub struct Limits<'a> {
    pub config: &'a Config,
    /// A probe's own abort flag (its peer died), besides the run's cancel flag.
    pub abort: Option<&'a AtomicBool>,
}

impl Limits<'_> {
    /// `Err` once the run was cancelled or the probe aborted.
    pub fn check(&self) -> Result<(), Interrupted> {
        let aborted = self.abort.is_some_and(|a| a.load(Ordering::Relaxed));
        if aborted || self.config.cancel.load(Ordering::Relaxed) {
            Err(Interrupted)
        } else {
            Ok(())
        }
    }

    /// Whether another sample may start: always below the minimum, then within the budget.
    pub fn wants_more(&self, taken: usize, wanted: usize, started: Instant) -> bool {
        self.wants_more_rounds(taken, wanted, started, 1)
    }

    /// Whether another round of samples of `bodies` benchmarks may start: always below the
    /// minimum, then within the budget of that many benchmarks. `wanted` is for the whole
    /// run; when it measures in rounds, this round takes its share (`Config::rounds`).
    pub fn wants_more_rounds(
        &self,
        taken: usize,
        wanted: usize,
        started: Instant,
        bodies: usize,
    ) -> bool {
        let minimum = self.config.min_samples_per_round();
        let wanted = self.config.samples_per_round(wanted);
        let budget = self.config.budget_per_round() * bodies.max(1) as u32;
        taken < wanted && (taken < minimum || started.elapsed() <= budget)
    }
}

/// The raw samples of a calibrated loop.
pub struct LoopRun {
    pub samples: LoopSamples,
    /// The first, cold call alone, less an empty timed region.
    pub cold_ns: f64,
    pub integrity: Integrity,
}

/// The raw samples of events timed one at a time, each cut into series (the whole event,
/// then each of its phases).
pub struct EventRun {
    /// One list per series, one sample per event, in nanoseconds.
    pub series_ns: Vec<Vec<f64>>,
    /// The first, cold event, one figure per series.
    pub cold_ns: Vec<f64>,
    /// The measuring thread's CPU time per event.
    pub cpu_ns: Vec<f64>,
    pub integrity: Integrity,
}

/// Samples, or the reason sampling stopped early (Ctrl-C, a probe's abort).
pub type Sampled<T> = Result<T, Interrupted>;

/// Takes samples: the real clock of this machine, or a synthetic one.
pub trait Timer: Send + Sync {
    /// The clock events are timed with: probes read it inside their events.
    fn clock(&self) -> &Clock;

    /// What results record about the clock.
    fn info(&self) -> &ClockInfo {
        self.clock().info()
    }

    /// Samples several calibrated loops interleaved, round by round: each round takes one
    /// sample of every body (with its empty loop), in order on even rounds and in reverse on
    /// odd ones (A B, B A …), so the i-th samples of two bodies were taken side by side and
    /// slow drift falls on both alike. Each body is calibrated on its own; `names[i]` names
    /// `bodies[i]`. The budget is the configured one per body.
    fn sample_loops(
        &self,
        names: &[&str],
        bodies: &mut [&mut dyn LoopBody],
        limits: &Limits,
    ) -> Sampled<Vec<LoopRun>>;

    /// Samples loops whose call is already known to be slow, one call a sample: no cold call
    /// and no calibration are made, the caller's first call of each (`first_ns`, as
    /// [`Clock::ticks_to_ns`] gave it) standing for the cold one. Otherwise as
    /// [`Timer::sample_loops`]; a timer that makes its figures up samples them as those.
    fn sample_slow_loops(
        &self,
        names: &[&str],
        bodies: &mut [&mut dyn LoopBody],
        _first_ns: &[f64],
        limits: &Limits,
    ) -> Sampled<Vec<LoopRun>> {
        self.sample_loops(names, bodies, limits)
    }

    /// Samples events: `event` performs one and fills one figure (ns) per series; `names`
    /// names the series. The first event is the cold one; `count` more follow within the
    /// budget. Each event holds `operations` operations (passes over a buffer, say): a timer
    /// that makes its figures up makes each event that many operations long.
    fn sample_events(
        &self,
        names: &[&str],
        count: usize,
        operations: u64,
        event: &mut dyn FnMut(&Clock, &mut [f64]),
        limits: &Limits,
    ) -> Sampled<EventRun>;

    /// Events timed elsewhere (by other threads), the cold one first, as this timer reports
    /// them: as given, or made up (as many as `limits` asks for, however many were given).
    fn events_timed_elsewhere(&self, name: &str, samples_ns: Vec<f64>, limits: &Limits)
    -> Vec<f64>;
}

impl RunRecord {
    /// A run starting now on `host`, with these settings and notes: no probe yet, not
    /// complete.
    pub fn begin(host: &dyn Host, settings: RunSettings, notes: Vec<String>) -> RunRecord {
        RunRecord {
            latlab_version: env!("CARGO_PKG_VERSION").to_string(),
            started_at: humantime::format_rfc3339_seconds(host.now()).to_string(),
            settings,
            clock: host.timer().info().clone(),
            environment: host.environment(),
            load_avg_after: None,
            notes,
            stability: Vec::new(),
            probes: Vec::new(),
            complete: false,
        }
    }
}
