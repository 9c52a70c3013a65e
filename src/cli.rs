//! The command-line surface. Raw arguments are parsed here; `plan.rs` turns them into a
//! validated plan. Value parsers refuse bad numbers with a message saying what is allowed.

use clap::{Args, Parser, Subcommand};
use latlab_engine::config_text::{duration_in, parse_percent, parse_scatters};
use latlab_engine::model::RunRecord;
use latlab_front::{BaselineArgs, ColorChoice, FormatArgs, SamplingArgs, TerminalArgs};
use latlab_report::compare::Compared;
use latlab_report::fleet::FleetReport;
use latlab_report::history::History;
use std::path::PathBuf;
use std::time::Duration;

const EXIT_CODES: &str = "\
Exit status:
  0    every probe ran
  1    a probe failed (the others' results are still written)
  2    bad arguments or a fatal error (nothing is written)
  130  interrupted by Ctrl-C (results measured so far are written)
  143  stopped by SIGTERM, 129 by SIGHUP (results measured so far are written)";

/// Measures the latency numbers of this machine.
#[derive(Debug, Parser)]
#[command(
    name = "latlab",
    version,
    about,
    long_about = "Measures the latency numbers of this machine: clock, calls, system calls, \
                  branches, memory, threads, processes, IPC, files, scheduling. With no \
                  subcommand, runs the quick suite and ends with the latency-numbers table.",
    args_conflicts_with_subcommands = true,
    after_help = EXIT_CODES
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run probes and write the results (the default).
    #[command(after_help = EXIT_CODES)]
    Run(RunArgs),
    /// Run the memory family (probes mem.*): latency by working-set size, cache levels.
    #[command(after_help = EXIT_CODES)]
    Mem(RunArgs),
    /// Write the self-contained HTML report of a results file (a run writes one itself).
    #[command(after_help = REPORT_EXIT_CODES)]
    Report(ReportArgs),
    /// Compare runs: the same results side by side, the ratio to the first run, and whether
    /// each difference is larger than the noise (Mann–Whitney U test).
    #[command(after_help = COMPARE_EXIT_CODES)]
    Compare(CompareArgs),
    /// Compare a fleet: every run under a directory, read from its summary or its results
    /// file (one run per host, as the Slurm and Kubernetes recipes in deploy/ write them),
    /// the headline rows side by side, the spread per row and the hosts that are outliers
    /// within their CPU model.
    #[command(after_help = FLEET_EXIT_CODES)]
    Fleet(FleetArgs),
    /// A machine's history: every run under the directories, grouped by host and ordered by
    /// start, and each result's change points (a step beyond the scatter between runs, or a
    /// change of mix between two regimes), each with what else changed in the environment at
    /// that run.
    #[command(after_help = HISTORY_EXIT_CODES)]
    History(HistoryArgs),
    /// Measure how far each result moves between runs of this machine, from directories of
    /// several runs ('latlab run --runs 10 --out DIR'), and write the noise table that a
    /// comparison of one run a side takes as its prior ('latlab compare --noise-table').
    #[command(after_help = NOISE_EXIT_CODES)]
    Noise(NoiseArgs),
    /// Write a results file in other formats: OpenMetrics gauges for Prometheus, the compact
    /// summary a fleet reads, CSV, Markdown, JSON.
    #[command(after_help = EXPORT_EXIT_CODES)]
    Export(ExportArgs),
    /// List every probe with its one-line method, timing and result names.
    List(ListArgs),
    /// Print the environment report: CPU, caches, kernel, clock, privileges.
    Env(EnvArgs),
    /// Print a shell completion script: 'latlab completions bash > ~/.local/share/bash-completion/completions/latlab'.
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per subcommand into a directory.
    Man(ManArgs),
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// How long the run may take, e.g. 60s, 5m: each probe gets its part by its typical
    /// cost, takes fewer samples or ends its sweep early to fit, and says what it left out;
    /// 'none' lets every probe take all it would [default: 30s quick, 10m full].
    #[arg(long, value_name = "DURATION", value_parser = parse_budget, help_heading = "Sampling", allow_hyphen_values = true)]
    pub budget: Option<Budget>,
    /// Run only probes whose id matches this regular expression ('clock|cpu'); with a '/'
    /// it matches result names instead ('cpu.branch/random|level/L1$'), and only the
    /// results it matches are kept ('latlab list' shows them).
    #[arg(long, value_name = "PATTERN", help_heading = "Selection")]
    pub only: Option<String>,
    /// Leave out probes whose id matches this regular expression; with a '/' it leaves out
    /// the results whose names it matches ('/mispredict').
    #[arg(long, value_name = "PATTERN", help_heading = "Selection")]
    pub skip: Option<String>,
    /// Directory for results.json, report.html and the plots (created if its parent exists)
    /// [default: latlab-results].
    #[arg(long, value_name = "DIR", help_heading = "Outputs")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub tables: FormatArgs<RunRecord>,
    #[command(flatten)]
    pub probe_options: crate::probe_options::ProbeOptionArgs,
    /// Lock memory (mlockall) so no page fault lands in a sample.
    #[arg(long, help_heading = "Isolation")]
    pub mlock: bool,
    /// Run at SCHED_FIFO priority 1, bounded by RLIMIT_RTTIME.
    #[arg(long, help_heading = "Isolation")]
    pub rt: bool,
    #[command(flatten)]
    pub baselines: BaselineArgs,
    #[command(flatten)]
    pub terminal: TerminalArgs,
    /// Measure an imaginary machine instead of this one: every figure is made up and the same
    /// everywhere (for testing what renders results).
    #[arg(long, hide = true)]
    pub synthetic: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A results file written by latlab (results.json).
    #[arg(value_name = "RESULTS.json")]
    pub file: PathBuf,
    /// Where to write the page [default: report.html beside RESULTS.json].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct FleetArgs {
    /// The directory the runs were written into; searched recursively for *.json files.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub outputs: FormatArgs<FleetReport>,
    /// Colour the outliers' hosts: auto colours a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto, alias = "colour")]
    pub color: ColorChoice,
    /// Name the hosts whose runs have a change point within their last N runs (where the
    /// directory holds several runs of a host, such as a nightly job's).
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    pub last: u64,
}

