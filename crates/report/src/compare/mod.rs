//! Comparing runs: the same results side by side, the ratio to the first run, and whether
//! each difference is larger than the noise.
//!
//! Each side is one run or several runs of the same code. A result is `faster` or `slower`
//! only when every test agrees: the Mann–Whitney U test on the two sides' samples rejects
//! "same distribution" (two-sided, normal approximation with the tie correction;
//! distribution-free, as timing samples need); a t test on the logarithms of the sides'
//! run figures rejects a ratio of 1 against the result's own noise (its rounds' scatter
//! within a run, moderated by its set's, times how far runs move beyond their rounds; see
//! the `judge` module); the larger of the two p-values is below 0.05, on its own for a
//! primary result (a level, a per-operation cost, any result that is not a sweep point)
//! and adjusted within its probe's sweep points for a sweep point (Benjamini–Hochberg), so
//! that hundreds of sweep points compared at once do not yield their 5% of chance
//! differences nor drown the few primary figures; the ratio's 95% interval lies wholly
//! past a threshold (2% unless asked otherwise); and the medians differ by more than one
//! tick of the clock per operation (quantised figures with equal medians are the same).
//! Otherwise `same`, with the reason and the smallest change the comparison could have
//! caught, however different the medians look. A result whose rounds on one side fall into
//! two clusters is said to run in two regimes, a finding rather than a difference.
//!
//! Each later run gets a summary ("3 slower, 2 faster, 40 same"), results in only one run
//! are listed, and the comparison renders as text, Markdown, CSV and JSON. The
//! environments are listed side by side, and every line where they differ is marked, since
//! a difference between machines is often the answer.

use crate::stats::{NoiseMachine, NoisePrior, NoiseTable, NoiseTables};
use latlab_engine::model::{BenchResult, ResultKind, RunRecord};
use latlab_engine::presentation::Presentations;
use latlab_engine::stats::{half_range_share, mann_whitney_p, median_in_place};
use std::collections::HashMap;
use steadiness::{checks_for, comparable_runs, steady};

mod clock;
mod csv;
mod gate;
#[cfg(feature = "html")]
mod html;
mod json;
mod judge;
mod markdown;
mod places;
#[cfg(test)]
mod power;
mod render;
mod steadiness;
#[cfg(test)]
mod tests;
mod text;

pub use csv::CompareCsv;
pub use gate::Gate;
#[cfg(feature = "html")]
pub use html::CompareHtml;
pub use json::CompareJson;
pub use markdown::CompareMarkdown;
pub use text::CompareText;

/// A comparison, as `latlab compare` also writes it.
impl crate::Offered for Compared {
    fn formats() -> &'static [crate::FileFormat<Compared>] {
        &[
            markdown::FORMAT,
            csv::FORMAT,
            json::FORMAT,
            #[cfg(feature = "html")]
            html::FORMAT,
        ]
    }
}

/// A comparison as its renderings take it: the sides, the first the baseline, and what the
/// comparison found. Each format is an [`crate::Exporter`] of it, in a file of its own.
#[derive(Debug, Clone)]
pub struct Compared {
    pub sides: Vec<Side>,
    pub comparison: Comparison,
}

impl Compared {
    /// `sides` compared at `threshold`, with the stability checks the probes `declared` and
    /// the prior of one run a side from `noise`.
    pub fn of(
        sides: Vec<Side>,
        threshold: f64,
        declared: &Presentations,
        noise: NoiseTables,
    ) -> Compared {
        Compared::excusing(sides, threshold, declared, noise, Excused::default())
    }

    /// As [`Compared::of`], excusing what `excused` names.
    pub fn excusing(
        sides: Vec<Side>,
        threshold: f64,
        declared: &Presentations,
        noise: NoiseTables,
        excused: Excused,
    ) -> Compared {
        let comparison = Comparison::excusing(&sides, threshold, declared, noise, excused);
        Compared { sides, comparison }
    }
}

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
    /// The repetitions of one side (its rounds, or its runs) fall into two clusters, at
    /// `low_ns` and `high_ns`: the figure runs in two regimes (a point at a cache's edge, a
    /// vCPU placed one way or another), which is a finding about the machine, not a
    /// difference between the sides.
    TwoRegimes {
        low_ns: f64,
        high_ns: f64,
    },
    /// Too few samples to test (a derived figure, a single observation), or a figure
    /// extrapolated rather than measured.
    Untested,
    /// A sweep point at a cache level's end on its machine's curve (`compare/places.rs`),
    /// one run a side and no table of this machine: the physical pages a process gets rule
    /// its figure there, which one run a side cannot tell from a change. Not judged, and
    /// left out of the gate.
    AtLevelEnd,
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
    /// The checks held, but the result itself was taken in another placement of the CPUs
    /// than its run's, in every run of a side ([`latlab_engine::Warning::PlacementChanged`]):
    /// the check's reference beside its probe said so.
    Placement,
}

