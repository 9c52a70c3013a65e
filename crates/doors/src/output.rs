//! The door out: every file latlab writes is written here, and nowhere else.
//!
//! A file is written whole or not at all: into a temporary file beside it, created
//! exclusively (never through a link), then renamed over its name, both inside the
//! directory open as a descriptor, reached by the walk of `walk.rs` (each directory through its
//! parent's descriptor, a link followed only where it is this user's or root's). A rename
//! or a link planted between a check and the write cannot send it elsewhere.
//!
//! A path the user named ([`write_named`]) is where the user wants the output, whatever it
//! is ([`Destination`]):
//! - a regular file, or none yet, is replaced whole; never a file this command reads (by
//!   device and inode, whatever its name: [`crate::input::read_as`]);
//! - a symbolic link of the user's (or root's) is written through, never replaced: the file
//!   at the end of its chain (`latest.json -> runs/2026-11-26.json`) is replaced whole, or
//!   made when the link dangles, and the link stays;
//! - a device or FIFO (`/dev/null`, a pipe) is written in place, never truncated. A FIFO is
//!   opened without blocking, so that one nobody reads is an error rather than a hang;
//! - a file reached through a process's descriptor link (`/dev/stdout`, `/proc/self/fd/1`,
//!   which the shell opened for `> file`) is appended to, as a write to the descriptor would
//!   be. Anything else under `/proc` is the kernel's, and refused.
//!
//! A file latlab names itself ([`write_own`]: a results directory's `results.json`, a
//! plot) is always replaced whole, in a directory that must be this user's own (its owner
//! checked on its descriptor): a link or a device planted there is replaced, never written
//! through.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What a temporary file's name starts with, before its owner's process id and PID space.
pub const TEMPORARY_KIND: &str = ".latlab-";

/// Whether a file that replaces another is synced to disk before it takes the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Synced: it survives a power cut as written. Every output's last write.
    Synced,
    /// Left to the kernel: it survives the process (a crash, Ctrl-C, a kill) whole, as the
    /// rename is atomic, but a power cut may lose it. For the rewrites of a results file
    /// during a run, each replaced by the next.
    Cached,
}

/// Where a write to a path the user named lands, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// A regular file, or none yet, replaced whole: the path itself, or the end of the
    /// chain of links it starts.
    Replaced(PathBuf),
    /// A device or FIFO, written in place from its start, never truncated.
    InPlace(PathBuf),
    /// A regular file reached through a process's descriptor link, appended to.
    Appended(PathBuf),
}

impl Destination {
    /// Follows `path`'s links, if it is one, to where a write lands. `Err` for a loop of
    /// links, a link that cannot be read, or a path under `/proc` that is no descriptor.
    pub fn of(path: &Path) -> io::Result<Destination> {
        let (end, through_proc) = end_of_links(path)?;
        #[allow(clippy::disallowed_methods, reason = "this is the door out")]
        let found = std::fs::metadata(&end);
        Ok(match found {
            Err(e) if e.kind() == io::ErrorKind::NotFound && !through_proc => {
                Destination::Replaced(end)
            }
            Err(e) => return Err(e),
            // A descriptor link's text ("/tmp/f (deleted)", "pipe:[7]") names no path to
            // replace: the descriptor is written through the link itself.
            Ok(metadata) if through_proc && metadata.is_file() => {
                Destination::Appended(path.to_path_buf())
            }
            Ok(_) if through_proc => Destination::InPlace(path.to_path_buf()),
            Ok(metadata) if !metadata.is_file() => Destination::InPlace(end),
            Ok(_) => Destination::Replaced(end),
        })
    }
}

/// The path at the end of `path`'s chain of symbolic links (`path` itself when it is not a
/// link), and whether the chain reached `/proc` (a descriptor link such as
/// `/proc/self/fd/1`, whose text is no path to follow by hand: the chain stops there). A
/// path under `/proc` that is not a process's descriptor link is refused.
fn end_of_links(path: &Path) -> io::Result<(PathBuf, bool)> {
    let mut current = path.to_path_buf();
    for _ in 0..crate::MAX_LINKS {
        if let Some(proc_path) = under_proc(&current) {
            return if is_descriptor_link(&proc_path) {
                Ok((current, true))
            } else {
                Err(io::Error::other(
                    "under /proc, which holds the kernel's files, not outputs (only a \
                     descriptor, /proc/self/fd/N, takes one)",
                ))
            };
        }
        #[allow(clippy::disallowed_methods, reason = "this is the door out")]
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {}
            _ => return Ok((current, false)),
        }
        #[allow(clippy::disallowed_methods, reason = "this is the door out")]
        let text = std::fs::read_link(&current)?;
        current = match current.parent() {
            Some(parent) => parent.join(text),
            None => text,
        };
    }
    Err(io::Error::other(format!(
        "more than {} symbolic links in a row (a loop of links?)",
        crate::MAX_LINKS
    )))
}

