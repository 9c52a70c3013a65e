//! What both front ends' terminal output may be: how much it says (`-q`, `-v`), how wide
//! (`COLUMNS`, or the terminal's width), whether it is coloured (`--color`, `NO_COLOR`,
//! `TERM=dumb`), and on which stream it goes (standard error when a results file takes
//! standard output). The options are described once, for clap and for lexopt.

use crate::options::OptionHelp;
use latlab_report::terminal::{Detail, Terminal};
use std::io::IsTerminal;

const QUIET_HELP: &str = "Print only the essentials: the headline table ('latlab') or the \
    results table ('cargo bench'), a comparison's summary, and where the files went";
const VERBOSE_HELP: &str = "Print every result in columns (sweep points included) and every \
    warning with its advice, not a line per probe and one per probe and kind of warning";
const COLOR_HELP: &str = "Colour the terminal output: auto colours a terminal unless \
    NO_COLOR is set or TERM is dumb";

/// When to colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// How a run talks to a person.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[cfg_attr(feature = "clap", command(next_help_heading = "Terminal"))]
pub struct TerminalArgs {
    #[cfg_attr(feature = "clap", arg(short, long, conflicts_with = "verbose", help = QUIET_HELP))]
    pub quiet: bool,
    #[cfg_attr(feature = "clap", arg(short, long, help = VERBOSE_HELP))]
    pub verbose: bool,
    #[cfg_attr(feature = "clap", arg(long, value_enum, value_name = "WHEN",
        default_value_t = ColorChoice::Auto, alias = "colour", help = COLOR_HELP))]
    pub color: ColorChoice,
}

impl TerminalArgs {
    pub const OPTIONS: &[OptionHelp] = &[
        OptionHelp {
            long: "quiet",
            short: Some('q'),
            value: None,
            help: QUIET_HELP,
            values: &[],
            default: None,
        },
        OptionHelp {
            long: "verbose",
            short: Some('v'),
            value: None,
            help: VERBOSE_HELP,
            values: &[],
            default: None,
        },
        OptionHelp {
            long: "color",
            short: None,
            value: Some("WHEN"),
            help: COLOR_HELP,
            values: &[
                (
                    "auto",
                    "colour a terminal, unless NO_COLOR is set or TERM is dumb",
                ),
                ("always", "colour whatever the output is"),
                ("never", "never colour"),
            ],
            default: Some("auto"),
        },
    ];

    /// As [`crate::SamplingArgs::take`], for `--quiet`, `--verbose` and `--color`.
    pub fn take(&mut self, long: &str, parser: &mut lexopt::Parser) -> Result<bool, String> {
        match long {
            "quiet" => self.quiet = true,
            "verbose" => self.verbose = true,
            "color" | "colour" => {
                self.color = crate::value(parser, long, "WHEN", parse_color)?;
                return Ok(true);
            }
            _ => return Ok(false),
        }
        if let Some(attached) = parser.optional_value() {
            return Err(format!(
                "unexpected value '{}' for '--{long}' found; no more were expected",
                attached.to_string_lossy()
            ));
        }
        self.check()?;
        Ok(true)
    }

    /// `-q` and `-v`; `Ok(false)` for another short option.
    pub fn take_short(&mut self, short: char) -> Result<bool, String> {
        match short {
            'q' => self.quiet = true,
            'v' => self.verbose = true,
            _ => return Ok(false),
        }
        self.check()?;
        Ok(true)
    }

    fn check(&self) -> Result<(), String> {
        if self.quiet && self.verbose {
            return Err("the argument '--quiet' cannot be used with '--verbose'".into());
        }
        Ok(())
    }

    /// How much the text says.
    pub fn detail(&self) -> Detail {
        match (self.quiet, self.verbose) {
            (true, _) => Detail::Quiet,
            (_, true) => Detail::Verbose,
            _ => Detail::Normal,
        }
    }
}

fn parse_color(text: &str) -> Result<ColorChoice, String> {
    match text {
        "auto" => Ok(ColorChoice::Auto),
        "always" => Ok(ColorChoice::Always),
        "never" => Ok(ColorChoice::Never),
        _ => Err("[possible values: auto, always, never]".into()),
    }
}

