//! The command line of a bench binary: what `cargo bench -- …` accepts.
//!
//! Parsed with lexopt, which builds in a fraction of a second where clap takes several: the
//! harness is in every user's dev-dependencies. The options shared with the `latlab` binary
//! come from latlab-front, described once for both parsers.

use crate::count::{CountAsked, Counting, Via};
use latlab_engine::model::RunRecord;
use latlab_front::{
    BaselineArgs, FormatArgs, OptionHelp, SamplingArgs, TerminalArgs, help_section, value,
};
use std::ffi::OsString;

#[derive(Debug, Default)]
pub(crate) struct Options {
    /// Run only benchmarks whose name matches one of these regular expressions.
    pub filters: Vec<String>,
    /// With the patterns, match whole names exactly instead.
    pub exact: bool,
    /// List the selected benchmarks and exit.
    pub list: bool,
    /// Set by `cargo bench`; without it (as under `cargo test`) each benchmark runs once.
    pub bench: bool,
    pub sampling: SamplingArgs,
    /// Profile each benchmark after measuring it.
    pub profile: bool,
    /// `--count` and `--via`: count what each call executes as well as timing it.
    pub count: Option<CountAsked>,
    /// `--via` as given, checked against `--count` once every option is read.
    via: Option<Via>,
    pub tables: FormatArgs<RunRecord>,
    /// Write the self-contained HTML report here.
    pub html: Option<String>,
    pub baselines: BaselineArgs,
    pub terminal: TerminalArgs,
    /// `--against REV`: this build compared with another in paired slices.
    #[cfg(feature = "files")]
    pub against: Option<crate::against::AgainstArgs>,
    /// `--precision` and `--time`, as given, checked against `--against` once every option
    /// is read.
    precision: Option<f64>,
    time: Option<std::time::Duration>,
}

/// What the command line asks for.
#[derive(Debug)]
pub(crate) enum Command {
    Run(Box<Options>),
    /// `--help` or `-h`: print [`help`] and exit 0.
    Help,
}

const ABOUT: &str =
    "Benchmarks registered with #[latlab_bench::bench], measured by latlab's engine";

const GENERAL: &[OptionHelp] = &[
    flag(
        "exact",
        "With the patterns, match whole names exactly instead",
    ),
    flag("list", "List the selected benchmarks and exit"),
    flag("help", "Print this help (also -h)"),
];

const PROFILE: &[OptionHelp] = &[flag(
    "profile",
    "Profile each benchmark after measuring it: the hot functions, the hottest one's annotated \
     disassembly, and hardware counts per call where the machine has counters",
)];

const COUNT: &[OptionHelp] = &[
    OptionHelp {
        long: "count",
        short: None,
        value: Some("WHAT"),
        help: "Also count what each call executes, which does not move between runs as its time \
               does: before timing, the benchmarks run again under Valgrind's callgrind, counted \
               only in their timed loops; a comparison of two counted runs judges the counts",
        values: &[
            ("instructions", "instructions per call"),
            (
                "cache",
                "instructions, Valgrind's simulated first- and last-level cache misses, and the \
                 cycles they suggest",
            ),
        ],
        default: None,
    },
    OptionHelp {
        long: "via",
        short: None,
        value: Some("COUNTER"),
        help: "What counts for --count",
        values: &[
            (
                "valgrind",
                "Valgrind's callgrind, on any machine it runs on",
            ),
            (
                "perf",
                "the CPU's instructions:u counter, in this process, where perf_event_open \
                 can read it (Linux, the `profile` feature)",
            ),
        ],
        default: Some("valgrind"),
    },
];

const HTML: &[OptionHelp] = &[OptionHelp {
    value: Some("FILE"),
    ..flag("html", "Write the self-contained HTML report here")
}];

const AGAINST: &[OptionHelp] = &[
    OptionHelp {
        value: Some("REV"),
        ..flag(
            "against",
            "Compare this build with another, benchmark by benchmark, in paired slices run \
             side by side (A B B A), the two builds each in a process of its own: REV is a git \
             revision, branch or tag (its bench targets built in a worktree under the target \
             directory, kept for the next run) or the path of a saved bench executable",
        )
    },
    OptionHelp {
        value: Some("PCT"),
        default: Some("0.5"),
        ..flag(
            "precision",
            "With --against, stop sampling a benchmark once its ratio's 95% interval is this \
             narrow either side",
        )
    },
    OptionHelp {
        value: Some("TIME"),
        default: Some("2s"),
        ..flag(
            "time",
            "With --against, the most time one benchmark is sampled",
        )
    },
];

