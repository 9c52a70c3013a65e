//! One run of the selected benchmarks: each set measured side by side, once per round, the
//! results kept in order; once a set's rounds are merged, each benchmark of a compared set
//! is given its ratio to the set's baseline and its time in cycles.

use crate::alloc;
use crate::bencher::Benchmark;
use crate::bencher::{Bencher, Cost, Pair, Pending, SetRunner, Throughput};
use crate::measured::Measured;
#[cfg(feature = "profile")]
use crate::profile::Profiler;
use crate::threads::{self, Threaded};
use latlab_engine::analysis::paired_ratio;
use latlab_engine::cycle::{self, Cycle};
use latlab_engine::host::LoopBody;
use latlab_engine::model::Allocations;
use latlab_engine::names::key;
use latlab_engine::{BenchResult, Config, Interrupted, MIN_SAMPLES, Runner};
use std::time::Duration;

/// What a slow benchmark's result says of its method.
pub(crate) const SLOW_METHOD: &str = "latlab-bench: one call per sample, timed directly (a \
     call too slow for the slope's samples to fit the budget; the loop's overhead, less the \
     empty loop's, is far below its noise), all samples in the first round, side by side \
     with the benchmarks it is compared with";

/// What every benchmark's result says of its method.
pub(crate) const METHOD: &str = "latlab-bench: the slope between 1 and 4 calls per turn of a \
     monomorphised loop (4 and 16 for calls under 20 ns), each result through a value sink, \
     sampled side by side with the benchmarks it is compared with";

/// Whether benchmarks are measured, or each called once to check that it runs (as `cargo
/// test` runs bench targets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Measure,
    Once,
    /// Each benchmark's bodies counted under Valgrind, in the counting child
    /// ([`crate::count`]), nothing timed.
    Count,
    /// A benchmark's body timed in slices as the harness comparing this build with another
    /// asks ([`crate::against::slices`]).
    #[cfg(feature = "files")]
    Serve,
}

/// A benchmark that could not be measured (failed, or skipped), and why.
pub(crate) struct Failure {
    pub name: String,
    pub reason: String,
}

pub(crate) struct Session {
    runner: Runner,
    mode: Mode,
    /// Profiles each benchmark after measuring it, when `--profile` asked and it can.
    #[cfg(feature = "profile")]
    profiler: Option<Profiler>,
    /// The core's cycle, measured before the first benchmark, against which each result's
    /// time is also given in cycles.
    cycle: Option<Cycle>,
    /// Whether this is the first round: only it counts allocations and profiles (a merged
    /// result keeps the first round's), and only in it does a set of slow calls take all
    /// its samples.
    first_round: bool,
    /// Whether the last set run took all its samples at once (every call in it slow): the
    /// later rounds leave it out.
    pub measured_whole: bool,
    /// The results, in the order the sets were run; the baseline of a set first.
    pub results: Vec<BenchResult>,
    /// The benchmarks run once, in `Once` mode.
    pub checked: Vec<String>,
    pub failures: Vec<Failure>,
    /// The benchmarks this machine could not measure, and why: threads that could not run
    /// together. Not failures: the run's status is not theirs.
    pub skipped: Vec<Failure>,
    /// Whether a set stopped because the run was cancelled (Ctrl-C).
    pub interrupted: bool,
    /// The CPU the run was pinned to, from which a threaded benchmark's threads are pinned
    /// one CPU each.
    pinned_cpu: Option<usize>,
    /// Whether each benchmark's instructions are counted with the CPU's counter after it
    /// is measured (`--count instructions --via perf`).
    count_with_perf: bool,
}

impl Session {
    pub fn new(runner: Runner, mode: Mode) -> Session {
        Session {
            runner,
            mode,
            #[cfg(feature = "profile")]
            profiler: None,
            cycle: None,
            first_round: true,
            measured_whole: false,
            results: Vec::new(),
            checked: Vec::new(),
            failures: Vec::new(),
            skipped: Vec::new(),
            interrupted: false,
            pinned_cpu: None,
            count_with_perf: false,
        }
    }

    /// Counts each benchmark's instructions with the CPU's counter after measuring it.
    pub fn count_with_perf(&mut self) {
        self.count_with_perf = true;
    }

    /// Pins a threaded benchmark's threads one CPU each, from `cpu` on.
    pub fn pin_threads_from(&mut self, cpu: Option<usize>) {
        self.pinned_cpu = cpu;
    }

    /// Profiles every benchmark after it is measured.
    #[cfg(feature = "profile")]
    pub fn profile_with(&mut self, profiler: Profiler) {
        self.profiler = Some(profiler);
    }

    /// Whether the sets run from now on are in the first round: they also count allocations
    /// and profile, and a set of slow calls takes all its samples; not in the later ones.
    pub fn first_round_from_now(&mut self, first: bool) {
        self.first_round = first;
    }

