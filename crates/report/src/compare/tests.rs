use super::*;
use crate::Exporter;
use crate::runs::admit::{counters, cpus_apart, mixes};
use crate::stats::ResultNoise;
use crate::test_records::{probe, record};
use latlab_engine::names::key;

/// `runs` compared at `threshold`, with the probes' declarations and the shipped tables.
fn judged_at(runs: &[(String, RunRecord)], threshold: f64) -> Comparison {
    Comparison::of(
        runs,
        threshold,
        &latlab_probes::presentations(),
        NoiseTables::shipped(),
    )
}

/// `runs` compared at the default threshold ([`judged_at`]).
fn judged(runs: &[(String, RunRecord)]) -> Comparison {
    judged_at(runs, DEFAULT_THRESHOLD)
}

/// The sides of `runs` compared at the default threshold, with the probes' declarations
/// and the shipped tables.
fn compared_sides(runs: &[(String, RunRecord)]) -> Compared {
    Compared::of(
        sides(runs),
        DEFAULT_THRESHOLD,
        &latlab_probes::presentations(),
        NoiseTables::shipped(),
    )
}

/// `runs` compared at the default threshold, as `exporter` renders the comparison.
fn rendered(exporter: &dyn Exporter<Compared>, runs: &[(String, RunRecord)]) -> String {
    exporter.render(&compared_sides(runs)).unwrap()
}

/// The terminal rendering with the default threshold and no colour.
fn compare_text(runs: &[(String, RunRecord)]) -> String {
    rendered(&CompareText::default(), runs)
}

fn timed(name: &str, samples: Vec<f64>) -> BenchResult {
    BenchResult::derived(name, "test", samples, Vec::new(), Vec::new()).unwrap()
}

/// A stability check that read `start` and then `end`, with its floor, said to have moved
/// or not.
fn stability_check(
    name: &str,
    (start, end): (f64, f64),
    moved_share: f64,
    moved: bool,
) -> latlab_engine::model::StabilityCheck {
    latlab_engine::model::StabilityCheck {
        name: name.into(),
        method: "test".into(),
        start: latlab_engine::stats::Summary::of(&[start; 3]).unwrap(),
        end: Some(latlab_engine::stats::Summary::of(&[end; 3]).unwrap()),
        moved_share,
        moved: moved.then_some(latlab_engine::Warning::MovedDuringRun {
            first_ns: start,
            last_ns: end,
        }),
    }
}

fn runs() -> Vec<(String, RunRecord)> {
    let noise = |base: f64| {
        (0..30)
            .map(|i| base + (i % 7) as f64 * 0.01)
            .collect::<Vec<_>>()
    };
    let a = record(vec![probe(
        "x",
        vec![
            timed("x/steady", noise(10.0)),
            timed("x/regressed", noise(10.0)),
            timed("x/improved", noise(10.0)),
            timed("x/single", vec![5.0]),
        ],
    )]);
    let mut b = record(vec![probe(
        "x",
        vec![
            timed("x/steady", noise(10.0)),
            timed("x/regressed", noise(12.0)),
            timed("x/improved", noise(8.0)),
        ],
    )]);
    b.environment.kernel = "7.0.0 other".into();
    vec![("A".into(), a), ("B".into(), b)]
}

/// The verdict on result `name` of the second side of `comparison`.
fn later_verdict(comparison: &Comparison, name: &str) -> Verdict {
    let result = comparison.results.iter().find(|r| r.name == name).unwrap();
    result.later[0].as_ref().unwrap().verdict
}

/// A span that ran backwards in one run (a new thread's first instruction before the call
/// creating it returned) has no ratio to the same span that ran forwards: "—", not −1.07×.
#[test]
fn figures_of_opposite_signs_have_no_ratio() {
    let spans = |median: f64| (0..30).map(|i| median + f64::from(i % 5)).collect();
    let forwards = record(vec![probe("t", vec![timed("t/start", spans(14_700.0))])]);
    let backwards = record(vec![probe("t", vec![timed("t/start", spans(-15_800.0))])]);
    let runs = [("A".to_string(), forwards), ("B".to_string(), backwards)];
    let against = judged(&runs).results[0].later[0].clone().unwrap();
    assert!(against.ratio.is_nan(), "{against:?}");
    // Nor a change it would have caught: that is a ratio too.
    assert_eq!(against.detectable, None, "{against:?}");
    let text = compare_text(&runs);
    assert!(!text.contains("-1.07"), "{text}");
    assert!(
        text.contains('—') && !text.contains("; would have caught"),
        "{text}"
    );
}

/// A noise of thousands of percent is said as the factor it is.
#[test]
fn a_change_past_a_doubling_is_said_as_a_factor_either_way() {
    use super::render::format_either_way;
    assert_eq!(format_either_way(0.43), "±43%");
    assert_eq!(format_either_way(0.043), "±4.3%");
    assert_eq!(format_either_way(1.4), "2.40× either way");
    assert_eq!(format_either_way(119_921.66), "119923× either way");
}

#[test]
fn real_differences_are_called_and_noise_is_not() {
    let text = compare_text(&runs());
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap()
            .to_string()
    };
    assert!(line("x/steady").contains("same ("), "{}", line("x/steady"));
    assert!(
        line("x/regressed").contains("slower (p < 0.001)"),
        "{}",
        line("x/regressed")
    );
    assert!(line("x/regressed").contains("1.20×"));
    assert!(line("x/improved").contains("faster"));
    assert!(line("x/single").contains("not in this run"));
    assert!(text.contains("Mann–Whitney"));
}

