//! The statistics every judgement reads (a comparison, a history, a fleet): a sample's mean and deviation,
//! the distributions' tails, the moderation of a result's variance by its set's, the false
//! discovery rate over many results, how far each result moves between runs of one
//! machine (the noise tables), whether a result's figure follows the core clock, and the
//! robust statistics that find a fleet's outlier hosts (`robust`).

mod false_discovery;
mod moderation;
mod noise_table;
pub mod robust;
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

/// The slope of a result's figure on the clock's, across runs, past which it follows the
/// clock: its cycles then scatter less than its time (the variance of `y - x` is below that
/// of `y` exactly where the slope of `y` on `x` passes one half).
pub const FOLLOWING_SLOPE: f64 = 0.5;

/// Whether a result's figure follows the core clock, from `groups` of runs, each run's
/// (clock, figure) in logarithms: within each group of two runs or more (its means taken
/// out, so that only moves within a group count), the slope of the figure on the clock lies
/// past [`FOLLOWING_SLOPE`], a one-sided t test at 5% with two degrees of freedom or more.
/// The groups are what the move being judged lies between (a comparison's sides, a
/// history's stretches between the clock's steps): a result never follows the clock for
/// having moved with it in that move alone.
pub fn follows_clock(groups: &[Vec<(f64, f64)>]) -> bool {
    let mut pairs: Vec<(f64, f64)> = Vec::new();
    let mut counted = 0;
    for group in groups.iter().filter(|group| group.len() >= 2) {
        let n = group.len() as f64;
        let (mx, my) = (group.iter()).fold((0.0, 0.0), |(x, y), (a, b)| (x + a / n, y + b / n));
        pairs.extend(group.iter().map(|(x, y)| (x - mx, y - my)));
        counted += 1;
    }
    let degrees = pairs.len() as f64 - counted as f64 - 1.0;
    let sxx: f64 = pairs.iter().map(|(x, _)| x * x).sum();
    if degrees < 2.0 || sxx <= 0.0 {
        return false;
    }
    let slope = pairs.iter().map(|(x, y)| x * y).sum::<f64>() / sxx;
    let residual: f64 = pairs.iter().map(|(x, y)| (y - slope * x).powi(2)).sum();
    let standard_error = (residual / degrees / sxx).sqrt();
    let t = (slope - FOLLOWING_SLOPE) / standard_error;
    t > student_quantile(0.95, degrees)
}
