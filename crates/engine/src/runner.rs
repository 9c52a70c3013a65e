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
    /// Set by a probe's own watchdog (a peer process died or hung): stops the benchmark at
    /// the next sample as Ctrl-C does. See [`Runner::with_abort`].
    abort: Option<Arc<AtomicBool>>,
}

impl Runner {
    /// A runner on this machine's best clock (detected and calibrated now, in about 40 ms).
    pub fn new(config: Config) -> Runner {
        Runner {
            clock: Clock::detect(),
            config,
            fake: None,
            abort: None,
        }
    }

    /// A runner whose figures are synthetic and the same on every machine, so that whatever
    /// renders them can be tested exactly. The benchmarks still run once each.
    pub fn with_fake_clock(config: Config) -> Runner {
        Runner {
            clock: Clock::fake(),
            config,
            fake: Some(FakeTimer),
            abort: None,
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

    /// Runs `body` with a second cancel flag: when `abort` is set (by a watchdog that killed
    /// a hung peer, or by a measured closure that saw its peer die), the benchmark under way
    /// stops at its next sample or calibration step with [`Interrupted`], and the caller,
    /// which knows why, reports the failure. Without it, a benchmark whose peer is gone would
    /// calibrate a loop of failing calls up to its iteration limit.
    pub fn with_abort<T>(
        &mut self,
        abort: Arc<AtomicBool>,
        body: impl FnOnce(&mut Runner) -> T,
    ) -> T {
        let saved = self.abort.replace(abort);
        let out = body(self);
        self.abort = saved;
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

    /// Records events that pass through consecutive phases, such as a thread's creation,
    /// start and end. `f` performs one event and fills the slice it is given with clock ticks
    /// (of the clock it is given, which may be read on any thread): when the event began, then
    /// when each phase ended, so the slice has one more entry than `phases`. The first event
    /// is the cold one and is reported apart; `count` more follow, within the time budget.
    ///
    /// Returns the whole event (first timestamp to last) named `name`, then one result per
    /// phase, each an `(name, method)` pair. Timestamps taken on different CPUs need not be
    /// in order, so a phase's samples may be negative (a thread that ran before the call that
    /// created it returned); they are kept as measured. Phase samples add up to the whole
    /// event's, event by event.
    pub fn observe_phases<F: FnMut(&Clock, &mut [u64])>(
        &mut self,
        name: &str,
        method: &str,
        phases: &[(&str, &str)],
        count: usize,
        mut f: F,
    ) -> Result<Vec<BenchResult>, Interrupted> {
        self.check_cancel()?;
        let mut stamps = vec![0u64; phases.len() + 1];
        if let Some(fake) = &self.fake {
            f(&self.clock, &mut stamps);
            let mut results = vec![fake.observe(name, method, count)];
            results.extend(
                phases
                    .iter()
                    .map(|(phase, phase_method)| fake.observe(phase, phase_method, count)),
            );
            return Ok(results);
        }
        let signed_ns = |from: u64, to: u64| {
            if to >= from {
                self.clock.ticks_to_ns(to - from)
            } else {
                -self.clock.ticks_to_ns(from - to)
            }
        };
        let event_ns = |stamps: &[u64]| -> Vec<f64> {
            let mut spans = vec![signed_ns(stamps[0], stamps[phases.len()])];
            spans.extend(stamps.windows(2).map(|w| signed_ns(w[0], w[1])));
            spans
        };
        f(&self.clock, &mut stamps);
        let cold = event_ns(&stamps);
        let started = Instant::now();
        let usage = ThreadUsage::now();
        let mut spans: Vec<Vec<f64>> = vec![Vec::with_capacity(count); phases.len() + 1];
        let mut cpu_samples_ns = Vec::with_capacity(count);
        while spans[0].len() < count.max(MIN_SAMPLES) {
            self.check_cancel()?;
            if spans[0].len() >= MIN_SAMPLES && started.elapsed() > self.config.budget {
                break;
            }
            let cpu_before = thread_cpu_ns();
            f(&self.clock, &mut stamps);
            cpu_samples_ns.push(thread_cpu_ns().saturating_sub(cpu_before) as f64);
            for (series, span) in spans.iter_mut().zip(event_ns(&stamps)) {
                series.push(span);
            }
        }
        let integrity = usage.elapsed();
        let names = std::iter::once((name, method)).chain(phases.iter().copied());
        Ok(names
            .zip(spans)
            .zip(cold)
            .enumerate()
            .map(|(i, (((name, method), samples), cold_ns))| {
                // The thread's CPU time belongs to the whole event, not to one phase.
                let cpu = if i == 0 {
                    cpu_samples_ns.clone()
                } else {
                    Vec::new()
                };
                analysis::observations_result(
                    &self.subject(name, method, count),
                    samples,
                    cpu,
                    cold_ns,
                    integrity,
                )
            })
            .collect())
    }

    /// Makes a result of events timed elsewhere (by other threads, each event on its own):
    /// `samples_ns` in the order they happened, the first being the cold one. In test mode
    /// the figures are the fake timer's, like every other result's.
    pub fn record_observations(
        &self,
        name: &str,
        method: &str,
        samples_ns: Vec<f64>,
    ) -> Option<BenchResult> {
        let (&cold_ns, rest) = samples_ns.split_first()?;
        if let Some(fake) = &self.fake {
            return Some(fake.observe(name, method, rest.len()));
        }
        if rest.is_empty() {
            return None;
        }
        Some(analysis::observations_result(
            &self.subject(name, method, rest.len()),
            rest.to_vec(),
            Vec::new(),
            cold_ns,
            crate::model::Integrity::default(),
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
        let aborted = self
            .abort
            .as_ref()
            .is_some_and(|abort| abort.load(Ordering::Relaxed));
        if aborted || self.config.cancel.load(Ordering::Relaxed) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn small_config() -> Config {
        Config {
            samples: 7,
            target_sample_time: Duration::from_micros(200),
            ..Config::quick()
        }
    }

    /// Phases are spans between consecutive timestamps and add up to the whole event; a
    /// phase that waits longer shows it.
    #[test]
    fn phases_add_up_to_the_whole_event() {
        let mut runner = Runner::new(small_config());
        let results = runner
            .observe_phases(
                "event",
                "two phases",
                &[("event/short", "no wait"), ("event/long", "a 200 µs sleep")],
                7,
                |clock, stamps| {
                    stamps[0] = clock.start();
                    stamps[1] = clock.end();
                    std::thread::sleep(Duration::from_micros(200));
                    stamps[2] = clock.end();
                },
            )
            .unwrap();
        let [whole, short, long] = &results[..] else {
            panic!("{} results", results.len());
        };
        assert_eq!(short.name, "event/short");
        assert!(long.summary.median >= 200_000.0, "{:?}", long.summary);
        assert!(short.summary.median < 0.1 * long.summary.median);
        for i in 0..whole.samples_ns.len() {
            let sum = short.samples_ns[i] + long.samples_ns[i];
            assert!((sum - whole.samples_ns[i]).abs() < 1.0, "event {i}");
        }
    }

    /// A set abort flag stops the benchmark under way, and is forgotten afterwards.
    #[test]
    fn an_abort_flag_stops_the_benchmark() {
        let mut runner = Runner::new(small_config());
        let abort = Arc::new(AtomicBool::new(false));
        let mut calls = 0u64;
        let outcome = runner.with_abort(Arc::clone(&abort), |runner| {
            runner.bench("aborted", "a peer that died", || {
                calls += 1;
                abort.store(true, Ordering::Relaxed);
            })
        });
        assert_eq!(outcome.unwrap_err(), Interrupted);
        assert!(calls < 10, "{calls} calls after the abort");
        assert!(runner.bench("after", "no abort", || 1u8).is_ok());
    }
}
