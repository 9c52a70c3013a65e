//! The core's clock cycle, measured rather than read from a table: one function, used by
//! latlab's probes (`cpu.frequency`, cycles per load, bytes per cycle) and by the harness
//! (cycles per call).
//!
//! A chain of 64 dependent register additions, written in assembly so the compiler cannot
//! fold them into one: an integer add has a latency of exactly one cycle on every current
//! x86-64 and aarch64 core, so the time per add is the length of one cycle at the clock the
//! core actually runs now (turbo included), which neither /proc/cpuinfo nor a VM reports.
//!
//! The addend is a register whose value the core cannot know when it renames the chain:
//! Intel's Golden Cove and later cores fold a chain of additions of an *immediate* at
//! rename and retire it several times faster than one add a cycle, which read a 3 GHz core
//! as 12-17 GHz. A second chain of dependent multiplies (three cycles on every current
//! x86-64 core) is timed beside it: the ratio of the two, recorded as `imul_cycles`, says
//! whether the add chain really took one cycle an add. When it reads more than
//! [`CYCLE_TOLERANCE`] from three, the cycle carries a [`Warning::CycleUncertain`] naming
//! both figures, and [`Cycle::mark`] gives the same warning to every figure in cycles built
//! on it.

use crate::model::{BenchResult, Warning};
use crate::{Interrupted, Runner};

/// The name of the cycle's result.
pub const CYCLE_RESULT: &str = "cpu.frequency/cycle";

/// Additions per call of the shorter body; the longer one performs twice as many.
const ADDS_PER_CALL: usize = 64;
/// Multiplies per call of the shorter multiply body; the longer one performs twice as many.
const MULTIPLIES_PER_CALL: usize = 32;

/// How many cycles the multiply chain takes an operation on every current core of this
/// architecture, where one figure holds for all: 3 for a 64-bit `imul` on x86-64 (Intel and
/// AMD alike). None elsewhere: a 64-bit `mul` takes 2 to 4 cycles across aarch64 cores, so
/// there the ratio is recorded but not judged.
pub const EXPECTED_MULTIPLY_CYCLES: Option<f64> = if cfg!(target_arch = "x86_64") {
    Some(3.0)
} else {
    None
};

/// How far the multiply chain may read from its expected cycles before the cycle is in
/// doubt.
pub const CYCLE_TOLERANCE: f64 = 0.10;

/// The core's cycle as measured: the result (nanoseconds per cycle, with `core_clock_ghz`
/// and `imul_cycles` as parameters) and the doubt the multiply chain cast on it.
#[derive(Debug, Clone)]
pub struct Cycle {
    pub result: BenchResult,
    doubt: Option<Warning>,
}

impl Cycle {
    /// The cycle's length in ns.
    pub fn ns(&self) -> f64 {
        self.result.summary.median
    }

    /// The doubt the multiply chain casts on the cycle, when it reads more than
    /// [`CYCLE_TOLERANCE`] from its expected cycles.
    pub fn doubt(&self) -> Option<&Warning> {
        self.doubt.as_ref()
    }

    /// Marks each of `results` that carries a figure in cycles (`cycles_per_load`,
    /// `bytes_per_cycle`, `cycles_per_call` …) with the doubt, when there is one.
    pub fn mark(&self, results: &mut [BenchResult]) {
        let Some(doubt) = &self.doubt else {
            return;
        };
        for result in results {
            if result.parameters.keys().any(|k| k.contains("cycle")) {
                result.warnings.push(doubt.clone());
            }
        }
    }
}

/// The doubt about a cycle of `add_ns` that a multiply of `multiply_ns` casts, when it
/// reads more than [`CYCLE_TOLERANCE`] away from its expected cycles.
pub fn cross_check(add_ns: f64, multiply_ns: f64) -> Option<Warning> {
    let expected = EXPECTED_MULTIPLY_CYCLES?;
    let read = multiply_ns / add_ns;
    ((read / expected - 1.0).abs() > CYCLE_TOLERANCE).then_some(Warning::CycleUncertain {
        add_ns,
        multiply_ns,
        expected_cycles: expected,
    })
}

