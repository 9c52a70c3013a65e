//! The HTML report: one self-contained page per run.
//!
//! Everything is inline — CSS in a `<style>` element, every figure as inline SVG — and
//! nothing is fetched: no script, no font, no image from anywhere, so the file opens the same
//! offline, from an e-mail attachment or an archive. Sections: the run and its machine, the
//! headline table, the plots (the memory and file figures drawn by `plots/`, the
//! core-to-core matrix drawn here as plain SVG), the latency distributions (`distribution`),
//! the scheduling table, every result with its method and spread, and the warnings grouped as
//! in the terminal, each ⚠ linking to its group. A table of contents comes first; tables
//! scroll in their own box and figures scale, so that the page reads on a phone.

use crate::headline::{HeadlineRow, Measured, REFERENCE_L1_NS, headline_rows, measured_l1_ns};
use crate::html_benchmarks;
use crate::markup::{STYLE, escape};
use crate::plots::distribution;
use crate::plots::{Formats, RenderedPlot, pair_matrix, render_plots};
use crate::rows::{format_samples, headline};
use crate::units::{
    format_clock, format_interval, format_median, format_ns, format_percent, format_percentiles,
    format_rate, format_ratio,
};
use crate::warning_groups::{Grouped, grouped};
use crate::{ExportError, Exporter};
use latlab_engine::environment::describe_core_classes;
use latlab_engine::model::{BenchResult, ProbeStatus, RunRecord};
use latlab_engine::names::key;
use latlab_engine::presentation::{Grid, Presentations};
use std::fmt::Write as _;

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
    page(run, declared, drawn, false)
}

/// The page of a run of users' benchmarks: as [`html_page`], with a distribution plot per
/// benchmark (a machine's run has hundreds of results and leaves them out).
pub fn benchmarks_html_page(run: &RunRecord, drawn: &[RenderedPlot]) -> String {
    page(run, &Presentations::default(), drawn, true)
}

fn page(
    run: &RunRecord,
    declared: &Presentations,
    drawn: &[RenderedPlot],
    with_distributions: bool,
) -> String {
    let mut page = String::new();
    let title = format!(
        "latlab · {} · {}",
        run.environment.host_name, run.started_at
    );
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n\
             <p class=\"note\">{}</p>\n",
        escape(&title),
        escape(&title),
        escape(&headline(run))
    );
    if !run.complete {
        page.push_str(
            "<p class=\"fail\">This run was interrupted: the results below are those \
                 measured before it stopped.</p>\n",
        );
    }
    environment(&mut page, run);
    headline_section(&mut page, &headline_rows(run, declared));
    html_benchmarks::comparisons(&mut page, run);
    html_benchmarks::allocations(&mut page, run);
    if with_distributions {
        html_benchmarks::distributions(&mut page, run);
    }
    html_benchmarks::profiles(&mut page, run);
    plots(&mut page, run, declared, drawn);
    latency_distributions(&mut page, run, declared);
    for grid in &declared.grids {
        grid_section(&mut page, run, grid);
    }
    let grouped = grouped(run);
    results(&mut page, run, &grouped);
    warnings(&mut page, &grouped);
    page.push_str("</body>\n</html>\n");
    with_contents(page)
}

/// The page with a table of contents after its first paragraph: one link per section, each
/// `<h2 id=…>` written above.
fn with_contents(page: String) -> String {
    let mut links = String::new();
    let mut rest = page.as_str();
    while let Some(at) = rest.find("<h2 id=\"") {
        let tag = &rest[at + 8..];
        let Some((id, after)) = tag.split_once("\">") else {
            break;
        };
        let Some((title, _)) = after.split_once("</h2>") else {
            break;
        };
        let _ = writeln!(links, "<li><a href=\"#{id}\">{title}</a></li>");
        rest = after;
    }
    let Some(first_section) = page.find("<h2 id=") else {
        return page;
    };
    let nav = format!("<nav id=\"contents\" aria-label=\"contents\"><ul>\n{links}</ul></nav>\n");
    let (before, after) = page.split_at(first_section);
    format!("{before}{nav}{after}")
}

