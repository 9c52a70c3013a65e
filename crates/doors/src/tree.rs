//! The door in, for a tree of files: the one walk of a directory of runs (a fleet's, a
//! history's, a side of a comparison, a command's runs), and the reading of what it found.
//!
//! - The directory the user named is reached as the user meant (its links followed); below
//!   it, every directory is opened through its parent's descriptor, one component at a time,
//!   and a symbolic link is never followed, so that a directory swapped for a link while the
//!   walk runs, or before a file is read, leads nowhere (`openat` with `O_NOFOLLOW` at every
//!   step, the root's descriptor held).
//! - It goes [`Limits::depth`] levels deep and meets at most [`Limits::entries`] entries,
//!   and names what it passed over: links, directories too deep, wanted names that are not
//!   regular files (a FIFO is never opened), directories it could not list, and what lay
//!   past its count.
//! - A reader of runs claims every file the walk found ([`Tree::claim`]): from then on it is
//!   an input, read or not, and no output of the same command may replace it
//!   ([`crate::input::read_as`]).

use crate::input;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How far a walk goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Directories below the root it enters (the root's own entries are at depth 0).
    pub depth: usize,
    /// Entries it looks at, in every directory together.
    pub entries: usize,
}

/// What a walk found and passed over. Paths are the root as named joined with the
/// components below it.
#[derive(Debug, Default)]
pub struct Tree {
    /// The wanted regular files, sorted by path.
    pub found: Vec<Found>,
    /// Entries neither wanted nor directories.
    pub ignored: usize,
    pub passed_over: PassedOver,
}

/// What a walk passed over, each with its path, sorted.
#[derive(Debug, Default)]
pub struct PassedOver {
    /// Symbolic links, not followed.
    pub links: Vec<PathBuf>,
    /// Directories deeper than [`Limits::depth`], not entered.
    pub too_deep: Vec<PathBuf>,
    /// Wanted names that are not regular files (a FIFO, a socket, a device), never opened.
    pub not_regular: Vec<PathBuf>,
    /// Directories that could not be opened or listed, with why.
    pub unreadable: Vec<(PathBuf, String)>,
    /// Entries past [`Limits::entries`], not looked at.
    pub past_count: usize,
}

impl PassedOver {
    /// This and `other` (the walk of another directory) as one.
    pub fn absorb(&mut self, other: PassedOver) {
        self.links.extend(other.links);
        self.too_deep.extend(other.too_deep);
        self.not_regular.extend(other.not_regular);
        self.unreadable.extend(other.unreadable);
        self.past_count += other.past_count;
    }
}

/// A regular file a walk found: its path, its size and when it was last changed, and the
/// way back to it from the walk's root.
#[derive(Debug, Clone)]
pub struct Found {
    pub path: PathBuf,
    pub size: u64,
    device: u64,
    inode: u64,
    /// Seconds since the Unix epoch.
    pub modified_s: i64,
    root: Arc<Root>,
    /// The components from the root to the file, the file's name last.
    below: Vec<OsString>,
}

/// The directory a walk began at, held open.
#[derive(Debug)]
struct Root {
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
    #[cfg(not(unix))]
    path: PathBuf,
}

impl Found {
    /// The file's bytes, at most `max_bytes`, reached again from the walk's root without
    /// following a link; `Err` is the reason, a phrase to put after the path.
    pub fn read(&self, max_bytes: u64) -> Result<Vec<u8>, String> {
        self.root.read(&self.below, &self.path, max_bytes)
    }

    /// Its first `n` bytes (or fewer): enough to tell what it is.
    pub fn head(&self, n: u64) -> Result<Vec<u8>, String> {
        self.root.head(&self.below, n)
    }
}

impl Tree {
    /// Takes every file found as an input of this command, read or not (a `results.json`
    /// passed over for the summary beside it): no output of the command may replace one.
    pub fn claim(&self) {
        for found in &self.found {
            input::claim(found.device, found.inode, &found.path);
        }
    }
}