/// Which stream the text is printed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    /// Standard error when a results file takes standard output, else standard output.
    pub fn beside(stdout_taken: bool) -> Stream {
        if stdout_taken {
            Stream::Stderr
        } else {
            Stream::Stdout
        }
    }

    fn is_terminal(self) -> bool {
        match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        }
    }

    /// The terminal's width in columns, when the stream is a terminal that says.
    #[cfg(unix)]
    fn width(self) -> Option<usize> {
        use std::os::fd::AsFd;
        let columns = match self {
            Stream::Stdout => latlab_engine::sys::terminal_columns(std::io::stdout().as_fd()),
            Stream::Stderr => latlab_engine::sys::terminal_columns(std::io::stderr().as_fd()),
        };
        columns.map(usize::from)
    }

    /// The console's width is not read on Windows (std has no call for it): `COLUMNS` where
    /// the shell sets it.
    #[cfg(not(unix))]
    fn width(self) -> Option<usize> {
        std::env::var("COLUMNS")
            .ok()?
            .parse()
            .ok()
            .filter(|&columns| columns > 0)
    }

    /// Prints `text` on this stream: standard error never panics ([`crate::stderr_text`]),
    /// and a closed standard output ends the text quietly ([`crate::print_out`]).
    pub fn print(self, text: &str) -> Result<(), latlab_report::ExportError> {
        match self {
            Stream::Stdout => crate::print_out(text),
            Stream::Stderr => {
                crate::stderr_text(text);
                Ok(())
            }
        }
    }
}

/// The width help is written for: `COLUMNS`, else standard output's terminal.
pub fn help_text_width() -> Option<usize> {
    let columns = std::env::var("COLUMNS").ok();
    crate::text_width(columns.as_deref(), || {
        (Stream::Stdout.is_terminal())
            .then(|| Stream::Stdout.width())
            .flatten()
    })
}

/// The terminal options for text printed on `stream`.
pub fn terminal(args: &TerminalArgs, stream: Stream) -> Terminal {
    let env = |name: &str| std::env::var(name).ok();
    Terminal {
        detail: args.detail(),
        width: crate::text_width(env("COLUMNS").as_deref(), || {
            stream.is_terminal().then(|| stream.width()).flatten()
        }),
        colour: colour(
            args.color,
            stream.is_terminal(),
            env("NO_COLOR").as_deref(),
            env("TERM").as_deref(),
        ),
    }
}

/// Colour as asked; `auto` colours a terminal unless `NO_COLOR` is set to anything but the
/// empty string (no-color.org) or `TERM` is `dumb`.
fn colour(
    asked: ColorChoice,
    is_terminal: bool,
    no_color: Option<&str>,
    term: Option<&str>,
) -> bool {
    match asked {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            is_terminal && no_color.is_none_or(str::is_empty) && term != Some("dumb")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_follows_the_flag_then_no_color_then_the_terminal() {
        assert!(colour(ColorChoice::Always, false, Some("1"), None));
        assert!(!colour(ColorChoice::Never, true, None, None));
        assert!(colour(ColorChoice::Auto, true, None, Some("xterm")));
        assert!(colour(ColorChoice::Auto, true, Some(""), None));
        assert!(!colour(ColorChoice::Auto, true, Some("1"), None));
        assert!(!colour(ColorChoice::Auto, false, None, None));
        assert!(!colour(ColorChoice::Auto, true, None, Some("dumb")));
    }

    /// The lexopt parser takes what clap takes: long and short flags, `--color WHEN` (and
    /// its `--colour` alias), and refuses `-q` with `-v` as clap does.
    #[test]
    fn the_terminal_options_parse_as_clap_parses_them() {
        let mut args = TerminalArgs::default();
        let mut parser = lexopt::Parser::from_args(["never"]);
        assert_eq!(args.take("colour", &mut parser), Ok(true));
        assert_eq!(args.color, ColorChoice::Never);
        assert_eq!(args.take_short('q'), Ok(true));
        assert_eq!(args.detail(), Detail::Quiet);
        assert!(args.take_short('v').unwrap_err().contains("cannot be used"));
        let mut parser = lexopt::Parser::from_args(["sometimes"]);
        let refused = TerminalArgs::default()
            .take("color", &mut parser)
            .unwrap_err();
        assert!(
            refused.contains("possible values: auto, always, never"),
            "{refused}"
        );
    }
}
