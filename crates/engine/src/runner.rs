//! The runner: a benchmark's path from closure to result, on whichever host it is given.
//!
//! The host's timer takes the raw samples (a real clock calibrating and sampling, or a
//! synthetic one making them up); the runner hands them to one analysis. Cancellation (Ctrl-C)
//! and a probe's own abort flag stop a benchmark at its next sample.

use crate::analysis::{self, Subject};
use crate::clock::Clock;
use crate::config::{Config, Interrupted};
use crate::host::{Closure, Limits, LoopBody, LoopRun, RealHost, SharedHost};
use crate::model::{BenchResult, Integrity};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Runs benchmarks on one host.
pub struct Runner {
    host: SharedHost,
    config: Config,
    /// Set by a probe's own watchdog (a peer process died or hung): stops the benchmark at
    /// the next sample as Ctrl-C does. See [`Runner::with_abort`].
    abort: Option<Arc<AtomicBool>>,
    /// Told the name of each measurement as it begins (see [`Runner::listen`]).
    listener: Option<Listener>,
    /// The timed work runs elsewhere than on the calling thread (see
    /// [`Runner::set_work_elsewhere`]).
    work_elsewhere: bool,
}

/// Told the name of each measurement as it begins, for a progress display: the first name of
/// a group measured together, or of events timed elsewhere when they are recorded.
pub type Listener = Arc<dyn Fn(&str) + Send + Sync>;

impl Runner {
    /// A runner on this machine, its best clock detected and calibrated now (about 40 ms).
    pub fn new(config: Config) -> Runner {
        Runner::on(Arc::new(RealHost::default()), config)
    }

    /// A runner on `host`: this machine, or a synthetic one whose figures are the same
    /// everywhere.
    pub fn on(host: SharedHost, config: Config) -> Runner {
        Runner {
            host,
            config,
            abort: None,
            listener: None,
            work_elsewhere: false,
        }
    }

    /// Says whether the work this runner times runs elsewhere than on the calling thread:
    /// a GPU kernel the thread waits for, or a stand-in driver's worker thread. A sample's
    /// CPU time is evidence that work was done only when the work is the thread's own; for
    /// work elsewhere, a thread that sleeps in its wait would read as doing nothing, and the
    /// verdicts would call the work optimised away. With it set they read wall time, and the
    /// results carry no CPU times. Returns the setting it replaces.
    pub fn set_work_elsewhere(&mut self, elsewhere: bool) -> bool {
        std::mem::replace(&mut self.work_elsewhere, elsewhere)
    }

    /// Tells `listener` the name of each measurement as it begins.
    pub fn listen(&mut self, listener: Listener) {
        self.listener = Some(listener);
    }

    fn announce(&self, name: &str) {
        if let Some(listener) = &self.listener {
            listener(name);
        }
    }

    /// The machine being measured.
    pub fn host(&self) -> &SharedHost {
        &self.host
    }