/// Why a difference was called the same.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SameBecause {
    /// The test did not reject "same distribution".
    NotSignificant,
    /// The samples differ, but the ratio's interval from the sides' repetitions (rounds or
    /// runs) holds 1: the figure moves this much between runs, `×(1 ± half_width)`.
    RunToRunNoise { half_width: f64 },
    /// Each test rejects at 5%, but not once adjusted within the set of its probe's results
    /// tested together (Benjamini–Hochberg): among that many, some differ that much by
    /// chance.
    Chance { within: TestedWithin },
    /// Significant, but the medians differ by less than the threshold.
    WithinThreshold,
    /// The medians differ by less than one tick of the clock per operation (or not at all):
    /// quantised figures.
    WithinResolution,
    /// Both sides counted the instructions of a call, and the counts agree within
    /// [`COUNT_TOLERANCE`].
    CountsAgree,
    /// The later side's core clock ran `clock_ratio` times the first's period, this result
    /// moved the same way, and in cycles it is the same ([`ClockMove`]).
    FollowsClock { clock_ratio: f64 },
}

/// A later side whose core clock moved past the threshold: the ratio of its cycle's length
/// (`cpu.frequency/cycle`) to the first's, and what the comparison made of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockMove {
    pub ratio: f64,
    /// The results on the core clock that moved with it: judged in cycles and the same
    /// there, where `in_cycles`; else moved the same way at least half as far, in time.
    pub results: usize,
    /// Whether the clock's own verdict in time is the same: its move lies within its noise
    /// between runs.
    pub within_noise: bool,
    /// Whether the results on the clock were judged in cycles: within its noise, or beyond
    /// it under `--accept-clock-moves`.
    pub in_cycles: bool,
}

/// What a comparison and its gate excuse, each only where the user asked for it by name:
/// by default a clock that moved beyond its noise excuses nothing, and a result missing
/// from a later side fails the gate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Excused {
    /// `--accept-clock-moves`: a core clock that moved beyond its noise is taken as noise:
    /// the results on it are judged in cycles, and its slowdown fails no gate.
    pub clock_moves: bool,
    /// `--allow-missing`: results of the baseline that a later side lacks fail no gate.
    pub missing: bool,
}

impl Excused {
    /// The options that excused something, as the report names them.
    pub fn options(self) -> Vec<&'static str> {
        [
            (self.clock_moves, "--accept-clock-moves"),
            (self.missing, "--allow-missing"),
        ]
        .into_iter()
        .filter_map(|(given, option)| given.then_some(option))
        .collect()
    }
}

/// A result of the first side that a later side lacks, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingResult {
    pub name: String,
    /// The probe that measured it in the first side.
    pub probe: String,
    pub why: MissingWhy,
    /// Whether it fails a gate: a primary result, or any result of a probe that did not end
    /// well; not a sweep point, nor what a probe said it left out for the time budget.
    pub gated: bool,
}

/// Why a later side lacks a result: its probe's status in the side's runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MissingWhy {
    /// The probe failed (a crash, a child that timed out), with its reason.
    Failed(String),
    /// The probe was skipped, with its reason.
    Skipped(String),
    /// The run was interrupted before the probe ended.
    Interrupted,
    /// No run of the side ran the probe (left out by `--only`, or not in its build).
    NotRun,
    /// The probe ended well but left this part out, with its reason (a sweep's points past
    /// the run's time budget).
    LeftOut(String),
    /// The probe ended well but measured no result by this name: renamed, or no longer
    /// measured.
    NotMeasured,
}

impl std::fmt::Display for MissingWhy {
    /// What the probe (or the harness's group) did, after its name: `failed: killed by
    /// SIGSEGV`, `was not run`, `ran but did not measure them (renamed, or no longer
    /// measured)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MissingWhy::Failed(reason) => write!(f, "failed: {reason}"),
            MissingWhy::Skipped(reason) => write!(f, "was skipped: {reason}"),
            MissingWhy::Interrupted => write!(f, "was interrupted"),
            MissingWhy::NotRun => write!(f, "was not run"),
            MissingWhy::LeftOut(reason) => write!(f, "left them out: {reason}"),
            MissingWhy::NotMeasured => {
                write!(
                    f,
                    "ran but did not measure them (renamed, or no longer measured)"
                )
            }
        }
    }
}

/// One result's figures as the two sides measured them, before the results that a side
/// compared are weighed together ([`judge`]).
struct Tests {
    /// The Mann–Whitney p-value on the two sides' samples.
    samples_p: f64,
    /// The logarithms of each side's runs' medians, first and later.
    runs: [Vec<f64>; 2],
    /// The logarithms of each run's rounds' medians, for every run of both sides that
    /// measured in rounds: how far the figure moves within a run.
    rounds: Vec<Vec<f64>>,
    /// The same rounds, all of one side's runs together, first and later: whether a side
    /// ran in two regimes.
    sides_rounds: [Vec<f64>; 2],
    /// The two sides' figures, first and later.
    figures: (f64, f64),
    /// One tick of the clock per operation, as a share of the first figure.
    resolution: f64,
    /// The figures differ by less than a tick of the clock per operation, or not at all.
    within_resolution: bool,
    /// Whether it is a sweep point, tested within its probe's sweep points.
    sweep_point: bool,
    /// Whether it is a sweep point at a cache level's end on the curve of a run of either
    /// side ([`places`]).
    at_level_end: bool,
    /// How far it moved between runs of the later side's machine, or of the machines the
    /// project has met, where a table has it: the prior of one run a side.
    prior: Option<NoisePrior>,
    /// Each side's samples, first and later: tested again in cycles where the core clock
    /// moved ([`clock`]).
    samples: [Vec<f64>; 2],
}

