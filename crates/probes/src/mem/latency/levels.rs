//! Cache levels from a latency-by-working-set curve.
//!
//! The curve is a staircase: a plateau per level of the hierarchy, joined by ramps where the
//! working set outgrows a level. The steps are found by change-point detection: the log
//! latencies, ordered by size, are split into segments of constant level by optimal
//! partitioning (dynamic programming over every split, each segment costing its squared error
//! plus a penalty), which finds the best staircase for the noise, not a greedy one. Segments
//! spanning at least an octave are plateaus, and so are those of half an octave or more that
//! stand twice from their neighbours ([`detect`]); others are ramps. Adjacent plateaus closer
//! than a ratio are one level: twice for a CPU's caches ([`SAME_LEVEL_RATIO`]), less for a
//! GPU's, whose L2 has a far half.
//!
//! A level's latency is the median of its plateau; its size is estimated where the curve
//! crosses halfway (geometrically) from this plateau to the next.

use crate::mem::sizes::size_label;
use latlab_engine::environment::CacheInfo;
use latlab_engine::{BenchResult, Warning};

/// One point of the curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Point {
    pub size_bytes: u64,
    pub latency_ns: f64,
}

/// A level found on the curve.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Level {
    /// Indices of the points on its plateau, first to last.
    pub points: std::ops::Range<usize>,
    pub latency_ns: f64,
    /// Where the curve leaves this level; `None` for the last level.
    pub size_estimate_bytes: Option<u64>,
}

/// A CPU's plateau latencies closer than this ratio are the same level. Each level of cache
/// or memory reads at least twice the one before it on current cores, Intel, AMD and Arm, as
/// main memory must to be named so ([`MEMORY_STEP`]); a smaller step inside a level is
/// something else, such as first-level TLB misses part-way along the L2's plateau
/// (the book's memory methods, "The figures behind the rules").
pub(crate) const SAME_LEVEL_RATIO: f64 = 2.0;
/// The cost of one more segment, in squared log-latency: a split must explain at least this
/// much. 0.02 ≈ a 15% step over three points on each side; noise of a few per cent costs far
/// less.
const SEGMENT_PENALTY: f64 = 0.02;

/// How far a plateau shorter than an octave must stand from the level before it and the
/// plateau of an octave or more after it to be a level of its own: twice, as every level of
/// cache or memory does from its neighbours, and as a ramp's points between two levels do
/// not from both.
const SHORT_LEVEL_STEP: f64 = 2.0;

/// How closely the points of a plateau shorter than an octave that ends the curve must
/// agree (largest over smallest) for it to be a level: nothing after it shows that the curve
/// does not climb on, but a ramp between two levels climbs more than this in half an octave,
/// and two points of memory agree far closer (the book's memory methods, "The figures behind the rules").
const LAST_PLATEAU_SPREAD: f64 = 1.05;

