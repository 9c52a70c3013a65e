//! Plots of a run, as SVG and PNG files: one figure per sweep that the run measured.
//!
//! Figures are the probes' declared plots filled from the record (`declared.rs`), drawn by
//! `figure.rs` once on an SVG backend and, when files are wanted, once on a bitmap that is
//! encoded as PNG. A run renders its plots once and hands them both to the HTML page and to
//! the files; each file is written atomically, like every other output.

mod declared;
pub(crate) mod distribution;
mod figure;
mod matrix;
pub(crate) mod strip;

use crate::ExportError;
use crate::write::write_atomically;
use figure::{Figure, WIDTH};
use latlab_engine::model::RunRecord;
use latlab_engine::presentation::Presentations;
use plotters::prelude::{BitMapBackend, IntoDrawingArea, SVGBackend};
use std::path::{Path, PathBuf};

pub(crate) use matrix::pair_matrix;

/// One figure, drawn.
pub struct RenderedPlot {
    /// The file name without its extension, `mem-latency`.
    pub stem: &'static str,
    /// What the figure shows, for the page's caption.
    pub caption: String,
    pub svg: String,
    /// The PNG, when asked for.
    pub png: Option<Vec<u8>>,
}

/// Which formats to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formats {
    /// For the HTML page alone.
    Svg,
    /// For the page and the files.
    SvgAndPng,
}

/// Every declared figure the run has data for, drawn once in each format asked for.
pub fn render_plots(
    run: &RunRecord,
    declared: &Presentations,
    formats: Formats,
) -> Result<Vec<RenderedPlot>, ExportError> {
    (declared.plots.iter())
        .filter_map(|plot| Some((plot.stem, declared::figure(run, plot)?)))
        .map(|(stem, figure)| {
            Ok(RenderedPlot {
                stem,
                svg: svg(&figure)?,
                caption: figure.caption.clone(),
                png: match formats {
                    Formats::Svg => None,
                    Formats::SvgAndPng => Some(png(&figure)?),
                },
            })
        })
        .collect()
}

