//! `cpu.frequency`: the core clock, measured rather than read from a table.
//!
//! A chain of 64 dependent register additions, written in assembly so the compiler cannot
//! fold them into one: an integer add has a latency of exactly one cycle on every current
//! x86-64 and aarch64 core, so the time per add is the length of one cycle at the clock the
//! core actually runs now (turbo included), which neither /proc/cpuinfo nor a VM reports.

use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "cpu.frequency",
    method: "the core clock from a chain of dependent one-cycle register additions",
    timing: crate::timing::SLOPE,
    results: &["cpu.frequency/cycle"],
    typical: Typical {
        quick_s: 0.17,
        full_s: 1.6,
    },
    run,
};

/// Additions per call of the shorter body; the longer one performs twice as many.
const ADDS_PER_CALL: usize = 64;

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    Ok(vec![cycle_time(ctx)?])
}

/// One cycle of the core clock, as a result (nanoseconds per cycle), with the frequency as a
/// parameter. The slope between chains of 64 and 128 additions per call: the loop's own
/// instructions run beside the chain, so subtracting an empty loop's cost would take off
/// time the chain never spent and read the clock a few per cent fast.
pub(crate) fn cycle_time(ctx: &mut ProbeContext) -> Result<BenchResult, ProbeError> {
    // The chain continues from one call to the next: were each call to start afresh, the core
    // would overlap consecutive chains and time the adders' throughput, not their latency.
    let mut x = std::hint::black_box(1u64);
    let mut y = std::hint::black_box(1u64);
    let result = ctx.runner.bench_slope(
        "cpu.frequency/cycle",
        "one dependent 64-bit add (one cycle) in a chain carried across calls: the slope \
         between 64 and 128 adds per call",
        (ADDS_PER_CALL as u64, move || {
            x = add_chain::<ADDS_PER_CALL>(x);
            x
        }),
        (2 * ADDS_PER_CALL as u64, move || {
            y = add_chain::<{ 2 * ADDS_PER_CALL }>(y);
            y
        }),
    )?;
    let ghz = 1.0 / result.summary.median;
    Ok(result.with_parameter("core_clock_ghz", ghz))
}

/// `N` dependent additions of one to `x`.
#[inline(always)]
fn add_chain<const N: usize>(mut x: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: register arithmetic only; no memory, stack or flags are relied upon.
    unsafe {
        std::arch::asm!(".rept {n}", "add {x}, 1", ".endr", n = const N, x = inout(reg) x, options(nomem, nostack));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above.
    unsafe {
        std::arch::asm!(".rept {n}", "add {x}, {x}, #1", ".endr", n = const N, x = inout(reg) x, options(nomem, nostack));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for _ in 0..N {
        x = std::hint::black_box(x) + 1;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chains_add_their_length() {
        assert_eq!(add_chain::<64>(1), 65);
        assert_eq!(add_chain::<128>(1), 129);
    }

    /// A clock between 0.5 and 6 GHz: a chain that overlapped across calls would read
    /// several times faster than any core runs.
    #[test]
    fn the_measured_clock_is_a_plausible_core_clock() {
        let mut runner = crate::test_runner(10, std::time::Duration::from_millis(1));
        let mut ctx = ProbeContext::for_test(&mut runner);
        let ghz = 1.0 / cycle_time(&mut ctx).unwrap().summary.median;
        assert!((0.5..6.0).contains(&ghz), "{ghz} GHz");
    }
}
