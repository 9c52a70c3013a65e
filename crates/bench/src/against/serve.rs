//! The other side of a paired comparison: a bench binary started with
//! [`SERVE_VARIABLE`] set serves its benchmarks, one request a line on standard input, one
//! answer a line on standard output ([`super::wire`]), to the harness that compares it
//! ([`super::sides`]).

use super::wire::{HELLO, SERVE_VARIABLE, hex, next_request, say, unhex};
use crate::bencher::Benchmark;
use crate::session::{Mode, Session};
use latlab_engine::{Clock, Config, Host, RealHost, Runner};
use std::sync::Arc;

/// Whether this process was started to serve.
pub(crate) fn asked() -> bool {
    std::env::var_os(SERVE_VARIABLE).is_some()
}

/// Serves `benchmarks` until the parent closes standard input; the exit status.
pub(crate) fn serve(benchmarks: &[Benchmark]) -> i32 {
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
