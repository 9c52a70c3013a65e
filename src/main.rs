//! latlab: measures the latency numbers of the machine it runs on.
//!
//! This binary is the command line and glue only: `cli` parses, `plan` validates, `run`
//! drives the engine (crates/engine) over the probes (crates/probes) and hands the record to
//! the exporters (crates/report).

mod cli;
mod env_report;
mod plan;
mod run;

use clap::Parser;
use cli::{Cli, Command};
use plan::UsageError;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return report_clap_error(error),
    };
    match run(cli) {
        Ok(code) => code,
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        None => run_probes(&cli.run, None, true),
        Some(Command::Run(args)) => run_probes(&args, None, false),
        Some(Command::Mem(args)) => run_probes(&args, Some("mem."), false),
        Some(Command::Report(args)) => report(&args),
        Some(Command::Compare(args)) => compare(&args),
        Some(Command::List) => {
            list_probes()?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Env(args)) => {
            env_report::print(&args)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Runs the probes the arguments select, within `family` (an id prefix) when given, and ends
/// with the headline table when asked (the default command).
fn run_probes(
    args: &cli::RunArgs,
    family: Option<&str>,
    headline: bool,
) -> anyhow::Result<ExitCode> {
    let plan = match plan::plan(args, family) {
        Ok(plan) => plan::RunPlan { headline, ..plan },
        Err(UsageError(message)) => {
            eprintln!("error: {message}");
            return Ok(ExitCode::from(2));
        }
    };
    let cancel = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // A second Ctrl-C while the first is being handled ends the process at once.
        signal_hook::flag::register_conditional_shutdown(signal, 130, Arc::clone(&cancel))?;
        signal_hook::flag::register(signal, Arc::clone(&cancel))?;
    }
    run::execute(plan, cancel)
}

/// `latlab report`: the HTML page of one results file.
fn report(args: &cli::ReportArgs) -> anyhow::Result<ExitCode> {
    let run = match latlab_report::load::load_run(&args.file) {
        Ok(run) => run,
        Err(error) => {
            eprintln!("error: {error}");
            return Ok(ExitCode::from(2));
        }
    };
    let out = args.out.clone().unwrap_or_else(|| {
        args.file
            .parent()
            .unwrap_or(std::path::Path::new("."))
            .join("report.html")
    });
    if out
        .parent()
        .is_some_and(|p| !p.as_os_str().is_empty() && !p.is_dir())
    {
        eprintln!(
            "error: --out {}: its directory does not exist; create it or choose another",
            out.display()
        );
        return Ok(ExitCode::from(2));
    }
    use latlab_report::Exporter;
    let page = latlab_report::HtmlExporter.render(&run)?;
    latlab_report::write_output(&latlab_report::OutputTarget::File(out.clone()), &page)?;
    println!("report: {} ({} KiB)", out.display(), page.len() / 1024);
    Ok(ExitCode::SUCCESS)
}

/// `latlab compare`: loads every file first (any refusal is one line and status 2), then
/// prints the comparison and writes the Markdown if asked.
fn compare(args: &cli::CompareArgs) -> anyhow::Result<ExitCode> {
    let mut runs = Vec::new();
    for (i, path) in args.files.iter().enumerate() {
        match latlab_report::load::load_run(path) {
            Ok(run) => {
                let label = char::from(b'A' + (i % 26) as u8).to_string();
                runs.push((label, path, run));
            }
            Err(error) => {
                eprintln!("error: {error}");
                return Ok(ExitCode::from(2));
            }
        }
    }
    let markdown_target = args
        .markdown
        .as_deref()
        .map(latlab_report::OutputTarget::parse);
    let legend: String = runs
        .iter()
        .map(|(label, path, run)| {
            format!(
                "{label} = {} ({}, {})\n",
                path.display(),
                run.environment.host_name,
                run.started_at
            )
        })
        .collect();
    let labelled: Vec<(String, latlab_engine::model::RunRecord)> = runs
        .into_iter()
        .map(|(label, _, run)| (label, run))
        .collect();
    let text = format!(
        "{legend}\n{}",
        latlab_report::compare::compare_text(&labelled)
    );
    if let Some(target) = &markdown_target {
        latlab_report::write_output(target, &latlab_report::compare::compare_markdown(&labelled))?;
    }
    if markdown_target != Some(latlab_report::OutputTarget::Stdout) {
        print!("{text}");
    } else {
        eprint!("{text}");
    }
    Ok(ExitCode::SUCCESS)
}

fn list_probes() -> std::io::Result<()> {
    let width = latlab_probes::PROBES
        .iter()
        .map(|p| p.id.len())
        .max()
        .unwrap_or(0);
    let mut out = std::io::stdout().lock();
    for probe in latlab_probes::PROBES {
        writeln!(out, "{:width$}  {}", probe.id, probe.method)?;
    }
    Ok(())
}

/// Help and version go to standard output with status 0; errors become one line on standard
/// error with status 2.
fn report_clap_error(error: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let _ = error.print();
        return ExitCode::SUCCESS;
    }
    let rendered = error.render().to_string();
    let first = rendered
        .lines()
        .next()
        .unwrap_or("error: invalid arguments");
    eprintln!("{first}; see `latlab --help`");
    ExitCode::from(2)
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
