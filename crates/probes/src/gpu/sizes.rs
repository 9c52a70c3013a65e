//! The sizes the GPU probes sweep.

use crate::Suite;
use crate::mem::sizes::working_sets;

/// The smallest working set of the device chase.
pub(crate) const MIN_WORKING_SET: u64 = 1 << 10;
/// The device's L2 when the driver does not report it: the largest of current data-centre
/// GPUs (H100: 50 MiB).
pub(crate) const FALLBACK_L2: u64 = 50 << 20;

/// Working sets of the device chase: 1 KiB to eight times the L2 (sixteen in the full
/// suite), two points per octave in the quick suite and four in the full one, each a whole
/// number of ring lines. A random ring keeps about `L2 / working set` of its lines in the L2,
/// so the device-memory plateau needs sets well beyond it: at four times the L2 a quarter of
/// the loads would still hit.
pub(crate) fn chase_working_sets(suite: Suite, l2_bytes: u64, line: u64) -> Vec<u64> {
    let (per_octave, multiple) = match suite {
        Suite::Quick => (2, 8),
        Suite::Full => (4, 16),
    };
    working_sets(MIN_WORKING_SET, multiple * l2_bytes, per_octave, line)
}

/// The smallest copy.
const MIN_COPY: u64 = 4;
/// The largest copy of the full suite.
const MAX_COPY: u64 = 1 << 30;
/// The copy the bandwidth target is quoted at, always measured.
pub(crate) const BANDWIDTH_COPY: u64 = 512 << 20;

/// Copy sizes: every power of two from 4 B to 1 GiB in the full suite; in the quick suite
/// every fourth power (4 B, 64 B, 1 KiB … 64 MiB) with 4 KiB, 1 MiB (the headline copies)
/// and 512 MiB (the bandwidth figure), in increasing order.
pub(crate) fn copy_sizes(suite: Suite) -> Vec<u64> {
    let mut sizes: Vec<u64> = match suite {
        Suite::Full => (2..=30).map(|k| 1u64 << k).collect(),
        Suite::Quick => (0..7)
            .map(|k| MIN_COPY << (4 * k))
            .chain([4 << 10, 1 << 20, BANDWIDTH_COPY])
            .collect(),
    };
    sizes.sort_unstable();
    sizes.dedup();
    sizes.retain(|&s| (MIN_COPY..=MAX_COPY).contains(&s));
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_sweeps_hold_the_headline_sizes_and_the_bandwidth_point() {
        for suite in [Suite::Quick, Suite::Full] {
            let sizes = copy_sizes(suite);
            assert_eq!(sizes[0], 4);
            assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
            for must in [4 << 10, 1 << 20, BANDWIDTH_COPY] {
                assert!(sizes.contains(&must), "{suite:?} lacks {must}");
            }
        }
        assert_eq!(*copy_sizes(Suite::Full).last().unwrap(), 1 << 30);
        assert_eq!(copy_sizes(Suite::Full).len(), 29);
        assert!(copy_sizes(Suite::Quick).len() <= 12);
    }

    #[test]
    fn chase_sweeps_reach_beyond_the_l2() {
        let l2 = 50 << 20;
        let quick = chase_working_sets(Suite::Quick, l2, 128);
        assert_eq!(quick[0], 1024);
        assert_eq!(*quick.last().unwrap(), 8 * l2);
        let full = chase_working_sets(Suite::Full, l2, 128);
        assert_eq!(*full.last().unwrap(), 16 * l2);
        assert!(full.len() > 2 * quick.len());
        assert!(full.iter().all(|s| s % 128 == 0));
    }
}
