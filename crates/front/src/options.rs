//! The sampling and baseline options both front ends take (the output options are made from
//! the formats: [`crate::FormatArgs`]).
//!
//! Each option is described once ([`OptionHelp`]: its name, value and help). The `latlab`
//! binary parses them with clap (this crate's `clap` feature derives `clap::Args` from the
//! same descriptions); the benchmark harness parses them with lexopt ([`SamplingArgs::take`]
//! and the others), so that a user's `cargo bench` does not build clap. The binary's tests
//! check that the two parsers know the same options.

use latlab_engine::config_text::{
    DEFAULT_ROUNDS, parse_baseline_history, parse_baseline_name, parse_cpu, parse_percent,
    parse_rounds, parse_runs, parse_samples, parse_target_time,
};
use latlab_engine::{Config, Suite};
use std::time::Duration;

/// One option as its help lists it.
#[derive(Debug, Clone, Copy)]
pub struct OptionHelp {
    /// The long name, without its dashes.
    pub long: &'static str,
    /// The one-letter name, where it has one (`-q`).
    pub short: Option<char>,
    /// The value's name (`N`, `FILE`); `None` for a flag.
    pub value: Option<&'static str>,
    pub help: &'static str,
    /// The values it takes, each with what it means; empty where any value of its kind goes.
    pub values: &'static [(&'static str, &'static str)],
    /// The value taken when the option is not given, where the help does not say.
    pub default: Option<&'static str>,
}

/// The help of each option (`--suite`'s values are [`SUITES`]).
const SUITE_HELP: &str = "Which suite: its sample count, sample length and time budget";
const SAMPLES_HELP: &str = "Samples per benchmark [default: 30 quick, 100 full]";
const TARGET_TIME_HELP: &str =
    "Least duration of one sample, e.g. 2ms, 500us [default: 2ms quick, 5ms full]";
const ROUNDS_HELP: &str = "Rounds each result is measured in, spread over the run and sharing \
    its samples, so that a comparison knows how far a figure moves between measurements; 1 \
    measures each result at once";
const PIN_HELP: &str = "Pin the run to this CPU";
const RUNS_HELP: &str = "Run this many times, each run a process of its own started after the \
    last ended, into one directory (run-1, run-2, ...): what a comparison needs to know how \
    far each figure moves between runs";
const SAVE_BASELINE_HELP: &str = "Also keep this run's results as the baseline NAME, replacing \
    the runs it held (DIR/baselines/NAME/ for 'latlab run', target/latlab-baselines/NAME/ for \
    'cargo bench')";
const ADD_TO_BASELINE_HELP: &str = "Also add this run to the baseline NAME, keeping the runs \
    saved in it before: a baseline of several runs shows how far each figure moves between \
    runs of unchanged code, which --fail-if-slower then allows for";
const BASELINE_HISTORY_HELP: &str = "The runs a baseline keeps: --save-baseline and \
    --add-to-baseline keep its last K runs and delete older ones, so that a CI that adds each \
    main-branch run keeps a recent history of how far each figure moves between runs \
    [default: 10]";
const BASELINE_HELP: &str = "Compare this run with the baseline NAME saved earlier, as 'latlab \
    compare' does, after the table";
const ACCEPT_CLOCK_MOVES_HELP: &str = "With --baseline: take a core clock that moved beyond \
    its noise between runs as noise, for CI on a shared machine: the results on the core clock \
    are judged in cycles, and the clock's slowdown fails no gate; the report says it was used";
const ALLOW_MISSING_HELP: &str = "With --fail-if-slower: results of the baseline that this \
    run lacks (their probe or benchmark failed, was skipped or not run, or renamed them) do \
    not fail the gate; the report names each";
const FAIL_IF_SLOWER_HELP: &str = "With --baseline: exit with status 1 when a result is slower \
    than the baseline by more than PCT per cent, judged as 'latlab compare' judges a \
    difference (beyond the noise between runs, and beyond 2%): a regression gate for CI";

/// The `--suite` values, each with what it means.
const SUITES: [(&str, &str); 2] = [
    (
        "quick",
        "30 samples of at least 2 ms, at most 1 s per benchmark",
    ),
    (
        "full",
        "100 samples of at least 5 ms, at most 10 s per benchmark",
    ),
];

/// The suite `text` names: `quick` or `full`.
pub fn parse_suite(text: &str) -> Result<Suite, String> {
    match text {
        "quick" => Ok(Suite::Quick),
        "full" => Ok(Suite::Full),
        _ => Err("must be quick or full".to_string()),
    }
}

#[cfg(feature = "clap")]
fn suite_parser() -> impl clap::builder::TypedValueParser<Value = Suite> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(SUITES.map(|(name, help)| PossibleValue::new(name).help(help)))
        .map(|name| parse_suite(&name).expect("clap admits only the listed suites"))
}

