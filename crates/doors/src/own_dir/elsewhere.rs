//! Where there are no descriptors of directories (Windows), an own directory is its path,
//! each step taken by path: Windows' access lists, which std does not read, say who may
//! write a directory, and whoever may not is refused when the write is tried.

#![allow(
    clippy::disallowed_methods,
    reason = "the door out, where there is no openat"
)]

use super::{Held, Missing};
use crate::Kind;
use crate::output::Durability;
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A directory of this user's, by its path.
#[derive(Debug)]
pub struct OwnDir {
    pub(super) path: PathBuf,
}

impl OwnDir {
    pub fn named(path: &Path, missing: Missing) -> io::Result<OwnDir> {
        OwnDir::kept(path, missing)
    }

    pub fn kept(path: &Path, missing: Missing) -> io::Result<OwnDir> {
        if missing == Missing::Made {
            match std::fs::create_dir(path) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                made => made?,
            }
        }
        if !std::fs::metadata(path)?.is_dir() {
            return Err(io::Error::other(format!(
                "{} is not a directory",
                path.display()
            )));
        }
        Ok(OwnDir {
            path: path.to_path_buf(),
        })
    }

    pub fn sub(&self, name: &str, missing: Missing) -> io::Result<OwnDir> {
        OwnDir::kept(&self.path.join(name), missing)
    }

    pub(super) fn make_dir(&self, name: &str) -> io::Result<()> {
        std::fs::create_dir(self.path.join(name))
    }

    pub fn names(&self) -> io::Result<Vec<OsString>> {
        std::fs::read_dir(&self.path)?
            .map(|entry| entry.map(|e| e.file_name()))
            .collect()
    }

    pub fn kind_of(&self, name: &str) -> Option<Kind> {
        let kind = std::fs::symlink_metadata(self.path.join(name))
            .ok()?
            .file_type();
        Some(if kind.is_symlink() {
            Kind::Link
        } else if kind.is_dir() {
            Kind::Directory
        } else if kind.is_file() {
            Kind::Regular
        } else {
            Kind::Device
        })
    }

    pub fn replace(&self, name: &str, bytes: &[u8], durability: Durability) -> io::Result<()> {
        crate::output::write_own(&self.path.join(name), bytes, durability)
    }

    pub fn remove(&self, name: &str) -> io::Result<()> {
        match std::fs::remove_file(self.path.join(name)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    pub fn remove_tree(&self, name: &str) -> io::Result<()> {
        match std::fs::remove_dir_all(self.path.join(name)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    pub fn remove_if_empty(self) -> bool {
        std::fs::remove_dir(&self.path).is_ok()
    }

    pub fn read(&self, name: &str, max_bytes: u64) -> Result<Vec<u8>, String> {
        crate::input::read(&self.path.join(name), crate::Reached::Found, max_bytes)
    }

    /// Held through a lock file inside it: Windows locks no directory.
    pub fn lock(&self, patience: Duration, waiting: impl FnOnce()) -> io::Result<Held> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.path.join(crate::debris::LOCK_FILE))?;
        super::hold(file, &self.path, patience, waiting)
    }
}

/// A scratch directory of this process's own, removed when dropped.
#[derive(Debug)]
pub struct Scratch {
    dir: OwnDir,
    _held: std::fs::File,
}

impl Scratch {
    pub fn new(kind: &str) -> io::Result<Scratch> {
        let temporary = std::env::temp_dir();
        crate::debris::remove_stale(&temporary, kind);
        let prefix = crate::debris::owned_prefix(kind);
        for attempt in 0u64.. {
            let path = temporary.join(format!(
                "{prefix}{:016x}",
                crate::output::random_word(attempt)
            ));
            match std::fs::create_dir(&path) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                made => made?,
            }
            let held = crate::debris::hold_directory(&path)?;
            return Ok(Scratch {
                dir: OwnDir { path },
                _held: held,
            });
        }
        unreachable!("an endless sequence of names")
    }

    pub fn dir(&self) -> &OwnDir {
        &self.dir
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir.path);
    }
}
