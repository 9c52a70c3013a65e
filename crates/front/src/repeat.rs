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
//! Each run is a child of the command's, started and waited for through the door for a
//! child ([`latlab_doors::child`]): a process group of its own, Ctrl-C, SIGTERM and SIGHUP
//! passed on to it at once (it stops, writes what it measured and ends; no run follows),
//! and killed if it has not stopped within [`RUN_GRACE`] or runs past [`RUN_LIMIT`].

use latlab_doors::child::{End, Output, Supervision};
use latlab_engine::signals::StopSignals;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// The variable that tells a run started by `--runs` which run of how many it is: `2/3`.
pub const RUN_OF_VARIABLE: &str = "LATLAB_RUN_OF";

/// How long a run may take to stop and write what it measured once a stopping signal is
/// passed on to it.
pub const RUN_GRACE: Duration = Duration::from_secs(30);
/// The longest a run may take before it is killed: a day.
pub const RUN_LIMIT: Duration = Duration::from_secs(24 * 3600);

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
        received().map(|(of, _)| *of)
    }

    /// The directory the command that started this run handed it, where it handed one
    /// (the harness's runs of one command go into a directory of that command's).
    pub fn handed_directory() -> Option<&'static Path> {
        received()?.1.as_deref()
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

    /// The run number in a name [`RunOf::name`] made followed by `suffix`: 2 for `run-2`
    /// and `run-2.json` (with `.json`); `None` for another name, `Some(Err)` for a number
    /// no run has ([`latlab_doors::rules::run_number`]).
    pub fn number_in(name: &str, suffix: &str) -> Option<Result<u64, String>> {
        latlab_doors::rules::run_number(name.strip_suffix(suffix)?.strip_prefix("run-")?)
    }
}