impl Tests {
    /// `first` and `later` are one result as each side measured it; `quantum_ns` is one
    /// clock tick per operation, the coarser of the two. `None` when there is nothing to
    /// test: too few samples, or a figure extrapolated rather than measured.
    fn of(
        first: &Measured,
        later: &Measured,
        quantum_ns: f64,
        (sweep_point, at_level_end): (bool, bool),
        prior: Option<NoisePrior>,
    ) -> Option<Tests> {
        if first.sample_count() < MIN_SAMPLES
            || later.sample_count() < MIN_SAMPLES
            || first.is_extrapolated()
            || later.is_extrapolated()
        {
            return None;
        }
        let (a, b) = (first.median(), later.median());
        let logs = |m: &Measured| -> Vec<f64> {
            (m.results.iter())
                .map(|r| r.summary.median)
                .filter(|x| *x > 0.0 && x.is_finite())
                .map(f64::ln)
                .collect()
        };
        let round_logs = |r: &BenchResult| -> Vec<f64> {
            (r.round_medians_ns.iter())
                .filter(|x| **x > 0.0 && x.is_finite())
                .map(|x| x.ln())
                .collect()
        };
        let rounds = (first.results.iter().chain(&later.results))
            .filter(|r| r.round_medians_ns.len() >= 2)
            .map(|r| round_logs(r))
            .collect();
        let side_rounds = |m: &Measured| m.results.iter().flat_map(|r| round_logs(r)).collect();
        let samples = [first.samples(), later.samples()];
        Some(Tests {
            samples_p: mann_whitney_p(&samples[0], &samples[1]),
            runs: [logs(first), logs(later)],
            rounds,
            sides_rounds: [side_rounds(first), side_rounds(later)],
            figures: (a, b),
            resolution: if a > 0.0 { quantum_ns / a } else { 0.0 },
            within_resolution: a == b || (b - a).abs() < quantum_ns,
            sweep_point,
            at_level_end,
            prior,
            samples,
        })
    }

    /// The later side's figure over the first's, in logarithms (the mean of each side's
    /// runs'), where both sides have one.
    fn difference(&self) -> Option<f64> {
        let [first, later] = &self.runs;
        (!first.is_empty() && !later.is_empty())
            .then(|| crate::stats::mean(later) - crate::stats::mean(first))
    }

    /// The later side moved by `step` (in logarithms): its runs, rounds, figure and samples,
    /// and what is tested of them. The rounds within each run keep their scatter.
    fn shift_later(&mut self, step: f64) {
        let factor = step.exp();
        self.runs[1].iter_mut().for_each(|x| *x += step);
        self.sides_rounds[1].iter_mut().for_each(|x| *x += step);
        self.samples[1].iter_mut().for_each(|x| *x *= factor);
        self.samples_p = mann_whitney_p(&self.samples[0], &self.samples[1]);
        let (a, b) = (self.figures.0, self.figures.1 * factor);
        self.figures.1 = b;
        let quantum_ns = self.resolution * a;
        self.within_resolution = a == b || (b - a).abs() < quantum_ns;
    }

    /// Whether the figures differ by less than `threshold`, a share of the first (never
    /// from a first figure of 0: any difference from nothing is past every threshold).
    fn within_threshold(&self, threshold: f64) -> bool {
        let (a, b) = self.figures;
        a != 0.0 && ((b / a) - 1.0).abs() < threshold
    }
}

impl Verdict {
    /// One word: `faster`, `slower`, `same`, `two regimes`, `untested` or `not comparable`.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Faster { .. } => "faster",
            Verdict::Slower { .. } => "slower",
            Verdict::Same { .. } => "same",
            Verdict::TwoRegimes { .. } => "two regimes",
            Verdict::Untested => "untested",
            Verdict::AtLevelEnd => "not judged",
            Verdict::NotComparable { .. } => "not comparable",
        }
    }

    /// The p-value of the test, when one was made.
    pub fn p(self) -> Option<f64> {
        match self {
            Verdict::Faster { p } | Verdict::Slower { p } | Verdict::Same { p, .. } => Some(p),
            Verdict::TwoRegimes { .. }
            | Verdict::Untested
            | Verdict::AtLevelEnd
            | Verdict::NotComparable { .. } => None,
        }
    }
}

/// Results compared one run a side, fewer than this, and how far they moved between the
/// runs beyond their rounds is not gauged: too few to gauge it.
pub const MIN_RESULTS_FOR_SCATTER: usize = 20;

