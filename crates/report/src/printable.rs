//! Text bound for a terminal. Names and host names come from results files, which anyone can
//! write: a control character in one (an escape sequence) would reach the terminal and act
//! there. They are shown escaped instead, as Rust writes them (`\u{1b}`).

use std::borrow::Cow;

/// `text` with every control character but newline and tab shown escaped.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hostile) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| {
                if is_hostile(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

fn is_hostile(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_shown_not_sent() {
        assert_eq!(printable("plain\tline\n"), "plain\tline\n");
        assert!(matches!(printable("plain"), Cow::Borrowed(_)));
        assert_eq!(
            printable("host\u{1b}[2J\u{7}\u{9b}x"),
            "host\\u{1b}[2J\\u{7}\\u{9b}x"
        );
    }
}
