//! The run's exit status, and errors said in one line.

use super::RunState;
use latlab_engine::model::ProbeStatus;
use latlab_engine::signals::StopSignals;

impl RunState<'_> {
    /// The run's exit status: the signal's when one stopped it; 2 when it measured but not
    /// one results file could be written (the text is all that is left); 1 when a unit
    /// failed or an output could not be written; else 0.
    pub(super) fn exit_status(&self, stop: &StopSignals) -> u8 {
        if self.interrupted {
            crate::say!("latlab: interrupted: the results measured before it are written");
            return stop.exit_status();
        }
        if !self.request.files.any_kept(&self.unwritten) {
            crate::say!(
                "latlab: no results file could be written (see above); the table is all that \
                 is left of this run: free the disk, raise the limit, or choose where else to \
                 write, then run again"
            );
            return 2;
        }
        let failed =
            (self.record.probes.iter()).any(|p| matches!(p.status, ProbeStatus::Failed { .. }));
        u8::from(failed || !self.unwritten.is_empty())
    }
}

/// An error and its causes in one line: "could not write out.json: No space left on
/// device (os error 28)".
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(&format!(": {inner}"));
        cause = inner.source();
    }
    text
}