/// How a later side's run-to-run noise was known.
#[derive(Debug, Clone, PartialEq)]
pub enum RunToRun {
    /// A side had several runs: each result's runs show how far it moves between runs.
    Measured,
    /// One run on each side: each result's rounds show how far it moves within a run, and
    /// results moved between the runs `inflation` times as far as their rounds predict (the
    /// median over their `results`, a factor on the standard deviation): each result's
    /// noise is its own, scaled by that factor, its family's own where the family has at
    /// least [`MIN_RESULTS_FOR_SCATTER`] results (`families`); and where a table measured
    /// how far a result moves between runs (`prior`), the larger of the two.
    Estimated {
        inflation: f64,
        results: usize,
        families: Vec<(String, f64)>,
        prior: Option<PriorUse>,
    },
    /// One run a side and too few results whose rounds scatter to gauge how far they move
    /// between runs: the rounds within each run, and the `prior` where a table has a
    /// result. Of the side's `results`, `scattered` had rounds that scatter.
    Unknown {
        prior: Option<PriorUse>,
        results: usize,
        scattered: usize,
    },
}

/// How the results of one later side took their prior from a [`NoisePrior`]'s table.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorUse {
    /// Where the table was measured ([`NoiseTable::provenance`]).
    pub provenance: String,
    /// Whether it was measured on the later side's machine.
    pub same_machine: bool,
    /// Whether the user gave it (`--noise-table`).
    pub given: bool,
    /// The results whose noise it set (it was the larger).
    pub set: usize,
    /// The results it was held against (a table had them).
    pub held: usize,
}

/// Where one result's run-to-run noise came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoiseFrom {
    /// The runs of a side with several: their own scatter.
    Runs,
    /// How far it moved between runs measured beforehand, as a table holds it
    /// ([`crate::stats::NoiseTables`]): one run a side, and more than its rounds say.
    Prior { same_machine: bool },
    /// Its rounds, widened by how far its set's results moved between the two runs beyond
    /// their rounds: one run a side.
    Set,
    /// Its rounds alone: one run a side, and too few results to gauge their movement, or
    /// its rounds in the two runs scatter more than a table saw it move between runs.
    Rounds,
}

impl NoiseFrom {
    /// One word or two, as the result's line and the JSON say it.
    pub fn word(self) -> &'static str {
        match self {
            NoiseFrom::Runs => "runs",
            NoiseFrom::Prior { same_machine: true } => "prior",
            NoiseFrom::Prior {
                same_machine: false,
            } => "prior from another machine",
            NoiseFrom::Set => "set",
            NoiseFrom::Rounds => "rounds",
        }
    }
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

/// Every run's results by name, for the runs of one comparison: a result of a run is
/// found in constant time, where a walk of the run for each of 20,000 results took
/// minutes. A run is known by its address, which the borrow keeps.
pub(crate) struct Lookup<'a>(HashMap<(usize, &'a str), &'a BenchResult>);

impl<'a> Lookup<'a> {
    /// The results of every run of `sides`.
    pub(crate) fn of(sides: &'a [Side]) -> Lookup<'a> {
        Lookup::of_runs(sides.iter().flat_map(|side| &side.runs))
    }

    /// The results of every run of `runs`.
    pub(crate) fn of_runs(runs: impl Iterator<Item = &'a RunRecord>) -> Lookup<'a> {
        let mut by_name = HashMap::new();
        for run in runs {
            for result in run.results() {
                by_name
                    .entry((address(run), result.name.as_str()))
                    .or_insert(result);
            }
        }
        Lookup(by_name)
    }

    /// The result of `run` named `name`, if it has one.
    pub(crate) fn result(&self, run: &RunRecord, name: &str) -> Option<&'a BenchResult> {
        self.0.get(&(address(run), name)).copied()
    }
}

/// A run's address, which names it within one [`Lookup`].
fn address(run: &RunRecord) -> usize {
    std::ptr::from_ref(run) as usize
}

/// One result as one side measured it: once per run of the side.
pub struct Measured<'a> {
    results: Vec<&'a BenchResult>,
}

impl<'a> Measured<'a> {
    /// The result named `name` in each of `runs` that has it.
    fn of(runs: &[&'a RunRecord], name: &str, lookup: &Lookup<'a>) -> Measured<'a> {
        Measured {
            results: (runs.iter())
                .filter_map(|run| lookup.result(run, name))
                .collect(),
        }
    }

