//! After the units: every output written, the text printed with the comparison against a
//! baseline, the run kept as a baseline, and what went where said.

use super::{Measured, RunRequest, RunState, with_causes};
use latlab_engine::model::RunRecord;
use latlab_report::Durability;
use latlab_report::terminal::Detail;

impl RunState<'_> {
    /// Writes every output, prints the text with the comparison against the baseline, and
    /// keeps the run as a baseline: whether the gate found a result slower. `Err` when the
    /// text could not be made or printed (the files are written first).
    pub(super) fn write_outputs(&mut self, measured: &dyn Measured) -> Result<bool, String> {
        let RunState {
            request,
            record,
            unwritten,
            spent,
            ..
        } = self;
        let (request, record) = (*request, &*record);
        let files = &request.files;
        spent.timed(
            |s| &mut s.results,
            || files.write_so_far(record, unwritten, Durability::Synced),
        );
        let written_more = spent.timed(|s| &mut s.more, || measured.write_more(record, unwritten));
        let (judged, regressed) = against_baseline(request, record);
        let text = measured.text(record).map_err(|e| with_causes(&e))? + &judged;
        if files.uses_stdout() {
            crate::stderr_text(&text);
            spent.timed(|s| &mut s.results, || files.write_at_end(record, unwritten));
        } else {
            spent.timed(|s| &mut s.results, || files.write_at_end(record, unwritten));
            crate::print_out(&text).map_err(|e| with_causes(&e))?;
        }
        #[cfg(feature = "files")]
        request
            .baselines
            .keep(std::slice::from_ref(record), unwritten);
        files.say_written(unwritten);
        for line in written_more {
            crate::say!("{line}");
        }
        if request.terminal.detail != Detail::Quiet {
            let width = request.terminal.width;
            crate::say!("{}", spent.line(&measured.time_words(), width));
        }
        if request.terminal.detail == Detail::Verbose {
            for line in spent.unit_lines() {
                crate::say!("{line}");
            }
        }
        unwritten.report();
        if !files.any_kept(unwritten)
            && let Some(dir) = &request.create_dir
        {
            // The directory this run made holds none of its results: removed if nothing else
            // went into it, so that a run that wrote nothing leaves nothing.
            if let Ok(own) = latlab_doors::OwnDir::kept(dir, latlab_doors::Missing::Refused) {
                own.remove_if_empty();
            }
        }
        Ok(regressed)
    }
}

/// The comparison with the baseline asked for, as the request's terminal lays it out, and
/// whether the gate found a result slower.
#[cfg(feature = "files")]
fn against_baseline(request: &RunRequest, record: &RunRecord) -> (String, bool) {
    let these = latlab_report::compare::Side::one("this run", record.clone());
    let (judged, regressed) =
        (request.baselines).judged(these, &request.terminal, request.results_called);
    (request.terminal.printable(&judged).into_owned(), regressed)
}

/// Without the results files there are no baselines.
#[cfg(not(feature = "files"))]
fn against_baseline(_: &RunRequest, _: &RunRecord) -> (String, bool) {
    (String::new(), false)
}
