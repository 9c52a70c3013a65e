//! The result model: what a run produced, in one serialisable shape that every exporter
//! renders and that later tools (`latlab compare`, `latlab report`) read back.
//!
//! Times are nanoseconds per operation unless a field's name says otherwise; every field
//! carrying a unit names it (`_ns`, `_hz`, `_bytes`).

use crate::clock::ClockInfo;
use crate::environment::Environment;
use crate::parameters::{Key, OverRounds, Value};
use crate::stats::Summary;
use std::collections::BTreeMap;

pub mod distribution;
#[cfg(feature = "serde")]
mod figures_only;
mod profile;

#[cfg(feature = "serde")]
pub use figures_only::without_samples;
pub use profile::{
    Allocations, AnnotatedFunction, CacheCounts, Counted, Counters, HotFunction, Instruction,
    Profile,
};

const SETUP_MEDIANS_NS: Key = Key::new("setup_medians_ns");
const SETUP_SPREAD: Key = Key::new("setup_spread");
const SETUPS: Key = Key::new("setups");

/// How a result's samples were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ResultKind {
    /// A calibrated loop of many iterations per sample, the empty loop's cost subtracted.
    TimedLoop,
    /// Each sample is one timed event (a clock step, a thread start).
    Observations,
    /// Computed sample by sample from other results (a difference, a ratio).
    Derived,
    /// Samples estimated, not measured: some of the events did not complete within their
    /// cap and their time was extrapolated from the part they did. The figure is an estimate
    /// and its summary's interval is not a confidence interval: renderings show neither an
    /// interval nor a comparison for it.
    Extrapolated,
}

/// Whether a figure measures real work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Verdict {
    /// The figure is distinguishable from the empty loop and above the clock's resolution.
    Measured,
    /// Statistically indistinguishable from the loop with an empty body, or below one clock
    /// resolution per sample: the compiler removed the work, or it costs less than the loop
    /// can resolve.
    OptimisedAway,
}

impl Verdict {
    /// Whether the figure should be shouted about.
    pub fn is_suspect(self) -> bool {
        self != Verdict::Measured
    }
}

