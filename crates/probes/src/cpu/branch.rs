//! `cpu.branch`: the cost of a mispredicted conditional branch.
//!
//! One conditional jump per iteration, decided by the next byte of a 64 KiB pattern read in
//! order (sequential, so the loads are prefetched and hit the cache alike for both patterns).
//! The jump is written in inline assembly: in plain Rust the compiler turns such a branch
//! into a conditional move, and there would be nothing to mispredict.
//!
//! * *random*: each byte is 0 or 1 from a fixed-seed generator. 64 Ki outcomes with no
//!   pattern are far beyond what a branch predictor can learn, so it guesses right half the
//!   time.
//! * *predictable*: the same number of ones, alternating 0, 1, 0, 1, which every predictor
//!   learns at once.
//!
//! The difference per branch, sample by sample, is the cost of the mispredictions; doubling
//! it gives the penalty of one misprediction, since a random bit is mispredicted half the time.

use crate::random::SplitMix64;
use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use latlab_engine::names::key;
use latlab_engine::parameters::Key;

const PATTERN_BYTES: Key = Key::new("pattern_bytes");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "cpu.branch",
    method: "a data-dependent conditional jump on a random vs an alternating 0/1 pattern",
    timing: crate::Timing::Difference,
    results: &[
        "cpu.branch/random",
        "cpu.branch/predictable",
        "cpu.branch/difference",
        "cpu.branch/mispredict",
    ],
    typical: Typical::quick_full(0.23, 2.0),
    extras: crate::Extras {
        timing_note: Some("unpredictable minus predictable branches"),
        ..crate::Extras::NONE
    },
    presentation: latlab_engine::presentation::Presentation {
        headline: &[crate::headline_row(
            20,
            "Branch mispredict",
            Some("branch_mispredict"),
            MISPREDICT,
            "",
        )],
        // A loop of compares and jumps on data in L1: the misprediction's cost is the
        // pipeline's refill, in cycles.
        on_core_clock: &[
            "cpu.branch/random",
            "cpu.branch/predictable",
            "cpu.branch/difference",
            MISPREDICT,
        ],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

const MISPREDICT: &str = "cpu.branch/mispredict";

const PATTERN_LEN: usize = 64 * 1024;
type Pattern = Box<[u8; PATTERN_LEN]>;

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let random = measure(ctx, "random", random_pattern())?;
    let predictable = measure(ctx, "predictable", alternating_pattern())?;
    let difference = BenchResult::derived_difference(
        "cpu.branch/difference",
        "random − predictable time per branch, paired by sample index",
        &random,
        &predictable,
        1.0,
    );
    let penalty = BenchResult::derived_difference(
        MISPREDICT,
        "2 × (random − predictable) per branch: a random bit is mispredicted half the time",
        &random,
        &predictable,
        2.0,
    );
    Ok([Some(random), Some(predictable), difference, penalty]
        .into_iter()
        .flatten()
        .collect())
}

fn measure(
    ctx: &mut ProbeContext,
    label: &str,
    pattern: Pattern,
) -> Result<BenchResult, ProbeError> {
    let mut index = 0usize;
    let mut taken = 0u64;
    let result = ctx
        .runner
        .bench(
            &format!("cpu.branch/{label}"),
            &format!("one conditional jump on the next byte of a {label} 64 KiB 0/1 pattern"),
            move || {
                taken = jump_unless_zero(pattern[index], taken);
                index = (index + 1) % PATTERN_LEN;
                taken
            },
        )?
        .with_parameter(key::PATTERN, label)
        .with_parameter(PATTERN_BYTES, PATTERN_LEN);
    Ok(result)
}

/// `count + 1` when `bit` is non-zero, else `count`, by a conditional jump the compiler
/// cannot turn into a conditional move.
#[inline(always)]
fn jump_unless_zero(bit: u8, mut count: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the sequence only reads `bit` and updates `count` in registers; it touches no
    // memory or stack. The jump target is a local label inside the same block.
    unsafe {
        std::arch::asm!(
            "test {bit}, {bit}",
            "jz 2f",
            "add {count}, 1",
            "2:",
            bit = in(reg_byte) bit,
            count = inout(reg) count,
            options(nomem, nostack),
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: as above.
    unsafe {
        std::arch::asm!(
            "cbz {bit:w}, 2f",
            "add {count}, {count}, #1",
            "2:",
            bit = in(reg) u32::from(bit),
            count = inout(reg) count,
            options(nomem, nostack),
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    if std::hint::black_box(bit) != 0 {
        count += 1;
    }
    count
}

fn random_pattern() -> Pattern {
    let mut rng = SplitMix64::seeded(0x2545_f491_4f6c_dd1d);
    let mut pattern: Pattern = Box::new([0; PATTERN_LEN]);
    for byte in pattern.iter_mut() {
        *byte = (rng.next_u64() >> 32) as u8 & 1;
    }
    pattern
}

fn alternating_pattern() -> Pattern {
    let mut pattern: Pattern = Box::new([0; PATTERN_LEN]);
    for (i, byte) in pattern.iter_mut().enumerate() {
        *byte = (i % 2) as u8;
    }
    pattern
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_have_half_ones() {
        let ones = |p: &Pattern| p.iter().filter(|&&b| b == 1).count();
        let random = random_pattern();
        assert!(random.iter().all(|&b| b <= 1));
        let share = ones(&random) as f64 / PATTERN_LEN as f64;
        assert!((0.48..0.52).contains(&share), "{share}");
        assert_eq!(ones(&alternating_pattern()), PATTERN_LEN / 2);
    }

    #[test]
    fn the_jump_counts_ones() {
        let count = [1u8, 0, 1, 1, 0]
            .iter()
            .fold(0, |c, &b| jump_unless_zero(b, c));
        assert_eq!(count, 3);
    }

    #[test]
    fn random_branches_are_slower_than_predictable_ones() {
        if crate::skipped_under_emulation() {
            return;
        }
        let mut runner = crate::test_runner(10, std::time::Duration::from_millis(1));
        let mut ctx = ProbeContext::for_test(&mut runner);
        let random = measure(&mut ctx, "random", random_pattern()).unwrap();
        let predictable = measure(&mut ctx, "predictable", alternating_pattern()).unwrap();
        assert!(
            random.summary.median > 2.0 * predictable.summary.median.max(0.1),
            "random {} ns, predictable {} ns",
            random.summary.median,
            predictable.summary.median
        );
    }
}