/// One cycle of the core clock, as a result named [`CYCLE_RESULT`] (nanoseconds per
/// cycle), with the frequency and the multiply chain's length in those cycles
/// (`imul_cycles`, 3 where the add chain is right) as parameters. The slope between chains
/// of 64 and 128 additions per call: the loop's own instructions run beside the chain, so
/// subtracting an empty loop's cost would take off time the chain never spent and read the
/// clock a few per cent fast.
pub fn measure(runner: &mut Runner) -> Result<Cycle, Interrupted> {
    let result = chain_slope(
        runner,
        CYCLE_RESULT,
        "one dependent 64-bit register add (one cycle) in a chain carried across calls: the \
         slope between 64 and 128 adds per call",
        (ADDS_PER_CALL, add_chain::<ADDS_PER_CALL>),
        add_chain::<{ 2 * ADDS_PER_CALL }>,
    )?;
    let multiply = chain_slope(
        runner,
        "cpu.frequency/multiply",
        "one dependent 64-bit multiply (three cycles) in a chain carried across calls",
        (MULTIPLIES_PER_CALL, multiply_chain::<MULTIPLIES_PER_CALL>),
        multiply_chain::<{ 2 * MULTIPLIES_PER_CALL }>,
    )?;
    let ns = result.summary.median;
    let doubt = cross_check(ns, multiply.summary.median);
    let mut result = result
        .with_parameter("core_clock_ghz", 1.0 / ns)
        .with_parameter("imul_cycles", multiply.summary.median / ns);
    result.warnings.extend(doubt.clone());
    Ok(Cycle { result, doubt })
}

/// The slope per operation between `short` (`ops` operations a call) and `long` (twice as
/// many). The chain continues from one call to the next: were each call to start afresh,
/// the core would overlap consecutive chains and time the units' throughput, not their
/// latency.
/// `short` and `long` are the chain functions themselves (each its own type), so that each
/// is inlined into its timed loop rather than called through a pointer.
fn chain_slope(
    runner: &mut Runner,
    name: &str,
    method: &str,
    (ops, short): (usize, impl Fn(u64) -> u64),
    long: impl Fn(u64) -> u64,
) -> Result<BenchResult, Interrupted> {
    let mut x = std::hint::black_box(3u64);
    let mut y = std::hint::black_box(3u64);
    runner.bench_slope(
        name,
        method,
        (ops as u64, move || {
            x = short(x);
            x
        }),
        (2 * ops as u64, move || {
            y = long(y);
            y
        }),
    )
}

/// `N` dependent additions to `x` of a register holding one, a value the core learns only
/// when the chain runs.
#[inline(always)]
fn add_chain<const N: usize>(mut x: u64) -> u64 {
    let step = std::hint::black_box(1u64);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: register arithmetic only; no memory, stack or flags are relied upon.
    unsafe {
        std::arch::asm!(".rept {n}", "add {x}, {step}", ".endr", n = const N, x = inout(reg) x, step = in(reg) step, options(nomem, nostack));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above.
    unsafe {
        std::arch::asm!(".rept {n}", "add {x}, {x}, {step}", ".endr", n = const N, x = inout(reg) x, step = in(reg) step, options(nomem, nostack));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for _ in 0..N {
        x = std::hint::black_box(x) + step;
    }
    x
}

/// `N` dependent multiplications of `x` by itself.
#[inline(always)]
fn multiply_chain<const N: usize>(mut x: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: register arithmetic only; no memory, stack or flags are relied upon.
    unsafe {
        std::arch::asm!(".rept {n}", "imul {x}, {x}", ".endr", n = const N, x = inout(reg) x, options(nomem, nostack));
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above.
    unsafe {
        std::arch::asm!(".rept {n}", "mul {x}, {x}, {x}", ".endr", n = const N, x = inout(reg) x, options(nomem, nostack));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for _ in 0..N {
        x = std::hint::black_box(x).wrapping_mul(x);
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A multiply that takes three add cycles leaves the cycle alone; one that reads six
    /// times as many (an add chain folded at rename: 0.056 ns "cycles" beside a 1.01 ns
    /// multiply, as an Emerald Rapids core gave) puts it in doubt, naming both figures.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_multiply_far_from_three_cycles_puts_the_cycle_in_doubt() {
        assert_eq!(cross_check(0.337, 1.012), None);
        assert_eq!(cross_check(0.337, 3.25 * 0.337), None);
        assert!(cross_check(0.337, 3.5 * 0.337).is_some());
        let doubt = cross_check(0.056, 1.012);
        assert!(
            matches!(doubt, Some(Warning::CycleUncertain { add_ns, multiply_ns, .. })
                if add_ns == 0.056 && multiply_ns == 1.012),
            "{doubt:?}"
        );
        let cycle = Cycle {
            result: BenchResult::derived("c", "m", vec![0.056], Vec::new(), Vec::new()).unwrap(),
            doubt,
        };
        let with_cycles = BenchResult::derived("a", "m", vec![1.0], Vec::new(), Vec::new())
            .unwrap()
            .with_parameter("cycles_per_load", 17.8);
        let without = BenchResult::derived("b", "m", vec![1.0], Vec::new(), Vec::new()).unwrap();
        let mut results = [with_cycles, without];
        cycle.mark(&mut results);
        assert_eq!(results[0].warnings.len(), 1);
        assert!(results[1].warnings.is_empty());
    }

    #[test]
    fn the_chains_do_their_arithmetic() {
        assert_eq!(add_chain::<64>(1), 65);
        assert_eq!(add_chain::<128>(1), 129);
        assert_eq!(multiply_chain::<2>(3), 81);
    }
}
