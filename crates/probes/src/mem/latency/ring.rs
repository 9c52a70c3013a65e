//! A ring of cache lines measured on fresh mappings, its samples pooled or kept as rounds:
//! what `mem.latency`'s points, the stability check's chases and `thread.core_to_core`'s L2
//! reference measure.

use super::chase::{Chase, Layout, walk};
use super::*;
use crate::ProbeError;
use crate::mem::sizes::size_label;
use latlab_engine::names::key;
use latlab_engine::{BenchResult, Runner};

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
pub(super) fn measure_rings(
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
pub(super) const PLACEMENTS_WITHIN_CACHES: usize = 3;

/// Measures [`PLACEMENTS_WITHIN_CACHES`] rings like `ring`, each on its own fresh mapping
/// with its share of the samples, merged as rounds: the result carries each placement's
/// median (`round_medians_ns`), which shows how far placement alone moves the figure.
pub(super) fn measure_placements(
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
pub(super) fn pages_of(chase: &Chase, huge: bool, size: u64) -> String {
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
        runner.bench_operations(&name, &method, LOADS_PER_CALL as u64, move || {
            // SAFETY: `p` is in the ring, which outlives the benchmark.
            p = unsafe { walk::<LOADS_PER_CALL>(p) };
            p
        })?
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
