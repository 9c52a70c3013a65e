//! The operating system's monotonic clock, in nanoseconds: the portable fallback, and what a
//! cycle counter is calibrated against.
//!
//! On Unix it is `clock_gettime(CLOCK_MONOTONIC_RAW)`: unlike `CLOCK_MONOTONIC` it is not
//! slewed by NTP, so a calibration against it is not skewed either. On Windows it is
//! `QueryPerformanceCounter`, read through std's `Instant` (which scales its ticks to
//! nanoseconds), and never slewed.

use super::{ClockKind, TickSource};

#[cfg(unix)]
pub(crate) const METHOD: &str = "clock_gettime(CLOCK_MONOTONIC_RAW), nanoseconds";
#[cfg(unix)]
pub(crate) const KIND: ClockKind = ClockKind::MonotonicRaw;

#[cfg(not(unix))]
pub(crate) const METHOD: &str = "QueryPerformanceCounter (std's Instant), nanoseconds";
#[cfg(not(unix))]
pub(crate) const KIND: ClockKind = ClockKind::QueryPerformanceCounter;

/// Reads `CLOCK_MONOTONIC_RAW` in nanoseconds.
#[cfg(unix)]
pub(crate) fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC_RAW exists on every Linux
    // kernel latlab supports and on macOS, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Reads `QueryPerformanceCounter`, in nanoseconds since this process first read it.
#[cfg(not(unix))]
pub(crate) fn monotonic_raw_ns() -> u64 {
    static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    ORIGIN
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

pub(crate) struct MonotonicRaw;

impl TickSource for MonotonicRaw {
    #[inline(always)]
    fn start() -> u64 {
        monotonic_raw_ns()
    }

    #[inline(always)]
    fn end() -> u64 {
        monotonic_raw_ns()
    }
}
