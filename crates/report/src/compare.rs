//! Comparing runs: the same results side by side, the ratio to the first run, and whether
//! each difference is larger than the noise.
//!
//! Each side is one run or several runs of the same code. A result is `faster` or `slower`
//! only when every test agrees: the Mann–Whitney U test on the two sides' samples rejects
//! "same distribution" (two-sided, normal approximation with the tie correction;
//! distribution-free, as timing samples need); Welch's t test on the logarithms of the
//! sides' repetitions rejects a ratio of 1 (the run medians where a side has several runs,
//! else the rounds' medians that one run measured, widened by how far its family's results
//! moved between the two runs, see [`latlab_engine::welch`]), since samples of one run
//! cannot see how far a figure moves between runs; the larger of the two p-values, adjusted
//! for the number of results of its family compared (Benjamini–Hochberg, each probe's
//! results one family), is below 0.05, so that hundreds of results compared at once do not
//! yield their 5% of chance differences; and the
//! medians differ by more than a threshold (2% unless asked otherwise) and by more than one
//! tick of the clock per operation (quantised figures with equal medians are the same).
//! Otherwise `same`, with the reason, however different the medians
//! look. Each later run gets a summary
//! ("3 slower, 2 faster, 40 same"), results in only one run are listed, and the comparison
//! renders as text, Markdown, CSV and JSON. The environments are listed side by side, and
//! every line where they differ is marked, since a difference between machines is often the
//! answer.

use crate::ExportError;
use crate::terminal::{Paint, Terminal};
use crate::text_table::{Align, TextTable};
use crate::units::{format_clock, format_ns, format_ratio};
use latlab_engine::environment::describe_core_classes;
use latlab_engine::model::{BenchResult, ResultKind, RunRecord};
use latlab_engine::names::key;
use latlab_engine::names::result::{STABILITY_MEMORY_CHASE, checked_by};
use latlab_engine::stats::{benjamini_hochberg, half_range_share, mann_whitney_p, median_in_place};
use latlab_engine::welch::{RatioTest, log_ratio_scatter, ratio_test};
use std::fmt::Write as _;

/// Below this p-value a difference is called real.
pub const SIGNIFICANCE: f64 = 0.05;
/// A difference of medians smaller than this share is called the same, however significant:
/// a few per cent is what runs of one machine differ by.
pub const DEFAULT_THRESHOLD: f64 = 0.02;
/// Fewer samples than this on either side and no test is made.
const MIN_SAMPLES: usize = 3;

/// What the comparison of one result in one later run against the first said.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    Faster {
        p: f64,
    },
    Slower {
        p: f64,
    },
    /// No difference beyond the noise: the test did not reject, or the medians differ by
    /// less than the threshold or than one tick of the clock per operation.
    Same {
        p: f64,
        why: SameBecause,
    },
    /// Too few samples to test (a derived figure, a single observation), or a figure
    /// extrapolated rather than measured.
    Untested,
    /// The stability check that speaks for this figure's family (`check`) moved during one
    /// of the runs, or reads differently in the two sides' runs: the machine under them
    /// changed, so a difference says nothing about the code.
    NotComparable {
        check: &'static str,
        how: Unsteady,
    },
}

/// How a stability check said that the machine changed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unsteady {
    /// Its end disagreed with its start in one of the runs.
    DuringRun,
    /// Steady within each run, but every figure it read in one side's runs (starts and
    /// ends) lies beyond its floor from every figure of the other side's: the two sides ran
    /// on a machine that differs there (a last-level cache taken by neighbours, vCPUs placed
    /// on one core or two). `first_ns` and `later_ns` are the nearest figures of each side.
    BetweenRuns { first_ns: f64, later_ns: f64 },
}

/// Why a difference was called the same.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SameBecause {
    /// The test did not reject "same distribution".
    NotSignificant,
    /// The samples differ, but the ratio's interval from the sides' repetitions (rounds or
    /// runs) holds 1: the figure moves this much between runs, `×(1 ± half_width)`.
    RunToRunNoise { half_width: f64 },
    /// Each test rejects at 5%, but not once adjusted for the `results` of its family tested
    /// together (Benjamini–Hochberg): among that many, some differ that much by chance.
    Chance { results: usize },
    /// Significant, but the medians differ by less than the threshold.
    WithinThreshold,
    /// The medians differ by less than one tick of the clock per operation (or not at all):
    /// quantised figures.
    WithinResolution,
}

/// One result's tests, before the results that a side compared are weighed together.
struct Tests {
    /// The Mann–Whitney p-value on the two sides' samples.
    samples_p: f64,
    /// The ratio against the noise of the sides' repetitions, where there is any.
    noise: Option<RatioTest>,
    /// The two sides' figures, first and later.
    figures: (f64, f64),
    /// The figures differ by less than a tick of the clock per operation, or not at all.
    within_resolution: bool,
}

impl Tests {
    /// `first` and `later` are one result as each side measured it; `quantum_ns` is one
    /// clock tick per operation, the coarser of the two; `between_runs_sd` how far results
    /// move between runs beyond what their rounds show. `None` when there is nothing to
    /// test: too few samples, or a figure extrapolated rather than measured.
    fn of(
        first: &Measured,
        later: &Measured,
        quantum_ns: f64,
        between_runs_sd: Option<f64>,
    ) -> Option<Tests> {
        if first.sample_count() < MIN_SAMPLES
            || later.sample_count() < MIN_SAMPLES
            || first.is_extrapolated()
            || later.is_extrapolated()
        {
            return None;
        }
        let (a, b) = (first.median(), later.median());
        Some(Tests {
            samples_p: mann_whitney_p(&first.samples(), &later.samples()),
            noise: ratio_test(&first.repetitions(), &later.repetitions(), between_runs_sd),
            figures: (a, b),
            within_resolution: a == b || (b - a).abs() < quantum_ns,
        })
    }

    /// The p-value of a difference that both tests see: the larger of the two, as a
    /// difference is called only when both reject.
    fn joint_p(&self) -> f64 {
        self.noise
            .map_or(self.samples_p, |n| self.samples_p.max(n.p))
    }

    /// Whether the figures differ by less than `threshold`, a share of the first (never
    /// from a first figure of 0: any difference from nothing is past every threshold).
    fn within_threshold(&self, threshold: f64) -> bool {
        let (a, b) = self.figures;
        a != 0.0 && ((b / a) - 1.0).abs() < threshold
    }

    /// The verdict, given the joint p-value adjusted for the `results` tested together.
    fn verdict(&self, adjusted_p: f64, results: usize, threshold: f64) -> Verdict {
        let p = adjusted_p;
        let same = |why| Verdict::Same { p, why };
        if self.within_resolution {
            same(SameBecause::WithinResolution)
        } else if self.samples_p >= SIGNIFICANCE {
            same(SameBecause::NotSignificant)
        } else if let Some(noise) = self.noise.filter(|n| n.p >= SIGNIFICANCE) {
            same(SameBecause::RunToRunNoise {
                half_width: noise.half_width(),
            })
        } else if p >= SIGNIFICANCE {
            same(SameBecause::Chance { results })
        } else if self.within_threshold(threshold) {
            same(SameBecause::WithinThreshold)
        } else if self.figures.1 > self.figures.0 {
            Verdict::Slower { p }
        } else {
            Verdict::Faster { p }
        }
    }
}

