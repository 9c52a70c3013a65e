//! `mem.loaded`: what a load that misses to main memory costs while the other CPUs stream
//! through memory, and the peak bandwidth of every CPU together by mix of reads and writes.
//!
//! One thread, pinned to the first CPU the run may use, chases a `pagegroups` ring in main
//! memory as `mem.latency` measures its `DRAM` level (random lines within 64-page groups,
//! one per 256 bytes, 16 dependent loads a call, the empty loop subtracted), over eight
//! times the last cache the latency curve found (twice the kernel's last-level cache where
//! it found none), at most 96 MiB. Every other CPU the run may use runs a loader: passes
//! over a buffer of its own (the loaders' buffers together four times the larger of the
//! kernel's last-level cache and the curve's, within what the chase leaves of 192 MiB: the
//! chase and the loaders together, with the rest of the process, within the main job's
//! 250 MB however large a cache a guest's kernel claims) in one of four mixes:
//! `read` (a sum), `copy` (1:1 reads to writes, `a[i] = b[i]`), `triad` (2:1,
//! `a[i] = b[i] + 3·c[i]`) and `write` (a value stored). After every two cache lines of each
//! array a loader counts `delay` turns of an empty loop, the injection delay of Intel's
//! Memory Latency Checker and multichase's `multiload`. The delays are swept from none to
//! idle (no loader at all), giving points of (load bandwidth, chase latency): the curve
//! that bends upward as the load nears the peak. A point's result is `mem.loaded/MIX/N`, N
//! from 0 (no delay, the heaviest load) to the idle point; its median is the chase's
//! latency, and its `load_bytes_per_second` what the loaders moved while the chase was
//! measured, reads plus writes as STREAM counts them (a store's fetch of its line is not
//! counted).
//!
//! Then every CPU, the chaser's too, runs each mix with no delay, timed as `mem.bandwidth`
//! times every CPU at once (from the first start to the last end of a sample of at least
//! 10 ms): the peak bandwidth by mix, `mem.loaded/peak/MIX`, with a fifth mix, `3to1`
//! (`a[i] = b[i] + c[i] + d[i]`), as the time per 64-byte line moved (and so bytes per
//! second). `mem.bandwidth`'s read of every CPU at once measures a like figure over its
//! largest working set, shared out; the peak's is over a buffer of each CPU's own, four
//! times the largest cache at least, so that it is main memory's on any machine, and by mix.
//!
//! The quick suite takes each mix at three delays and idle, the full suite at ten delays and
//! idle, and both every peak, reads first; each mix and peak after the first only where the
//! probe's part of the run's budget has time for another as long as the last. So the quick
//! main job, where its part is a second or so, takes the read mix and the peak of reads and
//! says what it left out, and `latlab run --only mem.loaded` all of them.

use super::UNPINNED_THREADS;
use super::latency::PREFETCH_PROOF_STRIDE;
use super::latency::chase::{Chase, main_memory_ring, time_ring};
use super::sizes::size_label;
use super::stream::crew::{Load, SETTLE, WINDOW};
use super::stream::{Crew, Kernel, LOADERS, Memory, Mix, Per};
use super::{headline_point, sweep_point};
use crate::sweep_time::PointClock;
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical, keeping_measured};
use latlab_engine::SharedHost;
use latlab_engine::host::AffinityGuard;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{
    CurveEnds, Line, Measure, Panel, Plot, ReferenceLine, Scale, Stroke, Template, Unit, XAxis,
};
use latlab_engine::{BenchResult, Runner, Warning};
use std::sync::Arc;

const LOAD_BYTES_PER_SECOND: Key = Key::new("load_bytes_per_second");
const DELAY_TURNS: Key = Key::new("delay_turns");