/// A significant difference smaller than the threshold is the same; a larger one is
/// not; equal medians of quantised figures are the same however the samples differ.
#[test]
fn small_and_quantised_differences_are_the_same() {
    let noise = |base: f64, spread: f64| -> Vec<f64> {
        (0..30).map(|i| base + (i % 7) as f64 * spread).collect()
    };
    let a = record(vec![probe(
        "x",
        vec![
            timed("x/one-percent", noise(100.0, 0.01)),
            timed("x/five-percent", noise(100.0, 0.01)),
            timed("x/ticks", [vec![10.0; 20], vec![20.0; 10]].concat()),
        ],
    )]);
    let b = record(vec![probe(
        "x",
        vec![
            timed("x/one-percent", noise(101.0, 0.01)),
            timed("x/five-percent", noise(105.0, 0.01)),
            timed("x/ticks", [vec![10.0; 16], vec![20.0; 14]].concat()),
        ],
    )]);
    let runs = vec![("A".to_string(), a), ("B".to_string(), b)];
    let verdict = later_verdict;
    let default = judged(&runs);
    assert!(matches!(
        verdict(&default, "x/one-percent"),
        Verdict::Same {
            why: SameBecause::WithinThreshold,
            ..
        }
    ));
    assert!(matches!(
        verdict(&default, "x/five-percent"),
        Verdict::Slower { .. }
    ));
    assert!(matches!(
        verdict(&default, "x/ticks"),
        Verdict::Same {
            why: SameBecause::WithinResolution,
            ..
        }
    ));
    let strict = judged_at(&runs, 0.0);
    assert!(matches!(
        verdict(&strict, "x/one-percent"),
        Verdict::Slower { .. }
    ));
    assert_eq!(
        default.summary_lines(),
        ["B against A: 1 slower, 0 faster, 2 same"]
    );
    assert_eq!(default.slower_than(3.0).len(), 1);
    assert!(default.slower_than(10.0).is_empty());
}

/// The summary counts each verdict and the results in only one run, which are listed.
/// A level's figure pooled from sweep points of thousands of loads a sample resolves
/// a tick over those loads, not the raw tick: a 15% slowdown of a 5.4 ns L2 level, with
/// a 20 ns tick, is slower, not "within a clock tick"; a figure timed one event a sample
/// keeps the whole tick.
#[test]
fn a_pooled_figure_resolves_a_tick_over_its_sources_operations() {
    let with_tick = |mut run: RunRecord| {
        run.clock.resolution_ns = 20.0;
        run
    };
    let side = |scale: f64| {
        let noise = |base: f64| -> Vec<f64> {
            (0..30)
                .map(|i| scale * (base + (i % 7) as f64 * 0.01))
                .collect()
        };
        let mut points: Vec<BenchResult> = ["x/point/256KiB", "x/point/512KiB"]
            .iter()
            .map(|name| {
                let mut point = timed(name, noise(5.4));
                point.kind = ResultKind::TimedLoop;
                point.iterations = 8192;
                point
            })
            .collect();
        let pooled: Vec<f64> = points.iter().flat_map(|p| p.samples_ns.clone()).collect();
        let mut level = timed("x/level/L2", pooled);
        level.derived_from = points.iter().map(|p| p.name.clone()).collect();
        points.push(level);
        let mut event = timed("x/event", noise(5.4));
        event.kind = ResultKind::Observations;
        points.push(event);
        with_tick(record(vec![probe("x", points)]))
    };
    let runs = vec![("A".to_string(), side(1.0)), ("B".to_string(), side(1.15))];
    let comparison = judged(&runs);
    let verdict = |name: &str| later_verdict(&comparison, name);
    assert!(
        matches!(verdict("x/level/L2"), Verdict::Slower { .. }),
        "{:?}",
        verdict("x/level/L2")
    );
    assert!(matches!(
        verdict("x/event"),
        Verdict::Same {
            why: SameBecause::WithinResolution,
            ..
        }
    ));
}

