//! Series like those of a shared machine's nightly runs, generated from a seed, with what was
//! planted in them known: the project's own series for holding `latlab history` to its
//! targets (`benches/history_targets.rs --generated`) and for the tests that it finds a step
//! of a few scatters and only those.
//!
//! Each result's figures are its level times heavy-tailed noise (Student's t with 4 degrees
//! of freedom): a scatter of [`SCATTER`] between runs, [`NOISY_SCATTER`] for one result in
//! [`NOISY_EVERY`]. On top of that:
//!
//! - **one-run outliers**: any run of any result is [`OUTLIER_FACTOR`] slower one time in
//!   [`OUTLIER_EVERY`], and one night every result is;
//! - **two regimes**: one result in [`REGIMES_EVERY`] flips between two levels
//!   [`REGIME_GAPS`] apart, staying in the regime of the run before [`REGIME_STAY`] of the
//!   time, with no step;
//! - **steps of 5% to 10%** ([`STEP_SIZES`]), either way, in [`STEPPED_SHARE`] of the other
//!   results, at a run at least [`EDGE`] runs from either end;
//! - **a kernel change**: at one run the kernel is upgraded, and [`KERNEL_SHARE`] of the
//!   results that have no step of their own step there, each by its own 5% to 10%.

use crate::{Draws, summary_text};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// The scatter between runs of most results, and of the noisier ones, in logarithms.
pub const SCATTER: f64 = 0.02;
pub const NOISY_SCATTER: f64 = 0.05;
/// One result in this many has the noisier scatter.
pub const NOISY_EVERY: usize = 6;
/// One run of a result in this many is an outlier, this much slower.
pub const OUTLIER_EVERY: f64 = 50.0;
pub const OUTLIER_FACTOR: f64 = 1.3;
/// One result in this many flips between two regimes, this far apart.
pub const REGIMES_EVERY: usize = 10;
pub const REGIME_GAPS: (f64, f64) = (1.2, 1.6);
/// How often a run stays in the regime of the run before: 0.64, a lag-one autocorrelation
/// of 0.28 between the runs' regimes. Measured on three sittings of forty unchanged runs of
/// a shared guest, the results in two regimes (the memory bandwidth of small buffers,
/// core-to-core latency, some pagegroups chases) ran with autocorrelations from -0.37 to
/// 0.28, 0.04 at the median: their runs land in one regime or the other nearly
/// independently. The most persistent of them is taken.
pub const REGIME_STAY: f64 = 0.64;
/// The share of results with a step of their own, and the sizes of a step.
pub const STEPPED_SHARE: f64 = 0.1;
pub const STEP_SIZES: (f64, f64) = (1.05, 1.10);
/// The share of the results without a step of their own that step with the kernel.
pub const KERNEL_SHARE: f64 = 0.2;
/// The fewest runs a step has on either side.
pub const EDGE: usize = 5;
/// The kernel before and after its change.
pub const KERNELS: (&str, &str) = ("6.8.0-generated", "6.12.0-generated");

/// A step planted in one result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlantedStep {
    /// The first run of the new level.
    pub at: usize,
    /// The new level over the old.
    pub factor: f64,
    /// The result's scatter between runs, in logarithms.
    pub scatter: f64,
    /// Whether the step is the kernel change's.
    pub kernel: bool,
}

impl PlantedStep {
    /// The step's size in scatters between runs.
    pub fn scatters(&self) -> f64 {
        self.factor.ln().abs() / self.scatter
    }
}

/// Generated series and what was planted in them.
#[derive(Debug, Clone)]
pub struct Generated {
    /// Each result's figure, run by run.
    pub series: BTreeMap<String, Vec<f64>>,
    /// The steps, by result.
    pub steps: BTreeMap<String, PlantedStep>,
    /// The results that flip between two regimes.
    pub regimes: Vec<String>,
    /// The results with the noisier scatter ([`NOISY_SCATTER`]).
    pub noisy: Vec<String>,
    /// The first run with the new kernel.
    pub kernel_change: usize,
}