/// `path` made absolute, when it lies under `/proc` (links not resolved).
fn under_proc(path: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    absolute.starts_with("/proc").then_some(absolute)
}

/// Whether `path` (under `/proc`) is a process's descriptor: `/proc/PID/fd/N`,
/// `/proc/self/fd/N`, `/proc/thread-self/fd/N`.
fn is_descriptor_link(path: &Path) -> bool {
    let parts: Vec<_> = path.iter().filter_map(|p| p.to_str()).collect();
    match parts[..] {
        ["/", "proc", process, "fd", n] => {
            (process == "self"
                || process == "thread-self"
                || process.bytes().all(|b| b.is_ascii_digit()))
                && n.bytes().all(|b| b.is_ascii_digit())
        }
        _ => false,
    }
}

/// Whether standard output was closed when the process started (`>&-`). The standard
/// library opens `/dev/null` on a closed descriptor 0, 1 or 2 before `main`, so that every
/// write would vanish in silence: a constructor that runs before it looks first.
pub fn stdout_closed_at_start() -> bool {
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
    {
        // Read through the constructor's own static, so that the linker keeps it.
        let _ = std::hint::black_box(&closed_stdout::LOOK_BEFORE_MAIN);
        closed_stdout::CLOSED.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "macos")))]
    false
}

/// The look at descriptor 1 before `main`, from the platform's list of constructors.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "macos"))]
mod closed_stdout {
    use std::sync::atomic::{AtomicBool, Ordering};

    pub(super) static CLOSED: AtomicBool = AtomicBool::new(false);

    /// Run by the loader before the standard library's start-up. The section is the
    /// platform's list of constructors, which the loader calls in turn with no arguments:
    /// a function pointer is all it holds.
    #[used]
    #[cfg_attr(
        any(target_os = "linux", target_os = "android"),
        unsafe(link_section = ".init_array")
    )]
    #[cfg_attr(target_os = "macos", unsafe(link_section = "__DATA,__mod_init_func"))]
    pub(super) static LOOK_BEFORE_MAIN: extern "C" fn() = look;

    extern "C" fn look() {
        // SAFETY: F_GETFD only asks whether descriptor 1 is open; nothing else runs yet.
        if unsafe { libc::fcntl(1, libc::F_GETFD) } == -1 {
            CLOSED.store(true, Ordering::Relaxed);
        }
    }
}

