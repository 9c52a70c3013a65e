//! One run as a history keeps it: its host, its start, the fields of its environment a change
//! may be named by, and every result's figure. Read through the fleet's reader
//! ([`crate::runs`]): a summary where there is one, else the results file without its
//! samples, made into the same summary.

use crate::runs::RunShape;
use crate::summary::RunSummary;
use latlab_engine::environment::Environment;
use latlab_engine::model::RunRecord;
use latlab_engine::presentation::Presentations;
use std::cell::RefCell;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One run of a host.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRun {
    pub path: PathBuf,
    pub host_name: String,
    pub cpu_model: String,
    /// RFC 3339, UTC, as the file has it.
    pub started_at: String,
    /// The fields of the run's environment that say what the machine was: each name and its
    /// value ([`environment_fields`]).
    pub environment: Vec<(&'static str, String)>,
    /// Each result's figure, sorted by name; a result whose verdict was suspect (its work
    /// may have been deleted) is left out. Names are shared between the runs read on one
    /// thread ([`interned`]): ten thousand runs of six hundred results keep each name a few
    /// times, not six million.
    pub figures: Vec<(Arc<str>, RunFigure)>,
    /// Why the results file was read in place of the summary beside it, where it was.
    pub instead_of_summary: Option<String>,
}

/// A result's figure in one run: its median and the 95% interval of the median, in
/// nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunFigure {
    pub median_ns: f64,
    pub interval_ns: [f64; 2],
}

impl RunShape for HistoryRun {
    fn of_summary(path: &Path, summary: RunSummary<'_>) -> HistoryRun {
        let mut figures: Vec<(Arc<str>, RunFigure)> = (summary.results.iter())
            .filter(|r| !r.suspect)
            .map(|r| {
                let figure = RunFigure {
                    median_ns: r.median_ns,
                    interval_ns: r.median_ci95_ns,
                };
                (interned(&r.name), figure)
            })
            .collect();
        figures.sort_by(|a, b| a.0.cmp(&b.0));
        HistoryRun {
            path: path.to_path_buf(),
            environment: environment_fields(
                &summary.environment,
                &summary.latlab_version,
                &summary.suite,
            ),
            host_name: summary.environment.host_name,
            cpu_model: summary.environment.cpu.model,
            started_at: summary.started_at,
            figures,
            instead_of_summary: None,
        }
    }

    fn of_run(path: &Path, run: &RunRecord, _schema: u64, declared: &Presentations) -> HistoryRun {
        HistoryRun::of_summary(path, RunSummary::of(run, declared))
    }

    fn started_at(&self) -> &str {
        &self.started_at
    }

    fn read_instead(&mut self, why: String) {
        self.instead_of_summary = Some(why);
    }
}

thread_local! {
    /// The result names this thread has read, each kept once.
    static NAMES: RefCell<HashSet<Arc<str>>> = RefCell::new(HashSet::new());
}

/// `name`, shared with every run this thread read that has it.
fn interned(name: &str) -> Arc<str> {
    NAMES.with_borrow_mut(|names| match names.get(name) {
        Some(kept) => Arc::clone(kept),
        None => {
            let kept: Arc<str> = Arc::from(name);
            names.insert(Arc::clone(&kept));
            kept
        }
    })
}

/// The fields of `environment` (and the run's latlab version and suite) that a change is
/// named by: what an upgrade, a setting or a move to other hardware changes.
pub fn environment_fields(
    environment: &Environment,
    latlab_version: &str,
    suite: &str,
) -> Vec<(&'static str, String)> {
    let or_none = |value: &Option<String>| value.clone().unwrap_or_else(|| "none".into());
    let cpu = &environment.cpu;
    vec![
        ("kernel", environment.kernel.clone()),
        ("os", environment.os.clone()),
        ("cpu model", cpu.model.clone()),
        ("logical CPUs", cpu.logical_cpus.to_string()),
        (
            "SMT",
            cpu.smt_active.map_or_else(
                || "unknown".into(),
                |on| if on { "on" } else { "off" }.into(),
            ),
        ),
        ("governor", or_none(&cpu.governor)),
        ("microcode", or_none(&cpu.microcode)),
        (
            "maximum MHz",
            cpu.max_mhz
                .map_or_else(|| "unknown".into(), |mhz| format!("{mhz:.0}")),
        ),
        ("hypervisor", or_none(&environment.virtualization)),
        ("clock source", or_none(&environment.clocksource)),
        (
            "transparent huge pages",
            or_none(&environment.transparent_hugepages),
        ),
        ("latlab", latlab_version.to_string()),
        ("suite", suite.to_string()),
    ]
}
