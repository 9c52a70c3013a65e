//! The HTML report: one self-contained page per run.
//!
//! Everything is inline — CSS in a `<style>` element, every figure as inline SVG, one small
//! script that sorts tables — and nothing is fetched: no font, no image, no script from
//! anywhere, so the file opens the same offline, from an e-mail attachment or an archive.
//! Sections: the headline table, a summary line per probe, the warnings grouped as in the
//! terminal (each ⚠ beside a result links to its group), the run and its machine, the plots
//! and pair matrices the probes declare (drawn by `plots/`), the latency distributions, the
//! declared grids, and every result with its spread, a sweep's folded behind its count. A
//! table of contents lists every probe; tables sort by a click on a heading and keep their
//! headings in view; at a phone's width tables scroll in their own box (the headline reflows
//! into a card per row instead) and figures scale. The page is written with maud templates
//! (`markup.rs`), which escape all text.

use crate::first_screen::family_lines;
use crate::headline::{HeadlineRow, Measured, REFERENCE_L1_NS, headline_rows, measured_l1_ns};
use crate::html_benchmarks;
use crate::markup::{Contents, FOLD_ROWS_ABOVE, Section, capitalised, inline_svg, page, sort_key};
use crate::plots::distribution;
use crate::plots::{Formats, RenderedPlot, pair_matrix, render_plots};
use crate::rows::{format_samples, headline, incomplete_probes};
use crate::units::{
    INTERVAL_FOOTNOTE, format_clock, format_interval, format_median, format_ns, format_percent,
    format_percentiles, format_ratio, format_result_rate, has_interval, has_percentiles,
    percentiles_footnote,
};
use crate::warning_groups::{Grouped, grouped};
use crate::{ExportError, Exporter};
use latlab_engine::environment::describe_core_classes;
use latlab_engine::model::{BenchResult, ProbeOutcome, ProbeStatus, RunRecord};
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{Grid, Presentations};
use maud::{Markup, PreEscaped, html};

/// The page of a results file read back, rendering what the probes declare.
#[derive(Debug, Default)]
pub struct HtmlExporter {
    pub declared: Presentations,
}

impl Exporter for HtmlExporter {
    /// The page of a results file read back: its plots drawn as SVG only.
    fn render(&self, run: &RunRecord) -> Result<String, ExportError> {
        let drawn = render_plots(run, &self.declared, Formats::Svg)?;
        Ok(html_page(run, &self.declared, &drawn))
    }
}

/// The page of `run` with `plots` already drawn (a run draws them once for the page and its
/// files), and the figures `declared` draws here.
pub fn html_page(run: &RunRecord, declared: &Presentations, drawn: &[RenderedPlot]) -> String {
    run_page(run, declared, drawn, false)
}

/// The page of a run of users' benchmarks: as [`html_page`], with a distribution plot per
/// benchmark (a machine's run has hundreds of results and leaves them out).
pub fn benchmarks_html_page(run: &RunRecord, drawn: &[RenderedPlot]) -> String {
    run_page(run, &Presentations::default(), drawn, true)
}

fn run_page(
    run: &RunRecord,
    declared: &Presentations,
    drawn: &[RenderedPlot],
    with_distributions: bool,
) -> String {
    let title = format!(
        "latlab · {} · {}",
        run.environment.host_name, run.started_at
    );
    let intro = html! {
        p.note { (headline(run)) }
        @if !run.complete {
            p.fail {
                "This run was interrupted: the results below are those measured before it \
                 stopped."
            }
        }
    };
    let grouped = grouped(run);
    let mut sections = vec![headline_section(&headline_rows(run, declared))];
    sections.extend(summary(run, declared));
    sections.extend(warnings(&grouped));
    sections.push(environment(run));
    sections.extend(html_benchmarks::comparisons(run));
    sections.extend(html_benchmarks::allocations(run));
    if with_distributions {
        sections.extend(html_benchmarks::distributions(run));
    }
    sections.extend(html_benchmarks::profiles(run));
    sections.push(plots(run, declared, drawn));
    sections.extend(latency_distributions(run, declared));
    sections.extend(
        declared
            .grids
            .iter()
            .filter_map(|grid| grid_section(run, grid)),
    );
    sections.push(results(run, &grouped));
    page(&title, intro, &sections, Contents::Listed)
}

