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
//! rename and retire it several times faster than one add a cycle, which reads the cycle
//! several times short (the book's methods, "The figures behind the rules"). A second chain of another instruction of known latency ([`CHECK`]) is
//! timed beside it, and the ratio of the two says whether the add chain really took one
//! cycle an add: on x86-64 dependent multiplies (three cycles on every current core, Intel
//! and AMD), recorded as `imul_cycles`; on aarch64 dependent exclusive ors of a register
//! (one cycle on every current Arm core, as an add; a 64-bit `mul` takes 2 to 4 cycles
//! there, so it is recorded as `imul_cycles` but not judged), recorded as `eor_cycles`.
//! The two chains are sampled side by side, and the check is judged by the cycles of each
//! pair of samples taken together: when the 95% interval of those cycles lies wholly more
//! than [`CYCLE_TOLERANCE`] from its expected cycles, the cycle carries a
//! [`Warning::CycleUncertain`] naming both figures, and [`Cycle::mark`] gives the same
//! warning to every figure in cycles built on it. Measured one after the other and judged
//! by their medians alone, a check as noisy as its tolerance flagged quiet runs (an Emerald
//! Rapids guest read 2.68 to 2.95 multiply cycles where an independent program read 2.94
//! to 2.99).

use crate::host::Closure;
use crate::model::{BenchResult, Warning};
use crate::parameters::Key;
use crate::stats::Summary;
use crate::{Interrupted, Runner, analysis};

const CORE_CLOCK_GHZ: Key = Key::new("core_clock_ghz");
/// The 95% interval of the check chain's cycles per instruction, from the pairs of samples
/// of the two chains taken together.
const CHECK_CYCLES_LOW: Key = Key::new("check_cycles_low");
const CHECK_CYCLES_HIGH: Key = Key::new("check_cycles_high");
#[cfg(target_arch = "aarch64")]
const EOR_CYCLES: Key = Key::new("eor_cycles");
/// The multiply chain's cycles per instruction, beside the cycle (recorded, not judged).
pub const IMUL_CYCLES: Key = Key::new("imul_cycles");

pub use crate::result_names::{CYCLE_PROBE, CYCLE_RESULT, EOR_RESULT, MULTIPLY_RESULT};

/// Additions per call of the shorter body; the longer one performs twice as many.
const ADDS_PER_CALL: usize = 64;
/// Multiplies per call of the shorter multiply body; the longer one performs twice as many.
const MULTIPLIES_PER_CALL: usize = 32;
/// Exclusive ors per call of the shorter body of aarch64's check; the longer, twice as many.
#[cfg(target_arch = "aarch64")]
const EORS_PER_CALL: usize = 64;

/// The chain that checks the add chain on this architecture: its instruction, and how many
/// cycles it takes on every current core of the architecture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Check {
    pub instruction: &'static str,
    pub expected_cycles: f64,
}

