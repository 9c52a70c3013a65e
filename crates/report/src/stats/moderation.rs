//! Each result's noise from its own repetitions, borrowing strength from its family only as
//! far as the family's data support it: the empirical-Bayes moderation of Smyth (2004),
//! which limma applies to thousands of genes measured a few times each, as a comparison
//! tests hundreds of results repeated three times.
//!
//! A result's repetitions (whole runs, or the rounds of one run) give its own variance with
//! few degrees of freedom: three repetitions a side give four. Alone, that makes a t test
//! weak (the 97.5% quantile of t with 4 degrees is 2.78) and erratic (a result whose three
//! rounds happened to agree looks noiseless). The family's variances, taken together, form
//! a prior: a variance `s0²` worth `d0` degrees of freedom, fitted by the method of moments
//! to the logarithms of the family's variances. The moderated variance of a result is
//! `(d0·s0² + d·s²) / (d0 + d)`, tested with `d0 + d` degrees.
//!
//! Where the family's variances scatter no more than chance scatters equal ones, `d0` is
//! large and the family's variance speaks for each result; where they differ (a stable cache
//! level beside volatile points at a cache's edge), `d0` is small and each result keeps its
//! own. The family informs a result's noise; it does not replace it.

use super::tails::{normal_quantile, normal_upper_tail, student_quantile, student_upper_tail};

/// A variance with its degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Variance {
    pub value: f64,
    pub degrees: f64,
}

/// The prior a family's variances give each of its results.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prior {
    /// The family's typical variance, `s0²`.
    pub variance: f64,
    /// What it is worth, in degrees of freedom (`d0`): infinite where the family's variances
    /// scatter no more than equal variances would, bounded by the family's own degrees.
    pub degrees: f64,
}

/// The fewest results with a variance from which a prior is fitted.
pub const MIN_RESULTS_FOR_PRIOR: usize = 3;

/// The variance of repetitions (logarithms, usually) within each of several groups, pooled:
/// the sum of squared deviations from each group's mean over the sum of their degrees of
/// freedom. `None` when no group has two repetitions.
pub fn pooled_variance(groups: &[&[f64]]) -> Option<Variance> {
    let mut squares = 0.0;
    let mut degrees = 0.0;
    for group in groups.iter().filter(|g| g.len() > 1) {
        let mean = super::mean(group);
        squares += group.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
        degrees += (group.len() - 1) as f64;
    }
    (degrees > 0.0).then(|| Variance {
        value: squares / degrees,
        degrees,
    })
}

impl Prior {
    /// Fits the prior to a family's variances (Smyth's method of moments on their
    /// logarithms). Variances of zero (repetitions that agreed to the last digit) cannot be
    /// taken a logarithm of and are left out. `None` with fewer than
    /// [`MIN_RESULTS_FOR_PRIOR`] positive variances.
    pub fn fit(variances: &[Variance]) -> Option<Prior> {
        let usable: Vec<&Variance> = (variances.iter())
            .filter(|v| v.value > 0.0 && v.value.is_finite() && v.degrees > 0.0)
            .collect();
        if usable.len() < MIN_RESULTS_FOR_PRIOR {
            return None;
        }
        let n = usable.len() as f64;
        // The log of a scaled chi-square variable, less its expectation's known part.
        let e: Vec<f64> = (usable.iter())
            .map(|v| v.value.ln() - digamma(v.degrees / 2.0) + (v.degrees / 2.0).ln())
            .collect();
        let mean = e.iter().sum::<f64>() / n;
        let scatter = e.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let chance = usable
            .iter()
            .map(|v| trigamma(v.degrees / 2.0))
            .sum::<f64>()
            / n;
        let family_degrees: f64 = usable.iter().map(|v| v.degrees).sum();
        let excess = scatter - chance;
        let degrees = if excess > 0.0 {
            (2.0 * trigamma_inverse(excess)).min(family_degrees)
        } else {
            family_degrees
        };
        let variance = (mean + digamma(degrees / 2.0) - (degrees / 2.0).ln()).exp();
        Some(Prior { variance, degrees })
    }

