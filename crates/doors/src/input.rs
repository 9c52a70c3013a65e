//! The door in: every file latlab reads that a user named or that it reads back (results,
//! summaries, baselines and their runs, noise tables, a fleet's entries, the counting
//! child's dumps, the runs of `--runs`) is opened here, and nowhere else.
//!
//! - It must be a regular file: a FIFO, a socket, a device (`/dev/zero`) or a directory is
//!   refused at once, never waited on or read for ever (the file is opened without
//!   blocking, then looked at through its descriptor).
//! - A symbolic link is followed only where the user named the path ([`Reached::Named`]);
//!   a file latlab finds itself ([`Reached::Found`]: a baseline's run, a dump in a scratch
//!   directory) is refused when it is a link, which another user may have planted.
//! - Its size is bounded before it is read, and it is read up to that bound and no further
//!   (a file that grows while it is read is refused), into memory asked for rather than
//!   assumed: a file larger than the process may have is refused in one line.
//!
//! Every file read is remembered by device and inode, so that the door out refuses to
//! replace an input of the same command ([`read_as`]), whatever name the output is given.
//! What a file holds is the reader's to parse, in linear time, and its numbers are held to
//! [`crate::rules`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

/// How latlab came to read a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reached {
    /// The user named it: a symbolic link is followed, as the user meant.
    Named,
    /// latlab found it (in a baseline, a fleet's directory, a scratch directory): a link is
    /// refused.
    Found,
}

/// How an input is known: its device and inode; where std gives no file ids (Windows), its
/// full path, links resolved.
#[cfg(unix)]
type InputKey = (u64, u64);
#[cfg(not(unix))]
type InputKey = PathBuf;

/// The files read so far by this process, each by its key and the path it was read by (a
/// map: a fleet reads tens of thousands).
static INPUTS: LazyLock<Mutex<HashMap<InputKey, PathBuf>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The path an input of this process was read by, when the file of `device` and `inode` is
/// one. An input is one while its path still leads to it: an input since removed, whose
/// inode the file system has given to another file, is not.
#[cfg(unix)]
pub fn read_as(device: u64, inode: u64) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
    let still =
        |path: &Path| std::fs::metadata(path).is_ok_and(|m| (m.dev(), m.ino()) == (device, inode));
    let path = inputs.get(&(device, inode))?;
    if still(path) {
        return Some(path.clone());
    }
    inputs.remove(&(device, inode));
    None
}

#[cfg(unix)]
fn remember(device: u64, inode: u64, path: &Path) {
    let mut inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
    inputs
        .entry((device, inode))
        .or_insert_with(|| path.to_path_buf());
}

/// The bytes of the regular file at `path`, of at most `max_bytes`; `Err` is the reason, in
/// a phrase to put after the path (`cannot read it (…)`, `a directory`, …).
pub fn read(path: &Path, reached: Reached, max_bytes: u64) -> Result<Vec<u8>, String> {
    let file = open(path, reached)?;
    read_open(file, path, max_bytes)
}

/// The first `n` bytes (or fewer) of the regular file at `path`: enough to tell what a file
/// is before reading it whole.
pub fn head(path: &Path, reached: Reached, n: u64) -> Result<Vec<u8>, String> {
    head_of(open(path, reached)?, n)
}

/// The first `n` bytes (or fewer) of the open `file`, checked to be a regular file.
fn head_of(file: std::fs::File, n: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let metadata = file
        .metadata()
        .map_err(|e| format!("cannot read it ({e})"))?;
    if !metadata.is_file() {
        return Err("not a regular file".into());
    }
    let mut bytes = Vec::new();
    file.take(n)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it ({e})"))?;
    Ok(bytes)
}

/// The bytes of the regular file `name` found in the directory open as `dir` (a link
/// refused), of at most `max_bytes`; `shown` names it in the reason.
#[cfg(unix)]
pub fn read_in(
    dir: std::os::fd::BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    shown: &Path,
    max_bytes: u64,
) -> Result<Vec<u8>, String> {
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOFOLLOW;
    let fd = crate::sys::open_in(dir, name, flags, 0).map_err(|e| opening_failed(&e))?;
    read_open(std::fs::File::from(fd), shown, max_bytes)
}

