//! The deterministic timer of test mode (`--fake-clock`).
//!
//! Each benchmark gets a nominal cost derived from its name, and its samples wobble around it
//! in a fixed pattern. The synthetic samples go through the same analysis as real ones, so a
//! fake run exercises everything but the clock, and its output is identical on every machine.

use crate::analysis::{self, LoopSamples, Subject};
use crate::model::{BenchResult, Integrity};
use crate::runner::{Config, MIN_SAMPLES};

/// The relative wobble of consecutive samples, repeating.
const WOBBLE: [f64; 5] = [0.0, 0.01, -0.01, 0.02, -0.02];
/// The synthetic empty loop's cost per iteration.
const EMPTY_LOOP_NS: f64 = 0.5;
/// The fake clock's resolution, as `Clock::fake` reports it.
pub(crate) const FAKE_RESOLUTION_NS: f64 = 1.0;

pub(crate) struct FakeTimer;

impl FakeTimer {
    pub(crate) fn bench(&self, name: &str, method: &str, config: &Config) -> BenchResult {
        let nominal = nominal_ns(name);
        let target_ns = config.target_sample_time.as_nanos() as f64;
        let iterations =
            ((target_ns / (nominal + EMPTY_LOOP_NS)).ceil() as u64).next_power_of_two();
        let count = config.samples.max(MIN_SAMPLES);
        let mut samples = LoopSamples::with_capacity(iterations, count);
        let per_sample =
            |ns: f64, i: usize| ns * (1.0 + WOBBLE[i % WOBBLE.len()]) * iterations as f64;
        for i in 0..count {
            let bench = per_sample(nominal + EMPTY_LOOP_NS, i);
            let empty = per_sample(EMPTY_LOOP_NS, i + 2);
            samples.push((bench, bench), (empty, empty));
        }
        let subject = Subject {
            name,
            method,
            wanted_samples: config.samples,
            resolution_ns: FAKE_RESOLUTION_NS,
        };
        analysis::timed_loop_result(&subject, &samples, 10.0 * nominal, Integrity::default())
    }

    pub(crate) fn observe(&self, name: &str, method: &str, count: usize) -> BenchResult {
        let nominal = nominal_ns(name);
        let samples: Vec<f64> = (0..count.max(MIN_SAMPLES))
            .map(|i| nominal * (1.0 + WOBBLE[i % WOBBLE.len()]))
            .collect();
        let subject = Subject {
            name,
            method,
            wanted_samples: count,
            resolution_ns: FAKE_RESOLUTION_NS,
        };
        let cold_ns = 10.0 * nominal;
        analysis::observations_result(
            &subject,
            samples.clone(),
            samples,
            cold_ns,
            Integrity::default(),
        )
    }
}

/// A cost between 1 and 200.9 ns with one decimal, fixed by the name (FNV-1a).
fn nominal_ns(name: &str) -> f64 {
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    });
    1.0 + (hash % 2000) as f64 / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_results_are_deterministic_and_plausible() {
        let config = Config::quick();
        let a = FakeTimer.bench("x/y", "m", &config);
        let b = FakeTimer.bench("x/y", "m", &config);
        assert_eq!(a, b);
        assert!((a.summary.median - nominal_ns("x/y")).abs() < 0.05 * nominal_ns("x/y"));
        assert_ne!(nominal_ns("x/y"), nominal_ns("x/z"));
    }
}