/// The results it lists ([`ProbeSpec::results`]).
const RESULTS: &[&str] = &[
    "mem.loaded/read/{n}",
    "mem.loaded/copy/{n}",
    "mem.loaded/triad/{n}",
    "mem.loaded/write/{n}",
    "mem.loaded/peak/read",
    "mem.loaded/peak/3to1",
    "mem.loaded/peak/triad",
    "mem.loaded/peak/copy",
    "mem.loaded/peak/write",
];

/// A mix's line of the plot: each point's median against its load.
const fn curve_line(results: &'static str, label: &'static str, color: u8) -> Line {
    Line {
        results: Template(results),
        label,
        y: Measure::Median,
        stroke: Stroke::Line,
        color,
    }
}

/// A mix's curve on the first screen: its idle end and its heaviest.
const fn curve_ends(label: &'static str, results: &'static str) -> CurveEnds {
    CurveEnds {
        label,
        results: Template(results),
        load: LOAD_BYTES_PER_SECOND,
    }
}

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "mem.loaded",
    method: "a main-memory chase on one CPU while the others stream read, copy, triad or write loads, their injection delay swept from none to idle; and every CPU's peak bandwidth by mix",
    timing: crate::Timing::LessEmptyLoop,
    results: RESULTS,
    typical: Typical::quick_full(0.4, 7.5),
    extras: crate::Extras {
        timing_note: Some(
            "the chase as mem.latency times it; the loads' bandwidth from byte counts over clock-timed windows; the peaks as mem.bandwidth times every CPU at once",
        ),
        rounds: crate::Rounds::Once {
            why: "each point starts the loaders and waits for their traffic to settle, which \
                  costs more than its samples; and the curve is read from all its points",
        },
        options: &[&crate::mem::MAX_SIZE_OPTION],
        ..crate::Extras::NONE
    },
    presentation: latlab_engine::presentation::Presentation {
        headline: &[crate::headline_row(
            61,
            "Main memory reference under full load",
            None,
            "mem.loaded/read/0",
            "every other CPU reading",
        )],
        plots: &[Plot {
            stem: "mem-loaded",
            title: "Main-memory latency under load",
            caption: "A load that misses to main memory, timed on one CPU while every other \
                      CPU streams through memory of its own in one mix of reads and writes, \
                      its injection delay swept from none (the rightmost point of a line) to \
                      idle (zero): latency against the bandwidth the loaders moved. Dashed: \
                      the main-memory level the idle latency curve found in the same run.",
            x_parameter: LOAD_BYTES_PER_SECOND,
            x_label: "the other CPUs' load on memory",
            x_axis: XAxis::RateLinear,
            panels: &[Panel {
                y_label: "latency of a load",
                y_unit: Unit::Nanoseconds,
                y_scale: Scale::Linear,
                lines: &[
                    curve_line("mem.loaded/read/{n}", "reads", 0),
                    curve_line("mem.loaded/copy/{n}", "copy (1:1)", 1),
                    curve_line("mem.loaded/triad/{n}", "triad (2:1)", 2),
                    curve_line("mem.loaded/write/{n}", "writes", 3),
                ],
                levels: None,
                host_caches: false,
                reference: Some(ReferenceLine {
                    result: Template("mem.latency/level/DRAM"),
                    label: "idle main memory (mem.latency)",
                }),
            }],
        }],
        curve_ends: &[
            curve_ends("read", "mem.loaded/read/{n}"),
            curve_ends("copy", "mem.loaded/copy/{n}"),
            curve_ends("triad", "mem.loaded/triad/{n}"),
            curve_ends("write", "mem.loaded/write/{n}"),
        ],
        // A figure under load is its placement's as much as its memory's: the two vCPUs on
        // one core complex or on two move the loaded chase and the peak by a third
        // (the book's memory methods, "The figures behind the rules").
        checked_by: &[
            latlab_engine::presentation::CheckedBy {
                check: latlab_engine::presentation::StabilityCheck::MemoryChases,
                results: RESULTS,
            },
            latlab_engine::presentation::CheckedBy {
                check: latlab_engine::presentation::StabilityCheck::CoreToCore,
                results: RESULTS,
            },
        ],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

/// The delays of the curve, in turns of the empty loop between two lines of each array,
/// heaviest load first; the idle point follows the last.
fn delays(suite: Suite) -> &'static [u32] {
    match suite {
        Suite::Quick => &[0, 20, 100],
        Suite::Full => &[0, 5, 10, 20, 50, 100, 200, 500, 1000, 5000],
    }
}

