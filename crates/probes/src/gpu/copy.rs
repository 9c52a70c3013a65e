//! `gpu.copy`: host→device and device→host copies by size, from pinned (page-locked) and
//! pageable host memory.
//!
//! Each copy is what a program's `cudaMemcpy` costs: an asynchronous copy on the probe's
//! stream, then the wait for it, timed on the host in calibrated loops. Per size the result
//! is the time per copy and, as a rate, GB/s. Per direction and kind of memory the sweep is
//! summed up by the copy model `latency + bytes / bandwidth` (`copy_model.rs`), fitted once
//! per sample index (the i-th sample of every size) so that the fixed latency comes with a
//! spread; the bandwidth is a parameter of that result.
//!
//! Sizes run from 4 B to 1 GiB (`sizes.rs`); the largest is cut down when the device or the
//! host has not that much memory free (twice over on the host: a pinned and a pageable
//! buffer), with a warning on each model result.

use super::copy_model;
use super::sizes::copy_sizes;
use crate::mem::sizes::size_label;
use crate::{ProbeContext, ProbeError, ProbeSpec, Typical};
use latlab_engine::BenchResult;
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{HeadlineRow, Panel, Plot, Scale, Stroke, Unit};

const BANDWIDTH_GB_PER_S: Key = Key::new("bandwidth_gb_per_s");
const BANDWIDTH_PER_FIT_GB_PER_S: Key = Key::new("bandwidth_per_fit_gb_per_s");
const DIRECTION: Key = Key::new("direction");
const HALF_COST_BYTES: Key = Key::new("half_cost_bytes");
const HOST_MEMORY: Key = Key::new("host_memory");
const LATENCY_NS: Key = Key::new("latency_ns");

pub(crate) const SPEC: ProbeSpec = ProbeSpec {
    id: "gpu.copy",
    method: "host→device and device→host copies by size, pinned and pageable, each waited for; a fitted latency + bytes/bandwidth model",
    timing: crate::Timing::LessEmptyLoop,
    results: &[
        "gpu.copy/h2d/pinned/{size}",
        "gpu.copy/h2d/pageable/{size}",
        "gpu.copy/d2h/pinned/{size}",
        "gpu.copy/d2h/pageable/{size}",
        "gpu.copy/model/h2d/pinned",
        "gpu.copy/model/h2d/pageable",
        "gpu.copy/model/d2h/pinned",
        "gpu.copy/model/d2h/pageable",
    ],
    typical: Typical::quick_full(7.0, 40.0),
    extras: super::own_process_noting("the model fitted on the medians and per sample index"),
    presentation: latlab_engine::presentation::Presentation {
        plots: &[Plot {
            stem: "gpu-copy",
            title: "gpu.copy: host↔device copy rate by size",
            caption: "gpu.copy: bytes per second of one copy, waited for (median, decimal \
                      units), by size; colour is the direction, a solid line copies from pinned \
                      memory and a dashed one from pageable memory. Small copies are all fixed \
                      cost, large ones approach the link's bandwidth; the copy model results \
                      give both.",
            x_parameter: key::SIZE_BYTES,
            x_label: "copy size",
            x_axis: latlab_engine::presentation::XAxis::SizeLog,
            panels: &[Panel {
                y_label: "rate (median)",
                y_unit: Unit::BytesPerSecond,
                y_scale: Scale::Log,
                lines: &[
                    crate::rate_line(
                        "gpu.copy/h2d/pinned/{size}",
                        "host→device from pinned",
                        Stroke::Line,
                        0,
                    ),
                    crate::rate_line(
                        "gpu.copy/h2d/pageable/{size}",
                        "host→device from pageable",
                        Stroke::Dashed,
                        0,
                    ),
                    crate::rate_line(
                        "gpu.copy/d2h/pinned/{size}",
                        "device→host from pinned",
                        Stroke::Line,
                        1,
                    ),
                    crate::rate_line(
                        "gpu.copy/d2h/pageable/{size}",
                        "device→host from pageable",
                        Stroke::Dashed,
                        1,
                    ),
                ],
                levels: None,
                host_caches: false,
                reference: None,
            }],
        }],
        headline: &[
            HeadlineRow {
                only_with_family: true,
                ..crate::headline_row(
                    100,
                    "Copy 4 KiB host→device",
                    None,
                    "gpu.copy/h2d/pinned/4KiB",
                    "pinned",
                )
            },
            HeadlineRow {
                only_with_family: true,
                ..crate::headline_row(
                    110,
                    "Copy 1 MiB host→device",
                    None,
                    "gpu.copy/h2d/pinned/1MiB",
                    "pinned",
                )
            },
        ],
        ..latlab_engine::presentation::Presentation::NONE
    },
    run,
};

