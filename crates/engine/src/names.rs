//! The names that tie a probe's results to the renderers that read them.
//!
//! The report finds the L1 hit, the plots' working sets and the IPC histograms by name; a
//! probe that renamed one of them would silently turn a headline row into "no … in this
//! run". Every name or key read across crates is therefore a constant here, used by the
//! probe that writes it and the renderer that reads it, and an end-to-end test checks that a
//! real run produces every name the headline table reads.

/// The names of the run's stability checks, and which checks speak for which results.
pub mod result {
    /// The run's stability check (`latlab_probes::stability`): a main-memory chase, a chase
    /// within the last cache level and a core-to-core pair at the start and the end of every
    /// run.
    pub const STABILITY_MEMORY_CHASE: &str = "stability/memory-chase";
    pub const STABILITY_CACHE_CHASE: &str = "stability/cache-chase";
    pub const STABILITY_CORE_TO_CORE: &str = "stability/core-to-core";

    /// The stability checks that speak for result `name`: a move of one of those checks'
    /// figures during a run, or a difference between two runs, means the machine under the
    /// runs changed for this family. The memory chases (main memory and the last cache level)
    /// speak for the figures of the memory hierarchy (`mem.latency`, `mem.bandwidth`,
    /// `mem.memcpy`); the core-to-core pair for those that cross between CPUs (core-to-core,
    /// IPC, the unpinned pipe, the two-CPU hand-off, contended mutexes and atomics).
    pub fn checked_by(name: &str) -> &'static [&'static str] {
        const MEMORY: [&str; 3] = ["mem.latency/", "mem.bandwidth/", "mem.memcpy/"];
        const ACROSS_CPUS: [&str; 4] = [
            "thread.core_to_core/",
            "ipc.",
            "proc.pipe/unpinned/",
            "thread.handoff/two-cpus",
        ];
        let contended = (name.starts_with("thread.mutex/") || name.starts_with("thread.atomic/"))
            && name.ends_with("/contended");
        if MEMORY.iter().any(|p| name.starts_with(p)) {
            &[STABILITY_MEMORY_CHASE, STABILITY_CACHE_CHASE]
        } else if contended || ACROSS_CPUS.iter().any(|p| name.starts_with(p)) {
            &[STABILITY_CORE_TO_CORE]
        } else {
            &[]
        }
    }
}

/// Parameter keys that renderers read.
pub mod key {
    /// The benchmark a user's benchmark is compared with (latlab-bench).
    pub const BASELINE: &str = "baseline";
    /// Its time divided by the baseline's: the median of the paired ratios.
    pub const RATIO: &str = "ratio";
    /// The 95% confidence interval of that ratio.
    pub const RATIO_CI95: &str = "ratio_ci95";
    /// The calls per turn of the two loops a user's benchmark's slope is taken between.
    pub const CALLS_PER_TURN: &str = "calls_per_turn";
    /// A user's benchmark's time per call in core cycles, against the cycle the harness
    /// measured ([`crate::cycle::measure`]) before its first benchmark.
    pub const CYCLES_PER_CALL: &str = "cycles_per_call";
    /// That cycle's length in ns.
    pub const CORE_CYCLE_NS: &str = "core_cycle_ns";
    /// The class of core a pinned run measured on, where the machine has more than one
    /// ([`crate::environment::name_class_of`]).
    pub const CORE_CLASS: &str = "core_class";
    /// Bytes a working set spans (`mem.latency`, `mem.bandwidth`).
    pub const WORKING_SET_BYTES: &str = "working_set_bytes";
    /// Bytes of a file or a copy, by size (`file.*`, `mem.memcpy`).
    pub const SIZE_BYTES: &str = "size_bytes";
    /// Where the latency curve puts the end of a cache level.
    pub const SIZE_ESTIMATE_BYTES: &str = "size_estimate_bytes";
    /// Bytes one `mem.memcpy` call copies.
    pub const COPY_BYTES: &str = "copy_bytes";
    /// The slope of the memcpy curve's lower envelope at a size.
    pub const DERIVATIVE_NS_PER_BYTE: &str = "derivative_ns_per_byte";
    /// The distance between the lines a chase ring uses.
    pub const STRIDE_BYTES: &str = "stride_bytes";
    /// A chase ring's layout (`random`, `pagegroups`, `sequential`).
    pub const LAYOUT: &str = "layout";
    /// What a bandwidth loop does (`read`, `write`, `modify`).
    pub const ACCESS: &str = "access";
    /// Which elements a bandwidth loop visits (`all`, `every4th`).
    pub const PATTERN: &str = "pattern";
    /// The two CPUs of a pair a figure was measured between.
    pub const CPU_A: &str = "cpu_a";
    pub const CPU_B: &str = "cpu_b";
    /// An L2 hit on the measuring core when a CPU pair was measured: the line between one
    /// core's SMT siblings and two cores.
    pub const L2_HIT_NS: &str = "l2_hit_ns";
    /// A core-to-core pair's median round trip, beside its one-way figure.
    pub const ROUND_TRIP_NS: &str = "round_trip_ns";
    /// How a result's time per operation was obtained, when not by the empty-loop
    /// subtraction: `slope` (between two unroll counts).
    pub const TIMING: &str = "timing";
    /// Threads that ran the measured loop at once.
    pub const THREADS: &str = "threads";
    /// The CPUs a result ran on.
    pub const CPUS: &str = "cpus";
    /// A latency histogram in power-of-two microsecond buckets.
    pub const HISTOGRAM_US: &str = "histogram_us";
    pub const P50_US: &str = "p50_us";
    pub const P99_US: &str = "p99_us";
    /// Round trips that missed their deadline.
    pub const MISSES: &str = "misses";
    /// A scheduled job's completion time over the same class's alone.
    pub const SLOWDOWN_VS_ALONE: &str = "slowdown_vs_alone";
    /// The share of its completion time a job spent on a CPU.
    pub const CPU_SHARE: &str = "cpu_share";
    /// A load's latency in core cycles, against the cycle the run measured.
    pub const CYCLES_PER_LOAD: &str = "cycles_per_load";
    /// Counts of events a result's samples came from (wake-ups got and wanted, jobs run and
    /// completed, round trips that missed their deadline): a result measured in rounds
    /// counts them over all its rounds.
    pub const COUNTED_OVER_ROUNDS: &[&str] = &[
        "wake_ups",
        "wake_ups_wanted",
        "jobs",
        "completed",
        MISSES,
        "same_cpu_round_trips",
    ];
}
