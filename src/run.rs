//! Executes a plan: take the machine-wide lock, apply the controls, run each probe, and
//! rewrite every file output after each probe so that a crash or Ctrl-C loses nothing.

use crate::plan::{RunPlan, SavedAs};
use crate::probe_process;
use crate::progress::Progress;
use anyhow::Context;
use latlab_engine::analysis::moved_between;
use latlab_engine::isolation::RT_PAUSE;
use latlab_engine::model::{ProbeOutcome, ProbeStatus, RunRecord, RunSettings, StabilityCheck};
use latlab_engine::rounds::ProbeRounds;
use latlab_engine::signals::StopSignals;
use latlab_engine::{BenchResult, Runner};
use latlab_front::{Unwritten, panic_message, take_lock};
use latlab_probes::stability::{self, Reference};
use latlab_probes::{ProbeContext, ProbeError, ProbeSpec, Process};
use latlab_report::compare::{Comparison, DEFAULT_THRESHOLD, Side, compare_text_with};
use latlab_report::terminal::Detail;
use latlab_report::{
    CsvExporter, ExportError, Exporter, Formats, HeadlineExporter, JsonExporter, MarkdownExporter,
    OutputTarget, TableExporter, advice, html_page, render_plots, write_output, write_plots,
};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

/// Runs the plan: the lock, the controls, the stability check around the probes, the
/// outputs, and the exit status.
pub fn execute(mut plan: RunPlan, stop: StopSignals) -> anyhow::Result<ExitCode> {
    let host = Arc::clone(&plan.host);
    let mut notes = Vec::new();
    let cancel = stop.flag();
    let Ok(_lock) = take_lock(host.as_ref(), &cancel, &mut notes) else {
        latlab_front::say!(
            "latlab: interrupted while waiting for the other run; nothing was measured"
        );
        return Ok(ExitCode::from(stop.exit_status()));
    };
    // The progress line's thread starts before --pin and --rt apply to this thread, so
    // that it neither shares the pinned CPU nor runs in real time.
    let mut progress = Progress::new(
        &plan.probes,
        plan.suite,
        plan.rounds,
        std::io::stderr().is_terminal() && plan.terminal.detail != Detail::Quiet,
    );
    let settings = apply_controls(&mut plan, &mut notes);
    plan.config.cancel = cancel;
    let mut record = begin_record(&plan, settings, notes);
    if let Some(dir) = &plan.outputs.create_dir {
        create_results_dir(dir)?;
    }
    // Outputs that could not be written, with why: the run goes on measuring, and says so
    // at the end.
    let mut unwritten = Unwritten::default();
    let interrupted = measure_between_checks(&plan, &mut record, &mut progress, &mut unwritten);
    record.load_avg_after = host.load_average();
    record.complete = !interrupted;
    write_rewritable(&plan, &record, &mut unwritten);
    let (plots, report) = write_page_and_plots(&plan, &record, &mut unwritten);
    write_once_and_table(&plan, &record, &mut unwritten)?;
    if let Some(saved_as) = &plan.save_baseline {
        let path = &saved_as.file;
        let saved = save_baseline(saved_as, std::slice::from_ref(&record));
        if unwritten.note(&path.display().to_string(), saved).is_some() {
            latlab_front::say!("baseline {}: {}", saved_as.name, path.display());
        }
    }
    if let Some((name, baseline)) = &plan.baseline {
        let these = Side::one("this run", record.clone());
        print_against_baseline(&plan, name, baseline, these)?;
    }
    say_what_was_written(&plan, &unwritten, report.as_deref(), &plots);
    if !results_kept(&plan, &unwritten)
        && let Some(dir) = &plan.outputs.create_dir
    {
        // The directory this run made holds none of its results: removed if nothing else
        // went into it, so that a run that wrote nothing leaves nothing.
        let _ = std::fs::remove_dir(dir);
    }
    Ok(exit_code(&plan, &record, &unwritten, interrupted, &stop))
}

/// Whether one results file of the run's could be written.
fn results_kept(plan: &RunPlan, unwritten: &Unwritten) -> bool {
    plan.outputs
        .all()
        .any(|target| !unwritten.contains(&target.shown()))
}

/// The run's record as it starts: the environment's concerns, the plan's notes, those the
/// lock and the controls left (`notes`), and the clock's.
fn begin_record(plan: &RunPlan, settings: RunSettings, notes: Vec<String>) -> RunRecord {
    let mut record = RunRecord::begin(plan.host.as_ref(), settings, Vec::new());
    record.notes = (record.environment.concerns().iter())
        .map(advice::concern)
        .collect();
    record.notes.extend(plan.notes.iter().cloned());
    record.notes.extend(notes);
    record.notes.extend(advice::clock(&record.clock));
    record
}

