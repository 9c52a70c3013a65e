//! The line protocol between a paired comparison and the builds it compares
//! ([`super::serve`] the serving side, [`super::sides`] the asking one): its greeting, the
//! variable that asks a bench binary to serve, names in hexadecimal, one line out and one in.
//!
//! ```text
//! child:  latlab-bench-serve 1                      (its greeting, first)
//! parent: list                child: benchmarks HEX HEX …   (each name in hexadecimal)
//! parent: bench HEX           child: ready | failed HEX | unsupported HEX
//! parent: calibrate NS        child: turns N        (turns doubled until a slice takes NS)
//! parent: slice N             child: ns T           (N turns of one call each, timed)
//! parent: end                 child: done           (the benchmark is left)
//! ```
//!
//! A name may hold any character and an answer is one line, so names and reasons travel
//! in hexadecimal.

use std::io::{BufRead, Write};

/// The variable that makes a bench binary serve its benchmarks.
pub(crate) const SERVE_VARIABLE: &str = "LATLAB_BENCH_SERVE";
/// What a serving bench binary says first: the protocol and its version.
pub(crate) const HELLO: &str = "latlab-bench-serve 1";

/// `text` in hexadecimal.
pub(crate) fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

/// The text `hex` spells; `None` where it is not hexadecimal of UTF-8.
pub(crate) fn unhex(hex: &str) -> Option<String> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

/// Says `line` on standard output at once; a parent gone ends this process.
pub(crate) fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}

/// The next request, or `None` where the parent closed standard input.
pub(crate) fn next_request() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end().to_string()),
    }
}
