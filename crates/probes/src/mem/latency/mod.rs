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
//! are a claim (a guest may report the host's whole L3 and get a part of it); the curve
//! is not. The levels are found on the `pagegroups` curve (`levels.rs`); their sizes are
//! measured in the bytes a cache holds on a ring over every line around each level's end
//! (`every_line.rs`: where a one-line-in-four ring leaves a level is a span, which the
//! cache holds more or less of as the core's prefetchers fill the skipped lines), and
//! compared with the caches the kernel reports; where the curve reached main memory, the last cache's end
//! is kept for the sweeps after it ([`crate::Findings`]). Cycles per load use the core clock measured by `cpu.frequency`.
//! Pages are base pages (`MADV_NOHUGEPAGE`) unless huge pages are asked for.
//!
//! The probe's parts: `sweep.rs` the sweep of working sets and layouts and where the quick
//! sweep stops; `ring.rs` a ring measured on fresh mappings, which the stability check and
//! `thread.core_to_core` use too. Level naming is `levels.rs`'s, the sizes' policy
//! `sizes.rs`'s.

pub(crate) mod chase;
mod every_line;
pub(crate) mod levels;
mod ring;
mod sweep;

use crate::mem::sizes::{FALLBACK_PRIVATE_CACHE, line_bytes};
use levels::reported_size;
pub(crate) use ring::{Ring, measure};
use sweep::{Sweep, level_results};

use super::sizes::working_sets;
use super::sweep_point;
use crate::sweep_time::PointClock;
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical, keeping_measured};
use chase::Layout;
use latlab_engine::BenchResult;
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{
    HeadlineRow, Line, Measure, Panel, Plot, Presentation, Scale, Source, Stroke, Template, Unit,
};

/// A cache level's size as the kernel reports it, beside the size the curve found.
const KERNEL_REPORTED_BYTES: Key = Key::new("kernel_reported_bytes");
/// Where the page-group curve leaves a level, in the bytes its ring spans there.
const END_SPAN_BYTES: Key = Key::new("end_span_bytes");
const PAGES: Key = Key::new("pages");
const TOUCHED_BYTES: Key = Key::new("touched_bytes");

