//! This machine: its calibrated clock, what sysfs and /proc say of it, and the kernel calls
//! that pin, lock and prioritise.

use super::{
    Controls, Cpus, EventRun, Inventory, Limits, LoopBody, LoopRun, Sampled, Timer, Timing,
};
use crate::analysis::LoopSamples;
use crate::clock::Clock;
use crate::config::Interrupted;
use crate::environment::{
    self, CacheInfo, CoreClass, Environment, MemoryModule, MemoryNode, PerfCounters,
};
use crate::isolation;
use crate::locks::{LockRefused, RunLock};
use crate::usage::{THREAD_CPU_TIME, ThreadUsage, thread_cpu_ns};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime};

/// The calibrated sample must last at least this many clock resolutions.
const RESOLUTIONS_PER_SAMPLE: f64 = 1000.0;
/// Calibration stops doubling here whatever the sample lasts.
const MAX_ITERATIONS: u64 = 1 << 40;
/// A calibration call that lasts more than this many times the call before it (of half its
/// iterations) grew by more than doubling its work explains: it stalled, or its cost is not
/// yet linear, and is timed again before it may set the sample size.
const STALL_GROWTH: f64 = 4.0;
/// Slices each sample of bodies measured side by side is taken in, each body's slices
/// interleaved with the others' in alternating order. A burst of stolen time or a frequency
/// step then falls on every body of the round alike, where whole samples in a row would
/// leave it on one of them: the paired ratios cancel it.
const SLICES_PER_SAMPLE: u64 = 8;

/// The machine this process runs on.
pub struct RealHost {
    timer: RealTimer,
    /// The online CPUs within the affinity this process started with.
    usable_cpus: Vec<usize>,
}

impl Default for RealHost {
    /// This machine, its best clock detected and calibrated now (about 40 ms), and the CPUs
    /// the process may use as it starts (before any `--pin`).
    fn default() -> RealHost {
        RealHost::with_clock(Clock::detect())
    }
}

impl RealHost {
    /// This machine, timed with `clock`.
    pub fn with_clock(clock: Clock) -> RealHost {
        let allowed = isolation::allowed_cpus();
        let online = environment::online_cpus();
        let usable_cpus = if online.is_empty() {
            allowed
        } else {
            online.into_iter().filter(|c| allowed.contains(c)).collect()
        };
        RealHost {
            timer: RealTimer { clock },
            usable_cpus,
        }
    }
}

impl Timing for RealHost {
    fn timer(&self) -> &dyn Timer {
        &self.timer
    }

    fn now(&self) -> SystemTime {
        SystemTime::now()
    }

    fn elapsed(&self, since: Instant) -> Duration {
        since.elapsed()
    }
}

impl Cpus for RealHost {
    fn online_cpus(&self) -> Vec<usize> {
        environment::online_cpus()
    }

    fn allowed_cpus(&self) -> Vec<usize> {
        isolation::allowed_cpus()
    }

    fn every_cpu(&self) -> Vec<usize> {
        self.usable_cpus.clone()
    }

    fn set_allowed_cpus(&self, cpus: &[usize]) -> Result<(), String> {
        isolation::set_allowed_cpus(cpus)
    }

    fn thread_siblings(&self, cpu: usize) -> Vec<usize> {
        environment::thread_siblings(cpu)
    }

    fn core_classes(&self) -> Vec<CoreClass> {
        environment::core_classes()
    }
}

impl Inventory for RealHost {
    fn environment(&self) -> Environment {
        Environment::collect()
    }

    fn perf_counters(&self) -> PerfCounters {
        PerfCounters::probe()
    }

    fn caches(&self) -> Vec<CacheInfo> {
        environment::cache_hierarchy()
    }

    fn memory_nodes(&self) -> Vec<MemoryNode> {
        environment::memory_nodes()
    }

    fn clocksource(&self) -> Option<String> {
        environment::clocksource()
    }

    fn memory_modules(&self) -> Result<Vec<MemoryModule>, String> {
        environment::memory_modules()
    }

