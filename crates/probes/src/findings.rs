//! What probes learn of the machine as a run goes, for the probes after them: the core's
//! cycle, which `cpu.frequency` measures and the memory probes give their figures in cycles
//! by (one measurement a run, not one per probe and round), and where the latency curve
//! found the last cache to end. The kernel's cache sizes are a claim, and a guest's can be
//! several times what it gets (the book's memory methods, "The figures behind the rules"); the bandwidth
//! and memcpy sweeps are sized from the curve where it found main memory, so that they
//! reach it without going several times further.

use latlab_engine::cycle::Cycle;
use std::sync::OnceLock;

/// The run's findings, each written once and read by the probes after it.
#[derive(Debug, Default)]
pub struct Findings {
    cycle: OnceLock<Cycle>,
    last_cache_bytes: OnceLock<u64>,
}

impl Findings {
    /// Records the core's cycle as `cpu.frequency` measured it; the first record stands.
    pub(crate) fn found_cycle(&self, cycle: Cycle) {
        let _ = self.cycle.set(cycle);
    }

    /// The core's cycle, once `cpu.frequency` has measured it in this run.
    pub(crate) fn cycle(&self) -> Option<Cycle> {
        self.cycle.get().cloned()
    }

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
