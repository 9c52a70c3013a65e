//! The command's entry: its command line parsed (`cli`), planned (`plan`), and dispatched;
//! a probe's own process served (`probe_process`); clap's errors and a closed pipe ended
//! with the statuses a shell expects.

use crate::cli::{Cli, Command};
use crate::{env_report, list, plan, probe_process, reading_commands, run, runs, shell_docs};
use latlab_engine::signals::StopSignals;
use latlab_front::RunOf;
use std::process::ExitCode;

/// The command: `latlab` with what its command line asks.
pub fn main() -> ExitCode {
    latlab_engine::signals::fail_oversized_writes();
    if let Some(request) = probe_process::request_of_this_process() {
        return probe_process::serve(&request);
    }
    let cli = match parse_command_line() {
        Ok(cli) => cli,
        Err(error) => return report_clap_error(error),
    };
    match run(cli) {
        Ok(code) => code,
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            latlab_front::say!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// The command line, its help wrapped as the harness's is ([`latlab_front::help_width`]).
fn parse_command_line() -> Result<Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let width = latlab_front::help_width(latlab_front::help_text_width());
    let matches = Cli::command().term_width(width).try_get_matches()?;
    Cli::from_arg_matches(&matches)
}

/// Dispatches: each subcommand is validated into a plan (every refusal happens there), then
/// executed. A run learns here, once, whether a `--runs` command started it
/// ([`RunOf::of_this_process`]), and its plan is made from that.
fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let reads_runs = matches!(
        cli.command,
        Some(
            Command::Report(_)
                | Command::Compare(_)
                | Command::Fleet(_)
                | Command::History(_)
                | Command::Noise(_)
                | Command::Export(_)
        )
    );
    if reads_runs {
        latlab_doors::input::room_to_read().map_err(anyhow::Error::msg)?;
    }
    match cli.command {
        None => run_probes(plan::run(&cli.run, None, RunOf::of_this_process())?),
        Some(Command::Run(args)) => run_probes(plan::run(&args, None, RunOf::of_this_process())?),
        Some(Command::Mem(args)) => {
            run_probes(plan::run(&args, Some("mem."), RunOf::of_this_process())?)
        }
        Some(Command::Report(args)) => {
            reading_commands::report(&plan::report(&args)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Compare(args)) => reading_commands::compare(plan::compare(&args)?),
        Some(Command::Fleet(args)) => {
            reading_commands::fleet(&plan::fleet(&args)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::History(args)) => reading_commands::history(&plan::history(&args)?),
        Some(Command::Noise(args)) => {
            reading_commands::noise(&plan::noise(&args)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Export(args)) => {
            reading_commands::export(&plan::export(&args)?)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::List(args)) => {
            list::print(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Env(args)) => {
            env_report::print(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Completions(args)) => {
            shell_docs::completions(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Man(args)) => {
            plan::man(&args)?;
            shell_docs::man(&args)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Runs a plan of probes (once, or `--runs` times, each run a process of its own),
/// Ctrl-C, SIGTERM and SIGHUP stopping it cleanly.
fn run_probes(plan: plan::RunPlan) -> anyhow::Result<ExitCode> {
    if plan.runs > 1 {
        runs::execute(plan, StopSignals::install()?)
    } else {
        run::execute(plan, StopSignals::install()?)
    }
}

/// Help and version go to standard output with status 0; errors become one line on standard
/// error with status 2: clap's own message and its tip ("a similar argument exists"), then
/// the help of the subcommand that was being parsed.
fn report_clap_error(error: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
    ) {
        let _ = error.print();
        return ExitCode::SUCCESS;
    }
    let rendered = shortened_values(&error.render().to_string());
    // A first line that ends in ':' is continued by the indented lines under it (the
    // required arguments not provided).
    let first = rendered.lines().next().unwrap_or_default();
    let continued: Vec<&str> = (rendered.lines().skip(1))
        .take_while(|l| first.ends_with(':') && l.starts_with("  "))
        .map(str::trim)
        .collect();
    let first = if continued.is_empty() {
        first.to_string()
    } else {
        format!("{first} {}", continued.join(", "))
    };
    let mut parts: Vec<&str> = std::iter::once(first.as_str())
        .filter(|l| !l.is_empty())
        .chain(
            rendered
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with("tip:") || l.starts_with("[possible values:")),
        )
        .collect();
    if parts.is_empty() {
        parts.push("error: invalid arguments");
    }
    let help = match subcommand_named(std::env::args().skip(1)) {
        Some(name) => format!("see `latlab {name} --help`"),
        None => "see `latlab --help`".to_string(),
    };
    latlab_front::say!("{}; {help}", parts.join("; "));
    ExitCode::from(2)
}

/// Clap's message with each value it quotes ('…') cut to what a refusal repeats
/// ([`latlab_front::shown_value`]).
fn shortened_values(rendered: &str) -> String {
    (rendered.split('\'').enumerate())
        .map(|(i, part)| match i % 2 {
            1 => latlab_front::shown_value(part),
            _ => part.into(),
        })
        .collect::<Vec<_>>()
        .join("'")
}

/// The subcommand among the arguments: the first argument that names one.
fn subcommand_named(args: impl Iterator<Item = String>) -> Option<String> {
    use clap::CommandFactory;
    let command = Cli::command();
    let names: Vec<&str> = command.get_subcommands().map(|c| c.get_name()).collect();
    args.take_while(|a| a != "--")
        .find(|a| names.contains(&a.as_str()))
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
