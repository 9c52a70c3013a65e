//! Cache sizes in the bytes a cache holds.
//!
//! The page-group curve uses one line of every [`PREFETCH_PROOF_STRIDE`] bytes it spans, so
//! where it leaves a level is a span, and how many of its bytes the cache held there
//! depends on the core: its prefetchers may bring in the lines the ring skips, at one level
//! and not at the next. So around each cache level's end the ring is measured again over
//! every line of its span (`mem.latency/every-line/{size}`), where the bytes spanned are
//! the bytes the cache holds, and the level ends where that curve climbs halfway,
//! geometrically, to the next level, as the page-group curve's levels are ended. The book's
//! memory methods give the figures behind it.

use super::chase::Layout;
use super::levels::{Point, SAME_LEVEL_RATIO, crossing};
use super::ring::Ring;
use super::sweep::Sweep;
use super::*;
use crate::ProbeError;
use crate::mem::sizes::size_label;
use crate::sweep_time::PointClock;
use latlab_engine::{BenchResult, Runner};

/// The points that size the levels: this prefix, then the working set.
pub(super) const EVERY_LINE_PREFIX: &str = "mem.latency/every-line/";

impl Sweep {
    /// Measures the every-line ring around the end of each cache level the page-group curve
    /// found, adding its points to `results`, and keeps each level's size in the bytes the
    /// cache holds (`self.held`). A level whose points the budget left out has none.
    pub(super) fn every_line(
        &mut self,
        runner: &mut Runner,
        results: &mut Vec<BenchResult>,
    ) -> Result<(), ProbeError> {
        let Some(named) = &self.named else {
            return Ok(());
        };
        let stride = PREFETCH_PROOF_STRIDE.max(self.line);
        let mut measured: Vec<Point> = Vec::new();
        let mut held = Vec::new();
        let mut out_of_time = Vec::new();
        let mut clock = PointClock::start();
        for (i, (level, name)) in named.iter().enumerate() {
            let (Some((next, _)), Some(end_span)) = (named.get(i + 1), level.size_estimate_bytes)
            else {
                continue;
            };
            let around = sizes_around(end_span, &self.sizes, self.line, stride);
            for &size in &around {
                let label = size_label(size);
                if measured.iter().any(|p| p.size_bytes == size) || out_of_time.contains(&label) {
                    continue;
                }
                if !runner.config().has_time_for(clock.last) {
                    out_of_time.push(label);
                    continue;
                }
                let ring = Ring {
                    name: format!("{EVERY_LINE_PREFIX}{label}"),
                    label: "every-line",
                    layout: Layout::PageGroups {
                        group_bytes: self.group_bytes,
                    },
                    size,
                    stride: self.line,
                    line: self.line,
                    huge_pages: self.huge_pages,
                    slope: size <= self.private_cache,
                };
                clock.point_begins();
                let result = self.measure_point(runner, ring)?;
                clock.point_ended();
                measured.push(Point {
                    size_bytes: size,
                    latency_ns: result.summary.median,
                });
                results.push(result.as_sweep_detail(true));
            }
            measured.sort_by_key(|p| p.size_bytes);
            let points: Vec<Point> = (measured.iter().copied())
                .filter(|p| around.contains(&p.size_bytes))
                .collect();
            if let Some(bytes) = held_end(&points, level.latency_ns, next.latency_ns) {
                held.push((name.clone(), bytes));
            }
        }
        self.held = held;
        crate::sweep_time::note_left_out(results, "mem.latency/every-line at", &out_of_time);
        Ok(())
    }
}

/// The working sets of the sweep's `grid` around a level whose page-group ring left it at
/// `end_span`: from two octaves below the bytes that ring touched there (one line of `line`
/// bytes per `stride`) to an octave past the span. Wherever the core's prefetchers put
/// the bytes the cache held, the every-line ring climbs between the two; it can climb
/// sooner than the touched bytes, since a ring over every line of fewer pages meets more
/// of the cache sets that its pages' colours crowd.
pub(super) fn sizes_around(end_span: u64, grid: &[u64], line: usize, stride: usize) -> Vec<u64> {
    let touched = end_span as f64 * line as f64 / stride as f64;
    let (low, high) = (touched / 4.0, end_span as f64 * 2.0);
    (grid.iter().copied())
        .filter(|&size| (low..=high).contains(&(size as f64)))
        .collect()
}

/// Where the every-line `points` (by size) climb for good past halfway, geometrically, from
/// `level_ns` to the next level's `next_ns`, and never past [`SAME_LEVEL_RATIO`] times the
/// level (a level the page-group curve did not find, such as a shared L3 it climbs
/// through, may lie between): between the last point below that and the one after it,
/// interpolated geometrically. One noisy point above it inside the level is not its end.
/// `None` where they never climb, or start above it.
pub(super) fn held_end(points: &[Point], level_ns: f64, next_ns: f64) -> Option<u64> {
    let threshold = level_ns * (next_ns / level_ns).sqrt().min(SAME_LEVEL_RATIO);
    let last_below = points.iter().rposition(|p| p.latency_ns < threshold)?;
    crossing(points, last_below, threshold)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;

    /// A curve of a core whose prefetchers fill a level's skipped lines at L1 and not at
    /// L2 (as a Zen 3 guest's did): the page-group ring leaves the L1 at its size and the L2
    /// at four times it. Over every line, both end where the caches do.
    #[test]
    fn levels_end_where_every_line_of_the_ring_no_longer_fits() {
        let grid = crate::mem::sizes::working_sets(4096, 8 << 20, 2, 64);
        let every_line = |size: u64| match size {
            s if s <= 32 * KIB => 1.4,
            s if s <= 512 * KIB => 4.2,
            _ => 150.0,
        };
        let curve = |sizes: Vec<u64>| -> Vec<Point> {
            (sizes.into_iter())
                .map(|size_bytes| Point {
                    size_bytes,
                    latency_ns: every_line(size_bytes),
                })
                .collect()
        };
        let l1 = sizes_around(32 * KIB, &grid, 64, 256);
        assert!(
            l1.contains(&(8 * KIB)) && l1.contains(&(32 * KIB)),
            "{l1:?}"
        );
        assert!(
            l1.contains(&(4 * KIB)) && !l1.contains(&(90 * KIB)),
            "{l1:?}"
        );
        let l1_end = held_end(&curve(l1), 1.4, 4.2).unwrap();
        assert!((32 * KIB..=45 * KIB).contains(&l1_end), "{l1_end}");
        let l2 = sizes_around(2048 * KIB, &grid, 64, 256);
        let l2_end = held_end(&curve(l2), 4.2, 150.0).unwrap();
        assert!((512 * KIB..=724 * KIB).contains(&l2_end), "{l2_end}");
        // One noisy point inside the level is not its end.
        let mut noisy = curve(sizes_around(32 * KIB, &grid, 64, 256));
        let inside = noisy.iter().position(|p| p.size_bytes > 16 * KIB).unwrap();
        noisy[inside].latency_ns = 2.6;
        assert_eq!(held_end(&noisy, 1.4, 4.2), Some(l1_end));
        // A curve that starts above the level says nothing of where it ends.
        let late = curve(vec![1024 * KIB, 2048 * KIB]);
        assert_eq!(held_end(&late, 4.2, 150.0), None);
    }
}
