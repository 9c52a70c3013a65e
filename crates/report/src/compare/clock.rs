//! A comparison that knows the core clock moved, and forgives only what runs on it. Each run
//! measures its core's cycle (`cpu.frequency/cycle`); a guest's clock moves between sittings,
//! and every figure that counts the core's cycles moves with it.
//!
//! - **What runs on the clock.** A result is on the core clock where its probe declares so
//!   ([`latlab_engine::presentation::Presentation::on_core_clock`]: a call, a branch, an L1
//!   or L2 hit), or where its own runs show it: within each side, across runs whose clock
//!   moved, its figure follows the clock's with a slope past one half, one-sided at 5%
//!   ([`follows_clock`]), so that its cycles hold still while its time moves. Nothing is
//!   ever put on the clock for having moved with it in the comparison at hand: main memory,
//!   the shared caches, system calls, IPC, files and the scheduler are judged in time unless
//!   a side's runs show otherwise.
//! - **When the clock moved.** Where the later side's rounds of the cycle lie apart from the
//!   first side's (a t test at 5%) by more than the comparison's threshold, the clock moved
//!   by that step ([`clock_step`]). The clock's own result is judged in time, like any other,
//!   and never against itself.
//! - **Within its noise.** Where the clock's own verdict in time is the same (its move lies
//!   within what its noise between runs allows: a table of the machine, the sides' runs, or
//!   the runs' movement beyond their rounds), its move is the machine's usual drift: each
//!   result on the clock that moved the same way and at least half as far is judged in
//!   cycles, its later figures less the clock's step ([`shift_into_cycles`]). One the same there
//!   says so, and the side's summary says once how far the clock moved and how many moved
//!   with it.
//! - **Beyond its noise.** A clock called slower or faster excuses nothing: every result is
//!   judged in time, the clock's own too, and a gate fails on a clock slower past its
//!   percentage, naming it as the cause (`super::gate`). `--accept-clock-moves` takes such a
//!   move as noise (a shared machine's CI): the results on the clock are then judged in
//!   cycles as within its noise, and the report says the option was used.

use super::judge::past_threshold;
use super::{ClockMove, ComparedResult, Lookup, SIGNIFICANCE, SameBecause, Side, Tests, Verdict};
use crate::stats::{LogDifference, follows_clock, mean, pooled_variance};
use latlab_engine::cycle::CYCLE_RESULT;
use latlab_engine::presentation::Presentations;

/// Where later side `index`'s core clock moved past `threshold`: its step in logarithms, the
/// clock's row, and the rows on the clock that moved the same way at least half as far.
pub(super) struct Moved {
    step: f64,
    clock_row: usize,
    followers: Vec<usize>,
}

/// Which rows of `results` run on the core clock: declared by their probe, or shown by the
/// runs of the `sides` ([`shown_by_runs`]). The clock's own row never is.
pub(super) fn on_clock(
    results: &[ComparedResult],
    sides: &[Side],
    lookup: &Lookup,
    declared: &Presentations,
) -> Vec<bool> {
    (results.iter())
        .map(|result| {
            result.name != CYCLE_RESULT
                && (declared.on_core_clock(&result.name)
                    || shown_by_runs(sides, lookup, &result.name))
        })
        .collect()
}

/// Whether the runs of `sides` show result `name` following the core clock
/// ([`follows_clock`], each side a group: the move between the sides is the one being
/// judged).
fn shown_by_runs(sides: &[Side], lookup: &Lookup, name: &str) -> bool {
    let groups: Vec<Vec<(f64, f64)>> = (sides.iter())
        .map(|side| {
            (side.runs.iter())
                .filter_map(|run| {
                    let clock = lookup.result(run, CYCLE_RESULT)?.summary.median;
                    let figure = lookup.result(run, name)?.summary.median;
                    (clock > 0.0 && figure > 0.0 && clock.is_finite() && figure.is_finite())
                        .then(|| (clock.ln(), figure.ln()))
                })
                .collect()
        })
        .collect();
    follows_clock(&groups)
}

/// Whether later side `index`'s core clock moved past `threshold`, and which rows of those
/// `on_clock` moved with it: the same way, and at least half as far, in time.
pub(super) fn moved(
    results: &[ComparedResult],
    tests: &[Vec<Option<Tests>>],
    on_clock: &[bool],
    index: usize,
    threshold: f64,
) -> Option<Moved> {
    let clock_row = results.iter().position(|r| r.name == CYCLE_RESULT)?;
    let step = clock_step(tests[clock_row][index].as_ref()?, threshold)?;
    let followers = (tests.iter().enumerate())
        .filter(|(row, _)| on_clock[*row])
        .filter(|(_, tested)| {
            (tested[index].as_ref())
                .and_then(Tests::difference)
                .is_some_and(|moved| moved / step > 0.5)
        })
        .map(|(row, _)| row)
        .collect();
    Some(Moved {
        step,
        clock_row,
        followers,
    })
}

