//! Counts for the harness (`cargo bench -- --count instructions`): what each benchmark
//! executes per call, counted rather than timed, so that a comparison of two runs of the
//! same code reads the same figure whatever the machine's load.
//!
//! - **Under Valgrind** (the default): before the benchmarks are timed, the bench binary
//!   starts itself again under `valgrind --tool=callgrind`, instrumentation collecting
//!   nothing until a timed region begins ([`client`] requests switch it on at the start of
//!   each timed region and off at its end). For each benchmark the child runs the one-call
//!   body and the four-call body for the same turns, each between a zeroing and a dump of
//!   callgrind's costs ([`child`]); the parent reads the dumps ([`callgrind`]) and takes the
//!   slope, as the timer does: the loop's own instructions and each region's fixed cost
//!   cancel. `--count cache` adds Valgrind's cache simulation: first-level and last-level
//!   misses per call, and the cycles they suggest.
//! - **With the CPU's counter** (`--via perf`, Linux, the `profile` feature): the same
//!   slope in this process, `instructions:u` enabled only in the timed regions.
//!
//! A comparison of two counted runs judges the counts (latlab-report's compare).

pub(crate) mod callgrind;
pub(crate) mod child;
mod client;
#[cfg(all(feature = "profile", any(target_os = "linux", target_os = "android")))]
pub(crate) mod perf;

use latlab_engine::model::Counted;
use std::cell::Cell;

/// What `--count` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Counting {
    /// Instructions per call.
    Instructions,
    /// Instructions, and Valgrind's simulated cache misses and estimated cycles.
    Cache,
}

/// What counts, as `--via` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Via {
    #[default]
    Valgrind,
    Perf,
}

/// `--count` with its `--via`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CountAsked {
    pub what: Counting,
    pub via: Via,
}

/// The environment variable that makes a bench binary the counting child of another.
pub(crate) const CHILD_VARIABLE: &str = "LATLAB_BENCH_COUNTING_CHILD";

/// The calls of the short and the long body, per turn, whose slope is counted.
const SHORT_CALLS: u64 = 1;
const LONG_CALLS: u64 = 4;

thread_local! {
    /// Whether the timed regions of this thread are being counted: they then switch the
    /// counting on at their start and off at their end.
    static COUNTING_REGIONS: Cell<Option<Via>> = const { Cell::new(None) };
}

/// Runs `f`, the counts of every timed region within it switched on for its length.
pub(crate) fn counting_regions<T>(via: Via, f: impl FnOnce() -> T) -> T {
    COUNTING_REGIONS.set(Some(via));
    let value = f();
    COUNTING_REGIONS.set(None);
    value
}

/// Runs a timed region, counted for its length when [`counting_regions`] asks.
#[inline(always)]
pub(crate) fn counted_region<T>(f: impl FnOnce() -> T) -> T {
    let Some(via) = COUNTING_REGIONS.get() else {
        return f();
    };
    switch(via);
    let value = f();
    switch(via);
    value
}

/// Switches the counting of `via` on where it is off, and off where it is on.
#[inline(always)]
fn switch(via: Via) {
    match via {
        Via::Valgrind => client::toggle_collect(),
        #[cfg(all(feature = "profile", any(target_os = "linux", target_os = "android")))]
        Via::Perf => perf::toggle(),
        #[cfg(not(all(feature = "profile", any(target_os = "linux", target_os = "android"))))]
        Via::Perf => {}
    }
}

/// The counts of the short and the long body of one benchmark over `turns` turns each: the
/// events named in `events`, in the order callgrind gives them (`Ir` first).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BodyCounts {
    pub turns: u64,
    pub events: Vec<String>,
    pub short: Vec<u64>,
    pub long: Vec<u64>,
}

impl BodyCounts {
    /// Per call: the difference of the two bodies over the extra calls. `None` where the
    /// long body did not count more instructions than the short one (nothing was counted:
    /// a body the compiler removed, or a region that never switched counting on).
    pub fn per_call(&self, via: &str) -> Option<Counted> {
        let calls = self.turns * (LONG_CALLS - SHORT_CALLS);
        let event = |name: &str| -> Option<f64> {
            let i = self.events.iter().position(|e| e == name)?;
            let (short, long) = (*self.short.get(i)?, *self.long.get(i)?);
            Some((long as f64 - short as f64) / calls as f64)
        };
        // Each figure is a count spread over the calls, or nothing counted.
        let counted = |name: &str| {
            let rule = latlab_doors::rules::Rule::PerCall { calls };
            event(name).and_then(|x| latlab_doors::rules::check(name, x, rule).ok())
        };
        let instructions = counted("Ir")?;
        let cache = (|| {
            let misses = |names: [&str; 3]| -> Option<f64> {
                names.iter().map(|name| event(name)).sum::<Option<f64>>()
            };
            let accesses = instructions + event("Dr")? + event("Dw")?;
            let first = misses(["I1mr", "D1mr", "D1mw"])?;
            let last = misses(["ILmr", "DLmr", "DLmw"])?;
            // iai-callgrind's estimate: a hit in the first level costs 1, one in the last 5,
            // a miss of both (memory) 35.
            let estimated = (accesses - first) + 5.0 * (first - last) + 35.0 * last;
            Some(latlab_engine::model::CacheCounts {
                l1_misses: first,
                last_level_misses: last,
                estimated_cycles: estimated,
            })
        })();
        Some(Counted {
            via: via.to_string(),
            instructions,
            cache,
            calls,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_the_slope_of_the_two_bodies() {
        let counts = BodyCounts {
            turns: 100,
            events: [
                "Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw",
            ]
            .map(String::from)
            .to_vec(),
            // 10 instructions a turn of loop and 50 a region, 200 a call; 3 reads, 1 write
            // and 0.5 first-level misses a call, of which 0.25 miss the last level too.
            short: vec![50 + 100 * (10 + 200), 300, 100, 0, 50, 0, 0, 25, 0],
            long: vec![50 + 100 * (10 + 800), 1200, 400, 0, 200, 0, 0, 100, 0],
        };
        let counted = counts.per_call("callgrind").unwrap();
        assert_eq!((counted.instructions, counted.calls), (200.0, 300));
        let cache = counted.cache.unwrap();
        assert_eq!((cache.l1_misses, cache.last_level_misses), (0.5, 0.25));
        // 204 accesses: 203.5 first-level hits, 0.25 last-level hits, 0.25 from memory.
        assert!((cache.estimated_cycles - (203.5 + 5.0 * 0.25 + 35.0 * 0.25)).abs() < 1e-9);
        let only_instructions = BodyCounts {
            events: vec!["Ir".into()],
            short: vec![counts.short[0]],
            long: vec![counts.long[0]],
            ..counts.clone()
        };
        assert!(
            only_instructions
                .per_call("callgrind")
                .unwrap()
                .cache
                .is_none()
        );
        let nothing = BodyCounts {
            long: counts.short.clone(),
            ..counts
        };
        assert!(nothing.per_call("callgrind").is_none());
    }
}