/// Finds the levels of a curve sampled at `points_per_octave`, points in increasing size;
/// plateaus closer than `same_level` times each other are one level.
///
/// A segment of an octave or more is a plateau. A shorter one of at least half an octave
/// (two points at two an octave) is one too where it stands [`SHORT_LEVEL_STEP`] from the
/// level before it and from the next long plateau: a cache the curve leaves soon after
/// filling it, as a guest's shared L3 can be (the book's memory methods, "The figures behind the rules"). So is
/// one that ends the curve, [`SHORT_LEVEL_STEP`] above the level before it and flat within
/// [`LAST_PLATEAU_SPREAD`]: main memory where the run's budget ended the sweep half an octave
/// into it.
pub(crate) fn detect(points: &[Point], points_per_octave: usize, same_level: f64) -> Vec<Level> {
    let logs: Vec<f64> = points.iter().map(|p| p.latency_ns.max(1e-3).ln()).collect();
    let long = points_per_octave + 1;
    let short = (points_per_octave / 2 + 1).max(2);
    let plateaus: Vec<std::ops::Range<usize>> = segments(&logs, SEGMENT_PENALTY)
        .into_iter()
        .filter(|segment| segment.len() >= short)
        .collect();
    let mut levels: Vec<Level> = Vec::new();
    for (i, plateau) in plateaus.iter().enumerate() {
        let latency = median(&points[plateau.clone()]);
        let is_long = plateau.len() >= long;
        if !is_long {
            let next_long = (plateaus[i + 1..].iter())
                .find(|next| next.len() >= long)
                .map(|next| median(&points[next.clone()]));
            let above_previous = (levels.last())
                .is_some_and(|previous| latency >= SHORT_LEVEL_STEP * previous.latency_ns);
            let below_next = match next_long {
                Some(next) => next >= SHORT_LEVEL_STEP * latency,
                None => {
                    plateau.end == points.len()
                        && spread(&points[plateau.clone()]) <= LAST_PLATEAU_SPREAD
                }
            };
            if !(above_previous && below_next) {
                continue;
            }
        }
        match levels.last_mut() {
            Some(previous) if is_long && latency / previous.latency_ns < same_level => {
                previous.points = previous.points.start..plateau.end;
                previous.latency_ns = median(&points[previous.points.clone()]);
            }
            _ => levels.push(Level {
                points: plateau.clone(),
                latency_ns: latency,
                size_estimate_bytes: None,
            }),
        }
    }
    for i in 0..levels.len().saturating_sub(1) {
        let threshold = (levels[i].latency_ns * levels[i + 1].latency_ns).sqrt();
        let from = levels[i].points.end - 1;
        levels[i].size_estimate_bytes = crossing(points, from, threshold);
    }
    levels
}

/// A reported cache size and the curve's estimate may differ by this factor.
const SIZE_TOLERANCE: f64 = 2.0;

/// A level as a result named `result_name`: every sample of every point of its plateau
/// (each `(working set, result)` of the `chase` curve) pooled, so that its median has an
/// interval however few sizes the plateau spans; derived from those points' results.
pub(crate) fn plateau_result(
    result_name: &str,
    level: &str,
    chase: &str,
    plateau: &[(u64, &BenchResult)],
) -> Option<BenchResult> {
    let (first, last) = (plateau.first()?, plateau.last()?);
    let pooled: Vec<f64> = plateau
        .iter()
        .flat_map(|(_, r)| r.samples_ns.iter().copied())
        .collect();
    BenchResult::derived(
        result_name,
        &format!(
            "{level}: the {chase} chase over its plateau, {} to {}, every sample of its {} \
             sizes pooled",
            size_label(first.0),
            size_label(last.0),
            plateau.len()
        ),
        pooled,
        Vec::new(),
        plateau.iter().map(|(_, r)| r.name.clone()).collect(),
    )
}

/// Records the level's estimated size and the size the system reports for it (under
/// `reported_key`), with a warning when they differ by more than [`SIZE_TOLERANCE`].
pub(crate) fn with_reported_size(
    mut result: BenchResult,
    level: &str,
    estimate: u64,
    reported_key: latlab_engine::parameters::Key,
    reported: u64,
) -> BenchResult {
    result = result.with_parameter(reported_key, reported);
    let ratio = estimate as f64 / reported as f64;
    if !(1.0 / SIZE_TOLERANCE..=SIZE_TOLERANCE).contains(&ratio) {
        result.warnings.push(Warning::CacheSizeMismatch {
            level: level.to_string(),
            measured_bytes: estimate,
            reported_bytes: reported,
        });
    }
    result
}

