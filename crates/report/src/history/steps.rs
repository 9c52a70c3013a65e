//! The steps of one result's series of runs, in logarithms of its figures, oldest first.
//!
//! - **The scatter between runs** is read from the series itself: the median absolute
//!   difference of successive runs, which a step moves once and a drift hardly at all,
//!   scaled to a standard deviation (×1.4826 / √2). A series of runs of one build has no
//!   other measure of how far its runs move.
//! - **One run is not a change.** A run further than [`SPIKE`] deviations from the median of
//!   its [`SIDE`] neighbours on each side is set to their median before the search: a
//!   noisy night or a run the stability checks flagged moves one run (or two), and a step
//!   moves every run after.
//! - **The search** is PELT (Killick, Fearnhead and Eckley 2012): the partition of the
//!   series into segments of at least [`MIN_SEGMENT`] runs that minimises each segment's sum
//!   of squared deviations from its mean plus a penalty per segment of [`PENALTY`] times the
//!   scatter's variance times the logarithm of the runs. It is exact, not greedy: two steps
//!   close together are found together, where a binary split sees their sum. A level longer
//!   than [`MAX_SEGMENT`] runs is cut, and the cut tested away below, so that the work grows
//!   with the runs, not their square.
//! - **Each step must stand beyond both segments' scatter.** The runs of the segment before
//!   and those after differ by Welch's t test at [`SIGNIFICANCE`] (Otava's level), by more
//!   than [`DEFAULT_BEYOND_SCATTER`] (or as told) standard deviations of either segment, and
//!   by more than the threshold; a step that does not is dropped, its neighbours joined, and the rest tested
//!   again.
//!
//! The book's "History" chapter measures these choices against E-divisive means as Apache
//! Otava runs it.

use super::HistoryOptions;
use crate::stats::LogDifference;
use latlab_engine::stats::median_in_place;

/// The fewest runs of a level: a step in the last runs of a series is reported once this
/// many runs hold it.
pub const MIN_SEGMENT: usize = 3;
/// The longest segment the search takes. PELT's pruning drops the starts that can no longer
/// win where a series steps, but a series that never steps keeps every start, and its work
/// grows with the square of its runs (50,000 runs of one result took seconds). Past this
/// length a level is cut where the cut costs least, and the cut, which stands beyond no
/// scatter, is tested away with the other steps that do not stand: the work grows with the
/// runs alone.
const MAX_SEGMENT: usize = 64;
/// The penalty per segment, in the scatter's variance times the logarithm of the runs.
const PENALTY: f64 = 5.0;
/// The level at which a step's two segments must differ (Welch's t test).
pub const SIGNIFICANCE: f64 = 0.001;
/// How many standard deviations of the wider of its two segments a step must move unless
/// told otherwise (`--beyond-scatter`): a step stands beyond the scatter between the runs of
/// each level, not merely beyond the error of their means (which forty runs of a drifting
/// machine make small). Chosen by measurement on forty unchanged runs of a shared guest and
/// series planted from them (`benches/history_targets.rs`; the figures are in the book's
/// "A machine's history"): 1.5 scored an F1 at least Otava's while flagging under half the
/// unchanged results Otava flags, where 2 scored below it.
pub const DEFAULT_BEYOND_SCATTER: f64 = 1.5;
/// How many deviations of the scatter one run must lie from its neighbours to be one run's
/// outlier.
const SPIKE: f64 = 4.0;
/// How many runs on each side of a run its neighbours' medians are taken over: three, so
/// that one outlier among them moves neither.
const SIDE: usize = 3;
/// The least scatter taken, in logarithms: a series whose runs never move would make any
/// difference a step.
const LEAST_SCATTER: f64 = 1e-6;

/// A step between two levels of a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// The index of the first run of the new level.
    pub at: usize,
    /// The mean logarithm of the runs before (back to the previous step) and after (to the
    /// next).
    pub before: f64,
    pub after: f64,
    /// The 95% interval of the difference `after - before`, in logarithms (filled in once
    /// the step stands).
    pub interval: (f64, f64),
    /// Welch's p-value of the difference.
    pub p: f64,
    /// The larger of the two segments' standard deviations, in logarithms: the scatter
    /// between runs the step must stand beyond.
    pub spread: f64,
    /// The standard error of the difference and its degrees of freedom.
    error: (f64, f64),
}

