//! One run of the selected benchmarks: each set measured side by side, the results kept in
//! order, and each benchmark of a compared set given its ratio to the set's baseline.

use crate::bencher::{Bencher, Pending};
use crate::bodies::LONG_CALLS;
use crate::registry::Benchmark;
use latlab_engine::analysis::paired_ratio;
use latlab_engine::host::LoopBody;
use latlab_engine::{BenchResult, Interrupted, Runner};

/// What every benchmark's result says of its method.
pub(crate) const METHOD: &str = "latlab-bench: the slope between 1 and 4 calls per turn of a \
     monomorphised loop, each result through a value sink, sampled side by side with the \
     benchmarks it is compared with";

/// Parameter keys of a compared benchmark's result.
pub(crate) mod key {
    /// The name of the benchmark it is compared with.
    pub const BASELINE: &str = "baseline";
    /// Its time divided by the baseline's, the median of the paired ratios.
    pub const RATIO: &str = "ratio";
    /// The 95% confidence interval of that ratio.
    pub const RATIO_CI95: &str = "ratio_ci95";
}

/// Whether benchmarks are measured, or each called once to check that it runs (as `cargo
/// test` runs bench targets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Measure,
    Once,
}

/// A benchmark that could not be measured, and why.
pub(crate) struct Failure {
    pub name: String,
    pub reason: String,
}

pub(crate) struct Session {
    runner: Runner,
    mode: Mode,
    /// The results, in the order the sets were run; the baseline of a set first.
    pub results: Vec<BenchResult>,
    /// The benchmarks run once, in `Once` mode.
    pub checked: Vec<String>,
    pub failures: Vec<Failure>,
}

impl Session {
    pub fn new(runner: Runner, mode: Mode) -> Session {
        Session {
            runner,
            mode,
            results: Vec::new(),
            checked: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// Runs one set of benchmarks side by side.
    pub fn run_set(&mut self, set: &[Benchmark]) {
        self.next(set, Vec::new());
    }

    /// Calls the next benchmark of the set with the bodies gathered so far; after the last,
    /// measures them all.
    pub(crate) fn next(&mut self, rest: &[Benchmark], pending: Vec<Pending<'_>>) {
        match rest.split_first() {
            None => self.measure(pending),
            Some((benchmark, rest)) => {
                let bencher = Bencher::new(self, benchmark, rest, pending);
                (benchmark.entry.run)(bencher, benchmark.arg_index);
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
                body.short.time(&clock, 1);
                self.checked.push(body.benchmark_name.clone());
            }
            return;
        }
        match self.measure_side_by_side(&mut pending) {
            Ok(results) => self.results.extend(compared(results)),
            Err(Interrupted) => {
                for body in &pending {
                    self.fail(&body.benchmark_name, "interrupted".into());
                }
            }
        }
    }

    /// Both bodies of every benchmark of the set, interleaved; one slope per benchmark. Each
    /// body gets half the budget of a benchmark.
    fn measure_side_by_side(
        &mut self,
        pending: &mut [Pending<'_>],
    ) -> Result<Vec<BenchResult>, Interrupted> {
        let names: Vec<String> = pending.iter().map(|p| p.benchmark_name.clone()).collect();
        let subjects: Vec<(&str, &str)> = names
            .iter()
            .flat_map(|name| [(name.as_str(), METHOD); 2])
            .collect();
        let mut bodies: Vec<&mut dyn LoopBody> = Vec::with_capacity(subjects.len());
        for p in pending.iter_mut() {
            bodies.push(&mut *p.short);
            bodies.push(&mut *p.long);
        }
        let bodies_results = self.runner.scoped(
            |config| config.budget /= 2,
            |runner| runner.bench_interleaved(&subjects, &mut bodies),
        )?;
        let mut bodies_results = bodies_results.into_iter();
        let mut slopes = Vec::with_capacity(names.len());
        while let (Some(short), Some(long)) = (bodies_results.next(), bodies_results.next()) {
            slopes.push(self.runner.slope((1, short), (LONG_CALLS, long)));
        }
        Ok(slopes)
    }
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
