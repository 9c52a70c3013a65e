//! A directory latlab keeps on its own account (a results directory, a baseline store and
//! its baselines, a runs directory), held open as a descriptor: made or found through
//! the walk of `walk.rs`, its last component never a link, its owner checked on the descriptor
//! to be this user. Everything read, written, listed, locked or removed in it is named
//! within that descriptor, so that a directory renamed or a link planted meanwhile cannot
//! send a write elsewhere.

#[cfg(not(unix))]
mod elsewhere;
#[cfg(not(unix))]
pub use elsewhere::{OwnDir, Scratch};

/// Whether a directory a path names is made when it is not there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    Made,
    Refused,
}

#[cfg(unix)]
pub use unix::{OwnDir, Scratch};

impl OwnDir {
    /// A new directory `name` in this one, made by this call (`None` when something of
    /// that name is there already): what no other process can have taken.
    pub fn make_new(&self, name: &str) -> std::io::Result<Option<OwnDir>> {
        match self.make_dir(name) {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
            made => made
                .and_then(|()| self.sub(name, Missing::Refused))
                .map(Some),
        }
    }

    /// The path it was reached by, for messages.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The path of `name` in it, for messages.
    pub fn join(&self, name: impl AsRef<std::path::Path>) -> std::path::PathBuf {
        self.path.join(name)
    }
}

/// A directory held by `OwnDir::lock`, until dropped.
#[derive(Debug)]
pub struct Held(#[allow(dead_code, reason = "held for its lock")] std::fs::File);

/// Takes `file`'s exclusive lock, which holds the directory at `path` against every other
/// process that asks for it the same way; waits up to `patience` for another holder to let
/// go, calling `waiting` once if it has to wait more than a second.
fn hold(
    file: std::fs::File,
    path: &std::path::Path,
    patience: std::time::Duration,
    waiting: impl FnOnce(),
) -> std::io::Result<Held> {
    use std::time::{Duration, Instant};
    let started = Instant::now();
    let mut waiting = Some(waiting);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Held(file)),
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
            Err(std::fs::TryLockError::WouldBlock) => {}
        }
        if started.elapsed() >= patience {
            return Err(std::io::Error::other(format!(
                "another latlab held {} for {} s; try again when it has finished",
                path.display(),
                patience.as_secs()
            )));
        }
        if started.elapsed() >= Duration::from_secs(1)
            && let Some(waiting) = waiting.take()
        {
            waiting();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(unix)]
mod unix {
    use super::{Held, Missing};
    use crate::output::Durability;
    use crate::sys;
    use std::ffi::{OsStr, OsString};
    use std::io;
    use std::os::fd::{AsFd, OwnedFd};
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    /// A directory of this user's, held open.
    #[derive(Debug)]
    pub struct OwnDir {
        fd: OwnedFd,
        pub(super) path: PathBuf,
    }

    impl OwnDir {
        /// The directory `path` names, which the user named (a last link of theirs is
        /// followed), made when missing as `missing` says. `Err` when it is another user's, not
        /// a directory, or cannot be reached.
        pub fn named(path: &Path, missing: Missing) -> io::Result<OwnDir> {
            OwnDir::reached(path, missing, crate::walk::LastLink::Followed)
        }

        /// The directory `path` names, which latlab keeps on its own account (a link is
        /// refused), made when missing as `missing` says.
        pub fn kept(path: &Path, missing: Missing) -> io::Result<OwnDir> {
            OwnDir::reached(path, missing, crate::walk::LastLink::Refused)
        }

        fn reached(
            path: &Path,
            missing: Missing,
            last: crate::walk::LastLink,
        ) -> io::Result<OwnDir> {
            if missing == Missing::Made {
                let (parent, name) = crate::output::split(path)?;
                let parent = crate::walk::open_directory(parent, crate::walk::LastLink::Followed)?;
                match sys::make_dir_in(parent.as_fd(), name, 0o777) {
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    made => made?,
                }
            }
            let fd = crate::walk::open_directory(path, last)?;
            crate::walk::check_own(&fd)?;
            Ok(OwnDir {
                fd,
                path: path.to_path_buf(),
            })
        }

