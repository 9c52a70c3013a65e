//! `mem.memcpy`: the time of one memcpy by size, from 1 byte to the largest working set (in
//! the quick suite four times the last cache the latency curve found, see
//! [`crate::ProbeContext::max_working_set_from_curve`]).
//!
//! Every size from 1 to 64 bytes, then 32 sizes per octave (8 in the quick suite), most of
//! them odd, so that the curve shows what the C library's memcpy does with sizes and
//! alignments as well as where the caches end (a copy of n bytes touches 2n: source and
//! destination). Each size is a timed loop of copies between two page-aligned buffers mapped
//! once at the largest size, through `ptr::copy_nonoverlapping` (the C library's memcpy for
//! sizes not known at compile time), its pointers and length through a value sink so that no
//! copy can be elided. Each size reports the median and the minimum over its samples (the
//! minimum is the figure least disturbed by interrupts, as in Rubini's memcpy sweep), the time
//! per byte, bytes per core cycle, and the derivative of the minimum time by size over an
//! octave around each size: the extra cost of one more byte, which steps up where the copy
//! outgrows a cache.

use super::pages::mapped::MappedBuffer;
use super::sizes::{is_sweep_detail, size_label};
use super::sweep_point;
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical};
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{
    Line, Measure, Panel, Plot, Presentation, Scale, Stroke, Template, Unit,
};
use latlab_engine::{BenchResult, Config, Runner};
use std::f64::consts::SQRT_2;
use std::hint::black_box;
use std::time::Duration;

const BYTES_PER_CYCLE: Key = Key::new("bytes_per_cycle");
const MIN_NS: Key = Key::new("min_ns");
const NS_PER_BYTE: Key = Key::new("ns_per_byte");

/// The results it lists ([`ProbeSpec::results`]).
const RESULTS: &[&str] = &["mem.memcpy/{size}"];

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "mem.memcpy",
    method: "one memcpy between page-aligned buffers by size, 1 B to the largest working set; \
             minimum, median and derivative",
    timing: crate::Timing::LessEmptyLoop,
    results: RESULTS,
    typical: Typical::quick_full(3.9, 44.0),
    extras: crate::Extras {
        options: &[&crate::mem::MAX_SIZE_OPTION, &crate::mem::HUGE_PAGES_OPTION],
        ..crate::Extras::NONE
    },
    presentation: Presentation {
        plots: &[Plot {
            stem: "mem-memcpy",
            title: "mem.memcpy: one copy by size (a copy of n bytes touches 2n)",
            caption: "mem.memcpy: the time of one memcpy by the number of bytes copied, its \
                      minimum and median (top); the same per byte (middle); and the derivative \
                      of the minimum, what each added byte costs (bottom). Where the derivative \
                      steps up, source and destination together have outgrown a cache: \
                      Rubini's way of finding cache sizes from copies.",
            x_parameter: key::COPY_BYTES,
            x_label: "bytes copied",
            x_axis: latlab_engine::presentation::XAxis::SizeLog,
            panels: &[
                Panel {
                    y_label: "time per copy",
                    y_unit: Unit::Nanoseconds,
                    y_scale: Scale::Log,
                    lines: &[
                        copies("minimum", Measure::Minimum, 0),
                        copies("median", Measure::Median, 1),
                    ],
                    levels: None,
                    host_caches: false,
                    reference: None,
                },
                Panel {
                    y_label: "time per byte",
                    y_unit: Unit::Nanoseconds,
                    y_scale: Scale::Log,
                    lines: &[
                        copies("minimum", Measure::MinimumPerX, 0),
                        copies("median", Measure::MedianPerX, 1),
                    ],
                    levels: None,
                    host_caches: false,
                    reference: None,
                },
                Panel {
                    y_label: "time per added byte",
                    y_unit: Unit::Nanoseconds,
                    y_scale: Scale::Linear,
                    lines: &[copies(
                        "derivative of the minimum",
                        Measure::Parameter(key::DERIVATIVE_NS_PER_BYTE),
                        2,
                    )],
                    levels: None,
                    host_caches: false,
                    reference: None,
                },
            ],
        }],
        checked_by: &[latlab_engine::presentation::CheckedBy {
            check: latlab_engine::presentation::StabilityCheck::MemoryChases,
            results: RESULTS,
        }],
        ..Presentation::NONE
    },
    run,
};

