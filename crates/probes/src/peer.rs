//! The peers of a measurement (forked child processes, helper threads) and the limits that
//! keep them from outliving it.
//!
//! * A [`Child`] is a forked process running a closure. It dies with latlab
//!   (`PR_SET_PDEATHSIG`), ignores Ctrl-C, SIGTERM and SIGHUP (which a closed terminal sends
//!   its whole process group) so that the parent decides when it ends, and is
//!   killed and reaped when dropped: no zombie, no orphan, whatever path the probe takes.
//! * A [`Watchdog`] kills the children it guards when a time limit passes, so a peer that
//!   hangs turns a blocked `read` into an end of file instead of a frozen run.
//! * A [`Failure`] carries the first reason a peer failed from wherever it was seen (the
//!   watchdog, a measured closure, a helper thread) to the probe, and doubles as the runner's
//!   abort flag ([`Runner::with_abort`]).

use crate::ProbeError;
use crate::helper::spawn_named;
use crate::mem::pages::mapped::page_size;
use crate::monotonic::{monotonic_now, sleep_until};
use latlab_engine::Runner;
pub(crate) use latlab_engine::isolation::{enter_fifo, leave_realtime};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The first reason a measurement's peer failed, shared by everything that can see it.
#[derive(Clone, Default)]
pub(crate) struct Failure {
    flag: Arc<AtomicBool>,
    reason: Arc<Mutex<Option<String>>>,
    /// A watchdog's flag and the reason it stands for: once raised, that is the first
    /// reason, whatever the measurement saw when the killed peer stopped answering.
    watchdog: Arc<Mutex<Option<(RawFlag, String)>>>,
}

impl std::fmt::Debug for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Failure")
            .field("reason", &self.reason())
            .finish()
    }
}

impl Failure {
    /// Records `reason` unless a reason is already recorded, and raises the flag.
    pub(crate) fn fail(&self, reason: impl Into<String>) {
        let mut slot = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert_with(|| reason.into());
        self.flag.store(true, Ordering::Release);
    }

    pub(crate) fn has_failed(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    pub(crate) fn reason(&self) -> Option<String> {
        let watchdog = self.watchdog.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((flag, reason)) = watchdog.as_ref()
            && flag.is_raised()
        {
            return Some(reason.clone());
        }
        self.reason
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Takes `reason` as the failure's first whenever `flag` is raised (by a watchdog
    /// process, which cannot call [`Failure::fail`]).
    fn watch(&self, flag: RawFlag, reason: String) {
        *self.watchdog.lock().unwrap_or_else(|e| e.into_inner()) = Some((flag, reason));
    }

    /// Stops looking at the watchdog's flag, keeping its reason as the first if it was
    /// raised: the flag's page is about to be unmapped.
    fn settle_watchdog(&self) {
        let taken = self
            .watchdog
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some((flag, reason)) = taken
            && flag.is_raised()
        {
            *self.reason.lock().unwrap_or_else(|e| e.into_inner()) = Some(reason);
            self.flag.store(true, Ordering::Release);
        }
    }

    /// Runs `body` so that a failure stops its benchmark at the next sample, and turns the
    /// outcome into the probe's: a recorded failure wins over an interruption it caused.
    pub(crate) fn guard<T>(
        &self,
        runner: &mut Runner,
        body: impl FnOnce(&mut Runner) -> Result<T, ProbeError>,
    ) -> Result<T, ProbeError> {
        let outcome = runner.with_abort(Arc::clone(&self.flag), body);
        match (outcome, self.reason()) {
            (Ok(_), Some(reason)) | (Err(ProbeError::Interrupted(_)), Some(reason)) => {
                Err(ProbeError::Failed(reason))
            }
            (outcome, _) => outcome,
        }
    }
}

/// A forked child process running a closure; killed and reaped when dropped.
#[derive(Debug)]
pub(crate) struct Child {
    pid: libc::pid_t,
    reaped: bool,
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    Code(i32),
    Signal(i32),
}

/// The exit status of a forked child whose body panicked, as Rust's own for a panic.
pub(crate) const PANICKED: i32 = 101;

impl Child {
    /// Forks a child that runs `body` and exits with its return value; a panic in `body`
    /// ends the child with status 101, never unwinding into the parent's stack frames that
    /// the child holds a copy of.
    ///
    /// # Safety
    ///
    /// The child is a copy of a process that may have other threads, some of them holding
    /// locks (the allocator's among them) that no thread will ever release in the child.
    /// `body` must therefore keep to async-signal-safe calls: raw system calls on
    /// descriptors and memory prepared before the fork, no allocation, no locks, no
    /// printing. A panic is caught, but a panic allocates: it is a last resort, not a way out.
    pub(crate) unsafe fn fork(body: impl FnOnce() -> i32) -> io::Result<Child> {
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the child runs only `body`, which the caller promises is async-signal-safe,
        // and leaves with _exit whatever `body` does, never returning into the parent's
        // stack frames.
        match unsafe { libc::fork() } {
            -1 => Err(io::Error::last_os_error()),
            0 => {
                // SAFETY: prctl, getppid, signal and _exit are async-signal-safe.
                unsafe {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    if libc::getppid() != parent {
                        libc::_exit(1);
                    }
                    for signal in latlab_engine::signals::STOPPING {
                        libc::signal(signal, libc::SIG_IGN);
                    }
                }
                leave_realtime();
                latlab_engine::locks::close_run_lock_after_fork();
                let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body))
                    .unwrap_or(PANICKED);
                // SAFETY: as above.
                unsafe { libc::_exit(code) }
            }
            pid => Ok(Child { pid, reaped: false }),
        }
    }

