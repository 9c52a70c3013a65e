//! The terminal table: aligned columns in human units, then what went wrong and what to do.

use crate::rows::{Sweeps, headline, rows};
use crate::{ExportError, Exporter};
use latlab_engine::model::RunRecord;
use std::fmt::Write;

pub struct TableExporter;

impl Exporter for TableExporter {
    fn render(&self, run: &RunRecord) -> Result<String, ExportError> {
        let rows = rows(run, Sweeps::Folded);
        let headers: Vec<String> = rows.headers.iter().map(|h| h.to_string()).collect();
        let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
        for row in &rows.cells {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let _ = writeln!(out, "{}", headline(run));
        out.push('\n');
        push_row(&mut out, &headers, &widths);
        for row in &rows.cells {
            push_row(&mut out, row, &widths);
        }
        if let Some(folded) = &rows.folded {
            let _ = writeln!(out, "({folded})");
        }
        if !rows.findings.is_empty() {
            out.push_str("\nwarnings\n");
            for (name, message) in &rows.findings {
                let _ = writeln!(out, "  {name}: {message}");
            }
        }
        if !rows.incomplete.is_empty() {
            out.push_str("\nprobes without results\n");
            for (id, what) in &rows.incomplete {
                let _ = writeln!(out, "  {id}: {what}");
            }
        }
        if !run.notes.is_empty() {
            out.push_str("\nabout this run\n");
            for note in &run.notes {
                let _ = writeln!(out, "  {note}");
            }
        }
        Ok(out)
    }
}

/// The first column left-aligned, figures right-aligned, two spaces apart.
fn push_row(out: &mut String, cells: &[String], widths: &[usize]) {
    let mut line = String::new();
    for (i, (cell, &width)) in cells.iter().zip(widths).enumerate() {
        let pad = " ".repeat(width - cell.chars().count());
        if i == 0 {
            line.push_str(cell);
            line.push_str(&pad);
        } else {
            line.push_str("  ");
            line.push_str(&pad);
            line.push_str(cell);
        }
    }
    out.push_str(line.trim_end());
    out.push('\n');
}
