//! What this process may do: real-time priority, locked memory, hardware counters.
//! latlab runs unprivileged by default; these decide which optional controls can take effect.

const CAP_IPC_LOCK: u32 = 14;
const CAP_SYS_NICE: u32 = 23;

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Privileges {
    pub euid: u32,
    /// RLIMIT_RTPRIO (soft); absent means unlimited.
    pub rtprio_limit: Option<u64>,
    /// RLIMIT_MEMLOCK (soft) in bytes; absent means unlimited.
    pub memlock_limit_bytes: Option<u64>,
    pub cap_sys_nice: bool,
    pub cap_ipc_lock: bool,
}

impl Privileges {
    pub(crate) fn collect() -> Privileges {
        let effective = effective_capabilities();
        Privileges {
            euid: effective_uid(),
            rtprio_limit: rtprio_limit(),
            memlock_limit_bytes: memlock_limit(),
            cap_sys_nice: effective & (1 << CAP_SYS_NICE) != 0,
            cap_ipc_lock: effective & (1 << CAP_IPC_LOCK) != 0,
        }
    }

    pub(crate) fn synthetic() -> Privileges {
        Privileges {
            euid: 1000,
            rtprio_limit: Some(0),
            memlock_limit_bytes: Some(8 << 20),
            cap_sys_nice: false,
            cap_ipc_lock: false,
        }
    }
}

/// RLIMIT_RTPRIO's soft limit; `None` when unlimited.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn rtprio_limit() -> Option<u64> {
    crate::sys::realtime_priority_limit().and_then(|limit| limit.soft)
}

/// No RLIMIT_RTPRIO here: no real-time priority may be had, a limit of 0.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn rtprio_limit() -> Option<u64> {
    Some(0)
}

/// RLIMIT_MEMLOCK's soft limit in bytes; `None` when unlimited.
#[cfg(unix)]
fn memlock_limit() -> Option<u64> {
    crate::sys::locked_memory_limit().and_then(|limit| limit.soft)
}

/// Windows has no locked-memory limit that `mlockall` would read: nothing may be locked.
#[cfg(not(unix))]
fn memlock_limit() -> Option<u64> {
    Some(0)
}

fn effective_capabilities() -> u64 {
    latlab_doors::input::system_text("/proc/self/status")
        .and_then(|status| {
            let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
            u64::from_str_radix(hex.trim(), 16).ok()
        })
        .unwrap_or(0)
}

/// Whether perf counters can be opened by this process, found by trying.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PerfCounters {
    /// A hardware cycle counter could be opened.
    pub hardware: bool,
    /// A software task-clock counter could be opened.
    pub software: bool,
    /// /proc/sys/kernel/perf_event_paranoid.
    pub paranoid: Option<i32>,
    /// Why hardware counters are not available, in the kernel's words.
    pub hardware_error: Option<String>,
}

impl PerfCounters {
    /// Opens a hardware and a software counter of this process, and closes them: the
    /// context-switch hooks stay on for every task for the next second, so never just
    /// before a measurement.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(crate) fn probe() -> PerfCounters {
        use perf_event_open_sys::bindings::{
            PERF_COUNT_HW_CPU_CYCLES, PERF_COUNT_SW_TASK_CLOCK, PERF_TYPE_HARDWARE,
            PERF_TYPE_SOFTWARE,
        };
        let hardware = open_counter(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES.into());
        PerfCounters {
            hardware: hardware.is_ok(),
            software: open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK.into()).is_ok(),
            paranoid: super::sysfs::read_trimmed("/proc/sys/kernel/perf_event_paranoid")
                .and_then(|p| p.parse().ok()),
            hardware_error: hardware.err().map(|e| e.to_string()),
        }
    }

    /// No perf_event_open here: no counter can be opened, and the error says so.
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    pub(crate) fn probe() -> PerfCounters {
        PerfCounters {
            hardware: false,
            software: false,
            paranoid: None,
            hardware_error: Some(format!("perf_event_open is {}", crate::NOT_AVAILABLE)),
        }
    }

    pub(crate) fn synthetic() -> PerfCounters {
        PerfCounters {
            hardware: true,
            software: true,
            paranoid: Some(2),
            hardware_error: None,
        }
    }
}

/// Opens a counter of this process as the profiler opens its own (disabled, user space
/// only, through perf-event2's defaults) and closes it again; the kernel's refusal as it
/// words it. The system-call bindings alone, not perf-event2, so that the harness's light
/// build does not compile the counter-reading library.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn open_counter(kind: u32, config: u64) -> std::io::Result<()> {
    use perf_event_open_sys::bindings::{PERF_FLAG_FD_CLOEXEC, perf_event_attr};
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut attrs = perf_event_attr::default();
    attrs.type_ = kind;
    attrs.config = config;
    attrs.size = std::mem::size_of::<perf_event_attr>() as u32;
    attrs.set_disabled(1);
    attrs.set_exclude_kernel(1);
    attrs.set_exclude_hv(1);
    // SAFETY: `attrs` is a whole perf_event_attr whose size field gives its own size, which
    // the kernel reads and does not keep; pid 0 with cpu -1 is this process on any CPU, with
    // no group leader.
    let fd = unsafe {
        perf_event_open_sys::perf_event_open(&mut attrs, 0, -1, -1, PERF_FLAG_FD_CLOEXEC.into())
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel has just returned this descriptor open, and nothing else owns it.
    drop(unsafe { OwnedFd::from_raw_fd(fd) });
    Ok(())
}

/// The user this process acts as (its effective user id).
#[cfg(unix)]
pub fn effective_uid() -> u32 {
    latlab_doors::sys::effective_uid()
}

/// Windows has no user ids: `u32::MAX`, which is `(uid_t)-1`, the id no Unix user has.
#[cfg(not(unix))]
pub fn effective_uid() -> u32 {
    u32::MAX
}
