//! What the kernel counts for the measuring thread: CPU time, context switches, page faults.
//!
//! Linux and Android count all of them for a thread. macOS counts the thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`) but its switches and faults only for the whole process, and
//! Windows updates a thread's CPU time only at the scheduler's tick (15.6 ms), too coarse
//! for a sample: there the figures that need them are left out (see [`THREAD_CPU_TIME`],
//! [`THREAD_USAGE`]), never read as zero.

use crate::model::Integrity;

/// Whether [`thread_cpu_ns`] reads the thread's CPU time finely enough to set beside a
/// sample's wall time. Where it does not, samples keep no CPU time and every verdict reads
/// wall time.
pub const THREAD_CPU_TIME: bool = cfg!(unix);

/// Whether the measuring thread's context switches and page faults are counted
/// (by `getrusage(RUSAGE_THREAD)`); where they are not, no warning can come from them.
pub const THREAD_USAGE: bool = cfg!(any(target_os = "linux", target_os = "android"));

/// The calling thread's CPU time in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`); always 0 where
/// [`THREAD_CPU_TIME`] is false.
#[cfg(unix)]
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a timespec to write; the thread CPU-time clock exists on every Linux
    // this runs on (through libc, not rustix, as the light build's calls are: see
    // `crate::sys`).
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Not counted finely here (see [`THREAD_CPU_TIME`]): always 0.
#[cfg(not(unix))]
pub fn thread_cpu_ns() -> u64 {
    0
}

/// The calling thread, to `getrusage`. Android's kernel is Linux, and its C library's
/// headers have it, but the libc crate does not: Linux's value there.
#[cfg(target_os = "linux")]
const RUSAGE_THREAD: libc::c_int = libc::RUSAGE_THREAD;
#[cfg(target_os = "android")]
const RUSAGE_THREAD: libc::c_int = 1;

/// A snapshot of `getrusage(RUSAGE_THREAD)` (which rustix does not cover).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) struct ThreadUsage(libc::rusage);

#[cfg(any(target_os = "linux", target_os = "android"))]
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

/// Where a thread's switches and faults are not counted ([`THREAD_USAGE`]): nothing to
/// report, so no warning of preemption or faults.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) struct ThreadUsage;

#[cfg(not(any(target_os = "linux", target_os = "android")))]
impl ThreadUsage {
    pub(crate) fn now() -> ThreadUsage {
        ThreadUsage
    }

    pub(crate) fn elapsed(&self) -> Integrity {
        Integrity::default()
    }
}
