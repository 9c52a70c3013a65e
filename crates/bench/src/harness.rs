//! A bench binary's run: parse the command line, select the benchmarks, measure them, and
//! write what was asked for.

use crate::options::{Command, Options, help};
#[cfg(feature = "profile")]
use crate::profile::Profiler;
use crate::registry::{self, Benchmark};
use crate::session::{Failure, Mode, Session};
use crate::text::{allocation_lines, comparison_lines, cycle_lines, profile_text};
use latlab_engine::analysis::SLOPE_SAMPLES_PER_ROUND;
use latlab_engine::model::{ProbeOutcome, ProbeStatus, RunRecord, RunSettings};
use latlab_engine::rounds::ProbeRounds;
use latlab_engine::signals::StopSignals;
use latlab_engine::{Config, Host, Interrupted, RealHost, Runner};
#[cfg(feature = "files")]
use latlab_front::RunsEnded;
use latlab_front::{RunOf, Unwritten, help_width, take_lock, text_width};
#[cfg(feature = "files")]
use latlab_report::compare::Side;
use latlab_report::{
    Exporter, MarkdownExporter, OutputTarget, TableExporter, advice, write_output,
};
#[cfg(feature = "html")]
use latlab_report::{Formats, benchmarks_html_page, render_plots};
use regex_lite::Regex;
use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A reason to stop with exit status 2 (bad arguments, an unknown benchmark or baseline,
/// an output that cannot be written), in one line.
struct Stop(String);

fn bad(message: impl Into<String>) -> Stop {
    Stop(message.into())
}

/// What the binary refuses before measuring, the harness refuses too: a `--pin` CPU this
/// process cannot run on; an output path that is empty, a directory, or cannot be written;
/// two outputs on standard output.
fn check_before_measuring(options: &Options, host: &dyn Host) -> Result<(), Stop> {
    if let Some(cpu) = options.sampling.pin {
        latlab_front::check_pin(host, cpu).map_err(bad)?;
    }
    let named = [
        ("--json", &options.tables.json),
        ("--csv", &options.tables.csv),
        ("--markdown", &options.tables.markdown),
        ("--html", &options.html),
    ];
    for (flag, path) in named {
        match path.as_deref() {
            None | Some("-") => {}
            Some(path) => latlab_front::check_output_file(std::path::Path::new(path))
                .map_err(|why| bad(format!("{flag} {why}")))?,
        }
    }
    let on_stdout = named
        .iter()
        .filter(|(_, p)| p.as_deref() == Some("-"))
        .count();
    if on_stdout > 1 {
        return Err(bad(
            "only one of --json, --csv, --markdown and --html can be '-' (standard output)",
        ));
    }
    Ok(())
}

/// Writes `text` to standard output, never panicking as `print!` would: a closed pipe
/// (`| head`) ends the text quietly, a full pipe is waited for, and any other failure is
/// said on standard error.
fn print_out(text: &str) {
    if let Err(error) = write_output(&OutputTarget::Stdout, text) {
        let broken_pipe = std::error::Error::source(&error)
            .and_then(|cause| cause.downcast_ref::<std::io::Error>())
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe);
        if !broken_pipe {
            latlab_front::say!(
                "error: {error}: {}",
                std::error::Error::source(&error).map_or_else(String::new, ToString::to_string)
            );
        }
    }
}

/// Runs the bench binary with these arguments; returns the exit status.
pub(crate) fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let mut args = args.into_iter().peekable();
    let program = args
        .peek()
        .and_then(|path| std::path::Path::new(path).file_name())
        .map_or_else(
            || "bench".to_string(),
            |name| name.to_string_lossy().into_owned(),
        );
    let options = match Command::parse(args) {
        Ok(Command::Run(options)) => options,
        Ok(Command::Help) => {
            let columns = std::env::var("COLUMNS").ok();
            let width = help_width(text_width(columns.as_deref(), || None));
            print_out(&help(&program, width));
            return 0;
        }
        Err(message) => {
            latlab_front::say!("error: {message}; see `cargo bench -- --help`");
            return 2;
        }
    };
    crate::watchdog::install_hooks();
    match run_with(&Arc::new(*options)) {
        Ok(code) => code,
        Err(Stop(message)) => {
            latlab_front::say!("error: {message}");
            2
        }
    }
}

