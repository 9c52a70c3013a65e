//! Benchmarking your own code with the engine alone, and what it says when the compiler
//! deleted the work.
//!
//! `cargo run --release -p latlab-engine --example verdicts`

use latlab_engine::{Config, Runner};
use std::hint::black_box;

fn main() {
    let mut runner = Runner::new(Config::quick());
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let cases = [
        runner.bench("empty", "a closure with no work", || {}),
        runner.bench("unused", "a product nobody reads", || {
            let _unused = 3u64.wrapping_mul(7);
        }),
        runner.bench(
            "one multiply",
            "one dependent 64-bit multiplication",
            || {
                x = black_box(x).wrapping_mul(0x2545_f491_4f6c_dd1d);
                x
            },
        ),
    ];
    for result in cases.into_iter().map(|r| r.expect("not interrupted")) {
        println!(
            "{:<13} median {:>6.3} ns  (95% CI {:.3} … {:.3}, empty loop {:.3} ns/iter)  {:?}",
            result.name,
            result.summary.median,
            result.summary.median_ci95[0],
            result.summary.median_ci95[1],
            result.loop_overhead_ns.unwrap_or(0.0),
            result.verdict
        );
    }
}