/// The most the chase and the loaders' buffers take together, and the most the chase
/// spans: with the rest of the process, within the main job's 250 MB. A guest whose kernel
/// claimed the host's whole L3 had outgrown the main job's memory before this ceiling; the
/// loaders it leaves are still four times the L3 its curve found (the book's memory
/// methods, "The figures behind the rules").
const MEMORY_CEILING: u64 = 192 << 20;
const CHASE_CEILING: u64 = 96 << 20;
/// A loader's buffer is at least this large, so that it passes over memory, not a cache.
const LOADER_FLOOR: u64 = 8 << 20;
/// Windows per peak.
const PEAK_WINDOWS: usize = 12;
/// The mixes of the loaded-latency curve.
const CURVE_MIXES: [Mix; 4] = [Mix::Read, Mix::Copy, Mix::Triad, Mix::Write];
/// The mixes of the peaks, from reads only to writes only.
const PEAK_MIXES: [Mix; 5] = [
    Mix::Read,
    Mix::ThreeToOne,
    Mix::Triad,
    Mix::Copy,
    Mix::Write,
];

/// The bytes of a chase in main memory: see the module documentation.
pub(crate) fn main_memory_chase_bytes(ctx: &ProbeContext) -> u64 {
    let chase = match (ctx.findings.last_cache_bytes(), ctx.kernel_last_cache()) {
        (Some(found), _) => 8 * found,
        (None, Some(last)) => 2 * last,
        (None, None) => 64 << 20,
    };
    chase.min(CHASE_CEILING).min(ctx.max_working_set())
}

/// The least a chase must span to read main memory: twice the last cache the latency curve
/// found, else twice the largest cache below the kernel's last level (whose claim a guest
/// may not get), within the chase's ceiling.
fn main_memory_floor(ctx: &ProbeContext) -> u64 {
    let caches = latlab_engine::environment::data_cache_sizes(&ctx.host().caches());
    let below_last = match caches[..] {
        [.., below, _last] => Some(below),
        [only] => Some(only),
        [] => None,
    };
    let floor = match (ctx.findings.last_cache_bytes(), below_last) {
        (Some(found), _) => 2 * found,
        (None, Some(private)) => 2 * private,
        (None, None) => 0,
    };
    floor.min(CHASE_CEILING)
}

/// The bytes of each of `loaders` loaders' buffers: see the module documentation.
pub(crate) fn loader_bytes(ctx: &ProbeContext, loaders: usize) -> u64 {
    let found = ctx.findings.last_cache_bytes();
    let together = loaders_together(found, ctx.kernel_last_cache(), main_memory_chase_bytes(ctx));
    (together / loaders.max(1) as u64)
        .max(LOADER_FLOOR)
        .min(ctx.max_working_set())
}

