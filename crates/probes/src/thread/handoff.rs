//! `thread.handoff`: two threads waking each other through semaphores (futex ping-pong).
//!
//! Each thread has its own semaphore ([`Semaphore`]). The measuring thread posts its peer's
//! and waits on its own; the peer waits on its own and posts back. One timed call is one
//! round trip, two hand-offs, and the figure is per hand-off: a post, a `FUTEX_WAKE`, the
//! wakee being scheduled, and its `FUTEX_WAIT` returning. Measured twice:
//!
//! * `same-cpu`: both threads pinned to one CPU, so each hand-off is a context switch on it;
//! * `two-cpus`: pinned to two different CPUs, so each hand-off wakes an idle CPU (an
//!   inter-processor interrupt, and on a VM an exit to the hypervisor).

use super::semaphore::Semaphore;
use super::{Pair, cpu_pair};
use crate::helper::spawn_pinned;
use crate::peer::{Failure, time_limit};
use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use latlab_engine::host::AffinityGuard;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "thread.handoff",
    method: "two threads posting each other's futex semaphore: time per hand-off",
    timing: crate::Timing::LessEmptyLoop,
    results: &["thread.handoff/same-cpu", "thread.handoff/two-cpus"],
    typical: Typical::quick_full(0.25, 2.1),
    extras: crate::Extras::NONE,
    presentation: latlab_engine::presentation::Presentation {
        checked_by: &[latlab_engine::presentation::CheckedBy {
            check: latlab_engine::presentation::StabilityCheck::CoreToCore,
            results: &["thread.handoff/two-cpus"],
        }],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let mut results = Vec::new();
    for pair in [Pair::SameCpu, Pair::TwoCpus] {
        let Some((mine, theirs)) = cpu_pair(ctx.host().as_ref(), pair) else {
            continue;
        };
        results.push(measure(ctx, pair, mine, theirs)?);
    }
    Ok(results)
}

fn measure(
    ctx: &mut ProbeContext,
    pair: Pair,
    mine: usize,
    theirs: usize,
) -> Result<BenchResult, ProbeError> {
    let limit = time_limit(ctx.runner);
    let failure = Failure::default();
    let (ping, pong) = (
        Arc::new(Semaphore::default()),
        Arc::new(Semaphore::default()),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let host = ctx.host().clone();
    let _affinity = AffinityGuard::save(&host);
    host.pin_to_cpu(mine).map_err(ProbeError::Failed)?;
    let peer = {
        let (ping, pong, stop, failure) = (
            Arc::clone(&ping),
            Arc::clone(&pong),
            Arc::clone(&stop),
            failure.clone(),
        );
        spawn_pinned(&host, "latlab-handoff", theirs, move |pinned| {
            if let Err(e) = pinned {
                failure.fail(e);
            }
            while !stop.load(Ordering::Relaxed) {
                if ping.wait(limit).is_err() {
                    break;
                }
                pong.post();
            }
        })?
    };
    let name = format!("thread.handoff/{}", pair.label());
    let outcome = failure.guard(ctx.runner, |runner| {
        Ok(runner.bench(
            &name,
            &format!("futex semaphore ping-pong, {}", pair.describe(mine, theirs)),
            || {
                // Once the peer has stopped, each call would wait out the limit again: the
                // rest of the sample returns at once, and the runner stops at its end.
                if failure.has_failed() {
                    return;
                }
                ping.post();
                if pong.wait(limit).is_err() {
                    failure.fail(format!("{name}: the peer thread stopped answering"));
                }
            },
        )?)
    });
    stop.store(true, Ordering::Relaxed);
    ping.post();
    let _ = peer.join();
    let result = outcome?
        .per_operation(2)
        .with_parameter(latlab_engine::names::key::CPUS, vec![mine, theirs]);
    // On one CPU each hand-off is a switch: that is the figure, not a disturbance.
    Ok(match pair {
        Pair::SameCpu => result.measuring_switches(),
        Pair::TwoCpus => result,
    })
}
