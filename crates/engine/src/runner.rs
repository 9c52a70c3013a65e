//! Calibration and sampling: how many iterations make one sample, and taking the samples.
//!
//! Each phase is its own short function: time the cold call, calibrate, sample, analyse.
//! Samples of the benchmark and of the same loop with an empty body are taken in pairs, their
//! order alternating, so that slow drift (frequency, a neighbour's load) falls on both alike.

use crate::analysis::{self, LoopSamples, Subject};
use crate::clock::Clock;
use crate::fake::FakeTimer;
use crate::model::BenchResult;
use crate::usage::{ThreadUsage, thread_cpu_ns};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The fewest samples a result is ever made of, whatever the time budget.
pub const MIN_SAMPLES: usize = 5;
/// The calibrated sample must last at least this many clock resolutions.
const RESOLUTIONS_PER_SAMPLE: f64 = 1000.0;
/// Calibration stops doubling here whatever the sample lasts.
const MAX_ITERATIONS: u64 = 1 << 40;

/// How much to measure.
#[derive(Debug, Clone)]
pub struct Config {
    /// Samples per benchmark (fewer when the budget runs out, never fewer than [`MIN_SAMPLES`]).
    pub samples: usize,
    /// The least time one calibrated sample should last.
    pub target_sample_time: Duration,
    /// Time allowed for one benchmark's samples.
    pub budget: Duration,
    /// Sleep this long before each sample, so a real-time thread blocks regularly and its
    /// RLIMIT_RTTIME allowance is renewed.
    pub pause_between_samples: Option<Duration>,
    /// Set from elsewhere (a signal handler) to stop at the next sample.
    pub cancel: Arc<AtomicBool>,
}

impl Config {
    /// The quick suite: 30 samples of at least 2 ms, at most 1 s a benchmark.
    pub fn quick() -> Config {
        Config {
            samples: 30,
            target_sample_time: Duration::from_millis(2),
            budget: Duration::from_secs(1),
            pause_between_samples: None,
            cancel: Arc::default(),
        }
    }

    /// The full suite: 100 samples of at least 5 ms, at most 10 s a benchmark.
    pub fn full() -> Config {
        Config {
            samples: 100,
            target_sample_time: Duration::from_millis(5),
            budget: Duration::from_secs(10),
            ..Config::quick()
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        Config::quick()
    }
}

/// The run was cancelled (Ctrl-C) before the benchmark finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;

/// Runs benchmarks with one calibrated clock.
pub struct Runner {
    clock: Clock,
    config: Config,
    fake: Option<FakeTimer>,
}

impl Runner {
    /// A runner on this machine's best clock (detected and calibrated now, in about 40 ms).
    pub fn new(config: Config) -> Runner {
        Runner {
            clock: Clock::detect(),
            config,
            fake: None,
        }
    }

