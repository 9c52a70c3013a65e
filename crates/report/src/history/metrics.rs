//! A history as OpenMetrics ([`crate::openmetrics`]): each host's changes as gauges, so that
//! an alert rule can fire on them (the book's "A machine's history" gives one).
//!
//! - `latlab_change_ratio{probe,result,kind,host,cpu_model}`: the newest change of each
//!   result, its new level over its old (for a change of mix, its typical figure's);
//! - `latlab_change_start_time_seconds{…}`: the start of the first run of that new level.
//!
//! `kind` says what the change is: `own` (the result's own), `machine` (a member of a step
//! of the machine, many results at one run), `clock` (the core clock's step) or `mix` (a
//! result flipping between two regimes whose mix changed). Labels stay bounded: one label
//! set per host and result, whatever the number of runs.

use super::{Change, History, HostHistory};
use crate::formats::FileFormat;
use crate::openmetrics::{Stamps, gauge_family, seconds_since_epoch, split_name};
use crate::{ExportError, Exporter};
use std::collections::BTreeMap;

const RATIO: (&str, &str, &str) = (
    "latlab_change_ratio",
    "ratio",
    "The newest change of a latlab result on a host: its new level over its old.",
);
const START: (&str, &str, &str) = (
    "latlab_change_start_time_seconds",
    "seconds",
    "When the first run of a latlab result's newest level started, in seconds since 1970.",
);

/// Writes a history's changes as OpenMetrics.
#[derive(Debug, Clone, Copy, Default)]
pub struct HistoryOpenMetrics;

/// `latlab history --openmetrics FILE`.
pub(crate) const FORMAT: FileFormat<History> = FileFormat {
    name: "openmetrics",
    help: "Also write each host's changes as OpenMetrics gauges here (each result's newest \
        change: its ratio and when its new level began), for an alert rule; '-' for \
        standard output",
    exporter: |_| Box::new(HistoryOpenMetrics),
};

impl Exporter<History> for HistoryOpenMetrics {
    fn render(&self, history: &History) -> Result<String, ExportError> {
        Ok(change_families(&history.hosts, Stamps::None) + "# EOF\n")
    }
}

/// The change families of `hosts`, each sample stamped with its new level's start where
/// `stamps` asks (for a backfill).
pub(crate) fn change_families(hosts: &[HostHistory], stamps: Stamps) -> String {
    let mut ratios = Vec::new();
    let mut starts = Vec::new();
    for host in hosts {
        let mut newest: BTreeMap<&str, &Change> = BTreeMap::new();
        for change in host.all_changes() {
            let kept = newest.entry(change.result.as_str()).or_insert(change);
            if change.at > kept.at {
                *kept = change;
            }
        }
        for (name, change) in newest {
            let (probe, result) = split_name(name);
            let labels = vec![
                ("probe", probe),
                ("result", result),
                ("kind", kind(change)),
                ("host", host.host.as_str()),
                ("cpu_model", host.cpu_model.as_str()),
            ];
            let start = seconds_since_epoch(&change.after_run);
            let stamp = start.filter(|_| stamps == Stamps::RunStart);
            if stamps == Stamps::RunStart && stamp.is_none() {
                continue;
            }
            if let Some(seconds) = start {
                starts.push((labels.clone(), seconds as f64, stamp));
            }
            ratios.push((labels, change.ratio, stamp));
        }
    }
    gauge_family(RATIO, &ratios) + &gauge_family(START, &starts)
}

/// What a change is, as the `kind` label says.
fn kind(change: &Change) -> &'static str {
    match (change.result.as_str(), change.mix, change.machine_event) {
        (super::CLOCK_RESULT, ..) => "clock",
        (_, Some(_), _) => "mix",
        (_, None, Some(_)) => "machine",
        (_, None, None) => "own",
    }
}