/// An A/A run whose core-to-core checks both said MOVED, the pair reading several times
/// slower. That pair, and every figure crossing CPUs, is "not comparable", not slower,
/// and no gate fails on it; the memory figures, whose check held, are still tested.
#[test]
fn a_figure_whose_check_moved_is_not_comparable() {
    let noise = |base: f64| -> Vec<f64> { (0..30).map(|i| base + (i % 7) as f64 * 0.01).collect() };
    let check = |name: &str, moved: bool| stability_check(name, (60.0, 70.0), 0.25, moved);
    let side = |pair: f64, memory: f64, moved: bool| {
        let mut run = record(vec![probe(
            "x",
            vec![
                timed("thread.core_to_core/one-way/cas/0-1", noise(pair)),
                timed("ipc.throughput/pipe/4B", noise(pair)),
                timed("mem.latency/level/DRAM", noise(memory)),
                timed("cpu.call/empty", noise(1.0)),
            ],
        )]);
        run.stability = vec![
            check("stability/memory-chase", false),
            check("stability/core-to-core", moved),
        ];
        run
    };
    let runs = vec![
        ("A".to_string(), side(7.0, 100.0, true)),
        ("B".to_string(), side(56.3, 130.0, false)),
    ];
    let comparison = judged(&runs);
    let verdict = |name: &str| later_verdict(&comparison, name);
    for crossing in [
        "thread.core_to_core/one-way/cas/0-1",
        "ipc.throughput/pipe/4B",
    ] {
        assert_eq!(
            verdict(crossing),
            Verdict::NotComparable {
                check: "stability/core-to-core",
                how: Unsteady::DuringRun,
            }
        );
    }
    assert!(matches!(
        verdict("mem.latency/level/DRAM"),
        Verdict::Slower { .. }
    ));
    let gate = comparison.slower_than(10.0);
    assert_eq!(gate.len(), 1, "{gate:?}");
    assert_eq!(gate[0].0, "mem.latency/level/DRAM");
    assert_eq!(
        comparison.summary_lines(),
        ["B against A: 1 slower, 0 faster, 1 same, 2 not comparable (the machine changed)"]
    );
    assert!(
        compare_text(&runs).contains("not comparable (the machine moved: stability/core-to-core)")
    );
    // Not failing the gate, and not passed over: the gate names the slowest it could not
    // judge, and claims only for what it judged.
    let gate = Gate::of(&comparison, 10.0);
    let text = gate.text("result", "A");
    assert!(gate.failed(), "DRAM is slower: {text}");
    assert_eq!(gate.unsteady.len(), 2, "{text}");
    assert!(
        text.contains(
            "2 results read more than 10% slower than A but could not be judged, so the gate \
             cannot say they are not: thread.core_to_core/one-way/cas/0-1 in B: 8.01×, not \
             comparable (the machine moved: stability/core-to-core) and 1 more"
        ),
        "{text}"
    );
    let gate = Gate::of(&comparison, 40.0);
    assert!(!gate.failed(), "{gate:?}");
    assert!(
        (gate.text("result", "A")).ends_with("no result judged is more than 40% slower than A\n")
    );
}

/// The pair read several times slower in B while the reference beside it held, and the
/// checks at B's start and end held. The pair is not comparable (another placement), not
/// slower, and no gate fails on it; the pipe of the same run,
/// not flagged, still compares.
#[test]
fn a_figure_taken_in_another_placement_is_not_comparable() {
    let noise = |base: f64| -> Vec<f64> { (0..30).map(|i| base + (i % 7) as f64 * 0.01).collect() };
    let side = |pair: f64, flagged: bool| {
        let mut result = timed("thread.core_to_core/one-way/cas/0-1", noise(pair));
        if flagged {
            result
                .warnings
                .push(latlab_engine::Warning::PlacementChanged {
                    read_ns: Some(pair),
                    start_ns: 25.0,
                    beside_ns: [26.0, 28.0],
                });
        }
        let mut run = record(vec![probe(
            "x",
            vec![result, timed("ipc.throughput/pipe/4B", noise(30_000.0))],
        )]);
        run.stability = vec![stability_check(
            "stability/core-to-core",
            (25.0, 27.6),
            0.25,
            false,
        )];
        run
    };
    let runs = vec![
        ("A".to_string(), side(26.5, false)),
        ("B".to_string(), side(123.0, true)),
    ];
    let comparison = judged(&runs);
    let verdict = |name: &str| later_verdict(&comparison, name);
    assert_eq!(
        verdict("thread.core_to_core/one-way/cas/0-1"),
        Verdict::NotComparable {
            check: "stability/core-to-core",
            how: Unsteady::Placement,
        }
    );
    assert!(matches!(
        verdict("ipc.throughput/pipe/4B"),
        Verdict::Same { .. }
    ));
    assert!(comparison.slower_than(10.0).is_empty());
    assert!(compare_text(&runs).contains(
        "not comparable (taken in another placement of the CPUs: stability/core-to-core)"
    ));
    // Unflagged, the same figures are a slowdown.
    let runs = vec![
        ("A".to_string(), side(26.5, false)),
        ("B".to_string(), side(123.0, false)),
    ];
    let comparison = judged(&runs);
    assert_eq!(comparison.slower_than(10.0).len(), 1);
}

