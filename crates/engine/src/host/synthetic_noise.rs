//! Noise for the synthetic host, so that a comparison can be tried on runs that differ as
//! real runs do, and repeat exactly: every draw is a hash of the seed and of what is drawn
//! for, never a clock or a global generator.
//!
//! Four sources, each a factor `exp(N(0, sd))` on a figure: the run's effect on each
//! result (where its buffers and code landed in that process: the same for all its rounds),
//! a larger one of the same kind on a chase at a cache level's end (the physical pages its
//! ring got), a drift per measurement (one round of one benchmark, or of several sampled
//! side by side, which drift together), and jitter per sample. A planted change multiplies
//! one result's figures by a factor; the run's machine ([`Machine`]: its clock, whether it
//! folds additions) sets the figures the noise moves.

use super::synthetic_model::{FigureModel, Machine};

use std::sync::atomic::{AtomicU64, Ordering};

/// How noisy a synthetic run is, and what it plants.
#[derive(Debug, Clone, Default)]
pub struct Noise {
    /// Draws differ between seeds: one seed is one run.
    pub seed: u64,
    /// Standard deviation of the run's effect on each result, in logarithms.
    pub run_sd: f64,
    /// Standard deviation of the run's effect on a chase at a cache level's end, in
    /// logarithms, beside `run_sd`.
    pub placement_sd: f64,
    /// Standard deviation of one measurement's drift, in logarithms.
    pub round_sd: f64,
    /// Standard deviation of one sample's jitter, in logarithms.
    pub sample_sd: f64,
    /// Results whose every figure is multiplied by a factor: `(name, factor)`.
    pub planted: Vec<(String, f64)>,
    /// Changes of the machine that last a while: figures multiplied in some measurements
    /// only.
    pub moved: Vec<Moved>,
    /// The machine as this run finds it: its clock, whether it folds additions.
    pub machine: Machine,
}

/// A change of the machine under a run that lasts a while (the host running the vCPUs
/// elsewhere for a few seconds): the figures of measurements `measurements` of `name`,
/// counted from 0 in the order they are taken, multiplied by `factor`.
#[derive(Debug, Clone)]
pub struct Moved {
    pub name: String,
    pub measurements: std::ops::Range<u64>,
    pub factor: f64,
}

/// A noise and the measurements drawn so far (each measurement draws its own drift).
#[derive(Debug)]
pub(super) struct NoiseState {
    noise: Noise,
    measurements: AtomicU64,
    /// Measurements taken so far of each name that a [`Moved`] covers.
    of_moved: std::sync::Mutex<std::collections::HashMap<String, u64>>,
}

impl NoiseState {
    pub(super) fn new(noise: Noise) -> NoiseState {
        NoiseState {
            noise,
            measurements: AtomicU64::new(0),
            of_moved: Default::default(),
        }
    }

    /// The factor of the changes of the machine on this measurement of `name`.
    fn moved(&self, name: &str) -> f64 {
        let mut moves = (self.noise.moved.iter())
            .filter(|m| m.name == name)
            .peekable();
        if moves.peek().is_none() {
            return 1.0;
        }
        let mut counts = self.of_moved.lock().unwrap_or_else(|e| e.into_inner());
        let count = counts.entry(name.to_string()).or_default();
        let this = *count;
        *count += 1;
        (moves.filter(|m| m.measurements.contains(&this))).fold(1.0, |f, m| f * m.factor)
    }

    /// The machine the noise moves the figures of.
    pub(super) fn machine(&self) -> Machine {
        self.noise.machine
    }

    /// The factors of one new measurement of `name`: one per sample, `count` samples.
    pub(super) fn factors(&self, name: &str, count: usize, model: &dyn FigureModel) -> Vec<f64> {
        let noise = &self.noise;
        let measurement = self.measurements.fetch_add(1, Ordering::Relaxed);
        let drift = noise.round_sd * normal(&[noise.seed, hash(name), 1, measurement]);
        self.with_drift((name, model), count, measurement, drift)
    }

