//! The clock every measurement is taken with.
//!
//! A benchmark of a few nanoseconds is only as good as the clock around it, so the engine
//! measures its measuring device first:
//!
//! * **Which clock.** The cheapest trustworthy one. On x86-64 that is the time-stamp counter,
//!   but only when it is *invariant* (it ticks at a constant rate through frequency changes and
//!   sleep states); a TSC that is not is useless for timing and we fall back to the OS clock
//!   with a warning. On aarch64 it is the generic timer's virtual count `CNTVCT_EL0`, whose
//!   frequency the hardware states in `CNTFRQ_EL0` (on Apple silicon it is what
//!   `mach_absolute_time` reads). Elsewhere, `CLOCK_MONOTONIC_RAW`, or on Windows
//!   `QueryPerformanceCounter`.
//! * **Fences.** A timed region starts with `lfence; rdtsc` (nothing after the read starts
//!   before it) and ends with `rdtscp; lfence` (nothing before the read is still in flight).
//! * **Frequency.** The TSC's rate is calibrated against the OS clock (`CLOCK_MONOTONIC_RAW`,
//!   Windows' `QueryPerformanceCounter`) over two windows
//!   of different length; the two must agree within 500 ppm or the TSC is not trusted.
//! * **Resolution and overhead.** The resolution is the median smallest non-zero step between
//!   two consecutive reads (for a TSC that is its read cost, not its tick); the region overhead
//!   is the median duration of an empty timed region. Both are reported with every run.
//!
//! The timed loop is generic over a zero-sized `TickSource` as well as over the benchmark, so
//! the clock choice is made once per sample, never inside the loop.

mod os;

#[cfg(target_arch = "aarch64")]
mod cntvct;
#[cfg(target_arch = "x86_64")]
mod tsc;

use std::hint::black_box;

/// A source of raw ticks, read with the fences its hardware needs.
pub(crate) trait TickSource {
    /// Reads the clock at the start of a timed region: no later instruction begins before it.
    fn start() -> u64;
    /// Reads the clock at the end of a timed region: every earlier instruction has finished.
    fn end() -> u64;
}

/// Which hardware or OS clock a run was timed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ClockKind {
    /// The x86-64 invariant time-stamp counter.
    Tsc,
    /// The aarch64 generic timer's virtual count.
    Cntvct,
    /// `clock_gettime(CLOCK_MONOTONIC_RAW)`.
    MonotonicRaw,
    /// Windows' `QueryPerformanceCounter`.
    QueryPerformanceCounter,
    /// The synthetic host's clock: every figure in such a run is made up (`fake` in files
    /// of schema 1).
    #[cfg_attr(feature = "serde", serde(alias = "fake"))]
    Synthetic,
}

impl std::fmt::Display for ClockKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ClockKind::Tsc => "TSC",
            ClockKind::Cntvct => "CNTVCT_EL0",
            ClockKind::MonotonicRaw => "CLOCK_MONOTONIC_RAW",
            ClockKind::QueryPerformanceCounter => "QueryPerformanceCounter",
            ClockKind::Synthetic => "synthetic",
        })
    }
}

/// What a run's results should say about the clock they were timed with.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ClockInfo {
    pub kind: ClockKind,
    /// How it is read, in words.
    pub method: String,
    /// Ticks per second.
    pub frequency_hz: f64,
    /// Median smallest non-zero step between two consecutive reads.
    pub resolution_ns: f64,
    /// Median duration of an empty timed region (a start read and an end read).
    pub region_overhead_ns: f64,
    /// Why a cycle counter was not used, when it was not.
    pub fallback_reason: Option<String>,
}

/// A calibrated clock.
#[derive(Debug, Clone)]
pub struct Clock {
    kind: ClockKind,
    ns_per_tick: f64,
    info: ClockInfo,
}

/// How many reads the resolution and overhead estimates are medians of.
const SELF_TEST_READS: usize = 501;

impl Clock {
    /// Picks, calibrates and characterises the best clock of this machine.
    pub fn detect() -> Clock {
        match cycle_counter() {
            Ok((kind, frequency_hz, method)) => {
                Clock::characterise(kind, frequency_hz, method, None)
            }
            Err(reason) => Clock::characterise(os::KIND, 1e9, os::METHOD.to_string(), Some(reason)),
        }
    }

