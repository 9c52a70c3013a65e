//! Plots of a run, as SVG and PNG files: one figure per sweep that the run measured.
//!
//! Figures are the probes' declared plots filled from the record (`declared.rs`), written by
//! `figure.rs` as SVG through the one builder (`svg.rs`) every figure goes through; when
//! files are wanted, that SVG is rasterised at twice its
//! size (resvg, with the bundled font) and encoded as PNG, so both files show the same
//! figure. A run renders its plots once and hands them both to the HTML page and to
//! the files; each file is written atomically, like every other output.

mod declared;
pub(crate) mod distribution;
mod figure;
mod matrix;
pub(crate) mod ratios;
pub(crate) mod strip;
mod svg;
pub(crate) mod timeline;

use crate::ExportError;
use figure::{FONT_FILE, Figure};
use latlab_engine::model::RunRecord;
use latlab_engine::presentation::Presentations;
use resvg::{tiny_skia, usvg};
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
        .map(|(stem, figure)| rendered(stem, &figure, formats))
        .collect()
}

/// `figure` drawn in the formats asked for.
fn rendered(
    stem: &'static str,
    figure: &Figure,
    formats: Formats,
) -> Result<RenderedPlot, ExportError> {
    let svg = figure.svg();
    Ok(RenderedPlot {
        stem,
        png: match formats {
            Formats::Svg => None,
            Formats::SvgAndPng => Some(png(&svg)?),
        },
        svg,
        caption: figure.caption.clone(),
    })
}

/// Every declared figure that `baseline` or `later` has data for, the two runs overlaid
/// (the baseline pale), drawn as SVG for the comparison's page; `labels` name the runs.
pub(crate) fn overlaid_plots(
    baseline: &RunRecord,
    later: &RunRecord,
    labels: (&str, &str),
    declared: &Presentations,
) -> Result<Vec<RenderedPlot>, ExportError> {
    (declared.plots.iter())
        .filter_map(|plot| {
            let figure = declared::overlaid(baseline, later, labels, plot)?;
            Some((plot.stem, figure))
        })
        .map(|(stem, figure)| rendered(stem, &figure, Formats::Svg))
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
            latlab_doors::output::write_own(&path, bytes, crate::Durability::Synced).map_err(
                |source| ExportError::Write {
                    path: path.display().to_string(),
                    source,
                },
            )?;
            written.push(path);
        }
    }
    Ok(written)
}

fn drawing_error(format: &'static str, detail: impl std::fmt::Display) -> ExportError {
    ExportError::Encode {
        format,
        detail: detail.to_string(),
    }
}

/// How many pixels of the PNG stand for one of the SVG: 2, for a sharp figure on a
/// high-density screen or in print.
const PNG_SCALE: f32 = 2.0;