/// A moved memory chase does not speak for a working set within the private caches,
/// and with several runs a side the run whose check moved is left out of its family
/// while the others still compare: a planted 30% slowdown is found, not hidden behind
/// "not comparable".
#[test]
fn a_moved_run_is_left_out_and_private_caches_are_not_spoken_for() {
    let noise = |base: f64, run: usize| -> Vec<f64> {
        (0..30)
            .map(|i| base * (1.0 + 0.002 * run as f64) + (i % 7) as f64 * 0.001)
            .collect()
    };
    let check = |name: &str, moved: bool| {
        let end = if moved { 170.0 } else { 151.0 };
        stability_check(name, (150.0, end), 0.10, moved)
    };
    let run = |index: usize, dram: f64, moved: bool| {
        let mut run = record(vec![probe(
            "mem.latency",
            vec![
                timed("mem.latency/random/4KiB", noise(1.1, index))
                    .with_parameter(key::WORKING_SET_BYTES, 4096u64),
                timed("mem.latency/random/64MiB", noise(dram, index))
                    .with_parameter(key::WORKING_SET_BYTES, 64u64 << 20),
            ],
        )]);
        run.stability = vec![check("stability/memory-chase", moved)];
        run
    };
    let side = |label: &str, dram: f64, moved: [bool; 3]| Side {
        label: label.into(),
        runs: (0..3).map(|i| run(i, dram, moved[i])).collect(),
    };
    let sides = [
        side("A", 150.0, [false, false, false]),
        side("B", 195.0, [false, true, false]),
    ];
    let comparison = Comparison::of_sides(
        &sides,
        DEFAULT_THRESHOLD,
        &latlab_probes::presentations(),
        NoiseTables::shipped(),
    );
    let verdict = |name: &str| later_verdict(&comparison, name);
    assert!(matches!(
        verdict("mem.latency/random/64MiB"),
        Verdict::Slower { .. }
    ));
    assert!(matches!(
        verdict("mem.latency/random/4KiB"),
        Verdict::Same { .. }
    ));
    // One run a side whose check moved: the memory-sized set is not comparable, the
    // private one is still tested.
    let one = |label: &str, dram: f64, moved: bool| Side {
        label: label.into(),
        runs: vec![run(0, dram, moved)],
    };
    let comparison = Comparison::of_sides(
        &[one("A", 150.0, false), one("B", 195.0, true)],
        DEFAULT_THRESHOLD,
        &latlab_probes::presentations(),
        NoiseTables::shipped(),
    );
    let verdict = |name: &str| later_verdict(&comparison, name);
    assert_eq!(
        verdict("mem.latency/random/64MiB"),
        Verdict::NotComparable {
            check: "stability/memory-chase",
            how: Unsteady::DuringRun
        }
    );
    assert!(!matches!(
        verdict("mem.latency/random/4KiB"),
        Verdict::NotComparable { .. }
    ));
}

/// The lost-L3 A/A run: each run's checks held from start to end, but the cache chase
/// read an L3 in one run and memory in the other. The memory figures are "not
/// comparable", not slower; the check that held between the runs leaves its family
/// tested, and a difference within the check's floor is not a change of machine.
#[test]
fn a_check_that_differs_between_runs_makes_its_family_not_comparable() {
    let noise = |base: f64| -> Vec<f64> { (0..30).map(|i| base + (i % 7) as f64 * 0.01).collect() };
    let check = |name: &str, start: f64, end: f64| stability_check(name, (start, end), 0.10, false);
    let side = |cache: f64, pair: f64, l3: f64| {
        let mut run = record(vec![probe(
            "x",
            vec![
                timed("mem.latency/random/4MiB", noise(l3)),
                timed("thread.core_to_core/one-way/cas/0-1", noise(pair)),
            ],
        )]);
        run.stability = vec![
            check("stability/memory-chase", 150.0, 148.0),
            check("stability/cache-chase", cache, cache * 1.05),
            check("stability/core-to-core", pair, pair),
        ];
        run
    };
    let runs = vec![
        ("A".to_string(), side(14.0, 26.0, 14.6)),
        ("B".to_string(), side(130.0, 27.0, 133.0)),
    ];
    let comparison = judged(&runs);
    let verdict = |name: &str| later_verdict(&comparison, name);
    assert_eq!(
        verdict("mem.latency/random/4MiB"),
        Verdict::NotComparable {
            check: "stability/cache-chase",
            how: Unsteady::BetweenRuns {
                first_ns: 14.0 * 1.05,
                later_ns: 130.0
            },
        }
    );
    assert!(!matches!(
        verdict("thread.core_to_core/one-way/cas/0-1"),
        Verdict::NotComparable { .. }
    ));
    assert!(comparison.slower_than(10.0).is_empty());
    let text = compare_text(&runs);
    assert!(
        text.contains(
            "not comparable (the machine differs: stability/cache-chase 130 ns against 14.7 ns)"
        ),
        "{text}"
    );
}

#[test]
fn the_summary_counts_and_results_in_one_run_are_listed() {
    let mut runs = runs();
    runs[1]
        .1
        .probes
        .push(probe("y", vec![timed("y/new", vec![1.0, 1.1, 1.2])]));
    let comparison = judged(&runs);
    assert_eq!(
        comparison.summary_lines(),
        ["B against A: 1 slower, 1 faster, 1 same; 1 only in A, 1 only in B"]
    );
    let text = compare_text(&runs);
    assert!(text.contains("only in B: y/new"), "{text}");
    assert!(text.ends_with("1 only in A, 1 only in B\n"), "{text}");
    let csv = rendered(&CompareCsv, &runs);
    assert!(
        csv.starts_with(
            "benchmark,baseline,run,baseline_median_ns,median_ns,ratio,p,difference,\
             detectable,tested_within,noise_from\n"
        ),
        "{csv}"
    );
    assert!(csv.contains("x/regressed,A,B,"), "{csv}");
    assert!(csv.contains("x/single,A,B,5,,,,missing"), "{csv}");
    assert!(csv.contains("y/new,A,B,,,,,new"), "{csv}");
    let json: serde_json::Value = serde_json::from_str(&rendered(&CompareJson, &runs)).unwrap();
    assert_eq!(json["runs"][0]["slower"], 1);
    assert_eq!(json["runs"][0]["new"][0], "y/new");
    let regressed = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "x/regressed")
        .unwrap();
    assert_eq!(regressed["against"][0]["difference"], "slower");
    assert_eq!(regressed["against"][0]["tested_within"], "alone");
    let steady = (json["results"].as_array().unwrap().iter())
        .find(|r| r["name"] == "x/steady")
        .unwrap();
    assert!(steady["against"][0]["detectable"].as_f64().unwrap() >= DEFAULT_THRESHOLD);
}