    /// `own` moderated by this prior: the weighted mean of the two variances, worth the sum
    /// of their degrees of freedom.
    pub fn moderate(&self, own: Option<Variance>) -> Variance {
        match own {
            None => Variance {
                value: self.variance,
                degrees: self.degrees,
            },
            Some(own) => Variance {
                value: (self.degrees * self.variance + own.degrees * own.value)
                    / (self.degrees + own.degrees),
                degrees: self.degrees + own.degrees,
            },
        }
    }
}

/// A difference of logarithms tested against its standard error: a t statistic with its
/// degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogDifference {
    pub difference: f64,
    pub standard_error: f64,
    pub degrees: f64,
}

impl LogDifference {
    /// The two-sided p-value of no difference.
    pub fn p(&self) -> f64 {
        if self.standard_error <= 0.0 {
            return if self.difference == 0.0 { 1.0 } else { 0.0 };
        }
        let statistic = self.difference.abs() / self.standard_error;
        (2.0 * upper_tail(statistic, self.degrees)).min(1.0)
    }

    /// The smallest difference, either way, that a two-sided test at level `alpha` would
    /// call: the critical value times the standard error. A change that large is called
    /// half the time; one a little larger, most of the time.
    pub fn smallest_called(&self, alpha: f64) -> f64 {
        quantile(1.0 - alpha / 2.0, self.degrees) * self.standard_error
    }

    /// How far beyond the critical value a difference must lie to be called with
    /// probability `power` (a change at the critical value is called half the time): the
    /// `power` quantile of its distribution times the standard error.
    pub fn margin_for(&self, power: f64) -> f64 {
        quantile(power, self.degrees) * self.standard_error
    }

    /// The `level` interval of the difference, as its low and high bounds.
    pub fn interval(&self, level: f64) -> (f64, f64) {
        let reach = quantile(0.5 + level / 2.0, self.degrees) * self.standard_error;
        (self.difference - reach, self.difference + reach)
    }
}

/// Student's upper tail, the normal's where the degrees are unbounded or huge.
fn upper_tail(statistic: f64, degrees: f64) -> f64 {
    if degrees.is_finite() && degrees < 1e6 {
        student_upper_tail(statistic, degrees)
    } else {
        normal_upper_tail(statistic)
    }
}

/// Student's quantile, the normal's where the degrees are unbounded or huge.
fn quantile(p: f64, degrees: f64) -> f64 {
    if degrees.is_finite() && degrees < 1e6 {
        student_quantile(p, degrees)
    } else {
        normal_quantile(p)
    }
}

/// The median of the square of Student's t with `degrees` degrees of freedom (of F(1, d)):
/// what a squared t statistic reads half the time when nothing changed.
pub fn median_of_squared_t(degrees: f64) -> f64 {
    quantile(0.75, degrees).powi(2)
}

