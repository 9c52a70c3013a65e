//! What the synthetic machine's figures are: a core clock, three caches, and for everything
//! else a cost fixed by the benchmark's name.
//!
//! - **The core clock.** A cycle of [`CYCLE_NS`] (2.5 GHz): the add chain of
//!   `cpu.frequency/cycle` takes one cycle an add, the multiply chain three, the exclusive
//!   or one; a core that folds additions ([`Machine::folds_additions`]) runs the add chain
//!   seven times faster, as Intel's Golden Cove folds a chain of additions of an immediate.
//!   Everything of the `cpu.` family, and a chase that hits the first two caches, counts
//!   cycles: it follows the clock when a run's clock moves ([`Machine::clock_factor`]).
//! - **The caches.** A chase of `mem.latency` (`random`, `pagegroups`, `every-line`; a
//!   `sequential` one is prefetched and reads as an L1 hit) costs the latency of the first
//!   level that holds it: 32 KiB, 1 MiB and 32 MiB, as the kernel of the synthetic machine
//!   reports them, then memory. A ring over every line leaves each level at the cache's
//!   size. A ring of one line in four (`random`, `pagegroups`) leaves the first level at
//!   its size too (its lines reach a quarter of the sets), and the others at
//!   [`ONE_IN_FOUR_REACH`] times theirs, as the prefetchers fill the skipped lines: the span
//!   where that curve leaves a level is not the cache's size, as on the cores latlab has
//!   met (a 2 MiB L2 left at a span of 5 MiB).
//! - **Where a level ends** (a span within a factor [`LEVEL_END`] of where the chase
//!   leaves the level) a chase's figure depends on the physical pages its ring got, which
//!   differ from one process to the next: [`at_level_end`] says which points, and the
//!   noise of a synthetic run draws their effect ([`super::Noise::placement_sd`]).

/// One cycle of the synthetic core, in nanoseconds.
pub const CYCLE_NS: f64 = 0.4;

/// The synthetic caches' spans, smallest first, as [`crate::environment::Environment`]
/// reports them for the synthetic machine.
const CACHE_BYTES: [f64; 3] = [32.0 * 1024.0, 1024.0 * 1024.0, 32.0 * 1024.0 * 1024.0];
/// Each level's latency: the first two in cycles (they run at the core's clock), the
/// last-level cache in nanoseconds, as memory.
const L1_CYCLES: f64 = 4.0;
const L2_CYCLES: f64 = 14.0;
const L3_NS: f64 = 18.0;
const MEMORY_NS: f64 = 90.0;
/// How far from where a chase leaves a level (a factor, either way) its span lies at the
/// level's end.
const LEVEL_END: f64 = 1.5;
/// How many times its size each cache holds of a ring of one line in four, L1 first.
const ONE_IN_FOUR_REACH: [f64; 3] = [1.0, 2.5, 2.5];
/// How much faster a core that folds additions runs the add chain.
const FOLDING: f64 = 7.0;

/// The synthetic machine as one run finds it.
#[derive(Debug, Clone, Copy)]
pub struct Machine {
    /// The core clock's period over its nominal one: 1.06 is a clock 6% slower.
    pub clock_factor: f64,
    /// Whether the core folds chains of additions at rename.
    pub folds_additions: bool,
}

impl Default for Machine {
    fn default() -> Machine {
        Machine {
            clock_factor: 1.0,
            folds_additions: false,
        }
    }
}

impl Machine {
    /// The figure of `name` on this machine, per operation: modelled where the model
    /// knows it, else the cost its name fixes (`by_name`), times the clock for the `cpu.`
    /// family.
    pub fn figure_ns(&self, name: &str, by_name: f64) -> f64 {
        let cycle = CYCLE_NS * self.clock_factor;
        match name {
            "cpu.frequency/cycle" if self.folds_additions => cycle / FOLDING,
            "cpu.frequency/cycle" | "cpu.frequency/eor" => cycle,
            "cpu.frequency/multiply" => 3.0 * cycle,
            _ => match chase(name) {
                Some((layout, span)) => chase_ns(layout, span, cycle),
                None if name.starts_with("cpu.") => by_name * self.clock_factor,
                None => by_name,
            },
        }
    }
}