#[test]
fn differing_environments_are_marked() {
    let text = compare_text(&runs());
    let kernel = text.lines().find(|l| l.contains("kernel")).unwrap();
    assert!(kernel.starts_with('≠'), "{kernel}");
    let cpu = text.lines().find(|l| l.contains("  cpu  ")).unwrap();
    assert!(!cpu.starts_with('≠'), "{cpu}");
    let runs = runs();
    let markdown = rendered(&CompareMarkdown, &runs);
    assert!(markdown.contains("| ≠ | kernel |"), "{markdown}");
}

/// A result read as running in two regimes was compared: alone, it neither fails the gate
/// nor leaves it with "nothing was compared"; a side whose every result is untested does.
#[test]
fn two_regimes_alone_pass_the_gate_and_nothing_compared_fails_it() {
    let one = |samples: Vec<f64>| record(vec![probe("x", vec![timed("x/steady", samples)])]);
    let noise = |base: f64| (0..30).map(|i| base + (i % 7) as f64 * 0.01).collect();
    let runs = vec![
        ("A".to_string(), one(noise(10.0))),
        ("B".to_string(), one(noise(10.0))),
    ];
    let mut comparison = judged(&runs);
    let against = comparison.results[0].later[0].as_mut().unwrap();
    against.verdict = Verdict::TwoRegimes {
        low_ns: 28.9,
        high_ns: 38.2,
    };
    let gate = Gate::of(&comparison, 50.0);
    assert!(!gate.failed(), "{gate:?}");
    assert!(
        gate.text("result", "A")
            .contains("no result is more than 50% slower than A")
    );
    comparison.results[0].later[0] = None;
    let gate = Gate::of(&comparison, 50.0);
    assert!(gate.failed());
    assert!(gate.text("result", "A").contains("nothing was compared"));
}

/// The gate says how many runs its baseline holds, and at what slowdown its results would
/// fail it: its percentage, widened by each result's noise.
#[test]
fn the_gate_says_what_it_could_hear() {
    let one = |name: &str| record(vec![probe("x", vec![timed(name, vec![10.0; 30])])]);
    let runs = vec![("A".to_string(), one("x/a")), ("B".to_string(), one("x/a"))];
    let mut comparison = judged(&runs);
    let against = comparison.results[0].later[0].as_mut().unwrap();
    (against.detectable, against.reach, against.margin) = (Some(0.04), Some(0.02), None);
    let gate = Gate::of(&comparison, 5.0);
    assert_eq!(gate.baseline_runs, 1);
    // 1.05 times 1.02.
    assert!((gate.hearing.median.unwrap() - 0.071).abs() < 1e-9);
    assert_eq!((gate.hearing.tested, gate.hearing.within_twice), (1, 1));
    assert!(
        gate.text("result", "A").starts_with(
            "A holds 1 run: a result fails this gate once it is slower by 5% and by its \
             noise: at 7.1% for the median of the 1 results gated, 7.1% for the quietest \
             tenth, 7.1% for the noisiest tenth; 1 of them at 10% or less\n"
        ),
        "{}",
        gate.text("result", "A")
    );
    // 1.02 times 1.02 is past 4%.
    let gate = Gate::of(&comparison, 2.0);
    assert_eq!((gate.hearing.tested, gate.hearing.within_twice), (1, 0));
}

/// Three samples a side can never be called a change (their Mann–Whitney p-value is 0.081 at
/// best): no claim of what they would have caught stands beside them, the gate counts them
/// as not gated, and a planted doubling is not called. Ten samples a side can be.
#[test]
fn samples_too_few_to_call_a_change_make_no_claim() {
    let one = |scale: f64, count: usize| {
        let samples = (0..count)
            .map(|i| scale * (10.0 + i as f64 * 0.01))
            .collect();
        record(vec![probe("x", vec![timed("x/a", samples)])])
    };
    for (count, callable) in [(3, false), (10, true)] {
        let unchanged = vec![("A".into(), one(1.0, count)), ("B".into(), one(1.0, count))];
        let comparison = judged(&unchanged);
        let against = comparison.results[0].later[0].clone().unwrap();
        assert_eq!(against.too_few_samples, !callable, "{count}: {against:?}");
        assert_eq!(
            against.detectable.is_some(),
            callable,
            "{count}: {against:?}"
        );
        let gate = Gate::of(&comparison, 10.0);
        assert_eq!(gate.hearing.ungated, usize::from(!callable), "{count}");
        let text = compare_text(&unchanged);
        assert_eq!(text.contains("too few samples"), !callable, "{text}");
        let doubled = vec![("A".into(), one(1.0, count)), ("B".into(), one(2.0, count))];
        let called = matches!(
            later_verdict(&judged(&doubled), "x/a"),
            Verdict::Slower { .. }
        );
        assert_eq!(called, callable, "{count}");
    }
}