    fn available_memory_bytes(&self) -> Option<u64> {
        environment::available_memory_bytes()
    }

    fn load_average(&self) -> Option<[f64; 3]> {
        environment::load_average()
    }
}

impl Controls for RealHost {
    fn lock_runs(&self, wait: Duration, cancel: &AtomicBool) -> Result<RunLock, LockRefused> {
        RunLock::acquire(wait, cancel)
    }

    fn lock_memory(&self) -> Result<(), String> {
        isolation::lock_memory()
    }

    fn bind_memory(&self, node: Option<usize>) -> Result<(), String> {
        isolation::bind_memory(node)
    }

    fn nodes_of_pages(&self, addresses: &[*const u8]) -> Result<Vec<Option<usize>>, String> {
        isolation::nodes_of_pages(addresses)
    }

    fn enter_realtime(&self) -> Result<(), String> {
        isolation::enter_realtime(isolation::RUN_PRIORITY)
    }
}

/// Samples with this machine's clock. Each phase is its own short function: time the cold
/// call, calibrate, sample. Samples of the benchmark and of the empty loop are taken in
/// pairs, their order alternating, so that slow drift (frequency, a neighbour's load) falls
/// on both alike.
struct RealTimer {
    clock: Clock,
}

impl Timer for RealTimer {
    fn clock(&self) -> &Clock {
        &self.clock
    }

    fn sample_loops(
        &self,
        _names: &[&str],
        bodies: &mut [&mut dyn LoopBody],
        limits: &Limits,
    ) -> Sampled<Vec<LoopRun>> {
        let cold: Vec<CallTime> = bodies
            .iter_mut()
            .map(|body| self.time_call(*body, 1))
            .collect();
        let started = Instant::now();
        let iterations = bodies
            .iter_mut()
            .zip(&cold)
            .map(|(body, &cold)| self.calibrate(*body, cold, limits))
            .collect::<Result<Vec<u64>, Interrupted>>()?;
        // The first call alone, less the median cost of an empty timed region: below the
        // clock's resolution this is noise, and may be negative; renderers say so.
        let overhead_ns = self.clock.info().region_overhead_ns;
        let cold_ns = cold.iter().map(|c| c.timed_ns - overhead_ns).collect();
        self.sample_calibrated(&iterations, bodies, cold_ns, limits, started)
    }

    fn sample_slow_loops(
        &self,
        _names: &[&str],
        bodies: &mut [&mut dyn LoopBody],
        first_ns: &[f64],
        limits: &Limits,
    ) -> Sampled<Vec<LoopRun>> {
        let overhead_ns = self.clock.info().region_overhead_ns;
        let cold_ns = first_ns.iter().map(|ns| ns - overhead_ns).collect();
        let iterations = vec![1; bodies.len()];
        self.sample_calibrated(&iterations, bodies, cold_ns, limits, Instant::now())
    }

    fn sample_events(
        &self,
        names: &[&str],
        count: usize,
        _operations: u64,
        event: &mut dyn FnMut(&Clock, &mut [f64]),
        limits: &Limits,
    ) -> Sampled<EventRun> {
        let mut figures = vec![0.0; names.len()];
        event(&self.clock, &mut figures);
        let cold_ns = figures.clone();
        let started = Instant::now();
        let usage = ThreadUsage::now();
        let mut series_ns: Vec<Vec<f64>> = vec![Vec::with_capacity(count); names.len()];
        let mut cpu_ns = Vec::with_capacity(count);
        let mut taken = 0;
        while limits.wants_more(taken, count, started) {
            limits.check()?;
            let cpu_before = thread_cpu_ns();
            event(&self.clock, &mut figures);
            if THREAD_CPU_TIME {
                cpu_ns.push(thread_cpu_ns().saturating_sub(cpu_before) as f64);
            }
            for (series, &figure) in series_ns.iter_mut().zip(&figures) {
                series.push(figure);
            }
            taken += 1;
        }
        Ok(EventRun {
            series_ns,
            cold_ns,
            cpu_ns,
            integrity: usage.elapsed(),
        })
    }

