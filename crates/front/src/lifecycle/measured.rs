//! What a run measures, as the lifecycle sees it: the [`Measured`] trait each front end
//! implements.

use crate::{Progress, ProgressUnit, TimeWords, Unwritten};
use latlab_engine::Interrupted;
use latlab_engine::Runner;
use latlab_engine::budget::Allowance;
use latlab_engine::model::{ProbeOutcome, RunRecord};
use latlab_report::ExportError;

/// What a run measures: a set of probes, or of benchmark sets. The lifecycle calls these in
/// order: [`units`](Measured::units), [`start`](Measured::start), then
/// for each round and unit [`measure`](Measured::measure) and
/// [`measured`](Measured::measured), then [`finish`](Measured::finish),
/// [`text`](Measured::text) and [`write_more`](Measured::write_more).
pub trait Measured {
    /// The units, in the order they are measured, for a run of `rounds` rounds: each one's
    /// name, typical cost and rounds (at most `rounds`), as the lifecycle measures them and
    /// the progress line and the time budget count them.
    fn units(&self, rounds: usize) -> Vec<ProgressUnit>;

    /// The runner to measure with (on the request's host, with the engine's settings as the
    /// controls left them, naming each measurement on the progress line), and the record as
    /// it begins: what else is needed to measure is made here, and what comes before the
    /// units is taken (a stability check, said on `progress`). `Err` when a signal stopped
    /// it; nothing is measured then.
    fn start(
        &mut self,
        runner: Runner,
        record: &mut RunRecord,
        progress: &Progress,
    ) -> Result<(), Interrupted>;

    /// Round `round` (from 0) begins.
    fn round_begins(&mut self, _round: usize) {}

    /// Measures round `round` of unit `unit` within `allowance`, its part of the run's time
    /// budget (its samples scaled by [`Allowance::share`], and a deadline): its outcome,
    /// `Interrupted` when a signal stopped it.
    fn measure(&mut self, unit: usize, round: usize, allowance: Allowance) -> ProbeOutcome;

    /// Whether `unit` takes another round as far as the front end knows (a set that took all
    /// its samples in one round does not); the rounds merged decide too.
    fn takes_another_round(&self, _unit: usize) -> bool {
        true
    }

    /// The merged rounds of a unit as the record keeps them.
    fn merged(&self, outcome: ProbeOutcome) -> ProbeOutcome {
        outcome
    }

    /// A round of a unit was measured and merged into `record`; `again` when the unit takes
    /// another round.
    fn measured(&mut self, _record: &RunRecord, _again: bool) {}

    /// After the units, or after a signal stopped them (`interrupted`): what comes after
    /// (the stability check again, said on the progress line). Whether the run was stopped.
    fn finish(&mut self, _record: &mut RunRecord, _progress: &Progress, interrupted: bool) -> bool {
        interrupted
    }

    /// The text printed after the run: the table and what the front end adds to it.
    fn text(&self, record: &RunRecord) -> Result<String, ExportError>;

    /// Outputs beyond the results files (a page, plots), written at the end, each that
    /// cannot be noted in `unwritten`: the lines saying where they went.
    fn write_more(&self, _record: &RunRecord, _unwritten: &mut Unwritten) -> Vec<String> {
        Vec::new()
    }

    /// What the line of where the time went calls the parts of this run.
    fn time_words(&self) -> TimeWords {
        TimeWords::default()
    }
}
