//! The GPU family's figures: the device's latency by working set with its levels, and the
//! host↔device copy rate by size.

use super::figure::{Figure, Panel, Scale, Series, Stroke};
use super::memory::{LatencyCurve, latency_figure, number};
use crate::units::{format_bytes, format_rate_axis};
use latlab_engine::model::{BenchResult, RunRecord};
use latlab_engine::names::key;

/// The figures this run has data for, with their file stems.
pub(crate) fn figures(run: &RunRecord) -> Vec<(&'static str, Figure)> {
    let results = |id: &str| {
        run.probes
            .iter()
            .find(|p| p.id == id)
            .map_or(&[][..], |p| p.results.as_slice())
    };
    [
        ("gpu-memory", memory(results("gpu.memory"))),
        ("gpu-copy", copy(results("gpu.copy"))),
    ]
    .into_iter()
    .filter_map(|(stem, figure)| Some((stem, figure?)))
    .collect()
}

fn memory(results: &[BenchResult]) -> Option<Figure> {
    latency_figure(LatencyCurve {
        results,
        layout: |r| {
            if r.name.starts_with("gpu.memory/ca/") {
                Some("through L1 (ld.global.ca)")
            } else if r.name.starts_with("gpu.memory/cg/") {
                Some("bypassing L1 (ld.global.cg)")
            } else {
                None
            }
        },
        level_prefix: latlab_engine::names::result::GPU_LEVEL_PREFIX,
        title: "gpu.memory: the GPU's load-to-use latency by working set".into(),
        caption: "gpu.memory: the time of one dependent load by one GPU thread (median of the \
                  launches, timed on the device) as the working set grows, through L1 and \
                  bypassing it. The bands are the levels found on the L1 curve (L1, L2, the \
                  far L2 partition where the curve shows one, device memory), the grey lines \
                  where each ends."
            .into(),
    })
}

fn copy(results: &[BenchResult]) -> Option<Figure> {
    let mut series: Vec<Series> = Vec::new();
    for result in results {
        let (Some(size), Some(rate)) = (
            number(result, key::SIZE_BYTES),
            result.gigabytes_per_second(),
        ) else {
            continue;
        };
        // gpu.copy/h2d/pinned/4KiB
        let mut parts = result.name.split('/').skip(1);
        let (Some(direction), Some(memory)) = (parts.next(), parts.next()) else {
            continue;
        };
        let label = format!(
            "{} from {memory}",
            if direction == "h2d" {
                "host→device"
            } else {
                "device→host"
            }
        );
        let (color, style) = match (direction, memory) {
            ("h2d", "pinned") => (0, Stroke::Line),
            ("h2d", _) => (0, Stroke::Dashed),
            (_, "pinned") => (1, Stroke::Line),
            _ => (1, Stroke::Dashed),
        };
        Series::add_point(&mut series, &label, (size, rate), style, color);
    }
    (!series.is_empty()).then(|| Figure {
        title: "gpu.copy: host↔device copy rate by size".into(),
        caption: "gpu.copy: bytes per second of one copy, waited for (median, decimal units), \
                  by size; colour is the direction, a solid line copies from pinned memory and \
                  a dashed one from pageable memory. Small copies are all fixed cost, large \
                  ones approach the link's bandwidth; the copy model results give both."
            .into(),
        x_label: "copy size".into(),
        x_format: format_bytes,
        panels: vec![Panel {
            y_label: "rate (median)".into(),
            y_scale: Scale::Log,
            y_format: format_rate_axis,
            series,
            marks: Vec::new(),
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{probe, record, result};

    /// A run with GPU results gets both figures, with the two chase lines, the levels as
    /// bands and the four copy lines; a run without gets none.
    #[test]
    fn gpu_results_become_their_figures() {
        let chase: Vec<BenchResult> = [
            ("ca", 1024u64, 20.0),
            ("ca", 1 << 20, 150.0),
            ("cg", 1024, 140.0),
        ]
        .iter()
        .map(|&(variant, size, ns)| {
            result(
                &format!("gpu.memory/{variant}/{size}"),
                ns,
                &[(key::WORKING_SET_BYTES, size.into())],
            )
        })
        .collect();
        let mut level = result("gpu.memory/level/L1", 20.0, &[]);
        level.derived_from = vec!["gpu.memory/ca/1024".into()];
        let copies: Vec<BenchResult> = ["h2d/pinned", "h2d/pageable", "d2h/pinned", "d2h/pageable"]
            .iter()
            .flat_map(|kind| {
                [4096u64, 1 << 20].map(|size| {
                    result(
                        &format!("gpu.copy/{kind}/{size}"),
                        1000.0 + size as f64 / 10.0,
                        &[(key::SIZE_BYTES, size.into())],
                    )
                    .with_bytes_per_operation(size)
                })
            })
            .collect();
        let run = record(vec![
            probe("gpu.memory", chase.into_iter().chain([level]).collect()),
            probe("gpu.copy", copies),
        ]);
        let drawn = figures(&run);
        let stems: Vec<&str> = drawn.iter().map(|(s, _)| *s).collect();
        assert_eq!(stems, ["gpu-memory", "gpu-copy"]);
        let memory = &drawn[0].1.panels[0].series;
        assert_eq!(memory.len(), 3, "two lines and the L1 band");
        assert!(memory[2].label.starts_with("L1: "));
        assert_eq!(drawn[1].1.panels[0].series.len(), 4);
        assert!(figures(&record(vec![probe("mem.latency", Vec::new())])).is_empty());
    }
}