    fn events_timed_elsewhere(
        &self,
        _name: &str,
        samples_ns: Vec<f64>,
        _limits: &Limits,
    ) -> Vec<f64> {
        samples_ns
    }
}

/// How long one timed call of a body lasted, in nanoseconds: the region it timed, and the
/// whole call (with any untimed work, such as a batch's inputs made).
#[derive(Debug, Clone, Copy)]
struct CallTime {
    timed_ns: f64,
    whole_ns: f64,
}

impl CallTime {
    /// Whether the call lasted `threshold_ns`, timed or whole.
    fn reaches(self, threshold_ns: f64) -> bool {
        self.timed_ns >= threshold_ns || self.whole_ns >= threshold_ns
    }

    /// Whether the call lasted more than `factor` times `before`, timed or whole.
    fn grew_past(self, before: CallTime, factor: f64) -> bool {
        self.timed_ns > factor * before.timed_ns || self.whole_ns > factor * before.whole_ns
    }
}

impl RealTimer {
    /// Times one call of `iterations` turns of `body`.
    fn time_call(&self, body: &mut dyn LoopBody, iterations: u64) -> CallTime {
        let call = Instant::now();
        let timed_ns = self.clock.ticks_to_ns(body.time(&self.clock, iterations));
        CallTime {
            timed_ns,
            whole_ns: call.elapsed().as_nanos() as f64,
        }
    }

    /// Samples bodies whose iteration counts are set, each run given its cold call, with how
    /// the thread fared while sampling.
    fn sample_calibrated(
        &self,
        iterations: &[u64],
        bodies: &mut [&mut dyn LoopBody],
        cold_ns: Vec<f64>,
        limits: &Limits,
        started: Instant,
    ) -> Sampled<Vec<LoopRun>> {
        let usage = ThreadUsage::now();
        let mut samples = self.sample_rounds(iterations, bodies, limits, started)?;
        let integrity = usage.elapsed();
        if !THREAD_CPU_TIME {
            samples.iter_mut().for_each(LoopSamples::forget_cpu_times);
        }
        Ok(samples
            .into_iter()
            .zip(cold_ns)
            .map(|(samples, cold_ns)| LoopRun {
                samples,
                cold_ns,
                integrity,
            })
            .collect())
    }

    /// Doubles the iteration count until one sample lasts at least the target time and
    /// [`RESOLUTIONS_PER_SAMPLE`] clock resolutions, or until the whole call (its untimed
    /// work too: a batch's inputs made, its outputs dropped) lasts that long. A cheap body
    /// whose inputs cost a microsecond each to make would otherwise make millions of them
    /// for every sample, and one benchmark run for minutes past its budget.
    ///
    /// One stalled call must not set the sample size: a call preempted, or waiting on a
    /// peer thread not yet running, can last the target at one iteration, and every sample
    /// after it would then be a single call below the clock's resolution. A call that
    /// reaches the target having grown more than [`STALL_GROWTH`] times over the one before
    /// it (`cold`, the first call, before the first) is timed again, and the count is kept
    /// only if the second call reaches the target too.
    fn calibrate(
        &self,
        body: &mut dyn LoopBody,
        cold: CallTime,
        limits: &Limits,
    ) -> Result<u64, Interrupted> {
        let threshold_ns = (limits.config.target_sample_time.as_nanos() as f64)
            .max(RESOLUTIONS_PER_SAMPLE * self.clock.info().resolution_ns);
        let mut previous = cold;
        let mut iterations = 1;
        loop {
            limits.check()?;
            let mut call = self.time_call(body, iterations);
            if iterations >= MAX_ITERATIONS {
                return Ok(iterations);
            }
            if call.reaches(threshold_ns) {
                if !call.grew_past(previous, STALL_GROWTH) {
                    return Ok(iterations);
                }
                limits.check()?;
                call = self.time_call(body, iterations);
                if call.reaches(threshold_ns) {
                    return Ok(iterations);
                }
            }
            previous = call;
            iterations *= 2;
        }
    }

