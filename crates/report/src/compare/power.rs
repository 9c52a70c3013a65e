//! The comparison's power and false alarms, measured on runs made up with known noise:
//! every result has its own between-run standard deviation (0.3% to 3%, some sweep points
//! 10%), the runs drift together, one sweep point flips between two regimes, and changes
//! of a known size are planted.
//!
//! - Unchanged code (A/A): at least 99% of results "same" (the flipping point aside), and
//!   the gate never fires.
//! - A change of 3 times a primary result's between-run standard deviation is called in at
//!   least 90% of trials with 3 runs a side (93% when this was written). With 1 run a side
//!   of the default 3 rounds, 7 times (92%; 5 times: 70%, 6 times: 83%: one run a side
//!   leaves each result's noise within a run 2 degrees of freedom once each run's level and
//!   each round's are taken out, and a set whose noise varies tenfold lends it few more);
//!   with 1 run a side of 6 rounds (`--rounds 6`, 10 degrees), 5 times (91%). These trials
//!   take a threshold of 0, so that the noise alone decides: with the default 2%, a change
//!   under 2% is "same" by design whatever the noise.
//! - The flipping point is said to run in two regimes with 3 runs a side (9 rounds a
//!   side), and with 1 run a side of 6 rounds; with 1 run a side of 3 its 3 rounds cannot
//!   tell (see `judge`), but it never fails the gate alone.

use super::*;
use crate::test_records::{probe, record};
use latlab_engine::config_text::DEFAULT_ROUNDS;
use latlab_engine::model::ProbeOutcome;

/// Made-up noise: splitmix64, and normal deviates by Box–Muller.
struct Noise(u64);

