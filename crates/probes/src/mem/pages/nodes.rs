//! Where a buffer's pages lie: the check that memory bound to a node landed on it. A figure
//! named for node J's memory must be of memory on node J; `MPOL_BIND` promises it for pages
//! first touched under the policy, and this asks the kernel that it happened (a buffer
//! reused from the heap, or touched before the binding, would not be).

use latlab_engine::SharedHost;

/// Pages of a buffer asked about, spread evenly over it.
const SAMPLED_PAGES: usize = 64;

/// What `make` makes with its pages bound to `node` where it names one: the binding is set
/// for the call (on the calling thread, whose first touches place the pages), the pages are
/// checked while it is still in force (a synthetic machine places them by the binding of
/// the moment), and the default policy is back before it returns. With no node, no policy
/// is touched at all: a kernel without NUMA support refuses even the default one.
pub(crate) fn made_on_node<T>(
    host: &SharedHost,
    node: Option<usize>,
    make: impl FnOnce() -> Result<T, String>,
    span: impl FnOnce(&T) -> (*const u8, usize),
) -> Result<T, String> {
    let Some(node) = node else {
        return make();
    };
    host.bind_memory(Some(node))?;
    let made = make();
    let placed = match &made {
        Ok(made) => {
            let (start, len) = span(made);
            check_on_node(host, start, len, node)
        }
        Err(_) => Ok(()),
    };
    host.bind_memory(None)?;
    let made = made?;
    placed?;
    Ok(made)
}

/// Checks that the `len` bytes at `start` lie on memory node `node`, asking the kernel
/// where [`SAMPLED_PAGES`] of their pages (all, for a smaller buffer) are; says how many are
/// elsewhere, and where, when any is.
fn check_on_node(
    host: &SharedHost,
    start: *const u8,
    len: usize,
    node: usize,
) -> Result<(), String> {
    let page = super::mapped::page_size();
    let pages = len.div_ceil(page).max(1);
    let step = pages.div_ceil(SAMPLED_PAGES);
    let addresses: Vec<*const u8> = (0..pages)
        .step_by(step)
        .map(|i| start.wrapping_add(i * page))
        .collect();
    let found = host.nodes_of_pages(&addresses)?;
    let elsewhere: Vec<String> = found
        .iter()
        .filter(|&&at| at != Some(node))
        .map(|at| at.map_or("nowhere yet".into(), |n| format!("node {n}")))
        .collect();
    if elsewhere.is_empty() {
        return Ok(());
    }
    let mut places = elsewhere.clone();
    places.sort();
    places.dedup();
    Err(format!(
        "{} of {} sampled pages of memory bound to node {node} are not on it ({}): the \
         kernel did not place them as asked",
        elsewhere.len(),
        addresses.len(),
        places.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::pages::mapped::MappedBuffer;
    use latlab_engine::host::{RealHost, SyntheticHost};
    use std::sync::Arc;

    /// On the synthetic machine, memory bound to a node is found there, and memory that
    /// was not bound is found on node 0, not on the node a probe meant.
    #[test]
    fn memory_is_found_where_it_was_bound_and_only_there() {
        let host: SharedHost = Arc::new(SyntheticHost::with_memory_nodes(2));
        let buffer = MappedBuffer::new(1 << 20, false).unwrap();
        let (start, len) = (buffer.as_mut_ptr().cast_const(), buffer.len());
        host.bind_memory(Some(1)).unwrap();
        assert_eq!(check_on_node(&host, start, len, 1), Ok(()));
        host.bind_memory(None).unwrap();
        let refused = check_on_node(&host, start, len, 1).unwrap_err();
        assert!(
            refused.starts_with(
                "64 of 64 sampled pages of memory bound to node 1 are not on it (node 0)"
            ),
            "{refused}"
        );
    }

    /// On this machine, pages touched while bound to node 0 (every NUMA kernel has it) are
    /// on node 0 by the kernel's own account, and not on a node 1 that a one-node machine
    /// does not have; pages never touched are nowhere yet.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_kernel_says_where_bound_pages_are() {
        let host: SharedHost = Arc::new(RealHost::default());
        if let Err(why) = host.bind_memory(Some(0)) {
            latlab_test_support::skip!("this kernel binds no memory: {why}");
        }
        let buffer = MappedBuffer::new(1 << 20, false);
        host.bind_memory(None).unwrap();
        let buffer = buffer.unwrap();
        let (start, len) = (buffer.as_mut_ptr().cast_const(), buffer.len());
        assert_eq!(check_on_node(&host, start, len, 0), Ok(()));
        if host.memory_nodes().len() == 1 {
            let refused = check_on_node(&host, start, len, 1).unwrap_err();
            assert!(refused.contains("are not on it (node 0)"), "{refused}");
        }
        // SAFETY: a fresh anonymous mapping of one page, never touched, unmapped below.
        let untouched = unsafe {
            rustix::mm::mmap_anonymous(
                std::ptr::null_mut(),
                4096,
                rustix::mm::ProtFlags::READ,
                rustix::mm::MapFlags::PRIVATE,
            )
        }
        .unwrap();
        assert_eq!(
            host.nodes_of_pages(&[untouched.cast_const().cast()]),
            Ok(vec![None])
        );
        // SAFETY: the page mapped above, used no more.
        unsafe { rustix::mm::munmap(untouched, 4096) }.unwrap();
    }
}