    /// The clock events are timed with.
    pub fn clock(&self) -> &Clock {
        self.host.timer().clock()
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
    ///
    /// ```
    /// use latlab_engine::{Config, Runner};
    /// use std::time::Duration;
    ///
    /// // Ten samples of at least 200 µs each: enough for an example, too few for a figure.
    /// let config = Config {
    ///     samples: 10,
    ///     target_sample_time: Duration::from_micros(200),
    ///     ..Config::quick()
    /// };
    /// let mut runner = Runner::new(config);
    /// let result = runner.bench("sum/1000", "the sum of 1,000 integers", || {
    ///     (0..1000u64).map(std::hint::black_box).sum::<u64>()
    /// })?;
    /// assert_eq!(result.name, "sum/1000");
    /// assert_eq!(result.summary.n, result.samples_ns.len());
    /// println!("{:.1} ns a call, {:?}", result.summary.median, result.verdict);
    /// # Ok::<(), latlab_engine::Interrupted>(())
    /// ```
    pub fn bench<F: FnMut() -> R, R>(
        &mut self,
        name: &str,
        method: &str,
        f: F,
    ) -> Result<BenchResult, Interrupted> {
        let mut body = Closure {
            body: f,
            operations: 1,
        };
        self.bench_body(name, method, &mut body)
    }

    /// [`Runner::bench`] of a body that performs `operations` operations a call (16
    /// dependent loads, say): the result per operation.
    pub fn bench_operations<F: FnMut() -> R, R>(
        &mut self,
        name: &str,
        method: &str,
        operations: u64,
        f: F,
    ) -> Result<BenchResult, Interrupted> {
        let mut body = Closure {
            body: f,
            operations,
        };
        Ok(self
            .bench_body(name, method, &mut body)?
            .per_operation(operations))
    }

    fn bench_body(
        &mut self,
        name: &str,
        method: &str,
        body: &mut dyn LoopBody,
    ) -> Result<BenchResult, Interrupted> {
        let mut results = self.bench_interleaved(&[(name, method)], &mut [body])?;
        Ok(results.remove(0))
    }

    /// Measures several loop bodies side by side: one round of samples takes one sample of
    /// each, their order reversed every other round (A B, B A …), so that the i-th samples
    /// of any two results were taken together and drift and frequency changes fall on both
    /// alike. Ratios of paired samples are then as steady as the machine allows. Each body is
    /// calibrated, judged against its own empty loop and summarised as [`Runner::bench`]
    /// does; `subjects[i]` is the `(name, method)` of `bodies[i]`.
    pub fn bench_interleaved(
        &mut self,
        subjects: &[(&str, &str)],
        bodies: &mut [&mut dyn LoopBody],
    ) -> Result<Vec<BenchResult>, Interrupted> {
        assert_eq!(subjects.len(), bodies.len(), "one subject per body");
        let (limits, names) = self.begin_sampling(subjects)?;
        let runs = self.host.timer().sample_loops(&names, bodies, &limits)?;
        Ok(self.loop_results(subjects, runs))
    }

    /// Measures bodies whose one call is already known to be slow (their first calls, timed
    /// by the caller, took `first_ns`): one call a sample, with neither another cold call nor
    /// a calibration, interleaved and judged as [`Runner::bench_interleaved`] does.
    pub fn bench_slow_interleaved(
        &mut self,
        subjects: &[(&str, &str)],
        bodies: &mut [&mut dyn LoopBody],
        first_ns: &[f64],
    ) -> Result<Vec<BenchResult>, Interrupted> {
        assert_eq!(subjects.len(), bodies.len(), "one subject per body");
        assert_eq!(first_ns.len(), bodies.len(), "one first call per body");
        let (limits, names) = self.begin_sampling(subjects)?;
        let timer = self.host.timer();
        let runs = timer.sample_slow_loops(&names, bodies, first_ns, &limits)?;
        Ok(self.loop_results(subjects, runs))
    }

    /// The limits of bodies about to be sampled (none when the run was already stopped),
    /// their names, and the first announced to the listener.
    fn begin_sampling<'s>(
        &self,
        subjects: &[(&'s str, &str)],
    ) -> Result<(Limits<'_>, Vec<&'s str>), Interrupted> {
        let limits = self.limits();
        limits.check()?;
        let names: Vec<&str> = subjects.iter().map(|(name, _)| *name).collect();
        if let Some(first) = names.first() {
            self.announce(first);
        }
        Ok((limits, names))
    }

    /// One result per sampled loop, `subjects[i]` its `(name, method)`.
    fn loop_results(&self, subjects: &[(&str, &str)], runs: Vec<LoopRun>) -> Vec<BenchResult> {
        subjects
            .iter()
            .zip(runs)
            .map(|((name, method), mut run)| {
                if self.work_elsewhere {
                    run.samples.forget_cpu_times();
                }
                analysis::timed_loop_result(
                    &self.subject(name, method, self.config.samples),
                    &run.samples,
                    run.cold_ns,
                    run.integrity,
                )
            })
            .collect()
    }

    /// Measures the cost of one operation as the slope between two bodies that differ only
    /// in how many operations they perform per call: `short` performs `short_ops`, `long`
    /// performs `long_ops`. The loop's own instructions are the same in both, so their cost
    /// cancels whether or not the core overlaps them with the body; subtracting an empty
    /// loop instead under-reports a dependent chain of a few cycles, with which the loop's
    /// instructions run in parallel. Each body is sampled as by [`Runner::bench`]; the
    /// result pairs their samples in order (a `Derived` result, `timing` = `slope`), keeps
    /// both bodies' warnings, and is suspect when the longer body does nothing beyond the
    /// empty loop or cannot be told apart from the shorter one
    /// ([`analysis::slope_verdict`]). Each body takes at least
    /// [`analysis::SLOPE_SAMPLES_PER_ROUND`] samples in a round, whatever share of the
    /// samples the round is given, so that the test can tell a slope at all.
    pub fn bench_slope<F: FnMut() -> R, G: FnMut() -> S, R, S>(
        &mut self,
        name: &str,
        method: &str,
        (short_ops, short): (u64, F),
        (long_ops, long): (u64, G),
    ) -> Result<BenchResult, Interrupted> {
        let testable = analysis::SLOPE_SAMPLES_PER_ROUND * self.config.rounds();
        let mut short = Closure {
            body: short,
            operations: short_ops,
        };
        let mut long = Closure {
            body: long,
            operations: long_ops,
        };
        self.scoped(
            |config| config.samples = config.samples.max(testable),
            |runner| {
                let short = runner.bench_body(name, method, &mut short)?;
                let long = runner.bench_body(name, method, &mut long)?;
                Ok(runner.slope((short_ops, short), (long_ops, long)))
            },
        )
    }

    /// The slope between two results of the same work, `short` performing `short_ops`
    /// operations per call and `long` `long_ops`, their samples taken in the same order (one
    /// after the other, or interleaved by [`Runner::bench_interleaved`]): a `Derived` result
    /// per operation, named as `long`, its samples the paired differences, with both bodies'
    /// warnings. It is suspect when the longer body does nothing beyond the empty loop or
    /// cannot be told apart from the shorter one ([`analysis::slope_verdict`]).
    pub fn slope(
        &self,
        (short_ops, short): (u64, BenchResult),
        (long_ops, long): (u64, BenchResult),
    ) -> BenchResult {
        assert!(
            long_ops > short_ops,
            "the long body performs more operations"
        );
        let scale = 1.0 / (long_ops - short_ops) as f64;
        let mut slope =
            BenchResult::derived_difference(&long.name, &long.method, &long, &short, scale)
                .expect("both bodies have samples");
        slope.derived_from.clear();
        // The slope's own verdict: a longer body that does nothing beyond the empty loop, or
        // that cannot be told from the shorter one, leaves no slope. The shorter body alone
        // against the empty loop is no test: one call is a cycle above it.
        // Judged on the CPU where CPU times were taken, and where not on the samples left
        // once the preempted ones are set aside: either way preemption cannot hide a slope.
        let resolution_ns = self.host.timer().info().resolution_ns;
        let judged = |body: &BenchResult| match body.cpu_samples_ns.is_empty() {
            true => analysis::without_preempted(
                &body.samples_ns,
                resolution_ns / body.iterations.max(1) as f64,
            ),
            false => analysis::on_cpu(&body.samples_ns, &body.cpu_samples_ns),
        };
        let verdict = if long.verdict.is_suspect() {
            long.verdict
        } else {
            analysis::slope_verdict(
                &judged(&short),
                &judged(&long),
                slope.iterations,
                resolution_ns,
            )
        };
        slope.absorb(short);
        slope.absorb(long);
        slope.verdict = verdict;
        slope
            .with_parameter(crate::names::key::TIMING, "slope")
            .with_parameter(
                crate::names::key::OPERATIONS_PER_CALL,
                vec![short_ops as usize, long_ops as usize],
            )
    }

    /// Records events that are timed one at a time: `f` performs one event and returns its
    /// duration in ticks of the clock it is given. The first event is the cold one and is
    /// reported apart; `count` more follow, within the time budget.
    pub fn observe<F: FnMut(&Clock) -> u64>(
        &mut self,
        name: &str,
        method: &str,
        count: usize,
        f: F,
    ) -> Result<BenchResult, Interrupted> {
        self.observe_operations(name, method, count, 1, f)
    }

    /// As [`Runner::observe`], for events of `operations` operations each (passes over a
    /// buffer, messages of a burst): the result is per operation.
    pub fn observe_operations<F: FnMut(&Clock) -> u64>(
        &mut self,
        name: &str,
        method: &str,
        count: usize,
        operations: u64,
        mut f: F,
    ) -> Result<BenchResult, Interrupted> {
        let mut results = self.events(&[(name, method)], count, operations, |clock, figures| {
            figures[0] = clock.ticks_to_ns(f(clock));
        })?;
        let result = results.remove(0);
        Ok(match operations {
            1 => result,
            _ => result.per_operation(operations),
        })
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
        let mut stamps = vec![0u64; phases.len() + 1];
        let series: Vec<(&str, &str)> = std::iter::once((name, method))
            .chain(phases.iter().copied())
            .collect();
        self.events(&series, count, 1, |clock, figures| {
            f(clock, &mut stamps);
            let signed_ns = |from: u64, to: u64| {
                if to >= from {
                    clock.ticks_to_ns(to - from)
                } else {
                    -clock.ticks_to_ns(from - to)
                }
            };
            figures[0] = signed_ns(stamps[0], stamps[phases.len()]);
            for (figure, w) in figures[1..].iter_mut().zip(stamps.windows(2)) {
                *figure = signed_ns(w[0], w[1]);
            }
        })
    }

    /// Makes a result of events timed elsewhere (by other threads, each event on its own):
    /// `samples_ns` in the order they happened, the first being the cold one. `None` when
    /// there is no event beyond the cold one.
    pub fn record_observations(
        &self,
        name: &str,
        method: &str,
        samples_ns: Vec<f64>,
    ) -> Option<BenchResult> {
        self.announce(name);
        let samples_ns = self
            .host
            .timer()
            .events_timed_elsewhere(name, samples_ns, &self.limits());
        let (&cold_ns, rest) = samples_ns.split_first()?;
        if rest.is_empty() {
            return None;
        }
        Some(analysis::observations_result(
            &self.subject(name, method, rest.len()),
            rest.to_vec(),
            Vec::new(),
            cold_ns,
            Integrity::default(),
        ))
    }

    /// Samples events cut into series and makes one result per series; the measuring
    /// thread's CPU time belongs to the whole event (the first series), not to a phase.
    fn events(
        &mut self,
        series: &[(&str, &str)],
        count: usize,
        operations: u64,
        mut event: impl FnMut(&Clock, &mut [f64]),
    ) -> Result<Vec<BenchResult>, Interrupted> {
        let limits = self.limits();
        limits.check()?;
        let names: Vec<&str> = series.iter().map(|(name, _)| *name).collect();
        if let Some(first) = names.first() {
            self.announce(first);
        }
        let run = self
            .host
            .timer()
            .sample_events(&names, count, operations, &mut event, &limits)?;
        let mut cpu_ns = Some(run.cpu_ns);
        Ok(series
            .iter()
            .zip(run.series_ns)
            .zip(run.cold_ns)
            .map(|((&(name, method), samples), cold_ns)| {
                analysis::observations_result(
                    &self.subject(name, method, count),
                    samples,
                    cpu_ns.take().unwrap_or_default(),
                    cold_ns,
                    run.integrity,
                )
            })
            .collect())
    }

    fn limits(&self) -> Limits<'_> {
        Limits {
            config: &self.config,
            abort: self.abort.as_deref(),
        }
    }

    fn subject<'a>(&self, name: &'a str, method: &'a str, wanted_samples: usize) -> Subject<'a> {
        Subject {
            name,
            method,
            wanted_samples: self.config.samples_per_round(wanted_samples),
            minimum_samples: self.config.min_samples_per_round(),
            resolution_ns: self.host.timer().info().resolution_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Verdict;
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    fn small_config() -> Config {
        Config {
            samples: 7,
            target_sample_time: Duration::from_micros(200),
            ..Config::quick()
        }
    }

    #[test]
    fn a_listener_hears_each_measurement_as_it_begins() {
        let heard = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let mut runner = Runner::new(small_config());
        let log = Arc::clone(&heard);
        runner.listen(Arc::new(move |name| {
            log.lock().unwrap().push(name.to_string())
        }));
        runner.bench("first", "an addition", || 1 + 1).unwrap();
        runner
            .observe("second", "a clock read", 3, |clock| {
                let start = clock.start();
                clock.end().saturating_sub(start)
            })
            .unwrap();
        runner.record_observations("third", "made up", vec![1.0, 2.0, 3.0]);
        assert_eq!(*heard.lock().unwrap(), ["first", "second", "third"]);
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

    /// By slope, a dependent multiplication costs about three dependent additions on
    /// x86-64 (3 cycles and 1), whatever the loop around them costs.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_slope_times_a_dependent_chain_in_cycles() {
        macro_rules! chain {
            ($op:literal, $n:literal, $x:ident) => {{
                // SAFETY: register arithmetic only.
                unsafe {
                    std::arch::asm!(concat!(".rept ", $n), $op, ".endr", x = inout(reg) $x,
                        k = in(reg) 3u64, options(nomem, nostack))
                };
                $x
            }};
        }
        // Chains of 64 and 256 cycles or more: what each call costs besides the chain (the
        // state kept in memory between calls) stays a small part of the slope, and the long
        // body, four times the short, stays slower than it on a guest whose loops run at two
        // speeds up to 1.8x apart from sample to sample (twice the short one did not).
        fn slope_ns(
            runner: &mut Runner,
            short: impl FnMut() -> u64,
            long: impl FnMut() -> u64,
            ops: u64,
        ) -> (f64, Verdict) {
            let slope = runner
                .bench_slope("chain", "a dependent chain", (ops, short), (4 * ops, long))
                .unwrap();
            (slope.summary.median, slope.verdict)
        }
        let mut runner = Runner::new(small_config());
        let (mut a, mut b, mut c, mut d) = (1u64, 1u64, 1u64, 1u64);
        // Three times each, interleaved, the median kept: a slope is a difference of two
        // timings, so noise (other tests on the same CPUs) moves it either way.
        let (mut adds, mut multiplies) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let (ns, _) = slope_ns(
                &mut runner,
                || chain!("add {x}, {k}", "64", a),
                || chain!("add {x}, {k}", "256", b),
                64,
            );
            adds.push(ns);
            let (ns, verdict) = slope_ns(
                &mut runner,
                || chain!("imul {x}, {k}", "32", c),
                || chain!("imul {x}, {k}", "128", d),
                32,
            );
            multiplies.push(ns);
            assert_eq!(verdict, Verdict::Measured);
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[1]
        };
        let (add, multiply) = (median(adds), median(multiplies));
        let cycles = multiply / add;
        assert!(
            (2.4..3.6).contains(&cycles),
            "imul {multiply} ns, add {add} ns"
        );
    }

    /// A round's share of a sweep point's samples (four of a third of ten, in three rounds)
    /// is too few for the slope's test to pass at all; a slope takes
    /// `SLOPE_SAMPLES_PER_ROUND` a round anyway, so a clear slope is measured, not called
    /// optimised away as every cache-sized chase point was.
    #[test]
    fn a_slope_in_a_round_of_few_samples_is_still_told() {
        let chain = |links: u64| {
            move || {
                let mut x = std::hint::black_box(1u64);
                for _ in 0..links {
                    x = std::hint::black_box(x.wrapping_mul(3).wrapping_add(1));
                }
                x
            }
        };
        // Samples of 1 ms and chains four times apart, so that a sample or two slowed by
        // the tests beside this one (on a 2-CPU machine) cannot hide the slope.
        let mut runner = Runner::new(Config {
            samples: 10,
            rounds: 3,
            target_sample_time: Duration::from_millis(1),
            ..small_config()
        });
        assert!(runner.config().samples_per_round(10) < analysis::SLOPE_SAMPLES_PER_ROUND);
        let slope = runner
            .bench_slope(
                "chain",
                "a dependent chain",
                (64, chain(64)),
                (256, chain(256)),
            )
            .unwrap();
        assert!(
            slope.summary.n >= analysis::SLOPE_SAMPLES_PER_ROUND,
            "{}",
            slope.summary.n
        );
        assert_eq!(slope.verdict, Verdict::Measured, "{:?}", slope.summary);
        assert_eq!(runner.config().samples, 10, "the scope is undone");
    }

    /// Two empty bodies, or two that the compiler reduced to the same work, have no slope
    /// between them: the verdict says so.
    #[test]
    fn a_slope_between_deleted_bodies_is_optimised_away() {
        let mut runner = Runner::new(small_config());
        let slope = runner
            .bench_slope(
                "deleted",
                "products nobody reads",
                (1, || {
                    let _unused = 3u64.wrapping_mul(7);
                }),
                (2, || {
                    let _unused = 3u64.wrapping_mul(7);
                    let _also_unused = 5u64.wrapping_mul(11);
                }),
            )
            .unwrap();
        assert_eq!(slope.verdict, Verdict::OptimisedAway, "{:?}", slope.summary);
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