    /// The result named `name` in each of the `steady` runs, or in every run of `all` where
    /// no steady run has it.
    fn steady_or_all(
        steady: &[&'a RunRecord],
        all: &'a [RunRecord],
        name: &str,
        lookup: &Lookup<'a>,
    ) -> Measured<'a> {
        let measured = Measured::of(steady, name, lookup);
        if measured.results.is_empty() {
            Measured::of(&all.iter().collect::<Vec<_>>(), name, lookup)
        } else {
            measured
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

    /// The instructions per call where every run counted them with one counter (the median
    /// of the runs'), with that counter; `None` where one did not, or two counters did.
    fn instructions(&self) -> Option<(&'a str, f64)> {
        let via = self.results.first()?.counted.as_ref()?.via.as_str();
        let mut counts: Vec<f64> = (self.results.iter())
            .map(|r| {
                r.counted
                    .as_ref()
                    .filter(|c| c.via == via)
                    .map(|c| c.instructions)
            })
            .collect::<Option<_>>()?;
        Some((via, median_in_place(&mut counts)))
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
/// One clock tick per operation of `result`, in its run: the tick over the operations one
/// of its samples timed, never the raw tick for a figure built from many operations.
fn quantum_ns(run: &RunRecord, result: &BenchResult, lookup: &Lookup) -> f64 {
    run.clock.resolution_ns / operations_per_sample(run, result, 0, lookup) as f64
}

/// How deep [`operations_per_sample`] follows `derived_from`: deeper than any figure
/// latlab derives, and a bound on a malformed file whose results derive from each other.
const MAX_DERIVATION_DEPTH: usize = 4;

/// The operations one sample of `result` timed. A derived figure (a level's pooled
/// plateau, a difference of two results) has `iterations` 1 of its own, but each of its
/// samples comes from samples of its sources: it is as fine as the coarsest of them.
fn operations_per_sample(
    run: &RunRecord,
    result: &BenchResult,
    depth: usize,
    lookup: &Lookup,
) -> u64 {
    if result.kind == ResultKind::Derived && depth < MAX_DERIVATION_DEPTH {
        let sources = result
            .derived_from
            .iter()
            .filter_map(|name| lookup.result(run, name))
            .map(|source| operations_per_sample(run, source, depth + 1, lookup))
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
    /// Later median ÷ first median; NaN where either is not positive (a difference, a span that
    /// ran backwards): shown as "—", null in JSON, empty in CSV.
    pub ratio: f64,
    pub verdict: Verdict,
    /// The ratio's 95% interval from the repetitions' noise, where it was tested against
    /// it.
    pub interval: Option<(f64, f64)>,
    /// The smallest change, either way and as a share, that this comparison would have
    /// called for this result nine times in ten: its noise's reach at its test's level, or
    /// the threshold beyond its noise's 95% reach (a change is called only when its
    /// interval lies wholly past the threshold), whichever is larger, and beyond that the
    /// margin that makes it nine times in ten rather than half the time; or a clock tick.
    pub detectable: Option<f64>,
    /// Its samples are too few for their test to call a change of any size within its set:
    /// two sides wholly apart give a Mann–Whitney p-value that, for a change alone in its
    /// set, does not reach the test's level (three samples a side never reach 5%). It makes
    /// no claim, and the gate cannot hear it.
    pub too_few_samples: bool,
    /// How far its noise reaches: the smallest difference its 95% interval lies wholly
    /// beyond 1 at, as a share; `None` where no noise was known.
    pub reach: Option<f64>,
    /// The margin, in logarithms, a difference must lie beyond a critical value to be
    /// called nine times in ten; `None` where no noise was known.
    pub margin: Option<f64>,
    /// Where its run-to-run noise came from, where it was tested against one.
    pub noise_from: Option<NoiseFrom>,
    /// Instructions per call, first side and this one, where both counted them (`cargo
    /// bench -- --count instructions`): the verdict and the ratio are then the counts'.
    pub counts: Option<(f64, f64)>,
    /// The set of its probe's results it was tested within (Benjamini–Hochberg); `None`
    /// for a result tested on its own (the only one of its set).
    pub tested_within: Option<TestedWithin>,
}

/// The set a result's p-value was adjusted within: its probe's primary results, or its
/// probe's sweep points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestedWithin {
    pub results: usize,
    pub sweep_points: bool,
}

impl std::fmt::Display for TestedWithin {
    /// `108 sweep points of its probe`, `5 primary results of its probe`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.sweep_points {
            "sweep points"
        } else {
            "primary results"
        };
        write!(f, "{} {kind} of its probe", self.results)
    }
}

/// One result of the first run and what each later run made of it.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparedResult {
    pub name: String,
    /// An in-between point of a sweep (folded in the terminal).
    pub sweep_detail: bool,
    /// A point of a sweep (a working set, a size, a stride): tested within its probe's sweep points,
    /// and never failing a gate alone.
    pub sweep_point: bool,
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
    /// Results whose repetitions on one side fall into two regimes.
    pub two_regimes: usize,
    /// Results of the first run that this run lacks, each with why.
    pub missing: Vec<MissingResult>,
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
    /// Each later side's core clock, where it moved.
    pub clock_moves: Vec<Option<ClockMove>>,
    pub threshold: f64,
    /// What the user asked to excuse.
    pub excused: Excused,
    pub results: Vec<ComparedResult>,
    /// One per later run.
    pub tallies: Vec<Tally>,
}

/// The sweep a point belongs to: its name up to the last `/`.
fn sweep(result: &ComparedResult) -> Option<&str> {
    result.name.rsplit_once('/').map(|(sweep, _)| sweep)
}

/// A result's family: its name up to the first `/` (the probe that measured it).
fn family(name: &str) -> &str {
    name.split('/').next().unwrap_or(name)
}

/// The first side's figure for `result`: from its runs whose checks held for it, all of
/// them where none did.
fn first_figure<'a>(
    first: &'a Side,
    result: &BenchResult,
    checks: &[&str],
    lookup: &Lookup<'a>,
) -> Measured<'a> {
    let steady_runs: Vec<&RunRecord> = (first.runs.iter())
        .filter(|run| steady(run, checks, lookup.result(run, &result.name)))
        .collect();
    Measured::steady_or_all(&steady_runs, &first.runs, &result.name, lookup)
}

