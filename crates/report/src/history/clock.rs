//! The results that stepped with the core clock. Only a result on the core clock can follow
//! it, by the rule comparisons judge by: declared so by its probe
//! ([`latlab_engine::presentation::Presentations::on_core_clock`]), or shown so by its own
//! runs within the stretches between the clock's steps
//! ([`crate::stats::follows_clock`]), never for having moved with the step at
//! hand. Where the clock's period ([`super::CLOCK_RESULT`]) steps, a result on the clock
//! that steps at the same run (or the next or the one before), the same way and at least
//! half as far, is tested again in cycles: its figures over the clock's period, run by run.
//! Where no step is left there, it followed the clock: counted on the clock's step, not
//! reported on its own. Main memory, system calls, files and the rest step on their own.

use super::{Change, HistoryOptions, steps};
use crate::stats::follows_clock;

/// One result's series beside the clock's (run index and logarithm of each), and whether
/// its probe declares it on the core clock.
pub(super) struct Series<'a> {
    pub own: &'a [(usize, f64)],
    pub clock: &'a [(usize, f64)],
    pub declared_on_clock: bool,
}

impl Series<'_> {
    /// The result's figures in cycles, run by run: its logarithm less the clock's.
    fn in_cycles(&self) -> Vec<(usize, f64, f64)> {
        (self.own.iter())
            .filter_map(|&(run, log)| {
                // The clock's series is in run order: found by halving, not by a walk.
                let at = (self
                    .clock
                    .binary_search_by_key(&run, |(clock_run, _)| *clock_run))
                .ok()?;
                Some((run, self.clock[at].1, log))
            })
            .collect()
    }

    /// Whether the result runs on the core clock: declared, or shown by its runs within
    /// the stretches between the clock's `steps`.
    fn on_clock(&self, paired: &[(usize, f64, f64)], steps: &[Change]) -> bool {
        if self.declared_on_clock {
            return true;
        }
        let stretch = |run: usize| steps.iter().filter(|step| step.at <= run).count();
        let mut groups = vec![Vec::new(); steps.len() + 1];
        for &(run, clock, figure) in paired {
            groups[stretch(run)].push((clock, figure));
        }
        follows_clock(&groups)
    }
}

/// The index in `clock_changes` of the clock step that `change` followed, where it did.
pub(super) fn followed(
    change: &Change,
    clock_changes: &[Change],
    series: &Series,
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
    let paired = series.in_cycles();
    if !series.on_clock(&paired, clock_changes) {
        return None;
    }
    let logs: Vec<f64> = paired.iter().map(|(_, clock, log)| log - clock).collect();
    let still = steps::steps(&logs, options)
        .iter()
        .any(|s| paired[s.at].0.abs_diff(change.at) <= 1);
    (!still).then_some(step)
}
