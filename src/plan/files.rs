//! The plans of the subcommands that read results files: `latlab report` and `latlab
//! compare`. Every file is loaded and every output checked here, so that a bad file or path
//! is one line and status 2 before anything is written.

use super::UsageError;
use crate::cli::{CompareArgs, ReportArgs};
use latlab_engine::model::RunRecord;
use latlab_report::OutputTarget;
use latlab_report::load::load_run;
use std::path::{Path, PathBuf};

/// `latlab report`: the run to render and where the page goes.
pub struct ReportPlan {
    pub run: RunRecord,
    pub out: PathBuf,
}

pub fn report(args: &ReportArgs) -> Result<ReportPlan, UsageError> {
    let run = load_run(&args.file).map_err(|e| UsageError(e.to_string()))?;
    let out = args.out.clone().unwrap_or_else(|| {
        args.file
            .parent()
            .unwrap_or(Path::new("."))
            .join("report.html")
    });
    if out
        .parent()
        .is_some_and(|p| !p.as_os_str().is_empty() && !p.is_dir())
    {
        return Err(UsageError(format!(
            "--out {}: its directory does not exist; create it or choose another",
            out.display()
        )));
    }
    Ok(ReportPlan { run, out })
}

/// One run of a comparison: its letter, its file and what it recorded.
pub struct Labelled {
    pub label: String,
    pub path: PathBuf,
    pub run: RunRecord,
}

/// `latlab compare`: the runs, the first being the baseline, and where the Markdown goes.
pub struct ComparePlan {
    pub runs: Vec<Labelled>,
    pub markdown: Option<OutputTarget>,
}

pub fn compare(args: &CompareArgs) -> Result<ComparePlan, UsageError> {
    let runs = args
        .files
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let run = load_run(path).map_err(|e| UsageError(e.to_string()))?;
            Ok(Labelled {
                label: char::from(b'A' + (i % 26) as u8).to_string(),
                path: path.clone(),
                run,
            })
        })
        .collect::<Result<_, UsageError>>()?;
    Ok(ComparePlan {
        runs,
        markdown: args.markdown.as_deref().map(OutputTarget::parse),
    })
}