impl Verdict {
    /// One word: `faster`, `slower`, `same`, `untested` or `not comparable`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Faster { .. } => "faster",
            Verdict::Slower { .. } => "slower",
            Verdict::Same { .. } => "same",
            Verdict::Untested => "untested",
            Verdict::NotComparable { .. } => "not comparable",
        }
    }

    /// The p-value of the test, when one was made.
    pub fn p(self) -> Option<f64> {
        match self {
            Verdict::Faster { p } | Verdict::Slower { p } | Verdict::Same { p, .. } => Some(p),
            Verdict::Untested | Verdict::NotComparable { .. } => None,
        }
    }

    fn label(self, threshold: f64) -> String {
        match self {
            Verdict::Faster { p } => format!("faster (p {})", format_p(p)),
            Verdict::Slower { p } => format!("slower (p {})", format_p(p)),
            Verdict::Same { p, why } => match why {
                SameBecause::NotSignificant => format!("same (p {})", format_p(p)),
                SameBecause::WithinThreshold => {
                    format!(
                        "same (p {}, within {}%)",
                        format_p(p),
                        format_percent(threshold)
                    )
                }
                SameBecause::WithinResolution => "same (within a clock tick)".into(),
                SameBecause::RunToRunNoise { half_width } => format!(
                    "same (within run-to-run noise, ±{}%)",
                    format_percent_rounded(half_width)
                ),
                SameBecause::Chance { results } => {
                    format!(
                        "same (p {}, adjusted for {results} results of its family)",
                        format_p(p)
                    )
                }
            },
            Verdict::Untested => "untested".into(),
            Verdict::NotComparable {
                check,
                how: Unsteady::DuringRun,
            } => format!("not comparable (the machine moved: {check})"),
            Verdict::NotComparable {
                check,
                how: Unsteady::BetweenRuns { first_ns, later_ns },
            } => format!(
                "not comparable (the machine differs: {check} {} against {})",
                format_ns(later_ns),
                format_ns(first_ns)
            ),
        }
    }
}

fn format_p(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// Results compared one run a side, fewer than this, and the scatter of their ratios
/// between the runs is not taken as the run-to-run noise: too few to gauge it.
pub const MIN_RESULTS_FOR_SCATTER: usize = 20;

/// How a later side's run-to-run noise was known.
#[derive(Debug, Clone, PartialEq)]
pub enum RunToRun {
    /// A side had several runs: each result's runs show how far it moves between runs.
    Measured,
    /// One run a side: each result's rounds show how far it moves within a run, and the
    /// scatter of the ratios between the two runs (a standard deviation of logarithms) how
    /// far results move between runs besides: each family's own where it has at least
    /// [`MIN_RESULTS_FOR_SCATTER`] results (`families`), else that of all `results`
    /// (`scatter`), since families differ: file writes move between runs far more than
    /// cache latencies.
    Estimated {
        scatter: f64,
        results: usize,
        families: Vec<(String, f64)>,
    },
    /// One run a side and too few results to gauge how far they move between runs: only
    /// the rounds within each run are seen.
    Unknown,
}

/// One side of a comparison: its label and its runs, one or several of the same code on the
/// same machine; several show how far each figure moves between runs.
#[derive(Debug, Clone)]
pub struct Side {
    pub label: String,
    pub runs: Vec<RunRecord>,
}

impl Side {
    /// A side of one run.
    pub fn one(label: &str, run: RunRecord) -> Side {
        Side {
            label: label.to_string(),
            runs: vec![run],
        }
    }

    fn first_run(&self) -> &RunRecord {
        &self.runs[0]
    }
}

/// One result as one side measured it: once per run of the side.
pub struct Measured<'a> {
    results: Vec<&'a BenchResult>,
}

impl<'a> Measured<'a> {
    /// The result named `name` in each of `runs` that has it.
    fn of(runs: &[&'a RunRecord], name: &str) -> Measured<'a> {
        Measured {
            results: (runs.iter())
                .filter_map(|run| run.results().find(|r| r.name == name))
                .collect(),
        }
    }

    /// The side's figure: the result's median, or the median of the runs' medians.
    fn median(&self) -> f64 {
        match &self.results[..] {
            [one] => one.summary.median,
            many => median_in_place(&mut many.iter().map(|r| r.summary.median).collect::<Vec<_>>()),
        }
    }

    /// Every run's samples together.
    fn samples(&self) -> Vec<f64> {
        (self.results.iter())
            .flat_map(|r| r.samples_ns.iter().copied())
            .collect()
    }

    fn sample_count(&self) -> usize {
        self.results.iter().map(|r| r.samples_ns.len()).sum()
    }

    fn is_extrapolated(&self) -> bool {
        self.results.iter().any(|r| r.is_extrapolated())
    }

    /// The figures of independent repetitions: each run's median where the side has
    /// several runs, else the rounds' medians of its one run, else its median alone.
    fn repetitions(&self) -> Vec<f64> {
        match &self.results[..] {
            [one] if one.round_medians_ns.len() > 1 => one.round_medians_ns.clone(),
            [one] => vec![one.summary.median],
            many => many.iter().map(|r| r.summary.median).collect(),
        }
    }

    /// How far the repetitions lie apart, as the table's `rounds ±` says it for one run
    /// (see [`half_range_share`]); `None` with fewer than two.
    fn spread(&self) -> Option<f64> {
        half_range_share(&self.repetitions())
    }
}

/// The stability checks that speak for `result`, as measured in `run`: those of its family
/// (see [`checked_by`]), less the memory chases for a working set within the private caches
/// (at most the level below the last one the kernel reports), which neither main memory
/// nor the neighbours who share the last cache can move.
fn checks_for(run: &RunRecord, result: &BenchResult) -> &'static [&'static str] {
    let checks = checked_by(&result.name);
    let working_set = (result.parameter(key::WORKING_SET_BYTES))
        .or_else(|| result.parameter(key::SIZE_ESTIMATE_BYTES))
        .and_then(|v| v.as_u64());
    let private = private_cache_bytes(run);
    let memory = checks.contains(&STABILITY_MEMORY_CHASE);
    match (working_set, private) {
        (Some(set), Some(private)) if memory && set <= private => &[],
        _ => checks,
    }
}

/// The largest cache below the last level the kernel reports in `run`'s environment.
fn private_cache_bytes(run: &RunRecord) -> Option<u64> {
    let mut sizes: Vec<u64> = (run.environment.caches.iter())
        .filter(|c| c.kind != "Instruction")
        .map(|c| c.size_bytes)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    match sizes[..] {
        [.., below, _last] => Some(below),
        _ => None,
    }
}

/// Whether none of `checks` moved during `run`.
fn steady(run: &RunRecord, checks: &[&str]) -> bool {
    !(run.stability.iter()).any(|c| checks.contains(&c.name.as_str()) && c.moved.is_some())
}

/// The check of `checks` that says the machine under the steady runs of two sides differs:
/// its figures in the two sides lie apart (see [`Unsteady::BetweenRuns`]).
fn differing_check(
    first: &[&RunRecord],
    later: &[&RunRecord],
    checks: &[&'static str],
) -> Option<Changed> {
    checks.iter().find_map(|check| {
        let floor = (first.iter().chain(later))
            .flat_map(|run| &run.stability)
            .find(|c| c.name == *check)?
            .moved_share;
        let (a_low, a_high) = check_range(first, check)?;
        let (b_low, b_high) = check_range(later, check)?;
        let how = if b_low > a_high * (1.0 + floor) {
            Unsteady::BetweenRuns {
                first_ns: a_high,
                later_ns: b_low,
            }
        } else if a_low > b_high * (1.0 + floor) {
            Unsteady::BetweenRuns {
                first_ns: a_low,
                later_ns: b_high,
            }
        } else {
            return None;
        };
        Some((*check, how))
    })
}

/// The check that said the machine changed, and how.
type Changed = (&'static str, Unsteady);

/// Which runs of the later side speak for `result`: those where no check that speaks for it
/// moved; or why none can (every run of a side moved, or the sides' steady runs read a check
/// apart). With several runs a side, a run whose check moved is left out of the families its
/// check speaks for, and the others still compare.
fn comparable_runs<'a>(
    first: &'a Side,
    later: &'a Side,
    result: &BenchResult,
) -> Result<Vec<&'a RunRecord>, Changed> {
    let checks = checks_for(first.first_run(), result);
    let keep = |side: &'a Side| -> Vec<&'a RunRecord> {
        side.runs.iter().filter(|run| steady(run, checks)).collect()
    };
    let (a, b) = (keep(first), keep(later));
    if a.is_empty() || b.is_empty() {
        let moved = (first.runs.iter().chain(&later.runs))
            .flat_map(|run| &run.stability)
            .find(|c| checks.contains(&c.name.as_str()) && c.moved.is_some());
        let check = checks
            .iter()
            .find(|check| moved.is_some_and(|c| c.name == **check))
            .copied()
            .unwrap_or_default();
        return Err((check, Unsteady::DuringRun));
    }
    match differing_check(&a, &b, checks) {
        Some(changed) => Err(changed),
        None => Ok(b),
    }
}

/// The lowest and highest median that stability check `check` read in `runs`, starts and
/// ends together; `None` where no run has it.
fn check_range(runs: &[&RunRecord], check: &str) -> Option<(f64, f64)> {
    let medians: Vec<f64> = (runs.iter())
        .flat_map(|run| &run.stability)
        .filter(|c| c.name == check)
        .flat_map(|c| std::iter::once(&c.start).chain(&c.end))
        .map(|summary| summary.median)
        .filter(|median| *median > 0.0)
        .collect();
    let low = medians.iter().copied().reduce(f64::min)?;
    let high = medians.iter().copied().reduce(f64::max)?;
    Some((low, high))
}

/// One clock tick per operation of `result`, in its run: the tick over the operations one
/// of its samples timed, never the raw tick for a figure built from many operations.
fn quantum_ns(run: &RunRecord, result: &BenchResult) -> f64 {
    run.clock.resolution_ns / operations_per_sample(run, result, 0) as f64
}

/// How deep [`operations_per_sample`] follows `derived_from`: deeper than any figure
/// latlab derives, and a bound on a malformed file whose results derive from each other.
const MAX_DERIVATION_DEPTH: usize = 4;

/// The operations one sample of `result` timed. A derived figure (a level's pooled
/// plateau, a difference of two results) has `iterations` 1 of its own, but each of its
/// samples comes from samples of its sources: it is as fine as the coarsest of them.
fn operations_per_sample(run: &RunRecord, result: &BenchResult, depth: usize) -> u64 {
    if result.kind == ResultKind::Derived && depth < MAX_DERIVATION_DEPTH {
        let sources = result
            .derived_from
            .iter()
            .filter_map(|name| run.results().find(|r| &r.name == name))
            .map(|source| operations_per_sample(run, source, depth + 1))
            .min();
        if let Some(operations) = sources {
            return operations.max(result.iterations).max(1);
        }
    }
    result.iterations.max(1)
}

/// One result of the first run against its namesake in a later run.
#[derive(Debug, Clone, PartialEq)]
pub struct Against {
    pub median_ns: f64,
    /// How far the later side's repetitions (rounds or runs) lie apart, as a share.
    pub spread: Option<f64>,
    /// Later median ÷ first median.
    pub ratio: f64,
    pub verdict: Verdict,
}

/// One result of the first run and what each later run made of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparedResult {
    pub name: String,
    /// An in-between point of a sweep (folded in the terminal).
    pub sweep_detail: bool,
    pub first_median_ns: f64,
    /// How far the first side's repetitions (rounds or runs) lie apart, as a share.
    pub first_spread: Option<f64>,
    /// One per later run, `None` where that run lacks the result.
    pub later: Vec<Option<Against>>,
}

