//! What the fleet keeps of each run it reads through the runs layer ([`crate::runs`]): its
//! host, its suite, its start and each headline row's figure.

use crate::headline::headline_rows;
use crate::openmetrics::ResultFigure;
use crate::runs::RunShape;
use crate::summary::RunSummary;
use latlab_engine::model::RunRecord;
use latlab_engine::presentation::Presentations;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What one readable file gives.
pub(super) struct Extract {
    pub(super) path: PathBuf,
    pub(super) host_name: String,
    pub(super) cpu_model: String,
    pub(super) suite: String,
    pub(super) started_at: String,
    /// The schema of a full results file; `None` for a summary.
    pub(super) schema: Option<u64>,
    /// Each headline row's figure, by operation.
    pub(super) figures: BTreeMap<String, RowFigure>,
    /// Why the results file was read in place of the summary beside it, where it was.
    pub(super) instead_of_summary: Option<String>,
}

/// A headline row's figure on one host, and the result it was read from.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RowFigure {
    pub(super) median_ns: f64,
    pub(super) result: ResultFigure,
}

impl RunShape for Extract {
    fn started_at(&self) -> &str {
        &self.started_at
    }

    fn read_instead(&mut self, why: String) {
        self.instead_of_summary = Some(why);
    }

    fn of_run(path: &Path, run: &RunRecord, schema: u64, declared: &Presentations) -> Extract {
        let figures = (headline_rows(run, declared).into_iter())
            .filter_map(|row| {
                let measured = row.measured?;
                let source = run.results().find(|r| r.name == measured.result)?;
                let figure = RowFigure {
                    median_ns: measured.median_ns,
                    result: ResultFigure {
                        name: measured.result,
                        median_ns: source.summary.median,
                        bytes_per_operation: source.bytes_per_operation,
                    },
                };
                Some((row.operation, figure))
            })
            .collect();
        Extract {
            path: path.to_path_buf(),
            host_name: run.environment.host_name.clone(),
            cpu_model: run.environment.cpu.model.clone(),
            suite: run.settings.suite.clone(),
            started_at: run.started_at.clone(),
            schema: Some(schema),
            figures,
            instead_of_summary: None,
        }
    }

    fn of_summary(path: &Path, summary: RunSummary<'_>) -> Extract {
        let figures = (summary.headline.iter())
            .filter_map(|row| {
                let source = summary.result(&row.result)?;
                let figure = RowFigure {
                    median_ns: row.median_ns,
                    result: ResultFigure {
                        name: source.name.to_string(),
                        median_ns: source.median_ns,
                        bytes_per_operation: source.bytes_per_operation,
                    },
                };
                Some((row.operation.to_string(), figure))
            })
            .collect();
        Extract {
            path: path.to_path_buf(),
            host_name: summary.environment.host_name,
            cpu_model: summary.environment.cpu.model,
            suite: summary.suite,
            started_at: summary.started_at,
            schema: None,
            figures,
            instead_of_summary: None,
        }
    }
}
