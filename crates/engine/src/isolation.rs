//! Controls that keep a run from being disturbed: CPU pinning, locked memory, real-time
//! priority, and a machine-wide lock so that two latlab runs do not measure each other.
//!
//! Each control reports why it could not take effect instead of failing the run; the caller
//! turns that into a note in the results (principle: honest about limits).

use rustix::mm::{MlockAllFlags, mlockall};
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use std::io;
use std::os::fd::AsRawFd;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// The user this process acts as (its effective user id).
pub fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The most CPUs the affinity calls address (`CPU_SETSIZE`).
const MAX_CPUS: usize = libc::CPU_SETSIZE as usize;

// The affinity calls go through libc rather than rustix: rustix's `thread` module, for these
// two calls alone, took 3 s of a cold build of the harness on a 2-vCPU guest.

/// The CPUs this process may run on.
pub(crate) fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a cpu_set_t is plain bits; all zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a whole cpu_set_t of the size given; pid 0 is the calling thread.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) } != 0 {
        return Vec::new();
    }
    (0..MAX_CPUS)
        // SAFETY: every `cpu` is below CPU_SETSIZE, inside the set.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

/// Lets the calling thread (and the threads and processes it starts later) run on `cpus`.
pub(crate) fn set_allowed_cpus(cpus: &[usize]) -> Result<(), String> {
    if let Some(&cpu) = cpus.iter().find(|&&cpu| cpu >= MAX_CPUS) {
        return Err(format!(
            "CPU {cpu} is beyond what the kernel interface can address"
        ));
    }
    // SAFETY: a cpu_set_t is plain bits; all zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: `cpu` is below CPU_SETSIZE (checked above), inside the set.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: `set` is a whole cpu_set_t of the size given; pid 0 is the calling thread.
    if unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) } != 0 {
        let error = io::Error::last_os_error();
        return Err(format!("could not run on CPUs {cpus:?}: {error}"));
    }
    Ok(())
}

/// Locks current and future memory into RAM, so no page fault or swap-in lands inside a
/// sample. Refused up front when the locked-memory limit would make later allocations fail.
pub(crate) fn lock_memory() -> Result<(), String> {
    let privileges = crate::environment::Privileges::collect();
    if !privileges.cap_ipc_lock && privileges.memlock_limit_bytes.is_some() {
        return Err(
            "locking memory needs CAP_IPC_LOCK or an unlimited locked-memory limit (ulimit -l unlimited)"
                .into(),
        );
    }
    mlockall(MlockAllFlags::CURRENT | MlockAllFlags::FUTURE)
        .map_err(|e| format!("mlockall failed: {}", io::Error::from(e)))
}

/// RLIMIT_RTTIME's soft limit while real-time: a thread that runs this long without blocking
/// gets SIGXCPU, so a bug cannot freeze the machine. The sampler sleeps before every sample,
/// which renews the allowance.
pub const RT_CPU_SOFT_LIMIT: Duration = Duration::from_secs(1);
/// RLIMIT_RTTIME's hard limit (SIGKILL).
pub const RT_CPU_HARD_LIMIT: Duration = Duration::from_secs(2);
/// How long the sampler sleeps before each sample in real-time mode.
pub const RT_PAUSE: Duration = Duration::from_micros(50);

/// The SCHED_FIFO priority of `--rt`: the lowest, below the real-time arms of the probes.
pub const RUN_PRIORITY: i32 = 1;

/// Moves the calling thread to SCHED_FIFO at `priority`, RLIMIT_RTTIME bounding it (see
/// [`enter_fifo`]); when refused, says what would allow it.
pub fn enter_realtime(priority: i32) -> Result<(), String> {
    enter_fifo(priority).map_err(|errno| {
        format!(
            "SCHED_FIFO was refused ({}): it needs CAP_SYS_NICE or a real-time priority limit \
             of at least {priority} (ulimit -r)",
            io::Error::from_raw_os_error(errno)
        )
    })
}