/// Takes the stability check, measures the probes, and takes the check again, telling
/// `progress` as it goes; `true` when Ctrl-C (or a signal) stopped the run.
fn measure_between_checks(
    plan: &RunPlan,
    record: &mut RunRecord,
    progress: &mut Progress,
    unwritten: &mut Unwritten,
) -> bool {
    let mut runner = Runner::on(Arc::clone(&plan.host), plan.config.clone());
    if let Some(listener) = progress.listener() {
        runner.listen(listener);
    }
    progress.stability_check("stability check");
    let mut interrupted = match reference_figures(&mut runner, plan) {
        Ok(references) => {
            record.stability = references.into_iter().map(started_check).collect();
            false
        }
        Err(ProbeError::Interrupted(_)) => true,
        Err(e) => {
            record.notes.push(format!("no stability check: {e}"));
            false
        }
    };
    if !interrupted {
        interrupted = measure(plan, &mut runner, record, progress, unwritten);
    }
    if !interrupted && !record.stability.is_empty() {
        progress.stability_check("stability check, again");
        match reference_figures(&mut runner, plan) {
            Ok(references) => finish_checks(record, references),
            Err(ProbeError::Interrupted(_)) => interrupted = true,
            Err(e) => record
                .notes
                .push(format!("the stability check was not repeated: {e}")),
        }
    }
    record.notes.extend(advice::stability(record));
    progress.finish();
    interrupted
}

/// Writes the plots and the HTML report into the plan's plots directory, if it has one:
/// the plot files written and the report's path when it was. Plots that cannot be drawn
/// are an output not written, like a full disk: the page goes without them.
fn write_page_and_plots(
    plan: &RunPlan,
    record: &RunRecord,
    unwritten: &mut Unwritten,
) -> (Vec<PathBuf>, Option<PathBuf>) {
    let Some(dir) = &plan.outputs.plots_dir else {
        return (Vec::new(), None);
    };
    let report = dir.join("report.html");
    let declared = latlab_probes::presentations();
    let plots = unwritten.note(
        "the plots",
        render_plots(record, &declared, Formats::SvgAndPng),
    );
    let page = write_output(
        &OutputTarget::Replaced(report.clone()),
        &html_page(record, &declared, plots.as_deref().unwrap_or_default()),
    );
    let written = unwritten
        .note(&report.display().to_string(), page)
        .is_some();
    let plot_files = match &plots {
        Some(plots) => unwritten
            .note("the plots", write_plots(plots, dir))
            .unwrap_or_default(),
        None => Vec::new(),
    };
    (plot_files, written.then_some(report))
}

/// Says on standard error where the results, the report and the plots went, and what could
/// not be written and why.
fn say_what_was_written(
    plan: &RunPlan,
    unwritten: &Unwritten,
    report: Option<&std::path::Path>,
    plots: &[PathBuf],
) {
    for target in plan.outputs.all() {
        if let Some(path) = target.path()
            && !unwritten.contains(&target.shown())
        {
            latlab_front::say!("results: {}", path.display());
        }
    }
    if let Some(report) = report {
        latlab_front::say!("report: {}", report.display());
    }
    if !plots.is_empty() {
        latlab_front::say!("plots: {}", describe_files(plots));
    }
    unwritten.report();
}

