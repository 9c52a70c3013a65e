//! The ratio of two figures measured repeatedly, tested against the noise of their
//! repetitions: Welch's t test on the logarithms of the repetitions (rounds of one run, or
//! whole runs), as benchstat compares runs rather than the samples of one.
//!
//! Samples of one measurement are taken back to back and share what a measurement shares
//! (where the buffers' pages landed, the CPU the thread was placed on, the host's load at
//! that moment); a test on them cannot see how far a figure moves between measurements, and
//! calls that movement a difference. The repetitions can: each is one figure, and their
//! scatter is the noise a difference must stand out from. Where one run a side cannot show
//! how far a figure moves between runs, a scatter known otherwise (how far all the results
//! of its family moved between the two runs) enters as a further, independent variance, with
//! the Welch–Satterthwaite degrees of freedom. Logarithms make the test one of a ratio,
//! symmetric in which side is first.

use crate::tails::{normal_quantile, normal_upper_tail, student_quantile, student_upper_tail};

/// The ratio of two sides' figures, its 95% interval, and the p-value of "no difference".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioTest {
    /// The ratio of the geometric means, later over first.
    pub ratio: f64,
    /// The 95% interval's bounds.
    pub low: f64,
    pub high: f64,
    /// Two-sided p-value of a ratio of 1.
    pub p: f64,
}

impl RatioTest {
    /// Whether the 95% interval holds 1: no difference beyond the noise of the repetitions.
    pub fn holds_one(&self) -> bool {
        self.low <= 1.0 && 1.0 <= self.high
    }

    /// The interval's half-width as a share, `×(1 ± half_width)` around the ratio.
    pub fn half_width(&self) -> f64 {
        (self.high / self.low).sqrt() - 1.0
    }
}

/// One side's repetitions in logarithms: their mean, and the variance of that mean with its
/// degrees of freedom when there are two repetitions or more.
struct Side {
    mean: f64,
    variance_of_mean: Option<(f64, f64)>,
}

impl Side {
    fn of(figures: &[f64]) -> Side {
        let logs: Vec<f64> = figures.iter().map(|x| x.ln()).collect();
        let n = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / n;
        let variance_of_mean = (logs.len() > 1).then(|| {
            let variance = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
            (variance / n, n - 1.0)
        });
        Side {
            mean,
            variance_of_mean,
        }
    }
}

/// Tests `later / first` from each side's repetitions (positive figures). A side with two or
/// more repetitions gives its own scatter; a side with one borrows the other's, as the same
/// benchmark on the same machine is expected to move as much. `between_runs_sd`, a standard
/// deviation of the log ratio, is noise the repetitions cannot show (runs differ by more than
/// the rounds of one run), added as an independent variance known without error. `None`
/// when there is no noise to test against, or a figure is not positive.
pub fn ratio_test(first: &[f64], later: &[f64], between_runs_sd: Option<f64>) -> Option<RatioTest> {
    if first.is_empty() || later.is_empty() {
        return None;
    }
    if first
        .iter()
        .chain(later)
        .any(|&x| !(x > 0.0 && x.is_finite()))
    {
        return None;
    }
    let (a, b) = (Side::of(first), Side::of(later));
    let (na, nb) = (first.len() as f64, later.len() as f64);
    // Each side's variance of its mean, with degrees of freedom; one borrowed where a side
    // has a single repetition.
    let parts: Vec<(f64, f64)> = match (a.variance_of_mean, b.variance_of_mean) {
        (Some(va), Some(vb)) => vec![va, vb],
        (Some((v, df)), None) => vec![(v, df), (v * na / nb, df)],
        (None, Some((v, df))) => vec![(v * nb / na, df), (v, df)],
        (None, None) => Vec::new(),
    };
    let between = between_runs_sd.map_or(0.0, |sd| sd * sd);
    if parts.is_empty() && between_runs_sd.is_none() {
        return None;
    }
    let variance: f64 = parts.iter().map(|(v, _)| v).sum::<f64>() + between;
    let difference = b.mean - a.mean;
    if variance <= 0.0 {
        // Identical repetitions and nothing else: the difference is exact.
        let p = if difference == 0.0 { 1.0 } else { 0.0 };
        let ratio = difference.exp();
        return Some(RatioTest {
            ratio,
            low: ratio,
            high: ratio,
            p,
        });
    }
    // Welch–Satterthwaite: the variance known without error adds no term below.
    let below: f64 = parts.iter().map(|(v, df)| v * v / df).sum();
    let degrees = if below > 0.0 {
        variance * variance / below
    } else {
        f64::INFINITY
    };
    let standard_error = variance.sqrt();
    let (quantile, tail) = two_sided(degrees, difference.abs() / standard_error);
    let reach = quantile * standard_error;
    Some(RatioTest {
        ratio: difference.exp(),
        low: (difference - reach).exp(),
        high: (difference + reach).exp(),
        p: (2.0 * tail).min(1.0),
    })
}