/// The loaders' buffers together: four times the larger of the last cache the curve `found`
/// and the kernel's `claim`, within what a chase of `chase` bytes leaves of
/// [`MEMORY_CEILING`].
fn loaders_together(found: Option<u64>, claim: Option<u64>, chase: u64) -> u64 {
    let largest_cache = found.max(claim).unwrap_or(32 << 20);
    (4 * largest_cache).min(MEMORY_CEILING.saturating_sub(chase))
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    let host = Arc::clone(ctx.host());
    let cpus = host.allowed_cpus();
    let [chaser, others @ ..] = &cpus[..] else {
        return Err(ProbeError::Skipped("no CPU is allowed".into()));
    };
    if others.is_empty() {
        return Err(ProbeError::Skipped(
            "this run may use one CPU: there is no other CPU to load the memory from".into(),
        ));
    }
    let chase_bytes = main_memory_chase_bytes(ctx);
    // Held within the caches by the working-set limit, every figure is a cache's: each
    // says so, and none is taken for main memory's (the headline reads none of them).
    let floor = main_memory_floor(ctx);
    let within_caches = (chase_bytes < floor).then(|| {
        Warning::check_failed(
            "main memory",
            &format!(
                "the largest working set this run may use ({}) lies within the caches (a \
                 chase of main memory here is at least {}): this is a cache's figure under \
                 load, not main memory's; raise the memory limit (ulimit -v, the cgroup's) or \
                 --max-size",
                size_label(chase_bytes),
                size_label(floor)
            ),
        )
    });
    let _affinity = AffinityGuard::save(&host);
    host.pin_to_cpu(*chaser).map_err(ProbeError::Failed)?;
    let chase = main_memory_ring(chase_bytes).map_err(ProbeError::Failed)?;
    chase.warm();
    let suite = ctx.suite;
    keeping_measured(|results| {
        let measured = measure_mixes(ctx, (&host, &cpus, others), chase, suite, results);
        // Partial or whole, every figure of a chase within the caches says so.
        if let Some(warning) = &within_caches {
            for result in results.iter_mut() {
                result.warnings.push(warning.clone());
            }
        }
        measured
    })
}

/// The curves of every mix, then the peaks (the chase freed before them), while the
/// budget has time for them.
fn measure_mixes(
    ctx: &mut ProbeContext,
    (host, cpus, others): (&SharedHost, &[usize], &[usize]),
    chase: Chase,
    suite: Suite,
    results: &mut Vec<BenchResult>,
) -> Result<(), ProbeError> {
    let mut others = Crew {
        host,
        cpus: others,
        memory: Memory::Own {
            bytes: loader_bytes(ctx, others.len()) as usize,
            node: None,
        },
    };
    let mut curves = WhileTimeLasts::default();
    for mix in CURVE_MIXES {
        curves.measure(ctx.runner, mix, |runner| {
            curve(runner, &mut others, &chase, mix, delays(suite), results)
        })?;
    }
    drop(chase);
    let mut everyone = Crew {
        host,
        cpus,
        memory: Memory::Own {
            bytes: loader_bytes(ctx, cpus.len()) as usize,
            node: None,
        },
    };
    let mut peaks = WhileTimeLasts::default();
    for mix in PEAK_MIXES {
        peaks.measure(ctx.runner, mix, |runner| {
            results.push(peak(runner, &mut everyone, mix)?);
            Ok(())
        })?;
    }
    crate::sweep_time::note_left_out(results, "mem.loaded curves of", &curves.left_out);
    crate::sweep_time::note_left_out(results, "mem.loaded peaks of", &peaks.left_out);
    Ok(())
}

/// Measures the first of a list of mixes, then each of the others while the budget has
/// time for one as long as the last, and keeps the labels of those it leaves out.
#[derive(Default)]
struct WhileTimeLasts {
    /// From the first mix measured on.
    clock: Option<PointClock>,
    left_out: Vec<String>,
}

impl WhileTimeLasts {
    fn measure(
        &mut self,
        runner: &mut Runner,
        mix: Mix,
        body: impl FnOnce(&mut Runner) -> Result<(), ProbeError>,
    ) -> Result<(), ProbeError> {
        if (self.clock).is_some_and(|clock| !runner.config().has_time_for(clock.last)) {
            self.left_out.push(mix.label().to_string());
            return Ok(());
        }
        let clock = self.clock.get_or_insert_with(PointClock::start);
        clock.point_begins();
        body(runner)?;
        clock.point_ended();
        Ok(())
    }
}

