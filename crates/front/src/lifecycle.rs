//! The run lifecycle both front ends share, from the lock to the exit status:
//!
//! 1. take the machine-wide run lock (waiting for another run, or noting why not);
//! 2. apply the controls (`--pin`, `--mlock`, `--rt`), each degrading to a note;
//! 3. begin the record: the environment's concerns, the notes, the clock's;
//! 4. measure the units (the binary's probes, the harness's benchmark sets) in rounds taken
//!    round-robin, so that a unit's rounds lie apart with the others between them, each
//!    round merged into the record as it comes and every results file rewritten, so that a
//!    crash or Ctrl-C loses at most the unit under way;
//! 5. write the outputs, print the text with the comparison against a baseline and the
//!    gate's verdict, keep the run as a baseline, and say what was written where;
//! 6. the exit status: the signal's when one stopped the run; 2 when it measured but not
//!    one results file could be written; 1 when a unit failed, an output could not be
//!    written or the gate found a result slower; else 0.
//!
//! What is measured, and the text beside the table, is the front end's: it implements
//! [`Measured`].

#[cfg(feature = "files")]
use crate::{Baselines, RunOf};
use crate::{Progress, ProgressUnit, ResultFiles, TimeSpent, TimeWords, Unwritten};
use latlab_engine::budget::{Allowance, TimeBudget};
use latlab_engine::model::{ProbeOutcome, ProbeStatus, RunRecord, RunSettings};
use latlab_engine::rounds::ProbeRounds;
use latlab_engine::signals::StopSignals;
use latlab_engine::{Config, Host, Interrupted, Runner, Suite};
use latlab_report::terminal::{Detail, Terminal};
use latlab_report::{Durability, ExportError, advice};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a run measures: a set of probes, or of benchmark sets. The lifecycle calls these in
/// order: [`progress_units`](Measured::progress_units), [`start`](Measured::start), then
/// for each round and unit [`measure`](Measured::measure) and
/// [`measured`](Measured::measured), then [`finish`](Measured::finish),
/// [`text`](Measured::text) and [`write_more`](Measured::write_more).
pub trait Measured {
    /// The units as the progress line shows them, for a run of `rounds` rounds.
    fn progress_units(&self, rounds: usize) -> Vec<ProgressUnit>;

    /// The runner to measure with (on the request's host, with the engine's settings as the
    /// controls left them, naming each measurement on the progress line), and the record as
    /// it begins: what else is needed to measure is made here, and what comes before the
    /// units is taken (a stability check, said on `progress`). `Err` when a signal stopped
    /// it; nothing is measured then.
    fn start(
        &mut self,
        runner: Runner,
        record: &mut RunRecord,
        progress: &Progress,
    ) -> Result<(), Interrupted>;

    /// How many units there are, in the order they are measured.
    fn units(&self) -> usize;

    /// How many of the run's `rounds` unit `unit` takes.
    fn rounds_of(&self, _unit: usize, rounds: usize) -> usize {
        rounds
    }

    /// Round `round` (from 0) begins.
    fn round_begins(&mut self, _round: usize) {}

    /// Measures round `round` of unit `unit` within `allowance`, its part of the run's time
    /// budget (its samples scaled by [`Allowance::share`], and a deadline): its outcome,
    /// `Interrupted` when a signal stopped it.
    fn measure(&mut self, unit: usize, round: usize, allowance: Allowance) -> ProbeOutcome;

    /// Whether `unit` takes another round as far as the front end knows (a set that took all
    /// its samples in one round does not); the rounds merged decide too.
    fn takes_another_round(&self, _unit: usize) -> bool {
        true
    }

    /// The merged rounds of a unit as the record keeps them.
    fn merged(&self, outcome: ProbeOutcome) -> ProbeOutcome {
        outcome
    }

    /// A round of a unit was measured and merged into `record`; `again` when the unit takes
    /// another round.
    fn measured(&mut self, _record: &RunRecord, _again: bool) {}

