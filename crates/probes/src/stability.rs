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
//!   latency with few TLB misses (at most 128 MiB, whatever the kernel claims), since under
//!   a hypervisor the cost of a page walk depends on how the host backs each page and moves
//!   by tens of per cent from one mapping to the next;
//! * `stability/cache-chase`: the same chase within the last cache level, its lines filling
//!   twice the level below it (where the last level is at least four times that; the ring
//!   spans four times more, a line in 256 bytes): a VM whose neighbours or
//!   host take the last-level cache away reads main memory here, which the main-memory chase
//!   cannot see. Twice the level below, not more, since a guest often gets a share of the
//!   last level far smaller than the kernel claims (the book's memory methods, "The figures behind the rules");
//! * `stability/core-to-core`: the one-way latency of a cache line between the first two
//!   CPUs the run may use (CAS), as `thread.core_to_core` measures it.
//!
//! Each takes 15 samples of at least 1 ms whatever the suite, well under a second together.
//!
//! The core-to-core pair is also the run's placement reference
//! ([`placement_reference`]): taken again beside every probe whose figures depend on where
//! the CPUs run, it tells a figure taken in another placement from one taken in the run's.

use crate::mem::latency::chase::Layout;
use crate::mem::latency::{PREFETCH_PROOF_STRIDE, Ring, TLB_GROUP_PAGES, measure};
use crate::mem::pages::mapped::page_size;
use crate::thread::core_to_core::{self, Bounce, measure_pair};
use crate::{ProbeContext, ProbeError};
use latlab_engine::BenchResult;
use latlab_engine::analysis::MOVED_SHARE;
use latlab_engine::environment::{CacheInfo, data_cache_sizes};
use latlab_engine::host::AffinityGuard;
use latlab_engine::names::result::{
    STABILITY_CACHE_CHASE, STABILITY_CORE_TO_CORE, STABILITY_MEMORY_CHASE,
};

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

/// The main-memory chase spans twice the last-level cache the kernel reports, but never more
/// than this: enough to miss any last-level cache a guest gets, and a kernel that claims
/// the host's whole L3 does not make every run map half a gigabyte twice.
const MEMORY_CHASE_CEILING: u64 = 128 << 20;

/// The least move of the cache chase that counts: a share of the last-level cache is what a
/// VM's neighbours take and give back all the time (a tenth within single runs:
/// the book's memory methods, "The figures behind the rules"), while a cache taken away altogether reads main memory, many times slower.
const CACHE_MOVED_SHARE: f64 = 0.25;

/// One reference figure and the least change of it that counts as a move.
#[derive(Debug)]
pub struct Reference {
    pub result: BenchResult,
    pub moved_share: f64,
    /// The probe result this reference measures again, by the same method and on the same
    /// CPUs (`thread.core_to_core/one-way/cas/0-1` for the core-to-core pair of CPUs 0 and
    /// 1): a figure of that result and the reference beside it should agree.
    pub reproduces: Option<String>,
}

/// A chase of `size` bytes over `pagegroups`, one line per 256 bytes, named `name`.
fn chase_ring(name: &str, size: u64) -> Ring {
    Ring {
        name: name.to_string(),
        label: "pagegroups",
        layout: Layout::PageGroups {
            group_bytes: TLB_GROUP_PAGES * page_size(),
        },
        size,
        stride: PREFETCH_PROOF_STRIDE,
        line: LINE,
        huge_pages: false,
        slope: false,
    }
}

/// The main-memory chase's working set: twice the last-level cache the kernel reports, at
/// most [`MEMORY_CHASE_CEILING`] and `allowed`.
fn memory_chase_size(last_level: u64, allowed: u64) -> u64 {
    (2 * last_level).min(MEMORY_CHASE_CEILING).min(allowed)
}

/// The main-memory chase's working set when the memory available does not limit it: what a
/// run of any probe maps at its start and end, so what the plan must fit in the memory
/// available (a memory cgroup, `ulimit -v`).
pub fn memory_chase_default(caches: &[CacheInfo]) -> u64 {
    let last_level = caches.iter().map(|c| c.size_bytes).max();
    memory_chase_size(last_level.unwrap_or(FALLBACK_LAST_LEVEL), u64::MAX)
}

/// The last-level cache taken when the kernel reports none.
const FALLBACK_LAST_LEVEL: u64 = 32 << 20;

/// A ring well past the level below the last cache level of `caches` and well within the
/// last: its lines, one per [`PREFETCH_PROOF_STRIDE`] bytes, fill twice the level below, so
/// it spans four times that again. A level holds the lines a chase touches, not the bytes it
/// spans: a ring spanning twice a 2 MiB L2 touches 1 MiB and reads the L2 itself, where the
/// host's neighbours cannot reach. `None` with fewer than two data cache levels, where the
/// last is less than four times the lines touched, or where `allowed` is too small for the
/// span.
fn last_cache_size(caches: &[CacheInfo], allowed: u64) -> Option<u64> {
    let [.., below, last] = data_cache_sizes(caches)[..] else {
        return None;
    };
    let touched = 2 * below;
    let span = touched * (PREFETCH_PROOF_STRIDE / LINE) as u64;
    (4 * touched <= last && span <= allowed).then_some(span)
}

/// The bytes of one cache line the chase reads.
const LINE: usize = 64;

