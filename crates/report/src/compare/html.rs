//! The comparison as a self-contained page (`latlab compare --html FILE`): the summary and
//! how the noise was known, the machines side by side, each declared plot with the
//! baseline's lines pale behind a later run's, and per probe a figure of every result's
//! ratio to the baseline with each run's interval, then its table (sortable, a sweep's
//! points folded behind their count). Written with the run page's templates and style.

use super::render::{environment_table, footnote};
use super::{Compared, ComparedResult, Comparison, Side};
use crate::formats::FileFormat;
use crate::markup::{Contents, FOLD_ROWS_ABOVE, Section, capitalised, inline_svg, page, sort_key};
use crate::plots::{RenderedPlot, overlaid_plots, ratios};
use crate::units::{format_ns, format_ratio, has_interval};
use crate::{ExportError, Exporter};
use latlab_engine::model::BenchResult;
use latlab_engine::presentation::Presentations;
use maud::{PreEscaped, html};

/// The page comparing the sides, the first the baseline, as the comparison judged them; the
/// plots are those `declared` describes.
#[derive(Debug, Clone, Default)]
pub struct CompareHtml {
    pub declared: Presentations,
}

impl Exporter<Compared> for CompareHtml {
    fn render(&self, compared: &Compared) -> Result<String, ExportError> {
        page_of(&compared.sides, &compared.comparison, &self.declared)
    }
}

/// `latlab compare --html FILE`.
pub(crate) const FORMAT: FileFormat<Compared> = FileFormat {
    name: "html",
    help: "Also write the comparison as a self-contained HTML page here: the plots with \
        the runs overlaid, and per probe each result's ratio with each run's interval; '-' for \
        standard output",
    exporter: |declared| {
        Box::new(CompareHtml {
            declared: declared.clone(),
        })
    },
};

fn page_of(
    sides: &[Side],
    comparison: &Comparison,
    declared: &Presentations,
) -> Result<String, ExportError> {
    let title = format!("latlab comparison · {}", comparison.labels.join(" · "));
    let intro = html! {
        ul.note { @for side in sides { li { (side_line(side)) } } }
    };
    let mut sections = vec![summary(comparison), machines(sides)];
    let mut drawn: Vec<(String, RenderedPlot)> = Vec::new();
    for later in &sides[1..] {
        let labels = (sides[0].label.as_str(), later.label.as_str());
        for plot in overlaid_plots(&sides[0].runs[0], &later.runs[0], labels, declared)? {
            drawn.push((format!("{}-{}", plot.stem, later.label), plot));
        }
    }
    if !drawn.is_empty() {
        sections.push(plots(&drawn));
    }
    sections.push(by_probe(sides, comparison));
    Ok(page(&title, intro, &sections, Contents::Listed))
}

/// "A: host, started 2026-…", or for several runs "A: 3 runs on host, first started …".
fn side_line(side: &Side) -> String {
    let first = &side.runs[0];
    match side.runs.len() {
        1 => format!(
            "{}: {}, {}, started {}",
            side.label, first.environment.host_name, first.environment.cpu.model, first.started_at
        ),
        n => format!(
            "{}: {n} runs on {}, {}, the first started {}",
            side.label, first.environment.host_name, first.environment.cpu.model, first.started_at
        ),
    }
}

fn summary(comparison: &Comparison) -> Section {
    let body = html! {
        ul { @for line in comparison.summary_lines() { li { (line) } } }
        @for line in comparison.noise_lines() { p.note { (line) "." } }
        p.note { (capitalised(&footnote(comparison.threshold))) "." }
    };
    Section::new("summary", "Summary", body)
}

fn machines(sides: &[Side]) -> Section {
    let table = environment_table(sides);
    let body = html! {
        div.scroll { table #environment {
            thead { tr { @for heading in &table.headers { th { (heading) } } } }
            tbody { @for row in &table.rows {
                tr class=[(row[0] == "≠").then_some("differs")] {
                    @for cell in row { td { (cell) } }
                }
            } }
        } }
        p.note { "≠ marks a line where the machines differ: often the answer to a difference." }
    };
    Section::new("machines", "The machines", body)
}

fn plots(drawn: &[(String, RenderedPlot)]) -> Section {
    let body = html! {
        @for (id, plot) in drawn {
            figure id=(id) {
                (inline_svg(&plot.svg))
                figcaption { (plot.caption) }
            }
        }
    };
    Section::new("plots", "Plots, the runs overlaid", body)
}

