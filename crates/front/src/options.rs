//! The sampling options both front ends take.

use clap::Args;
use latlab_engine::config_text::{
    DEFAULT_ROUNDS, parse_baseline_name, parse_cpu, parse_rounds, parse_samples, parse_target_time,
};
use latlab_engine::{Config, Suite};
use std::time::Duration;

/// The `--suite` values, each with what it means, as clap lists them.
fn suite_parser() -> impl clap::builder::TypedValueParser<Value = Suite> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new([
        PossibleValue::new("quick").help("30 samples of at least 2 ms, at most 1 s per benchmark"),
        PossibleValue::new("full").help("100 samples of at least 5 ms, at most 10 s per benchmark"),
    ])
    .map(|name| match name.as_str() {
        "full" => Suite::Full,
        _ => Suite::Quick,
    })
}

/// How to sample: the suite, its overrides, the rounds and the CPU to pin to.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Sampling")]
pub struct SamplingArgs {
    /// Which suite: its sample count, sample length and time budget.
    #[arg(long, value_name = "SUITE", default_value = "quick", value_parser = suite_parser())]
    pub suite: Suite,
    /// Samples per benchmark [default: 30 quick, 100 full].
    #[arg(long, value_name = "N", value_parser = parse_samples, allow_hyphen_values = true)]
    pub samples: Option<usize>,
    /// Least duration of one sample, e.g. 2ms, 500us [default: 2ms quick, 5ms full].
    #[arg(long, value_name = "DURATION", value_parser = parse_target_time, allow_hyphen_values = true)]
    pub target_time: Option<Duration>,
    /// Rounds each result is measured in, spread over the run and sharing its samples, so
    /// that a comparison knows how far a figure moves between measurements; 1 measures each
    /// result at once.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_ROUNDS, value_parser = parse_rounds, allow_hyphen_values = true)]
    pub rounds: usize,
    /// Pin the run to this CPU.
    #[arg(long, value_name = "CPU", value_parser = parse_cpu, allow_hyphen_values = true)]
    pub pin: Option<usize>,
}

/// Where the results go besides the front end's own outputs, in the forms both write.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Outputs")]
pub struct TableArgs {
    /// Also write the results as JSON here (the run's schema, a Google Benchmark superset);
    /// '-' for standard output.
    #[arg(long, value_name = "FILE")]
    pub json: Option<String>,
    /// Also write CSV here; '-' for standard output.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<String>,
    /// Also write a Markdown table here; '-' for standard output.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<String>,
}

/// Baselines: a run kept under a name, and a run compared with one kept earlier.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Baselines")]
pub struct BaselineArgs {
    /// Also keep this run's results as the baseline NAME (DIR/baselines/NAME.json for
    /// 'latlab run', target/latlab-baselines/NAME.json for 'cargo bench').
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name)]
    pub save_baseline: Option<String>,
    /// Compare this run with the baseline NAME saved earlier, as 'latlab compare' does,
    /// after the table.
    #[arg(long, value_name = "NAME", value_parser = parse_baseline_name)]
    pub baseline: Option<String>,
}

impl SamplingArgs {
    /// The engine's settings: the suite's, with the samples and sample length asked for and
    /// the rounds; `Err` with one line when a sample cannot fit the suite's budget.
    pub fn config(&self) -> Result<Config, String> {
        let config = Config {
            rounds: self.rounds,
            ..self
                .suite
                .config()
                .overridden(self.samples, self.target_time)
        };
        config.check_sample_fits_budget("--target-time")?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Command {
        #[command(flatten)]
        sampling: SamplingArgs,
    }

    /// The options parse as both front ends take them, the suite's defaults apply where
    /// nothing overrides them, and a sample longer than the budget allows is refused.
    #[test]
    fn sampling_options_make_the_engine_settings() {
        let parsed = Command::try_parse_from(["x", "--suite", "full", "--samples", "40"]).unwrap();
        let config = parsed.sampling.config().unwrap();
        assert_eq!(config.samples, 40);
        assert_eq!(config.target_sample_time, Config::full().target_sample_time);
        assert_eq!(config.rounds, DEFAULT_ROUNDS);
        let quick = Command::try_parse_from(["x", "--rounds", "1"]).unwrap();
        assert_eq!(quick.sampling.suite, Suite::Quick);
        assert_eq!(quick.sampling.config().unwrap().rounds, 1);
        assert!(Command::try_parse_from(["x", "--rounds", "0"]).is_err());
        let too_long = Command::try_parse_from(["x", "--target-time", "10s"]).unwrap();
        assert!(too_long.sampling.config().is_err());
    }
}
