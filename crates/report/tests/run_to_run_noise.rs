//! The comparison's noise model on a noisy synthetic machine: runs that differ by a run
//! effect on each result (where its buffers and code landed), besides drift and jitter, as
//! real runs do, measured in rounds as `latlab run` measures them.

// A test reads and writes files as it pleases: the doors are for what latlab itself does.
#![allow(clippy::disallowed_methods)]
#![cfg(feature = "files")]

use latlab_engine::host::{FigureModel, Machine, Noise, SyntheticHost};
use latlab_engine::model::{BenchResult, ProbeOutcome, ProbeStatus, RunRecord, RunSettings};
use latlab_engine::rounds::ProbeRounds;
use latlab_engine::{Config, Runner};
use latlab_probes::synthetic::MODEL;
use latlab_report::compare::{
    Comparison, DEFAULT_THRESHOLD, Excused, Gate, SameBecause, Side, Verdict,
};
use latlab_report::stats::NoiseTables;
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

/// The probes' model of the synthetic machine, with `cpu.work/…` on the core clock too
/// though no probe declares it: results whose runs show them on the clock.
#[derive(Debug)]
struct WorkOnTheClock;

impl FigureModel for WorkOnTheClock {
    fn figure_ns(&self, machine: &Machine, name: &str, by_name: f64) -> f64 {
        match name.starts_with("cpu.work/") {
            true => by_name * machine.clock_factor,
            false => MODEL.figure_ns(machine, name, by_name),
        }
    }

    fn placement_rules(&self, name: &str) -> bool {
        MODEL.placement_rules(name)
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
    let host: latlab_engine::SharedHost = Arc::new(
        SyntheticHost::noisy(Noise {
            seed,
            run_sd: 0.01,
            round_sd: 0.005,
            sample_sd: 0.01,
            planted: planted.iter().map(|name| (name.clone(), factor)).collect(),
            machine,
            ..Noise::default()
        })
        .with_model(&WorkOnTheClock),
    );
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

/// The names of the clock tests' runs: the core's cycle, the four results of `cpu.call` and
/// `cpu.branch` whose probes declare them on the core clock, main memory (declared on no
/// clock), and forty results of no probe, which the synthetic machine keeps off the clock.
fn clock_names() -> Vec<String> {
    let mut names: Vec<String> = [
        "cpu.frequency/cycle",
        "cpu.call/empty",
        "cpu.branch/random",
        "cpu.branch/predictable",
        "cpu.branch/mispredict",
        "mem.latency/level/DRAM",
    ]
    .map(String::from)
    .to_vec();
    names.extend((0..40).map(|i| format!("io.work/{i}")));
    names
}

/// A side of one run of `names` per clock factor in `clocks`, seeded from `seed`, with
/// `planted` results slower by `factor`.
fn side_of(
    label: &str,
    names: &[String],
    (seed, clocks): (u64, &[f64]),
    planted: &[String],
    factor: f64,
) -> Side {
    Side {
        label: label.into(),
        runs: (clocks.iter().enumerate())
            .map(|(run, &clock_factor)| {
                let machine = Machine {
                    clock_factor,
                    ..Machine::default()
                };
                run_of(names, seed + run as u64, planted, factor, machine)
            })
            .collect(),
    }
}

fn compared(sides: &[Side], excused: Excused) -> Comparison {
    Comparison::excusing(
        sides,
        DEFAULT_THRESHOLD,
        &latlab_probes::presentations(),
        NoiseTables::default(),
        excused,
    )
}

fn verdict<'c>(comparison: &'c Comparison, name: &str) -> &'c Verdict {
    let result = (comparison.results.iter()).find(|r| r.name == name);
    &result.unwrap().later[0].as_ref().unwrap().verdict
}