/// The run's exit status: the signal's when one stopped it; 2 when it measured but not one
/// results file could be written (the table is all that is left); 1 when a probe failed or
/// an output could not be written; else 0.
fn exit_code(
    plan: &RunPlan,
    record: &RunRecord,
    unwritten: &Unwritten,
    interrupted: bool,
    stop: &StopSignals,
) -> ExitCode {
    if !interrupted && !results_kept(plan, unwritten) {
        latlab_front::say!(
            "latlab: no results file could be written (see above); the table is all that is \
             left of this run: free the disk, raise the limit, or choose another --out, then \
             run again"
        );
        return ExitCode::from(2);
    }
    let failed = record
        .probes
        .iter()
        .any(|p| matches!(p.status, ProbeStatus::Failed { .. }))
        || !unwritten.is_empty();
    if interrupted {
        ExitCode::from(stop.exit_status())
    } else if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Measures the plan's probes in its rounds, taken round-robin, each outcome merged into the
/// record and every file output rewritten as it arrives; `true` when Ctrl-C stopped it.
fn measure(
    plan: &RunPlan,
    runner: &mut Runner,
    record: &mut RunRecord,
    progress: &mut Progress,
    unwritten: &mut Unwritten,
) -> bool {
    let mut measured: Vec<ProbeRounds> = Vec::with_capacity(plan.probes.len());
    for round in 0..plan.rounds {
        for (index, probe) in plan.probes.iter().enumerate() {
            let rounds = probe.rounds.of(plan.rounds);
            if round >= rounds
                || measured
                    .get(index)
                    .is_some_and(|m| !m.wants_another_round())
            {
                continue;
            }
            progress.probe_started(index, probe, round);
            let outcome = runner.scoped(
                |config| config.rounds = rounds,
                |runner| run_probe(probe, runner, plan),
            );
            let interrupted = outcome.status == ProbeStatus::Interrupted;
            let skipped = matches!(outcome.status, ProbeStatus::Skipped { .. });
            match measured.get_mut(index) {
                Some(rounds) => {
                    rounds.add(outcome);
                    record.probes[index] = rounds.outcome().clone();
                }
                None => {
                    measured.push(ProbeRounds::first(outcome.clone()));
                    record.probes.push(outcome);
                }
            }
            write_rewritable(plan, record, unwritten);
            let again = round + 1 < rounds && measured[index].wants_another_round();
            progress.probe_finished(skipped, again);
            if interrupted {
                return true;
            }
        }
    }
    false
}

/// Creates the results directory, or takes the one another run of this user made since the
/// plan was checked (two runs started into one new `--out`: the second waited for the lock).
fn create_results_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    use std::os::unix::fs::MetadataExt;
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let mine = std::fs::symlink_metadata(dir)
                .is_ok_and(|m| m.is_dir() && m.uid() == latlab_engine::isolation::effective_uid());
            anyhow::ensure!(
                mine,
                "could not create the results directory {}: something else was made there \
                 while this run waited; choose another --out",
                dir.display()
            );
            Ok(())
        }
        created => created
            .with_context(|| format!("could not create the results directory {}", dir.display())),
    }
}

/// Applies --pin, --mlock and --rt, each degrading to a note when not permitted.
fn apply_controls(plan: &mut RunPlan, notes: &mut Vec<String>) -> RunSettings {
    let mut settings = RunSettings {
        suite: plan.suite.name().to_string(),
        samples: plan.config.samples,
        target_sample_time_ns: plan.config.target_sample_time.as_nanos() as u64,
        budget_per_benchmark_ns: plan.config.budget.as_nanos() as u64,
        rounds: plan.rounds,
        pinned_cpu: None,
        memory_locked: false,
        realtime: false,
    };
    let host = &plan.host;
    if let Some(cpu) = plan.pin {
        match host.pin_to_cpu(cpu) {
            Ok(()) => settings.pinned_cpu = Some(cpu),
            Err(reason) => notes.push(format!("--pin had no effect: {reason}")),
        }
    }
    if plan.mlock {
        match host.lock_memory() {
            Ok(()) => settings.memory_locked = true,
            Err(reason) => notes.push(format!("--mlock had no effect: {reason}")),
        }
    }
    if plan.rt {
        match host.enter_realtime() {
            Ok(()) => {
                settings.realtime = true;
                plan.config.pause_between_samples = Some(RT_PAUSE);
            }
            Err(reason) => notes.push(format!("--rt had no effect: {reason}")),
        }
    }
    settings
}

/// What a probe measures with, under the plan's options.
fn probe_context<'a>(runner: &'a mut Runner, plan: &RunPlan) -> ProbeContext<'a> {
    ProbeContext {
        runner,
        suite: plan.suite,
        memory: plan.memory,
        threads: plan.threads,
        ipc: plan.ipc,
        files: plan.files.clone(),
        findings: std::sync::Arc::clone(&plan.findings),
    }
}

/// Takes the run's reference figures (see `latlab_probes::stability`).
fn reference_figures(runner: &mut Runner, plan: &RunPlan) -> Result<Vec<Reference>, ProbeError> {
    stability::reference_figures(&mut probe_context(runner, plan))
}

fn started_check(reference: Reference) -> StabilityCheck {
    StabilityCheck {
        name: reference.result.name,
        method: reference.result.method,
        start: reference.result.summary,
        end: None,
        moved_share: reference.moved_share,
        moved: None,
    }
}

/// Records the end of each check and whether it moved.
fn finish_checks(record: &mut RunRecord, references: Vec<Reference>) {
    for reference in references {
        let Some(check) = record
            .stability
            .iter_mut()
            .find(|c| c.name == reference.result.name)
        else {
            continue;
        };
        let end = reference.result.summary;
        check.moved = moved_between(&check.start, &end, check.moved_share);
        check.end = Some(end);
    }
}