/// How one later run compares with the first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub slower: usize,
    pub faster: usize,
    pub same: usize,
    pub untested: usize,
    /// Results whose family's stability check moved in either run.
    pub not_comparable: usize,
    /// Results of the first run that this run lacks.
    pub missing: Vec<String>,
    /// Results of this run that the first lacks.
    pub new: Vec<String>,
}

/// Runs compared: every result of the first against each later run.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The sides' labels, the first being the baseline.
    pub labels: Vec<String>,
    /// Runs on each side.
    pub runs_per_side: Vec<usize>,
    /// How each later side's run-to-run noise was known.
    pub run_to_run: Vec<RunToRun>,
    pub threshold: f64,
    pub results: Vec<ComparedResult>,
    /// One per later run.
    pub tallies: Vec<Tally>,
}

/// How `later`'s run-to-run noise against `first` is known: measured where either side has
/// several runs, else estimated from how far all results moved between the two runs (those
/// whose family's stability check moved, and estimates, left out).
fn run_to_run(first: &Side, later: &Side) -> RunToRun {
    if first.runs.len() > 1 || later.runs.len() > 1 {
        return RunToRun::Measured;
    }
    let (a, b) = (first.first_run(), later.first_run());
    let ratios: Vec<(&str, f64)> = (a.results())
        .filter(|r| !r.is_extrapolated())
        .filter(|r| comparable_runs(first, later, r).is_ok())
        .filter_map(|r| {
            let other = b.results().find(|o| o.name == r.name)?;
            Some((family(&r.name), other.summary.median / r.summary.median))
        })
        .collect();
    let all: Vec<f64> = ratios.iter().map(|(_, ratio)| *ratio).collect();
    let mut families: Vec<(String, f64)> = Vec::new();
    for (name, _) in &ratios {
        if families.iter().any(|(f, _)| f == name) {
            continue;
        }
        let own: Vec<f64> = (ratios.iter())
            .filter(|(f, _)| f == name)
            .map(|(_, ratio)| *ratio)
            .collect();
        if let Some(sd) = log_ratio_scatter(&own, MIN_RESULTS_FOR_SCATTER) {
            families.push((name.to_string(), sd));
        }
    }
    match log_ratio_scatter(&all, MIN_RESULTS_FOR_SCATTER) {
        Some(scatter) => RunToRun::Estimated {
            scatter,
            results: all.len(),
            families,
        },
        None => RunToRun::Unknown,
    }
}

/// A result's family: its name up to the first `/` (the probe that measured it).
fn family(name: &str) -> &str {
    name.split('/').next().unwrap_or(name)
}

impl RunToRun {
    /// How far result `name` moves between runs beyond its rounds, as a standard deviation
    /// of the log ratio, where the noise was estimated rather than measured.
    fn between_runs_sd(&self, name: &str) -> Option<f64> {
        match self {
            RunToRun::Estimated {
                scatter, families, ..
            } => Some(
                (families.iter())
                    .find(|(f, _)| f == family(name))
                    .map_or(*scatter, |(_, sd)| *sd),
            ),
            _ => None,
        }
    }
}

