//! `clock.read`: the cost of one read of latlab's own clock, and its resolution.
//!
//! *Cost*: the clock's start read (on x86-64 `lfence; rdtsc`) called back to back in the
//! calibrated loop, the empty loop subtracted: what a timestamp costs when nothing else is in
//! flight. *Resolution*: the smallest non-zero step between two consecutive reads, observed
//! many times. For a TSC the step is the read's own latency, far above its tick (a fraction
//! of a nanosecond); for an OS clock it can be the clock's real granularity. Every figure
//! latlab prints near these two is at the edge of what it can resolve.

use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use latlab_engine::parameters::Key;

const CLOCK: Key = Key::new("clock");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "clock.read",
    method: "latlab's clock read back to back (cost) and its smallest non-zero step (resolution)",
    timing: crate::Timing::LessEmptyLoop,
    results: &["clock.read/cost", "clock.read/resolution"],
    typical: Typical::quick_full(0.06, 0.82),
    extras: crate::Extras {
        timing_note: Some(
            "reads fenced with lfence do not overlap the empty loop; the resolution: consecutive reads, each step on its own",
        ),
        ..crate::Extras::NONE
    },
    presentation: latlab_engine::presentation::Presentation::NONE,
    run,
};

/// How many resolution observations per requested sample: they take nanoseconds each.
const OBSERVATIONS_PER_SAMPLE: usize = 10;

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let clock = ctx.runner.clock().clone();
    let how = clock.info().method.clone();
    let cost = ctx
        .runner
        .bench(
            "clock.read/cost",
            &format!("one clock read ({how}), back to back in a calibrated loop"),
            || clock.start(),
        )?
        .with_parameter(CLOCK, &how);
    let count = ctx.runner.config().samples * OBSERVATIONS_PER_SAMPLE;
    let resolution = ctx
        .runner
        .observe(
            "clock.read/resolution",
            &format!("smallest non-zero step between two consecutive reads ({how})"),
            count,
            |clock| clock.smallest_step(),
        )?
        .with_parameter(CLOCK, &how);
    Ok(vec![cost, resolution])
}