fn environment(page: &mut String, run: &RunRecord) {
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
    page.push_str(
        "<h2 id=\"machine\">The machine and the run</h2>\n<div class=\"scroll\"><table>\n",
    );
    for (key, value) in rows {
        let _ = writeln!(
            page,
            "<tr><th>{key}</th><td class=\"text\">{}</td></tr>",
            escape(&value)
        );
    }
    for check in &run.stability {
        let _ = writeln!(
            page,
            "<tr><th>{}</th><td class=\"text\">{}</td></tr>",
            escape(&check.name),
            escape(&format!(
                "{} ({})",
                crate::advice::stability_check(check),
                check.method
            ))
        );
    }
    for line in crate::advice::regime_changes(run) {
        let _ = writeln!(
            page,
            "<tr><th>regime change</th><td class=\"text\">{}</td></tr>",
            escape(line.trim_start_matches("regime change: "))
        );
    }
    page.push_str("</table></div>\n");
    if !run.notes.is_empty() {
        page.push_str("<ul class=\"note\">\n");
        for note in &run.notes {
            let _ = writeln!(page, "<li>{}</li>", escape(note));
        }
        page.push_str("</ul>\n");
    }
}

fn headline_section(page: &mut String, rows: &[HeadlineRow]) {
    let l1 = measured_l1_ns(rows).unwrap_or(REFERENCE_L1_NS);
    page.push_str(
        "<h2 id=\"latency-numbers\">Latency numbers for this machine</h2>\n\
         <div class=\"scroll\"><table id=\"headline\">\n<tr><th>operation</th><th>this machine</th><th>p5 … p95</th>\
         <th>2012</th><th>ratio</th><th>if an L1 hit took 1 s</th><th>measured by</th></tr>\n",
    );
    for row in rows {
        let measured = row.measured.as_ref();
        let _ = writeln!(
            page,
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"text\">{}</td></tr>",
            if measured.is_none() {
                " class=\"reference\""
            } else {
                ""
            },
            escape(&row.operation),
            measured.map_or_else(|| "—".into(), |m| format_ns(m.median_ns)),
            measured.map_or_else(String::new, Measured::percentiles),
            row.reference_ns.map_or_else(|| "—".into(), format_ns),
            row.ratio().map_or_else(String::new, format_ratio),
            row.human_scale(l1).unwrap_or_default(),
            escape(&row.how())
        );
    }
    page.push_str(
        "</table></div>\n<p class=\"note\">2012: the numbers popularised by Jeff Dean and Peter \
         Norvig. Rows in grey are references that one machine cannot measure, never figures \
         of this one.</p>\n",
    );
}

fn plots(page: &mut String, run: &RunRecord, declared: &Presentations, drawn: &[RenderedPlot]) {
    page.push_str("<h2 id=\"plots\">Plots</h2>\n");
    let mut any = false;
    for plot in drawn {
        any = true;
        let svg = plot
            .svg
            .find("<svg")
            .map_or(plot.svg.as_str(), |start| &plot.svg[start..]);
        let _ = writeln!(
            page,
            "<figure id=\"{}\">{svg}<figcaption>{}</figcaption></figure>",
            plot.stem,
            escape(&plot.caption)
        );
    }
    for matrix in &declared.matrices {
        if let Some(drawn) = pair_matrix(run, matrix) {
            any = true;
            let _ = writeln!(
                page,
                "<figure id=\"{}\">{}<figcaption>{}</figcaption></figure>",
                drawn.id,
                drawn.svg,
                escape(&drawn.caption)
            );
        }
    }
    if !any {
        page.push_str("<p class=\"note\">This run measured nothing that is plotted.</p>\n");
    }
}

