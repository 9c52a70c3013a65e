//! The run's stability check: two short fixed measurements that a run takes at its start and
//! again at its end, so that it knows whether the machine under it changed.
//!
//! A virtual machine's host moves its vCPUs between cores and its memory between places, and
//! neighbours come and go; within one process the samples are tight, yet a second run minutes
//! later does not repeat the figure. The check measures what moves most:
//!
//! * `stability/memory-chase`: dependent loads over a `pagegroups` ring (random lines within
//!   64-page groups), one line per 256 bytes, of twice the last-level cache (or the largest
//!   working set allowed, if smaller), built on a fresh mapping each time: the main-memory
//!   latency with few TLB misses, since under a hypervisor the cost of a page walk depends
//!   on how the host backs each page and moves by tens of per cent from one mapping to the
//!   next;
//! * `stability/core-to-core`: the one-way latency of a cache line between the first two
//!   CPUs the run may use (CAS), as `thread.core_to_core` measures it.
//!
//! Each takes 15 samples of at least 1 ms whatever the suite, well under a second together.

use crate::mem::buffer::page_size;
use crate::mem::chase::Layout;
use crate::mem::latency::{PREFETCH_PROOF_STRIDE, Ring, TLB_GROUP_PAGES, measure};
use crate::thread::core_to_core::{self, Bounce, measure_pair};
use crate::{ProbeContext, ProbeError};
use latlab_engine::BenchResult;
use latlab_engine::analysis::MOVED_SHARE;
use latlab_engine::host::AffinityGuard;
use latlab_engine::names::result::{STABILITY_CORE_TO_CORE, STABILITY_MEMORY_CHASE};

/// Samples per reference figure, whatever the suite: the start and the end of every run
/// are measured alike, and the check stays short.
const SAMPLES: usize = 15;
/// The least duration of one sample.
const SAMPLE_TIME: std::time::Duration = std::time::Duration::from_millis(1);
/// The most time one reference figure may take.
const BUDGET: std::time::Duration = std::time::Duration::from_millis(400);

fn fixed_size(config: &mut latlab_engine::Config) {
    config.samples = SAMPLES;
    config.target_sample_time = SAMPLE_TIME;
    config.budget = BUDGET;
}

/// One reference figure and the least change of it that counts as a move.
#[derive(Debug)]
pub struct Reference {
    pub result: BenchResult,
    pub moved_share: f64,
}

/// Measures the reference figures: the memory chase, and the core-to-core pair where the run
/// may use two CPUs.
pub fn reference_figures(ctx: &mut ProbeContext) -> Result<Vec<Reference>, ProbeError> {
    let caches = ctx.host().caches();
    let last_level = caches
        .iter()
        .map(|c| c.size_bytes)
        .max()
        .unwrap_or(32 << 20);
    let size = (2 * last_level).min(ctx.max_working_set());
    let ring = Ring {
        name: STABILITY_MEMORY_CHASE.to_string(),
        label: "pagegroups",
        layout: Layout::PageGroups {
            group_bytes: TLB_GROUP_PAGES * page_size(),
        },
        size,
        stride: PREFETCH_PROOF_STRIDE,
        line: 64,
        huge_pages: false,
        slope: false,
    };
    let host = std::sync::Arc::clone(ctx.host());
    let cpus = host.allowed_cpus();
    ctx.runner.scoped(fixed_size, |runner| {
        let chase = measure(runner, ring, None)?;
        let mut references = vec![Reference {
            result: chase,
            moved_share: MOVED_SHARE,
        }];
        if let [a, b, ..] = cpus[..] {
            let _affinity = AffinityGuard::save(&host);
            let mut pair = measure_pair(runner, Bounce::Cas, a, b)?;
            pair.name = STABILITY_CORE_TO_CORE.to_string();
            references.push(Reference {
                result: pair,
                moved_share: core_to_core::MOVED_SHARE,
            });
        }
        Ok(references)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both references are measured on a two-CPU machine, with their floors, and the chase
    /// stays within the working set allowed.
    #[test]
    fn both_references_within_the_allowed_working_set() {
        let mut runner = crate::synthetic_runner();
        let mut ctx = ProbeContext::for_test(&mut runner);
        ctx.memory.max_size_bytes = Some(1 << 20);
        let references = reference_figures(&mut ctx).unwrap();
        let names: Vec<&str> = references.iter().map(|r| r.result.name.as_str()).collect();
        assert_eq!(names, [STABILITY_MEMORY_CHASE, STABILITY_CORE_TO_CORE]);
        let span = references[0].result.parameter("working_set_bytes");
        assert_eq!(span.and_then(|v| v.as_u64()), Some(1 << 20));
        assert!(references[1].moved_share > references[0].moved_share);
    }
}