/// Per probe, its ratio figure and its table.
fn by_probe(sides: &[Side], comparison: &Comparison) -> Section {
    let mut probes: Vec<(&str, Vec<&ComparedResult>)> = Vec::new();
    for result in &comparison.results {
        let probe = result.name.split('/').next().unwrap_or(&result.name);
        match probes.last_mut() {
            Some((id, results)) if *id == probe => results.push(result),
            _ => probes.push((probe, vec![result])),
        }
    }
    let body = html! {
        p.note {
            "Each figure: a row per result (a sweep's in-between points left to the table), \
             each run's median as a dot at its ratio to " (comparison.labels[0]) "'s, the \
             baseline at ×1, with a whisker over that run's 95% confidence interval of the \
             median (for a side of several runs, the range of their medians); the grey band \
             is the threshold within which medians are the same. Colours: "
            (comparison.labels.join(", ")) " in blue-grey, red, green, purple."
        }
        @for (probe, results) in &probes {
            h3 id=(probe) { (probe) }
            @if let Some(svg) = ratio_figure(sides, comparison, probe, results) {
                figure id={ "ratios-" (probe) } {
                    (PreEscaped(svg))
                    figcaption {
                        (probe) ": each result's median over " (comparison.labels[0]) "'s, \
                        with each run's interval; the verdict at the right."
                    }
                }
            }
            @if results.len() > FOLD_ROWS_ABOVE {
                details {
                    summary { (results.len()) " results" }
                    (results_table(comparison, results))
                }
            } @else {
                (results_table(comparison, results))
            }
        }
    };
    let parts = (probes.iter())
        .map(|(id, _)| (id.to_string(), id.to_string()))
        .collect();
    Section::new("results", "Every result", body).with_parts(parts)
}

fn ratio_figure(
    sides: &[Side],
    comparison: &Comparison,
    probe: &str,
    results: &[&ComparedResult],
) -> Option<String> {
    let rows: Vec<ratios::Row> = (results.iter())
        .filter(|r| !r.sweep_detail && r.first_median_ns > 0.0)
        .map(|r| {
            let first = r.first_median_ns;
            let relative = |side: &Side, median: f64| ratios::Mark {
                ratio: median / first,
                interval: interval(side, &r.name).map(|(low, high)| (low / first, high / first)),
            };
            let mut marks = vec![Some(relative(&sides[0], first))];
            for (side, against) in sides[1..].iter().zip(&r.later) {
                // A figure that is not positive (a span that ran backwards) has no place on
                // a ratio's logarithmic axis.
                let positive = against.as_ref().filter(|a| a.median_ns > 0.0);
                marks.push(positive.map(|a| relative(side, a.median_ns)));
            }
            let verdict = (r.later.first())
                .and_then(Option::as_ref)
                .map_or("missing", |a| a.verdict.word());
            ratios::Row {
                name: r.name.clone(),
                marks,
                verdict,
            }
        })
        .collect();
    ratios::svg(&rows, comparison.threshold, probe)
}

/// A side's interval for the result `name`: its one run's 95% confidence interval of the
/// median, or the range of its runs' medians.
fn interval(side: &Side, name: &str) -> Option<(f64, f64)> {
    let results: Vec<&BenchResult> = (side.runs.iter())
        .filter_map(|run| run.results().find(|r| r.name == name))
        .collect();
    match results.as_slice() {
        [] => None,
        [one] => has_interval(one).then(|| {
            let [low, high] = one.summary.median_ci95;
            (low, high)
        }),
        several => {
            let medians = several.iter().map(|r| r.summary.median);
            let low = medians.clone().fold(f64::INFINITY, f64::min);
            Some((low, medians.fold(0.0, f64::max)))
        }
    }
}

fn results_table(comparison: &Comparison, results: &[&ComparedResult]) -> maud::Markup {
    html! {
        div.scroll { table.sortable {
            thead { tr {
                th { "result" } th { (comparison.labels[0]) }
                @for label in &comparison.labels[1..] {
                    th { (label) } th { (label) "/" (comparison.labels[0]) } th { "difference" }
                }
            } }
            tbody { @for result in results {
                tr {
                    td { (result.name) }
                    td data-v=(sort_key(result.first_median_ns)) {
                        (format_ns(result.first_median_ns))
                    }
                    @for against in &result.later {
                        @match against {
                            Some(a) => {
                                td data-v=(sort_key(a.median_ns)) { (format_ns(a.median_ns)) }
                                td data-v=(sort_key(a.ratio)) { (format_ratio(a.ratio)) }
                                td class=(a.verdict.word().replace(' ', "-")) {
                                    (a.label(comparison.threshold))
                                }
                            }
                            None => { td { "—" } td {} td { "not in this run" } }
                        }
                    }
                }
            } }
        } }
    }
}