    /// After the units, or after a signal stopped them (`interrupted`): what comes after
    /// (the stability check again, said on the progress line). Whether the run was stopped.
    fn finish(&mut self, _record: &mut RunRecord, _progress: &Progress, interrupted: bool) -> bool {
        interrupted
    }

    /// The text printed after the run: the table and what the front end adds to it.
    fn text(&self, record: &RunRecord) -> Result<String, ExportError>;

    /// Outputs beyond the results files (a page, plots), written at the end, each that
    /// cannot be noted in `unwritten`: the lines saying where they went.
    fn write_more(&self, _record: &RunRecord, _unwritten: &mut Unwritten) -> Vec<String> {
        Vec::new()
    }

    /// What the line of where the time went calls the parts of this run.
    fn time_words(&self) -> TimeWords {
        TimeWords::default()
    }
}

/// The controls a run applies to itself before measuring.
#[derive(Debug, Clone, Copy, Default)]
pub struct Controls {
    /// `--pin CPU`.
    pub pin: Option<usize>,
    /// `--mlock`.
    pub mlock: bool,
    /// `--rt`: real-time priority, with a pause between samples.
    pub rt: bool,
}

/// A run as a front end asks for it.
pub struct RunRequest {
    pub host: Arc<dyn Host>,
    pub suite: Suite,
    /// The engine's settings (the lifecycle sets their cancel flag).
    pub config: Config,
    /// The rounds each unit is measured in, at most.
    pub rounds: usize,
    pub controls: Controls,
    /// What the front end changed from the defaults, for the record's notes.
    pub notes: Vec<String>,
    pub files: ResultFiles,
    /// A directory to create for the outputs once the lock is held; removed again when the
    /// run kept nothing in it.
    pub create_dir: Option<PathBuf>,
    pub baselines: Baselines,
    /// How the comparison with a baseline is laid out.
    pub terminal: Terminal,
    /// What a result is called in the gate's text: "result", "benchmark".
    pub results_called: &'static str,
    /// The time the run may take, from the lock taken to the outputs written; `None`: as
    /// long as its units take.
    pub budget: Option<Duration>,
}

/// Without the results files (the `files` feature) there are no baselines: nothing to
/// compare with or keep.
#[cfg(not(feature = "files"))]
#[derive(Debug, Default)]
pub struct Baselines;

#[cfg(not(feature = "files"))]
impl Baselines {
    /// Nothing asked of baselines.
    pub fn none() -> Baselines {
        Baselines
    }
}

/// Runs `measured` as `request` asks, `stop` telling of Ctrl-C and the like: the exit
/// status, or a refusal (one line) when the results directory could not be made or the
/// text could not be made or printed.
pub fn execute(
    mut request: RunRequest,
    measured: &mut dyn Measured,
    stop: &StopSignals,
) -> Result<u8, String> {
    crate::run_files::remember_stdout();
    let cancel = stop.flag();
    let mut notes = Vec::new();
    let Ok(_lock) = crate::take_lock(request.host.as_ref(), &cancel, &mut notes) else {
        crate::say!("latlab: interrupted while waiting for the other run; nothing was measured");
        return Ok(stop.exit_status());
    };
    // The progress line's thread starts before --pin and --rt apply to this thread, so that
    // it neither shares the pinned CPU nor runs in real time.
    let shown = std::io::stderr().is_terminal() && request.terminal.detail != Detail::Quiet;
    let units = measured.progress_units(request.rounds);
    let budget = (request.budget)
        .map(|total| TimeBudget::new(total, units.iter().map(|u| (u.typical_s, u.rounds))));
    let names: Vec<String> = units.iter().map(|unit| unit.name.clone()).collect();
    let mut progress = Progress::new(units, request.rounds, shown);
    let mut spent = TimeSpent::begin(request.budget);
    request.config.cancel = cancel;
    let settings = apply_controls(&mut request, &mut notes);
    let mut record = begin_record(&request, settings, notes);
    if let Some(dir) = &request.create_dir {
        create_results_dir(dir)?;
    }
    let mut unwritten = Unwritten::default();
    let mut runner = Runner::on(Arc::clone(&request.host), request.config.clone());
    if let Some(listener) = progress.listener() {
        runner.listen(listener);
    }
    let started = spent.timed(
        |s| &mut s.around,
        || measured.start(runner, &mut record, &progress),
    );
    let mut interrupted = match started {
        Ok(()) => {
            let mut rounds = Rounds {
                request: &request,
                measured: &mut *measured,
                progress: &mut progress,
                unwritten: &mut unwritten,
                spent: &mut spent,
                budget,
                names,
            };
            rounds.measure(&mut record)
        }
        Err(Interrupted) => true,
    };
    interrupted = spent.timed(
        |s| &mut s.around,
        || measured.finish(&mut record, &progress, interrupted),
    );
    progress.finish();
    record
        .notes
        .extend(spent.scaled_note(&measured.time_words()));
    record.load_avg_after = request.host.load_average();
    record.complete = !interrupted;
    let regressed = write_outputs(&request, measured, &record, &mut unwritten, &mut spent)?;
    let status = exit_status(&request, &record, &unwritten, interrupted, stop);
    Ok(if status == 0 && regressed { 1 } else { status })
}

