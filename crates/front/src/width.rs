//! How wide the text may be: `COLUMNS` when it is a width, else what the terminal says.

/// `COLUMNS` (given as `columns`) when it is a width, else the terminal's, else no limit.
pub fn text_width(
    columns: Option<&str>,
    terminal: impl FnOnce() -> Option<usize>,
) -> Option<usize> {
    columns
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
        .or_else(terminal)
}

/// The narrowest help screen: below it, options and their text would break a word a line.
const HELP_MIN_WIDTH: usize = 60;
/// The widest help screen, as clap's own default: lines longer than this are hard to read.
const HELP_MAX_WIDTH: usize = 100;

/// The width `--help` is wrapped to, for both front ends: the text's width (`text_width`)
/// within 60 and 100 columns, the widest when none is known.
/// (`COLUMNS=1 latlab --help` used to print one word a line.)
pub fn help_width(width: Option<usize>) -> usize {
    width
        .unwrap_or(HELP_MAX_WIDTH)
        .clamp(HELP_MIN_WIDTH, HELP_MAX_WIDTH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_wins_over_the_terminal_when_it_is_a_width() {
        assert_eq!(text_width(Some("90"), || Some(200)), Some(90));
        assert_eq!(text_width(Some("wide"), || Some(200)), Some(200));
        assert_eq!(text_width(Some("0"), || None), None);
        assert_eq!(text_width(None, || None), None);
    }

    #[test]
    fn help_is_never_narrower_than_sixty_columns_nor_wider_than_a_hundred() {
        assert_eq!(help_width(Some(1)), 60);
        assert_eq!(help_width(Some(80)), 80);
        assert_eq!(help_width(Some(300)), 100);
        assert_eq!(help_width(None), 100);
    }
}
