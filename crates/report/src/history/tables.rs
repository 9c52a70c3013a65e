//! A history as tables: CSV, a row per change (each step of the core clock and each member
//! of a machine event too, the event named by the start of its run), and Markdown, a table
//! per host. Both take their cells from [`cells`].

use super::{Change, History};
use crate::formats::FileFormat;
use crate::text_table::{Align, TextTable};
use crate::units::{format_ns, format_ratio};
use crate::{ExportError, Exporter};

/// The columns of a change, as both tables head them.
const HEADERS: [&str; 12] = [
    "result",
    "before_run",
    "after_run",
    "before_ns",
    "after_ns",
    "ratio",
    "interval_low",
    "interval_high",
    "p",
    "mix",
    "environment_changes",
    "machine_event",
];

/// The CSV rendering of a history.
#[derive(Debug, Clone, Copy, Default)]
pub struct HistoryCsv;

/// `latlab history --csv FILE`.
pub(crate) const CSV_FORMAT: FileFormat<History> = FileFormat {
    name: "csv",
    help: "Also write the changes as CSV here, a row per change with its host; '-' for \
        standard output",
    exporter: |_| Box::new(HistoryCsv),
};

/// The Markdown rendering of a history.
#[derive(Debug, Clone, Copy, Default)]
pub struct HistoryMarkdown;

/// `latlab history --markdown FILE`.
pub(crate) const MARKDOWN_FORMAT: FileFormat<History> = FileFormat {
    name: "markdown",
    help: "Also write the history as Markdown here, a table of changes per host; '-' for \
        standard output",
    exporter: |_| Box::new(HistoryMarkdown),
};

impl Exporter<History> for HistoryCsv {
    fn render(&self, history: &History) -> Result<String, ExportError> {
        let encode = |e: &dyn std::fmt::Display| ExportError::Encode {
            format: "csv",
            detail: e.to_string(),
        };
        let mut writer = csv::Writer::from_writer(Vec::new());
        let headers = ["host", "cpu_model"].into_iter().chain(HEADERS);
        writer.write_record(headers).map_err(|e| encode(&e))?;
        for host in &history.hosts {
            for change in host.all_changes() {
                let cells = cells(change, &host.runs, |ns| ns.to_string(), |r| r.to_string());
                let record = [&host.host, &host.cpu_model]
                    .into_iter()
                    .cloned()
                    .chain(cells)
                    .map(|cell| crate::csv::text_cell(&cell));
                writer.write_record(record).map_err(|e| encode(&e))?;
            }
        }
        let bytes = writer.into_inner().map_err(|e| encode(&e))?;
        String::from_utf8(bytes).map_err(|e| encode(&e))
    }
}

impl Exporter<History> for HistoryMarkdown {
    fn render(&self, history: &History) -> Result<String, ExportError> {
        let mut out = String::from("# latlab history\n\n");
        for host in &history.hosts {
            out.push_str(&format!(
                "## {} ({})\n\n{} runs, {} … {}\n\n",
                crate::text_table::escape_markdown(&host.host),
                crate::text_table::escape_markdown(&host.cpu_model),
                host.runs.len(),
                host.runs[0],
                host.runs[host.runs.len() - 1]
            ));
            let mut table = TextTable::new(HEADERS);
            table.rows = (host.all_changes())
                .map(|change| cells(change, &host.runs, format_ns, format_ratio).collect())
                .collect();
            match table.rows.is_empty() {
                true => out.push_str("No change point.\n\n"),
                false => out.push_str(&(table.markdown(&[Align::Left; 3]) + "\n")),
            }
        }
        for note in &history.notes {
            out.push_str(&format!("- {}\n", crate::text_table::escape_markdown(note)));
        }
        Ok(out)
    }
}

/// A change's cells, its figures by `ns` and its ratios by `ratio`; its machine event by
/// the start of its run among its host's `runs`.
fn cells(
    change: &Change,
    runs: &[String],
    ns: impl Fn(f64) -> String,
    ratio: impl Fn(f64) -> String,
) -> impl Iterator<Item = String> {
    let (low, high) = change
        .interval
        .map_or((String::new(), String::new()), |(low, high)| {
            (ratio(low), ratio(high))
        });
    let mix = change.mix.map_or_else(String::new, |(before, after)| {
        format!("{before:.2} → {after:.2} in the upper regime")
    });
    [
        change.result.clone(),
        change.before_run.clone(),
        change.after_run.clone(),
        ns(change.before),
        ns(change.after),
        ratio(change.ratio),
        low,
        high,
        format!("{:.2e}", change.p),
        mix,
        change.environment_text(),
        (change.machine_event).map_or_else(String::new, |at| runs[at].clone()),
    ]
    .into_iter()
}