#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    /// The directories the runs were written into; searched recursively for *.json files.
    #[arg(value_name = "DIR", num_args = 1.., required = true)]
    pub dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub outputs: FormatArgs<History>,
    /// Report only the changes whose new level began on or after this date or time
    /// (2026-11-20, or RFC 3339 as the results files write it).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Report only the changes whose new level began within each host's last N runs.
    #[arg(long, value_name = "N")]
    pub last: Option<usize>,
    /// Steps smaller than this many per cent are not changes, however significant.
    #[arg(long, value_name = "PCT", default_value = "2", value_parser = parse_percent, allow_hyphen_values = true)]
    pub threshold: f64,
    /// How many standard deviations of the runs of the levels on either side a step must
    /// move: lower finds smaller steps on a quiet machine, and calls more changes in the
    /// unchanged runs of a machine that moves (the book's History chapter measures each).
    #[arg(long, value_name = "K", default_value_t = latlab_report::history::DEFAULT_BEYOND_SCATTER, value_parser = parse_scatters, allow_hyphen_values = true)]
    pub beyond_scatter: f64,
    /// Exit with status 1 when a change reported made the machine slower by more than this
    /// many per cent: a result's step (the 95% interval of its ratio wholly past it) or its
    /// change of mix, a step of the core clock, or a step of the machine (many results at
    /// one run), judged as a whole. A nightly job's alert.
    #[arg(long, value_name = "PCT", value_parser = parse_percent, allow_hyphen_values = true)]
    pub fail_if_slower: Option<f64>,
    /// With --fail-if-slower: take a step of the machine (or of the core clock) that no
    /// change in the environment explains as the host's own, not a failure; the report says
    /// which it took.
    #[arg(long, requires = "fail_if_slower")]
    pub accept_machine_steps: bool,
}