/// The steps of `logs` that stand by `options` (larger than its threshold, a share, and
/// beyond its number of scatters), oldest first.
pub fn steps(logs: &[f64], options: HistoryOptions) -> Vec<Step> {
    if logs.len() < 2 * MIN_SEGMENT {
        return Vec::new();
    }
    let Located { scatter, sums } = Located::of(logs);
    let penalty = PENALTY * scatter * scatter * (logs.len() as f64).ln();
    let (mut changes, _) = optimal_partition(&sums, penalty);
    // Each change tested between its neighbours; a change dropped leaves its two
    // neighbours to test again, and no other.
    let test = |changes: &[usize], i: usize| {
        let start = if i == 0 { 0 } else { changes[i - 1] };
        let end = changes.get(i + 1).copied().unwrap_or(sums.len());
        welch(&sums, start, changes[i], end)
    };
    let mut tested: Vec<Step> = (0..changes.len()).map(|i| test(&changes, i)).collect();
    loop {
        let weakest = (tested.iter().enumerate())
            .filter(|(_, step)| !stands(step, options))
            .max_by(|a, b| a.1.p.total_cmp(&b.1.p));
        let Some((i, _)) = weakest else {
            // The intervals of the steps that stood alone: a quantile costs a search.
            for step in &mut tested {
                step.interval = step.difference().interval(0.95);
            }
            return tested;
        };
        changes.remove(i);
        tested.remove(i);
        for neighbour in [i.checked_sub(1), Some(i)].into_iter().flatten() {
            if neighbour < changes.len() {
                tested[neighbour] = test(&changes, neighbour);
            }
        }
    }
}

/// A series made ready for steps: its scatter between runs, and its runs despiked, as the
/// search takes them and as steps tested at runs named from outside it (a step of the
/// machine's run, [`super::members`]) take them.
pub struct Located {
    scatter: f64,
    sums: Sums,
}

impl Located {
    pub fn of(logs: &[f64]) -> Located {
        let scatter = scatter(logs).max(LEAST_SCATTER);
        Located {
            scatter,
            sums: Sums::of(&despiked(logs, scatter)),
        }
    }

    /// The step at `at` between the levels `start..at` and `at..end`, each at least
    /// [`MIN_SEGMENT`] runs, where it passes Welch's test at [`SIGNIFICANCE`] and the
    /// threshold: one test at a known run, so not held to the factor of scatter a step
    /// found by the search is.
    pub fn step(
        &self,
        (start, at, end): (usize, usize, usize),
        options: HistoryOptions,
    ) -> Option<Step> {
        if at < start + MIN_SEGMENT || end < at + MIN_SEGMENT || end > self.sums.len() {
            return None;
        }
        let mut step = welch(&self.sums, start, at, end);
        let moved = (step.after - step.before).abs() > options.threshold.ln_1p();
        (step.p < SIGNIFICANCE && moved).then(|| {
            step.interval = step.difference().interval(0.95);
            step
        })
    }
}

/// Whether `step` stands: significant, past the threshold either way, and beyond the
/// scatter of its levels.
fn stands(step: &Step, options: HistoryOptions) -> bool {
    let difference = (step.after - step.before).abs();
    step.p < SIGNIFICANCE
        && difference > options.threshold.ln_1p()
        && difference > options.beyond_scatter * step.spread
}

/// The scatter between successive runs as a standard deviation: the median absolute
/// difference of successive runs, ×1.4826 / √2. (Not the deviations of the differences from
/// their median: runs that move in a repeating pattern give many equal differences, and
/// that median deviation reads zero.)
pub fn scatter(logs: &[f64]) -> f64 {
    let mut differences: Vec<f64> = logs.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    if differences.is_empty() {
        return 0.0;
    }
    1.4826 * median_in_place(&mut differences) / std::f64::consts::SQRT_2
}

/// `logs` with each run further than [`SPIKE`] times `scatter`, the same way, from the
/// median of the [`SIDE`] runs before it and from that of the [`SIDE`] after it set to the
/// median of those neighbours. A run that begins a new level agrees with the runs after
/// it, and is kept; two outliers side by side move neither median.
fn despiked(logs: &[f64], scatter: f64) -> Vec<f64> {
    let median_of = |range: std::ops::Range<usize>| {
        let mut values: Vec<f64> = logs[range].to_vec();
        (!values.is_empty()).then(|| median_in_place(&mut values))
    };
    (0..logs.len())
        .map(|i| {
            let (start, end) = (i.saturating_sub(SIDE), (i + SIDE + 1).min(logs.len()));
            let sides = [median_of(start..i), median_of(i + 1..end)];
            let moves: Vec<f64> = sides.iter().flatten().map(|m| logs[i] - m).collect();
            let spike = moves.iter().all(|m| m.abs() > SPIKE * scatter)
                && (moves.iter().all(|&m| m > 0.0) || moves.iter().all(|&m| m < 0.0));
            if spike {
                let mut neighbours: Vec<f64> =
                    (start..end).filter(|&j| j != i).map(|j| logs[j]).collect();
                median_in_place(&mut neighbours)
            } else {
                logs[i]
            }
        })
        .collect()
}

