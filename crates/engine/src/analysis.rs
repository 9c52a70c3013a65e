//! From raw samples to a result: subtract the empty loop, summarise, judge, warn.
//!
//! The rules here decide what the user is told, so each is a small public function with its
//! thresholds named and tested on synthetic data.

use crate::config::MIN_SAMPLES;
use crate::model::{BenchResult, Integrity, ResultKind, Verdict, Warning};
use crate::stats::{Summary, mann_whitney_p, median_in_place};

/// A benchmark whose cost over the empty loop is below this share of the empty loop's own
/// cost per iteration is judged optimised away even when the difference is statistically
/// significant: two copies of the same machine code at different addresses can differ by a
/// few per cent, while one real instruction on the dependency path adds a whole cycle.
pub const OPTIMISED_AWAY_SHARE: f64 = 0.10;
/// Coefficient of variation above which a result is called unstable, provided the spread is
/// also wider than one clock step (a narrower spread is the clock's granularity, not noise).
pub const HIGH_VARIANCE_CV: f64 = 0.10;
/// Early samples differing from the rest by more than this share (and significantly) mean
/// the benchmark was not at steady state.
pub const STEADY_STATE_SHIFT: f64 = 0.05;
/// Significance level of the steady-state test.
pub const STEADY_STATE_P: f64 = 0.01;

/// Per-sample totals of a benchmark's loop and of the empty loop, in nanoseconds.
#[derive(Debug, Clone)]
pub struct LoopSamples {
    pub iterations: u64,
    bench_ns: Vec<f64>,
    empty_ns: Vec<f64>,
    bench_cpu_ns: Vec<f64>,
    empty_cpu_ns: Vec<f64>,
}

impl LoopSamples {
    pub fn with_capacity(iterations: u64, samples: usize) -> LoopSamples {
        LoopSamples {
            iterations,
            bench_ns: Vec::with_capacity(samples),
            empty_ns: Vec::with_capacity(samples),
            bench_cpu_ns: Vec::with_capacity(samples),
            empty_cpu_ns: Vec::with_capacity(samples),
        }
    }

    /// Pairs taken so far.
    pub fn len(&self) -> usize {
        self.bench_ns.len()
    }

    /// Whether no pair was taken.
    pub fn is_empty(&self) -> bool {
        self.bench_ns.is_empty()
    }

    /// Adds one pair: (wall, CPU) nanoseconds of the benchmark and of the empty loop.
    pub fn push(&mut self, bench: (f64, f64), empty: (f64, f64)) {
        self.bench_ns.push(bench.0);
        self.bench_cpu_ns.push(bench.1);
        self.empty_ns.push(empty.0);
        self.empty_cpu_ns.push(empty.1);
    }

    /// Forgets the samples' CPU times: the timed work ran elsewhere than on the thread
    /// that timed it (on a GPU), so its thread's CPU time says nothing of it, and the
    /// verdicts read wall time.
    pub fn forget_cpu_times(&mut self) {
        self.bench_cpu_ns.clear();
        self.empty_cpu_ns.clear();
    }

    fn per_op(&self, totals: &[f64]) -> Vec<f64> {
        totals.iter().map(|t| t / self.iterations as f64).collect()
    }
}

/// What a result is and what it was measured against, beside its samples.
pub(crate) struct Subject<'a> {
    pub name: &'a str,
    pub method: &'a str,
    /// The samples asked for (fewer may have fitted in the budget).
    pub wanted_samples: usize,
    /// The fewest samples it should be made of.
    pub minimum_samples: usize,
    /// The clock's resolution, in nanoseconds.
    pub resolution_ns: f64,
}

/// The result of a calibrated loop.
pub(crate) fn timed_loop_result(
    subject: &Subject,
    samples: &LoopSamples,
    cold_ns: f64,
    integrity: Integrity,
) -> BenchResult {
    let bench = samples.per_op(&samples.bench_ns);
    let empty = samples.per_op(&samples.empty_ns);
    let overhead_ns = median_in_place(&mut empty.clone());
    let net: Vec<f64> = bench.iter().map(|b| b - overhead_ns).collect();
    let summary = Summary::of(&net).expect("at least MIN_SAMPLES finite samples");
    // Work whose figure reads no positive time measured none, whatever its times on the CPU
    // say: never called measured (a results file's rule, `latlab_doors::rules`).
    let verdict = if summary.median < latlab_doors::rules::MIN_TIME_NS {
        Verdict::OptimisedAway
    } else {
        verdict(
            &on_cpu(&bench, &samples.per_op(&samples.bench_cpu_ns)),
            &on_cpu(&empty, &samples.per_op(&samples.empty_cpu_ns)),
            samples.iterations,
            subject.resolution_ns,
        )
    };
    // None where the CPU times were forgotten (the work ran elsewhere).
    let cpu_samples_ns = match samples.per_op(&samples.empty_cpu_ns) {
        mut empty_cpu if !empty_cpu.is_empty() => {
            let empty_cpu_ns = median_in_place(&mut empty_cpu);
            (samples.per_op(&samples.bench_cpu_ns).iter())
                .map(|c| c - empty_cpu_ns)
                .collect()
        }
        _ => Vec::new(),
    };

    let resolution_per_op = subject.resolution_ns / samples.iterations as f64;
    let mut warnings = common_warnings(
        &bench,
        &summary,
        integrity,
        (subject.wanted_samples, subject.minimum_samples),
        resolution_per_op,
    );
    if verdict.is_suspect() {
        warnings.retain(|w| !matches!(w, Warning::HighVariance { .. }));
    }
    BenchResult {
        iterations: samples.iterations,
        cpu_samples_ns,
        loop_overhead_ns: Some(overhead_ns),
        cold_ns: Some(cold_ns),
        verdict,
        warnings,
        integrity,
        ..BenchResult::plain(
            (subject.name, subject.method),
            ResultKind::TimedLoop,
            net,
            summary,
        )
    }
}

