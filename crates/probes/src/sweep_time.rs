//! What a sweep does with the run's time budget: it measures a point only where the point
//! (and what must follow it) ends before the unit's deadline
//! ([`latlab_engine::Config::has_time_for`]), and says what it left out and how to measure
//! it ([`left_out`]).

use latlab_engine::{BenchResult, Warning};
use std::time::{Duration, Instant};

/// The note on the points a sweep left out to keep the run within its budget: `part` names
/// them (`mem.latency working sets past 64 MiB`).
pub(crate) fn left_out(part: &str) -> Warning {
    Warning::part_skipped(
        part,
        "left out to keep the run within its time budget; a larger --budget, or --budget \
         none, measures them",
    )
}

/// Notes on the last of `results` that the points `left` (named after `what`: `mem.bandwidth
/// working sets`) were left out for the budget; nothing where none was, or where nothing was
/// measured to carry the note.
pub(crate) fn note_left_out(results: &mut [BenchResult], what: &str, left: &[String]) {
    let (false, Some(last)) = (left.is_empty(), results.last_mut()) else {
        return;
    };
    let points = left.join(", ");
    let part = match what {
        "" => points,
        what => format!("{what} {points}"),
    };
    last.warnings.push(left_out(&part));
}

/// How long a sweep's points take, for the forecasts of the points after them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PointClock {
    began: Instant,
    /// When the point under way began, and how long the last one took.
    point_began: Instant,
    pub last: Duration,
}

impl PointClock {
    /// The sweep begins now.
    pub fn start() -> PointClock {
        let now = Instant::now();
        PointClock {
            began: now,
            point_began: now,
            last: Duration::ZERO,
        }
    }

    /// A point begins now.
    pub fn point_begins(&mut self) {
        self.point_began = Instant::now();
    }

    /// The point under way ended now.
    pub fn point_ended(&mut self) {
        self.last = self.point_began.elapsed();
    }

    /// The time since the sweep began.
    pub fn elapsed(&self) -> Duration {
        self.began.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PROBES, ProbeContext};

    /// Probe `id` on the synthetic machine, with a 64 KiB largest working set and a deadline
    /// already past.
    fn out_of_time(id: &str) -> Vec<BenchResult> {
        let probe = PROBES.iter().find(|p| p.id == id).unwrap();
        let mut runner = crate::synthetic_runner();
        runner.scoped(
            |config| config.deadline = Some(Instant::now()),
            |runner| {
                let mut ctx = ProbeContext::for_test(runner);
                ctx.set_max_size(64 << 10);
                (probe.run)(&mut ctx).unwrap()
            },
        )
    }

    /// What the results say was left out for the budget.
    fn left_out_parts(results: &[BenchResult]) -> Vec<String> {
        (results.iter())
            .flat_map(|r| &r.warnings)
            .filter_map(|warning| match warning {
                Warning::PartSkipped { part, reason } if reason.contains("time budget") => {
                    Some(part.clone())
                }
                _ => None,
            })
            .collect()
    }

    /// Out of time, a sweep keeps what it must (its first point; the headline's largest
    /// working set) and says what it left out.
    #[test]
    fn sweeps_out_of_time_keep_what_they_must_and_say_what_they_left_out() {
        let latency = out_of_time("mem.latency");
        let curve = (latency.iter())
            .filter(|r| r.name.starts_with("mem.latency/pagegroups/"))
            .count();
        assert_eq!(curve, 1);
        let parts = left_out_parts(&latency);
        assert!(
            parts
                .iter()
                .any(|p| p.starts_with("mem.latency working sets past 4KiB")),
            "{parts:?}"
        );
        let memcpy = out_of_time("mem.memcpy");
        assert_eq!(memcpy.len(), 1, "the first size only");
        assert_eq!(left_out_parts(&memcpy), ["mem.memcpy sizes from 2B"]);
        let bandwidth = out_of_time("mem.bandwidth");
        assert!(!bandwidth.is_empty());
        assert!(
            bandwidth.iter().all(|r| r.name.contains("/64KiB")),
            "only the largest working set"
        );
        let parts = left_out_parts(&bandwidth);
        assert!(
            parts.len() == 1 && parts[0].starts_with("mem.bandwidth working sets 4KiB"),
            "{parts:?}"
        );
    }

    /// Out of time, `mem.loaded` keeps its first mix and its first peak, reads, and names
    /// the mixes and peaks it left out.
    #[test]
    fn the_loaded_curve_out_of_time_keeps_its_read_mix_and_says_what_it_left_out() {
        let loaded = out_of_time("mem.loaded");
        let names: Vec<&str> = loaded.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "mem.loaded/read/0",
                "mem.loaded/read/1",
                "mem.loaded/read/2",
                "mem.loaded/read/3",
                "mem.loaded/peak/read"
            ]
        );
        assert_eq!(
            left_out_parts(&loaded),
            [
                "mem.loaded curves of copy, triad, write",
                "mem.loaded peaks of 3to1, triad, copy, write"
            ]
        );
    }
}