/// Every format a comparison is offered in has an option of its own and renders the
/// comparison, naming a result of it.
#[test]
fn every_offered_format_renders_the_comparison() {
    use crate::Offered;
    let formats = Compared::formats();
    assert!(crate::formats::names_are_distinct(formats));
    let runs = runs();
    for format in formats {
        let text = rendered(&*(format.exporter)(&Default::default()), &runs);
        assert!(text.contains("steady"), "--{}: {text}", format.name);
    }
}

/// A result of 30 samples about `figure` (±0.1%) measured in three rounds that read
/// `rounds` times it.
fn in_rounds(name: &str, figure: f64, rounds: [f64; 3]) -> BenchResult {
    let samples = (0..30)
        .map(|i| figure * (1.0 + (i % 5) as f64 * 0.0005))
        .collect();
    let mut result = timed(name, samples);
    result.round_medians_ns = rounds.iter().map(|r| figure * r).collect();
    result
}

/// `results` (name, standard deviation) as a noise table of `machine`, measured from twelve
/// runs.
fn table_of(machine: NoiseMachine, results: &[(&str, f64)]) -> NoiseTable {
    NoiseTable {
        machine,
        kernel: "6".into(),
        latlab_version: "0".into(),
        suite: "quick".into(),
        rounds: 3,
        runs: 12,
        measured: "2026-11-28T09:43:31Z".into(),
        results: (results.iter())
            .map(|(name, sd)| ResultNoise {
                name: name.to_string(),
                sd: *sd,
                range: 3.0 * sd,
                runs: 12,
            })
            .collect(),
        unsteady: Vec::new(),
    }
}

