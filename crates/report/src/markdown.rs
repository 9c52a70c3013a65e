//! Markdown: the table as a pipe table, for READMEs and issue reports.

use crate::formats::FileFormat;
use crate::rows::{Sweeps, headline, rows};
use crate::text_table::{Align, escape_markdown};
use crate::{ExportError, Exporter};
use latlab_engine::model::RunRecord;
use std::fmt::Write;

pub struct MarkdownExporter;

/// `--markdown FILE`: the table as Markdown.
pub(crate) const FORMAT: FileFormat<RunRecord> = FileFormat {
    name: "markdown",
    help: "Also write a Markdown table here; '-' for standard output",
    exporter: |_| Box::new(MarkdownExporter),
};

impl Exporter for MarkdownExporter {
    fn render(&self, run: &RunRecord) -> Result<String, ExportError> {
        let rows = rows(run, Sweeps::Whole);
        let mut out = format!("{}\n\n", headline(run));
        out.push_str(&rows.table().markdown(&[Align::Left]));
        let lists = [
            ("Warnings", &rows.findings),
            ("Probes without results", &rows.incomplete),
        ];
        for (title, items) in lists {
            if !items.is_empty() {
                let _ = writeln!(out, "\n**{title}**\n");
                for (name, message) in items {
                    let _ = writeln!(out, "- `{name}`: {}", escape_markdown(message));
                }
            }
        }
        if !run.notes.is_empty() {
            out.push_str("\n**About this run**\n\n");
            for note in &run.notes {
                let _ = writeln!(out, "- {}", escape_markdown(note));
            }
        }
        Ok(out)
    }
}
