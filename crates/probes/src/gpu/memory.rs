//! `gpu.memory`: the device's load-to-use latency by working-set size, one thread following
//! a random ring of pointers (`ring.rs`, `kernels/chase.ptx`), and the levels the curve
//! reveals.
//!
//! Working sets run from 1 KiB to eight times the L2 (sixteen in the full suite,
//! `sizes.rs`). Each ring is walked once untimed, every line loaded (what fits in a cache
//! is then in it; beyond twice the L2, where nothing of a lap stays, the warm walk stops
//! after as many lines as the L2 holds, which already leaves the L2 as it will be while
//! timed), then each launch times a run of dependent loads on the device's clocks: cycles
//! from `%clock64` and nanoseconds from `%globaltimer`. Each launch starts where the last one
//! stopped, so that a ring larger than the L2 is not the same few thousand lines over again. Two curves: through L1
//! (`ld.global.ca`) and bypassing it (`ld.global.cg`, L2 and beyond).
//!
//! The levels are found on the L1 curve as `mem.latency` finds the CPU's (`mem/levels.rs`):
//! the first is L1, the last is device memory (`DRAM`) when the sweep reached at least
//! twice the L2, and the ones between are the L2 and, where the curve shows a second step
//! before memory, the far L2 partition (`L2-far`, the half of the L2 attached to the other
//! side of the chip on A100 and H100). The L2's size estimate is compared with the L2 size
//! the driver reports.

use super::ring::{LINE_BYTES, ring_lines};
use super::sizes::{FALLBACK_L2, chase_working_sets};
use crate::mem::latency::levels::{self, Point};
use crate::mem::sizes::{is_sweep_detail, size_label};
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical};
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{HeadlineRow, Line, Measure, Stroke, Template};
use latlab_engine::{BenchResult, Warning};