        /// The directory `name` in this one, kept on latlab's account: made when missing as
        /// `missing` says, never a link, this user's.
        pub fn sub(&self, name: &str, missing: Missing) -> io::Result<OwnDir> {
            let shown = self.path.join(name);
            let name = OsStr::new(name);
            if missing == Missing::Made {
                match sys::make_dir_in(self.fd.as_fd(), name, 0o777) {
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    made => made?,
                }
            }
            // A link is told apart before the open, which refuses one as "not a directory"
            // (and one planted in between, too).
            if sys::status_in(self.fd.as_fd(), name).is_ok_and(|s| s.kind == sys::Kind::Link) {
                return Err(io::Error::other(format!(
                    "{} is a symbolic link, which latlab does not write through on its own \
                 account",
                    shown.display()
                )));
            }
            let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
            let fd = sys::open_in(self.fd.as_fd(), name, flags, 0).map_err(|e| {
                match e.raw_os_error() {
                    Some(libc::ENOTDIR | libc::ELOOP) => {
                        io::Error::other(format!("{} is not a directory", shown.display()))
                    }
                    _ => e,
                }
            })?;
            crate::walk::check_own(&fd)?;
            Ok(OwnDir { fd, path: shown })
        }

        /// Makes the directory `name` in this one.
        pub(super) fn make_dir(&self, name: &str) -> io::Result<()> {
            sys::make_dir_in(self.fd.as_fd(), OsStr::new(name), 0o777)
        }

        /// The names of its entries.
        pub fn names(&self) -> io::Result<Vec<OsString>> {
            sys::names_in(self.fd.as_fd())
        }

        /// What kind of entry `name` is, if there is one (a link is not followed).
        pub fn kind_of(&self, name: &str) -> Option<crate::Kind> {
            sys::status_in(self.fd.as_fd(), OsStr::new(name))
                .ok()
                .map(|s| s.kind)
        }

        /// Replaces the file `name` in it whole.
        pub fn replace(&self, name: &str, bytes: &[u8], durability: Durability) -> io::Result<()> {
            crate::output::replace_in(&self.fd, OsStr::new(name), bytes, durability)
        }

        /// Removes the file `name` from it; one already gone is no error.
        pub fn remove(&self, name: &str) -> io::Result<()> {
            match sys::remove_in(self.fd.as_fd(), OsStr::new(name)) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                other => other,
            }
        }

        /// Removes the directory `name` in it and everything in it (links removed, never
        /// followed); one already gone is no error.
        pub fn remove_tree(&self, name: &str) -> io::Result<()> {
            crate::debris::remove_tree_in(self.fd.as_fd(), OsStr::new(name))
        }

        /// Removes this directory when it is empty; `false` when it is not (or cannot be).
        pub fn remove_if_empty(self) -> bool {
            let Ok(parent) = sys::open_in(
                self.fd.as_fd(),
                OsStr::new(".."),
                libc::O_RDONLY | libc::O_DIRECTORY,
                0,
            ) else {
                return false;
            };
            let Some(name) = self.path.file_name() else {
                return false;
            };
            // Only if the name still leads to this directory: the same device and inode.
            let (here, there) = (
                sys::status(self.fd.as_fd()),
                sys::status_in(parent.as_fd(), name),
            );
            match (here, there) {
                (Ok(here), Ok(there))
                    if (here.device, here.inode) == (there.device, there.inode) =>
                {
                    sys::remove_dir_in(parent.as_fd(), name).is_ok()
                }
                _ => false,
            }
        }

        /// The bytes of the regular file `name` found in it (a link refused), of at most
        /// `max_bytes`: the door in.
        pub fn read(&self, name: &str, max_bytes: u64) -> Result<Vec<u8>, String> {
            crate::input::read_in(
                self.fd.as_fd(),
                OsStr::new(name),
                &self.join(name),
                max_bytes,
            )
        }

