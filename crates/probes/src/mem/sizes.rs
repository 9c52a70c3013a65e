//! Working-set sizes of the memory sweeps, and their labels.

use latlab_engine::environment::CacheInfo;
use latlab_engine::units::format_bytes;

/// Working sets from `min` to `max`, `per_octave` per doubling, multiples of the line size,
/// each with a distinct label; `max` itself is always the last.
pub(crate) fn working_sets(min: u64, max: u64, per_octave: usize, line: u64) -> Vec<u64> {
    let mut sizes: Vec<u64> = Vec::new();
    for k in 0.. {
        let exact = min as f64 * 2f64.powf(k as f64 / per_octave as f64);
        if exact > max as f64 {
            break;
        }
        let size = ((exact / line as f64).round() as u64).max(2) * line;
        if sizes
            .last()
            .is_none_or(|&last| size_label(last) != size_label(size))
        {
            sizes.push(size);
        }
    }
    // `max` replaces the last points of the grid within half a step of it.
    let max = (max / line).max(2) * line;
    let half_step = 2f64.powf(0.5 / per_octave as f64);
    while sizes
        .last()
        .is_some_and(|&last| last >= max || (max as f64 / last as f64) < half_step)
    {
        sizes.pop();
    }
    sizes.push(max);
    sizes
}

/// Whether a sweep point lies between the powers of two, and is not its last: the terminal
/// table folds those away (the files and plots keep them).
pub(crate) fn is_sweep_detail(size: u64, largest: u64) -> bool {
    !size.is_power_of_two() && size != largest
}

/// A size in B, KiB, MiB or GiB with up to three significant digits: `1KiB`, `1.41KiB`, `32MiB`.
pub(crate) fn size_label(bytes: u64) -> String {
    format_bytes(bytes as f64)
}

/// The second-level cache's size when the kernel does not report it: working sets up to it
/// are timed by slope.
pub(crate) const FALLBACK_PRIVATE_CACHE: u64 = 1 << 20;
/// The largest working set when neither the caller nor the kernel says otherwise.
const FALLBACK_MAX: u64 = 256 << 20;

/// The default largest working set never spans more than this, however large a cache the
/// kernel claims: the main job's peak resident memory stays under 400 MB (a ring of 256 MiB,
/// its visiting order of 32 MiB, and the process with its results), and a kernel that
/// claims a 480 MiB L3 does not send it to 1 GiB. `--max-size` goes further.
pub const DEFAULT_MAX_CEILING: u64 = 256 << 20;

/// The default largest working set: four times the last-level cache of `caches`, at most
/// [`DEFAULT_MAX_CEILING`](crate::DEFAULT_MAX_CEILING).
pub fn default_max_size(caches: &[CacheInfo]) -> u64 {
    caches
        .iter()
        .map(|c| c.size_bytes)
        .max()
        .map_or(FALLBACK_MAX, |llc| 4 * llc)
        .min(DEFAULT_MAX_CEILING)
}

/// The first-level data cache's line, as the kernel reports it; 64 bytes where it does not.
pub(crate) fn line_bytes(caches: &[CacheInfo]) -> usize {
    caches
        .iter()
        .find(|c| c.level == 1 && c.kind != "Instruction")
        .and_then(|c| c.line_bytes)
        .map_or(64, |l| l as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_cover_the_range_with_distinct_labels() {
        let sizes = working_sets(1024, 64 << 20, 8, 64);
        assert_eq!(sizes[0], 1024);
        assert_eq!(*sizes.last().unwrap(), 64 << 20);
        assert!(sizes.windows(2).all(|w| w[0] < w[1]));
        assert!(sizes.iter().all(|s| s % 64 == 0));
        let octaves = 16.0;
        assert!(sizes.len() as f64 >= 8.0 * octaves, "{}", sizes.len());
        let labels: std::collections::HashSet<String> =
            sizes.iter().map(|&s| size_label(s)).collect();
        assert_eq!(labels.len(), sizes.len());
        assert_eq!(working_sets(1024, 3000, 2, 64), [1024, 1472, 2048, 2944]);
    }

    #[test]
    fn labels() {
        assert_eq!(size_label(1024), "1KiB");
        assert_eq!(size_label(1448), "1.41KiB");
        assert_eq!(size_label(32 << 20), "32MiB");
        assert_eq!(size_label(100), "100B");
        assert_eq!(size_label(0), "0B");
    }
}