/// The running sums of a series, less its mean (so that a stretch's squares lose no
/// precision to its level): any stretch's mean and deviations at once, whatever its length.
struct Sums {
    centre: f64,
    sums: Vec<f64>,
    squares: Vec<f64>,
}

impl Sums {
    fn of(x: &[f64]) -> Sums {
        let centre = x.iter().sum::<f64>() / x.len().max(1) as f64;
        let (mut sums, mut squares) = (vec![0.0; x.len() + 1], vec![0.0; x.len() + 1]);
        for (i, v) in x.iter().enumerate() {
            let v = v - centre;
            sums[i + 1] = sums[i] + v;
            squares[i + 1] = squares[i] + v * v;
        }
        Sums {
            centre,
            sums,
            squares,
        }
    }

    fn len(&self) -> usize {
        self.sums.len() - 1
    }

    /// The sum of squared deviations from their mean of the values `start..end`.
    fn deviations(&self, start: usize, end: usize) -> f64 {
        let sum = self.sums[end] - self.sums[start];
        (self.squares[end] - self.squares[start] - sum * sum / (end - start) as f64).max(0.0)
    }

    /// The mean of the values `start..end`, and their standard deviation.
    fn mean_and_sd(&self, start: usize, end: usize) -> (f64, f64) {
        let n = (end - start) as f64;
        let mean = self.centre + (self.sums[end] - self.sums[start]) / n;
        (
            mean,
            (self.deviations(start, end) / (n - 1.0).max(1.0)).sqrt(),
        )
    }
}

/// The starts of the segments (after the first) of the partition of `x` into segments of
/// at least [`MIN_SEGMENT`] and at most [`MAX_SEGMENT`] runs that minimises their sums of
/// squared deviations plus `penalty` each: PELT, whose pruning drops a start that can no
/// longer begin the last segment of an optimal partition, and every start further back than
/// the longest segment. Also how many starts it weighed, all ends together: its work.
fn optimal_partition(x: &Sums, penalty: f64) -> (Vec<usize>, usize) {
    let n = x.len();
    let cost = |a: usize, b: usize| x.deviations(a, b);
    let mut best = vec![f64::INFINITY; n + 1];
    let mut last = vec![0usize; n + 1];
    best[0] = -penalty;
    let mut starts: Vec<usize> = vec![0];
    // Each start's cost of a last segment to `end`, computed once for the choice and the
    // pruning alike.
    let mut costs: Vec<f64> = Vec::with_capacity(MAX_SEGMENT + 1);
    let mut weighed = 0;
    for end in MIN_SEGMENT..=n {
        weighed += starts.len();
        costs.clear();
        costs.extend(
            starts
                .iter()
                .map(|&start| match end - start >= MIN_SEGMENT {
                    true => best[start] + cost(start, end),
                    false => f64::INFINITY,
                }),
        );
        let found = (starts.iter().zip(&costs))
            .filter(|(_, value)| value.is_finite())
            .fold(
                None,
                |least: Option<(usize, f64)>, (&start, &value)| match least
                    .is_none_or(|(_, least)| value < least)
                {
                    true => Some((start, value)),
                    false => least,
                },
            );
        if let Some((start, value)) = found {
            best[end] = value + penalty;
            last[end] = start;
        }
        let bound = best[end];
        let mut index = 0;
        starts.retain(|&start| {
            let value = costs[index];
            index += 1;
            end + 1 - start <= MAX_SEGMENT && (value.is_infinite() || value <= bound)
        });
        starts.push(end + 1 - MIN_SEGMENT);
        starts.dedup();
    }
    let mut changes = Vec::new();
    let mut end = n;
    while end > 0 {
        let start = last[end];
        if start > 0 {
            changes.push(start);
        }
        end = start;
    }
    changes.reverse();
    (changes, weighed)
}

