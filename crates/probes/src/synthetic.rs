//! What the synthetic machine's results cost where the probes' names say more than a
//! made-up figure ([`latlab_engine::host::FigureModel`]): the caches a chase hits, and the
//! results on the core clock.
//!
//! - **The core clock.** The results the probes declare on the core clock
//!   ([`latlab_engine::presentation::Presentation::on_core_clock`]), and a chase that hits
//!   the first two caches, count cycles: they follow the clock when a run's clock moves
//!   ([`Machine::clock_factor`]).
//! - **The caches.** A chase of `mem.latency` (`random`, `pagegroups`, `every-line`; a
//!   `sequential` one is prefetched and reads as an L1 hit) costs the latency of the first
//!   level that holds it: 32 KiB, 1 MiB and 32 MiB, as the kernel of the synthetic machine
//!   reports them, then memory. A ring over every line leaves each level at the cache's
//!   size. A ring of one line in four (`random`, `pagegroups`) leaves the first level at
//!   its size too (its lines reach a quarter of the sets), and the others at
//!   `ONE_IN_FOUR_REACH` times theirs, as the prefetchers fill the skipped lines: the span
//!   where that curve leaves a level is not the cache's size, as on the cores latlab has
//!   met (the book's methods, "Memory").
//! - **Where a level ends** (a span within a factor `LEVEL_END` of where the chase
//!   leaves the level) a chase's figure depends on the physical pages its ring got, which
//!   differ from one process to the next: the noise of a synthetic run draws their effect.

use latlab_engine::host::{FigureModel, Machine};
use latlab_engine::presentation::Presentations;
use std::sync::LazyLock;

/// The probes' model of the synthetic machine.
pub static MODEL: Probes = Probes;

/// The synthetic caches' spans, smallest first, as
/// [`latlab_engine::environment::Environment::synthetic`] reports them.
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

/// The probes' declarations, for the results on the core clock.
static DECLARED: LazyLock<Presentations> = LazyLock::new(crate::presentations);

/// The model of the synthetic machine that the probes' names give.
#[derive(Debug)]
pub struct Probes;

impl FigureModel for Probes {
    fn figure_ns(&self, machine: &Machine, name: &str, by_name: f64) -> f64 {
        match chase(name) {
            Some((layout, span)) => chase_ns(layout, span, machine.cycle_ns()),
            None if DECLARED.on_core_clock(name) => by_name * machine.clock_factor,
            None => by_name,
        }
    }

    fn placement_rules(&self, name: &str) -> bool {
        chase(name).is_some_and(|(layout, span)| {
            layout != "sequential"
                && reaches(layout).any(|end| span >= end / LEVEL_END && span <= end * LEVEL_END)
        })
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

/// The layout and span of a `mem.latency` chase named `name`.
fn chase(name: &str) -> Option<(&str, f64)> {
    let rest = name
        .strip_prefix(crate::mem::latency::SPEC.id)?
        .strip_prefix('/')?;
    let (layout, size) = rest.split_once('/')?;
    let layouts = ["random", "pagegroups", "every-line", "sequential"];
    let span = crate::options::parse_bytes(size, 0).ok()?;
    layouts.contains(&layout).then_some((layout, span as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_engine::environment::Environment;

    /// The chase climbs a level past each cache's span, and follows the clock in the first
    /// two levels only; the points around each cache's end are those at a level's end. The
    /// spans are those the synthetic machine's kernel reports.
    #[test]
    fn a_chase_climbs_past_each_cache_and_the_first_two_follow_the_clock() {
        let reported: Vec<f64> = (Environment::synthetic().caches.iter())
            .filter(|cache| cache.kind != "Instruction")
            .map(|cache| cache.size_bytes as f64)
            .collect();
        assert_eq!(reported, CACHE_BYTES);
        let quick = Machine::default();
        let slow = Machine {
            clock_factor: 1.1,
            ..Machine::default()
        };
        let at = |m: &Machine, name: &str| MODEL.figure_ns(m, name, 1.0);
        let curve: Vec<f64> = ["16KiB", "256KiB", "8MiB", "128MiB"]
            .iter()
            .map(|size| at(&quick, &format!("mem.latency/pagegroups/{size}")))
            .collect();
        assert!(curve.windows(2).all(|w| w[0] < w[1]), "{curve:?}");
        let l2 = "mem.latency/every-line/256KiB";
        assert!((at(&slow, l2) / at(&quick, l2) - 1.1).abs() < 1e-9);
        let memory = "mem.latency/random/128MiB";
        assert_eq!(at(&slow, memory), at(&quick, memory));
        assert!((at(&slow, "cpu.call/empty") - 1.1).abs() < 1e-9);
        assert_eq!(at(&slow, "syscall.getppid/getppid"), 1.0);
        assert!(MODEL.placement_rules("mem.latency/random/45.2KiB"));
        assert!(!MODEL.placement_rules("mem.latency/random/4KiB"));
        assert!(!MODEL.placement_rules("mem.latency/sequential/32KiB"));
        assert!(!MODEL.placement_rules("cpu.call/empty"));
    }
}
