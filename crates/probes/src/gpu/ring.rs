//! The ring a device pointer chase follows, built on the host.
//!
//! One line per [`LINE_BYTES`] of the working set is used, visited in a random single cycle
//! (the order `mem.latency`'s random rings use): each used line's first word holds the
//! device address of the next. Nothing on the GPU prefetches across lines, but a random
//! order still keeps consecutive loads off the same DRAM page and TLB entry, as a program's
//! scattered loads are.

use crate::mem::latency::chase::{Layout, visiting_order};

/// The bytes per ring line: the L1 and L2 line of NVIDIA GPUs since Volta, so that every
/// load touches a line no other load touches.
pub(crate) const LINE_BYTES: usize = 128;

/// The ring over `working_set` bytes placed at device address `base`: the 64-bit words to
/// copy to `base`. At least two lines.
pub(crate) fn ring_words(working_set: usize, base: u64) -> Vec<u64> {
    let lines = (working_set / LINE_BYTES).max(2);
    let words_per_line = LINE_BYTES / 8;
    let mut words = vec![0u64; lines * words_per_line];
    let order = visiting_order(lines, LINE_BYTES, Layout::Random);
    for (i, &line) in order.iter().enumerate() {
        let next = order[(i + 1) % order.len()];
        words[line * words_per_line] = base + (next * LINE_BYTES) as u64;
    }
    words
}

/// Lines of a ring over `working_set` bytes.
pub(crate) fn ring_lines(working_set: usize) -> usize {
    (working_set / LINE_BYTES).max(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Following the ring from its first line visits every line once and comes back.
    #[test]
    fn the_ring_is_one_cycle_through_every_line() {
        let base = 0x7f00_0000_0000u64;
        for working_set in [256, 1024, 64 << 10, 1 << 20] {
            let words = ring_words(working_set, base);
            let lines = ring_lines(working_set);
            assert_eq!(words.len() * 8, lines * LINE_BYTES);
            let mut seen = vec![false; lines];
            let mut address = base;
            for _ in 0..lines {
                let offset = (address - base) as usize;
                assert_eq!(offset % LINE_BYTES, 0, "{offset}");
                let line = offset / LINE_BYTES;
                assert!(!seen[line], "line {line} visited twice in {working_set}");
                seen[line] = true;
                address = words[offset / 8];
            }
            assert_eq!(address, base, "the walk of {working_set} did not close");
            assert!(seen.iter().all(|&s| s));
        }
    }

    /// Random, not sequential: most steps do not go to the next line.
    #[test]
    fn the_ring_is_not_in_address_order() {
        let words = ring_words(64 << 10, 0);
        let lines = ring_lines(64 << 10);
        let sequential = (0..lines)
            .filter(|&line| words[line * LINE_BYTES / 8] == ((line + 1) * LINE_BYTES) as u64)
            .count();
        assert!(sequential < lines / 10, "{sequential} of {lines}");
    }
}
