//! Many results tested at once: the false discovery rate kept by Benjamini and Hochberg's
//! procedure.

/// Benjamini–Hochberg adjusted p-values of `p` (in the same order): the smallest false
/// discovery rate at which each would be called a discovery among all of them. Many results
/// tested at once each at 5% call 5% of the unchanged ones different by chance; calling only
/// those whose adjusted p is below 5% keeps the expected share of false discoveries among
/// the differences called at 5%, and, when nothing changed, the chance of calling anything at
/// all.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut adjusted = vec![1.0; m];
    let mut smallest_above = 1.0f64;
    for (rank, &index) in order.iter().enumerate().rev() {
        let scaled = p[index] * m as f64 / (rank + 1) as f64;
        smallest_above = smallest_above.min(scaled);
        adjusted[index] = smallest_above;
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the worked example of Benjamini and Hochberg's procedure: sorted p-values
    /// scaled by m / rank, each then the smallest of itself and those above it.
    #[test]
    fn benjamini_hochberg_adjusts_as_the_procedure_says() {
        let p = [0.01, 0.04, 0.03, 0.005, 0.5];
        let adjusted = benjamini_hochberg(&p);
        let expected = [0.025, 0.05, 0.05, 0.025, 0.5];
        for (a, e) in adjusted.iter().zip(expected) {
            assert!((a - e).abs() < 1e-12, "{adjusted:?}");
        }
        // One test is not adjusted; twenty p-values of 0.04 are not all chance-free.
        assert_eq!(benjamini_hochberg(&[0.03]), [0.03]);
        assert!(
            benjamini_hochberg(&[0.04; 20])
                .iter()
                .all(|q| (q - 0.04).abs() < 1e-12)
        );
        let one_low: Vec<f64> = std::iter::once(0.001).chain([0.5; 99]).collect();
        assert!((benjamini_hochberg(&one_low)[0] - 0.1).abs() < 1e-12);
    }
}