/// A fact about one result that makes its figure less trustworthy or less complete. The
/// engine and the probes state the facts with their figures; the front ends (the report's
/// `advice`) phrase them and say what to do, once.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(tag = "kind", rename_all = "snake_case"))]
pub enum Warning {
    /// The first `early_samples` samples differed from the rest by `shift` (a fraction,
    /// positive when slower), significantly.
    NotSteadyState { early_samples: usize, shift: f64 },
    /// The samples' coefficient of variation exceeded the engine's bound.
    HighVariance { cv: f64 },
    /// The measuring thread was preempted this many times while it sampled.
    Preempted { involuntary_switches: u64 },
    /// Major page faults (waits for storage) while sampling.
    MajorPageFaults { count: u64 },
    /// Fewer samples than wanted fitted in the time budget.
    FewSamples { taken: usize, wanted: usize },
    /// Fewer samples than the engine's minimum ([`crate::MIN_SAMPLES`]) for any result: the
    /// probe's events were too costly or too rare. No interval or percentile is shown.
    BelowMinimum { taken: usize, minimum: usize },
    /// A derived difference whose 95% confidence interval includes zero.
    DifferenceNotSignificant,
    /// A probe's measured size of a cache level disagrees with the kernel's.
    CacheSizeMismatch {
        level: String,
        measured_bytes: u64,
        reported_bytes: u64,
    },
    /// Part of a probe could not run here (no permission, no interface), and why.
    PartSkipped { part: String, reason: String },
    /// A correctness check that a probe makes (not a timing) failed, and how.
    CheckFailed { check: String, failure: String },
    /// The samples fall in two groups far apart: the lower `low_share` of them near
    /// `low_ns`, the rest near `high_ns`. What was measured changed while it was sampled (a
    /// VM's vCPUs moved between the host's cores), so the median describes neither.
    TwoModes {
        low_ns: f64,
        high_ns: f64,
        low_share: f64,
    },
    /// This pair of CPUs passes a line `ratio` times faster than the median pair, though
    /// the machine does not report them as threads of one core: a hypervisor running them
    /// on SMT siblings of one host core would do that.
    FasterThanOtherPairs { ratio: f64 },
    /// A line passed between this pair of CPUs in `one_way_ns`, under twice an L2 hit
    /// measured on the same core (`l2_hit_ns`), though the machine does not report them as
    /// threads of one core: no line crosses between cores that fast, so at that moment the
    /// host ran the two vCPUs as SMT siblings of one core. The figure is not a core-to-core
    /// latency.
    BehavedAsSiblings { one_way_ns: f64, l2_hit_ns: f64 },
    /// The same figure measured again later in the run moved from `first_ns` to `last_ns`,
    /// beyond both measurements' noise: the machine under the run changed (the host moved
    /// the vCPUs or the memory, or a neighbour started or stopped).
    MovedDuringRun { first_ns: f64, last_ns: f64 },
    /// The CPUs' placement changed around a probe whose figures depend on it: the run's
    /// placement reference (a core-to-core pair) read `start_ns` at the run's start and
    /// `beside_ns` (lowest, highest) just before and just after the round flagged, beyond
    /// the agreement of two readings of one placement; or this result, a figure of the
    /// reference's own kind, read `read_ns` in that round, beyond that agreement from
    /// every reading around it. The figure belongs to a placement the run's other figures
    /// may not share.
    PlacementChanged {
        /// The round's figure, for a result that measures what the reference measures.
        read_ns: Option<f64>,
        start_ns: f64,
        beside_ns: [f64; 2],
    },
    /// The core's cycle, read from a chain of dependent additions as `add_ns`, disagrees by
    /// more than 10% with a chain of an instruction of known latency: a dependent `check`
    /// (`imul` on x86-64, `eor` on aarch64) took `check_ns`, where it takes
    /// `expected_cycles` cycles on every current core of this architecture. A core that
    /// folds additions, or a clock that changed between the two chains, would do that;
    /// figures in cycles built on this cycle are uncertain.
    CycleUncertain {
        add_ns: f64,
        /// The checking instruction; files written before it was named checked with `imul`.
        #[cfg_attr(feature = "serde", serde(default = "imul"))]
        check: String,
        /// Its time per instruction (`multiply_ns` in files written before it was named).
        #[cfg_attr(feature = "serde", serde(alias = "multiply_ns"))]
        check_ns: f64,
        expected_cycles: f64,
    },
    /// The core's cycle reads as `measured_ghz`, beyond any frequency this machine's cores
    /// can run at (`limit_ghz`, from `basis`: the cores' reported maximum, or the invariant
    /// TSC's rate with room for turbo): the add chain was folded or the clock misread, and
    /// every figure in cycles is wrong.
    ImplausibleCycle {
        measured_ghz: f64,
        limit_ghz: f64,
        basis: String,
    },
    /// A warning read from a results file of schema 1, written before warnings were typed:
    /// its code and the sentence it was given then.
    Phrased { code: String, message: String },
}

impl Warning {
    /// `part` of the probe did not run, and why (the reason says what would let it run).
    pub fn part_skipped(part: &str, reason: &str) -> Warning {
        Warning::PartSkipped {
            part: part.into(),
            reason: reason.into(),
        }
    }

    /// The check `check` failed, and how.
    pub fn check_failed(check: &str, failure: &str) -> Warning {
        Warning::CheckFailed {
            check: check.into(),
            failure: failure.into(),
        }
    }
}

/// What else happened on the measuring thread while its samples were taken.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Integrity {
    /// The thread blocked and gave up the CPU.
    pub voluntary_switches: u64,
    /// The thread was preempted.
    pub involuntary_switches: u64,
    pub minor_page_faults: u64,
    pub major_page_faults: u64,
}

impl Integrity {
    /// Adds the counts of another measurement of the same result.
    pub fn add(&mut self, other: Integrity) {
        self.voluntary_switches += other.voluntary_switches;
        self.involuntary_switches += other.involuntary_switches;
        self.minor_page_faults += other.minor_page_faults;
        self.major_page_faults += other.major_page_faults;
    }
}

