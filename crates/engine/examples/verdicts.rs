//! Benchmarking your own code with the engine alone: what it says when the compiler deleted
//! the work, and why a dependent chain of a few cycles is timed by slope.
//!
//! `cargo run --release -p latlab-engine --example verdicts`

use latlab_engine::{BenchResult, Config, Runner};
use std::hint::black_box;

/// `N` dependent 64-bit multiplications of `x` by `k`, which the compiler cannot fold.
#[inline(always)]
fn multiply_chain<const N: usize>(mut x: u64, k: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: register arithmetic only.
    unsafe {
        std::arch::asm!(".rept {n}", "imul {x}, {k}", ".endr", n = const N, x = inout(reg) x,
            k = in(reg) k, options(nomem, nostack));
    }
    #[cfg(not(target_arch = "x86_64"))]
    for _ in 0..N {
        x = black_box(x).wrapping_mul(k);
    }
    x
}

fn main() {
    let mut runner = Runner::new(Config::quick());
    let k = black_box(0x2545_f491_4f6c_dd1d_u64);
    let (mut x, mut y, mut z) = (1u64, 1u64, 1u64);
    let cases = [
        runner.bench("empty", "a closure with no work", || {}),
        runner.bench("unused", "a product nobody reads", || {
            let _unused = 3u64.wrapping_mul(7);
        }),
        runner.bench(
            "multiply, less the empty loop",
            "one dependent multiplication per call",
            || {
                x = multiply_chain::<1>(x, k);
                x
            },
        ),
        runner.bench_slope(
            "multiply, by slope",
            "the slope between 8 and 16 dependent multiplications per call",
            (8, || {
                y = multiply_chain::<8>(y, k);
                y
            }),
            (16, || {
                z = multiply_chain::<16>(z, k);
                z
            }),
        ),
    ];
    for result in cases.into_iter().map(|r| r.expect("not interrupted")) {
        print(&result);
    }
    println!(
        "A multiplication takes 3 cycles on current x86-64 cores. Less the empty loop, the \
         figure keeps what the loop does around the call (x kept in memory between calls) \
         and loses what ran beside the chain; the slope between two chain lengths leaves \
         only the multiplications."
    );
}

fn print(result: &BenchResult) {
    println!(
        "{:<30} median {:>6.3} ns  (95% CI {:.3} … {:.3})  {:?}",
        result.name,
        result.summary.median,
        result.summary.median_ci95[0],
        result.summary.median_ci95[1],
        result.verdict
    );
}