/// `later` ÷ `first` where both are positive; NaN where either is not (a difference of two
/// figures, a span between two CPUs' timestamps that ran backwards): a ratio of figures of
/// opposite signs reads a size that neither has. Shown as "—", null in JSON, empty in CSV.
fn ratio_of(first: f64, later: f64) -> f64 {
    if first > 0.0 && later > 0.0 {
        later / first
    } else {
        f64::NAN
    }
}

/// `result` as later side `side` measured it, against the first side's figure `mine`,
/// with its tests where it can be tested; `None` when no run of the side has it.
fn against<'a>(
    (first, side): (&'a Side, &'a Side),
    mine: &Measured,
    result: &BenchResult,
    checks: &[&'static str],
    (noise, at_level_end): (&NoiseTables, bool),
    lookup: &Lookup<'a>,
) -> Option<(Against, Option<Tests>)> {
    let all: Vec<&RunRecord> = side.runs.iter().collect();
    let other = Measured::of(&all, &result.name, lookup)
        .results
        .first()
        .copied()?;
    let quantum = quantum_ns(first.first_run(), result, lookup).max(quantum_ns(
        side.first_run(),
        other,
        lookup,
    ));
    let comparable = comparable_runs((first, side), checks, &result.name, lookup);
    let (theirs, verdict, tests) = match comparable {
        Err((check, how)) => (
            Measured::of(&all, &result.name, lookup),
            Verdict::NotComparable { check, how },
            None,
        ),
        Ok(steady_runs) => {
            let theirs = Measured::steady_or_all(&steady_runs, &side.runs, &result.name, lookup);
            // Another machine's table speaks for what a name is there, not here: a sweep
            // point's place on this machine's curve is not the name's place on that one's.
            let prior = noise
                .prior(&NoiseMachine::of(side.first_run()), &result.name)
                .filter(|p| p.same_machine || p.given || !result.is_sweep_point());
            let point = (result.is_sweep_point(), at_level_end);
            let tests = Tests::of(mine, &theirs, quantum, point, prior);
            (theirs, Verdict::Untested, tests)
        }
    };
    let against = Against {
        median_ns: theirs.median(),
        spread: theirs.spread(),
        ratio: ratio_of(mine.median(), theirs.median()),
        verdict,
        interval: None,
        detectable: None,
        too_few_samples: false,
        reach: None,
        margin: None,
        noise_from: None,
        tested_within: None,
        counts: None,
    };
    // Counts are compared only where one counter counted both sides: callgrind's and the
    // CPU's count differently.
    match (mine.instructions(), theirs.instructions()) {
        (Some((a, first)), Some((b, later))) if a == b => {
            Some((Against::counted(against, first, later), None))
        }
        _ => Some((against, tests)),
    }
}

/// Counts closer than this share are the same: a count moves that little between runs of
/// one build (a hash table seeded at random, the addresses an allocator hands out), and a
/// change of the code's work moves it more.
pub const COUNT_TOLERANCE: f64 = 0.001;

impl Against {
    /// `against`, judged by its counts instead (`first` and `later` instructions per call):
    /// a count that differs by more than [`COUNT_TOLERANCE`] is a change, whatever the
    /// threshold, with no noise model needed.
    fn counted(against: Against, first: f64, later: f64) -> Against {
        let ratio = later / first;
        let verdict = if (ratio - 1.0).abs() <= COUNT_TOLERANCE {
            Verdict::Same {
                p: 1.0,
                why: SameBecause::CountsAgree,
            }
        } else if ratio > 1.0 {
            Verdict::Slower { p: 0.0 }
        } else {
            Verdict::Faster { p: 0.0 }
        };
        Against {
            ratio,
            verdict,
            detectable: Some(COUNT_TOLERANCE),
            counts: Some((first, later)),
            ..against
        }
    }
}

/// Judges later side `index` in time; where its core clock moved within its noise (the
/// clock's own verdict in time is the same), or beyond it and `excused`, judges it again
/// with the results on the clock that moved with it in cycles ([`clock`]).
fn judge_with_clock(
    (results, tests): (&mut [ComparedResult], &mut [Vec<Option<Tests>>]),
    on_clock: &[bool],
    index: usize,
    threshold: f64,
    excused: Excused,
) -> (RunToRun, Option<ClockMove>) {
    let unjudged: Vec<Option<Against>> = results.iter().map(|r| r.later[index].clone()).collect();
    let noise = judge::judge_side(results, tests, index, threshold);
    let Some(moved) = clock::moved(results, tests, on_clock, index, threshold) else {
        return (noise, None);
    };
    let within_noise = moved.within_noise(results, index);
    let in_cycles = within_noise || excused.clock_moves;
    if !in_cycles {
        return (noise, Some(moved.said(results, index, (false, false))));
    }
    for (result, unjudged) in results.iter_mut().zip(unjudged) {
        result.later[index] = unjudged;
    }
    moved.shift_into_cycles(tests, index);
    let noise = judge::judge_side(results, tests, index, threshold);
    (
        noise,
        Some(moved.said(results, index, (within_noise, true))),
    )
}