/// Applies `--pin`, `--mlock` and `--rt`, each degrading to a note when not permitted: the
/// settings the record keeps.
fn apply_controls(request: &mut RunRequest, notes: &mut Vec<String>) -> RunSettings {
    let config = &mut request.config;
    let mut settings = RunSettings {
        suite: request.suite.name().to_string(),
        samples: config.samples,
        target_sample_time_ns: config.target_sample_time.as_nanos() as u64,
        budget_per_benchmark_ns: config.budget.as_nanos() as u64,
        rounds: request.rounds,
        pinned_cpu: None,
        memory_locked: false,
        realtime: false,
    };
    let (host, controls) = (&request.host, request.controls);
    if let Some(cpu) = controls.pin {
        match host.pin_to_cpu(cpu) {
            Ok(()) => settings.pinned_cpu = Some(cpu),
            Err(reason) => notes.push(format!("--pin had no effect: {reason}")),
        }
    }
    if controls.mlock {
        match host.lock_memory() {
            Ok(()) => settings.memory_locked = true,
            Err(reason) => notes.push(format!("--mlock had no effect: {reason}")),
        }
    }
    if controls.rt {
        match host.enter_realtime() {
            Ok(()) => {
                settings.realtime = true;
                config.pause_between_samples = Some(latlab_engine::isolation::RT_PAUSE);
            }
            Err(reason) => notes.push(format!("--rt had no effect: {reason}")),
        }
    }
    settings
}

/// The run's record as it starts: the environment's concerns, the request's notes, those
/// the lock and the controls left (`notes`), and the clock's.
fn begin_record(request: &RunRequest, settings: RunSettings, notes: Vec<String>) -> RunRecord {
    let mut record = RunRecord::begin(request.host.as_ref(), settings, Vec::new());
    record.notes = (record.environment.concerns().iter())
        .map(advice::concern)
        .collect();
    record.notes.extend(request.notes.iter().cloned());
    record.notes.extend(notes);
    record.notes.extend(crate::core_class::note(&record));
    record.notes.extend(advice::clock(&record.clock));
    record
}

/// Creates the results directory, or takes the one another run of this user made since the
/// request was checked (two runs started into one new `--out`: the second waited for the
/// lock).
fn create_results_dir(dir: &Path) -> Result<(), String> {
    let cannot = |e: std::io::Error| {
        format!(
            "could not create the results directory {}: {e}",
            dir.display()
        )
    };
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let mine = std::fs::symlink_metadata(dir).is_ok_and(|m| {
                m.is_dir() && crate::directories::check_own_directory(dir, false).is_ok()
            });
            if mine {
                Ok(())
            } else {
                Err(format!(
                    "could not create the results directory {}: something else was made \
                     there while this run waited; choose another --out",
                    dir.display()
                ))
            }
        }
        created => created.map_err(cannot),
    }
}

