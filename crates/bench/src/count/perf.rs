//! The CPU's own count of instructions retired in user mode (`instructions:u`), read with
//! `perf_event_open` in this process: `--count instructions --via perf`. The counter runs
//! only in the timed regions, switched by [`super::counted_region`].

use super::child::turns_for;
use super::{BodyCounts, Via, counting_regions};
use latlab_engine::Clock;
use latlab_engine::host::LoopBody;
use latlab_engine::model::Counted;
use perf_event::events::Hardware;
use perf_event::{Builder, Counter};
use std::cell::{Cell, RefCell};

thread_local! {
    /// The counter of this thread, while a benchmark is counted.
    static COUNTER: RefCell<Option<Counter>> = const { RefCell::new(None) };
    /// Whether it is switched on.
    static ON: Cell<bool> = const { Cell::new(false) };
}

/// A counter of this thread's user-mode instructions, not yet enabled.
fn open() -> std::io::Result<Counter> {
    Builder::new(Hardware::INSTRUCTIONS)
        .observe_self()
        .any_cpu()
        .exclude_kernel(true)
        .exclude_hv(true)
        .build()
}

/// Whether this machine lets this process count its instructions; `Err` is one line saying
/// why not and what to do.
pub(crate) fn check_available() -> Result<(), String> {
    open().map(drop).map_err(|e| {
        format!(
            "--count instructions --via perf: this machine does not let this process count \
             instructions:u (perf_event_open: {e}; a virtual machine without the CPU's \
             counters, or kernel.perf_event_paranoid above 2); count under Valgrind instead \
             (leave out --via perf)"
        )
    })
}

/// Switches the counter on where it is off, and off where it is on.
#[inline(always)]
pub(crate) fn toggle() {
    COUNTER.with_borrow_mut(|counter| {
        if let Some(counter) = counter {
            let on = ON.get();
            let _ = if on {
                counter.disable()
            } else {
                counter.enable()
            };
            ON.set(!on);
        }
    });
}

/// Counts the one-call and four-call bodies for the same turns; `None` where
/// the counter cannot be opened or read.
pub(crate) fn count(
    one: &mut dyn LoopBody,
    four: &mut dyn LoopBody,
    clock: &Clock,
) -> Option<Counted> {
    let turns = turns_for(clock, four);
    COUNTER.set(Some(open().ok()?));
    let pass = |body: &mut dyn LoopBody| -> Option<u64> {
        COUNTER
            .with_borrow_mut(|c| c.as_mut().map(Counter::reset))?
            .ok()?;
        ON.set(false);
        counting_regions(Via::Perf, || {
            body.time(clock, turns);
        });
        COUNTER
            .with_borrow_mut(|c| c.as_mut().map(Counter::read))?
            .ok()
    };
    let short = pass(one);
    let long = pass(four);
    COUNTER.set(None);
    BodyCounts {
        turns,
        events: vec!["Ir".to_string()],
        short: vec![short?],
        long: vec![long?],
    }
    .per_call("perf")
}
