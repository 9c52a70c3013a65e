//! Executes the plans of the subcommands that read results files (planned in
//! `plan/reading_plans.rs`): the HTML page of one run (`latlab report`), runs side by side
//! (`latlab compare`), many hosts' runs (`latlab fleet`), a run in other formats
//! (`latlab export`) and how far results move between runs (`latlab noise`).

use crate::plan::{ComparePlan, ExportPlan, FleetPlan, HistoryPlan, NoisePlan, ReportPlan};
use latlab_report::stats::NoiseTables;
use latlab_report::compare::{CompareText, Compared, Gate, Side};
use latlab_report::fleet::FleetText;
use latlab_report::history::{HistoryText, gate_text};
use latlab_report::formats::FileFormat;
use latlab_report::{Exporter, HtmlExporter, OutputTarget, printable, write_output};
use std::process::ExitCode;

/// Writes `text` where `target` says. Standard output closed early (`| head`, `| true`)
/// ends only the printing there ([`latlab_front::print_out`]): every file named after it is
/// still written.
fn write_to(target: &OutputTarget, text: &str) -> anyhow::Result<()> {
    match target {
        OutputTarget::Stdout => latlab_front::print_out(text)?,
        file => write_output(file, text)?,
    }
    Ok(())
}

/// Renders and writes each output asked for (saying where each went, where `say`). One that
/// cannot be rendered or written does not stop the others: its error is kept, and the
/// errors come back once every output was tried ([`all_written`]).
fn write_each<M: ?Sized>(
    outputs: &[(&'static FileFormat<M>, OutputTarget)],
    subject: &M,
    say: bool,
) -> Vec<anyhow::Error> {
    let declared = latlab_probes::presentations();
    let mut failed = Vec::new();
    for (format, target) in outputs {
        let written = (format.exporter)(&declared)
            .render(subject)
            .map_err(anyhow::Error::from)
            .and_then(|rendered| {
                write_to(target, &rendered)?;
                if say {
                    say_written(format.name, target, &rendered)?;
                }
                Ok(())
            });
        if let Err(error) = written {
            failed.push(error);
        }
    }
    failed
}

/// `Ok` where every output was written; else each failure but the last said on standard
/// error, and the last the command's error.
fn all_written(failed: Vec<anyhow::Error>) -> anyhow::Result<()> {
    let mut failed = failed.into_iter();
    let last = failed.next_back();
    for error in failed {
        latlab_front::say!("error: {error:#}");
    }
    last.map_or(Ok(()), Err)
}

/// Writes the page and says where, with its size.
pub fn report(plan: &ReportPlan) -> anyhow::Result<()> {
    let page = HtmlExporter {
        declared: latlab_probes::presentations(),
    }
    .render(&plan.run)?;
    write_to(&plan.out, &page)?;
    say_written("report", &plan.out, &page)
}

/// Prints the fleet, and writes the outputs asked for (the text goes to standard error when
/// one takes standard output).
pub fn fleet(plan: &FleetPlan) -> anyhow::Result<()> {
    let text = FleetText {
        terminal: plan.terminal,
    }
    .render(&plan.report)?;
    let text = plan.terminal.printable(&text);
    if plan.uses_stdout() {
        latlab_front::stderr_text(&text);
    } else {
        write_to(&OutputTarget::Stdout, &text)?;
    }
    let failed = write_each(&plan.outputs, &plan.report, true);
    let left_out = latlab_report::fleet::runs_left_out(&plan.report.fleet);
    let exported = (plan.outputs.iter())
        .any(|(format, _)| latlab_report::fleet::carries_latest_runs_only(format));
    if exported && !left_out.is_empty() {
        latlab_front::say!(
            "note: OpenMetrics carries one run per host (its name and CPU model): {} earlier \
             run(s) of a host whose later run it carries left out ({})",
            left_out.len(),
            printable(&latlab_report::copies::first_few(&left_out))
        );
    }
    all_written(failed)
}

/// Writes the run in each format asked for, and says where.
pub fn export(plan: &ExportPlan) -> anyhow::Result<()> {
    all_written(write_each(&plan.outputs, &plan.run, true))
}

/// `report: PATH (N KiB)` (what was written, where, and its size), on standard output, or
/// on standard error when the file itself went to standard output.
fn say_written(what: &str, target: &OutputTarget, page: &str) -> anyhow::Result<()> {
    let line = format!(
        "{what}: {} ({} KiB)\n",
        printable(
            &target
                .path()
                .unwrap_or(std::path::Path::new("-"))
                .display()
                .to_string()
        ),
        page.len() / 1024
    );
    if *target == OutputTarget::Stdout {
        latlab_front::stderr_text(&line);
    } else {
        write_to(&OutputTarget::Stdout, &line)?;
    }
    Ok(())
}

/// Prints the comparison with a legend of the runs and its summary, and writes the files
/// asked for; the text goes to standard error when a file takes standard output. Returns the
/// exit status: 1 when `--fail-if-slower` found a regression.
pub fn compare(plan: ComparePlan) -> anyhow::Result<ExitCode> {
    let mut legend: String = (plan.sides.iter())
        .zip(&plan.paths)
        .map(|(side, paths)| legend_line(side, paths))
        .collect();
    for note in &plan.notes {
        legend.push_str(&format!("note: {note}\n"));
    }
    let outputs = plan.outputs;
    let declared = latlab_probes::presentations();
    let given = plan.noise_table;
    let noise = match &given {
        Some(table) => NoiseTables::given(table),
        None => NoiseTables::shipped(),
    };
    let compared = Compared::excusing(plan.sides, plan.threshold, &declared, noise, plan.excused);
    let text = format!(
        "{legend}\n{}",
        CompareText {
            terminal: plan.terminal
        }
        .render(&compared)?
    );
    let text = plan.terminal.printable(&text);
    let failed = write_each(&outputs, &compared, false);
    let mut status = ExitCode::SUCCESS;
    let mut gate = String::new();
    if let Some(percent) = plan.fail_if_slower {
        let judged = Gate::of(&compared.comparison, percent);
        gate = judged.text("result", &compared.sides[0].label);
        if judged.failed() {
            status = ExitCode::from(1);
        }
    }
    let text = format!("{text}{}", printable(&gate));
    if outputs.iter().any(|(_, t)| *t == OutputTarget::Stdout) {
        latlab_front::stderr_text(&text);
    } else {
        write_to(&OutputTarget::Stdout, &text)?;
    }
    all_written(failed)?;
    Ok(status)
}

/// Prints the history and writes the outputs asked for; status 1 where `--fail-if-slower`
/// finds a change that made a result slower by more than its percentage.
pub fn history(plan: &HistoryPlan) -> anyhow::Result<ExitCode> {
    let mut text = HistoryText.render(&plan.history)?;
    let failed = write_each(&plan.outputs, &plan.history, true);
    let mut status = ExitCode::SUCCESS;
    if let Some(percent) = plan.fail_if_slower {
        let slower = plan.history.slower_than(percent);
        let (lines, failed) = gate_text(&slower, percent, plan.accept_machine_steps);
        text.push_str(&lines);
        if failed {
            status = ExitCode::from(1);
        }
    }
    let text = printable(&text);
    if plan.uses_stdout() {
        latlab_front::stderr_text(&text);
    } else {
        write_to(&OutputTarget::Stdout, &text)?;
    }
    all_written(failed)?;
    Ok(status)
}

/// Writes the noise table, saying on standard error what it was measured from.
pub fn noise(plan: &NoisePlan) -> anyhow::Result<()> {
    for note in &plan.notes {
        latlab_front::say!("note: {note}");
    }
    write_to(&plan.out, &plan.table.to_text())?;
    latlab_front::say!(
        "latlab: the noise of {} results, from {}",
        plan.table.results.len(),
        plan.table.provenance()
    );
    Ok(())
}

/// `A = before/results.json (host, started)`, or for several runs `A = 3 runs in before/
/// (host, first started … last started)`.
fn legend_line(side: &Side, paths: &[std::path::PathBuf]) -> String {
    let first = &side.runs[0];
    match (&side.runs[..], paths) {
        ([_], [path]) => format!(
            "{} = {} ({}, {})\n",
            side.label,
            path.display(),
            first.environment.host_name,
            first.started_at
        ),
        (runs, paths) => {
            let last = &runs[runs.len() - 1];
            let dir = paths[0]
                .parent()
                .map_or_else(String::new, |d| d.display().to_string());
            format!(
                "{} = {} runs from {dir} ({}, {} to {})\n",
                side.label,
                runs.len(),
                first.environment.host_name,
                first.started_at,
                last.started_at
            )
        }
    }
}
