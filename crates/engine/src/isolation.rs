//! Controls that keep a run from being disturbed: CPU pinning, locked memory, real-time
//! priority, and a machine-wide lock so that two latlab runs do not measure each other.
//!
//! Each control reports why it could not take effect instead of failing the run; the caller
//! turns that into a note in the results (principle: honest about limits).

use std::io;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::time::{Duration, Instant};

/// The CPUs this process may run on.
pub(crate) fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain old data, valid when zeroed; sched_getaffinity writes into it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    let ok = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) } == 0;
    if !ok {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `cpu` is below CPU_SETSIZE, the set's capacity.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Lets the calling thread (and the threads and processes it starts later) run on `cpus`.
pub(crate) fn set_allowed_cpus(cpus: &[usize]) -> Result<(), String> {
    if let Some(&cpu) = cpus.iter().find(|&&cpu| cpu >= libc::CPU_SETSIZE as usize) {
        return Err(format!(
            "CPU {cpu} is beyond what the kernel interface can address"
        ));
    }
    // SAFETY: cpu_set_t is plain old data, valid when zeroed.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: `cpu` was checked against the set's capacity.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) } == 0 {
        Ok(())
    } else {
        Err(format!(
            "could not run on CPUs {cpus:?}: {}",
            io::Error::last_os_error()
        ))
    }
}

/// Locks current and future memory into RAM, so no page fault or swap-in lands inside a
/// sample. Refused up front when the locked-memory limit would make later allocations fail.
pub(crate) fn lock_memory() -> Result<(), String> {
    let privileges = crate::environment::Privileges::collect();
    if !privileges.cap_ipc_lock && privileges.memlock_limit_bytes.is_some() {
        return Err(
            "locking memory needs CAP_IPC_LOCK or an unlimited locked-memory limit (ulimit -l unlimited)"
                .into(),
        );
    }
    // SAFETY: mlockall takes flags only.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 {
        Ok(())
    } else {
        Err(format!("mlockall failed: {}", io::Error::last_os_error()))
    }
}

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
pub fn enter_realtime(priority: i32) -> Result<(), String> {
    enter_fifo(priority).map_err(|errno| {
        format!(
            "SCHED_FIFO was refused ({}): it needs CAP_SYS_NICE or a real-time priority limit \
             of at least {priority} (ulimit -r)",
            io::Error::from_raw_os_error(errno)
        )
    })
}

/// Moves the calling thread to SCHED_FIFO at `priority`, after making sure RLIMIT_RTTIME
/// bounds it (the limit is tightened to [`RT_CPU_SOFT_LIMIT`] and [`RT_CPU_HARD_LIMIT`],
/// never loosened), so that a real-time thread that stopped blocking is stopped by the
/// kernel. The error number when refused. Async-signal-safe, so forked children call it too.
pub fn enter_fifo(priority: i32) -> Result<(), i32> {
    let limit = libc::rlimit {
        rlim_cur: RT_CPU_SOFT_LIMIT.as_micros() as libc::rlim_t,
        rlim_max: RT_CPU_HARD_LIMIT.as_micros() as libc::rlim_t,
    };
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: valid rlimit and sched_param structures; the calls act on the calling thread
    // and its process's limit only.
    unsafe {
        let mut current: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_RTTIME, &mut current);
        if current.rlim_cur == libc::RLIM_INFINITY || current.rlim_cur > limit.rlim_cur {
            libc::setrlimit(libc::RLIMIT_RTTIME, &limit);
        }
        if libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) != 0 {
            return Err(*libc::__errno_location());
        }
    }
    Ok(())
}

/// Moves the calling thread to the normal scheduling class if it inherited a real-time one
/// (`--rt`): a helper that spins or answers must not run unbounded at real-time priority,
/// nor be killed by the RLIMIT_RTTIME that guards the measuring thread. Async-signal-safe,
/// so forked children call it too.
pub fn leave_realtime() {
    // SAFETY: sched_getscheduler and sched_setscheduler take a pid (0: the caller) and a
    // valid sched_param.
    unsafe {
        let policy = libc::sched_getscheduler(0);
        if policy == libc::SCHED_FIFO || policy == libc::SCHED_RR {
            let param = libc::sched_param { sched_priority: 0 };
            libc::sched_setscheduler(0, libc::SCHED_OTHER, &param);
        }
    }
}

/// Held while a run measures; released when dropped or when the process dies.
///
/// It is an abstract Unix socket name, which only one process can bind at a time and which
/// the kernel frees with its owner: nothing is left on disk, even after a crash.
#[derive(Debug)]
pub struct RunLock {
    _listener: Option<UnixListener>,
}

const LOCK_NAME: &[u8] = b"latlab-measurement-lock";

impl RunLock {
    /// Takes the lock, waiting up to `wait` for another run to finish. `Err` carries how long
    /// was waited when another run still holds it.
    pub(crate) fn acquire(wait: Duration) -> Result<RunLock, Duration> {
        Self::acquire_named(LOCK_NAME, wait)
    }

    /// A lock that holds nothing, for a host that measures nothing (the synthetic one).
    pub fn not_needed() -> RunLock {
        RunLock { _listener: None }
    }

    fn acquire_named(name: &[u8], wait: Duration) -> Result<RunLock, Duration> {
        let started = Instant::now();
        loop {
            match Self::try_acquire(name) {
                Some(lock) => return Ok(lock),
                None if started.elapsed() >= wait => return Err(started.elapsed()),
                None => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }

    fn try_acquire(name: &[u8]) -> Option<RunLock> {
        let address = SocketAddr::from_abstract_name(name).ok()?;
        UnixListener::bind_addr(&address)
            .ok()
            .map(|listener| RunLock {
                _listener: Some(listener),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_excludes_a_second_holder_until_released() {
        // A name of its own, so that a real run on this machine does not disturb the test.
        let name = format!("latlab-test-lock-{}", std::process::id());
        let first = RunLock::acquire_named(name.as_bytes(), Duration::from_secs(5)).unwrap();
        assert!(RunLock::acquire_named(name.as_bytes(), Duration::from_millis(120)).is_err());
        drop(first);
        assert!(RunLock::acquire_named(name.as_bytes(), Duration::from_secs(1)).is_ok());
    }

    #[test]
    fn this_process_may_run_somewhere() {
        assert!(!allowed_cpus().is_empty());
    }
}
