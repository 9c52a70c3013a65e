//! How a benchmark was measured (its turns per sample, its samples, how its call was timed,
//! its allocations): what its profile repeats.

use crate::bencher::Cost;
use latlab_engine::BenchResult;
use latlab_engine::model::Allocations;

/// How a benchmark was measured, which its profile repeats.
pub(crate) struct Measured {
    /// Turns of the longer loop per sample.
    pub turns: u64,
    /// Samples taken.
    #[cfg(all(feature = "profile", any(target_os = "linux", target_os = "android")))]
    pub rounds: usize,
    /// How its call was timed.
    pub cost: Cost,
    /// Its allocations per call, where they were counted as its samples were taken.
    pub allocations: Option<Allocations>,
}

impl Measured {
    /// How `result` (the longer body's, or a slow call's) was sampled: its turns and
    /// samples, its call's cost, and its allocations where they were counted as sampled.
    pub fn of(result: &BenchResult, cost: Cost, allocations: Option<Allocations>) -> Measured {
        Measured {
            turns: result.iterations,
            #[cfg(all(feature = "profile", any(target_os = "linux", target_os = "android")))]
            rounds: result.samples_ns.len(),
            cost,
            allocations,
        }
    }
}
