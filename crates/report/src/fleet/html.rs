//! The fleet as a self-contained HTML page: the table by host (or by CPU model), every
//! outlier, the hosts whose runs changed lately, the notes, and for each headline row a strip plot of its figure across hosts.
//!
//! Each plot (`plots/strip.rs`) has a lane per CPU model and a dot per host on a
//! logarithmic time axis; an outlier is red and named, and every dot's title names its host
//! and figure.

use super::Fleet;
use super::text::{MAX_HOST_COLUMNS, group_cell, group_name, headcount, summary_cells};
use crate::history::environment_words;
use crate::markup::{Contents, Section, page};
use crate::plots::strip::{Dot, Lane, Strip, strip_svg};
use crate::units::plural;
use crate::units::{format_ns, format_ratio};
use maud::{Markup, PreEscaped, html};

/// The fleet's page.
#[derive(Debug, Clone, Copy, Default)]
pub struct FleetHtml;

/// `latlab fleet --html FILE`.
pub(crate) const FORMAT: crate::FileFormat<super::FleetReport> = crate::FileFormat {
    name: "html",
    help: "Also write the fleet as a self-contained HTML page here, with a plot per row \
        across the hosts; '-' for standard output",
    exporter: |_| Box::new(FleetHtml),
};

impl crate::Exporter<super::FleetReport> for FleetHtml {
    fn render(&self, report: &super::FleetReport) -> Result<String, crate::ExportError> {
        Ok(page_of(&report.fleet, &report.dir))
    }
}

fn page_of(fleet: &Fleet, dir: &str) -> String {
    let intro = html! {
        p {
            (headcount(fleet)) " · " (plural(fleet.groups.len(), "CPU model"))
        }
    };
    let mut sections = vec![table(fleet), groups(fleet), outliers(fleet)];
    if fleet.with_history > 0 {
        sections.push(changed(fleet));
    }
    if !fleet.notes.is_empty() {
        let notes = html! { ul { @for note in &fleet.notes { li { (note) } } } };
        sections.push(Section::new("notes", "Notes", notes));
    }
    let strips = html! {
        @for row in 0..fleet.operations.len() { (strip(fleet, row)) }
    };
    sections.push(Section::new("plots", "Each row across the hosts", strips));
    page(
        &format!("latlab fleet: {dir}"),
        intro,
        &sections,
        Contents::Unlisted,
    )
}

fn table(fleet: &Fleet) -> Section {
    let by_host = fleet.hosts.len() <= MAX_HOST_COLUMNS;
    let body = html! {
        div.scroll { table {
            tr {
                th { "operation" }
                @if by_host {
                    @for host in &fleet.hosts { th { (host.label) } }
                } @else {
                    @for (i, group) in fleet.groups.iter().enumerate() {
                        th title=(group.cpu_model) {
                            (group_name(i)) " (n=" (group.hosts.len()) ")"
                        }
                    }
                }
                th { "hosts" } th { "median" }
                th title="median absolute deviation across all hosts, as a share of their median" {
                    "MAD"
                }
                th { "min … max" } th { "outliers" }
            }
            @for (row, operation) in fleet.operations.iter().enumerate() {
                tr {
                    td { (operation) }
                    @if by_host {
                        @for h in 0..fleet.hosts.len() { (host_cell(fleet, h, row)) }
                    } @else {
                        @for group in &fleet.groups { td { (group_cell(fleet, group, row)) } }
                    }
                    @for cell in summary_cells(fleet, row) { td { (cell) } }
                }
            }
        } }
    };
    Section::new("table", "Latency numbers across the fleet", body)
}

/// A host's figure for a row, marked where it is an outlier.
fn host_cell(fleet: &Fleet, host: usize, row: usize) -> Markup {
    match (fleet.hosts[host].figures[row], fleet.outlier(host, row)) {
        (Some(v), Some(o)) => html! {
            td.warn title=(format!("outlier: z {:+.1}", o.z)) { (format_ns(v)) " !" }
        },
        (Some(v), None) => html! { td { (format_ns(v)) } },
        (None, _) => html! { td { "—" } },
    }
}