/// The check of this architecture: a 64-bit `imul` (3 cycles) on x86-64, an `eor` of two
/// registers (1 cycle) on aarch64; none elsewhere.
pub const CHECK: Option<Check> = if cfg!(target_arch = "x86_64") {
    Some(Check {
        instruction: "imul",
        expected_cycles: 3.0,
    })
} else if cfg!(target_arch = "aarch64") {
    Some(Check {
        instruction: "eor",
        expected_cycles: 1.0,
    })
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

    /// The doubt the check's chain casts on the cycle, when it reads more than
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

/// The doubt about a cycle of `add_ns` that the check (`check`, one instruction in
/// `check_ns`) casts: when `interval`, the 95% interval of the check's cycles in the samples
/// of the two chains taken together, lies wholly more than [`CYCLE_TOLERANCE`] away from
/// its expected cycles. A check as noisy as its tolerance no longer cries wolf: its
/// disagreement must stand beyond its own noise.
pub fn cross_check(
    add_ns: f64,
    check: Check,
    check_ns: f64,
    interval: [f64; 2],
) -> Option<Warning> {
    let [low, high] = interval.map(|cycles| cycles / check.expected_cycles);
    let off = high < 1.0 - CYCLE_TOLERANCE || low > 1.0 + CYCLE_TOLERANCE;
    off.then(|| Warning::CycleUncertain {
        add_ns,
        check: check.instruction.to_string(),
        check_ns,
        expected_cycles: check.expected_cycles,
    })
}

/// One cycle of the core clock, as a result named [`CYCLE_RESULT`] (nanoseconds per
/// cycle), with the frequency, the check chain's length in those cycles (`imul_cycles`, 3
/// on x86-64 where the add chain is right; on aarch64 `eor_cycles`, 1 there, and the
/// multiply's recorded) and that length's 95% interval (`check_cycles_low`,
/// `check_cycles_high`) as parameters. The slope between chains of 64 and 128 additions per
/// call: the loop's own instructions run beside the chain, so subtracting an empty loop's
/// cost would take off time the chain never spent and read the clock a few per cent fast.
/// The add chain and the check chain are sampled side by side, so that a clock that moves
/// while they run moves both alike, and the check is judged by the cycles of each pair of
/// samples taken together, with its interval.
pub fn measure(runner: &mut Runner) -> Result<Cycle, Interrupted> {
    let add = Chain {
        name: CYCLE_RESULT,
        method: "one dependent 64-bit register add (one cycle) in a chain carried across \
                 calls: the slope between 64 and 128 adds per call, sampled side by side with \
                 the check chain",
        ops: ADDS_PER_CALL,
    };
    #[cfg(not(target_arch = "aarch64"))]
    let (result, check) = side_by_side(
        runner,
        (
            add,
            add_chain::<ADDS_PER_CALL>,
            add_chain::<{ 2 * ADDS_PER_CALL }>,
        ),
        (
            MULTIPLY,
            multiply_chain::<MULTIPLIES_PER_CALL>,
            multiply_chain::<{ 2 * MULTIPLIES_PER_CALL }>,
        ),
    )?;
    #[cfg(target_arch = "aarch64")]
    let (result, check) = side_by_side(
        runner,
        (
            add,
            add_chain::<ADDS_PER_CALL>,
            add_chain::<{ 2 * ADDS_PER_CALL }>,
        ),
        (
            Chain {
                name: EOR_RESULT,
                method: "one dependent 64-bit exclusive or of two registers (one cycle) in a \
                         chain carried across calls",
                ops: EORS_PER_CALL,
            },
            eor_chain::<EORS_PER_CALL>,
            eor_chain::<{ 2 * EORS_PER_CALL }>,
        ),
    )?;
    let ns = result.summary.median;
    let paired = paired_cycles(&result, &check);
    let mut result = result
        .with_parameter(CORE_CLOCK_GHZ, 1.0 / ns)
        .with_parameter(CHECK_CYCLES_LOW, paired[0])
        .with_parameter(CHECK_CYCLES_HIGH, paired[1]);
    #[cfg(not(target_arch = "aarch64"))]
    {
        result = result.with_parameter(IMUL_CYCLES, check.summary.median / ns);
    }
    #[cfg(target_arch = "aarch64")]
    {
        let multiply = chain_slope(
            runner,
            MULTIPLY,
            (MULTIPLIES_PER_CALL, multiply_chain::<MULTIPLIES_PER_CALL>),
            multiply_chain::<{ 2 * MULTIPLIES_PER_CALL }>,
        )?;
        result = result
            .with_parameter(IMUL_CYCLES, multiply.summary.median / ns)
            .with_parameter(EOR_CYCLES, check.summary.median / ns);
    }
    let doubt = CHECK.and_then(|c| cross_check(ns, c, check.summary.median, paired));
    result.warnings.extend(doubt.clone());
    Ok(Cycle { result, doubt })
}

/// A chain to time: its result's name and method, and its operations a call in the shorter
/// body (the longer performs twice as many).
#[derive(Clone, Copy)]
struct Chain {
    name: &'static str,
    method: &'static str,
    ops: usize,
}

/// The multiply chain: x86-64's check, recorded beside aarch64's.
const MULTIPLY: Chain = Chain {
    name: MULTIPLY_RESULT,
    method: "one dependent 64-bit multiply (three cycles) in a chain carried across calls",
    ops: MULTIPLIES_PER_CALL,
};

/// The 95% interval of the check chain's cycles: the median, over the pairs of samples of
/// the two slopes taken together, of the check's time over the add's, and its interval
/// (distribution-free). A clock that moved between samples moved both of a pair; what is
/// left is the chains' own noise. Too few pairs to bound it: the whole line.
fn paired_cycles(add: &BenchResult, check: &BenchResult) -> [f64; 2] {
    let ratios: Vec<f64> = (add.samples_ns.iter().zip(&check.samples_ns))
        .filter(|(a, c)| **a > 0.0 && **c > 0.0)
        .map(|(a, c)| c / a)
        .collect();
    match Summary::of(&ratios) {
        Some(summary) if summary.has_interval() => summary.median_ci95,
        _ => [0.0, f64::INFINITY],
    }
}

/// The slopes per operation of two chains, their bodies (the shorter and the longer of each)
/// sampled side by side: the i-th samples of the four were taken together. Each chain
/// continues from one call to the next: were each call to start afresh, the core would
/// overlap consecutive chains and time the units' throughput, not their latency. The chain
/// functions are given themselves (each its own type), so that each is inlined into its
/// timed loop rather than called through a pointer.
fn side_by_side(
    runner: &mut Runner,
    (a, a_short, a_long): (Chain, impl Fn(u64) -> u64, impl Fn(u64) -> u64),
    (b, b_short, b_long): (Chain, impl Fn(u64) -> u64, impl Fn(u64) -> u64),
) -> Result<(BenchResult, BenchResult), Interrupted> {
    let testable = analysis::SLOPE_SAMPLES_PER_ROUND * runner.config().rounds();
    runner.scoped(
        |config| config.samples = config.samples.max(testable),
        |runner| {
            let subjects = [(a.name, a.method), (a.name, a.method)];
            let subjects = [subjects, [(b.name, b.method); 2]].concat();
            let [a_s, a_l, b_s, b_l] = runner
                .bench_interleaved(
                    &subjects,
                    &mut [
                        &mut carried(a.ops, a_short),
                        &mut carried(2 * a.ops, a_long),
                        &mut carried(b.ops, b_short),
                        &mut carried(2 * b.ops, b_long),
                    ],
                )?
                .try_into()
                .expect("one result per body");
            let slope =
                |ops: usize, short, long| runner.slope((ops as u64, short), (2 * ops as u64, long));
            Ok((slope(a.ops, a_s, a_l), slope(b.ops, b_s, b_l)))
        },
    )
}

/// A body of `ops` operations a call running `chain` on from where its last call stopped.
fn carried(ops: usize, chain: impl Fn(u64) -> u64) -> Closure<impl FnMut() -> u64> {
    let mut x = std::hint::black_box(3u64);
    Closure {
        body: move || {
            x = chain(x);
            x
        },
        operations: ops as u64,
    }
}

/// The slope per operation between `short` (`ops` operations a call) and `long` (twice as
/// many), each chain carried across calls ([`carried`]).
#[cfg(target_arch = "aarch64")]
fn chain_slope(
    runner: &mut Runner,
    chain: Chain,
    (ops, short): (usize, impl Fn(u64) -> u64),
    long: impl Fn(u64) -> u64,
) -> Result<BenchResult, Interrupted> {
    let mut x = std::hint::black_box(3u64);
    let mut y = std::hint::black_box(3u64);
    runner.bench_slope(
        chain.name,
        chain.method,
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

/// `N` dependent exclusive ors of `x` with a register holding a value the core learns only
/// when the chain runs (so that no renamer can fold the chain, as one could a constant).
#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn eor_chain<const N: usize>(mut x: u64) -> u64 {
    let mask = std::hint::black_box(0x5555_5555_5555_5555u64);
    // SAFETY: register arithmetic only; no memory, stack or flags are relied upon.
    unsafe {
        std::arch::asm!(".rept {n}", "eor {x}, {x}, {mask}", ".endr", n = const N, x = inout(reg) x, mask = in(reg) mask, options(nomem, nostack));
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
    /// times as many (an add chain folded at rename) puts it in doubt, naming both figures.
    const IMUL: Check = Check {
        instruction: "imul",
        expected_cycles: 3.0,
    };
    const EOR: Check = Check {
        instruction: "eor",
        expected_cycles: 1.0,
    };

    /// Judged by its interval: a check whose interval reaches the tolerance leaves the cycle
    /// alone, however far its median; one whose interval lies wholly beyond it (an add chain
    /// folded at rename: the book's memory methods, "The figures behind the rules") puts it
    /// in doubt, naming both figures, and so every figure in cycles.
    #[test]
    fn a_check_wholly_beyond_its_tolerance_puts_the_cycle_in_doubt() {
        assert_eq!(cross_check(0.337, IMUL, 1.012, [2.9, 3.1]), None);
        // A quiet run whose median lies past the tolerance, its interval within it.
        assert_eq!(cross_check(0.4, IMUL, 2.68 * 0.4, [2.5, 2.8]), None);
        assert!(cross_check(0.4, IMUL, 2.5 * 0.4, [2.4, 2.65]).is_some());
        assert!(cross_check(0.337, IMUL, 3.5 * 0.337, [3.4, 3.6]).is_some());
        let doubt = cross_check(0.056, IMUL, 1.012, [16.0, 20.0]);
        assert!(
            matches!(&doubt, Some(Warning::CycleUncertain { add_ns, check, check_ns, .. })
                if *add_ns == 0.056 && check == "imul" && *check_ns == 1.012),
            "{doubt:?}"
        );
        let cycle = Cycle {
            result: BenchResult::derived("c", "m", vec![0.056], Vec::new(), Vec::new()).unwrap(),
            doubt,
        };
        let with_cycles = BenchResult::derived("a", "m", vec![1.0], Vec::new(), Vec::new())
            .unwrap()
            .with_parameter(crate::names::key::CYCLES_PER_LOAD, 17.8);
        let without = BenchResult::derived("b", "m", vec![1.0], Vec::new(), Vec::new()).unwrap();
        let mut results = [with_cycles, without];
        cycle.mark(&mut results);
        assert_eq!(results[0].warnings.len(), 1);
        assert!(results[1].warnings.is_empty());
    }

    /// aarch64's check: an `eor` takes one add cycle; an add chain folded to a fifth of a
    /// cycle an add (as Golden Cove folds immediates) reads five.
    #[test]
    fn an_eor_far_from_one_cycle_puts_the_cycle_in_doubt() {
        assert_eq!(cross_check(0.333, EOR, 0.34, [0.98, 1.06]), None);
        let doubt = cross_check(0.333 / 5.0, EOR, 0.333, [4.6, 5.3]);
        assert!(
            matches!(&doubt, Some(Warning::CycleUncertain { check, expected_cycles, .. })
                if check == "eor" && *expected_cycles == 1.0),
            "{doubt:?}"
        );
    }

    /// On the synthetic machine, whose clock drifts between measurements as a shared guest's
    /// does: sampled side by side, at most one quiet run in ten flags the cycle (none of
    /// twenty here); a core that folds additions is flagged every time.
    #[test]
    fn a_drifting_clock_is_no_doubt_and_folded_additions_are() {
        use crate::host::{Machine, Noise, SyntheticHost};
        let doubted = |folds_additions: bool| {
            (0..20)
                .filter(|&seed| {
                    let host = SyntheticHost::noisy(Noise {
                        seed,
                        round_sd: 0.15,
                        sample_sd: 0.03,
                        machine: Machine {
                            folds_additions,
                            ..Machine::default()
                        },
                        ..Noise::default()
                    });
                    let mut runner = Runner::on(std::sync::Arc::new(host), crate::Config::quick());
                    measure(&mut runner).unwrap().doubt().is_some()
                })
                .count()
        };
        assert!(
            doubted(false) <= 1,
            "{} of 20 quiet runs doubted",
            doubted(false)
        );
        assert_eq!(doubted(true), 20);
    }

    #[test]
    fn the_chains_do_their_arithmetic() {
        assert_eq!(add_chain::<64>(1), 65);
        assert_eq!(add_chain::<128>(1), 129);
        assert_eq!(multiply_chain::<2>(3), 81);
        #[cfg(target_arch = "aarch64")]
        {
            assert_eq!(eor_chain::<1>(0), 0x5555_5555_5555_5555);
            assert_eq!(eor_chain::<2>(7), 7);
        }
    }
}
