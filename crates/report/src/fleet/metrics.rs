//! A fleet as OpenMetrics ([`crate::openmetrics`]): each host's latest run, its headline
//! rows and the results they are read from. One run per host, since a host's label set can
//! appear once; its older runs are in the fleet's table and page.

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
        exposition(&latest_runs(&report.fleet), self.stamps)
    }
}

/// Each host's latest run (by start time, then by file), by host name.
pub fn latest_runs(fleet: &Fleet) -> Vec<RunMetrics> {
    let mut latest: BTreeMap<&str, &HostRun> = BTreeMap::new();
    for host in &fleet.hosts {
        let kept = latest.entry(host.host_name.as_str()).or_insert(host);
        if (&host.started_at, &host.path) > (&kept.started_at, &kept.path) {
            *kept = host;
        }
    }
    (latest.into_values())
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
