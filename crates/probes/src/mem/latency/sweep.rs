//! The sweep of `mem.latency`: working sets by layout, the levels found on the page-group
//! curve, the stride sweep, and where the quick sweep stops.

use super::chase::Layout;
use super::levels::{self, Level, Point};
use super::levels::{named_levels, points, reported_size};
use super::ring::{measure_placements, measure_rings};
use super::*;
use crate::mem::sizes::{is_sweep_detail, size_label};
use crate::sweep_time::PointClock;
use crate::{ProbeError, Suite};
use latlab_engine::environment::CacheInfo;
use latlab_engine::names::key;
use latlab_engine::{BenchResult, Runner, Warning};

/// How many octaves the curve must lie flat, past its last knee, before the quick sweep
/// stops: one is enough to call the plateau a level; a second, which the sweep goes on to
/// where the run's budget allows, shows that it does not climb again.
pub(super) const TAIL_OCTAVES: (usize, usize) = (1, 2);
/// How far a point of that plateau may lie from its median: the ramp into main memory can
/// be gradual (the book's memory methods, "The figures behind the rules"), and its last point within this is as good a start of the
/// plateau as the next.
pub(super) const TAIL_FLATNESS: f64 = 0.15;
/// How much longer the next point of the curve is expected to take than the last: a point
/// past the caches builds rings as large as its working set, half an octave larger.
pub(super) const NEXT_POINT_GROWTH: f64 = 1.5;
/// The least latency of a plateau the sweep stops on: main memory. Main memory is 60 ns
/// away or more on every current machine (80-150 ns on servers); no cache level is.
pub(super) const MEMORY_FLOOR_NS: f64 = 60.0;

/// Where the quick sweep may stop: the curve's last `octaves` octaves (its last
/// `octaves × per_octave + 1` points) lie within [`TAIL_FLATNESS`] of their median, and
/// that median reads main memory ([`MEMORY_FLOOR_NS`]). `(first size of the plateau, its
/// latency)`, or `None` while the curve has more to tell.
pub(super) fn memory_plateau(
    curve: &[Point],
    per_octave: usize,
    octaves: usize,
) -> Option<(u64, f64)> {
    let count = octaves * per_octave + 1;
    let tail = curve.get(curve.len().checked_sub(count)?..)?;
    let mut latencies: Vec<f64> = tail.iter().map(|p| p.latency_ns).collect();
    let median = latlab_engine::stats::median_in_place(&mut latencies);
    let flat = (tail.iter()).all(|p| (p.latency_ns / median - 1.0).abs() <= TAIL_FLATNESS);
    (flat && median >= MEMORY_FLOOR_NS).then(|| (tail[0].size_bytes, median))
}

/// Rings per working set beyond the last-level cache: the full suite builds
/// [`RINGS_BEYOND_LAST_LEVEL`] at every such size; the quick suite builds them at the largest
/// only, which still shows how far placement moves the figure, and one ring in between.
pub(super) fn rings_beyond_last_level(suite: Suite, largest: bool) -> usize {
    match suite {
        Suite::Full => RINGS_BEYOND_LAST_LEVEL,
        Suite::Quick if largest => RINGS_BEYOND_LAST_LEVEL,
        Suite::Quick => 1,
    }
}

/// The span of the stride sweep's point at `stride`: the smallest working set of the sweep
/// whose lines touched (one per stride) are at least twice `last_cache`, so that the point
/// reads memory, not a cache; `None` when the sweep's largest set is too small for that.
/// The span grows with the stride: a 4 KiB stride touches one line in 64 of a 64-byte-line
/// span, and so needs 128 times the last cache.
pub(super) fn stride_span(
    sizes: &[u64],
    stride: usize,
    line: usize,
    last_cache: u64,
) -> Option<u64> {
    let needed = last_cache
        .saturating_mul(2)
        .saturating_mul((stride / line).max(1) as u64);
    sizes.iter().copied().find(|&size| size >= needed)
}