fn environment(run: &RunRecord) -> Section {
    let env = &run.environment;
    let caches: Vec<String> = env
        .caches
        .iter()
        .map(|c| format!("L{} {} {} KiB", c.level, c.kind, c.size_bytes / 1024))
        .collect();
    let rows = [
        ("host", env.host_name.clone()),
        (
            "CPU",
            format!("{}, {} logical CPUs", env.cpu.model, env.cpu.logical_cpus),
        ),
        ("core classes", describe_core_classes(&env.core_classes)),
        ("caches", caches.join(", ")),
        ("kernel", format!("{} {}", env.os, env.kernel)),
        (
            "virtualisation",
            env.virtualization
                .clone()
                .unwrap_or_else(|| "none detected".into()),
        ),
        (
            "clock",
            format!("{}: {}", format_clock(&run.clock), run.clock.method),
        ),
        (
            "suite",
            format!(
                "{}: {} samples of at least {}",
                run.settings.suite,
                run.settings.samples,
                format_ns(run.settings.target_sample_time_ns as f64)
            ),
        ),
        (
            "build",
            format!("{} (opt-level {})", env.build_profile, env.opt_level),
        ),
    ];
    let checks = run.stability.iter().map(|check| {
        let state = crate::advice::stability_check(check);
        (check.name.clone(), format!("{state} ({})", check.method))
    });
    let changes = crate::advice::regime_changes(run).into_iter().map(|line| {
        let change = line.trim_start_matches("regime change: ").to_string();
        ("regime change".to_string(), change)
    });
    let placements = crate::advice::placement_changes(run)
        .into_iter()
        .map(|line| {
            let change = line.trim_start_matches("placement change: ").to_string();
            ("placement change".to_string(), change)
        });
    let rows: Vec<(String, String)> = (rows.into_iter())
        .map(|(key, value)| (key.to_string(), value))
        .chain(checks)
        .chain(changes)
        .chain(placements)
        .collect();
    Section::new(
        "machine",
        "The machine and the run",
        html! {
            div.scroll { table {
                @for (key, value) in &rows {
                    tr { th { (key) } td.text { (value) } }
                }
            } }
            @if !run.notes.is_empty() {
                ul.note { @for note in &run.notes { li { (note) } } }
            }
        },
    )
}

fn headline_section(rows: &[HeadlineRow]) -> Section {
    let l1 = measured_l1_ns(rows).unwrap_or(REFERENCE_L1_NS);
    let body = html! {
        div.scroll { table #headline .sortable {
            thead { tr {
                th { "operation" } th { "this machine" } th { "p5 … p95" } th { "2012" }
                th { "ratio" } th { "if an L1 hit took 1 s" } th { "measured by" }
            } }
            tbody { @for row in rows {
                @let measured = row.measured.as_ref();
                @let median = measured.map(|m| m.median_ns);
                tr class=[measured.is_none().then_some("reference")] {
                    td { (row.operation) }
                    td data-label="this machine" data-v=[median.map(sort_key)] {
                        (median.map_or_else(|| "—".into(), format_ns))
                    }
                    td data-label="p5 … p95" { (measured.map_or_else(String::new, Measured::percentiles)) }
                    td data-label="2012" data-v=[row.reference_ns.map(sort_key)] {
                        (row.reference_ns.map_or_else(|| "—".into(), format_ns))
                    }
                    td data-label="ratio" data-v=[row.ratio().map(sort_key)] {
                        (row.ratio().map_or_else(String::new, format_ratio))
                    }
                    td data-label="if an L1 hit took 1 s" data-v=[median.or(row.reference_ns).map(sort_key)] {
                        (row.human_scale(l1).unwrap_or_default())
                    }
                    td.text data-label="measured by" { (row.how()) }
                }
            } }
        } }
        p.note {
            "2012: the numbers popularised by Jeff Dean and Peter Norvig. Rows in grey are \
             references that one machine cannot measure, never figures of this one."
            @if rows.iter().any(|r| r.measured.as_ref().is_some_and(|m| !has_percentiles(m.samples))) {
                " " (capitalised(&percentiles_footnote())) "."
            }
        }
    };
    Section::new("latency-numbers", "Latency numbers for this machine", body)
}

/// "Summary": a line per probe, its key figures and a link to the plot its results feed, as
/// the terminal's first screen has them.
fn summary(run: &RunRecord, declared: &Presentations) -> Option<Section> {
    let lines = family_lines(run, declared);
    if lines.is_empty() {
        return None;
    }
    let body = html! {
        div.scroll { table #summary {
            thead { tr { th { "probe" } th { "key figures" } th { "plot" } } }
            tbody { @for line in &lines {
                tr {
                    td { a href={ "#" (line.id) } { (line.id) } }
                    td.text { (line.figures) }
                    td { @if !line.plot.is_empty() { a href={ "#" (line.plot) } { (line.plot) } } }
                }
            } }
        } }
    };
    Some(Section::new("summary", "Summary", body))
}

