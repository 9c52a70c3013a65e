//! `mem.latency`: load-to-use latency by working-set size, and the cache levels it reveals.
//!
//! For each working set from 1 KiB (4 KiB in the quick suite) up to the largest (by default
//! four times the last-level cache, at most 512 MiB) a ring of cache lines is built (see
//! `chase.rs`) and walked with dependent loads, 16 per call, the last pointer returned
//! through the engine's value sink. Three layouts show what the hardware does: `random` (prefetchers defeated, TLB misses included),
//! `pagegroups` (random lines within 64-page groups: cache latency without most TLB misses;
//! 64 pages because that is what the first-level data TLB of current cores maps, and the
//! default of multichase) and `sequential` (prefetched: what the prefetchers hide).
//!
//! `random` and `pagegroups` use one line per [`PREFETCH_PROOF_STRIDE`] bytes: a miss brings
//! in its buddy line of the 128-byte pair and the spatial prefetchers' neighbours, which a
//! ring over every line would visit soon after as cache hits, so that part of the "memory"
//! latency would be an L2 hit. `sequential` uses every line. A stride sweep (64, 128, 256 and
//! 512 bytes, and a page) over the `pagegroups` layout shows what spatial prefetch hides, as
//! `sequential` shows what stream prefetch hides. Each stride spans the smallest working set
//! of the sweep whose touched lines are twice the last cache the curve found (the kernel's
//! when the sweep did not reach memory), so every point reads memory; a stride the sweep is
//! too small for (as far as it went, where the quick sweep stopped early) is left out with a
//! note. Working sets
//! are labelled by the bytes they span; `touched_bytes` records the lines used.
//!
//! Beyond the caches (past the kernel's last-level cache, past twice the end of the last
//! cache the page-group curve found, or past a page-group point that read main memory) each
//! point is three rings, each on a fresh mapping, their samples pooled: one ring's figure
//! depends on where its pages landed, and the spread across rings (`setup_medians_ns`,
//! `setup_spread`) shows by how much. The quick suite builds three at the largest working
//! set only. The probe is measured once in a run of rounds
//! ([`crate::Rounds::Once`]); instead, each working set within the caches is measured on
//! [`PLACEMENTS_WITHIN_CACHES`] rings, each on a fresh mapping with its share of the samples,
//! whose medians are its rounds (`round_medians_ns`): near a cache's end the figure depends
//! on which physical pages the ring got, and that is what moves it between runs.
//!
//! The `pagegroups` curve is measured first. In the quick suite without `--max-size`, the
//! sweep ends where the curve has told its story: once its last two octaves lie flat on main
//! memory (within 15% of their median, 60 ns or more), the other layouts go as far and no
//! further, with a note naming the plateau and the kernel's claim. A kernel's cache sizes
//! are a claim (a guest may report the host's 260 MiB L3 and get 32 MiB of it); the curve
//! is not. The levels are found on the `pagegroups` curve (`levels.rs`) and compared with
//! the caches the kernel reports; where the curve reached main memory, the last cache's end
//! is kept for the sweeps after it ([`crate::Findings`]). Cycles per load use the core clock measured by `cpu.frequency`.
//! Pages are base pages (`MADV_NOHUGEPAGE`) unless huge pages are asked for.

use super::chase::{Chase, Layout, walk};
use super::levels::{self, Level, Point};
use super::sizes::{is_sweep_detail, size_label, working_sets};
use super::sweep_point;
use crate::budget::PointClock;
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical, keeping_measured};
use latlab_engine::environment::CacheInfo;
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{
    HeadlineRow, Line, Measure, Panel, Plot, Presentation, Scale, Source, Stroke, Template, Unit,
};
use latlab_engine::{BenchResult, Runner, Warning};

/// A cache level's size as the kernel reports it, beside the size the curve found.
const KERNEL_REPORTED_BYTES: Key = Key::new("kernel_reported_bytes");
const PAGES: Key = Key::new("pages");
const TOUCHED_BYTES: Key = Key::new("touched_bytes");

