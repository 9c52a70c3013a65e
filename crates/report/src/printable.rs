//! Text bound for a terminal. Names and host names come from results files, which anyone can
//! write: a control character in one (an escape sequence) would reach the terminal and act
//! there, and a bidirectional control (U+202E, right-to-left override) would reorder what
//! the reader sees. They are shown escaped instead, as Rust writes them (`\u{1b}`). A field
//! that is one line (a name, a host) is made so with [`one_line`] as it is read, so that a
//! line break in it cannot forge a line of the output.

use std::borrow::Cow;

/// `text` with every control character but newline and tab, and every bidirectional
/// control, shown escaped.
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

/// `text` as [`printable`] makes it, but for the colour sequences in `kept`, which stay as
/// they are: a terminal only colours text with them.
pub fn printable_keeping<'a>(text: &'a str, kept: &[String]) -> Cow<'a, str> {
    if kept.is_empty() || !text.chars().any(is_hostile) {
        return printable(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(is_hostile) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match kept.iter().find(|k| rest.starts_with(k.as_str())) {
            Some(sequence) => {
                out.push_str(sequence);
                rest = &rest[sequence.len()..];
            }
            None => {
                let c = rest.chars().next().expect("a hostile character");
                out.extend(c.escape_unicode());
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

fn is_hostile(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
}

/// The characters that change the direction of the text after them (embeddings, overrides,
/// isolates and marks): in a name they can make it read as something else.
fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// `text` as one line: line breaks and tabs shown as `\n`, `\r` and `\t`, every other
/// control or bidirectional character escaped as [`printable`] does.
pub fn one_line(text: &str) -> Cow<'_, str> {
    // Printable ASCII, nearly every name, is told at a byte a step.
    let printable = |b: &u8| (b' '..=b'~').contains(b);
    if text.as_bytes().iter().all(printable)
        || !text.chars().any(|c| c.is_control() || is_bidi_control(c))
    {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match c {
                '\n' | '\r' | '\t' => c.escape_default().to_string(),
                c if c.is_control() || is_bidi_control(c) => c.escape_unicode().to_string(),
                c => c.to_string(),
            })
            .collect(),
    )
}

/// Makes `field` one line in place ([`one_line`]), for a name read from a file.
#[cfg(feature = "files")]
pub(crate) fn make_one_line(field: &mut String) {
    if let Cow::Owned(fixed) = one_line(field) {
        *field = fixed;
    }
}

/// The most characters a field describing a machine (its host name, CPU model, kernel)
/// keeps when read from a file: far more than any system writes (a host name is at most 64
/// bytes, a CPU's brand string 48), and little enough to print.
#[cfg(feature = "files")]
pub(crate) const MAX_MACHINE_FIELD_CHARS: usize = 256;

/// Makes `field` one line ([`make_one_line`]) of at most [`MAX_MACHINE_FIELD_CHARS`]
/// characters, the rest replaced by `…`: a field describing a machine, read from a file
/// anyone can write.
#[cfg(feature = "files")]
pub(crate) fn make_short_line(field: &mut String) {
    make_one_line(field);
    if let Some((cut, _)) = field.char_indices().nth(MAX_MACHINE_FIELD_CHARS) {
        field.truncate(cut);
        field.push('…');
    }
}

/// Makes every text field of a machine's description read from a file one short line
/// ([`make_short_line`]): the names printed in tables and legends, and the values printed
/// beside them (the hypervisor, the governor, the microcode, the clock source, transparent
/// huge pages), so that no line break in any of them forges a line of what is printed.
#[cfg(feature = "files")]
pub(crate) fn make_environment_one_line(environment: &mut latlab_engine::environment::Environment) {
    for field in [
        &mut environment.host_name,
        &mut environment.os,
        &mut environment.kernel,
        &mut environment.arch,
        &mut environment.cpu.model,
        &mut environment.latlab_version,
        &mut environment.build_profile,
        &mut environment.opt_level,
    ] {
        make_short_line(field);
    }
    for field in [
        &mut environment.virtualization,
        &mut environment.emulated,
        &mut environment.clocksource,
        &mut environment.transparent_hugepages,
        &mut environment.cpu.governor,
        &mut environment.cpu.microcode,
    ]
    .into_iter()
    .flatten()
    {
        make_short_line(field);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine's field read from a file is cut to a printable length, whole characters
    /// kept; a shorter one is left as it is.
    #[cfg(feature = "files")]
    #[test]
    fn a_machine_field_of_any_length_prints_short() {
        let mut host = "é".repeat(100_000);
        make_short_line(&mut host);
        assert_eq!(host.chars().count(), MAX_MACHINE_FIELD_CHARS + 1);
        assert!(host.ends_with('…'));
        let mut short = "test-host".to_string();
        make_short_line(&mut short);
        assert_eq!(short, "test-host");
    }

    #[test]
    fn escape_sequences_are_shown_not_sent() {
        assert_eq!(printable("plain\tline\n"), "plain\tline\n");
        assert!(matches!(printable("plain"), Cow::Borrowed(_)));
        assert_eq!(
            printable("host\u{1b}[2J\u{7}\u{9b}x"),
            "host\\u{1b}[2J\\u{7}\\u{9b}x"
        );
    }

    #[test]
    fn bidirectional_controls_are_shown_and_a_name_stays_one_line() {
        assert_eq!(printable("a\u{202e}b\u{2066}"), "a\\u{202e}b\\u{2066}");
        assert_eq!(
            one_line("empty\nB against A: 0 slower\t\u{202e}"),
            "empty\\nB against A: 0 slower\\t\\u{202e}"
        );
        assert!(matches!(one_line("mem.latency/L1 é"), Cow::Borrowed(_)));
    }

    #[test]
    fn only_the_kept_sequences_reach_the_terminal() {
        let kept = ["\u{1b}[33m".to_string(), "\u{1b}[0m".to_string()];
        assert_eq!(
            printable_keeping("\u{1b}[33mwarn\u{1b}[0m \u{1b}[2J\u{7}é", &kept),
            "\u{1b}[33mwarn\u{1b}[0m \\u{1b}[2J\\u{7}é"
        );
        assert_eq!(printable_keeping("\u{1b}[33m", &[]), "\\u{1b}[33m");
    }
}
