//! The run's time budget, shared among its units (a probe's round, a benchmark set's) by
//! what each typically costs, and shared again before each unit from the time actually
//! left, so that what this machine costs is learned as the run goes.
//!
//! Before each unit, the time the units have left (the budget less what was spent, less what
//! is kept for after the units) is divided among the units still to come in proportion to
//! their typical cost; the unit under way gets its part, which becomes its deadline
//! ([`crate::Config::deadline`]: a sweep leaves out the points that would end past it). Its
//! samples are scaled by how much of its usual cost fits that part at the pace the run has
//! shown ([`crate::Config::share`]): on a machine where the units take twice their typical
//! cost, each takes about half its samples rather than twice the time. A unit's later
//! rounds are forecast by what its last round took, which says more than any pace. A unit
//! that ends early leaves its time to those after it.

use std::time::Duration;

/// One typical second at the typical pace, counted before any unit: the first units'
/// durations move the pace without swinging it.
const PRIOR_S: f64 = 1.0;

/// A unit whose round is expected to take at most this part of the budget takes all its
/// samples: taking fewer would save almost nothing.
const SMALL_UNIT: f64 = 0.01;

/// The pace is kept within these bounds: one unit far off its typical cost (a cold disk, a
/// machine with another job) does not starve or flood the rest.
const PACE_BOUNDS: (f64, f64) = (0.25, 4.0);

/// What a unit may take of the run's budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allowance {
    /// Its part of the time left; `None` without a budget.
    pub time: Option<Duration>,
    /// The part of its usual samples that fits that time at the run's pace, from 0 to 1.
    pub share: f64,
}

impl Allowance {
    /// No budget: every sample, no deadline.
    pub const UNLIMITED: Allowance = Allowance {
        time: None,
        share: 1.0,
    };

    /// Whether the unit is asked to take fewer than its usual samples (by a hundredth or
    /// more).
    pub fn is_scaled(&self) -> bool {
        self.share < 0.99
    }
}

/// A run's time budget as its units spend it.
#[derive(Debug, Clone)]
pub struct TimeBudget {
    total: Duration,
    /// Each unit's typical cost of one round, in seconds.
    typical_s: Vec<f64>,
    /// The rounds each unit has left.
    rounds_left: Vec<usize>,
    /// What each unit's last round took, in seconds, once it has taken one.
    last_took_s: Vec<Option<f64>>,
    /// What the rounds measured so far typically cost, and what they took, in seconds.
    typical_done_s: f64,
    took_s: f64,
}

impl TimeBudget {
    /// A budget of `total` for `units`, each its typical cost in seconds (of all its rounds)
    /// and its rounds.
    pub fn new(total: Duration, units: impl IntoIterator<Item = (f64, usize)>) -> TimeBudget {
        let (typical_s, rounds_left): (Vec<f64>, Vec<usize>) = (units.into_iter())
            .map(|(typical, rounds)| (typical.max(0.0) / rounds.max(1) as f64, rounds))
            .unzip();
        TimeBudget {
            total,
            last_took_s: vec![None; rounds_left.len()],
            typical_s,
            rounds_left,
            typical_done_s: 0.0,
            took_s: 0.0,
        }
    }

    /// How long units have taken against their typical cost so far (1: typical).
    pub fn pace(&self) -> f64 {
        let pace = (self.took_s + PRIOR_S) / (self.typical_done_s + PRIOR_S);
        pace.clamp(PACE_BOUNDS.0, PACE_BOUNDS.1)
    }

    /// What the next round of `unit` may take, when the units have `left` of the budget:
    /// its part of `left` by what its round is expected to take, and the share of its
    /// samples that fits (the time left over the time the rounds to come are expected to
    /// take, the same for every unit; all of them for a unit too short for its samples to
    /// matter, a hundredth of the budget).
    pub fn allowance(&self, unit: usize, left: Duration) -> Allowance {
        let mine = self.expected_s(unit);
        let pending: f64 = (0..self.typical_s.len())
            .map(|u| self.expected_s(u) * self.rounds_left[u] as f64)
            .sum();
        let part = if pending > 0.0 {
            (mine / pending).min(1.0)
        } else {
            1.0
        };
        let time = left.mul_f64(part);
        let share = if mine <= SMALL_UNIT * self.total.as_secs_f64() {
            1.0
        } else {
            (time.as_secs_f64() / mine).min(1.0)
        };
        Allowance {
            time: Some(time),
            share,
        }
    }

