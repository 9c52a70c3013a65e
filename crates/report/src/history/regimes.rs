//! A series that flips between two regimes from run to run (`proc.pipe` on a shared guest,
//! `ipc.throughput/eventfd-shm`: the book's "A machine's history"):
//! its runs fall into two levels, and each run lands in one or the other. A step search
//! would cut it wherever a few runs of one regime fall together; its only change is in the
//! mix of its regimes, found here.
//!
//! - **Two regimes** when the runs' logarithms, sorted, split at their widest gap into two
//!   groups of at least [`MIN_IN_REGIME`] runs, the gap more than [`GAP`] and more than
//!   [`SEPARATION`] times the wider group's spread (so a slow drift is not two regimes), and
//!   the runs cross between them at least [`MIN_FLIPS`] times (a step crosses once).
//! - **A change of mix** is the split of the series where the share of runs in the upper
//!   regime differs most, by a two-proportion test at the steps' level
//!   ([`super::steps::SIGNIFICANCE`]), each side at least [`MIN_MIX_SEGMENT`] runs; then
//!   each side searched again.

use super::steps::SIGNIFICANCE;
use crate::stats::mean_and_sd;
use crate::stats::normal_upper_tail;

/// The fewest runs in each regime.
const MIN_IN_REGIME: usize = 3;
/// The least gap between the regimes, in logarithms (5%).
const GAP: f64 = 0.049;
/// How many times the wider group's spread (its standard deviation) the gap must be.
const SEPARATION: f64 = 4.0;
/// The fewest crossings between the regimes.
const MIN_FLIPS: usize = 4;
/// The fewest runs on either side of a change of mix.
const MIN_MIX_SEGMENT: usize = 5;

/// Two regimes of a series: the levels (mean logarithms) of each, and which runs ran in
/// the upper one.
#[derive(Debug, Clone, PartialEq)]
pub struct Regimes {
    pub low: f64,
    pub high: f64,
    pub upper: Vec<bool>,
}

/// A change of the share of runs in the upper regime, at run `at` (the first of the new
/// mix).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MixChange {
    pub at: usize,
    pub before: f64,
    pub after: f64,
    pub p: f64,
}

/// The two regimes `logs` flips between, where it does.
pub fn regimes(logs: &[f64]) -> Option<Regimes> {
    let mut sorted = logs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n < 2 * MIN_IN_REGIME {
        return None;
    }
    let split = (MIN_IN_REGIME..=n - MIN_IN_REGIME)
        .max_by(|&a, &b| (sorted[a] - sorted[a - 1]).total_cmp(&(sorted[b] - sorted[b - 1])))?;
    let gap = sorted[split] - sorted[split - 1];
    let ((low, low_sd), (high, high_sd)) =
        (mean_and_sd(&sorted[..split]), mean_and_sd(&sorted[split..]));
    let spread = low_sd.max(high_sd);
    if gap <= GAP || gap <= SEPARATION * spread {
        return None;
    }
    let cut = sorted[split - 1];
    let upper: Vec<bool> = logs.iter().map(|&x| x > cut).collect();
    let flips = upper.windows(2).filter(|w| w[0] != w[1]).count();
    (flips >= MIN_FLIPS).then_some(Regimes { low, high, upper })
}

/// The changes of mix of `upper` (whether each run ran in the upper regime), oldest first.
pub fn mix_changes(upper: &[bool]) -> Vec<MixChange> {
    let mut changes = Vec::new();
    split_mix(upper, 0, &mut changes);
    changes.sort_by_key(|change| change.at);
    changes
}

/// Finds the strongest change of mix in `upper` (its first run being run `offset`), and
/// searches either side of it again.
fn split_mix(upper: &[bool], offset: usize, changes: &mut Vec<MixChange>) {
    let n = upper.len();
    if n < 2 * MIN_MIX_SEGMENT {
        return;
    }
    // How many runs ran in the upper regime before each run: each split's shares at once.
    let mut above = vec![0usize; n + 1];
    for (i, &up) in upper.iter().enumerate() {
        above[i + 1] = above[i] + usize::from(up);
    }
    let best = (MIN_MIX_SEGMENT..=n - MIN_MIX_SEGMENT)
        .map(|at| {
            (
                at,
                proportions((above[at], at), (above[n] - above[at], n - at)),
            )
        })
        .min_by(|a, b| a.1.2.total_cmp(&b.1.2));
    if let Some((at, (before, after, p))) = best
        && p < SIGNIFICANCE
    {
        changes.push(MixChange {
            at: offset + at,
            before,
            after,
            p,
        });
        split_mix(&upper[..at], offset, changes);
        split_mix(&upper[at..], offset + at, changes);
    }
}

/// The shares of runs in the upper regime of two stretches (each its count there and its
/// runs), and the two-sided p-value of a two-proportion z test of their difference.
fn proportions((up_a, a): (usize, usize), (up_b, b): (usize, usize)) -> (f64, f64, f64) {
    let (na, nb) = (a as f64, b as f64);
    let (pa, pb) = (up_a as f64 / na, up_b as f64 / nb);
    let pooled = (pa * na + pb * nb) / (na + nb);
    let error = (pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb)).sqrt();
    let p = if error > 0.0 {
        (2.0 * normal_upper_tail((pb - pa).abs() / error)).min(1.0)
    } else {
        1.0
    };
    (pa, pb, p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::steps::tests::noise;

    /// Runs flipping between 3.0 and 4.5 (in logarithms), the upper one taken when the
    /// `i`th draw says so.
    fn flipping(upper: impl Fn(usize) -> bool, seed: u64) -> Vec<f64> {
        (noise(40, 0.01, seed).into_iter().enumerate())
            .map(|(i, e)| if upper(i) { 4.5f64.ln() } else { 3.0f64.ln() } + e)
            .collect()
    }

    #[test]
    fn a_series_that_flips_runs_in_two_regimes_and_a_step_does_not() {
        let flips = flipping(|i| (i * 7 % 5) < 2, 1);
        let found = regimes(&flips).unwrap();
        assert!((found.low.exp() - 3.0).abs() < 0.1 && (found.high.exp() - 4.5).abs() < 0.1);
        assert!(mix_changes(&found.upper).is_empty(), "{found:?}");
        let step = flipping(|i| i >= 20, 2);
        assert!(regimes(&step).is_none());
        assert!(regimes(&noise(40, 0.01, 3)).is_none());
    }

    #[test]
    fn a_change_of_mix_is_found_where_it_was_made() {
        // One run in five in the upper regime, then four in five.
        let mixed = flipping(|i| if i < 20 { i % 5 == 2 } else { i % 5 != 2 }, 4);
        let found = regimes(&mixed).unwrap();
        let changes = mix_changes(&found.upper);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert!(changes[0].at.abs_diff(20) <= 2, "{changes:?}");
        assert!(changes[0].before < 0.3 && changes[0].after > 0.7);
    }
}
