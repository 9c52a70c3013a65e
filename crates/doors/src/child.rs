//! The one way latlab runs a child: a probe in a process of its own, each run of `--runs`,
//! the counting run under Valgrind and `valgrind --version` are all started and waited
//! for by [`run`].
//!
//! - The child gets a process group of its own, so that the whole of it (Valgrind and the
//!   program under it, a grandchild that forked and went on) can be signalled and killed
//!   together; on Linux it dies with this process (`PR_SET_PDEATHSIG`), orphaned never.
//! - Every wait has a time limit ([`Supervision::limit`]), past which the group is killed;
//!   a child that runs long is named on standard error with how long it has run
//!   ([`Supervision::notice_after`]).
//! - A stopping signal this process receives (SIGINT, SIGTERM, SIGHUP: Ctrl-C reaches only
//!   the terminal's foreground group, which is this process's) is passed on to the group at
//!   once, and the group is killed if it has not ended within [`Supervision::grace`].
//! - When the child has ended, whatever is left of its group is killed: nothing it started
//!   goes on running.
//! - Its output is read with a bound: standard output up to [`Output::Captured`]'s bound
//!   (more is refused, not buffered), standard error's last bytes ([`Output::Tail`]), so
//!   that a child that floods either costs a bounded amount of memory.

use std::io::{self, Read};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the child is looked at for an end, a stopping signal or its limit.
const POLL: Duration = Duration::from_millis(20);
/// How long the readers of its output are waited for once the child and its group are
/// gone (a grandchild that left the group may hold the pipe open).
const DRAIN: Duration = Duration::from_secs(1);

/// Where one of the child's output streams goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// To this process's own stream.
    Inherited,
    /// Nowhere.
    Discarded,
    /// Read whole, up to this many bytes; more is an error ([`Ended::overflowed`]).
    Captured(usize),
    /// Read, keeping only the last this many bytes.
    Tail(usize),
}

/// How a child is watched while it runs.
pub struct Supervision<'a> {
    /// The child as notices name it: `the counting run under Valgrind`, `run 2 of 3`.
    pub what: &'a str,
    /// How long it may run before its group is killed.
    pub limit: Duration,
    /// After how long it is named as running long (then again each time its running time
    /// doubles); `None` for never.
    pub notice_after: Option<Duration>,
    /// How long it may take to stop once a stopping signal is passed on.
    pub grace: Duration,
    /// The stopping signal this process has received, if any.
    pub stop: &'a dyn Fn() -> Option<i32>,
    /// Says a notice (on standard error, as the caller prints).
    pub say: &'a dyn Fn(&str),
    pub stdout: Output,
    pub stderr: Output,
}

/// How a supervised child ended, with what it wrote where that was read.
#[derive(Debug)]
pub struct Ended {
    pub status: ExitStatus,
    pub end: End,
    /// Its standard output, where captured.
    pub stdout: Vec<u8>,
    /// Whether it wrote more to standard output than the bound.
    pub overflowed: bool,
    /// The last bytes of its standard error, where kept.
    pub stderr_tail: Vec<u8>,
}

/// How a supervised child's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// On its own.
    Exited,
    /// After a stopping signal was passed on to it (it obeyed).
    Stopped(i32),
    /// Killed: it outlived its limit.
    OutlivedLimit(Duration),
    /// Killed: it did not stop within its grace once a signal was passed on.
    DidNotStop(i32, Duration),
}

/// Starts `command` and waits for it as `supervision` says. `Err` when it cannot be
/// started, or waited for.
pub fn run(command: &mut Command, supervision: &Supervision) -> io::Result<Ended> {
    command
        .stdin(Stdio::null())
        .stdout(stdio(supervision.stdout))
        .stderr(stdio(supervision.stderr));
    own_group(command);
    #[allow(clippy::disallowed_methods, reason = "this is the door for a child")]
    let mut child = command.spawn()?;
    let stdout = child
        .stdout
        .take()
        .map(|out| reader(out, supervision.stdout));
    let stderr = child
        .stderr
        .take()
        .map(|err| reader(err, supervision.stderr));
    let watched = watch(&mut child, supervision);
    // Whatever is left of its group goes, whether it ended or was killed.
    kill_group(&child);
    let (status, end) = watched?;
    let (stdout, overflowed) = stdout.map_or((Vec::new(), false), Reader::finish);
    let (stderr_tail, _) = stderr.map_or((Vec::new(), false), Reader::finish);
    Ok(Ended {
        status,
        end,
        stdout,
        overflowed,
        stderr_tail,
    })
}

fn stdio(output: Output) -> Stdio {
    match output {
        Output::Inherited => Stdio::inherit(),
        Output::Discarded => Stdio::null(),
        Output::Captured(_) | Output::Tail(_) => Stdio::piped(),
    }
}

