//! `clock_gettime(CLOCK_MONOTONIC_RAW)`: the portable fallback, in nanoseconds. Unlike
//! `CLOCK_MONOTONIC` it is not slewed by NTP, so a calibration against it is not skewed either.

use super::TickSource;

pub(crate) const METHOD: &str = "clock_gettime(CLOCK_MONOTONIC_RAW), nanoseconds";

/// Reads `CLOCK_MONOTONIC_RAW` in nanoseconds.
pub(crate) fn monotonic_raw_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC_RAW exists on every Linux
    // kernel latlab supports, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_RAW, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
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