/// The checking instruction of a [`Warning::CycleUncertain`] read from a file written before
/// it was named: x86-64's multiply, the only one checked then.
#[cfg(feature = "serde")]
fn imul() -> String {
    "imul".into()
}

/// One benchmark's outcome.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BenchResult {
    /// `probe.id/variant`, unique in a run.
    pub name: String,
    /// How it was measured, in one line.
    pub method: String,
    /// The benchmark's parameters (sizes, patterns, CPUs, a histogram), typed; keys that
    /// other crates read are in [`crate::names::key`].
    pub parameters: BTreeMap<String, Value>,
    pub kind: ResultKind,
    /// Operations timed per sample (1 for observations).
    pub iterations: u64,
    /// Nanoseconds per operation, one per sample, in the order taken; the empty loop's median
    /// cost already subtracted.
    #[cfg_attr(feature = "serde", serde(deserialize_with = "figures_only::samples"))]
    pub samples_ns: Vec<f64>,
    pub summary: Summary,
    /// CPU time of the measuring thread per operation, one per sample; for timed loops the
    /// empty loop's median CPU time is subtracted. Empty when not measured.
    #[cfg_attr(feature = "serde", serde(deserialize_with = "figures_only::samples"))]
    pub cpu_samples_ns: Vec<f64>,
    /// The empty loop's median cost per iteration that was subtracted.
    pub loop_overhead_ns: Option<f64>,
    /// The first call, timed alone before anything was warmed up, less the cost of an empty
    /// timed region. Below the clock's resolution it is noise (and can be negative).
    pub cold_ns: Option<f64>,
    /// The results this one was computed from, for derived results.
    pub derived_from: Vec<String>,
    /// Bytes one operation moves (an element read, a copy), for results that are also
    /// throughputs; `None` for pure latencies.
    pub bytes_per_operation: Option<u64>,
    /// Items one operation processes (elements sorted, messages parsed), for results that
    /// are also item rates; `None` otherwise.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub items_per_operation: Option<u64>,
    /// One of many points of a dense sweep (a memcpy size between two powers of two): the
    /// terminal table leaves it out for brevity; every file output keeps it.
    #[cfg_attr(feature = "serde", serde(default))]
    pub sweep_detail: bool,
    pub verdict: Verdict,
    pub warnings: Vec<Warning>,
    pub integrity: Integrity,
    /// Where a user's benchmark spent its time (`cargo bench -- --profile`).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub profile: Option<Profile>,
    /// What a user's benchmark allocated per call, where a counting allocator is installed.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub allocations: Option<Allocations>,
    /// What a user's benchmark executed per call, counted (`cargo bench -- --count
    /// instructions`): a comparison of two counted runs judges the counts.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub counted: Option<Counted>,
    /// The median of each round the result was measured in, in run order, when the run
    /// measured in rounds spread over it (`Config::rounds`): how far
    /// the figure moves between measurements, which its samples, taken close together,
    /// cannot show. Empty when it was measured once.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub round_medians_ns: Vec<f64>,
    /// How the rounds' values of its parameters combine, as their keys say
    /// ([`Key::over_rounds`]): in the process that measured it only, never in a file.
    #[cfg_attr(feature = "serde", serde(skip))]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub(crate) over_rounds: RoundRules,
}

/// The keys of a result's parameters whose rounds do not simply keep the first round's
/// value. What a result is does not depend on them: two results are equal whatever rules
/// they carry, so that one read back from a file equals the one written.
#[derive(Debug, Clone, Default)]
pub(crate) struct RoundRules(Vec<Key>);

impl PartialEq for RoundRules {
    fn eq(&self, _: &RoundRules) -> bool {
        true
    }
}

impl BenchResult {
    /// Adds a parameter, builder style; how rounds combine it is its key's
    /// ([`Key::over_rounds`]).
    pub fn with_parameter(self, key: Key, value: impl Into<Value>) -> BenchResult {
        self.with_value(key, value.into())
    }

    /// [`BenchResult::with_parameter`] once the value is made: one copy for every type.
    fn with_value(mut self, key: Key, value: Value) -> BenchResult {
        self.parameters.insert(key.name().to_string(), value);
        let rules = &mut self.over_rounds.0;
        rules.retain(|known| known.name() != key.name());
        if key.over_rounds() != OverRounds::First {
            rules.push(key);
        }
        self
    }

