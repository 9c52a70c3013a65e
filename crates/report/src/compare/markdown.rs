//! A comparison as Markdown.

use super::render::{all_left, environment_table, footnote, only_in_later_runs, results_table};
use super::{Compared, Comparison, Side};
use crate::formats::FileFormat;
use crate::{ExportError, Exporter};
use std::fmt::Write as _;

/// The Markdown rendering, every result included.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompareMarkdown;

impl Exporter<Compared> for CompareMarkdown {
    fn render(&self, compared: &Compared) -> Result<String, ExportError> {
        Ok(markdown(&compared.sides, &compared.comparison))
    }
}

/// `latlab compare --markdown FILE`.
pub(crate) const FORMAT: FileFormat<Compared> = FileFormat {
    name: "markdown",
    help: "Also write the comparison as Markdown here (every sweep point included); '-' \
        for standard output",
    exporter: |_| Box::new(CompareMarkdown),
};

fn markdown(sides: &[Side], comparison: &Comparison) -> String {
    let mut out = String::from("# latlab comparison\n\n");
    let environment = environment_table(sides);
    out.push_str(&environment.markdown(&all_left(&environment)));
    out.push('\n');
    let results = results_table(comparison, false).0;
    out.push_str(&results.markdown(&all_left(&results)));
    let _ = writeln!(out, "\n{}.", footnote(comparison.threshold));
    for line in comparison.noise_lines() {
        let _ = writeln!(out, "\n{}.", crate::text_table::escape_markdown(&line));
    }
    for line in only_in_later_runs(comparison) {
        let _ = writeln!(out, "\n{}", crate::text_table::escape_markdown(&line));
    }
    out.push('\n');
    for line in comparison.summary_lines() {
        let _ = writeln!(out, "- {line}");
    }
    out
}