const DRIVER_REPORTED_BYTES: Key = Key::new("driver_reported_bytes");
const WARM_LOADS: Key = Key::new("warm_loads");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "gpu.memory",
    method: "one GPU thread's dependent loads over a random ring of 128-byte lines, by working-set size, through L1 and bypassing it",
    timing: crate::Timing::OnDevice,
    results: &[
        "gpu.memory/ca/{size}",
        "gpu.memory/cg/{size}",
        "gpu.memory/level/{level}",
    ],
    typical: Typical::quick_full(5.0, 30.0),
    extras: super::own_process_noting("%globaltimer ns and %clock64 cycles around the timed loads"),
    presentation: latlab_engine::presentation::Presentation {
        plots: &[latlab_engine::presentation::Plot {
            stem: "gpu-memory",
            title: "gpu.memory: the GPU's load-to-use latency by working set",
            caption: "gpu.memory: the time of one dependent load by one GPU thread (median of \
                      the launches, timed on the device) as the working set grows, through L1 \
                      and bypassing it. The bands are the levels found on the L1 curve (L1, \
                      L2, the far L2 partition where the curve shows one, device memory), the \
                      grey lines where each ends.",
            x_parameter: key::WORKING_SET_BYTES,
            x_label: "working set",
            x_axis: latlab_engine::presentation::XAxis::SizeLog,
            panels: &[latlab_engine::presentation::Panel {
                y_label: "time per load (median)",
                y_unit: latlab_engine::presentation::Unit::Nanoseconds,
                y_scale: latlab_engine::presentation::Scale::Log,
                lines: &[
                    chase_line("gpu.memory/ca/{size}", "through L1 (ld.global.ca)", 0),
                    chase_line("gpu.memory/cg/{size}", "bypassing L1 (ld.global.cg)", 1),
                ],
                levels: Some(Template("gpu.memory/level/{level}")),
                host_caches: false,
                reference: None,
            }],
        }],
        headline: &[
            HeadlineRow {
                only_with_family: true,
                ..crate::headline_row(70, "GPU L2 hit", None, "gpu.memory/level/L2", "one thread")
            },
            HeadlineRow {
                only_with_family: true,
                ..crate::headline_row(
                    80,
                    "GPU device-memory reference",
                    None,
                    "gpu.memory/level/DRAM",
                    "one thread",
                )
            },
        ],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

/// A line of the chase by working set.
const fn chase_line(results: &'static str, label: &'static str, color: u8) -> Line {
    Line {
        results: Template(results),
        label,
        y: Measure::Median,
        stroke: [Stroke::Line, Stroke::Dashed][color as usize],
        color,
    }
}

/// Timed loads per launch: enough that the clock readings around them are noise (a few
/// hundred cycles against tens of thousands), few enough that a device-memory launch takes
/// about a millisecond.
pub(crate) const TIMED_LOADS: u64 = 2048;
/// Launches per working set after the cold one: a third of the run's samples, as every
/// point of a memory sweep takes (10 in the quick suite, 33 in the full one).
fn launches(runner: &latlab_engine::Runner) -> usize {
    (runner.config().samples / 3).max(latlab_engine::MIN_SAMPLES)
}
/// Plateau points per octave, as the sweep samples them.
fn points_per_octave(suite: Suite) -> usize {
    match suite {
        Suite::Quick => 2,
        Suite::Full => 4,
    }
}

/// Loads of the untimed warm walk over a ring of `lines` lines when the L2 holds
/// `l2_lines`: a whole lap, but no more than the L2 holds once the ring is twice its size.
pub(crate) fn warm_loads(lines: u64, l2_lines: u64) -> u64 {
    if lines > 2 * l2_lines {
        l2_lines
    } else {
        lines
    }
}

/// The names of the levels found on the curve, in order: `L1`, then `L2` and `L2-far`, then
/// `L4`, `L5` … should a curve show more steps than that, and `DRAM` for the last when the
/// sweep reached device memory.
pub(crate) fn level_names(count: usize, reached_memory: bool) -> Vec<String> {
    (0..count)
        .map(|i| match i {
            0 => "L1".to_string(),
            _ if i + 1 == count && reached_memory => "DRAM".to_string(),
            1 => "L2".to_string(),
            2 => "L2-far".to_string(),
            _ => format!("L{}", i + 1),
        })
        .collect()
}

/// Plateaus closer than this ratio are one level: less than a CPU's twice, since the far half
/// of a partitioned L2 (A100, H100) reads less than twice the near half.
const SAME_LEVEL_RATIO: f64 = 1.2;

/// One result per level found on the `(size, result)` curve, as `mem.latency` reports the
/// CPU's; the L2 levels checked against the driver's L2 size.
pub(crate) fn level_results(
    curve: &[(u64, &BenchResult)],
    per_octave: usize,
    l2_bytes: Option<u64>,
) -> Vec<BenchResult> {
    let points: Vec<Point> = curve
        .iter()
        .map(|&(size_bytes, r)| Point {
            size_bytes,
            latency_ns: r.summary.median,
        })
        .collect();
    let found = levels::detect(&points, per_octave, SAME_LEVEL_RATIO);
    let largest = points.last().map_or(0, |p| p.size_bytes);
    let reached_memory = largest >= 2 * l2_bytes.unwrap_or(FALLBACK_L2);
    let names = level_names(found.len(), found.len() > 1 && reached_memory);
    let last_l2 = names.iter().rposition(|n| n.starts_with("L2"));
    found
        .iter()
        .zip(&names)
        .enumerate()
        .filter_map(|(i, (level, name))| {
            let plateau = &curve[level.points.clone()];
            let cycles: Vec<f64> = plateau
                .iter()
                .filter_map(|(_, r)| r.parameter(crate::gpu::CYCLES_PER_OPERATION)?.as_f64())
                .collect();
            let mut result =
                levels::plateau_result(&format!("gpu.memory/level/{name}"), name, "L1", plateau)?;
            if !cycles.is_empty() {
                let mut sorted = cycles.clone();
                sorted.sort_by(f64::total_cmp);
                result = result.with_parameter(
                    latlab_engine::names::key::CYCLES_PER_LOAD,
                    sorted[sorted.len() / 2],
                );
            }
            if let Some(estimate) = level.size_estimate_bytes {
                result = result.with_parameter(key::SIZE_ESTIMATE_BYTES, estimate);
                if let (Some(reported), true) = (l2_bytes, Some(i) == last_l2) {
                    result = levels::with_reported_size(
                        result,
                        name,
                        estimate,
                        DRIVER_REPORTED_BYTES,
                        reported,
                    );
                }
            }
            Some(result)
        })
        .collect()
}

super::entry!(measure);

/// A ring on the device, ready to chase.
#[cfg(feature = "gpu")]
pub(crate) struct DeviceRing {
    pub memory: super::driver::DeviceMemory,
    pub lines: u64,
}

#[cfg(feature = "gpu")]
impl DeviceRing {
    /// Allocates `working_set` bytes on the device and writes a random ring into them.
    pub fn build(gpu: &super::Gpu, working_set: u64) -> Result<DeviceRing, ProbeError> {
        let lines = ring_lines(working_set as usize);
        let memory = super::driver::DeviceMemory::zeroed(&gpu.stream, lines * LINE_BYTES)
            .map_err(super::cuda_failure)?;
        let words = super::ring::ring_words(working_set as usize, memory.address());
        memory
            .write(&words, &gpu.stream)
            .map_err(super::cuda_failure)?;
        Ok(DeviceRing {
            memory,
            lines: lines as u64,
        })
    }
}

/// Reads the four words a chase kernel queued on `stream` wrote: cycles, nanoseconds, last
/// pointer, SM.
#[cfg(feature = "gpu")]
pub(crate) fn read_chase_output(
    out: &super::driver::DeviceMemory,
    stream: &super::driver::Stream,
) -> Result<[u64; 4], super::driver::CudaError> {
    let mut words = [0u64; 4];
    out.read(&mut words, stream)?;
    Ok(words)
}

/// The two curves: through L1 and bypassing it.
#[cfg(feature = "gpu")]
const VARIANTS: [(&str, &str, &str); 2] = [
    ("ca", "chase_ca", "through L1 (ld.global.ca)"),
    ("cg", "chase_cg", "bypassing L1 (ld.global.cg)"),
];

#[cfg(feature = "gpu")]
fn measure(ctx: &mut ProbeContext, gpu: &super::Gpu) -> Result<Vec<BenchResult>, ProbeError> {
    use super::cuda_failure;
    use super::driver::DeviceMemory;

    let module = gpu.module(super::kernels::CHASE)?;
    let out = DeviceMemory::zeroed(&gpu.stream, 32).map_err(cuda_failure)?;
    let l2 = gpu.info.l2_bytes;
    let device_free = gpu.device.free_memory_bytes().map_err(cuda_failure)?;
    let mut sizes = chase_working_sets(ctx.suite, l2.unwrap_or(FALLBACK_L2), LINE_BYTES as u64);
    let wanted_largest = *sizes.last().expect("sizes");
    sizes.retain(|&s| s <= device_free / 2);
    let largest = *sizes.last().ok_or_else(|| {
        ProbeError::Failed(format!(
            "the device has {} free: not enough for a chase",
            size_label(device_free)
        ))
    })?;
    let kernels = (VARIANTS.iter())
        .map(|&(_, kernel, _)| module.kernel(kernel))
        .collect::<Result<Vec<_>, _>>()
        .map_err(cuda_failure)?;
    // One curve per variant; each ring serves both.
    let mut curves: [Vec<BenchResult>; 2] = [Vec::new(), Vec::new()];
    for &size in &sizes {
        let ring = DeviceRing::build(gpu, size)?;
        for ((variant, &kernel), curve) in VARIANTS.iter().zip(&kernels).zip(curves.iter_mut()) {
            let chase = Chase {
                gpu,
                size,
                ring: &ring,
                out: &out,
                kernel,
                l2_bytes: l2.unwrap_or(FALLBACK_L2),
            };
            let result = chase.measure(ctx.runner, variant.0, variant.2)?;
            curve.push(
                result
                    .with_parameter(key::WORKING_SET_BYTES, size)
                    .as_sweep_detail(is_sweep_detail(size, largest)),
            );
        }
    }
    let [through_l1, bypassing_l1] = curves;
    let curve: Vec<(u64, &BenchResult)> = sizes.iter().copied().zip(&through_l1).collect();
    let mut levels = level_results(&curve, points_per_octave(ctx.suite), l2);
    if largest < wanted_largest {
        // Once, on the levels: they are what the missing sizes would have decided.
        let warning = Warning::part_skipped(
            &format!("working sets above {}", size_label(largest)),
            &format!("the device has {} free", size_label(device_free)),
        );
        for level in &mut levels {
            level.warnings.push(warning.clone());
        }
    }
    let mut results = through_l1;
    results.extend(bypassing_l1);
    results.extend(levels);
    Ok(results)
}

/// One ring chased by one kernel, writing to `out`.
#[cfg(feature = "gpu")]
struct Chase<'a, 'm> {
    gpu: &'a super::Gpu,
    /// The working set the ring spans.
    size: u64,
    ring: &'a DeviceRing,
    out: &'a super::driver::DeviceMemory,
    kernel: super::driver::Kernel<'m>,
    l2_bytes: u64,
}

#[cfg(feature = "gpu")]
impl Chase<'_, '_> {
    /// The ring walked once, then timed launch after launch, each continuing where the
    /// last one stopped: beyond the L2, lines a launch had just loaded would be L2 hits for
    /// the next one.
    fn measure(
        &self,
        runner: &mut latlab_engine::Runner,
        variant: &str,
        how: &str,
    ) -> Result<BenchResult, ProbeError> {
        use super::cuda_failure;
        use super::driver::{Arg, Launch};
        use super::session::DeviceTime;

        let stream = &self.gpu.stream;
        let warm = warm_loads(self.ring.lines, self.l2_bytes / LINE_BYTES as u64);
        let args = |start: u64, warm: u64| {
            [
                Arg::U64(start),
                Arg::U64(warm),
                Arg::U64(TIMED_LOADS),
                Arg::U64(self.out.address()),
            ]
        };
        // The first launch walks the ring, the caches as the walk leaves them.
        Launch::new(self.kernel, 1, 1, &args(self.ring.memory.address(), warm))
            .enqueue(stream)
            .and_then(|()| stream.synchronize())
            .map_err(cuda_failure)?;
        let mut position = read_chase_output(self.out, stream).map_err(cuda_failure)?[2];
        let name = format!("gpu.memory/{variant}/{}", size_label(self.size));
        let method = format!(
            "one thread's dependent loads {how} over a random ring of {} lines of {LINE_BYTES} bytes ({} spanned), {TIMED_LOADS} per launch, each continuing where the last stopped",
            self.ring.lines,
            size_label(self.size)
        );
        let count = launches(runner);
        let result = super::device_timed(runner, &name, &method, count, TIMED_LOADS, || {
            let mut launch = Launch::new(self.kernel, 1, 1, &args(position, 0));
            launch.enqueue(stream)?;
            stream.synchronize()?;
            let [cycles, ns, last, _] = read_chase_output(self.out, stream)?;
            position = last;
            Ok(DeviceTime { cycles, ns })
        })?;
        Ok(result
            .with_parameter(latlab_engine::names::key::LINE_BYTES, LINE_BYTES)
            .with_parameter(WARM_LOADS, warm))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warm_walk_is_a_lap_up_to_twice_the_l2() {
        assert_eq!(warm_loads(100, 1000), 100);
        assert_eq!(warm_loads(2000, 1000), 2000);
        assert_eq!(warm_loads(2001, 1000), 1000);
    }

    #[test]
    fn levels_are_named_l1_l2_far_l2_and_device_memory() {
        assert_eq!(level_names(3, true), ["L1", "L2", "DRAM"]);
        assert_eq!(level_names(4, true), ["L1", "L2", "L2-far", "DRAM"]);
        assert_eq!(level_names(2, false), ["L1", "L2"]);
        assert_eq!(level_names(5, false), ["L1", "L2", "L2-far", "L4", "L5"]);
        assert_eq!(level_names(1, true), ["L1"]);
    }

    /// The results of a synthetic chase over `sizes`, `cycles(size)` cycles per load at
    /// 1.755 GHz (the H100's boost clock).
    fn synthetic_curve(sizes: &[u64], cycles: impl Fn(u64) -> f64) -> Vec<BenchResult> {
        let cycle_ns = 1.0 / 1.755;
        sizes
            .iter()
            .map(|&size| {
                let t = cycles(size) * cycle_ns;
                BenchResult::derived(
                    &format!("gpu.memory/ca/{}", size_label(size)),
                    "m",
                    vec![t * 0.99, t, t * 1.01],
                    Vec::new(),
                    Vec::new(),
                )
                .unwrap()
                .with_parameter(crate::gpu::CYCLES_PER_OPERATION, t / cycle_ns)
            })
            .collect()
    }

    fn names(levels: &[BenchResult]) -> Vec<&str> {
        levels.iter().map(|r| r.name.as_str()).collect()
    }

    /// A quick sweep of a curve shaped like published H100 figures (about 33 cycles in L1
    /// up to 192 KiB, 260 in L2 up to 48 MiB, 700 beyond) gives the three levels with their
    /// cycles, the L2's size near the driver's, and a warning when the driver's size is
    /// four times off.
    #[test]
    fn a_synthetic_device_curve_gives_l1_l2_and_device_memory() {
        let l2 = 50u64 << 20;
        let sizes = chase_working_sets(Suite::Quick, l2, LINE_BYTES as u64);
        let results = synthetic_curve(&sizes, |size| match size {
            s if s <= 192 << 10 => 33.0,
            s if s <= 48 << 20 => 260.0,
            _ => 700.0,
        });
        let curve: Vec<(u64, &BenchResult)> = sizes.iter().copied().zip(&results).collect();
        let levels = level_results(&curve, points_per_octave(Suite::Quick), Some(l2));
        assert_eq!(
            names(&levels),
            [
                "gpu.memory/level/L1",
                "gpu.memory/level/L2",
                "gpu.memory/level/DRAM"
            ]
        );
        for (level, want) in levels.iter().zip([33.0, 260.0, 700.0]) {
            let got = level
                .parameter(latlab_engine::names::key::CYCLES_PER_LOAD)
                .unwrap()
                .as_f64()
                .unwrap();
            assert!((got / want - 1.0).abs() < 0.02, "{}: {got}", level.name);
        }
        let estimate = levels[1]
            .parameter(key::SIZE_ESTIMATE_BYTES)
            .unwrap()
            .as_u64()
            .unwrap();
        assert!(
            (estimate as f64 / l2 as f64 - 1.0).abs() < 0.5,
            "{estimate}"
        );
        assert!(levels[1].warnings.is_empty(), "{:?}", levels[1].warnings);
        let wrong = level_results(&curve, points_per_octave(Suite::Quick), Some(l2 * 4));
        assert!(matches!(
            wrong[1].warnings[..],
            [Warning::CacheSizeMismatch { .. }]
        ));
    }

    /// A second L2 step before device memory, long enough for the full sweep to see a
    /// plateau, is the far L2 partition; the size check applies to it, the last L2 level.
    #[test]
    fn a_second_l2_step_is_the_far_partition() {
        let l2 = 50u64 << 20;
        let sizes = chase_working_sets(Suite::Full, l2, LINE_BYTES as u64);
        let results = synthetic_curve(&sizes, |size| match size {
            s if s <= 192 << 10 => 33.0,
            s if s <= 14 << 20 => 260.0,
            s if s <= 48 << 20 => 420.0,
            _ => 700.0,
        });
        let curve: Vec<(u64, &BenchResult)> = sizes.iter().copied().zip(&results).collect();
        let levels = level_results(&curve, points_per_octave(Suite::Full), Some(l2));
        assert_eq!(
            names(&levels),
            [
                "gpu.memory/level/L1",
                "gpu.memory/level/L2",
                "gpu.memory/level/L2-far",
                "gpu.memory/level/DRAM"
            ]
        );
        assert!(levels[1].parameter(DRIVER_REPORTED_BYTES).is_none());
        assert!(levels[2].parameter(DRIVER_REPORTED_BYTES).is_some());
    }
}