/// Optimal partitioning of `values` into segments of constant mean.
fn segments(values: &[f64], penalty: f64) -> Vec<std::ops::Range<usize>> {
    let n = values.len();
    let (mut sum, mut sum_sq) = (vec![0.0; n + 1], vec![0.0; n + 1]);
    for (i, v) in values.iter().enumerate() {
        sum[i + 1] = sum[i] + v;
        sum_sq[i + 1] = sum_sq[i] + v * v;
    }
    let cost = |i: usize, j: usize| {
        let (s, len) = (sum[j] - sum[i], (j - i) as f64);
        (sum_sq[j] - sum_sq[i]) - s * s / len
    };
    let mut best = vec![f64::INFINITY; n + 1];
    let mut split = vec![0; n + 1];
    best[0] = -penalty;
    for j in 1..=n {
        for i in 0..j {
            let candidate = best[i] + cost(i, j) + penalty;
            if candidate < best[j] {
                best[j] = candidate;
                split[j] = i;
            }
        }
    }
    let mut found = Vec::new();
    let mut end = n;
    while end > 0 {
        found.push(split[end]..end);
        end = split[end];
    }
    found.reverse();
    found
}

/// The size at which the curve, after point `from`, first reaches `threshold`, interpolated
/// on log–log axes between the two points around it.
pub(super) fn crossing(points: &[Point], from: usize, threshold: f64) -> Option<u64> {
    points[from..].windows(2).find_map(|pair| {
        let (a, b) = (pair[0], pair[1]);
        if a.latency_ns < threshold && b.latency_ns >= threshold {
            let t = (threshold.ln() - a.latency_ns.ln()) / (b.latency_ns.ln() - a.latency_ns.ln());
            let log_size = (a.size_bytes as f64).ln()
                + t * ((b.size_bytes as f64).ln() - (a.size_bytes as f64).ln());
            Some(log_size.exp().round() as u64)
        } else {
            None
        }
    })
}

/// The largest latency of `points` over the smallest.
fn spread(points: &[Point]) -> f64 {
    let latencies = points.iter().map(|p| p.latency_ns);
    latencies.clone().fold(0.0, f64::max) / latencies.fold(f64::INFINITY, f64::min)
}

fn median(points: &[Point]) -> f64 {
    let mut latencies: Vec<f64> = points.iter().map(|p| p.latency_ns).collect();
    latlab_engine::stats::median_in_place(&mut latencies)
}

/// The levels the `pagegroups` curve shows, each with its name (see [`level_names`]). The
/// curve reached memory where it spans twice the largest cache the kernel reports, or where
/// the sweep stopped on a plateau of main memory (`stopped_on_memory`).
pub(crate) fn named_levels(
    curve: &[(u64, BenchResult)],
    per_octave: usize,
    caches: &[CacheInfo],
    stopped_on_memory: bool,
) -> Vec<(Level, String)> {
    let points = points(curve);
    let found = detect(&points, per_octave, SAME_LEVEL_RATIO);
    let largest_cache = caches.iter().map(|c| c.size_bytes).max();
    let largest_set = points.last().map_or(0, |p| p.size_bytes);
    let reached_memory =
        stopped_on_memory || largest_cache.is_some_and(|llc| largest_set >= 2 * llc);
    let latencies: Vec<f64> = found.iter().map(|l| l.latency_ns).collect();
    let names = level_names(&latencies, data_cache_levels(caches), reached_memory);
    found.into_iter().zip(names).collect()
}

/// How far above the level before it the last level must read to be main memory.
pub(crate) const MEMORY_STEP: f64 = 2.0;

/// The names of the levels the curve found, from their latencies: `L1`, `L2` … and `DRAM`
/// for the last when the curve shows it is memory. That is when it reads at least
/// [`MEMORY_STEP`] times the level before it and either lies beyond the cache levels the
/// kernel reports (`cache_levels` of them; a VM may report the host's sizes, but not a
/// level it lacks), or the sweep reached twice the largest cache the kernel reports. So a
/// fourth level on a machine with three caches is memory, whatever size the kernel gives its
/// last cache.
pub(crate) fn level_names(
    latencies: &[f64],
    cache_levels: usize,
    reached_memory: bool,
) -> Vec<String> {
    let count = latencies.len();
    (0..count)
        .map(|i| {
            let last = i + 1 == count && i > 0;
            let steps_up = i > 0 && latencies[i] >= MEMORY_STEP * latencies[i - 1];
            let beyond_caches = i + 1 > cache_levels;
            if last && steps_up && (beyond_caches || reached_memory) {
                "DRAM".to_string()
            } else {
                format!("L{}", i + 1)
            }
        })
        .collect()
}

