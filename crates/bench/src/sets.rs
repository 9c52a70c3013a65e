//! The benchmark sets as a run measures them ([`BenchSets`]): each set (a benchmark, or a
//! group sampled side by side) is a unit of the run's lifecycle (`latlab_front::execute`),
//! measured by the [`Session`], with the watchdog watching for a set that never comes back,
//! and the text the harness prints after the table.

use crate::bencher::Benchmark;
use crate::count::callgrind::ValgrindCounts;
use crate::options::Options;
#[cfg(feature = "profile")]
use crate::profile::Profiler;
use crate::session::{Failure, Mode, Session};
use crate::text::{allocation_lines, comparison_lines, count_lines, cycle_lines, profile_text};
use latlab_engine::budget::Allowance;
use latlab_engine::cycle::CYCLE_PROBE;
use latlab_engine::model::{ProbeOutcome, ProbeStatus, RunRecord};
use latlab_engine::signals::StopSignals;
use latlab_engine::{BenchResult, Config, Interrupted, Runner};
use latlab_front::{Measured, Progress, ProgressUnit, ResultFiles, RunOf, Unwritten};
use latlab_report::terminal::{Detail, Terminal};
use latlab_report::{ExportError, Exporter, TableExporter};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The selected benchmarks in their sets, measured by a session made when the run starts.
pub(crate) struct BenchSets {
    options: Arc<Options>,
    sets: Vec<Vec<Benchmark>>,
    /// How the text is laid out.
    terminal: Terminal,
    /// About how long one benchmark takes in all its rounds: each sample of the body beside
    /// one of the empty loop, and as long again for calibration and the second slope
    /// point. The progress line's estimate corrects it by the pace it sees.
    typical_per_benchmark_s: f64,
    session: Option<Session>,
    /// The sets that took all their samples in one round (slow calls).
    whole: Vec<bool>,
    /// The record as the last set left it, for the watchdog to write from (from the start).
    snapshot: Option<Arc<Mutex<RunRecord>>>,
    /// Set by a stop signal (the engine's settings' flag).
    cancel: Arc<AtomicBool>,
    stop: StopSignals,
    /// Which run of a `--runs` command this is, if one started it (read once, by the
    /// harness's command): where the watchdog writes.
    run_of: Option<RunOf>,
    /// Each benchmark's counts, where `--count` counted it under Valgrind before the run,
    /// and those that failed there.
    counts: ValgrindCounts,
}

impl BenchSets {
    pub(crate) fn new(
        options: Arc<Options>,
        sets: Vec<Vec<Benchmark>>,
        config: &Config,
        terminal: Terminal,
        stop: StopSignals,
        run_of: Option<RunOf>,
    ) -> BenchSets {
        let sample_s = config.target_sample_time.as_secs_f64();
        BenchSets {
            options,
            terminal,
            typical_per_benchmark_s: 4.0 * config.samples as f64 * sample_s,
            whole: vec![false; sets.len()],
            sets,
            session: None,
            snapshot: None,
            cancel: Arc::default(),
            stop,
            run_of,
            counts: ValgrindCounts::default(),
        }
    }

    /// The counts each benchmark is given once its rounds are merged, by name.
    pub(crate) fn with_counts(self, counts: ValgrindCounts) -> BenchSets {
        BenchSets { counts, ..self }
    }

    fn session(&mut self) -> &mut Session {
        self.session.as_mut().expect("the run has started")
    }
}

impl Measured for BenchSets {
    fn units(&self, rounds: usize) -> Vec<ProgressUnit> {
        (self.sets.iter())
            .map(|set| ProgressUnit {
                name: set_id(set).to_string(),
                typical_s: set.len() as f64 * self.typical_per_benchmark_s,
                rounds,
            })
            .collect()
    }

    /// Makes the session (its threads pinned as the run is), the profiler when asked, and
    /// starts the watchdog.
    fn start(
        &mut self,
        runner: Runner,
        record: &mut RunRecord,
        _: &Progress,
    ) -> Result<(), Interrupted> {
        let config = runner.config();
        let snapshot = Arc::new(Mutex::new(record.clone()));
        self.cancel = Arc::clone(&config.cancel);
        watch_for_stuck_sets(&self.options, self.run_of, config, &snapshot, &self.stop);
        self.snapshot = Some(snapshot);
        let mut session = Session::new(runner, Mode::Measure);
        session.pin_threads_from(record.settings.pinned_cpu);
        if (self.options.count).is_some_and(|count| count.via == crate::count::Via::Perf) {
            session.count_with_perf();
        }
        #[cfg(feature = "profile")]
        profile_if_asked(&self.options, &mut session, record);
        self.session = Some(session);
        Ok(())
    }

    fn round_begins(&mut self, round: usize) {
        self.session().first_round_from_now(round == 0);
    }

