//! `latlab history` held to Apache Otava (`otava.analysis.compute_change_points`, window 50,
//! p 0.001, its defaults) on one set of planted series: forty nightly summaries of one host,
//! with heavy-tailed scatter between runs, one noisy night, steps planted in some results
//! and two regimes in others (each regime holding a few runs at a time). latlab's F1 must be
//! at least Otava's, and latlab must call no step in a result that flips between two regimes
//! (a change of their mix is its only change there), where Otava's t test calls some. Needs a Python with apache-otava
//! installed, named by `LATLAB_OTAVA_PYTHON` (`.ci/run` makes one).

use crate::history::synthetic_summary;
use crate::latlab;
use latlab_test_support::{Draws, otava_change_points, scored, summary_text};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

const RUNS: usize = 40;
/// Results with a step, with two regimes, and steady.
const STEPPED: usize = 16;
const REGIMES: usize = 8;
const STEADY: usize = 56;
/// The night every result is 30% slower: a noisy night, not a change.
const NOISY_NIGHT: usize = 21;

/// What was planted: each stepped result's first run of the new level.
struct Planted {
    series: BTreeMap<String, Vec<f64>>,
    steps: BTreeMap<String, usize>,
    regimes: Vec<String>,
}

fn planted() -> Planted {
    let mut draws = Draws(72);
    let (mut series, mut steps, mut regimes) = (BTreeMap::new(), BTreeMap::new(), Vec::new());
    for i in 0..STEPPED + REGIMES + STEADY {
        let scatter = [0.01, 0.02, 0.04][i % 3];
        let level = 10.0 * (1.0 + i as f64);
        let name = match i {
            i if i < STEPPED => format!("planted/step-{i:02}"),
            i if i < STEPPED + REGIMES => format!("planted/regimes-{i:02}"),
            i => format!("planted/steady-{i:02}"),
        };
        let step_at = 8 + (draws.uniform() * 24.0) as usize;
        let step = (1.0 + scatter * (4.0 + 4.0 * draws.uniform())).ln();
        // A regime holds for a few runs at a time, as on a shared guest: each run stays in
        // the regime of the run before three times in four.
        let mut upper = false;
        let figures: Vec<f64> = (0..RUNS)
            .map(|run| {
                let mut log = level.ln() + scatter * draws.heavy();
                if i < STEPPED && run >= step_at {
                    log += step;
                }
                if (STEPPED..STEPPED + REGIMES).contains(&i) {
                    upper ^= draws.uniform() < 0.25;
                    if upper {
                        log += 1.5f64.ln();
                    }
                }
                if run == NOISY_NIGHT {
                    log += 1.3f64.ln();
                }
                log.exp()
            })
            .collect();
        if i < STEPPED {
            steps.insert(name.clone(), step_at);
        } else if i < STEPPED + REGIMES {
            regimes.push(name.clone());
        }
        series.insert(name, figures);
    }
    Planted {
        series,
        steps,
        regimes,
    }
}

/// The planted series as forty nightly summaries of one host under `dir/nightly`, made from
/// a synthetic run's summary with its results replaced.
fn write_nights(dir: &Path, planted: &Planted) {
    let summary = synthetic_summary(dir);
    let template = summary["results"][0].clone();
    for run in 0..RUNS {
        let mut night = summary.clone();
        night["started_at"] = format!("2026-10-{:02}T03:00:00Z", run % 31 + 1)
            .replace("2026-10", if run < 31 { "2026-10" } else { "2026-11" })
            .into();
        night["headline"] = json!([]);
        night["results"] = (planted.series.iter())
            .map(|(name, figures)| {
                let mut result = template.clone();
                result["name"] = name.as_str().into();
                result["median_ns"] = figures[run].into();
                result["median_ci95_ns"] = json!([figures[run] * 0.995, figures[run] * 1.005]);
                result
            })
            .collect();
        let night_dir = dir.join(format!("nightly/night-{run:02}"));
        std::fs::create_dir_all(&night_dir).unwrap();
        std::fs::write(night_dir.join("summary.json"), summary_text(night)).unwrap();
    }
}