/// The results it lists ([`ProbeSpec::results`]).
const RESULTS: &[&str] = &[
    "mem.latency/random/{size}",
    "mem.latency/pagegroups/{size}",
    "mem.latency/sequential/{size}",
    "mem.latency/every-line/{size}",
    "mem.latency/stride/{size}",
    "mem.latency/level/{level}",
];

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "mem.latency",
    method: "dependent loads over a random cyclic permutation of cache lines, by working-set size",
    timing: crate::Timing::Slope,
    results: RESULTS,
    typical: Typical::quick_full(7.3, 118.0),
    extras: crate::Extras {
        timing_note: Some(
            "between 16 and 32 loads per call up to the second-level cache; beyond it, calibrated loops less the empty loop (a call of 16 loads is hundreds of cycles)",
        ),
        rounds: crate::Rounds::Once {
            why: "the levels and the stride sweep's spans are read from the whole curve, which a \
                  round's share of the samples blurs (a round named L3's plateau DRAM), and the \
                  rings beyond the last cache cost more to build than to time",
        },
        options: &[&crate::mem::MAX_SIZE_OPTION, &crate::mem::HUGE_PAGES_OPTION],
        ..crate::Extras::NONE
    },
    presentation: Presentation {
        plots: &[Plot {
            stem: "mem-latency",
            title: "mem.latency: load-to-use latency by working set",
            caption: "mem.latency: the time of one dependent load (median) as the working set \
                      grows, one line per chase layout. Each plateau is a level of the memory \
                      hierarchy; the wide bands are the levels found, at their latency over \
                      their plateau, and the grey lines where each level ends, sized on the \
                      dotted ring over every line.",
            x_parameter: key::WORKING_SET_BYTES,
            x_label: "working set",
            x_axis: latlab_engine::presentation::XAxis::SizeLog,
            panels: &[Panel {
                y_label: "time per load (median)",
                y_unit: Unit::Nanoseconds,
                y_scale: Scale::Log,
                lines: &[
                    layout_line("mem.latency/pagegroups/{size}", "pagegroups", 0),
                    layout_line("mem.latency/random/{size}", "random", 1),
                    layout_line("mem.latency/sequential/{size}", "sequential", 2),
                    Line {
                        results: Template("mem.latency/every-line/{size}"),
                        label: "every line (sizes the levels)",
                        y: Measure::Median,
                        stroke: Stroke::Dots,
                        // Past the level bands' colours (3 onwards, one a level).
                        color: 7,
                    },
                ],
                levels: Some(Template("mem.latency/level/{level}")),
                host_caches: true,
                reference: None,
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
        // The core's own caches run on its clock: an L1 or L2 hit is a count of its cycles.
        // The caches the cores share (L3) and main memory run on clocks of their own.
        on_core_clock: &["mem.latency/level/L1", "mem.latency/level/L2"],
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
pub(super) const MIN_WORKING_SET: u64 = 1024;
/// The quick suite's smallest working set: still a few points on the first-level plateau of
/// any current core (32 KiB or more), with four fewer rings per layout.
pub(super) const QUICK_MIN_WORKING_SET: u64 = 4096;
/// Dependent loads per call of the measured closure.
pub(crate) const LOADS_PER_CALL: usize = 16;
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
pub(super) const RINGS_BEYOND_LAST_LEVEL: usize = 3;
/// The strides of the stride sweep, in bytes; a page is added.
pub(super) const SWEEP_STRIDES: [usize; 4] = [64, 128, 256, 512];

impl Sweep {
    /// The sweep a run plans: its working sets, up to the largest the run allows, and what
    /// it knows of the machine before measuring.
    fn planned(ctx: &ProbeContext, cycle_ns: f64) -> Sweep {
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
        let largest = sizes.last().copied().unwrap_or(max);
        Sweep {
            suite,
            per_octave,
            line,
            cycle_ns,
            group_bytes: TLB_GROUP_PAGES * crate::mem::pages::mapped::page_size(),
            huge_pages: ctx.options.flag(&crate::mem::HUGE_PAGES_OPTION),
            last_level: (caches.iter())
                .map(|c| c.size_bytes)
                .max()
                .unwrap_or(u64::MAX),
            private_cache: reported_size("L2", &caches).unwrap_or(FALLBACK_PRIVATE_CACHE),
            adaptive: suite == Suite::Quick
                && ctx.options.bytes(&crate::mem::MAX_SIZE_OPTION).is_none(),
            caches,
            sizes,
            largest,
            curve: Vec::new(),
            end: largest,
            stopped_on: None,
            named: None,
            cache_end: None,
            held: Vec::new(),
            curve_clock: PointClock::start(),
        }
    }
}

fn points_per_octave(suite: Suite) -> usize {
    match suite {
        Suite::Quick => 2,
        Suite::Full => 8,
    }
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let cycle = ctx.cycle()?;
    let mut sweep = Sweep::planned(ctx, cycle.ns());
    let findings = std::sync::Arc::clone(&ctx.findings);
    let swept = keeping_measured(|results| {
        ctx.runner.scoped(sweep_point, |runner| {
            // The page-group curve first: the levels are read on it, and in the quick suite
            // it says where the sweep has told its story; the levels it found are sized on
            // the every-line ring; the other layouts go as far.
            let group_bytes = sweep.group_bytes;
            sweep.layout(
                runner,
                "pagegroups",
                Layout::PageGroups { group_bytes },
                results,
            )?;
            sweep.every_line(runner, results)?;
            for (label, layout) in [
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
    let levels = level_results(
        &sweep.curve,
        &named,
        &sweep.held,
        &sweep.caches,
        sweep.cycle_ns,
        sweep.per_octave,
    );
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

#[cfg(test)]
mod tests {
    use super::sweep::*;
    use super::*;
    use crate::mem::latency::levels::*;
    use crate::mem::sizes::*;
    use latlab_engine::Warning;

    /// Each stride spans enough to touch twice the last cache, so its span grows with the
    /// stride; one the sweep cannot reach is left out (one span for every stride kept a
    /// 4 KiB stride's lines in the L3: the book's memory methods, "The figures behind the
    /// rules").
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
        // A large guest's curve, swept to 256 MiB: three caches, then flat on memory.
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
    /// on a guest's curve whose kernel claims far more L3 than the curve finds, it stops by
    /// 256 MiB, not 1 GiB; it does not stop on a cache plateau however long, nor on a ramp
    /// still climbing.
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

    /// A quick curve of a guest whose kernel claims far more L3 than it gets (2 points an
    /// octave, from 4 KiB; the book's memory methods, "The figures behind the rules").
    const EMERALD_QUICK: [f64; 30] = [
        2.1, 2.2, 2.1, 2.0, 2.1, 2.1, 2.1, 2.6, 4.5, 5.0, 5.0, 5.6, 5.7, 6.3, 6.3, 6.3, 6.5, 6.4,
        6.3, 6.5, 6.8, 20.4, 32.6, 41.6, 43.8, 70.2, 118.2, 131.1, 128.8, 133.6,
    ];

    /// `latencies` as a quick curve from 4 KiB, two points an octave.
    fn quick_curve(latencies: &[f64]) -> Vec<(u64, BenchResult)> {
        (latencies.iter().enumerate())
            .map(|(k, &ns)| {
                let size = (4096.0 * 2f64.powf(k as f64 / 2.0)) as u64;
                let point =
                    BenchResult::derived(&format!("p{k}"), "m", vec![ns; 10], vec![], vec![]);
                (size, point.unwrap())
            })
            .collect()
    }

    /// The Emerald Rapids guest's caches as its kernel reports them.
    fn emerald_caches() -> [latlab_engine::environment::CacheInfo; 4] {
        use crate::cache;
        [
            cache(1, "Data", 48 << 10),
            cache(1, "Instruction", 32 << 10),
            cache(2, "Unified", 2 << 20),
            cache(3, "Unified", 300 << 20),
        ]
    }

    /// That curve: its L3, which the neighbours share, is flat for half an octave between
    /// the L2 and memory: it is the L3, and the L2's step where the first-level TLB runs out
    /// is not. Two points of the ramp into memory are not a level. Where the curve climbs
    /// through the L3 with no plateau, the memory level says that there is no L3 and what the
    /// curve read there.
    #[test]
    fn levels_of_a_quick_curve_through_a_shared_l3() {
        let measured = EMERALD_QUICK;
        let curve = quick_curve;
        let caches = emerald_caches();
        let levels = |latencies: &[f64]| -> (Vec<(String, f64)>, Vec<String>) {
            let curve = curve(latencies);
            let named = named_levels(&curve, 2, &caches, true);
            let results = level_results(&curve, &named, &[], &caches, 0.5, 2);
            let levels = (named.iter())
                .map(|(level, name)| (name.clone(), level.latency_ns))
                .collect();
            let skipped = (results.iter())
                .flat_map(|r| &r.warnings)
                .filter_map(|w| match w {
                    Warning::PartSkipped { part, reason } => Some(format!("{part}: {reason}")),
                    _ => None,
                })
                .collect();
            (levels, skipped)
        };
        let names = |levels: &[(String, f64)]| -> Vec<String> {
            levels.iter().map(|(name, _)| name.clone()).collect()
        };

        let (found, skipped) = levels(&measured);
        assert_eq!(names(&found), ["L1", "L2", "L3", "DRAM"], "{found:?}");
        assert!((5.0..=7.0).contains(&found[1].1), "{found:?}");
        assert!((41.6..=43.8).contains(&found[2].1), "{found:?}");
        assert_eq!(skipped, Vec::<String>::new());

        // Another run: the L2 steps 1.6× (4.0 to 6.4 ns) a sixth of the way along, and the L3
        // is 5.7-8 MiB at 40-46 ns, with a half-octave of the ramp at 71-75 ns after it.
        let another = [
            2.0, 1.9, 1.9, 1.9, 1.9, 1.9, 1.9, 1.9, 4.0, 4.0, 4.5, 5.0, 5.5, 6.1, 7.0, 7.0, 6.3,
            6.4, 6.4, 6.7, 8.6, 40.4, 46.0, 70.7, 74.6, 98.7, 134.6, 155.9, 147.6, 148.9,
        ];
        let (found, skipped) = levels(&another);
        assert_eq!(names(&found), ["L1", "L2", "L3", "DRAM"], "{found:?}");
        assert!((5.0..=7.0).contains(&found[1].1), "{found:?}");
        assert!((40.4..=46.0).contains(&found[2].1), "{found:?}");
        assert_eq!(skipped, Vec::<String>::new());

        let mut ramp = measured;
        ramp[25..27].copy_from_slice(&[85.0, 97.4]);
        let (found, _) = levels(&ramp);
        assert_eq!(names(&found), ["L1", "L2", "L3", "DRAM"], "{found:?}");

        let mut climbing = measured;
        climbing[21..27].copy_from_slice(&[17.0, 26.0, 38.0, 55.0, 80.0, 118.0]);
        let (found, skipped) = levels(&climbing);
        assert_eq!(names(&found), ["L1", "L2", "DRAM"], "{found:?}");
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert!(
            skipped[0].starts_with("mem.latency/level/L3: ")
                && skipped[0].contains("climbs from 17.0 to 80.0 ns")
                && skipped[0].contains("(300MiB L3)"),
            "{skipped:?}"
        );
    }

    /// The page-group ring leaves that guest's L2 at a span past twice the kernel's L2,
    /// which is not the L2's size: the size, and the check against the
    /// kernel's, are the bytes the every-line ring found the cache to hold.
    #[test]
    fn a_level_is_sized_by_the_bytes_its_cache_holds() {
        let caches = emerald_caches();
        let points = quick_curve(&EMERALD_QUICK);
        let named = named_levels(&points, 2, &caches, true);
        let mismatched = |held: &[(String, u64)]| -> Vec<String> {
            (level_results(&points, &named, held, &caches, 0.5, 2).iter())
                .filter(|r| {
                    (r.warnings.iter()).any(|w| matches!(w, Warning::CacheSizeMismatch { .. }))
                })
                .map(|r| r.name.clone())
                .collect()
        };
        let l2_span = named[1].0.size_estimate_bytes.unwrap();
        assert!(l2_span > 4 << 20, "{l2_span}");
        assert_eq!(mismatched(&[]), Vec::<String>::new());
        assert_eq!(
            mismatched(&[("L2".into(), 1900 << 10)]),
            Vec::<String>::new()
        );
        assert_eq!(
            mismatched(&[("L2".into(), l2_span)]),
            ["mem.latency/level/L2"]
        );
        let l2 = &level_results(
            &points,
            &named,
            &[("L2".into(), 1900 << 10)],
            &caches,
            0.5,
            2,
        )[1];
        assert_eq!(
            l2.parameter(key::SIZE_ESTIMATE_BYTES)
                .and_then(|v| v.as_u64()),
            Some(1900 << 10)
        );
        assert_eq!(
            l2.parameter(END_SPAN_BYTES).and_then(|v| v.as_u64()),
            Some(l2_span)
        );
    }

    /// Small sizes only: a working set well outside L1 is slower than one inside it, and a
    /// bigger working set is never faster by more than noise.
    #[test]
    fn bigger_working_sets_are_not_faster() {
        if crate::skipped_under_emulation() {
            return;
        }
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

    /// The random rings skip the lines a prefetcher would bring in (the rings that size a
    /// level and the sequential ones use every line); the bytes touched are one line per
    /// stride of the bytes spanned; every stride up to a page is measured or
    /// named as left out (here all are: a 64 KiB sweep cannot miss the synthetic host's
    /// 32 MiB L3).
    #[test]
    fn random_rings_are_prefetch_proof_and_the_stride_sweep_is_complete() {
        let mut runner = crate::synthetic_runner();
        let mut ctx = ProbeContext::for_test(&mut runner);
        ctx.set_max_size(64 << 10);
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
                "sequential" | "every-line" => assert_eq!(stride, 64, "{}", r.name),
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
        let page = size_label(crate::mem::pages::mapped::page_size() as u64);
        let all = ["64B", "128B", "256B", "512B", page.as_str()]
            .map(|s| format!("{STRIDE_PREFIX}{s}"))
            .join(", ");
        assert_eq!(left_out, [all.as_str()]);
    }
}
