//! Before the units: the controls applied (`--pin`, `--mlock`, `--rt`, each degrading to a
//! note) and the record begun.

use super::RunRequest;
use latlab_engine::model::{RunRecord, RunSettings};
use latlab_report::advice;

/// Applies `--pin`, `--mlock` and `--rt`, each degrading to a note when not permitted: the
/// settings the record keeps.
pub(super) fn apply_controls(request: &mut RunRequest, notes: &mut Vec<String>) -> RunSettings {
    let config = &mut request.config;
    let mut settings = RunSettings::uncontrolled(request.suite.name(), config, request.rounds);
    let (host, controls) = (&request.host, request.controls);
    if let Some(cpu) = controls.pin {
        match host.pin_to_cpu(cpu) {
            Ok(()) => settings.pinned_cpu = Some(cpu),
            Err(reason) => notes.push(format!("--pin had no effect: {reason}")),
        }
    }
    if controls.mlock {
        match host.lock_memory() {
            Ok(()) => settings.memory_locked = true,
            Err(reason) => notes.push(format!("--mlock had no effect: {reason}")),
        }
    }
    if controls.rt {
        match host.enter_realtime() {
            Ok(()) => {
                settings.realtime = true;
                config.pause_between_samples = Some(latlab_engine::isolation::RT_PAUSE);
            }
            Err(reason) => notes.push(format!("--rt had no effect: {reason}")),
        }
    }
    settings
}

/// The run's record as it starts: the environment's concerns, the request's notes, those
/// the lock and the controls left (`notes`), and the clock's.
pub(super) fn begin_record(
    request: &RunRequest,
    settings: RunSettings,
    notes: Vec<String>,
) -> RunRecord {
    let mut record = RunRecord::begin(request.host.as_ref(), settings, Vec::new());
    record.notes = (record.environment.concerns().iter())
        .map(advice::concern)
        .collect();
    record.notes.extend(request.notes.iter().cloned());
    record.notes.extend(notes);
    record.notes.extend(crate::core_class::note(&record));
    record.notes.extend(advice::clock(&record.clock));
    record
}