/// Moves the calling thread to SCHED_FIFO at `priority`, after making sure RLIMIT_RTTIME
/// bounds it (the limit is tightened to [`RT_CPU_SOFT_LIMIT`] and [`RT_CPU_HARD_LIMIT`],
/// never loosened), so that a real-time thread that stopped blocking is stopped by the
/// kernel. The error number when refused. Async-signal-safe, so forked children call it too.
pub fn enter_fifo(priority: i32) -> Result<(), i32> {
    let limit = Rlimit {
        current: Some(RT_CPU_SOFT_LIMIT.as_micros() as u64),
        maximum: Some(RT_CPU_HARD_LIMIT.as_micros() as u64),
    };
    // Tightened, never loosened: where the hard limit is lower already, the kernel refuses
    // and the lower one stands.
    let current = getrlimit(Resource::Rttime).current;
    if current.is_none_or(|now| Some(now) > limit.current) {
        let _ = setrlimit(Resource::Rttime, limit);
    }
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: a valid sched_param; the call acts on the calling thread only. (rustix has no
    // sched_setscheduler.)
    unsafe {
        if libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) != 0 {
            return Err(*libc::__errno_location());
        }
    }
    Ok(())
}

/// Moves the calling thread to the normal scheduling class if it inherited a real-time one
/// (`--rt`): a helper that spins or answers must not run unbounded at real-time priority,
/// nor be killed by the RLIMIT_RTTIME that guards the measuring thread. Async-signal-safe,
/// so forked children call it too.
pub fn leave_realtime() {
    // SAFETY: sched_getscheduler and sched_setscheduler take a pid (0: the caller) and a
    // valid sched_param.
    unsafe {
        let policy = libc::sched_getscheduler(0);
        if policy == libc::SCHED_FIFO || policy == libc::SCHED_RR {
            let param = libc::sched_param { sched_priority: 0 };
            libc::sched_setscheduler(0, libc::SCHED_OTHER, &param);
        }
    }
}

/// Held while a run measures; released when dropped or when the process dies.
///
/// It is an abstract Unix socket name, which only one process can bind at a time and which
/// the kernel frees with its owner: nothing is left on disk, even after a crash. The name is
/// the machine's, since two runs disturb each other whoever started them; a run does not
/// wait on another user's lock, though, since any local user could hold it for ever.
///
/// A waiter learns the holder's user by connecting to the socket. The holder accepts and
/// closes each connection on a thread of its own (asleep in `poll` otherwise), so that the
/// connections of waiters never fill the socket's backlog; and a waiter connects without
/// blocking, so that a holder that does not accept (an older version, a stopped process)
/// cannot keep it waiting past its limit.
#[derive(Debug)]
pub struct RunLock {
    listener: Option<Arc<UnixListener>>,
    acceptor: Option<Acceptor>,
}

