//! The pointer chase: a ring of cache lines, each holding the address of the next, walked
//! with dependent loads (`p = *p`), so each load waits for the one before and the time per
//! load is the load-to-use latency of wherever the line lives.
//!
//! The ring's order decides what the hardware can do about it:
//! * [`Layout::Random`]: every line in one random order. The prefetchers see no pattern;
//!   beyond the TLB's reach each load also misses the TLB.
//! * [`Layout::PageGroups`]: lines in random order within groups of pages and groups in
//!   random order, as multichase does: the cache still sees random lines, but the walk stays
//!   within a TLB-sized set of pages for a long time, isolating cache latency from TLB misses.
//! * [`Layout::Sequential`]: lines in address order, which the prefetchers follow: the
//!   difference from the random layouts is what prefetching hides.
//!
//! The ring uses one line per *stride* of the working set. A stride of one line visits every
//! line; cores fetch lines in aligned 128-byte pairs and their spatial prefetchers fetch
//! neighbours, so a miss on one line also brings in lines the ring visits soon after, and
//! some "memory" loads are cache hits. A stride of 256 bytes or more leaves every fetched
//! neighbour unused, as the established memory-latency tools do by default. Which line of
//! its stride a slot uses varies from stride to stride, as multichase's "mixer" varies it:
//! the line at the start of every stride would give every slot the same low address bits,
//! which select the cache set and, in main memory, the channel and bank, so the ring would
//! use a fraction of each, and read main memory slower than multichase does (the book's
//! memory methods, "The figures behind the rules").
//! The working set is always the bytes spanned; the bytes touched are one line per stride.
//!
//! Every layout is a single cycle through every used line of the working set, so between two
//! visits of a line every other line is visited: no part of the set stays cached by being
//! skipped.

use super::{LOADS_PER_CALL, PREFETCH_PROOF_STRIDE, TLB_GROUP_PAGES};
use crate::mem::pages::mapped::MappedBuffer;
use crate::mem::sizes::size_label;
use crate::random::SplitMix64;
use latlab_engine::names::key;
use latlab_engine::{BenchResult, Interrupted, Runner};
use std::io;

/// How the lines of a working set are ordered in the ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    Random,
    PageGroups { group_bytes: usize },
    Sequential,
}

/// A working set laid out as a ring of lines.
pub(crate) struct Chase {
    buffer: MappedBuffer,
    lines: usize,
}

impl Chase {
    /// A ring over `working_set` bytes using one line of every `stride_bytes` (a multiple of
    /// 8, normally of the cache line), which one varying ([`slot_offset`]).
    pub(crate) fn build(
        working_set: usize,
        stride_bytes: usize,
        layout: Layout,
        huge_pages: bool,
    ) -> io::Result<Chase> {
        let lines = (working_set / stride_bytes).max(2);
        let buffer = MappedBuffer::new(lines * stride_bytes, huge_pages)?;
        let order = visiting_order(lines, stride_bytes, layout);
        let base = buffer.as_mut_ptr();
        for (i, &line) in order.iter().enumerate() {
            let next = order[(i + 1) % order.len()];
            // SAFETY: both lines are inside the mapping (`order` holds indices below `lines`)
            // and their starts are aligned for a pointer (the stride is a multiple of 8).
            unsafe {
                let slot = base
                    .add(slot_offset(line, stride_bytes))
                    .cast::<*const u8>();
                slot.write(base.add(slot_offset(next, stride_bytes)));
            }
        }
        Ok(Chase { buffer, lines })
    }

    /// Where the walk starts: the first line of the mapping.
    pub(crate) fn start(&self) -> *const u8 {
        self.buffer.as_mut_ptr()
    }

    /// Walks the whole ring once with loads, as the measurement will. Building the ring
    /// wrote every line in random order, so the caches are full of dirty lines and the page
    /// walker's caches hold the build's pages: until a whole lap has been loaded, each miss
    /// also pays for a write-back and the first samples of a large set run slower than the
    /// rest (the book's memory methods, "The figures behind the rules").
    pub(crate) fn warm(&self) {
        let mut p = self.start();
        for _ in 0..self.lines {
            // SAFETY: the ring is alive and each line points to another line of it.
            p = unsafe { walk::<1>(p) };
        }
        std::hint::black_box(p);
    }

    pub(crate) fn lines(&self) -> usize {
        self.lines
    }

    /// Bytes of the ring backed by transparent huge pages.
    pub(crate) fn huge_page_bytes(&self) -> Option<u64> {
        self.buffer.huge_page_bytes()
    }
}

/// Follows `loads` links from `p` and returns where it ended. The loop has a constant trip
/// count so the compiler unrolls it; each load depends on the one before.
///
/// # Safety
/// `p` must point into a ring built by [`Chase::build`] that is still alive.
#[inline(always)]
pub(crate) unsafe fn walk<const LOADS: usize>(mut p: *const u8) -> *const u8 {
    for _ in 0..LOADS {
        // SAFETY: every line of the ring holds a pointer to another line of the same ring.
        p = unsafe { p.cast::<*const u8>().read() };
    }
    p
}

/// Bytes a cache line takes, for placing a slot within its stride.
const LINE_BYTES: usize = 64;

