//! What the synthetic machine's figures are: a core clock, the figures of the results the
//! probes model ([`FigureModel`]: they know their names), and for everything else a cost
//! fixed by the benchmark's name.
//!
//! The core clock has a cycle of [`CYCLE_NS`] (2.5 GHz): the add chain of the cycle's
//! result takes one cycle an add, the multiply chain three, the exclusive or one; a core
//! that folds additions ([`Machine::folds_additions`]) runs the add chain seven times
//! faster, as Intel's Golden Cove folds a chain of additions of an immediate. A run's clock
//! may move ([`Machine::clock_factor`]); which other results follow it is the model's to
//! say.

use crate::result_names::{CYCLE_RESULT, EOR_RESULT, MULTIPLY_RESULT};

/// One cycle of the synthetic core, in nanoseconds.
pub const CYCLE_NS: f64 = 0.4;

/// How much faster a core that folds additions runs the add chain.
const FOLDING: f64 = 7.0;

/// What the synthetic machine's results cost where their names say more than a made-up
/// figure (a chase that hits a cache, a result on the core clock): modelled beside the
/// probes, which know their names.
pub trait FigureModel: Send + Sync + std::fmt::Debug {
    /// The figure of `name` per operation on `machine`; `by_name`, the cost its name fixes,
    /// where the model does not know it.
    fn figure_ns(&self, machine: &Machine, name: &str, by_name: f64) -> f64;

    /// Whether the physical pages a process got rule `name`'s figure (a chase whose span
    /// lies at a cache level's end), so that a noisy run draws their effect
    /// ([`super::Noise::placement_sd`]).
    fn placement_rules(&self, name: &str) -> bool;
}

/// The model that knows no result's name: every figure is the cost its name fixes.
#[derive(Debug)]
struct NamesOnly;

impl FigureModel for NamesOnly {
    fn figure_ns(&self, _: &Machine, _: &str, by_name: f64) -> f64 {
        by_name
    }

    fn placement_rules(&self, _: &str) -> bool {
        false
    }
}

/// The synthetic machine as one run finds it.
#[derive(Debug, Clone, Copy)]
pub struct Machine {
    /// The core clock's period over its nominal one: above one, a slower clock.
    pub clock_factor: f64,
    /// Whether the core folds chains of additions at rename.
    pub folds_additions: bool,
}

impl Default for Machine {
    fn default() -> Machine {
        Machine {
            clock_factor: 1.0,
            folds_additions: false,
        }
    }
}

/// The model that knows no result's name, until the host is given the probes'.
pub(super) const NAMES_ONLY: &dyn FigureModel = &NamesOnly;

impl Machine {
    /// One cycle of its core clock, in nanoseconds.
    pub fn cycle_ns(&self) -> f64 {
        CYCLE_NS * self.clock_factor
    }

    /// The figure of `name` on this machine, per operation: the cycle's chains by the
    /// clock, the rest as `model` says, else the cost its name fixes (`by_name`).
    pub fn figure_ns(&self, model: &dyn FigureModel, name: &str, by_name: f64) -> f64 {
        let cycle = self.cycle_ns();
        match name {
            CYCLE_RESULT if self.folds_additions => cycle / FOLDING,
            CYCLE_RESULT | EOR_RESULT => cycle,
            MULTIPLY_RESULT => 3.0 * cycle,
            _ => model.figure_ns(self, name, by_name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The multiply chain reads three add cycles, unless the core folds the additions.
    #[test]
    fn the_multiply_chain_reads_three_cycles_unless_additions_fold() {
        let at = |m: &Machine, name| m.figure_ns(NAMES_ONLY, name, 0.0);
        let ratio = |m: Machine| at(&m, MULTIPLY_RESULT) / at(&m, CYCLE_RESULT);
        assert!((ratio(Machine::default()) - 3.0).abs() < 1e-9);
        let folding = Machine {
            folds_additions: true,
            ..Machine::default()
        };
        assert!(ratio(folding) > 20.0);
    }
}