    /// The OS's monotonic clock, whose ticks are nanoseconds: nothing to calibrate, for a
    /// process that must be ready at once and times slices of milliseconds, beside which a
    /// read's tens of nanoseconds are nothing (the other side of a paired comparison).
    pub fn monotonic() -> Clock {
        Clock::characterise(
            os::KIND,
            1e9,
            os::METHOD.to_string(),
            Some("asked for: slices of milliseconds need no cycle counter".to_string()),
        )
    }

    /// A clock that reads the OS clock when asked but reports `info`: the synthetic host's,
    /// whose figures are made up and must say so.
    pub(crate) fn reporting(info: ClockInfo) -> Clock {
        Clock {
            kind: ClockKind::MonotonicRaw,
            ns_per_tick: 1.0,
            info,
        }
    }

    fn characterise(
        kind: ClockKind,
        frequency_hz: f64,
        method: String,
        fallback_reason: Option<String>,
    ) -> Clock {
        let mut clock = Clock {
            kind,
            ns_per_tick: 1e9 / frequency_hz,
            info: ClockInfo {
                kind,
                method,
                frequency_hz,
                resolution_ns: 0.0,
                region_overhead_ns: 0.0,
                fallback_reason,
            },
        };
        clock.info.resolution_ns = clock.measure_resolution_ns();
        clock.info.region_overhead_ns = clock.measure_region_overhead_ns();
        clock
    }

    /// What the results should record about this clock.
    pub fn info(&self) -> &ClockInfo {
        &self.info
    }

    /// Reads the clock at the start of a timed region.
    #[inline(always)]
    pub fn start(&self) -> u64 {
        match self.kind {
            #[cfg(target_arch = "x86_64")]
            ClockKind::Tsc => tsc::Tsc::start(),
            #[cfg(target_arch = "aarch64")]
            ClockKind::Cntvct => cntvct::Cntvct::start(),
            _ => os::MonotonicRaw::start(),
        }
    }

    /// Reads the clock at the end of a timed region.
    #[inline(always)]
    pub fn end(&self) -> u64 {
        match self.kind {
            #[cfg(target_arch = "x86_64")]
            ClockKind::Tsc => tsc::Tsc::end(),
            #[cfg(target_arch = "aarch64")]
            ClockKind::Cntvct => cntvct::Cntvct::end(),
            _ => os::MonotonicRaw::end(),
        }
    }

    /// Converts a tick count to nanoseconds.
    pub fn ticks_to_ns(&self, ticks: u64) -> f64 {
        ticks as f64 * self.ns_per_tick
    }

    /// Times `iters` calls of `f`, each result through a value sink; returns elapsed ticks.
    /// The loop is monomorphised for `f` and never inlined into its caller: a
    /// [`LoopBody`](crate::host::LoopBody) calls it once per sample.
    #[inline]
    pub fn time_loop<F: FnMut() -> R, R>(&self, iters: u64, f: &mut F) -> u64 {
        match self.kind {
            #[cfg(target_arch = "x86_64")]
            ClockKind::Tsc => timed_loop::<tsc::Tsc, F, R>(iters, f),
            #[cfg(target_arch = "aarch64")]
            ClockKind::Cntvct => timed_loop::<cntvct::Cntvct, F, R>(iters, f),
            _ => timed_loop::<os::MonotonicRaw, F, R>(iters, f),
        }
    }

    /// Times `iters` calls of `f` as one dependency chain: each call is given the previous
    /// call's result, starting from `state`. Returns the elapsed ticks and the last result.
    ///
    /// The state lives in the loop's own registers (or stack slot) rather than behind the
    /// closure, so no store and reload joins one call to the next: a chain of one-cycle
    /// operations measures one cycle each. Only the last result goes through a value sink.
    #[inline]
    pub fn time_chain<F: FnMut(T) -> T, T>(&self, iters: u64, f: &mut F, state: T) -> (u64, T) {
        match self.kind {
            #[cfg(target_arch = "x86_64")]
            ClockKind::Tsc => timed_chain::<tsc::Tsc, F, T>(iters, f, state),
            #[cfg(target_arch = "aarch64")]
            ClockKind::Cntvct => timed_chain::<cntvct::Cntvct, F, T>(iters, f, state),
            _ => timed_chain::<os::MonotonicRaw, F, T>(iters, f, state),
        }
    }

