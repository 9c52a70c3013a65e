//! The locks on Linux and Android: abstract Unix socket names, which the kernel frees with
//! their holder, and a `flock` on a file in `/dev/shm` for runs in other network namespaces.

use super::{Holder, LockRefused, fnv1a};
use latlab_doors::sys::effective_uid;
use std::io;
#[cfg(target_os = "android")]
use std::os::android::net::SocketAddrExt;
use std::os::fd::AsRawFd;
#[cfg(target_os = "linux")]
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// Held while a run measures; released when dropped or when the process dies.
///
/// It is an abstract Unix socket name, which only one process can bind at a time and which
/// the kernel frees with its owner: nothing is left on disk, even after a crash. The name is
/// the machine's, since two runs disturb each other whoever started them; a run does not
/// wait on another user's lock, though, since any local user could hold it for ever.
///
/// A waiter learns the holder's user by connecting to the socket: the kernel gives a
/// connection the listening socket's credentials at once, accepted or not. The holder
/// accepts and closes the connections waiting between the run's units
/// ([`RunLock::answer_waiters`]), not on a thread of its own: while a second thread lives in
/// the measuring process, every system call on a descriptor and every switch into it costs
/// more (measured in the book's methods, "Threads and processes"). A waiter checks every 50 ms and the backlog holds 4096
/// connections, so a unit would have to run for minutes to fill it; a waiter that finds it
/// full sees a busy lock of unknown owner, and waits on. A waiter connects without
/// blocking, so that a holder that does not accept (an older version, a stopped process)
/// cannot keep it waiting past its limit.
///
/// The socket's name lives in the network namespace, so a run in a container or under
/// `unshare -n` would not see it. A second lock, `flock` on a file in `/dev/shm` (which
/// such a run usually shares with the host), is taken after the socket; where it cannot
/// be had (no `/dev/shm`, a file planted there), the run says so in its notes.
#[derive(Debug)]
pub struct RunLock {
    listener: Option<UnixListener>,
    file: Option<std::fs::File>,
    /// Why the lock across network namespaces was not taken, when it was not.
    unseen: Option<String>,
}

/// Whether a connection waits to be accepted on `listener`, looked at without waiting.
fn waiting(listener: &UnixListener) -> bool {
    let mut watched = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `watched` is one valid pollfd; a timeout of 0 returns at once.
    unsafe { libc::poll(&mut watched, 1, 0) == 1 && watched.revents & libc::POLLIN != 0 }
}

const LOCK_NAME: &[u8] = b"latlab-measurement-lock";

/// Where the lock across network namespaces is kept: a directory the processes of a
/// machine share whatever their network namespace (`unshare -n`, most sandboxes).
const LOCK_FILE_DIR: &str = "/dev/shm";
/// Its file: empty, readable by all, never written; only `flock` is taken on it.
const LOCK_FILE_NAME: &str = "latlab-measurement.lock";

/// The descriptor of the file lock this process holds, or -1: closed by a forked child, as
/// the socket's is (a child holding a copy would hold the lock past its parent).
static FILE_LOCK_FD: AtomicI32 = AtomicI32::new(-1);

/// What an attempt at the file lock found.
enum FileLock {
    Taken(std::fs::File),
    /// Another process holds it; which, where `/proc/locks` shows the holder.
    Busy {
        holder: Option<Holder>,
    },
    /// It cannot be taken at all, and why.
    Unavailable(String),
}

/// Tries the file lock at `path`: opened read-only (so that any user's run can lock a file
/// another user created), never through a link, never blocking on a FIFO planted there, and
/// created, readable by all, when it is not there yet.
fn try_file_lock(path: &std::path::Path) -> FileLock {
    use std::os::unix::fs::PermissionsExt;
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK;
    let unavailable = |e: io::Error| FileLock::Unavailable(format!("{}: {e}", path.display()));
    let open = |flags, mode| latlab_doors::sys::open(path, flags, mode).map(std::fs::File::from);
    let opened = match open(flags, 0) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            match open(flags | libc::O_CREAT | libc::O_EXCL, 0o444) {
                // Readable by every user whatever this one's umask: their runs lock it too.
                Ok(file) => {
                    (file.set_permissions(std::fs::Permissions::from_mode(0o444))).map(|()| file)
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => open(flags, 0),
                Err(e) => Err(e),
            }
        }
        other => other,
    };
    let file = match opened {
        Ok(file) => file,
        Err(e) => return unavailable(e),
    };
    match file.metadata() {
        Ok(metadata) if metadata.is_file() => {}
        Ok(_) => {
            return FileLock::Unavailable(format!("{} is not a regular file", path.display()));
        }
        Err(e) => return unavailable(e),
    }
    match file.try_lock() {
        Ok(()) => FileLock::Taken(file),
        Err(std::fs::TryLockError::WouldBlock) => FileLock::Busy {
            holder: flock_holder(&file),
        },
        Err(std::fs::TryLockError::Error(e)) => unavailable(e),
    }
}