/// Where slot `line` of a ring of `stride_bytes` strides lies from the ring's start: in its
/// stride, at a line chosen by a hash of `line` (the first line for slot 0, so that the walk
/// starts at the mapping's start), at the start where the stride holds one line.
fn slot_offset(line: usize, stride_bytes: usize) -> usize {
    let lines_per_stride = (stride_bytes / LINE_BYTES).max(1);
    let hashed = ((line as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize;
    line * stride_bytes + hashed % lines_per_stride * LINE_BYTES
}

/// The order in which the ring visits the lines, one per `stride_bytes`: a permutation of
/// `0..lines`.
pub(crate) fn visiting_order(lines: usize, stride_bytes: usize, layout: Layout) -> Vec<usize> {
    let mut rng = SplitMix64::seeded(0x5eed_1a71_ab00_0001);
    match layout {
        Layout::Sequential => (0..lines).collect(),
        Layout::Random => {
            let mut order: Vec<usize> = (0..lines).collect();
            rng.shuffle(&mut order);
            order
        }
        Layout::PageGroups { group_bytes } => {
            let per_group = (group_bytes / stride_bytes).max(1);
            let mut groups: Vec<Vec<usize>> = (0..lines)
                .step_by(per_group)
                .map(|first| (first..(first + per_group).min(lines)).collect())
                .collect();
            rng.shuffle(&mut groups);
            for group in &mut groups {
                rng.shuffle(group);
            }
            groups.into_iter().flatten().collect()
        }
    }
}

/// A ring over main memory as `mem.latency` reads its `DRAM` level (and `mem.loaded` and
/// `mem.numa` read main memory): `bytes` of it, a line per [`PREFETCH_PROOF_STRIDE`]
/// bytes, random within groups of [`TLB_GROUP_PAGES`] pages.
pub(crate) fn main_memory_ring(bytes: u64) -> Result<Chase, String> {
    let group_bytes = TLB_GROUP_PAGES * crate::mem::pages::mapped::page_size();
    let layout = Layout::PageGroups { group_bytes };
    Chase::build(bytes as usize, PREFETCH_PROOF_STRIDE, layout, false)
        .map_err(|e| format!("could not map a {} chase: {e}", size_label(bytes)))
}

/// `ring` (a [`main_memory_ring`]) timed as `(name, method)` with `sampling`: dependent
/// loads, [`LOADS_PER_CALL`] a call, the result per load.
pub(crate) fn time_ring(
    runner: &mut Runner,
    ring: &Chase,
    (name, method): (&str, &str),
    sampling: impl FnOnce(&mut latlab_engine::Config),
) -> Result<BenchResult, Interrupted> {
    let mut p = ring.start();
    let result = runner.scoped(sampling, |runner| {
        runner.bench(name, method, move || {
            // SAFETY: `p` is in the ring, which the caller keeps alive past the benchmark.
            p = unsafe { walk::<LOADS_PER_CALL>(p) };
            p
        })
    })?;
    let span = ring.lines() * PREFETCH_PROOF_STRIDE;
    Ok((result.per_operation(LOADS_PER_CALL as u64))
        .with_parameter(key::WORKING_SET_BYTES, span)
        .with_parameter(key::LAYOUT, "pagegroups"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_single_cycle(layout: Layout, working_set: usize) {
        for stride in [64, 256] {
            assert_single_cycle_of(layout, working_set, stride);
        }
    }

    /// Every used line is visited once a lap, each at its slot's place in its stride.
    fn assert_single_cycle_of(layout: Layout, working_set: usize, stride: usize) {
        let chase = Chase::build(working_set, stride, layout, false).unwrap();
        assert_eq!(chase.lines(), (working_set / stride).max(2));
        let mut seen = vec![false; chase.lines()];
        let mut p = chase.start();
        for step in 0..chase.lines() {
            let offset = p as usize - chase.start() as usize;
            let line = offset / stride;
            assert_eq!(
                offset,
                slot_offset(line, stride),
                "{layout:?}: offset {offset}, stride {stride}"
            );
            assert!(
                !seen[line],
                "{layout:?}: line {line} revisited at step {step}"
            );
            seen[line] = true;
            // SAFETY: the ring is alive.
            p = unsafe { walk::<1>(p) };
        }
        assert!(
            seen.iter().all(|&s| s),
            "{layout:?}: a line was never visited"
        );
        assert_eq!(
            p,
            chase.start(),
            "{layout:?}: the walk did not close the cycle"
        );
    }

    #[test]
    fn every_layout_is_one_cycle_through_every_line() {
        for size in [128, 4096, 100 * 1024 + 192, 1 << 20] {
            assert_single_cycle(Layout::Random, size);
            assert_single_cycle(Layout::Sequential, size);
            assert_single_cycle(
                Layout::PageGroups {
                    group_bytes: 16 * 4096,
                },
                size,
            );
        }
    }

    /// Slots of 256-byte strides use each of their four lines, a quarter of the slots each
    /// within a few per cent; slots of one-line strides are the strides.
    #[test]
    fn slots_vary_their_line_within_the_stride() {
        let mut uses = [0usize; 4];
        for line in 0..4096 {
            let offset = slot_offset(line, 256);
            assert_eq!(offset / 256, line);
            uses[offset % 256 / 64] += 1;
        }
        assert!(uses.iter().all(|&n| (900..1150).contains(&n)), "{uses:?}");
        assert_eq!(slot_offset(0, 256), 0);
        assert_eq!(slot_offset(7, 64), 7 * 64);
    }

    #[test]
    fn page_groups_keep_each_group_together() {
        let order = visiting_order(1024, 64, Layout::PageGroups { group_bytes: 4096 });
        for chunk in order.chunks(64) {
            let group = chunk[0] / 64;
            assert!(chunk.iter().all(|&line| line / 64 == group), "{chunk:?}");
        }
        let random = visiting_order(1024, 64, Layout::Random);
        assert_ne!(random, (0..1024).collect::<Vec<_>>());
    }
}