/// The first `n` bytes (or fewer) of the regular file `name` found in the directory open
/// as `dir` (a link refused).
#[cfg(unix)]
pub fn head_in(
    dir: std::os::fd::BorrowedFd<'_>,
    name: &std::ffi::OsStr,
    n: u64,
) -> Result<Vec<u8>, String> {
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOFOLLOW;
    let fd = crate::sys::open_in(dir, name, flags, 0).map_err(|e| opening_failed(&e))?;
    head_of(std::fs::File::from(fd), n)
}

/// Takes the file of `device` and `inode`, found at `path` by a walk, as an input of this
/// command though it may never be read (a `results.json` passed over for the summary beside
/// it): no output may replace it.
#[cfg(unix)]
pub fn claim(device: u64, inode: u64, path: &Path) {
    remember(device, inode, path);
}

/// Windows' file ids are not in std: a file found is claimed by its path.
#[cfg(not(unix))]
pub fn claim(_device: u64, _inode: u64, path: &Path) {
    remember_path(path);
}

/// The least address space a command that reads runs is let start with: its threads'
/// stacks and allocator arenas, a results file and what it parses into. Below it, an
/// allocation fails part-way and the process aborts instead of saying why.
pub const READING_FLOOR_BYTES: u64 = 256 << 20;

/// `Err` with one line where this process may have less address space (`ulimit -v`) than
/// [`READING_FLOOR_BYTES`].
#[cfg(unix)]
pub fn room_to_read() -> Result<(), String> {
    match crate::sys::address_space_limit() {
        Some(limit) if limit < READING_FLOOR_BYTES => Err(format!(
            "this process may have {} MiB of address space (ulimit -v), less than the {} MiB \
             latlab needs to read runs; raise the limit (ulimit -v unlimited)",
            limit >> 20,
            READING_FLOOR_BYTES >> 20
        )),
        _ => Ok(()),
    }
}

/// Opens `path` for reading without blocking, a final link refused unless the user named
/// it.
#[cfg(unix)]
fn open(path: &Path, reached: Reached) -> Result<std::fs::File, String> {
    let mut flags = libc::O_RDONLY | libc::O_NONBLOCK;
    if reached == Reached::Found {
        flags |= libc::O_NOFOLLOW;
    }
    crate::sys::open(path, flags, 0)
        .map(std::fs::File::from)
        .map_err(|e| opening_failed(&e))
}

#[cfg(not(unix))]
fn open(path: &Path, reached: Reached) -> Result<std::fs::File, String> {
    if reached == Reached::Found
        && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
    {
        return Err(LINK_FOUND.into());
    }
    #[allow(clippy::disallowed_methods, reason = "this is the door in")]
    std::fs::File::open(path).map_err(|e| opening_failed(&e))
}

/// What a file latlab finds that is a link is refused with.
const LINK_FOUND: &str = "a symbolic link, which latlab follows only where you name a file \
     (another user may have planted it)";

fn opening_failed(e: &std::io::Error) -> String {
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ELOOP) {
        return LINK_FOUND.into();
    }
    format!("cannot read it ({e})")
}

/// Reads the open `file`, checked to be a regular file of at most `max_bytes`, and
/// remembers it as an input.
fn read_open(file: std::fs::File, path: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let metadata = file
        .metadata()
        .map_err(|e| format!("cannot read it ({e})"))?;
    if !metadata.is_file() {
        return Err(if metadata.is_dir() {
            "a directory".into()
        } else {
            "not a regular file (a pipe, a socket or a device)".into()
        });
    }
    if metadata.len() > max_bytes {
        return Err(format!(
            "{}, more than the {} such a file can be",
            size_words(metadata.len()),
            size_words(max_bytes)
        ));
    }
    remember_file(&metadata, path);
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(metadata.len() as usize)
        .map_err(|_| {
            format!(
                "{} MiB, more memory than this process can have now; read it alone, or \
                 raise the process's memory limit",
                metadata.len() >> 20
            )
        })?;
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it ({e})"))?;
    if bytes.len() as u64 > max_bytes {
        return Err(format!(
            "it grew past {} while it was read",
            size_words(max_bytes)
        ));
    }
    Ok(bytes)
}

