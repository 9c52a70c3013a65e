//! Executes the plans of the subcommands that read results files: the HTML page of one
//! run (`latlab report`) and runs side by side (`latlab compare`).

use crate::plan::{ComparePlan, ReportPlan};
use latlab_report::compare::{compare_markdown, compare_text};
use latlab_report::{Exporter, HtmlExporter, OutputTarget, printable, write_output};
use std::io::Write;

/// Writes the page and says where, with its size.
pub fn report(plan: &ReportPlan) -> anyhow::Result<()> {
    let page = HtmlExporter.render(&plan.run)?;
    write_output(&OutputTarget::File(plan.out.clone()), &page)?;
    let line = format!(
        "report: {} ({} KiB)\n",
        printable(&plan.out.display().to_string()),
        page.len() / 1024
    );
    write_output(&OutputTarget::Stdout, &line)?;
    Ok(())
}

/// Prints the comparison with a legend of the runs, and writes the Markdown if asked; the
/// text goes to standard error when the Markdown takes standard output.
pub fn compare(plan: &ComparePlan) -> anyhow::Result<()> {
    let legend: String = plan
        .runs
        .iter()
        .zip(&plan.paths)
        .map(|((label, run), path)| {
            format!(
                "{label} = {} ({}, {})\n",
                path.display(),
                run.environment.host_name,
                run.started_at
            )
        })
        .collect();
    let text = format!("{legend}\n{}", compare_text(&plan.runs));
    let text = printable(&text);
    if let Some(target) = &plan.markdown {
        write_output(target, &compare_markdown(&plan.runs))?;
    }
    if plan.markdown == Some(OutputTarget::Stdout) {
        write!(std::io::stderr(), "{text}")?;
    } else {
        write_output(&OutputTarget::Stdout, &text)?;
    }
    Ok(())
}