impl Moved {
    /// Whether the clock's own verdict in time, once judged, calls its move the same: within
    /// its noise between runs.
    pub(super) fn within_noise(&self, results: &[ComparedResult], index: usize) -> bool {
        (results[self.clock_row].later[index].as_ref())
            .is_some_and(|against| matches!(against.verdict, Verdict::Same { .. }))
    }

    /// The followers shifted into cycles (their later side less the clock's step), ready for
    /// the side's tests again. The clock's own row is not among them.
    pub(super) fn shift_into_cycles(&self, tests: &mut [Vec<Option<Tests>>], index: usize) {
        for &row in &self.followers {
            if let Some(t) = tests[row][index].as_mut() {
                t.shift_later(-self.step);
            }
        }
    }

    /// What the clock's move came to for side `index`: with the followers judged in cycles,
    /// each the same there says so and is counted; judged in time, the followers are counted
    /// as having moved with it.
    pub(super) fn said(
        &self,
        results: &mut [ComparedResult],
        index: usize,
        (within_noise, in_cycles): (bool, bool),
    ) -> ClockMove {
        // Said as the clock's own row says it (the ratio of its medians), one figure in
        // the table, the summary and the gate; the shift itself is the rounds' step.
        let ratio = (results[self.clock_row].later[index].as_ref())
            .map(|against| against.ratio)
            .filter(|ratio| ratio.is_finite())
            .unwrap_or(self.step.exp());
        let mut moved = 0;
        for &row in &self.followers {
            let Some(against) = results[row].later[index].as_mut() else {
                continue;
            };
            if !in_cycles {
                moved += 1;
            } else if let Verdict::Same { p, .. } = against.verdict {
                against.verdict = Verdict::Same {
                    p,
                    why: SameBecause::FollowsClock { clock_ratio: ratio },
                };
                moved += 1;
            }
        }
        ClockMove {
            ratio,
            results: moved,
            within_noise,
            in_cycles,
        }
    }
}

/// How far the later side's cycle moved from the first's, in logarithms: where its rounds
/// (of every run) lie apart by a t test at [`SIGNIFICANCE`] and by more than `threshold`.
fn clock_step(cycle: &Tests, threshold: f64) -> Option<f64> {
    let [first, later] = &cycle.sides_rounds;
    let variance = pooled_variance(&[first, later])?;
    let step = LogDifference {
        difference: mean(later) - mean(first),
        standard_error: (variance.value * (1.0 / first.len() as f64 + 1.0 / later.len() as f64))
            .sqrt(),
        degrees: variance.degrees,
    };
    (step.p() < SIGNIFICANCE && past_threshold(&step, threshold)).then_some(step.difference)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cycle(first: &[f64], later: &[f64]) -> Tests {
        let logs = |ns: &[f64]| ns.iter().map(|x: &f64| x.ln()).collect::<Vec<f64>>();
        Tests {
            samples_p: 0.0,
            runs: [vec![logs(first)[0]], vec![logs(later)[0]]],
            rounds: Vec::new(),
            sides_rounds: [logs(first), logs(later)],
            figures: (first[0], later[0]),
            resolution: 0.0,
            within_resolution: false,
            sweep_point: false,
            at_level_end: false,
            prior: None,
            samples: [Vec::new(), Vec::new()],
        }
    }

    /// A clock 6% slower in every round moved; one whose rounds overlap, or that moved less
    /// than the threshold, did not.
    #[test]
    fn a_clock_moved_where_its_rounds_lie_apart_past_the_threshold() {
        let step = clock_step(&cycle(&[0.370, 0.372, 0.369], &[0.392, 0.394, 0.391]), 0.02);
        assert!((step.unwrap().exp() - 1.06).abs() < 0.005, "{step:?}");
        assert_eq!(
            clock_step(&cycle(&[0.37, 0.40, 0.36], &[0.39, 0.36, 0.41]), 0.02),
            None
        );
        assert_eq!(
            clock_step(
                &cycle(&[0.370, 0.3701, 0.3699], &[0.374, 0.3741, 0.3739]),
                0.02
            ),
            None
        );
    }
}