    /// The factors of one new measurement of `names` sampled side by side, which drift
    /// together: one list per name, `count` samples each.
    pub(super) fn factors_together(
        &self,
        names: &[&str],
        count: usize,
        model: &dyn FigureModel,
    ) -> Vec<Vec<f64>> {
        let noise = &self.noise;
        let measurement = self.measurements.fetch_add(1, Ordering::Relaxed);
        let drift = noise.round_sd * normal(&[noise.seed, 0, 1, measurement]);
        (names.iter())
            .map(|name| self.with_drift((name, model), count, measurement, drift))
            .collect()
    }

    /// The factors of measurement `measurement` of `name`, drifting by `drift`.
    fn with_drift(
        &self,
        (name, model): (&str, &dyn FigureModel),
        count: usize,
        measurement: u64,
        drift: f64,
    ) -> Vec<f64> {
        let noise = &self.noise;
        let planted = (noise.planted.iter())
            .find(|(planted, _)| planted == name)
            .map_or(1.0, |(_, factor)| *factor)
            * self.moved(name);
        let placement = match model.placement_rules(name) {
            true => noise.placement_sd * normal(&[noise.seed, hash(name), 3, 0]),
            false => 0.0,
        };
        let run = noise.run_sd * normal(&[noise.seed, hash(name), 0, 0]) + placement;
        (0..count as u64)
            .map(|i| {
                let jitter =
                    noise.sample_sd * normal(&[noise.seed, hash(name), 2, measurement << 20 | i]);
                planted * (run + drift + jitter).exp()
            })
            .collect()
    }
}

/// FNV-1a of a name.
fn hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// SplitMix64's finaliser: a well-mixed 64-bit value from any.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A uniform draw in (0, 1) for `key`.
fn uniform(key: &[u64], salt: u64) -> f64 {
    let bits = key.iter().fold(mix(salt), |h, &k| {
        mix(h ^ k.wrapping_add(0x9e37_79b9_7f4a_7c15))
    });
    ((bits >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// A standard normal draw for `key` (Box–Muller).
fn normal(key: &[u64]) -> f64 {
    let (u, v) = (uniform(key, 1), uniform(key, 2));
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::synthetic_model::NAMES_ONLY;

    /// The draws look standard normal: mean near 0, standard deviation near 1, and the same
    /// key gives the same draw.
    #[test]
    fn draws_are_standard_normal_and_repeat() {
        let draws: Vec<f64> = (0..20_000).map(|i| normal(&[7, i])).collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let sd =
            (draws.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / draws.len() as f64).sqrt();
        assert!(mean.abs() < 0.03, "{mean}");
        assert!((sd - 1.0).abs() < 0.03, "{sd}");
        assert_eq!(normal(&[7, 3]), normal(&[7, 3]));
    }

    /// A run's effect is the same for every measurement of a result; drift and jitter are
    /// not; a planted factor multiplies everything.
    #[test]
    fn the_run_effect_is_shared_by_every_measurement() {
        let run_only = NoiseState::new(Noise {
            seed: 1,
            run_sd: 0.1,
            ..Noise::default()
        });
        let first = run_only.factors("x", 3, NAMES_ONLY);
        assert_eq!(first, run_only.factors("x", 3, NAMES_ONLY));
        assert_eq!(first[0], first[2]);
        assert_ne!(first, run_only.factors("y", 3, NAMES_ONLY));
        let jittery = NoiseState::new(Noise {
            seed: 1,
            sample_sd: 0.1,
            planted: vec![("x".into(), 10.0)],
            ..Noise::default()
        });
        let factors = jittery.factors("x", 3, NAMES_ONLY);
        assert_ne!(factors[0], factors[1]);
        assert!(
            factors.iter().all(|f| (5.0..20.0).contains(f)),
            "{factors:?}"
        );
    }

    /// A move covers the measurements of its name it counts, and no other.
    #[test]
    fn a_move_covers_its_measurements_only() {
        let moved = NoiseState::new(Noise {
            moved: vec![Moved {
                name: "x".into(),
                measurements: 1..3,
                factor: 4.0,
            }],
            ..Noise::default()
        });
        let first: Vec<f64> = (0..5)
            .map(|_| moved.factors("x", 1, NAMES_ONLY)[0])
            .collect();
        assert_eq!(first, [1.0, 4.0, 4.0, 1.0, 1.0]);
        assert_eq!(moved.factors("y", 2, NAMES_ONLY), [1.0, 1.0]);
    }
}
