//! What the terminal output may be: how much it says (`-q`, `-v`), how wide (`COLUMNS`, or
//! the terminal's width), and whether it is coloured (`--color`, `NO_COLOR`, `TERM=dumb`).

use crate::cli::{ColorArg, TerminalArgs};
use latlab_front::text_width;
use latlab_report::terminal::{Detail, Terminal};
use std::io::IsTerminal;

/// Which stream the table is printed on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    fn is_terminal(self) -> bool {
        match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        }
    }

    fn width(self) -> Option<usize> {
        let term = match self {
            Stream::Stdout => console::Term::stdout(),
            Stream::Stderr => console::Term::stderr(),
        };
        term.size_checked()
            .map(|(_rows, columns)| usize::from(columns))
    }
}

/// The width help is written for: `COLUMNS`, else standard output's terminal.
pub fn help_text_width() -> Option<usize> {
    let columns = std::env::var("COLUMNS").ok();
    text_width(columns.as_deref(), || {
        (Stream::Stdout.is_terminal())
            .then(|| Stream::Stdout.width())
            .flatten()
    })
}

/// The terminal options for a table printed on `stream`.
pub fn terminal(args: &TerminalArgs, stream: Stream) -> Terminal {
    let detail = match (args.quiet, args.verbose) {
        (true, _) => Detail::Quiet,
        (_, true) => Detail::Verbose,
        _ => Detail::Normal,
    };
    let env = |name: &str| std::env::var(name).ok();
    Terminal {
        detail,
        width: text_width(env("COLUMNS").as_deref(), || {
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
fn colour(asked: ColorArg, is_terminal: bool, no_color: Option<&str>, term: Option<&str>) -> bool {
    match asked {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => is_terminal && no_color.is_none_or(str::is_empty) && term != Some("dumb"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_follows_the_flag_then_no_color_then_the_terminal() {
        assert!(colour(ColorArg::Always, false, Some("1"), None));
        assert!(!colour(ColorArg::Never, true, None, None));
        assert!(colour(ColorArg::Auto, true, None, Some("xterm")));
        assert!(colour(ColorArg::Auto, true, Some(""), None));
        assert!(!colour(ColorArg::Auto, true, Some("1"), None));
        assert!(!colour(ColorArg::Auto, false, None, None));
        assert!(!colour(ColorArg::Auto, true, None, Some("dumb")));
    }
}
