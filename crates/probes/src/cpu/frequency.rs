//! `cpu.frequency`: the core clock, measured rather than read from a table, by
//! [`latlab_engine::cycle::measure`]: the slope of a chain of dependent register additions
//! (one cycle each, the addend in a register so that no core can fold the chain at rename),
//! checked against a chain of dependent multiplies (three cycles on every current x86-64
//! core). The harness converts its figures to cycles with the same function. The run's
//! first cycle is kept ([`crate::Findings`]) for the memory probes' figures in cycles.

use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::cycle;
use latlab_engine::{BenchResult, ClockKind, Warning};

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "cpu.frequency",
    method: "the core clock from a chain of dependent one-cycle register additions",
    timing: crate::Timing::Slope,
    results: &["cpu.frequency/cycle"],
    typical: Typical::quick_full(0.17, 1.6),
    extras: crate::Extras::NONE,
    presentation: latlab_engine::presentation::Presentation::NONE,
    run,
};

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let mut cycle = cycle::measure(ctx.runner)?;
    let clock = ctx.runner.clock().info();
    let tsc_ghz = (clock.kind == ClockKind::Tsc).then_some(clock.frequency_hz / 1e9);
    let max_core_ghz = (ctx.host().core_classes().iter())
        .filter_map(|class| class.max_frequency_khz)
        .max()
        .map(|khz| khz as f64 / 1e6);
    let ghz = 1.0 / cycle.result.summary.median;
    cycle
        .result
        .warnings
        .extend(implausible(ghz, max_core_ghz, tsc_ghz));
    ctx.findings.found_cycle(cycle.clone());
    Ok(vec![cycle.result])
}

/// How far above its reported maximum a core may run (the reported figure is rounded, or
/// a boost is not reported).
const ABOVE_REPORTED_MAX: f64 = 1.2;
/// How far above the invariant TSC's rate a core may turbo: a laptop's 2.1 GHz TSC beside a
/// 4.9 GHz boost is 2.3 times.
const ABOVE_TSC: f64 = 2.5;

/// A warning when a cycle of `ghz` is beyond what the cores can run at: above their
/// reported maximum (with room for rounding), or without one, far above the TSC's rate.
fn implausible(ghz: f64, max_core_ghz: Option<f64>, tsc_ghz: Option<f64>) -> Option<Warning> {
    let (limit_ghz, basis) = match (max_core_ghz, tsc_ghz) {
        (Some(max), _) => (
            max * ABOVE_REPORTED_MAX,
            format!("the cores report at most {max:.2} GHz"),
        ),
        (None, Some(tsc)) => (
            tsc * ABOVE_TSC,
            format!("{ABOVE_TSC} times the {tsc:.2} GHz invariant TSC"),
        ),
        (None, None) => return None,
    };
    (ghz > limit_ghz).then_some(Warning::ImplausibleCycle {
        measured_ghz: ghz,
        limit_ghz,
        basis,
    })
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
    /// A cycle seven times the TSC's rate (a folded add chain) is flagged; a laptop's boost
    /// at twice its TSC's rate is not, nor a core at its reported
    /// maximum; a cycle above a reported maximum is, whatever the TSC; with neither, nothing
    /// can be said.
    #[test]
    fn a_cycle_beyond_any_core_is_implausible() {
        assert!(implausible(16.7, None, Some(2.3)).is_some());
        assert!(implausible(4.9, None, Some(2.1)).is_none());
        assert!(implausible(3.7, Some(3.7), Some(2.6)).is_none());
        let Some(Warning::ImplausibleCycle { limit_ghz, .. }) =
            implausible(6.0, Some(3.7), Some(2.6))
        else {
            panic!("a 6 GHz cycle on 3.7 GHz cores passed");
        };
        assert!((limit_ghz - 4.44).abs() < 0.01);
        assert!(implausible(50.0, None, None).is_none());
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_multiply_takes_three_of_the_measured_cycles() {
        let mut runner = crate::test_runner(10, std::time::Duration::from_millis(1));
        let mut ratios: Vec<f64> = (0..3)
            .map(|_| {
                let cycle = cycle::measure(&mut runner).unwrap().result;
                cycle
                    .parameter(latlab_engine::cycle::IMUL_CYCLES)
                    .unwrap()
                    .as_f64()
                    .unwrap()
            })
            .collect();
        ratios.sort_by(f64::total_cmp);
        assert!((2.4..3.6).contains(&ratios[1]), "imul/add: {ratios:?}");
    }
}
