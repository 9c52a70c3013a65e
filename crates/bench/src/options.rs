//! The command line of a bench binary: what `cargo bench -- …` accepts.

use clap::{Parser, ValueEnum};
use latlab_engine::config_text::{
    DEFAULT_ROUNDS, parse_baseline_name, parse_cpu, parse_rounds, parse_samples, parse_target_time,
};
use std::time::Duration;

#[derive(Debug, Parser)]
#[command(
    about = "Benchmarks registered with #[latlab_bench::bench], measured by latlab's engine",
    after_help = "Exit status:\n  0    every selected benchmark ran\n  1    a benchmark failed\n  2    bad arguments, an unknown benchmark or baseline, an unwritable output\n  130  interrupted by Ctrl-C (results measured so far are written)\n  143  stopped by SIGTERM, 129 by SIGHUP (results measured so far are written)"
)]
pub(crate) struct Options {
    /// Run only benchmarks whose name (group/function/argument) matches one of these
    /// regular expressions.
    #[arg(value_name = "PATTERN")]
    pub filters: Vec<String>,
    /// With the patterns, match whole names exactly instead.
    #[arg(long)]
    pub exact: bool,
    /// List the selected benchmarks and exit.
    #[arg(long)]
    pub list: bool,
    /// Set by `cargo bench`; without it (as under `cargo test`) each benchmark runs once.
    #[arg(long, hide = true)]
    pub bench: bool,
    /// Which suite: its sample count, sample length and time budget.
    #[arg(long, value_enum, default_value_t = Suite::Quick)]
    pub suite: Suite,
    /// Samples per benchmark [default: 30 quick, 100 full].
    #[arg(long, value_name = "N", value_parser = parse_samples, allow_hyphen_values = true)]
    pub samples: Option<usize>,
    /// Least duration of one sample, e.g. 2ms, 500us [default: 2ms quick, 5ms full].
    #[arg(long, value_name = "DURATION", value_parser = parse_target_time, allow_hyphen_values = true)]
    pub target_time: Option<Duration>,
    /// Rounds each benchmark is measured in, the selected benchmarks taken in turn and each
    /// round sharing the samples, so that a comparison with a baseline knows how far a
    /// figure moves between measurements; 1 measures each benchmark at once.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_ROUNDS, value_parser = parse_rounds, allow_hyphen_values = true)]
    pub rounds: usize,
    /// Pin the benchmarks to this CPU.
    #[arg(long, value_name = "CPU", value_parser = parse_cpu, allow_hyphen_values = true)]
    pub pin: Option<usize>,
    /// Profile each benchmark after measuring it: the hot functions, the hottest one's
    /// annotated disassembly, and hardware counts per call where the machine has counters.
    #[arg(long)]
    pub profile: bool,
    /// Write the results as JSON (a Google Benchmark superset) here; '-' for standard output.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Write CSV here; '-' for standard output.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<String>,
    /// Write a Markdown table here; '-' for standard output.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<String>,
    /// Write the self-contained HTML report here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
    /// Save this run's results as a named baseline (in the target directory's
    /// latlab-baselines/).
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name)]
    pub save_baseline: Option<String>,
    /// Compare this run with a saved baseline, with a significance test per benchmark.
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name)]
    pub baseline: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Suite {
    /// 30 samples of at least 2 ms, at most 1 s per benchmark.
    Quick,
    /// 100 samples of at least 5 ms, at most 10 s per benchmark.
    Full,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_bench_arguments_parse() {
        let options =
            Options::try_parse_from(["bench", "--bench", "lists", "--samples", "10"]).unwrap();
        assert!(options.bench);
        assert_eq!(options.filters, ["lists"]);
        assert_eq!(options.samples, Some(10));
        assert!(Options::try_parse_from(["bench", "--samples", "3"]).is_err());
    }
}
