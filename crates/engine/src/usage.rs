//! What the kernel counts for the measuring thread: CPU time, context switches, page faults.

use crate::model::Integrity;

/// The calling thread's CPU time in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a timespec to write; the thread CPU-time clock exists on every Linux
    // this runs on (through libc, not rustix's `time` module, which took 1.5 s of a cold
    // build of the harness for this one call).
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The calling thread, to `getrusage`. Android's kernel is Linux, and its C library's
/// headers have it, but the libc crate does not: Linux's value there.
#[cfg(not(target_os = "android"))]
const RUSAGE_THREAD: libc::c_int = libc::RUSAGE_THREAD;
#[cfg(target_os = "android")]
const RUSAGE_THREAD: libc::c_int = 1;

/// A snapshot of `getrusage(RUSAGE_THREAD)` (which rustix does not cover).
pub(crate) struct ThreadUsage(libc::rusage);

impl ThreadUsage {
    pub(crate) fn now() -> ThreadUsage {
        // SAFETY: rusage is plain old data, valid when zeroed; getrusage only writes into it.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; RUSAGE_THREAD is valid on Linux and cannot fail with a valid pointer.
        unsafe { libc::getrusage(RUSAGE_THREAD, &mut usage) };
        ThreadUsage(usage)
    }

    /// What happened between `self` and now.
    pub(crate) fn elapsed(&self) -> Integrity {
        let now = ThreadUsage::now().0;
        let delta = |after: libc::c_long, before: libc::c_long| (after - before).max(0) as u64;
        Integrity {
            voluntary_switches: delta(now.ru_nvcsw, self.0.ru_nvcsw),
            involuntary_switches: delta(now.ru_nivcsw, self.0.ru_nivcsw),
            minor_page_faults: delta(now.ru_minflt, self.0.ru_minflt),
            major_page_faults: delta(now.ru_majflt, self.0.ru_majflt),
        }
    }
}