/// The results it lists ([`ProbeSpec::results`]).
const RESULTS: &[&str] = &[
    "mem.latency/random/{size}",
    "mem.latency/pagegroups/{size}",
    "mem.latency/sequential/{size}",
    "mem.latency/stride/{size}",
    "mem.latency/level/{level}",
];

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "mem.latency",
    method: "dependent loads over a random cyclic permutation of cache lines, by working-set size",
    timing: crate::Timing::Slope,
    timing_note: Some(
        "between 16 and 32 loads per call up to the second-level cache; beyond it, calibrated loops less the empty loop (a call of 16 loads is hundreds of cycles)",
    ),
    results: RESULTS,
    typical: Typical {
        quick_s: 7.3,
        full_s: 118.0,
    },
    alone: false,
    process: crate::Process::Shared,
    rounds: crate::Rounds::Once {
        why: "the levels and the stride sweep's spans are read from the whole curve, which a \
              round's share of the samples blurs (a round named L3's plateau DRAM), and the \
              rings beyond the last cache cost more to build than to time",
    },
    presentation: Presentation {
        plots: &[Plot {
            stem: "mem-latency",
            title: "mem.latency: load-to-use latency by working set",
            caption: "mem.latency: the time of one dependent load (median) as the working set \
                      grows, one line per chase layout. Each plateau is a level of the memory \
                      hierarchy; the wide bands are the levels found, at their latency over \
                      their plateau, and the grey lines where each level ends.",
            x_parameter: key::WORKING_SET_BYTES,
            x_label: "working set",
            panels: &[Panel {
                y_label: "time per load (median)",
                y_unit: Unit::Nanoseconds,
                y_scale: Scale::Log,
                lines: &[
                    layout_line("mem.latency/pagegroups/{size}", "pagegroups", 0),
                    layout_line("mem.latency/random/{size}", "random", 1),
                    layout_line("mem.latency/sequential/{size}", "sequential", 2),
                ],
                levels: Some(Template("mem.latency/level/{level}")),
                host_caches: true,
            }],
        }],
        headline: &[
            level_row(10, "L1 cache hit", Some("l1_hit"), "mem.latency/level/L1"),
            level_row(30, "L2 cache hit", Some("l2_hit"), "mem.latency/level/L2"),
            level_row(40, "L3 cache hit", None, "mem.latency/level/L3"),
            level_row(
                60,
                "Main memory reference",
                Some("dram"),
                "mem.latency/level/DRAM",
            ),
        ],
        checked_by: &[latlab_engine::presentation::CheckedBy {
            check: latlab_engine::presentation::StabilityCheck::MemoryChases,
            results: RESULTS,
        }],
        ..Presentation::NONE
    },
    run,
};

/// A chase layout's line on the latency curve, by order of the strokes.
const fn layout_line(results: &'static str, label: &'static str, color: u8) -> Line {
    Line {
        results: Template(results),
        label,
        y: Measure::Median,
        stroke: [Stroke::Line, Stroke::Dashed, Stroke::Dotted][color as usize],
        color,
    }
}

/// A headline row read from a level of the curve.
const fn level_row(
    order: u16,
    operation: &'static str,
    reference: Option<&'static str>,
    level: &'static str,
) -> HeadlineRow {
    HeadlineRow {
        order,
        operation,
        reference,
        source: Source::Result(Template(level)),
        qualifier: "",
        only_with_family: false,
    }
}

/// The levels found on the curve: this prefix, then `L1`, `L2`, `L3` or `DRAM`.
const LEVEL_PREFIX: &str = "mem.latency/level/";
/// The stride sweep at the largest working set: this prefix, then the stride.
const STRIDE_PREFIX: &str = "mem.latency/stride/";

/// The smallest working set.
const MIN_WORKING_SET: u64 = 1024;
/// The quick suite's smallest working set: still a few points on the first-level plateau of
/// any current core (32 KiB or more), with four fewer rings per layout.
const QUICK_MIN_WORKING_SET: u64 = 4096;
/// Dependent loads per call of the measured closure.
const LOADS_PER_CALL: usize = 16;
/// Pages per group of the `pagegroups` layout.
pub(crate) const TLB_GROUP_PAGES: usize = 64;
/// The distance between the lines that the random rings use: cores fetch lines in aligned
/// 128-byte pairs, and the spatial prefetchers of current x86-64 and Arm cores fetch the
/// neighbouring lines of a miss; 256 bytes leaves all of them unused, and is the default of
/// the established memory-latency tools (multichase) for that reason.
pub(crate) const PREFETCH_PROOF_STRIDE: usize = 256;
/// Rings built, each on a fresh mapping, for a working set beyond the last-level cache:
/// where the pages land in memory (and what the host does meanwhile) moves one ring's
/// figure by several per cent, and the spread across rings shows by how much.
const RINGS_BEYOND_LAST_LEVEL: usize = 3;
/// The strides of the stride sweep, in bytes; a page is added.
const SWEEP_STRIDES: [usize; 4] = [64, 128, 256, 512];
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

