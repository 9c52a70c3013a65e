//! A comparison that knows the core clock moved. Each run measures its core's cycle
//! (`cpu.frequency/cycle`); a guest's clock moves between sittings (an Emerald Rapids guest
//! read 0.368–0.393 ns in three runs and 0.375–0.412 ns in three more, minutes later), and
//! every figure that counts core cycles moves with it. Judged in time, each of those was
//! called slower on its own.
//!
//! Where the later side's rounds of the cycle lie apart from the first side's (a t test
//! at 5%) by more than the comparison's threshold, the clock moved by that step. A result
//! that moved the same way and at least half as far follows the clock: its later side is
//! judged in cycles (its figures less the clock's step) by the same tests as every result
//! ([`super::judge`]). One the same there moved with the clock: its verdict says so, and
//! the side's summary says once how far the clock moved and how many moved with it. One
//! whose change goes beyond the clock's is still slower or faster.

use super::judge::{mean, past_threshold};
use super::stats::{LogDifference, pooled_variance};
use super::{ClockMove, ComparedResult, SIGNIFICANCE, SameBecause, Tests, Verdict};
use latlab_engine::cycle::CYCLE_RESULT;

/// The later side's clock step, and the results judged in cycles because of it.
pub(super) struct Followers {
    /// The logarithm of the later side's cycle over the first's.
    step: f64,
    /// The rows judged in cycles, the clock's own among them.
    rows: Vec<usize>,
    /// The clock's own row.
    clock_row: usize,
}

/// Where later side `index`'s core clock moved past `threshold`: every result that follows
/// it shifted into cycles, ready for the side's tests.
pub(super) fn into_cycles(
    results: &[ComparedResult],
    tests: &mut [Vec<Option<Tests>>],
    index: usize,
    threshold: f64,
) -> Option<Followers> {
    let clock_row = results.iter().position(|r| r.name == CYCLE_RESULT)?;
    let step = clock_step(tests[clock_row][index].as_ref()?, threshold)?;
    let mut rows = Vec::new();
    for (row, tested) in tests.iter_mut().enumerate() {
        let Some(t) = tested[index].as_mut() else {
            continue;
        };
        let Some(moved) = t.difference() else {
            continue;
        };
        // The same way as the clock, and nearer its step than none.
        if moved / step > 0.5 {
            t.shift_later(-step);
            rows.push(row);
        }
    }
    Some(Followers {
        step,
        rows,
        clock_row,
    })
}

/// The followers' verdicts once judged: each the same in cycles moved with the clock, and
/// says so. The clock's ratio and how many results (the clock's own left out) moved with
/// it.
pub(super) fn said(
    results: &mut [ComparedResult],
    followers: &Followers,
    index: usize,
) -> ClockMove {
    let ratio = followers.step.exp();
    let mut moved = 0;
    for &row in &followers.rows {
        let Some(against) = results[row].later[index].as_mut() else {
            continue;
        };
        if let Verdict::Same { p, .. } = against.verdict {
            against.verdict = Verdict::Same {
                p,
                why: SameBecause::FollowsClock { clock_ratio: ratio },
            };
            moved += usize::from(row != followers.clock_row);
        }
    }
    ClockMove {
        ratio,
        results: moved,
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
