//! How text for a terminal is shaped: how much it says, how wide it may be, and whether it
//! is coloured. The command line decides (flags, `COLUMNS`, `NO_COLOR`, whether standard
//! output is a terminal); renderers only follow.

use anstyle::{AnsiColor, Style};

/// How much the run's terminal output says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Detail {
    /// Only the headline table and where the files went.
    Quiet,
    /// The results table, warnings grouped by probe and kind, the advice once.
    #[default]
    Normal,
    /// The results table and every warning of every result, each with its advice.
    Verbose,
}

/// The shape of terminal text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Terminal {
    pub detail: Detail,
    /// The widest a table may be, in characters; `None` for no limit (not a terminal, and
    /// no `COLUMNS`).
    pub width: Option<usize>,
    /// Colour with ANSI escapes.
    pub colour: bool,
}

/// What a coloured word means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paint {
    /// Slower, a regression, a failure, a suspect verdict.
    Bad,
    /// Faster.
    Good,
    /// A warning.
    Warn,
    /// A heading.
    Heading,
}

const PAINTS: [Paint; 4] = [Paint::Bad, Paint::Good, Paint::Warn, Paint::Heading];

impl Paint {
    fn style(self) -> Style {
        match self {
            Paint::Bad => AnsiColor::Red.on_default().bold(),
            Paint::Good => AnsiColor::Green.on_default(),
            Paint::Warn => AnsiColor::Yellow.on_default(),
            Paint::Heading => Style::new().bold(),
        }
    }
}

impl Terminal {
    /// `text` in `paint`'s colour when colour is on, as it is otherwise.
    pub fn paint(&self, paint: Paint, text: &str) -> String {
        if self.colour && !text.is_empty() {
            let style = paint.style();
            format!("{}{text}{}", style.render(), style.render_reset())
        } else {
            text.to_string()
        }
    }

    /// `text` made safe for the terminal ([`crate::printable`]), keeping the colour
    /// sequences of [`Terminal::paint`] when colour is on.
    pub fn printable<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        let kept: Vec<String> = if self.colour {
            PAINTS
                .iter()
                .flat_map(|p| {
                    [
                        p.style().render().to_string(),
                        p.style().render_reset().to_string(),
                    ]
                })
                .collect()
        } else {
            Vec::new()
        };
        crate::printable::printable_keeping(text, &kept)
    }

    /// `text` as lines that begin with `indent`, wrapped at spaces to the width when there
    /// is one (continuation lines indented two more), each ending in a newline.
    pub fn prose(&self, indent: &str, text: &str) -> String {
        let Some(width) = self.width else {
            return format!("{indent}{text}\n");
        };
        let more = format!("{indent}  ");
        let options = textwrap::Options::new(width)
            .initial_indent(indent)
            .subsequent_indent(&more)
            .break_words(false);
        let mut out = String::new();
        for line in textwrap::wrap(text, options) {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paint_only_when_colour_is_on() {
        let plain = Terminal::default();
        assert_eq!(plain.paint(Paint::Bad, "slower"), "slower");
        let coloured = Terminal {
            colour: true,
            ..Terminal::default()
        };
        let red = coloured.paint(Paint::Bad, "slower");
        assert!(red.starts_with("\u{1b}[") && red.contains("slower") && red.ends_with("\u{1b}[0m"));
    }

    #[test]
    fn prose_wraps_to_the_width_with_a_hanging_indent() {
        let text = "every figure that crosses CPUs depends on when it was taken";
        assert_eq!(Terminal::default().prose("  ", text), format!("  {text}\n"));
        let narrow = Terminal {
            width: Some(24),
            ..Terminal::default()
        };
        let wrapped = narrow.prose("  ", text);
        assert!(wrapped.lines().count() > 2, "{wrapped}");
        for line in wrapped.lines().skip(1) {
            assert!(
                line.starts_with("    ") && line.chars().count() <= 24,
                "{line:?}"
            );
        }
        assert_eq!(
            wrapped.split_whitespace().collect::<Vec<_>>().join(" "),
            text
        );
    }
}