    /// Runs one set of benchmarks side by side. A benchmark that panics fails its set, with
    /// the panic's message; the run goes on with the next set.
    pub fn run_set(&mut self, set: &[Benchmark]) {
        let names: Vec<&str> = set.iter().map(|b| b.name.as_str()).collect();
        crate::watchdog::starting(&names.join(", "));
        self.measured_whole = false;
        self.run_set_named(set);
        crate::watchdog::finished();
    }

    fn run_set_named(&mut self, set: &[Benchmark]) {
        if let ([benchmark], Some(threads), Mode::Measure) = (set, set[0].threads, self.mode) {
            self.run_threaded(benchmark, threads);
            return;
        }
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.next(set, Vec::new());
        }));
        if let Err(panic) = ran {
            let reason = format!("panicked: {}", latlab_front::panic_message(panic.as_ref()));
            for benchmark in set {
                self.fail(&benchmark.name, reason.clone());
            }
        }
    }

    /// Measures a benchmark of `threads = [..]` on `threads` threads at once.
    fn run_threaded(&mut self, benchmark: &Benchmark, threads: usize) {
        match threads::measure(&mut self.runner, benchmark, threads, self.pinned_cpu) {
            Ok(Threaded::Measured(result)) => self.results.push(*result),
            Ok(Threaded::Interrupted) => self.interrupted = true,
            Ok(Threaded::NotTogether(reason)) => self.skipped.push(Failure {
                name: benchmark.name.clone(),
                reason,
            }),
            Err(reason) => self.fail(&benchmark.name, reason),
        }
    }

    /// Calls the next benchmark of the set with the bodies gathered so far; after the last,
    /// measures them all.
    pub(crate) fn next(&mut self, rest: &[Benchmark], pending: Vec<Pending<'_>>) {
        match rest.split_first() {
            None => self.measure(pending),
            Some((benchmark, rest)) => {
                let bencher = Bencher::new(self, benchmark, rest, pending);
                (benchmark.run)(bencher, benchmark.arg_index);
            }
        }
    }

    pub(crate) fn fail(&mut self, name: &str, reason: String) {
        self.failures.push(Failure {
            name: name.to_string(),
            reason,
        });
    }

    fn measure(&mut self, mut pending: Vec<Pending<'_>>) {
        if pending.is_empty() {
            return;
        }
        if self.mode == Mode::Once {
            let clock = self.runner.clock().clone();
            for body in &mut pending {
                body.one.time(&clock, 1);
                self.checked.push(body.benchmark_name.clone());
            }
            return;
        }
        #[cfg(feature = "files")]
        if self.mode == Mode::Serve {
            let clock = self.runner.clock().clone();
            crate::against::slices::serve_body(&mut pending[0], &clock);
            return;
        }
        if self.mode == Mode::Count {
            let clock = self.runner.clock().clone();
            for body in &mut pending {
                crate::count::child::count_under_valgrind(
                    &body.benchmark_name,
                    body.one,
                    body.four,
                    &clock,
                );
            }
            return;
        }
        let measured = self
            .measure_cycle()
            .and_then(|()| self.measure_side_by_side(&mut pending));
        match measured {
            Ok(measured) => {
                for (body, (result, how)) in pending.iter_mut().zip(measured) {
                    let result = match body.throughput {
                        Some(Throughput::Bytes(n)) => result.with_bytes_per_operation(n),
                        Some(Throughput::Items(n)) => result.with_items_per_operation(n),
                        None => result,
                    };
                    let result = if self.first_round {
                        self.examine(body, result, &how)
                    } else {
                        result
                    };
                    self.results.push(result);
                }
            }
            Err(Interrupted) => self.interrupted = true,
        }
    }

    /// Measures the core's cycle, the first time only, with the quick suite's sampling
    /// whatever the benchmarks' own (it takes a few tenths of a second).
    fn measure_cycle(&mut self) -> Result<(), Interrupted> {
        if self.cycle.is_none() {
            let quick = Config::quick();
            let cycle = self.runner.scoped(
                |config| {
                    config.samples = quick.samples;
                    config.target_sample_time = quick.target_sample_time;
                    config.budget = quick.budget;
                },
                cycle::measure,
            )?;
            self.cycle = Some(cycle);
        }
        Ok(())
    }

    /// The core's cycle, once measured (before the first benchmark).
    pub fn cycle(&self) -> Option<&Cycle> {
        self.cycle.as_ref()
    }

    /// A set's results, its rounds merged: each after the first given its ratio to the
    /// first, and each its time in cycles.
    pub fn finished(&self, results: Vec<BenchResult>) -> Vec<BenchResult> {
        let mut results = compared(results);
        if let Some(cycle) = &self.cycle {
            in_cycles(cycle, &mut results);
        }
        results
    }

    /// What else was asked of a measured benchmark: its allocations per call where a
    /// counting allocator is installed, its instructions under `--count instructions --via
    /// perf`, its profile under `--profile`.
    fn examine(
        &mut self,
        body: &mut Pending<'_>,
        result: BenchResult,
        how: &Measured,
    ) -> BenchResult {
        let clock = self.runner.clock().clone();
        let mut result = result;
        if alloc::installed() && how.allocations.is_some() {
            result.allocations = how.allocations.clone();
        } else if alloc::installed() {
            let (calls_per_turn, counted) = body.counted(how.cost);
            let (count, bytes) = alloc::count_in_timed_regions(|| {
                counted.time(&clock, how.turns);
            });
            let calls = how.turns * calls_per_turn;
            result.allocations = Some(Allocations {
                count: count as f64 / calls as f64,
                bytes: bytes as f64 / calls as f64,
                calls,
            });
        }
        #[cfg(all(feature = "profile", any(target_os = "linux", target_os = "android")))]
        if self.count_with_perf {
            result.counted = crate::count::perf::count(body.one, body.four, &clock);
        }
        #[cfg(feature = "profile")]
        if let Some(profiler) = &mut self.profiler {
            let Pair { short, long } = body.pair(how.cost);
            result.profile = Some(profiler.profile(&clock, short, long, how));
        }
        result
    }

    /// The bodies of every benchmark of the set (chosen by its cost), interleaved: two for
    /// a slope, or one timed directly for a slow call; one result per benchmark, with how
    /// it was sampled. Each body gets half the budget of a benchmark. A set of slow calls
    /// alone, in the first round, is measured whole ([`Session::measure_slow_set`]).
    fn measure_side_by_side(
        &mut self,
        pending: &mut [Pending<'_>],
    ) -> Result<Vec<(BenchResult, Measured)>, Interrupted> {
        let clock = self.runner.clock().clone();
        let slow_ns = slow_call_ns(self.runner.config());
        let (costs, calls_ns): (Vec<Cost>, Vec<f64>) = (pending.iter_mut())
            .map(|p| p.cost(&clock, slow_ns))
            .unzip();
        if self.first_round && costs.iter().all(|&cost| cost == Cost::Slow) {
            return self.measure_slow_set(pending, &calls_ns);
        }
        let names: Vec<String> = pending.iter().map(|p| p.benchmark_name.clone()).collect();
        let mut subjects: Vec<(&str, &str)> = Vec::new();
        let mut calls = Vec::with_capacity(pending.len());
        let mut bodies: Vec<&mut dyn LoopBody> = Vec::new();
        for ((p, &cost), name) in pending.iter_mut().zip(&costs).zip(&names) {
            if cost == Cost::Slow {
                subjects.push((name, SLOW_METHOD));
                calls.push(None);
                bodies.push(&mut *p.one);
            } else {
                let Pair { short, long } = p.pair(cost);
                subjects.extend([(name.as_str(), METHOD); 2]);
                calls.push(Some((short.0, long.0)));
                bodies.push(short.1);
                bodies.push(long.1);
            }
        }
        let bodies_results = self.runner.scoped(
            |config| config.budget /= 2,
            |runner| runner.bench_interleaved(&subjects, &mut bodies),
        )?;
        let mut bodies_results = bodies_results.into_iter();
        let mut measured = Vec::with_capacity(names.len());
        for (calls, cost) in calls.into_iter().zip(costs) {
            let Some((short_calls, long_calls)) = calls else {
                let Some(direct) = bodies_results.next() else {
                    break;
                };
                let how = Measured::of(&direct, cost, None);
                measured.push((
                    direct.with_parameter(key::CALLS_PER_TURN, &[1usize][..]),
                    how,
                ));
                continue;
            };
            let (Some(short), Some(long)) = (bodies_results.next(), bodies_results.next()) else {
                break;
            };
            let how = Measured::of(&long, cost, None);
            let slope = self
                .runner
                .slope((short_calls, short), (long_calls, long))
                .with_parameter(
                    key::CALLS_PER_TURN,
                    &[short_calls as usize, long_calls as usize][..],
                );
            measured.push((slope, how));
        }
        Ok(measured)
    }

    /// A set of slow calls, whose first calls (made to cost them) took `first_ns`: all its
    /// samples at once, one call each, the benchmarks interleaved, so that the later rounds
    /// leave it out. The first call stands for the cold one and no calibration is made, and
    /// allocations are counted as the samples are taken: no call is made beyond the first
    /// and the samples. The samples stop in time for the set to end within its budget (a
    /// sample starts only while it and the first call still fit), but never before the
    /// fewest a result is given.
    fn measure_slow_set(
        &mut self,
        pending: &mut [Pending<'_>],
        first_ns: &[f64],
    ) -> Result<Vec<(BenchResult, Measured)>, Interrupted> {
        let names: Vec<String> = pending.iter().map(|p| p.benchmark_name.clone()).collect();
        let subjects: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), SLOW_METHOD)).collect();
        let budget_ns = self.runner.config().budget.as_nanos() as f64;
        let calls_ns: f64 = first_ns.iter().sum();
        let for_samples_ns = (budget_ns - 2.0 * calls_ns / first_ns.len() as f64).max(0.0);
        let fewest_ns = MIN_SAMPLES as f64 * calls_ns;
        crate::watchdog::expecting(Duration::from_nanos(fewest_ns.max(budget_ns) as u64));
        if fewest_ns > 2.0 * budget_ns {
            latlab_front::say!(
                "latlab-bench: {} takes {} a call: its fewest samples ({MIN_SAMPLES}) take \
                 about {}, past its budget of {}",
                names.join(", "),
                seconds(calls_ns / names.len() as f64),
                seconds(fewest_ns),
                seconds(budget_ns)
            );
        }
        let mut counted: Vec<alloc::Counted<'_>> = (pending.iter_mut())
            .map(|p| alloc::Counted::new(&mut *p.one))
            .collect();
        let mut bodies: Vec<&mut dyn LoopBody> = (counted.iter_mut())
            .map(|c| c as &mut dyn LoopBody)
            .collect();
        let results = self.runner.scoped(
            |config| {
                config.rounds = 1;
                config.budget = Duration::from_nanos(for_samples_ns as u64);
            },
            |runner| runner.bench_slow_interleaved(&subjects, &mut bodies, first_ns),
        )?;
        self.measured_whole = true;
        Ok(results
            .into_iter()
            .zip(&counted)
            .map(|(result, counted)| {
                let how = Measured::of(&result, Cost::Slow, counted.per_call());
                (
                    result.with_parameter(key::CALLS_PER_TURN, &[1usize][..]),
                    how,
                )
            })
            .collect())
    }
}

