//! Hardware event counts of a benchmark's loops, where the machine lets this process count
//! them: cycles, instructions, branch misses and cache misses, in one group so they cover
//! the same instructions.

use perf_event::events::Hardware;
use perf_event::{Builder, Counter, Group};

/// A group of hardware counters on this thread.
pub(crate) struct HardwareCounters {
    group: Group,
    cycles: Counter,
    instructions: Counter,
    branch_misses: Counter,
    cache_misses: Counter,
}

/// One reading of the group.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Counts {
    pub cycles: u64,
    pub instructions: u64,
    pub branch_misses: u64,
    pub cache_misses: u64,
}

impl HardwareCounters {
    /// Opens the group; the error says why there are no hardware counters here.
    pub fn open() -> Result<HardwareCounters, String> {
        let why = |e: std::io::Error| {
            let pmu = std::path::Path::new("/sys/bus/event_source/devices/cpu").exists();
            if pmu {
                format!("hardware counters are not available: perf_event_open: {e}")
            } else {
                format!(
                    "hardware counters are not available: the kernel has no PMU for this CPU \
                     (a virtual machine whose hypervisor does not pass the counters through; \
                     perf_event_open: {e})"
                )
            }
        };
        let mut group = Group::new().map_err(why)?;
        let mut add = |event: Hardware| {
            group.add(
                Builder::new(event)
                    .observe_self()
                    .any_cpu()
                    .exclude_kernel(true)
                    .exclude_hv(true),
            )
        };
        let cycles = add(Hardware::CPU_CYCLES).map_err(why)?;
        let instructions = add(Hardware::INSTRUCTIONS).map_err(why)?;
        let branch_misses = add(Hardware::BRANCH_MISSES).map_err(why)?;
        let cache_misses = add(Hardware::CACHE_MISSES).map_err(why)?;
        Ok(HardwareCounters {
            group,
            cycles,
            instructions,
            branch_misses,
            cache_misses,
        })
    }

    /// The counts while `f` runs.
    pub fn count(&mut self, f: impl FnOnce()) -> Result<Counts, String> {
        let failed = |e: std::io::Error| format!("reading hardware counters failed: {e}");
        self.group.reset().map_err(failed)?;
        self.group.enable().map_err(failed)?;
        f();
        self.group.disable().map_err(failed)?;
        let data = self.group.read().map_err(failed)?;
        let value = |counter: &Counter| data.get(counter).map_or(0, |entry| entry.value());
        Ok(Counts {
            cycles: value(&self.cycles),
            instructions: value(&self.instructions),
            branch_misses: value(&self.branch_misses),
            cache_misses: value(&self.cache_misses),
        })
    }
}
