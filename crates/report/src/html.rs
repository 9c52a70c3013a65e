//! The HTML report: one self-contained page per run.
//!
//! Everything is inline — CSS in a `<style>` element, every figure as inline SVG — and
//! nothing is fetched: no script, no font, no image from anywhere, so the file opens the same
//! offline, from an e-mail attachment or an archive. Sections: the run and its machine, the
//! headline table, the plots (the memory and file figures drawn by `plots/`; the IPC latency
//! histograms and the core-to-core matrix drawn here as plain SVG), the scheduling table, every
//! result with its method and spread, and every warning.

use crate::headline::{HeadlineRow, Measured, REFERENCE_L1_NS, headline_rows, measured_l1_ns};
use crate::html_benchmarks;
use crate::plots::{Formats, RenderedPlot, render_plots};
use crate::rows::{format_samples, headline};
use crate::units::{
    format_clock, format_interval, format_ns, format_percent, format_percentiles, format_rate,
    format_ratio,
};
use crate::{ExportError, Exporter};
use latlab_engine::environment::describe_core_classes;
use latlab_engine::model::{BenchResult, ProbeStatus, RunRecord};
use latlab_engine::names::{key, result as name};
use std::fmt::Write as _;

pub struct HtmlExporter;

/// Escapes text for HTML element content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1180px; color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { margin-bottom: .3em; }
table { border-collapse: collapse; margin: .5em 0 1em; }
th, td { padding: .2em .6em; text-align: right; border-bottom: 1px solid #eee; vertical-align: top; white-space: nowrap; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
td.text { text-align: left; white-space: normal; } tr.reference td { color: #888; font-style: italic; }
.note { color: #555; font-size: .92em; } .warn { color: #a45a00; } .fail { color: #b00020; }
figure { margin: 1em 0; } figcaption { color: #555; font-size: .92em; }
svg { max-width: 100%; height: auto; }
code { background: #f4f4f4; padding: 0 .2em; }
";

impl Exporter for HtmlExporter {
    /// The page of a results file read back: its plots drawn as SVG only.
    fn render(&self, run: &RunRecord) -> Result<String, ExportError> {
        Ok(html_page(run, &render_plots(run, Formats::Svg)?))
    }
}

/// The page of `run` with `plots` already drawn (a run draws them once for the page and its
/// files).
pub fn html_page(run: &RunRecord, drawn: &[RenderedPlot]) -> String {
    page(run, drawn, false)
}

/// The page of a run of users' benchmarks: as [`html_page`], with a distribution plot per
/// benchmark (a machine's run has hundreds of results and leaves them out).
pub fn benchmarks_html_page(run: &RunRecord, drawn: &[RenderedPlot]) -> String {
    page(run, drawn, true)
}

fn page(run: &RunRecord, drawn: &[RenderedPlot], with_distributions: bool) -> String {
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
    headline_section(&mut page, &headline_rows(run));
    html_benchmarks::comparisons(&mut page, run);
    html_benchmarks::allocations(&mut page, run);
    if with_distributions {
        html_benchmarks::distributions(&mut page, run);
    }
    html_benchmarks::profiles(&mut page, run);
    plots(&mut page, run, drawn);
    scheduling(&mut page, run);
    results(&mut page, run);
    warnings(&mut page, run);
    page.push_str("</body>\n</html>\n");
    page
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
    page.push_str("<h2>The machine and the run</h2>\n<table>\n");
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
    page.push_str("</table>\n");
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
         <table id=\"headline\">\n<tr><th>operation</th><th>this machine</th><th>p5 … p95</th>\
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
        "</table>\n<p class=\"note\">2012: the numbers popularised by Jeff Dean and Peter \
         Norvig. Rows in grey are references that one machine cannot measure, never figures \
         of this one.</p>\n",
    );
}

fn plots(page: &mut String, run: &RunRecord, drawn: &[RenderedPlot]) {
    page.push_str("<h2>Plots</h2>\n");
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
            plot.stem, plot.stem
        );
    }
    any |= ipc_histograms(page, run);
    any |= core_to_core(page, run);
    if !any {
        page.push_str("<p class=\"note\">This run measured nothing that is plotted.</p>\n");
    }
}

/// One bar chart per `ipc.latency` pair and arm, from its `histogram_us` parameter.
fn ipc_histograms(page: &mut String, run: &RunRecord) -> bool {
    let mut drew = false;
    for result in run
        .results()
        .filter(|r| r.name.starts_with(name::IPC_LATENCY_PAIR_PREFIX))
    {
        let Some(histogram) = result
            .parameter(key::HISTOGRAM_US)
            .and_then(|h| h.as_histogram())
        else {
            continue;
        };
        let buckets: Vec<(String, f64)> = histogram
            .buckets()
            .map(|(label, count)| (label, count as f64))
            .collect();
        let Some(most) = buckets.iter().map(|b| b.1).reduce(f64::max) else {
            continue;
        };
        let (bar, gap, height) = (46.0, 8.0, 160.0);
        let width = buckets.len() as f64 * (bar + gap) + 20.0;
        let _ = write!(
            page,
            "<figure id=\"{}\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" \
             height=\"{}\" viewBox=\"0 0 {width} {}\" role=\"img\">",
            escape(&result.name),
            height + 40.0,
            height + 40.0
        );
        for (i, (label, count)) in buckets.iter().enumerate() {
            let x = 10.0 + i as f64 * (bar + gap);
            let h = (count / most * height).max(1.0);
            let _ = write!(
                page,
                "<rect x=\"{x}\" y=\"{}\" width=\"{bar}\" height=\"{h}\" fill=\"#4e79a7\">\
                 <title>{label} µs: {count}</title></rect>\
                 <text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{label}</text>\
                 <text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{count}</text>",
                height - h + 10.0,
                x + bar / 2.0,
                height + 25.0,
                x + bar / 2.0,
                (height - h + 7.0).max(9.0)
            );
        }
        let _ = writeln!(
            page,
            "</svg><figcaption>{}: round trips per latency bucket (µs), p50 {} µs, p99 {} µs, \
             {} deadline misses</figcaption></figure>",
            escape(&result.name),
            param(result, key::P50_US),
            param(result, key::P99_US),
            param(result, key::MISSES)
        );
        drew = true;
    }
    drew
}

fn param(result: &BenchResult, key: &str) -> String {
    result
        .parameter(key)
        .map_or("?".into(), ToString::to_string)
}

/// The core-to-core one-way latencies as a matrix of CPU pairs, one per bounce kind, darker
/// for slower.
fn core_to_core(page: &mut String, run: &RunRecord) -> bool {
    let mut drew = false;
    for kind in ["cas", "rw"] {
        let prefix = format!("{}{}/{kind}/", name::CORE_TO_CORE_PREFIX, name::ONE_WAY);
        let cells: Vec<(usize, usize, f64)> = run
            .results()
            .filter(|r| r.name.starts_with(&prefix) && !r.name.ends_with(name::ALL_PAIRS))
            .filter_map(|r| {
                Some((
                    r.parameter(key::CPU_A)?.as_u64()? as usize,
                    r.parameter(key::CPU_B)?.as_u64()? as usize,
                    r.summary.median,
                ))
            })
            .collect();
        if cells.is_empty() {
            continue;
        }
        let mut cpus: Vec<usize> = cells.iter().flat_map(|c| [c.0, c.1]).collect();
        cpus.sort_unstable();
        cpus.dedup();
        let (low, high) = cells.iter().fold((f64::MAX, f64::MIN), |(lo, hi), c| {
            (lo.min(c.2), hi.max(c.2))
        });
        let size = 44.0;
        let side = 40.0 + cpus.len() as f64 * size;
        let _ = write!(
            page,
            "<figure id=\"core-to-core-{kind}\"><svg xmlns=\"http://www.w3.org/2000/svg\" \
             width=\"{side}\" height=\"{side}\" viewBox=\"0 0 {side} {side}\" role=\"img\">"
        );
        let index = |cpu: usize| cpus.iter().position(|&c| c == cpu).unwrap_or(0) as f64;
        for (i, cpu) in cpus.iter().enumerate() {
            let at = 40.0 + i as f64 * size + size / 2.0;
            let _ = write!(
                page,
                "<text x=\"{at}\" y=\"28\" font-size=\"11\" text-anchor=\"middle\">{cpu}</text>\
                 <text x=\"28\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{cpu}</text>",
                at + 4.0
            );
        }
        for &(a, b, median) in &cells {
            let shade = if high > low {
                (median - low) / (high - low)
            } else {
                0.5
            };
            let light = 92.0 - 55.0 * shade;
            for (row, column) in [(a, b), (b, a)] {
                let _ = write!(
                    page,
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" \
                     fill=\"hsl(210, 60%, {light:.0}%)\"><title>CPU {a} ↔ CPU {b}: {}</title></rect>",
                    40.0 + index(column) * size,
                    40.0 + index(row) * size,
                    size - 2.0,
                    size - 2.0,
                    format_ns(median)
                );
            }
        }
        let _ = writeln!(
            page,
            "</svg><figcaption>thread.core_to_core ({kind}): one-way latency of a cache line \
             between two CPUs (half a round trip), {} (light) to {} (dark)</figcaption></figure>",
            format_ns(low),
            format_ns(high)
        );
        drew = true;
    }
    drew
}

/// The sched.priority results as a table: classes across, conditions down.
fn scheduling(page: &mut String, run: &RunRecord) {
    let results: Vec<&BenchResult> = run
        .results()
        .filter(|r| r.name.starts_with(name::SCHED_PRIORITY_PREFIX))
        .collect();
    if results.is_empty() {
        return;
    }
    let mut classes: Vec<&str> = Vec::new();
    let mut conditions: Vec<&str> = Vec::new();
    for result in &results {
        let mut parts = result.name.split('/').skip(1);
        let (Some(condition), Some(class)) = (parts.next(), parts.next()) else {
            continue;
        };
        if !conditions.contains(&condition) {
            conditions.push(condition);
        }
        if !classes.contains(&class) {
            classes.push(class);
        }
    }
    page.push_str(
        "<h2>Priority under contention</h2>\n<table id=\"scheduling\">\n<tr><th>condition</th>",
    );
    for class in &classes {
        let _ = write!(page, "<th>{}</th>", escape(class));
    }
    page.push_str("</tr>\n");
    for condition in &conditions {
        let _ = write!(page, "<tr><td>{}</td>", escape(condition));
        for class in &classes {
            let wanted = format!("{}{condition}/{class}", name::SCHED_PRIORITY_PREFIX);
            let cell = results.iter().find(|r| r.name == wanted).map_or_else(
                || "—".to_string(),
                |r| {
                    let slowdown = r
                        .parameter(key::SLOWDOWN_VS_ALONE)
                        .and_then(|s| s.as_f64())
                        .map_or_else(String::new, |s| format!(" ({s:.1}×)"));
                    format!(
                        "{}{slowdown}<br><span class=\"note\">CPU share {}</span>",
                        format_ns(r.summary.median),
                        escape(&param(r, key::CPU_SHARE))
                    )
                },
            );
            let _ = write!(page, "<td>{cell}</td>");
        }
        page.push_str("</tr>\n");
    }
    page.push_str(
        "</table>\n<p class=\"note\">The completion time of one fixed job (median), its \
         slowdown against the same class alone, and its share of the CPU.</p>\n",
    );
}

fn results(page: &mut String, run: &RunRecord) {
    page.push_str("<h2>Every result</h2>\n");
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
            "<table>\n<tr><th>result</th><th>median</th><th>rate</th><th>95% CI of median</th>\
             <th>p5 … p95</th><th>cv</th><th>samples</th><th>method</th></tr>\n",
        );
        for result in &probe.results {
            let s = &result.summary;
            let samples = format_samples(result);
            let flag = if result.verdict.is_suspect() {
                " <span class=\"fail\">optimised away?</span>"
            } else if result.warnings.is_empty() {
                ""
            } else {
                " <span class=\"warn\">⚠</span>"
            };
            let _ = writeln!(
                page,
                "<tr><td>{}{flag}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}</td><td>{samples}</td><td class=\"text note\">{}</td></tr>",
                escape(&result.name),
                format_ns(s.median),
                result
                    .gigabytes_per_second()
                    .map_or_else(String::new, format_rate),
                format_interval(s),
                format_percentiles(s.n, s.p5, s.p95),
                s.cv.map_or_else(|| "–".into(), format_percent),
                escape(&result.method)
            );
        }
        page.push_str("</table>\n");
    }
}

fn warnings(page: &mut String, run: &RunRecord) {
    let all: Vec<(&str, String)> = run
        .results()
        .flat_map(|r| {
            r.warnings
                .iter()
                .map(move |w| (r.name.as_str(), crate::advice::warning(w)))
        })
        .collect();
    if all.is_empty() {
        return;
    }
    page.push_str("<h2>Warnings</h2>\n<ul>\n");
    for (name, message) in all {
        let _ = writeln!(
            page,
            "<li><code>{}</code>: <span class=\"warn\">{}</span></li>",
            escape(name),
            escape(&message)
        );
    }
    page.push_str("</ul>\n");
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
        let page = HtmlExporter.render(&run).unwrap();
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(page.contains("<table id=\"headline\">"));
        assert!(page.contains("id=\"ipc.latency/pair0/other\"><svg"));
        assert!(page.contains("id=\"core-to-core-cas\"><svg"));
        assert!(page.contains("a &lt;method&gt; &amp; more"));
        assert!(!page.contains("<script"));
        for attribute in ["src=", "href="] {
            assert!(
                !page.contains(attribute),
                "{attribute} would fetch something"
            );
        }
    }
}