/// The process that holds a `flock` on `file` and its effective user, from `/proc/locks`
/// and the holder's `/proc/PID/status`; `None` where either does not show it (a holder in
/// another PID namespace shows no PID here).
fn flock_holder(file: &std::fs::File) -> Option<Holder> {
    use std::os::unix::fs::MetadataExt;
    let metadata = file.metadata().ok()?;
    let device = metadata.dev() as libc::dev_t;
    let (major, minor) = (libc::major(device), libc::minor(device));
    let file = format!("{major:02x}:{minor:02x}:{}", metadata.ino());
    let locks = latlab_doors::input::system_text("/proc/locks")?;
    let pid: u32 = locks
        .lines()
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|fields| fields.get(1) == Some(&"FLOCK") && fields.get(5) == Some(&file.as_str()))
        .and_then(|fields| fields.get(4)?.parse().ok())
        .filter(|&pid| pid > 0)?;
    let status = latlab_doors::input::system_text(format!("/proc/{pid}/status"))?;
    let uid = status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1)?.parse().ok())?;
    Some(Holder {
        pid: Some(pid),
        uid,
    })
}

/// The descriptor of the lock this process holds, or -1: a forked child closes it, so that
/// a child that outlives its parent does not keep the machine locked.
static LOCK_FD: AtomicI32 = AtomicI32::new(-1);

impl RunLock {
    /// Takes the lock, waiting up to `wait` for another run of this user to finish, and
    /// stopping the wait when `cancel` is set.
    pub(crate) fn acquire(wait: Duration, cancel: &AtomicBool) -> Result<RunLock, LockRefused> {
        let file = std::path::Path::new(LOCK_FILE_DIR).join(LOCK_FILE_NAME);
        Self::acquire_named(LOCK_NAME, &file, wait, cancel, effective_uid())
    }

    /// A lock that holds nothing, for a host that measures nothing (the synthetic one).
    pub fn not_needed() -> RunLock {
        RunLock {
            listener: None,
            file: None,
            unseen: None,
        }
    }

    /// Accepts and closes the connections of the waiters that checked the lock since the
    /// last call, so that their backlog never fills: called between a run's units.
    pub fn answer_waiters(&self) {
        let Some(listener) = &self.listener else {
            return;
        };
        while waiting(listener) {
            match listener.accept() {
                Ok((connection, _)) => drop(connection),
                Err(_) => return,
            }
        }
    }

    /// Why runs in other network namespaces cannot be seen by this lock, when they cannot.
    pub fn unseen_namespaces(&self) -> Option<&str> {
        self.unseen.as_deref()
    }

    fn acquire_named(
        name: &[u8],
        file: &std::path::Path,
        wait: Duration,
        cancel: &AtomicBool,
        own_uid: u32,
    ) -> Result<RunLock, LockRefused> {
        let started = Instant::now();
        let mut held: Option<RunLock> = None;
        loop {
            if held.is_none() {
                held = Self::try_acquire(name);
            }
            let holder = match held.as_mut() {
                // This namespace's lock is ours: now the one across namespaces.
                Some(lock) => match try_file_lock(file) {
                    FileLock::Taken(taken) => {
                        FILE_LOCK_FD.store(taken.as_raw_fd(), Ordering::Relaxed);
                        lock.file = Some(taken);
                        return Ok(held.take().expect("held"));
                    }
                    FileLock::Unavailable(why) => {
                        lock.unseen = Some(why);
                        return Ok(held.take().expect("held"));
                    }
                    FileLock::Busy { holder } => holder,
                },
                None => holder_of(name),
            };
            match holder {
                Some(holder) if holder.uid != own_uid => {
                    return Err(LockRefused::OtherUser { holder });
                }
                _ => {}
            }
            super::wait_turn(started, wait, cancel, holder)?;
        }
    }

