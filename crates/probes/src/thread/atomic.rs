//! `thread.atomic`: an atomic increment, alone and fought over.
//!
//! `fetch_add(1)` on a 64-bit word (`lock xadd` on x86-64, an LSE `ldadd` or an
//! exclusive-monitor loop on aarch64). `uncontended`: one thread; the line stays in its
//! cache. `contended`: a second thread pinned to another CPU increments the same word in a
//! loop, so each increment must first take the line back from the other CPU.

use super::with_contender;
use crate::peer::time_limit;
use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "thread.atomic",
    method: "atomic fetch_add on one word, alone and against a second CPU doing the same",
    timing: crate::Timing::LessEmptyLoop,
    results: &["thread.atomic/uncontended", "thread.atomic/contended"],
    typical: Typical::quick_full(0.29, 1.6),
    extras: crate::Extras::NONE,
    presentation: latlab_engine::presentation::Presentation {
        checked_by: &[latlab_engine::presentation::CheckedBy {
            check: latlab_engine::presentation::StabilityCheck::CoreToCore,
            results: &["thread.atomic/contended"],
        }],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let limit = time_limit(ctx.runner);
    let counter = Arc::new(AtomicU64::new(0));
    let mut results = vec![ctx.runner.bench(
        "thread.atomic/uncontended",
        "fetch_add(1) on a word no other thread touches",
        || counter.fetch_add(1, Ordering::Relaxed),
    )?];
    let theirs = Arc::clone(&counter);
    let contended = with_contender(
        &ctx.host().clone(),
        limit,
        move || {
            theirs.fetch_add(1, Ordering::Relaxed);
        },
        |mine, other| {
            ctx.runner.bench(
                "thread.atomic/contended",
                &format!("fetch_add(1) on CPU {mine} while CPU {other} increments the same word"),
                || counter.fetch_add(1, Ordering::Relaxed),
            )
        },
    )?;
    if let Some(result) = contended {
        results.push(result?);
    }
    Ok(results)
}
