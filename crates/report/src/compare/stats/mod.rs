//! The statistics a comparison (and a history) judges by: a sample's mean and deviation,
//! the distributions' tails, the moderation of a result's variance by its set's, the false
//! discovery rate over many results, and how far each result moves between runs of one
//! machine (the noise tables).

mod false_discovery;
mod moderation;
mod noise_table;
mod shipped_tables;
mod tails;

pub use false_discovery::benjamini_hochberg;
pub use moderation::{
    LogDifference, MIN_RESULTS_FOR_PRIOR, Prior, Variance, median_of_squared_t, pooled_variance,
};
pub use noise_table::{
    MIN_RUNS_FOR_RESULT, MIN_RUNS_FOR_TABLE, NoiseMachine, NoisePrior, NoiseTable, NoiseTables,
    ResultNoise,
};
pub use tails::{
    fisher_upper_tail, normal_quantile, normal_upper_tail, student_quantile, student_upper_tail,
};

/// The mean of `x` (NaN when it is empty).
pub fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// The mean of `x` and its sample standard deviation (n − 1; 0 for one value).
pub fn mean_and_sd(x: &[f64]) -> (f64, f64) {
    let mean = mean(x);
    let variance =
        x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (x.len() as f64 - 1.0).max(1.0);
    (mean, variance.sqrt())
}