fn plots(run: &RunRecord, declared: &Presentations, drawn: &[RenderedPlot]) -> Section {
    let matrices: Vec<_> = (declared.matrices.iter())
        .filter_map(|matrix| pair_matrix(run, matrix))
        .collect();
    let body = html! {
        @for plot in drawn {
            figure id=(plot.stem) {
                (inline_svg(&plot.svg))
                figcaption { (plot.caption) }
            }
        }
        @for matrix in &matrices {
            figure id=(matrix.id) {
                (PreEscaped(&matrix.svg))
                figcaption { (matrix.caption) }
            }
        }
        @if drawn.is_empty() && matrices.is_empty() {
            p.note { "This run measured nothing that is plotted." }
        }
    };
    Section::new("plots", "Plots", body)
}

/// "Latency distributions": how the events of each result declared a distribution (IPC
/// round trips, wake-ups) spread, with their median, p90 and p99; their tails are the point
/// of measuring them one by one.
fn latency_distributions(run: &RunRecord, declared: &Presentations) -> Option<Section> {
    let figures: Vec<(&BenchResult, String)> = run
        .results()
        .filter(|r| declared.is_distribution(&r.name))
        .filter_map(|r| Some((r, distribution::svg(&r.samples_ns, &r.name)?)))
        .collect();
    if figures.is_empty() {
        return None;
    }
    let body = html! { div.figures {
        @for (result, svg) in &figures {
            @let misses = result
                .parameter(key::MISSES)
                .map_or_else(String::new, |m| format!(", {m} deadline misses"));
            figure id=(result.name) {
                (PreEscaped(svg))
                figcaption {
                    (result.name) ": how its " (result.samples_ns.len()) " events spread ("
                    (result.method) "), median " (format_median(result)) (misses)
                }
            }
        }
    } };
    Some(Section::new(
        "latency-distributions",
        "Latency distributions",
        body,
    ))
}

fn param(result: &BenchResult, key: Key) -> String {
    result
        .parameter(key)
        .map_or("?".into(), ToString::to_string)
}

/// A declared grid: results named `PREFIX/ROW/COLUMN` as a table, columns across.
fn grid_section(run: &RunRecord, grid: &Grid) -> Option<Section> {
    let cells: Vec<(&str, &str, &BenchResult)> = (run.results())
        .filter_map(|r| {
            let (row, column) = r.name.strip_prefix(grid.prefix)?.split_once('/')?;
            Some((row, column, r))
        })
        .collect();
    if cells.is_empty() {
        return None;
    }
    let (mut rows, mut columns): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    for &(row, column, _) in &cells {
        if !rows.contains(&row) {
            rows.push(row);
        }
        if !columns.contains(&column) {
            columns.push(column);
        }
    }
    let cell = |row: &str, column: &str| {
        (cells.iter()).find_map(|&(r, c, result)| (r == row && c == column).then_some(result))
    };
    let body = html! {
        div.scroll { table id={ "grid-" (grid.id) } {
            tr { th { (grid.rows) } @for column in &columns { th { (column) } } }
            @for row in &rows {
                tr {
                    td { (row) }
                    @for column in &columns {
                        td { @match cell(row, column) {
                            Some(result) => (grid_cell(grid, result)),
                            None => "—",
                        } }
                    }
                }
            }
        } }
        p.note { (grid.note) }
    };
    Some(Section::new(grid.id, grid.title, body))
}

/// A grid's cell: the median, the declared ratio after it, the declared detail under it.
fn grid_cell(grid: &Grid, result: &BenchResult) -> Markup {
    let ratio = (grid.ratio)
        .and_then(|key| result.parameter(key)?.as_f64())
        .map_or_else(String::new, |ratio| format!(" ({ratio:.1}×)"));
    html! {
        (format_median(result)) (ratio)
        @if let Some((label, key)) = grid.detail {
            br; span.note { (label) " " (param(result, key)) }
        }
    }
}