/// Where the last cache before main memory ends, as the named levels show it: `None` when
/// the curve did not reach memory, since a sweep that ended in the caches shows neither
/// where they end nor any point that misses them.
pub(super) fn found_last_cache(named: &[(Level, String)]) -> Option<u64> {
    match named {
        [.., (cache, _), (_, last)] if last == "DRAM" => cache.size_estimate_bytes,
        _ => None,
    }
}

/// The note on the point where the quick sweep stopped early, on the plateau `(from,
/// latency)` of `octaves` octaves at `size` rather than at `largest`.
pub(super) fn stop_warning(
    (from, latency_ns): (u64, f64),
    octaves: usize,
    size: u64,
    largest: u64,
    caches: &[CacheInfo],
) -> Warning {
    let claim = (caches.iter())
        .filter(|c| c.kind != "Instruction")
        .max_by_key(|c| c.size_bytes)
        .map(|c| {
            format!(
                "; the kernel reports a {} L{}",
                size_label(c.size_bytes),
                c.level
            )
        })
        .unwrap_or_default();
    Warning::part_skipped(
        &format!("mem.latency working sets past {}", size_label(size)),
        &format!(
            "the curve was flat at {latency_ns:.0} ns (main memory) from {} to {}, \
             {octaves} octave{} past its last knee, so the quick sweep stopped there{claim} \
             (--max-size or --suite full sweep to {})",
            size_label(from),
            size_label(size),
            if octaves == 1 { "" } else { "s" },
            size_label(largest)
        ),
    )
}

/// The sweep of one run: what it measures with, and what it has learnt so far.
pub(super) struct Sweep {
    pub(super) suite: Suite,
    pub(super) per_octave: usize,
    pub(super) line: usize,
    pub(super) cycle_ns: f64,
    pub(super) group_bytes: usize,
    pub(super) huge_pages: bool,
    pub(super) caches: Vec<CacheInfo>,
    /// The largest cache the kernel reports.
    pub(super) last_level: u64,
    /// The private cache (L2) the kernel reports, or a fallback: rings within it are timed
    /// as a slope.
    pub(super) private_cache: u64,
    /// Whether the sweep may stop early on a plateau of main memory (the quick suite
    /// without `--max-size`).
    pub(super) adaptive: bool,
    pub(super) sizes: Vec<u64>,
    pub(super) largest: u64,
    /// The page-group latency by size, from which the levels are read; kept as measured,
    /// so that a sweep stopped part-way (a mapping refused under a memory limit) still
    /// reads the levels it reached.
    pub(super) curve: Vec<(u64, BenchResult)>,
    /// Where the sweep ends, and the plateau it stopped on when it stopped early.
    pub(super) end: u64,
    pub(super) stopped_on: Option<(u64, f64)>,
    /// The levels, read once the page-group curve is complete, and where its last cache
    /// ends when it reached main memory (the other layouts and the stride sweep need them).
    pub(super) named: Option<Vec<(Level, String)>>,
    pub(super) cache_end: Option<u64>,
    /// Each cache level's size in the bytes the cache holds, by its name, from the
    /// every-line ring around its end (`every_line.rs`).
    pub(super) held: Vec<(String, u64)>,
    /// How long the page-group curve and each layout's last point took: the budget's
    /// forecasts of the points after them.
    pub(super) curve_clock: PointClock,
}

impl Sweep {
    /// The levels the page-group curve shows so far.
    pub(super) fn named_levels(&self) -> Vec<(Level, String)> {
        named_levels(
            &self.curve,
            self.per_octave,
            &self.caches,
            self.stopped_on.is_some(),
        )
    }