    /// Whether the figure is an estimate from events that did not complete
    /// ([`ResultKind::Extrapolated`]): it claims no confidence interval.
    pub fn is_extrapolated(&self) -> bool {
        self.kind == ResultKind::Extrapolated
    }

    /// Whether it is a point of a sweep (a working set, a file or copy size, a stride),
    /// one of many of its probe, however its figure was obtained (a chase point is derived
    /// from two chain lengths). A figure derived from points (a cache level, a
    /// per-operation slope) names no size of its own and is not, nor is any result without
    /// a size or stride: those are the probe's primary figures.
    pub fn is_sweep_point(&self) -> bool {
        use crate::names::key;
        self.sweep_detail
            || [
                key::WORKING_SET_BYTES,
                key::SIZE_BYTES,
                key::COPY_BYTES,
                key::STRIDE_BYTES,
            ]
            .iter()
            .any(|k| self.parameter(*k).is_some())
    }

    /// A parameter, when present.
    pub fn parameter(&self, key: Key) -> Option<&Value> {
        self.parameters.get(key.name())
    }

    /// Declares that each operation moves `bytes` bytes, so that the result is also a rate.
    pub fn with_bytes_per_operation(mut self, bytes: u64) -> BenchResult {
        self.bytes_per_operation = Some(bytes);
        self
    }

    /// Declares that each operation processes `items` items, so that the result is also an
    /// item rate.
    pub fn with_items_per_operation(mut self, items: u64) -> BenchResult {
        self.items_per_operation = Some(items);
        self
    }

    /// Marks the result as an in-between point of a dense sweep, or not.
    pub fn as_sweep_detail(mut self, detail: bool) -> BenchResult {
        self.sweep_detail = detail;
        self
    }

    /// The throughput at the median time, in GB/s (10^9 bytes per second); `None` for pure
    /// latencies and when the median is not positive.
    pub fn gigabytes_per_second(&self) -> Option<f64> {
        let bytes = self.bytes_per_operation? as f64;
        // Bytes per nanosecond are gigabytes (10^9) per second.
        (self.summary.median > 0.0).then(|| bytes / self.summary.median)
    }

    /// Items per second at the median time; `None` where no item count was declared and
    /// when the median is not positive.
    pub fn items_per_second(&self) -> Option<f64> {
        let items = self.items_per_operation? as f64;
        (self.summary.median > 0.0).then(|| items / self.summary.median * 1e9)
    }

    /// A result of `kind` named `name` with `samples_ns` and their `summary`, one operation a
    /// sample, and nothing else said of it: what the makers of results start from.
    pub fn plain(
        (name, method): (&str, &str),
        kind: ResultKind,
        samples_ns: Vec<f64>,
        summary: Summary,
    ) -> BenchResult {
        BenchResult {
            name: name.to_string(),
            method: method.to_string(),
            parameters: BTreeMap::new(),
            kind,
            iterations: 1,
            samples_ns,
            summary,
            cpu_samples_ns: Vec::new(),
            loop_overhead_ns: None,
            cold_ns: None,
            derived_from: Vec::new(),
            bytes_per_operation: None,
            items_per_operation: None,
            sweep_detail: false,
            verdict: Verdict::Measured,
            warnings: Vec::new(),
            integrity: Integrity::default(),
            profile: None,
            allocations: None,
            counted: None,
            round_medians_ns: Vec::new(),
            over_rounds: RoundRules::default(),
        }
    }

    /// A result computed from other results: `samples_ns` (and `cpu_samples_ns`, possibly
    /// empty) are already derived. `None` when there are no samples.
    pub fn derived(
        name: &str,
        method: &str,
        samples_ns: Vec<f64>,
        cpu_samples_ns: Vec<f64>,
        derived_from: Vec<String>,
    ) -> Option<BenchResult> {
        let summary = Summary::of(&samples_ns)?;
        Some(BenchResult {
            cpu_samples_ns,
            derived_from,
            ..BenchResult::plain((name, method), ResultKind::Derived, samples_ns, summary)
        })
    }

