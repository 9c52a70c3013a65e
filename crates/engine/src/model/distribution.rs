//! A latency result's distribution as the latency tests of this field print it: average,
//! best, percentiles, worst (in microseconds) and a histogram of power-of-two buckets.
//!
//! Percentiles are the engine's (interpolated, as NumPy's default), so `p50_us` is the
//! result's median.

use super::BenchResult;
use crate::names::key;
use crate::parameters::Histogram;
use crate::stats::percentile_sorted;

/// `result` with its samples' distribution as parameters. Samples are nanoseconds.
pub fn with_distribution(result: BenchResult) -> BenchResult {
    let mut sorted = result.samples_ns.clone();
    if sorted.is_empty() {
        return result;
    }
    sorted.sort_by(f64::total_cmp);
    let us = |ns: f64| ns / 1e3;
    let percentile = |q: f64| us(percentile_sorted(&sorted, q));
    let average = sorted.iter().sum::<f64>() / sorted.len() as f64;
    result
        .with_parameter(crate::names::key::AVG_US, us(average))
        .with_parameter(crate::names::key::BEST_US, us(sorted[0]))
        .with_parameter(key::P50_US, percentile(0.50))
        .with_parameter(crate::names::key::P90_US, percentile(0.90))
        .with_parameter(key::P99_US, percentile(0.99))
        .with_parameter(crate::names::key::P99_9_US, percentile(0.999))
        .with_parameter(crate::names::key::WORST_US, us(sorted[sorted.len() - 1]))
        .with_parameter(key::HISTOGRAM_US, Histogram::of_ns(&sorted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_and_p50_agree() {
        let samples: Vec<f64> = [3.0, 1.0, 2.0, 10.0, 4.0, 5.0]
            .iter()
            .map(|us| us * 1e3)
            .collect();
        let result = BenchResult::derived("t", "t", samples, Vec::new(), Vec::new()).unwrap();
        let median_us = result.summary.median / 1e3;
        let result = with_distribution(result);
        let p50 = result.parameter(key::P50_US).unwrap().as_f64().unwrap();
        assert!(
            (p50 - median_us).abs() < 1e-9,
            "p50 {p50}, median {median_us}"
        );
        let histogram = result.parameter(key::HISTOGRAM_US).unwrap();
        assert_eq!(histogram.to_string(), "1-2:1 2-4:2 4-8:2 8-16:1");
    }
}
