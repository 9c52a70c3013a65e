//! `--runs N`: the run made N times, each a process of its own
//! ([`latlab_front::RunsCommand`]), into `run-1` ... `run-N` of the results directory; then
//! the runs kept as one baseline, or compared with one, together, as `latlab compare`
//! compares two directories of runs.

use crate::plan::RunPlan;
use anyhow::Context;
use latlab_engine::signals::StopSignals;
use latlab_front::RunsCommand;
use std::process::ExitCode;

/// Makes the plan's runs, one process after another, and keeps or compares them.
pub fn execute(plan: RunPlan, stop: StopSignals) -> anyhow::Result<ExitCode> {
    let dir = plan.outputs.results_dir.clone();
    if let Some(new) = &plan.outputs.create_dir {
        latlab_doors::OwnDir::named(new, latlab_doors::Missing::Made)
            .with_context(|| format!("--out {}", new.display()))?;
    }
    let runs = plan.runs;
    let command = RunsCommand {
        runs,
        dir: &dir,
        results_of: &|of| dir.join(of.name()).join(latlab_report::runs::RESULTS_NAME),
        announce: &|of| {
            latlab_front::say!(
                "latlab: run {} of {}, into {}",
                of.run,
                of.runs,
                dir.join(of.name()).display()
            );
        },
        handed: None,
        baselines: &plan.request.baselines,
        terminal: &plan.request.terminal,
        results_called: "result",
        closing: format!(
            "latlab: {runs} runs in {}/run-1 ... run-{runs}; `latlab compare {} OTHER` \
             compares them with another directory of runs",
            dir.display(),
            dir.display()
        ),
    };
    let status = command.execute(&stop).map_err(anyhow::Error::msg)?;
    Ok(ExitCode::from(status))
}