fn run_with(options: &Arc<Options>) -> Result<i32, Stop> {
    refuse_what_this_build_lacks(options)?;
    let selected = select(options)?;
    if options.list {
        for benchmark in &selected {
            print_out(&format!("{}: benchmark\n", benchmark.name));
        }
        return Ok(0);
    }
    let run_of = RunOf::of_this_process();
    #[cfg(feature = "files")]
    let baselines = match run_of {
        Some(_) => crate::baselines::Requested::none(options),
        None => crate::baselines::Requested::load(options).map_err(bad)?,
    };
    if !options.bench {
        return Ok(run_once(selected));
    }
    let outputs = Outputs::of(options, run_of)?;
    let host: Arc<dyn Host> = Arc::new(RealHost::default());
    check_before_measuring(options, host.as_ref())?;
    #[cfg(feature = "files")]
    if options.sampling.runs > 1 && run_of.is_none() {
        return repeat(options, &baselines);
    }
    let mut notes = Vec::new();
    let mut config = config_of(options)?;
    let stop = StopSignals::install().map_err(|e| bad(format!("cannot handle Ctrl-C: {e}")))?;
    let cancel = stop.flag();
    config.cancel = Arc::clone(&cancel);
    let _lock = match take_lock(host.as_ref(), &cancel, &mut notes) {
        Ok(lock) => lock,
        Err(Interrupted) => {
            latlab_front::say!("interrupted while waiting for the other run; nothing was measured");
            return Ok(i32::from(stop.exit_status()));
        }
    };
    let mut record = begin_record(options, &config, host.as_ref(), notes);
    let snapshot = Arc::new(Mutex::new(record.clone()));
    watch_for_stuck_sets(options, &config, &cancel, &snapshot, &stop);
    let rounds = config.rounds;
    let mut session = Session::new(Runner::on(Arc::clone(&host), config), Mode::Measure);
    session.pin_threads_from(record.settings.pinned_cpu);
    #[cfg(feature = "profile")]
    profile_if_asked(options, &mut session, &mut record);
    let sets = registry::side_by_side(selected);
    // Outputs that could not be written, with why: the run goes on measuring, and says so
    // at the end.
    let mut unwritten = Unwritten::default();
    measure_in_rounds(
        &mut session,
        &sets,
        rounds,
        &mut record,
        &Kept {
            outputs: &outputs,
            snapshot: &snapshot,
        },
        &mut unwritten,
        &cancel,
    );
    record.load_avg_after = host.load_average();
    record.complete = !cancel.load(Ordering::Relaxed);

    let text = run_text(&record)?;
    #[cfg(feature = "files")]
    let (text, regressed) = baselines.judged(Side::one("this run", record.clone()), text);
    #[cfg(not(feature = "files"))]
    let regressed = false;
    outputs.print_beside(&text);
    outputs.write(&record, &mut unwritten);
    #[cfg(feature = "files")]
    baselines.save(std::slice::from_ref(&record), &mut unwritten);
    unwritten.report();
    let code = exit_code(&record, &outputs, &unwritten, &stop);
    Ok(if code == 0 && regressed { 1 } else { code })
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

/// `--runs N`: the run made N times, each a process of its own started after the last
/// ended ([`latlab_front::run_again`]), each writing its results into `run-K.json` of the
/// runs directory; then the runs compared with the baseline together (and gated), and kept
/// as one together. The runs of an earlier command in that directory go first.
#[cfg(feature = "files")]
fn repeat(options: &Options, baselines: &crate::baselines::Requested) -> Result<i32, Stop> {
    let runs = options.sampling.runs;
    let dir = crate::baselines::runs_directory().map_err(|why| bad(format!("--runs: {why}")))?;
    let cannot = |e: std::io::Error| bad(format!("--runs: {}: {e}", dir.display()));
    std::fs::create_dir_all(&dir).map_err(cannot)?;
    for (_, earlier) in latlab_front::numbered_runs(&dir, ".json") {
        std::fs::remove_file(earlier).map_err(cannot)?;
    }
    let stop = StopSignals::install().map_err(|e| bad(format!("cannot handle Ctrl-C: {e}")))?;
    let ended = latlab_front::run_again(runs, &stop, |of| {
        latlab_front::say!(
            "run {} of {}, into {}",
            of.run,
            of.runs,
            run_file(&dir, of).display()
        );
    })
    .map_err(|e| bad(format!("--runs: cannot start a run: {e}")))?;
    let failed = match ended {
        RunsEnded::All { failed } => failed,
        RunsEnded::Stopped { status, whole } => {
            latlab_front::say!(
                "stopped in run {} of {runs}; the {whole} whole run(s) before it and what it \
                 measured are in {}",
                whole + 1,
                dir.display()
            );
            return Ok(i32::from(status));
        }
    };
    let records = (1..=runs)
        .map(|run| {
            let path = run_file(&dir, RunOf { run, runs });
            latlab_report::load::load_run(&path)
                .map_err(|e| bad(format!("{}: {}", path.display(), e.0)))
        })
        .collect::<Result<Vec<RunRecord>, Stop>>()?;
    let these = Side {
        label: format!("these {runs} runs"),
        runs: records.clone(),
    };
    let (text, regressed) = baselines.judged(these, String::new());
    print_out(&text);
    let mut unwritten = Unwritten::default();
    baselines.save(&records, &mut unwritten);
    unwritten.report();
    latlab_front::say!(
        "{runs} runs in {}/run-1.json ... run-{runs}.json; `latlab compare` compares that \
         directory with another of runs",
        dir.display()
    );
    Ok(i32::from(failed || regressed || !unwritten.is_empty()))
}

/// Where run `of` of a `--runs` command writes its results.
#[cfg(feature = "files")]
fn run_file(dir: &std::path::Path, of: RunOf) -> std::path::PathBuf {
    dir.join(format!("{}.json", of.name()))
}

/// Refuses, before measuring, an option whose feature this build of the harness was built
/// without, naming the feature.
fn refuse_what_this_build_lacks(options: &Options) -> Result<(), Stop> {
    let (files, profile, html) = (
        ("files", cfg!(feature = "files")),
        ("profile", cfg!(feature = "profile")),
        ("html", cfg!(feature = "html")),
    );
    let asked = [
        ("--profile", options.profile, profile),
        ("--html", options.html.is_some(), html),
        ("--json", options.tables.json.is_some(), files),
        ("--csv", options.tables.csv.is_some(), files),
        (
            "--save-baseline",
            options.baselines.save_baseline.is_some(),
            files,
        ),
        (
            "--add-to-baseline",
            options.add_to_baseline.is_some(),
            files,
        ),
        ("--baseline", options.baselines.baseline.is_some(), files),
        ("--runs", options.sampling.runs > 1, files),
    ];
    match asked
        .into_iter()
        .find(|&(_, asked, (_, built))| asked && !built)
    {
        Some((option, _, (feature, _))) => Err(bad(format!(
            "{option}: this build of latlab-bench was built without its `{feature}` feature \
             (on by default); enable it in the dev-dependency"
        ))),
        None => Ok(()),
    }
}

/// The run's exit status, as the binary's: the signal's when one stopped it; 2 when it
/// measured but not one of the files asked for could be written; 1 when a benchmark failed
/// or an output could not be written; else 0.
fn exit_code(
    record: &RunRecord,
    outputs: &Outputs,
    unwritten: &Unwritten,
    stop: &StopSignals,
) -> i32 {
    if !record.complete {
        latlab_front::say!("interrupted: the results measured before it are written");
        return i32::from(stop.exit_status());
    }
    let asked = outputs.names();
    if !asked.is_empty() && asked.iter().all(|name| unwritten.contains(name)) {
        latlab_front::say!(
            "latlab: no results file could be written (see above); the table is all that is \
             left of this run: free the disk, raise the limit, or choose other files, then \
             run again"
        );
        return 2;
    }
    let failed = record
        .probes
        .iter()
        .any(|p| matches!(p.status, ProbeStatus::Failed { .. }));
    i32::from(failed || !unwritten.is_empty())
}

/// The run's record as it starts: the controls applied, the environment's concerns, the
/// `notes` gathered so far, the clock's, and why fewer rounds are taken than asked.
fn begin_record(
    options: &Options,
    config: &Config,
    host: &dyn Host,
    mut notes: Vec<String>,
) -> RunRecord {
    let settings = apply_controls(options, config, host, &mut notes);
    let mut record = RunRecord::begin(host, settings, Vec::new());
    record.notes = (record.environment.concerns().iter())
        .map(advice::concern)
        .collect();
    record.notes.extend(notes);
    record.notes.extend(advice::clock(&record.clock));
    if config.rounds < options.sampling.rounds {
        record.notes.push(format!(
            "measured in {} round(s), not {}: each round takes at least \
             {SLOPE_SAMPLES_PER_ROUND} of the {} samples",
            config.rounds, options.sampling.rounds, config.samples
        ));
    }
    record
}

/// Measures `sets` in `rounds` rounds, the sets taken in turn once per round so that a
/// benchmark's rounds lie apart with the others between them; each set's rounds merged as
/// they come into `record`, which is written as each set is measured, so that a run stopped
/// part way loses nothing.
fn measure_in_rounds(
    session: &mut Session,
    sets: &[Vec<Benchmark>],
    rounds: usize,
    record: &mut RunRecord,
    kept: &Kept,
    unwritten: &mut Unwritten,
    cancel: &AtomicBool,
) {
    let mut measured: Vec<ProbeRounds> = Vec::with_capacity(sets.len());
    // The sets that took all their samples in one round (slow calls).
    let mut whole = vec![false; sets.len()];
    for round in 0..rounds {
        session.first_round_from_now(round == 0);
        for (index, set) in sets.iter().enumerate() {
            if whole[index]
                || measured
                    .get(index)
                    .is_some_and(|m| !m.wants_another_round())
            {
                continue;
            }
            let started = Instant::now();
            session.run_set(set);
            whole[index] = session.measured_whole;
            let results = std::mem::take(&mut session.results);
            let failures: Vec<Failure> = std::mem::take(&mut session.failures);
            let interrupted = session.interrupted || cancel.load(Ordering::Relaxed);
            let this_round = outcome(set, results, failures, started, interrupted);
            match measured.get_mut(index) {
                Some(rounds) => rounds.add(this_round),
                None => measured.push(ProbeRounds::first(this_round)),
            }
            // Only this set's merged outcome changed: the others stand as they were.
            let mut merged = measured[index].outcome().clone();
            merged.results = session.finished(merged.results);
            match record.probes.get_mut(index) {
                Some(kept) => *kept = merged,
                None => record.probes.push(merged),
            }
            if interrupted {
                return;
            }
            kept.outputs.write_so_far(record, unwritten);
            *kept.snapshot.lock().unwrap_or_else(|e| e.into_inner()) = record.clone();
        }
    }
}

/// Where the results measured so far are kept as each set ends: the files that can be
/// rewritten, and the copy the watchdog writes from when a set never comes back.
struct Kept<'a> {
    outputs: &'a Outputs,
    snapshot: &'a Mutex<RunRecord>,
}

