//! The fleet for the terminal: the headline rows with a column per host (per CPU model
//! when there are many hosts), the fleet's median and range per row, then the outliers by
//! host, the groups, the hosts whose runs changed lately, and the notes.

use super::{Fleet, Group};
use crate::stats::robust::relative_mad;
use crate::terminal::{Paint, Terminal};
use crate::text_table::{Align, TextTable};
use crate::units::{format_ns, format_ratio, plural};
use latlab_engine::stats::median_in_place;

/// Up to this many hosts get a column each; more are shown by CPU model.
pub const MAX_HOST_COLUMNS: usize = 6;
/// Outlier hosts listed under the table, the most often flagged first.
const LISTED_OUTLIERS: usize = 20;

/// Letters naming the CPU-model groups in the table's headers.
pub(crate) fn group_name(index: usize) -> String {
    let letters = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut name = String::new();
    let mut i = index;
    loop {
        name.insert(0, letters[i % 26] as char);
        if i < 26 {
            break;
        }
        i = i / 26 - 1;
    }
    name
}

/// How many runs the fleet holds, and of how many hosts where some host has several:
/// `6 hosts`, or `40 runs of 1 host` for one host's nightly runs.
pub(crate) fn headcount(fleet: &Fleet) -> String {
    let distinct: std::collections::BTreeSet<(&str, &str)> = (fleet.hosts.iter())
        .map(|run| (run.host_name.as_str(), run.cpu_model.as_str()))
        .collect();
    match distinct.len() == fleet.hosts.len() {
        true => plural(fleet.hosts.len(), "host"),
        false => format!(
            "{} of {}",
            plural(fleet.hosts.len(), "run"),
            plural(distinct.len(), "host")
        ),
    }
}

/// A CPU model's cell of a row: its hosts' median, or "—".
pub(crate) fn group_cell(fleet: &Fleet, group: &Group, row: usize) -> String {
    let mut values: Vec<f64> = group
        .hosts
        .iter()
        .filter_map(|&h| fleet.hosts[h].figures[row])
        .collect();
    if values.is_empty() {
        "—".into()
    } else {
        format_ns(median_in_place(&mut values))
    }
}

/// A row's summary cells, for the terminal and the page alike: how many hosts have it,
/// their median, their MAD as a share of it, their range, and how many are outliers.
pub(crate) fn summary_cells(fleet: &Fleet, row: usize) -> [String; 5] {
    let mut values: Vec<f64> = fleet.row(row).map(|(_, v)| v).collect();
    if values.is_empty() {
        return [
            "0".into(),
            "—".into(),
            "—".into(),
            "—".into(),
            String::new(),
        ];
    }
    let flagged = fleet.outliers.iter().filter(|o| o.row == row).count();
    let spread = relative_mad(&values);
    let centre = median_in_place(&mut values);
    [
        values.len().to_string(),
        format_ns(centre),
        spread.map_or("—".into(), |s| format!("{:.1}%", 100.0 * s)),
        format!(
            "{} … {}",
            format_ns(values[0]),
            format_ns(values[values.len() - 1])
        ),
        if flagged > 0 {
            flagged.to_string()
        } else {
            String::new()
        },
    ]
}

/// The fleet as text for a person at a terminal.
#[derive(Debug, Clone, Copy, Default)]
pub struct FleetText {
    pub terminal: Terminal,
}

impl crate::Exporter<super::FleetReport> for FleetText {
    fn render(&self, report: &super::FleetReport) -> Result<String, crate::ExportError> {
        Ok(text(&report.fleet, &report.dir, &self.terminal))
    }
}

fn text(fleet: &Fleet, dir: &str, terminal: &Terminal) -> String {
    let by_host = fleet.hosts.len() <= MAX_HOST_COLUMNS;
    let table = figures_table(fleet, by_host);
    let mut out = format!(
        "latlab fleet · {} · {} · {}\n\n",
        dir,
        headcount(fleet),
        plural(fleet.groups.len(), "CPU model")
    );
    out.push_str(&table.aligned(&[Align::Left]));
    out.push_str(&format!(
        "\n(the median of each host's run; {}; MAD: the median absolute deviation across all \
         hosts, as a share of their median; an outlier is a host whose figure is more than {} \
         modified z-scores from its CPU model's median, judged where at least 3 hosts share the \
         model)\n",
        if by_host {
            "'!' marks an outlier".to_string()
        } else {
            "a column per CPU model, its hosts' median".to_string()
        },
        super::OUTLIER_Z
    ));
    out.push_str(&cpu_models_text(fleet));
    out.push_str(&outliers_text(fleet, terminal));
    out.push_str(&changed_text(fleet));
    if !fleet.notes.is_empty() {
        out.push_str("\nnotes\n");
        for note in &fleet.notes {
            out.push_str(&format!("  {note}\n"));
        }
    }
    out
}