        /// Holds this directory against every other process that asks for it the same way
        /// (an exclusive `flock` on its descriptor) until the returned guard is dropped; waits
        /// up to `patience` for another holder to let go, calling `waiting` once if it has to
        /// wait more than a second.
        pub fn lock(&self, patience: Duration, waiting: impl FnOnce()) -> io::Result<Held> {
            let file = std::fs::File::from(self.fd.try_clone()?);
            super::hold(file, &self.path, patience, waiting)
        }
    }

    /// A scratch directory of this process's own in the system's temporary directory (a
    /// child's output, a counting run's dumps), named as debris is
    /// (`{kind}{pid}-{space}-{random}`, [`crate::debris`]) and held while it lives, so that
    /// one left by a process that was killed is removed by the next of its kind. Removed, with
    /// all it holds, when dropped.
    #[derive(Debug)]
    pub struct Scratch {
        dir: OwnDir,
        parent: OwnedFd,
        name: String,
        _held: std::fs::File,
    }

    impl Scratch {
        /// A new scratch directory of `kind` (`latlab-bench-count-`).
        pub fn new(kind: &str) -> io::Result<Scratch> {
            let temporary = std::env::temp_dir();
            let parent = crate::walk::open_directory(&temporary, crate::walk::LastLink::Followed)?;
            crate::debris::remove_stale_in(parent.as_fd(), kind);
            let prefix = crate::debris::owned_prefix(kind);
            for attempt in 0u64.. {
                let name = format!("{prefix}{:016x}", crate::output::random_word(attempt));
                match sys::make_dir_in(parent.as_fd(), OsStr::new(&name), 0o700) {
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                    made => made?,
                }
                let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
                let fd = sys::open_in(parent.as_fd(), OsStr::new(&name), flags, 0)?;
                crate::walk::check_own(&fd)?;
                let lock_flags = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
                let lock = sys::open_in(
                    fd.as_fd(),
                    OsStr::new(crate::debris::LOCK_FILE),
                    lock_flags,
                    0o600,
                )?;
                let held = std::fs::File::from(lock);
                crate::debris::hold(&held);
                let dir = OwnDir {
                    fd,
                    path: temporary.join(&name),
                };
                return Ok(Scratch {
                    dir,
                    parent,
                    name,
                    _held: held,
                });
            }
            unreachable!("an endless sequence of names")
        }

        /// The directory, to read and list.
        pub fn dir(&self) -> &OwnDir {
            &self.dir
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = crate::debris::remove_tree_in(self.parent.as_fd(), OsStr::new(&self.name));
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// A directory made, its sub-directory made, a file replaced, listed, read and removed
        /// through it; a link planted for a sub-directory is refused, and a link for the
        /// directory itself is followed only where the user named it.
        #[test]
        fn an_own_directory_is_reached_and_written_only_through_its_descriptor() {
            let dir = tempfile::tempdir().unwrap();
            let results = OwnDir::named(&dir.path().join("r"), Missing::Made).unwrap();
            let baselines = results.sub("baselines", Missing::Made).unwrap();
            baselines
                .replace("run-1.json", b"{}", Durability::Cached)
                .unwrap();
            assert_eq!(baselines.names().unwrap(), ["run-1.json"]);
            assert_eq!(baselines.read("run-1.json", 10).unwrap(), b"{}");
            baselines.remove("run-1.json").unwrap();
            baselines.remove("run-1.json").unwrap();
            assert!(baselines.names().unwrap().is_empty());

            let elsewhere = dir.path().join("elsewhere");
            std::fs::create_dir(&elsewhere).unwrap();
            std::os::unix::fs::symlink(&elsewhere, dir.path().join("r/planted")).unwrap();
            let refused = results.sub("planted", Missing::Made).unwrap_err();
            assert!(
                refused.to_string().contains("is a symbolic link"),
                "{refused}"
            );
            std::os::unix::fs::symlink(&elsewhere, dir.path().join("linked")).unwrap();
            assert!(OwnDir::named(&dir.path().join("linked"), Missing::Refused).is_ok());
            assert!(OwnDir::kept(&dir.path().join("linked"), Missing::Refused).is_err());
            assert!(OwnDir::kept(&dir.path().join("absent"), Missing::Refused).is_err());
            let _held = baselines.lock(Duration::ZERO, || {}).unwrap();
            let again = OwnDir::kept(&dir.path().join("r/baselines"), Missing::Refused).unwrap();
            assert!(
                again.lock(Duration::ZERO, || {}).is_err(),
                "held by the first"
            );
        }
    }
}