/// A line over every copy size, by order of the strokes.
const fn copies(label: &'static str, y: Measure, color: u8) -> Line {
    Line {
        results: Template("mem.memcpy/{size}"),
        label,
        y,
        stroke: [Stroke::Line, Stroke::Dashed, Stroke::Dotted][color as usize],
        color,
    }
}

/// Every size up to this one is measured.
const EVERY_SIZE_UP_TO: u64 = 64;

/// Sizes per octave above [`EVERY_SIZE_UP_TO`]: the full suite's 32 show the C library's
/// size classes and alignment steps; the quick suite's 8 still show every cache boundary.
fn sizes_per_octave(suite: Suite) -> usize {
    match suite {
        Suite::Quick => 8,
        Suite::Full => 32,
    }
}

/// A sweep point's samples are short: many copies of a small size fit in 1/20 of a regular
/// sample, and short samples let the minimum escape interrupts.
fn copy_sampling(config: &mut Config) {
    sweep_point(config);
    config.target_sample_time = (config.target_sample_time / 10).max(Duration::from_micros(50));
}

fn run(ctx: &mut ProbeContext) -> Result<Vec<BenchResult>, ProbeError> {
    // One thread copies; a copy of n bytes touches 2n, and both buffers are mapped at the
    // largest size: by default, half the ceiling each, so that the two together stay
    // within the memory a ring of the ceiling takes.
    let max = match ctx.options.bytes(&super::MAX_SIZE_OPTION) {
        Some(_) => ctx.max_working_set_from_curve(false),
        None => (ctx.max_working_set_from_curve(false)).min(crate::DEFAULT_MAX_CEILING / 2),
    };
    let sizes = copy_sizes(max, sizes_per_octave(ctx.suite));
    let cycle = ctx.cycle()?;
    let cycle_ns = cycle.ns();
    let map = |what: &str| {
        MappedBuffer::new(max as usize, ctx.options.flag(&super::HUGE_PAGES_OPTION)).map_err(|e| {
            ProbeError::Failed(format!(
                "could not map the {what} ({}): {e}",
                size_label(max)
            ))
        })
    };
    let source = map("source")?;
    let destination = map("destination")?;
    let mut results = ctx.runner.scoped(copy_sampling, |runner| {
        let mut clock = crate::sweep_time::PointClock::start();
        let mut results: Vec<BenchResult> = Vec::with_capacity(sizes.len());
        for &size in &sizes {
            // A copy twice as large costs up to twice as much once past the caches.
            if !results.is_empty() && !runner.config().has_time_for(clock.last * 2) {
                let left = [size_label(size)];
                crate::sweep_time::note_left_out(&mut results, "mem.memcpy sizes from", &left);
                break;
            }
            clock.point_begins();
            let result = copy(runner, &source, &destination, size, cycle_ns)?;
            clock.point_ended();
            results.push(result.as_sweep_detail(is_sweep_detail(size, max)));
        }
        Ok::<_, ProbeError>(results)
    })?;
    let sizes = &sizes[..results.len()];
    add_derivative(&mut results, sizes);
    cycle.mark(&mut results);
    Ok(results)
}