/// Welch's test of the values `at..end` of `x` against those of `start..at`: the
/// comparison's t test ([`LogDifference`]) on the two stretches' means.
fn welch(x: &Sums, start: usize, at: usize, end: usize) -> Step {
    let (before, after) = (at - start, end - at);
    let moments = |(from, to): (usize, usize)| {
        let (mean, sd) = x.mean_and_sd(from, to);
        (mean, sd * sd / (to - from) as f64, sd)
    };
    let ((mean_a, error_a, sd_a), (mean_b, error_b, sd_b)) =
        (moments((start, at)), moments((at, end)));
    let error = (error_a + error_b).max(LEAST_SCATTER * LEAST_SCATTER);
    let degrees = (error * error
        / (error_a * error_a / (before as f64 - 1.0).max(1.0)
            + error_b * error_b / (after as f64 - 1.0).max(1.0))
        .max(f64::MIN_POSITIVE))
    .clamp(1.0, (before + after) as f64 - 2.0);
    let difference = LogDifference {
        difference: mean_b - mean_a,
        standard_error: error.sqrt(),
        degrees,
    };
    Step {
        at,
        before: mean_a,
        after: mean_b,
        interval: (f64::NAN, f64::NAN),
        p: difference.p(),
        spread: sd_a.max(sd_b),
        error: (difference.standard_error, degrees),
    }
}

impl Step {
    /// The difference of its levels, as the t test took it.
    fn difference(&self) -> LogDifference {
        LogDifference {
            difference: self.after - self.before,
            standard_error: self.error.0,
            degrees: self.error.1,
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// `n` logarithms about 0 with a standard deviation of `sd`, from a fixed seed.
    pub(crate) fn noise(n: usize, sd: f64, seed: u64) -> Vec<f64> {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut uniform = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let (u, v) = (uniform(), uniform());
                sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
            })
            .collect()
    }

    /// The default options with threshold `threshold`.
    fn with_threshold(threshold: f64) -> HistoryOptions {
        HistoryOptions {
            threshold,
            ..super::super::DEFAULT_HISTORY_OPTIONS
        }
    }

    fn stepped(mut logs: Vec<f64>, at: usize, factor: f64) -> Vec<f64> {
        logs[at..].iter_mut().for_each(|x| *x += factor.ln());
        logs
    }

    #[test]
    fn a_step_beyond_the_scatter_is_found_where_it_was_made() {
        for seed in 0..20 {
            let logs = stepped(noise(40, 0.01, seed), 20, 1.08);
            let found = steps(&logs, with_threshold(0.02));
            assert_eq!(found.len(), 1, "{seed}: {found:?}");
            assert!(found[0].at.abs_diff(20) <= 1, "{seed}: {found:?}");
            let ratio = (found[0].after - found[0].before).exp();
            assert!((1.06..1.10).contains(&ratio), "{seed}: {ratio}");
            assert!(found[0].interval.0 > 0.0 && found[0].p < SIGNIFICANCE);
        }
    }

    #[test]
    fn runs_of_one_level_and_one_runs_outlier_are_not_changes() {
        for seed in 0..20 {
            let mut logs = noise(40, 0.01, seed);
            assert!(steps(&logs, with_threshold(0.02)).is_empty(), "{seed}");
            logs[15] += 1.3f64.ln();
            assert!(
                steps(&logs, with_threshold(0.02)).is_empty(),
                "{seed}: {:?}",
                steps(&logs, with_threshold(0.02))
            );
        }
    }

    #[test]
    fn steps_close_together_are_both_found_and_the_newest_once_it_holds() {
        let logs = stepped(stepped(noise(40, 0.005, 3), 15, 1.06), 21, 1.06);
        let at: Vec<usize> = steps(&logs, with_threshold(0.02))
            .iter()
            .map(|s| s.at)
            .collect();
        assert_eq!(at, [15, 21]);
        // Two runs of a new level could be two noisy nights; three hold it.
        let late = |runs: usize| stepped(noise(40, 0.005, 4), 40 - runs, 1.08);
        assert!(steps(&late(2), with_threshold(0.02)).is_empty());
        assert_eq!(steps(&late(MIN_SEGMENT), with_threshold(0.02)).len(), 1);
    }

