//! A result that moved at a step of the machine where the environment changed joins it. The
//! step of the machine stands on its members, each a step of its own found by the search and
//! beyond its levels' scatter, and on the change of the environment at its run (a kernel, a
//! microcode, a setting); whether another result moved at that run is then one test at a
//! known run, not a search: Welch's test at the steps' level between its levels on either
//! side of the run (bounded by its own change points), past the threshold, but not held to
//! the factor of scatter. A kernel change that moves a result by 5% where its runs scatter by
//! 5% names it among its members. A step of the machine with nothing changed in the
//! environment gains no member this way: on a shared guest those are many, and a test at
//! each for every result would join results by chance (on the project's generated series,
//! joining there too found 2 more planted steps and 15 more changes not planted). A result
//! in two regimes, or one that stepped with the core clock, is left out.

use super::steps::Located;
use super::{Change, HistoryOptions, HistoryRun, MachineEvent, Spread, regimes, step_change};

/// What a result is tested against: its host's runs, the options, and the results' own
/// changes (which bound a result's levels).
pub(super) struct Context<'a> {
    pub runs: &'a [HistoryRun],
    pub options: HistoryOptions,
    pub own: &'a [Change],
}

impl Context<'_> {
    /// Adds to `events` the results of `names` (each's series from `series`) that moved
    /// with them, searched on every CPU or on this thread alone, as `spread` says.
    pub fn join(
        &self,
        events: &mut [MachineEvent],
        names: &[&str],
        series: &(impl Fn(&str) -> Vec<(usize, f64)> + Sync),
        spread: Spread,
    ) {
        if events
            .iter()
            .all(|event| event.environment_changes.is_empty())
        {
            return;
        }
        let moved = |name: &&str| self.moved_with(name, &series(name), events);
        let joined = match spread {
            Spread::OverResults => crate::parallel::map_in_order(names, "latlab-history", moved),
            Spread::OverHosts => names.iter().map(moved).collect(),
        };
        for (i, change) in joined.into_iter().flatten() {
            events[i].members.push(change);
        }
        for event in events {
            event.members.sort_by(|a, b| a.result.cmp(&b.result));
        }
    }

    /// The steps of the machine among `events` that result `name` (its `series`: each run's
    /// index and the logarithm of its figure) moved with and is not yet a member of, each
    /// the event's index and the result's change there.
    fn moved_with(
        &self,
        name: &str,
        series: &[(usize, f64)],
        events: &[MachineEvent],
    ) -> Vec<(usize, Change)> {
        let logs: Vec<f64> = series.iter().map(|(_, log)| *log).collect();
        if logs.len() < 2 * super::steps::MIN_SEGMENT || regimes::regimes(&logs).is_some() {
            return Vec::new();
        }
        let members = events.iter().flat_map(|event| &event.members);
        let mut points: Vec<usize> = (self.own.iter().chain(members))
            .filter(|change| change.result == name)
            .map(|change| change.at)
            .collect();
        points.sort_unstable();
        let index = |run: usize| series.partition_point(|(i, _)| *i < run);
        let mut located = None;
        let mut joined = Vec::new();
        for (i, event) in events.iter().enumerate() {
            let explained = !event.environment_changes.is_empty();
            if !explained || points.iter().any(|point| point.abs_diff(event.at) <= 1) {
                continue;
            }
            let start = (points.iter().rev()).find(|&&point| point < event.at);
            let end = points.iter().find(|&&point| point > event.at);
            let bounds = (
                start.map_or(0, |&point| index(point)),
                index(event.at),
                end.map_or(series.len(), |&point| index(point)),
            );
            let at_the_event = series
                .get(bounds.1)
                .is_some_and(|(run, _)| *run == event.at);
            if !at_the_event {
                continue;
            }
            let located = located.get_or_insert_with(|| Located::of(&logs));
            if let Some(step) = located.step(bounds, self.options) {
                let mut change = step_change(name, series, self.runs, &step);
                change.machine_event = Some(event.at);
                joined.push((i, change));
            }
        }
        joined
    }
}
