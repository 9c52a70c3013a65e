//! This machine: its calibrated clock, what sysfs and /proc say of it, and the kernel calls
//! that pin, lock and prioritise.

use super::{EventRun, Host, Limits, LoopBody, LoopRun, Sampled, Timer};
use crate::analysis::LoopSamples;
use crate::clock::Clock;
use crate::config::Interrupted;
use crate::environment::{self, CacheInfo, CoreClass, Environment, MemoryModule};
use crate::isolation::{self, RunLock};
use crate::usage::{ThreadUsage, thread_cpu_ns};
use std::time::{Duration, Instant, SystemTime};

/// The calibrated sample must last at least this many clock resolutions.
const RESOLUTIONS_PER_SAMPLE: f64 = 1000.0;
/// Calibration stops doubling here whatever the sample lasts.
const MAX_ITERATIONS: u64 = 1 << 40;

/// The machine this process runs on.
pub struct RealHost {
    timer: RealTimer,
}

impl Default for RealHost {
    /// This machine, its best clock detected and calibrated now (about 40 ms).
    fn default() -> RealHost {
        RealHost {
            timer: RealTimer {
                clock: Clock::detect(),
            },
        }
    }
}

impl Host for RealHost {
    fn timer(&self) -> &dyn Timer {
        &self.timer
    }

    fn environment(&self) -> Environment {
        Environment::collect()
    }

    fn online_cpus(&self) -> Vec<usize> {
        environment::online_cpus()
    }

    fn allowed_cpus(&self) -> Vec<usize> {
        isolation::allowed_cpus()
    }

    fn set_allowed_cpus(&self, cpus: &[usize]) -> Result<(), String> {
        isolation::set_allowed_cpus(cpus)
    }

    fn thread_siblings(&self, cpu: usize) -> Vec<usize> {
        environment::thread_siblings(cpu)
    }

    fn caches(&self) -> Vec<CacheInfo> {
        environment::cache_hierarchy()
    }

    fn core_classes(&self) -> Vec<CoreClass> {
        environment::core_classes()
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

    fn now(&self) -> SystemTime {
        SystemTime::now()
    }

    fn elapsed(&self, since: Instant) -> Duration {
        since.elapsed()
    }

    fn lock_runs(&self, wait: Duration) -> Result<RunLock, Duration> {
        RunLock::acquire(wait)
    }

    fn lock_memory(&self) -> Result<(), String> {
        isolation::lock_memory()
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
        let cold_ns: Vec<f64> = bodies
            .iter_mut()
            .map(|body| self.time_cold_call(*body))
            .collect();
        let started = Instant::now();
        let iterations = bodies
            .iter_mut()
            .map(|body| self.calibrate(*body, limits))
            .collect::<Result<Vec<u64>, Interrupted>>()?;
        let usage = ThreadUsage::now();
        let samples = self.sample_rounds(&iterations, bodies, limits, started)?;
        let integrity = usage.elapsed();
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

    fn sample_events(
        &self,
        names: &[&str],
        count: usize,
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
        while limits.wants_more(cpu_ns.len(), count, started) {
            limits.check()?;
            let cpu_before = thread_cpu_ns();
            event(&self.clock, &mut figures);
            cpu_ns.push(thread_cpu_ns().saturating_sub(cpu_before) as f64);
            for (series, &figure) in series_ns.iter_mut().zip(&figures) {
                series.push(figure);
            }
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

impl RealTimer {
    /// The first call alone, less the median cost of an empty timed region: below the clock's
    /// resolution this is noise, and may be negative; renderers say so.
    fn time_cold_call(&self, body: &mut dyn LoopBody) -> f64 {
        let ticks = body.time(&self.clock, 1);
        self.clock.ticks_to_ns(ticks) - self.clock.info().region_overhead_ns
    }

    /// Doubles the iteration count until one sample lasts at least the target time and
    /// [`RESOLUTIONS_PER_SAMPLE`] clock resolutions.
    fn calibrate(&self, body: &mut dyn LoopBody, limits: &Limits) -> Result<u64, Interrupted> {
        let threshold_ns = (limits.config.target_sample_time.as_nanos() as f64)
            .max(RESOLUTIONS_PER_SAMPLE * self.clock.info().resolution_ns);
        let mut iterations = 1;
        loop {
            limits.check()?;
            let elapsed_ns = self.clock.ticks_to_ns(body.time(&self.clock, iterations));
            if elapsed_ns >= threshold_ns || iterations >= MAX_ITERATIONS {
                return Ok(iterations);
            }
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
        let mut samples: Vec<LoopSamples> = iterations
            .iter()
            .map(|&n| LoopSamples::with_capacity(n, wanted))
            .collect();
        let mut round = 0;
        while limits.wants_more_rounds(round, wanted, started, bodies.len()) {
            let mut order: Vec<usize> = (0..bodies.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for i in order {
                limits.check()?;
                if let Some(pause) = limits.config.pause_between_samples {
                    std::thread::sleep(pause);
                }
                let (bench, empty) =
                    self.sample_pair(iterations[i], &mut *bodies[i], round % 2 == 0);
                samples[i].push(bench, empty);
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
            let cpu_ns = thread_cpu_ns().saturating_sub(cpu_before) as f64;
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
