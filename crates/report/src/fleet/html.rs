//! The fleet as a self-contained HTML page: the table by host (or by CPU model), every
//! outlier, the notes, and for each headline row a strip plot of its figure across hosts.
//!
//! Each plot (`plots/strip.rs`) has a lane per CPU model and a dot per host on a
//! logarithmic time axis; an outlier is red and named, and every dot's title names its host
//! and figure.

use super::Fleet;
use super::text::{MAX_HOST_COLUMNS, group_cell, group_name, plural, summary_cells};
use crate::markup::{STYLE, escape};
use crate::plots::strip::{Dot, Lane, Strip, strip_svg};
use crate::units::{format_ns, format_ratio};
use std::fmt::Write;

/// The fleet's page.
pub fn fleet_html(fleet: &Fleet, dir: &str) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>latlab fleet: {}</title><style>{STYLE}</style></head><body>\n\
         <h1>latlab fleet</h1>\n<p>{} · {} · {}</p>\n",
        escape(dir),
        escape(dir),
        plural(fleet.hosts.len(), "host"),
        plural(fleet.groups.len(), "CPU model")
    );
    table(&mut page, fleet);
    groups(&mut page, fleet);
    outliers(&mut page, fleet);
    if !fleet.notes.is_empty() {
        page.push_str("<h2 id=\"notes\">Notes</h2>\n<ul>\n");
        for note in &fleet.notes {
            let _ = writeln!(page, "<li>{}</li>", escape(note));
        }
        page.push_str("</ul>\n");
    }
    page.push_str("<h2 id=\"plots\">Each row across the hosts</h2>\n");
    for row in 0..fleet.operations.len() {
        strip(&mut page, fleet, row);
    }
    page.push_str("</body></html>\n");
    page
}

fn table(page: &mut String, fleet: &Fleet) {
    let by_host = fleet.hosts.len() <= MAX_HOST_COLUMNS;
    page.push_str("<h2 id=\"table\">Latency numbers across the fleet</h2>\n<div class=\"scroll\"><table>\n<tr><th>operation</th>");
    if by_host {
        for host in &fleet.hosts {
            let _ = write!(page, "<th>{}</th>", escape(&host.label));
        }
    } else {
        for (i, group) in fleet.groups.iter().enumerate() {
            let _ = write!(
                page,
                "<th title=\"{}\">{} (n={})</th>",
                escape(&group.cpu_model),
                group_name(i),
                group.hosts.len()
            );
        }
    }
    page.push_str(
        "<th>hosts</th><th>median</th><th title=\"median absolute deviation across all hosts, \
         as a share of their median\">MAD</th><th>min … max</th><th>outliers</th></tr>\n",
    );
    for (row, operation) in fleet.operations.iter().enumerate() {
        let _ = write!(page, "<tr><td>{}</td>", escape(operation));
        if by_host {
            for h in 0..fleet.hosts.len() {
                match (fleet.hosts[h].figures[row], fleet.outlier(h, row)) {
                    (Some(v), Some(o)) => {
                        let _ = write!(
                            page,
                            "<td class=\"warn\" title=\"outlier: z {:+.1}\">{} !</td>",
                            o.z,
                            format_ns(v)
                        );
                    }
                    (Some(v), None) => {
                        let _ = write!(page, "<td>{}</td>", format_ns(v));
                    }
                    (None, _) => page.push_str("<td>—</td>"),
                }
            }
        } else {
            for group in &fleet.groups {
                let _ = write!(page, "<td>{}</td>", group_cell(fleet, group, row));
            }
        }
        for cell in summary_cells(fleet, row) {
            let _ = write!(page, "<td>{cell}</td>");
        }
        page.push_str("</tr>\n");
    }
    page.push_str("</table></div>\n");
}

fn groups(page: &mut String, fleet: &Fleet) {
    page.push_str("<h2 id=\"groups\">CPU models</h2>\n<ul>\n");
    for (i, group) in fleet.groups.iter().enumerate() {
        let names: Vec<String> = group
            .hosts
            .iter()
            .map(|&h| escape(&fleet.hosts[h].label))
            .collect();
        let _ = writeln!(
            page,
            "<li><b>{}</b>: {} — {} hosts<details><summary>hosts</summary>{}</details></li>",
            group_name(i),
            escape(&group.cpu_model),
            group.hosts.len(),
            names.join(", ")
        );
    }
    page.push_str("</ul>\n");
}

fn outliers(page: &mut String, fleet: &Fleet) {
    let _ = writeln!(
        page,
        "<h2 id=\"outliers\">Outliers ({})</h2>\n<p>A host is an outlier for a row when its \
         figure is more than {} modified z-scores (0.6745 × deviation ÷ median absolute \
         deviation) from the median of the hosts with its CPU model; judged where at least \
         3 hosts share the model.</p>",
        fleet.outliers.len(),
        super::OUTLIER_Z
    );
    if fleet.outliers.is_empty() {
        page.push_str("<p>None.</p>\n");
        return;
    }
    page.push_str("<div class=\"scroll\"><table>\n<tr><th>host</th><th>operation</th><th>figure</th><th>its CPU model's median</th><th>ratio</th><th>z</th><th>file</th></tr>\n");
    for o in &fleet.outliers {
        let host = &fleet.hosts[o.host];
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:+.1}</td><td>{}</td></tr>",
            escape(&host.label),
            escape(&fleet.operations[o.row]),
            format_ns(o.value),
            format_ns(o.group_median),
            format_ratio(o.value / o.group_median),
            o.z,
            escape(&host.path.display().to_string())
        );
    }
    page.push_str("</table></div>\n");
}

/// One row's strip plot: a lane per CPU model, a dot per host.
fn strip(page: &mut String, fleet: &Fleet, row: usize) {
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
        return;
    };
    let _ = writeln!(
        page,
        "<figure>{svg}<figcaption>{}: each host's median, a lane per CPU model \
         (logarithmic axis); outliers in red.</figcaption></figure>",
        escape(operation)
    );
}