    /// Takes rounds of samples: in each, one sample of every body and one of its empty loop,
    /// the bodies in order on even rounds and in reverse on odd ones, and for each body the
    /// empty loop first on even rounds and last on odd ones.
    fn sample_rounds(
        &self,
        iterations: &[u64],
        bodies: &mut [&mut dyn LoopBody],
        limits: &Limits,
        started: Instant,
    ) -> Result<Vec<LoopSamples>, Interrupted> {
        let wanted = limits.config.samples;
        // Bodies sampled side by side take each sample in slices, interleaved with the
        // others' (see SLICES_PER_SAMPLE); one body alone takes it whole.
        let slices: Vec<u64> = iterations
            .iter()
            .map(|&n| {
                if bodies.len() > 1 {
                    n.clamp(1, SLICES_PER_SAMPLE)
                } else {
                    1
                }
            })
            .collect();
        let mut samples: Vec<LoopSamples> = iterations
            .iter()
            .zip(&slices)
            .map(|(&n, &k)| LoopSamples::with_capacity(n / k * k, wanted))
            .collect();
        let mut round = 0;
        while limits.wants_more_rounds(round, wanted, started, bodies.len()) {
            let most_slices = slices.iter().copied().max().unwrap_or(1);
            let mut totals = vec![((0.0, 0.0), (0.0, 0.0)); bodies.len()];
            for slice in 0..most_slices {
                let mut order: Vec<usize> = (0..bodies.len()).collect();
                if (round as u64 * most_slices + slice) % 2 == 1 {
                    order.reverse();
                }
                for i in order.into_iter().filter(|&i| slice < slices[i]) {
                    limits.check()?;
                    if let Some(pause) = limits.config.pause_between_samples {
                        std::thread::sleep(pause);
                    }
                    let per_slice = iterations[i] / slices[i];
                    let (bench, empty) =
                        self.sample_pair(per_slice, &mut *bodies[i], round % 2 == 0);
                    let total = &mut totals[i];
                    total.0 = (total.0.0 + bench.0, total.0.1 + bench.1);
                    total.1 = (total.1.0 + empty.0, total.1.1 + empty.1);
                }
            }
            for (sampled, (bench, empty)) in samples.iter_mut().zip(totals) {
                sampled.push(bench, empty);
            }
            round += 1;
        }
        Ok(samples)
    }

