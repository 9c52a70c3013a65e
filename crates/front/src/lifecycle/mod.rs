//! The run lifecycle both front ends share, from the lock to the exit status:
//!
//! 1. take the machine-wide run lock (waiting for another run, or noting why not);
//! 2. apply the controls (`--pin`, `--mlock`, `--rt`), each degrading to a note;
//! 3. begin the record: the environment's concerns, the notes, the clock's;
//! 4. measure the units (the binary's probes, the harness's benchmark sets) in rounds taken
//!    round-robin, so that a unit's rounds lie apart with the others between them, each
//!    round merged into the record as it comes and every results file rewritten, so that a
//!    crash or Ctrl-C loses at most the unit under way;
//! 5. write the outputs, print the text with the comparison against a baseline and the
//!    gate's verdict, keep the run as a baseline, and say what was written where;
//! 6. the exit status: the signal's when one stopped the run; 2 when it measured but not
//!    one results file could be written; 1 when a unit failed, an output could not be
//!    written or the gate found a result slower; else 0.
//!
//! What is measured, and the text beside the table, is the front end's: it implements
//! [`Measured`].
//!
//! One job a file: what is measured (`measured.rs`), the request (`request.rs`), the
//! controls and the record begun (`controls.rs`), the results directory
//! (`results_dir.rs`), the rounds (`rounds.rs`), the outputs and baselines at the end
//! (`finish.rs`), the exit status (`status.rs`), and `--runs` (`runs.rs`).

mod controls;
mod finish;
mod measured;
mod request;
mod results_dir;
mod rounds;
#[cfg(feature = "files")]
mod runs;
mod status;
#[cfg(test)]
mod tests;

pub use measured::Measured;
#[cfg(not(feature = "files"))]
pub use request::Baselines;
pub use request::{Controls, RunRequest};
#[cfg(feature = "files")]
pub use runs::RunsCommand;
pub use status::with_causes;

use crate::{Progress, TimeSpent, Unwritten};
use controls::{apply_controls, begin_record};
use latlab_engine::budget::TimeBudget;
use latlab_engine::model::RunRecord;
use latlab_engine::signals::StopSignals;
use latlab_engine::{Interrupted, Runner};
use latlab_report::terminal::Detail;
use results_dir::create_results_dir;
use rounds::Rounds;
use std::io::IsTerminal;
use std::sync::Arc;

/// Runs `measured` as `request` asks, `stop` telling of Ctrl-C and the like: the exit
/// status, or a refusal (one line) when the results directory could not be made or the
/// text could not be made or printed.
pub fn execute(
    mut request: RunRequest,
    measured: &mut dyn Measured,
    stop: &StopSignals,
) -> Result<u8, String> {
    crate::stdout::remember_stdout();
    let cancel = stop.flag();
    let mut notes = Vec::new();
    let Ok(lock) = crate::take_lock(request.host.as_ref(), &cancel, &mut notes) else {
        crate::say!("latlab: interrupted while waiting for the other run; nothing was measured");
        return Ok(stop.exit_status());
    };
    // The progress line's thread starts before --pin and --rt apply to this thread, so that
    // it neither shares the pinned CPU nor runs in real time.
    let shown = std::io::stderr().is_terminal() && request.terminal.detail != Detail::Quiet;
    let units = measured.units(request.rounds);
    let budget = (request.budget)
        .map(|total| TimeBudget::new(total, units.iter().map(|u| (u.typical_s, u.rounds))));
    let mut progress = Progress::new(units.clone(), request.rounds, shown);
    let mut spent = TimeSpent::begin(request.budget);
    request.config.cancel = cancel;
    // The CPUs the run was given, before --pin narrows them to one.
    let allowed_cpus = request.host.allowed_cpus();
    let settings = apply_controls(&mut request, &mut notes);
    let mut record = begin_record(&request, settings, notes);
    record.environment.allowed_cpus = Some(allowed_cpus);
    if let Some(dir) = &request.create_dir {
        create_results_dir(dir)?;
    }
    let mut unwritten = Unwritten::default();
    let mut runner = Runner::on(Arc::clone(&request.host), request.config.clone());
    if let Some(listener) = progress.listener() {
        runner.listen(listener);
    }
    let started = spent.timed(
        |s| &mut s.around,
        || measured.start(runner, &mut record, &progress),
    );
    let mut interrupted = match started {
        Ok(()) => {
            let mut rounds = Rounds {
                request: &request,
                lock: lock.as_ref(),
                measured: &mut *measured,
                progress: &mut progress,
                unwritten: &mut unwritten,
                spent: &mut spent,
                budget,
                units,
            };
            rounds.measure(&mut record)
        }
        Err(Interrupted) => true,
    };
    interrupted = spent.timed(
        |s| &mut s.around,
        || measured.finish(&mut record, &progress, interrupted),
    );
    progress.finish();
    // Last, once nothing is measured any more: opening a counter slows every context
    // switch of the machine for a second.
    record.environment.perf_counters = Some(request.host.perf_counters());
    record
        .notes
        .extend(spent.scaled_note(&measured.time_words()));
    record.load_avg_after = request.host.load_average();
    record.complete = !interrupted;
    let mut state = RunState {
        request: &request,
        record,
        unwritten,
        spent,
        interrupted,
    };
    let regressed = state.write_outputs(measured)?;
    let status = state.exit_status(stop);
    Ok(if status == 0 && regressed { 1 } else { status })
}

/// Where a run stands once its units are measured: the record, the outputs that could not
/// be written, where the time went and whether a signal stopped it. The outputs and the
/// exit status are read from it (`finish.rs`, `status.rs`).
struct RunState<'a> {
    request: &'a RunRequest,
    record: RunRecord,
    unwritten: Unwritten,
    spent: TimeSpent,
    interrupted: bool,
}