/// The holder's thread that accepts and closes waiters' connections, and the pipe that
/// tells it to end.
#[derive(Debug)]
struct Acceptor {
    stop: std::os::fd::OwnedFd,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Acceptor {
    /// Starts accepting on `listener`; `None` when no thread or pipe can be had (the lock
    /// still holds; waiters then see a busy lock of unknown owner once its backlog fills).
    fn start(listener: &Arc<UnixListener>) -> Option<Acceptor> {
        use std::os::fd::{FromRawFd, OwnedFd};
        let mut ends = [0; 2];
        // SAFETY: pipe2 writes two descriptors into `ends`, which has room for them.
        if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return None;
        }
        // SAFETY: pipe2 succeeded: both descriptors are new and this function's own.
        let (wake, stop) =
            unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
        listener.set_nonblocking(true).ok()?;
        let listener = Arc::clone(listener);
        let thread = std::thread::Builder::new()
            .name("latlab-lock".into())
            .spawn(move || accept_until_woken(&listener, &wake))
            .ok()?;
        Some(Acceptor {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Acceptor {
    fn drop(&mut self) {
        // One byte wakes the thread; it ends, and drops its share of the listener.
        // SAFETY: writing one byte from a live buffer to a descriptor this value owns.
        unsafe { libc::write(self.stop.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Accepts and closes every connection to `listener` until `wake` becomes readable.
fn accept_until_woken(listener: &UnixListener, wake: &std::os::fd::OwnedFd) {
    loop {
        let mut watched = [
            libc::pollfd {
                fd: listener.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: wake.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: `watched` is two valid pollfd structures; -1 waits without a time limit.
        let ready = unsafe { libc::poll(watched.as_mut_ptr(), 2, -1) };
        if ready < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return;
        }
        if watched[1].revents != 0 {
            return;
        }
        while let Ok((connection, _)) = listener.accept() {
            drop(connection);
        }
    }
}

/// Why the run lock was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockRefused {
    /// Another run of this user still held it after the wait.
    Busy { waited: Duration },
    /// Another user's run holds it: not waited for.
    OtherUser { uid: u32 },
    /// The wait was cancelled (Ctrl-C).
    Cancelled,
}

const LOCK_NAME: &[u8] = b"latlab-measurement-lock";

/// The descriptor of the lock this process holds, or -1: a forked child closes it, so that
/// a child that outlives its parent does not keep the machine locked.
static LOCK_FD: AtomicI32 = AtomicI32::new(-1);

impl RunLock {
    /// Takes the lock, waiting up to `wait` for another run of this user to finish, and
    /// stopping the wait when `cancel` is set.
    pub(crate) fn acquire(wait: Duration, cancel: &AtomicBool) -> Result<RunLock, LockRefused> {
        Self::acquire_named(LOCK_NAME, wait, cancel, effective_uid())
    }

    /// A lock that holds nothing, for a host that measures nothing (the synthetic one).
    pub fn not_needed() -> RunLock {
        RunLock {
            listener: None,
            acceptor: None,
        }
    }

    fn acquire_named(
        name: &[u8],
        wait: Duration,
        cancel: &AtomicBool,
        own_uid: u32,
    ) -> Result<RunLock, LockRefused> {
        let started = Instant::now();
        loop {
            if let Some(lock) = Self::try_acquire(name) {
                return Ok(lock);
            }
            match holder_uid(name) {
                Some(uid) if uid != own_uid => return Err(LockRefused::OtherUser { uid }),
                _ => {}
            }
            if cancel.load(Ordering::Relaxed) {
                return Err(LockRefused::Cancelled);
            }
            if started.elapsed() >= wait {
                return Err(LockRefused::Busy {
                    waited: started.elapsed(),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn try_acquire(name: &[u8]) -> Option<RunLock> {
        let address = SocketAddr::from_abstract_name(name).ok()?;
        let listener = Arc::new(UnixListener::bind_addr(&address).ok()?);
        LOCK_FD.store(listener.as_raw_fd(), Ordering::Relaxed);
        let acceptor = Acceptor::start(&listener);
        Some(RunLock {
            listener: Some(listener),
            acceptor,
        })
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Forgets the descriptor only if it is still this lock's: another lock taken since
        // (a second name, in tests) keeps its own.
        if let Some(listener) = &self.listener {
            let fd = listener.as_raw_fd();
            let _ = LOCK_FD.compare_exchange(fd, -1, Ordering::Relaxed, Ordering::Relaxed);
        }
        // The thread ends before the listener closes: the lock is free once this returns.
        self.acceptor.take();
    }
}

/// The user whose process holds the lock named `name`, from the credentials the kernel
/// records for a listening socket (SO_PEERCRED of a connection to it); `None` when nobody
/// holds it or the connection fails. The connection is made without blocking: a holder
/// whose backlog is full (one that does not accept) gives `None` at once.
fn holder_uid(name: &[u8]) -> Option<u32> {
    use std::os::fd::{FromRawFd, OwnedFd};
    // SAFETY: socket() takes no pointers; the descriptor it returns is owned below.
    let raw = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if raw < 0 {
        return None;
    }
    // SAFETY: `raw` is a new descriptor of this function's own.
    let socket = unsafe { OwnedFd::from_raw_fd(raw) };
    // SAFETY: a sockaddr_un is plain data; all zero is an empty address.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    address.sun_family = libc::AF_UNIX as libc::sa_family_t;
    // An abstract name: a zero byte, then the name (not zero-terminated).
    if name.len() + 1 > address.sun_path.len() {
        return None;
    }
    for (slot, &byte) in address.sun_path[1..].iter_mut().zip(name) {
        *slot = byte as libc::c_char;
    }
    let length = std::mem::offset_of!(libc::sockaddr_un, sun_path) + 1 + name.len();
    // SAFETY: `address` is a sockaddr_un of which `length` bytes are the address.
    let connected = unsafe {
        libc::connect(
            socket.as_raw_fd(),
            (&raw const address).cast(),
            length as libc::socklen_t,
        )
    };
    if connected != 0 {
        return None;
    }
    let mut credentials = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut length = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: SO_PEERCRED writes at most `length` bytes, one ucred, into `credentials`, on a
    // socket this function owns. (libc rather than rustix: rustix's `net` module took 1.6 s
    // of a cold build of the harness for this one call.)
    let read = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut credentials).cast(),
            &mut length,
        )
    };
    (read == 0).then_some(credentials.uid)
}

/// The descriptor of the results-directory lock this process holds, or -1: a forked child
/// closes it, as it does the run lock's.
static DIRECTORY_LOCK_FD: AtomicI32 = AtomicI32::new(-1);

/// Held while a run writes into a results directory, so that two runs started into one
/// `--out` cannot replace each other's results: the second is refused before it measures.
/// Like [`RunLock`], an abstract socket name that the kernel frees with its holder; the
/// name is made from the directory's parent (device and inode) and its own name, so that it
/// can be taken before the directory exists, whatever path names it.
#[derive(Debug)]
pub struct DirectoryLock {
    listener: UnixListener,
}

impl DirectoryLock {
    /// Takes the lock of the results directory `dir`; `Err` with the reason when another
    /// process holds it, or the directory's parent cannot be read.
    pub fn take(dir: &std::path::Path) -> Result<DirectoryLock, String> {
        use std::os::unix::fs::MetadataExt;
        let parent = match dir.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => std::path::Path::new("."),
        };
        let metadata = std::fs::metadata(parent)
            .map_err(|e| format!("cannot read its parent directory ({e})"))?;
        let own_name = dir
            .file_name()
            .map(|n| n.as_encoded_bytes())
            .unwrap_or_default();
        let key = fnv1a(&[
            &metadata.dev().to_le_bytes(),
            &metadata.ino().to_le_bytes(),
            own_name,
        ]);
        let name = format!("latlab-results-directory-{key:016x}");
        let address = SocketAddr::from_abstract_name(name.as_bytes())
            .map_err(|e| format!("cannot name its lock ({e})"))?;
        match UnixListener::bind_addr(&address) {
            Ok(listener) => {
                DIRECTORY_LOCK_FD.store(listener.as_raw_fd(), Ordering::Relaxed);
                Ok(DirectoryLock { listener })
            }
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => {
                Err("another latlab run is writing its results into this directory".into())
            }
            Err(e) => Err(format!("cannot take its lock ({e})")),
        }
    }
}

impl Drop for DirectoryLock {
    fn drop(&mut self) {
        let fd = self.listener.as_raw_fd();
        let _ = DIRECTORY_LOCK_FD.compare_exchange(fd, -1, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// The 64-bit FNV-1a hash of `parts` in order: stable across builds and versions, so that
/// two versions of latlab name one directory's lock alike.
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in parts.iter().flat_map(|part| part.iter()) {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// Closes, in a child just forked, the descriptors of the run lock and the results-directory
/// lock that the child inherited. Async-signal-safe: atomic loads and closes.
pub fn close_run_lock_after_fork() {
    for held in [&LOCK_FD, &DIRECTORY_LOCK_FD] {
        let fd = held.load(Ordering::Relaxed);
        if fd >= 0 {
            // SAFETY: closing a descriptor number this process inherited; the parent's copy
            // stays open.
            unsafe { libc::close(fd) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held by the tests that take a lock: the descriptor a forked child closes is the one
    /// process-wide lock's, so two tests holding locks at once would swap it under each other.
    fn one_lock_at_a_time() -> std::sync::MutexGuard<'static, ()> {
        static LOCKS: std::sync::Mutex<()> = std::sync::Mutex::new(());
        LOCKS.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[test]
    fn the_lock_excludes_a_second_holder_until_released() {
        let _alone = one_lock_at_a_time();
        // A name of its own, so that a real run on this machine does not disturb the test.
        let name = format!("latlab-test-lock-{}", std::process::id());
        let name = name.as_bytes();
        let go_on = AtomicBool::new(false);
        let me = effective_uid();
        let first = RunLock::acquire_named(name, Duration::from_secs(5), &go_on, me).unwrap();
        let second = RunLock::acquire_named(name, Duration::from_millis(120), &go_on, me);
        assert!(
            matches!(second, Err(LockRefused::Busy { .. })),
            "{second:?}"
        );
        // The holder is this user, as the kernel recorded it.
        assert_eq!(holder_uid(name), Some(me));
        // Another user's lock is not waited for; a cancelled wait stops at once.
        let started = Instant::now();
        let other = RunLock::acquire_named(name, Duration::from_secs(30), &go_on, me + 1);
        assert_eq!(other.unwrap_err(), LockRefused::OtherUser { uid: me });
        let cancelled = AtomicBool::new(true);
        let stopped = RunLock::acquire_named(name, Duration::from_secs(30), &cancelled, me);
        assert_eq!(stopped.unwrap_err(), LockRefused::Cancelled);
        assert!(started.elapsed() < Duration::from_secs(5));
        drop(first);
        assert_eq!(holder_uid(name), None);
        assert!(RunLock::acquire_named(name, Duration::from_secs(1), &go_on, me).is_ok());
    }

    /// Waiters' connections never fill the holder's backlog: thousands of checks of the
    /// holder (more than the kernel's largest backlog, 4096) each return at once, and the
    /// holder is still seen after them.
    #[test]
    fn waiters_never_fill_the_holders_backlog() {
        let _alone = one_lock_at_a_time();
        let name = format!("latlab-test-backlog-{}", std::process::id());
        let go_on = AtomicBool::new(false);
        let me = effective_uid();
        let lock =
            RunLock::acquire_named(name.as_bytes(), Duration::from_secs(5), &go_on, me).unwrap();
        let checks = within_seconds(60, move || {
            let mut seen = 0;
            for _ in 0..6000 {
                seen += usize::from(holder_uid(name.as_bytes()) == Some(me));
            }
            (seen, holder_uid(name.as_bytes()))
        });
        let (seen, last) = checks.expect("a check of the holder blocked");
        assert!(seen > 0, "the holder was never seen");
        assert_eq!(
            last,
            Some(me),
            "the backlog filled: the holder is no longer seen"
        );
        drop(lock);
    }

    /// A holder that never accepts (a stopped process, an older version) cannot make a
    /// waiter's check block once its backlog is full.
    #[test]
    fn a_holder_that_never_accepts_does_not_block_a_check() {
        let name = format!("latlab-test-deaf-{}", std::process::id());
        let address = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let listener = UnixListener::bind_addr(&address).unwrap();
        // SAFETY: listen on a socket this test owns; a backlog of 0 fills at once.
        assert_eq!(unsafe { libc::listen(listener.as_raw_fd(), 0) }, 0);
        let checks = within_seconds(10, move || {
            (0..20)
                .map(|_| holder_uid(name.as_bytes()))
                .collect::<Vec<_>>()
        });
        let checks = checks.expect("a check of a holder with a full backlog blocked");
        assert!(checks.contains(&None), "{checks:?}");
        drop(listener);
    }

    /// `work`'s result, or `None` when it takes longer than `seconds` (it is left running).
    fn within_seconds<T: Send + 'static>(
        seconds: u64,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || sender.send(work()));
        receiver.recv_timeout(Duration::from_secs(seconds)).ok()
    }

    #[test]
    fn a_forked_child_closes_the_lock_it_inherited() {
        let _alone = one_lock_at_a_time();
        let name = format!("latlab-test-fork-lock-{}", std::process::id());
        let go_on = AtomicBool::new(false);
        let me = effective_uid();
        let lock =
            RunLock::acquire_named(name.as_bytes(), Duration::from_secs(5), &go_on, me).unwrap();
        let fd = lock.listener.as_ref().unwrap().as_raw_fd();
        // SAFETY: the child makes only async-signal-safe calls (an atomic load, close,
        // fcntl) and leaves with _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            close_run_lock_after_fork();
            // SAFETY: fcntl on a descriptor number; _exit ends the child.
            unsafe {
                let still_open = libc::fcntl(fd, libc::F_GETFD) != -1;
                libc::_exit(i32::from(still_open));
            }
        }
        let mut status = 0;
        // SAFETY: waiting for the child just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status));
        assert_eq!(libc::WEXITSTATUS(status), 0, "the child kept the lock open");
        drop(lock);
    }

    /// One results directory, by whatever path, is locked by one holder at a time; another
    /// directory is not; dropping the lock frees it.
    #[test]
    fn a_results_directory_has_one_writer_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let first = DirectoryLock::take(&out).unwrap();
        let dotted = dir.path().join(".").join("out");
        let refused = DirectoryLock::take(&dotted).unwrap_err();
        assert!(refused.contains("another latlab run"), "{refused}");
        let other = DirectoryLock::take(&dir.path().join("other")).unwrap();
        drop(first);
        let again = DirectoryLock::take(&out);
        assert!(again.is_ok(), "{again:?}");
        drop(other);
    }

    #[test]
    fn this_process_may_run_somewhere() {
        assert!(!allowed_cpus().is_empty());
    }
}