    #[test]
    fn a_step_within_the_threshold_or_the_scatter_is_not_a_change() {
        let small = stepped(noise(40, 0.001, 5), 20, 1.01);
        assert!(steps(&small, with_threshold(0.02)).is_empty());
        assert_eq!(steps(&small, with_threshold(0.005)).len(), 1);
        let noisy = stepped(noise(40, 0.2, 6), 20, 1.08);
        assert!(steps(&noisy, with_threshold(0.02)).is_empty());
    }

    /// The search's work grows with the runs, not their square: four times the runs of a
    /// series that never steps, PELT's worst case, weigh under five times the starts; and
    /// the step of a long series is still found.
    #[test]
    fn the_search_weighs_a_bounded_number_of_starts_a_run() {
        let weighed = |runs: usize| {
            let flat = Sums::of(&noise(runs, 0.01, 5));
            let penalty = PENALTY * 1e-4 * (runs as f64).ln();
            optimal_partition(&flat, penalty).1
        };
        // A series that never steps is PELT's worst case: its pruning keeps every start.
        let (short, long) = (weighed(2_000), weighed(8_000));
        assert!(
            long < 5 * short,
            "{short} starts weighed for 2,000 runs, {long} for 8,000"
        );
        assert!(long <= 8_000 * (MAX_SEGMENT + 1), "{long}");
        let planted = stepped(noise(8_000, 0.01, 6), 5_000, 1.1);
        assert_eq!(steps(&planted, with_threshold(0.02)).len(), 1);
    }

    /// A step of four scatters is found however long the series (a level longer than the
    /// longest segment is cut, and the cut tested away), and a series that never steps has
    /// no step, however long.
    #[test]
    fn long_series_keep_their_steps_and_gain_none() {
        for (runs, at) in [(500, 130), (5_000, 4_000)] {
            let planted = stepped(noise(runs, 0.01, 7), at, (0.04f64).exp());
            let found = steps(&planted, with_threshold(0.02));
            assert_eq!(
                found.iter().map(|s| s.at).collect::<Vec<_>>(),
                [at],
                "{runs}"
            );
            assert!(
                steps(&noise(runs, 0.01, 8), with_threshold(0.02)).is_empty(),
                "{runs}"
            );
        }
    }

    /// Twenty runs a side make the error of each level's mean a fifth of the runs' scatter:
    /// a step of 1.3 scatters passes Welch's test, but its levels overlap run for run, and at
    /// a factor of two it is no change. Four scatters stand beyond both levels at the
    /// default factor, whatever the draw.
    #[test]
    fn a_step_inside_its_levels_scatter_is_not_a_change_however_significant() {
        let two = HistoryOptions {
            beyond_scatter: 2.0,
            ..with_threshold(0.02)
        };
        let mut within = 0;
        for seed in 0..20 {
            let logs = noise(40, 0.05, seed + 100);
            let small = stepped(logs.clone(), 20, (1.3f64 * 0.05).exp());
            let tested = welch(&Sums::of(&small), 0, 20, 40);
            if tested.p < SIGNIFICANCE {
                within += 1;
                assert!(steps(&small, two).is_empty(), "{seed}: {tested:?}");
            }
            let tall = stepped(logs, 20, (4.0f64 * 0.05).exp());
            assert_eq!(steps(&tall, with_threshold(0.02)).len(), 1, "{seed}");
        }
        assert!(within > 0, "no draw made the small step significant");
    }

    /// The factor trades steps found for unchanged results flagged: a step of 1.5 scatters
    /// passes a factor of two only where both levels' runs happen to lie close, and a factor
    /// of one finds it three times as often, most often within a run of where it was made.
    #[test]
    fn a_lower_factor_finds_a_step_within_twice_its_levels_scatter() {
        let beyond = |beyond_scatter: f64| HistoryOptions {
            beyond_scatter,
            ..with_threshold(0.02)
        };
        let (mut by_two, mut by_lower, mut where_made) = (0, 0, 0);
        for seed in 0..20 {
            let logs = stepped(noise(40, 0.05, seed + 200), 20, (1.5f64 * 0.05).exp());
            by_two += steps(&logs, beyond(2.0)).len();
            let found = steps(&logs, beyond(1.0));
            assert!(found.len() <= 1, "{seed}: {found:?}");
            by_lower += found.len();
            where_made += found.iter().filter(|s| s.at.abs_diff(20) <= 1).count();
        }
        assert!(
            by_lower >= 3 * by_two && by_lower >= 12 && where_made >= 8,
            "{by_two}, {by_lower}, {where_made} of 20"
        );
    }
}