    /// A runner whose figures are synthetic and the same on every machine, so that whatever
    /// renders them can be tested exactly. The benchmarks still run once each.
    pub fn with_fake_clock(config: Config) -> Runner {
        Runner {
            clock: Clock::fake(),
            config,
            fake: Some(FakeTimer),
        }
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Runs `body` with the configuration changed by `adjust` (a sweep of hundreds of sizes
    /// takes fewer, shorter samples per size), then restores it. The cancel flag is shared
    /// whatever `adjust` does.
    pub fn scoped<T>(
        &mut self,
        adjust: impl FnOnce(&mut Config),
        body: impl FnOnce(&mut Runner) -> T,
    ) -> T {
        let saved = self.config.clone();
        adjust(&mut self.config);
        self.config.cancel = Arc::clone(&saved.cancel);
        let out = body(self);
        self.config = saved;
        out
    }

    /// Measures the cost of one call of `f`: its result goes through a value sink, the empty
    /// loop's cost is subtracted, and the verdict says whether anything was left to measure.
    pub fn bench<F: FnMut() -> R, R>(
        &mut self,
        name: &str,
        method: &str,
        mut f: F,
    ) -> Result<BenchResult, Interrupted> {
        self.check_cancel()?;
        if let Some(fake) = &self.fake {
            std::hint::black_box(f());
            return Ok(fake.bench(name, method, &self.config));
        }
        let cold_ns = self.time_cold_call(&mut f);
        let started = Instant::now();
        let iterations = self.calibrate(&mut f)?;
        let usage = ThreadUsage::now();
        let samples = self.sample_pairs(iterations, &mut f, started)?;
        Ok(analysis::timed_loop_result(
            &self.subject(name, method, self.config.samples),
            &samples,
            cold_ns,
            usage.elapsed(),
        ))
    }

    /// Records events that are timed one at a time: `f` performs one event and returns its
    /// duration in ticks of the clock it is given. The first event is the cold one and is
    /// reported apart; `count` more follow, within the time budget.
    pub fn observe<F: FnMut(&Clock) -> u64>(
        &mut self,
        name: &str,
        method: &str,
        count: usize,
        mut f: F,
    ) -> Result<BenchResult, Interrupted> {
        self.check_cancel()?;
        if let Some(fake) = &self.fake {
            f(&self.clock);
            return Ok(fake.observe(name, method, count));
        }
        let cold_ns = self.clock.ticks_to_ns(f(&self.clock));
        let started = Instant::now();
        let usage = ThreadUsage::now();
        let mut samples_ns = Vec::with_capacity(count);
        let mut cpu_samples_ns = Vec::with_capacity(count);
        while samples_ns.len() < count.max(MIN_SAMPLES) {
            self.check_cancel()?;
            if samples_ns.len() >= MIN_SAMPLES && started.elapsed() > self.config.budget {
                break;
            }
            let cpu_before = thread_cpu_ns();
            let ticks = f(&self.clock);
            cpu_samples_ns.push(thread_cpu_ns().saturating_sub(cpu_before) as f64);
            samples_ns.push(self.clock.ticks_to_ns(ticks));
        }
        Ok(analysis::observations_result(
            &self.subject(name, method, count),
            samples_ns,
            cpu_samples_ns,
            cold_ns,
            usage.elapsed(),
        ))
    }

    fn subject<'a>(&self, name: &'a str, method: &'a str, wanted_samples: usize) -> Subject<'a> {
        Subject {
            name,
            method,
            wanted_samples,
            resolution_ns: self.clock.info().resolution_ns,
        }
    }

    fn check_cancel(&self) -> Result<(), Interrupted> {
        if self.config.cancel.load(Ordering::Relaxed) {
            Err(Interrupted)
        } else {
            Ok(())
        }
    }

    /// The first call alone, less the median cost of an empty timed region: below the clock's
    /// resolution this is noise, and may be negative; renderers say so.
    fn time_cold_call<F: FnMut() -> R, R>(&self, f: &mut F) -> f64 {
        let ticks = self.clock.time_loop(1, f);
        self.clock.ticks_to_ns(ticks) - self.clock.info().region_overhead_ns
    }

    /// Doubles the iteration count until one sample lasts at least the target time and
    /// [`RESOLUTIONS_PER_SAMPLE`] clock resolutions.
    fn calibrate<F: FnMut() -> R, R>(&self, f: &mut F) -> Result<u64, Interrupted> {
        let threshold_ns = (self.config.target_sample_time.as_nanos() as f64)
            .max(RESOLUTIONS_PER_SAMPLE * self.clock.info().resolution_ns);
        let mut iterations = 1;
        loop {
            self.check_cancel()?;
            let elapsed_ns = self.clock.ticks_to_ns(self.clock.time_loop(iterations, f));
            if elapsed_ns >= threshold_ns || iterations >= MAX_ITERATIONS {
                return Ok(iterations);
            }
            iterations *= 2;
        }
    }

    /// Takes samples of the benchmark and of the empty loop, alternating which goes first.
    fn sample_pairs<F: FnMut() -> R, R>(
        &self,
        iterations: u64,
        f: &mut F,
        started: Instant,
    ) -> Result<LoopSamples, Interrupted> {
        let mut samples = LoopSamples::with_capacity(iterations, self.config.samples);
        for index in 0..self.config.samples.max(MIN_SAMPLES) {
            self.check_cancel()?;
            if index >= MIN_SAMPLES && started.elapsed() > self.config.budget {
                break;
            }
            if let Some(pause) = self.config.pause_between_samples {
                std::thread::sleep(pause);
            }
            if index % 2 == 0 {
                let empty = self.sample(iterations, &mut || ());
                let bench = self.sample(iterations, f);
                samples.push(bench, empty);
            } else {
                let bench = self.sample(iterations, f);
                let empty = self.sample(iterations, &mut || ());
                samples.push(bench, empty);
            }
        }
        Ok(samples)
    }

    /// One sample: (wall nanoseconds, thread CPU nanoseconds) for `iterations` calls.
    fn sample<F: FnMut() -> R, R>(&self, iterations: u64, f: &mut F) -> (f64, f64) {
        let cpu_before = thread_cpu_ns();
        let ticks = self.clock.time_loop(iterations, f);
        let cpu_ns = thread_cpu_ns().saturating_sub(cpu_before);
        (self.clock.ticks_to_ns(ticks), cpu_ns as f64)
    }
}