/// The result of events timed one at a time.
pub(crate) fn observations_result(
    subject: &Subject,
    samples_ns: Vec<f64>,
    cpu_samples_ns: Vec<f64>,
    cold_ns: f64,
    integrity: Integrity,
) -> BenchResult {
    let summary = Summary::of(&samples_ns).expect("at least MIN_SAMPLES finite samples");
    let warnings = common_warnings(
        &samples_ns,
        &summary,
        integrity,
        (subject.wanted_samples, subject.minimum_samples),
        subject.resolution_ns,
    );
    BenchResult {
        cpu_samples_ns,
        cold_ns: Some(cold_ns),
        warnings,
        integrity,
        ..BenchResult::plain(
            (subject.name, subject.method),
            ResultKind::Observations,
            samples_ns,
            summary,
        )
    }
}

/// Each sample's time on the CPU: its wall time, or its thread's CPU time where that is
/// less. A sample during which the thread was preempted reads several times its cost in
/// wall time but not in CPU time; the verdicts judge whether work was done, and work is
/// done on the CPU. The figures themselves stay wall time. `cpu` must match `wall` sample
/// for sample; where it does not (no CPU times were taken), the wall times are returned.
pub fn on_cpu(wall: &[f64], cpu: &[f64]) -> Vec<f64> {
    if wall.len() != cpu.len() {
        return wall.to_vec();
    }
    wall.iter().zip(cpu).map(|(w, c)| w.min(*c)).collect()
}

/// `samples` less those preemption lengthened, for judging work where no CPU times were
/// taken (Windows counts a thread's CPU time only at the scheduler's tick): those more than
/// [`PREEMPTED_MADS`] median absolute deviations above the median, and more than
/// `resolution` (one clock tick, in the samples' unit) above it. Preemption only ever
/// lengthens a sample, by a time slice or more; the rule is the same for every body, so two
/// bodies of one cost keep samples alike, and a comparison of them its significance level.
pub fn without_preempted(samples: &[f64], resolution: f64) -> Vec<f64> {
    if samples.is_empty() || samples.iter().any(|s| !s.is_finite()) {
        return samples.to_vec();
    }
    let (median, spread) = crate::stats::median_and_mad(samples);
    let fence = median + (PREEMPTED_MADS * spread).max(resolution);
    samples.iter().copied().filter(|&s| s <= fence).collect()
}

/// How far above the median, in median absolute deviations, a sample counts as preempted
/// ([`without_preempted`]): 5, about 3.4 standard deviations of a normal spread.
pub const PREEMPTED_MADS: f64 = 5.0;

/// Whether the benchmark measured anything beyond the empty loop. `bench` and `empty` are
/// per-iteration times of samples taken in pairs. The work is judged optimised away only
/// when both of these find it indistinguishable from the empty loop:
///
/// - the pairs: the 95% confidence interval of the median paired difference reaches zero,
///   or that median is below [`OPTIMISED_AWAY_SHARE`] of the empty loop's cost, or the work
///   in a whole sample is below one clock resolution;
/// - the two sets of samples, each less its preempted ones ([`without_preempted`]): the
///   benchmark's are not slower than the empty loop's by a Mann–Whitney test at [`WORK_P`],
///   or their medians lie within that share and one clock resolution a sample.
///
/// Preemption only ever lengthens a sample. Two preempted samples of the empty loop among
/// ten widen the pairs' interval to zero, however long the work; set aside, they cannot
/// make the work's samples as fast as the empty loop's. A rank test, not a fixed quantile:
/// a guest whose loops run at two speeds from sample to sample (an SMT sibling's load) gives
/// each set its own share of fast samples, and a lower quartile then falls on the fast
/// speed in one set and the slow in the other; a rank test's level holds whatever the
/// samples' shape. (The cases that set this rule: the book's methods, "The figures behind
/// the rules".)
pub fn verdict(bench: &[f64], empty: &[f64], iterations: u64, resolution_ns: f64) -> Verdict {
    let differences: Vec<f64> = bench.iter().zip(empty).map(|(b, e)| b - e).collect();
    let Some(difference) = Summary::of(&differences) else {
        return Verdict::OptimisedAway;
    };

    let overhead = median_in_place(&mut empty.to_vec());
    let resolution_per_iteration = resolution_ns / iterations as f64;
    let pairs_alike = difference.median_ci95[0] <= 0.0
        || difference.median < OPTIMISED_AWAY_SHARE * overhead
        || difference.median < resolution_per_iteration;
    let kept_bench = without_preempted(bench, resolution_per_iteration);
    let kept_empty = without_preempted(empty, resolution_per_iteration);
    let (bench_median, empty_median) = (
        median_in_place(&mut kept_bench.clone()),
        median_in_place(&mut kept_empty.clone()),
    );
    let sets_apart = bench_median - empty_median
        >= (OPTIMISED_AWAY_SHARE * empty_median).max(resolution_per_iteration)
        && mann_whitney_p(&kept_bench, &kept_empty) < WORK_P;
    if pairs_alike && !sets_apart {
        Verdict::OptimisedAway
    } else {
        Verdict::Measured
    }
}

