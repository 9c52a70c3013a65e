//! The regression gate (`--fail-if-slower PCT`) of `latlab compare` and of the harness's
//! baselines: it fails on a result slower than the baseline by more than PCT; on a core
//! clock slower by more than PCT and beyond its noise, named as the cause (unless
//! `--accept-clock-moves`); on a result the baseline gated that a later side lacks, named
//! with its probe's reason (unless `--allow-missing`); and on a comparison that judged
//! nothing (every name renamed, every figure untested), which would otherwise pass for want
//! of evidence. It excuses nothing the user did not ask it to, and says what it excused. A result read as running in two regimes was
//! compared: that is a finding, and it neither fails the gate nor leaves it with nothing
//! compared (a baseline of one benchmark in two regimes once failed the gate of unchanged
//! code as "nothing was compared": the book's "Comparing runs", "The figures behind the rules").

use super::render::clock_words;
use super::{Comparison, Excused, MissingResult, Verdict};
use crate::units::{format_ratio, plural};
use latlab_engine::cycle::CYCLE_RESULT;

/// What the gate found.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate {
    /// The percentage it allows.
    pub percent: f64,
    /// `(result, later side, ratio)` for each result slower by more than `percent`, the
    /// core clock's left out.
    pub slower: Vec<(String, String, f64)>,
    /// Each later side whose core clock was called slower by more than `percent`.
    pub clock: Vec<SlowerClock>,
    /// The results of the baseline that a later side lacks and that a gate hears (primary
    /// results, and every result of a probe that did not end well): `(later side, result)`.
    pub missing: Vec<(String, MissingResult)>,
    /// Each result whose later side is not comparable with the baseline (the machine moved
    /// during a run, or differs between the sides) and reads slower by more than `percent`:
    /// not judged, so not failing the gate, and named by it, never passed over in silence.
    pub unsteady: Vec<Unjudged>,
    /// What the user asked to excuse: a clock's move, missing results.
    pub excused: Excused,
    /// The later sides against which not one result was judged same, slower, faster or
    /// in two regimes.
    pub judged_nothing: Vec<String>,
    /// The runs the baseline (the first side) holds.
    pub baseline_runs: usize,
    /// What the gate could hear: of the results tested, how many would have been called
    /// slower by `percent`.
    pub hearing: Hearing,
}

/// A result the comparison could not judge, past the gate's percentage by its medians.
#[derive(Debug, Clone, PartialEq)]
pub struct Unjudged {
    pub name: String,
    pub side: String,
    pub ratio: f64,
    /// Its verdict, as the table says it (`not comparable (the machine moved: …)`).
    pub verdict: String,
}

/// A later side's core clock, slower than the baseline's by more than the gate's percentage
/// and beyond its noise between runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SlowerClock {
    pub side: String,
    /// Its cycle's length over the baseline's.
    pub ratio: f64,
    /// The results on the core clock that moved with it.
    pub moved: usize,
}

/// Beyond this slowdown (a share: twice as slow) a result cannot be gated by these runs:
/// its noise between runs is known from too little (a handful of rounds, one degree of
/// freedom) to hear a change short of that, and a figure like "3819241384%" says nothing a
/// reader can use.
pub const GATEABLE: f64 = 1.0;

/// How far the comparison behind a gate could hear: the smallest slowdown at which each
/// result would fail the gate nine times in ten, from its noise and the gate's percentage.
#[derive(Debug, Clone, PartialEq)]
pub struct Hearing {
    /// Results (in every later side) whose noise is known and that would fail the gate
    /// short of [`GATEABLE`].
    pub tested: usize,
    /// Results whose noise is known but that would fail the gate only beyond
    /// [`GATEABLE`], that were not judged (at a cache level's end, one run a side), or
    /// whose samples are too few to call a change in their set
    /// ([`super::Against::too_few_samples`]).
    pub ungated: usize,
    /// Of those, the results that would fail the gate at a slowdown of twice its
    /// percentage.
    pub within_twice: usize,
    /// The smallest failing slowdown of the median result, the quietest tenth's (the 10th
    /// percentile) and the noisiest tenth's (the 90th), as shares.
    pub median: Option<f64>,
    pub quietest_tenth: Option<f64>,
    pub noisiest_tenth: Option<f64>,
}