/// The digamma function ψ(x) for x > 0: the recurrence up to 10, then the asymptotic series.
pub fn digamma(mut x: f64) -> f64 {
    let mut value = 0.0;
    while x < 10.0 {
        value -= 1.0 / x;
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    value + x.ln()
        - 0.5 / x
        - f * (1.0 / 12.0 - f * (1.0 / 120.0 - f * (1.0 / 252.0 - f * (1.0 / 240.0 - f / 132.0))))
}

/// The trigamma function ψ'(x) for x > 0: the recurrence up to 10, then the asymptotic
/// series.
pub fn trigamma(mut x: f64) -> f64 {
    let mut value = 0.0;
    while x < 10.0 {
        value += 1.0 / (x * x);
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    value + 1.0 / x + f / 2.0 + f / x * (1.0 / 6.0 - f * (1.0 / 30.0 - f * (1.0 / 42.0 - f / 30.0)))
}

/// The x > 0 at which trigamma is `y` (Smyth's Newton iteration on 1/ψ'(x)).
pub fn trigamma_inverse(y: f64) -> f64 {
    if y > 1e7 {
        return 1.0 / y.sqrt();
    }
    if y < 1e-6 {
        return 1.0 / y;
    }
    let mut x = 0.5 + 1.0 / y;
    for _ in 0..50 {
        let t = trigamma(x);
        let step = t * (1.0 - t / y) / tetragamma(x);
        x += step;
        if -step / x < 1e-8 {
            break;
        }
    }
    x
}

/// The tetragamma function ψ''(x), from the recurrence and the asymptotic series.
fn tetragamma(mut x: f64) -> f64 {
    let mut value = 0.0;
    while x < 10.0 {
        value -= 2.0 / (x * x * x);
        x += 1.0;
    }
    let f = 1.0 / (x * x);
    value
        - 1.0 / (x * x)
        - 1.0 / (x * x * x)
        - f * f * (0.5 - f * (1.0 / 6.0 - f * (1.0 / 6.0 - f * 3.0 / 10.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_polygamma_functions_match_known_values() {
        // ψ(1) = -γ, ψ'(1) = π²/6, ψ(0.5) = -γ - 2 ln 2, ψ'(0.5) = π²/2.
        let gamma = 0.577_215_664_901_532_9;
        let pi2 = std::f64::consts::PI.powi(2);
        assert!((digamma(1.0) + gamma).abs() < 1e-10);
        assert!((digamma(0.5) + gamma + 2.0 * 2f64.ln()).abs() < 1e-10);
        assert!((trigamma(1.0) - pi2 / 6.0).abs() < 1e-10);
        assert!((trigamma(0.5) - pi2 / 2.0).abs() < 1e-10);
        // ψ''(1) = -2ζ(3).
        assert!((tetragamma(1.0) + 2.0 * 1.202_056_903_159_594).abs() < 1e-9);
        for x in [0.05, 0.3, 1.0, 2.5, 10.0, 400.0] {
            let back = trigamma_inverse(trigamma(x));
            assert!((back / x - 1.0).abs() < 1e-6, "{x} -> {back}");
        }
    }

    /// Variances drawn alike (scaled chi-square with 4 degrees) make a prior worth many
    /// degrees near their true variance; variances a hundredfold apart make one worth few,
    /// so that each result keeps its own.
    #[test]
    fn alike_variances_lend_strength_and_unlike_ones_do_not() {
        // Quantiles of chi-square(4)/4, a family of 9 results with the same variance 1e-4.
        let chance = [0.18, 0.33, 0.47, 0.62, 0.84, 1.03, 1.25, 1.63, 2.2];
        let alike: Vec<Variance> = (chance.iter())
            .map(|c| Variance {
                value: 1e-4 * c,
                degrees: 4.0,
            })
            .collect();
        let prior = Prior::fit(&alike).unwrap();
        assert!(prior.degrees > 20.0, "{prior:?}");
        assert!((prior.variance / 1e-4 - 1.0).abs() < 0.3, "{prior:?}");

        let unlike: Vec<Variance> = (0..9)
            .map(|i| Variance {
                value: 1e-6 * 10f64.powi(i % 3 * 2) * chance[i as usize],
                degrees: 4.0,
            })
            .collect();
        let prior = Prior::fit(&unlike).unwrap();
        assert!(prior.degrees < 3.0, "{prior:?}");
        // A stable result keeps most of its own small variance.
        let stable = prior.moderate(Some(unlike[0]));
        assert!(stable.value < 1e-4 / 5.0, "{stable:?}");
    }

    #[test]
    fn pooled_variance_is_the_within_group_scatter() {
        let pooled = pooled_variance(&[&[1.0, 3.0], &[10.0, 12.0, 14.0]]).unwrap();
        // (2 + 8) / (1 + 2)
        assert!((pooled.value - 10.0 / 3.0).abs() < 1e-12);
        assert_eq!(pooled.degrees, 3.0);
        assert!(pooled_variance(&[&[1.0], &[2.0]]).is_none());
    }

    #[test]
    fn a_difference_is_called_past_its_critical_value() {
        let d = LogDifference {
            difference: 0.1,
            standard_error: 0.02,
            degrees: f64::INFINITY,
        };
        assert!(d.p() < 1e-5);
        assert!((d.smallest_called(0.05) - 1.959_964 * 0.02).abs() < 1e-5);
        let (low, high) = d.interval(0.95);
        assert!(low > 0.06 && high < 0.14);
        assert!((median_of_squared_t(f64::INFINITY) - 0.454_936).abs() < 1e-4);
    }
}
