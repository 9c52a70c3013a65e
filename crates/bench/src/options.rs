//! The command line of a bench binary: what `cargo bench -- …` accepts.

use clap::Parser;
use latlab_engine::config_text::{parse_baseline_name, parse_percent};
use latlab_front::{BaselineArgs, SamplingArgs, TableArgs};

#[derive(Debug, Parser)]
#[command(
    about = "Benchmarks registered with #[latlab_bench::bench], measured by latlab's engine",
    after_help = "Exit status:\n  0    every selected benchmark ran\n  1    a benchmark failed, --fail-if-slower found one slower than the baseline, or an output could not be written while another results file was\n  2    bad arguments or an unknown benchmark or baseline (nothing measured), or not one results file asked for could be written\n  130  interrupted by Ctrl-C (results measured so far are written)\n  143  stopped by SIGTERM, 129 by SIGHUP (results measured so far are written)"
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
    #[command(flatten)]
    pub sampling: SamplingArgs,
    /// Profile each benchmark after measuring it: the hot functions, the hottest one's
    /// annotated disassembly, and hardware counts per call where the machine has counters.
    #[arg(long)]
    pub profile: bool,
    #[command(flatten)]
    pub tables: TableArgs,
    /// Write the self-contained HTML report here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<String>,
    #[command(flatten)]
    pub baselines: BaselineArgs,
    /// Also add this run to the baseline NAME, keeping the runs saved in it before: a
    /// baseline of several runs shows how far each figure moves between runs of unchanged
    /// code, which --fail-if-slower then allows for.
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name, help_heading = "Baselines")]
    pub add_to_baseline: Option<String>,
    /// With --baseline: exit with status 1 when a benchmark is slower than the baseline by
    /// more than PCT per cent, judged as 'latlab compare' judges a difference (beyond the
    /// noise between runs, and beyond 2%): a regression gate for CI.
    #[arg(long, value_name = "PCT", value_parser = parse_percent, requires = "baseline", help_heading = "Baselines")]
    pub fail_if_slower: Option<f64>,
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
        assert_eq!(options.sampling.samples, Some(10));
        assert!(Options::try_parse_from(["bench", "--samples", "3"]).is_err());
        // The gate needs a baseline to judge against.
        assert!(Options::try_parse_from(["bench", "--fail-if-slower", "5"]).is_err());
        let gated =
            Options::try_parse_from(["bench", "--baseline", "main", "--fail-if-slower", "5%"])
                .unwrap();
        assert_eq!(gated.fail_if_slower, Some(5.0));
    }
}