/// Gives later side `index` its verdicts: each tested result's joint p-value adjusted for the
/// number of results of its family (the probe that measured it) tested against that side
/// (Benjamini–Hochberg), so that a comparison of hundreds of results does not call the few
/// that chance sets apart different. Each family is one set of hypotheses, as a probe's
/// results are one question about the machine: the false discoveries among a family's
/// "slower" and "faster" are held to 5%, and a probe of a few results is not drowned by the
/// hundreds of sweep points of another.
fn judge_side(
    results: &mut [ComparedResult],
    tests: &[Vec<Option<Tests>>],
    index: usize,
    threshold: f64,
) {
    let tested: Vec<(usize, &Tests)> = (tests.iter().enumerate())
        .filter_map(|(row, tested)| tested[index].as_ref().map(|t| (row, t)))
        .collect();
    let mut families: Vec<&str> = Vec::new();
    for (row, _) in &tested {
        let name = family(&results[*row].name);
        if !families.contains(&name) {
            families.push(name);
        }
    }
    let families: Vec<String> = families.into_iter().map(str::to_string).collect();
    for name in &families {
        let members: Vec<&(usize, &Tests)> = (tested.iter())
            .filter(|(row, _)| family(&results[*row].name) == name)
            .collect();
        let joint: Vec<f64> = members.iter().map(|(_, t)| t.joint_p()).collect();
        let adjusted = benjamini_hochberg(&joint);
        for ((row, t), p) in members.into_iter().zip(adjusted) {
            if let Some(against) = results[*row].later[index].as_mut() {
                against.verdict = t.verdict(p, joint.len(), threshold);
            }
        }
    }
}

/// Each run a side of its own.
pub fn sides(runs: &[(String, RunRecord)]) -> Vec<Side> {
    (runs.iter())
        .map(|(label, run)| Side::one(label, run.clone()))
        .collect()
}

impl Comparison {
    /// Compares every later run of `runs` with the first, calling differences below
    /// `threshold` (a share of the first median) the same.
    pub fn of(runs: &[(String, RunRecord)], threshold: f64) -> Comparison {
        Comparison::of_sides(&sides(runs), threshold)
    }

    /// Compares every later side of `sides` with the first, calling differences below
    /// `threshold` (a share of the first figure) the same.
    pub fn of_sides(sides: &[Side], threshold: f64) -> Comparison {
        let first_side = &sides[0];
        let first = first_side.first_run();
        let later_sides = &sides[1..];
        let mut tallies = vec![Tally::default(); later_sides.len()];
        let run_to_run: Vec<RunToRun> = (later_sides.iter())
            .map(|side| run_to_run(first_side, side))
            .collect();
        // Each result against each later side, its tests kept until every result of that
        // side is tested and the p-values can be adjusted for their number.
        let mut results = Vec::new();
        let mut tests: Vec<Vec<Option<Tests>>> = Vec::new();
        for result in first.results() {
            let all_first: Vec<&RunRecord> = first_side.runs.iter().collect();
            let checks = checks_for(first, result);
            let steady_first: Vec<&RunRecord> = (first_side.runs.iter())
                .filter(|run| steady(run, checks))
                .collect();
            // The first side's figure from its steady runs, all of them where none is.
            let mine = Some(Measured::of(&steady_first, &result.name))
                .filter(|m| !m.results.is_empty())
                .unwrap_or_else(|| Measured::of(&all_first, &result.name));
            let (mut later, mut tested) = (Vec::new(), Vec::new());
            for ((side, tally), noise) in later_sides.iter().zip(&mut tallies).zip(&run_to_run) {
                let all_later: Vec<&RunRecord> = side.runs.iter().collect();
                let Some(other) = Measured::of(&all_later, &result.name)
                    .results
                    .first()
                    .copied()
                else {
                    tally.missing.push(result.name.clone());
                    later.push(None);
                    tested.push(None);
                    continue;
                };
                let quantum = quantum_ns(first, result).max(quantum_ns(side.first_run(), other));
                let (theirs, verdict, tests) = match comparable_runs(first_side, side, result) {
                    Err((check, how)) => (
                        Measured::of(&all_later, &result.name),
                        Verdict::NotComparable { check, how },
                        None,
                    ),
                    Ok(steady_later) => {
                        let theirs = Some(Measured::of(&steady_later, &result.name))
                            .filter(|m| !m.results.is_empty())
                            .unwrap_or_else(|| Measured::of(&all_later, &result.name));
                        let sd = noise.between_runs_sd(&result.name);
                        let tests = Tests::of(&mine, &theirs, quantum, sd);
                        (theirs, Verdict::Untested, tests)
                    }
                };
                later.push(Some(Against {
                    median_ns: theirs.median(),
                    spread: theirs.spread(),
                    ratio: theirs.median() / mine.median(),
                    verdict,
                }));
                tested.push(tests);
            }
            results.push(ComparedResult {
                name: result.name.clone(),
                sweep_detail: result.sweep_detail,
                first_median_ns: mine.median(),
                first_spread: mine.spread(),
                later,
            });
            tests.push(tested);
        }
        for (index, tally) in tallies.iter_mut().enumerate() {
            judge_side(&mut results, &tests, index, threshold);
            for against in results.iter().filter_map(|r| r.later[index].as_ref()) {
                match against.verdict {
                    Verdict::Slower { .. } => tally.slower += 1,
                    Verdict::Faster { .. } => tally.faster += 1,
                    Verdict::Same { .. } => tally.same += 1,
                    Verdict::Untested => tally.untested += 1,
                    Verdict::NotComparable { .. } => tally.not_comparable += 1,
                }
            }
        }
        for (side, tally) in later_sides.iter().zip(&mut tallies) {
            tally.new = (side.runs.iter())
                .flat_map(|run| run.results())
                .filter(|r| !first.results().any(|f| f.name == r.name))
                .map(|r| r.name.clone())
                .fold(Vec::new(), |mut names, name| {
                    if !names.contains(&name) {
                        names.push(name);
                    }
                    names
                });
        }
        Comparison {
            labels: sides.iter().map(|side| side.label.clone()).collect(),
            runs_per_side: sides.iter().map(|side| side.runs.len()).collect(),
            run_to_run,
            threshold,
            results,
            tallies,
        }
    }

    /// The results slower than the first run by more than `percent` per cent (significant
    /// and beyond the threshold): `(name, later run's label, ratio)`.
    pub fn slower_than(&self, percent: f64) -> Vec<(String, String, f64)> {
        let mut found = Vec::new();
        for result in &self.results {
            for (against, label) in result.later.iter().zip(&self.labels[1..]) {
                if let Some(a) = against
                    && matches!(a.verdict, Verdict::Slower { .. })
                    && a.ratio > 1.0 + percent / 100.0
                {
                    found.push((result.name.clone(), label.clone(), a.ratio));
                }
            }
        }
        found
    }

    /// One line per later side: how its run-to-run noise was known.
    pub fn noise_lines(&self) -> Vec<String> {
        let first = &self.labels[0];
        (self.run_to_run.iter())
            .zip(&self.labels[1..])
            .zip(&self.runs_per_side[1..])
            .map(|((noise, label), runs)| match noise {
                RunToRun::Measured => format!(
                    "{label} against {first}: run-to-run noise measured on {} and {runs} \
                     runs (Welch's t on each result's run medians, 95%)",
                    self.runs_per_side[0]
                ),
                RunToRun::Estimated {
                    scatter,
                    results,
                    families,
                } => format!(
                    "{label} against {first}: one run a side; each result's rounds show how \
                     far it moves within a run, and how far its family's results moved \
                     between the two runs is taken as the noise between runs besides ({}); \
                     several runs a side measure it instead",
                    family_scatter(*scatter, *results, families)
                ),
                RunToRun::Unknown => format!(
                    "{label} against {first}: one run a side and fewer than \
                     {MIN_RESULTS_FOR_SCATTER} results, so only the rounds within each run \
                     show the noise, not how far results move between runs: take several runs \
                     a side (a directory each) before trusting a difference"
                ),
            })
            .collect()
    }