    pub(crate) fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Takes charge of a child started some other way (`posix_spawn`).
    pub(crate) fn adopt(pid: libc::pid_t) -> Child {
        Child { pid, reaped: false }
    }

    /// Hands the child over: the caller must reap it (or [`Child::adopt`] it again).
    pub(crate) fn into_pid(self) -> libc::pid_t {
        let pid = self.pid;
        std::mem::forget(self);
        pid
    }

    /// Waits for the child to end, for as long as that takes (after a kill, not long).
    pub(crate) fn wait(&mut self) -> io::Result<Exit> {
        self.wait_with(0)
            .map(|exit| exit.expect("a blocking wait reaps"))
    }

    fn wait_with(&mut self, flags: libc::c_int) -> io::Result<Option<Exit>> {
        let mut status = 0;
        loop {
            // SAFETY: `status` is a valid int to write; `pid` is our unreaped child.
            match unsafe { libc::waitpid(self.pid, &mut status, flags) } {
                0 => return Ok(None),
                -1 => {
                    let error = io::Error::last_os_error();
                    if error.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    return Err(error);
                }
                _ => {
                    self.reaped = true;
                    return Ok(Some(if libc::WIFSIGNALED(status) {
                        Exit::Signal(libc::WTERMSIG(status))
                    } else {
                        Exit::Code(libc::WEXITSTATUS(status))
                    }));
                }
            }
        }
    }