/// The handshake this process received, read once: the run it is, and the directory it was
/// handed.
fn received() -> Option<&'static (RunOf, Option<PathBuf>)> {
    static RECEIVED: OnceLock<Option<(RunOf, Option<PathBuf>)>> = OnceLock::new();
    RECEIVED
        .get_or_init(|| {
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
        .as_ref()
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
/// cannot be read. `Err` names an entry numbered past where a run may be.
pub fn numbered_runs(dir: &Path, suffix: &str) -> Result<Vec<(u64, PathBuf)>, String> {
    // The doors' one walk, of `dir` alone: a run directory is an entry not entered.
    let limits = latlab_doors::tree::Limits {
        depth: 0,
        entries: 1 << 20,
    };
    let numbered = |name: &std::ffi::OsStr| {
        (name.to_str()).is_some_and(|name| RunOf::number_in(name, suffix).is_some())
    };
    let tree = latlab_doors::tree::walk(dir, limits, numbered);
    let entries = (tree.found.into_iter().map(|found| found.path))
        .chain(tree.passed_over.too_deep)
        .chain(tree.passed_over.links)
        .chain(tree.passed_over.not_regular);
    let mut runs = Vec::new();
    for path in entries {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if let Some(number) = RunOf::number_in(name, suffix) {
            let number = number.map_err(|why| format!("{}: {why}; remove it", path.display()))?;
            runs.push((number, path));
        }
    }
    runs.sort();
    Ok(runs)
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

/// Runs this program again `runs` times, with its own arguments, one process after another,
/// each handed `directory` where one is given; `announce` is told of each run before it
/// starts. Stops after a run that ends other than with status 0 or 1, and before a run when
/// `stop` has a signal.
pub fn run_again(
    runs: usize,
    stop: &StopSignals,
    announce: impl Fn(RunOf),
    directory: Option<&Path>,
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
        let handshake = Handshake::offer(of, directory)?;
        let mut command = Command::new(&program);
        command
            .args(std::env::args_os().skip(1))
            .env(RUN_OF_VARIABLE, handshake.value());
        let what = format!("run {run} of {runs}");
        let ended = latlab_doors::child::run(
            &mut command,
            &Supervision {
                what: &what,
                limit: RUN_LIMIT,
                notice_after: None,
                grace: RUN_GRACE,
                stop: &|| stop.received(),
                say: &|line| crate::say!("{line}"),
                stdout: Output::Inherited,
                stderr: Output::Inherited,
            },
        )?;
        drop(handshake);
        if let End::OutlivedLimit(_) | End::DidNotStop(..) = ended.end {
            crate::say!("latlab: {what} was killed ({:?})", ended.end);
        }
        match latlab_doors::child::shell_status(ended.status) {
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
/// variable repeats, and after it the directory the command hands the run, if any.
/// Nothing but the command that made the pipe can have written the secret into it, so
/// `RUN/RUNS` alone, or with a guessed descriptor, is ignored.
struct Handshake {
    of: RunOf,
    secret: String,
    /// The pipe's read end, open in this process until the run has started.
    #[cfg(unix)]
    read_end: std::os::fd::OwnedFd,
    /// Where there is no pipe, the variable carries the directory.
    #[cfg(not(unix))]
    directory: Option<PathBuf>,
}

/// The most a handshake's pipe holds: the secret, a line break and a directory's path.
#[cfg(unix)]
const MAX_HANDSHAKE_BYTES: u64 = 64 * 1024;

impl Handshake {
    /// A pipe holding a fresh secret and `directory`, its read end left open across `exec`.
    #[cfg(unix)]
    fn offer(of: RunOf, directory: Option<&Path>) -> std::io::Result<Handshake> {
        use latlab_engine::sys::set_inherited;
        use std::os::fd::AsFd;
        use std::os::unix::ffi::OsStrExt;
        let secret = fresh_secret();
        let (read_end, mut write_end) = std::io::pipe()?;
        // The write end stays in this process, and is closed once all is in the pipe (less
        // than a pipe holds, so the write does not wait for the run).
        set_inherited(write_end.as_fd(), false)?;
        set_inherited(read_end.as_fd(), true)?;
        let mut message = secret.as_bytes().to_vec();
        if let Some(directory) = directory {
            message.push(b'\n');
            message.extend_from_slice(directory.as_os_str().as_bytes());
        }
        std::io::Write::write_all(&mut write_end, &message)?;
        Ok(Handshake {
            of,
            secret,
            read_end: read_end.into(),
        })
    }

    /// Elsewhere (the harness on Windows) no descriptor is handed down: the variable
    /// carries the secret and the directory alone.
    #[cfg(not(unix))]
    fn offer(of: RunOf, directory: Option<&Path>) -> std::io::Result<Handshake> {
        Ok(Handshake {
            of,
            secret: fresh_secret(),
            directory: directory.map(Path::to_path_buf),
        })
    }

    /// The variable's value: `RUN/RUNS DESCRIPTOR SECRET` (and, where there is no pipe,
    /// ` DIRECTORY`).
    fn value(&self) -> String {
        #[cfg(unix)]
        let (descriptor, directory) = (std::os::fd::AsRawFd::as_raw_fd(&self.read_end), "");
        #[cfg(not(unix))]
        let (descriptor, directory) = (
            -1,
            &(self.directory.as_ref())
                .map(|d| format!(" {}", d.display()))
                .unwrap_or_default(),
        );
        format!(
            "{}/{} {descriptor} {}{directory}",
            self.of.run, self.of.runs, self.secret
        )
    }

    /// The run a variable's `value` names, and the directory handed with it, where the
    /// handshake is this process's own: the descriptor it names is a pipe (not standard
    /// input, output or error) that holds the secret it repeats. The pipe is read and
    /// closed, so the run's own children find none.
    #[cfg(unix)]
    fn received(value: &str) -> Option<(RunOf, Option<PathBuf>)> {
        use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd};
        use std::os::unix::ffi::OsStrExt;
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
        // process takes it over, reads it to its end (the command closed its write end) and
        // closes it.
        let pipe = unsafe { OwnedFd::from_raw_fd(descriptor) };
        let mut written = Vec::new();
        let pipe = std::io::Read::take(std::fs::File::from(pipe), MAX_HANDSHAKE_BYTES);
        std::io::Read::read_to_end(&mut { pipe }, &mut written).ok()?;
        let mut lines = written.splitn(2, |&b| b == b'\n');
        if lines.next()? != secret.as_bytes() {
            return None;
        }
        let directory = lines
            .next()
            .map(|d| PathBuf::from(std::ffi::OsStr::from_bytes(d)));
        Some((of, directory))
    }

    /// Without a descriptor to check, the variable is believed where it has its shape.
    #[cfg(not(unix))]
    fn received(value: &str) -> Option<(RunOf, Option<PathBuf>)> {
        let mut parts = value.splitn(4, ' ');
        let (of, _descriptor, secret) = (parts.next()?, parts.next()?, parts.next()?);
        (secret.len() == SECRET_LENGTH).then_some(())?;
        Some((RunOf::parse(of)?, parts.next().map(PathBuf::from)))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_named_by_its_number_of_how_many() {
        assert_eq!(RunOf::parse("2/3"), Some(RunOf { run: 2, runs: 3 }));
        assert_eq!(RunOf::parse("2/3").unwrap().name(), "run-2");
        assert_eq!(RunOf::number_in("run-2", ""), Some(Ok(2)));
        assert_eq!(RunOf::number_in("run-2.json", ".json"), Some(Ok(2)));
        assert_eq!(RunOf::number_in("run-2.json", ""), None);
        assert!(
            RunOf::number_in("run-18446744073709551615.json", ".json")
                .unwrap()
                .is_err()
        );
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
            let handshake = Handshake::offer(of, Some(Path::new("/runs/of a command"))).unwrap();
            let value = handshake.value();
            // As in the run, which inherits the descriptor and owns it from then on.
            let Handshake { read_end, .. } = handshake;
            (value, read_end.into_raw_fd())
        };
        let (value, _) = offered(of);
        let handed = Some(PathBuf::from("/runs/of a command"));
        assert_eq!(Handshake::received(&value), Some((of, handed)));
        assert_eq!(Handshake::received(&value), None, "the pipe is read once");
        let (_, descriptor) = offered(of);
        let other_secret = format!("2/3 {descriptor} {}", fresh_secret());
        assert_eq!(Handshake::received(&other_secret), None);
        for refused in ["2/3", "2/3 0 x", &format!("2/3 1 {}", fresh_secret())] {
            assert_eq!(Handshake::received(refused), None, "{refused}");
        }
    }
}