impl Noise {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// Between-run standard deviations (of a run's median, as a share) the results cycle
/// through.
const NOISE: [f64; 6] = [0.003, 0.005, 0.008, 0.012, 0.02, 0.03];
const PRIMARY: usize = 24;
const SWEEP: usize = 96;
/// The sweep point that flips between two regimes, 35% apart, round by round.
const EDGE: usize = 40;
const SAMPLES_PER_ROUND: usize = 10;

/// One result of the made-up probe set: its name, base figure, between-run standard
/// deviation, and whether it is a sweep point.
struct Subject {
    name: String,
    base_ns: f64,
    sd: f64,
    sweep: bool,
}

fn subjects() -> Vec<Subject> {
    let primary = (0..PRIMARY).map(|i| Subject {
        name: format!("p{}/figure-{i}", i / (PRIMARY / 4)),
        base_ns: 1000.0 * (1 + i) as f64,
        sd: NOISE[i % NOISE.len()],
        sweep: false,
    });
    let sweep = (0..SWEEP).map(|i| Subject {
        name: format!("s/read/{}KiB", 4 * (i + 1)),
        base_ns: 2000.0 + 100.0 * i as f64,
        // A few volatile points, as near a cache's edge.
        sd: if i % 16 == 15 {
            0.10
        } else {
            NOISE[i % NOISE.len()]
        },
        sweep: true,
    });
    primary.chain(sweep).collect()
}

/// How far all results move together between runs (a frequency, a neighbour's load), as
/// a standard deviation.
const DRIFT: f64 = 0.003;

impl Subject {
    /// Its between-run standard deviation: its own and the drift.
    fn between_runs_sd(&self) -> f64 {
        self.sd.hypot(DRIFT)
    }
}

/// One run of `rounds_per_run` rounds: each result's figure moves by the run's drift
/// (common to all), its own offset (between runs) and each round's (within the run), both
/// of `sd × √(3/4)` so that a run's median of three rounds moves by about `sd` besides the
/// drift; `change` multiplies the figures of the results it names.
fn run(
    subjects: &[Subject],
    noise: &mut Noise,
    change: &dyn Fn(usize) -> f64,
    rounds_per_run: usize,
) -> RunRecord {
    let drift = DRIFT * noise.normal();
    let mut primary = Vec::new();
    let mut sweep = Vec::new();
    for (i, subject) in subjects.iter().enumerate() {
        let part = subject.sd * 0.75f64.sqrt();
        let offset = drift + part * noise.normal();
        let mut rounds = Vec::new();
        let mut samples = Vec::new();
        for _ in 0..rounds_per_run {
            let regime = if i == PRIMARY + EDGE && noise.uniform() < 0.5 {
                1.35
            } else {
                1.0
            };
            let round =
                subject.base_ns * change(i) * regime * (offset + part * noise.normal()).exp();
            let taken: Vec<f64> = (0..SAMPLES_PER_ROUND)
                .map(|_| round * (0.002 * noise.normal()).exp())
                .collect();
            rounds.push(median_in_place(&mut taken.clone()));
            samples.extend(taken);
        }
        let mut result = BenchResult::derived(&subject.name, "test", samples, vec![], vec![])
            .expect("samples were made");
        result.round_medians_ns = rounds;
        if subject.sweep {
            result.kind = ResultKind::TimedLoop;
            result = result.with_parameter(
                latlab_engine::names::key::WORKING_SET_BYTES,
                4096 * (i - PRIMARY + 1) as u64,
            );
            sweep.push(result);
        } else {
            primary.push(result);
        }
    }
    // The primary results in four probes of six, as real probes have a few each.
    let mut probes: Vec<ProbeOutcome> = (primary.chunks(PRIMARY / 4).enumerate())
        .map(|(i, results)| probe(&format!("p{i}"), results.to_vec()))
        .collect();
    probes.push(probe("s", sweep));
    record(probes)
}

fn side(label: &str, runs: Vec<RunRecord>) -> Side {
    Side {
        label: label.into(),
        runs,
    }
}

/// Compares `runs` made-up runs a side of `rounds` rounds each, the later side changed by
/// `change`.
fn trial(
    seed: u64,
    runs: usize,
    rounds: usize,
    change: &dyn Fn(usize) -> f64,
    threshold: f64,
) -> Comparison {
    let subjects = subjects();
    let mut noise = Noise(seed);
    let first = (0..runs)
        .map(|_| run(&subjects, &mut noise, &|_| 1.0, rounds))
        .collect();
    let later = (0..runs)
        .map(|_| run(&subjects, &mut noise, change, rounds))
        .collect();
    let declared = latlab_probes::presentations();
    Comparison::of_sides(
        &[side("A", first), side("B", later)],
        threshold,
        &declared,
        NoiseTables::shipped(),
    )
}

fn verdict_of(comparison: &Comparison, row: usize) -> Verdict {
    comparison.results[row].later[0].as_ref().unwrap().verdict
}

#[test]
fn unchanged_code_is_the_same_and_never_fails_the_gate() {
    for (runs, rounds) in [(1, DEFAULT_ROUNDS), (3, DEFAULT_ROUNDS), (1, 6)] {
        let (mut same, mut judged, mut regimes) = (0, 0, 0);
        for seed in 0..30 {
            let comparison = trial(
                1000 * runs as u64 + seed,
                runs,
                rounds,
                &|_| 1.0,
                DEFAULT_THRESHOLD,
            );
            assert_eq!(
                comparison.slower_than(5.0),
                vec![],
                "seed {seed}, {runs} runs of {rounds} rounds"
            );
            for row in (0..comparison.results.len()).filter(|&row| row != PRIMARY + EDGE) {
                if matches!(verdict_of(&comparison, row), Verdict::Same { .. }) {
                    same += 1;
                }
                judged += 1;
            }
            if matches!(
                verdict_of(&comparison, PRIMARY + EDGE),
                Verdict::TwoRegimes { .. }
            ) {
                regimes += 1;
            }
        }
        let share = same as f64 / judged as f64;
        assert!(
            share >= 0.99,
            "{runs} runs a side of {rounds} rounds: {share} same"
        );
        if runs * rounds >= 6 {
            assert!(regimes >= 27, "two regimes in {regimes} trials of 30");
        }
    }
}

#[test]
fn a_change_of_a_few_standard_deviations_is_found() {
    let cases = [
        (3, DEFAULT_ROUNDS, 3.0),
        (1, DEFAULT_ROUNDS, 7.0),
        (1, 6, 5.0),
    ];
    for (runs, rounds, times) in cases {
        let (mut called, mut planted) = (0, 0);
        for seed in 0..30u64 {
            // A quarter of the primary results, a different quarter each trial.
            let changed = |i: usize| i < PRIMARY && (i + seed as usize).is_multiple_of(4);
            let subjects = subjects();
            let change = |i: usize| {
                if changed(i) {
                    (times * subjects[i].between_runs_sd()).exp()
                } else {
                    1.0
                }
            };
            let comparison = trial(7000 * runs as u64 + seed, runs, rounds, &change, 0.0);
            for row in (0..PRIMARY).filter(|&i| changed(i)) {
                planted += 1;
                if matches!(verdict_of(&comparison, row), Verdict::Slower { .. }) {
                    called += 1;
                }
            }
        }
        let power = called as f64 / planted as f64;
        assert!(
            power >= 0.9,
            "{runs} runs a side of {rounds} rounds, {times} SD: called {called} of {planted}"
        );
    }
}