    /// A result computed sample by sample as `scale × (a − b)`, pairing the samples by the
    /// order they were taken in. `None` when either has no samples.
    pub fn derived_difference(
        name: &str,
        method: &str,
        a: &BenchResult,
        b: &BenchResult,
        scale: f64,
    ) -> Option<BenchResult> {
        let paired = |x: &[f64], y: &[f64]| -> Vec<f64> {
            x.iter().zip(y).map(|(x, y)| scale * (x - y)).collect()
        };
        let mut result = BenchResult::derived(
            name,
            method,
            paired(&a.samples_ns, &b.samples_ns),
            paired(&a.cpu_samples_ns, &b.cpu_samples_ns),
            vec![a.name.clone(), b.name.clone()],
        )?;
        result.iterations = a.iterations.min(b.iterations);
        let [low, high] = result.summary.median_ci95;
        if low <= 0.0 && high >= 0.0 {
            result.warnings.push(Warning::DifferenceNotSignificant);
        }
        Some(result)
    }

    /// Takes in what another measurement of the same result found, besides its samples:
    /// its warnings (one of each kind, the first kept), its integrity counts, its verdict
    /// when suspect, and the fewer iterations per sample.
    pub(crate) fn absorb(&mut self, part: BenchResult) {
        self.iterations = self.iterations.min(part.iterations);
        self.integrity.add(part.integrity);
        for warning in part.warnings {
            let kind = std::mem::discriminant(&warning);
            if !self
                .warnings
                .iter()
                .any(|w| std::mem::discriminant(w) == kind)
            {
                self.warnings.push(warning);
            }
        }
        if part.verdict.is_suspect() {
            self.verdict = part.verdict;
        }
    }