/// The table of figures: a row per operation, a column per host (or per CPU model when
/// there are too many hosts), then the fleet's summary.
fn figures_table(fleet: &Fleet, by_host: bool) -> TextTable {
    let mut headers = vec!["operation".to_string()];
    if by_host {
        headers.extend(fleet.hosts.iter().map(|h| h.label.clone()));
    } else {
        headers.extend(
            fleet
                .groups
                .iter()
                .enumerate()
                .map(|(i, g)| format!("{} (n={})", group_name(i), g.hosts.len())),
        );
    }
    headers.extend(["hosts", "median", "MAD", "min … max", "outliers"].map(String::from));
    let mut table = TextTable::new(headers);
    for (row, operation) in fleet.operations.iter().enumerate() {
        let mut cells = vec![operation.clone()];
        if by_host {
            cells.extend((0..fleet.hosts.len()).map(|h| {
                match (fleet.hosts[h].figures[row], fleet.outlier(h, row)) {
                    (Some(v), Some(_)) => format!("{} !", format_ns(v)),
                    (Some(v), None) => format_ns(v),
                    (None, _) => "—".into(),
                }
            }));
        } else {
            cells.extend(fleet.groups.iter().map(|g| group_cell(fleet, g, row)));
        }
        cells.extend(summary_cells(fleet, row));
        table.rows.push(cells);
    }
    table
}

/// The CPU models, each with its letter and the first few of its hosts.
fn cpu_models_text(fleet: &Fleet) -> String {
    let mut out = String::new();
    out.push_str("\nCPU models\n");
    for (i, group) in fleet.groups.iter().enumerate() {
        let names: Vec<&str> = group
            .hosts
            .iter()
            .take(4)
            .map(|&h| fleet.hosts[h].label.as_str())
            .collect();
        let more = group.hosts.len().saturating_sub(names.len());
        out.push_str(&format!(
            "  {}: {} — {} host{}: {}{}\n",
            group_name(i),
            group.cpu_model,
            group.hosts.len(),
            if group.hosts.len() == 1 { "" } else { "s" },
            names.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    out
}

/// The outliers by host, the most often flagged first.
fn outliers_text(fleet: &Fleet, terminal: &Terminal) -> String {
    let mut by_host: Vec<(usize, Vec<&super::Outlier>)> = Vec::new();
    for outlier in &fleet.outliers {
        match by_host.iter_mut().find(|(h, _)| *h == outlier.host) {
            Some((_, list)) => list.push(outlier),
            None => by_host.push((outlier.host, vec![outlier])),
        }
    }
    if by_host.is_empty() {
        return "\noutliers: none\n".to_string();
    }
    by_host.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    let mut out = format!(
        "\noutliers ({} host{}, {} figure{})\n",
        by_host.len(),
        if by_host.len() == 1 { "" } else { "s" },
        fleet.outliers.len(),
        if fleet.outliers.len() == 1 { "" } else { "s" }
    );
    for (host, list) in by_host.iter().take(LISTED_OUTLIERS) {
        let parts: Vec<String> = list
            .iter()
            .map(|o| {
                format!(
                    "{} {} ({} its CPU model's {}, z {:+.1})",
                    fleet.operations[o.row],
                    format_ns(o.value),
                    format_ratio(o.value / o.group_median),
                    format_ns(o.group_median),
                    o.z
                )
            })
            .collect();
        out.push_str(&format!(
            "  {}: {}\n",
            terminal.paint(Paint::Bad, &fleet.hosts[*host].label),
            parts.join("; ")
        ));
    }
    if by_host.len() > LISTED_OUTLIERS {
        out.push_str(&format!(
            "  and {} more hosts (the HTML page lists them all)\n",
            by_host.len() - LISTED_OUTLIERS
        ));
    }
    out
}

/// The hosts with a change point in their last runs, a line per change; nothing where no
/// host has two runs.
fn changed_text(fleet: &Fleet) -> String {
    if fleet.with_history == 0 {
        return String::new();
    }
    let mut out = format!(
        "\nchanged within their last {}: {} of the {} with two runs or more \
         (latlab history tells each host's whole history)\n",
        plural(fleet.recent_runs, "run"),
        plural(fleet.changed.len(), "host"),
        fleet.with_history
    );
    for host in &fleet.changed {
        out.push_str(&format!("  {} · {}\n", host.host, host.cpu_model));
        crate::history::changes_text(&mut out, host, "    ");
    }
    out
}