/// A noise table's rows: each result with its deviation.
type NoiseTableRows = [(&'static str, f64); 3];

/// Two single runs of three results, quiet in their rounds but `x/disturbed` in the
/// second, which moves 10% and scatters its rounds; and a table of how far each moves.
fn noise_table_runs() -> (Vec<(String, RunRecord)>, NoiseTableRows) {
    let steady = [0.999, 1.0, 1.001];
    let a = record(vec![probe(
        "x",
        vec![
            in_rounds("x/noisy", 100.0, steady),
            in_rounds("x/quiet", 100.0, steady),
            in_rounds("x/disturbed", 100.0, steady),
        ],
    )]);
    let b = record(vec![probe(
        "x",
        vec![
            in_rounds("x/noisy", 115.0, steady),
            in_rounds("x/quiet", 105.0, steady),
            in_rounds("x/disturbed", 110.0, [0.7, 1.0, 1.4]),
        ],
    )]);
    let runs = vec![("A".to_string(), a), ("B".to_string(), b)];
    let table = [("x/noisy", 0.2), ("x/quiet", 0.005), ("x/disturbed", 0.005)];
    (runs, table)
}

/// One run a side: a result its noise table has takes the table's noise (one that moves 20%
/// between runs is `same` at a 15% move, one that moves 0.5% is `slower` at 5%), and its
/// rounds in place of it where they scatter far more than the table says; the line and the
/// JSON say which, and the side's noise line names the table.
#[test]
fn one_run_a_side_takes_each_results_noise_from_its_table() {
    let (runs, table) = noise_table_runs();
    let a = runs[0].1.clone();
    let met = [table_of(NoiseMachine::of(&a), &table)];
    let (declared, noise) = (latlab_probes::presentations(), NoiseTables::measured(&met));
    let comparison = Comparison::of(&runs, DEFAULT_THRESHOLD, &declared, noise);
    let against = |name: &str| {
        let result = comparison.results.iter().find(|r| r.name == name).unwrap();
        result.later[0].clone().unwrap()
    };
    let prior = Some(NoiseFrom::Prior { same_machine: true });
    let noisy = against("x/noisy");
    assert!(matches!(noisy.verdict, Verdict::Same { .. }), "{noisy:?}");
    assert_eq!(noisy.noise_from, prior);
    // Its claim: twice the table's 20% reach and then some (t with 11 degrees, one run a side).
    assert!(noisy.detectable.unwrap() > 0.5, "{noisy:?}");
    let quiet = against("x/quiet");
    assert!(matches!(quiet.verdict, Verdict::Slower { .. }), "{quiet:?}");
    assert_eq!(quiet.noise_from, prior);
    let disturbed = against("x/disturbed");
    assert!(
        matches!(disturbed.verdict, Verdict::Same { .. }),
        "{disturbed:?}"
    );
    assert_eq!(disturbed.noise_from, Some(NoiseFrom::Rounds));
    let RunToRun::Unknown {
        prior: Some(used), ..
    } = &comparison.run_to_run[0]
    else {
        panic!("{:?}", comparison.run_to_run[0]);
    };
    assert_eq!((used.held, used.set, used.same_machine), (3, 2, true));
    let compared = Compared::of(sides(&runs), DEFAULT_THRESHOLD, &declared, noise);
    let text = CompareText::default().render(&compared).unwrap();
    assert!(text.contains("(noise: prior)"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&CompareJson.render(&compared).unwrap()).unwrap();
    let noted = (json["results"].as_array().unwrap().iter())
        .find(|r| r["name"] == "x/disturbed")
        .unwrap();
    assert_eq!(noted["against"][0]["noise_from"], "rounds");
    assert_eq!(
        json["runs"][0]["run_to_run"]["prior"]["measured"],
        format!("12 runs of {} on 2026-11-28", NoiseMachine::of(&a))
    );
}

/// A table measured on another machine speaks for a guest's results (a guest's neighbours
/// move its figures wherever it runs), said as such, and not for a machine that is no
/// guest.
#[test]
fn another_machines_table_speaks_for_a_guest_only() {
    let (runs, table) = noise_table_runs();
    let a = runs[0].1.clone();
    let elsewhere = NoiseMachine {
        cpu: "another".into(),
        virtualization: "KVM".into(),
        ..NoiseMachine::of(&a)
    };
    let met = [table_of(elsewhere, &table)];
    let (declared, noise) = (latlab_probes::presentations(), NoiseTables::measured(&met));
    let bare = Comparison::of(&runs, DEFAULT_THRESHOLD, &declared, noise);
    let quiet = bare.results[1].later[0].as_ref().unwrap();
    assert!(
        !matches!(quiet.noise_from, Some(NoiseFrom::Prior { .. })),
        "{quiet:?}"
    );
    let as_guests: Vec<(String, RunRecord)> = (runs.iter().cloned())
        .map(|(label, mut run)| {
            run.environment.virtualization = Some("KVM".into());
            (label, run)
        })
        .collect();
    let guest = Comparison::of(&as_guests, DEFAULT_THRESHOLD, &declared, noise);
    let quiet = guest.results[1].later[0].as_ref().unwrap();
    assert_eq!(
        quiet.noise_from,
        Some(NoiseFrom::Prior {
            same_machine: false
        })
    );
}

/// Without a table, one run a side keeps the model of the set: no result says a prior.
#[test]
fn without_a_table_no_result_takes_a_prior() {
    let comparison = Comparison::of(
        &runs(),
        DEFAULT_THRESHOLD,
        &Presentations::default(),
        NoiseTables::measured(&[]),
    );
    for result in &comparison.results {
        if let Some(against) = &result.later[0] {
            assert!(
                !matches!(against.noise_from, Some(NoiseFrom::Prior { .. })),
                "{against:?}"
            );
        }
    }
}

/// Two runs that counted a benchmark's instructions are judged by the counts, whatever
/// their times: equal within 0.1% is the same, 1% more is slower and fails a gate at 0.5%
/// (the times, 30% apart with no noise to speak of, would otherwise read the reverse).
#[test]
fn counted_runs_are_judged_by_their_counts() {
    let counted = |instructions: f64, ns: f64| {
        let mut result = timed("c/sum", vec![ns; 30]);
        result.counted = Some(latlab_engine::model::Counted {
            via: "callgrind".into(),
            instructions,
            cache: None,
            calls: 3000,
        });
        record(vec![probe("c", vec![result])])
    };
    let compared = |later: RunRecord| {
        let runs = vec![
            ("A".to_string(), counted(10_000.0, 130.0)),
            ("B".to_string(), later),
        ];
        Comparison::of(
            &runs,
            DEFAULT_THRESHOLD,
            &Presentations::default(),
            NoiseTables::measured(&[]),
        )
    };
    let same = compared(counted(10_004.0, 100.0));
    let against = same.results[0].later[0].clone().unwrap();
    assert!(
        matches!(
            against.verdict,
            Verdict::Same {
                why: SameBecause::CountsAgree,
                ..
            }
        ),
        "{against:?}"
    );
    assert!(!Gate::of(&same, 0.5).failed());
    let slower = compared(counted(10_100.0, 100.0));
    let against = slower.results[0].later[0].clone().unwrap();
    assert!(
        matches!(against.verdict, Verdict::Slower { .. }),
        "{against:?}"
    );
    assert_eq!(against.counts, Some((10_000.0, 10_100.0)));
    assert!((against.ratio - 1.01).abs() < 1e-12);
    assert_eq!(
        against.label(DEFAULT_THRESHOLD),
        "slower (instructions 10000 → 10100 a call)"
    );
    let gate = Gate::of(&slower, 0.5);
    assert!(gate.failed(), "{gate:?}");
    assert!(!Gate::of(&slower, 2.0).failed());
    // One side uncounted: the times speak, as without counts.
    let uncounted = record(vec![probe("c", vec![timed("c/sum", vec![100.0; 30])])]);
    let timed_only = compared(uncounted);
    assert_eq!(
        timed_only.results[0].later[0].as_ref().unwrap().counts,
        None
    );
}

/// "Would have caught ±d" never stands beside a larger difference called the same, and the
/// gate judges by its own percentage: a result called the same within a threshold wider
/// than the gate, its tests having rejected, fails it. Checked over samples from tight to scattered, one round each, and changes
/// from none to 1.7 times.
#[test]
fn no_claim_of_what_was_caught_stands_beside_a_larger_difference_called_same() {
    for spread in [0.001, 0.05, 0.3, 1.0, 3.0] {
        for factor in [1.0, 1.03, 1.2, 1.7] {
            let samples = |scale: f64| -> Vec<f64> {
                (0..6)
                    .map(|i| scale * 100.0 * (1.0 + spread * ((i * 7 % 6) as f64 / 5.0 - 0.5)))
                    .collect()
            };
            let one = |scale: f64| record(vec![probe("x", vec![timed("x/a", samples(scale))])]);
            let runs = vec![("A".to_string(), one(1.0)), ("B".to_string(), one(factor))];
            for threshold in [DEFAULT_THRESHOLD, 10.0] {
                let compared = Compared::of(
                    sides(&runs),
                    threshold,
                    &latlab_probes::presentations(),
                    NoiseTables::shipped(),
                );
                let against = compared.comparison.results[0].later[0].clone().unwrap();
                let observed = (against.ratio - 1.0).abs();
                if let (Verdict::Same { .. }, Some(detectable)) =
                    (against.verdict, against.detectable)
                {
                    assert!(
                        observed < detectable,
                        "{spread} {factor} {threshold}: {against:?}"
                    );
                }
                // Past the gate, whatever the threshold called it: its tests rejected.
                let gate = Gate::of(&compared.comparison, 10.0);
                let rejected = matches!(
                    against.verdict,
                    Verdict::Slower { .. }
                        | Verdict::Same {
                            why: SameBecause::WithinThreshold,
                            ..
                        }
                );
                if against.ratio > 1.1 && rejected {
                    assert!(gate.failed(), "{spread} {factor} {threshold}: {against:?}");
                }
                if factor == 1.0 {
                    assert!(!gate.failed(), "{spread} {threshold}: {against:?}");
                }
            }
        }
    }
}

/// One run a side of many results whose rounds never scatter is not "fewer than 20
/// results": the line says how many scattered.
#[test]
fn many_results_that_never_scatter_are_said_as_such() {
    let flat = |name: String| {
        let mut result = timed(&name, vec![10.0; 6]);
        result.round_medians_ns = vec![10.0; 3];
        result
    };
    let run = record(vec![probe(
        "x",
        (0..30).map(|i| flat(format!("x/{i}"))).collect(),
    )]);
    let runs = vec![("A".to_string(), run.clone()), ("B".to_string(), run)];
    let text = compare_text(&runs);
    assert!(
        text.contains("one run a side and only 0 of its 30 results with rounds that scatter"),
        "{text}"
    );
    assert!(!text.contains("fewer than 20 results"), "{text}");
}

/// Counts of two counters are not compared as one: callgrind's count in one side and the
/// CPU's in the other leave the result to its times, and a note says so.
#[test]
fn counts_of_two_counters_are_not_compared_as_one() {
    let counted = |via: &str, instructions: f64| {
        let mut result = timed(
            "x/a",
            (0..30).map(|i| 10.0 + (i % 7) as f64 * 0.01).collect(),
        );
        result.counted = Some(latlab_engine::model::Counted {
            via: via.into(),
            instructions,
            cache: None,
            calls: 300,
        });
        record(vec![probe("x", vec![result])])
    };
    let alike = vec![
        ("A".to_string(), counted("callgrind", 100.0)),
        ("B".to_string(), counted("callgrind", 200.0)),
    ];
    let compared = compared_sides(&alike);
    let against = compared.comparison.results[0].later[0].clone().unwrap();
    assert_eq!(against.counts, Some((100.0, 200.0)));
    assert!(matches!(against.verdict, Verdict::Slower { .. }));
    assert_eq!(counters(&sides(&alike)), None);

    let apart = vec![
        ("A".to_string(), counted("callgrind", 100.0)),
        ("B".to_string(), counted("perf", 200.0)),
    ];
    let compared = compared_sides(&apart);
    let against = compared.comparison.results[0].later[0].clone().unwrap();
    assert_eq!(against.counts, None, "{against:?}");
    assert!(
        matches!(against.verdict, Verdict::Same { .. }),
        "{against:?}"
    );
    let note = counters(&sides(&apart)).unwrap();
    assert!(note.contains("callgrind in A, perf in B"), "{note}");
}

/// What the runs mix within a side (suites, CPUs allowed) and between the sides (the CPUs
/// allowed: `taskset -c 0` against two CPUs) is said; runs that did not record their CPUs
/// are no mix.
#[test]
fn what_the_runs_mix_is_said() {
    let run = |suite: &str, cpus: Option<Vec<usize>>| {
        let mut run = record(vec![probe("x", vec![timed("x/a", vec![10.0; 6])])]);
        run.settings.suite = suite.into();
        run.environment.allowed_cpus = cpus;
        run
    };
    let side = |label: &str, runs: Vec<RunRecord>| Side {
        label: label.into(),
        runs,
    };
    let mixed = mixes(
        "A",
        &[run("quick", Some(vec![0])), run("full", Some(vec![0, 1]))],
    );
    assert!(
        mixed.iter().any(|n| n.contains("mixes suites")),
        "{mixed:?}"
    );
    assert!(
        mixed.iter().any(|n| n.contains("mixes the CPUs")),
        "{mixed:?}"
    );
    assert!(mixes("A", &[run("quick", None), run("quick", Some(vec![0]))]).is_empty());
    let sides = [
        side("A", vec![run("quick", Some(vec![0]))]),
        side("B", vec![run("quick", Some(vec![0, 1]))]),
    ];
    let apart = cpus_apart(&sides).unwrap();
    assert!(apart.contains("A on CPUs 0; B on CPUs 0-1"), "{apart}");
    let unrecorded = [
        side("A", vec![run("quick", None)]),
        side("B", vec![run("quick", Some(vec![0, 1]))]),
    ];
    assert_eq!(cpus_apart(&unrecorded), None);
}