/// `result` of the first side's first run as missing from `side`, with its probe's status
/// there.
fn missing(first: &RunRecord, side: &Side, result: &BenchResult) -> MissingResult {
    use latlab_engine::model::ProbeStatus;
    let probe = (first.probes.iter())
        .find(|p| p.results.iter().any(|r| r.name == result.name))
        .map_or_else(|| family(&result.name).to_string(), |p| p.id.clone());
    let statuses: Vec<&ProbeStatus> = (side.runs.iter())
        .flat_map(|run| &run.probes)
        .filter(|p| p.id == probe)
        .map(|p| &p.status)
        .collect();
    let why = statuses
        .iter()
        .find_map(|status| match status {
            ProbeStatus::Failed { reason } => Some(MissingWhy::Failed(reason.clone())),
            ProbeStatus::Interrupted => Some(MissingWhy::Interrupted),
            ProbeStatus::Skipped { reason } => Some(MissingWhy::Skipped(reason.clone())),
            ProbeStatus::Ok => None,
        })
        .or_else(|| left_out(side, &probe, &result.name))
        .unwrap_or(if statuses.is_empty() {
            MissingWhy::NotRun
        } else {
            MissingWhy::NotMeasured
        });
    // A probe that ended well and said it left the result out for the run's time budget
    // measured what the budget allowed: the run lacks nothing it should have had. A sweep's
    // points follow the caches it finds; anything else missing is the gate's.
    let gated = match why {
        MissingWhy::LeftOut(_) => false,
        MissingWhy::NotMeasured => !result.is_sweep_point(),
        _ => true,
    };
    MissingResult {
        gated,
        name: result.name.clone(),
        probe,
        why,
    }
}

/// Where probe `probe` of a run of `side` says it left result `name` out (a
/// [`latlab_engine::Warning::PartSkipped`] whose part names it, as a sweep past its budget
/// does: `ipc.throughput points eventfd-shm/4KiB, …`), its reason.
fn left_out(side: &Side, probe: &str, name: &str) -> Option<MissingWhy> {
    let point = name.strip_prefix(probe)?.strip_prefix('/')?;
    (side.runs.iter())
        .flat_map(|run| &run.probes)
        .filter(|p| p.id == probe)
        .flat_map(|p| p.results.iter().flat_map(|r| &r.warnings))
        .find_map(|warning| match warning {
            latlab_engine::Warning::PartSkipped { part, reason }
                if part.split([' ', ',']).any(|word| word == point) =>
            {
                Some(MissingWhy::LeftOut(reason.clone()))
            }
            _ => None,
        })
}

/// The results that `side`'s runs have and `first` has not, each once, in the order met.
fn only_in(side: &Side, first: &RunRecord, lookup: &Lookup) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    (side.runs.iter())
        .flat_map(|run| run.results())
        .filter(|result| lookup.result(first, &result.name).is_none())
        .filter(|result| seen.insert(result.name.as_str()))
        .map(|result| result.name.clone())
        .collect()
}

impl Tally {
    /// Counts each verdict of `against`.
    fn count<'a>(&mut self, against: impl Iterator<Item = &'a Against>) {
        for against in against {
            match against.verdict {
                Verdict::Slower { .. } => self.slower += 1,
                Verdict::Faster { .. } => self.faster += 1,
                Verdict::Same { .. } => self.same += 1,
                Verdict::TwoRegimes { .. } => self.two_regimes += 1,
                Verdict::Untested | Verdict::AtLevelEnd => self.untested += 1,
                Verdict::NotComparable { .. } => self.not_comparable += 1,
            }
        }
    }
}

/// The noise table of `runs`, several runs of one build on one machine (`latlab noise`):
/// each result's run figures where the stability checks its probe `declared` held in that
/// run, as a comparison takes them (a run whose memory chase moved under it is not
/// comparable, and does not widen the table either).
pub fn noise_table(runs: &[RunRecord], declared: &Presentations) -> Result<NoiseTable, String> {
    NoiseTable::measure(runs, |run, result| {
        steady(run, &checks_for(declared, run, result), Some(result))
    })
}

/// Each run a side of its own.
pub fn sides(runs: &[(String, RunRecord)]) -> Vec<Side> {
    (runs.iter())
        .map(|(label, run)| Side::one(label, run.clone()))
        .collect()
}

impl Comparison {
    /// Compares every later run of `runs` with the first, calling differences below
    /// `threshold` (a share of the first median) the same; the stability checks that speak
    /// for each result are those its probe `declared`; one run a side takes its prior from
    /// `noise`.
    pub fn of(
        runs: &[(String, RunRecord)],
        threshold: f64,
        declared: &Presentations,
        noise: NoiseTables,
    ) -> Comparison {
        Comparison::of_sides(&sides(runs), threshold, declared, noise)
    }

