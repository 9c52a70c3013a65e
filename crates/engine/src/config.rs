//! How much to measure, and the one way a measurement stops early.
//!
//! Shared by the runner, the hosts' timers and the analysis, and dependent on none of them.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The fewest samples a result is ever made of, whatever the time budget.
pub const MIN_SAMPLES: usize = 5;

/// How much to measure.
#[derive(Debug, Clone)]
pub struct Config {
    /// Samples per benchmark (fewer when the budget runs out, never fewer than [`MIN_SAMPLES`]).
    pub samples: usize,
    /// The least time one calibrated sample should last.
    pub target_sample_time: Duration,
    /// Time allowed for one benchmark's samples.
    pub budget: Duration,
    /// Sleep this long before each sample, so a real-time thread blocks regularly and its
    /// RLIMIT_RTTIME allowance is renewed.
    pub pause_between_samples: Option<Duration>,
    /// Set from elsewhere (a signal handler) to stop at the next sample.
    pub cancel: Arc<AtomicBool>,
}

impl Config {
    /// The quick suite: 30 samples of at least 2 ms, at most 1 s a benchmark.
    pub fn quick() -> Config {
        Config {
            samples: 30,
            target_sample_time: Duration::from_millis(2),
            budget: Duration::from_secs(1),
            pause_between_samples: None,
            cancel: Arc::default(),
        }
    }

    /// The full suite: 100 samples of at least 5 ms, at most 10 s a benchmark.
    pub fn full() -> Config {
        Config {
            samples: 100,
            target_sample_time: Duration::from_millis(5),
            budget: Duration::from_secs(10),
            ..Config::quick()
        }
    }
}

impl Config {
    /// This configuration with the sample count and sample length given on a command line,
    /// where given.
    pub fn overridden(
        mut self,
        samples: Option<usize>,
        target_sample_time: Option<Duration>,
    ) -> Config {
        if let Some(samples) = samples {
            self.samples = samples;
        }
        if let Some(target) = target_sample_time {
            self.target_sample_time = target;
        }
        self
    }
}

impl Default for Config {
    fn default() -> Config {
        Config::quick()
    }
}

/// The run was cancelled (Ctrl-C) before the benchmark finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("interrupted")]
pub struct Interrupted;