    /// One sample of the benchmark and one of the empty loop, each as (wall, CPU)
    /// nanoseconds; the empty loop first when `empty_first`.
    fn sample_pair(
        &self,
        iterations: u64,
        body: &mut dyn LoopBody,
        empty_first: bool,
    ) -> ((f64, f64), (f64, f64)) {
        let mut timed = |empty: bool| {
            let cpu_before = thread_cpu_ns();
            let ticks = if empty {
                body.time_empty(&self.clock, iterations)
            } else {
                body.time(&self.clock, iterations)
            };
            let cpu_ns = (thread_cpu_ns().saturating_sub(cpu_before))
                .saturating_sub(body.untimed_cpu_ns()) as f64;
            (self.clock.ticks_to_ns(ticks), cpu_ns)
        };
        if empty_first {
            let empty = timed(true);
            (timed(false), empty)
        } else {
            let bench = timed(false);
            (bench, timed(true))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// A body that records each timed call (its name and iteration count) in a shared log.
    struct Logged {
        name: char,
        log: Rc<RefCell<Vec<(char, u64)>>>,
    }

    impl LoopBody for Logged {
        fn time(&mut self, clock: &Clock, iterations: u64) -> u64 {
            self.log.borrow_mut().push((self.name, iterations));
            clock.time_loop(iterations, &mut || std::hint::black_box(1u64) + 1)
        }

        fn time_empty(&mut self, clock: &Clock, iterations: u64) -> u64 {
            clock.time_loop(iterations, &mut || ())
        }
    }

    /// A body of a cheap add whose timed calls (counted from 1, the cold call first) for
    /// which `stalls` holds each sleep `stall` once.
    struct Stalling {
        calls: u32,
        stalls: fn(u32) -> bool,
        stall: Duration,
    }

    impl Stalling {
        fn new(stalls: fn(u32) -> bool, stall: Duration) -> Stalling {
            Stalling {
                calls: 0,
                stalls,
                stall,
            }
        }
    }

    impl LoopBody for Stalling {
        fn time(&mut self, clock: &Clock, iterations: u64) -> u64 {
            self.calls += 1;
            let mut stall = (self.stalls)(self.calls);
            let pause = self.stall;
            clock.time_loop(iterations, &mut || {
                if std::mem::take(&mut stall) {
                    std::thread::sleep(pause);
                }
                std::hint::black_box(1u64) + 1
            })
        }

        fn time_empty(&mut self, clock: &Clock, iterations: u64) -> u64 {
            clock.time_loop(iterations, &mut || ())
        }
    }

    fn calibrated_iterations(body: &mut Stalling) -> u64 {
        let mut config = Config::quick();
        config.samples = 3;
        config.target_sample_time = Duration::from_micros(200);
        let limits = Limits {
            config: &config,
            abort: None,
        };
        let runs = RealHost::default()
            .timer()
            .sample_loops(&["stalling"], &mut [body], &limits)
            .unwrap();
        runs[0].samples.iterations
    }

    /// A cheap body whose first calibrating call stalled for ten times the target is still
    /// sampled in calls of many iterations: one stall does not set the sample size (it once
    /// left a cache line's round trip timed one call a sample, below the clock's resolution).
    #[test]
    fn one_stalled_call_does_not_set_the_sample_size() {
        let mut body = Stalling::new(|call| call == 2, Duration::from_millis(2));
        let iterations = calibrated_iterations(&mut body);
        assert!(iterations >= 1024, "{iterations} iterations a sample");
    }

    /// A body whose every call lasts past the target is sampled one call at a time: a stall
    /// confirmed by the next call is the body's cost.
    #[test]
    fn a_call_slow_every_time_is_sampled_alone() {
        let mut body = Stalling::new(|_| true, Duration::from_millis(1));
        assert_eq!(calibrated_iterations(&mut body), 1);
        // From the second call on (the cold call was quick): confirmed, not taken on one call.
        let mut body = Stalling::new(|call| call >= 2, Duration::from_millis(1));
        assert_eq!(calibrated_iterations(&mut body), 1);
    }

    #[test]
    fn bodies_side_by_side_take_their_samples_in_interleaved_slices() {
        let host = RealHost::default();
        let log = Rc::new(RefCell::new(Vec::new()));
        let mut a = Logged {
            name: 'a',
            log: Rc::clone(&log),
        };
        let mut b = Logged {
            name: 'b',
            log: Rc::clone(&log),
        };
        let mut config = Config::quick();
        config.samples = 5;
        config.target_sample_time = Duration::from_micros(200);
        let limits = Limits {
            config: &config,
            abort: None,
        };
        let runs = host
            .timer()
            .sample_loops(&["a", "b"], &mut [&mut a, &mut b], &limits)
            .unwrap();
        assert_eq!(runs.len(), 2);
        // The timed calls after calibration: per sample, each body in eight slices of an
        // eighth of its iterations, alternating between the bodies, the order reversed from
        // one slice to the next.
        let log = log.borrow();
        let samples = runs[0].samples.len();
        assert_eq!(samples, runs[1].samples.len());
        let sampled = &log[log.len() - 2 * SLICES_PER_SAMPLE as usize * samples..];
        // Each body has its own calibrated count (the two can differ on a loaded machine).
        let slice =
            |name: char| runs[usize::from(name == 'b')].samples.iterations / SLICES_PER_SAMPLE;
        assert!(
            sampled.iter().all(|&(name, n)| n == slice(name)),
            "{sampled:?}"
        );
        let names: String = sampled.iter().map(|&(name, _)| name).collect();
        assert!(names.starts_with("abbaabba"), "{names}");
        assert!(
            names.as_bytes().chunks(2).all(|pair| pair[0] != pair[1]),
            "{names}"
        );
    }
}
