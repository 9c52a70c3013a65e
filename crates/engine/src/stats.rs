//! Descriptive statistics of a set of samples, and the test the engine's verdicts use.
//!
//! Benchmark timings are not normally distributed (a hard floor, a long right tail from
//! interrupts and preemption), so the headline figure is the median with a distribution-free
//! confidence interval from order statistics, and comparisons use the Mann–Whitney U test
//! rather than a t-test. The mean and standard deviation are reported too, for tools that
//! expect them.

/// The summary of one benchmark's samples, all in the samples' unit.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub p5: f64,
    pub median: f64,
    pub p95: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (n − 1 in the denominator); 0 for a single sample.
    pub stddev: f64,
    /// Median absolute deviation from the median, unscaled.
    pub mad: f64,
    /// Coefficient of variation, stddev / mean; absent when the mean is not positive.
    pub cv: Option<f64>,
    /// Distribution-free 95% confidence interval of the median, from order statistics.
    pub median_ci95: [f64; 2],
    /// Samples below Q1 − 1.5·IQR.
    pub outliers_low: usize,
    /// Samples above Q3 + 1.5·IQR.
    pub outliers_high: usize,
}

/// The fewest samples whose order statistics bound a 95% confidence interval of the median:
/// with five, the whole range covers the median only 94% of the time.
pub const MIN_SAMPLES_FOR_INTERVAL: usize = 6;
/// The fewest samples for which the 5th and 95th percentiles each have a sample beyond
/// them; with fewer, they only interpolate between the two smallest or largest samples.
pub const MIN_SAMPLES_FOR_PERCENTILES: usize = 20;

impl Summary {
    /// Whether the sample count supports the 95% confidence interval of the median.
    pub fn has_interval(&self) -> bool {
        self.n >= MIN_SAMPLES_FOR_INTERVAL
    }

    /// Summarises `samples`; `None` when there are none or one is not finite.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = percentile_sorted(&sorted, 0.5);
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let stddev = if n > 1 {
            (sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let mut deviations: Vec<f64> = sorted.iter().map(|x| (x - median).abs()).collect();
        let mad = median_in_place(&mut deviations);
        let (q1, q3) = (
            percentile_sorted(&sorted, 0.25),
            percentile_sorted(&sorted, 0.75),
        );
        let iqr = q3 - q1;
        let (low_fence, high_fence) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
        let (lo, hi) = median_ci_ranks(n, 0.95);
        Some(Summary {
            n,
            min: sorted[0],
            p5: percentile_sorted(&sorted, 0.05),
            median,
            p95: percentile_sorted(&sorted, 0.95),
            max: sorted[n - 1],
            mean,
            stddev,
            mad,
            cv: (mean > 0.0).then(|| stddev / mean),
            median_ci95: [sorted[lo], sorted[hi]],
            outliers_low: sorted.iter().filter(|&&x| x < low_fence).count(),
            outliers_high: sorted.iter().filter(|&&x| x > high_fence).count(),
        })
    }
}

/// The median of `values` (not empty) and their median absolute deviation from it.
pub fn median_and_mad(values: &[f64]) -> (f64, f64) {
    let centre = median_in_place(&mut values.to_vec());
    let mut deviations: Vec<f64> = values.iter().map(|v| (v - centre).abs()).collect();
    (centre, median_in_place(&mut deviations))
}

/// The median of `values`, sorting them in place. `values` must not be empty.
pub fn median_in_place(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    percentile_sorted(values, 0.5)
}

/// The `q`-quantile (0 ≤ q ≤ 1) of sorted values, interpolating linearly between order
/// statistics (Hyndman and Fan's type 7, the default of R and NumPy).
pub fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    let position = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    sorted[below] + (sorted[above] - sorted[below]) * (position - below as f64)
}

