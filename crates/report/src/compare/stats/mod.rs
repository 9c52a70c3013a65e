//! The statistics a comparison judges by: the distributions' tails, the moderation of a
//! result's variance by its set's, the false discovery rate over many results, and how far
//! each result moves between runs of one machine (the noise tables).

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