/// Times one copy of `size` bytes from `source` to `destination`.
fn copy(
    runner: &mut Runner,
    source: &MappedBuffer,
    destination: &MappedBuffer,
    size: u64,
    cycle_ns: f64,
) -> Result<BenchResult, ProbeError> {
    assert!(size as usize <= source.len().min(destination.len()));
    let (src, dst) = (source.as_mut_ptr(), destination.as_mut_ptr());
    let result = runner.bench(
        &format!("mem.memcpy/{}", size_label(size)),
        &format!("memcpy of {size} bytes between page-aligned buffers"),
        // SAFETY: both buffers hold at least `size` bytes (asserted above), are distinct
        // mappings, so they do not overlap, and outlive the benchmark.
        || unsafe {
            std::ptr::copy_nonoverlapping(
                black_box(src.cast_const()),
                black_box(dst),
                black_box(size as usize),
            )
        },
    )?;
    let (median, min) = (result.summary.median, result.summary.min);
    Ok(result
        .with_bytes_per_operation(size)
        .with_parameter(key::COPY_BYTES, size)
        .with_parameter(key::WORKING_SET_BYTES, 2 * size)
        .with_parameter(MIN_NS, min)
        .with_parameter(NS_PER_BYTE, median / size as f64)
        .with_parameter(BYTES_PER_CYCLE, size as f64 / (median / cycle_ns)))
}

/// The derivative of the minimum time by size, in nanoseconds per byte: at each size, the
/// least-squares slope of the minimum over the sizes within half an octave either side of it
/// (a factor of √2), where there are at least three. A difference between neighbours alone
/// would be one clock tick over one byte at the smallest sizes, ±0.5 ns per byte of noise;
/// over an octave the noise averages out while a cache boundary still shows as a step an
/// octave wide.
fn add_derivative(results: &mut [BenchResult], sizes: &[u64]) {
    let minima: Vec<f64> = results.iter().map(|r| r.summary.min).collect();
    for (i, result) in results.iter_mut().enumerate().take(sizes.len()) {
        let centre = sizes[i] as f64;
        let window: Vec<(f64, f64)> = (sizes.iter().zip(&minima))
            .map(|(&size, &min)| (size as f64, min))
            .filter(|&(size, _)| size >= centre / SQRT_2 && size <= centre * SQRT_2)
            .collect();
        if let Some(slope) = least_squares_slope(&window) {
            result
                .parameters
                .insert(key::DERIVATIVE_NS_PER_BYTE.name().into(), slope.into());
        }
    }
}

/// The slope of the least-squares line through `points`, `None` for fewer than three.
fn least_squares_slope(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 3 {
        return None;
    }
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let covariance: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let variance: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    (variance > 0.0).then(|| covariance / variance)
}

