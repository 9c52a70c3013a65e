//! The regression gate (`--fail-if-slower PCT`) of `latlab compare` and of the harness's
//! baselines: it fails on a result slower than the baseline by more than PCT, and on a
//! comparison that judged nothing (every name renamed, every figure untested), which would
//! otherwise pass for want of evidence. A result read as running in two regimes was
//! compared: that is a finding, and it neither fails the gate nor leaves it with nothing
//! compared (a baseline of one benchmark whose rounds split 28.9 / 38.2 ns on a loaded
//! guest failed the gate of unchanged code as "nothing was compared").

use super::{Comparison, Verdict};
use crate::units::format_ratio;

/// What the gate found.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// The percentage it allows.
    pub percent: f64,
    /// `(result, later side, ratio)` for each result slower by more than `percent`.
    pub slower: Vec<(String, String, f64)>,
    /// The later sides against which not one result was judged same, slower, faster or
    /// in two regimes.
    pub judged_nothing: Vec<String>,
}

impl Gate {
    /// The gate of `comparison` at `percent`.
    pub fn of(comparison: &Comparison, percent: f64) -> Gate {
        let judged_nothing = (comparison.labels[1..].iter().enumerate())
            .filter(|(index, _)| {
                !comparison.results.iter().any(|result| {
                    result.later[*index].as_ref().is_some_and(|a| {
                        matches!(
                            a.verdict,
                            Verdict::Same { .. }
                                | Verdict::Slower { .. }
                                | Verdict::Faster { .. }
                                | Verdict::TwoRegimes { .. }
                        )
                    })
                })
            })
            .map(|(_, label)| label.clone())
            .collect();
        Gate {
            percent,
            slower: comparison.slower_than(percent),
            judged_nothing,
        }
    }

    /// Whether the gate fails: a result too slow, or nothing judged.
    pub fn failed(&self) -> bool {
        !self.slower.is_empty() || !self.judged_nothing.is_empty()
    }

    /// The gate's verdict in lines: `what` names the things judged ("result", "benchmark"),
    /// `against` the baseline ("A", "the baseline main").
    pub fn text(&self, what: &str, against: &str) -> String {
        let percent = self.percent;
        let mut text = String::new();
        for side in &self.judged_nothing {
            text.push_str(&format!(
                "--fail-if-slower: nothing was compared: not one {what} of {side} was judged \
                 against {against} (their names differ, or no figure could be tested); the \
                 gate fails: compare runs of the same {what}s\n"
            ));
        }
        if !self.slower.is_empty() {
            text.push_str(&format!(
                "{} slower than {against} by more than {percent}% (--fail-if-slower):\n",
                self.slower.len()
            ));
            for (name, side, ratio) in &self.slower {
                text.push_str(&format!("  {name} in {side}: {}\n", format_ratio(*ratio)));
            }
        } else if self.judged_nothing.is_empty() {
            text.push_str(&format!(
                "no {what} is more than {percent}% slower than {against}\n"
            ));
        }
        text
    }
}