fn groups(fleet: &Fleet) -> Section {
    let body = html! {
        ul {
            @for (i, group) in fleet.groups.iter().enumerate() {
                @let names: Vec<&str> =
                    group.hosts.iter().map(|&h| fleet.hosts[h].label.as_str()).collect();
                li {
                    b { (group_name(i)) } ": " (group.cpu_model) " — " (group.hosts.len())
                    " hosts"
                    details { summary { "hosts" } (names.join(", ")) }
                }
            }
        }
    };
    Section::new("groups", "CPU models", body)
}

fn outliers(fleet: &Fleet) -> Section {
    let body = html! {
        p {
            "A host is an outlier for a row when its figure is more than " (super::OUTLIER_Z)
            " modified z-scores (0.6745 × deviation ÷ median absolute deviation) from the \
             median of the hosts with its CPU model; judged where at least 3 hosts share the \
             model."
        }
        @if fleet.outliers.is_empty() {
            p { "None." }
        } @else {
            div.scroll { table {
                tr {
                    th { "host" } th { "operation" } th { "figure" }
                    th { "its CPU model's median" } th { "ratio" } th { "z" } th { "file" }
                }
                @for o in &fleet.outliers {
                    @let host = &fleet.hosts[o.host];
                    tr {
                        td { (host.label) }
                        td { (fleet.operations[o.row]) }
                        td { (format_ns(o.value)) }
                        td { (format_ns(o.group_median)) }
                        td { (format_ratio(o.value / o.group_median)) }
                        td { (format!("{:+.1}", o.z)) }
                        td { (host.path.display().to_string()) }
                    }
                }
            } }
        }
    };
    Section::new(
        "outliers",
        format!("Outliers ({})", fleet.outliers.len()),
        body,
    )
}

/// The hosts whose runs have a change point within their last runs: a row per change.
fn changed(fleet: &Fleet) -> Section {
    let body = html! {
        p {
            (plural(fleet.changed.len(), "host")) " of the " (fleet.with_history)
            " with two runs or more changed within their last "
            (plural(fleet.recent_runs, "run")) "; " code { "latlab history" }
            " tells each host's whole history."
        }
        @if !fleet.changed.is_empty() {
            div.scroll { table {
                tr {
                    th { "host" } th { "result" } th { "before" } th { "after" } th { "ratio" }
                    th { "from the run of" } th { "what else changed" }
                }
                @for host in &fleet.changed {
                    @for change in host.all_changes() {
                        tr {
                            td { (host.host) }
                            td { (change.result) }
                            td { (format_ns(change.before)) }
                            td { (format_ns(change.after)) }
                            td { (format_ratio(change.ratio)) }
                            td { (change.after_run) }
                            td { (environment_words(change)) }
                        }
                    }
                }
            } }
        }
    };
    Section::new(
        "changed",
        format!("Changed lately ({})", fleet.changed.len()),
        body,
    )
}

/// One row's strip plot: a lane per CPU model, a dot per host.
fn strip(fleet: &Fleet, row: usize) -> Markup {
    let operation = &fleet.operations[row];
    let lanes = (fleet.groups.iter().enumerate())
        .map(|(lane, group)| Lane {
            name: group_name(lane),
            tooltip: &group.cpu_model,
            dots: (group.hosts.iter())
                .filter_map(|&h| {
                    Some(Dot {
                        ns: fleet.hosts[h].figures[row].filter(|v| *v > 0.0)?,
                        label: &fleet.hosts[h].label,
                        highlighted: fleet.outlier(h, row).is_some(),
                    })
                })
                .collect(),
        })
        .collect();
    let Some(svg) = strip_svg(&Strip {
        title: operation,
        lanes,
    }) else {
        return html! {};
    };
    html! {
        figure {
            (PreEscaped(svg))
            figcaption {
                (operation) ": each host's median, a lane per CPU model (logarithmic axis); \
                 outliers in red."
            }
        }
    }
}
