//! Several runs as one command (`--runs N`): the program started again for each run, one
//! process after another, each told by [`RUN_OF_VARIABLE`] which run it is. Runs in one
//! process would share its warm caches, its mappings, its place in memory and the CPU it
//! started on; separate processes move between runs as two invocations do, which is what
//! a comparison must know.
//!
//! Ctrl-C and a closed terminal reach the whole process group, the run in progress
//! included, which stops, writes what it measured and ends; no run follows. A SIGTERM sent
//! to this process alone is passed on to the run in progress once (a second signal would
//! end that run at once, its results unwritten).
//!
//! [`supervise`] waits for such a child: the runs here, and the binary's probes that run in
//! a process of their own (which pass a stopping signal on whichever it was, and kill a
//! child that outlives its limit or does not stop).

use latlab_engine::signals::StopSignals;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;

/// The variable that tells a run started by `--runs` which run of how many it is: `2/3`.
pub const RUN_OF_VARIABLE: &str = "LATLAB_RUN_OF";

/// How often the runs are looked at for an end or a stopping signal.
const POLL: Duration = Duration::from_millis(50);

/// Which run of how many a process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOf {
    /// From 1.
    pub run: usize,
    pub runs: usize,
}

impl RunOf {
    /// The run this process is, when a command with `--runs` started it.
    pub fn of_this_process() -> Option<RunOf> {
        RunOf::parse(&std::env::var(RUN_OF_VARIABLE).ok()?)
    }

    fn parse(text: &str) -> Option<RunOf> {
        let (run, runs) = text.split_once('/')?;
        let (run, runs) = (run.parse().ok()?, runs.parse().ok()?);
        (1 <= run && run <= runs).then_some(RunOf { run, runs })
    }

    /// The directory (or file stem) the run writes into: `run-2`.
    pub fn name(&self) -> String {
        format!("run-{}", self.run)
    }

    /// The run number in a name [`RunOf::name`] made: 2 for `run-2`.
    pub fn number_of(name: &str) -> Option<usize> {
        name.strip_prefix("run-")?.parse().ok()
    }
}

/// Refuses, for a command of several `runs`, an output named for each run (`named`: each
/// option and its value): every run would write over the last. `kept` says where each
/// run's results go instead.
pub fn check_outputs_for_runs(
    runs: usize,
    named: &[(String, Option<String>)],
    kept: &str,
) -> Result<(), String> {
    match named
        .iter()
        .find_map(|(flag, output)| Some((flag, output.as_ref()?)))
    {
        Some((flag, output)) if runs > 1 => Err(format!(
            "{flag} {output} with --runs {runs}: each run would write over the last; {kept}, \
             leave {flag} out"
        )),
        _ => Ok(()),
    }
}

/// The entries of `dir` named as runs are (`run-K`, then `suffix`: `.json` for runs kept as
/// files, nothing for run directories), with their K, in the order of K; none where `dir`
/// cannot be read.
pub fn numbered_runs(dir: &Path, suffix: &str) -> Vec<(usize, PathBuf)> {
    let mut runs: Vec<(usize, PathBuf)> = (std::fs::read_dir(dir).into_iter().flatten())
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let name = path.file_name()?.to_str()?;
            Some((RunOf::number_of(name.strip_suffix(suffix)?)?, path))
        })
        .collect();
    runs.sort();
    runs
}

/// How several runs ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsEnded {
    /// Every run ended with its results written; `failed` when one of them ended with
    /// status 1 (a probe or a benchmark failed, the others' results kept).
    All { failed: bool },
    /// A run was stopped (by a signal) or could not run: the status to end with, and how
    /// many runs ended whole before it.
    Stopped { status: u8, whole: usize },
}

/// Runs this program again `runs` times, with its own arguments, one process after another;
/// `announce` is told of each run before it starts. Stops after a run that ends other than
/// with status 0 or 1, and before a run when `stop` has a signal.
pub fn run_again(
    runs: usize,
    stop: &StopSignals,
    announce: impl Fn(RunOf),
) -> std::io::Result<RunsEnded> {
    let program = std::env::current_exe()?;
    let mut failed = false;
    for run in 1..=runs {
        let of = RunOf { run, runs };
        if stop.received().is_some() {
            return Ok(RunsEnded::Stopped {
                status: stop.exit_status(),
                whole: run - 1,
            });
        }
        announce(of);
        let mut child = Command::new(&program)
            .args(std::env::args_os().skip(1))
            .env(RUN_OF_VARIABLE, format!("{run}/{runs}"))
            .spawn()?;
        let status = wait_passing_on_sigterm(&mut child, stop)?;
        match status_of(status) {
            0 => {}
            1 => failed = true,
            status => {
                return Ok(RunsEnded::Stopped {
                    status,
                    whole: run - 1,
                });
            }
        }
    }
    Ok(RunsEnded::All { failed })
}