/// "Latency distributions": how the events of each result declared a distribution (IPC
/// round trips, wake-ups) spread, with their median, p90 and p99; their tails are the point
/// of measuring them one by one.
fn latency_distributions(page: &mut String, run: &RunRecord, declared: &Presentations) {
    let figures: Vec<(&BenchResult, String)> = run
        .results()
        .filter(|r| declared.is_distribution(&r.name))
        .filter_map(|r| Some((r, distribution::svg(&r.samples_ns, &r.name)?)))
        .collect();
    if figures.is_empty() {
        return;
    }
    page.push_str("<h2 id=\"latency-distributions\">Latency distributions</h2>\n");
    for (result, svg) in figures {
        let misses = result
            .parameter(key::MISSES)
            .map_or_else(String::new, |m| format!(", {m} deadline misses"));
        let _ = writeln!(
            page,
            "<figure id=\"{}\">{svg}<figcaption>{}: how its {} events spread ({}), median {}{misses}\
             </figcaption></figure>",
            escape(&result.name),
            escape(&result.name),
            result.samples_ns.len(),
            escape(&result.method),
            format_median(result)
        );
    }
}

fn param(result: &BenchResult, key: &str) -> String {
    result
        .parameter(key)
        .map_or("?".into(), ToString::to_string)
}