/// Writes `STEM.svg` and, where drawn, `STEM.png` of every plot into `dir`; returns the
/// paths.
pub fn write_plots(plots: &[RenderedPlot], dir: &Path) -> Result<Vec<PathBuf>, ExportError> {
    let mut written = Vec::new();
    for plot in plots {
        let files = std::iter::once(("svg", plot.svg.as_bytes()))
            .chain(plot.png.as_deref().map(|png| ("png", png)));
        for (extension, bytes) in files {
            let path = dir.join(format!("{}.{extension}", plot.stem));
            write_atomically(&path, bytes).map_err(|source| ExportError::Write {
                path: path.display().to_string(),
                source,
            })?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Escapes text for the SVG written by hand here (XML text and attribute values).
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn drawing_error(format: &'static str, detail: impl std::fmt::Display) -> ExportError {
    ExportError::Encode {
        format,
        detail: detail.to_string(),
    }
}

fn svg(figure: &Figure) -> Result<String, ExportError> {
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, (WIDTH, figure.height())).into_drawing_area();
        figure.draw(&root).map_err(|e| drawing_error("SVG", e))?;
    }
    Ok(text)
}

fn png(figure: &Figure) -> Result<Vec<u8>, ExportError> {
    let (width, height) = (WIDTH, figure.height());
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        figure.draw(&root).map_err(|e| drawing_error("PNG", e))?;
    }
    let mut encoded = Vec::new();
    let mut encoder = png::Encoder::new(&mut encoded, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder
        .write_header()
        .and_then(|mut writer| writer.write_image_data(&rgb))
        .map_err(|e| drawing_error("PNG", e))?;
    Ok(encoded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{probe, record, result};
    use latlab_engine::BenchResult;

    /// A memory run in miniature: a latency curve with one level, a bandwidth sweep and a
    /// memcpy sweep.
    fn memory_record() -> RunRecord {
        let label = |bytes: u64| latlab_engine::units::format_bytes(bytes as f64);
        let sizes = [1024u64, 2048, 4096, 8192];
        let mut latency: Vec<BenchResult> = sizes
            .iter()
            .map(|&s| {
                let params = [
                    ("working_set_bytes", s.into()),
                    ("layout", "pagegroups".into()),
                ];
                result(
                    &format!("mem.latency/pagegroups/{}", label(s)),
                    1.0 + s as f64 / 4096.0,
                    &params,
                )
            })
            .collect();
        let mut level = result(
            "mem.latency/level/L1",
            1.2,
            &[("size_estimate_bytes", 3000u64.into())],
        );
        level.derived_from = vec![
            "mem.latency/pagegroups/1KiB".into(),
            "mem.latency/pagegroups/2KiB".into(),
        ];
        latency.push(level);
        let bandwidth = sizes
            .iter()
            .map(|&s| {
                let params = [
                    ("working_set_bytes", s.into()),
                    ("access", "read".into()),
                    ("pattern", "all".into()),
                    ("threads", 1u64.into()),
                ];
                result(
                    &format!("mem.bandwidth/read/all/{}", label(s)),
                    0.05,
                    &params,
                )
                .with_bytes_per_operation(8)
            })
            .collect();
        let memcpy = sizes
            .iter()
            .map(|&s| {
                let params = [
                    ("copy_bytes", s.into()),
                    ("derivative_ns_per_byte", 0.01.into()),
                ];
                result(
                    &format!("mem.memcpy/{}", label(s)),
                    s as f64 / 20.0,
                    &params,
                )
                .with_bytes_per_operation(s)
            })
            .collect();
        record(vec![
            probe("mem.latency", latency),
            probe("mem.bandwidth", bandwidth),
            probe("mem.memcpy", memcpy),
        ])
    }

    /// The latency curve marks where the kernel says the caches end beside the ends the
    /// curve found; the other figures do not.
    #[test]
    fn the_latency_curve_marks_the_kernels_cache_sizes() {
        let mut run = memory_record();
        run.environment.caches = vec![latlab_engine::environment::CacheInfo {
            level: 2,
            kind: "Unified".into(),
            size_bytes: 4096,
            line_bytes: Some(64),
            shared_by_cpus: 1,
        }];
        let plots = render_plots(&run, &latlab_probes::presentations(), Formats::Svg).unwrap();
        assert!(
            plots[0].svg.contains("kernel: L2 4KiB"),
            "{}",
            plots[0].stem
        );
        assert!(!plots[1].svg.contains("kernel:"), "{}", plots[1].stem);
    }

    #[test]
    fn each_sweep_gets_a_figure_in_both_formats() {
        let plots = render_plots(
            &memory_record(),
            &latlab_probes::presentations(),
            Formats::SvgAndPng,
        )
        .unwrap();
        let stems: Vec<&str> = plots.iter().map(|p| p.stem).collect();
        assert_eq!(stems, ["mem-latency", "mem-bandwidth", "mem-memcpy"]);
        let latency = &plots[0];
        assert!(latency.svg.starts_with("<svg") && latency.svg.trim_end().ends_with("</svg>"));
        assert!(latency.svg.contains("pagegroups") && latency.svg.contains("L1: 1.20 ns"));
        assert!(
            latency.svg.contains("L1 ends ≈ 2.93KiB"),
            "the level is marked"
        );
        assert!(plots[2].svg.contains("derivative of the minimum"));

        for plot in &plots {
            let decoder = png::Decoder::new(std::io::Cursor::new(plot.png.as_ref().unwrap()));
            let mut reader = decoder.read_info().unwrap();
            let mut pixels = vec![0; reader.output_buffer_size()];
            let frame = reader.next_frame(&mut pixels).unwrap();
            assert_eq!(frame.width, figure::WIDTH);
            let colours: std::collections::HashSet<&[u8]> =
                pixels[..frame.buffer_size()].chunks(3).collect();
            assert!(
                colours.len() > 10,
                "{}: {} colours",
                plot.stem,
                colours.len()
            );
        }
    }

    #[test]
    fn a_run_without_sweeps_has_no_plots() {
        let run = record(vec![probe(
            "cpu.call",
            vec![result("cpu.call/empty", 1.0, &[])],
        )]);
        assert!(
            render_plots(&run, &latlab_probes::presentations(), Formats::SvgAndPng)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn plots_are_written_whole_into_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let plots = render_plots(
            &memory_record(),
            &latlab_probes::presentations(),
            Formats::SvgAndPng,
        )
        .unwrap();
        let written = write_plots(&plots, dir.path()).unwrap();
        assert_eq!(written.len(), 6);
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "mem-bandwidth.png",
                "mem-bandwidth.svg",
                "mem-latency.png",
                "mem-latency.svg",
                "mem-memcpy.png",
                "mem-memcpy.svg"
            ]
        );
    }
}