    /// One result from the same benchmark measured on several independent set-ups (a ring
    /// on a fresh mapping each): the samples pooled in the order taken, the integrity
    /// counts added, one warning of each kind the parts carry, the verdict suspect if any part's
    /// was. Name, method, kind and parameters are the first part's; `setups`, each part's
    /// median (`setup_medians_ns`) and their range over the pooled median (`setup_spread`)
    /// are added. `None` when there are no parts.
    pub fn pooled(parts: Vec<BenchResult>) -> Option<BenchResult> {
        let medians: Vec<f64> = parts.iter().map(|p| p.summary.median).collect();
        let pooled = BenchResult::concatenated(parts)?;
        let (low, high) = medians
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), &m| (l.min(m), h.max(m)));
        let spread = (high - low) / pooled.summary.median;
        Some(
            pooled
                .with_parameter(SETUPS, medians.len())
                .with_parameter(SETUP_MEDIANS_NS, medians)
                .with_parameter(SETUP_SPREAD, spread),
        )
    }

    /// The parts' samples one after another in the first part, each later part absorbed
    /// into it (integrity counts added, warnings kept once), and their summary. `None` when
    /// there are no parts.
    fn concatenated(parts: Vec<BenchResult>) -> Option<BenchResult> {
        let mut parts = parts.into_iter();
        let mut whole = parts.next()?;
        for mut part in parts {
            whole.samples_ns.append(&mut part.samples_ns);
            whole.cpu_samples_ns.append(&mut part.cpu_samples_ns);
            whole.absorb(part);
        }
        whole.summary = Summary::of(&whole.samples_ns)?;
        Some(whole)
    }

    /// One result from the same benchmark measured in several rounds spread over the run, in
    /// the order measured: every sample kept in order, each round's median recorded
    /// (`round_medians_ns`), integrity counts added, one warning of each kind (the sample
    /// count ones judged on the rounds together), and the verdict suspect when at least half
    /// the rounds found it so; one round's flicker on a few samples does not condemn a
    /// figure that the others measured. Name, method, kind and the cold call are the first
    /// round's, and so are the parameters but those that follow from the samples (the
    /// distribution, a figure in cycles, counts of events), brought up to date with all the
    /// rounds. `None` when there are no rounds.
    pub fn from_rounds(rounds: Vec<BenchResult>) -> Option<BenchResult> {
        let medians: Vec<f64> = rounds.iter().map(|r| r.summary.median).collect();
        let suspect = rounds.iter().filter(|r| r.verdict.is_suspect()).count();
        let suspect_verdict = rounds.iter().map(|r| r.verdict).find(|v| v.is_suspect());
        let (wanted, minimum) = rounds.iter().fold((0, 0), |(wanted, minimum), round| {
            let (w, m) = round.samples_asked();
            (wanted + w, minimum + m)
        });
        let count = rounds.len();
        let counted = BenchResult::counted_over(&rounds);
        let first_median = rounds.first()?.summary.median;
        let mut merged = BenchResult::concatenated(rounds)?;
        merged.verdict = match suspect_verdict {
            Some(verdict) if 2 * suspect >= count => verdict,
            _ => Verdict::Measured,
        };
        let n = merged.summary.n;
        let cv = merged.summary.cv;
        merged.warnings.retain_mut(|warning| match warning {
            Warning::FewSamples { .. } | Warning::BelowMinimum { .. } => false,
            Warning::HighVariance { cv: shown } => {
                *shown = cv.unwrap_or(*shown);
                true
            }
            _ => true,
        });
        if n < minimum {
            merged
                .warnings
                .insert(0, Warning::BelowMinimum { taken: n, minimum });
        } else if n < wanted {
            merged
                .warnings
                .insert(0, Warning::FewSamples { taken: n, wanted });
        }
        if count > 1 {
            merged.rederive_parameters(first_median, &counted);
            merged.round_medians_ns = medians;
        }
        Some(merged)
    }

    /// Brings the parameters that follow from the samples up to date with all the rounds
    /// (the first round's were kept): the distribution is recomputed, figures in other
    /// units scaled with the median ([`OverRounds::ScaledWithMedian`]), counts of events set
    /// to `counted`, their sums over the rounds.
    fn rederive_parameters(&mut self, first_median: f64, counted: &[(Key, i64)]) {
        if self.parameter(crate::names::key::HISTOGRAM_US).is_some() {
            *self = distribution::with_distribution(self.clone());
        }
        let scaled = (self.over_rounds.0.iter())
            .filter(|key| key.over_rounds() == OverRounds::ScaledWithMedian);
        for key in scaled {
            if let Some(Value::Number(figure)) = self.parameters.get_mut(key.name())
                && first_median > 0.0
            {
                *figure *= self.summary.median / first_median;
            }
        }
        for (key, total) in counted {
            self.parameters
                .insert(key.name().to_string(), Value::Integer(*total));
        }
    }

    /// The sums over `rounds` of their counts of events: the integer parameters whose keys
    /// the first round says are [`OverRounds::Summed`].
    fn counted_over(rounds: &[BenchResult]) -> Vec<(Key, i64)> {
        let Some(first) = rounds.first() else {
            return Vec::new();
        };
        let summed =
            (first.over_rounds.0.iter()).filter(|key| key.over_rounds() == OverRounds::Summed);
        let total = |key: Key| -> Option<i64> {
            (rounds.iter())
                .map(|r| match r.parameter(key) {
                    Some(Value::Integer(n)) => Some(*n),
                    _ => None,
                })
                .sum()
        };
        summed.filter_map(|&key| Some((key, total(key)?))).collect()
    }

    /// The samples this result asked for and the fewest it should have had, as its sample
    /// count warnings say (its own count when it has neither).
    fn samples_asked(&self) -> (usize, usize) {
        let n = self.summary.n;
        self.warnings
            .iter()
            .find_map(|warning| match *warning {
                Warning::FewSamples { wanted, .. } => Some((wanted, 0)),
                Warning::BelowMinimum { minimum, .. } => Some((minimum, minimum)),
                _ => None,
            })
            .unwrap_or((n, 0))
    }

    /// How far the rounds' medians lie apart: half their range over the median of them, so
    /// that `median × (1 ± spread)` spans them. `None` when measured in fewer than two rounds.
    pub fn round_spread(&self) -> Option<f64> {
        crate::stats::half_range_share(&self.round_medians_ns)
    }

    /// Marks a result whose samples are switches between tasks on one CPU (a round trip
    /// through a pipe between two processes pinned together, a hand-off between two threads
    /// on one CPU): being switched out is what it measures, not a disturbance of it, so the
    /// [`Warning::Preempted`] that says a sample was disturbed is dropped.
    pub fn measuring_switches(mut self) -> BenchResult {
        (self.warnings).retain(|w| !matches!(w, Warning::Preempted { .. }));
        self
    }

    /// Re-expresses a timed loop whose every call performed `operations` operations (loads of
    /// an unrolled chase, bytes of a copy) per operation: samples, CPU time, loop overhead and
    /// cold call are divided, iterations multiplied. The verdict stands: it was made per call.
    pub fn per_operation(mut self, operations: u64) -> BenchResult {
        let n = operations as f64;
        for sample in self
            .samples_ns
            .iter_mut()
            .chain(self.cpu_samples_ns.iter_mut())
        {
            *sample /= n;
        }
        self.summary = Summary::of(&self.samples_ns).expect("the samples were summarised before");
        self.loop_overhead_ns = self.loop_overhead_ns.map(|o| o / n);
        self.cold_ns = self.cold_ns.map(|c| c / n);
        self.iterations *= operations;
        self.with_parameter(crate::names::key::OPERATIONS_PER_CALL, operations)
    }
}

