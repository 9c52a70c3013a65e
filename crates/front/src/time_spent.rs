//! Where a run's time went: measuring the units, what comes before and after them (the
//! binary's stability checks), rewriting the results files, and the other outputs (the
//! page and plots), with the budget the run was given; and, for `--verbose`, what each
//! unit took of what it was allowed.

use latlab_engine::budget::Allowance;
use std::time::{Duration, Instant};

/// What a front end calls the parts of its run's time.
#[derive(Debug, Clone, Copy)]
pub struct TimeWords {
    /// The units: "probes", "benchmark sets".
    pub units: &'static str,
    /// What [`crate::Measured::start`] and [`crate::Measured::finish`] take: "stability
    /// checks".
    pub around: &'static str,
    /// What [`crate::Measured::write_more`] writes: "page and plots".
    pub more: &'static str,
}

impl Default for TimeWords {
    fn default() -> TimeWords {
        TimeWords {
            units: "units",
            around: "before and after",
            more: "other outputs",
        }
    }
}

/// A run's time, as it is spent.
#[derive(Debug)]
pub struct TimeSpent {
    began: Instant,
    /// The budget the run was given, if any.
    pub budget: Option<Duration>,
    pub units: Duration,
    pub around: Duration,
    /// Rewriting the results files after each unit and at the end.
    pub results: Duration,
    /// The other outputs.
    pub more: Duration,
    /// How long the last rewrite of the results files took.
    pub last_rewrite: Duration,
    /// Each unit's round: its name, what it took and what it was allowed.
    pub rounds: Vec<(String, Duration, Allowance)>,
    /// The units whose later rounds the budget left out (each once).
    pub rounds_left_out: Vec<String>,
}

impl TimeSpent {
    /// The run's time starts now.
    pub fn begin(budget: Option<Duration>) -> TimeSpent {
        TimeSpent {
            began: Instant::now(),
            budget,
            units: Duration::ZERO,
            around: Duration::ZERO,
            results: Duration::ZERO,
            more: Duration::ZERO,
            last_rewrite: Duration::ZERO,
            rounds: Vec::new(),
            rounds_left_out: Vec::new(),
        }
    }

    /// The time since the run began.
    pub fn elapsed(&self) -> Duration {
        self.began.elapsed()
    }

    /// Runs `step`, adding its time to the part `part` picks.
    pub fn timed<T>(
        &mut self,
        part: fn(&mut TimeSpent) -> &mut Duration,
        step: impl FnOnce() -> T,
    ) -> T {
        let started = Instant::now();
        let out = step();
        *part(self) += started.elapsed();
        out
    }

    /// A rewrite of the results files took `took`.
    pub fn rewrote(&mut self, took: Duration) {
        self.results += took;
        self.last_rewrite = took;
    }

    /// What the budget keeps for after the units: what came before them again (the binary's
    /// second stability check repeats its first), two more rewrites of the results files, and
    /// a twentieth of the budget for the other outputs.
    pub fn reserve(&self) -> Duration {
        let outputs = self.budget.map_or(Duration::ZERO, |budget| budget / 20);
        self.around + 2 * self.last_rewrite + outputs
    }

    /// The units' time left: the budget less what was spent and the reserve.
    pub fn left_for_units(&self) -> Option<Duration> {
        let budget = self.budget?;
        Some(budget.saturating_sub(self.elapsed() + self.reserve()))
    }

    /// `time: 28.1 s of 30 s: probes 25.8 s, stability checks 0.4 s, results 1.4 s, page and
    /// plots 0.4 s`, wrapped to `width` columns where given (the lines after the first
    /// indented).
    pub fn line(&self, words: &TimeWords, width: Option<usize>) -> String {
        let mut head = format!("time: {}", seconds(self.elapsed()));
        if let Some(budget) = self.budget {
            head.push_str(&format!(" of {}", seconds(budget)));
        }
        let parts = [
            (words.units, self.units),
            (words.around, self.around),
            ("results", self.results),
            (words.more, self.more),
        ];
        let parts: Vec<String> = (parts.iter())
            .map(|(name, took)| format!("{name} {}", seconds(*took)))
            .collect();
        let line = format!("{head}: {}", parts.join(", "));
        match width {
            Some(width) => {
                let options = textwrap::Options::new(width.max(40)).subsequent_indent("  ");
                textwrap::fill(&line, options)
            }
            None => line,
        }
    }