    /// One layout's curve, up to where the sweep ends; after the page-group curve, the
    /// levels it shows.
    pub(super) fn layout(
        &mut self,
        runner: &mut Runner,
        label: &'static str,
        layout: Layout,
        results: &mut Vec<BenchResult>,
    ) -> Result<(), ProbeError> {
        let line = self.line;
        let stride = match layout {
            Layout::Sequential => line,
            _ => PREFETCH_PROOF_STRIDE.max(line),
        };
        let mut clock = PointClock::start();
        if label == "pagegroups" {
            self.curve_clock = clock;
        }
        for size in self.sizes.clone() {
            if size > self.end {
                break;
            }
            // The page-group curve decides where the sweep ends, with the budget; a later
            // layout that runs out of time all the same leaves its largest points out.
            if label != "pagegroups" && !runner.config().has_time_for(clock.last) {
                let what = format!("mem.latency/{label} working sets from");
                crate::sweep_time::note_left_out(results, &what, &[size_label(size)]);
                break;
            }
            let ring = Ring {
                name: format!("mem.latency/{label}/{}", size_label(size)),
                label,
                layout,
                size,
                stride,
                line,
                huge_pages: self.huge_pages,
                slope: size <= self.private_cache,
            };
            clock.point_begins();
            let result = self.measure_point(runner, ring)?;
            clock.point_ended();
            let mut stop_note = None;
            if label == "pagegroups" {
                self.curve_clock = clock;
                self.curve.push((size, result.clone()));
                if size < self.end {
                    stop_note = self.where_to_stop(runner.config(), size);
                }
            }
            let mut result = result.as_sweep_detail(is_sweep_detail(size, self.end));
            result.warnings.extend(stop_note);
            results.push(result);
        }
        if label == "pagegroups" {
            let levels = self.named_levels();
            self.cache_end = found_last_cache(&levels);
            self.named = Some(levels);
        }
        Ok(())
    }

    /// Whether the sweep ends at `size`, just measured on the page-group curve, and the note
    /// saying why: in the quick suite without `--max-size`, a plateau of main memory one
    /// octave long where the budget has no room for another octave, or two octaves long;
    /// in any sweep, a next point that the budget has no room for, in all three layouts,
    /// with the other layouts and the strides after it.
    pub(super) fn where_to_stop(
        &mut self,
        config: &latlab_engine::Config,
        size: u64,
    ) -> Option<Warning> {
        let curve = points(&self.curve);
        let next_point = self.curve_clock.last.mul_f64(NEXT_POINT_GROWTH);
        // The other two layouts redo the curve so far, and the every-line ring around the
        // levels' ends and the strides take about a quarter of it each.
        let rest = self.curve_clock.elapsed().mul_f64(2.5);
        if self.adaptive {
            let (short, long) = TAIL_OCTAVES;
            let another_octave = next_point * (3 * self.per_octave) as u32;
            let plateau = match memory_plateau(&curve, self.per_octave, short) {
                Some(plateau) if !config.has_time_for(another_octave + rest) => {
                    Some((plateau, short))
                }
                _ => memory_plateau(&curve, self.per_octave, long).map(|p| (p, long)),
            };
            if let Some((plateau, octaves)) = plateau {
                self.stopped_on = Some(plateau);
                self.end = size;
                return Some(stop_warning(
                    plateau,
                    octaves,
                    size,
                    self.largest,
                    &self.caches,
                ));
            }
        }
        if config.has_time_for(next_point * 3 + rest) {
            return None;
        }
        self.end = size;
        Some(crate::sweep_time::left_out(&format!(
            "mem.latency working sets past {} (to {})",
            size_label(size),
            size_label(self.largest)
        )))
    }