/// How one probe ended.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(tag = "status", rename_all = "snake_case"))]
pub enum ProbeStatus {
    Ok,
    Failed { reason: String },
    Skipped { reason: String },
    Interrupted,
}

/// One probe's results.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ProbeOutcome {
    pub id: String,
    /// The probe's one-line method.
    pub method: String,
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub status: ProbeStatus,
    pub results: Vec<BenchResult>,
    pub duration_ns: u64,
}

/// The settings a run was made with, and which controls took effect.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunSettings {
    pub suite: String,
    pub samples: usize,
    pub target_sample_time_ns: u64,
    pub budget_per_benchmark_ns: u64,
    /// The rounds, spread over the run, that each result was measured in, its samples and
    /// budget shared among them (`Config::rounds`); 1 in files
    /// written before there were rounds.
    #[cfg_attr(feature = "serde", serde(default = "one_round"))]
    pub rounds: usize,
    /// The CPU the run was pinned to, when `--pin` took effect.
    pub pinned_cpu: Option<usize>,
    /// Whether `--mlock` took effect.
    pub memory_locked: bool,
    /// Whether `--rt` took effect (SCHED_FIFO with an RLIMIT_RTTIME safety net).
    pub realtime: bool,
}

impl RunSettings {
    /// The settings of a run of `suite` that samples by `config` in `rounds` rounds, before
    /// any control (`--pin`, `--mlock`, `--rt`) has taken effect.
    pub fn uncontrolled(suite: &str, config: &crate::Config, rounds: usize) -> RunSettings {
        RunSettings {
            suite: suite.to_string(),
            samples: config.samples,
            target_sample_time_ns: config.target_sample_time.as_nanos() as u64,
            budget_per_benchmark_ns: config.budget.as_nanos() as u64,
            rounds,
            pinned_cpu: None,
            memory_locked: false,
            realtime: false,
        }
    }
}

#[cfg(feature = "serde")]
fn one_round() -> usize {
    1
}

/// A whole run: what was measured, on what, how.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RunRecord {
    pub latlab_version: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub settings: RunSettings,
    pub clock: ClockInfo,
    pub environment: Environment,
    /// Load average when the run ended (the environment has the one before).
    pub load_avg_after: Option<[f64; 3]>,
    /// Run-level notes: controls that could not be applied, a debug build, the clock fallback.
    pub notes: Vec<String>,
    /// Short fixed measurements taken at the start of the run and again at its end, which
    /// tell whether the machine under the run changed. Empty in files written before them.
    #[cfg_attr(feature = "serde", serde(default))]
    pub stability: Vec<StabilityCheck>,
    pub probes: Vec<ProbeOutcome>,
    /// False while the run is in progress or when it was interrupted.
    pub complete: bool,
}