/// The points of the curve of `mix`: the chase timed while `crew` loads memory at each of
/// `delays`, then alone.
fn curve(
    runner: &mut Runner,
    crew: &mut Crew,
    chase: &Chase,
    mix: Mix,
    delays: &[u32],
    results: &mut Vec<BenchResult>,
) -> Result<(), ProbeError> {
    let kernel = Kernel::new(mix, 1);
    let loaded = crew.loading(kernel, delays[0], |load| {
        (delays.iter().enumerate())
            .map(|(point, &delay)| loaded_point(runner, load, chase, mix, (point, delay)))
            .collect::<Result<Vec<_>, _>>()
    })?;
    results.extend(loaded.into_iter().map(|point| crew.describe(point, kernel)));
    let idle = time_chase(runner, chase, mix, delays.len())?;
    results.push(
        idle.with_parameter(LOAD_BYTES_PER_SECOND, 0.0)
            .with_parameter(LOADERS, 0),
    );
    Ok(())
}

/// Point `point` of `mix`'s curve: the chase timed while `load` runs at `delay`, with the
/// bytes per second it moved meanwhile.
fn loaded_point(
    runner: &mut Runner,
    load: &Load,
    chase: &Chase,
    mix: Mix,
    (point, delay): (usize, u32),
) -> Result<BenchResult, ProbeError> {
    load.set_delay(delay);
    std::thread::sleep(SETTLE);
    let before = load.moved();
    let timed = time_chase(runner, chase, mix, point)?;
    // The loaders' count grows a chunk at a time: a window shorter than a peak's (a chase
    // timed in an instant, as on the synthetic machine) would count nothing.
    std::thread::sleep(WINDOW.saturating_sub(before.1.elapsed()));
    let after = load.moved();
    let seconds = after.1.duration_since(before.1).as_secs_f64();
    let bandwidth = (after.0 - before.0) as f64 / seconds;
    Ok(timed
        .with_parameter(LOAD_BYTES_PER_SECOND, bandwidth)
        .with_parameter(DELAY_TURNS, delay)
        .with_parameter(UNPINNED_THREADS, load.unpinned()))
}

/// The chase timed as point `point` of `mix`'s curve.
fn time_chase(
    runner: &mut Runner,
    chase: &Chase,
    mix: Mix,
    point: usize,
) -> Result<BenchResult, ProbeError> {
    let name = format!("mem.loaded/{}/{point}", mix.label());
    let method = format!(
        "dependent loads over a pagegroups ring of {} lines, one per {PREFETCH_PROOF_STRIDE} \
         bytes, while the other CPUs load memory with {}",
        chase.lines(),
        mix.describe()
    );
    // The heaviest point of reads is the headline's: samples enough for its percentiles.
    let sampling: fn(&mut latlab_engine::Config) = match (mix, point) {
        (Mix::Read, 0) => |config| headline_point(true)(config),
        _ => sweep_point,
    };
    Ok(time_ring(runner, chase, (&name, &method), sampling)?)
}

