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
    /// The runs the baseline (the first side) holds.
    pub baseline_runs: usize,
    /// What the gate could hear: of the results tested, how many would have been called
    /// slower by `percent`.
    pub hearing: Hearing,
}

/// How far the comparison behind a gate could hear: each result's smallest change it would
/// have called ([`super::Against::detectable`]), against the gate's percentage.
#[derive(Debug, Clone, PartialEq)]
pub struct Hearing {
    /// Results (in every later side) whose smallest callable change is known.
    pub tested: usize,
    /// Of those, the ones whose smallest callable change is within the gate's percentage.
    pub within: usize,
    /// The median of the smallest callable changes, as a share.
    pub median: Option<f64>,
}

impl Hearing {
    /// The hearing of `comparison` at `percent`.
    fn of(comparison: &Comparison, percent: f64) -> Hearing {
        let mut detectable: Vec<f64> = (comparison.results.iter())
            .flat_map(|result| result.later.iter().flatten())
            .filter_map(|against| against.detectable)
            .collect();
        let within = (detectable.iter())
            .filter(|&&share| share * 100.0 <= percent + 1e-9)
            .count();
        let tested = detectable.len();
        let median = (tested > 0).then(|| latlab_engine::stats::median_in_place(&mut detectable));
        Hearing {
            tested,
            within,
            median,
        }
    }
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
            baseline_runs: comparison.runs_per_side.first().copied().unwrap_or(0),
            hearing: Hearing::of(comparison, percent),
        }
    }

    /// Whether the gate fails: a result too slow, or nothing judged.
    pub fn failed(&self) -> bool {
        !self.slower.is_empty() || !self.judged_nothing.is_empty()
    }

    /// How many runs the baseline holds, and what the gate could hear with them: how many
    /// of the things judged would have been called slower by its percentage.
    fn hearing_line(&self, what: &str, against: &str) -> String {
        let runs = self.baseline_runs;
        let held = format!(
            "{against} holds {runs} run{}",
            if runs == 1 { "" } else { "s" }
        );
        let Hearing {
            tested,
            within,
            median,
        } = self.hearing;
        let Some(median) = median else {
            return format!("{held}\n");
        };
        format!(
            "{held}: a slowdown of {}% would be called in {within} of the {tested} {what}s \
             tested (the smallest change each could be called: median ±{}%)\n",
            self.percent,
            super::render::format_percent_rounded(median)
        )
    }

    /// The gate's verdict in lines: `what` names the things judged ("result", "benchmark"),
    /// `against` the baseline ("A", "the baseline main").
    pub fn text(&self, what: &str, against: &str) -> String {
        let percent = self.percent;
        let mut text = self.hearing_line(what, against);
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