/// Every size from 1 to 64 bytes, then `per_octave` sizes per doubling up to `max`, each
/// label distinct; `max` is always the last.
fn copy_sizes(max: u64, per_octave: usize) -> Vec<u64> {
    let mut sizes: Vec<u64> = (1..=EVERY_SIZE_UP_TO.min(max)).collect();
    for k in 1.. {
        let exact = EVERY_SIZE_UP_TO as f64 * 2f64.powf(k as f64 / per_octave as f64);
        if exact >= max as f64 {
            break;
        }
        let size = exact.round() as u64;
        if sizes
            .last()
            .is_none_or(|&last| size_label(last) != size_label(size))
        {
            sizes.push(size);
        }
    }
    if sizes
        .last()
        .is_some_and(|&last| size_label(last) == size_label(max))
    {
        sizes.pop();
    }
    if sizes.last() != Some(&max) {
        sizes.push(max);
    }
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_small_size_then_per_octave() {
        let sizes = copy_sizes(64 << 10, 32);
        assert_eq!(&sizes[..64], (1..=64).collect::<Vec<u64>>().as_slice());
        assert!(sizes.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(*sizes.last().unwrap(), 64 << 10);
        // Ten octaves from 64 B to 64 KiB, 32 per octave.
        let above = sizes.len() - 64;
        assert!((310..=320).contains(&above), "{above} sizes above 64 B");
        let labels: std::collections::HashSet<String> =
            sizes.iter().map(|&s| size_label(s)).collect();
        assert_eq!(labels.len(), sizes.len());
        assert_eq!(copy_sizes(10, 32), (1..=10).collect::<Vec<u64>>());
    }

    /// A bigger copy takes longer, but less time per byte: the fixed cost is amortised.
    /// No copy is optimised away, not even one byte.
    #[test]
    fn bigger_copies_take_longer_but_less_per_byte() {
        let mut runner = crate::test_runner(7, std::time::Duration::from_micros(200));
        let max = 1 << 20;
        let (source, destination) = (
            MappedBuffer::new(max, false).unwrap(),
            MappedBuffer::new(max, false).unwrap(),
        );
        let sizes = [1u64, 4096, max as u64];
        let results: Vec<BenchResult> = sizes
            .iter()
            .map(|&size| copy(&mut runner, &source, &destination, size, 0.3).unwrap())
            .collect();
        for r in &results {
            assert_eq!(r.verdict, latlab_engine::Verdict::Measured, "{}", r.name);
        }
        let min = |i: usize| results[i].summary.min;
        assert!(min(0) < min(1) && min(1) < min(2), "{results:#?}");
        let per_byte = |i: usize| min(i) / sizes[i] as f64;
        assert!(per_byte(2) < per_byte(0) / 10.0);
    }

    #[test]
    fn the_derivative_is_the_slope_of_the_minimum() {
        let result = |min: f64| {
            BenchResult::derived("t", "t", vec![min, min + 1.0], Vec::new(), Vec::new()).unwrap()
        };
        // 2 ns + 0.1 ns per byte from 100 to 140 bytes: every size in its window is on the
        // line, so the slope is exact; the first size has too few neighbours within √2.
        let sizes = [50, 100, 110, 120, 130, 140];
        let mut results: Vec<BenchResult> = sizes
            .iter()
            .map(|&s| result(2.0 + 0.1 * s as f64))
            .collect();
        add_derivative(&mut results, &sizes);
        let slope = |r: &BenchResult| r.parameter(key::DERIVATIVE_NS_PER_BYTE)?.as_f64();
        assert_eq!(slope(&results[0]), None);
        for r in &results[1..] {
            assert!((slope(r).unwrap() - 0.1).abs() < 1e-9, "{:?}", slope(r));
        }
    }

    /// A minimum that costs 0.01 ns a byte below 32 KiB and 0.05 above, with a tick of
    /// ±0.5 ns of noise on every size: the derivative reads each slope an octave away from
    /// the step, where the difference between neighbours would swing by a nanosecond a byte.
    #[test]
    fn the_derivative_shows_the_step_not_the_noise() {
        let result = |min: f64| {
            BenchResult::derived("t", "t", vec![min, min + 1.0], Vec::new(), Vec::new()).unwrap()
        };
        let sizes = copy_sizes(1 << 20, 8);
        let step = 32.0 * 1024.0;
        let mut results: Vec<BenchResult> = (sizes.iter().enumerate())
            .map(|(i, &s)| {
                let s = s as f64;
                let clean = 0.01 * s.min(step) + 0.05 * (s - step).max(0.0);
                result(10.0 + clean + if i % 2 == 0 { 0.5 } else { -0.5 })
            })
            .collect();
        add_derivative(&mut results, &sizes);
        let at = |size: u64| {
            let i = sizes.iter().position(|&s| s >= size).unwrap();
            results[i]
                .parameter(key::DERIVATIVE_NS_PER_BYTE)
                .unwrap()
                .as_f64()
                .unwrap()
        };
        assert!((at(8 * 1024) - 0.01).abs() < 0.003, "{}", at(8 * 1024));
        assert!((at(128 * 1024) - 0.05).abs() < 0.003, "{}", at(128 * 1024));
        // Among the byte-by-byte sizes, the noise is ±0.5 ns over a byte apart, yet the
        // derivative stays within 0.2 ns a byte of the truth.
        for size in 16..64 {
            assert!(at(size).abs() < 0.2, "{size}: {}", at(size));
        }
    }
}