    fn measure(&mut self, unit: usize, _round: usize, _: Allowance) -> ProbeOutcome {
        let started = Instant::now();
        let session = self.session.as_mut().expect("the run has started");
        session.run_set(&self.sets[unit]);
        self.whole[unit] = session.measured_whole;
        let results = std::mem::take(&mut session.results);
        let mut failures: Vec<Failure> = std::mem::take(&mut session.failures);
        // A benchmark that failed under the counting run fails the run too, even where its
        // timed calls came back: it was not counted as asked.
        for benchmark in &self.sets[unit] {
            if let Some(reason) = self.counts.failed.get(&benchmark.name)
                && !failures.iter().any(|f| f.name == benchmark.name)
            {
                failures.push(Failure {
                    name: benchmark.name.clone(),
                    reason: format!("under --count: {reason}"),
                });
            }
        }
        let skipped: Vec<Failure> = std::mem::take(&mut session.skipped);
        let interrupted = session.interrupted || self.cancel.load(Ordering::Relaxed);
        outcome(
            &self.sets[unit],
            results,
            (failures, skipped),
            started,
            interrupted,
        )
    }

    fn takes_another_round(&self, unit: usize) -> bool {
        !self.whole[unit]
    }

    /// The set's rounds with what is known of the whole run: the comparisons within the
    /// set, the figures in cycles, and the counts made under Valgrind.
    fn merged(&self, mut outcome: ProbeOutcome) -> ProbeOutcome {
        let session = self.session.as_ref().expect("the run has started");
        outcome.results = session.finished(outcome.results);
        for result in &mut outcome.results {
            if let Some(counted) = self.counts.counted.get(&result.name) {
                result.counted = Some(counted.clone());
            }
        }
        outcome
    }

    /// Keeps the core's cycle, measured before the first benchmark, as the run's
    /// `cpu.frequency/cycle`: a comparison with a baseline judges the clock by it, as it does
    /// the main job's.
    fn finish(&mut self, record: &mut RunRecord, _: &Progress, interrupted: bool) -> bool {
        if let Some(cycle) = self.session.as_ref().and_then(Session::cycle) {
            record.probes.push(ProbeOutcome {
                id: CYCLE_PROBE.to_string(),
                method: cycle.result.method.clone(),
                status: ProbeStatus::Ok,
                results: vec![cycle.result.clone()],
                duration_ns: 0,
            });
        }
        interrupted
    }

    fn measured(&mut self, record: &RunRecord, _again: bool) {
        if let Some(snapshot) = &self.snapshot {
            *snapshot.lock().unwrap_or_else(|e| e.into_inner()) = record.clone();
        }
    }

    fn text(&self, record: &RunRecord) -> Result<String, ExportError> {
        run_text(record, &self.terminal)
    }
}

/// `--profile`: the session profiles each benchmark, or the run says why it cannot.
#[cfg(feature = "profile")]
fn profile_if_asked(options: &Options, session: &mut Session, record: &mut RunRecord) {
    if !options.profile {
        return;
    }
    match Profiler::open() {
        Ok(profiler) => session.profile_with(profiler),
        Err(why) => {
            latlab_front::say!(
                "--profile: no profile is taken, the benchmarks run without it: {why}"
            );
            record.notes.push(format!("--profile had no effect: {why}"));
        }
    }
}

/// Starts the watchdog: a set running ten times its budget (at least 10 s) is named; after
/// a stop signal, one that has not come back within [`crate::watchdog::GRACE`] is left
/// behind: what the sets before it measured (`snapshot`) is written, as at the end of a
/// run, and the process ends with the signal's status.
fn watch_for_stuck_sets(
    options: &Arc<Options>,
    run_of: Option<RunOf>,
    config: &Config,
    snapshot: &Arc<Mutex<RunRecord>>,
    stop: &StopSignals,
) {
    let stuck_after = (config.budget * 10).max(std::time::Duration::from_secs(10));
    let (options, snapshot, stop) = (Arc::clone(options), Arc::clone(snapshot), stop.clone());
    let cancel: Arc<AtomicBool> = Arc::clone(&config.cancel);
    crate::watchdog::watch(cancel, stuck_after, move |running| {
        let mut record = snapshot.lock().unwrap_or_else(|e| e.into_inner()).clone();
        record.complete = false;
        record.notes.push(format!(
            "interrupted while {running} was running: it had not come back {} s after the \
             signal, and the run ended without it",
            crate::watchdog::GRACE.as_secs()
        ));
        // The same outputs as the run's, which were made from the same options.
        if let Ok(files) = result_files(&options, run_of) {
            let stream = latlab_front::Stream::beside(files.uses_stdout());
            let terminal = latlab_front::terminal(&options.terminal, stream);
            if let Ok(text) = run_text(&record, &terminal) {
                let _ = files.print_beside(&text);
            }
            let mut unwritten = Unwritten::default();
            files.write_so_far(&record, &mut unwritten, latlab_report::Durability::Synced);
            files.write_at_end(&record, &mut unwritten);
            unwritten.report();
        }
        latlab_front::say!(
            "interrupted: {running} did not come back within {} s of the signal; the results \
             measured before it are written",
            crate::watchdog::GRACE.as_secs()
        );
        crate::watchdog::ending();
        std::process::exit(i32::from(stop.exit_status()));
    });
}

