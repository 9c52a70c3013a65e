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
    if args
        .out
        .as_ref()
        .is_some_and(|out| out.as_os_str().is_empty())
    {
        return Err(UsageError(
            "--out '': an empty path; give the page's file name, such as report.html".into(),
        ));
    }
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

/// The letters a run is shown by, as spreadsheet columns are: A … Z, AA, AB … ZZ, AAA ….
fn run_label(index: usize) -> String {
    let mut letters = Vec::new();
    let mut n = index + 1;
    while n > 0 {
        n -= 1;
        letters.push(char::from(b'A' + (n % 26) as u8));
        n /= 26;
    }
    letters.iter().rev().collect()
}

/// `latlab compare`: the runs, the first being the baseline, each with its letter; the file
/// each came from, in the same order; and where the Markdown goes.
pub struct ComparePlan {
    pub runs: Vec<(String, RunRecord)>,
    pub paths: Vec<PathBuf>,
    pub markdown: Option<OutputTarget>,
}

pub fn compare(args: &CompareArgs) -> Result<ComparePlan, UsageError> {
    if args.markdown.as_deref().is_some_and(str::is_empty) {
        return Err(UsageError(
            "--markdown '': an empty path; give a file name, or '-' for standard output".into(),
        ));
    }
    let runs = args
        .files
        .iter()
        .enumerate()
        .map(|(i, path)| Ok((run_label(i), load_run(path)?)))
        .collect::<Result<_, UsageError>>()?;
    Ok(ComparePlan {
        runs,
        paths: args.files.clone(),
        markdown: args.markdown.as_deref().map(OutputTarget::parse),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_gets_its_own_label() {
        let labels: Vec<String> = (0..800).map(run_label).collect();
        assert_eq!(&labels[..3], ["A", "B", "C"]);
        assert_eq!(&labels[25..28], ["Z", "AA", "AB"]);
        assert_eq!(labels[701], "ZZ");
        assert_eq!(labels[702], "AAA");
        let unique: std::collections::HashSet<&String> = labels.iter().collect();
        assert_eq!(unique.len(), labels.len());
    }
}