/// The latency of a chase of `layout` over `span` bytes, at a cycle of `cycle` ns.
fn chase_ns(layout: &str, span: f64, cycle: f64) -> f64 {
    if layout == "sequential" {
        return L1_CYCLES * cycle;
    }
    let latencies = [L1_CYCLES * cycle, L2_CYCLES * cycle, L3_NS];
    (reaches(layout).zip(latencies))
        .find(|(reach, _)| span <= *reach)
        .map_or(MEMORY_NS, |(_, latency)| latency)
}

/// The spans at which a chase of `layout` leaves each level.
fn reaches(layout: &str) -> impl Iterator<Item = f64> {
    let one_in_four = matches!(layout, "random" | "pagegroups");
    (CACHE_BYTES.iter().zip(ONE_IN_FOUR_REACH))
        .map(move |(size, reach)| if one_in_four { size * reach } else { *size })
}

/// Whether `name` is a chase whose span lies at a cache level's end, where the pages its
/// ring got rule its figure.
pub fn at_level_end(name: &str) -> bool {
    chase(name).is_some_and(|(layout, span)| {
        layout != "sequential"
            && reaches(layout).any(|end| span >= end / LEVEL_END && span <= end * LEVEL_END)
    })
}

/// The layout and span of a `mem.latency` chase named `name`.
fn chase(name: &str) -> Option<(&str, f64)> {
    let rest = name.strip_prefix("mem.latency/")?;
    let (layout, size) = rest.split_once('/')?;
    matches!(
        layout,
        "random" | "pagegroups" | "every-line" | "sequential"
    )
    .then(|| Some((layout, size_bytes(size)?)))
    .flatten()
}

/// The bytes of a size label (`45.2KiB`, `1MiB`, `512B`).
fn size_bytes(label: &str) -> Option<f64> {
    let (number, unit) = label.split_at(label.find(|c: char| c.is_ascii_alphabetic())?);
    let scale = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    Some(number.parse::<f64>().ok()? * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chase climbs a level past each cache's span, and follows the clock in the first
    /// two levels only; the points around each cache's end are those at a level's end.
    #[test]
    fn a_chase_climbs_past_each_cache_and_the_first_two_follow_the_clock() {
        let quick = Machine::default();
        let slow = Machine {
            clock_factor: 1.1,
            ..Machine::default()
        };
        let at = |m: &Machine, name: &str| m.figure_ns(name, 0.0);
        let curve: Vec<f64> = ["16KiB", "256KiB", "8MiB", "128MiB"]
            .iter()
            .map(|size| at(&quick, &format!("mem.latency/pagegroups/{size}")))
            .collect();
        assert!(curve.windows(2).all(|w| w[0] < w[1]), "{curve:?}");
        let l2 = "mem.latency/every-line/256KiB";
        assert!((at(&slow, l2) / at(&quick, l2) - 1.1).abs() < 1e-9);
        let memory = "mem.latency/random/128MiB";
        assert_eq!(at(&slow, memory), at(&quick, memory));
        assert!(at_level_end("mem.latency/random/45.2KiB"));
        assert!(!at_level_end("mem.latency/random/4KiB"));
        assert!(!at_level_end("mem.latency/sequential/32KiB"));
        assert!(!at_level_end("cpu.call/empty"));
    }

    /// The multiply chain reads three add cycles, unless the core folds the additions.
    #[test]
    fn the_multiply_chain_reads_three_cycles_unless_additions_fold() {
        let ratio = |m: Machine| {
            m.figure_ns("cpu.frequency/multiply", 0.0) / m.figure_ns("cpu.frequency/cycle", 0.0)
        };
        assert!((ratio(Machine::default()) - 3.0).abs() < 1e-9);
        let folding = Machine {
            folds_additions: true,
            ..Machine::default()
        };
        assert!(ratio(folding) > 20.0);
    }
}