impl Hearing {
    /// The hearing of `comparison` at `percent`. A result fails the gate once it is called
    /// slower ([`super::Against::detectable`]) and the 95% interval of its ratio lies wholly
    /// past `1 + percent / 100`: nine times in ten at a slowdown of that, times its noise's
    /// reach ([`super::Against::reach`]) and its margin ([`super::Against::margin`]).
    fn of(comparison: &Comparison, percent: f64) -> Hearing {
        let limit = percent / 100.0;
        let not_judged = (comparison.results.iter())
            .flat_map(|result| result.later.iter().flatten())
            .filter(|against| against.verdict == Verdict::AtLevelEnd || against.too_few_samples)
            .count();
        let (mut failing, beyond): (Vec<f64>, Vec<f64>) = (comparison.results.iter())
            .flat_map(|result| result.later.iter().flatten())
            .filter_map(|against| {
                if against.too_few_samples {
                    return None;
                }
                // Counts do not move: a count past the gate fails it.
                let reach = against.reach.or(against.counts.map(|_| 0.0))?;
                let margin = against.margin.unwrap_or(0.0);
                let past_gate = (limit.ln_1p() + reach.ln_1p() + margin).exp_m1();
                Some(past_gate.max(against.detectable.unwrap_or(0.0)))
            })
            .partition(|slowdown| *slowdown <= GATEABLE);
        failing.sort_by(f64::total_cmp);
        let tested = failing.len();
        let at = |share: f64| {
            (tested > 0).then(|| failing[((tested - 1) as f64 * share).round() as usize])
        };
        Hearing {
            tested,
            ungated: beyond.len() + not_judged,
            within_twice: failing
                .iter()
                .filter(|&&s| s <= 2.0 * limit + 1e-12)
                .count(),
            median: at(0.5),
            quietest_tenth: at(0.1),
            noisiest_tenth: at(0.9),
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
        let (clock, slower): (Vec<_>, Vec<_>) = (comparison.slower_than(percent).into_iter())
            .partition(|(name, _, _)| name == CYCLE_RESULT);
        let clock = (clock.into_iter())
            .map(|(_, side, ratio)| {
                let index = comparison.labels[1..].iter().position(|l| *l == side);
                let moved = index
                    .and_then(|i| comparison.clock_moves[i])
                    .map_or(0, |m| m.results);
                SlowerClock { side, ratio, moved }
            })
            .collect();
        let missing = (comparison.labels[1..].iter().zip(&comparison.tallies))
            .flat_map(|(side, tally)| {
                (tally.missing.iter())
                    .filter(|m| m.gated)
                    .map(move |m| (side.clone(), m.clone()))
            })
            .collect();
        Gate {
            percent,
            slower,
            clock,
            missing,
            unsteady: unsteady_past(comparison, percent),
            excused: comparison.excused,
            judged_nothing,
            baseline_runs: comparison.runs_per_side.first().copied().unwrap_or(0),
            hearing: Hearing::of(comparison, percent),
        }
    }

    /// Whether the gate fails: a result too slow, a clock too slow, a result missing, or
    /// nothing judged; a clock's move and missing results not where the user excused them.
    pub fn failed(&self) -> bool {
        !self.slower.is_empty()
            || !self.judged_nothing.is_empty()
            || (!self.clock.is_empty() && !self.excused.clock_moves)
            || (!self.missing.is_empty() && !self.excused.missing)
    }

    /// How many runs the baseline holds, and what the gate could hear with them: the
    /// slowdown at which the median result, the quietest tenth and the noisiest tenth would
    /// fail it.
    fn hearing_line(&self, what: &str, against: &str) -> String {
        let runs = self.baseline_runs;
        let held = format!(
            "{against} holds {runs} run{}",
            if runs == 1 { "" } else { "s" }
        );
        let ungated = match (self.hearing.ungated, runs) {
            (0, _) => String::new(),
            (n, 1) => format!(
                "; {n} {what}s cannot be gated from one run a side (their noise between runs \
                 is not known well enough to hear a change short of doubling, they lie at a \
                 cache level's end, or their samples are too few to call a change in their \
                 set): take several runs a side"
            ),
            (n, _) => format!(
                "; {n} {what}s cannot be gated from these runs (their noise between runs is \
                 not known well enough to hear a change short of doubling, or their samples \
                 are too few to call a change in their set): take more runs"
            ),
        };
        let Hearing {
            tested,
            within_twice,
            median: Some(median),
            quietest_tenth: Some(quietest),
            noisiest_tenth: Some(noisiest),
            ..
        } = self.hearing
        else {
            return format!("{held}{ungated}\n");
        };
        let percent = |share: f64| super::render::format_percent_rounded(share);
        format!(
            "{held}: a {what} fails this gate once it is slower by {}% and by its noise: at \
             {}% for the median of the {tested} {what}s gated, {}% for the quietest tenth, \
             {}% for the noisiest tenth; {within_twice} of them at {}% or less{ungated}\n",
            self.percent,
            percent(median),
            percent(quietest),
            percent(noisiest),
            self.percent * 2.0,
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
        text.push_str(&self.clock_text(against));
        text.push_str(&self.missing_text(what, against));
        if !self.slower.is_empty() {
            text.push_str(&format!(
                "{} slower than {against} by more than {percent}% (--fail-if-slower):\n",
                self.slower.len()
            ));
            for (name, side, ratio) in &self.slower {
                text.push_str(&format!("  {name} in {side}: {}\n", format_ratio(*ratio)));
            }
        }
        text.push_str(&self.unsteady_text(what, against));
        if self.slower.is_empty() && !self.failed() {
            let judged = if self.unsteady.is_empty() {
                ""
            } else {
                " judged"
            };
            text.push_str(&format!(
                "no {what}{judged} is more than {percent}% slower than {against}\n"
            ));
        }
        text
    }

    /// A line naming the results that read slower past the gate but could not be judged
    /// (the first with its ratio and cause, and how many more); empty when none.
    fn unsteady_text(&self, what: &str, against: &str) -> String {
        let Some(first) = self.unsteady.first() else {
            return String::new();
        };
        let more = match self.unsteady.len() - 1 {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        format!(
            "{} read more than {}% slower than {against} but could not be judged, so the \
             gate cannot say they are not: {} in {}: {}, {}{more}; rerun where the machine \
             holds still, or take several runs a side\n",
            plural(self.unsteady.len(), what),
            self.percent,
            first.name,
            first.side,
            format_ratio(first.ratio),
            first.verdict,
        )
    }

    /// A line per later side whose core clock ran slower past the gate: the cause of a
    /// failure, or a move `--accept-clock-moves` took as noise.
    fn clock_text(&self, against: &str) -> String {
        let percent = self.percent;
        (self.clock.iter())
            .map(|clock| {
                let moved = plural(clock.moved, "result");
                let words = clock_words(clock.ratio);
                if self.excused.clock_moves {
                    format!(
                        "--accept-clock-moves: the core clock of {} {words} than {against}'s \
                         (its cycle {}), beyond its noise, taken as noise: {moved} on the core \
                         clock judged in cycles\n",
                        clock.side,
                        format_ratio(clock.ratio)
                    )
                } else {
                    format!(
                        "the core clock of {} {words} than {against}'s (its cycle {}), beyond \
                         its noise and past {percent}% (--fail-if-slower); {moved} on the core \
                         clock moved with it, judged in time: the machine ran slower, whatever \
                         the code did (--accept-clock-moves takes a clock's move as noise)\n",
                        clock.side,
                        format_ratio(clock.ratio)
                    )
                }
            })
            .collect()
    }

    /// A line per later side and probe whose results the baseline gated and the side lacks,
    /// with the probe's reason: a failure, or what `--allow-missing` accepted.
    fn missing_text(&self, what: &str, against: &str) -> String {
        let mut groups: Vec<(&str, &str, String, Vec<&str>)> = Vec::new();
        for (side, missing) in &self.missing {
            let why = missing.why.to_string();
            let group = groups
                .iter()
                .position(|(s, p, w, _)| *s == side && *p == missing.probe && *w == why);
            match group {
                Some(g) => groups[g].3.push(&missing.name),
                None => groups.push((side, &missing.probe, why, vec![&missing.name])),
            }
        }
        (groups.into_iter())
            .map(|(side, probe, why, names)| {
                let shown = match names.as_slice() {
                    [one] => one.to_string(),
                    [first, rest @ ..] => format!("{first} and {} more", rest.len()),
                    [] => String::new(),
                };
                let lacks = format!(
                    "{side} lacks {} of {against} ({shown}): {probe} {why}",
                    plural(names.len(), what)
                );
                if self.excused.missing {
                    format!("--allow-missing: {lacks}; not failing the gate\n")
                } else {
                    format!(
                        "{lacks}; the gate fails (--allow-missing accepts results a run \
                         lacks)\n"
                    )
                }
            })
            .collect()
    }
}

/// The results of `comparison` that a later side reads slower than `percent` by their
/// medians but that were not comparable, slowest first.
fn unsteady_past(comparison: &Comparison, percent: f64) -> Vec<Unjudged> {
    let limit = 1.0 + percent / 100.0;
    let mut found: Vec<Unjudged> = (comparison.labels[1..].iter().enumerate())
        .flat_map(|(index, side)| {
            (comparison.results.iter()).filter_map(move |result| {
                let against = result.later[index].as_ref()?;
                (matches!(against.verdict, Verdict::NotComparable { .. }) && against.ratio > limit)
                    .then(|| Unjudged {
                        name: result.name.clone(),
                        side: side.clone(),
                        ratio: against.ratio,
                        verdict: against.verdict.label(comparison.threshold),
                    })
            })
        })
        .collect();
    found.sort_by(|a, b| b.ratio.total_cmp(&a.ratio));
    found
}
