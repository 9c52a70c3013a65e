//! What the memory probes learn of the machine as a run goes, for the probes after them:
//! where the latency curve found the last cache to end. The kernel's cache sizes are a
//! claim, and a guest's can be far from what it gets (an Emerald Rapids guest whose kernel
//! reports a 260 MiB L3 leaves its L3 near 32 MiB; a Zen 4 guest reporting 32 MiB leaves
//! it near 5 MiB); the bandwidth and memcpy sweeps are sized from the curve where it found
//! main memory, so that they reach it without going several times further.

use std::sync::OnceLock;

/// The run's findings, written once by `mem.latency` and read by the probes after it.
#[derive(Debug, Default)]
pub struct MemoryFindings {
    last_cache_bytes: OnceLock<u64>,
}

impl MemoryFindings {
    /// Records where the curve left the last cache for main memory; the first record stands
    /// (the latency probe measures once a run).
    pub(crate) fn found_last_cache(&self, bytes: u64) {
        let _ = self.last_cache_bytes.set(bytes);
    }

    /// Where the curve left the last cache, once the latency probe has found main memory.
    pub(crate) fn last_cache_bytes(&self) -> Option<u64> {
        self.last_cache_bytes.get().copied()
    }
}