impl Generated {
    /// `results` series of `runs` runs each (at least `4 * EDGE`), drawn from `seed`.
    pub fn new(seed: u64, results: usize, runs: usize) -> Generated {
        assert!(runs >= 4 * EDGE, "{runs} runs: give at least {}", 4 * EDGE);
        let mut draws = Draws(seed);
        let noisy_night = (draws.uniform() * runs as f64) as usize;
        let kernel_change = runs / 4 + (draws.uniform() * (runs / 2) as f64) as usize;
        let mut generated = Generated {
            series: BTreeMap::new(),
            steps: BTreeMap::new(),
            regimes: Vec::new(),
            noisy: Vec::new(),
            kernel_change,
        };
        for i in 0..results {
            let name = format!("generated/result-{i:03}");
            let scatter = if i % NOISY_EVERY == NOISY_EVERY - 1 {
                generated.noisy.push(name.clone());
                NOISY_SCATTER
            } else {
                SCATTER
            };
            // Levels from a nanosecond to a millisecond.
            let level = (draws.uniform() * 6.0 * std::f64::consts::LN_10).exp();
            let mut logs: Vec<f64> = (0..runs)
                .map(|run| {
                    let outlier = run == noisy_night || draws.uniform() < 1.0 / OUTLIER_EVERY;
                    let noise = level.ln() + scatter * draws.heavy();
                    noise + if outlier { OUTLIER_FACTOR.ln() } else { 0.0 }
                })
                .collect();
            if i % REGIMES_EVERY == REGIMES_EVERY / 2 {
                let gap = between(&mut draws, REGIME_GAPS).ln();
                let mut upper = draws.uniform() < 0.5;
                for log in &mut logs {
                    upper ^= draws.uniform() >= REGIME_STAY;
                    *log += if upper { gap } else { 0.0 };
                }
                generated.regimes.push(name.clone());
            } else if let Some(step) = generated.plant(&mut draws, runs, scatter) {
                logs[step.at..]
                    .iter_mut()
                    .for_each(|l| *l += step.factor.ln());
                generated.steps.insert(name.clone(), step);
            }
            generated
                .series
                .insert(name, logs.into_iter().map(f64::exp).collect());
        }
        generated
    }

    /// A result's step of its own, or the kernel's, or none.
    fn plant(&self, draws: &mut Draws, runs: usize, scatter: f64) -> Option<PlantedStep> {
        let size = |draws: &mut Draws| {
            let size = between(draws, STEP_SIZES);
            if draws.uniform() < 0.5 {
                size
            } else {
                1.0 / size
            }
        };
        if draws.uniform() < STEPPED_SHARE {
            let at = EDGE + (draws.uniform() * (runs - 2 * EDGE + 1) as f64) as usize;
            let factor = size(draws);
            return Some(PlantedStep {
                at,
                factor,
                scatter,
                kernel: false,
            });
        }
        (draws.uniform() < KERNEL_SHARE).then(|| PlantedStep {
            at: self.kernel_change,
            factor: size(draws),
            scatter,
            kernel: true,
        })
    }

    /// The kernel of run `run`.
    pub fn kernel(&self, run: usize) -> &'static str {
        if run < self.kernel_change {
            KERNELS.0
        } else {
            KERNELS.1
        }
    }

    /// The runs as summaries under `dir` (`run-NN/summary.json`, an hour apart): copies of
    /// `template` (a summary) with these results in place of its own and each run's kernel.
    pub fn write_summaries(&self, template: &Value, dir: &Path) -> std::io::Result<()> {
        let runs = self.series.values().next().map_or(0, Vec::len);
        let result = template["results"][0].clone();
        for run in 0..runs {
            let mut summary = template.clone();
            summary["started_at"] =
                format!("2026-10-{:02}T{:02}:00:00Z", 1 + run / 24, run % 24).into();
            summary["environment"]["kernel"] = self.kernel(run).into();
            summary["headline"] = Value::Array(Vec::new());
            summary["results"] = (self.series.iter())
                .map(|(name, figures)| {
                    let mut result = result.clone();
                    result["name"] = name.as_str().into();
                    result["median_ns"] = figures[run].into();
                    result["median_ci95_ns"] = json!([figures[run] * 0.995, figures[run] * 1.005]);
                    result
                })
                .collect();
            let run_dir = dir.join(format!("run-{run:02}"));
            std::fs::create_dir_all(&run_dir)?;
            std::fs::write(run_dir.join("summary.json"), summary_text(summary))?;
        }
        Ok(())
    }
}

/// Uniform between the two bounds.
fn between(draws: &mut Draws, (low, high): (f64, f64)) -> f64 {
    low + draws.uniform() * (high - low)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_hold_what_was_planted_and_the_same_seed_draws_them_again() {
        let generated = Generated::new(3, 600, 40);
        let steps = &generated.steps;
        let own = steps.values().filter(|s| !s.kernel).count();
        let kernel = steps.values().filter(|s| s.kernel).count();
        // A tenth of the 540 results outside the regimes; a fifth of the rest.
        assert!((35..75).contains(&own), "{own}");
        assert!((70..130).contains(&kernel), "{kernel}");
        assert_eq!(generated.regimes.len(), 60);
        for step in steps.values() {
            assert!((EDGE..=40 - EDGE).contains(&step.at), "{step:?}");
            let size = step.factor.max(1.0 / step.factor);
            assert!((1.05..=1.10).contains(&size), "{step:?}");
        }
        assert!(steps.values().any(|s| s.factor < 1.0) && steps.values().any(|s| s.factor > 1.0));
        assert!((10..30).contains(&generated.kernel_change));
        let again = Generated::new(3, 600, 40);
        assert_eq!(again.series, generated.series);
    }
}