/// `svg` rasterised at [`PNG_SCALE`] on white and encoded as PNG. Text is set in the bundled
/// font, whatever fonts the machine has.
fn png(svg: &str) -> Result<Vec<u8>, ExportError> {
    let mut fonts = usvg::fontdb::Database::new();
    fonts.load_font_data(FONT_FILE.to_vec());
    let family = (fonts.faces().next())
        .and_then(|face| face.families.first())
        .map(|(name, _)| name.clone())
        .ok_or_else(|| drawing_error("PNG", "the bundled font has no family name"))?;
    fonts.set_sans_serif_family(family.clone());
    let options = usvg::Options {
        font_family: family,
        fontdb: std::sync::Arc::new(fonts),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| drawing_error("PNG", e))?;
    let size = (tree.size().to_int_size().scale_by(PNG_SCALE))
        .ok_or_else(|| drawing_error("PNG", "an empty figure"))?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| drawing_error("PNG", "an empty figure"))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    let scale = tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE);
    resvg::render(&tree, scale, &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| drawing_error("PNG", e))
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
                    (latlab_engine::names::key::WORKING_SET_BYTES, s.into()),
                    (latlab_engine::names::key::LAYOUT, "pagegroups".into()),
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
            &[(
                latlab_engine::names::key::SIZE_ESTIMATE_BYTES,
                3000u64.into(),
            )],
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
                    (latlab_engine::names::key::WORKING_SET_BYTES, s.into()),
                    (latlab_engine::names::key::ACCESS, "read".into()),
                    (latlab_engine::names::key::PATTERN, "all".into()),
                    (latlab_engine::names::key::THREADS, 1u64.into()),
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
                    (latlab_engine::names::key::COPY_BYTES, s.into()),
                    (
                        latlab_engine::names::key::DERIVATIVE_NS_PER_BYTE,
                        0.01.into(),
                    ),
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
            let png = tiny_skia::Pixmap::decode_png(plot.png.as_ref().unwrap()).unwrap();
            assert_eq!(png.width(), 2 * figure::WIDTH, "drawn at twice the size");
            let colours: std::collections::HashSet<[u8; 4]> = (png.pixels().iter())
                .map(|p| [p.red(), p.green(), p.blue(), p.alpha()])
                .collect();
            assert!(
                colours.len() > 10,
                "{}: {} colours",
                plot.stem,
                colours.len()
            );
        }
    }

    /// The ink of "1.69" as drawn in the PNG: the gaps on either side of the point are
    /// alike (a renderer that drops each glyph's side bearing draws "1. 69").
    #[test]
    fn the_png_sets_a_decimal_point_between_its_digits() {
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"80\" height=\"30\">\
                   <text x=\"4\" y=\"22\" font-family=\"sans-serif\" font-size=\"17\">1.69</text>\
                   </svg>";
        let png = tiny_skia::Pixmap::decode_png(&png(svg).unwrap()).unwrap();
        let inked = |x: u32| (0..png.height()).any(|y| png.pixel(x, y).unwrap().red() < 128);
        // Runs of inked columns: one per glyph.
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for x in 0..png.width() {
            match (inked(x), runs.last_mut()) {
                (true, Some(run)) if run.1 + 1 == x => run.1 = x,
                (true, _) => runs.push((x, x)),
                (false, _) => {}
            }
        }
        assert_eq!(runs.len(), 4, "four glyphs: {runs:?}");
        let before = runs[1].0 - runs[0].1;
        let after = runs[2].0 - runs[1].1;
        assert!(
            before * 2 > after && after * 2 > before,
            "the point sits {before} px after the 1 and {after} px before the 6"
        );
    }

    /// A sweep whose points each have a confidence interval is shaded by them and says so
    /// in its caption; the same sweep with too few samples for one is not; a line measured
    /// at one size only is drawn as a marker.
    #[test]
    fn medians_are_shaded_by_their_intervals_and_lone_points_are_marked() {
        let sweep = |samples: usize, sizes: &[u64]| {
            let results = (sizes.iter())
                .map(|&s| {
                    let spread: Vec<f64> = (0..samples).map(|i| s as f64 + i as f64).collect();
                    BenchResult::derived(
                        &format!("mem.latency/pagegroups/{s}B"),
                        "test",
                        spread,
                        Vec::new(),
                        Vec::new(),
                    )
                    .unwrap()
                    .with_parameter(latlab_engine::names::key::WORKING_SET_BYTES, s)
                    .with_parameter(latlab_engine::names::key::LAYOUT, "pagegroups")
                })
                .collect();
            let run = record(vec![probe("mem.latency", results)]);
            let presentations = latlab_probes::presentations();
            let plots = render_plots(&run, &presentations, Formats::Svg).unwrap();
            (plots[0].svg.clone(), plots[0].caption.clone())
        };
        let (svg, caption) = sweep(30, &[1024, 2048, 4096]);
        assert!(svg.contains("<polygon"), "no band");
        assert!(caption.contains("95% confidence interval"), "{caption}");
        let (svg, caption) = sweep(5, &[1024, 2048, 4096]);
        assert!(!svg.contains("<polygon") && !caption.contains("confidence"));
        let (svg, _) = sweep(30, &[1024]);
        assert!(svg.contains("<circle"), "a lone point is its marker");
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