    /// One line per later run: "B against A: 3 slower, 2 faster, 40 same, 1 untested; 2 only
    /// in A, 1 only in B".
    pub fn summary_lines(&self) -> Vec<String> {
        let first = &self.labels[0];
        self.tallies
            .iter()
            .zip(&self.labels[1..])
            .map(|(t, label)| {
                let mut line = format!(
                    "{label} against {first}: {} slower, {} faster, {} same",
                    t.slower, t.faster, t.same
                );
                if t.untested > 0 {
                    let _ = write!(line, ", {} untested", t.untested);
                }
                if t.not_comparable > 0 {
                    let _ = write!(
                        line,
                        ", {} not comparable (the machine changed)",
                        t.not_comparable
                    );
                }
                let mut only = Vec::new();
                if !t.missing.is_empty() {
                    only.push(format!("{} only in {first}", t.missing.len()));
                }
                if !t.new.is_empty() {
                    only.push(format!("{} only in {label}", t.new.len()));
                }
                if !only.is_empty() {
                    let _ = write!(line, "; {}", only.join(", "));
                }
                line
            })
            .collect()
    }
}

/// One line of the environment table: its name, and how to read it from a run.
type EnvironmentField = (&'static str, fn(&RunRecord) -> String);

/// The environments, one column per side (its first run), `≠` before each line where they
/// differ.
fn environment_table(sides: &[Side]) -> TextTable {
    let fields: [EnvironmentField; 10] = [
        ("host", |r| r.environment.host_name.clone()),
        ("cpu", |r| {
            format!(
                "{}, {} CPUs",
                r.environment.cpu.model, r.environment.cpu.logical_cpus
            )
        }),
        ("core classes", |r| {
            describe_core_classes(&r.environment.core_classes)
        }),
        ("kernel", |r| r.environment.kernel.clone()),
        ("virtualisation", |r| {
            r.environment
                .virtualization
                .clone()
                .unwrap_or_else(|| "none".into())
        }),
        ("clocksource", |r| {
            r.environment
                .clocksource
                .clone()
                .unwrap_or_else(|| "unknown".into())
        }),
        ("governor", |r| {
            r.environment
                .cpu
                .governor
                .clone()
                .unwrap_or_else(|| "none".into())
        }),
        ("clock", |r| format_clock(&r.clock)),
        ("suite", |r| r.settings.suite.clone()),
        ("latlab", |r| r.latlab_version.clone()),
    ];
    let mut headers = vec![String::new(), "environment".to_string()];
    headers.extend(sides.iter().map(|side| match side.runs.len() {
        1 => side.label.clone(),
        n => format!("{} ({n} runs)", side.label),
    }));
    let rows = fields
        .iter()
        .map(|(name, value)| {
            let values: Vec<String> = sides.iter().map(|side| value(side.first_run())).collect();
            let differs = values.iter().any(|v| *v != values[0]);
            let mut row = vec![if differs { "≠" } else { "" }.to_string(), name.to_string()];
            row.extend(values);
            row
        })
        .collect();
    TextTable { headers, rows }
}

/// The results of the first run, each beside its namesakes in the later runs. In-between
/// sweep points are left out when `fold` is set; returns how many were.
fn results_table(comparison: &Comparison, fold: bool) -> (TextTable, usize) {
    let first_label = &comparison.labels[0];
    let mut headers = vec!["benchmark".to_string(), first_label.clone()];
    for label in &comparison.labels[1..] {
        headers.push(label.clone());
        headers.push(format!("{label}/{first_label}"));
        headers.push("difference".to_string());
    }
    let mut folded = 0;
    let mut rows = Vec::new();
    for result in &comparison.results {
        if fold && result.sweep_detail {
            folded += 1;
            continue;
        }
        let mut row = vec![
            result.name.clone(),
            format_figure(result.first_median_ns, result.first_spread),
        ];
        for against in &result.later {
            match against {
                Some(a) => {
                    row.push(format_figure(a.median_ns, a.spread));
                    row.push(format_ratio(a.ratio));
                    row.push(a.verdict.label(comparison.threshold));
                }
                None => row.extend(["—".to_string(), String::new(), "not in this run".into()]),
            }
        }
        rows.push(row);
    }
    (TextTable { headers, rows }, folded)
}

/// The results some later run has and the first lacks, one line per run.
fn only_in_later_runs(comparison: &Comparison) -> Vec<String> {
    comparison
        .tallies
        .iter()
        .zip(&comparison.labels[1..])
        .filter(|(t, _)| !t.new.is_empty())
        .map(|(t, label)| format!("only in {label}: {}", t.new.join(", ")))
        .collect()
}

/// Every column of a comparison reads from the left.
fn all_left(table: &TextTable) -> Vec<Align> {
    vec![Align::Left; table.headers.len()]
}

fn footnote(threshold: f64) -> String {
    format!(
        "difference: faster or slower only when the Mann–Whitney U test on the two sides' \
         samples and Welch's t test on their round or run medians (widened by how far the \
         family moved between runs, with one run a side) both reject, their larger p, \
         adjusted for the results of its family compared (Benjamini–Hochberg), is below 0.05, \
         and the \
         figures are more than {}% and one clock tick per operation apart; p is that adjusted \
         p; ± is half the range of a side's round or run medians; figures are medians (of the \
         runs' medians, for several runs)",
        format_percent(threshold)
    )
}

/// How far results moved between two runs, one standard deviation: `±3.2% for mem.latency,
/// ±16% for file.write, ±7.1% for the rest (642 results)`.
fn family_scatter(scatter: f64, results: usize, families: &[(String, f64)]) -> String {
    let mut parts: Vec<String> = (families.iter())
        .map(|(family, sd)| format!("±{}% for {family}", format_percent_rounded(*sd)))
        .collect();
    let rest = if families.is_empty() {
        "all"
    } else {
        "the rest"
    };
    parts.push(format!(
        "±{}% for {rest} ({results} results in all), one standard deviation",
        format_percent_rounded(scatter)
    ));
    parts.join(", ")
}

/// A share as a percentage to read at a glance: one decimal below 10% (`0.6`, `4.2`),
/// whole above (`12`).
fn format_percent_rounded(fraction: f64) -> String {
    let percent = fraction * 100.0;
    if percent < 10.0 {
        format!("{percent:.1}")
    } else {
        format!("{percent:.0}")
    }
}

/// A side's figure with its run-to-run spread where it has one: `12.3 ns ±1.2%`.
fn format_figure(median_ns: f64, spread: Option<f64>) -> String {
    match spread {
        Some(spread) => format!(
            "{} ±{}%",
            format_ns(median_ns),
            format_percent_rounded(spread)
        ),
        None => format_ns(median_ns),
    }
}

/// A fraction as a percentage without trailing zeros: 0.02 → `2`, 0.005 → `0.5`.
fn format_percent(fraction: f64) -> String {
    format!("{}", (fraction * 100.0 * 100.0).round() / 100.0)
}

/// The terminal rendering with the default threshold and no colour; in-between sweep points
/// are folded.
pub fn compare_text(runs: &[(String, RunRecord)]) -> String {
    let sides = sides(runs);
    compare_text_with(
        &sides,
        &Comparison::of_sides(&sides, DEFAULT_THRESHOLD),
        &Terminal::default(),
    )
}

/// The terminal rendering of `comparison` (of `sides`): the environments, the results,
/// faster and slower coloured when `terminal` says so, then the summary.
pub fn compare_text_with(sides: &[Side], comparison: &Comparison, terminal: &Terminal) -> String {
    let mut out = String::new();
    let environment = environment_table(sides);
    out.push_str(&environment.aligned(&all_left(&environment)));
    out.push('\n');
    let (results, folded) = results_table(comparison, true);
    out.push_str(
        &results.aligned_painted(&all_left(&results), terminal, |row, _, cell| {
            if row == 0 {
                Some(Paint::Heading)
            } else if cell.starts_with("slower") {
                Some(Paint::Bad)
            } else if cell.starts_with("faster") {
                Some(Paint::Good)
            } else {
                None
            }
        }),
    );
    if folded > 0 {
        out.push_str(&terminal.prose(
            "",
            &format!(
                "({folded} in-between points of the sweeps are not shown here; --markdown, \
                 --csv and --json have them all)"
            ),
        ));
    }
    out.push_str(&terminal.prose("", &format!("({})", footnote(comparison.threshold))));
    for line in comparison.noise_lines() {
        out.push_str(&terminal.prose("", &format!("({line})")));
    }
    for line in only_in_later_runs(comparison) {
        out.push_str(&terminal.prose("", &line));
    }
    out.push('\n');
    for line in comparison.summary_lines() {
        out.push_str(&terminal.prose("", &terminal.paint(Paint::Heading, &line)));
    }
    out
}

/// The Markdown rendering, every result included.
pub fn compare_markdown(sides: &[Side], comparison: &Comparison) -> String {
    let mut out = String::from("# latlab comparison\n\n");
    let environment = environment_table(sides);
    out.push_str(&environment.markdown(&all_left(&environment)));
    out.push('\n');
    let results = results_table(comparison, false).0;
    out.push_str(&results.markdown(&all_left(&results)));
    let _ = writeln!(out, "\n{}.", footnote(comparison.threshold));
    for line in comparison.noise_lines() {
        let _ = writeln!(out, "\n{}.", crate::text_table::escape_markdown(&line));
    }
    for line in only_in_later_runs(comparison) {
        let _ = writeln!(out, "\n{}", crate::text_table::escape_markdown(&line));
    }
    out.push('\n');
    for line in comparison.summary_lines() {
        let _ = writeln!(out, "- {line}");
    }
    out
}

/// The CSV rendering: one row per result and later run, with the verdict and its p-value;
/// a result a run lacks has an empty median and the verdict `missing`, one the first lacks
/// the verdict `new`.
pub fn compare_csv(comparison: &Comparison) -> Result<String, ExportError> {
    let encode = |detail: String| ExportError::Encode {
        format: "CSV",
        detail,
    };
    let mut writer = csv::Writer::from_writer(Vec::new());
    let header = [
        "benchmark",
        "baseline",
        "run",
        "baseline_median_ns",
        "median_ns",
        "ratio",
        "p",
        "difference",
    ];
    writer
        .write_record(header)
        .map_err(|e| encode(e.to_string()))?;
    let first = &comparison.labels[0];
    for result in &comparison.results {
        for (against, label) in result.later.iter().zip(&comparison.labels[1..]) {
            let first_median = result.first_median_ns.to_string();
            let record = match against {
                Some(a) => [
                    crate::csv::text_cell(&result.name),
                    crate::csv::text_cell(first),
                    crate::csv::text_cell(label),
                    first_median,
                    a.median_ns.to_string(),
                    a.ratio.to_string(),
                    a.verdict
                        .p()
                        .map_or_else(String::new, |p| format!("{p:.3e}")),
                    a.verdict.word().to_string(),
                ],
                None => [
                    crate::csv::text_cell(&result.name),
                    crate::csv::text_cell(first),
                    crate::csv::text_cell(label),
                    first_median,
                    String::new(),
                    String::new(),
                    String::new(),
                    "missing".to_string(),
                ],
            };
            writer
                .write_record(&record)
                .map_err(|e| encode(e.to_string()))?;
        }
    }
    for (tally, label) in comparison.tallies.iter().zip(&comparison.labels[1..]) {
        for name in &tally.new {
            let cell = crate::csv::text_cell;
            let none = String::new;
            let record = [
                cell(name),
                cell(first),
                cell(label),
                none(),
                none(),
                none(),
                none(),
                "new".to_string(),
            ];
            writer
                .write_record(record)
                .map_err(|e| encode(e.to_string()))?;
        }
    }
    let bytes = writer.into_inner().map_err(|e| encode(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| encode(e.to_string()))
}

/// The JSON rendering: the threshold, each run's tally, and every result with each later
/// run's median, ratio, p-value and verdict.
pub fn compare_json(comparison: &Comparison) -> Result<String, ExportError> {
    use serde_json::{Value, json};
    let results: Vec<Value> = comparison
        .results
        .iter()
        .map(|result| {
            let against: Vec<Value> = result
                .later
                .iter()
                .zip(&comparison.labels[1..])
                .map(|(against, label)| match against {
                    Some(a) => json!({
                        "run": label,
                        "median_ns": a.median_ns,
                        "spread": a.spread,
                        "ratio": a.ratio,
                        "p": a.verdict.p(),
                        "difference": a.verdict.word(),
                    }),
                    None => json!({ "run": label, "difference": "missing" }),
                })
                .collect();
            json!({
                "name": result.name,
                "baseline_median_ns": result.first_median_ns,
                "baseline_spread": result.first_spread,
                "against": against,
            })
        })
        .collect();
    let runs: Vec<Value> = comparison
        .tallies
        .iter()
        .zip(&comparison.labels[1..])
        .zip(&comparison.runs_per_side[1..])
        .zip(&comparison.run_to_run)
        .map(|(((t, label), runs), noise)| {
            let noise = match noise {
                RunToRun::Measured => json!({ "from": "runs" }),
                RunToRun::Estimated {
                    scatter,
                    results,
                    families,
                } => {
                    let families: serde_json::Map<String, Value> = (families.iter())
                        .map(|(family, sd)| (family.clone(), json!(sd)))
                        .collect();
                    json!({
                        "from": "scatter",
                        "scatter": scatter,
                        "results": results,
                        "families": families,
                    })
                }
                RunToRun::Unknown => json!({ "from": "rounds only" }),
            };
            json!({
                "run": label,
                "runs": runs,
                "run_to_run": noise,
                "slower": t.slower,
                "faster": t.faster,
                "same": t.same,
                "untested": t.untested,
                "not_comparable": t.not_comparable,
                "missing": t.missing,
                "new": t.new,
            })
        })
        .collect();
    let document = json!({
        "latlab_comparison_version": 1,
        "baseline": comparison.labels[0],
        "baseline_runs": comparison.runs_per_side[0],
        "threshold": comparison.threshold,
        "significance": SIGNIFICANCE,
        "runs": runs,
        "results": results,
    });
    serde_json::to_string_pretty(&document)
        .map(|mut text| {
            text.push('\n');
            text
        })
        .map_err(|e| ExportError::Encode {
            format: "JSON",
            detail: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{probe, record};

    fn timed(name: &str, samples: Vec<f64>) -> BenchResult {
        BenchResult::derived(name, "test", samples, Vec::new(), Vec::new()).unwrap()
    }

    fn runs() -> Vec<(String, RunRecord)> {
        let noise = |base: f64| {
            (0..30)
                .map(|i| base + (i % 7) as f64 * 0.01)
                .collect::<Vec<_>>()
        };
        let a = record(vec![probe(
            "x",
            vec![
                timed("x/steady", noise(10.0)),
                timed("x/regressed", noise(10.0)),
                timed("x/improved", noise(10.0)),
                timed("x/single", vec![5.0]),
            ],
        )]);
        let mut b = record(vec![probe(
            "x",
            vec![
                timed("x/steady", noise(10.0)),
                timed("x/regressed", noise(12.0)),
                timed("x/improved", noise(8.0)),
            ],
        )]);
        b.environment.kernel = "7.0.0 other".into();
        vec![("A".into(), a), ("B".into(), b)]
    }

    #[test]
    fn real_differences_are_called_and_noise_is_not() {
        let text = compare_text(&runs());
        let line = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(name))
                .unwrap()
                .to_string()
        };
        assert!(line("x/steady").contains("same ("), "{}", line("x/steady"));
        assert!(
            line("x/regressed").contains("slower (p < 0.001)"),
            "{}",
            line("x/regressed")
        );
        assert!(line("x/regressed").contains("1.20×"));
        assert!(line("x/improved").contains("faster"));
        assert!(line("x/single").contains("not in this run"));
        assert!(text.contains("Mann–Whitney"));
    }

    /// A significant difference smaller than the threshold is the same; a larger one is
    /// not; equal medians of quantised figures are the same however the samples differ.
    #[test]
    fn small_and_quantised_differences_are_the_same() {
        let noise = |base: f64, spread: f64| -> Vec<f64> {
            (0..30).map(|i| base + (i % 7) as f64 * spread).collect()
        };
        let a = record(vec![probe(
            "x",
            vec![
                timed("x/one-percent", noise(100.0, 0.01)),
                timed("x/five-percent", noise(100.0, 0.01)),
                timed("x/ticks", [vec![10.0; 20], vec![20.0; 10]].concat()),
            ],
        )]);
        let b = record(vec![probe(
            "x",
            vec![
                timed("x/one-percent", noise(101.0, 0.01)),
                timed("x/five-percent", noise(105.0, 0.01)),
                timed("x/ticks", [vec![10.0; 16], vec![20.0; 14]].concat()),
            ],
        )]);
        let runs = vec![("A".to_string(), a), ("B".to_string(), b)];
        let verdict = |comparison: &Comparison, name: &str| {
            let result = comparison.results.iter().find(|r| r.name == name).unwrap();
            result.later[0].as_ref().unwrap().verdict
        };
        let default = Comparison::of(&runs, DEFAULT_THRESHOLD);
        assert!(matches!(
            verdict(&default, "x/one-percent"),
            Verdict::Same {
                why: SameBecause::WithinThreshold,
                ..
            }
        ));
        assert!(matches!(
            verdict(&default, "x/five-percent"),
            Verdict::Slower { .. }
        ));
        assert!(matches!(
            verdict(&default, "x/ticks"),
            Verdict::Same {
                why: SameBecause::WithinResolution,
                ..
            }
        ));
        let strict = Comparison::of(&runs, 0.0);
        assert!(matches!(
            verdict(&strict, "x/one-percent"),
            Verdict::Slower { .. }
        ));
        assert_eq!(
            default.summary_lines(),
            ["B against A: 1 slower, 0 faster, 2 same"]
        );
        assert_eq!(default.slower_than(3.0).len(), 1);
        assert!(default.slower_than(10.0).is_empty());
    }

    /// The summary counts each verdict and the results in only one run, which are listed.
    /// A level's figure pooled from sweep points of thousands of loads a sample resolves
    /// a tick over those loads, not the raw tick: a 15% slowdown of a 5.4 ns L2 level, with
    /// a 20 ns tick, is slower, not "within a clock tick"; a figure timed one event a sample
    /// keeps the whole tick.
    #[test]
    fn a_pooled_figure_resolves_a_tick_over_its_sources_operations() {
        let with_tick = |mut run: RunRecord| {
            run.clock.resolution_ns = 20.0;
            run
        };
        let side = |scale: f64| {
            let noise = |base: f64| -> Vec<f64> {
                (0..30)
                    .map(|i| scale * (base + (i % 7) as f64 * 0.01))
                    .collect()
            };
            let mut points: Vec<BenchResult> = ["x/point/256KiB", "x/point/512KiB"]
                .iter()
                .map(|name| {
                    let mut point = timed(name, noise(5.4));
                    point.kind = ResultKind::TimedLoop;
                    point.iterations = 8192;
                    point
                })
                .collect();
            let pooled: Vec<f64> = points.iter().flat_map(|p| p.samples_ns.clone()).collect();
            let mut level = timed("x/level/L2", pooled);
            level.derived_from = points.iter().map(|p| p.name.clone()).collect();
            points.push(level);
            let mut event = timed("x/event", noise(5.4));
            event.kind = ResultKind::Observations;
            points.push(event);
            with_tick(record(vec![probe("x", points)]))
        };
        let runs = vec![("A".to_string(), side(1.0)), ("B".to_string(), side(1.15))];
        let comparison = Comparison::of(&runs, DEFAULT_THRESHOLD);
        let verdict = |name: &str| {
            let result = comparison.results.iter().find(|r| r.name == name).unwrap();
            result.later[0].as_ref().unwrap().verdict
        };
        assert!(
            matches!(verdict("x/level/L2"), Verdict::Slower { .. }),
            "{:?}",
            verdict("x/level/L2")
        );
        assert!(matches!(
            verdict("x/event"),
            Verdict::Same {
                why: SameBecause::WithinResolution,
                ..
            }
        ));
    }

    /// The A/A run: both runs' core-to-core checks said MOVED and the pair read 8×
    /// slower. That pair, and every figure crossing CPUs, is "not comparable", not slower,
    /// and no gate fails on it; the memory figures, whose check held, are still tested.
    #[test]
    fn a_figure_whose_check_moved_is_not_comparable() {
        let noise =
            |base: f64| -> Vec<f64> { (0..30).map(|i| base + (i % 7) as f64 * 0.01).collect() };
        let check = |name: &str, moved: bool| latlab_engine::model::StabilityCheck {
            name: name.into(),
            method: "test".into(),
            start: latlab_engine::stats::Summary::of(&[60.0; 3]).unwrap(),
            end: Some(latlab_engine::stats::Summary::of(&[70.0; 3]).unwrap()),
            moved_share: 0.25,
            moved: moved.then_some(latlab_engine::Warning::MovedDuringRun {
                first_ns: 60.0,
                last_ns: 70.0,
            }),
        };
        let side = |pair: f64, memory: f64, moved: bool| {
            let mut run = record(vec![probe(
                "x",
                vec![
                    timed("thread.core_to_core/one-way/cas/0-1", noise(pair)),
                    timed("ipc.throughput/pipe/4B", noise(pair)),
                    timed("mem.latency/level/DRAM", noise(memory)),
                    timed("cpu.call/empty", noise(1.0)),
                ],
            )]);
            run.stability = vec![
                check("stability/memory-chase", false),
                check("stability/core-to-core", moved),
            ];
            run
        };
        let runs = vec![
            ("A".to_string(), side(7.0, 100.0, true)),
            ("B".to_string(), side(56.3, 130.0, false)),
        ];
        let comparison = Comparison::of(&runs, DEFAULT_THRESHOLD);
        let verdict = |name: &str| {
            let result = comparison.results.iter().find(|r| r.name == name).unwrap();
            result.later[0].as_ref().unwrap().verdict
        };
        for crossing in [
            "thread.core_to_core/one-way/cas/0-1",
            "ipc.throughput/pipe/4B",
        ] {
            assert_eq!(
                verdict(crossing),
                Verdict::NotComparable {
                    check: "stability/core-to-core",
                    how: Unsteady::DuringRun,
                }
            );
        }
        assert!(matches!(
            verdict("mem.latency/level/DRAM"),
            Verdict::Slower { .. }
        ));
        let gate = comparison.slower_than(10.0);
        assert_eq!(gate.len(), 1, "{gate:?}");
        assert_eq!(gate[0].0, "mem.latency/level/DRAM");
        assert_eq!(
            comparison.summary_lines(),
            ["B against A: 1 slower, 0 faster, 1 same, 2 not comparable (the machine changed)"]
        );
        assert!(
            compare_text(&runs)
                .contains("not comparable (the machine moved: stability/core-to-core)")
        );
    }

    /// A moved memory chase does not speak for a working set within the private caches,
    /// and with several runs a side the run whose check moved is left out of its family
    /// while the others still compare: a planted 30% slowdown is found, not hidden behind
    /// "not comparable".
    #[test]
    fn a_moved_run_is_left_out_and_private_caches_are_not_spoken_for() {
        let noise = |base: f64, run: usize| -> Vec<f64> {
            (0..30)
                .map(|i| base * (1.0 + 0.002 * run as f64) + (i % 7) as f64 * 0.001)
                .collect()
        };
        let check = |name: &str, moved: bool| latlab_engine::model::StabilityCheck {
            name: name.into(),
            method: "test".into(),
            start: latlab_engine::stats::Summary::of(&[150.0; 3]).unwrap(),
            end: Some(
                latlab_engine::stats::Summary::of(&[if moved { 170.0 } else { 151.0 }; 3]).unwrap(),
            ),
            moved_share: 0.10,
            moved: moved.then_some(latlab_engine::Warning::MovedDuringRun {
                first_ns: 150.0,
                last_ns: 170.0,
            }),
        };
        let run = |index: usize, dram: f64, moved: bool| {
            let mut run = record(vec![probe(
                "mem.latency",
                vec![
                    timed("mem.latency/random/4KiB", noise(1.1, index))
                        .with_parameter(key::WORKING_SET_BYTES, 4096u64),
                    timed("mem.latency/random/64MiB", noise(dram, index))
                        .with_parameter(key::WORKING_SET_BYTES, 64u64 << 20),
                ],
            )]);
            run.stability = vec![check("stability/memory-chase", moved)];
            run
        };
        let side = |label: &str, dram: f64, moved: [bool; 3]| Side {
            label: label.into(),
            runs: (0..3).map(|i| run(i, dram, moved[i])).collect(),
        };
        let sides = [
            side("A", 150.0, [false, false, false]),
            side("B", 195.0, [false, true, false]),
        ];
        let comparison = Comparison::of_sides(&sides, DEFAULT_THRESHOLD);
        let verdict = |name: &str| {
            let result = comparison.results.iter().find(|r| r.name == name).unwrap();
            result.later[0].as_ref().unwrap().verdict
        };
        assert!(matches!(
            verdict("mem.latency/random/64MiB"),
            Verdict::Slower { .. }
        ));
        assert!(matches!(
            verdict("mem.latency/random/4KiB"),
            Verdict::Same { .. }
        ));
        // One run a side whose check moved: the memory-sized set is not comparable, the
        // private one is still tested.
        let one = |label: &str, dram: f64, moved: bool| Side {
            label: label.into(),
            runs: vec![run(0, dram, moved)],
        };
        let comparison = Comparison::of_sides(
            &[one("A", 150.0, false), one("B", 195.0, true)],
            DEFAULT_THRESHOLD,
        );
        let verdict = |name: &str| {
            let result = comparison.results.iter().find(|r| r.name == name).unwrap();
            result.later[0].as_ref().unwrap().verdict
        };
        assert_eq!(
            verdict("mem.latency/random/64MiB"),
            Verdict::NotComparable {
                check: "stability/memory-chase",
                how: Unsteady::DuringRun
            }
        );
        assert!(!matches!(
            verdict("mem.latency/random/4KiB"),
            Verdict::NotComparable { .. }
        ));
    }

    /// The lost-L3 A/A run: each run's checks held from start to end, but the cache chase
    /// read 14 ns in one run and 130 ns in the other. The memory figures are "not
    /// comparable", not 9× slower; the check that held between the runs leaves its family
    /// tested, and a difference within the check's floor is not a change of machine.
    #[test]
    fn a_check_that_differs_between_runs_makes_its_family_not_comparable() {
        let noise =
            |base: f64| -> Vec<f64> { (0..30).map(|i| base + (i % 7) as f64 * 0.01).collect() };
        let check = |name: &str, start: f64, end: f64| latlab_engine::model::StabilityCheck {
            name: name.into(),
            method: "test".into(),
            start: latlab_engine::stats::Summary::of(&[start; 3]).unwrap(),
            end: Some(latlab_engine::stats::Summary::of(&[end; 3]).unwrap()),
            moved_share: 0.10,
            moved: None,
        };
        let side = |cache: f64, pair: f64, l3: f64| {
            let mut run = record(vec![probe(
                "x",
                vec![
                    timed("mem.latency/random/4MiB", noise(l3)),
                    timed("thread.core_to_core/one-way/cas/0-1", noise(pair)),
                ],
            )]);
            run.stability = vec![
                check("stability/memory-chase", 150.0, 148.0),
                check("stability/cache-chase", cache, cache * 1.05),
                check("stability/core-to-core", pair, pair),
            ];
            run
        };
        let runs = vec![
            ("A".to_string(), side(14.0, 26.0, 14.6)),
            ("B".to_string(), side(130.0, 27.0, 133.0)),
        ];
        let comparison = Comparison::of(&runs, DEFAULT_THRESHOLD);
        let verdict = |name: &str| {
            let result = comparison.results.iter().find(|r| r.name == name).unwrap();
            result.later[0].as_ref().unwrap().verdict
        };
        assert_eq!(
            verdict("mem.latency/random/4MiB"),
            Verdict::NotComparable {
                check: "stability/cache-chase",
                how: Unsteady::BetweenRuns {
                    first_ns: 14.0 * 1.05,
                    later_ns: 130.0
                },
            }
        );
        assert!(!matches!(
            verdict("thread.core_to_core/one-way/cas/0-1"),
            Verdict::NotComparable { .. }
        ));
        assert!(comparison.slower_than(10.0).is_empty());
        let text = compare_text(&runs);
        assert!(
            text.contains(
                "not comparable (the machine differs: stability/cache-chase 130 ns against 14.7 ns)"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_summary_counts_and_results_in_one_run_are_listed() {
        let mut runs = runs();
        runs[1]
            .1
            .probes
            .push(probe("y", vec![timed("y/new", vec![1.0, 1.1, 1.2])]));
        let comparison = Comparison::of(&runs, DEFAULT_THRESHOLD);
        assert_eq!(
            comparison.summary_lines(),
            ["B against A: 1 slower, 1 faster, 1 same; 1 only in A, 1 only in B"]
        );
        let text = compare_text_with(&sides(&runs), &comparison, &Terminal::default());
        assert!(text.contains("only in B: y/new"), "{text}");
        assert!(text.ends_with("1 only in A, 1 only in B\n"), "{text}");
        let csv = compare_csv(&comparison).unwrap();
        assert!(csv.starts_with(
            "benchmark,baseline,run,baseline_median_ns,median_ns,ratio,p,difference\n"
        ));
        assert!(csv.contains("x/regressed,A,B,"), "{csv}");
        assert!(csv.contains("x/single,A,B,5,,,,missing"), "{csv}");
        assert!(csv.contains("y/new,A,B,,,,,new"), "{csv}");
        let json: serde_json::Value =
            serde_json::from_str(&compare_json(&comparison).unwrap()).unwrap();
        assert_eq!(json["runs"][0]["slower"], 1);
        assert_eq!(json["runs"][0]["new"][0], "y/new");
        let regressed = json["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == "x/regressed")
            .unwrap();
        assert_eq!(regressed["against"][0]["difference"], "slower");
    }

    #[test]
    fn differing_environments_are_marked() {
        let text = compare_text(&runs());
        let kernel = text.lines().find(|l| l.contains("kernel")).unwrap();
        assert!(kernel.starts_with('≠'), "{kernel}");
        let cpu = text.lines().find(|l| l.contains("  cpu  ")).unwrap();
        assert!(!cpu.starts_with('≠'), "{cpu}");
        let runs = runs();
        let markdown = compare_markdown(&sides(&runs), &Comparison::of(&runs, DEFAULT_THRESHOLD));
        assert!(markdown.contains("| ≠ | kernel |"), "{markdown}");
    }
}