/// Walks the directory `root` (named by the user: a link to it followed), keeping the
/// regular files whose names `wanted` takes.
pub fn walk(root: &Path, limits: Limits, wanted: impl Fn(&OsStr) -> bool) -> Tree {
    let mut tree = Tree::default();
    let opened = match Root::open(root) {
        Ok(opened) => Arc::new(opened),
        Err(e) => {
            tree.passed_over
                .unreadable
                .push((root.to_path_buf(), e.to_string()));
            return tree;
        }
    };
    let mut budget = limits.entries;
    // Directories still to list: their components below the root, and their depth.
    let mut stack: Vec<(Vec<OsString>, usize)> = vec![(Vec::new(), 0)];
    while let Some((below, depth)) = stack.pop() {
        let shown = joined(root, &below);
        let entries = match opened.list(&below) {
            Ok(entries) => entries,
            Err(e) => {
                tree.passed_over.unreadable.push((shown, e.to_string()));
                continue;
            }
        };
        for (name, status) in entries {
            if budget == 0 {
                tree.passed_over.past_count += 1;
                continue;
            }
            budget -= 1;
            let path = shown.join(&name);
            // The components down to the entry, made only for what is entered or kept.
            let to = || [below.as_slice(), std::slice::from_ref(&name)].concat();
            match status.kind {
                crate::Kind::Link => tree.passed_over.links.push(path),
                crate::Kind::Directory if depth < limits.depth => stack.push((to(), depth + 1)),
                crate::Kind::Directory => tree.passed_over.too_deep.push(path),
                _ if !wanted(&name) => tree.ignored += 1,
                crate::Kind::Regular => {
                    tree.found.push(Found {
                        path,
                        size: status.size,
                        device: status.device,
                        inode: status.inode,
                        modified_s: status.modified_s,
                        root: Arc::clone(&opened),
                        below: to(),
                    });
                }
                _ => tree.passed_over.not_regular.push(path),
            }
        }
    }
    tree.found.sort_by(|a, b| a.path.cmp(&b.path));
    let passed_over = &mut tree.passed_over;
    passed_over.links.sort();
    passed_over.too_deep.sort();
    passed_over.not_regular.sort();
    passed_over.unreadable.sort();
    tree
}

/// `root` joined with the components `below` it.
fn joined(root: &Path, below: &[OsString]) -> PathBuf {
    let mut path = root.to_path_buf();
    path.extend(below);
    path
}

/// What a walk knows of an entry.
struct Entry {
    kind: crate::Kind,
    device: u64,
    inode: u64,
    size: u64,
    modified_s: i64,
}

#[cfg(unix)]
impl Root {
    fn open(path: &Path) -> std::io::Result<Root> {
        let fd = crate::walk::open_directory(path, crate::walk::LastLink::Followed)?;
        Ok(Root { fd })
    }

    /// The directory `below` the root, reached one component at a time, no link followed.
    fn directory(&self, below: &[OsString]) -> std::io::Result<std::os::fd::OwnedFd> {
        use std::os::fd::AsFd;
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
        let mut dir = crate::sys::open_in(self.fd.as_fd(), OsStr::new("."), flags, 0)?;
        for name in below {
            dir = crate::sys::open_in(dir.as_fd(), name, flags, 0).map_err(|e| {
                if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) {
                    std::io::Error::other(format!(
                        "{} is no longer the directory the walk found (a link or a file now)",
                        Path::new(name).display()
                    ))
                } else {
                    e
                }
            })?;
        }
        Ok(dir)
    }

    /// The entries of the directory `below` the root, sorted by name, links not followed.
    fn list(&self, below: &[OsString]) -> std::io::Result<Vec<(OsString, Entry)>> {
        use std::os::fd::AsFd;
        let dir = self.directory(below)?;
        let mut names = crate::sys::names_in(dir.as_fd())?;
        names.sort();
        Ok((names.into_iter())
            .filter_map(|name| {
                let status = crate::sys::status_in(dir.as_fd(), &name).ok()?;
                let entry = Entry {
                    kind: status.kind,
                    device: status.device,
                    inode: status.inode,
                    size: status.size,
                    modified_s: status.modified_s,
                };
                Some((name, entry))
            })
            .collect())
    }

    fn read(&self, below: &[OsString], shown: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
        use std::os::fd::AsFd;
        let (name, dir) = self.parent(below)?;
        input::read_in(dir.as_fd(), name, shown, max_bytes)
    }

    fn head(&self, below: &[OsString], n: u64) -> Result<Vec<u8>, String> {
        use std::os::fd::AsFd;
        let (name, dir) = self.parent(below)?;
        input::head_in(dir.as_fd(), name, n)
    }

    /// The file's name and its directory, reached again from the root.
    fn parent<'a>(
        &self,
        below: &'a [OsString],
    ) -> Result<(&'a OsString, std::os::fd::OwnedFd), String> {
        let (name, directories) = below.split_last().ok_or("not a file")?;
        let dir = (self.directory(directories)).map_err(|e| format!("cannot read it ({e})"))?;
        Ok((name, dir))
    }
}