/// How to sample: the suite, its overrides, the rounds, the CPU to pin to, and how many runs
/// (each a process of its own).
#[derive(Debug, Clone)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "clap", command(next_help_heading = "Sampling"))]
pub struct SamplingArgs {
    #[cfg_attr(feature = "clap", arg(long, value_name = "SUITE", default_value = "quick",
        value_parser = suite_parser(), help = SUITE_HELP))]
    pub suite: Suite,
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", value_parser = parse_samples,
        allow_hyphen_values = true, help = SAMPLES_HELP))]
    pub samples: Option<usize>,
    #[cfg_attr(feature = "clap", arg(long, value_name = "DURATION",
        value_parser = parse_target_time, allow_hyphen_values = true, help = TARGET_TIME_HELP))]
    pub target_time: Option<Duration>,
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", default_value_t = DEFAULT_ROUNDS,
        value_parser = parse_rounds, allow_hyphen_values = true, help = ROUNDS_HELP))]
    pub rounds: usize,
    #[cfg_attr(feature = "clap", arg(long, value_name = "CPU", value_parser = parse_cpu,
        allow_hyphen_values = true, help = PIN_HELP))]
    pub pin: Option<usize>,
    #[cfg_attr(feature = "clap", arg(long, value_name = "N", default_value_t = 1,
        value_parser = parse_runs, allow_hyphen_values = true, help = RUNS_HELP))]
    pub runs: usize,
}

/// Baselines: a run kept under a name, and a run compared with one kept earlier.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "clap", command(next_help_heading = "Baselines"))]
pub struct BaselineArgs {
    #[cfg_attr(feature = "clap", arg(long, value_name = "NAME",
        value_parser = parse_baseline_name, help = SAVE_BASELINE_HELP))]
    pub save_baseline: Option<String>,
    #[cfg_attr(feature = "clap", arg(long, value_name = "NAME",
        value_parser = parse_baseline_name, help = ADD_TO_BASELINE_HELP))]
    pub add_to_baseline: Option<String>,
    #[cfg_attr(feature = "clap", arg(long, value_name = "K",
        value_parser = parse_baseline_history, help = BASELINE_HISTORY_HELP))]
    pub baseline_history: Option<usize>,
    #[cfg_attr(feature = "clap", arg(long, value_name = "NAME",
        value_parser = parse_baseline_name, help = BASELINE_HELP))]
    pub baseline: Option<String>,
    #[cfg_attr(feature = "clap", arg(long, value_name = "PCT", requires = "baseline",
        value_parser = parse_percent, allow_hyphen_values = true, help = FAIL_IF_SLOWER_HELP))]
    pub fail_if_slower: Option<f64>,
    #[cfg_attr(feature = "clap", arg(long, requires = "baseline", help = ACCEPT_CLOCK_MOVES_HELP))]
    pub accept_clock_moves: bool,
    #[cfg_attr(feature = "clap", arg(long, requires = "fail_if_slower", help = ALLOW_MISSING_HELP))]
    pub allow_missing: bool,
}

impl Default for SamplingArgs {
    fn default() -> SamplingArgs {
        SamplingArgs {
            suite: Suite::Quick,
            samples: None,
            target_time: None,
            rounds: DEFAULT_ROUNDS,
            pin: None,
            runs: 1,
        }
    }
}

impl SamplingArgs {
    pub const OPTIONS: &[OptionHelp] = &[
        OptionHelp {
            values: &SUITES,
            default: Some("quick"),
            ..option("suite", Some("SUITE"), SUITE_HELP)
        },
        option("samples", Some("N"), SAMPLES_HELP),
        option("target-time", Some("DURATION"), TARGET_TIME_HELP),
        OptionHelp {
            default: Some("3"),
            ..option("rounds", Some("N"), ROUNDS_HELP)
        },
        option("pin", Some("CPU"), PIN_HELP),
        OptionHelp {
            default: Some("1"),
            ..option("runs", Some("N"), RUNS_HELP)
        },
    ];