/// How many octaves the curve must lie flat, past its last knee, before the quick sweep
/// stops: one is enough to call the plateau a level; a second, which the sweep goes on to
/// where the run's budget allows, shows that it does not climb again.
const TAIL_OCTAVES: (usize, usize) = (1, 2);
/// How far a point of that plateau may lie from its median: the ramp into main memory can
/// be gradual (on a Zen 4 guest 80, 113, 127 and 146 ns at 22.6, 32, 45 and 64 MiB), and
/// its last point within this is as good a start of the plateau as the next.
const TAIL_FLATNESS: f64 = 0.15;
/// How much longer the next point of the curve is expected to take than the last: a point
/// past the caches builds rings as large as its working set, half an octave larger.
const NEXT_POINT_GROWTH: f64 = 1.5;
/// The least latency of a plateau the sweep stops on: main memory. Main memory is 60 ns
/// away or more on every current machine (80-150 ns on servers); no cache level is.
const MEMORY_FLOOR_NS: f64 = 60.0;

/// Where the quick sweep may stop: the curve's last `octaves` octaves (its last
/// `octaves × per_octave + 1` points) lie within [`TAIL_FLATNESS`] of their median, and
/// that median reads main memory ([`MEMORY_FLOOR_NS`]). `(first size of the plateau, its
/// latency)`, or `None` while the curve has more to tell.
fn memory_plateau(curve: &[Point], per_octave: usize, octaves: usize) -> Option<(u64, f64)> {
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
fn rings_beyond_last_level(suite: Suite, largest: bool) -> usize {
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
fn stride_span(sizes: &[u64], stride: usize, line: usize, last_cache: u64) -> Option<u64> {
    let needed = last_cache
        .saturating_mul(2)
        .saturating_mul((stride / line).max(1) as u64);
    sizes.iter().copied().find(|&size| size >= needed)
}

/// Where the last cache before main memory ends, as the named levels show it: `None` when
/// the curve did not reach memory, since a sweep that ended in the caches shows neither
/// where they end nor any point that misses them.
fn found_last_cache(named: &[(Level, String)]) -> Option<u64> {
    match named {
        [.., (cache, _), (_, last)] if last == "DRAM" => cache.size_estimate_bytes,
        _ => None,
    }
}

/// The note on the point where the quick sweep stopped early, on the plateau `(from,
/// latency)` of `octaves` octaves at `size` rather than at `largest`.
fn stop_warning(
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

/// The points of the page-group curve.
fn points(curve: &[(u64, BenchResult)]) -> Vec<Point> {
    (curve.iter())
        .map(|(size_bytes, result)| Point {
            size_bytes: *size_bytes,
            latency_ns: result.summary.median,
        })
        .collect()
}

fn points_per_octave(suite: Suite) -> usize {
    match suite {
        Suite::Quick => 2,
        Suite::Full => 8,
    }
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let caches = ctx.host().caches();
    let line = line_bytes(&caches);
    let max = ctx.max_working_set();
    let suite = ctx.suite;
    let per_octave = points_per_octave(suite);
    let smallest = match suite {
        Suite::Quick => QUICK_MIN_WORKING_SET,
        Suite::Full => MIN_WORKING_SET,
    };
    let sizes = working_sets(smallest, max, per_octave, line as u64);
    let cycle = ctx.cycle()?;
    let largest = sizes.last().copied().unwrap_or(max);
    let mut sweep = Sweep {
        suite,
        per_octave,
        line,
        cycle_ns: cycle.ns(),
        group_bytes: TLB_GROUP_PAGES * super::buffer::page_size(),
        huge_pages: ctx.memory.huge_pages,
        last_level: (caches.iter())
            .map(|c| c.size_bytes)
            .max()
            .unwrap_or(u64::MAX),
        private_cache: reported_size("L2", &caches).unwrap_or(FALLBACK_PRIVATE_CACHE),
        adaptive: suite == Suite::Quick && ctx.memory.max_size_bytes.is_none(),
        caches,
        sizes,
        largest,
        curve: Vec::new(),
        end: largest,
        stopped_on: None,
        named: None,
        cache_end: None,
        curve_clock: PointClock::start(),
    };
    let findings = std::sync::Arc::clone(&ctx.findings);
    let swept = keeping_measured(|results| {
        ctx.runner.scoped(sweep_point, |runner| {
            // The page-group curve first: the levels are read on it, and in the quick suite
            // it says where the sweep has told its story; the other layouts go as far.
            let group_bytes = sweep.group_bytes;
            for (label, layout) in [
                ("pagegroups", Layout::PageGroups { group_bytes }),
                ("random", Layout::Random),
                ("sequential", Layout::Sequential),
            ] {
                sweep.layout(runner, label, layout, results)?;
            }
            if let Some(found) = sweep.cache_end {
                findings.found_last_cache(found);
            }
            sweep.strides(runner, results)
        })
    });
    let named = (sweep.named.take()).unwrap_or_else(|| sweep.named_levels());
    let levels = level_results(&sweep.curve, &named, &sweep.caches, sweep.cycle_ns);
    let (stopped, mut results) = match swept {
        Ok(results) => (None, results),
        Err(stopped) => {
            let (cause, measured) = stopped.into_parts();
            (Some(cause), measured)
        }
    };
    results.extend(levels);
    cycle.mark(&mut results);
    match stopped {
        None => Ok(results),
        Some(cause) => Err(cause.after(results)),
    }
}

/// The sweep of one run: what it measures with, and what it has learnt so far.
struct Sweep {
    suite: Suite,
    per_octave: usize,
    line: usize,
    cycle_ns: f64,
    group_bytes: usize,
    huge_pages: bool,
    caches: Vec<CacheInfo>,
    /// The largest cache the kernel reports.
    last_level: u64,
    /// The private cache (L2) the kernel reports, or a fallback: rings within it are timed
    /// as a slope.
    private_cache: u64,
    /// Whether the sweep may stop early on a plateau of main memory (the quick suite
    /// without `--max-size`).
    adaptive: bool,
    sizes: Vec<u64>,
    largest: u64,
    /// The page-group latency by size, from which the levels are read; kept as measured,
    /// so that a sweep stopped part-way (a mapping refused under a memory limit) still
    /// reads the levels it reached.
    curve: Vec<(u64, BenchResult)>,
    /// Where the sweep ends, and the plateau it stopped on when it stopped early.
    end: u64,
    stopped_on: Option<(u64, f64)>,
    /// The levels, read once the page-group curve is complete, and where its last cache
    /// ends when it reached main memory (the other layouts and the stride sweep need them).
    named: Option<Vec<(Level, String)>>,
    cache_end: Option<u64>,
    /// How long the page-group curve and each layout's last point took: the budget's
    /// forecasts of the points after them.
    curve_clock: PointClock,
}

impl Sweep {
    /// The levels the page-group curve shows so far.
    fn named_levels(&self) -> Vec<(Level, String)> {
        named_levels(
            &self.curve,
            self.per_octave,
            &self.caches,
            self.stopped_on.is_some(),
        )
    }

    /// One layout's curve, up to where the sweep ends; after the page-group curve, the
    /// levels it shows.
    fn layout(
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
                crate::budget::note_left_out(results, &what, &[size_label(size)]);
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
    fn where_to_stop(&mut self, config: &latlab_engine::Config, size: u64) -> Option<Warning> {
        let curve = points(&self.curve);
        let next_point = self.curve_clock.last.mul_f64(NEXT_POINT_GROWTH);
        // The other two layouts redo the curve so far, and the strides take about a
        // quarter of it.
        let rest = self.curve_clock.elapsed().mul_f64(2.25);
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
        Some(crate::budget::left_out(&format!(
            "mem.latency working sets past {} (to {})",
            size_label(size),
            size_label(self.largest)
        )))
    }

    /// One point of a layout's curve: in the caches, the best of several placements; beyond
    /// them, several rings on fresh mappings (one for the sequential layout).
    fn measure_point(&self, runner: &mut Runner, ring: Ring) -> Result<BenchResult, ProbeError> {
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
    fn strides(
        &self,
        runner: &mut Runner,
        results: &mut Vec<BenchResult>,
    ) -> Result<(), ProbeError> {
        let line = self.line;
        let last_cache = self.cache_end.unwrap_or(self.last_level);
        let page = super::buffer::page_size();
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
        crate::budget::note_left_out(results, "", &out_of_time);
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

/// One ring of the sweep.
pub(crate) struct Ring {
    pub name: String,
    pub label: &'static str,
    pub layout: Layout,
    /// The bytes spanned.
    pub size: u64,
    /// One line of `line` bytes is used per `stride` bytes.
    pub stride: usize,
    pub line: usize,
    pub huge_pages: bool,
    /// Time a load as the slope between 16 and 32 loads per call rather than by subtracting
    /// the empty loop: for rings in the private caches, where a load takes a few cycles and
    /// the loop's own instructions run beside the chain.
    pub slope: bool,
}

/// Measures `rings` rings like `ring`, each on its own fresh mapping, and pools their
/// samples; the result carries each ring's median and their spread.
fn measure_rings(
    runner: &mut Runner,
    ring: Ring,
    rings: usize,
    cycle_ns: f64,
) -> Result<BenchResult, ProbeError> {
    let mut parts = Vec::with_capacity(rings);
    for _ in 0..rings {
        let copy = Ring {
            name: ring.name.clone(),
            ..ring
        };
        parts.push(measure(runner, copy, None)?);
    }
    let pooled = BenchResult::pooled(parts).expect("at least one ring");
    let cycles = pooled.summary.median / cycle_ns;
    Ok(pooled.with_parameter(key::CYCLES_PER_LOAD, cycles))
}

/// Rings a working set within the caches is measured on, one after another.
const PLACEMENTS_WITHIN_CACHES: usize = 3;

/// Measures [`PLACEMENTS_WITHIN_CACHES`] rings like `ring`, each on its own fresh mapping
/// with its share of the samples, merged as rounds: the result carries each placement's
/// median (`round_medians_ns`), which shows how far placement alone moves the figure.
fn measure_placements(
    runner: &mut Runner,
    ring: Ring,
    cycle_ns: f64,
) -> Result<BenchResult, ProbeError> {
    let placements = runner.scoped(
        |config| config.rounds = PLACEMENTS_WITHIN_CACHES,
        |runner| {
            (0..PLACEMENTS_WITHIN_CACHES)
                .map(|_| {
                    let copy = Ring {
                        name: ring.name.clone(),
                        ..ring
                    };
                    measure(runner, copy, None)
                })
                .collect::<Result<Vec<_>, _>>()
        },
    )?;
    let merged = BenchResult::from_rounds(placements).expect("at least one placement");
    let cycles = merged.summary.median / cycle_ns;
    Ok(merged.with_parameter(key::CYCLES_PER_LOAD, cycles))
}

/// Builds the ring on a fresh mapping and times dependent loads around it; with the core's
/// cycle time, also in cycles per load.
/// The pages a ring was given: base pages, or the huge pages asked for and those granted.
fn pages_of(chase: &Chase, huge: bool, size: u64) -> String {
    match (huge, chase.huge_page_bytes()) {
        (false, _) => "base pages (MADV_NOHUGEPAGE)".to_string(),
        (true, Some(bytes)) => format!(
            "transparent huge pages requested (MADV_HUGEPAGE); {} of {} granted",
            size_label(bytes),
            size_label(size)
        ),
        (true, None) => "transparent huge pages requested (MADV_HUGEPAGE); grant unknown".into(),
    }
}

pub(crate) fn measure(
    runner: &mut Runner,
    ring: Ring,
    cycle_ns: Option<f64>,
) -> Result<BenchResult, ProbeError> {
    let Ring {
        name,
        label,
        layout,
        size,
        stride,
        line,
        huge_pages: huge,
        slope,
    } = ring;
    let chase = Chase::build(size as usize, stride, layout, huge).map_err(|e| {
        ProbeError::Failed(format!(
            "could not map a {} working set: {e}",
            size_label(size)
        ))
    })?;
    let pages = pages_of(&chase, huge, size);
    chase.warm();
    let method = format!(
        "dependent loads over a {label} ring of {} lines, one per {stride} bytes ({} spanned)",
        chase.lines(),
        size_label(size)
    );
    let mut p = chase.start();
    let mut q = chase.start();
    // Each walk below is safe because the ring lives until after the benchmark (`chase`
    // is dropped below).
    let result = if slope {
        runner.bench_slope(
            &name,
            &format!("{method}: the slope between 16 and 32 loads per call"),
            (LOADS_PER_CALL as u64, move || {
                // SAFETY: `p` is in the ring, which outlives the benchmark.
                p = unsafe { walk::<LOADS_PER_CALL>(p) };
                p
            }),
            (2 * LOADS_PER_CALL as u64, move || {
                // SAFETY: `q` is in the ring, which outlives the benchmark.
                q = unsafe { walk::<{ 2 * LOADS_PER_CALL }>(q) };
                q
            }),
        )?
    } else {
        runner
            .bench(&name, &method, move || {
                // SAFETY: `p` is in the ring, which outlives the benchmark.
                p = unsafe { walk::<LOADS_PER_CALL>(p) };
                p
            })?
            .per_operation(LOADS_PER_CALL as u64)
    };
    let chase_lines = chase.lines();
    drop(chase);
    let result = result
        .with_parameter(key::WORKING_SET_BYTES, size)
        .with_parameter(key::LAYOUT, label)
        .with_parameter(latlab_engine::names::key::LINE_BYTES, line)
        .with_parameter(key::STRIDE_BYTES, stride)
        .with_parameter(TOUCHED_BYTES, chase_lines * line)
        .with_parameter(PAGES, pages);
    Ok(match cycle_ns {
        Some(cycle_ns) => {
            let cycles = result.summary.median / cycle_ns;
            result.with_parameter(key::CYCLES_PER_LOAD, cycles)
        }
        None => result,
    })
}

/// The levels the `pagegroups` curve shows, each with its name (see [`level_names`]). The
/// curve reached memory where it spans twice the largest cache the kernel reports, or where
/// the sweep stopped on a plateau of main memory (`stopped_on_memory`).
fn named_levels(
    curve: &[(u64, BenchResult)],
    per_octave: usize,
    caches: &[CacheInfo],
    stopped_on_memory: bool,
) -> Vec<(Level, String)> {
    let points = points(curve);
    let found = levels::detect(&points, per_octave);
    let largest_cache = caches.iter().map(|c| c.size_bytes).max();
    let largest_set = points.last().map_or(0, |p| p.size_bytes);
    let reached_memory =
        stopped_on_memory || largest_cache.is_some_and(|llc| largest_set >= 2 * llc);
    let latencies: Vec<f64> = found.iter().map(|l| l.latency_ns).collect();
    let names = level_names(&latencies, data_cache_levels(caches), reached_memory);
    found.into_iter().zip(names).collect()
}

/// One result per named level: the median over its plateau, its estimated size, and the
/// size the kernel reports for a cache of that level.
fn level_results(
    curve: &[(u64, BenchResult)],
    named: &[(Level, String)],
    caches: &[CacheInfo],
    cycle_ns: f64,
) -> Vec<BenchResult> {
    named
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
            if let Some(estimate) = level.size_estimate_bytes {
                result = result.with_parameter(key::SIZE_ESTIMATE_BYTES, estimate);
                if let Some(reported) = reported_size(name, caches) {
                    result = levels::with_reported_size(
                        result,
                        name,
                        estimate,
                        KERNEL_REPORTED_BYTES,
                        reported,
                    );
                }
            }
            Some(result)
        })
        .collect()
}

/// Marks a stride sweep in which a longer stride read faster than a shorter one beyond both
/// intervals: spatial prefetch only ever helps the shorter strides, so that means a point
/// read a cache or the machine changed under it.
fn check_strides(strides: &mut [BenchResult]) {
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

/// How far above the level before it the last level must read to be main memory.
const MEMORY_STEP: f64 = 2.0;

/// The names of the levels the curve found, from their latencies: `L1`, `L2` … and `DRAM`
/// for the last when the curve shows it is memory. That is when it reads at least
/// [`MEMORY_STEP`] times the level before it and either lies beyond the cache levels the
/// kernel reports (`cache_levels` of them; a VM may report the host's sizes, but not a
/// level it lacks), or the sweep reached twice the largest cache the kernel reports. So a
/// fourth level on a machine with three caches is memory, whatever size the kernel gives its
/// last cache.
fn level_names(latencies: &[f64], cache_levels: usize, reached_memory: bool) -> Vec<String> {
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

/// The first-level data cache's line, as the kernel reports it; 64 bytes where it does not.
pub(crate) fn line_bytes(caches: &[CacheInfo]) -> usize {
    caches
        .iter()
        .find(|c| c.level == 1 && c.kind != "Instruction")
        .and_then(|c| c.line_bytes)
        .map_or(64, |l| l as usize)
}

/// How many levels of data (or unified) cache the kernel reports.
fn data_cache_levels(caches: &[CacheInfo]) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each stride spans enough to touch twice the last cache, so its span grows with the
    /// stride; one the sweep cannot reach is left out. (On a Zen 5 guest with a 32 MiB L3,
    /// one 256 MiB span for every stride read a 4 KiB stride at 22.7 ns: 4 MiB of lines, in
    /// the L3.)
    #[test]
    fn every_stride_spans_twice_the_last_cache_in_lines() {
        let sizes: Vec<u64> = (20..=30).map(|p| 1u64 << p).collect(); // 1 MiB … 1 GiB
        let last_cache = 32 << 20;
        assert_eq!(stride_span(&sizes, 64, 64, last_cache), Some(64 << 20));
        assert_eq!(stride_span(&sizes, 256, 64, last_cache), Some(256 << 20));
        assert_eq!(stride_span(&sizes, 512, 64, last_cache), Some(512 << 20));
        assert_eq!(stride_span(&sizes, 4096, 64, last_cache), None);
        for stride in [64, 128, 256, 512] {
            let span = stride_span(&sizes, stride, 64, last_cache).unwrap();
            assert!(span / stride as u64 * 64 >= 2 * last_cache, "{stride}");
        }
    }

    /// A longer stride that reads faster than a shorter one beyond both intervals is marked;
    /// one within the noise is not.
    #[test]
    fn a_longer_stride_that_reads_faster_is_marked() {
        let stride = |name: &str, ns: f64| {
            let samples = (0..30)
                .map(|i| ns * (1.0 + (i % 5) as f64 * 0.002))
                .collect();
            BenchResult::derived(name, "m", samples, Vec::new(), Vec::new()).unwrap()
        };
        let mut strides = [
            stride("s/64B", 90.0),
            stride("s/128B", 120.0),
            stride("s/256B", 119.9),
            stride("s/4KiB", 22.7),
        ];
        check_strides(&mut strides);
        assert!(strides[1].warnings.is_empty() && strides[2].warnings.is_empty());
        assert!(matches!(
            &strides[3].warnings[..],
            [Warning::CheckFailed { failure, .. }]
                if failure.contains("s/4KiB read 22.") && failure.contains("faster than s/256B")
        ));
    }

    /// Levels are named by the curve. A fourth level on a machine whose kernel reports three
    /// caches is memory, even when the kernel's last cache (a VM's 260 MiB L3) is larger
    /// than the sweep; a last level that does not step up is not; a sweep that ends in the
    /// last cache names no memory.
    #[test]
    fn the_last_level_is_memory_when_the_curve_says_so() {
        let names = |latencies: &[f64], reached| level_names(latencies, 3, reached);
        // Emerald Rapids guest, swept to 256 MiB: L1 L2 L3, then flat at ~125 ns.
        assert_eq!(
            names(&[1.6, 5.0, 38.0, 125.0], false),
            ["L1", "L2", "L3", "DRAM"]
        );
        // Swept past twice the last cache: the third level is memory.
        assert_eq!(names(&[1.3, 4.0, 130.0], true), ["L1", "L2", "DRAM"]);
        // Swept only into the L3 (a small --max-size): no memory.
        assert_eq!(names(&[1.3, 4.0, 13.0], false), ["L1", "L2", "L3"]);
        // An extra step of less than twice (a TLB or a slice boundary) is not memory.
        assert_eq!(
            names(&[1.3, 4.0, 13.0, 19.0], false),
            ["L1", "L2", "L3", "L4"]
        );
        assert_eq!(names(&[1.3], true), ["L1"]);
    }

    /// The quick sweep stops once the curve has lain flat on main memory for two octaves:
    /// on the Emerald Rapids guest's curve (a 260 MiB L3 claimed, L3 left near 32 MiB, flat
    /// at ~125 ns from 64 MiB) it stops by 256 MiB, not 1 GiB; it does not stop on a cache
    /// plateau however long, nor on a ramp still climbing.
    #[test]
    fn the_sweep_stops_where_the_curve_has_told_its_story() {
        const MIB: u64 = 1 << 20;
        let curve = |points: &[(f64, f64)]| -> Vec<Point> {
            (points.iter())
                .map(|&(mib, latency_ns)| Point {
                    size_bytes: (mib * MIB as f64) as u64,
                    latency_ns,
                })
                .collect()
        };
        let emerald = [
            (16.0, 38.0),
            (22.6, 40.0),
            (32.0, 60.0),
            (45.3, 110.0),
            (64.0, 124.0),
            (90.5, 126.0),
            (128.0, 125.0),
            (181.0, 127.0),
            (256.0, 124.0),
        ];
        // The first prefix of the curve the sweep stops on: two octaves past the knee (the
        // 181 MiB point, 45-181 MiB within 15%) at the earliest, the whole curve at the latest.
        let stop = (5..=emerald.len())
            .find_map(|end| Some((end, memory_plateau(&curve(&emerald[..end]), 2, 2)?)))
            .unwrap();
        let (end, (from, latency_ns)) = stop;
        assert!(end >= 8, "stopped at {:?}", emerald[end - 1]);
        assert!(
            from >= 45 * MIB && (110.0..=127.0).contains(&latency_ns),
            "{stop:?}"
        );
        // One octave flat (64-128 MiB), where the budget allows no more: two points sooner.
        let one = (5..=emerald.len())
            .find_map(|end| Some((end, memory_plateau(&curve(&emerald[..end]), 2, 1)?)))
            .unwrap();
        assert_eq!(one.0 + 2, end, "{one:?} {stop:?}");
        // A long L3 plateau (Genoa-X, 96 MiB) is not main memory.
        let big_l3 = [
            (4.0, 14.0),
            (8.0, 14.5),
            (16.0, 15.0),
            (32.0, 15.5),
            (64.0, 16.0),
        ];
        assert_eq!(memory_plateau(&curve(&big_l3), 1, 2), None);
        assert_eq!(memory_plateau(&curve(&big_l3), 1, 1), None);
        // A ramp into memory is not flat yet.
        let ramp = [
            (8.0, 70.0),
            (11.3, 90.0),
            (16.0, 110.0),
            (22.6, 125.0),
            (32.0, 130.0),
        ];
        assert_eq!(memory_plateau(&curve(&ramp), 2, 2), None);
        // Its last octave alone lies within 15% (110-130 ns): where the budget has no room
        // for a second octave, the sweep stops there, on the ramp's last points.
        assert!(memory_plateau(&curve(&ramp), 2, 1).is_some());
    }

    /// Small sizes only: a working set well outside L1 is slower than one inside it, and a
    /// bigger working set is never faster by more than noise.
    #[test]
    fn bigger_working_sets_are_not_faster() {
        let mut runner = crate::test_runner(7, std::time::Duration::from_micros(500));
        let mut latency = |size: u64| {
            let ring = Ring {
                name: format!("random/{size}"),
                label: "random",
                layout: Layout::Random,
                size,
                stride: PREFETCH_PROOF_STRIDE,
                line: 64,
                huge_pages: false,
                slope: size <= 256 << 10,
            };
            measure(&mut runner, ring, None).unwrap().summary.median
        };
        let small = latency(8 << 10);
        let medium = latency(256 << 10);
        let large = latency(8 << 20);
        assert!(
            medium > 1.5 * small,
            "8 KiB {small} ns, 256 KiB {medium} ns"
        );
        assert!(
            large > 0.8 * medium,
            "256 KiB {medium} ns, 8 MiB {large} ns"
        );
    }

    /// The random rings skip the lines a prefetcher would bring in; the bytes touched are
    /// one line per stride of the bytes spanned; every stride up to a page is measured or
    /// named as left out (here all are: a 64 KiB sweep cannot miss the synthetic host's
    /// 32 MiB L3).
    #[test]
    fn random_rings_are_prefetch_proof_and_the_stride_sweep_is_complete() {
        let mut runner = crate::synthetic_runner();
        let mut ctx = ProbeContext::for_test(&mut runner);
        ctx.memory.max_size_bytes = Some(64 << 10);
        let results = run(&mut ctx).unwrap();
        let number = |r: &BenchResult, key: Key| r.parameter(key).unwrap().as_u64().unwrap();
        for r in results
            .iter()
            .filter(|r| r.parameter(key::LAYOUT).is_some())
        {
            let stride = number(r, key::STRIDE_BYTES);
            let span = number(r, key::WORKING_SET_BYTES);
            let touched = number(r, TOUCHED_BYTES);
            assert_eq!(touched, (span / stride).max(2) * 64, "{}", r.name);
            match r.parameter(key::LAYOUT).unwrap().as_str().unwrap() {
                "sequential" => assert_eq!(stride, 64, "{}", r.name),
                _ if r.name.starts_with(STRIDE_PREFIX) => {}
                _ => assert!(stride >= PREFETCH_PROOF_STRIDE as u64, "{}", r.name),
            }
        }
        assert!(!results.iter().any(|r| r.name.starts_with(STRIDE_PREFIX)));
        let left_out: Vec<&str> = results
            .iter()
            .flat_map(|r| &r.warnings)
            .filter_map(|w| match w {
                Warning::PartSkipped { part, .. } if part.contains(STRIDE_PREFIX) => {
                    Some(part.as_str())
                }
                _ => None,
            })
            .collect();
        let page = size_label(super::super::buffer::page_size() as u64);
        let all = ["64B", "128B", "256B", "512B", page.as_str()]
            .map(|s| format!("{STRIDE_PREFIX}{s}"))
            .join(", ");
        assert_eq!(left_out, [all.as_str()]);
    }
}
