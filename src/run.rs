//! The probes as a run measures them ([`ProbeSet`]): the stability check around them, each
//! probe here or in a process of its own, the progress line, the table and the page. The
//! run's lifecycle (the lock, the controls, the rounds, the outputs, the baselines and the
//! exit status) is `latlab_front::execute`'s.

use crate::placement_watch::PlacementWatch;
use crate::plan::{ProbePlan, RunPlan};
use crate::{probe_outcome, probe_process};
use latlab_engine::analysis::moved_between;
use latlab_engine::budget::Allowance;
use latlab_engine::model::{ProbeOutcome, ProbeStatus, RunRecord, StabilityCheck};
use latlab_engine::signals::StopSignals;
use latlab_engine::{Interrupted, Runner};
use latlab_engine::{SharedHost, Suite};
use latlab_front::{Measured, Progress, ProgressUnit, TimeWords, Unwritten};
use latlab_probes::stability::{self, Reference};
use latlab_probes::{ProbeContext, ProbeError, ProbeSpec, Process};
use latlab_report::terminal::{Detail, Terminal};
use latlab_report::{
    ExportError, Exporter, Formats, HeadlineExporter, OutputTarget, TableExporter, advice,
    html_page, render_plots, write_output, write_plots,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

/// Runs the plan through the shared lifecycle: its exit status.
pub fn execute(plan: RunPlan, stop: StopSignals) -> anyhow::Result<ExitCode> {
    let RunPlan {
        request,
        probes,
        outputs,
        ..
    } = plan;
    let mut set = ProbeSet {
        probes: &probes,
        results_dir: &outputs.results_dir,
        host: Arc::clone(&request.host),
        suite: request.suite,
        rounds: request.rounds,
        terminal: request.terminal,
        runner: None,
        placement: PlacementWatch::default(),
    };
    let status = latlab_front::execute(request, &mut set, &stop).map_err(anyhow::Error::msg)?;
    Ok(ExitCode::from(status))
}

/// The plan's probes, measured in the run's rounds, with the stability check before and
/// after them.
struct ProbeSet<'a> {
    probes: &'a ProbePlan,
    /// Where the page and the plots go.
    results_dir: &'a Path,
    host: SharedHost,
    suite: Suite,
    /// The rounds each result is measured in, at most.
    rounds: usize,
    terminal: Terminal,
    /// Made when the run starts, from the settings the controls left.
    runner: Option<Runner>,
    /// The placement reference beside the probes that depend on it.
    placement: PlacementWatch,
}

