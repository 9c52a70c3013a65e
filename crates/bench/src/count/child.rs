//! The counting passes of one benchmark: its one-call and four-call bodies run for the same
//! turns, each counted alone. Under Valgrind (the child the harness starts) each pass lies
//! between a zeroing of callgrind's costs and a dump labelled with the benchmark and the
//! body; the parent reads the dumps ([`super::callgrind`]).

use super::{Via, client, counting_regions};
use latlab_engine::Clock;
use latlab_engine::host::LoopBody;
use std::ffi::CString;
use std::time::Duration;

/// The counted passes are lengthened until the long one takes this long (under Valgrind,
/// some fifty times a native run): enough turns that a region's fixed cost, which the slope
/// cancels, is also small beside the calls.
const PASS_TIME: Duration = Duration::from_millis(20);
/// ... and never beyond this many turns.
const MAX_TURNS: u64 = 1 << 24;

/// The label of a pass's dump: `latlab-bench`, the turns, the body, and the benchmark's
/// name in hexadecimal (a name may hold any character; a label is one line).
pub(crate) fn label(name: &str, body: &str, turns: u64) -> String {
    let hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
    format!("latlab-bench {turns} {body} {hex}")
}

/// The benchmark and body a dump's label names, with its turns; `None` for another label.
pub(crate) fn parse_label(label: &str) -> Option<(String, String, u64)> {
    let mut fields = label.strip_prefix("latlab-bench ")?.split(' ');
    // The turns a pass takes: from one to [`MAX_TURNS`], as [`turns_for`] chooses them.
    let turns = (fields.next()?.parse().ok()).filter(|t| (1..=MAX_TURNS).contains(t))?;
    let body = fields.next()?.to_string();
    let hex = fields.next()?;
    if hex.len() % 2 != 0 || fields.next().is_some() {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    Some((String::from_utf8(bytes?).ok()?, body, turns))
}

/// The turns of each counted pass: doubled from one until the long body takes
/// [`PASS_TIME`].
pub(crate) fn turns_for(clock: &Clock, long: &mut dyn LoopBody) -> u64 {
    let mut turns = 1;
    while turns < MAX_TURNS {
        let ns = clock.ticks_to_ns(long.time(clock, turns));
        if ns >= PASS_TIME.as_nanos() as f64 {
            break;
        }
        turns *= 2;
    }
    turns
}

/// Counts benchmark `name`'s one-call and four-call bodies under Valgrind, each pass dumped
/// with its label.
pub(crate) fn count_under_valgrind(
    name: &str,
    one: &mut dyn LoopBody,
    four: &mut dyn LoopBody,
    clock: &Clock,
) {
    let turns = turns_for(clock, four);
    // The one-call and the four-call body ([`super::SHORT_CALLS`], [`super::LONG_CALLS`]).
    let bodies: [(&str, &mut dyn LoopBody); 2] = [("short", one), ("long", four)];
    for (body, loop_body) in bodies {
        let label = CString::new(label(name, body, turns)).expect("a label holds no NUL");
        client::zero_stats();
        counting_regions(Via::Valgrind, || {
            loop_body.time(clock, turns);
        });
        client::dump_stats_at(&label);
    }
}

/// Whether this process is the counting child, run under Valgrind: `Err` says why a child
/// cannot count (it was not started under Valgrind).
pub(crate) fn is_counting_child() -> Result<bool, String> {
    if std::env::var_os(super::CHILD_VARIABLE).is_none() {
        return Ok(false);
    }
    if client::running_on_valgrind() {
        Ok(true)
    } else {
        Err(format!(
            "{} is set, but this process does not run under Valgrind: it is set by the \
             harness for the child it counts in, and by nothing else",
            super::CHILD_VARIABLE
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_names_its_benchmark_whatever_its_characters() {
        for name in ["sum/1024", "a b\tc\nd", "ünïcode/[1, 2]"] {
            let text = label(name, "long", 4096);
            assert!(!text.contains('\n') && text.is_ascii(), "{text}");
            assert_eq!(
                parse_label(&text),
                Some((name.to_string(), "long".to_string(), 4096))
            );
        }
        assert_eq!(parse_label("latlab-bench 1 long 6"), None);
        // Turns no pass takes: none, and past where the slope's calls would wrap.
        assert_eq!(parse_label("latlab-bench 0 long 61"), None);
        assert_eq!(
            parse_label("latlab-bench 18446744073709551615 long 61"),
            None
        );
        assert_eq!(parse_label("Client Request: other"), None);
    }
}