/// The units measured in the request's rounds, and what they are measured with.
struct Rounds<'a> {
    request: &'a RunRequest,
    measured: &'a mut dyn Measured,
    progress: &'a mut Progress,
    unwritten: &'a mut Unwritten,
    spent: &'a mut TimeSpent,
    budget: Option<TimeBudget>,
    /// Each unit's name, for the time each round took.
    names: Vec<String>,
}

impl Rounds<'_> {
    /// Measures the units in the request's rounds, taken round-robin, each round merged
    /// into the record and every results file rewritten as it arrives; `true` when a signal
    /// stopped it.
    fn measure(&mut self, record: &mut RunRecord) -> bool {
        let request = self.request;
        let mut merged: Vec<ProbeRounds> = Vec::with_capacity(self.measured.units());
        for round in 0..request.rounds {
            self.measured.round_begins(round);
            for unit in 0..self.measured.units() {
                let rounds = self.measured.rounds_of(unit, request.rounds);
                let done = merged.get(unit).is_some_and(|m| !m.wants_another_round());
                if round >= rounds
                    || done
                    || (round > 0 && !self.measured.takes_another_round(unit))
                {
                    continue;
                }
                if round > 0 && !self.worth_another_round(unit) {
                    continue;
                }
                self.progress.unit_started(unit, round);
                let outcome = self.measure_round(unit, round);
                let interrupted = outcome.status == ProbeStatus::Interrupted;
                let skipped = matches!(outcome.status, ProbeStatus::Skipped { .. });
                match merged.get_mut(unit) {
                    Some(rounds) => rounds.add(outcome),
                    None => merged.push(ProbeRounds::first(outcome)),
                }
                let mut kept = self.measured.merged(merged[unit].outcome().clone());
                if let Some(class) = crate::core_class::pinned_class(record) {
                    crate::core_class::name_in_results(&mut kept, &class);
                }
                match record.probes.get_mut(unit) {
                    Some(earlier) => *earlier = kept,
                    None => record.probes.push(kept),
                }
                let rewrite = Instant::now();
                (request.files).write_so_far(record, self.unwritten, Durability::Cached);
                self.spent.rewrote(rewrite.elapsed());
                let again = round + 1 < rounds
                    && merged[unit].wants_another_round()
                    && self.measured.takes_another_round(unit);
                if !again && let Some(budget) = &mut self.budget {
                    budget.ended(unit);
                }
                self.progress.unit_finished(skipped, again);
                self.measured.measured(record, again);
                if interrupted {
                    return true;
                }
            }
        }
        false
    }

    /// Whether the budget has room for another round of `unit`; one it has not is left out
    /// (with the unit's rounds after it), and counted.
    fn worth_another_round(&mut self, unit: usize) -> bool {
        let (Some(budget), Some(left)) = (&mut self.budget, self.spent.left_for_units()) else {
            return true;
        };
        if budget.worth_another_round(unit, left) {
            return true;
        }
        budget.ended(unit);
        self.spent.rounds_left_out.push(self.names[unit].clone());
        false
    }

    /// Round `round` of `unit`, within its part of the budget.
    fn measure_round(&mut self, unit: usize, round: usize) -> ProbeOutcome {
        let allowance = match (&self.budget, self.spent.left_for_units()) {
            (Some(budget), Some(left)) => budget.allowance(unit, left),
            _ => Allowance::UNLIMITED,
        };
        let started = Instant::now();
        let outcome = self.measured.measure(unit, round, allowance);
        let took = started.elapsed();
        self.spent.units += took;
        (self.spent.rounds).push((self.names[unit].clone(), took, allowance));
        if let Some(budget) = &mut self.budget {
            budget.took(unit, took);
        }
        outcome
    }
}