/// Three runs a side whose core clock moves from run to run (±5%), B's 9% slower on the
/// whole: within what the sides' own runs show the clock moves, so the clock's own result is
/// the same in time, and the results whose runs follow the clock (those the probes declare
/// on it, and `cpu.work`, shown by its runs though no probe declares it) are judged in
/// cycles, said once; the rest stay in time, and one slowed by 15% beyond the clock is
/// still slower.
#[test]
fn a_clock_within_its_noise_forgives_the_results_its_runs_show_on_it() {
    let mut names = clock_names();
    names.extend((0..24).map(|i| format!("cpu.work/{i}")));
    let beyond = vec!["cpu.work/0".to_string()];
    for pair in 0..6 {
        let sides = [
            side_of("A", &names, (6 * pair, &[1.0, 1.06, 0.95]), &[], 1.0),
            side_of(
                "B",
                &names,
                (6 * pair + 3, &[1.09, 1.15, 1.04]),
                &beyond,
                1.15,
            ),
        ];
        let comparison = compared(&sides, Excused::default());
        let clock = comparison.clock_moves[0].expect("the clock moved");
        assert!(
            clock.within_noise && clock.in_cycles,
            "pair {pair}: {clock:?}"
        );
        assert!(
            matches!(verdict(&comparison, "cpu.frequency/cycle"), Verdict::Same { why, .. }
                if !matches!(why, SameBecause::FollowsClock { .. })),
            "pair {pair}: the clock judged against itself"
        );
        let verdicts: Vec<String> = (comparison.results.iter())
            .filter(|r| r.name.starts_with("cpu."))
            .map(|r| format!("{} {:?}", r.name, r.later[0].as_ref().unwrap().verdict))
            .collect();
        assert!(clock.results >= 12, "pair {pair}: {clock:?} {verdicts:#?}");
        let slower: Vec<&str> = (comparison.results.iter())
            .filter(|r| matches!(r.later[0].as_ref().unwrap().verdict, Verdict::Slower { .. }))
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(slower, ["cpu.work/0"], "pair {pair}");
        for io in (comparison.results.iter()).filter(|r| r.name.starts_with("io.")) {
            assert!(
                !matches!(
                    io.later[0].as_ref().unwrap().verdict,
                    Verdict::Same {
                        why: SameBecause::FollowsClock { .. },
                        ..
                    }
                ),
                "pair {pair}: {} was forgiven by a clock it does not run on",
                io.name
            );
        }
        let gate = Gate::of(&comparison, 5.0);
        assert!(gate.clock.is_empty(), "pair {pair}: {:?}", gate.clock);
        assert_eq!(
            comparison.summary_lines()[0].matches("core clock").count(),
            2,
            "{}",
            comparison.summary_lines()[0]
        );
    }
}

/// One run a side, B's clock 15% slower and main memory 25% slower: main memory runs on no
/// core clock and is called slower, whether or not the clock's move is taken as noise; the
/// clock's own result is slower in time, never the same against itself; the gate fails
/// naming the clock as the cause, and under `--accept-clock-moves` fails on main memory
/// alone and says the option was used.
#[test]
fn main_memory_beside_a_moving_clock_is_judged_in_time() {
    let names = clock_names();
    let dram = vec!["mem.latency/level/DRAM".to_string()];
    for pair in 0..6 {
        let sides = [
            side_of("A", &names, (2 * pair, &[1.0]), &[], 1.0),
            side_of("B", &names, (2 * pair + 1, &[1.15]), &dram, 1.25),
        ];
        for excused in [
            Excused::default(),
            Excused {
                clock_moves: true,
                ..Excused::default()
            },
        ] {
            let comparison = compared(&sides, excused);
            let clock = comparison.clock_moves[0].expect("the clock moved");
            assert!(!clock.within_noise, "pair {pair}: {clock:?}");
            assert_eq!(clock.in_cycles, excused.clock_moves, "pair {pair}");
            assert!(
                matches!(
                    verdict(&comparison, "mem.latency/level/DRAM"),
                    Verdict::Slower { .. }
                ),
                "pair {pair}, {excused:?}: {:?}",
                verdict(&comparison, "mem.latency/level/DRAM")
            );
            assert!(
                matches!(
                    verdict(&comparison, "cpu.frequency/cycle"),
                    Verdict::Slower { .. }
                ),
                "pair {pair}: the clock judged against itself"
            );
            let gate = Gate::of(&comparison, 5.0);
            assert!(gate.failed(), "pair {pair}");
            let text = gate.text("result", "A");
            let failing: Vec<&str> = gate.slower.iter().map(|(n, _, _)| n.as_str()).collect();
            assert!(failing.contains(&"mem.latency/level/DRAM"), "{text}");
            assert_eq!(gate.clock.len(), 1, "{text}");
            if excused.clock_moves {
                assert!(
                    text.contains("--accept-clock-moves: the core clock of B ran 1"),
                    "{text}"
                );
                assert!(!failing.iter().any(|n| n.starts_with("cpu.")), "{text}");
            } else {
                assert!(
                    text.starts_with("A holds 1 run")
                        && text.contains("\nthe core clock of B ran 1"),
                    "{text}"
                );
                assert!(text.contains("beyond its noise and past 5%"), "{text}");
            }
        }
    }
}

