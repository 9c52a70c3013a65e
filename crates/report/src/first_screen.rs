//! The first screen of a run: one line per probe (a family of results), its key figures and
//! the plot its results are drawn in, fitted to the terminal. Every row is in `--verbose`,
//! the files and the page; this says what a person reads first.
//!
//! A probe's key figures are, in order: the results a headline row reads, the levels a plot
//! marks (the cache levels of the latency curve), then its results that are not in-between
//! points of a sweep. A result a plot draws as a rate is shown as a rate; one with a rate
//! that no plot draws (a user's benchmark that declared bytes or items) as its median with
//! the rate after it; anything else as its median; an extrapolated median keeps its `≈`.

use crate::terminal::{Paint, Terminal};
use crate::text_table::{Align, TextTable};
use crate::units::{figure_in, format_in, format_median, format_rate, format_result_rate};
use latlab_engine::model::{BenchResult, ProbeOutcome, RunRecord};
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{Measure, PairMatrix, Presentations, Source, Template};

/// Without a terminal width, the most key figures a line shows.
const FIGURES_WITHOUT_WIDTH: usize = 6;
/// The fewest characters the figures column keeps however narrow the terminal.
const NARROWEST_FIGURES: usize = 24;
/// Narrower terminals leave the plot column out: the run names its plot files at the end.
const PLOT_COLUMN_FROM: usize = 100;

/// The families table: probe, key figures, plot.
pub(crate) fn families(run: &RunRecord, declared: &Presentations, terminal: &Terminal) -> String {
    let measured: Vec<&ProbeOutcome> = (run.probes.iter())
        .filter(|p| !p.results.is_empty())
        .collect();
    if measured.is_empty() {
        return String::new();
    }
    let id_width = measured
        .iter()
        .map(|p| p.id.chars().count())
        .max()
        .unwrap_or(0);
    let mut plots: Vec<String> = measured.iter().map(|p| plot_of(p, declared)).collect();
    let with_plots = terminal.width.is_none_or(|width| width >= PLOT_COLUMN_FROM)
        && plots.iter().any(|plot| !plot.is_empty());
    if !with_plots {
        plots.iter_mut().for_each(String::clear);
    }
    let plot_width = plots.iter().map(|p| p.chars().count()).max().unwrap_or(0);
    let key = KeyResults::of(run, declared);
    // The figures take what the other columns leave, two spaces between columns.
    let budget = terminal.width.map(|width| {
        width
            .saturating_sub(id_width + plot_width + 2 * 2)
            .max(NARROWEST_FIGURES)
    });
    let mut table = TextTable::new(["probe", "key figures", "plot"]);
    for (probe, plot) in measured.iter().zip(plots) {
        table.rows.push(vec![
            probe.id.clone(),
            key_figures(probe, &key, budget),
            plot,
        ]);
    }
    if !with_plots {
        table.headers.pop();
        table.rows.iter_mut().for_each(|row| drop(row.pop()));
    }
    let align = [Align::Left, Align::Left, Align::Left];
    table.aligned_painted(&align, terminal, |row, _, _| {
        (row == 0).then_some(Paint::Heading)
    })
}

/// One probe's line of the summary: its id, its key figures within `budget` characters
/// (all when `None`), and the stem of the plot its results feed (empty when none does).
#[cfg(feature = "html")]
pub(crate) struct FamilyLine {
    pub id: String,
    pub figures: String,
    pub plot: String,
}

/// The characters of key figures a line of the page's summary holds.
#[cfg(feature = "html")]
const PAGE_FIGURES: usize = 160;

/// A line per probe that measured anything, for the page's summary.
#[cfg(feature = "html")]
pub(crate) fn family_lines(run: &RunRecord, declared: &Presentations) -> Vec<FamilyLine> {
    let key = KeyResults::of(run, declared);
    (run.probes.iter())
        .filter(|p| !p.results.is_empty())
        .map(|probe| FamilyLine {
            id: probe.id.clone(),
            figures: key_figures(probe, &key, Some(PAGE_FIGURES)),
            plot: plot_of(probe, declared),
        })
        .collect()
}

