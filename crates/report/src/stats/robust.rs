//! Robust statistics across hosts: the median, the median absolute deviation (MAD) and the
//! modified z-score of Iglewicz and Hoaglin, which flags a host as an outlier for a figure
//! when `0.6745 × |x − median| / MAD > 3.5`. Unlike a mean and a standard deviation, neither
//! the median nor the MAD is dragged by the outliers they are used to find.

/// The modified z-score beyond which a host is an outlier (Iglewicz and Hoaglin, 1993).
pub const OUTLIER_Z: f64 = 3.5;
/// The MAD is taken as at least this share of the median: hosts whose figures agree to
/// within a few per cent (or exactly) are not told apart by their last digit.
pub const MAD_FLOOR_SHARE: f64 = 0.01;
/// Fewer hosts than this are not judged: with two, neither is the odd one out.
pub const MIN_HOSTS: usize = 3;

use latlab_engine::stats::median_and_mad;

/// The median absolute deviation of `values` (not empty) as a share of their median: the
/// spread of a row across hosts, unmoved by a few outliers. `None` when the median is 0.
pub fn relative_mad(values: &[f64]) -> Option<f64> {
    let (centre, mad) = median_and_mad(values);
    (centre != 0.0).then(|| mad / centre.abs())
}

/// The centre and spread of a set of figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Robust {
    pub median: f64,
    /// The median absolute deviation, at least [`MAD_FLOOR_SHARE`] of the median.
    pub mad: f64,
}

impl Robust {
    /// `None` for fewer than [`MIN_HOSTS`] figures.
    pub fn of(values: &[f64]) -> Option<Robust> {
        if values.len() < MIN_HOSTS {
            return None;
        }
        let (centre, mad) = median_and_mad(values);
        Some(Robust {
            median: centre,
            mad: mad.max(MAD_FLOOR_SHARE * centre.abs()),
        })
    }

    /// The modified z-score of `value`.
    pub fn z(&self, value: f64) -> f64 {
        if self.mad > 0.0 {
            0.6745 * (value - self.median) / self.mad
        } else {
            0.0
        }
    }

    pub fn is_outlier(&self, value: f64) -> bool {
        self.z(value).abs() > OUTLIER_Z
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_engine::stats::median_in_place;

    #[test]
    fn the_relative_mad_ignores_one_far_value() {
        let spread = relative_mad(&[100.0, 102.0, 98.0, 101.0, 1000.0]).unwrap();
        // Median 101, deviations 0, 1, 1, 3 and 899: their median is 1.
        assert!((spread - 1.0 / 101.0).abs() < 1e-12, "{spread}");
        assert_eq!(relative_mad(&[0.0, 0.0]), None);
    }

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median_in_place(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_in_place(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    /// One slow host among ten similar ones is flagged, and does not move the centre; the
    /// similar ones are not flagged.
    #[test]
    fn one_slow_host_is_the_outlier() {
        let mut figures = vec![100.0, 101.0, 99.0, 102.0, 98.0, 100.5, 99.5, 101.5, 98.5];
        figures.push(160.0);
        let robust = Robust::of(&figures).unwrap();
        assert!((robust.median - 100.25).abs() < 1e-9, "{robust:?}");
        let flagged: Vec<f64> = figures
            .iter()
            .copied()
            .filter(|&f| robust.is_outlier(f))
            .collect();
        assert_eq!(flagged, [160.0]);
        assert!(robust.z(160.0) > 10.0);
    }

    /// Identical figures have a MAD of zero; the floor keeps a 0.5% difference from being
    /// an outlier while a 10% one still is.
    #[test]
    fn identical_hosts_flag_only_a_real_difference() {
        let robust = Robust::of(&[50.0, 50.0, 50.0, 50.0]).unwrap();
        assert_eq!(robust.mad, 0.5);
        assert!(!robust.is_outlier(50.25));
        assert!(robust.is_outlier(55.0));
        assert_eq!(Robust::of(&[1.0, 2.0]), None);
    }
}