const EXIT_STATUS: &str = "Exit status:
  0    every selected benchmark ran
  1    a benchmark failed, --fail-if-slower found one slower than the
       baseline (or the core clock slower beyond its noise, or a benchmark of
       the baseline missing), or an output could not be written while another
       results file was
  2    bad arguments or an unknown benchmark or baseline (nothing measured), or
       not one results file asked for could be written
  130  interrupted by Ctrl-C (results measured so far are written)
  143  stopped by SIGTERM, 129 by SIGHUP (results measured so far are written)
";

const fn flag(long: &'static str, help: &'static str) -> OptionHelp {
    OptionHelp {
        long,
        short: None,
        value: None,
        help,
        values: &[],
        default: None,
    }
}

impl Command {
    /// Parses a bench binary's arguments, the program's name first; `Err` is one line
    /// saying what was wrong.
    pub(crate) fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
        use lexopt::Arg;
        let mut parser = lexopt::Parser::from_iter(args);
        let mut options = Options::default();
        while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
            match arg {
                Arg::Short('h') | Arg::Long("help") => return Ok(Command::Help),
                Arg::Long(long) => {
                    let long = long.to_string();
                    if !options.take(&long, &mut parser)? {
                        return Err(unexpected(&long));
                    }
                }
                Arg::Short(short) => {
                    if !options.terminal.take_short(short)? {
                        return Err(format!("unexpected argument '-{short}' found"));
                    }
                }
                Arg::Value(pattern) => options.filters.push(
                    pattern
                        .into_string()
                        .map_err(|_| "invalid UTF-8 was detected in a pattern".to_string())?,
                ),
            }
        }
        options.check_against()?;
        options.baselines.check()?;
        options.check_count()?;
        Ok(Command::Run(Box::new(options)))
    }
}

/// The formats the report crate writes only with this crate's `files` feature: a build
/// without it refuses their options by name.
const FORMATS_OF_FILES: &[&str] = &["json", "csv"];

/// An option this parser does not take: one of a feature left out of this build, by name.
fn unexpected(long: &str) -> String {
    if !cfg!(feature = "files") && FORMATS_OF_FILES.contains(&long) {
        return not_built(&format!("--{long}"), "files");
    }
    format!("unexpected argument '--{long}' found")
}

/// `option` needs `feature`, which this build of the harness lacks.
pub(crate) fn not_built(option: &str, feature: &str) -> String {
    format!(
        "{option}: this build of latlab-bench was built without its `{feature}` feature (on by \
         default); enable it in the dev-dependency"
    )
}

impl Options {
    /// Every file output by its flag with what it named, given or not: the formats', then
    /// `--html`.
    pub fn outputs_by_flag(&self) -> Vec<(String, Option<String>)> {
        let mut named = self.tables.by_flag();
        named.push(("--html".to_string(), self.html.clone()));
        named
    }

    /// `--against` with its `--precision`, `--time` and `--fail-if-slower` (which judges the
    /// comparison with the other build, not a baseline), refusing what a paired comparison
    /// does not do.
    fn check_against(&mut self) -> Result<(), String> {
        #[cfg(feature = "files")]
        if let Some(against) = &mut self.against {
            if let Some(precision) = self.precision {
                against.precision = precision / 100.0;
            }
            if let Some(time) = self.time {
                against.time = time;
            }
            against.fail_if_slower = self.baselines.fail_if_slower.take().map(|pct| pct / 100.0);
            let b = &self.baselines;
            let alone = [
                ("--baseline", b.baseline.is_some()),
                ("--save-baseline", b.save_baseline.is_some()),
                ("--add-to-baseline", b.add_to_baseline.is_some()),
                ("--count", self.count.is_some()),
                ("--profile", self.profile),
                ("--runs", self.sampling.runs > 1),
            ];
            let tables = self.tables.by_flag();
            let other_table = (tables.iter())
                .find(|(flag, path)| path.is_some() && flag != "--json")
                .map(|(flag, _)| flag.clone());
            if let Some(flag) = other_table {
                return Err(format!(
                    "{flag}: with --against, the comparison is written as --json and --html only"
                ));
            }
            if let Some((option, _)) = alone.iter().find(|(_, given)| *given) {
                return Err(format!(
                    "{option}: is for a run of this build alone; --against compares two builds \
                     in paired slices: give one or the other"
                ));
            }
            return Ok(());
        }
        if self.precision.is_some() || self.time.is_some() {
            let option = if self.precision.is_some() {
                "--precision"
            } else {
                "--time"
            };
            return Err(format!(
                "the argument '{option}' needs '--against <REV>', whose comparison it paces"
            ));
        }
        Ok(())
    }

