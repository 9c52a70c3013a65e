//! `--runs N`: the run made N times, each a process of its own
//! ([`latlab_front::run_again`]), into `run-1` ... `run-N` of the results directory; then
//! the runs kept as one baseline, or compared with one, together, as `latlab compare`
//! compares two directories of runs.

use crate::plan::RunPlan;
use crate::run::{print_against_baseline, save_baseline};
use anyhow::Context;
use latlab_engine::model::RunRecord;
use latlab_engine::signals::StopSignals;
use latlab_front::{RunOf, RunsEnded};
use latlab_report::compare::Side;
use std::process::ExitCode;

/// Makes the plan's runs, one process after another, and keeps or compares them.
pub fn execute(plan: RunPlan, stop: StopSignals) -> anyhow::Result<ExitCode> {
    let dir = (plan.outputs.plots_dir.clone()).expect("a run writes into a results directory");
    if let Some(new) = &plan.outputs.create_dir {
        std::fs::create_dir(new).with_context(|| format!("--out {}", new.display()))?;
    }
    let runs = plan.runs;
    let ended = latlab_front::run_again(runs, &stop, |of| {
        latlab_front::say!(
            "latlab: run {} of {}, into {}",
            of.run,
            of.runs,
            dir.join(of.name()).display()
        );
    })?;
    let failed = match ended {
        RunsEnded::All { failed } => failed,
        RunsEnded::Stopped { status, whole } => {
            latlab_front::say!(
                "latlab: stopped in run {} of {runs}; the {whole} whole run(s) before it and \
                 what it measured are in {}",
                whole + 1,
                dir.display()
            );
            return Ok(ExitCode::from(status));
        }
    };
    let records = (1..=runs)
        .map(|run| {
            let path = dir.join(RunOf { run, runs }.name()).join("results.json");
            latlab_report::load::load_run(&path)
                .map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.0))
        })
        .collect::<anyhow::Result<Vec<RunRecord>>>()?;
    if let Some(saved_as) = &plan.save_baseline {
        save_baseline(saved_as, &records)?;
        latlab_front::say!("baseline {}: {}", saved_as.name, saved_as.dir.display());
    }
    if let Some((name, baseline)) = &plan.baseline {
        let these = Side {
            label: format!("these {runs} runs"),
            runs: records,
        };
        print_against_baseline(&plan, name, baseline, these)?;
    }
    latlab_front::say!(
        "latlab: {runs} runs in {}/run-1 ... run-{runs}; `latlab compare {} OTHER` compares \
         them with another directory of runs",
        dir.display(),
        dir.display()
    );
    Ok(ExitCode::from(u8::from(failed)))
}
