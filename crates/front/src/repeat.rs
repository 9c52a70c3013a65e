//! Several runs as one command (`--runs N`): the program started again for each run, one
//! process after another, each told by [`RUN_OF_VARIABLE`] which run it is. The variable
//! alone proves nothing (it could be left in any environment, and a run that believed it
//! would skip the gate and the baselines, which the command keeps for all its runs): on
//! Unix it names a pipe the command hands down and the secret the command wrote into it,
//! and a process that finds no such pipe ignores the variable, with a note. Runs in one
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
    /// The run this process is, when a command with `--runs` started it: the variable is
    /// believed only where the handshake the command hands down with it is found;
    /// otherwise it is ignored, and standard error says so once.
    pub fn of_this_process() -> Option<RunOf> {
        static OF_THIS_PROCESS: std::sync::OnceLock<Option<RunOf>> = std::sync::OnceLock::new();
        *OF_THIS_PROCESS.get_or_init(|| {
            let value = std::env::var_os(RUN_OF_VARIABLE)?;
            let value = value.to_string_lossy();
            let believed = Handshake::received(&value);
            if believed.is_none() {
                crate::say!(
                    "note: {RUN_OF_VARIABLE} is set, but no latlab command with --runs \
                     started this process: ignored (it is latlab's own handshake between a \
                     --runs command and its runs; unset it)"
                );
            }
            believed
        })
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
        Some((flag, output)) if runs > 1 && output == "-" => Err(format!(
            "{flag} - with --runs {runs}: standard output would carry {runs} documents one \
             after another, which no reader takes as one; {kept}, leave {flag} out"
        )),
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
        let handshake = Handshake::offer(of)?;
        let mut child = Command::new(&program)
            .args(std::env::args_os().skip(1))
            .env(RUN_OF_VARIABLE, handshake.value())
            .spawn()?;
        drop(handshake);
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

/// What a `--runs` command hands each run so that the run can tell the command's
/// [`RUN_OF_VARIABLE`] from one left in the environment: on Unix, the read end of a pipe
/// (inherited by the run, at the descriptor the variable names) holding a secret the
/// variable repeats. Nothing but the command that made the pipe can have written the
/// secret into it, so `RUN/RUNS` alone, or with a guessed descriptor, is ignored.
struct Handshake {
    of: RunOf,
    secret: String,
    /// The pipe's read end, open in this process until the run has started.
    #[cfg(unix)]
    read_end: std::os::fd::OwnedFd,
}

impl Handshake {
    /// A pipe holding a fresh secret, its read end left open across `exec`.
    #[cfg(unix)]
    fn offer(of: RunOf) -> std::io::Result<Handshake> {
        use latlab_engine::sys::set_inherited;
        use std::os::fd::AsFd;
        let secret = fresh_secret();
        let (read_end, mut write_end) = std::io::pipe()?;
        // The write end stays in this process, and is closed once the secret is in the
        // pipe (one write, shorter than PIPE_BUF, so read whole by one read).
        set_inherited(write_end.as_fd(), false)?;
        set_inherited(read_end.as_fd(), true)?;
        let written = std::io::Write::write(&mut write_end, secret.as_bytes())?;
        if written != secret.len() {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        Ok(Handshake {
            of,
            secret,
            read_end: read_end.into(),
        })
    }

    /// Elsewhere (the harness on Windows) no descriptor is handed down: the variable
    /// carries the secret alone.
    #[cfg(not(unix))]
    fn offer(of: RunOf) -> std::io::Result<Handshake> {
        Ok(Handshake {
            of,
            secret: fresh_secret(),
        })
    }

    /// The variable's value: `RUN/RUNS DESCRIPTOR SECRET`.
    fn value(&self) -> String {
        #[cfg(unix)]
        let descriptor = std::os::fd::AsRawFd::as_raw_fd(&self.read_end);
        #[cfg(not(unix))]
        let descriptor = -1;
        format!(
            "{}/{} {descriptor} {}",
            self.of.run, self.of.runs, self.secret
        )
    }

    /// The run a variable's `value` names, where the handshake is this process's own: the
    /// descriptor it names is a pipe (not standard input, output or error) that holds the
    /// secret it repeats. The pipe is read and closed, so the run's own children find none.
    #[cfg(unix)]
    fn received(value: &str) -> Option<RunOf> {
        use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd};
        use std::os::unix::fs::FileTypeExt;
        let mut parts = value.split(' ');
        let (of, descriptor, secret) = (parts.next()?, parts.next()?, parts.next()?);
        let of = RunOf::parse(of)?;
        let descriptor: i32 = descriptor.parse().ok()?;
        if parts.next().is_some() || descriptor <= 2 || secret.len() != SECRET_LENGTH {
            return None;
        }
        if !latlab_engine::sys::is_open(descriptor) {
            return None;
        }
        // SAFETY: the descriptor is open (checked just above) and only borrowed here, for
        // the two questions below; a descriptor that is not the handshake's is left as it is.
        let borrowed = unsafe { BorrowedFd::borrow_raw(descriptor) };
        let is_pipe = (borrowed.try_clone_to_owned())
            .and_then(|fd| std::fs::File::from(fd).metadata())
            .is_ok_and(|metadata| metadata.file_type().is_fifo());
        let now = std::time::Duration::ZERO;
        let has_data =
            latlab_engine::sys::wait_until_ready(borrowed, libc::POLLIN, now).is_ok_and(|r| r);
        if !is_pipe || !has_data {
            return None;
        }
        // SAFETY: a pipe with data waiting, at the descriptor the handshake names: this
        // process takes it over, reads it once and closes it.
        let pipe = unsafe { OwnedFd::from_raw_fd(descriptor) };
        let mut written = [0u8; 64];
        let read = std::io::Read::read(&mut std::fs::File::from(pipe), &mut written).ok()?;
        (&written[..read] == secret.as_bytes()).then_some(of)
    }

    /// Without a descriptor to check, the variable is believed where it has its shape.
    #[cfg(not(unix))]
    fn received(value: &str) -> Option<RunOf> {
        let mut parts = value.split(' ');
        let (of, _descriptor, secret) = (parts.next()?, parts.next()?, parts.next()?);
        (secret.len() == SECRET_LENGTH).then_some(())?;
        RunOf::parse(of)
    }
}

/// The length of a handshake's secret: 32 hexadecimal digits.
const SECRET_LENGTH: usize = 32;

/// 128 bits no other process can guess: two hashes of std's randomly keyed hasher.
fn fresh_secret() -> String {
    use std::hash::{BuildHasher, Hasher};
    let half = || {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        hasher.finish()
    };
    format!("{:016x}{:016x}", half(), half())
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

    /// A run believes the variable only with the pipe its command handed down holding the
    /// secret the variable repeats: not the variable alone, not another secret, not a
    /// standard descriptor, and not twice (the pipe is read and closed).
    #[cfg(unix)]
    #[test]
    fn a_run_believes_only_its_own_commands_handshake() {
        use std::os::fd::IntoRawFd;
        let of = RunOf { run: 2, runs: 3 };
        let offered = |of: RunOf| {
            let handshake = Handshake::offer(of).unwrap();
            let value = handshake.value();
            // As in the run, which inherits the descriptor and owns it from then on.
            let Handshake { read_end, .. } = handshake;
            (value, read_end.into_raw_fd())
        };
        let (value, _) = offered(of);
        assert_eq!(Handshake::received(&value), Some(of));
        assert_eq!(Handshake::received(&value), None, "the pipe is read once");
        let (_, descriptor) = offered(of);
        let other_secret = format!("2/3 {descriptor} {}", fresh_secret());
        assert_eq!(Handshake::received(&other_secret), None);
        for refused in ["2/3", "2/3 0 x", &format!("2/3 1 {}", fresh_secret())] {
            assert_eq!(Handshake::received(refused), None, "{refused}");
        }
    }
}