/// Zero-based ranks `(lo, hi)` of the order statistics bounding a confidence interval of the
/// median at `level`: the interval [x(k), x(n−k+1)] covers the median with probability
/// 1 − 2·P(B ≤ k−1) for B ~ Binomial(n, ½). The largest k meeting `level` is chosen; below
/// six samples no k does and the interval is the whole range, which covers less than `level`.
pub fn median_ci_ranks(n: usize, level: f64) -> (usize, usize) {
    let alpha = 1.0 - level;
    let ln2n = n as f64 * std::f64::consts::LN_2;
    let mut ln_choose = 0.0; // ln C(n, i)
    let mut cdf = 0.0; // P(B ≤ i)
    let mut k = 1;
    for i in 0..n / 2 {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        cdf += (ln_choose - ln2n).exp();
        if 2.0 * cdf > alpha {
            break;
        }
        k = i + 1;
    }
    let k = k.min(n.div_ceil(2));
    (k - 1, n - k)
}

/// Two-sided p-value of the Mann–Whitney U test that `a` and `b` come from the same
/// distribution, by the normal approximation with the tie correction.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    if a.is_empty() || b.is_empty() {
        return 1.0;
    }
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = pooled.len();
    let (mut rank_sum_a, mut tie_term) = (0.0, 0.0);
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && pooled[j + 1].0 == pooled[i].0 {
            j += 1;
        }
        let average_rank = (i + j) as f64 / 2.0 + 1.0;
        let group = (j - i + 1) as f64;
        tie_term += group.powi(3) - group;
        rank_sum_a += average_rank * pooled[i..=j].iter().filter(|p| p.1).count() as f64;
        i = j + 1;
    }
    let u = rank_sum_a - n1 * (n1 + 1.0) / 2.0;
    let total = n1 + n2;
    let variance = n1 * n2 / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
    if variance <= 0.0 {
        return 1.0;
    }
    let z = ((u - n1 * n2 / 2.0).abs() - 0.5).max(0.0) / variance.sqrt();
    (2.0 * normal_upper_tail(z)).min(1.0)
}

/// P(Z > z) for a standard normal Z, from the C library's complementary error function.
pub fn normal_upper_tail(z: f64) -> f64 {
    unsafe extern "C" {
        /// C99's `erfc` (glibc's libm, Bionic, macOS' libSystem, the Windows CRT): pure.
        safe fn erfc(x: f64) -> f64;
    }
    erfc(z / std::f64::consts::SQRT_2) / 2.0
}

