//! `--runs N` as both front ends make it ([`RunsCommand`]): the runs started one after
//! another, each a process of its own, read back, and judged and kept together.

use crate::{Baselines, RunOf, Unwritten};
use latlab_engine::model::RunRecord;
use latlab_engine::signals::StopSignals;
use latlab_report::terminal::Terminal;
use std::path::{Path, PathBuf};

use super::with_causes;

/// A `--runs` command as a front end asks for it.
pub struct RunsCommand<'a> {
    pub runs: usize,
    /// Where the runs are kept, as the message of a stopped run says.
    pub dir: &'a Path,
    /// Where run K writes its results, which are read back from there.
    pub results_of: &'a dyn Fn(RunOf) -> PathBuf,
    /// Says each run before it starts.
    pub announce: &'a dyn Fn(RunOf),
    /// The directory handed to each run ([`RunOf::handed_directory`]), if any.
    pub handed: Option<&'a Path>,
    pub baselines: &'a Baselines,
    /// How the comparison with a baseline is laid out.
    pub terminal: &'a Terminal,
    /// What a result is called in the gate's text: "result", "benchmark".
    pub results_called: &'a str,
    /// The last line: where the runs are, and what compares them.
    pub closing: String,
}

impl RunsCommand<'_> {
    /// Makes the runs, then compares them with the baseline together and keeps them as
    /// one: the exit status (a stopped run's; 1 when a run failed, the gate found a result
    /// slower or a baseline could not be kept; else 0). `Err` when a run could not be
    /// started or read back, or the comparison printed.
    pub fn execute(&self, stop: &StopSignals) -> Result<u8, String> {
        let repeated = repeat(self, stop)?;
        let (records, failed) = match repeated {
            Repeated::All { records, failed } => (records, failed),
            Repeated::Stopped(status) => return Ok(status),
        };
        let regressed =
            judge_and_keep(self.baselines, records, self.terminal, self.results_called)?;
        crate::say!("{}", self.closing);
        Ok(u8::from(failed || regressed))
    }
}

/// How the runs of a `--runs` command ended.
enum Repeated {
    /// Every run ended with its results written: their records, in order, and whether one
    /// of them failed.
    All {
        records: Vec<RunRecord>,
        failed: bool,
    },
    /// A run was stopped: the status to end with.
    Stopped(u8),
}

/// `--runs N`: the program run N times, each a process of its own started after the last
/// ended ([`crate::run_again`]), each writing its results into `results_of(run)`; `announce`
/// says each before it starts. A run stopped by a signal is said, with where the runs before
/// it are (`kept_in`).
fn repeat(command: &RunsCommand, stop: &StopSignals) -> Result<Repeated, String> {
    let &RunsCommand {
        runs,
        dir: kept_in,
        results_of,
        announce,
        handed,
        ..
    } = command;
    let ended = crate::run_again(runs, stop, announce, handed)
        .map_err(|e| format!("--runs: cannot start a run: {e}"))?;
    let failed = match ended {
        crate::RunsEnded::All { failed } => failed,
        crate::RunsEnded::Stopped { status, whole } => {
            crate::say!(
                "latlab: stopped in run {} of {runs}; the {whole} whole run(s) before it and \
                 what it measured are in {}",
                whole + 1,
                kept_in.display()
            );
            return Ok(Repeated::Stopped(status));
        }
    };
    let records = (1..=runs)
        .map(|run| {
            let path = results_of(RunOf { run, runs });
            latlab_report::load::load_run(&path, latlab_doors::Reached::Found)
                .map_err(|e| format!("{}: {}", path.display(), e.0))
        })
        .collect::<Result<Vec<RunRecord>, String>>()?;
    Ok(Repeated::All { records, failed })
}

/// The runs of a `--runs` command compared with the baseline together (the comparison
/// printed, as `terminal` lays it out) and kept as one together: whether the gate found a
/// result slower or a baseline could not be kept.
fn judge_and_keep(
    baselines: &Baselines,
    records: Vec<RunRecord>,
    terminal: &Terminal,
    results_called: &str,
) -> Result<bool, String> {
    let mut unwritten = Unwritten::default();
    baselines.keep(&records, &mut unwritten);
    let these = latlab_report::compare::Side {
        label: format!("these {} runs", records.len()),
        runs: records,
    };
    let (text, regressed) = baselines.judged(these, terminal, results_called);
    crate::print_out(&terminal.printable(&text)).map_err(|e| with_causes(&e))?;
    unwritten.report();
    Ok(regressed || !unwritten.is_empty())
}
