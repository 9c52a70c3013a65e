//! The controls where Linux's are missing (macOS, Windows): each says it is not available
//! on this system, and the run goes on without it.

use crate::NOT_AVAILABLE;

/// The CPUs this process may run on: all of them, as far as this system tells.
pub(crate) fn allowed_cpus() -> Vec<usize> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..cpus).collect()
}

/// Pinning to chosen CPUs (affinity) is refused, and says why.
pub(crate) fn set_allowed_cpus(cpus: &[usize]) -> Result<(), String> {
    Err(format!("pinning to CPUs {cpus:?} is {NOT_AVAILABLE}"))
}

/// Binding memory to a node is refused, and says why; the default policy is what there is.
pub(crate) fn bind_memory(node: Option<usize>) -> Result<(), String> {
    match node {
        Some(node) => Err(format!("binding memory to node {node} is {NOT_AVAILABLE}")),
        None => Ok(()),
    }
}

/// Asking where pages lie is refused, and says why.
pub(crate) fn nodes_of_pages(_addresses: &[*const u8]) -> Result<Vec<Option<usize>>, String> {
    Err(format!(
        "asking which memory node holds a page is {NOT_AVAILABLE}"
    ))
}

/// Locking all memory (`mlockall`) is refused, and says why.
pub(crate) fn lock_memory() -> Result<(), String> {
    Err(format!("locking memory (mlockall) is {NOT_AVAILABLE}"))
}

/// Nothing to leave: no thread here enters real-time priority.
pub fn leave_realtime() {}