/// The 97.5% quantile of Student's t with `degrees` of freedom (the normal's when they are
/// unbounded), and the upper tail beyond `statistic`.
fn two_sided(degrees: f64, statistic: f64) -> (f64, f64) {
    if degrees.is_finite() && degrees < 1e6 {
        (
            student_quantile(0.975, degrees),
            student_upper_tail(statistic, degrees),
        )
    } else {
        (normal_quantile(0.975), normal_upper_tail(statistic))
    }
}

/// The share of a family's results whose move between two runs [`log_ratio_scatter`] takes
/// as ordinary: its scatter is read at this quantile of the deviations.
pub const ORDINARY_SHARE: f64 = 0.9;

/// The scatter of many results' log ratios between two runs, as a standard deviation: the
/// 90th percentile of their absolute deviations from their median, over that quantile of a
/// normal distribution (1.645). The median takes out a change common to all of them. The
/// 90th percentile, rather than the median absolute deviation, since results of one family
/// do not move between runs one by one: on a shared VM a run given less of the last-level
/// cache moves every cache-sized point of a sweep together, by 20-30% while the rest stay
/// put, and a scatter read at the median would call that group of ordinary moves a
/// difference. Up to a tenth of a family that did change cannot inflate it. `None` below
/// `minimum` ratios.
pub fn log_ratio_scatter(ratios: &[f64], minimum: usize) -> Option<f64> {
    let mut logs: Vec<f64> = (ratios.iter())
        .filter(|r| **r > 0.0 && r.is_finite())
        .map(|r| r.ln())
        .collect();
    if logs.len() < minimum.max(1) {
        return None;
    }
    let middle = crate::stats::median_in_place(&mut logs);
    let mut deviations: Vec<f64> = logs.iter().map(|x| (x - middle).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    let quantile = crate::stats::percentile_sorted(&deviations, ORDINARY_SHARE);
    Some(quantile / normal_quantile(0.5 + ORDINARY_SHARE / 2.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rounds that scatter by a few per cent hold a 1% difference within the noise, and
    /// not a 20% one; identical repetitions make an exact ratio.
    #[test]
    fn the_interval_is_as_wide_as_the_repetitions_scatter() {
        let a = [100.0, 103.0, 97.0];
        let same = ratio_test(&a, &[101.0, 98.0, 104.0], None).unwrap();
        assert!(same.holds_one() && same.p > 0.5, "{same:?}");
        assert!(same.half_width() > 0.03, "{same:?}");
        let slower = ratio_test(&a, &[120.0, 123.0, 117.0], None).unwrap();
        assert!(!slower.holds_one() && slower.low > 1.1, "{slower:?}");
        assert!(slower.p < 0.01, "{slower:?}");
        assert!((slower.ratio - 1.2).abs() < 0.01);
        let exact = ratio_test(&[10.0, 10.0], &[10.0, 10.0], None).unwrap();
        assert_eq!((exact.low, exact.high, exact.p), (1.0, 1.0, 1.0));
    }

    /// Against Welch's test computed by hand for three against three repetitions: the t
    /// statistic, the Welch–Satterthwaite degrees of freedom, and Student's quantile.
    #[test]
    fn welch_matches_the_textbook_computation() {
        let (a, b) = ([1.0f64, 2.0, 3.0], [2.0f64, 4.0, 6.0]);
        let test = ratio_test(&a.map(f64::exp), &b.map(f64::exp), None).unwrap();
        // Means 2 and 4; variances 1 and 4; variances of the means 1/3 and 4/3.
        let (va, vb) = (1.0 / 3.0, 4.0 / 3.0);
        let df: f64 = (va + vb) * (va + vb) / (va * va / 2.0 + vb * vb / 2.0);
        assert!((df - 2.9412).abs() < 1e-3, "{df}");
        let reach = student_quantile(0.975, df) * (va + vb).sqrt();
        assert!(((test.high.ln() - 2.0) - reach).abs() < 1e-9, "{test:?}");
        let p = 2.0 * student_upper_tail(2.0 / (va + vb).sqrt(), df);
        assert!((test.p - p).abs() < 1e-12);
        assert!(0.1 < test.p && test.p < 0.3, "{test:?}");
    }

    /// Noise between runs widens the interval, as a variance added with no degrees of
    /// freedom lost; alone (one repetition a side) it gives a normal interval.
    #[test]
    fn noise_between_runs_widens_the_interval() {
        let a = [100.0, 101.0, 99.0];
        let b = [106.0, 107.0, 105.0];
        let rounds_only = ratio_test(&a, &b, None).unwrap();
        let with_runs = ratio_test(&a, &b, Some(0.04)).unwrap();
        assert!(!rounds_only.holds_one(), "{rounds_only:?}");
        assert!(with_runs.holds_one(), "{with_runs:?}");
        assert!(with_runs.p > rounds_only.p);
        let alone = ratio_test(&[100.0], &[110.0], Some(0.05)).unwrap();
        let z = (1.1f64).ln() / 0.05;
        let p = 2.0 * normal_upper_tail(z);
        assert!((alone.p - p).abs() < 1e-12, "{alone:?}");
        assert!(((alone.high / alone.ratio).ln() - 1.959964 * 0.05).abs() < 1e-6);
    }

    /// The scatter of log ratios is robust to the one in twenty that changed, blind to a
    /// change common to all, and takes a group of one in five that moved together as
    /// ordinary movement.
    #[test]
    fn the_scatter_of_ratios_is_robust() {
        let quiet_ratios: Vec<f64> = (0..20)
            .map(|i| 1.0 + 0.01 * ((i % 7) as f64 - 3.0))
            .collect();
        let quiet = log_ratio_scatter(&quiet_ratios, 5).unwrap();
        let mut ratios = quiet_ratios.clone();
        ratios[0] = 3.0;
        let with_one_changed = log_ratio_scatter(&ratios, 5).unwrap();
        assert!(with_one_changed < 1.5 * quiet, "{quiet} {with_one_changed}");
        let shifted: Vec<f64> = ratios.iter().map(|r| r * 1.2).collect();
        let common = log_ratio_scatter(&shifted, 5).unwrap();
        assert!((common - with_one_changed).abs() < 1e-9);
        let mut group = quiet_ratios.clone();
        for ratio in &mut group[..4] {
            *ratio *= 1.25;
        }
        let with_a_group = log_ratio_scatter(&group, 5).unwrap();
        assert!(with_a_group > 1.25f64.ln() / 2.0, "{with_a_group}");
        assert!(log_ratio_scatter(&ratios, 21).is_none());
    }

    /// A side measured once borrows the other's scatter; two sides measured once have
    /// none, and nothing non-positive is taken.
    #[test]
    fn one_repetition_borrows_the_other_sides_scatter() {
        let borrowed = ratio_test(&[100.0], &[101.0, 98.0, 104.0], None).unwrap();
        assert!(borrowed.holds_one());
        assert!(ratio_test(&[100.0], &[101.0], None).is_none());
        assert!(ratio_test(&[100.0, 0.0], &[101.0, 99.0], None).is_none());
        assert!(ratio_test(&[], &[101.0, 99.0], None).is_none());
    }
}
