//! `cpu.call`: a call to an empty function that is not inlined, and its return.
//!
//! The function's body is an empty `asm!` block: it emits no instruction, but the compiler
//! must assume it has effects, so it can neither inline the function away nor delete the
//! call. What is left is `call` + `ret`, which the return-stack buffer predicts perfectly: the
//! figure is the cheapest possible call, not one that misses the branch predictor or caches.
//!
//! The figure is the slope between one and three calls per iteration of the engine's loop:
//! calls chain through the stack pointer and the return-stack buffer, and the loop's own
//! instructions run beside them, so subtracting an empty loop would take off time the calls
//! never spent.

use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use std::arch::asm;

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "cpu.call",
    method: "direct call to an empty non-inlined function and its return",
    timing: crate::Timing::Slope,
    results: &["cpu.call/empty"],
    typical: Typical::quick_full(0.32, 1.4),
    extras: crate::Extras::NONE,
    presentation: latlab_engine::presentation::Presentation {
        // A call and its return, predicted by the return-stack buffer: cycles of the core.
        on_core_clock: &["cpu.call/empty"],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

#[inline(never)]
fn empty_function() {
    // SAFETY: an empty instruction sequence touches no memory, stack or flags.
    unsafe { asm!("", options(nomem, nostack, preserves_flags)) };
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let result = ctx.runner.bench_slope(
        "cpu.call/empty",
        "call + ret of an empty #[inline(never)] function whose body the compiler cannot see \
         into: the slope between one and three calls per iteration",
        (1, empty_function),
        (3, || {
            empty_function();
            empty_function();
            empty_function();
        }),
    )?;
    Ok(vec![result])
}