    /// Whether another round of `unit` is worth taking when the units have `left`: its
    /// part is at least half what the round is expected to take. A later round adds how far
    /// the figures move between rounds; squeezed below that, it would add little but its
    /// least samples' time, so it is left out instead.
    pub fn worth_another_round(&self, unit: usize, left: Duration) -> bool {
        let time = self.allowance(unit, left).time.unwrap_or(Duration::MAX);
        time.as_secs_f64() >= 0.5 * self.expected_s(unit)
    }

    /// What the next round of `unit` is expected to take, in seconds: what its last took,
    /// else its typical cost at the run's pace.
    fn expected_s(&self, unit: usize) -> f64 {
        self.last_took_s[unit].unwrap_or(self.typical_s[unit] * self.pace())
    }

    /// A round of `unit` took `took`.
    pub fn took(&mut self, unit: usize, took: Duration) {
        self.rounds_left[unit] = self.rounds_left[unit].saturating_sub(1);
        self.typical_done_s += self.typical_s[unit];
        self.took_s += took.as_secs_f64();
        self.last_took_s[unit] = Some(took.as_secs_f64());
    }

    /// `unit` takes no more rounds (it took its samples in one, was skipped or failed): its
    /// part goes to the others.
    pub fn ended(&mut self, unit: usize) {
        self.rounds_left[unit] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    /// The time left is shared by expected cost among the rounds to come; every unit takes
    /// the share of its samples that the time left allows.
    #[test]
    fn the_time_left_is_shared_by_expected_cost() {
        let budget = TimeBudget::new(30 * S, [(6.0, 3), (12.0, 1), (6.0, 1)]);
        let pace = budget.pace();
        // Pending: (2 × 3 + 12 + 6) × pace; the first unit's round is 2 × pace of them.
        let first = budget.allowance(0, 24 * S);
        assert_eq!(first.time, Some(2 * S));
        assert!(
            (first.share - (1.0 / pace).min(1.0)).abs() < 1e-9,
            "{first:?}"
        );
        let second = budget.allowance(1, 24 * S);
        assert_eq!(second.time, Some(12 * S));
        assert_eq!(second.share, first.share);
        assert!(!budget.allowance(1, 48 * S).is_scaled());
        // Half the time for the same work: half the samples.
        let halved = budget.allowance(1, S.mul_f64(12.0 * pace));
        assert!((halved.share - 0.5).abs() < 0.05, "{halved:?}");
        // A unit too short to matter keeps all its samples.
        let short = TimeBudget::new(30 * S, [(0.1, 1), (30.0, 1)]);
        assert!(!short.allowance(0, 3 * S).is_scaled());
        assert!(short.allowance(1, 3 * S).is_scaled());
    }

    /// Units that take twice their typical cost make those after them take fewer samples
    /// (not more time); a unit's later rounds are forecast by its last; a unit that ends
    /// early leaves its part to the others.
    #[test]
    fn the_pace_is_learned_and_ended_units_give_their_part_away() {
        let mut budget = TimeBudget::new(60 * S, [(4.0, 1), (4.0, 1), (4.0, 1), (4.0, 1)]);
        assert_eq!(budget.allowance(3, 16 * S).share, 1.0);
        budget.took(0, 8 * S);
        budget.took(1, 8 * S);
        assert!(budget.pace() > 1.5, "{}", budget.pace());
        let slow = budget.allowance(2, 8 * S);
        assert_eq!(slow.time, Some(4 * S));
        assert!(slow.share < 0.7, "{slow:?}");
        budget.ended(2);
        let last = budget.allowance(3, 8 * S);
        assert_eq!(
            last.time,
            Some(8 * S),
            "all that is left is the last unit's"
        );
        assert!(last.share > slow.share);
        assert!(budget.worth_another_round(3, 8 * S));
        assert!(
            !budget.worth_another_round(3, S),
            "an eighth of the time it takes"
        );
        let mut rounds = TimeBudget::new(60 * S, [(3.0, 3), (3.0, 1)]);
        rounds.took(0, 3 * S);
        let second = rounds.allowance(0, 10 * S);
        let expected_pending = 3.0 * 2.0 + 3.0 * rounds.pace();
        assert!(
            (second.share - 10.0 / expected_pending).abs() < 1e-9,
            "{second:?}"
        );
    }

    /// One unit far off its typical cost moves the pace only within its bounds.
    #[test]
    fn the_pace_is_bounded() {
        let mut budget = TimeBudget::new(30 * S, [(0.01, 1), (1.0, 1)]);
        budget.took(0, 100 * S);
        assert_eq!(budget.pace(), PACE_BOUNDS.1);
        let mut quick = TimeBudget::new(30 * S, [(100.0, 1), (1.0, 1)]);
        quick.took(0, Duration::ZERO);
        assert_eq!(quick.pace(), PACE_BOUNDS.0);
    }
}
