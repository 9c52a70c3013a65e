//! The copy model: a copy of `s` bytes takes `latency + s / bandwidth`.
//!
//! Fitted by least squares on relative errors (each point weighted by the inverse square of
//! its time), so that the small copies, whose time is all latency, count as much as the
//! large ones, whose time is all bandwidth. The two numbers are what a programmer needs to
//! decide whether to batch copies: below `latency × bandwidth` bytes a copy is mostly fixed
//! cost.

/// A fitted copy model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CopyModel {
    /// The fixed cost of a copy, in ns.
    pub latency_ns: f64,
    /// Bytes per ns, that is GB/s.
    pub bytes_per_ns: f64,
}

impl CopyModel {
    /// The size at which half a copy's time is the fixed cost.
    pub fn half_cost_bytes(&self) -> f64 {
        self.latency_ns * self.bytes_per_ns
    }
}

/// Fits the model to `(bytes, ns)` points; `None` with fewer than two distinct sizes, a
/// non-positive time, or a fit whose latency or bandwidth is not positive (the points do
/// not look like copies).
pub(crate) fn fit(points: &[(u64, f64)]) -> Option<CopyModel> {
    if !points.iter().all(|&(_, t)| t.is_finite() && t > 0.0) {
        return None;
    }
    let distinct = points
        .iter()
        .map(|&(s, _)| s)
        .collect::<std::collections::BTreeSet<_>>();
    if distinct.len() < 2 {
        return None;
    }
    // Minimise Σ (1 − a/t − b·s/t)² over a (latency) and b (ns per byte): linear least
    // squares with regressors x = 1/t, y = s/t and target 1.
    let (mut xx, mut xy, mut yy, mut x1, mut y1) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(s, t) in points {
        let x = 1.0 / t;
        let y = s as f64 / t;
        xx += x * x;
        xy += x * y;
        yy += y * y;
        x1 += x;
        y1 += y;
    }
    let det = xx * yy - xy * xy;
    if det.abs() <= f64::EPSILON * xx * yy {
        return None;
    }
    let a = (x1 * yy - y1 * xy) / det;
    let b = (xx * y1 - xy * x1) / det;
    (a > 0.0 && b > 0.0).then(|| CopyModel {
        latency_ns: a,
        bytes_per_ns: 1.0 / b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copies(latency_ns: f64, gb_per_s: f64, noise: &[f64]) -> Vec<(u64, f64)> {
        (2..=30)
            .map(|k| 1u64 << k)
            .zip(noise.iter().cycle())
            .map(|(s, n)| (s, (latency_ns + s as f64 / gb_per_s) * n))
            .collect()
    }

    #[test]
    fn an_exact_model_is_recovered() {
        let model = fit(&copies(2000.0, 25.0, &[1.0])).unwrap();
        assert!(
            (model.latency_ns - 2000.0).abs() < 1e-6 * 2000.0,
            "{model:?}"
        );
        assert!((model.bytes_per_ns - 25.0).abs() < 1e-6 * 25.0, "{model:?}");
        assert!((model.half_cost_bytes() - 50_000.0).abs() < 1.0);
    }

    /// With ±5% noise both numbers stay within 10%: neither end of the sweep dominates.
    #[test]
    fn noise_moves_the_fit_little() {
        let model = fit(&copies(8000.0, 50.0, &[1.05, 0.95, 1.02, 0.97, 1.0])).unwrap();
        assert!((model.latency_ns / 8000.0 - 1.0).abs() < 0.1, "{model:?}");
        assert!((model.bytes_per_ns / 50.0 - 1.0).abs() < 0.1, "{model:?}");
    }

    #[test]
    fn points_that_are_not_copies_are_refused() {
        assert_eq!(fit(&[]), None);
        assert_eq!(fit(&[(4, 10.0), (4, 11.0)]), None, "one size");
        assert_eq!(fit(&[(4, 10.0), (8, 0.0)]), None, "zero time");
        assert_eq!(fit(&[(4, 10.0), (8, f64::NAN)]), None, "no time");
        // Larger copies faster than small ones: a negative bandwidth.
        assert_eq!(fit(&[(4, 1000.0), (1 << 20, 10.0), (1 << 30, 5.0)]), None);
    }
}
