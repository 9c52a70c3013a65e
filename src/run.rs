//! The probes as a run measures them ([`ProbeSet`]): the stability check around them, each
//! probe here or in a process of its own, the progress line, the table and the page. The
//! run's lifecycle (the lock, the controls, the rounds, the outputs, the baselines and the
//! exit status) is `latlab_front::execute`'s.

use crate::plan::RunPlan;
use crate::probe_process;
use latlab_engine::analysis::moved_between;
use latlab_engine::budget::Allowance;
use latlab_engine::model::{ProbeOutcome, ProbeStatus, RunRecord, StabilityCheck};
use latlab_engine::signals::StopSignals;
use latlab_engine::{BenchResult, Interrupted, Runner};
use latlab_front::{
    Controls, Measured, Progress, ProgressUnit, ResultFiles, RunRequest, TimeWords, Unwritten,
    panic_message,
};
use latlab_probes::stability::{self, Reference};
use latlab_probes::{ProbeContext, ProbeError, ProbeSpec, Process};
use latlab_report::summary::SummaryExporter;
use latlab_report::terminal::Detail;
use latlab_report::{
    ExportError, Exporter, Formats, HeadlineExporter, JsonExporter, OutputTarget, TableExporter,
    advice, html_page, render_plots, write_output, write_plots,
};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

/// Runs the plan through the shared lifecycle: its exit status.
pub fn execute(mut plan: RunPlan, stop: StopSignals) -> anyhow::Result<ExitCode> {
    let request = RunRequest {
        host: Arc::clone(&plan.host),
        suite: plan.suite,
        config: plan.config.clone(),
        rounds: plan.rounds,
        controls: Controls {
            pin: plan.pin,
            mlock: plan.mlock,
            rt: plan.rt,
        },
        notes: std::mem::take(&mut plan.notes),
        files: result_files(&plan),
        create_dir: plan.outputs.create_dir.clone(),
        baselines: std::mem::take(&mut plan.baselines),
        terminal: plan.terminal,
        results_called: "result",
        budget: plan.budget,
    };
    let mut probes = ProbeSet {
        plan: &plan,
        runner: None,
    };
    let status = latlab_front::execute(request, &mut probes, &stop).map_err(anyhow::Error::msg)?;
    Ok(ExitCode::from(status))
}

/// The results files: `DIR/results.json`, its summary `DIR/summary.json`, and the copies
/// and other formats asked for.
fn result_files(plan: &RunPlan) -> ResultFiles {
    let outputs = &plan.outputs;
    let mut files = ResultFiles::default();
    let declared = latlab_probes::presentations();
    files.add(outputs.json.clone(), JsonExporter);
    files.add_beside(
        outputs.summary.clone(),
        SummaryExporter {
            declared: declared.clone(),
        },
    );
    for (format, target) in &outputs.named {
        files.add(target.clone(), (format.exporter)(&declared));
    }
    files
}

/// The plan's probes, measured in the run's rounds, with the stability check before and
/// after them.
struct ProbeSet<'a> {
    plan: &'a RunPlan,
    /// Made when the run starts, from the settings the controls left.
    runner: Option<Runner>,
}

impl ProbeSet<'_> {
    fn runner(&mut self) -> &mut Runner {
        self.runner.as_mut().expect("the run has started")
    }
}

impl Measured for ProbeSet<'_> {
    /// Each probe with its typical duration in the suite, for the estimate of time left.
    fn units(&self, rounds: usize) -> Vec<ProgressUnit> {
        (self.plan.probes.iter())
            .map(|probe| ProgressUnit {
                name: probe.id.to_string(),
                typical_s: probe.expected_seconds(self.plan.suite),
                rounds: probe.rounds.of(rounds),
                alone: probe.alone,
            })
            .collect()
    }

    /// Takes the stability check's first figures.
    fn start(
        &mut self,
        runner: Runner,
        record: &mut RunRecord,
        progress: &Progress,
    ) -> Result<(), Interrupted> {
        progress.say("stability check");
        let plan = self.plan;
        match reference_figures(self.runner.insert(runner), plan) {
            Ok(references) => {
                record.stability = references.into_iter().map(started_check).collect();
            }
            Err(ProbeError::Interrupted(_)) => return Err(Interrupted),
            Err(e) => record.notes.push(format!("no stability check: {e}")),
        }
        Ok(())
    }

    /// Measures the probe with its samples scaled to its part of the budget, and its
    /// deadline.
    fn measure(&mut self, unit: usize, _round: usize, allowance: Allowance) -> ProbeOutcome {
        let (plan, probe) = (self.plan, self.plan.probes[unit]);
        let rounds = probe.rounds.of(plan.rounds);
        let deadline = allowance.time.map(|time| Instant::now() + time);
        self.runner().scoped(
            |config| {
                config.rounds = rounds;
                config.share = allowance.share;
                config.deadline = deadline;
            },
            |runner| run_probe(probe, runner, plan),
        )
    }

    /// Takes the stability check again, and says what it found.
    fn finish(
        &mut self,
        record: &mut RunRecord,
        progress: &Progress,
        mut interrupted: bool,
    ) -> bool {
        if !interrupted && !record.stability.is_empty() {
            progress.say("stability check, again");
            let plan = self.plan;
            match reference_figures(self.runner.as_mut().expect("the run has started"), plan) {
                Ok(references) => finish_checks(record, references),
                Err(ProbeError::Interrupted(_)) => interrupted = true,
                Err(e) => record
                    .notes
                    .push(format!("the stability check was not repeated: {e}")),
            }
        }
        record.notes.extend(advice::stability(record));
        interrupted
    }

    /// The table, and the main job's headline table after it.
    fn text(&self, record: &RunRecord) -> Result<String, ExportError> {
        let terminal = self.plan.terminal;
        let mut table = TableExporter {
            terminal,
            declared: latlab_probes::presentations(),
        }
        .render(record)?;
        if self.plan.headline {
            let headline = HeadlineExporter {
                terminal,
                declared: latlab_probes::presentations(),
            }
            .render(record)?;
            table.push_str(match terminal.detail {
                // A quiet run prints the headline table alone, without the blank line that
                // parts it from the results table.
                Detail::Quiet => headline.trim_start_matches('\n'),
                _ => &headline,
            });
        }
        Ok(terminal.printable(&table).into_owned())
    }

    /// The HTML report and the plots, in the results directory.
    fn write_more(&self, record: &RunRecord, unwritten: &mut Unwritten) -> Vec<String> {
        let (plots, report) = write_page_and_plots(self.plan, record, unwritten);
        let mut lines = Vec::new();
        if let Some(report) = report {
            lines.push(format!("report: {}", report.display()));
        }
        if !plots.is_empty() {
            lines.push(format!("plots: {}", describe_files(&plots)));
        }
        lines
    }

    fn time_words(&self) -> TimeWords {
        TimeWords {
            units: "probes",
            around: "stability checks",
            more: "page and plots",
        }
    }
}

/// Writes the plots and the HTML report into the plan's results directory: the plot files
/// written and the report's path when it was. Plots that cannot be drawn
/// are an output not written, like a full disk: the page goes without them.
fn write_page_and_plots(
    plan: &RunPlan,
    record: &RunRecord,
    unwritten: &mut Unwritten,
) -> (Vec<PathBuf>, Option<PathBuf>) {
    let dir = &plan.outputs.results_dir;
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