/// The stem of the first declared plot that draws any of the probe's results, as a file.
fn plot_of(probe: &ProbeOutcome, declared: &Presentations) -> String {
    let draws = |template: Template| probe.results.iter().any(|r| template.matches(&r.name));
    (declared.plots.iter())
        .find(|plot| {
            (plot.panels.iter())
                .flat_map(|panel| panel.lines)
                .any(|line| draws(line.results))
        })
        .map_or_else(String::new, |plot| plot.stem.to_string())
}

/// The probe's key figures, `name figure` each, as many as `budget` characters hold, then
/// how many more there are.
fn key_figures(probe: &ProbeOutcome, key: &KeyResults, budget: Option<usize>) -> String {
    let ranked = key.ranked(probe);
    let prefix = format!("{}/", probe.id);
    let mut figures = key.curve_ends(probe);
    figures.extend(key.matrices(probe));
    figures.extend((ranked.iter()).filter(|r| !key.on_a_curve(r)).map(|r| {
        // A level is named by itself (L1), not by its place among the results.
        let name = if key.is_level(r) {
            r.name.rsplit('/').next().unwrap_or(&r.name)
        } else {
            r.name.strip_prefix(&prefix).unwrap_or(&r.name)
        };
        format!("{name} {}", key.figure(r))
    }));
    let mut shown = String::new();
    let mut count = 0;
    for (i, figure) in figures.iter().enumerate() {
        let left = figures.len() - i - 1;
        let more = if left > 0 {
            format!(" +{left}")
        } else {
            String::new()
        };
        let candidate = if shown.is_empty() {
            figure.clone()
        } else {
            format!("{shown} · {figure}")
        };
        let fits = match budget {
            Some(budget) => candidate.chars().count() + more.chars().count() <= budget,
            None => count < FIGURES_WITHOUT_WIDTH,
        };
        if !fits && count > 0 {
            break;
        }
        shown = candidate;
        count += 1;
    }
    match figures.len() - count {
        0 => shown,
        more => format!("{shown} +{more}"),
    }
}

/// Which of a run's results are key figures, and which are drawn as rates.
struct KeyResults<'a> {
    /// The results the headline rows read (of a sweep scaled, its largest point).
    headline: Vec<&'a str>,
    declared: &'a Presentations,
}