/// "Every result": a table per probe that measured something, its method once beside its
/// name, the results of a sweep folded behind their count; then one line for the probes that
/// measured nothing (a family skipped for one reason is one line).
fn results(run: &RunRecord, grouped: &Grouped) -> Section {
    let measured: Vec<_> = (run.probes.iter())
        .filter(|p| !p.results.is_empty())
        .collect();
    let unmeasured: Vec<ProbeOutcome> = (run.probes.iter())
        .filter(|p| p.results.is_empty())
        .cloned()
        .collect();
    let unmeasured = incomplete_probes(&unmeasured);
    let body = html! {
        p.note {
            (capitalised(INTERVAL_FOOTNOTE)) "; " (percentiles_footnote()) ". Each \
             result's own method is its name's tooltip; a column's heading sorts by it."
        }
        @for probe in &measured {
            h3 id=(probe.id) { (probe.id) " " span.method { (probe.method) } }
            @match &probe.status {
                ProbeStatus::Ok => {}
                ProbeStatus::Failed { reason } => p.fail { "failed: " (reason) },
                ProbeStatus::Skipped { reason } => p.warn { "skipped: " (reason) },
                ProbeStatus::Interrupted => p.fail { "interrupted" },
            }
            @if probe.results.len() > FOLD_ROWS_ABOVE {
                details {
                    summary { (probe.results.len()) " results" }
                    (results_table(&probe.results, grouped))
                }
            } @else {
                (results_table(&probe.results, grouped))
            }
        }
        @if !unmeasured.is_empty() {
            h3 #not-measured { "Not measured" }
            ul { @for (id, what) in &unmeasured {
                li id=(id) { code { (id) } ": " span.warn { (what) } }
            } }
        }
    };
    let parts = (measured.iter().map(|p| p.id.clone()))
        .chain(unmeasured.into_iter().map(|(id, _)| id))
        .map(|id| (id.clone(), id))
        .collect();
    Section::new("results", "Every result", body).with_parts(parts)
}

fn results_table(results: &[BenchResult], grouped: &Grouped) -> Markup {
    html! {
        div.scroll { table.results.sortable {
            thead { tr {
                th { "result" } th { "median" } th { "rate" } th { "95% CI of median" }
                th { "p5 … p95" } th { "cv" } th { "samples" }
            } }
            tbody { @for result in results { (result_row(result, grouped)) } }
        } }
    }
}

/// A result's row; each figure's cell carries its value (`data-v`) for sorting.
fn result_row(result: &BenchResult, grouped: &Grouped) -> Markup {
    let s = &result.summary;
    let rate = result
        .gigabytes_per_second()
        .or_else(|| result.items_per_second());
    let interval = has_interval(result).then_some(s.median_ci95[0]);
    let percentiles = has_percentiles(s.n).then_some(s.p5);
    html! {
        tr id={ "result-" (result.name) } {
            td title=(result.method) { (result.name) (warning_mark(result, grouped)) }
            td data-v=(sort_key(s.median)) { (format_median(result)) }
            td data-v=[rate.map(sort_key)] { (format_result_rate(result).unwrap_or_default()) }
            td data-v=[interval.map(sort_key)] { (format_interval(result)) }
            td data-v=[percentiles.map(sort_key)] { (format_percentiles(s.n, s.p5, s.p95)) }
            td data-v=[s.cv.map(sort_key)] { (s.cv.map_or_else(|| "–".into(), format_percent)) }
            td data-v=(s.n as u64 * result.iterations.max(1)) { (format_samples(result)) }
        }
    }
}

/// The mark beside a result with a verdict or warnings: its messages as the title (shown on
/// hover or a long press) and a link to its group under "Warnings".
fn warning_mark(result: &BenchResult, grouped: &Grouped) -> Markup {
    let suspect = result.verdict.is_suspect();
    if !suspect && result.warnings.is_empty() {
        return html! {};
    }
    let mut messages: Vec<String> = result.warnings.iter().map(crate::advice::warning).collect();
    if suspect {
        messages.insert(0, crate::advice::verdict(result.verdict).to_string());
    }
    let group = grouped
        .groups
        .iter()
        .position(|g| g.results.contains(&result.name))
        .map_or_else(|| "warnings".to_string(), group_id);
    let (class, text) = if suspect {
        ("fail", "optimised away?")
    } else {
        ("warn", "⚠")
    };
    html! {
        " " a class=(class) href={ "#" (group) } title=(messages.join("\n")) { (text) }
    }
}

fn group_id(index: usize) -> String {
    format!("warning-group-{}", index + 1)
}

