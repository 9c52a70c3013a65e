//! The lifecycle end to end, over units that measure nothing and say what was asked of them.

use super::*;
use crate::{ProgressUnit, ResultFiles};
use latlab_engine::budget::Allowance;
use latlab_engine::model::{ProbeOutcome, ProbeStatus, RunRecord};
use latlab_engine::names::key;
use latlab_engine::{Config, SyntheticHost};
use latlab_report::ExportError;
use latlab_report::{MarkdownExporter, OutputTarget};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Units that measure nothing and say what was asked of them.
#[derive(Default)]
struct Units {
    count: usize,
    /// `(unit, round)` in the order measured.
    measured: Vec<(usize, usize)>,
    rounds_begun: Vec<usize>,
    /// A unit that fails, and one whose measuring a signal stops.
    failing: Option<usize>,
    stopped_at: Option<(usize, usize, Arc<AtomicBool>)>,
    finished: Option<bool>,
    /// What each round was allowed, in the order measured.
    allowances: Vec<Allowance>,
}

impl Measured for Units {
    /// The last unit takes one round.
    fn units(&self, rounds: usize) -> Vec<ProgressUnit> {
        (0..self.count)
            .map(|unit| ProgressUnit {
                name: format!("unit{unit}"),
                typical_s: 1.0,
                rounds: if unit + 1 == self.count { 1 } else { rounds },
            })
            .collect()
    }

    fn start(&mut self, _: Runner, _: &mut RunRecord, _: &Progress) -> Result<(), Interrupted> {
        Ok(())
    }

    fn round_begins(&mut self, round: usize) {
        self.rounds_begun.push(round);
    }

    fn measure(&mut self, unit: usize, round: usize, allowance: Allowance) -> ProbeOutcome {
        self.measured.push((unit, round));
        self.allowances.push(allowance);
        let status = match &self.stopped_at {
            Some((u, r, flag)) if (*u, *r) == (unit, round) => {
                flag.store(true, Ordering::Relaxed);
                ProbeStatus::Interrupted
            }
            _ if self.failing == Some(unit) => ProbeStatus::Failed {
                reason: "planted".into(),
            },
            _ => ProbeStatus::Ok,
        };
        ProbeOutcome {
            id: format!("unit{unit}"),
            method: "nothing".into(),
            status,
            results: Vec::new(),
            duration_ns: 0,
        }
    }

    fn finish(&mut self, _: &mut RunRecord, _: &Progress, interrupted: bool) -> bool {
        self.finished = Some(interrupted);
        interrupted
    }

    fn text(&self, _: &RunRecord) -> Result<String, ExportError> {
        Ok(String::new())
    }
}

/// Markdown, counting its renderings and keeping the last record's units.
#[derive(Clone, Default)]
struct Counted {
    renders: Arc<AtomicUsize>,
    last: Arc<Mutex<Vec<String>>>,
}

impl latlab_report::Exporter for Counted {
    fn render(&self, run: &RunRecord) -> Result<String, ExportError> {
        self.renders.fetch_add(1, Ordering::Relaxed);
        *self.last.lock().unwrap() = run.probes.iter().map(|p| p.id.clone()).collect();
        MarkdownExporter.render(run)
    }
}

fn request(files: ResultFiles, create_dir: Option<PathBuf>) -> RunRequest {
    let host = Arc::new(SyntheticHost::default());
    RunRequest {
        rounds: 3,
        create_dir,
        ..RunRequest::new(host, Config::quick(), files)
    }
}

fn counted_file(path: PathBuf) -> (ResultFiles, Counted) {
    let counted = Counted::default();
    let mut files = ResultFiles::default();
    files.add(OutputTarget::Replaced(path), counted.clone());
    (files, counted)
}

/// One unit that measures one result on the runner it is given.
#[derive(Default)]
struct OneResult {
    runner: Option<Runner>,
    last: Option<RunRecord>,
}

impl Measured for OneResult {
    fn units(&self, rounds: usize) -> Vec<ProgressUnit> {
        vec![ProgressUnit {
            name: "pinned".into(),
            typical_s: 1.0,
            rounds,
        }]
    }

    fn start(
        &mut self,
        runner: Runner,
        _: &mut RunRecord,
        _: &Progress,
    ) -> Result<(), Interrupted> {
        self.runner = Some(runner);
        Ok(())
    }

    fn measure(&mut self, _: usize, _: usize, _: Allowance) -> ProbeOutcome {
        let runner = self.runner.as_mut().expect("started");
        let result = runner.bench("pinned/call", "nothing", || 1u64).unwrap();
        ProbeOutcome {
            id: "pinned".into(),
            method: "nothing".into(),
            status: ProbeStatus::Ok,
            results: vec![result],
            duration_ns: 0,
        }
    }

    fn measured(&mut self, record: &RunRecord, _: bool) {
        self.last = Some(record.clone());
    }

    fn text(&self, _: &RunRecord) -> Result<String, ExportError> {
        Ok(String::new())
    }
}