/// Writes `bytes` where the path the user named leads ([`Destination`]).
pub fn write_named(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<()> {
    match Destination::of(path)? {
        Destination::Appended(file) => append(&file, bytes),
        Destination::InPlace(device) if under_proc(path).is_some() => {
            write_in_place_by_path(&device, bytes)
        }
        _ => write_through(path, bytes, durability),
    }
}

/// Replaces latlab's own file `path` whole, in a directory that must be this user's.
#[cfg(unix)]
pub fn write_own(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<()> {
    let (parent, name) = split(path)?;
    // A link on the way is followed only where it is this user's or root's: no other user
    // can have planted it.
    let dir = crate::walk::open_directory(parent, crate::walk::LastLink::Followed)?;
    crate::walk::check_own(&dir)?;
    replace_in(&dir, name, bytes, durability)
}

#[cfg(not(unix))]
pub fn write_own(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<()> {
    elsewhere::replace(path, bytes, durability)
}

/// Removes latlab's own file `path` (a summary that no longer describes the results
/// beside it), in a directory that must be this user's; one already gone is no error.
#[cfg(unix)]
pub fn remove_own(path: &Path) -> io::Result<()> {
    use std::os::fd::AsFd;
    let (parent, name) = split(path)?;
    let dir = crate::walk::open_directory(parent, crate::walk::LastLink::Followed)?;
    crate::walk::check_own(&dir)?;
    match crate::sys::remove_in(dir.as_fd(), name) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

#[cfg(not(unix))]
pub fn remove_own(path: &Path) -> io::Result<()> {
    #[allow(clippy::disallowed_methods, reason = "this is the door out")]
    match std::fs::remove_file(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// Whether the device or FIFO at `path` can be written in place: opened without blocking
/// (a FIFO whose reader has not come yet, ENXIO, can be) and closed at once.
pub fn can_write_in_place(path: &Path) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    #[allow(clippy::disallowed_methods, reason = "this is the door out")]
    match options.open(path) {
        Ok(_) => Ok(()),
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => Ok(()),
        Err(e) => Err(e),
    }
}

/// Whether this process can create files in `dir`: an unnamed file made there and closed
/// (`O_TMPFILE`), or where the file system has none, a named one made exclusively and
/// removed at once (named as a temporary file is, so that the next write there removes it
/// if this process was killed before it could). Asked by doing, since permission bits do
/// not tell: root passes them, yet cannot create a file in `/proc`.
pub fn can_create_in(dir: &Path) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        match crate::sys::open(dir, libc::O_TMPFILE | libc::O_WRONLY, 0o600) {
            Ok(_) => return Ok(()),
            // No O_TMPFILE on this file system: a named file instead.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
                ) => {}
            Err(e) => return Err(e),
        }
    }
    let named = dir.join(format!(
        "{}check",
        crate::debris::owned_prefix(TEMPORARY_KIND)
    ));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    #[allow(clippy::disallowed_methods, reason = "this is the door out")]
    drop(options.open(&named)?);
    #[allow(clippy::disallowed_methods, reason = "this is the door out")]
    std::fs::remove_file(&named)
}

/// A path's directory (`.` when it names none) and its file name.
pub(crate) fn split(path: &Path) -> io::Result<(&Path, &std::ffi::OsStr)> {
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    Ok((parent, name))
}

/// Writes through the chain of links `path` starts, each followed where the walk may
/// (`walk::may_follow`), into the file, device or FIFO at its end.
#[cfg(unix)]
fn write_through(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<()> {
    use crate::sys::{Kind, read_link_in, status_in};
    use std::os::fd::AsFd;
    let mut current = path.to_path_buf();
    for _ in 0..crate::MAX_LINKS {
        let (parent, name) = split(&current)?;
        let dir = crate::walk::open_directory(parent, crate::walk::LastLink::Followed)?;
        let status = match status_in(dir.as_fd(), name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return replace_in(&dir, name, bytes, durability);
            }
            found => found?,
        };
        match status.kind {
            Kind::Link => {
                crate::walk::may_follow(name, &status)?;
                let text = read_link_in(dir.as_fd(), name)?;
                current = parent.join(text);
            }
            Kind::Directory => {
                return Err(io::Error::other("a directory; name a file in it"));
            }
            Kind::Regular => {
                refuse_input(status.device, status.inode)?;
                return replace_in(&dir, name, bytes, durability);
            }
            Kind::Fifo | Kind::Device | Kind::Socket => {
                refuse_input(status.device, status.inode)?;
                return write_in_place(&dir, name, bytes);
            }
        }
    }
    Err(io::Error::other(format!(
        "more than {} symbolic links in a row (a loop of links?)",
        crate::MAX_LINKS
    )))
}

#[cfg(not(unix))]
fn write_through(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<()> {
    if let Some(input) = crate::input::is_input(path) {
        return Err(is_an_input(&input));
    }
    match Destination::of(path)? {
        Destination::Replaced(file) => elsewhere::replace(&file, bytes, durability),
        Destination::InPlace(device) | Destination::Appended(device) => {
            write_in_place_by_path(&device, bytes)
        }
    }
}

/// `Err` when the file of `device` and `inode` is one this command reads.
#[cfg(unix)]
fn refuse_input(device: u64, inode: u64) -> io::Result<()> {
    match crate::input::read_as(device, inode) {
        Some(input) => Err(is_an_input(&input)),
        None => Ok(()),
    }
}

fn is_an_input(input: &Path) -> io::Error {
    io::Error::other(format!(
        "that is {}, which this command reads, and the output would replace it; choose \
         another name",
        input.display()
    ))
}

/// Appends to the regular file a descriptor link reaches.
fn append(path: &Path, bytes: &[u8]) -> io::Result<()> {
    #[allow(clippy::disallowed_methods, reason = "this is the door out")]
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    file.write_all(bytes)
}

/// Writes into the device or FIFO a descriptor link reaches.
fn write_in_place_by_path(path: &Path, bytes: &[u8]) -> io::Result<()> {
    #[allow(clippy::disallowed_methods, reason = "this is the door out")]
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    file.write_all(bytes)
}

/// Writes into the device or FIFO `name` in `dir`. A FIFO that no process has open for
/// reading is an error (ENXIO), not a wait for ever.
#[cfg(unix)]
fn write_in_place(
    dir: &std::os::fd::OwnedFd,
    name: &std::ffi::OsStr,
    bytes: &[u8],
) -> io::Result<()> {
    use std::os::fd::AsFd;
    let flags = libc::O_WRONLY | libc::O_NOFOLLOW;
    // Opened first without blocking: for a FIFO, this fails at once when nobody reads it.
    let opened =
        crate::sys::open_in(dir.as_fd(), name, flags | libc::O_NONBLOCK, 0).map_err(|e| match e
            .raw_os_error()
        {
            Some(libc::ENXIO) => {
                io::Error::other("a FIFO that no process is reading; start its reader first")
            }
            _ => e,
        })?;
    // A reader is there; its writes wait for it while it takes bytes, and give up on one
    // that takes none for OUTPUT_PATIENCE.
    crate::sys::write_with_patience(opened.as_fd(), bytes, OUTPUT_PATIENCE).map_err(|e| {
        if e.kind() == io::ErrorKind::TimedOut {
            io::Error::other(format!(
                "its reader took no bytes for {} s (a FIFO nobody reads from); abandoned",
                OUTPUT_PATIENCE.as_secs()
            ))
        } else {
            e
        }
    })
}

/// How long a device or FIFO written in place may take no bytes before the output is
/// abandoned: a reader that has stopped reading would otherwise hold the command for ever.
#[cfg(unix)]
const OUTPUT_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// Replaces `name` in the directory open as `dir` whole: a temporary file beside it,
/// created exclusively (never through a link), written and (as `durability` says) synced,
/// then renamed over whatever `name` is (a renamed-over link is replaced, not followed).
#[cfg(unix)]
pub(crate) fn replace_in(
    dir: &std::os::fd::OwnedFd,
    name: &std::ffi::OsStr,
    bytes: &[u8],
    durability: Durability,
) -> io::Result<()> {
    use crate::sys::{open_in, remove_in, rename_in};
    use std::ffi::OsStr;
    use std::os::fd::AsFd;
    // A temporary file of a run that was killed while writing is removed by the next.
    crate::debris::remove_stale_in(dir.as_fd(), TEMPORARY_KIND);
    let prefix = crate::debris::owned_prefix(TEMPORARY_KIND);
    let (temporary, fd) = (0u64..)
        .map(|attempt| format!("{prefix}{:016x}", random_word(attempt)))
        .find_map(|temporary| {
            // Readable as any new file would be (0666 less the umask), not only by its owner.
            let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
            match open_in(dir.as_fd(), OsStr::new(&temporary), flags, 0o666) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => None,
                other => Some(other.map(|fd| (temporary, fd))),
            }
        })
        .expect("an endless sequence of names")?;
    let mut file = std::fs::File::from(fd);
    // Locked while it is written, so that no other run takes it for a killed run's file.
    crate::debris::hold(&file);
    let written = file
        .write_all(bytes)
        .and_then(|()| match durability {
            Durability::Synced => file.sync_all(),
            Durability::Cached => Ok(()),
        })
        .and_then(|()| rename_in(dir.as_fd(), OsStr::new(&temporary), name))
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EISDIR) => io::Error::other("a directory is in its place"),
            _ => e,
        });
    if written.is_err() {
        let _ = remove_in(dir.as_fd(), OsStr::new(&temporary));
    }
    written
}

