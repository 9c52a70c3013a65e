//! The terminal view of a run: by default a line per probe with its key figures
//! (`first_screen.rs`), `--verbose` every result in aligned columns in human units; both fitted
//! to the terminal's width, then what went wrong and what to do, said once.

use crate::advice;
use crate::first_screen::families;
use crate::rows::{Rows, Sweeps, headline, rows};
use crate::terminal::{Detail, Paint, Terminal};
use crate::text_table::Align;
use crate::warning_groups::grouped;
use crate::{ExportError, Exporter};
use latlab_engine::model::RunRecord;
use latlab_engine::presentation::Presentations;
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

/// What each column of the results table is, one line each, under it.
const COLUMN_LEGEND: [(&str, &str); 10] = [
    (
        "median",
        "the middle sample's time per operation (≈: extrapolated, not measured)",
    ),
    (
        "cpu",
        "the measuring thread's CPU time per operation, where it waited off the CPU",
    ),
    (
        "rate",
        "bytes moved per second at the median (1 GB/s = 10^9 bytes per second)",
    ),
    (
        "95% CI of median",
        "where the median lies, 19 times in 20 (distribution-free)",
    ),
    (
        "rounds ±",
        "how far the rounds' medians lie from the median, at most",
    ),
    ("p5 … p95", "the 5th to the 95th percentile of the samples"),
    ("cv", "the samples' standard deviation over their mean"),
    (
        "cold",
        "the first call, timed alone before sampling ('<': below the clock's step)",
    ),
    ("samples", "samples × calls timed in each"),
    (
        "!! OPTIMISED AWAY?",
        "indistinguishable from the empty loop",
    ),
];

/// The most lines of grouped warnings the first screen shows; `--verbose` shows them all.
const WARNING_LINES: usize = 12;

/// The run for a person at a terminal, as `terminal` asks: [`Detail::Normal`] a line per
/// probe, [`Detail::Verbose`] every result. [`Detail::Quiet`] renders nothing here: the
/// headline table and the paths are all a quiet run prints.
#[derive(Debug, Default)]
pub struct TableExporter {
    pub terminal: Terminal,
    /// What the probes' results feed: which are key figures, which plot draws them.
    pub declared: Presentations,
}

impl Exporter for TableExporter {
    fn render(&self, run: &RunRecord) -> Result<String, ExportError> {
        let terminal = &self.terminal;
        let mut out = String::new();
        if terminal.detail == Detail::Quiet {
            return Ok(out);
        }
        out.push_str(&terminal.prose("", &headline(run)));
        let rows = match terminal.detail {
            Detail::Verbose => {
                let rows = rows(run, Sweeps::Whole);
                results_table(&mut out, &rows, terminal);
                every_warning(&mut out, run, terminal);
                rows
            }
            _ => {
                let table = families(run, &self.declared, terminal);
                if !table.is_empty() {
                    out.push('\n');
                    out.push_str(&table);
                }
                grouped_warnings(&mut out, run, terminal);
                rows(run, Sweeps::Folded)
            }
        };
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
            for line in advice::regime_changes(run)
                .into_iter()
                .chain(advice::placement_changes(run))
            {
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

/// Every result in aligned columns, fitted to the terminal: the columns least useful first
/// left out where it is too narrow, and said so.
fn results_table(out: &mut String, rows: &Rows, terminal: &Terminal) {
    // A run without results (every probe skipped) has no table, only its reasons.
    if !rows.cells.is_empty() {
        out.push('\n');
        let mut table = rows.table();
        let mut align = vec![Align::Left];
        let left_out = table.fit_to_terminal(
            terminal.width,
            &LEAST_USEFUL_FIRST,
            &mut align,
            "; a wider terminal, or COLUMNS, shows them",
        );
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
        if let Some(left_out) = left_out {
            out.push_str(&terminal.prose("", &left_out));
        }
    }
    for footnote in &rows.footnotes {
        out.push_str(&terminal.prose("", &format!("({footnote})")));
    }
    legend(out, rows, terminal);
    if let Some(folded) = &rows.folded {
        out.push_str(&terminal.prose("", &format!("({folded})")));
    }
}

/// One line per column the table shows (and the mark of a suspect row, where one is): what
/// it is.
fn legend(out: &mut String, rows: &Rows, terminal: &Terminal) {
    let suspect = rows.shown.iter().any(|row| row.suspect);
    let shown = (COLUMN_LEGEND.iter()).filter(|(column, _)| {
        rows.headers.contains(column) || (suspect && column.starts_with("!!"))
    });
    for (column, meaning) in shown {
        out.push_str(&terminal.prose("  ", &format!("{column}: {meaning}")));
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
            "{} ({} in {lines}; every one: --verbose, or the JSON, CSV and \
             Markdown files)",
            terminal.paint(Paint::Warn, "warnings"),
            grouped.warnings,
        ),
    ));
    let lines = grouped.lines();
    for line in lines.iter().take(WARNING_LINES) {
        out.push_str(&terminal.prose("  ", line));
    }
    if lines.len() > WARNING_LINES {
        let more = lines.len() - WARNING_LINES;
        out.push_str(&terminal.prose(
            "  ",
            &format!("(and {more} more lines: --verbose shows them)"),
        ));
    }
    what_to_do(out, &grouped.advice, terminal);
}

/// What to do about each kind of warning the run had, once, as fits this machine.
fn what_to_do(out: &mut String, advice: &[String], terminal: &Terminal) {
    if !advice.is_empty() {
        heading(out, terminal, "what to do");
        for advice in advice {
            out.push_str(&terminal.prose("  ", advice));
        }
    }
}

/// Every warning and verdict of every result, the points of folded sweeps included, then
/// what to do about each kind, once.
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
    what_to_do(out, &grouped(run).advice, terminal);
}