const HISTORY_EXIT_CODES: &str = "Exit status:
  0    the history was read (files that are not latlab results are skipped with a note)
  1    --fail-if-slower found a change that made the machine slower by more than its percentage
  2    bad arguments, a directory that is missing or holds no latlab results file, or an unwritable output";

const FLEET_EXIT_CODES: &str = "Exit status:
  0    the fleet was compared (files that are not latlab results are skipped with a note)
  2    bad arguments, a directory that is missing or holds no latlab results file, or an unwritable output";

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A results file written by latlab (results.json).
    #[arg(value_name = "RESULTS.json")]
    pub file: PathBuf,
    #[command(flatten)]
    pub outputs: FormatArgs<RunRecord>,
}

const EXPORT_EXIT_CODES: &str = "Exit status:
  0    every output was written
  2    bad arguments, no output named, an unwritable output, or a file that is missing, not JSON, truncated, another tool's, or from a newer latlab";

const REPORT_EXIT_CODES: &str = "Exit status:
  0    the report was written
  2    bad arguments, or a file that is missing, not JSON, truncated, another tool's, or from a newer latlab";

#[derive(Debug, Args)]
pub struct NoiseArgs {
    /// Directories of runs of one build on this machine, each run a process of its own
    /// (what 'latlab run --runs N --out DIR' writes); several, taken at different times,
    /// show how far results move as the machine's load changes over the day.
    #[arg(value_name = "DIR", num_args = 1.., required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where to write the table; '-' or none for standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

const NOISE_EXIT_CODES: &str = "Exit status:
  0    the table was written
  2    bad arguments, too few runs, runs of different machines, builds or suites, or a file that is missing, not JSON, truncated, another tool's, or from a newer latlab";

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Results files written by latlab (results.json), the first being the baseline; a
    /// directory is one side of several runs of the same code (its *.json and
    /// */results.json), which shows how far each figure moves between runs.
    #[arg(value_name = "RESULTS", num_args = 2.., required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub outputs: FormatArgs<Compared>,
    /// Medians closer than this many per cent are the same, however significant the test.
    #[arg(long, value_name = "PCT", default_value = "2", value_parser = parse_percent, allow_hyphen_values = true)]
    pub threshold: f64,
    /// Exit with status 1 when a result of a later run is slower than the first by more than
    /// this many per cent (significant and beyond the threshold): a regression gate for CI.
    #[arg(long, value_name = "PCT", value_parser = parse_percent, allow_hyphen_values = true)]
    pub fail_if_slower: Option<f64>,
    /// Take a core clock that moved beyond its noise between runs as noise, for CI on a
    /// shared machine: the results on the core clock are judged in cycles, and the clock's
    /// slowdown fails no gate. The report says it was used.
    #[arg(long)]
    pub accept_clock_moves: bool,
    /// With --fail-if-slower: results of the first run that a later run lacks (its probe
    /// failed, was skipped or not run, or renamed them) do not fail the gate. The report
    /// names each.
    #[arg(long, requires = "fail_if_slower")]
    pub allow_missing: bool,
    /// A noise table of this machine ('latlab noise'): with one run a side, each result's
    /// noise is how far the table saw it move between runs [default: the tables of the
    /// machines latlab has met].
    #[arg(long, value_name = "FILE")]
    pub noise_table: Option<PathBuf>,
    /// Colour slower and faster: auto colours a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto, alias = "colour")]
    pub color: ColorChoice,
}

const COMPARE_EXIT_CODES: &str = "Exit status:
  0    compared (whatever the differences, unless --fail-if-slower)
  1    --fail-if-slower: a result, or the core clock beyond its noise, was slower than that, or
       a result of the first run is missing from a later one (unless excused by
       --accept-clock-moves or --allow-missing)
  2    bad arguments, or a file that is missing, not JSON, truncated, another tool's, or from a newer latlab";

/// A percentage from 0 to 1000: `2`, `0.5`, `5%`.

