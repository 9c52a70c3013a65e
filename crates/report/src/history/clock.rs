//! The results that stepped with the core clock. Where the clock's period
//! ([`super::CLOCK_RESULT`]) steps, a result that steps at the same run (or the next or the
//! one before), the same way and at least half as far, is tested again in cycles: its
//! figures over the clock's period, run by run. Where no step is left there, it followed the
//! clock: counted on the clock's step, not reported on its own.

use super::{Change, HistoryOptions, steps};

/// The index in `clock_changes` of the clock step that `change` followed, where it did:
/// `own` and `clock` are the result's and the clock's series (run index and logarithm).
pub(super) fn followed(
    change: &Change,
    clock_changes: &[Change],
    own: &[(usize, f64)],
    clock: &[(usize, f64)],
    options: HistoryOptions,
) -> Option<usize> {
    let moved = change.ratio.ln();
    let step = clock_changes.iter().position(|clock_change| {
        let clock_moved = clock_change.ratio.ln();
        clock_change.mix.is_none()
            && change.mix.is_none()
            && clock_change.at.abs_diff(change.at) <= 1
            && moved * clock_moved > 0.0
            && moved.abs() >= 0.5 * clock_moved.abs()
    })?;
    let in_cycles: Vec<(usize, f64)> = own
        .iter()
        .filter_map(|&(run, log)| {
            let period = clock.iter().find(|(clock_run, _)| *clock_run == run)?.1;
            Some((run, log - period))
        })
        .collect();
    let logs: Vec<f64> = in_cycles.iter().map(|(_, log)| *log).collect();
    let still = steps::steps(&logs, options)
        .iter()
        .any(|s| in_cycles[s.at].0.abs_diff(change.at) <= 1);
    (!still).then_some(step)
}
