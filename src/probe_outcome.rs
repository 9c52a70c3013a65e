//! One probe run in this process, whichever process that is (the run's own, or a probe's
//! own process): its panic or its error made the probe's status, the results it measured
//! before an error kept.

use latlab_engine::model::{BenchResult, ProbeStatus};
use latlab_front::panic_message;
use latlab_probes::{ProbeContext, ProbeError, ProbeSpec};

/// Runs one probe in this process; a panic inside it is reported as the probe's failure,
/// not the run's.
pub(crate) fn outcome_here(
    probe: &ProbeSpec,
    ctx: &mut ProbeContext,
) -> (ProbeStatus, Vec<BenchResult>) {
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (probe.run)(ctx)));
    match outcome {
        Ok(Ok(results)) => (ProbeStatus::Ok, results),
        Ok(Err(error)) => status_of(error),
        Err(panic) => (
            ProbeStatus::Failed {
                reason: format!("panicked: {}", panic_message(panic.as_ref())),
            },
            Vec::new(),
        ),
    }
}

/// The status of a probe that ended in `error`, and the results measured before it: a
/// sweep that stopped part-way keeps the sizes it measured.
pub(crate) fn status_of(error: ProbeError) -> (ProbeStatus, Vec<BenchResult>) {
    let (error, measured) = error.into_parts();
    let status = match error {
        ProbeError::Interrupted(_) => ProbeStatus::Interrupted,
        ProbeError::Skipped(reason) => ProbeStatus::Skipped { reason },
        failed if measured.is_empty() => ProbeStatus::Failed {
            reason: failed.to_string(),
        },
        failed => ProbeStatus::Failed {
            reason: format!(
                "{failed}; the {} results measured before it are kept",
                measured.len()
            ),
        },
    };
    (status, measured)
}