/// Waits for the child: signals passed on, notices said, the group killed past its limit or
/// its grace.
fn watch(child: &mut std::process::Child, s: &Supervision) -> io::Result<(ExitStatus, End)> {
    let started = Instant::now();
    let mut passed_on: Option<(i32, Instant)> = None;
    let mut next_notice = s.notice_after;
    loop {
        if let Some(status) = child.try_wait()? {
            let end = passed_on.map_or(End::Exited, |(signal, _)| End::Stopped(signal));
            return Ok((status, end));
        }
        let elapsed = started.elapsed();
        if passed_on.is_none()
            && let Some(signal) = (s.stop)()
        {
            signal_group(child, signal);
            passed_on = Some((signal, Instant::now()));
        }
        let killed = match passed_on {
            Some((signal, at)) if at.elapsed() > s.grace => Some(End::DidNotStop(signal, s.grace)),
            _ if elapsed > s.limit => Some(End::OutlivedLimit(s.limit)),
            _ => None,
        };
        if let Some(end) = killed {
            kill_group(child);
            let _ = child.kill();
            return Ok((child.wait()?, end));
        }
        if let Some(after) = next_notice
            && elapsed >= after
        {
            (s.say)(&format!(
                "latlab: {} has been running for {} s (it is stopped at {} s); Ctrl-C stops \
                 it and the run",
                s.what,
                elapsed.as_secs(),
                s.limit.as_secs()
            ));
            next_notice = Some(after * 2);
        }
        std::thread::sleep(POLL);
    }
}

/// A thread reading one of the child's streams as its [`Output`] says.
pub(crate) struct Reader {
    thread: std::thread::JoinHandle<(Vec<u8>, bool)>,
    done: Arc<AtomicBool>,
}

pub(crate) fn reader(mut stream: impl Read + Send + 'static, output: Output) -> Reader {
    let done = Arc::new(AtomicBool::new(false));
    let finished = Arc::clone(&done);
    let thread = std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut overflowed = false;
        let mut chunk = [0u8; 64 * 1024];
        loop {
            let read = match stream.read(&mut chunk) {
                Ok(0) => break,
                Ok(read) => read,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            match output {
                Output::Captured(max) if kept.len() + read > max => overflowed = true,
                Output::Tail(max) => {
                    kept.extend_from_slice(&chunk[..read]);
                    let excess = kept.len().saturating_sub(max);
                    kept.drain(..excess);
                }
                _ => kept.extend_from_slice(&chunk[..read]),
            }
        }
        finished.store(true, Ordering::Release);
        (kept, overflowed)
    });
    Reader { thread, done }
}

impl Reader {
    /// What it read, waiting up to [`DRAIN`] for the stream's end; a stream still held
    /// open by a grandchild that left the group is given up on.
    pub(crate) fn finish(self) -> (Vec<u8>, bool) {
        let until = Instant::now() + DRAIN;
        while !self.done.load(Ordering::Acquire) && Instant::now() < until {
            std::thread::sleep(POLL);
        }
        if !self.done.load(Ordering::Acquire) {
            return (Vec::new(), true);
        }
        self.thread.join().unwrap_or_default()
    }
}

/// Gives the child a process group of its own and, on Linux, has it die with this process.
#[cfg(unix)]
pub(crate) fn own_group(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    command.process_group(0);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // SAFETY: getpid takes nothing and cannot fail.
        let parent = unsafe { libc::getpid() };
        // SAFETY: between fork and exec the closure calls only prctl, getppid and _exit,
        // which are async-signal-safe, and allocates nothing.
        unsafe {
            command.pre_exec(move || {
                let signal = libc::c_ulong::try_from(libc::SIGTERM).unwrap_or(15);
                if libc::prctl(libc::PR_SET_PDEATHSIG, signal) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The parent may have died before the request took hold.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            })
        };
    }
}

#[cfg(not(unix))]
pub(crate) fn own_group(_command: &mut Command) {}

/// Passes `signal` on to the child's group.
#[cfg(unix)]
fn signal_group(child: &std::process::Child, signal: i32) {
    let _ = crate::sys::signal_group(child.id(), signal);
}

/// Windows has no signal to pass on: Ctrl-C reaches every process of the console, the
/// child too, and one that does not stop within its grace is killed.
#[cfg(not(unix))]
fn signal_group(_child: &std::process::Child, _signal: i32) {}

/// Kills whatever is left of the child's group.
#[cfg(unix)]
pub(crate) fn kill_group(child: &std::process::Child) {
    let _ = crate::sys::signal_group(child.id(), libc::SIGKILL);
}

#[cfg(not(unix))]
pub(crate) fn kill_group(_child: &std::process::Child) {}