/// A machine 1.5 times slower in every `cpu.` figure, its clock's included: the gate of 5%
/// fails, naming the clock and each result on it, and no result is the same in cycles.
#[test]
fn a_uniformly_slower_machine_fails_the_gate_on_its_clock() {
    let names = clock_names();
    let sides = [
        side_of("A", &names, (1, &[1.0]), &[], 1.0),
        side_of("B", &names, (2, &[1.5]), &[], 1.0),
    ];
    let comparison = compared(&sides, Excused::default());
    let gate = Gate::of(&comparison, 5.0);
    let text = gate.text("result", "A");
    assert!(gate.failed(), "{text}");
    assert!(text.contains("the core clock of B ran 3"), "{text}");
    assert!((gate.clock[0].ratio - 1.5).abs() < 0.05, "{text}");
    assert!(
        text.contains("4 results on the core clock moved with it"),
        "{text}"
    );
    assert!(text.contains("4 slower than A by more than 5%"), "{text}");
    for result in &comparison.results {
        assert!(
            !matches!(
                result.later[0].as_ref().unwrap().verdict,
                Verdict::Same {
                    why: SameBecause::FollowsClock { .. },
                    ..
                }
            ),
            "{} same in cycles",
            result.name
        );
    }
}

/// A probe that crashed in B leaves its results missing: the gate fails, naming them and the
/// probe's reason; `--allow-missing` accepts them, and the gate says it did.
#[test]
fn a_failed_probe_fails_the_gate_by_name() {
    let names = clock_names();
    let crashed = |run: &mut RunRecord| {
        let noise = &mut run.probes[0];
        let (lost, kept): (Vec<BenchResult>, Vec<BenchResult>) =
            (noise.results.drain(..)).partition(|r| r.name.starts_with("cpu.branch/"));
        noise.results = kept;
        run.probes.push(ProbeOutcome {
            id: "cpu.branch".into(),
            status: ProbeStatus::Ok,
            results: lost,
            ..outcome(Vec::new())
        });
    };
    let mut a = side_of("A", &names, (1, &[1.0]), &[], 1.0);
    let mut b = side_of("B", &names, (2, &[1.0]), &[], 1.0);
    crashed(&mut a.runs[0]);
    crashed(&mut b.runs[0]);
    let probe = b.runs[0].probes.last_mut().unwrap();
    probe.status = ProbeStatus::Failed {
        reason: "killed by SIGSEGV".into(),
    };
    probe.results.clear();
    let sides = [a, b];
    for allow in [false, true] {
        let excused = Excused {
            missing: allow,
            ..Excused::default()
        };
        let gate = Gate::of(&compared(&sides, excused), 10.0);
        let text = gate.text("result", "A");
        assert_eq!(gate.failed(), !allow, "{text}");
        assert_eq!(gate.missing.len(), 3, "{text}");
        assert!(
            text.contains("B lacks 3 results of A (cpu.branch/random and 2 more): cpu.branch failed: killed by SIGSEGV"),
            "{text}"
        );
        assert_eq!(text.contains("--allow-missing: B lacks"), allow, "{text}");
        assert_eq!(
            text.contains("no result is more than 10% slower"),
            allow,
            "{text}"
        );
    }
}

/// What a probe that ended well says it left out to keep the run within its time budget is
/// no failure of the gate (the run measured what its budget allowed); the same result gone
/// with no word from its probe is (renamed, or no longer measured). Before: an unchanged
/// rerun whose ipc.throughput left out two points for its budget failed the gate.
#[test]
fn a_result_left_out_for_the_budget_does_not_fail_the_gate() {
    let names = clock_names();
    let split = |run: &mut RunRecord| {
        let noise = &mut run.probes[0];
        let (work, kept): (Vec<BenchResult>, Vec<BenchResult>) =
            (noise.results.drain(..)).partition(|r| r.name.starts_with("io.work/"));
        noise.results = kept;
        run.probes.push(ProbeOutcome {
            id: "io.work".into(),
            results: work,
            ..outcome(Vec::new())
        });
    };
    let mut a = side_of("A", &names, (1, &[1.0]), &[], 1.0);
    let mut b = side_of("B", &names, (2, &[1.0]), &[], 1.0);
    split(&mut a.runs[0]);
    split(&mut b.runs[0]);
    let probe = b.runs[0].probes.last_mut().unwrap();
    probe.results.retain(|r| r.name != "io.work/7");
    probe.results[0]
        .warnings
        .push(latlab_engine::Warning::PartSkipped {
            part: "io.work points 7".into(),
            reason: "left out to keep the run within its time budget".into(),
        });
    let sides = [a.clone(), b.clone()];
    let gate = Gate::of(&compared(&sides, Excused::default()), 10.0);
    assert!(gate.missing.is_empty(), "{}", gate.text("result", "A"));
    assert!(!gate.failed(), "{}", gate.text("result", "A"));
    let probe = b.runs[0].probes.last_mut().unwrap();
    probe.results.retain(|r| r.name != "io.work/8");
    let gate = Gate::of(&compared(&[a, b], Excused::default()), 10.0);
    let text = gate.text("result", "A");
    assert!(gate.failed(), "{text}");
    assert!(
        text.contains("B lacks 1 result of A (io.work/8): io.work ran but did not measure them"),
        "{text}"
    );
}
