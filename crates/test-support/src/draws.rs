//! A small deterministic generator for planted series (SplitMix64): the same draws each
//! time, so that a test or a benchmark that plants steps in noise plants the same ones.

/// Draws from a seed.
pub struct Draws(pub u64);

impl Draws {
    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform().max(1e-12), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Student's t with 4 degrees of freedom, scaled to unit standard deviation: the heavy
    /// tails of a shared machine's runs.
    pub fn heavy(&mut self) -> f64 {
        let chi: f64 = (0..4).map(|_| self.normal().powi(2)).sum();
        self.normal() / (chi / 4.0).sqrt() / 2f64.sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heavy_draws_have_unit_spread_and_heavier_tails_than_normal_ones() {
        let mut draws = Draws(1);
        let heavy: Vec<f64> = (0..20_000).map(|_| draws.heavy()).collect();
        let sd = (heavy.iter().map(|x| x * x).sum::<f64>() / heavy.len() as f64).sqrt();
        assert!((0.85..1.15).contains(&sd), "{sd}");
        // Beyond four deviations: a normal draw 6 in 100,000, Student's t4 scaled far more.
        let far = heavy.iter().filter(|x| x.abs() > 4.0).count();
        assert!(far > 10, "{far}");
        assert_eq!(Draws(7).uniform(), Draws(7).uniform());
    }
}
