//! `cpu.frequency`: the core clock, measured rather than read from a table, by
//! [`latlab_engine::cycle::measure`]: the slope of a chain of dependent register additions
//! (one cycle each, the addend in a register so that no core can fold the chain at rename),
//! checked against a chain of dependent multiplies (three cycles on every current x86-64
//! core). The harness converts its figures to cycles with the same function. The run's
//! first cycle is kept ([`crate::Findings`]) for the memory probes' figures in cycles.

use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use latlab_engine::cycle;

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "cpu.frequency",
    method: "the core clock from a chain of dependent one-cycle register additions",
    timing: crate::timing::SLOPE,
    results: &["cpu.frequency/cycle"],
    typical: Typical {
        quick_s: 0.17,
        full_s: 1.6,
    },
    alone: false,
    rounds: crate::Rounds::Each,
    presentation: latlab_engine::presentation::Presentation::NONE,
    run,
};

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let cycle = cycle::measure(ctx.runner)?;
    ctx.findings.found_cycle(cycle.clone());
    Ok(vec![cycle.result])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two methods agree on the cycle: a dependent multiply takes three of the cycles the
    /// add chain measured, as it does on every current x86-64 core (Intel and AMD alike).
    /// An add chain the core folded (as Golden Cove folds adds of an immediate), or one that
    /// overlapped across calls, would read the cycle short and the multiply as many cycles.
    /// The median of three rounds: a slope is a difference of two timings, so a noisy
    /// neighbour moves one round either way.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_multiply_takes_three_of_the_measured_cycles() {
        let mut runner = crate::test_runner(10, std::time::Duration::from_millis(1));
        let mut ratios: Vec<f64> = (0..3)
            .map(|_| {
                let cycle = cycle::measure(&mut runner).unwrap().result;
                cycle.parameters["imul_cycles"].as_f64().unwrap()
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        assert!((2.4..3.6).contains(&ratios[1]), "imul/add: {ratios:?}");
    }
}