/// Writes every output, prints the text with the comparison against the baseline, and
/// keeps the run as a baseline: whether the gate found a result slower. `Err` when the text
/// could not be made or printed (the files are written first).
fn write_outputs(
    request: &RunRequest,
    measured: &dyn Measured,
    record: &RunRecord,
    unwritten: &mut Unwritten,
    spent: &mut TimeSpent,
) -> Result<bool, String> {
    let files = &request.files;
    spent.timed(
        |s| &mut s.results,
        || files.write_so_far(record, unwritten, Durability::Synced),
    );
    let written_more = spent.timed(|s| &mut s.more, || measured.write_more(record, unwritten));
    let (judged, regressed) = against_baseline(request, record);
    let text = measured.text(record).map_err(|e| with_causes(&e))? + &judged;
    if files.uses_stdout() {
        crate::stderr_text(&text);
        spent.timed(|s| &mut s.results, || files.write_at_end(record, unwritten));
    } else {
        spent.timed(|s| &mut s.results, || files.write_at_end(record, unwritten));
        crate::print_out(&text).map_err(|e| with_causes(&e))?;
    }
    #[cfg(feature = "files")]
    request
        .baselines
        .keep(std::slice::from_ref(record), unwritten);
    files.say_written(unwritten);
    for line in written_more {
        crate::say!("{line}");
    }
    if request.terminal.detail != Detail::Quiet {
        let width = request.terminal.width;
        crate::say!("{}", spent.line(&measured.time_words(), width));
    }
    if request.terminal.detail == Detail::Verbose {
        for line in spent.unit_lines() {
            crate::say!("{line}");
        }
    }
    unwritten.report();
    if !files.any_kept(unwritten)
        && let Some(dir) = &request.create_dir
    {
        // The directory this run made holds none of its results: removed if nothing else
        // went into it, so that a run that wrote nothing leaves nothing.
        let _ = std::fs::remove_dir(dir);
    }
    Ok(regressed)
}

/// The comparison with the baseline asked for, as the request's terminal lays it out, and
/// whether the gate found a result slower.
#[cfg(feature = "files")]
fn against_baseline(request: &RunRequest, record: &RunRecord) -> (String, bool) {
    let these = latlab_report::compare::Side::one("this run", record.clone());
    let (judged, regressed) =
        (request.baselines).judged(these, &request.terminal, request.results_called);
    (request.terminal.printable(&judged).into_owned(), regressed)
}

/// Without the results files there are no baselines.
#[cfg(not(feature = "files"))]
fn against_baseline(_: &RunRequest, _: &RunRecord) -> (String, bool) {
    (String::new(), false)
}

/// The run's exit status: the signal's when one stopped it; 2 when it measured but not one
/// results file could be written (the text is all that is left); 1 when a unit failed or
/// an output could not be written; else 0.
fn exit_status(
    request: &RunRequest,
    record: &RunRecord,
    unwritten: &Unwritten,
    interrupted: bool,
    stop: &StopSignals,
) -> u8 {
    if interrupted {
        crate::say!("latlab: interrupted: the results measured before it are written");
        return stop.exit_status();
    }
    if !request.files.any_kept(unwritten) {
        crate::say!(
            "latlab: no results file could be written (see above); the table is all that is \
             left of this run: free the disk, raise the limit, or choose where else to write, \
             then run again"
        );
        return 2;
    }
    let failed = (record.probes.iter()).any(|p| matches!(p.status, ProbeStatus::Failed { .. }));
    u8::from(failed || !unwritten.is_empty())
}

/// An error and its causes in one line: "could not write out.json: No space left on
/// device (os error 28)".
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(&format!(": {inner}"));
        cause = inner.source();
    }
    text
}

/// How the runs of a `--runs` command ended.
#[cfg(feature = "files")]
pub enum Repeated {
    /// Every run ended with its results written: their records, in order, and whether one
    /// of them failed.
    All {
        records: Vec<RunRecord>,
        failed: bool,
    },
    /// A run was stopped: the status to end with.
    Stopped(u8),
}