impl Measured for ProbeSet<'_> {
    /// Each probe with its typical duration in the suite, for the estimate of time left.
    fn units(&self, rounds: usize) -> Vec<ProgressUnit> {
        (self.probes.specs.iter())
            .map(|probe| ProgressUnit {
                name: probe.id.to_string(),
                typical_s: probe.expected_seconds(self.suite),
                rounds: probe.extras.rounds.of(rounds),
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
        let context = |runner| probe_context(runner, self.probes, self.suite);
        match stability::reference_figures(&mut context(self.runner.insert(runner))) {
            Ok(references) => {
                self.placement = PlacementWatch::from_start(&references);
                record.stability = references.into_iter().map(started_check).collect();
            }
            Err(ProbeError::Interrupted(_)) => return Err(Interrupted),
            Err(e) => record.notes.push(format!("no stability check: {e}")),
        }
        Ok(())
    }

    /// Measures the probe with its samples scaled to its part of the budget, and its
    /// deadline; for a probe whose figures depend on the CPUs' placement, with the
    /// placement reference just before and just after it.
    fn measure(&mut self, unit: usize, _round: usize, allowance: Allowance) -> ProbeOutcome {
        let probe = self.probes.specs[unit];
        let rounds = probe.extras.rounds.of(self.rounds);
        let deadline = allowance.time.map(|time| Instant::now() + time);
        let (probes, suite, host) = (self.probes, self.suite, Arc::clone(&self.host));
        let runner = self.runner.as_mut().expect("the run has started");
        let watched = self.placement.watches(probe);
        let before = match watched {
            true => (self.placement).before(&mut probe_context(runner, probes, suite)),
            false => {
                self.placement.passed();
                None
            }
        };
        let mut outcome = runner.scoped(
            |config| {
                config.rounds = rounds;
                config.share = allowance.share;
                config.deadline = deadline;
            },
            |runner| run_probe(probe, runner, probes, suite, &host),
        );
        if watched && outcome.status != ProbeStatus::Interrupted {
            let ctx = &mut probe_context(runner, probes, suite);
            (self.placement).after(ctx, probe, before, &mut outcome.results);
        }
        outcome
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
            let runner = self.runner.as_mut().expect("the run has started");
            match stability::reference_figures(&mut probe_context(runner, self.probes, self.suite))
            {
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
        let terminal = self.terminal;
        let mut table = TableExporter {
            terminal,
            declared: latlab_probes::presentations(),
        }
        .render(record)?;
        if self.probes.headline {
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
        let (plots, report) = write_page_and_plots(self.results_dir, record, unwritten);
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

/// Writes the plots and the HTML report into the results directory `dir`: the plot files
/// written and the report's path when it was. Plots that cannot be drawn
/// are an output not written, like a full disk: the page goes without them.
fn write_page_and_plots(
    dir: &Path,
    record: &RunRecord,
    unwritten: &mut Unwritten,
) -> (Vec<PathBuf>, Option<PathBuf>) {
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

/// What a probe measures with, under the plan's options, in `suite`.
fn probe_context<'a>(runner: &'a mut Runner, probes: &ProbePlan, suite: Suite) -> ProbeContext<'a> {
    ProbeContext {
        runner,
        suite,
        options: probes.options.clone(),
        findings: std::sync::Arc::clone(&probes.findings),
    }
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
fn run_probe(
    probe: &ProbeSpec,
    runner: &mut Runner,
    probes: &ProbePlan,
    suite: Suite,
    host: &SharedHost,
) -> ProbeOutcome {
    let started = Instant::now();
    let (status, mut results) = match probe.extras.process {
        Process::Shared => {
            probe_outcome::outcome_here(probe, &mut probe_context(runner, probes, suite))
        }
        Process::Own { ready } => match ready() {
            Ok(()) => probe_process::measure(probe, runner.config(), suite, &probes.options),
            Err(error) => probe_outcome::status_of(error),
        },
    };
    probes.selection.retain(probe.id, &mut results);
    ProbeOutcome {
        id: probe.id.to_string(),
        method: probe.method.to_string(),
        status,
        results,
        duration_ns: host.elapsed(started).as_nanos() as u64,
    }
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

/// `latlab run --synthetic --only ONLY` on a noisy synthetic machine (`noise`), as the
/// command runs it: its record, read back from its JSON. For tests of whole runs whose
/// figures move as a real machine's do.
#[cfg(test)]
pub(crate) fn synthetic_run_with(only: &str, noise: latlab_engine::host::Noise) -> RunRecord {
    use crate::cli::{Cli, Command};
    use clap::Parser;
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let out = dir.path().join("out");
    let cli = Cli::try_parse_from([
        "latlab",
        "run",
        "--synthetic",
        "--only",
        only,
        "--quiet",
        "--out",
        out.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ])
    .unwrap();
    let Some(Command::Run(args)) = cli.command else {
        unreachable!("a run was asked for");
    };
    let mut plan = crate::plan::run(&args, None, None).unwrap();
    plan.request.host = std::sync::Arc::new(
        latlab_engine::SyntheticHost::noisy(noise).with_model(&latlab_probes::synthetic::MODEL),
    );
    execute(plan, StopSignals::unset()).unwrap();
    latlab_report::load::load_run(&json, latlab_doors::Reached::Named).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

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
