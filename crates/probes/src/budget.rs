//! What a sweep does with the run's time budget: it measures a point only where the point
//! (and what must follow it) ends before the unit's deadline
//! ([`latlab_engine::Config::has_time_for`]), and says what it left out and how to measure
//! it ([`left_out`]).

use latlab_engine::Warning;
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