/// How far `figures` (repeated measurements of one figure: rounds, runs) lie apart: half
/// their range over their median, so that `median × (1 ± share)` spans them. `None` with
/// fewer than two, or a median that is not positive.
pub fn half_range_share(figures: &[f64]) -> Option<f64> {
    if figures.len() < 2 {
        return None;
    }
    let mut sorted = figures.to_vec();
    let middle = median_in_place(&mut sorted);
    let (low, high) = (sorted[0], sorted[sorted.len() - 1]);
    (middle > 0.0).then(|| (high - low) / 2.0 / middle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn summary_of_known_values() {
        let s = Summary::of(&[1.0, 2.0, 3.0, 4.0, 100.0]).unwrap();
        assert_eq!(s.median, 3.0);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.mean, 22.0);
        assert_eq!(s.mad, 1.0);
        assert_eq!(s.outliers_high, 1);
        assert_eq!(s.outliers_low, 0);
        assert!((s.p5 - 1.2).abs() < 1e-12);
    }

    #[test]
    fn summary_refuses_empty_and_non_finite_samples() {
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
        assert!(Summary::of(&[f64::INFINITY]).is_none());
    }

    #[test]
    fn cv_is_absent_when_the_mean_is_not_positive() {
        assert_eq!(Summary::of(&[-1.0, 1.0]).unwrap().cv, None);
        assert!(Summary::of(&[1.0, 3.0]).unwrap().cv.is_some());
    }

    #[test]
    fn median_ci_ranks_match_published_tables() {
        // Conover, Practical Nonparametric Statistics: n = 10 → x(2)..x(9) (97.9%);
        // n = 20 → x(6)..x(15); n = 100 → x(40)..x(61).
        assert_eq!(median_ci_ranks(10, 0.95), (1, 8));
        assert_eq!(median_ci_ranks(20, 0.95), (5, 14));
        assert_eq!(median_ci_ranks(100, 0.95), (39, 60));
        assert_eq!(median_ci_ranks(5, 0.95), (0, 4));
        assert_eq!(median_ci_ranks(1, 0.95), (0, 0));
    }

    #[test]
    fn mann_whitney_separates_shifted_samples_and_not_equal_ones() {
        let a: Vec<f64> = (0..30).map(|i| 100.0 + (i % 7) as f64).collect();
        let shifted: Vec<f64> = a.iter().map(|x| x + 10.0).collect();
        let same: Vec<f64> = (0..30).map(|i| 100.0 + ((i + 3) % 7) as f64).collect();
        assert!(mann_whitney_p(&a, &shifted) < 1e-6);
        assert!(mann_whitney_p(&a, &same) > 0.5);
        assert_eq!(mann_whitney_p(&[1.0; 10], &[1.0; 10]), 1.0);
    }

    #[test]
    fn normal_tail_matches_tables() {
        assert!((normal_upper_tail(1.96) - 0.024_997_895).abs() < 1e-9);
        assert!((normal_upper_tail(3.0) - 0.001_349_898).abs() < 1e-9);
        assert!((normal_upper_tail(0.0) - 0.5).abs() < 1e-12);
        assert!((normal_upper_tail(-1.0) - 0.841_344_746).abs() < 1e-9);
    }

    fn samples() -> impl Strategy<Value = Vec<f64>> {
        prop::collection::vec(-1e6f64..1e6, 1..200)
    }

    proptest! {
        #[test]
        fn order_statistics_are_ordered(xs in samples()) {
            let s = Summary::of(&xs).unwrap();
            prop_assert!(s.min <= s.p5 && s.p5 <= s.median && s.median <= s.p95 && s.p95 <= s.max);
            prop_assert!(s.median_ci95[0] <= s.median && s.median <= s.median_ci95[1]);
            prop_assert!(s.min <= s.mean + 1e-9 * s.mean.abs().max(1.0));
            prop_assert!(s.mean <= s.max + 1e-9 * s.max.abs().max(1.0));
            prop_assert!(s.stddev >= 0.0 && s.mad >= 0.0);
            prop_assert!(s.outliers_low + s.outliers_high < s.n.max(2));
        }

        #[test]
        fn summary_ignores_sample_order(mut xs in samples()) {
            let before = Summary::of(&xs).unwrap();
            xs.reverse();
            let after = Summary::of(&xs).unwrap();
            prop_assert_eq!(before.median, after.median);
            prop_assert_eq!(before.median_ci95, after.median_ci95);
            prop_assert_eq!(before.mad, after.mad);
        }

        #[test]
        fn shifting_samples_shifts_location_not_spread(xs in samples(), shift in -1e3f64..1e3) {
            let a = Summary::of(&xs).unwrap();
            let moved: Vec<f64> = xs.iter().map(|x| x + shift).collect();
            let b = Summary::of(&moved).unwrap();
            prop_assert!((b.median - a.median - shift).abs() < 1e-6);
            prop_assert!((b.mad - a.mad).abs() < 1e-6);
            prop_assert!((b.stddev - a.stddev).abs() < 1e-6 * a.stddev.max(1.0));
        }

        #[test]
        fn ci_ranks_are_symmetric_and_inside(n in 1usize..5000) {
            let (lo, hi) = median_ci_ranks(n, 0.95);
            prop_assert!(lo <= hi && hi < n);
            prop_assert_eq!(lo, n - 1 - hi);
        }

        #[test]
        fn mann_whitney_p_is_a_probability(a in samples(), b in samples()) {
            let p = mann_whitney_p(&a, &b);
            prop_assert!((0.0..=1.0).contains(&p));
        }
    }
}