/// What the run prints, fitted to the terminal: the table; unless quiet, the comparisons
/// within sets, cycles, allocations and profiles (the comparison with a baseline follows).
pub(crate) fn run_text(record: &RunRecord, terminal: &Terminal) -> Result<String, ExportError> {
    let table = TableExporter {
        // Quiet, the results table is what is left (the binary's quiet text is its
        // headline table, which benchmarks have none of).
        terminal: Terminal {
            detail: match terminal.detail {
                Detail::Quiet => Detail::Normal,
                detail => detail,
            },
            ..*terminal
        },
        declared: Default::default(),
    };
    // The cycle is said with the cycles per call below, not as a benchmark of the table.
    let mut benchmarks = record.clone();
    benchmarks.probes.retain(|probe| probe.id != CYCLE_PROBE);
    let mut text = table.render(&benchmarks)?;
    if terminal.detail == Detail::Quiet {
        return Ok(terminal.printable(&text).into_owned());
    }
    for lines in [
        comparison_lines(record, terminal),
        cycle_lines(record, terminal),
        allocation_lines(record),
        count_lines(record),
    ] {
        if !lines.is_empty() {
            text.push('\n');
            text.push_str(&lines.join("\n"));
            text.push('\n');
        }
    }
    text.push_str(&profile_text(record));
    Ok(terminal.printable(&text).into_owned())
}

/// What a set is called: its group, or its one benchmark.
fn set_id(set: &[Benchmark]) -> &str {
    let first = &set[0];
    if first.group.is_empty() {
        &first.name
    } else {
        &first.group
    }
}

/// One set's results as a probe outcome, named by its group (or its one benchmark).
fn outcome(
    set: &[Benchmark],
    results: Vec<BenchResult>,
    (failures, skipped): (Vec<Failure>, Vec<Failure>),
    started: Instant,
    interrupted: bool,
) -> ProbeOutcome {
    let id = set_id(set).to_string();
    let reasons = |of: &[Failure]| -> String {
        (of.iter())
            .map(|f| format!("{}: {}", f.name, f.reason))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let status = if interrupted {
        ProbeStatus::Interrupted
    } else if !failures.is_empty() {
        ProbeStatus::Failed {
            reason: reasons(&failures),
        }
    } else if !skipped.is_empty() {
        ProbeStatus::Skipped {
            reason: reasons(&skipped),
        }
    } else {
        ProbeStatus::Ok
    };
    ProbeOutcome {
        id,
        method: crate::session::METHOD.to_string(),
        status,
        results,
        duration_ns: started.elapsed().as_nanos() as u64,
    }
}

/// The results files the options name; for run `run_of` of a `--runs` command, its
/// `run-K.json` in the runs directory too. A `--runs` command refuses the outputs named
/// for each run, which every run would write over.
pub(crate) fn result_files(
    options: &Options,
    run_of: Option<RunOf>,
) -> Result<ResultFiles, String> {
    let mut files = ResultFiles::default();
    if run_of.is_none() {
        latlab_front::check_outputs_for_runs(
            options.sampling.runs,
            &options.outputs_by_flag(),
            "each run's results are kept as run-K.json in the target directory's latlab-runs/N/",
        )?;
    }
    #[cfg(feature = "files")]
    if let Some(of) = run_of {
        let dir = RunOf::handed_directory()
            .ok_or("this run of a --runs command was handed no directory for its results")?;
        files.add(
            latlab_report::OutputTarget::Replaced(crate::baselines::run_file(dir, of)),
            latlab_report::JsonExporter,
        );
    }
    for (format, path) in options.tables.named() {
        let exporter = (format.exporter)(&Default::default());
        files.add(latlab_report::OutputTarget::parse(path), exporter);
    }
    #[cfg(feature = "html")]
    if let Some(path) = &options.html {
        files.add_at_end(latlab_report::OutputTarget::parse(path), BenchmarksPage);
    }
    Ok(files)
}

/// `--html`: the self-contained page, a distribution plot per benchmark.
#[cfg(feature = "html")]
struct BenchmarksPage;

#[cfg(feature = "html")]
impl Exporter for BenchmarksPage {
    fn render(&self, record: &RunRecord) -> Result<String, ExportError> {
        let plots =
            latlab_report::render_plots(record, &Default::default(), latlab_report::Formats::Svg)?;
        Ok(latlab_report::benchmarks_html_page(record, &plots))
    }
}