/// Runs one probe, here or in a process of its own as its spec says; the results the
/// selection keeps.
fn run_probe(probe: &ProbeSpec, runner: &mut Runner, plan: &RunPlan) -> ProbeOutcome {
    let started = Instant::now();
    let (status, mut results) = match probe.process {
        Process::Shared => outcome_here(probe, &mut probe_context(runner, plan)),
        Process::Own { ready } => match ready() {
            Ok(()) => probe_process::measure(probe, runner.config(), plan.suite),
            Err(error) => status_of(error),
        },
    };
    plan.selection.retain(probe.id, &mut results);
    ProbeOutcome {
        id: probe.id.to_string(),
        method: probe.method.to_string(),
        status,
        results,
        duration_ns: plan.host.elapsed(started).as_nanos() as u64,
    }
}

/// Runs one probe in this process; a panic inside it is reported as the probe's failure,
/// not the run's.
pub(crate) fn outcome_here(
    probe: &ProbeSpec,
    ctx: &mut ProbeContext,
) -> (ProbeStatus, Vec<BenchResult>) {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (probe.run)(ctx)));
    match outcome {
        Ok(Ok(results)) => (ProbeStatus::Ok, results),
        Ok(Err(error)) => status_of(error),
        Err(panic) => (
            ProbeStatus::Failed {
                reason: format!("panicked: {}", panic_message(panic.as_ref())),
            },
            Vec::new(),
        ),
    }
}

/// The status of a probe that ended in `error`, and the results measured before it: a
/// sweep that stopped part-way keeps the sizes it measured.
fn status_of(error: ProbeError) -> (ProbeStatus, Vec<BenchResult>) {
    let (error, measured) = error.into_parts();
    let status = match error {
        ProbeError::Interrupted(_) => ProbeStatus::Interrupted,
        ProbeError::Skipped(reason) => ProbeStatus::Skipped { reason },
        failed if measured.is_empty() => ProbeStatus::Failed {
            reason: failed.to_string(),
        },
        failed => ProbeStatus::Failed {
            reason: format!(
                "{failed}; the {} results measured before it are kept",
                measured.len()
            ),
        },
    };
    (status, measured)
}