    fn try_acquire(name: &[u8]) -> Option<RunLock> {
        let address = SocketAddr::from_abstract_name(name).ok()?;
        let listener = UnixListener::bind_addr(&address).ok()?;
        LOCK_FD.store(listener.as_raw_fd(), Ordering::Relaxed);
        Some(RunLock {
            listener: Some(listener),
            file: None,
            unseen: None,
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
        if let Some(file) = self.file.take() {
            let fd = file.as_raw_fd();
            let _ = FILE_LOCK_FD.compare_exchange(fd, -1, Ordering::Relaxed, Ordering::Relaxed);
        }
    }
}

/// The process that holds the lock named `name` and its user, from the credentials the
/// kernel records for a listening socket (SO_PEERCRED of a connection to it: a process id
/// of 0 is one in another PID namespace); `None` when nobody holds it or the connection
/// fails. The connection is made without blocking: a holder whose backlog is full (one that
/// does not accept) gives `None` at once.
fn holder_of(name: &[u8]) -> Option<Holder> {
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
    // socket this function owns. (libc rather than rustix, as the light build's calls are:
    // see `crate::sys`.)
    let read = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut credentials).cast(),
            &mut length,
        )
    };
    (read == 0).then(|| Holder {
        pid: u32::try_from(credentials.pid).ok().filter(|&pid| pid > 0),
        uid: credentials.uid,
    })
}

/// The descriptor of the results-directory lock this process holds, or -1: a forked child
/// closes it, as it does the run lock's.
static DIRECTORY_LOCK_FD: AtomicI32 = AtomicI32::new(-1);

/// Held while a run writes into a results directory, so that two runs started into one
/// `--out` cannot replace each other's results: the second is refused before it measures.
///
/// Like [`RunLock`], an abstract socket name that the kernel frees with its holder. Such a
/// name can be bound by any local user, so the lock is not one name but one stem: the
/// directory's parent (device and inode) and its own name, so that it can be taken before
/// the directory exists, whatever path names it. A run binds the stem with a random word of
/// its own, then looks in `/proc/net/unix` for the other names of that stem and asks the
/// kernel who holds each (SO_PEERCRED). Only a holder that could write the directory keeps
/// a run out: this user, the directory's owner (its parent's, before it exists) or root.
/// Another user's name of that stem is passed over, so nobody can hold a directory
/// against its owner. Two runs that bind in the same instant may both be refused; neither
/// writes.
#[derive(Debug)]
pub struct DirectoryLock {
    listener: UnixListener,
}

impl DirectoryLock {
    /// Takes the lock of the results directory `dir`; `Err` with the reason when another
    /// process that could write it holds it, or the directory's parent cannot be read.
    pub fn take(dir: &std::path::Path) -> Result<DirectoryLock, String> {
        use std::os::unix::fs::MetadataExt;
        let (parent, own_name) = super::parent_and_name(dir);
        let metadata = std::fs::metadata(parent)
            .map_err(|e| format!("cannot read its parent directory ({e})"))?;
        let key = fnv1a(&[
            &metadata.dev().to_le_bytes(),
            &metadata.ino().to_le_bytes(),
            own_name,
        ]);
        let owner = std::fs::metadata(dir).map_or(metadata.uid(), |own| own.uid());
        let stem = format!("latlab-results-directory-{key:016x}-");
        let (listener, own) = bind_with_random_word(&stem)?;
        let me = effective_uid();
        for name in names_bound_with(&stem)? {
            if name == own {
                continue;
            }
            let holder = holder_of(name.as_bytes());
            if let Some(holder) = holder.filter(|h| may_write(h.uid, me, owner)) {
                return Err(format!(
                    "another latlab run is writing its results into this directory ({})",
                    holder.describe()
                ));
            }
        }
        DIRECTORY_LOCK_FD.store(listener.as_raw_fd(), Ordering::Relaxed);
        Ok(DirectoryLock { listener })
    }
}

/// Whether a process of user `uid` could write a results directory of `owner`'s, as seen
/// by a run of user `me`: only such a holder of its lock keeps the run out.
fn may_write(uid: u32, me: u32, owner: u32) -> bool {
    uid == me || uid == owner || uid == 0
}