/// A child's exit status as a shell reports it: its code, or 128 plus the signal that
/// ended it.
pub fn shell_status(status: ExitStatus) -> u8 {
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

/// The hostile children, run against the supervisor: each is a shell script, and each line
/// of the catalogue says what the supervisor must make of it. A new kind of child goes
/// through [`run`], and is covered by these.
#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// What a hostile child does, and what must come of it.
    struct Hostile {
        what: &'static str,
        script: &'static str,
        /// The stopping signal sent to this process after this long, if any.
        signal_after: Option<Duration>,
        expect: fn(&Ended, Duration),
    }

    const LIMIT: Duration = Duration::from_secs(1);
    const GRACE: Duration = Duration::from_millis(300);

    const CATALOGUE: &[Hostile] = &[
        Hostile {
            what: "hangs",
            script: "sleep 1000",
            signal_after: None,
            expect: |ended, took| {
                assert_eq!(ended.end, End::OutlivedLimit(LIMIT));
                assert!(took < LIMIT + Duration::from_secs(2), "{took:?}");
            },
        },
        Hostile {
            what: "floods standard error",
            script: "yes 'a line of a flood of standard error' >&2",
            signal_after: None,
            expect: |ended, _| {
                assert_eq!(ended.end, End::OutlivedLimit(LIMIT));
                assert!(
                    ended.stderr_tail.len() <= 4096,
                    "{}",
                    ended.stderr_tail.len()
                );
                assert!(!ended.stderr_tail.is_empty());
            },
        },
        Hostile {
            what: "floods standard output",
            script: "yes 'a line of a flood of standard output'",
            signal_after: None,
            expect: |ended, _| {
                assert!(ended.overflowed);
                assert!(ended.stdout.len() <= 4096, "{}", ended.stdout.len());
            },
        },
        Hostile {
            what: "exits 0 with nothing",
            script: "exit 0",
            signal_after: None,
            expect: |ended, _| {
                assert_eq!(ended.end, End::Exited);
                assert!(ended.status.success() && ended.stdout.is_empty() && !ended.overflowed);
            },
        },
        Hostile {
            what: "forks and goes on",
            script: "(trap '' TERM; sleep 1000) & echo $! > \"$PIDFILE\"; exit 0",
            signal_after: None,
            expect: |ended, took| {
                assert_eq!(ended.end, End::Exited);
                assert!(took < Duration::from_millis(900), "{took:?}");
            },
        },
        Hostile {
            what: "ignores SIGTERM",
            script: "trap '' TERM INT; echo $$ > \"$PIDFILE\"; while :; do sleep 0.05; done",
            signal_after: Some(Duration::from_millis(300)),
            expect: |ended, took| {
                assert_eq!(ended.end, End::DidNotStop(libc::SIGTERM, GRACE));
                assert!(took < Duration::from_secs(2), "{took:?}");
            },
        },
        Hostile {
            what: "stops on SIGTERM",
            script: "echo $$ > \"$PIDFILE\"; sleep 1000",
            signal_after: Some(Duration::from_millis(300)),
            expect: |ended, took| {
                assert_eq!(ended.end, End::Stopped(libc::SIGTERM));
                assert!(took < Duration::from_secs(2), "{took:?}");
            },
        },
    ];

    /// Every hostile child ends within its limit or its grace, nothing it started is left
    /// running, and what it wrote is kept within the bound.
    #[test]
    fn every_hostile_child_is_bounded_and_leaves_nothing_running() {
        std::thread::scope(|scope| {
            for hostile in CATALOGUE {
                scope.spawn(|| hostile_child(hostile));
            }
        });
    }

    /// Runs one hostile child and checks what came of it.
    fn hostile_child(hostile: &Hostile) {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let mut command = Command::new("sh");
        command
            .args(["-c", hostile.script])
            .env("PIDFILE", &pid_file);
        let started = Instant::now();
        let stop = || {
            let due = hostile
                .signal_after
                .is_some_and(|after| started.elapsed() >= after);
            due.then_some(libc::SIGTERM)
        };
        let ended = run(
            &mut command,
            &Supervision {
                what: hostile.what,
                limit: LIMIT,
                notice_after: Some(Duration::from_secs(1)),
                grace: GRACE,
                stop: &stop,
                say: &|_| {},
                stdout: Output::Captured(4096),
                stderr: Output::Tail(4096),
            },
        )
        .unwrap();
        (hostile.expect)(&ended, started.elapsed());
        // Whatever it started is gone: its group was killed.
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|text| text.trim().parse::<u32>().ok())
        {
            let deadline = Instant::now() + Duration::from_secs(2);
            while crate::sys::process_exists(pid) && Instant::now() < deadline {
                std::thread::sleep(POLL);
            }
            let zombie_or_gone = !crate::sys::process_exists(pid)
                || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|stat| stat.contains(") Z "));
            assert!(
                zombie_or_gone,
                "{}: pid {pid} is still running",
                hostile.what
            );
        }
    }

    /// A child that runs long is named, with how long it has run.
    #[test]
    fn a_long_child_is_named() {
        let said = std::sync::Mutex::new(Vec::new());
        let ended = run(
            Command::new("sleep").arg("1"),
            &Supervision {
                what: "the slow child",
                limit: Duration::from_secs(5),
                notice_after: Some(Duration::from_millis(300)),
                grace: GRACE,
                stop: &|| None,
                say: &|line| said.lock().unwrap().push(line.to_string()),
                stdout: Output::Discarded,
                stderr: Output::Discarded,
            },
        )
        .unwrap();
        assert_eq!(ended.end, End::Exited);
        let said = said.into_inner().unwrap();
        assert!(
            said.first()
                .is_some_and(|line| line.starts_with("latlab: the slow child has been running for")),
            "{said:?}"
        );
    }
}