/// The share of free memory a buffer may take.
const FREE_SHARE: f64 = 0.5;

/// The largest size of `sizes` that fits in `free` bytes (at [`FREE_SHARE`]).
fn largest_fitting(sizes: &[u64], free: Option<u64>) -> Option<u64> {
    let budget = free.map_or(u64::MAX, |f| (f as f64 * FREE_SHARE) as u64);
    sizes.iter().copied().filter(|&s| s <= budget).max()
}

/// The copy model of one direction and kind of memory, from its results in size order:
/// fitted on each sample index, the latencies its samples. `None` when the points do not
/// fit the model.
fn model_result(name: &str, what: &str, sweep: &[BenchResult]) -> Option<BenchResult> {
    let size = |r: &BenchResult| r.bytes_per_operation.unwrap_or(0);
    let medians: Vec<(u64, f64)> = sweep.iter().map(|r| (size(r), r.summary.median)).collect();
    let overall = copy_model::fit(&medians)?;
    let depth = sweep.iter().map(|r| r.samples_ns.len()).min()?;
    let fits: Vec<copy_model::CopyModel> = (0..depth)
        .filter_map(|i| {
            let points: Vec<(u64, f64)> =
                sweep.iter().map(|r| (size(r), r.samples_ns[i])).collect();
            copy_model::fit(&points)
        })
        .collect();
    let latencies: Vec<f64> = fits.iter().map(|m| m.latency_ns).collect();
    let result = BenchResult::derived(
        name,
        &format!(
            "{what}: time = latency + bytes / bandwidth, least squares on relative error over {} sizes; the figure is the latency, fitted once per sample index",
            sweep.len()
        ),
        latencies,
        Vec::new(),
        sweep.iter().map(|r| r.name.clone()).collect(),
    )?;
    Some(
        result
            .with_parameter(LATENCY_NS, overall.latency_ns)
            .with_parameter(BANDWIDTH_GB_PER_S, overall.bytes_per_ns)
            .with_parameter(HALF_COST_BYTES, overall.half_cost_bytes())
            .with_parameter(
                BANDWIDTH_PER_FIT_GB_PER_S,
                fits.iter().map(|m| m.bytes_per_ns).collect::<Vec<f64>>(),
            ),
    )
}

super::entry!(measure);

#[cfg(feature = "gpu")]
fn measure(ctx: &mut ProbeContext, gpu: &super::Gpu) -> Result<Vec<BenchResult>, ProbeError> {
    use super::cuda_failure;
    use super::driver::{DeviceMemory, PinnedMemory};

    let plan = CopyPlan::of(ctx, gpu)?;
    let bytes = plan.largest as usize;
    let device = DeviceMemory::zeroed(&gpu.stream, bytes).map_err(cuda_failure)?;
    let mut pinned = PinnedMemory::new(&gpu.device, bytes).map_err(cuda_failure)?;
    let mut pageable = vec![1u8; bytes];
    let mut results = Vec::new();
    for (direction, arrow) in [("h2d", "host→device"), ("d2h", "device→host")] {
        for memory in ["pinned", "pageable"] {
            let host: &mut [u8] = match memory {
                "pinned" => pinned.as_mut_slice(),
                _ => &mut pageable,
            };
            let copies = Copies {
                direction,
                arrow,
                memory,
            };
            let sweep = copies.sweep(ctx.runner, gpu, &device, host, &plan)?;
            let model = model_result(
                &format!("gpu.copy/model/{direction}/{memory}"),
                &format!("{arrow} copies from {memory} memory"),
                &sweep,
            )
            .map(|mut model| {
                // Once per sweep, on its summary.
                model.warnings.extend(plan.cut.clone());
                model
            });
            results.extend(sweep);
            results.extend(model);
        }
    }
    Ok(results)
}

/// The copy sizes that fit: the suite's, up to the largest that takes at most half the
/// free device and host memory, and the warning that says what was left out.
#[cfg(feature = "gpu")]
struct CopyPlan {
    sizes: Vec<u64>,
    largest: u64,
    cut: Option<latlab_engine::Warning>,
}