/// The peak of `mix` on every CPU of `crew` at once, as the time per 64-byte line moved.
fn peak(runner: &mut Runner, crew: &mut Crew, mix: Mix) -> Result<BenchResult, ProbeError> {
    let name = format!("mem.loaded/peak/{}", mix.label());
    let method = format!(
        "every CPU at once passing over memory of its own with {}, no delay: the time per \
         64-byte line moved (reads plus writes), each sample timed from the first start to \
         the last end and at least {} ms",
        mix.describe(),
        WINDOW.as_millis()
    );
    let kernel = Kernel::new(mix, 1);
    let peak = crew.measure(runner, (&name, &method), kernel, (PEAK_WINDOWS, Per::Line))?;
    Ok(crew
        .describe(peak.result, kernel)
        .with_bytes_per_operation(64)
        .with_parameter(UNPINNED_THREADS, peak.unpinned))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::stream::crew::LOADER_BUFFER_BYTES;

    /// On the synthetic machine (its figures made up, its loaders real): the read curve's
    /// points from the heaviest load to idle, the loaders' bandwidth falling as their delay
    /// grows and none at the idle point, then the peak of reads in bytes per second.
    #[test]
    fn the_curve_runs_from_the_heaviest_load_to_idle() {
        let mut runner = crate::synthetic_runner();
        let mut ctx = ProbeContext::for_test(&mut runner);
        ctx.set_max_size(8 << 20);
        let results = run(&mut ctx).unwrap();
        let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names[..4],
            [
                "mem.loaded/read/0",
                "mem.loaded/read/1",
                "mem.loaded/read/2",
                "mem.loaded/read/3",
            ]
        );
        // Without a budget, every mix and every peak.
        assert_eq!(names.len(), 4 * 4 + 5, "{names:?}");
        assert_eq!(
            names[16..18],
            ["mem.loaded/peak/read", "mem.loaded/peak/3to1"]
        );
        assert!(results.iter().all(|r| r.warnings.is_empty()), "{names:?}");
        let load = |r: &BenchResult| r.parameter(LOAD_BYTES_PER_SECOND).unwrap().as_f64();
        let loads: Vec<f64> = results[..4].iter().map(|r| load(r).unwrap()).collect();
        assert!(loads[0] > 2.0 * loads[2] && loads[2] > 0.0, "{loads:?}");
        assert_eq!(loads[3], 0.0);
        assert_eq!(results[16].bytes_per_operation, Some(64));
        // Each loader passed over a buffer of its own as large as the run allows; the idle
        // point had none.
        let buffer = |r: &BenchResult| r.parameter(LOADER_BUFFER_BYTES).and_then(|v| v.as_f64());
        for loaded in [&results[0], &results[2], &results[16]] {
            assert_eq!(buffer(loaded), Some((8 << 20) as f64), "{}", loaded.name);
        }
        assert_eq!(buffer(&results[3]), None);
    }

    /// The chase and the loaders stay within 192 MiB together however large a cache the
    /// kernel claims (the host's whole L3, its curve finding a tenth of it: loaders four
    /// times what it found); a kernel whose claim the curve bears out keeps its loaders at
    /// four times the cache.
    #[test]
    fn the_loaders_take_what_the_chase_leaves_of_the_ceiling() {
        const MIB: u64 = 1 << 20;
        let guest_chase = (8 * 25 * MIB).min(CHASE_CEILING);
        let guest = loaders_together(Some(25 * MIB), Some(300 * MIB), guest_chase);
        assert_eq!((guest_chase, guest), (96 * MIB, 96 * MIB));
        let honest_chase = 8 * 7 * MIB / 2;
        assert_eq!(
            loaders_together(Some(7 * MIB / 2), Some(32 * MIB), honest_chase),
            128 * MIB
        );
        assert_eq!(loaders_together(None, None, 64 * MIB), 128 * MIB);
    }

    /// Held to a page by the working-set limit, the loaders' buffers are shorter than one
    /// of their chunks: they still load, stop when told, and the probe ends with every
    /// figure saying it is a cache's. (Such loaders once spun for ever, deaf to Ctrl-C.)
    #[test]
    fn loaders_of_a_page_load_and_stop() {
        let (sent, ended) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut runner = crate::synthetic_runner();
            let mut ctx = ProbeContext::for_test(&mut runner);
            ctx.set_max_size(4 << 10);
            let _ = sent.send(run(&mut ctx).map_err(|e| e.to_string()));
        });
        let results = (ended.recv_timeout(std::time::Duration::from_secs(120)))
            .expect("mem.loaded ended")
            .unwrap();
        let loaded = results
            .iter()
            .find(|r| r.name == "mem.loaded/read/0")
            .unwrap();
        assert!(
            loaded
                .parameter(LOAD_BYTES_PER_SECOND)
                .unwrap()
                .as_f64()
                .unwrap()
                > 0.0
        );
        assert!(
            results.iter().all(|r| !r.warnings.is_empty()),
            "within the caches"
        );
    }
}