/// Waits for `child`, passing a SIGTERM this process receives on to it once.
fn wait_passing_on_sigterm(
    child: &mut std::process::Child,
    stop: &StopSignals,
) -> std::io::Result<ExitStatus> {
    let supervision = Supervision {
        pass_on: &|| stop.received() == Some(libc::SIGTERM),
        limit: None,
        grace: None,
    };
    match supervise(child, &supervision)? {
        ChildEnd::Exited(status) | ChildEnd::Killed(status, _) => Ok(status),
    }
}

/// How a child process is watched while it runs.
pub struct Supervision<'a> {
    /// Whether a stopping signal should now be passed on to it (SIGTERM, once).
    pub pass_on: &'a dyn Fn() -> bool,
    /// How long it may run before it is killed.
    pub limit: Option<Duration>,
    /// How long it may take to stop once the signal is passed on before it is killed.
    pub grace: Option<Duration>,
}

/// How a supervised child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildEnd {
    /// On its own (or by a signal it was passed on and obeyed).
    Exited(ExitStatus),
    /// Killed: it outlived its limit, or did not stop within its grace.
    Killed(ExitStatus, KilledFor),
}

/// Why a supervised child was killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KilledFor {
    OutlivedLimit(Duration),
    DidNotStop(Duration),
}

/// Waits for `child` as `supervision` says: a SIGTERM passed on once when it asks, and the
/// child killed (SIGKILL) past its limit or its grace.
pub fn supervise(
    child: &mut std::process::Child,
    supervision: &Supervision,
) -> std::io::Result<ChildEnd> {
    let started = std::time::Instant::now();
    let mut passed_on: Option<std::time::Instant> = None;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(ChildEnd::Exited(status));
        }
        if passed_on.is_none() && (supervision.pass_on)() {
            ask_to_stop(child);
            passed_on = Some(std::time::Instant::now());
        }
        let killed_for = match (supervision.limit, supervision.grace, passed_on) {
            (Some(limit), _, _) if started.elapsed() > limit => {
                Some(KilledFor::OutlivedLimit(limit))
            }
            (_, Some(grace), Some(at)) if at.elapsed() > grace => {
                Some(KilledFor::DidNotStop(grace))
            }
            _ => None,
        };
        if let Some(why) = killed_for {
            child.kill()?;
            return Ok(ChildEnd::Killed(child.wait()?, why));
        }
        std::thread::sleep(POLL);
    }
}

/// Passes SIGTERM on to `child`.
#[cfg(unix)]
fn ask_to_stop(child: &std::process::Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) on the pid of a child not yet waited for.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
}

/// Windows has no signal to pass on: Ctrl-C reaches every process of the console, the
/// child too, and one that does not stop within its grace is killed.
#[cfg(not(unix))]
fn ask_to_stop(_child: &std::process::Child) {}

/// A run's exit status as a shell reports it: 128 plus the signal that ended it.
fn status_of(status: ExitStatus) -> u8 {
    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    #[cfg(not(unix))]
    let signal: Option<i32> = None;
    match (status.code(), signal) {
        (Some(code), _) => u8::try_from(code).unwrap_or(2),
        (None, Some(signal)) => u8::try_from(128 + signal).unwrap_or(2),
        (None, None) => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_named_by_its_number_of_how_many() {
        assert_eq!(RunOf::parse("2/3"), Some(RunOf { run: 2, runs: 3 }));
        assert_eq!(RunOf::parse("2/3").unwrap().name(), "run-2");
        assert_eq!(RunOf::number_of("run-2"), Some(2));
        assert_eq!(RunOf::number_of("run-2.json"), None);
        for refused in ["0/3", "4/3", "2", "a/3", "2/", ""] {
            assert_eq!(RunOf::parse(refused), None, "{refused}");
        }
    }
}
