//! How much to measure, and the one way a measurement stops early.
//!
//! Shared by the runner, the hosts' timers and the analysis, and dependent on none of them.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The fewest samples a result is ever made of, whatever the time budget.
pub const MIN_SAMPLES: usize = 5;

/// A suite: how many samples, how long each, and the time budget per benchmark; the quick
/// one also keeps the probes' sizes and counts small.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suite {
    /// 30 samples of at least 2 ms, at most 1 s per benchmark.
    Quick,
    /// 100 samples of at least 5 ms, at most 10 s per benchmark.
    Full,
}

impl Suite {
    /// The engine's settings for this suite.
    pub fn config(self) -> Config {
        match self {
            Suite::Quick => Config::quick(),
            Suite::Full => Config::full(),
        }
    }

    /// How long a run of the whole suite may take unless told otherwise
    /// ([`crate::budget`]): 30 s for the quick suite, the main job; 10 minutes for the full.
    pub fn default_budget(self) -> Duration {
        match self {
            Suite::Quick => Duration::from_secs(30),
            Suite::Full => Duration::from_secs(600),
        }
    }

    /// Its name, as the command line and the results file spell it.
    pub fn name(self) -> &'static str {
        match self {
            Suite::Quick => "quick",
            Suite::Full => "full",
        }
    }
}

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
    /// How many rounds, spread over the run, each result is measured in (1: at once).
    /// `samples` and `budget` stay the whole run's; each round takes its share of them
    /// ([`Config::samples_per_round`], [`Config::budget_per_round`]), so that rounds cost
    /// about what one measurement would, and their medians show how far the figure moves
    /// between measurements besides within one.
    pub rounds: usize,
    /// The part of its usual samples and time the unit under way may take, from the run's
    /// time budget ([`crate::budget`]): 1 takes them all. [`Config::samples_per_round`] and
    /// [`Config::time_per_round`] apply it, never below the fewest samples a result needs.
    pub share: f64,
    /// When the unit under way should be done, from the run's time budget: a sweep leaves
    /// out the points that would end past it ([`Config::has_time_for`]). `None`: no budget.
    pub deadline: Option<Instant>,
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
            rounds: 1,
            share: 1.0,
            deadline: None,
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

impl Config {
    /// The samples one round takes of `wanted` for the whole run: its share, and never fewer
    /// than the round's share of [`MIN_SAMPLES`].
    pub fn samples_per_round(&self, wanted: usize) -> usize {
        let shared = (wanted as f64 * self.budget_share()).ceil() as usize;
        shared
            .div_ceil(self.rounds())
            .max(self.min_samples_per_round())
    }

    /// The fewest samples one round takes, so that the rounds together take at least
    /// [`MIN_SAMPLES`].
    pub fn min_samples_per_round(&self) -> usize {
        MIN_SAMPLES.div_ceil(self.rounds())
    }

    /// The time one round may spend on one benchmark's samples.
    pub fn budget_per_round(&self) -> Duration {
        self.time_per_round(self.budget)
    }

    /// One round's share of `time` allowed for the whole run (and of that, the budget's
    /// [`Config::share`]).
    pub fn time_per_round(&self, time: Duration) -> Duration {
        time.mul_f64(self.budget_share()) / self.rounds() as u32
    }

    pub(crate) fn rounds(&self) -> usize {
        self.rounds.max(1)
    }

    /// [`Config::share`], within 0 and 1.
    pub fn budget_share(&self) -> f64 {
        if self.share.is_finite() {
            self.share.clamp(0.0, 1.0)
        } else {
            1.0
        }
    }

    /// Whether work expected to take `expected` ends before the unit's deadline (always,
    /// without a budget).
    pub fn has_time_for(&self, expected: Duration) -> bool {
        self.deadline
            .is_none_or(|deadline| Instant::now() + expected <= deadline)
    }

    /// The longest sample that still leaves room, within the budget, for the fewest samples
    /// a result is made of, each beside a sample of the empty loop.
    pub fn longest_sample(&self) -> Duration {
        self.budget / (2 * MIN_SAMPLES as u32)
    }

    /// Refuses a sample length that would take the benchmark past its budget (a 10 s sample
    /// in a suite of at most 1 s a benchmark ran for minutes): the reason, for `flag`.
    pub fn check_sample_fits_budget(&self, flag: &str) -> Result<(), String> {
        let longest = self.longest_sample();
        if self.target_sample_time <= longest {
            return Ok(());
        }
        Err(format!(
            "{flag} {}: each benchmark may take {} in this suite, and a result needs at least \
             {MIN_SAMPLES} samples, each beside one of the empty loop, so a sample may last at \
             most {}; give a shorter {flag}, or --suite full",
            humantime::format_duration(self.target_sample_time),
            humantime::format_duration(self.budget),
            humantime::format_duration(longest),
        ))
    }
}

impl Default for Config {
    fn default() -> Config {
        Config::quick()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_longer_than_the_budget_allows_is_refused() {
        let quick = Config::quick();
        assert_eq!(quick.longest_sample(), Duration::from_millis(100));
        assert!(quick.check_sample_fits_budget("--target-time").is_ok());
        let long = Config::quick().overridden(None, Some(Duration::from_secs(10)));
        let refused = long.check_sample_fits_budget("--target-time").unwrap_err();
        assert!(refused.contains("at most 100ms"), "{refused}");
        let full = Config::full().overridden(None, Some(Duration::from_secs(1)));
        assert!(full.check_sample_fits_budget("--target-time").is_ok());
    }
}

/// The run was cancelled (Ctrl-C) before the benchmark finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}
