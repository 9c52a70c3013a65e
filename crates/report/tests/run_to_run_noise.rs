//! The comparison's noise model on a noisy synthetic machine: runs that differ by a run
//! effect on each result (where its buffers and code landed), besides drift and jitter, as
//! real runs do, measured in rounds as `latlab run` measures them.

// A test reads and writes files as it pleases: the doors are for what latlab itself does.
#![allow(clippy::disallowed_methods)]
#![cfg(feature = "files")]

use latlab_engine::host::{Machine, Noise, SyntheticHost};
use latlab_engine::model::{BenchResult, ProbeOutcome, ProbeStatus, RunRecord, RunSettings};
use latlab_engine::rounds::ProbeRounds;
use latlab_engine::{Config, Runner};
use latlab_report::compare::stats::NoiseTables;
use latlab_report::compare::{Comparison, DEFAULT_THRESHOLD, Side, Verdict};
use std::sync::Arc;

fn outcome(results: Vec<BenchResult>) -> ProbeOutcome {
    ProbeOutcome {
        id: "noise".into(),
        method: "a noisy synthetic machine".into(),
        status: ProbeStatus::Ok,
        results,
        duration_ns: 0,
    }
}

/// Results in each synthetic run of the noise test: enough for the comparison to gauge
/// how far results move between runs.
const RESULTS: usize = 40;

/// A run of [`RESULTS`] benchmarks on a noisy synthetic machine (`seed` is the run),
/// measured in three rounds as `latlab run` measures them; `planted` results are slower
/// by `factor`.
fn noisy_run(seed: u64, planted: &[String], factor: f64) -> RunRecord {
    let names: Vec<String> = (0..RESULTS).map(|i| format!("noise/{i}")).collect();
    run_of(&names, seed, planted, factor, Machine::default())
}

/// A run of the benchmarks `names` on a noisy synthetic machine as `machine` says it is
/// (`seed` is the run), as [`noisy_run`] measures them.
fn run_of(
    names: &[String],
    seed: u64,
    planted: &[String],
    factor: f64,
    machine: Machine,
) -> RunRecord {
    let host: latlab_engine::SharedHost = Arc::new(SyntheticHost::noisy(Noise {
        seed,
        run_sd: 0.01,
        round_sd: 0.005,
        sample_sd: 0.01,
        planted: planted.iter().map(|name| (name.clone(), factor)).collect(),
        machine,
        ..Noise::default()
    }));
    let rounds = 3;
    let config = Config {
        samples: 15,
        rounds,
        ..Config::quick()
    };
    let mut runner = Runner::on(Arc::clone(&host), config);
    let mut measured: Option<ProbeRounds> = None;
    for _ in 0..rounds {
        let results = (names.iter())
            .map(|name| runner.bench(name, "nothing", || 1).unwrap())
            .collect();
        let round = outcome(results);
        match &mut measured {
            Some(rounds) => rounds.add(round),
            None => measured = Some(ProbeRounds::first(round)),
        }
    }
    let settings = RunSettings::uncontrolled("quick", runner.config(), rounds);
    let mut record = RunRecord::begin(host.as_ref(), settings, Vec::new());
    record.probes.push(measured.unwrap().outcome().clone());
    record.complete = true;
    record
}

/// (results called different, results compared) over `pairs` seeded pairs of runs.
fn called_different(pairs: u64, planted: &[String], factor: f64) -> (usize, usize) {
    let (mut different, mut compared) = (0, 0);
    for pair in 0..pairs {
        let runs = [
            ("A".to_string(), noisy_run(2 * pair, &[], 1.0)),
            ("B".to_string(), noisy_run(2 * pair + 1, planted, factor)),
        ];
        let comparison = Comparison::of(
            &runs,
            DEFAULT_THRESHOLD,
            &latlab_probes::presentations(),
            NoiseTables::shipped(),
        );
        for result in &comparison.results {
            if !planted.is_empty() && !planted.contains(&result.name) {
                continue;
            }
            let against = result.later[0].as_ref().unwrap();
            compared += 1;
            if matches!(
                against.verdict,
                Verdict::Slower { .. } | Verdict::Faster { .. }
            ) {
                different += 1;
            }
        }
    }
    (different, compared)
}