    /// One point of a layout's curve: in the caches, the best of several placements; beyond
    /// them, several rings on fresh mappings (one for the sequential layout).
    pub(super) fn measure_point(
        &self,
        runner: &mut Runner,
        ring: Ring,
    ) -> Result<BenchResult, ProbeError> {
        let size = ring.size;
        // Within the caches as far as the kernel claims and the curve allows: up to twice
        // the end of the last cache the page-group curve found (for the layouts after it),
        // and not past a page-group point on main memory.
        let past_memory_point = ring.label == "pagegroups"
            && (self.curve.last()).is_some_and(|(_, last)| last.summary.median >= MEMORY_FLOOR_NS);
        let within_caches = size <= self.last_level
            && self.cache_end.is_none_or(|found| size <= 2 * found)
            && !past_memory_point;
        Ok(match ring.layout {
            _ if within_caches => measure_placements(runner, ring, self.cycle_ns)?,
            Layout::Sequential => measure_rings(runner, ring, 1, self.cycle_ns)?,
            _ => {
                let rings = rings_beyond_last_level(self.suite, size == self.end);
                measure_rings(runner, ring, rings, self.cycle_ns)?
            }
        })
    }

    /// Each stride at a span whose touched lines are twice the last cache the curve found:
    /// a point that cannot reach that within the sweep is left out, not shown.
    pub(super) fn strides(
        &self,
        runner: &mut Runner,
        results: &mut Vec<BenchResult>,
    ) -> Result<(), ProbeError> {
        let line = self.line;
        let last_cache = self.cache_end.unwrap_or(self.last_level);
        let page = crate::mem::pages::mapped::page_size();
        let strides = SWEEP_STRIDES.iter().copied().filter(|&s| s >= line);
        let mut left_out = Vec::new();
        let mut out_of_time = Vec::new();
        let mut clock = PointClock::start();
        let mut swept: Vec<BenchResult> = Vec::new();
        // Within the sweep as far as it went: where the quick sweep stopped early, the
        // strides do not send it further.
        let reach: Vec<u64> = (self.sizes.iter().copied())
            .filter(|&s| s <= self.end)
            .collect();
        for stride in strides.chain([page]) {
            let name = format!("{STRIDE_PREFIX}{}", size_label(stride as u64));
            let Some(span) = stride_span(&reach, stride, line, last_cache) else {
                left_out.push(name);
                continue;
            };
            if !runner.config().has_time_for(clock.last) {
                out_of_time.push(name);
                continue;
            }
            let ring = Ring {
                name,
                label: "pagegroups",
                layout: Layout::PageGroups {
                    group_bytes: self.group_bytes,
                },
                size: span,
                stride,
                line,
                huge_pages: self.huge_pages,
                slope: false,
            };
            clock.point_begins();
            swept.push(measure(runner, ring, Some(self.cycle_ns))?);
            clock.point_ended();
        }
        check_strides(&mut swept);
        results.extend(swept);
        crate::sweep_time::note_left_out(results, "", &out_of_time);
        if !left_out.is_empty()
            && let Some(last) = results.last_mut()
        {
            last.warnings.push(Warning::part_skipped(
                &left_out.join(", "),
                &format!(
                    "to touch twice the {} last cache the curve found, a stride needs a \
                     span of 2 × that × (stride ÷ {line} B); the sweep stops at {}: raise \
                     --max-size to measure them",
                    size_label(last_cache),
                    size_label(self.end)
                ),
            ));
        }
        Ok(())
    }
}

/// One result per named level: the median over its plateau, where the page-group curve
/// leaves it (`end_span_bytes`), its size in the bytes the cache holds (`held`, from the
/// every-line ring) and the size the kernel reports for a cache of that level.
pub(super) fn level_results(
    curve: &[(u64, BenchResult)],
    named: &[(Level, String)],
    held: &[(String, u64)],
    caches: &[CacheInfo],
    cycle_ns: f64,
    per_octave: usize,
) -> Vec<BenchResult> {
    let mut results: Vec<BenchResult> = named
        .iter()
        .filter_map(|(level, name)| {
            let plateau: Vec<(u64, &BenchResult)> = curve[level.points.clone()]
                .iter()
                .map(|(size, r)| (*size, r))
                .collect();
            let mut result = levels::plateau_result(
                &format!("{LEVEL_PREFIX}{name}"),
                name,
                "pagegroups",
                &plateau,
            )?;
            let cycles = result.summary.median / cycle_ns;
            result = result.with_parameter(key::CYCLES_PER_LOAD, cycles);
            if let Some(end_span) = level.size_estimate_bytes {
                result = result.with_parameter(END_SPAN_BYTES, end_span);
            }
            if let Some((_, estimate)) = held.iter().find(|(held, _)| held == name) {
                result = result.with_parameter(key::SIZE_ESTIMATE_BYTES, *estimate);
                if let Some(reported) = reported_size(name, caches) {
                    result = levels::with_reported_size(
                        result,
                        name,
                        *estimate,
                        KERNEL_REPORTED_BYTES,
                        reported,
                    );
                }
            }
            Some(result)
        })
        .collect();
    if let (Some(memory), Some(missing)) = (
        results.last_mut().filter(|r| r.name.ends_with("/DRAM")),
        missing_levels(curve, named, caches, per_octave),
    ) {
        memory.warnings.push(missing);
    }
    results
}