#[cfg(not(unix))]
impl Root {
    fn open(path: &Path) -> std::io::Result<Root> {
        std::fs::metadata(path)?;
        Ok(Root {
            path: path.to_path_buf(),
        })
    }

    fn list(&self, below: &[OsString]) -> std::io::Result<Vec<(OsString, Entry)>> {
        let mut entries: Vec<(OsString, Entry)> = std::fs::read_dir(joined(&self.path, below))?
            .filter_map(|entry| {
                let entry = entry.ok()?;
                let metadata = std::fs::symlink_metadata(entry.path()).ok()?;
                let kind = if metadata.file_type().is_symlink() {
                    crate::Kind::Link
                } else if metadata.is_dir() {
                    crate::Kind::Directory
                } else if metadata.is_file() {
                    crate::Kind::Regular
                } else {
                    crate::Kind::Device
                };
                let modified_s = (metadata.modified().ok())
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_secs() as i64);
                let entry_of = Entry {
                    kind,
                    device: 0,
                    inode: 0,
                    size: metadata.len(),
                    modified_s,
                };
                Some((entry.file_name(), entry_of))
            })
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(entries)
    }

    fn read(&self, below: &[OsString], _shown: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
        input::read(&joined(&self.path, below), input::Reached::Found, max_bytes)
    }

    fn head(&self, below: &[OsString], n: u64) -> Result<Vec<u8>, String> {
        input::head(&joined(&self.path, below), input::Reached::Found, n)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    const WIDE: Limits = Limits {
        depth: 8,
        entries: 1000,
    };

    fn json(name: &OsStr) -> bool {
        Path::new(name).extension().is_some_and(|e| e == "json")
    }

    /// The walk keeps the wanted regular files below the root and names what it passed
    /// over: a link, a directory too deep, a FIFO, and what lay past its count.
    #[test]
    fn a_walk_finds_the_files_and_names_what_it_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("h0/r0/deeper")).unwrap();
        std::fs::write(root.join("h0/r0/results.json"), "{}").unwrap();
        std::fs::write(root.join("h0/r0/deeper/x.json"), "{}").unwrap();
        std::fs::write(root.join("h0/notes.txt"), "").unwrap();
        std::os::unix::fs::symlink(root.join("h0"), root.join("link")).unwrap();
        let fifo = std::ffi::CString::new(root.join("h0/pipe.json").to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);

        let tree = walk(root, WIDE, json);
        let found: Vec<&Path> = tree.found.iter().map(|f| f.path.as_path()).collect();
        assert_eq!(
            found,
            [
                root.join("h0/r0/deeper/x.json"),
                root.join("h0/r0/results.json")
            ]
        );
        assert_eq!(tree.found[1].read(10).unwrap(), b"{}");
        assert_eq!(tree.passed_over.links, [root.join("link")]);
        assert_eq!(tree.passed_over.not_regular, [root.join("h0/pipe.json")]);
        assert_eq!(tree.ignored, 1);

        let shallow = walk(
            root,
            Limits {
                depth: 2,
                entries: 1000,
            },
            json,
        );
        assert_eq!(shallow.passed_over.too_deep, [root.join("h0/r0/deeper")]);
        let counted = walk(
            root,
            Limits {
                depth: 8,
                entries: 3,
            },
            json,
        );
        assert!(counted.passed_over.past_count > 0, "{counted:?}");
    }

    /// A directory swapped for a link after the walk found a file in it leads nowhere: the
    /// file is reached again from the root one component at a time, no link followed.
    #[test]
    fn a_directory_swapped_for_a_link_leads_nowhere() {
        let dir = tempfile::tempdir().unwrap();
        let (root, elsewhere) = (dir.path().join("runs"), dir.path().join("secret"));
        std::fs::create_dir_all(root.join("h0")).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(root.join("h0/results.json"), "{}").unwrap();
        std::fs::write(elsewhere.join("results.json"), "secret").unwrap();
        let tree = walk(&root, WIDE, json);
        std::fs::rename(root.join("h0"), dir.path().join("away")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("h0")).unwrap();
        let refused = tree.found[0].read(100).unwrap_err();
        assert!(
            refused.contains("h0 is no longer the directory"),
            "{refused}"
        );
    }

    /// A file found and claimed is an input, read or not: no output may replace it.
    #[test]
    fn a_file_found_is_an_input_though_never_read() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("skipped.json"), "{}").unwrap();
        walk(dir.path(), WIDE, json).claim();
        let metadata = std::fs::metadata(dir.path().join("skipped.json")).unwrap();
        assert!(input::read_as(metadata.dev(), metadata.ino()).is_some());
    }
}