/// Nanoseconds as seconds, for a line about a slow call: `13.9 s`, `0.2 s`.
fn seconds(ns: f64) -> String {
    format!("{:.1} s", ns / 1e9)
}

/// The shortest call timed directly: one for which a slope's fewest calls in a run would
/// overrun the benchmark's budget. In each round, a slope makes one call to cost the
/// benchmark, a cold call and a calibration of each of its bodies (one call and four), and
/// the round's fewest samples of each; then one pass of four calls counts allocations.
fn slow_call_ns(config: &Config) -> f64 {
    let calls_per_pair = 5;
    let per_round = 1 + 2 * calls_per_pair + calls_per_pair * config.min_samples_per_round();
    let calls = config.rounds.max(1) * per_round + 4;
    config.budget.as_nanos() as f64 / calls as f64
}

impl SetRunner for Session {
    fn next(&mut self, rest: &[Benchmark], pending: Vec<Pending<'_>>) {
        Session::next(self, rest, pending);
    }

    fn fail(&mut self, name: &str, reason: String) {
        Session::fail(self, name, reason);
    }
}

/// Gives each trustworthy result its time in cycles of `cycle`, and the cycle's doubt where
/// the multiply chain cast one.
fn in_cycles(cycle: &Cycle, results: &mut [BenchResult]) {
    for result in results.iter_mut() {
        if !result.verdict.is_suspect() {
            let cycles = result.summary.median / cycle.ns();
            let parameters = &mut result.parameters;
            parameters.insert(key::CYCLES_PER_CALL.to_string(), cycles.into());
            parameters.insert(key::CORE_CYCLE_NS.to_string(), cycle.ns().into());
        }
    }
    cycle.mark(results);
}

/// The set's results, each after the first given its ratio to the first (the baseline) from
/// their paired samples.
fn compared(mut results: Vec<BenchResult>) -> Vec<BenchResult> {
    if results.len() < 2 {
        return results;
    }
    let baseline = results.remove(0);
    let baseline_name = baseline.name.clone();
    let others: Vec<BenchResult> = results
        .into_iter()
        .map(
            |result| match paired_ratio(&baseline.samples_ns, &result.samples_ns) {
                Some(ratio) if !baseline.verdict.is_suspect() && !result.verdict.is_suspect() => {
                    let with = result
                        .with_parameter(key::BASELINE, &baseline_name)
                        .with_parameter(key::RATIO, ratio.median);
                    match ratio.ci95 {
                        Some([lo, hi]) => with.with_parameter(key::RATIO_CI95, vec![lo, hi]),
                        None => with,
                    }
                }
                _ => result.with_parameter(key::BASELINE, &baseline_name),
            },
        )
        .collect();
    let mut all = vec![baseline];
    all.extend(others);
    all
}