    /// Kills the child (if it is still there) and reaps it.
    pub(crate) fn kill(&mut self) {
        if !self.reaped {
            // SAFETY: the pid is our child and not yet reaped, so it cannot have been reused.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
            let _ = self.wait();
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Kills the guarded processes and records a failure if it is not dropped within its limit.
///
/// It is a forked process, not a thread: while a live thread shares the measuring
/// process's memory, every switch into that process costs more (measured in the book's
/// methods, "Threads and processes"), so a watchdog thread would be measured with the peers
/// it guards. The process sleeps until the deadline; if it is still there, it raises a flag
/// in a page it shares with latlab, kills the peers, and wakes the eventfds. Dropping the
/// watchdog kills and reaps it.
pub(crate) struct Watchdog {
    process: Child,
    /// The page the process raises its flag in; unmapped after the process is reaped.
    _shared: SharedFlag,
    failure: Failure,
}

impl Watchdog {
    /// Starts watching `pids`; `what` names the measurement in the failure's reason. After a
    /// kill it adds one to each eventfd in `wake` (which must stay open until the watchdog is
    /// dropped), to wake a client that waits on one.
    pub(crate) fn arm(
        pids: Vec<libc::pid_t>,
        wake: Vec<std::os::fd::RawFd>,
        limit: Duration,
        what: &str,
        failure: &Failure,
    ) -> Result<Watchdog, ProbeError> {
        let fired = SharedFlag::new().map_err(|e| {
            ProbeError::Failed(format!("could not map the watchdog's shared page: {e}"))
        })?;
        let deadline = monotonic_now() + limit;
        let flag = fired.clone_raw();
        let body = move || {
            sleep_until(deadline);
            flag.raise();
            for &pid in &pids {
                // SAFETY: the pids are children of latlab that it reaps only after this
                // watchdog is dropped (it is declared after them), so none was reused.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            for &fd in &wake {
                let one: u64 = 1;
                // SAFETY: an eventfd latlab keeps open while the watchdog lives; it takes
                // 8 bytes. The descriptor was inherited, and names the same eventfd.
                unsafe { libc::write(fd, (&one as *const u64).cast(), 8) };
            }
            0
        };
        // SAFETY: the body makes only async-signal-safe calls (clock_nanosleep, kill,
        // write) on memory prepared before the fork: the pid and descriptor lists, and the
        // shared page.
        let process = unsafe { Child::fork(body) }.map_err(|e| {
            ProbeError::Failed(format!("could not start the watchdog process: {e}"))
        })?;
        failure.watch(
            fired.clone_raw(),
            format!(
                "{what}: a peer did not answer within {} s and was killed",
                limit.as_secs_f64()
            ),
        );
        Ok(Watchdog {
            process,
            _shared: fired,
            failure: failure.clone(),
        })
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        // Killed and reaped, and its verdict moved into the failure, before the page it
        // writes to is unmapped (when `fired` drops, after this).
        self.process.kill();
        self.failure.settle_watchdog();
    }
}

/// A flag in a page shared with forked children: what one of them raises, latlab sees.
struct SharedFlag {
    page: std::ptr::NonNull<std::sync::atomic::AtomicU32>,
}

/// A copy of a [`SharedFlag`]'s address, for a forked child or a [`Failure`]; valid while
/// the flag is mapped.
#[derive(Clone, Copy)]
pub(crate) struct RawFlag(*const std::sync::atomic::AtomicU32);

// SAFETY: the pointer is to an atomic in a page that stays mapped while any copy is used
// (the Watchdog owns the page and outlives the measurement); atomics are shared safely.
unsafe impl Send for RawFlag {}
// SAFETY: as above.
unsafe impl Sync for RawFlag {}

impl RawFlag {
    fn raise(self) {
        // SAFETY: see the Send impl: the page is mapped.
        unsafe { (*self.0).store(1, Ordering::Release) };
    }

    fn is_raised(self) -> bool {
        // SAFETY: as above.
        unsafe { (*self.0).load(Ordering::Acquire) == 1 }
    }
}

impl SharedFlag {
    fn new() -> io::Result<SharedFlag> {
        // SAFETY: a fresh anonymous mapping; no existing memory is touched.
        let page = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                page_size(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if page == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // The kernel zero-fills the page: the flag starts lowered.
        Ok(SharedFlag {
            page: std::ptr::NonNull::new(page.cast()).expect("mmap succeeded"),
        })
    }

    fn clone_raw(&self) -> RawFlag {
        RawFlag(self.page.as_ptr())
    }
}

impl Drop for SharedFlag {
    fn drop(&mut self) {
        // SAFETY: the page this flag mapped, unmapped once.
        unsafe { libc::munmap(self.page.as_ptr().cast(), page_size()) };
    }
}

/// The time limit of one peer-based measurement: far beyond what a healthy benchmark takes
/// (calibration plus its sample budget), short enough that a hung peer costs seconds.
pub(crate) fn time_limit(runner: &Runner) -> Duration {
    runner.config().budget * 3 + Duration::from_secs(5)
}

/// Watches one short-lived child at a time (a fork, an exec) and kills it if it outlives
/// its limit, at the cost of two atomic stores per child: a thread looks every few
/// milliseconds at which child is current and since when.
///
/// The protocol keeps the pid from being reused under the sentinel: the caller waits for
/// the child's exit without reaping it ([`wait_exited`]), clears the sentinel, and only then
/// reaps ([`Child::wait`]).
pub(crate) struct Sentinel {
    watched: Arc<Watched>,
    epoch: Instant,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Watched {
    pid: std::sync::atomic::AtomicI32,
    since_ms: std::sync::atomic::AtomicU64,
    stop: AtomicBool,
}

impl Sentinel {
    pub(crate) fn start(
        limit: Duration,
        what: &str,
        failure: &Failure,
    ) -> Result<Sentinel, ProbeError> {
        let watched = Arc::new(Watched::default());
        let epoch = Instant::now();
        let thread = {
            let (watched, failure, what) =
                (Arc::clone(&watched), failure.clone(), what.to_string());
            spawn_named("latlab-sentinel", move || {
                while !watched.stop.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(5));
                    let pid = watched.pid.load(Ordering::Acquire);
                    let since = Duration::from_millis(watched.since_ms.load(Ordering::Acquire));
                    if pid > 0 && epoch.elapsed().saturating_sub(since) > limit {
                        failure.fail(format!(
                            "{what}: a child ran longer than {} s and was killed",
                            limit.as_secs_f64()
                        ));
                        // SAFETY: `pid` is a child not yet reaped (see the protocol).
                        unsafe { libc::kill(pid, libc::SIGKILL) };
                        watched.pid.store(0, Ordering::Release);
                    }
                }
            })
            .map_err(ProbeError::Failed)?
        };
        Ok(Sentinel {
            watched,
            epoch,
            thread: Some(thread),
        })
    }

    /// Starts watching `pid`.
    pub(crate) fn watch(&self, pid: libc::pid_t) {
        let now_ms = self.epoch.elapsed().as_millis() as u64;
        self.watched.since_ms.store(now_ms, Ordering::Release);
        self.watched.pid.store(pid, Ordering::Release);
    }

    /// Stops watching, before the watched child is reaped.
    pub(crate) fn clear(&self) {
        self.watched.pid.store(0, Ordering::Release);
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        self.watched.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Blocks until child `pid` has ended, leaving it unreaped (`waitid` with `WNOWAIT`).
pub(crate) fn wait_exited(pid: libc::pid_t) -> io::Result<()> {
    loop {
        // SAFETY: siginfo_t is plain old data, valid when zeroed; waitid writes into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is writable; `pid` is our child.
        let done = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if done == 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// The SCHED_FIFO priority of latlab's real-time arms (`ipc.latency`, `sched.wakeup`): above
/// the run's own `--rt` priority 1.
pub(crate) const FIFO_PRIORITY: i32 = 10;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proc::{Pipe, read_byte, write_byte};
    use std::os::fd::AsRawFd;

    /// Whether `pid` still exists, as a process or a zombie.
    fn exists(pid: libc::pid_t) -> bool {
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    /// A peer that answers `answers` round trips, then hangs or exits.
    fn ping_pong_with(answers: u32, hang: bool, limit: Duration) -> (Result<(), ProbeError>, i32) {
        let mut runner = crate::test_runner(5, Duration::from_micros(200));
        let (there, back) = (Pipe::new().unwrap(), Pipe::new().unwrap());
        let (child_read, child_write) = (there.read.as_raw_fd(), back.write.as_raw_fd());
        // SAFETY: raw reads and writes on pipes made before the fork, and pause.
        let child = unsafe {
            Child::fork(move || {
                for _ in 0..answers {
                    match read_byte(child_read) {
                        Some(byte) if write_byte(child_write, byte) => {}
                        _ => return 0,
                    }
                }
                if hang {
                    loop {
                        libc::pause();
                    }
                }
                3
            })
        }
        .unwrap();
        let pid = child.pid();
        drop((there.read, back.write));
        let failure = Failure::default();
        let watchdog = Watchdog::arm(vec![pid], Vec::new(), limit, "test", &failure).unwrap();
        let (to, from) = (there.write.as_raw_fd(), back.read.as_raw_fd());
        let outcome = failure.guard(&mut runner, |runner| {
            runner.bench("test/ping-pong", "a planted peer", || {
                if !write_byte(to, 1) || read_byte(from).is_none() {
                    failure.fail("the peer stopped answering");
                }
            })?;
            Ok(())
        });
        drop(watchdog);
        drop(child);
        // The watchdog's verdict outlives the page it was raised in.
        if let Err(ProbeError::Failed(reason)) = &outcome {
            assert_eq!(failure.reason().as_ref(), Some(reason));
        }
        (outcome, pid)
    }

    /// The ping-pong failed, saying `why`, and left no child behind.
    fn failed_and_reaped(hang: bool, limit: Duration, why: &str) {
        let (outcome, pid) = ping_pong_with(3, hang, limit);
        match outcome {
            Err(ProbeError::Failed(reason)) => assert!(reason.contains(why), "{reason}"),
            other => panic!("{other:?}"),
        }
        assert!(!exists(pid), "the child {pid} is still there");
    }

    #[test]
    fn a_hung_peer_is_killed_reported_and_reaped() {
        failed_and_reaped(true, Duration::from_millis(300), "did not answer within");
    }

    #[test]
    fn a_peer_that_exits_is_reported_and_reaped() {
        failed_and_reaped(false, Duration::from_secs(30), "stopped answering");
    }

    #[test]
    fn a_sentinel_kills_a_child_that_outlives_its_limit() {
        let failure = Failure::default();
        let sentinel = Sentinel::start(Duration::from_millis(50), "test", &failure).unwrap();
        // SAFETY: the child only waits for signals.
        let mut child = unsafe {
            Child::fork(|| {
                loop {
                    libc::pause();
                }
            })
        }
        .unwrap();
        sentinel.watch(child.pid());
        wait_exited(child.pid()).unwrap();
        sentinel.clear();
        assert_eq!(child.wait().unwrap(), Exit::Signal(libc::SIGKILL));
        assert!(failure.reason().unwrap().contains("longer than"));
    }

    #[test]
    fn a_child_that_panics_exits_and_does_not_run_on() {
        let ran_on = Pipe::new().unwrap();
        let after = ran_on.write.as_raw_fd();
        // SAFETY: a test of the last resort: the panic allocates in the child, whose parent
        // is a test thread that holds no allocator lock while it forks. The panic unwinds
        // without the hook (`resume_unwind`), which would print: another test thread may
        // hold the standard error's lock as the fork copies it, and the child wait on it for
        // ever.
        let forked = std::panic::catch_unwind(|| unsafe {
            Child::fork(|| std::panic::resume_unwind(Box::new("planted")))
        });
        let mut child = match forked {
            Ok(child) => child.unwrap(),
            Err(_) => {
                // Only a child whose panic escaped `fork` gets here: it says so and leaves.
                write_byte(after, 1);
                // SAFETY: _exit ends this process at once.
                unsafe { libc::_exit(0) }
            }
        };
        assert_eq!(child.wait().unwrap(), Exit::Code(PANICKED));
        drop(ran_on.write);
        assert!(
            read_byte(ran_on.read.as_raw_fd()).is_none(),
            "the child ran on"
        );
    }
}