/// On a machine whose runs differ by a run effect on each result besides drift and
/// jitter (which no test on one run's samples can see), two runs of the same code are
/// called different for at most 1% of their results over 200 seeded pairs, and a
/// planted 10% slowdown of two results is found at least 95% of the time, of eight at
/// least 90%.
#[test]
fn run_to_run_noise_is_not_called_a_difference_and_a_planted_one_is() {
    let (false_positives, compared) = called_different(200, &[], 1.0);
    assert_eq!(compared, 200 * RESULTS);
    let rate = false_positives as f64 / compared as f64;
    eprintln!("A/A: {false_positives} of {compared} called different");
    assert!(
        rate <= 0.01,
        "{false_positives} of {compared} A/A results called different"
    );

    // Two of the forty, then eight (a fifth of the family): how far results move between
    // runs beyond their rounds is read at the median of the family, which the few that
    // changed move little.
    for (count, share) in [(2, 0.95), (8, 0.9)] {
        let planted: Vec<String> = (0..count).map(|i| format!("noise/{i}")).collect();
        let (found, compared) = called_different(200, &planted, 1.10);
        assert_eq!(compared, 200 * planted.len());
        let rate = found as f64 / compared as f64;
        eprintln!("a planted 10% on {count}: found in {found} of {compared}");
        assert!(
            rate >= share,
            "a planted 10% found in {found} of {compared}"
        );
    }
}

/// B's core clock ran 6% slower than A's, three runs a side. The results that follow the
/// clock (the `cpu.` family's, on the synthetic machine) moved with it: the comparison says
/// so once, judges them in cycles and calls none slower, nor fails a gate of 5% on one; the
/// results that do not follow it stay judged in time, and one slowed by 15% beyond the
/// clock is still slower.
#[test]
fn a_clock_that_moved_is_said_once_and_its_followers_are_judged_in_cycles() {
    let mut names = vec!["cpu.frequency/cycle".to_string()];
    names.extend((0..24).map(|i| format!("cpu.work/{i}")));
    names.extend((0..24).map(|i| format!("io.work/{i}")));
    let slower_clock = Machine {
        clock_factor: 1.06,
        ..Machine::default()
    };
    let beyond = vec!["cpu.work/0".to_string()];
    for pair in 0..10 {
        let seeds = |side: u64| (0..3).map(move |run| 6 * pair + 3 * side + run);
        let sides = [
            Side {
                label: "A".into(),
                runs: (seeds(0))
                    .map(|seed| run_of(&names, seed, &[], 1.0, Machine::default()))
                    .collect(),
            },
            Side {
                label: "B".into(),
                runs: (seeds(1))
                    .map(|seed| run_of(&names, seed, &beyond, 1.15, slower_clock))
                    .collect(),
            },
        ];
        let comparison = Comparison::of_sides(
            &sides,
            DEFAULT_THRESHOLD,
            &latlab_probes::presentations(),
            NoiseTables::default(),
        );
        let clock = comparison.clock_moves[0].expect("the clock moved");
        assert!((clock.ratio - 1.06).abs() < 0.02, "{clock:?}");
        assert!(
            clock.results >= 20,
            "only {} moved with the clock",
            clock.results
        );
        let slower: Vec<&str> = (comparison.results.iter())
            .filter(|r| matches!(r.later[0].as_ref().unwrap().verdict, Verdict::Slower { .. }))
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(slower, ["cpu.work/0"], "pair {pair}");
        let gate = latlab_report::compare::Gate::of(&comparison, 5.0);
        let failing: Vec<&str> = gate.slower.iter().map(|(n, _, _)| n.as_str()).collect();
        assert!(
            failing.iter().all(|name| *name == "cpu.work/0"),
            "pair {pair}: {failing:?}"
        );
        assert_eq!(
            comparison.summary_lines()[0].matches("core clock").count(),
            1,
            "{}",
            comparison.summary_lines()[0]
        );
    }
}
