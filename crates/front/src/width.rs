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
}