/// A random 64-bit word for a temporary name: std's per-process random hash keys, over a
/// counter, so that names differ between attempts and between processes.
pub(crate) fn random_word(attempt: u64) -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(attempt)
}

/// Where there are no descriptors of directories (Windows), the same steps by path.
#[cfg(not(unix))]
mod elsewhere {
    use super::*;

    /// Replaces `path` whole: a temporary file beside it, created exclusively, written and
    /// (as `durability` says) synced, then renamed over `path` (`MoveFileExW`).
    #[allow(clippy::disallowed_methods, reason = "this is the door out")]
    pub(super) fn replace(path: &Path, bytes: &[u8], durability: Durability) -> io::Result<()> {
        let (directory, _) = split(path)?;
        crate::debris::remove_stale(directory, TEMPORARY_KIND);
        let prefix = crate::debris::owned_prefix(TEMPORARY_KIND);
        let (temporary, mut file) = (0u64..)
            .map(|attempt| directory.join(format!("{prefix}{:016x}", random_word(attempt))))
            .find_map(|temporary| {
                let created = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&temporary);
                match created {
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => None,
                    other => Some(other.map(|file| (temporary, file))),
                }
            })
            .expect("an endless sequence of names")?;
        crate::debris::hold(&file);
        let written = file.write_all(bytes).and_then(|()| match durability {
            Durability::Synced => file.sync_all(),
            Durability::Cached => Ok(()),
        });
        // Windows renames no file that is open: closed (and so unlocked) first.
        drop(file);
        let written = written.and_then(|()| std::fs::rename(&temporary, path));
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written
    }
}