/// Where the curve reached main memory with fewer cache levels than the kernel reports, why
/// the missing ones have no result: a level is a plateau an octave long, or half an octave
/// standing twice from its neighbours ([`levels::detect`]), and a cache the curve climbs
/// through as a slope has neither at this sampling (as a guest's shared L3 can be:
/// the book's memory methods, "The figures behind the rules"). Says what the curve read between the last cache's plateau and memory's.
fn missing_levels(
    curve: &[(u64, BenchResult)],
    named: &[(Level, String)],
    caches: &[CacheInfo],
    per_octave: usize,
) -> Option<Warning> {
    let [.., (cache, cache_name), (memory, memory_name)] = named else {
        return None;
    };
    let found = named.len() - 1;
    let reported = levels::data_cache_levels(caches);
    if memory_name != "DRAM" || found >= reported {
        return None;
    }
    let missing: Vec<String> = (found + 1..=reported).map(|n| format!("L{n}")).collect();
    let between = &curve[cache.points.end..memory.points.start];
    let climb = match (between.first(), between.last()) {
        (Some((from, first)), Some((to, last))) => format!(
            "from {} to {} it climbs from {:.1} to {:.1} ns",
            size_label(*from),
            size_label(*to),
            first.summary.median,
            last.summary.median
        ),
        _ => "it steps straight from one to the other".to_string(),
    };
    let kernel: Vec<String> = (missing.iter())
        .filter_map(|name| {
            Some(format!(
                "{} {name}",
                size_label(reported_size(name, caches)?)
            ))
        })
        .collect();
    let finer = if per_octave < points_per_octave(Suite::Full) {
        "; --suite full samples the curve more finely"
    } else {
        ""
    };
    Some(Warning::PartSkipped {
        part: format!("{LEVEL_PREFIX}{}", missing.join(" and ")),
        reason: format!(
            "between the {cache_name} plateau (to {}) and main memory's (from {}) the curve has \
             no plateau an octave long ({} sizes at this sampling): {climb}; the kernel reports \
             {reported} levels of cache ({}){finer}",
            size_label(curve[cache.points.end - 1].0),
            size_label(curve[memory.points.start].0),
            per_octave + 1,
            kernel.join(", "),
        ),
    })
}

/// Marks a stride sweep in which a longer stride read faster than a shorter one beyond both
/// intervals: spatial prefetch only ever helps the shorter strides, so that means a point
/// read a cache or the machine changed under it.
pub(super) fn check_strides(strides: &mut [BenchResult]) {
    for i in 1..strides.len() {
        let (shorter, longer) = (&strides[i - 1], &strides[i]);
        if longer.summary.median_ci95[1] < shorter.summary.median_ci95[0] {
            let failure = format!(
                "{} read {:.1} ns, faster than {} at {:.1} ns beyond both intervals",
                longer.name, longer.summary.median, shorter.name, shorter.summary.median
            );
            strides[i].warnings.push(Warning::check_failed(
                "a longer stride is never faster",
                &failure,
            ));
        }
    }
}
