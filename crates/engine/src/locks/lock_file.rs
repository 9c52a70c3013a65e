//! The locks where there are no abstract socket names (macOS, Windows): an exclusive lock on
//! a file (`flock` on macOS, `LockFileEx` on Windows, through std's `File::try_lock`), which
//! the system releases with its holder, as it does a socket. The files are empty and never
//! written; they stay behind, as `/dev/shm`'s does on Linux.
//!
//! The run lock's file is in `/tmp` on Unix, which every user's runs share. On Windows it is
//! in the user's temporary directory: two users' runs there do not see each other. Which
//! user holds a lock cannot be read back from a file lock: a held lock is waited for,
//! whoever holds it.
// On Linux and Android this module is compiled for its tests alone.
#![cfg_attr(any(target_os = "linux", target_os = "android"), allow(dead_code))]

use super::{LockRefused, fnv1a};
use std::fs::{File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Held while a run measures; released when dropped or when the process dies.
#[derive(Debug)]
pub struct RunLock {
    _file: Option<File>,
}

impl RunLock {
    /// Takes the lock, waiting up to `wait` for another run to finish, and stopping the wait
    /// when `cancel` is set.
    pub(crate) fn acquire(wait: Duration, cancel: &AtomicBool) -> Result<RunLock, LockRefused> {
        Self::acquire_at(&run_lock_path(), wait, cancel)
    }

    /// A lock that holds nothing, for a host that measures nothing (the synthetic one).
    pub fn not_needed() -> RunLock {
        RunLock { _file: None }
    }

    /// Nothing to answer: a waiter learns of a file lock from the file, never from this
    /// process.
    pub fn answer_waiters(&self) {}

    /// Runs this lock cannot see: none that share its file.
    pub fn unseen_namespaces(&self) -> Option<&str> {
        None
    }

    fn acquire_at(
        path: &Path,
        wait: Duration,
        cancel: &AtomicBool,
    ) -> Result<RunLock, LockRefused> {
        let started = Instant::now();
        let unavailable =
            |e: io::Error| LockRefused::Unavailable(format!("{}: {e}", path.display()));
        let file = open_lock_file(path).map_err(unavailable)?;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(RunLock { _file: Some(file) }),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(e)) => return Err(unavailable(e)),
            }
            super::wait_turn(started, wait, cancel, None)?;
        }
    }
}

/// The run lock's file: in `/tmp` on Unix, shared by every user; in the user's temporary
/// directory on Windows.
fn run_lock_path() -> PathBuf {
    let directory = if cfg!(unix) {
        PathBuf::from("/tmp")
    } else {
        std::env::temp_dir()
    };
    directory.join("latlab-measurement.lock")
}

/// Opens (creating it when it is not there) the lock file at `path`: read-only, so that any
/// user's run can lock a file another user made, readable by all, never through a link and
/// never blocking on a FIFO planted there.
#[allow(
    clippy::disallowed_methods,
    reason = "the machine-wide lock's file: opened without following a link or blocking, never \
              written, and checked to be a regular file"
)]
fn open_lock_file(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
        if !path.exists() {
            let mut create = options.clone();
            // Readable by every user whatever this one's umask: their runs lock it too.
            create.write(true).create_new(true).mode(0o444);
            if let Ok(file) = create.open(path) {
                use std::os::unix::fs::PermissionsExt;
                file.set_permissions(std::fs::Permissions::from_mode(0o444))?;
            }
        }
    }
    #[cfg(not(unix))]
    if !path.exists() {
        // Made by whichever run comes first; one made meanwhile by another is as good.
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    Ok(file)
}

/// Held while a run writes into a results directory, so that two runs started into one
/// `--out` cannot replace each other's results: the second is refused before it measures.
/// The lock's file is in the temporary directory, named from the directory's parent and its
/// own name, so that it can be taken before the directory exists.
#[derive(Debug)]
pub struct DirectoryLock {
    _file: File,
}

impl DirectoryLock {
    /// Takes the lock of the results directory `dir`; `Err` with the reason when another
    /// process holds it, or the directory's parent cannot be read.
    pub fn take(dir: &Path) -> Result<DirectoryLock, String> {
        let (parent, own_name) = super::parent_and_name(dir);
        let parent = std::fs::canonicalize(parent)
            .map_err(|e| format!("cannot read its parent directory ({e})"))?;
        let key = fnv1a(&[parent.as_os_str().as_encoded_bytes(), b"/", own_name]);
        let path = std::env::temp_dir().join(format!("latlab-results-directory-{key:016x}.lock"));
        let file = open_lock_file(&path).map_err(|e| format!("cannot take its lock ({e})"))?;
        match file.try_lock() {
            Ok(()) => Ok(DirectoryLock { _file: file }),
            Err(TryLockError::WouldBlock) => {
                Err("another latlab run is writing its results into this directory".into())
            }
            Err(TryLockError::Error(e)) => Err(format!("cannot take its lock ({e})")),
        }
    }
}

/// Nothing to close: where these locks are used, a forked child (macOS) shares its
/// parent's file lock only until the parent releases it, and the measured children there
/// are not forked while a lock is held; Windows does not fork.
pub fn close_run_lock_after_fork() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_excludes_a_second_holder_until_released() {
        let shared = tempfile::tempdir().unwrap();
        let file = shared.path().join("lock");
        let go_on = AtomicBool::new(false);
        let first = RunLock::acquire_at(&file, Duration::from_secs(5), &go_on).unwrap();
        let second = RunLock::acquire_at(&file, Duration::from_millis(120), &go_on);
        assert!(
            matches!(second, Err(LockRefused::Busy { .. })),
            "{second:?}"
        );
        let cancelled = AtomicBool::new(true);
        let stopped = RunLock::acquire_at(&file, Duration::from_secs(30), &cancelled);
        assert_eq!(stopped.unwrap_err(), LockRefused::Cancelled);
        drop(first);
        assert!(RunLock::acquire_at(&file, Duration::from_secs(1), &go_on).is_ok());
    }

    #[test]
    fn a_results_directory_has_one_writer_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let first = DirectoryLock::take(&out).unwrap();
        let refused = DirectoryLock::take(&dir.path().join(".").join("out")).unwrap_err();
        assert!(refused.contains("another latlab run"), "{refused}");
        let other = DirectoryLock::take(&dir.path().join("other")).unwrap();
        drop(first);
        assert!(DirectoryLock::take(&out).is_ok());
        drop(other);
    }
}
