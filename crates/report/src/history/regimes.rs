//! A series that flips between two regimes from run to run (`proc.pipe` on a shared guest,
//! `ipc.throughput/eventfd-shm`: the book's "A machine's history"):
//! its runs fall into two levels, and each run lands in one or the other. A step search
//! would cut it wherever a few runs of one regime fall together; its only change is in the
//! mix of its regimes, found here.
//!
//! - **Two regimes** when the runs' logarithms, sorted, split at their widest gap into two
//!   groups of at least [`MIN_IN_REGIME`] runs, the gap more than [`GAP`] and more than
//!   [`SEPARATION`] times the wider group's spread (read from its median absolute deviation,
//!   so that a few outliers do not widen it; a slow drift is not two regimes), the runs cross
//!   between them at least [`MIN_FLIPS`] times (a step crosses once), and the smaller group
//!   holds [`MIN_SHARE`] of the runs or holds for two runs or more in a row at least
//!   [`MIN_STRETCHES`] times (outliers here and there, one run each, are not a regime).
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
/// The share of each group's runs, at the side of the other, that may stray into the gap
/// between them: an outlier of one regime lands between the two.
const STRAYS: f64 = 0.1;
/// How many times the wider group's spread (its standard deviation) the gap must be.
const SEPARATION: f64 = 4.0;
/// The fewest crossings between the regimes.
const MIN_FLIPS: usize = 4;
/// The regime with fewer runs holds this share of the runs, or holds for two runs or more in
/// a row at least [`MIN_STRETCHES`] times: one-run outliers (a run slower here and there) are
/// not a regime.
const MIN_SHARE: f64 = 0.2;
const MIN_STRETCHES: usize = 2;
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
    // Each split's gap between the groups' cores, a few strays in between passed over.
    let cores = |split: usize| {
        let (below, above) = (split - 1, n - split - 1);
        let top_of_low = sorted[below - (below as f64 * STRAYS) as usize];
        let foot_of_high = sorted[split + (above as f64 * STRAYS) as usize];
        (top_of_low, foot_of_high)
    };
    let gap = |split: usize| {
        let (top, foot) = cores(split);
        foot - top
    };
    let split = (MIN_IN_REGIME..=n - MIN_IN_REGIME).max_by(|&a, &b| gap(a).total_cmp(&gap(b)))?;
    let (top_of_low, foot_of_high) = cores(split);
    let gap = foot_of_high - top_of_low;
    let (low, high) = (&sorted[..split], &sorted[split..]);
    if gap <= GAP || gap <= SEPARATION * robust_spread(low).max(robust_spread(high)) {
        return None;
    }
    let cut = (top_of_low + foot_of_high) / 2.0;
    let upper: Vec<bool> = logs.iter().map(|&x| x > cut).collect();
    let flips = upper.windows(2).filter(|w| w[0] != w[1]).count();
    // The regime with fewer runs, and whether it is more than a few outliers.
    let (upper_has_fewer, runs_in_fewer) = (split > n - split, split.min(n - split));
    let not_outliers = runs_in_fewer as f64 >= MIN_SHARE * n as f64
        || stretches(&upper, upper_has_fewer) >= MIN_STRETCHES;
    (flips >= MIN_FLIPS && not_outliers).then(|| Regimes {
        low: mean_and_sd(low).0,
        high: mean_and_sd(high).0,
        upper,
    })
}

/// The spread of a regime's runs as a standard deviation, read from their median absolute
/// deviation: a run of the other regime's outliers (a noisy night in the lower regime can
/// land beyond the upper) does not widen it.
fn robust_spread(logs: &[f64]) -> f64 {
    1.4826 * latlab_engine::stats::median_and_mad(logs).1
}