    /// One smallest non-zero step between consecutive reads, in ticks.
    pub fn smallest_step(&self) -> u64 {
        let first = self.start();
        loop {
            let next = self.start();
            if next != first {
                return next.wrapping_sub(first);
            }
        }
    }

    fn measure_resolution_ns(&self) -> f64 {
        let mut steps: Vec<f64> = (0..SELF_TEST_READS)
            .map(|_| self.ticks_to_ns(self.smallest_step()))
            .collect();
        crate::stats::median_in_place(&mut steps)
    }

    fn measure_region_overhead_ns(&self) -> f64 {
        let mut regions: Vec<f64> = (0..SELF_TEST_READS)
            .map(|_| self.ticks_to_ns(self.time_loop(1, &mut || ())))
            .collect();
        crate::stats::median_in_place(&mut regions)
    }
}

/// The measured loop. One copy per clock and benchmark, never inlined into its caller, so the
/// benchmark and its empty twin run the same code at the same alignment; no clock read or
/// dynamic dispatch happens between the two reads but the benchmark's own.
#[inline(never)]
fn timed_loop<S: TickSource, F: FnMut() -> R, R>(iters: u64, f: &mut F) -> u64 {
    let start = S::start();
    for _ in 0..iters {
        black_box(f());
    }
    S::end().wrapping_sub(start)
}

/// The measured loop of a dependency chain; see [`Clock::time_chain`]. The value sink after
/// the loop makes the chain's result needed before the closing clock read.
#[inline(never)]
fn timed_chain<S: TickSource, F: FnMut(T) -> T, T>(iters: u64, f: &mut F, state: T) -> (u64, T) {
    let mut state = state;
    let start = S::start();
    for _ in 0..iters {
        state = f(state);
    }
    black_box(&mut state);
    (S::end().wrapping_sub(start), state)
}

/// The cycle counter of this architecture, if it can be trusted: its kind, its frequency in
/// hertz and how it is read.
fn cycle_counter() -> Result<(ClockKind, f64, String), String> {
    #[cfg(target_arch = "x86_64")]
    {
        tsc::usable().map(|hz| (ClockKind::Tsc, hz, tsc::METHOD.to_string()))
    }
    #[cfg(target_arch = "aarch64")]
    {
        cntvct::frequency_hz().map(|hz| (ClockKind::Cntvct, hz, cntvct::METHOD.to_string()))
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Err("no cycle counter is supported on this architecture".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn clock_agrees_with_the_os_over_a_sleep() {
        let clock = Clock::detect();
        let wall = std::time::Instant::now();
        let t0 = clock.start();
        std::thread::sleep(Duration::from_millis(40));
        let ticks = clock.end().wrapping_sub(t0);
        let wall_ns = wall.elapsed().as_nanos() as f64;
        let ratio = clock.ticks_to_ns(ticks) / wall_ns;
        assert!((0.98..1.02).contains(&ratio), "clock/OS ratio {ratio}");
    }

    #[test]
    fn resolution_and_overhead_are_positive_and_sane() {
        let info = Clock::detect().info().clone();
        assert!(
            info.resolution_ns > 0.0 && info.resolution_ns < 100_000.0,
            "{info:?}"
        );
        assert!(info.region_overhead_ns >= 0.0 && info.region_overhead_ns < 100_000.0);
        assert!(info.frequency_hz > 1e6, "{info:?}");
    }

    #[test]
    fn timed_loop_grows_with_the_iteration_count() {
        let clock = Clock::detect();
        // A dependent chain through memory: the compiler can neither fold it
        // nor overlap iterations, so each one costs tens of cycles and the
        // timer's own fixed cost is a small part of 1,000 of them.
        let mut state = 1u64;
        let mut work = || {
            for _ in 0..20 {
                state = black_box(state).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            }
            state
        };
        let mut best = |iters| {
            (0..50)
                .map(|_| clock.time_loop(iters, &mut work))
                .min()
                .unwrap()
        };
        let small = best(1_000);
        let large = best(16_000);
        // 16 times the work; a quarter of that as the bar leaves room for a loaded machine,
        // where even the best of the short samples can be inflated (7.9× was seen under CI).
        assert!(
            large > small * 4,
            "1k iterations {small} ticks, 16k {large} ticks"
        );
    }
}