/// Measures the reference figures: the main-memory chase, the last-level-cache chase where
/// the kernel reports two cache levels or more, and the core-to-core pair where the run may
/// use two CPUs.
pub fn reference_figures(ctx: &mut ProbeContext) -> Result<Vec<Reference>, ProbeError> {
    let caches = ctx.host().caches();
    let last_level = caches
        .iter()
        .map(|c| c.size_bytes)
        .max()
        .unwrap_or(FALLBACK_LAST_LEVEL);
    let allowed = ctx.max_working_set();
    let memory = chase_ring(
        STABILITY_MEMORY_CHASE,
        memory_chase_size(last_level, allowed),
    );
    let cache =
        last_cache_size(&caches, allowed).map(|size| chase_ring(STABILITY_CACHE_CHASE, size));
    let host = std::sync::Arc::clone(ctx.host());
    let cpus = host.allowed_cpus();
    ctx.runner.scoped(fixed_size, |runner| {
        let mut references = Vec::new();
        let chases = std::iter::once((memory, MOVED_SHARE))
            .chain(cache.map(|ring| (ring, CACHE_MOVED_SHARE)));
        for (ring, moved_share) in chases {
            references.push(Reference {
                result: measure(runner, ring, None)?,
                moved_share,
                reproduces: None,
            });
        }
        references.extend(core_to_core_pair(runner, &host, &cpus)?);
        Ok(references)
    })
}

/// Measures the placement reference alone: the core-to-core pair, as the run's stability
/// check measures it, taken just before and just after each round of a probe whose
/// figures depend on where the CPUs run (`thread.core_to_core`, the pipe, the hand-off,
/// IPC). `None` where the run may use one CPU.
pub fn placement_reference(ctx: &mut ProbeContext) -> Result<Option<Reference>, ProbeError> {
    let host = std::sync::Arc::clone(ctx.host());
    let cpus = host.allowed_cpus();
    ctx.runner
        .scoped(fixed_size, |runner| core_to_core_pair(runner, &host, &cpus))
}

/// The one-way CAS latency between the first two of `cpus`, named
/// [`STABILITY_CORE_TO_CORE`]; `None` with fewer than two.
fn core_to_core_pair(
    runner: &mut latlab_engine::Runner,
    host: &latlab_engine::SharedHost,
    cpus: &[usize],
) -> Result<Option<Reference>, ProbeError> {
    let [a, b, ..] = cpus[..] else {
        return Ok(None);
    };
    let _affinity = AffinityGuard::save(host);
    let mut pair = measure_pair(runner, Bounce::Cas, a, b)?;
    let reproduces = std::mem::replace(&mut pair.name, STABILITY_CORE_TO_CORE.to_string());
    Ok(Some(Reference {
        result: pair,
        moved_share: core_to_core::MOVED_SHARE,
        reproduces: Some(reproduces),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache;

    /// Every reference is measured on a two-CPU machine with two cache levels past L1, with
    /// their floors, and the chases stay within the working set allowed.
    #[test]
    fn every_reference_within_the_allowed_working_set() {
        let mut runner = crate::synthetic_runner();
        let mut ctx = ProbeContext::for_test(&mut runner);
        // The synthetic machine's L2 is 1 MiB: room for a cache chase of 2 MiB of lines
        // over 8 MiB.
        let allowed = 16 << 20;
        ctx.set_max_size(allowed);
        let references = reference_figures(&mut ctx).unwrap();
        let names: Vec<&str> = references.iter().map(|r| r.result.name.as_str()).collect();
        assert_eq!(
            names,
            [
                STABILITY_MEMORY_CHASE,
                STABILITY_CACHE_CHASE,
                STABILITY_CORE_TO_CORE
            ]
        );
        let span = |r: &Reference| {
            r.result
                .parameter(latlab_engine::names::key::WORKING_SET_BYTES)
                .and_then(|v| v.as_u64())
        };
        assert_eq!(span(&references[0]), Some(allowed));
        assert!(span(&references[1]).unwrap() < allowed);
        assert!(references[2].moved_share > references[0].moved_share);
    }

    /// The cache chase's lines fill twice the level below the last, well inside the last,
    /// whatever size the kernel claims for the last level, and it is left out where there is
    /// no room between them.
    #[test]
    fn the_cache_chase_sits_between_the_last_two_levels() {
        const MIB: u64 = 1 << 20;
        let levels = |l2: u64, l3: u64| {
            vec![
                cache(1, "Data", 48 << 10),
                cache(1, "Instruction", 32 << 10),
                cache(2, "Unified", l2),
                cache(3, "Unified", l3),
            ]
        };
        // A line in four bytes of 256: 2 MiB of lines over 8 MiB.
        assert_eq!(
            last_cache_size(&levels(MIB, 32 * MIB), u64::MAX),
            Some(8 * MIB)
        );
        // A kernel that claims 260 MiB: the chase stays at twice L2's lines.
        assert_eq!(
            last_cache_size(&levels(2 * MIB, 260 * MIB), u64::MAX),
            Some(16 * MIB)
        );
        assert_eq!(last_cache_size(&levels(2 * MIB, 8 * MIB), u64::MAX), None);
        assert_eq!(last_cache_size(&levels(MIB, 32 * MIB), 4 * MIB), None);
        assert_eq!(
            last_cache_size(&[cache(1, "Data", 48 << 10)], u64::MAX),
            None
        );
    }
}
