//! The controls on Linux and Android: affinity, `mlockall`, SCHED_FIFO bounded by
//! RLIMIT_RTTIME.

#[cfg(not(target_os = "android"))]
use super::{RT_CPU_HARD_LIMIT, RT_CPU_SOFT_LIMIT};
use std::io;

/// The most CPUs the affinity calls address (`CPU_SETSIZE`).
const MAX_CPUS: usize = libc::CPU_SETSIZE as usize;

// The calls go through libc rather than rustix, as the light build's do (see `crate::sys`).

/// The CPUs this process may run on.
pub(crate) fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a cpu_set_t is plain bits; all zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a whole cpu_set_t of the size given; pid 0 is the calling thread.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) } != 0 {
        return Vec::new();
    }
    (0..MAX_CPUS)
        // SAFETY: every `cpu` is below CPU_SETSIZE, inside the set.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Lets the calling thread (and the threads and processes it starts later) run on `cpus`.
pub(crate) fn set_allowed_cpus(cpus: &[usize]) -> Result<(), String> {
    if let Some(&cpu) = cpus.iter().find(|&&cpu| cpu >= MAX_CPUS) {
        return Err(format!(
            "CPU {cpu} is beyond what the kernel interface can address"
        ));
    }
    // SAFETY: a cpu_set_t is plain bits; all zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: `cpu` is below CPU_SETSIZE (checked above), inside the set.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a whole cpu_set_t of the size given; pid 0 is the calling thread.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) } != 0 {
        let error = io::Error::last_os_error();
        return Err(format!("could not run on CPUs {cpus:?}: {error}"));
    }
    Ok(())
}

/// Binds the pages the calling thread touches first from now on to memory node `node`
/// (`set_mempolicy` with `MPOL_BIND`), or, with `None`, lets them fall where the kernel's
/// default policy puts them (the node of the CPU that touches them). Pages already touched
/// stay where they are.
pub(crate) fn bind_memory(node: Option<usize>) -> Result<(), String> {
    const MPOL_DEFAULT: libc::c_long = 0;
    const MPOL_BIND: libc::c_long = 2;
    const MASK_BITS: usize = 1024;
    let mut mask = [0 as libc::c_ulong; MASK_BITS / libc::c_ulong::BITS as usize];
    let word_bits = libc::c_ulong::BITS as usize;
    let mode = match node {
        Some(node) if node >= MASK_BITS => {
            return Err(format!(
                "memory node {node} is beyond what latlab can bind to"
            ));
        }
        Some(node) => {
            mask[node / word_bits] |= 1 << (node % word_bits);
            MPOL_BIND
        }
        None => MPOL_DEFAULT,
    };
    let (mask_pointer, bits) = match node {
        Some(_) => (mask.as_ptr(), MASK_BITS as libc::c_ulong + 1),
        None => (std::ptr::null(), 0),
    };
    // SAFETY: `mask` holds MASK_BITS bits and outlives the call; the kernel reads at most
    // `bits - 1` of them (the count passed is one more than the bits, as set_mempolicy(2)
    // asks); a null mask with the default mode is what the call documents.
    let ret = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, mask_pointer, bits) };
    if ret != 0 {
        let error = io::Error::last_os_error();
        return Err(match node {
            Some(node) => format!("could not bind memory to node {node}: {error}"),
            None => format!("could not restore the default memory policy: {error}"),
        });
    }
    Ok(())
}

/// The memory node of the page holding each of `addresses`: `move_pages` with no target
/// nodes, which moves nothing and reports where each page is; `None` for a page the kernel
/// has not placed (not touched yet, or not mapped).
pub(crate) fn nodes_of_pages(addresses: &[*const u8]) -> Result<Vec<Option<usize>>, String> {
    let mut pages: Vec<*mut libc::c_void> =
        addresses.iter().map(|&a| a.cast_mut().cast()).collect();
    let mut status: Vec<libc::c_int> = vec![0; pages.len()];
    // SAFETY: `pages` and `status` hold as many entries as the count passed and outlive the
    // call; with a null `nodes` the kernel only reads `pages` and writes `status`; pid 0 is
    // this process.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0,
            pages.len() as libc::c_ulong,
            pages.as_mut_ptr(),
            std::ptr::null::<libc::c_int>(),
            status.as_mut_ptr(),
            0,
        )
    };
    if ret < 0 {
        let error = io::Error::last_os_error();
        return Err(format!(
            "could not ask which memory node holds a page: {error}"
        ));
    }
    Ok(status
        .into_iter()
        .map(|s| usize::try_from(s).ok())
        .collect())
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
    crate::sys::lock_all_memory().map_err(|e| format!("mlockall failed: {e}"))
}

/// Moves the calling thread to SCHED_FIFO at `priority`, after making sure RLIMIT_RTTIME
/// bounds it (the limit is tightened to [`RT_CPU_SOFT_LIMIT`] and [`RT_CPU_HARD_LIMIT`],
/// never loosened), so that a real-time thread that stopped blocking is stopped by the
/// kernel. The error number when refused. Async-signal-safe, so forked children call it too.
pub fn enter_fifo(priority: i32) -> Result<(), i32> {
    bound_realtime_cpu_time()?;
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: a valid sched_param; the call acts on the calling thread only.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        return Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EPERM));
    }
    Ok(())
}

/// Tightens RLIMIT_RTTIME to [`RT_CPU_SOFT_LIMIT`] and [`RT_CPU_HARD_LIMIT`].
#[cfg(not(target_os = "android"))]
fn bound_realtime_cpu_time() -> Result<(), i32> {
    use crate::sys::{Limit, realtime_time_limit, set_realtime_time_limit};
    let limit = Limit {
        soft: Some(RT_CPU_SOFT_LIMIT.as_micros() as u64),
        hard: Some(RT_CPU_HARD_LIMIT.as_micros() as u64),
    };
    // Tightened, never loosened: where the hard limit is lower already, the kernel refuses
    // and the lower one stands.
    let current = realtime_time_limit().and_then(|now| now.soft);
    if current.is_none_or(|now| Some(now) > limit.soft) {
        let _ = set_realtime_time_limit(limit);
    }
    Ok(())
}

/// Android's C library has no RLIMIT_RTTIME: without that safety
/// net a real-time thread that stopped blocking could hold its CPU for ever, so none is
/// made (`--rt` says it had no effect, and why).
#[cfg(target_os = "android")]
fn bound_realtime_cpu_time() -> Result<(), i32> {
    Err(libc::EOPNOTSUPP)
}

/// The normal scheduling class: `SCHED_OTHER`, which Android's C library calls
/// `SCHED_NORMAL`.
#[cfg(not(target_os = "android"))]
const SCHED_NORMAL: libc::c_int = libc::SCHED_OTHER;
#[cfg(target_os = "android")]
const SCHED_NORMAL: libc::c_int = libc::SCHED_NORMAL;

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
            libc::sched_setscheduler(0, SCHED_NORMAL, &param);
        }
    }
}
