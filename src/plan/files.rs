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
    let run = load_run(&args.file)?;
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

/// `latlab compare`: the runs, the first being the baseline, each with its letter; the file
/// each came from, in the same order; and where the Markdown goes.
pub struct ComparePlan {
    pub runs: Vec<(String, RunRecord)>,
    pub paths: Vec<PathBuf>,
    pub markdown: Option<OutputTarget>,
}

pub fn compare(args: &CompareArgs) -> Result<ComparePlan, UsageError> {
    let runs = args
        .files
        .iter()
        .enumerate()
        .map(|(i, path)| {
            Ok((
                char::from(b'A' + (i % 26) as u8).to_string(),
                load_run(path)?,
            ))
        })
        .collect::<Result<_, UsageError>>()?;
    Ok(ComparePlan {
        runs,
        paths: args.files.clone(),
        markdown: args.markdown.as_deref().map(OutputTarget::parse),
    })
}