    /// The record's note on the units that took fewer samples than their suite's to fit the
    /// budget, each with the least share it took, and those whose later rounds it left out;
    /// `None` where none did.
    pub fn scaled_note(&self, words: &TimeWords) -> Option<String> {
        let budget = self.budget?;
        let rounds = match &self.rounds_left_out[..] {
            [] => String::new(),
            names => format!(
                "; it left out the later rounds of {} (their results carry fewer rounds)",
                names.join(", ")
            ),
        };
        let mut scaled: Vec<(&str, f64)> = Vec::new();
        for (name, _, allowance) in self.rounds.iter().filter(|(_, _, a)| a.is_scaled()) {
            match scaled.iter_mut().find(|(n, _)| n == name) {
                Some((_, least)) => *least = least.min(allowance.share),
                None => scaled.push((name, allowance.share)),
            }
        }
        if scaled.is_empty() && rounds.is_empty() {
            return None;
        }
        let listed: Vec<String> = (scaled.iter())
            .map(|(name, share)| format!("{name} ({:.0}%)", share * 100.0))
            .collect();
        Some(format!(
            "to keep the run within its budget of {}, {} of the {} took fewer samples than the \
             suite's (the least share of a round): {}{rounds}; a larger --budget, or --budget \
             none, takes them all",
            seconds(budget),
            scaled.len(),
            words.units,
            listed.join(", ")
        ))
    }

    /// For `--verbose`: each round of a unit that took a second or more, or fewer samples
    /// than usual, with what it was allowed.
    pub fn unit_lines(&self) -> Vec<String> {
        (self.rounds.iter())
            .filter(|(_, took, allowance)| *took >= Duration::from_secs(1) || allowance.is_scaled())
            .map(|(name, took, allowance)| {
                let allowed = match allowance.time {
                    Some(time) => format!(" of {} allowed", seconds(time)),
                    None => String::new(),
                };
                let scaled = if allowance.is_scaled() {
                    format!(", {:.0}% of its samples", allowance.share * 100.0)
                } else {
                    String::new()
                };
                format!("  {name}: {}{allowed}{scaled}", seconds(*took))
            })
            .collect()
    }
}

/// `28.6 s`, `0.3 s`; `30 s` for whole seconds.
fn seconds(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 && !duration.is_zero() {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_adds_up_and_names_the_budget() {
        let mut spent = TimeSpent::begin(Some(Duration::from_secs(30)));
        spent.units = Duration::from_millis(25_800);
        spent.rewrote(Duration::from_millis(20));
        spent.rewrote(Duration::from_millis(30));
        assert_eq!(spent.results, Duration::from_millis(50));
        assert_eq!(spent.last_rewrite, Duration::from_millis(30));
        let words = TimeWords {
            units: "probes",
            around: "stability checks",
            more: "page and plots",
        };
        let line = spent.line(&words, None);
        assert!(line.starts_with("time: "), "{line}");
        assert!(
            line.contains(" of 30 s: probes 25.8 s, stability checks 0.0 s, results 0.1 s"),
            "{line}"
        );
        assert!(line.ends_with("page and plots 0.0 s"), "{line}");
        let narrow = spent.line(&words, Some(40));
        assert!(narrow.lines().count() > 1, "{narrow}");
        assert!(narrow.lines().all(|l| l.chars().count() <= 40), "{narrow}");
        assert!(
            narrow.lines().skip(1).all(|l| l.starts_with("  ")),
            "{narrow}"
        );
        // The reserve: the second check as long as the first, two rewrites, 1.5 s of outputs.
        spent.around = Duration::from_secs(1);
        assert_eq!(spent.reserve(), Duration::from_millis(2_560));
        assert!(spent.left_for_units().unwrap() <= Duration::from_millis(27_440));
        assert_eq!(TimeSpent::begin(None).left_for_units(), None);
        // The units that took fewer samples, each with its least share.
        assert_eq!(spent.scaled_note(&words), None);
        let scaled = |share| Allowance {
            time: Some(Duration::from_secs(1)),
            share,
        };
        spent.rounds = vec![
            ("mem.latency".into(), Duration::from_secs(2), scaled(0.8)),
            (
                "cpu.call".into(),
                Duration::from_secs(1),
                Allowance::UNLIMITED,
            ),
            ("mem.latency".into(), Duration::from_secs(2), scaled(0.5)),
        ];
        let note = spent.scaled_note(&words).unwrap();
        assert!(
            note.contains("budget of 30 s, 1 of the probes took fewer"),
            "{note}"
        );
        assert!(note.contains(": mem.latency (50%);"), "{note}");
        spent.rounds_left_out.push("mem.bandwidth".into());
        let note = spent.scaled_note(&words).unwrap();
        assert!(note.contains("the later rounds of mem.bandwidth"), "{note}");
    }
}