/// On the synthetic machine of two big and two little cores, a run pinned to a little
/// one names that class in its note and in every result; pinned to a big one, the big
/// class; on a machine of one class, nothing is named.
#[test]
fn pinned_figures_name_the_class_of_core_they_ran_on() {
    use latlab_engine::environment::CoreClass;
    let class = |cpus: Vec<usize>, capacity: u64, khz: u64| CoreClass {
        cpus,
        core_type: None,
        capacity: Some(capacity),
        max_frequency_khz: Some(khz),
    };
    let big_little = || {
        SyntheticHost::with_core_classes(vec![
            class(vec![0, 1], 1024, 2_800_000),
            class(vec![2, 3], 446, 1_800_000),
        ])
    };
    let pinned = |host: SyntheticHost, cpu: usize| {
        let mut request = request(ResultFiles::default(), None);
        request.host = Arc::new(host);
        request.rounds = 1;
        request.controls.pin = Some(cpu);
        let mut one = OneResult::default();
        assert_eq!(execute(request, &mut one, &StopSignals::unset()), Ok(0));
        one.last.expect("a unit was measured")
    };
    let little = pinned(big_little(), 3);
    let named = &little.probes[0].results[0]
        .parameter(key::CORE_CLASS)
        .unwrap();
    assert_eq!(
        named.as_str(),
        Some("class 2 of 2 (the smallest): CPUs 2-3, capacity 446, max 1.80 GHz")
    );
    assert!(
        little
            .notes
            .iter()
            .any(|n| n.starts_with("pinned to CPU 3, a core of class 2 of 2")),
        "{:?}",
        little.notes
    );
    let big = pinned(big_little(), 0);
    let named = &big.probes[0].results[0].parameter(key::CORE_CLASS).unwrap();
    assert!(
        named
            .as_str()
            .unwrap()
            .starts_with("class 1 of 2 (the biggest)"),
        "{named}"
    );
    let homogeneous = pinned(SyntheticHost::default(), 1);
    assert!(
        (homogeneous.probes[0].results[0])
            .parameter(key::CORE_CLASS)
            .is_none()
    );
}

/// Units are taken round-robin, each in its own number of rounds, and the results file
/// is rewritten after each, so that a crash loses at most the unit under way.
#[test]
fn units_are_measured_round_robin_and_written_after_each() {
    let dir = tempfile::tempdir().unwrap();
    let (files, counted) = counted_file(dir.path().join("r.md"));
    let mut units = Units {
        count: 3,
        ..Units::default()
    };
    let status = execute(request(files, None), &mut units, &StopSignals::unset());
    assert_eq!(status, Ok(0));
    assert_eq!(
        units.measured,
        [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (0, 2), (1, 2)]
    );
    assert_eq!(units.rounds_begun, [0, 1, 2]);
    assert_eq!(units.finished, Some(false));
    // After each of the 7, and once at the end.
    assert_eq!(counted.renders.load(Ordering::Relaxed), 8);
    assert_eq!(*counted.last.lock().unwrap(), ["unit0", "unit1", "unit2"]);
    assert!(dir.path().join("r.md").is_file());
}

/// Without a budget every round takes all its samples; with one, each round is
/// allowed its part of the time left by its typical cost, and takes the samples that fit.
#[test]
fn a_budget_gives_each_round_its_part_of_the_time_left() {
    let mut units = Units {
        count: 3,
        ..Units::default()
    };
    let status = execute(
        request(ResultFiles::default(), None),
        &mut units,
        &StopSignals::unset(),
    );
    assert_eq!(status, Ok(0));
    assert!(units.allowances.iter().all(|a| *a == Allowance::UNLIMITED));
    // Three units of a typical second each (the first two in three rounds): 3 typical
    // seconds in a budget of 0.7 s.
    let mut units = Units {
        count: 3,
        ..Units::default()
    };
    let budget = Duration::from_millis(700);
    let request = RunRequest {
        budget: Some(budget),
        ..request(ResultFiles::default(), None)
    };
    execute(request, &mut units, &StopSignals::unset()).unwrap();
    assert_eq!(units.allowances.len(), 7);
    let first = units.allowances[0];
    assert!(first.time.unwrap() <= budget / 9, "{first:?}");
    assert!(first.share < 0.5 && first.share > 0.0, "{first:?}");
    // The last unit's one round typically costs three of the others': a larger part.
    let last = units.allowances[2];
    assert!(
        last.time.unwrap() > first.time.unwrap(),
        "{last:?} {first:?}"
    );
}

/// A failed unit is not measured again, the others go on, and the run ends with 1.
#[test]
fn a_failed_unit_is_not_tried_again_and_the_run_ends_with_one() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = counted_file(dir.path().join("r.md"));
    let mut units = Units {
        count: 2,
        failing: Some(0),
        ..Units::default()
    };
    let status = execute(request(files, None), &mut units, &StopSignals::unset());
    assert_eq!(status, Ok(1));
    assert_eq!(units.measured, [(0, 0), (1, 0)]);
}

/// A signal stops the run after the unit it stopped: nothing after it is measured, what
/// was measured is written, and the status is the signal's.
#[test]
fn a_signal_stops_the_run_with_what_was_measured_written() {
    let dir = tempfile::tempdir().unwrap();
    let (files, counted) = counted_file(dir.path().join("r.md"));
    let stop = StopSignals::unset();
    let mut units = Units {
        count: 3,
        stopped_at: Some((1, 1, stop.flag())),
        ..Units::default()
    };
    let status = execute(request(files, None), &mut units, &stop);
    assert_eq!(status, Ok(130));
    assert_eq!(units.measured, [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1)]);
    assert_eq!(units.finished, Some(true));
    assert_eq!(*counted.last.lock().unwrap(), ["unit0", "unit1", "unit2"]);
}

/// Not one results file written: status 2, and the directory the run made for them is
/// gone again.
#[test]
fn a_run_that_kept_no_results_ends_with_two_and_leaves_no_directory() {
    let dir = tempfile::tempdir().unwrap();
    let made = dir.path().join("made");
    let (files, _) = counted_file(dir.path().join("nowhere/r.md"));
    let mut units = Units {
        count: 1,
        ..Units::default()
    };
    let status = execute(
        request(files, Some(made.clone())),
        &mut units,
        &StopSignals::unset(),
    );
    assert_eq!(status, Ok(2));
    assert!(!made.exists());
}
