//! One benchmark's body timed in slices, as the comparing harness asks ([`super::wire`]),
//! from its `ready` to the harness's `end`.

use super::wire::{hex, next_request, say};
use crate::bencher::Pending;
use latlab_engine::Clock;

/// The most turns a slice is calibrated to.
const MAX_TURNS: u64 = 1 << 40;

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