/// "Warnings" as the terminal groups them: one line per probe and kind, with the results it
/// stands for behind a disclosure, then what to do about each kind, once.
fn warnings(grouped: &Grouped) -> Option<Section> {
    if grouped.groups.is_empty() {
        return None;
    }
    let body = html! {
        p.note {
            (grouped.warnings) " warnings in " (grouped.groups.len())
            " lines; each ⚠ beside a result links to its line, and a line of several \
             results opens to list them."
        }
        ul.warnings {
            @for (index, group) in grouped.groups.iter().enumerate() {
                li id=(group_id(index)) {
                    @if group.results.len() > 1 {
                        details {
                            summary { span.warn { "⚠" } " " (group.line) }
                            ul { @for name in &group.results {
                                li { a href={ "#result-" (name) } { code { (name) } } }
                            } }
                        }
                    } @else {
                        span.warn { "⚠" } " " (group.line)
                    }
                }
            }
        }
        @if !grouped.advice.is_empty() {
            h3 #what-to-do { "What to do" }
            ul { @for advice in &grouped.advice { li { (advice) } } }
        }
    };
    Some(Section::new("warnings", "Warnings", body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{probe, record, result};

    #[test]
    fn the_page_is_self_contained_and_escaped() {
        let mut histogram = result(
            "ipc.latency/pair0/other",
            40_000.0,
            &[
                (
                    latlab_engine::names::key::HISTOGRAM_US,
                    latlab_engine::parameters::Histogram {
                        upper_us: vec![32, 64],
                        counts: vec![3, 40],
                    }
                    .into(),
                ),
                (latlab_engine::names::key::P50_US, 40.0.into()),
            ],
        );
        histogram.method = "a <method> & more".into();
        let run = record(vec![
            probe("ipc.latency", vec![histogram]),
            probe(
                "thread.core_to_core",
                vec![result(
                    "thread.core_to_core/one-way/cas/0-1",
                    70.0,
                    &[
                        (latlab_engine::names::key::CPU_A, 0u64.into()),
                        (latlab_engine::names::key::CPU_B, 1u64.into()),
                    ],
                )],
            ),
        ]);
        let page = HtmlExporter {
            declared: latlab_probes::presentations(),
        }
        .render(&run)
        .unwrap();
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("<table class=\"sortable\" id=\"headline\">"));
        assert!(page.contains("id=\"ipc.latency/pair0/other\"><svg"));
        assert!(page.contains("id=\"core-to-core-cas\"><svg"));
        assert!(page.contains("a &lt;method&gt; &amp; more"));
        // One inline script, which sorts tables; nothing fetched.
        assert_eq!(page.matches("<script").count(), 1);
        assert!(page.contains("<script>"), "the script is inline");
        assert!(!page.contains("src="), "src= would fetch something");
        // Links stay within the page: the contents, each ⚠ to its group.
        for (at, _) in page.match_indices("href=") {
            assert!(page[at..].starts_with("href=\"#"), "{}", &page[at..at + 40]);
        }
        assert!(page.contains("<nav id=\"contents\""));
        assert!(page.contains(
            "<li><a href=\"#latency-numbers\">Latency numbers for this machine</a></li>"
        ));
    }

    #[test]
    fn each_warning_mark_explains_itself_and_links_to_its_group() {
        let unstable = |name: &str, cv: f64| {
            let mut r = result(name, 10.0, &[]);
            r.warnings = vec![latlab_engine::model::Warning::HighVariance { cv }];
            r
        };
        let run = record(vec![probe(
            "mem.bandwidth",
            vec![
                unstable("mem.bandwidth/read/all/4KiB", 0.12),
                unstable("mem.bandwidth/read/all/8KiB", 0.2),
                result("mem.bandwidth/read/all/16KiB", 10.0, &[]),
            ],
        )]);
        let page = HtmlExporter {
            declared: latlab_probes::presentations(),
        }
        .render(&run)
        .unwrap();
        assert_eq!(
            page.matches("href=\"#warning-group-1\" title=\"").count(),
            2
        );
        assert!(page.contains(
            "<li id=\"warning-group-1\"><details><summary><span class=\"warn\">⚠</span> \
             mem.bandwidth: 2 of 3 results unstable (cv 12–20%)</summary>"
        ));
        assert!(page.contains("<a href=\"#result-mem.bandwidth/read/all/8KiB\">"));
        assert!(page.contains("<tr id=\"result-mem.bandwidth/read/all/8KiB\">"));
        // What a reader needs first comes first: the headline, the summary, the warnings.
        let at = |id: &str| page.find(&format!("<h2 id=\"{id}\"")).unwrap();
        assert!(at("latency-numbers") < at("summary"));
        assert!(at("summary") < at("warnings"));
        assert!(at("warnings") < at("machine") && at("warnings") < at("results"));
        // Each figure's cell carries the value it sorts by.
        assert!(page.contains("<td data-v=\"1.000e1\">10.0 ns</td>"));
        let what_to_do = &page[page.find("id=\"what-to-do\"").unwrap()..];
        let what_to_do = &what_to_do[..what_to_do.find("<h2").unwrap()];
        assert_eq!(
            what_to_do.matches("close other programs").count(),
            1,
            "advice once"
        );
    }
}