/// Binds `stem` followed by a random word, a new word each time the name is taken (by a
/// process that guessed it): the name bound and its listener.
fn bind_with_random_word(stem: &str) -> Result<(UnixListener, String), String> {
    for _ in 0..16 {
        let mut word = [0u8; 8];
        // SAFETY: getrandom writes at most `word.len()` bytes into `word`.
        let filled = unsafe { libc::getrandom(word.as_mut_ptr().cast(), word.len(), 0) };
        if filled != word.len() as isize {
            return Err(format!(
                "cannot name its lock ({})",
                io::Error::last_os_error()
            ));
        }
        let name = format!("{stem}{:016x}", u64::from_le_bytes(word));
        let address = SocketAddr::from_abstract_name(name.as_bytes())
            .map_err(|e| format!("cannot name its lock ({e})"))?;
        match UnixListener::bind_addr(&address) {
            Ok(listener) => return Ok((listener, name)),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => continue,
            Err(e) => return Err(format!("cannot take its lock ({e})")),
        }
    }
    Err("cannot take its lock (every name tried was taken)".into())
}

/// The abstract socket names of this network namespace that begin with `stem`, from
/// `/proc/net/unix` (its last field, after an `@`).
fn names_bound_with(stem: &str) -> Result<Vec<String>, String> {
    let table = latlab_doors::input::system_file("/proc/net/unix")
        .map_err(|e| format!("cannot see other runs' locks (/proc/net/unix: {e})"))?;
    let table = String::from_utf8_lossy(&table);
    let names = (table.lines())
        .filter_map(|line| line.split_whitespace().nth(7)?.strip_prefix('@'))
        .filter(|name| name.starts_with(stem))
        .map(str::to_owned);
    Ok(names.collect())
}

impl Drop for DirectoryLock {
    fn drop(&mut self) {
        let fd = self.listener.as_raw_fd();
        let _ = DIRECTORY_LOCK_FD.compare_exchange(fd, -1, Ordering::Relaxed, Ordering::Relaxed);
    }
}