/// How many levels of data (or unified) cache the kernel reports.
pub(crate) fn data_cache_levels(caches: &[CacheInfo]) -> usize {
    let mut levels: Vec<u8> = caches
        .iter()
        .filter(|c| c.kind != "Instruction")
        .map(|c| c.level)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    levels.len()
}

/// The kernel's size for a level name such as `L2` (data or unified cache).
pub(crate) fn reported_size(name: &str, caches: &[CacheInfo]) -> Option<u64> {
    let level: u8 = name.strip_prefix('L')?.parse().ok()?;
    caches
        .iter()
        .find(|c| c.level == level && c.kind != "Instruction")
        .map(|c| c.size_bytes)
}

/// The points of the page-group curve.
pub(crate) fn points(curve: &[(u64, BenchResult)]) -> Vec<Point> {
    (curve.iter())
        .map(|(size_bytes, result)| Point {
            size_bytes: *size_bytes,
            latency_ns: result.summary.median,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A level pools every sample of its plateau's points: three sizes of ten samples give
    /// thirty, enough for an interval and percentiles where three medians would not be.
    #[test]
    fn a_level_pools_its_plateau_samples() {
        let point = |name: &str, ns: f64| {
            BenchResult::derived(name, "m", vec![ns; 10], Vec::new(), Vec::new()).unwrap()
        };
        let (a, b, c) = (point("a", 1.0), point("b", 1.1), point("c", 1.2));
        let plateau = [(4096, &a), (6144, &b), (8192, &c)];
        let level = plateau_result("level/L1", "L1", "pagegroups", &plateau).unwrap();
        assert_eq!(level.samples_ns.len(), 30);
        assert_eq!(level.summary.n, 30);
        assert!(level.summary.n >= latlab_engine::stats::MIN_SAMPLES_FOR_PERCENTILES);
        assert_eq!(level.summary.median, 1.1);
        assert_eq!(level.derived_from, ["a", "b", "c"]);
    }

    /// A staircase with smooth ramps: (capacity, latency) per level, sampled from 1 KiB.
    fn curve(
        levels: &[(u64, f64)],
        points_per_octave: usize,
        octaves: usize,
        noise: f64,
    ) -> Vec<Point> {
        (0..=octaves * points_per_octave)
            .map(|k| {
                let size = 1024.0 * 2f64.powf(k as f64 / points_per_octave as f64);
                // Latency rises from one level to the next over the octave after capacity.
                let mut latency = levels[0].1;
                for pair in levels.windows(2) {
                    let (capacity, _) = pair[0];
                    let over = (size / capacity as f64).log2().clamp(0.0, 1.0);
                    if over > 0.0 {
                        latency = pair[0].1 * (pair[1].1 / pair[0].1).powf(over);
                    }
                }
                let wobble = 1.0 + noise * ((k * 7 % 5) as f64 - 2.0) / 2.0;
                Point {
                    size_bytes: size.round() as u64,
                    latency_ns: latency * wobble,
                }
            })
            .collect()
    }

    #[test]
    fn finds_four_levels_with_their_sizes() {
        let truth = [
            (32 << 10, 1.2),
            (512 << 10, 4.5),
            (32 << 20, 18.0),
            (u64::MAX, 95.0),
        ];
        let points = curve(&truth, 8, 17, 0.03);
        let levels = detect(&points, 8, SAME_LEVEL_RATIO);
        assert_eq!(levels.len(), 4, "{levels:?}");
        for (level, (capacity, latency)) in levels.iter().zip(truth) {
            assert!((level.latency_ns / latency - 1.0).abs() < 0.1, "{level:?}");
            if let Some(size) = level.size_estimate_bytes {
                let ratio = size as f64 / capacity as f64;
                assert!((0.5..=2.0).contains(&ratio), "{level:?} vs {capacity}");
            }
        }
        assert_eq!(levels[3].size_estimate_bytes, None);
    }

    #[test]
    fn works_with_two_points_per_octave() {
        let truth = [(32 << 10, 1.0), (1 << 20, 5.0), (u64::MAX, 80.0)];
        let levels = detect(&curve(&truth, 2, 14, 0.02), 2, SAME_LEVEL_RATIO);
        assert_eq!(levels.len(), 3, "{levels:?}");
    }

    /// A step inside the L2's plateau, where the first-level TLB runs out (the book's memory
    /// methods, `SAME_LEVEL_RATIO`), is part of the L2, not a level of its own.
    #[test]
    fn a_small_step_inside_a_level_is_not_a_level() {
        let truth = [
            (48 << 10, 2.0),
            (256 << 10, 4.0),
            (2 << 20, 6.4),
            (16 << 20, 45.0),
            (u64::MAX, 130.0),
        ];
        let levels = detect(&curve(&truth, 2, 18, 0.02), 2, SAME_LEVEL_RATIO);
        let latencies: Vec<f64> = levels.iter().map(|l| l.latency_ns).collect();
        assert_eq!(levels.len(), 4, "{levels:?}");
        assert!((4.5..=7.0).contains(&latencies[1]), "{latencies:?}");
        assert!(latencies[2] > 30.0, "{latencies:?}");
    }

    /// A quick sweep the budget ended half an octave into main memory, as an Emerald Rapids
    /// guest measured it (sizes √2 apart from 4 KiB, ns): its two points of memory are a
    /// level, which a curve ending on the ramp up to memory does not have.
    #[test]
    fn memory_half_an_octave_long_ends_the_curve_as_a_level() {
        let measured = [
            2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 3.1, 4.3, 4.9, 5.2, 5.4, 5.6, 6.2, 6.6, 6.4, 6.5,
            6.4, 6.5, 6.5, 6.6, 18.3, 32.2, 43.0, 44.9, 50.7, 74.0, 111.3, 132.7, 135.3,
        ];
        let points: Vec<Point> = (measured.iter().enumerate())
            .map(|(k, &latency_ns)| Point {
                size_bytes: (4096.0 * 2f64.powf(k as f64 / 2.0)).round() as u64,
                latency_ns,
            })
            .collect();
        let latencies = |points: &[Point]| -> Vec<f64> {
            let levels = detect(points, 2, SAME_LEVEL_RATIO);
            levels.iter().map(|l| l.latency_ns).collect()
        };
        let whole = latencies(&points);
        assert_eq!(whole.len(), 4, "{whole:?}");
        assert!((130.0..=136.0).contains(&whole[3]), "{whole:?}");
        assert_eq!(level_names(&whole, 3, false)[3], "DRAM");
        // One point fewer: the curve ends climbing, 111 then 133 ns, and names no memory.
        let on_the_ramp = latencies(&points[..points.len() - 1]);
        assert_eq!(on_the_ramp.len(), 3, "{on_the_ramp:?}");
        assert!(on_the_ramp[2] < 60.0, "{on_the_ramp:?}");
    }

    #[test]
    fn a_flat_curve_is_one_level() {
        let levels = detect(&curve(&[(u64::MAX, 3.0)], 4, 10, 0.05), 4, SAME_LEVEL_RATIO);
        assert_eq!(levels.len(), 1, "{levels:?}");
        assert_eq!(levels[0].size_estimate_bytes, None);
    }

    #[test]
    fn segmentation_splits_a_clean_step_exactly() {
        let values = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        assert_eq!(segments(&values, SEGMENT_PENALTY), [0..3, 3..6]);
    }
}