    /// Takes the option `--long` (its value from `parser`) when it is one of these; `Ok(false)`
    /// when it is not, `Err` with one line when its value is refused.
    pub fn take(&mut self, long: &str, parser: &mut lexopt::Parser) -> Result<bool, String> {
        match long {
            "suite" => self.suite = value(parser, long, "SUITE", parse_suite)?,
            "samples" => self.samples = Some(value(parser, long, "N", parse_samples)?),
            "target-time" => {
                self.target_time = Some(value(parser, long, "DURATION", parse_target_time)?);
            }
            "rounds" => self.rounds = value(parser, long, "N", parse_rounds)?,
            "pin" => self.pin = Some(value(parser, long, "CPU", parse_cpu)?),
            "runs" => self.runs = value(parser, long, "N", parse_runs)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

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

impl BaselineArgs {
    pub const OPTIONS: &[OptionHelp] = &[
        option("save-baseline", Some("NAME"), SAVE_BASELINE_HELP),
        option("add-to-baseline", Some("NAME"), ADD_TO_BASELINE_HELP),
        option("baseline-history", Some("K"), BASELINE_HISTORY_HELP),
        option("baseline", Some("NAME"), BASELINE_HELP),
        option("fail-if-slower", Some("PCT"), FAIL_IF_SLOWER_HELP),
        option("accept-clock-moves", None, ACCEPT_CLOCK_MOVES_HELP),
        option("allow-missing", None, ALLOW_MISSING_HELP),
    ];

    /// As [`SamplingArgs::take`].
    pub fn take(&mut self, long: &str, parser: &mut lexopt::Parser) -> Result<bool, String> {
        let slot = match long {
            "save-baseline" => &mut self.save_baseline,
            "add-to-baseline" => &mut self.add_to_baseline,
            "baseline" => &mut self.baseline,
            "fail-if-slower" => {
                self.fail_if_slower = Some(value(parser, long, "PCT", parse_percent)?);
                return Ok(true);
            }
            "baseline-history" => {
                let history = value(parser, long, "K", parse_baseline_history)?;
                self.baseline_history = Some(history);
                return Ok(true);
            }
            "accept-clock-moves" => {
                self.accept_clock_moves = true;
                return Ok(true);
            }
            "allow-missing" => {
                self.allow_missing = true;
                return Ok(true);
            }
            _ => return Ok(false),
        };
        *slot = Some(value(parser, long, "NAME", parse_baseline_name)?);
        Ok(true)
    }

    /// Refuses what the baseline options cannot mean together, in one line:
    /// `--fail-if-slower` without `--baseline` to judge against (in the words clap uses for a
    /// missing requirement), one baseline both saved and added to (the run would be kept
    /// twice), and a history with no baseline to keep.
    pub fn check(&self) -> Result<(), String> {
        if self.fail_if_slower.is_some() && self.baseline.is_none() {
            return Err(
                "the argument '--fail-if-slower <PCT>' needs '--baseline <NAME>' to judge against"
                    .into(),
            );
        }
        if self.accept_clock_moves && self.baseline.is_none() {
            return Err(
                "the argument '--accept-clock-moves' needs '--baseline <NAME>' to judge against"
                    .into(),
            );
        }
        if self.allow_missing && self.fail_if_slower.is_none() {
            return Err(
                "the argument '--allow-missing' needs '--fail-if-slower <PCT>', whose gate it \
                 excuses"
                    .into(),
            );
        }
        if let (Some(saved), Some(added)) = (&self.save_baseline, &self.add_to_baseline)
            && saved == added
        {
            return Err(format!(
                "--save-baseline {saved} and --add-to-baseline {added} name one baseline, \
                 which would keep the run twice; give one of them"
            ));
        }
        if let Some(history) = self.baseline_history
            && self.save_baseline.is_none()
            && self.add_to_baseline.is_none()
        {
            return Err(format!(
                "--baseline-history {history}: it says how many runs a baseline being kept \
                 holds; give it with --save-baseline or --add-to-baseline"
            ));
        }
        Ok(())
    }
}

const fn option(long: &'static str, value: Option<&'static str>, help: &'static str) -> OptionHelp {
    OptionHelp {
        long,
        short: None,
        value,
        help,
        values: &[],
        default: None,
    }
}

/// The value of `--long`, parsed; a refusal reads as clap words it, so that both front ends
/// refuse a value alike.
pub fn value<T>(
    parser: &mut lexopt::Parser,
    long: &str,
    value_name: &str,
    parse: impl FnOnce(&str) -> Result<T, String>,
) -> Result<T, String> {
    let text = text_value(parser, long, value_name)?;
    parse(&text).map_err(|why| refused(&text, long, value_name, &why))
}

/// The text of `--long`'s value; the part of [`value`] that is the same for every type, kept
/// out of its copies.
fn text_value(parser: &mut lexopt::Parser, long: &str, value_name: &str) -> Result<String, String> {
    let raw = parser.value().map_err(|_| {
        format!("a value is required for '--{long} <{value_name}>' but none was supplied")
    })?;
    raw.into_string()
        .map_err(|_| format!("invalid UTF-8 was detected in the value of '--{long}'"))
}

/// The refusal of `text` as the value of `--long`, for `why`.
fn refused(text: &str, long: &str, value_name: &str, why: &str) -> String {
    format!(
        "invalid value '{}' for '--{long} <{value_name}>': {why}",
        shown_value(text)
    )
}

/// The longest value a refusal repeats whole.
const LONGEST_SHOWN_VALUE: usize = 64;

/// A value as a refusal repeats it: whole up to 64 characters, else
/// its beginning and its length (a name of ten thousand characters is not echoed).
pub fn shown_value(text: &str) -> std::borrow::Cow<'_, str> {
    let length = text.chars().count();
    if length <= LONGEST_SHOWN_VALUE {
        return text.into();
    }
    let beginning: String = text.chars().take(LONGEST_SHOWN_VALUE / 2).collect();
    format!("{beginning}… ({length} characters)").into()
}

/// A help screen's section: its heading and each option under it, the help wrapped to
/// `width` columns under the option's name, as clap lays out a long help.
pub fn help_section(heading: &str, options: &[OptionHelp], width: usize) -> String {
    const INDENT: &str = "          ";
    let width = width.max(30);
    let mut text = format!("{heading}:\n");
    for option in options {
        let short = option
            .short
            .map_or("    ".to_string(), |c| format!("-{c}, "));
        match option.value {
            Some(value) => text.push_str(&format!("  {short}--{} <{value}>\n", option.long)),
            None => text.push_str(&format!("  {short}--{}\n", option.long)),
        }
        text.push_str(&wrapped(option.help, width, INDENT, INDENT));
        if !option.values.is_empty() {
            text.push_str(&format!("\n{INDENT}Possible values:\n"));
            let name_width = option.values.iter().map(|(name, _)| name.len()).max();
            let name_width = name_width.unwrap_or(0) + 1;
            let hanging = format!("{INDENT}{}", " ".repeat(name_width + 3));
            for (name, help) in option.values {
                let first = format!("{INDENT}- {:name_width$} ", format!("{name}:"));
                text.push_str(&wrapped(help, width, &first, &hanging));
            }
        }
        if let Some(default) = option.default {
            text.push_str(&format!("\n{INDENT}[default: {default}]\n"));
        }
        text.push('\n');
    }
    text
}

/// `text` in lines of at most `width` columns, broken between words, the first line after
/// `first` and the others after `others`, each ending in a newline.
fn wrapped(text: &str, width: usize, first: &str, others: &str) -> String {
    let options = textwrap::Options::new(width)
        .initial_indent(first)
        .subsequent_indent(others)
        .break_words(false);
    textwrap::fill(text, options) + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampling(args: &[&str]) -> Result<SamplingArgs, String> {
        let mut parser = lexopt::Parser::from_args(args.iter().copied());
        let mut sampling = SamplingArgs::default();
        while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
            match arg {
                lexopt::Arg::Long(long) => {
                    let long = long.to_string();
                    if !sampling.take(&long, &mut parser)? {
                        return Err(format!("unknown --{long}"));
                    }
                }
                other => return Err(other.unexpected().to_string()),
            }
        }
        Ok(sampling)
    }

    /// The options parse as the harness takes them, the suite's defaults apply where nothing
    /// overrides them, and a sample longer than the budget allows is refused.
    #[test]
    fn sampling_options_make_the_engine_settings() {
        let parsed = sampling(&["--suite", "full", "--samples=40"]).unwrap();
        let config = parsed.config().unwrap();
        assert_eq!(config.samples, 40);
        assert_eq!(config.target_sample_time, Config::full().target_sample_time);
        assert_eq!(config.rounds, DEFAULT_ROUNDS);
        let quick = sampling(&["--rounds", "1"]).unwrap();
        assert_eq!(quick.suite, Suite::Quick);
        assert_eq!(quick.config().unwrap().rounds, 1);
        let too_long = sampling(&["--target-time", "10s"]).unwrap();
        assert!(too_long.config().is_err());
    }

    /// A refused value says which option, which value and why, in one line; a value that
    /// starts with '-' is a value, not the next option.
    #[test]
    fn refusals_name_the_option_and_the_value() {
        assert_eq!(
            sampling(&["--rounds", "0"]).unwrap_err(),
            "invalid value '0' for '--rounds <N>': must be a whole number of rounds from 1 to 10"
        );
        assert!(
            sampling(&["--samples", "-3"])
                .unwrap_err()
                .contains("'-3' for '--samples <N>'")
        );
        assert!(
            sampling(&["--suite", "slow"])
                .unwrap_err()
                .contains("must be quick or full")
        );
        assert_eq!(
            sampling(&["--pin"]).unwrap_err(),
            "a value is required for '--pin <CPU>' but none was supplied"
        );
    }

    #[test]
    fn help_is_wrapped_under_each_option() {
        let text = help_section("Sampling", SamplingArgs::OPTIONS, 60);
        assert!(text.starts_with("Sampling:\n      --suite <SUITE>\n          Which suite"));
        assert!(
            text.lines().all(|line| line.chars().count() <= 60),
            "{text}"
        );
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let rounds = ROUNDS_HELP.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains(&rounds), "{text}");
        assert!(text.contains("          - full:  100 samples of"), "{text}");
        assert!(text.contains("          [default: 3]\n"), "{text}");
    }
}