/// `--runs N`: the program run N times, each a process of its own started after the last
/// ended ([`crate::run_again`]), each writing its results into `results_of(run)`; `announce`
/// says each before it starts. A run stopped by a signal is said, with where the runs before
/// it are (`kept_in`).
#[cfg(feature = "files")]
pub fn repeat(
    runs: usize,
    stop: &StopSignals,
    kept_in: &Path,
    results_of: impl Fn(RunOf) -> PathBuf,
    announce: impl Fn(RunOf),
) -> Result<Repeated, String> {
    let ended = crate::run_again(runs, stop, announce)
        .map_err(|e| format!("--runs: cannot start a run: {e}"))?;
    let failed = match ended {
        crate::RunsEnded::All { failed } => failed,
        crate::RunsEnded::Stopped { status, whole } => {
            crate::say!(
                "latlab: stopped in run {} of {runs}; the {whole} whole run(s) before it and \
                 what it measured are in {}",
                whole + 1,
                kept_in.display()
            );
            return Ok(Repeated::Stopped(status));
        }
    };
    let records = (1..=runs)
        .map(|run| {
            let path = results_of(RunOf { run, runs });
            latlab_report::load::load_run(&path).map_err(|e| format!("{}: {}", path.display(), e.0))
        })
        .collect::<Result<Vec<RunRecord>, String>>()?;
    Ok(Repeated::All { records, failed })
}

/// The runs of a `--runs` command compared with the baseline together (the comparison
/// printed, as `terminal` lays it out) and kept as one together: whether the gate found a
/// result slower or a baseline could not be kept.
#[cfg(feature = "files")]
pub fn judge_and_keep(
    baselines: &Baselines,
    records: Vec<RunRecord>,
    terminal: &Terminal,
    results_called: &str,
) -> Result<bool, String> {
    let mut unwritten = Unwritten::default();
    baselines.keep(&records, &mut unwritten);
    let these = latlab_report::compare::Side {
        label: format!("these {} runs", records.len()),
        runs: records,
    };
    let (text, regressed) = baselines.judged(these, terminal, results_called);
    crate::print_out(&terminal.printable(&text)).map_err(|e| with_causes(&e))?;
    unwritten.report();
    Ok(regressed || !unwritten.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_engine::SyntheticHost;
    use latlab_engine::names::key;
    use latlab_report::{MarkdownExporter, OutputTarget};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
        fn progress_units(&self, rounds: usize) -> Vec<ProgressUnit> {
            (0..self.count)
                .map(|unit| ProgressUnit {
                    name: format!("unit{unit}"),
                    typical_s: 1.0,
                    rounds: self.rounds_of(unit, rounds),
                    alone: false,
                })
                .collect()
        }

        fn start(&mut self, _: Runner, _: &mut RunRecord, _: &Progress) -> Result<(), Interrupted> {
            Ok(())
        }

        fn units(&self) -> usize {
            self.count
        }

        /// The last unit takes one round.
        fn rounds_of(&self, unit: usize, rounds: usize) -> usize {
            if unit + 1 == self.count { 1 } else { rounds }
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
        RunRequest {
            host: Arc::new(SyntheticHost::default()),
            suite: Suite::Quick,
            config: Config::quick(),
            rounds: 3,
            controls: Controls::default(),
            notes: Vec::new(),
            files,
            create_dir,
            baselines: Baselines::none(),
            terminal: Terminal::default(),
            results_called: "result",
            budget: None,
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
        fn progress_units(&self, rounds: usize) -> Vec<ProgressUnit> {
            vec![ProgressUnit {
                name: "pinned".into(),
                typical_s: 1.0,
                rounds,
                alone: false,
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

        fn units(&self) -> usize {
            1
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
        let named = &little.probes[0].results[0].parameters[key::CORE_CLASS];
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
        let named = &big.probes[0].results[0].parameters[key::CORE_CLASS];
        assert!(
            named
                .as_str()
                .unwrap()
                .starts_with("class 1 of 2 (the biggest)"),
            "{named}"
        );
        let homogeneous = pinned(SyntheticHost::default(), 1);
        assert!(
            !homogeneous.probes[0].results[0]
                .parameters
                .contains_key(key::CORE_CLASS)
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
}