/// Significance level at which a benchmark's samples, their preempted ones set aside, must
/// read slower than the empty loop's to be called work when the pairs cannot tell them
/// apart ([`verdict`]): strict, so that a body of nothing is not called work by chance, yet
/// reached by real work whose empty loop lost four samples of ten to preemption (ten
/// samples wholly above six read p 0.0014 by the normal approximation).
pub const WORK_P: f64 = 0.002;

/// Significance level at which a slope's longer body must read slower than its shorter one.
pub const SLOPE_P: f64 = 0.01;

/// The fewest samples of each body of a slope that one round takes: the Mann–Whitney test
/// at [`SLOPE_P`] can never pass with four a side (p ≥ 1/70), five can just pass it (p
/// 0.008) and six pass with room. A round given fewer would call every slope optimised
/// away, however clear it is.
pub const SLOPE_SAMPLES_PER_ROUND: usize = 6;

/// Whether a slope measured anything: `short` and `long` are per-call times of the two
/// bodies (the empty loop subtracted), sampled one body after the other, so they are
/// compared as two groups, not pairs. The slope is judged optimised away unless the longer
/// body reads slower by a Mann–Whitney test at [`SLOPE_P`] and by more than one clock
/// resolution per sample. One preempted sample cannot overturn that, as it can a
/// confidence interval of seven paired differences; the caller passes times on the CPU
/// ([`on_cpu`]), so that three preempted samples of ten cannot either.
pub fn slope_verdict(short: &[f64], long: &[f64], iterations: u64, resolution_ns: f64) -> Verdict {
    let (Some(short_summary), Some(long_summary)) = (Summary::of(short), Summary::of(long)) else {
        return Verdict::OptimisedAway;
    };
    let difference = long_summary.median - short_summary.median;
    let told_apart = difference > 0.0
        && difference * (iterations as f64) >= resolution_ns
        && mann_whitney_p(long, short) < SLOPE_P;
    if told_apart {
        Verdict::Measured
    } else {
        Verdict::OptimisedAway
    }
}

/// How many times as long one benchmark took as another, from samples taken side by side.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Ratio {
    /// The median of the per-pair ratios.
    pub median: f64,
    /// The distribution-free 95% confidence interval of that median; `None` below
    /// [`MIN_SAMPLES_FOR_INTERVAL`](crate::stats::MIN_SAMPLES_FOR_INTERVAL) pairs.
    pub ci95: Option<[f64; 2]>,
    /// The pairs it was computed from.
    pub pairs: usize,
}

/// The ratio `other / baseline` from samples taken in pairs (the i-th of each side by side,
/// as [`Runner::bench_interleaved`](crate::Runner::bench_interleaved) takes them): the
/// median of the per-pair ratios and its confidence interval. Drift and frequency changes
/// fall on both members of a pair alike, so they cancel in each ratio instead of widening
/// the interval. Pairs whose baseline sample is not positive are left out; `None` when no
/// pair is left.
pub fn paired_ratio(baseline: &[f64], other: &[f64]) -> Option<Ratio> {
    let ratios: Vec<f64> = baseline
        .iter()
        .zip(other)
        .filter(|(b, o)| **b > 0.0 && o.is_finite())
        .map(|(b, o)| o / b)
        .collect();
    let summary = Summary::of(&ratios)?;
    Some(Ratio {
        median: summary.median,
        ci95: summary.has_interval().then_some(summary.median_ci95),
        pairs: summary.n,
    })
}

/// Warns when the first fifth of the samples (at least three) differs from the rest by more
/// than [`STEADY_STATE_SHIFT`] and a Mann–Whitney test says the difference is real.
pub fn steady_state_warning(samples: &[f64]) -> Option<Warning> {
    if samples.len() < 2 * MIN_SAMPLES {
        return None;
    }
    let early_count = samples.len().div_ceil(5).max(3);
    let (early, late) = samples.split_at(early_count);
    let early_median = median_in_place(&mut early.to_vec());
    let late_median = median_in_place(&mut late.to_vec());
    if late_median <= 0.0 {
        return None;
    }
    let shift = early_median / late_median - 1.0;
    (shift.abs() > STEADY_STATE_SHIFT && mann_whitney_p(early, late) < STEADY_STATE_P).then_some(
        Warning::NotSteadyState {
            early_samples: early_count,
            shift,
        },
    )
}

