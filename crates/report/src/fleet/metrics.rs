//! A fleet as OpenMetrics ([`crate::openmetrics`]): each host's latest run, its headline
//! rows and the results they are read from. One run per host, since a host's label set can
//! appear once; its older runs are in the fleet's table and page. The hosts that changed
//! within their last runs add their changes, as `latlab history --openmetrics` writes them.

use super::{Fleet, FleetReport, HostRun};
use crate::formats::FileFormat;
use crate::openmetrics::{RunMetrics, Stamps, exposition};
use crate::{ExportError, Exporter};
use std::collections::BTreeMap;

/// Writes a fleet's latest runs as OpenMetrics.
pub struct FleetOpenMetrics {
    pub stamps: Stamps,
}

impl Exporter<FleetReport> for FleetOpenMetrics {
    fn render(&self, report: &FleetReport) -> Result<String, ExportError> {
        let figures = exposition(&latest_runs(&report.fleet), self.stamps)?;
        let changes = crate::history::change_families(&report.fleet.changed, self.stamps);
        Ok(match figures.strip_suffix("# EOF\n") {
            Some(figures) => format!("{figures}{changes}# EOF\n"),
            None => figures,
        })
    }
}

/// Each host's latest run (by start time, then by file). A host is what the exposition's
/// labels name: its name and CPU model, so two machines that share a name but not a CPU
/// model are two hosts with a series each.
pub fn latest_runs(fleet: &Fleet) -> Vec<RunMetrics> {
    (latest_of_each_host(fleet).into_iter())
        .map(|host| RunMetrics {
            host: host.host_name.clone(),
            cpu_model: host.cpu_model.clone(),
            started_at: host.started_at.clone(),
            headline: (fleet.operations.iter().zip(&host.figures))
                .filter_map(|(operation, figure)| Some((operation.clone(), (*figure)?)))
                .collect(),
            results: host.results.iter().flatten().cloned().collect(),
        })
        .collect()
}

/// Whether `format` is one of the OpenMetrics exports, which carry each host's latest run
/// only ([`runs_left_out`] names the others).
pub fn carries_latest_runs_only(format: &FileFormat<FleetReport>) -> bool {
    [FORMAT.name, BACKFILL_FORMAT.name].contains(&format.name)
}

/// The runs the OpenMetrics exports leave out, by their labels in the fleet's table: each
/// an earlier run of a host (name and CPU model) whose latest run is exported.
pub fn runs_left_out(fleet: &Fleet) -> Vec<&str> {
    let latest: std::collections::HashSet<*const HostRun> = (latest_of_each_host(fleet)
        .into_iter())
    .map(std::ptr::from_ref)
    .collect();
    (fleet.hosts.iter())
        .filter(|host| !latest.contains(&std::ptr::from_ref(*host)))
        .map(|host| host.label.as_str())
        .collect()
}

/// The latest run of each host (name and CPU model): by start time, then by file.
fn latest_of_each_host(fleet: &Fleet) -> Vec<&HostRun> {
    let mut latest: BTreeMap<(&str, &str), &HostRun> = BTreeMap::new();
    for host in &fleet.hosts {
        let kept =
            (latest.entry((host.host_name.as_str(), host.cpu_model.as_str()))).or_insert(host);
        if (&host.started_at, &host.path) > (&kept.started_at, &kept.path) {
            *kept = host;
        }
    }
    latest.into_values().collect()
}

/// `latlab fleet --openmetrics FILE`.
pub(crate) const FORMAT: FileFormat<FleetReport> = FileFormat {
    name: "openmetrics",
    help: "Also write each host's latest run as OpenMetrics gauges here (its headline and the \
        results they are read from, for node_exporter's textfile collector); '-' for \
        standard output",
    exporter: |_| {
        Box::new(FleetOpenMetrics {
            stamps: Stamps::None,
        })
    },
};

/// `latlab fleet --openmetrics-backfill FILE`.
pub(crate) const BACKFILL_FORMAT: FileFormat<FleetReport> = FileFormat {
    name: "openmetrics-backfill",
    help: "Also write them as OpenMetrics with each sample stamped with its run's start \
        time, for promtool tsdb create-blocks-from openmetrics; '-' for standard output",
    exporter: |_| {
        Box::new(FleetOpenMetrics {
            stamps: Stamps::RunStart,
        })
    },
};