/// A declared grid: results named `PREFIX/ROW/COLUMN` as a table, columns across.
fn grid_section(page: &mut String, run: &RunRecord, grid: &Grid) {
    let cells: Vec<(&str, &str, &BenchResult)> = (run.results())
        .filter_map(|r| {
            let (row, column) = r.name.strip_prefix(grid.prefix)?.split_once('/')?;
            Some((row, column, r))
        })
        .collect();
    if cells.is_empty() {
        return;
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
    let _ = write!(
        page,
        "<h2 id=\"{}\">{}</h2>\n<div class=\"scroll\"><table id=\"grid-{}\">\n<tr><th>{}</th>",
        grid.id,
        escape(grid.title),
        grid.id,
        escape(grid.rows)
    );
    for column in &columns {
        let _ = write!(page, "<th>{}</th>", escape(column));
    }
    page.push_str("</tr>\n");
    for row in &rows {
        let _ = write!(page, "<tr><td>{}</td>", escape(row));
        for column in &columns {
            let cell = (cells.iter())
                .find(|(r, c, _)| r == row && c == column)
                .map_or_else(|| "—".to_string(), |(_, _, result)| grid_cell(grid, result));
            let _ = write!(page, "<td>{cell}</td>");
        }
        page.push_str("</tr>\n");
    }
    let _ = writeln!(
        page,
        "</table></div>\n<p class=\"note\">{}</p>",
        escape(grid.note)
    );
}

/// A grid's cell: the median, the declared ratio after it, the declared detail under it.
fn grid_cell(grid: &Grid, result: &BenchResult) -> String {
    let ratio = (grid.ratio)
        .and_then(|key| result.parameter(key)?.as_f64())
        .map_or_else(String::new, |ratio| format!(" ({ratio:.1}×)"));
    let detail = grid.detail.map_or_else(String::new, |(label, key)| {
        format!(
            "<br><span class=\"note\">{label} {}</span>",
            escape(&param(result, key))
        )
    });
    format!("{}{ratio}{detail}", format_median(result))
}

fn results(page: &mut String, run: &RunRecord, grouped: &Grouped) {
    page.push_str("<h2 id=\"results\">Every result</h2>\n");
    for probe in &run.probes {
        let _ = writeln!(
            page,
            "<h3 id=\"{}\">{}</h3>\n<p class=\"note\">{}</p>",
            escape(&probe.id),
            escape(&probe.id),
            escape(&probe.method)
        );
        match &probe.status {
            ProbeStatus::Ok => {}
            ProbeStatus::Failed { reason } => {
                let _ = writeln!(page, "<p class=\"fail\">failed: {}</p>", escape(reason));
            }
            ProbeStatus::Skipped { reason } => {
                let _ = writeln!(page, "<p class=\"warn\">skipped: {}</p>", escape(reason));
            }
            ProbeStatus::Interrupted => page.push_str("<p class=\"fail\">interrupted</p>\n"),
        }
        if probe.results.is_empty() {
            continue;
        }
        page.push_str(
            "<div class=\"scroll\"><table>\n<tr><th>result</th><th>median</th><th>rate</th>\
             <th>95% CI of median</th><th>p5 … p95</th><th>cv</th><th>samples</th>\
             <th>method</th></tr>\n",
        );
        for result in &probe.results {
            let s = &result.summary;
            let samples = format_samples(result);
            let _ = writeln!(
                page,
                "<tr id=\"result-{}\"><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{samples}</td><td class=\"text note\">{}</td></tr>",
                escape(&result.name),
                escape(&result.name),
                warning_mark(result, grouped),
                format_median(result),
                result
                    .gigabytes_per_second()
                    .map_or_else(String::new, format_rate),
                format_interval(result),
                format_percentiles(s.n, s.p5, s.p95),
                s.cv.map_or_else(|| "–".into(), format_percent),
                escape(&result.method)
            );
        }
        page.push_str("</table></div>\n");
    }
}

/// The mark beside a result with a verdict or warnings: its messages as the title (shown on
/// hover or a long press) and a link to its group under "Warnings".
fn warning_mark(result: &BenchResult, grouped: &Grouped) -> String {
    let suspect = result.verdict.is_suspect();
    if !suspect && result.warnings.is_empty() {
        return String::new();
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
    format!(
        " <a class=\"{class}\" href=\"#{group}\" title=\"{}\">{text}</a>",
        escape(&messages.join("\n"))
    )
}

fn group_id(index: usize) -> String {
    format!("warning-group-{}", index + 1)
}

/// "Warnings" as the terminal groups them: one line per probe and kind, with the results it
/// stands for behind a disclosure, then what to do about each kind, once.
fn warnings(page: &mut String, grouped: &Grouped) {
    if grouped.groups.is_empty() {
        return;
    }
    let _ = writeln!(
        page,
        "<h2 id=\"warnings\">Warnings</h2>\n<p class=\"note\">{} warnings in {} lines; each \
         ⚠ beside a result links to its line.</p>\n<ul>",
        grouped.warnings,
        grouped.groups.len()
    );
    for (index, group) in grouped.groups.iter().enumerate() {
        let _ = write!(
            page,
            "<li id=\"{}\"><span class=\"warn\">⚠</span> {}",
            group_id(index),
            escape(&group.line)
        );
        if group.results.len() > 1 {
            let _ = write!(
                page,
                "<details><summary>the {} results</summary><ul>",
                group.results.len()
            );
            for name in &group.results {
                let _ = write!(
                    page,
                    "<li><a href=\"#result-{}\"><code>{}</code></a></li>",
                    escape(name),
                    escape(name)
                );
            }
            page.push_str("</ul></details>");
        }
        page.push_str("</li>\n");
    }
    page.push_str("</ul>\n");
    if !grouped.advice.is_empty() {
        page.push_str("<h3 id=\"what-to-do\">What to do</h3>\n<ul>\n");
        for advice in &grouped.advice {
            let _ = writeln!(page, "<li>{}</li>", escape(advice));
        }
        page.push_str("</ul>\n");
    }
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
                    "histogram_us",
                    latlab_engine::parameters::Histogram {
                        upper_us: vec![32, 64],
                        counts: vec![3, 40],
                    }
                    .into(),
                ),
                ("p50_us", 40.0.into()),
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
                    &[("cpu_a", 0u64.into()), ("cpu_b", 1u64.into())],
                )],
            ),
        ]);
        let page = HtmlExporter {
            declared: latlab_probes::presentations(),
        }
        .render(&run)
        .unwrap();
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("<table id=\"headline\">"));
        assert!(page.contains("id=\"ipc.latency/pair0/other\"><svg"));
        assert!(page.contains("id=\"core-to-core-cas\"><svg"));
        assert!(page.contains("a &lt;method&gt; &amp; more"));
        assert!(!page.contains("<script"));
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
            "<li id=\"warning-group-1\"><span class=\"warn\">⚠</span> \
                               mem.bandwidth: 2 of 3 results unstable (cv 12–20%)"
        ));
        assert!(page.contains("<a href=\"#result-mem.bandwidth/read/all/8KiB\">"));
        assert!(page.contains("<tr id=\"result-mem.bandwidth/read/all/8KiB\">"));
        let what_to_do = &page[page.find("id=\"what-to-do\"").unwrap()..];
        assert_eq!(
            what_to_do.matches("close other programs").count(),
            1,
            "advice once"
        );
    }
}
