//! Controls that keep a run from being disturbed: CPU pinning, locked memory, real-time
//! priority. The locks that keep two latlab runs from measuring each other are
//! [`crate::locks`]'.
//!
//! Each control reports why it could not take effect instead of failing the run; the caller
//! turns that into a note in the results (principle: honest about limits).

use std::time::Duration;

#[cfg(any(target_os = "linux", target_os = "android"))]
mod linux;
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) use linux::{allowed_cpus, bind_memory, lock_memory, nodes_of_pages, set_allowed_cpus};
#[cfg(any(target_os = "linux", target_os = "android"))]
pub use linux::{enter_fifo, leave_realtime};

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod elsewhere;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub use elsewhere::leave_realtime;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) use elsewhere::{
    allowed_cpus, bind_memory, lock_memory, nodes_of_pages, set_allowed_cpus,
};

/// RLIMIT_RTTIME's soft limit while real-time: a thread that runs this long without blocking
/// gets SIGXCPU, so a bug cannot freeze the machine. The sampler sleeps before every sample,
/// which renews the allowance.
pub const RT_CPU_SOFT_LIMIT: Duration = Duration::from_secs(1);
/// RLIMIT_RTTIME's hard limit (SIGKILL).
pub const RT_CPU_HARD_LIMIT: Duration = Duration::from_secs(2);
/// How long the sampler sleeps before each sample in real-time mode.
pub const RT_PAUSE: Duration = Duration::from_micros(50);

/// The SCHED_FIFO priority of `--rt`: the lowest, below the real-time arms of the probes.
pub const RUN_PRIORITY: i32 = 1;

/// Moves the calling thread to SCHED_FIFO at `priority`, RLIMIT_RTTIME bounding it (see
/// [`enter_fifo`]); when refused, says what would allow it.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn enter_realtime(priority: i32) -> Result<(), String> {
    enter_fifo(priority).map_err(|errno| {
        format!(
            "SCHED_FIFO was refused ({}): it needs CAP_SYS_NICE or a real-time priority limit \
             of at least {priority} (ulimit -r)",
            std::io::Error::from_raw_os_error(errno)
        )
    })
}

/// Real-time priority with a kernel-enforced bound on its CPU time (SCHED_FIFO and
/// RLIMIT_RTTIME) is Linux's: elsewhere it is refused, and says so.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn enter_realtime(_priority: i32) -> Result<(), String> {
    Err(format!(
        "real-time priority (SCHED_FIFO bounded by RLIMIT_RTTIME) is {}",
        crate::NOT_AVAILABLE
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_may_run_somewhere() {
        assert!(!allowed_cpus().is_empty());
    }
}