fn exporters(plan: &RunPlan) -> Vec<(&OutputTarget, &'static dyn Exporter)> {
    let mut list: Vec<(&OutputTarget, &'static dyn Exporter)> =
        vec![(&plan.outputs.json, &JsonExporter)];
    if let Some(copy) = &plan.outputs.json_copy {
        list.push((copy, &JsonExporter));
    }
    if let Some(csv) = &plan.outputs.csv {
        list.push((csv, &CsvExporter));
    }
    if let Some(markdown) = &plan.outputs.markdown {
        list.push((markdown, &MarkdownExporter));
    }
    list
}

/// Rewrites every file output whole after a probe, so that a crash loses at most the probe
/// under way; one that cannot be written (a full disk) is noted, and measuring goes on.
fn write_rewritable(plan: &RunPlan, record: &RunRecord, unwritten: &mut Unwritten) {
    for (target, exporter) in exporters(plan) {
        if target.is_rewritable() {
            let written = exporter
                .render(record)
                .and_then(|text| write_output(target, &text));
            unwritten.note(&target.shown(), written);
        }
    }
}

/// Writes the outputs that take a single write (standard output, devices, pipes) and the
/// table: to standard output normally, to standard error when standard output carries a
/// machine format.
fn write_once_and_table(
    plan: &RunPlan,
    record: &RunRecord,
    unwritten: &mut Unwritten,
) -> anyhow::Result<()> {
    let mut table = TableExporter {
        terminal: plan.terminal,
        declared: latlab_probes::presentations(),
    }
    .render(record)?;
    if plan.headline {
        let headline = HeadlineExporter {
            terminal: plan.terminal,
            declared: latlab_probes::presentations(),
        }
        .render(record)?;
        table.push_str(match plan.terminal.detail {
            // A quiet run prints the headline table alone, without the blank line that
            // parts it from the results table.
            Detail::Quiet => headline.trim_start_matches('\n'),
            _ => &headline,
        });
    }
    let table = plan.terminal.printable(&table).into_owned();
    if plan.outputs.uses_stdout() {
        latlab_front::stderr_text(&table);
    }
    for (target, exporter) in exporters(plan) {
        if !target.is_rewritable() {
            let text = exporter.render(record)?;
            if *target == OutputTarget::Stdout {
                write_output(target, &text)?;
            } else {
                unwritten.note(&target.shown(), write_output(target, &text));
            }
        }
    }
    if !plan.outputs.uses_stdout() {
        write_output(&OutputTarget::Stdout, &table)?;
    }
    Ok(())
}

/// Files named shortly: `DIR/{a,b}.{svg,png}` when they share a directory and every name
/// comes in every extension, as plots do; else each path in full.
fn describe_files(paths: &[std::path::PathBuf]) -> String {
    let mut stems: Vec<String> = Vec::new();
    let mut extensions: Vec<String> = Vec::new();
    for path in paths {
        let part = |p: Option<&std::ffi::OsStr>| p.map(|p| p.to_string_lossy().into_owned());
        if let (Some(stem), Some(extension)) = (part(path.file_stem()), part(path.extension())) {
            if !stems.contains(&stem) {
                stems.push(stem);
            }
            if !extensions.contains(&extension) {
                extensions.push(extension);
            }
        }
    }
    let dir = paths[0].parent();
    let regular = paths.iter().all(|p| p.parent() == dir)
        && stems.len() * extensions.len() == paths.len()
        && stems.len() > 1;
    let braced = |parts: &[String]| match parts {
        [one] => one.clone(),
        many => format!("{{{}}}", many.join(",")),
    };
    match dir {
        Some(dir) if regular => dir
            .join(format!("{}.{}", braced(&stems), braced(&extensions)))
            .display()
            .to_string(),
        _ => {
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            names.join(", ")
        }
    }
}

/// Keeps one run as a baseline in `NAME.json`, or several in `NAME/run-K.json`, making
/// the directories if need be; the other form of the same name goes, so that the name
/// means these runs alone.
pub fn save_baseline(saved_as: &SavedAs, records: &[RunRecord]) -> Result<(), ExportError> {
    let failed = |path: &std::path::Path| {
        let path = path.display().to_string();
        move |source| ExportError::Write { path, source }
    };
    let dir = (saved_as.file.parent()).expect("a baseline file is in the baselines directory");
    std::fs::create_dir_all(dir).map_err(failed(dir))?;
    if let [record] = records {
        write_output(
            &OutputTarget::Replaced(saved_as.file.clone()),
            &JsonExporter.render(record)?,
        )?;
        if saved_as.dir.is_dir() {
            std::fs::remove_dir_all(&saved_as.dir).map_err(failed(&saved_as.dir))?;
        }
        return Ok(());
    }
    std::fs::create_dir_all(&saved_as.dir).map_err(failed(&saved_as.dir))?;
    for (_, stale) in latlab_front::numbered_runs(&saved_as.dir, ".json") {
        std::fs::remove_file(&stale).map_err(failed(&stale))?;
    }
    for (k, record) in records.iter().enumerate() {
        let path = saved_as.dir.join(format!("run-{}.json", k + 1));
        write_output(&OutputTarget::Replaced(path), &JsonExporter.render(record)?)?;
    }
    if saved_as.file.exists() {
        std::fs::remove_file(&saved_as.file).map_err(failed(&saved_as.file))?;
    }
    Ok(())
}

/// The comparison of `these` runs with a saved baseline, where the table went: in full, or
/// its summary alone when the run is quiet.
pub fn print_against_baseline(
    plan: &RunPlan,
    name: &str,
    baseline: &[RunRecord],
    these: Side,
) -> anyhow::Result<()> {
    let sides = [
        Side {
            label: name.to_string(),
            runs: baseline.to_vec(),
        },
        these,
    ];
    let comparison = Comparison::of_sides(&sides, DEFAULT_THRESHOLD);
    let text = match plan.terminal.detail {
        Detail::Quiet => comparison.summary_lines().join("\n") + "\n",
        _ => format!(
            "\nagainst the baseline {name}:\n{}",
            compare_text_with(&sides, &comparison, &plan.terminal)
        ),
    };
    let text = plan.terminal.printable(&text);
    if plan.outputs.uses_stdout() {
        latlab_front::stderr_text(&text);
    } else {
        write_output(&OutputTarget::Stdout, &text)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn plot_files_are_named_in_braces_when_they_come_in_pairs() {
        let paths: Vec<PathBuf> = ["a.svg", "a.png", "b.svg", "b.png"]
            .iter()
            .map(|n| PathBuf::from("res").join(n))
            .collect();
        assert_eq!(describe_files(&paths), "res/{a,b}.{svg,png}");
        assert_eq!(
            describe_files(&paths[..3]),
            "res/a.svg, res/a.png, res/b.svg"
        );
        assert_eq!(describe_files(&paths[..1]), "res/a.svg");
    }
}