impl<'a> KeyResults<'a> {
    fn of(run: &'a RunRecord, declared: &'a Presentations) -> KeyResults<'a> {
        KeyResults {
            headline: (declared.headline.iter())
                .filter_map(|row| source_result(run, row.source))
                .map(|r| r.name.as_str())
                .collect(),
            declared,
        }
    }

    /// Whether a declared curve tells `result` by its ends ([`KeyResults::curve_ends`]), or
    /// a directed matrix by its diagonal and the rest ([`KeyResults::matrices`]).
    fn on_a_curve(&self, result: &BenchResult) -> bool {
        (self.declared.curve_ends.iter()).any(|curve| curve.results.matches(&result.name))
            || (self.declared.matrices.iter())
                .any(|m| m.directed && m.results.matches(&result.name))
    }

    /// The probe's directed matrices (a node's CPUs reading a node's memory), each told by
    /// its diagonal and the cells off it ([`matrix_line`]).
    fn matrices(&self, probe: &ProbeOutcome) -> Vec<String> {
        (self.declared.matrices.iter())
            .filter(|m| m.directed)
            .filter_map(|matrix| {
                let cell = |r: &BenchResult| {
                    let end = |key| r.parameter(key).and_then(|v| v.as_u64());
                    let figure = figure_in(matrix.unit, r)?;
                    Some((end(matrix.row)? == end(matrix.column)?, figure))
                };
                let cells: Vec<(bool, f64)> = (probe.results.iter())
                    .filter(|r| matrix.results.matches(&r.name))
                    .filter_map(cell)
                    .collect();
                matrix_line(matrix, &cells)
            })
            .collect()
    }

    /// The probe's declared curves told by their two ends, `read: 147 ns idle → 212 ns at
    /// 38 GB/s`: the curve's last point (idle) and its first (no injection delay, the
    /// point the headline table reads; near the peak a lighter delay can move more bytes).
    fn curve_ends(&self, probe: &ProbeOutcome) -> Vec<String> {
        let load = |r: &BenchResult, key: Key| r.parameter(key).and_then(|v| v.as_f64());
        let at = |r: &BenchResult, key: Key| match load(r, key) {
            Some(bytes) if bytes > 0.0 => {
                format!("{} at {}", format_median(r), format_rate(bytes / 1e9))
            }
            _ => format!("{} idle", format_median(r)),
        };
        (self.declared.curve_ends.iter())
            .filter_map(|curve| {
                let mut points = (probe.results.iter())
                    .filter(|r| curve.results.matches(&r.name) && load(r, curve.load).is_some());
                let heaviest = points.next()?;
                let lightest = points.next_back().unwrap_or(heaviest);
                Some(if std::ptr::eq(lightest, heaviest) {
                    format!("{}: {}", curve.label, at(heaviest, curve.load))
                } else {
                    format!(
                        "{}: {} → {}",
                        curve.label,
                        at(lightest, curve.load),
                        at(heaviest, curve.load)
                    )
                })
            })
            .collect()
    }

    fn is_level(&self, result: &BenchResult) -> bool {
        (self.declared.plots.iter())
            .flat_map(|plot| plot.panels)
            .filter_map(|panel| panel.levels)
            .any(|levels| levels.matches(&result.name))
    }

    /// The probe's results, the key ones first (see the module's comment); in-between
    /// points of a sweep left out.
    fn ranked<'r>(&self, probe: &'r ProbeOutcome) -> Vec<&'r BenchResult> {
        let rank = |r: &BenchResult| {
            if self.headline.contains(&r.name.as_str()) {
                0
            } else if self.is_level(r) {
                1
            } else {
                2
            }
        };
        let mut shown: Vec<&BenchResult> = (probe.results.iter())
            .filter(|r| !r.sweep_detail || rank(r) < 2)
            .collect();
        shown.sort_by_key(|r| rank(r));
        shown
    }

    /// A result's figure: its rate where a plot draws it as one; its median with its rate
    /// after it where it has a rate and no plot draws it (a user's benchmark that declared
    /// bytes or items); else its median.
    fn figure(&self, result: &BenchResult) -> String {
        let lines = (self.declared.plots.iter())
            .flat_map(|plot| plot.panels)
            .flat_map(|panel| panel.lines);
        let mut plotted = false;
        let mut drawn_as_rate = false;
        for line in lines.filter(|line| line.results.matches(&result.name)) {
            plotted = true;
            drawn_as_rate |= line.y == Measure::Rate;
        }
        if result.is_extrapolated() {
            return format_median(result);
        }
        match (result.gigabytes_per_second(), format_result_rate(result)) {
            (Some(rate), _) if drawn_as_rate => format_rate(rate),
            (_, Some(rate)) if !plotted => format!("{} ({rate})", format_median(result)),
            _ => format_median(result),
        }
    }
}

