//! How long a run has left: each unit's typical duration, scaled by how long the units done
//! so far took against theirs, so that a slower or faster machine corrects it as the run
//! goes; what comes after the units (a closing stability check) is expected to take as long
//! as what came before them did.

use std::time::{Duration, Instant};

/// How long a run has left.
#[derive(Debug)]
pub(super) struct Estimate {
    /// Each planned unit's typical duration in the suite, in plan order.
    typical_s: Vec<f64>,
    started: Instant,
    /// How long the opening stability check took, once the first unit starts.
    opening_check: Option<Duration>,
    /// The unit under way and when it started.
    current: Option<(usize, Instant)>,
    /// The first unit after those finished.
    after_finished: usize,
    /// Seconds the finished units took, and their typical seconds.
    done_s: f64,
    done_typical_s: f64,
}

/// Typical seconds of finished units below which their pace is not yet trusted.
const MIN_EVIDENCE_S: f64 = 0.5;

impl Estimate {
    pub(super) fn new(typical_s: Vec<f64>, started: Instant) -> Estimate {
        Estimate {
            typical_s,
            started,
            opening_check: None,
            current: None,
            after_finished: 0,
            done_s: 0.0,
            done_typical_s: 0.0,
        }
    }

    pub(super) fn unit_started(&mut self, index: usize, now: Instant) {
        if self.opening_check.is_none() {
            self.opening_check = Some(now - self.started);
        }
        self.current = Some((index, now));
    }

    pub(super) fn unit_finished(&mut self, now: Instant, skipped: bool) {
        if let Some((index, started)) = self.current.take() {
            if !skipped {
                self.done_s += (now - started).as_secs_f64();
                self.done_typical_s += self.typical_s[index];
            }
            self.after_finished = index + 1;
        }
    }

    /// The unit under way is not measured in later rounds (`units` to a round): their
    /// share of its time is not left.
    pub(super) fn leave_out_later_rounds(&mut self, units: usize) {
        if let Some((index, _)) = self.current {
            for later in (index + units..self.typical_s.len()).step_by(units.max(1)) {
                self.typical_s[later] = 0.0;
            }
        }
    }

    /// This machine's pace against the typical one: how long the finished units took for
    /// each typical second, once there is enough of them to tell.
    fn pace(&self) -> f64 {
        if self.done_typical_s < MIN_EVIDENCE_S {
            1.0
        } else {
            (self.done_s / self.done_typical_s).clamp(0.1, 10.0)
        }
    }

    /// Time left at `now`: the rest of the unit under way, the units after it and the
    /// closing stability check. Before the first unit starts, every unit is left.
    pub(super) fn left(&self, now: Instant) -> Duration {
        let pace = self.pace();
        let (next, current_left) = match self.current {
            Some((index, started)) => {
                let spent = (now - started).as_secs_f64();
                (index + 1, (self.typical_s[index] * pace - spent).max(0.0))
            }
            None => (self.after_finished, 0.0),
        };
        let rest: f64 = self.typical_s.get(next..).unwrap_or_default().iter().sum();
        let closing = self.opening_check.map_or(0.0, |d| d.as_secs_f64());
        Duration::from_secs_f64(current_left + rest * pace + closing)
    }
}

/// `about 17 s left`, `about 2 min 5 s left`, `finishing`.
pub(super) fn describe_left(left: Duration) -> String {
    let seconds = left.as_secs_f64().round() as u64;
    match seconds {
        0 => "finishing".to_string(),
        1..60 => format!("about {seconds} s left"),
        _ => format!("about {} min {} s left", seconds / 60, seconds % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    #[test]
    fn the_estimate_counts_what_is_left_at_the_typical_pace_first() {
        let t0 = Instant::now();
        let mut estimate = Estimate::new(vec![1.0, 4.0, 2.0], t0);
        assert_eq!(estimate.left(t0), seconds(7.0));
        // A 0.5 s opening check: the closing one is expected to take as long.
        estimate.unit_started(0, t0 + seconds(0.5));
        assert_eq!(estimate.left(t0 + seconds(0.5)), seconds(7.5));
        assert_eq!(estimate.left(t0 + seconds(1.0)), seconds(7.0));
        // A probe running over its typical time leaves nothing of it, not a negative.
        assert_eq!(estimate.left(t0 + seconds(3.0)), seconds(6.5));
    }

    #[test]
    fn a_slower_machine_scales_what_is_left() {
        let t0 = Instant::now();
        let mut estimate = Estimate::new(vec![1.0, 4.0, 2.0], t0);
        estimate.unit_started(0, t0);
        // Twice as slow as typical on the first probe.
        estimate.unit_finished(t0 + seconds(2.0), false);
        assert_eq!(estimate.left(t0 + seconds(2.0)), seconds(12.0));
        estimate.unit_started(1, t0 + seconds(2.0));
        // Halfway through the second probe at that pace.
        assert_eq!(estimate.left(t0 + seconds(6.0)), seconds(8.0));
        estimate.unit_finished(t0 + seconds(10.0), false);
        estimate.unit_started(2, t0 + seconds(10.0));
        estimate.unit_finished(t0 + seconds(14.0), false);
        assert_eq!(estimate.left(t0 + seconds(14.0)), Duration::ZERO);
    }

    #[test]
    fn too_little_evidence_keeps_the_typical_pace() {
        let t0 = Instant::now();
        let mut estimate = Estimate::new(vec![0.1, 3.0], t0);
        estimate.unit_started(0, t0);
        estimate.unit_finished(t0 + seconds(1.0), false);
        assert_eq!(estimate.left(t0 + seconds(1.0)), seconds(3.0));
    }

    /// A skipped probe (the GPU family without a GPU) took no time of its typical
    /// duration: it leaves the estimate, and the pace stays what the measured probes set.
    #[test]
    fn a_skipped_probe_does_not_set_the_pace() {
        let t0 = Instant::now();
        let mut estimate = Estimate::new(vec![2.0, 20.0, 2.0], t0);
        estimate.unit_started(0, t0);
        estimate.unit_finished(t0 + seconds(2.0), false);
        estimate.unit_started(1, t0 + seconds(2.0));
        estimate.unit_finished(t0 + seconds(2.0), true);
        assert_eq!(estimate.left(t0 + seconds(2.0)), seconds(2.0));
    }

    /// Two probes in two rounds: the first, skipped in round one, is not measured in round
    /// two, so its second share is not left.
    #[test]
    fn a_probe_left_out_of_later_rounds_leaves_their_time() {
        let t0 = Instant::now();
        let mut estimate = Estimate::new(vec![1.0, 2.0, 1.0, 2.0], t0);
        estimate.unit_started(0, t0);
        estimate.leave_out_later_rounds(2);
        estimate.unit_finished(t0, true);
        assert_eq!(estimate.left(t0), seconds(4.0));
    }

    #[test]
    fn time_left_reads_as_a_person_would_say_it() {
        assert_eq!(describe_left(seconds(0.4)), "finishing");
        assert_eq!(describe_left(seconds(16.6)), "about 17 s left");
        assert_eq!(describe_left(seconds(125.0)), "about 2 min 5 s left");
    }
}