/// Two groups of samples are called two modes when the upper group's median is at least
/// this multiple of the lower group's.
pub const TWO_MODES_RATIO: f64 = 1.5;
/// ... and each group holds at least this share of the samples (and at least 3 of them).
pub const TWO_MODES_MIN_SHARE: f64 = 0.1;

/// Splits the samples at their widest gap and reports two modes when both sides hold at
/// least [`TWO_MODES_MIN_SHARE`] of the samples, the upper side's median is at least
/// [`TWO_MODES_RATIO`] times the lower side's, and the gap is wider than half the distance
/// between the two medians (a long tail climbs in small steps; two placements jump).
pub fn two_modes(samples: &[f64]) -> Option<Warning> {
    let mut sorted: Vec<f64> = samples.iter().copied().filter(|s| s.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let least = ((n as f64 * TWO_MODES_MIN_SHARE).ceil() as usize).max(3);
    if n < 2 * least {
        return None;
    }
    let split = (least..=n - least)
        .max_by(|&i, &j| (sorted[i] - sorted[i - 1]).total_cmp(&(sorted[j] - sorted[j - 1])))?;
    let (low, high) = sorted.split_at(split);
    let low_median = median_in_place(&mut low.to_vec());
    let high_median = median_in_place(&mut high.to_vec());
    let gap = high[0] - low[low.len() - 1];
    let apart = low_median > 0.0 && high_median >= TWO_MODES_RATIO * low_median;
    (apart && gap > 0.5 * (high_median - low_median)).then_some(Warning::TwoModes {
        low_ns: low_median,
        high_ns: high_median,
        low_share: split as f64 / n as f64,
    })
}

/// A figure measured twice in one run is called moved when the two medians differ by more
/// than this share of the first, besides their confidence intervals not overlapping.
pub const MOVED_SHARE: f64 = 0.10;
/// A figure read this many times apart at two moments of one run moved, however widely its
/// samples scatter (a cache chase read three times apart was once called steady, its
/// intervals overlapping: the book's "How it measures", "The figures behind the rules").
pub const MOVED_FACTOR: f64 = 2.0;
/// A one-way core-to-core figure under this many L2 hits cannot have crossed between
/// cores: every path between cores goes through the last-level cache or further, several
/// L2 hits away; between SMT siblings a line stays in their shared L1 and L2.
pub const SHARED_CORE_L2_HITS: f64 = 2.0;

/// Compares a figure measured early in a run with the same figure measured later: moved
/// when the medians' 95% confidence intervals are disjoint and the medians differ by more
/// than `floor` (a share of the first; [`MOVED_SHARE`] for most figures), or when the
/// medians lie [`MOVED_FACTOR`] apart or more whatever their intervals: no noise of a
/// steady machine moves a figure so far.
pub fn moved_between(first: &Summary, last: &Summary, floor: f64) -> Option<Warning> {
    let [first_low, first_high] = first.median_ci95;
    let [last_low, last_high] = last.median_ci95;
    let disjoint = last_low > first_high || last_high < first_low;
    let shift = (last.median / first.median - 1.0).abs();
    let (low, high) = (first.median.min(last.median), first.median.max(last.median));
    let far = low > 0.0 && high >= MOVED_FACTOR * low;
    let moved = (disjoint && shift > floor) || far;
    (first.median > 0.0 && moved).then_some(Warning::MovedDuringRun {
        first_ns: first.median,
        last_ns: last.median,
    })
}

/// Two readings of one core-to-core figure agree within this share of the lower while the
/// CPUs' placement holds: within one placement they wander a third apart at most, while a
/// change of placement moves them severalfold (the book's methods, "The figures behind the rules").
pub const PLACEMENT_AGREEMENT: f64 = 0.5;

/// Whether the CPUs' placement changed around one round of a probe whose figures depend on
/// it. `start` is the run's placement reference at its start, `beside` the same reference
/// taken just before and just after the round; `figure` the round's figure of a result
/// that measures what the reference measures (`None` for any other result). Changed when
/// the readings lie apart beyond [`PLACEMENT_AGREEMENT`] (their medians' 95% intervals
/// disjoint too), or when `figure` lies that far from every one of them. `None` when
/// nothing was taken beside the round.
pub fn placement_changed(
    start: &Summary,
    beside: &[Summary],
    figure: Option<&Summary>,
) -> Option<Warning> {
    let apart = |a: &Summary, b: &Summary| {
        let (low, high) = if a.median <= b.median { (a, b) } else { (b, a) };
        low.median > 0.0
            && high.median_ci95[0] > low.median_ci95[1]
            && high.median > low.median * (1.0 + PLACEMENT_AGREEMENT)
    };
    let by_median = |a: &&Summary, b: &&Summary| a.median.total_cmp(&b.median);
    let beside_low = beside.iter().min_by(by_median)?;
    let beside_high = beside.iter().max_by(by_median)?;
    let readings = [start, beside_low, beside_high];
    let lowest = readings.iter().copied().min_by(by_median)?;
    let highest = readings.iter().copied().max_by(by_median)?;
    let readings_apart = apart(lowest, highest);
    let figure_apart = figure.is_some_and(|f| readings.iter().all(|r| apart(f, r)));
    (readings_apart || figure_apart).then(|| Warning::PlacementChanged {
        read_ns: figure.map(|f| f.median),
        start_ns: start.median,
        beside_ns: [beside_low.median, beside_high.median],
    })
}

/// Warnings every kind of result can carry. `raw` are the samples before any subtraction;
/// `resolution_ns` is the clock's resolution in the samples' unit (per operation).
fn common_warnings(
    raw: &[f64],
    summary: &Summary,
    integrity: Integrity,
    (wanted_samples, minimum_samples): (usize, usize),
    resolution_ns: f64,
) -> Vec<Warning> {
    let mut warnings = Vec::new();
    if summary.n < minimum_samples {
        warnings.push(Warning::BelowMinimum {
            taken: summary.n,
            minimum: minimum_samples,
        });
    } else if summary.n < wanted_samples {
        warnings.push(Warning::FewSamples {
            taken: summary.n,
            wanted: wanted_samples,
        });
    }
    warnings.extend(steady_state_warning(raw));
    let beyond_clock_step = summary.stddev > resolution_ns;
    if let Some(cv) = summary
        .cv
        .filter(|&cv| cv > HIGH_VARIANCE_CV && beyond_clock_step)
    {
        warnings.push(Warning::HighVariance { cv });
    }
    if integrity.involuntary_switches > (summary.n as u64 / 10).max(1) {
        warnings.push(Warning::Preempted {
            involuntary_switches: integrity.involuntary_switches,
        });
    }
    if integrity.major_page_faults > 0 {
        warnings.push(Warning::MajorPageFaults {
            count: integrity.major_page_faults,
        });
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::runner::Runner;
    use std::hint::black_box;

    fn wobble(base: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| base * (1.0 + 0.01 * ((i * 7 % 5) as f64 - 2.0)))
            .collect()
    }

    #[test]
    fn a_paired_ratio_cancels_what_both_members_of_a_pair_share() {
        // The machine's speed swings by half between rounds; B is always 1.3 × A.
        let drift = [1.0, 1.5, 1.1, 1.4, 1.0, 1.5, 1.2, 1.3, 1.0, 1.5];
        let a: Vec<f64> = drift.iter().map(|d| 10.0 * d).collect();
        let b: Vec<f64> = drift.iter().map(|d| 13.0 * d).collect();
        let ratio = paired_ratio(&a, &b).unwrap();
        assert!((ratio.median - 1.3).abs() < 1e-9);
        let [lo, hi] = ratio.ci95.unwrap();
        assert!(
            hi - lo < 1e-9,
            "no drift is left in the interval: {lo}–{hi}"
        );
        assert_eq!(ratio.pairs, 10);
        assert_eq!(paired_ratio(&[0.0, -1.0], &[1.0, 1.0]), None);
        assert_eq!(
            paired_ratio(&a[..4], &b[..4]).unwrap().ci95,
            None,
            "too few pairs"
        );
    }

    /// Per-call wall and CPU times of `cpu.call`'s one-call and three-call bodies, as a run
    /// beside two busy loops and three sleepers on this 2-vCPU machine recorded them: two of
    /// the shorter body's ten samples were preempted, and their wall times outrank most of
    /// the longer body's.
    const ONE_CALL_WALL: [f64; 10] = [1.24, 1.24, 1.25, 1.25, 1.43, 1.30, 1.23, 8.36, 1.32, 11.81];
    const ONE_CALL_CPU: [f64; 10] = [1.24, 1.24, 1.25, 1.24, 1.43, 1.30, 1.23, 1.35, 1.32, 1.25];
    const THREE_CALLS_WALL: [f64; 10] =
        [32.80, 6.29, 4.30, 4.35, 4.15, 4.10, 4.31, 4.10, 8.60, 4.10];
    const THREE_CALLS_CPU: [f64; 10] = [4.70, 4.09, 4.29, 4.35, 4.15, 4.10, 4.31, 4.10, 4.07, 4.10];

    #[test]
    fn preempted_samples_do_not_hide_a_slope_when_judged_on_the_cpu() {
        let judge = |short: &[f64], long: &[f64]| slope_verdict(short, long, 1 << 16, 10.0);
        assert_eq!(
            judge(&ONE_CALL_WALL, &THREE_CALLS_WALL),
            Verdict::OptimisedAway,
            "the wall times alone cannot tell the bodies apart"
        );
        assert_eq!(
            judge(
                &on_cpu(&ONE_CALL_WALL, &ONE_CALL_CPU),
                &on_cpu(&THREE_CALLS_WALL, &THREE_CALLS_CPU)
            ),
            Verdict::Measured
        );
    }

    /// Without CPU times, the samples left once the preempted ones are set aside tell the
    /// bodies apart as the CPU times do, and two bodies of one cost stay alike.
    #[test]
    fn setting_preempted_samples_aside_sees_through_preemption_without_cpu_times() {
        let judge = |short: &[f64], long: &[f64]| {
            let resolution = 10.0 / f64::from(1 << 16);
            slope_verdict(
                &without_preempted(short, resolution),
                &without_preempted(long, resolution),
                1 << 16,
                10.0,
            )
        };
        assert_eq!(judge(&ONE_CALL_WALL, &THREE_CALLS_WALL), Verdict::Measured);
        let mut same = ONE_CALL_WALL;
        same.reverse();
        assert_eq!(judge(&ONE_CALL_WALL, &same), Verdict::OptimisedAway);
        let kept = without_preempted(&THREE_CALLS_WALL, 0.0);
        assert_eq!(kept.len(), 7, "{kept:?}");
        assert!(kept.iter().all(|&s| s < 5.0), "{kept:?}");
    }

    #[test]
    fn time_on_the_cpu_is_never_more_than_the_wall_time() {
        assert_eq!(on_cpu(&[5.0, 2.0], &[1.0, 3.0]), vec![1.0, 2.0]);
        assert_eq!(
            on_cpu(&[5.0, 2.0], &[]),
            vec![5.0, 2.0],
            "no CPU times taken"
        );
    }

    #[test]
    fn two_bodies_of_equal_cost_leave_no_slope() {
        let short = wobble(3.0, 10);
        let mut long = wobble(3.0, 10);
        long.reverse();
        assert_eq!(
            slope_verdict(&short, &long, 1 << 16, 10.0),
            Verdict::OptimisedAway
        );
    }

    #[test]
    fn a_slope_below_one_clock_resolution_a_sample_is_no_slope() {
        let short = wobble(1.0, 10);
        let long: Vec<f64> = short.iter().map(|s| s + 0.5).collect();
        assert_eq!(
            slope_verdict(&short, &long, 1 << 16, 10.0),
            Verdict::Measured
        );
        assert_eq!(
            slope_verdict(&short, &long, 8, 10.0),
            Verdict::OptimisedAway
        );
    }

    /// The verdict on a benchmark whose samples are `bench` beside an empty loop of 0.4 ns
    /// an iteration, 2^22 iterations a sample, a 10 ns clock.
    fn judged(bench: impl Fn(f64) -> f64) -> Verdict {
        let empty = wobble(0.40, 30);
        let samples: Vec<f64> = empty.iter().map(|&e| bench(e)).collect();
        verdict(&samples, &empty, 1 << 22, 10.0)
    }

    #[test]
    fn identical_loops_are_judged_optimised_away() {
        let mut same = wobble(0.40, 30);
        same.rotate_left(3);
        assert_eq!(
            verdict(&same, &wobble(0.40, 30), 1 << 22, 10.0),
            Verdict::OptimisedAway
        );
    }

    #[test]
    fn a_tiny_systematic_difference_is_still_optimised_away() {
        assert_eq!(judged(|e| e * 1.04), Verdict::OptimisedAway);
    }

    #[test]
    fn one_extra_cycle_is_measured() {
        assert_eq!(judged(|e| e + 0.40), Verdict::Measured);
    }

    /// The verdict on a body that does nothing, its samples those of an empty loop of
    /// 0.4 ns rotated by `rotation`, beside `empty`.
    fn verdict_of_nothing(empty: &[f64], rotation: usize) -> Verdict {
        let mut nothing = wobble(0.40, empty.len());
        nothing.rotate_left(rotation);
        verdict(&nothing, empty, 1 << 12, 10.0)
    }

    #[test]
    fn preempted_samples_of_the_empty_loop_never_hide_real_work() {
        // A call of 400 ns beside an empty loop of 0.4 ns, three of ten empty samples
        // preempted for as long as the work takes: the pairs alone cannot tell them apart.
        let empty: Vec<f64> = (wobble(0.40, 10).into_iter().enumerate())
            .map(|(i, e)| if i % 3 == 0 { e + 2000.0 } else { e })
            .collect();
        let bench: Vec<f64> = wobble(400.0, 10);
        assert_eq!(verdict(&bench, &empty, 1 << 12, 10.0), Verdict::Measured);
        // The same preemption beside a body that does nothing leaves it optimised away.
        assert_eq!(verdict_of_nothing(&empty, 1), Verdict::OptimisedAway);
    }

    /// One empty sample a quarter faster than the rest (the failure a busy guest showed once)
    /// beside a body of nothing: still nothing.
    #[test]
    fn one_lucky_fast_empty_sample_does_not_make_nothing_into_work() {
        let mut empty = wobble(0.40, 15);
        empty[7] = 0.30;
        assert_eq!(verdict_of_nothing(&empty, 2), Verdict::OptimisedAway);
    }

    /// A body of nothing beside an empty loop of two speeds (its sibling's load changing
    /// from sample to sample), as a 2-vCPU guest recorded them: the empty loop took the fast
    /// speed in five samples, the body in two, so their lower quartiles lay apart. Still
    /// nothing; and one cycle more on the same samples is work.
    #[test]
    fn a_loop_of_two_speeds_does_not_make_nothing_into_work() {
        let nothing = [
            0.851, 0.821, 0.627, 0.871, 0.822, 0.840, 0.854, 0.857, 0.845, 0.826, 0.928, 0.887,
            0.862, 0.777, 0.484,
        ];
        let empty = [
            0.461, 0.473, 0.470, 0.829, 0.854, 0.945, 0.842, 0.861, 0.856, 0.901, 0.810, 0.871,
            0.890, 0.858, 0.510,
        ];
        let judge = |bench: &[f64]| verdict(bench, &empty, 1 << 20, 32.0);
        assert_eq!(judge(&nothing), Verdict::OptimisedAway);
        let one_cycle_more: Vec<f64> = empty.iter().map(|e| e + 0.45).collect();
        assert_eq!(judge(&one_cycle_more), Verdict::Measured);
    }

    #[test]
    fn work_below_the_clock_resolution_is_flagged() {
        let empty = wobble(100.0, 30);
        let bench: Vec<f64> = empty.iter().map(|e| e + 50.0).collect();
        assert_eq!(verdict(&bench, &empty, 2, 1000.0), Verdict::OptimisedAway);
    }

    #[test]
    fn slow_early_samples_are_not_steady_state() {
        let mut samples = wobble(10.0, 40);
        for s in &mut samples[..8] {
            *s *= 1.5;
        }
        let warning = steady_state_warning(&samples).expect("warned");
        assert!(
            matches!(warning, Warning::NotSteadyState { .. }),
            "{warning:?}"
        );
        assert!(steady_state_warning(&wobble(10.0, 40)).is_none());
    }

    /// A pair that ran a third of the time at 30 ns and the rest at 110 ns has two modes;
    /// a long tail, a few outliers and one tight cluster do not.
    #[test]
    fn two_placements_are_two_modes_and_a_tail_is_not() {
        let mut placements = wobble(30.0, 10);
        placements.extend(wobble(110.0, 20));
        let Some(Warning::TwoModes {
            low_ns,
            high_ns,
            low_share,
        }) = two_modes(&placements)
        else {
            panic!("no two modes in {placements:?}");
        };
        assert!((low_ns - 30.0).abs() < 1.0 && (high_ns - 110.0).abs() < 2.0);
        assert!((low_share - 1.0 / 3.0).abs() < 0.01, "{low_share}");

        let tail: Vec<f64> = (0..30).map(|i| 100.0 * 1.04f64.powi(i)).collect();
        assert_eq!(two_modes(&tail), None, "a tail climbing 4% a step");
        let mut outliers = wobble(50.0, 28);
        outliers.extend([400.0, 500.0]);
        assert_eq!(two_modes(&outliers), None, "two outliers are not a mode");
        assert_eq!(two_modes(&wobble(50.0, 30)), None);
        assert_eq!(two_modes(&[1.0, 9.0]), None, "too few to tell");
    }

    /// A figure that moved by a fifth, beyond its noise, moved; one that moved by 3%, or
    /// whose samples overlap, did not.
    #[test]
    fn a_figure_moved_only_beyond_its_noise_and_the_floor() {
        let summary = |base: f64| Summary::of(&wobble(base, 30)).unwrap();
        let moved = moved_between(&summary(100.0), &summary(120.0), MOVED_SHARE);
        assert_eq!(
            moved,
            Some(Warning::MovedDuringRun {
                first_ns: summary(100.0).median,
                last_ns: summary(120.0).median
            })
        );
        assert_eq!(
            moved_between(&summary(100.0), &summary(103.0), MOVED_SHARE),
            None
        );
        let wide = Summary::of(&(0..30).map(|i| 60.0 + 4.0 * i as f64).collect::<Vec<_>>());
        assert_eq!(
            moved_between(&summary(100.0), &wide.unwrap(), MOVED_SHARE),
            None,
            "a median inside a wide interval"
        );
        // Three times apart moved, however widely the samples scatter and their intervals
        // overlap.
        let scattered = |base: f64| {
            Summary::of(
                &(0..30)
                    .map(|i| base * (0.2 + 0.2 * (i % 10) as f64))
                    .collect::<Vec<_>>(),
            )
            .unwrap()
        };
        let (before, after) = (scattered(10.0), scattered(31.0));
        assert!(
            before.median_ci95[1] >= after.median_ci95[0] || after.median > 3.0 * before.median
        );
        assert!(moved_between(&before, &after, 0.25).is_some());
    }

    /// The reference moving fourfold from the run's start to beside a probe flags every
    /// figure of it; a third apart, as one placement wanders, flags nothing.
    #[test]
    fn a_placement_change_is_flagged_and_a_wander_within_one_is_not() {
        let summary = |base: f64| Summary::of(&wobble(base, 15)).unwrap();
        let beside = [summary(26.0), summary(28.0)];
        let Some(Warning::PlacementChanged {
            read_ns: Some(read),
            start_ns,
            beside_ns,
        }) = placement_changed(&summary(25.0), &beside, Some(&summary(123.0)))
        else {
            panic!("123 ns against 25-28 ns not flagged");
        };
        assert_eq!(read, summary(123.0).median);
        assert_eq!(start_ns, summary(25.0).median);
        assert_eq!(beside_ns, [summary(26.0).median, summary(28.0).median]);
        // The same pair at 30 ns: within one placement.
        assert_eq!(
            placement_changed(&summary(25.0), &beside, Some(&summary(30.0))),
            None
        );
        // Readings a third apart (24 and 32 ns), no figure of their kind: one placement.
        assert_eq!(
            placement_changed(&summary(24.0), &[summary(32.0)], None),
            None
        );
        // The reference at 105 ns beside the probe, 25 ns at the run's start: every figure
        // is flagged, one of the reference's kind that agrees with the beside readings too.
        let moved = [summary(105.0), summary(110.0)];
        for figure in [None, Some(summary(107.0))] {
            assert!(matches!(
                placement_changed(&summary(25.0), &moved, figure.as_ref()),
                Some(Warning::PlacementChanged { .. })
            ));
        }
        // Nothing taken beside the round: nothing to say.
        assert_eq!(placement_changed(&summary(25.0), &[], None), None);
    }

    #[test]
    fn spread_within_one_clock_step_is_not_called_unstable() {
        let steps: Vec<f64> = (0..30)
            .map(|i| if i % 3 == 0 { 30.0 } else { 20.0 })
            .collect();
        let summary = Summary::of(&steps).unwrap();
        let quiet = Integrity::default();
        assert!(common_warnings(&steps, &summary, quiet, (30, MIN_SAMPLES), 20.0).is_empty());
        let warnings = common_warnings(&steps, &summary, quiet, (30, MIN_SAMPLES), 1.0);
        assert!(matches!(warnings[0], Warning::HighVariance { .. }));
    }

    /// Work that runs elsewhere (a GPU kernel the thread sleeps waiting for) reads 4 µs a
    /// call in wall time and nothing in the thread's CPU time: judged on CPU time it is
    /// "optimised away"; with the CPU times forgotten it is measured, and the result
    /// carries no CPU times.
    #[test]
    fn work_elsewhere_is_judged_on_wall_time() {
        let subject = Subject {
            name: "gpu/work",
            method: "m",
            wanted_samples: 10,
            minimum_samples: MIN_SAMPLES,
            resolution_ns: 20.0,
        };
        let samples = || {
            let mut samples = LoopSamples::with_capacity(100, 10);
            for i in 0..10 {
                let jitter = f64::from(i) * 1000.0;
                samples.push((500_000.0 + jitter, 2_000.0), (100_000.0 + jitter, 2_000.0));
            }
            samples
        };
        let quiet = Integrity::default();
        let on_cpu = timed_loop_result(&subject, &samples(), 0.0, quiet);
        assert_eq!(on_cpu.verdict, Verdict::OptimisedAway);
        let mut elsewhere = samples();
        elsewhere.forget_cpu_times();
        let on_wall = timed_loop_result(&subject, &elsewhere, 0.0, quiet);
        assert_eq!(on_wall.verdict, Verdict::Measured);
        assert!((on_wall.summary.median - 4000.0).abs() < 100.0);
        assert!(on_wall.cpu_samples_ns.is_empty());
    }

    fn small_config() -> Config {
        Config {
            samples: 15,
            target_sample_time: std::time::Duration::from_micros(500),
            ..Config::quick()
        }
    }

    #[test]
    fn a_planted_dead_benchmark_is_detected() {
        let mut runner = Runner::new(small_config());
        // The sum is never used and cannot panic (wrapping arithmetic, so overflow checks do
        // not keep it alive), so the compiler deletes it: nothing is left to time.
        let result = runner
            .bench("planted/dead", "a sum nobody reads", || {
                let _unused = (0..64u64).fold(0u64, |a, x| a.wrapping_add(x.wrapping_mul(x)));
            })
            .unwrap();
        assert_eq!(
            result.verdict,
            Verdict::OptimisedAway,
            "{:?}",
            result.summary
        );
    }

    #[test]
    fn real_work_is_not_flagged() {
        let mut runner = Runner::new(small_config());
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let result = runner
            .bench("planted/live", "eight dependent multiplications", || {
                for _ in 0..8 {
                    x = black_box(x).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 1;
                }
                x
            })
            .unwrap();
        assert_eq!(result.verdict, Verdict::Measured, "{:?}", result.summary);
        assert!(result.summary.median > 0.5, "{:?}", result.summary);
    }

    #[test]
    fn more_work_takes_longer() {
        let mut runner = Runner::new(small_config());
        let mut chain = |n: u32| {
            let mut x = 3u64;
            runner
                .bench("chain", "dependent multiplications", move || {
                    for _ in 0..n {
                        x = black_box(x.wrapping_mul(x) | 1);
                    }
                    x
                })
                .unwrap()
                .summary
                .median
        };
        let short = chain(4);
        let long = chain(64);
        assert!(long > 4.0 * short, "4 steps {short} ns, 64 steps {long} ns");
    }
}
