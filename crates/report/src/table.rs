//! The terminal table: aligned columns in human units, then what went wrong and what to do.

use crate::advice;
use crate::rows::{Sweeps, headline, rows};
use crate::text_table::Align;
use crate::{ExportError, Exporter};
use latlab_engine::model::RunRecord;
use std::fmt::Write;

pub struct TableExporter;

impl Exporter for TableExporter {
    fn render(&self, run: &RunRecord) -> Result<String, ExportError> {
        let rows = rows(run, Sweeps::Folded);
        let mut out = String::new();
        let _ = writeln!(out, "{}", headline(run));
        out.push('\n');
        out.push_str(&rows.table().aligned(&[Align::Left]));
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
        if !run.stability.is_empty() {
            out.push_str("\nstability check\n");
            for check in &run.stability {
                let _ = writeln!(out, "  {}: {}", check.name, advice::stability_check(check));
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
