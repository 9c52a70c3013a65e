//! The terminal table: aligned columns in human units, fitted to the terminal's width, then
//! what went wrong and what to do, said once.

use crate::advice;
use crate::rows::{Sweeps, headline, rows};
use crate::terminal::{Detail, Paint, Terminal};
use crate::text_table::Align;
use crate::warning_groups::grouped;
use crate::{ExportError, Exporter};
use latlab_engine::model::RunRecord;
use std::fmt::Write;

/// The results table's columns, the least useful first: the first to go when the terminal
/// is too narrow. The name and the median always stay.
const LEAST_USEFUL_FIRST: [&str; 8] = [
    "cold",
    "p5 … p95",
    "samples",
    "cpu",
    "rate",
    "rounds ±",
    "95% CI of median",
    "cv",
];

/// The run for a person at a terminal, as `terminal` asks. [`Detail::Quiet`] renders nothing
/// here: the headline table and the paths are all a quiet run prints.
#[derive(Debug, Default)]
pub struct TableExporter {
    pub terminal: Terminal,
}

impl Exporter for TableExporter {
    fn render(&self, run: &RunRecord) -> Result<String, ExportError> {
        let terminal = &self.terminal;
        let mut out = String::new();
        if terminal.detail == Detail::Quiet {
            return Ok(out);
        }
        let rows = rows(run, Sweeps::Folded);
        out.push_str(&terminal.prose("", &headline(run)));
        // A run without results (every probe skipped) has no table, only its reasons.
        if !rows.cells.is_empty() {
            out.push('\n');
            let mut table = rows.table();
            let mut align = vec![Align::Left];
            let dropped = match terminal.width {
                Some(width) => table.fit(width, &LEAST_USEFUL_FIRST, &mut align),
                None => Vec::new(),
            };
            let cv_column = table.headers.iter().position(|h| h == "cv");
            out.push_str(&table.aligned_painted(&align, terminal, |row, column, _| {
                if row == 0 {
                    return Some(Paint::Heading);
                }
                let shown = &rows.shown[row - 1];
                if column == 0 && shown.suspect {
                    Some(Paint::Bad)
                } else if Some(column) == cv_column && shown.warned {
                    Some(Paint::Warn)
                } else {
                    None
                }
            }));
            if !dropped.is_empty() {
                out.push_str(&terminal.prose(
                    "",
                    &format!(
                        "(left out to fit {} columns: {}; a wider terminal, or COLUMNS, shows them)",
                        terminal.width.unwrap_or_default(),
                        dropped.join(", ")
                    ),
                ));
            }
        }
        if let Some(folded) = &rows.folded {
            out.push_str(&terminal.prose("", &format!("({folded})")));
        }
        match terminal.detail {
            Detail::Verbose => every_warning(&mut out, run, terminal),
            _ => grouped_warnings(&mut out, run, terminal),
        }
        if !rows.incomplete.is_empty() {
            heading(&mut out, terminal, "probes without results");
            for (id, what) in &rows.incomplete {
                out.push_str(&terminal.prose("  ", &format!("{id}: {what}")));
            }
        }
        if !run.stability.is_empty() {
            heading(&mut out, terminal, "stability check");
            for check in &run.stability {
                let line = format!("{}: {}", check.name, advice::stability_check(check));
                out.push_str(&terminal.prose("  ", &line));
            }
            for line in advice::regime_changes(run) {
                out.push_str(&terminal.prose("  ", &line));
            }
        }
        if !run.notes.is_empty() {
            heading(&mut out, terminal, "about this run");
            for note in &run.notes {
                out.push_str(&terminal.prose("  ", note));
            }
        }
        Ok(out)
    }
}

fn heading(out: &mut String, terminal: &Terminal, title: &str) {
    let _ = writeln!(out, "\n{}", terminal.paint(Paint::Heading, title));
}

/// One line per probe and kind of warning, then what to do about each kind, once.
fn grouped_warnings(out: &mut String, run: &RunRecord, terminal: &Terminal) {
    let grouped = grouped(run);
    if grouped.groups.is_empty() {
        return;
    }
    let lines = match grouped.groups.len() {
        1 => "1 line".to_string(),
        n => format!("{n} lines"),
    };
    out.push('\n');
    out.push_str(&terminal.prose(
        "",
        &format!(
            "{} ({} in {lines}; every one with its advice: --verbose, or the JSON, CSV and \
             Markdown files)",
            terminal.paint(Paint::Warn, "warnings"),
            grouped.warnings,
        ),
    ));
    for line in grouped.lines() {
        out.push_str(&terminal.prose("  ", line));
    }
    if !grouped.advice.is_empty() {
        heading(out, terminal, "what to do");
        for advice in &grouped.advice {
            out.push_str(&terminal.prose("  ", advice));
        }
    }
}

/// Every warning and verdict of every result, the points of folded sweeps included, each
/// with its advice.
fn every_warning(out: &mut String, run: &RunRecord, terminal: &Terminal) {
    let mut lines = Vec::new();
    for result in run.results() {
        if result.verdict.is_suspect() {
            lines.push(format!(
                "{}: {}",
                result.name,
                advice::verdict(result.verdict)
            ));
        }
        for warning in &result.warnings {
            lines.push(format!("{}: {}", result.name, advice::warning(warning)));
        }
    }
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n{} ({}, every one)",
        terminal.paint(Paint::Warn, "warnings"),
        lines.len()
    );
    for line in lines {
        out.push_str(&terminal.prose("  ", &line));
    }
}