/// One fixed reference measurement of a run, at its start and at its end.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StabilityCheck {
    /// What it measures, such as `stability/memory-chase`.
    pub name: String,
    pub method: String,
    pub start: Summary,
    /// `None` when the run stopped before measuring it again.
    pub end: Option<Summary>,
    /// The least change, as a share of the start's median, that counts as a move.
    pub moved_share: f64,
    /// Set when the end disagrees with the start beyond both measurements' noise and the
    /// floor: a `MovedDuringRun` warning.
    pub moved: Option<Warning>,
}

impl RunRecord {
    /// Every result of every probe, in run order.
    pub fn results(&self) -> impl Iterator<Item = &BenchResult> {
        self.probes.iter().flat_map(|p| p.results.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A result that measures switches on one CPU keeps its other warnings but not the one
    /// that says it was switched out.
    #[test]
    fn a_result_measuring_switches_is_not_called_preempted() {
        let mut result =
            BenchResult::derived("pipe", "test", vec![1.0, 2.0, 3.0], Vec::new(), Vec::new())
                .unwrap();
        result.warnings = vec![
            Warning::Preempted {
                involuntary_switches: 12_164,
            },
            Warning::HighVariance { cv: 0.2 },
        ];
        let result = result.measuring_switches();
        assert_eq!(result.warnings, [Warning::HighVariance { cv: 0.2 }]);
    }

    /// Rounds combine each parameter as its key says: counts added, a figure in cycles
    /// scaled with the merged median, anything else the first round's; a key written as a
    /// plain one after a counted one is plain.
    #[test]
    fn rounds_combine_parameters_as_their_keys_say() {
        const EVENTS: Key = Key::summed("events");
        const CYCLES: Key = Key::scaled_with_median("cycles");
        const SIZE: Key = Key::new("size");
        const RELABELLED: Key = Key::summed("relabelled");
        let round = |median: f64, events: u64, size: u64| {
            BenchResult::derived("r", "test", vec![median; 5], Vec::new(), Vec::new())
                .unwrap()
                .with_parameter(EVENTS, events)
                .with_parameter(CYCLES, median * 3.0)
                .with_parameter(SIZE, size)
                .with_parameter(RELABELLED, 7u64)
                .with_parameter(Key::new("relabelled"), 7u64)
        };
        let merged =
            BenchResult::from_rounds(vec![round(10.0, 2, 64), round(20.0, 5, 128)]).unwrap();
        assert_eq!(merged.parameter(EVENTS), Some(&Value::Integer(7)));
        assert_eq!(merged.parameter(SIZE), Some(&Value::Integer(64)));
        assert_eq!(merged.parameter(RELABELLED), Some(&Value::Integer(7)));
        let cycles = merged.parameter(CYCLES).unwrap().as_f64().unwrap();
        assert!(
            (cycles - merged.summary.median * 3.0).abs() < 1e-9,
            "{cycles}"
        );
        // The rules are not part of what a result is.
        let mut bare = merged.clone();
        bare.over_rounds = RoundRules::default();
        assert_eq!(bare, merged);
    }

    /// Rings on fresh mappings pooled: every sample kept, each ring's median and their
    /// spread recorded, a warning of any part kept once.
    #[test]
    fn pooled_setups_keep_every_sample_and_their_spread() {
        let part = |base: f64| {
            let mut r =
                BenchResult::derived("ring", "test", vec![base; 10], Vec::new(), Vec::new())
                    .unwrap();
            r.warnings.push(Warning::DifferenceNotSignificant);
            r
        };
        let pooled = BenchResult::pooled(vec![part(100.0), part(110.0), part(120.0)]).unwrap();
        assert_eq!(pooled.samples_ns.len(), 30);
        assert_eq!(pooled.summary.median, 110.0);
        assert_eq!(pooled.warnings, [Warning::DifferenceNotSignificant]);
        let medians = pooled.parameter(SETUP_MEDIANS_NS).unwrap();
        assert_eq!(medians, &Value::Numbers(vec![100.0, 110.0, 120.0]));
        let spread = pooled.parameter(SETUP_SPREAD).unwrap().as_f64().unwrap();
        assert!((spread - 20.0 / 110.0).abs() < 1e-12, "{spread}");
        assert!(BenchResult::pooled(Vec::new()).is_none());
    }
}
