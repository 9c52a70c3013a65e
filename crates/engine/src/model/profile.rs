//! What a benchmark's profile and allocation count found, as a result carries them: the
//! harness for users' code fills them in (`cargo bench -- --profile`, a counting
//! allocator), and every renderer shows them.

/// Where a benchmark spent its time, sampled by a profiler while it ran again for the
/// iteration count it was measured with.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Profile {
    /// The sampling event, such as `cpu-clock (software)`.
    pub event: String,
    /// Nanoseconds of the event between samples.
    pub period_ns: u64,
    /// Samples taken in the benchmark's own thread, user space.
    pub samples: u64,
    /// Samples the kernel could not record (its buffer was full).
    pub lost: u64,
    /// Turns of the benchmark's loop run under the profiler.
    pub iterations: u64,
    /// Wall time the profiled run took.
    pub duration_ns: u64,
    /// Functions by their share of samples, the hottest first.
    pub functions: Vec<HotFunction>,
    /// The hottest function's instructions with their samples; `None` where it could not be
    /// disassembled (then `annotation_note` says why).
    pub annotated: Option<AnnotatedFunction>,
    /// Why there is no annotated disassembly, or what limits it (no line information).
    pub annotation_note: Option<String>,
    /// Hardware counts per call, where the machine has hardware counters.
    pub counters: Option<Counters>,
    /// Why there are no hardware counts.
    pub counters_note: Option<String>,
}

/// One function of a profile.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct HotFunction {
    /// Demangled name without its hash, or the address where no symbol covers it.
    pub name: String,
    pub samples: u64,
    /// Its share of the profile's samples, 0 to 1.
    pub share: f64,
}

/// A function's instructions, each with the samples that fell on it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AnnotatedFunction {
    pub name: String,
    /// The function's address in the binary file (not at run time).
    pub address: u64,
    pub instructions: Vec<Instruction>,
}

/// One instruction of an annotated function.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Instruction {
    /// Its address in the binary file.
    pub address: u64,
    /// Intel syntax.
    pub text: String,
    pub samples: u64,
    /// Its share of the function's samples, 0 to 1.
    pub share: f64,
    /// `file:line` of the source it came from, where the binary has line information.
    pub line: Option<String>,
}

/// Hardware event counts per call of the benchmark: the counts of the loop with 4 calls
/// per turn less those of the loop with 1, divided by the extra calls, as the time is.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Counters {
    pub cycles: f64,
    pub instructions: f64,
    /// Instructions per cycle.
    pub ipc: f64,
    pub branch_misses: f64,
    /// Last-level cache misses, as the kernel's generic cache-misses event counts them.
    pub cache_misses: f64,
}

/// Memory allocated by one call of the benchmark, counted by the counting allocator.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Allocations {
    /// Allocations per call; a reallocation counts as one allocation of its new size.
    pub count: f64,
    /// Bytes those allocations asked for, per call.
    pub bytes: f64,
    /// Calls they were counted over.
    pub calls: u64,
}

/// What one call of a user's benchmark executed, counted rather than timed (`cargo bench --
/// --count instructions`): the same on every run of the same code on the same build, where
/// its time moves with the machine.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Counted {
    /// What counted: `callgrind` (Valgrind's, every instruction the process executed
    /// in the timed loops) or `perf` (the CPU's `instructions:u` counter).
    pub via: String,
    /// Instructions per call.
    pub instructions: f64,
    /// Per call, where Valgrind's cache simulation was asked for (`--count cache`): misses
    /// of the first-level caches (instructions and data) and of the last level, and the
    /// cycles they suggest (instructions, 10 per first-level miss and 100 per last-level
    /// one, as iai-callgrind estimates them).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub cache: Option<CacheCounts>,
    /// Calls counted: the slope's extra calls (four a turn against one).
    pub calls: u64,
}

/// Valgrind's simulated cache misses per call, and the cycles they suggest.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CacheCounts {
    pub l1_misses: f64,
    pub last_level_misses: f64,
    pub estimated_cycles: f64,
}