/// Closes, in a child just forked, the descriptors of the run lock (its socket and its file)
/// and the results-directory lock that the child inherited. Async-signal-safe: atomic loads and closes.
pub fn close_run_lock_after_fork() {
    for held in [&LOCK_FD, &FILE_LOCK_FD, &DIRECTORY_LOCK_FD] {
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
        let shared = tempfile::tempdir().unwrap();
        let file = shared.path().join("lock");
        // A name of its own, so that a real run on this machine does not disturb the test.
        let name = format!("latlab-test-lock-{}", std::process::id());
        let name = name.as_bytes();
        let go_on = AtomicBool::new(false);
        let me = effective_uid();
        let first =
            RunLock::acquire_named(name, &file, Duration::from_secs(5), &go_on, me).unwrap();
        let second = RunLock::acquire_named(name, &file, Duration::from_millis(120), &go_on, me);
        assert!(
            matches!(second, Err(LockRefused::Busy { .. })),
            "{second:?}"
        );
        // The holder is this user's process, as the kernel recorded it, and the wait said
        // which.
        let pid = std::process::id();
        assert_eq!(
            holder_of(name),
            Some(Holder {
                pid: Some(pid),
                uid: me
            })
        );
        let Err(LockRefused::Busy {
            holder: Some(holder),
            ..
        }) = second
        else {
            panic!("{second:?}");
        };
        assert!(
            holder
                .describe()
                .starts_with(&format!("pid {pid} of uid {me}: "))
        );
        // Another user's lock is not waited for; a cancelled wait stops at once.
        let started = Instant::now();
        let other = RunLock::acquire_named(name, &file, Duration::from_secs(30), &go_on, me + 1);
        let refused = other.unwrap_err();
        assert!(
            matches!(refused, LockRefused::OtherUser { holder } if holder.uid == me),
            "{refused:?}"
        );
        let cancelled = AtomicBool::new(true);
        let stopped = RunLock::acquire_named(name, &file, Duration::from_secs(30), &cancelled, me);
        assert_eq!(stopped.unwrap_err(), LockRefused::Cancelled);
        assert!(started.elapsed() < Duration::from_secs(5));
        drop(first);
        assert_eq!(holder_of(name).map(|h| h.uid), None);
        assert!(RunLock::acquire_named(name, &file, Duration::from_secs(1), &go_on, me).is_ok());
    }

    /// Waiters' connections never fill the holder's backlog: thousands of checks of the
    /// holder (more than the kernel's largest backlog, 4096), answered in batches of 1,000
    /// as a run answers them between its units, each return at once and see the holder,
    /// unanswered as they wait. With nothing waiting, answering returns at once.
    #[test]
    fn waiters_never_fill_the_holders_backlog() {
        let _alone = one_lock_at_a_time();
        let shared = tempfile::tempdir().unwrap();
        let file = shared.path().join("lock");
        let name = format!("latlab-test-backlog-{}", std::process::id());
        let go_on = AtomicBool::new(false);
        let me = effective_uid();
        let lock =
            RunLock::acquire_named(name.as_bytes(), &file, Duration::from_secs(5), &go_on, me)
                .unwrap();
        let checks = within_seconds(60, move || {
            let mut seen = 0;
            for _ in 0..6 {
                for _ in 0..1000 {
                    seen += usize::from(holder_of(name.as_bytes()).map(|h| h.uid) == Some(me));
                }
                lock.answer_waiters();
            }
            lock.answer_waiters();
            (seen, holder_of(name.as_bytes()).map(|h| h.uid), lock)
        });
        let (seen, last, lock) = checks.expect("a check of the holder, or answering, blocked");
        assert_eq!(seen, 6000, "a check did not see the holder");
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
                .map(|_| holder_of(name.as_bytes()).map(|h| h.uid))
                .collect::<Vec<_>>()
        });
        let checks = checks.expect("a check of a holder with a full backlog blocked");
        assert!(checks.contains(&None), "{checks:?}");
        drop(listener);
    }

    /// The lock across network namespaces: a run whose socket lock is another's (another
    /// namespace's name, here) still waits for the file lock's holder, sees its user, and
    /// takes the lock once it is free. A file planted where the lock's file goes (a FIFO)
    /// is no lock, and the run says it cannot see other namespaces.
    #[test]
    fn runs_in_other_network_namespaces_exclude_each_other_through_the_file() {
        let _alone = one_lock_at_a_time();
        let shared = tempfile::tempdir().unwrap();
        let file = shared.path().join("lock");
        let go_on = AtomicBool::new(false);
        let me = effective_uid();
        let host = format!("latlab-test-ns-host-{}", std::process::id());
        let container = format!("latlab-test-ns-container-{}", std::process::id());
        let first =
            RunLock::acquire_named(host.as_bytes(), &file, Duration::from_secs(5), &go_on, me)
                .unwrap();
        assert_eq!(first.unseen_namespaces(), None);
        let second = RunLock::acquire_named(
            container.as_bytes(),
            &file,
            Duration::from_millis(150),
            &go_on,
            me,
        );
        assert!(
            matches!(second, Err(LockRefused::Busy { .. })),
            "{second:?}"
        );
        // Its holder is this user, as /proc/locks shows it.
        let other = RunLock::acquire_named(
            container.as_bytes(),
            &file,
            Duration::from_secs(30),
            &go_on,
            me + 1,
        );
        let refused = other.unwrap_err();
        assert!(
            matches!(refused, LockRefused::OtherUser { holder } if holder.uid == me),
            "{refused:?}"
        );
        drop(first);
        let second = RunLock::acquire_named(
            container.as_bytes(),
            &file,
            Duration::from_secs(5),
            &go_on,
            me,
        );
        assert!(second.is_ok(), "{second:?}");
        drop(second);

        let fifo = latlab_test_support::fifo(shared.path(), "fifo");
        let planted =
            RunLock::acquire_named(host.as_bytes(), &fifo, Duration::from_secs(5), &go_on, me)
                .unwrap();
        let unseen = planted.unseen_namespaces().expect("a note");
        assert!(unseen.contains("not a regular file"), "{unseen}");
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
        let shared = tempfile::tempdir().unwrap();
        let file = shared.path().join("lock");
        let name = format!("latlab-test-fork-lock-{}", std::process::id());
        let go_on = AtomicBool::new(false);
        let me = effective_uid();
        let lock =
            RunLock::acquire_named(name.as_bytes(), &file, Duration::from_secs(5), &go_on, me)
                .unwrap();
        let fd = lock.listener.as_ref().unwrap().as_raw_fd();
        let file_fd = lock.file.as_ref().expect("the file lock").as_raw_fd();
        // SAFETY: the child makes only async-signal-safe calls (an atomic load, close,
        // fcntl) and leaves with _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            close_run_lock_after_fork();
            // SAFETY: fcntl on descriptor numbers; _exit ends the child.
            unsafe {
                let still_open = libc::fcntl(fd, libc::F_GETFD) != -1
                    || libc::fcntl(file_fd, libc::F_GETFD) != -1;
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
}