#[cfg(feature = "gpu")]
impl CopyPlan {
    fn of(ctx: &ProbeContext, gpu: &super::Gpu) -> Result<CopyPlan, ProbeError> {
        let wanted = copy_sizes(ctx.suite);
        let device_free = (gpu.device.free_memory_bytes()).map_err(super::cuda_failure)?;
        let host_free = ctx.host().available_memory_bytes().map(|b| b / 2);
        let free = || {
            format!(
                "device {}, host {}",
                size_label(device_free),
                host_free.map_or("unknown".into(), size_label)
            )
        };
        let largest = largest_fitting(&wanted, Some(device_free))
            .min(largest_fitting(&wanted, host_free))
            .ok_or_else(|| {
                ProbeError::Failed(format!(
                    "not even a {} copy fits in the free memory ({})",
                    size_label(wanted[0]),
                    free()
                ))
            })?;
        let cut = (largest < *wanted.last().expect("sizes")).then(|| {
            latlab_engine::Warning::part_skipped(
                &format!("copies above {}", size_label(largest)),
                &format!(
                    "they would take more than half the free memory ({})",
                    free()
                ),
            )
        });
        Ok(CopyPlan {
            sizes: wanted.into_iter().filter(|&s| s <= largest).collect(),
            largest,
            cut,
        })
    }
}

/// One sweep of copies: a direction and a kind of host memory.
#[cfg(feature = "gpu")]
struct Copies<'a> {
    direction: &'a str,
    arrow: &'a str,
    memory: &'a str,
}

#[cfg(feature = "gpu")]
impl Copies<'_> {
    /// One result per size of `plan`, each copy between `device` and the start of `host`
    /// and its wait.
    fn sweep(
        &self,
        runner: &mut latlab_engine::Runner,
        gpu: &super::Gpu,
        device: &super::driver::DeviceMemory,
        host: &mut [u8],
        plan: &CopyPlan,
    ) -> Result<Vec<BenchResult>, ProbeError> {
        use super::driver::{copy_to_device, copy_to_host};

        let Copies {
            direction,
            arrow,
            memory,
        } = *self;
        let stream = &gpu.stream;
        let failed = super::FirstError::default();
        let note = |result| failed.note(result);
        // The full suite's in-between sizes are folded in the terminal table.
        let shown = copy_sizes(crate::Suite::Quick);
        let mut sweep = Vec::new();
        for &size in &plan.sizes {
            let name = format!("gpu.copy/{direction}/{memory}/{}", size_label(size));
            let method = format!(
                "a {} {arrow} copy from {memory} host memory (cuMemcpy{}Async, then cuStreamSynchronize)",
                size_label(size),
                if direction == "h2d" { "HtoD" } else { "DtoH" }
            );
            let part = &mut host[..size as usize];
            let result = runner.scoped(crate::mem::sweep_point, |runner| {
                if direction == "h2d" {
                    runner.bench(&name, &method, || {
                        note(copy_to_device(device, part, stream))
                    })
                } else {
                    runner.bench(&name, &method, || note(copy_to_host(part, device, stream)))
                }
            })?;
            failed.check()?;
            sweep.push(
                result
                    .with_bytes_per_operation(size)
                    .with_parameter(latlab_engine::names::key::SIZE_BYTES, size)
                    .with_parameter(DIRECTION, arrow)
                    .with_parameter(HOST_MEMORY, memory)
                    .as_sweep_detail(!shown.contains(&size) && size != plan.largest),
            );
        }
        Ok(sweep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_copy_fits_in_half_the_free_memory() {
        let sizes = [4, 1 << 20, 512 << 20, 1 << 30];
        assert_eq!(largest_fitting(&sizes, None), Some(1 << 30));
        assert_eq!(largest_fitting(&sizes, Some(3 << 30)), Some(1 << 30));
        assert_eq!(largest_fitting(&sizes, Some(1 << 30)), Some(512 << 20));
        assert_eq!(largest_fitting(&sizes, Some(4)), None);
    }

    /// The model of a sweep of synthetic copies recovers their latency and bandwidth, with
    /// one fitted latency per sample index.
    #[test]
    fn a_sweep_becomes_its_model() {
        let sweep: Vec<BenchResult> = [4u64, 4096, 1 << 20, 64 << 20]
            .iter()
            .map(|&size| {
                let t = 5000.0 + size as f64 / 20.0;
                let samples = vec![t * 0.99, t, t * 1.01, t * 1.02, t * 0.98];
                BenchResult::derived(&format!("c/{size}"), "m", samples, Vec::new(), Vec::new())
                    .unwrap()
                    .with_bytes_per_operation(size)
            })
            .collect();
        let model = model_result("gpu.copy/model/h2d/pinned", "copies", &sweep).unwrap();
        assert_eq!(model.samples_ns.len(), 5);
        assert!(
            (model.summary.median / 5000.0 - 1.0).abs() < 0.05,
            "{}",
            model.summary.median
        );
        let bandwidth = model
            .parameter(BANDWIDTH_GB_PER_S)
            .unwrap()
            .as_f64()
            .unwrap();
        assert!((bandwidth / 20.0 - 1.0).abs() < 0.05, "{bandwidth}");
        assert_eq!(model.derived_from.len(), 4);
    }
}
