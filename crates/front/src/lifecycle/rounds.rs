//! The units measured in rounds taken round-robin, each round merged into the record and
//! every results file rewritten after it.

use super::{Measured, RunRequest};
use crate::{Progress, ProgressUnit, TimeSpent, Unwritten};
use latlab_engine::budget::{Allowance, TimeBudget};
use latlab_engine::locks::RunLock;
use latlab_engine::model::{ProbeOutcome, ProbeStatus, RunRecord};
use latlab_engine::rounds::ProbeRounds;
use latlab_report::Durability;
use std::time::Instant;

/// The units measured in the request's rounds, and what they are measured with.
pub(super) struct Rounds<'a> {
    pub(super) request: &'a RunRequest,
    /// The machine-wide lock, when the run holds it: its waiters are answered between
    /// units, never while one measures.
    pub(super) lock: Option<&'a RunLock>,
    pub(super) measured: &'a mut dyn Measured,
    pub(super) progress: &'a mut Progress,
    pub(super) unwritten: &'a mut Unwritten,
    pub(super) spent: &'a mut TimeSpent,
    pub(super) budget: Option<TimeBudget>,
    /// The units, as the front end gave them: each one's name and rounds.
    pub(super) units: Vec<ProgressUnit>,
}

impl Rounds<'_> {
    /// Measures the units in the request's rounds, taken round-robin, each round merged
    /// into the record and every results file rewritten as it arrives; `true` when a signal
    /// stopped it.
    pub(super) fn measure(&mut self, record: &mut RunRecord) -> bool {
        let request = self.request;
        let mut merged: Vec<ProbeRounds> = Vec::with_capacity(self.units.len());
        for round in 0..request.rounds {
            self.measured.round_begins(round);
            for unit in 0..self.units.len() {
                let rounds = self.units[unit].rounds;
                let done = merged.get(unit).is_some_and(|m| !m.wants_another_round());
                if round >= rounds
                    || done
                    || (round > 0 && !self.measured.takes_another_round(unit))
                {
                    continue;
                }
                if round > 0 && !self.worth_another_round(unit) {
                    continue;
                }
                self.progress.unit_started(unit, round);
                let outcome = self.measure_round(unit, round);
                let interrupted = outcome.status == ProbeStatus::Interrupted;
                let skipped = matches!(outcome.status, ProbeStatus::Skipped { .. });
                match merged.get_mut(unit) {
                    Some(rounds) => rounds.add(outcome),
                    None => merged.push(ProbeRounds::first(outcome)),
                }
                let mut kept = self.measured.merged(merged[unit].outcome().clone());
                if let Some(class) = crate::core_class::pinned_class(record) {
                    crate::core_class::name_in_results(&mut kept, &class);
                }
                match record.probes.get_mut(unit) {
                    Some(earlier) => *earlier = kept,
                    None => record.probes.push(kept),
                }
                let rewrite = Instant::now();
                (request.files).write_so_far(record, self.unwritten, Durability::Cached);
                self.spent.rewrote(rewrite.elapsed());
                let again = round + 1 < rounds
                    && merged[unit].wants_another_round()
                    && self.measured.takes_another_round(unit);
                if !again && let Some(budget) = &mut self.budget {
                    budget.ended(unit);
                }
                self.progress.unit_finished(skipped, again);
                if let Some(lock) = self.lock {
                    lock.answer_waiters();
                }
                self.measured.measured(record, again);
                if interrupted {
                    return true;
                }
            }
        }
        false
    }

    /// Whether the budget has room for another round of `unit`; one it has not is left out
    /// (with the unit's rounds after it), and counted.
    fn worth_another_round(&mut self, unit: usize) -> bool {
        let (Some(budget), Some(left)) = (&mut self.budget, self.spent.left_for_units()) else {
            return true;
        };
        if budget.worth_another_round(unit, left) {
            return true;
        }
        budget.ended(unit);
        self.spent
            .rounds_left_out
            .push(self.units[unit].name.clone());
        false
    }

    /// Round `round` of `unit`, within its part of the budget.
    fn measure_round(&mut self, unit: usize, round: usize) -> ProbeOutcome {
        let allowance = match (&self.budget, self.spent.left_for_units()) {
            (Some(budget), Some(left)) => budget.allowance(unit, left),
            _ => Allowance::UNLIMITED,
        };
        let started = Instant::now();
        let outcome = self.measured.measure(unit, round, allowance);
        let took = started.elapsed();
        self.spent.units += took;
        (self.spent.rounds).push((self.units[unit].name.clone(), took, allowance));
        if let Some(budget) = &mut self.budget {
            budget.took(unit, took);
        }
        outcome
    }
}