    /// Compares every later side of `sides` with the first, calling differences below
    /// `threshold` (a share of the first figure) the same; the stability checks that speak
    /// for each result are those its probe `declared`; one run a side takes its prior from
    /// `noise`.
    pub fn of_sides(
        sides: &[Side],
        threshold: f64,
        declared: &Presentations,
        noise: NoiseTables,
    ) -> Comparison {
        Comparison::excusing(sides, threshold, declared, noise, Excused::default())
    }

    /// As [`Comparison::of_sides`], excusing what `excused` names.
    pub fn excusing(
        sides: &[Side],
        threshold: f64,
        declared: &Presentations,
        noise: NoiseTables,
        excused: Excused,
    ) -> Comparison {
        let first_side = &sides[0];
        let first = first_side.first_run();
        let later_sides = &sides[1..];
        let lookup = Lookup::of(sides);
        let level_ends = places::at_level_ends(sides.iter().flat_map(|s| &s.runs), declared);
        let mut tallies = vec![Tally::default(); later_sides.len()];
        // Each result against each later side, its tests kept until every result of that
        // side is tested and the p-values can be adjusted for their number.
        let mut results = Vec::new();
        let mut tests: Vec<Vec<Option<Tests>>> = Vec::new();
        for result in first.results() {
            let checks = checks_for(declared, first, result);
            let mine = first_figure(first_side, result, &checks, &lookup);
            let (mut later, mut tested) = (Vec::new(), Vec::new());
            for (side, tally) in later_sides.iter().zip(&mut tallies) {
                let sides = (first_side, side);
                let noise = (&noise, level_ends.contains(&result.name));
                match against(sides, &mine, result, &checks, noise, &lookup) {
                    Some((against, tests)) => {
                        later.push(Some(against));
                        tested.push(tests);
                    }
                    None => {
                        tally.missing.push(missing(first, side, result));
                        later.push(None);
                        tested.push(None);
                    }
                }
            }
            results.push(ComparedResult {
                name: result.name.clone(),
                sweep_detail: result.sweep_detail,
                sweep_point: result.is_sweep_point(),
                first_median_ns: mine.median(),
                first_spread: mine.spread(),
                later,
            });
            tests.push(tested);
        }
        let on_clock = clock::on_clock(&results, sides, &lookup, declared);
        let mut run_to_run = Vec::with_capacity(later_sides.len());
        let mut clock_moves = Vec::with_capacity(later_sides.len());
        for (index, (side, tally)) in later_sides.iter().zip(&mut tallies).enumerate() {
            let (noise, clock) = judge_with_clock(
                (&mut results, &mut tests),
                &on_clock,
                index,
                threshold,
                excused,
            );
            run_to_run.push(noise);
            clock_moves.push(clock);
            tally.count(results.iter().filter_map(|r| r.later[index].as_ref()));
            tally.new = only_in(side, first, &lookup);
        }
        Comparison {
            labels: sides.iter().map(|side| side.label.clone()).collect(),
            runs_per_side: sides.iter().map(|side| side.runs.len()).collect(),
            run_to_run,
            clock_moves,
            threshold,
            excused,
            results,
            tallies,
        }
    }

    /// The results slower than the first run by more than `percent` per cent: called
    /// slower, and with the ratio's 95% interval past `1 + percent / 100` where it was
    /// tested against its noise (a figure that is probably 16% slower, not one that may be
    /// 5%): `(name, later run's label, ratio)`. A result in two regimes is never among
    /// them, nor a sweep point alone: a point at a cache's edge flips between regimes
    /// while the rest of its sweep stays put, where a real change moves several points.
    pub fn slower_than(&self, percent: f64) -> Vec<(String, String, f64)> {
        let limit = 1.0 + percent / 100.0;
        let mut found = Vec::new();
        for (side, label) in self.labels[1..].iter().enumerate() {
            let slower: Vec<&ComparedResult> = (self.results.iter())
                .filter(|result| {
                    // The gate judges by its own percentage: a result called the same only
                    // because a threshold wider than the gate held it (its tests rejected)
                    // is judged as one called slower.
                    result.later[side].as_ref().is_some_and(|a| {
                        matches!(
                            a.verdict,
                            Verdict::Slower { .. }
                                | Verdict::Same {
                                    why: SameBecause::WithinThreshold,
                                    ..
                                }
                        ) && a.ratio > limit
                            && a.interval.is_none_or(|(low, _)| low > limit)
                    })
                })
                .collect();
            // How many slower results each sweep has: a point alone in its sweep is left
            // out.
            let mut per_sweep: HashMap<Option<&str>, usize> = HashMap::new();
            for result in &slower {
                *per_sweep.entry(sweep(result)).or_default() += 1;
            }
            for result in &slower {
                let alone = result.sweep_point && per_sweep[&sweep(result)] == 1;
                if !alone && let Some(a) = &result.later[side] {
                    found.push((result.name.clone(), label.clone(), a.ratio));
                }
            }
        }
        let rows: HashMap<&str, usize> = (self.results.iter().enumerate())
            .map(|(row, r)| (r.name.as_str(), row))
            .collect();
        found.sort_by_key(|(name, label, _)| {
            let row = rows.get(name.as_str()).copied();
            (row, self.labels.iter().position(|l| l == label))
        });
        found
    }
}