/// A directed matrix's line from its cells, each `(on the diagonal, figure)`: `latency local
/// 143 ns · remote 231 ns–245 ns`; a single cell on the diagonal says there is nothing to
/// cross; `None` without a cell.
fn matrix_line(matrix: &PairMatrix, cells: &[(bool, f64)]) -> Option<String> {
    let range = |diagonal: bool| {
        let figures = cells.iter().filter(|c| c.0 == diagonal).map(|c| c.1);
        let (count, low, high) = figures.fold((0, f64::INFINITY, f64::NEG_INFINITY), |acc, f| {
            (acc.0 + 1, acc.1.min(f), acc.2.max(f))
        });
        let (low, high) = (format_in(matrix.unit, low), format_in(matrix.unit, high));
        let text = if low == high {
            low
        } else {
            format!("{low}–{high}")
        };
        (count > 0).then_some((count, text))
    };
    let label = matrix.label;
    Some(match (range(true), range(false)) {
        (None, None) => return None,
        (Some((1, local)), None) => {
            format!("{label} {local} (one {}: nothing to cross)", matrix.axis)
        }
        (Some((_, local)), None) => format!("{label} local {local}"),
        (None, Some((_, remote))) => format!("{label} remote {remote}"),
        (Some((_, local)), Some((_, remote))) => {
            format!("{label} local {local} · remote {remote}")
        }
    })
}

/// The result a headline row reads in `run`: the one its template names, or of a sweep
/// the point with the largest parameter.
pub(crate) fn source_result(run: &RunRecord, source: Source) -> Option<&BenchResult> {
    match source {
        Source::Result(name) => run.results().find(|r| name.matches(&r.name)),
        Source::LargestScaled {
            results,
            largest_by,
            ..
        } => largest(run, results, largest_by),
    }
}

/// Of the results `template` covers, the one with the largest parameter `key`.
fn largest(run: &RunRecord, template: Template, key: Key) -> Option<&BenchResult> {
    run.results()
        .filter(|r| template.matches(&r.name))
        .max_by_key(|r| r.parameter(key).and_then(|v| v.as_u64()).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{probe, record, result};
    use latlab_engine::parameters::Key;

    fn line(probe_outcome: ProbeOutcome) -> String {
        let run = record(vec![probe_outcome]);
        let declared = latlab_probes::presentations();
        key_figures(&run.probes[0], &KeyResults::of(&run, &declared), None)
    }

    /// A loaded curve is told by its first point (no delay, the headline's) and its last
    /// (idle), whichever point moved the most bytes; the peak follows.
    #[test]
    fn a_curve_is_told_by_its_heaviest_point_and_idle() {
        let point = |n: u32, ns: f64, gigabytes: f64| {
            result(
                &format!("mem.loaded/read/{n}"),
                ns,
                &[(Key::new("load_bytes_per_second"), (gigabytes * 1e9).into())],
            )
        };
        let peak = result("mem.loaded/peak/read", 1.28, &[]).with_bytes_per_operation(64);
        let shown = line(probe(
            "mem.loaded",
            vec![
                point(0, 192.0, 24.5),
                point(1, 174.0, 26.8),
                point(2, 150.0, 0.0),
                peak,
            ],
        ));
        assert!(
            shown.starts_with("read: 150 ns idle → 192 ns at 24.5 GB/s · peak/read"),
            "{shown}"
        );
        assert!(!shown.contains("read/1"), "{shown}");
    }

    /// A node matrix is told by its diagonal and the cells off it; one cell says there is
    /// nothing to cross.
    #[test]
    fn a_node_matrix_is_told_local_and_remote() {
        let cell = |i: u64, j: u64, ns: f64| {
            result(
                &format!("mem.numa/latency/{i}-{j}"),
                ns,
                &[
                    (Key::new("cpu_node"), i.into()),
                    (Key::new("memory_node"), j.into()),
                ],
            )
        };
        let two = line(probe(
            "mem.numa",
            vec![
                cell(0, 0, 110.0),
                cell(0, 1, 190.0),
                cell(1, 0, 200.0),
                cell(1, 1, 112.0),
            ],
        ));
        assert_eq!(two, "latency local 110 ns–112 ns · remote 190 ns–200 ns");
        let one = line(probe("mem.numa", vec![cell(0, 0, 142.0)]));
        assert_eq!(one, "latency 142 ns (one node: nothing to cross)");
    }
}
