//! A comparison as text for the terminal.

use super::render::{all_left, environment_table, footnote, only_in_later_runs, results_table};
use super::{Compared, Comparison, Side};
use crate::terminal::{Paint, Terminal};
use crate::{ExportError, Exporter};

/// The terminal rendering: the environments, the results (in-between sweep points folded),
/// faster and slower coloured when the terminal says so, then the summary.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompareText {
    pub terminal: Terminal,
}

impl Exporter<Compared> for CompareText {
    fn render(&self, compared: &Compared) -> Result<String, ExportError> {
        Ok(text(&compared.sides, &compared.comparison, &self.terminal))
    }
}

fn text(sides: &[Side], comparison: &Comparison, terminal: &Terminal) -> String {
    let mut out = String::new();
    let environment = environment_table(sides);
    out.push_str(&environment.aligned(&all_left(&environment)));
    out.push('\n');
    let (results, folded) = results_table(comparison, true);
    out.push_str(
        &results.aligned_painted(&all_left(&results), terminal, |row, _, cell| {
            if row == 0 {
                Some(Paint::Heading)
            } else if cell.starts_with("slower") {
                Some(Paint::Bad)
            } else if cell.starts_with("faster") {
                Some(Paint::Good)
            } else {
                None
            }
        }),
    );
    if folded > 0 {
        out.push_str(&terminal.prose(
            "",
            &format!(
                "({folded} in-between points of the sweeps are not shown here; --markdown, \
                 --csv and --json have them all)"
            ),
        ));
    }
    out.push_str(&terminal.prose("", &format!("({})", footnote(comparison.threshold))));
    for line in comparison.noise_lines() {
        out.push_str(&terminal.prose("", &format!("({line})")));
    }
    for line in only_in_later_runs(comparison) {
        out.push_str(&terminal.prose("", &line));
    }
    out.push('\n');
    for line in comparison.summary_lines() {
        out.push_str(&terminal.prose("", &terminal.paint(Paint::Heading, &line)));
    }
    out
}