/// latlab's change points of each series, from `latlab history --json` (each result's own
/// and the members of each step of the machine), and the results of its level steps (not
/// changes of a mix of two regimes).
fn latlab_history(dir: &Path) -> (BTreeMap<String, Vec<usize>>, Vec<String>) {
    latlab(dir)
        .args(["history", "nightly", "--json", "history.json"])
        .assert()
        .success();
    let text = std::fs::read_to_string(dir.join("history.json")).unwrap();
    let history: Value = serde_json::from_str(&text).unwrap();
    let host = &history["hosts"][0];
    let runs: Vec<&str> = (host["runs"].as_array().unwrap().iter())
        .map(|run| run.as_str().unwrap())
        .collect();
    let (mut found, mut stepped): (BTreeMap<String, Vec<usize>>, Vec<String>) = Default::default();
    let members = (host["machine_events"].as_array().unwrap().iter())
        .flat_map(|event| event["members"].as_array().unwrap());
    for change in host["changes"].as_array().unwrap().iter().chain(members) {
        let at = runs
            .iter()
            .position(|run| *run == change["after_run"])
            .unwrap();
        let result = change["result"].as_str().unwrap().to_string();
        if change["mix"].is_null() {
            stepped.push(result.clone());
        }
        found.entry(result).or_default().push(at);
    }
    (found, stepped)
}

#[test]
#[ignore = "needs apache-otava: LATLAB_OTAVA_PYTHON names a Python that has it (.ci/run)"]
fn history_is_at_least_as_good_as_otava_and_quiet_on_two_regimes() {
    let python = std::env::var("LATLAB_OTAVA_PYTHON")
        .expect("LATLAB_OTAVA_PYTHON must name a Python with apache-otava installed");
    let planted = planted();
    let dir = tempfile::tempdir().unwrap();
    write_nights(dir.path(), &planted);
    let (ours, our_steps) = latlab_history(dir.path());
    let theirs = otava_change_points(&python, &planted.series, 0.001).unwrap();
    let (ours_scored, theirs_scored) = (
        scored(&ours, &planted.steps),
        scored(&theirs, &planted.steps),
    );
    let [our_precision, our_recall, our_f1] = [
        ours_scored.precision(),
        ours_scored.recall(),
        ours_scored.f1(),
    ];
    let [their_precision, their_recall, their_f1] = [
        theirs_scored.precision(),
        theirs_scored.recall(),
        theirs_scored.f1(),
    ];
    let in_regimes = |found: &BTreeMap<String, Vec<usize>>| {
        (planted.regimes.iter())
            .map(|name| found.get(name).map_or(0, Vec::len))
            .sum::<usize>()
    };
    let our_steps_in_regimes = (our_steps.iter())
        .filter(|name| planted.regimes.contains(name))
        .count();
    let report = format!(
        "latlab: precision {our_precision:.2}, recall {our_recall:.2}, F1 {our_f1:.2}, \
         {} steps and {} changes of mix in two-regime results; Otava: precision \
         {their_precision:.2}, recall {their_recall:.2}, F1 {their_f1:.2}, {} change points \
         in two-regime results",
        our_steps_in_regimes,
        in_regimes(&ours) - our_steps_in_regimes,
        in_regimes(&theirs)
    );
    eprintln!("{report}");
    assert!(our_f1 >= their_f1, "{report}");
    assert!(
        our_recall >= 0.8,
        "steps of 4 to 8 scatters are missed: {report}"
    );
    assert_eq!(our_steps_in_regimes, 0, "{report}");
    assert!(
        in_regimes(&theirs) > 0,
        "Otava's t test no longer errs here: {report}"
    );
}
