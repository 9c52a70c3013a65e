//! The other side of a paired comparison: a bench binary started with [`SERVE_VARIABLE`]
//! set serves its benchmarks, one request a line on standard input, one answer a line on
//! standard output, to the harness that compares it ([`super::sides`]).
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

use crate::bencher::{Benchmark, Pending};
use crate::session::{Mode, Session};
use latlab_engine::{Clock, Config, Host, RealHost, Runner};
use std::io::{BufRead, Write};
use std::sync::Arc;

/// The variable that makes a bench binary serve its benchmarks.
pub(crate) const SERVE_VARIABLE: &str = "LATLAB_BENCH_SERVE";
/// What a serving bench binary says first: the protocol and its version.
pub(crate) const HELLO: &str = "latlab-bench-serve 1";
/// The most turns a slice is calibrated to.
const MAX_TURNS: u64 = 1 << 40;

/// Whether this process was started to serve.
pub(crate) fn asked() -> bool {
    std::env::var_os(SERVE_VARIABLE).is_some()
}

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
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}

/// The next request, or `None` where the parent closed standard input.
fn next_request() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end().to_string()),
    }
}

/// Serves `benchmarks` until the parent closes standard input; the exit status.
pub(crate) fn serve(benchmarks: Vec<Benchmark>) -> i32 {
    say(HELLO);
    // The OS's clock: the same on both sides whatever their calibration would read, and
    // ready at once (a cycle counter's calibration takes tens of milliseconds a process).
    let host: Arc<dyn Host> = Arc::new(RealHost::with_clock(Clock::monotonic()));
    let mut session = Session::new(Runner::on(host, Config::quick()), Mode::Serve);
    while let Some(request) = next_request() {
        let (verb, argument) = request.split_once(' ').unwrap_or((&request, ""));
        match verb {
            "list" => {
                let names: Vec<String> = benchmarks.iter().map(|b| hex(&b.name)).collect();
                say(format!("benchmarks {}", names.join(" ")).trim_end());
            }
            "bench" => {
                let name = unhex(argument).unwrap_or_default();
                match benchmarks.iter().find(|b| b.name == name) {
                    None => say(&format!("failed {}", hex("no such benchmark"))),
                    Some(b) if b.threads.is_some() => say(&format!(
                        "unsupported {}",
                        hex("a benchmark of several threads is not paired")
                    )),
                    Some(benchmark) => {
                        session.failures.clear();
                        session.run_set(std::slice::from_ref(benchmark));
                        if let Some(failure) = session.failures.first() {
                            say(&format!("failed {}", hex(&failure.reason)));
                        }
                    }
                }
            }
            _ => say(&format!(
                "failed {}",
                hex(&format!("unknown request {verb:?}"))
            )),
        }
    }
    0
}

/// Serves the slices of one benchmark's body, from its `ready` to the parent's `end`.
pub(crate) fn serve_body(body: &mut Pending<'_>, clock: &Clock) {
    say("ready");
    while let Some(request) = next_request() {
        let (verb, argument) = request.split_once(' ').unwrap_or((&request, ""));
        let number = argument.parse::<u64>().ok();
        match (verb, number) {
            ("calibrate", Some(ns)) => {
                // A first call makes what the body makes once (a table, a lazy static),
                // which no slice should time.
                body.one.time(clock, 1);
                let mut turns = 1;
                while turns < MAX_TURNS
                    && clock.ticks_to_ns(body.one.time(clock, turns)) < ns as f64
                {
                    turns *= 2;
                }
                say(&format!("turns {turns}"));
            }
            ("slice", Some(turns)) => {
                let ns = clock.ticks_to_ns(body.one.time(clock, turns.max(1)));
                say(&format!("ns {ns}"));
            }
            ("end", _) => {
                say("done");
                return;
            }
            _ => say(&format!(
                "failed {}",
                hex(&format!("unknown request {request:?}"))
            )),
        }
    }
    std::process::exit(0);
}