/// How many times `upper` holds `side` for two runs or more in a row.
fn stretches(upper: &[bool], side: bool) -> usize {
    let starts = upper
        .windows(2)
        .enumerate()
        .filter(|(i, w)| w[0] == side && w[1] == side && (*i == 0 || upper[i - 1] != side));
    starts.count()
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
        .max_by(|a, b| a.1.2.total_cmp(&b.1.2));
    // The test takes the runs as independent; a regime that holds for a few runs at a time
    // makes fewer independent runs than that, and its p-value too small: the variance of a
    // share grows by (1 + rho) / (1 - rho), rho the runs' persistence.
    let best = best.map(|(at, (before, after, z))| {
        let rho = persistence(upper, at);
        let p = 2.0 * normal_upper_tail(z * ((1.0 - rho) / (1.0 + rho)).sqrt());
        (at, (before, after, p.min(1.0)))
    });
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

/// How far a run's regime follows the run before's, within each side of a split at `at`:
/// their autocorrelation at lag one, pooled, from 0 (runs independent) to at most 0.9.
fn persistence(upper: &[bool], at: usize) -> f64 {
    let (mut together, mut apart) = (0.0, 0.0);
    for side in [&upper[..at], &upper[at..]] {
        let share = side.iter().filter(|&&up| up).count() as f64 / side.len() as f64;
        let centred: Vec<f64> = side
            .iter()
            .map(|&up| f64::from(u8::from(up)) - share)
            .collect();
        together += centred.windows(2).map(|w| w[0] * w[1]).sum::<f64>();
        apart += centred.iter().map(|c| c * c).sum::<f64>();
    }
    if apart > 0.0 {
        (together / apart).clamp(0.0, 0.9)
    } else {
        0.0
    }
}

/// The shares of runs in the upper regime of two stretches (each its count there and its
/// runs), and the size of their difference in a two-proportion z test (0 where neither
/// stretch varies).
fn proportions((up_a, a): (usize, usize), (up_b, b): (usize, usize)) -> (f64, f64, f64) {
    let (na, nb) = (a as f64, b as f64);
    let (pa, pb) = (up_a as f64 / na, up_b as f64 / nb);
    let pooled = (pa * na + pb * nb) / (na + nb);
    let error = (pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb)).sqrt();
    let z = if error > 0.0 {
        (pb - pa).abs() / error
    } else {
        0.0
    };
    (pa, pb, z)
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

    /// A step of 8% with a few one-run outliers 30% slower here and there is not two
    /// regimes; two regimes with their outliers between and beyond them are.
    #[test]
    fn outliers_are_not_a_regime_and_do_not_hide_one() {
        let mut step: Vec<f64> = (noise(40, 0.02, 5).into_iter().enumerate())
            .map(|(i, e)| if i >= 20 { 1.08f64.ln() } else { 0.0 } + e)
            .collect();
        for run in [4, 13, 31] {
            step[run] += 1.3f64.ln();
        }
        assert!(regimes(&step).is_none(), "{step:?}");
        let mut flips = flipping(|i| (i / 4) % 2 == 1, 6);
        for run in [2, 17, 30] {
            flips[run] += 1.3f64.ln();
        }
        assert!(regimes(&flips).is_some(), "{flips:?}");
    }

    /// A regime that holds for a few runs at a time (each run keeps the last's regime three
    /// times in four) makes no change of mix where its mix never changed (9 of these 200
    /// series draw one; 54 did while the test took the runs as independent), and a real
    /// change of mix is still found.
    #[test]
    fn regimes_that_hold_for_a_few_runs_are_no_change_of_mix() {
        let mut draws = latlab_test_support::Draws(11);
        let mut spurious = 0;
        for _ in 0..200 {
            let mut up = false;
            let upper: Vec<bool> = (0..40)
                .map(|_| {
                    up ^= draws.uniform() < 0.25;
                    up
                })
                .collect();
            spurious += usize::from(!mix_changes(&upper).is_empty());
        }
        assert!(
            spurious <= 10,
            "{spurious} of 200 series given a change of mix"
        );
        let changed: Vec<bool> = (0..40)
            .map(|i| if i < 20 { i % 5 == 2 } else { i % 5 != 2 })
            .collect();
        assert_eq!(mix_changes(&changed).len(), 1);
    }
}
