//! CLOCK_MONOTONIC read and slept on, as the watchdog process and `sched.wakeup` use it:
//! both calls are async-signal-safe, so a forked child may make them.

use std::time::Duration;

/// CLOCK_MONOTONIC now.
pub(crate) fn monotonic_now() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Sleeps until CLOCK_MONOTONIC reads `deadline`, through signals. Async-signal-safe.
pub(crate) fn sleep_until(deadline: Duration) {
    let until = libc::timespec {
        tv_sec: deadline.as_secs() as libc::time_t,
        tv_nsec: deadline.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `until` is a valid timespec; no remaining time is asked for.
    while unsafe {
        libc::clock_nanosleep(
            libc::CLOCK_MONOTONIC,
            libc::TIMER_ABSTIME,
            &until,
            std::ptr::null_mut(),
        )
    } == libc::EINTR
    {}
}
