//! Describing a distribution of latencies: percentiles and a histogram, as the latency
//! tests of this field print them.

/// Counts per power-of-two microsecond bucket, `"<1:3 1-2:40 2-4:7"`, from sorted samples.
pub(crate) fn histogram_us(sorted_ns: &[f64]) -> String {
    let mut buckets: Vec<(u64, usize)> = Vec::new();
    for &ns in sorted_ns {
        let us = (ns / 1e3).max(0.0);
        let upper = if us < 1.0 {
            1
        } else {
            (us.floor() as u64 + 1).next_power_of_two()
        };
        match buckets.last_mut() {
            Some((bound, count)) if *bound == upper => *count += 1,
            _ => buckets.push((upper, 1)),
        }
    }
    buckets
        .iter()
        .map(|&(upper, count)| {
            if upper == 1 {
                format!("<1:{count}")
            } else {
                format!("{}-{upper}:{count}", upper / 2)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `p`th percentile (0–100) of sorted samples, nearest rank; NaN when there are none.
pub(crate) fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_counts_power_of_two_buckets() {
        let ns = [500.0, 1_500.0, 1_900.0, 3_000.0, 40_000.0];
        assert_eq!(histogram_us(&ns), "<1:1 1-2:2 2-4:1 32-64:1");
    }

    #[test]
    fn percentiles_pick_the_nearest_rank() {
        let sorted: Vec<f64> = (1..=101).map(f64::from).collect();
        assert_eq!(percentile(&sorted, 50.0), 51.0);
        assert_eq!(percentile(&sorted, 99.0), 100.0);
        assert_eq!(percentile(&sorted, 100.0), 101.0);
        assert!(percentile(&[], 50.0).is_nan());
    }
}
