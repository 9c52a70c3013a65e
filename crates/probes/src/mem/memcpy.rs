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
//! per byte, bytes per core cycle, and the derivative of the minimum time by size: the extra
//! cost of one more byte, whose spikes mark cache boundaries and alignment effects.

use super::buffer::MappedBuffer;
use super::sizes::{is_sweep_detail, size_label};
use super::sweep_point;
use crate::{ProbeContext, ProbeError, ProbeSpec, Suite, Typical};
use latlab_engine::names::key;
use latlab_engine::presentation::{
    Line, Measure, Panel, Plot, Presentation, Scale, Stroke, Template, Unit,
};
use latlab_engine::{BenchResult, Config, Runner};
use std::hint::black_box;
use std::time::Duration;

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "mem.memcpy",
    method: "one memcpy between page-aligned buffers by size, 1 B to the largest working set; \
             minimum, median and derivative",
    timing: crate::timing::LESS_EMPTY_LOOP,
    results: &["mem.memcpy/{size}"],
    typical: Typical {
        quick_s: 3.9,
        full_s: 44.0,
    },
    alone: false,
    rounds: crate::Rounds::Each,
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
                },
            ],
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
    // One thread copies; a copy of n bytes touches 2n.
    let max = ctx.max_working_set_from_curve(false);
    let sizes = copy_sizes(max, sizes_per_octave(ctx.suite));
    let cycle = ctx.cycle()?;
    let cycle_ns = cycle.ns();
    let map = |what: &str| {
        MappedBuffer::new(max as usize, ctx.memory.huge_pages).map_err(|e| {
            ProbeError::Failed(format!(
                "could not map the {what} ({}): {e}",
                size_label(max)
            ))
        })
    };
    let source = map("source")?;
    let destination = map("destination")?;
    let mut results = ctx.runner.scoped(copy_sampling, |runner| {
        sizes
            .iter()
            .map(|&size| {
                let result = copy(runner, &source, &destination, size, cycle_ns)?;
                Ok(result.as_sweep_detail(is_sweep_detail(size, max)))
            })
            .collect::<Result<Vec<_>, ProbeError>>()
    })?;
    add_derivative(&mut results, &sizes);
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
        .with_parameter("min_ns", min)
        .with_parameter("ns_per_byte", median / size as f64)
        .with_parameter("bytes_per_cycle", size as f64 / (median / cycle_ns)))
}

/// The derivative of the minimum time by size, between each size and the one before it, in
/// nanoseconds per byte.
fn add_derivative(results: &mut [BenchResult], sizes: &[u64]) {
    for i in 1..results.len().min(sizes.len()) {
        let rise = results[i].summary.min - results[i - 1].summary.min;
        let slope = rise / (sizes[i] - sizes[i - 1]) as f64;
        results[i]
            .parameters
            .insert(key::DERIVATIVE_NS_PER_BYTE.into(), slope.into());
    }
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
        let mut results = vec![result(10.0), result(12.0), result(20.0)];
        add_derivative(&mut results, &[100, 110, 130]);
        let slope = |r: &BenchResult| r.parameter(key::DERIVATIVE_NS_PER_BYTE)?.as_f64();
        assert_eq!(slope(&results[0]), None);
        assert!((slope(&results[1]).unwrap() - 0.2).abs() < 1e-12);
        assert!((slope(&results[2]).unwrap() - 0.4).abs() < 1e-12);
    }
}
