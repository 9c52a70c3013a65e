//! The names that tie a probe's results to the renderers that read them.
//!
//! The report finds the L1 hit, the plots' working sets and the IPC histograms by name; a
//! probe that renamed one of them would silently turn a headline row into "no … in this
//! run". Every name or key read across crates is therefore a constant here, used by the
//! probe that writes it and the renderer that reads it, and an end-to-end test checks that a
//! real run produces every name the headline table reads.

/// The names of the run's stability checks; which of them speak for which results, each
/// probe declares ([`crate::presentation::CheckedBy`]).
pub mod result {
    /// The run's stability check (`latlab_probes::stability`): a main-memory chase, a chase
    /// within the last cache level and a core-to-core pair at the start and the end of every
    /// run.
    pub const STABILITY_MEMORY_CHASE: &str = "stability/memory-chase";
    pub const STABILITY_CACHE_CHASE: &str = "stability/cache-chase";
    pub const STABILITY_CORE_TO_CORE: &str = "stability/core-to-core";
}

/// Parameter keys that renderers read.
pub mod key {
    use crate::parameters::Key;

    /// The benchmark a user's benchmark is compared with (latlab-bench).
    pub const BASELINE: Key = Key::new("baseline");
    /// Its time divided by the baseline's: the median of the paired ratios.
    pub const RATIO: Key = Key::new("ratio");
    /// The 95% confidence interval of that ratio.
    pub const RATIO_CI95: Key = Key::new("ratio_ci95");
    /// The calls per turn of the two loops a user's benchmark's slope is taken between.
    pub const CALLS_PER_TURN: Key = Key::new("calls_per_turn");
    /// A user's benchmark's time per call in core cycles, against the cycle the harness
    /// measured ([`crate::cycle::measure`]) before its first benchmark.
    pub const CYCLES_PER_CALL: Key = Key::new("cycles_per_call");
    /// That cycle's length in ns.
    pub const CORE_CYCLE_NS: Key = Key::new("core_cycle_ns");
    /// The class of core a pinned run measured on, where the machine has more than one
    /// ([`crate::environment::name_class_of`]).
    pub const CORE_CLASS: Key = Key::new("core_class");
    /// Bytes a working set spans (`mem.latency`, `mem.bandwidth`).
    pub const WORKING_SET_BYTES: Key = Key::new("working_set_bytes");
    /// Bytes of a file or a copy, by size (`file.*`, `mem.memcpy`).
    pub const SIZE_BYTES: Key = Key::new("size_bytes");
    /// Where the latency curve puts the end of a cache level.
    pub const SIZE_ESTIMATE_BYTES: Key = Key::new("size_estimate_bytes");
    /// Bytes one `mem.memcpy` call copies.
    pub const COPY_BYTES: Key = Key::new("copy_bytes");
    /// The slope of the memcpy curve's lower envelope at a size.
    pub const DERIVATIVE_NS_PER_BYTE: Key = Key::new("derivative_ns_per_byte");
    /// The distance between the lines a chase ring uses.
    pub const STRIDE_BYTES: Key = Key::new("stride_bytes");
    /// A chase ring's layout (`random`, `pagegroups`, `sequential`).
    pub const LAYOUT: Key = Key::new("layout");
    /// What a bandwidth loop does (`read`, `write`, `modify`).
    pub const ACCESS: Key = Key::new("access");
    /// Which elements a bandwidth loop visits (`all`, `every4th`).
    pub const PATTERN: Key = Key::new("pattern");
    /// The two CPUs of a pair a figure was measured between.
    pub const CPU_A: Key = Key::new("cpu_a");
    pub const CPU_B: Key = Key::new("cpu_b");
    /// An L2 hit on the measuring core when a CPU pair was measured: the line between one
    /// core's SMT siblings and two cores.
    pub const L2_HIT_NS: Key = Key::new("l2_hit_ns");
    /// A core-to-core pair's median round trip, beside its one-way figure.
    pub const ROUND_TRIP_NS: Key = Key::new("round_trip_ns");
    /// How a result's time per operation was obtained, when not by the empty-loop
    /// subtraction: `slope` (between two unroll counts).
    pub const TIMING: Key = Key::new("timing");
    /// Threads that ran the measured loop at once.
    pub const THREADS: Key = Key::new("threads");
    /// The CPUs a result ran on.
    pub const CPUS: Key = Key::new("cpus");
    /// A latency histogram in power-of-two microsecond buckets.
    pub const HISTOGRAM_US: Key = Key::new("histogram_us");
    pub const P50_US: Key = Key::new("p50_us");
    pub const P99_US: Key = Key::new("p99_us");
    /// Round trips that missed their deadline.
    pub const MISSES: Key = Key::summed("misses");
    /// A scheduled job's completion time over the same class's alone.
    pub const SLOWDOWN_VS_ALONE: Key = Key::new("slowdown_vs_alone");
    /// The share of its completion time a job spent on a CPU.
    pub const CPU_SHARE: Key = Key::new("cpu_share");
    /// A load's latency in core cycles, against the cycle the run measured.
    pub const CYCLES_PER_LOAD: Key = Key::scaled_with_median("cycles_per_load");
    /// The bytes of one cache line a chase ring is laid out by (`mem.latency`, `gpu.memory`, `gpu.spread`).
    pub const LINE_BYTES: Key = Key::new("line_bytes");
    /// Operations one call of a benchmark performs, when it performs several (the engine's slope, pooled setups).
    pub const OPERATIONS_PER_CALL: Key = Key::new("operations_per_call");
    /// A distribution's mean, best, 90th and 99.9th percentiles and worst, in microseconds, beside [`P50_US`] and [`P99_US`].
    pub const AVG_US: Key = Key::new("avg_us");
    pub const BEST_US: Key = Key::new("best_us");
    pub const P90_US: Key = Key::new("p90_us");
    pub const P99_9_US: Key = Key::new("p99.9_us");
    pub const WORST_US: Key = Key::new("worst_us");
}