    /// `--via` given its `--count`: refused without one, and with the cache simulation,
    /// which is Valgrind's.
    fn check_count(&mut self) -> Result<(), String> {
        match (&mut self.count, self.via) {
            (None, Some(_)) => Err("--via: says what counts for --count, which is not given; \
                 add --count instructions"
                .into()),
            (Some(count), Some(Via::Perf)) if count.what == Counting::Cache => Err(
                "--count cache --via perf: the cache simulation is Valgrind's; count cache \
                 with --via valgrind, or instructions with --via perf"
                    .into(),
            ),
            (Some(count), Some(via)) => {
                count.via = via;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Takes `--against` (with the `files` feature), `--precision` and `--time` and their
    /// values.
    fn take_against(&mut self, long: &str, parser: &mut lexopt::Parser) -> Result<bool, String> {
        match long {
            #[cfg(feature = "files")]
            "against" => {
                let rev = value(parser, long, "REV", |text| match text.is_empty() {
                    true => Err("give a git revision or the path of a bench executable".into()),
                    false => Ok(text.to_string()),
                })?;
                self.against = Some(crate::against::AgainstArgs {
                    rev,
                    precision: crate::against::DEFAULT_PRECISION_PERCENT / 100.0,
                    time: crate::against::DEFAULT_TIME,
                    fail_if_slower: None,
                });
                Ok(true)
            }
            "precision" => {
                let pct = value(
                    parser,
                    long,
                    "PCT",
                    latlab_engine::config_text::parse_percent,
                )?;
                if pct <= 0.0 {
                    return Err("--precision: must be above 0, such as 0.5".into());
                }
                self.precision = Some(pct);
                Ok(true)
            }
            "time" => {
                let range =
                    std::time::Duration::from_millis(100)..=std::time::Duration::from_secs(3600);
                self.time = Some(value(parser, long, "TIME", |text| {
                    latlab_engine::config_text::duration_in(text, &range, "2s")
                })?);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Takes `--long` and its value when it is a bench binary's option.
    fn take(&mut self, long: &str, parser: &mut lexopt::Parser) -> Result<bool, String> {
        let flag = match long {
            "exact" => &mut self.exact,
            "list" => &mut self.list,
            "bench" => &mut self.bench,
            "profile" => &mut self.profile,
            "html" => {
                self.html = Some(value(parser, long, "FILE", |text| Ok(text.to_string()))?);
                return Ok(true);
            }
            "count" => {
                let what = value(parser, long, "WHAT", |text| match text {
                    "instructions" => Ok(Counting::Instructions),
                    "cache" => Ok(Counting::Cache),
                    _ => Err(format!("'{text}': counts 'instructions' or 'cache'")),
                })?;
                self.count = Some(CountAsked {
                    what,
                    via: Via::default(),
                });
                return Ok(true);
            }
            "via" => {
                self.via = Some(value(parser, long, "COUNTER", |text| match text {
                    "valgrind" => Ok(Via::Valgrind),
                    "perf" => Ok(Via::Perf),
                    _ => Err(format!("'{text}': counts with 'valgrind' or 'perf'")),
                })?);
                return Ok(true);
            }
            _ => {
                return Ok(self.take_against(long, parser)?
                    || self.sampling.take(long, parser)?
                    || self.tables.take(long, parser)?
                    || self.baselines.take(long, parser)?
                    || self.terminal.take(long, parser)?);
            }
        };
        if let Some(attached) = parser.optional_value() {
            return Err(format!(
                "unexpected value '{}' for '--{long}' found; no more were expected",
                attached.to_string_lossy()
            ));
        }
        *flag = true;
        Ok(true)
    }
}

/// The help screen of `cargo bench -- --help`, wrapped to `width` columns
/// ([`latlab_front::help_width`]).
pub(crate) fn help(program: &str, width: usize) -> String {
    let mut text = format!(
        "{ABOUT}\n\nUsage: {program} [OPTIONS] [PATTERN]...\n\nArguments:\n  [PATTERN]...\n          \
         Run only benchmarks whose name (group/function/argument) matches\n          \
         one of these regular expressions\n\n"
    );
    text.push_str(&help_section("Options", GENERAL, width));
    text.push_str(&help_section(
        "Sampling",
        &[SamplingArgs::OPTIONS, PROFILE, COUNT].concat(),
        width,
    ));
    text.push_str(&help_section(
        "Outputs",
        &[&FormatArgs::<RunRecord>::options()[..], HTML].concat(),
        width,
    ));
    text.push_str(&help_section("Terminal", TerminalArgs::OPTIONS, width));
    text.push_str(&help_section("Baselines", BaselineArgs::OPTIONS, width));
    if cfg!(feature = "files") {
        text.push_str(&help_section("Two builds", AGAINST, width));
    }
    let mut any_left_out = false;
    for (feature, options, built) in [
        (
            "files",
            "--json, --csv and the baselines",
            cfg!(feature = "files"),
        ),
        ("profile", "--profile", cfg!(feature = "profile")),
        ("html", "--html", cfg!(feature = "html")),
    ] {
        if !built {
            text.push_str(&format!(
                "Not built in: {options} (latlab-bench's feature `{feature}`)\n"
            ));
            any_left_out = true;
        }
    }
    if any_left_out {
        text.push('\n');
    }
    text.push_str(EXIT_STATUS);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, String> {
        let args = std::iter::once("bench").chain(args.iter().copied());
        match Command::parse(args.map(OsString::from))? {
            Command::Run(options) => Ok(*options),
            Command::Help => Err("help".into()),
        }
    }

    #[test]
    fn cargo_bench_arguments_parse() {
        let options = parse(&["--bench", "lists", "--samples", "10"]).unwrap();
        assert!(options.bench);
        assert_eq!(options.filters, ["lists"]);
        assert_eq!(options.sampling.samples, Some(10));
        assert!(parse(&["--samples", "3"]).is_err());
        // The gate needs a baseline to judge against.
        assert!(
            parse(&["--fail-if-slower", "5"])
                .unwrap_err()
                .contains("--baseline")
        );
        let gated = parse(&["--baseline", "main", "--fail-if-slower", "5%"]).unwrap();
        assert_eq!(gated.baselines.fail_if_slower, Some(5.0));
        assert_eq!(gated.baselines.baseline.as_deref(), Some("main"));
        assert_eq!(parse(&["-h"]).unwrap_err(), "help");
    }

    /// `--against` takes its pace and its gate; what only a run of this build alone does
    /// is refused beside it, and its pace without it.
    #[cfg(feature = "files")]
    #[test]
    fn a_paired_comparison_takes_its_pace_and_gate_and_refuses_a_baseline() {
        let options =
            parse(&["--against", "main", "--precision", "1%", "--time", "500ms"]).unwrap();
        let against = options.against.unwrap();
        assert_eq!(against.rev, "main");
        assert!((against.precision - 0.01).abs() < 1e-12);
        assert_eq!(against.time, std::time::Duration::from_millis(500));
        assert_eq!(against.fail_if_slower, None);
        let gated = parse(&["--against", "main", "--fail-if-slower", "2"]).unwrap();
        assert_eq!(gated.against.unwrap().fail_if_slower, Some(0.02));
        assert_eq!(gated.baselines.fail_if_slower, None);
        for (args, says) in [
            (
                &["--against", "main", "--baseline", "b"][..],
                "--baseline: is for a run",
            ),
            (
                &["--against", "main", "--count", "instructions"][..],
                "--count: is for a run",
            ),
            (
                &["--against", "main", "--csv", "x.csv"][..],
                "--csv: with --against",
            ),
            (&["--precision", "1"][..], "needs '--against <REV>'"),
            (&["--time", "1s"][..], "needs '--against <REV>'"),
            (
                &["--against", "main", "--precision", "0"][..],
                "must be above 0",
            ),
            (
                &["--against", "main", "--time", "1h2x"][..],
                "not a duration",
            ),
            (&["--against", ""][..], "give a git revision"),
        ] {
            let refused = parse(args).unwrap_err();
            assert!(refused.contains(says), "{args:?}: {refused}");
        }
    }

    #[test]
    fn counts_are_asked_with_what_counts_them() {
        let count = |args: &[&str]| parse(args).map(|o| o.count);
        assert_eq!(count(&[]), Ok(None));
        let asked = |what, via| Ok(Some(CountAsked { what, via }));
        assert_eq!(
            count(&["--count", "instructions"]),
            asked(Counting::Instructions, Via::Valgrind)
        );
        assert_eq!(
            count(&["--via", "perf", "--count", "instructions"]),
            asked(Counting::Instructions, Via::Perf)
        );
        assert_eq!(
            count(&["--count", "cache"]),
            asked(Counting::Cache, Via::Valgrind)
        );
        for (args, says) in [
            (&["--count", "cycles"][..], "'instructions' or 'cache'"),
            (&["--via", "perf"][..], "--count, which is not given"),
            (&["--count", "cache", "--via", "perf"][..], "Valgrind's"),
            (
                &["--count", "instructions", "--via", "pmu"][..],
                "'valgrind' or 'perf'",
            ),
        ] {
            let refused = count(args).unwrap_err();
            assert!(refused.contains(says), "{args:?}: {refused}");
        }
    }

    #[test]
    fn unknown_options_and_values_on_flags_are_refused() {
        assert_eq!(
            parse(&["--treshold"]).unwrap_err(),
            "unexpected argument '--treshold' found"
        );
        assert!(
            parse(&["--list=yes"])
                .unwrap_err()
                .contains("'yes' for '--list'")
        );
        assert!(parse(&["-x"]).is_err());
    }

    /// Every option the parser takes is in the help, and the help fits its width.
    #[test]
    fn the_help_lists_every_option() {
        let text = help("bench", 80);
        assert!(
            text.lines().all(|line| line.chars().count() <= 80),
            "{text}"
        );
        // The one-letter options too, as parsed.
        for short in ["-q, --quiet", "-v, --verbose"] {
            assert!(text.contains(short), "{short}: {text}");
        }
        let formats = FormatArgs::<RunRecord>::options();
        for option in [GENERAL, PROFILE, COUNT, HTML]
            .into_iter()
            .chain([
                SamplingArgs::OPTIONS,
                &formats,
                BaselineArgs::OPTIONS,
                TerminalArgs::OPTIONS,
            ])
            .flatten()
        {
            assert!(
                text.contains(&format!("--{}", option.long)),
                "{}",
                option.long
            );
            if option.long == "help" {
                continue;
            }
            let args: &[&str] = match option.value {
                Some("PCT") => &["--baseline", "main", "--fail-if-slower", "5"],
                Some("K") => &["--save-baseline", "main", "--baseline-history", "10"],
                Some("NAME") => &[option.long, "main"],
                Some("N") => &[option.long, "10"],
                Some("DURATION") => &[option.long, "1ms"],
                Some("CPU") => &[option.long, "0"],
                None if option.long == "accept-clock-moves" => {
                    &["--baseline", "main", "--accept-clock-moves"]
                }
                None if option.long == "allow-missing" => &[
                    "--baseline",
                    "main",
                    "--fail-if-slower",
                    "5",
                    "--allow-missing",
                ],
                Some("SUITE") => &[option.long, "full"],
                Some("WHEN") => &[option.long, "never"],
                Some("WHAT") => &[option.long, "instructions"],
                Some("COUNTER") => &["--count", "instructions", "--via", "perf"],
                Some(_) => &[option.long, "out.json"],
                None => &[option.long],
            };
            let args: Vec<String> = args
                .iter()
                .map(|a| {
                    if *a == option.long {
                        format!("--{a}")
                    } else {
                        a.to_string()
                    }
                })
                .collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            assert!(parse(&args).is_ok(), "{args:?}: {:?}", parse(&args));
        }
    }
}