/// A size in the largest binary unit that leaves a whole number: `1 GiB`, `64 MiB`, `7
/// bytes`.
fn size_words(bytes: u64) -> String {
    let units = [(30, "GiB"), (20, "MiB"), (10, "KiB")];
    match units
        .iter()
        .find(|(shift, _)| bytes >= 1 << shift && bytes.is_multiple_of(1 << shift))
    {
        Some((shift, unit)) => format!("{} {unit}", bytes >> shift),
        None => format!("{bytes} bytes"),
    }
}

#[cfg(unix)]
fn remember_file(metadata: &std::fs::Metadata, path: &Path) {
    use std::os::unix::fs::MetadataExt;
    remember(metadata.dev(), metadata.ino(), path);
}

/// Windows' file ids are not in std: outputs are told from inputs by their paths there.
#[cfg(not(unix))]
fn remember_file(_metadata: &std::fs::Metadata, path: &Path) {
    remember_path(path);
}

/// Remembers an input by its full path, links resolved.
#[cfg(not(unix))]
fn remember_path(path: &Path) {
    if let Ok(full) = std::fs::canonicalize(path) {
        let mut inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
        inputs.insert(full.clone(), full);
    }
}

/// The path an input of this process was read by, when `path` (links followed) names one.
pub fn is_input(path: &Path) -> Option<PathBuf> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(path).ok()?;
        read_as(metadata.dev(), metadata.ino())
    }
    #[cfg(not(unix))]
    {
        let full = std::fs::canonicalize(path).ok()?;
        let inputs = INPUTS.lock().unwrap_or_else(|e| e.into_inner());
        inputs.get(&full).cloned()
    }
}

/// The largest file of the kernel's read ([`system_text`]).
const MAX_SYSTEM_BYTES: u64 = 16 << 20;

/// The bytes of a file of the kernel's (`/proc`, `/sys`), which says nothing of its size
/// before it is read: read up to 16 MiB.
pub fn system_file(path: impl AsRef<Path>) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    #[allow(clippy::disallowed_methods, reason = "this is the door in")]
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(MAX_SYSTEM_BYTES).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// As [`system_file`], as text; `None` when it cannot be read or is not text.
pub fn system_text(path: impl AsRef<Path>) -> Option<String> {
    String::from_utf8(system_file(path).ok()?).ok()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    const BOUND: u64 = 1 << 20;

    /// A FIFO with no writer, a device, a directory and a file past the bound are refused at
    /// once, each with its reason; a link is followed where the user named it and refused
    /// where latlab found it; a file read is remembered as an input, by any name.
    #[test]
    fn only_bounded_regular_files_come_in() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = latlab_test_support::fifo(dir.path(), "fifo");
        let refused = |path: &Path| read(path, Reached::Named, BOUND).unwrap_err();
        assert!(refused(&fifo).contains("not a regular file"));
        assert!(refused(Path::new("/dev/zero")).contains("not a regular file"));
        assert_eq!(refused(dir.path()), "a directory");
        assert!(refused(&dir.path().join("absent")).starts_with("cannot read it"));
        let big = dir.path().join("big");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(BOUND + 1)
            .unwrap();
        assert_eq!(
            refused(&big),
            "1048577 bytes, more than the 1 MiB such a file can be"
        );

        let file = dir.path().join("file");
        std::fs::write(&file, "{}").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read(&link, Reached::Named, BOUND).unwrap(), b"{}");
        let found = read(&link, Reached::Found, BOUND).unwrap_err();
        assert!(found.contains("a symbolic link"), "{found}");
        let hard = dir.path().join("hard");
        std::fs::hard_link(&file, &hard).unwrap();
        assert_eq!(is_input(&hard), Some(link.clone()));
        assert_eq!(is_input(&big), None);
        assert!(system_text("/proc/self/status").is_some_and(|t| t.contains("Pid:")));
    }
}