/// Starts the watchdog: a set running ten times its budget (at least 10 s) is named; after
/// a stop signal, one that has not come back within [`crate::watchdog::GRACE`] is left
/// behind: what the sets before it measured is written, as at the end of a run, and the
/// process ends with the signal's status.
fn watch_for_stuck_sets(
    options: &Arc<Options>,
    config: &Config,
    cancel: &Arc<AtomicBool>,
    snapshot: &Arc<Mutex<RunRecord>>,
    stop: &StopSignals,
) {
    let stuck_after = (config.budget * 10).max(std::time::Duration::from_secs(10));
    let (options, snapshot, stop) = (Arc::clone(options), Arc::clone(snapshot), stop.clone());
    crate::watchdog::watch(Arc::clone(cancel), stuck_after, move |running| {
        let mut record = snapshot.lock().unwrap_or_else(|e| e.into_inner()).clone();
        record.complete = false;
        record.notes.push(format!(
            "interrupted while {running} was running: it had not come back {} s after the \
             signal, and the run ended without it",
            crate::watchdog::GRACE.as_secs()
        ));
        // The same outputs as the run's, which were made from the same options.
        if let Ok(outputs) = Outputs::of(&options, RunOf::of_this_process()) {
            if let Ok(text) = run_text(&record) {
                outputs.print_beside(&text);
            }
            let mut unwritten = Unwritten::default();
            outputs.write(&record, &mut unwritten);
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

/// What the run prints: the table, the comparisons within sets, cycles, allocations and
/// profiles (the comparison with a baseline follows it).
fn run_text(record: &RunRecord) -> Result<String, Stop> {
    let mut text = TableExporter::default()
        .render(record)
        .map_err(|e| bad(with_causes(&e)))?;
    for lines in [
        comparison_lines(record),
        cycle_lines(record),
        allocation_lines(record),
    ] {
        if !lines.is_empty() {
            text.push('\n');
            text.push_str(&lines.join("\n"));
            text.push('\n');
        }
    }
    text.push_str(&profile_text(record));
    Ok(text)
}

/// An error and its causes in one line: "could not write out.json: No space left on
/// device (os error 28)".
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(&format!(": {inner}"));
        cause = inner.source();
    }
    text
}

/// The benchmarks the patterns select, in source order.
fn select(options: &Options) -> Result<Vec<Benchmark>, Stop> {
    let all = registry::all();
    if options.filters.is_empty() {
        return Ok(all);
    }
    let patterns = options
        .filters
        .iter()
        .map(|p| {
            let anchored = if options.exact {
                format!("^{}$", regex_lite::escape(p))
            } else {
                p.clone()
            };
            Regex::new(&anchored)
                .map_err(|e| bad(format!("'{p}' is not a regular expression: {e}")))
        })
        .collect::<Result<Vec<Regex>, Stop>>()?;
    let selected: Vec<Benchmark> = all
        .into_iter()
        .filter(|b| patterns.iter().any(|p| p.is_match(&b.name)))
        .collect();
    if selected.is_empty() {
        return Err(bad(format!(
            "no benchmark matches {}; `cargo bench -- --list` lists them",
            options.filters.join(" or ")
        )));
    }
    Ok(selected)
}

/// Runs each benchmark once, as `cargo test` does with bench targets: it checks that they
/// run, and measures nothing.
fn run_once(selected: Vec<Benchmark>) -> i32 {
    let host: Arc<dyn Host> = Arc::new(RealHost::default());
    let mut session = Session::new(Runner::on(host, Config::quick()), Mode::Once);
    for set in registry::side_by_side(selected) {
        session.run_set(&set);
    }
    for name in &session.checked {
        print_out(&format!(
            "bench {name} ... ok (run once; `cargo bench` measures)\n"
        ));
    }
    for failure in &session.failures {
        print_out(&format!(
            "bench {} ... FAILED: {}\n",
            failure.name, failure.reason
        ));
    }
    i32::from(!session.failures.is_empty())
}

/// The engine's settings for `options`: the suite's sampling, overridden, in as many of the
/// rounds asked for as leave each round [`SLOPE_SAMPLES_PER_ROUND`] samples.
fn config_of(options: &Options) -> Result<Config, Stop> {
    let config = options.sampling.config().map_err(bad)?;
    let rounds = config
        .rounds
        .min(config.samples / SLOPE_SAMPLES_PER_ROUND)
        .max(1);
    Ok(Config { rounds, ..config })
}

fn apply_controls(
    options: &Options,
    config: &Config,
    host: &dyn Host,
    notes: &mut Vec<String>,
) -> RunSettings {
    let mut pinned_cpu = None;
    if let Some(cpu) = options.sampling.pin {
        match host.pin_to_cpu(cpu) {
            Ok(()) => pinned_cpu = Some(cpu),
            Err(reason) => notes.push(format!("--pin had no effect: {reason}")),
        }
    }
    RunSettings {
        suite: options.sampling.suite.name().to_string(),
        samples: config.samples,
        target_sample_time_ns: config.target_sample_time.as_nanos() as u64,
        budget_per_benchmark_ns: config.budget.as_nanos() as u64,
        rounds: config.rounds,
        pinned_cpu,
        memory_locked: false,
        realtime: false,
    }
}

/// One set's results as a probe outcome, named by its group (or its one benchmark).
fn outcome(
    set: &[Benchmark],
    results: Vec<latlab_engine::BenchResult>,
    failures: Vec<Failure>,
    started: Instant,
    interrupted: bool,
) -> ProbeOutcome {
    let first = &set[0];
    let id = if first.group.is_empty() {
        first.name.clone()
    } else {
        first.group.clone()
    };
    let status = if interrupted {
        ProbeStatus::Interrupted
    } else if failures.is_empty() {
        ProbeStatus::Ok
    } else {
        let reasons: Vec<String> = failures
            .iter()
            .map(|f| format!("{}: {}", f.name, f.reason))
            .collect();
        ProbeStatus::Failed {
            reason: reasons.join("; "),
        }
    };
    ProbeOutcome {
        id,
        method: crate::session::METHOD.to_string(),
        status,
        results,
        duration_ns: started.elapsed().as_nanos() as u64,
    }
}

/// The outputs asked for.
struct Outputs {
    files: Vec<(OutputTarget, Box<dyn Exporter>)>,
    html: Option<OutputTarget>,
}

impl Outputs {
    /// The outputs the options name; for run `run_of` of a `--runs` command, its
    /// `run-K.json` in the runs directory too. A `--runs` command refuses the outputs named
    /// for each run, which every run would write over.
    fn of(options: &Options, run_of: Option<RunOf>) -> Result<Outputs, Stop> {
        let mut files: Vec<(OutputTarget, Box<dyn Exporter>)> = Vec::new();
        if run_of.is_none() {
            latlab_front::check_outputs_for_runs(
                options.sampling.runs,
                &[
                    ("--json", &options.tables.json),
                    ("--csv", &options.tables.csv),
                    ("--markdown", &options.tables.markdown),
                    ("--html", &options.html),
                ],
                "each run's results are kept as run-K.json in the target directory's \
                 latlab-runs/",
            )
            .map_err(bad)?;
        }
        #[cfg(feature = "files")]
        if let Some(of) = run_of {
            let dir = crate::baselines::runs_directory().map_err(bad)?;
            files.push((
                OutputTarget::Replaced(run_file(&dir, of)),
                Box::new(latlab_report::JsonExporter),
            ));
        }
        #[cfg(feature = "files")]
        if let Some(path) = &options.tables.json {
            files.push((
                OutputTarget::parse(path),
                Box::new(latlab_report::JsonExporter),
            ));
        }
        #[cfg(feature = "files")]
        if let Some(path) = &options.tables.csv {
            files.push((
                OutputTarget::parse(path),
                Box::new(latlab_report::CsvExporter),
            ));
        }
        if let Some(path) = &options.tables.markdown {
            files.push((OutputTarget::parse(path), Box::new(MarkdownExporter)));
        }
        Ok(Outputs {
            files,
            html: options.html.as_deref().map(OutputTarget::parse),
        })
    }

    /// The results so far into the files that can be rewritten whole (not standard output,
    /// a device or a FIFO, which take one write at the end; not the page), as the binary
    /// keeps them after each probe; a file that cannot be written is noted.
    fn write_so_far(&self, record: &RunRecord, unwritten: &mut Unwritten) {
        self.write_files(record, OutputTarget::is_rewritable, unwritten);
    }

    /// The machine formats into the outputs `which` picks.
    fn write_files(
        &self,
        record: &RunRecord,
        which: impl Fn(&OutputTarget) -> bool,
        unwritten: &mut Unwritten,
    ) {
        for (target, exporter) in self.files.iter().filter(|(t, _)| which(t)) {
            let written = exporter
                .render(record)
                .and_then(|text| write_output(target, &text));
            unwritten.note(&target.shown(), written);
        }
    }

    /// Prints the run's text: on standard output, or on standard error when an output
    /// takes standard output.
    fn print_beside(&self, text: &str) {
        if self.uses_stdout() {
            latlab_front::stderr_text(text);
        } else {
            print_out(text);
        }
    }

    fn uses_stdout(&self) -> bool {
        self.files.iter().any(|(t, _)| *t == OutputTarget::Stdout)
            || self.html == Some(OutputTarget::Stdout)
    }

    /// The final outputs: every file, standard output and the HTML page.
    fn write(&self, record: &RunRecord, unwritten: &mut Unwritten) {
        self.write_files(record, |_| true, unwritten);
        #[cfg(feature = "html")]
        if let Some(target) = &self.html {
            let written = render_plots(record, &Default::default(), Formats::Svg)
                .and_then(|plots| write_output(target, &benchmarks_html_page(record, &plots)));
            unwritten.note(&target.shown(), written);
        }
    }

    /// The names of the outputs asked for, as [`Unwritten`] notes them.
    fn names(&self) -> Vec<String> {
        (self.files.iter().map(|(target, _)| target))
            .chain(&self.html)
            .map(OutputTarget::shown)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Command;

    fn options(args: &[&str]) -> Options {
        let args = std::iter::once("bench").chain(args.iter().copied());
        match Command::parse(args.map(OsString::from)).unwrap() {
            Command::Run(options) => *options,
            Command::Help => unreachable!("no --help given"),
        }
    }

    /// An option whose feature this build lacks is refused before anything is measured,
    /// naming the feature; with the feature, it goes ahead. (Run in the default build and in
    /// the light one, `--no-default-features`.)
    #[test]
    fn options_of_features_left_out_are_refused_by_name() {
        let asked = [
            (
                &["--json", "out.json"][..],
                "files",
                cfg!(feature = "files"),
            ),
            (&["--baseline", "main"], "files", cfg!(feature = "files")),
            (&["--html", "out.html"], "html", cfg!(feature = "html")),
            (&["--profile"], "profile", cfg!(feature = "profile")),
        ];
        for (args, feature, built) in asked {
            match refuse_what_this_build_lacks(&options(args)) {
                Ok(()) => assert!(built, "{args:?} went ahead without `{feature}`"),
                Err(Stop(message)) => {
                    assert!(!built, "{args:?} refused with `{feature}`: {message}");
                    assert!(message.starts_with(args[0]), "{message}");
                    assert!(
                        message.contains(&format!("`{feature}` feature")),
                        "{message}"
                    );
                }
            }
        }
        assert!(refuse_what_this_build_lacks(&options(&["--markdown", "out.md"])).is_ok());
    }
}