#[derive(Debug, Args)]
pub struct EnvArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Describe the imaginary machine of --synthetic runs instead of this one.
    #[arg(long, hide = true)]
    pub synthetic: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print JSON: an array of probes, each with its id, method, timing, options and
    /// results.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print Markdown: the book's page of every probe and every option.
    #[arg(long)]
    pub markdown: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write latlab.1 and latlab-SUBCOMMAND.1 into this existing directory instead of
    /// printing latlab.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `--budget`: a time, or none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Budget {
    Limited(Duration),
    Unlimited,
}

pub const BUDGET_RANGE: std::ops::RangeInclusive<Duration> =
    Duration::from_secs(1)..=Duration::from_secs(7 * 24 * 3600);

fn parse_budget(text: &str) -> Result<Budget, String> {
    if text == "none" {
        return Ok(Budget::Unlimited);
    }
    duration_in(text, &BUDGET_RANGE, "60s").map(Budget::Limited)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use latlab_engine::config_text::{parse_samples, parse_target_time};

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// The options this binary parses with clap and the harness parses with lexopt are the
    /// same ones, with the same value names and help: the harness's help is built from the
    /// descriptions that clap's arguments are derived from.
    #[test]
    fn the_shared_options_are_the_same_for_both_parsers() {
        use clap::Args;
        use latlab_front::OptionHelp;
        let shared: [(clap::Command, Vec<OptionHelp>); 4] = [
            (
                SamplingArgs::augment_args(clap::Command::new("x")),
                SamplingArgs::OPTIONS.to_vec(),
            ),
            (
                FormatArgs::<RunRecord>::augment_args(clap::Command::new("x")),
                FormatArgs::<RunRecord>::options(),
            ),
            (
                FormatArgs::<Compared>::augment_args(clap::Command::new("x")),
                FormatArgs::<Compared>::options(),
            ),
            (
                BaselineArgs::augment_args(clap::Command::new("x")),
                BaselineArgs::OPTIONS.to_vec(),
            ),
        ];
        for (command, described) in shared {
            let parsed: Vec<_> = command.get_arguments().collect();
            assert_eq!(parsed.len(), described.len());
            for (argument, option) in parsed.into_iter().zip(&described) {
                assert_eq!(argument.get_long(), Some(option.long));
                let help = argument.get_help().map(ToString::to_string);
                assert_eq!(help.as_deref(), Some(option.help), "--{}", option.long);
                if !argument.get_action().takes_values() {
                    // A switch: no value to name, and clap's implicit "false" is no default.
                    assert_eq!((option.value, option.default), (None, None));
                    continue;
                }
                let value_name = argument.get_value_names().map(|names| names[0].as_str());
                assert_eq!(value_name, option.value, "--{}", option.long);
                let default = argument.get_default_values().first();
                let default = default.map(|value| value.to_string_lossy().into_owned());
                assert_eq!(default.as_deref(), option.default, "--{}", option.long);
            }
        }
    }

    #[test]
    fn samples_are_bounded() {
        assert_eq!(parse_samples("30"), Ok(30));
        assert!(parse_samples("0").is_err());
        assert!(parse_samples("-3").is_err());
        assert!(parse_samples("4").is_err());
        assert!(parse_samples("100001").is_err());
        assert!(parse_samples("ten").is_err());
    }

    #[test]
    fn budgets_are_durations_or_none() {
        assert_eq!(
            parse_budget("90s"),
            Ok(Budget::Limited(Duration::from_secs(90)))
        );
        assert_eq!(parse_budget("none"), Ok(Budget::Unlimited));
        assert_eq!(parse_budget("0s").unwrap_err(), "must be from 1s to 7days");
        assert!(parse_budget("soon").unwrap_err().contains("such as 60s"));
    }

    #[test]
    fn target_times_parse_with_units_and_are_bounded() {
        assert_eq!(parse_target_time("2ms"), Ok(Duration::from_millis(2)));
        assert_eq!(parse_target_time("500us"), Ok(Duration::from_micros(500)));
        assert!(parse_target_time("2").is_err());
        assert!(parse_target_time("1ns").is_err());
        assert!(parse_target_time("1h").is_err());
        assert!(parse_target_time("-2ms").is_err());
        assert_eq!(
            parse_target_time("1h").unwrap_err(),
            "must be from 10us to 10s"
        );
    }
}
