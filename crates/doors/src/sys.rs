//! The file and process calls the doors make themselves, as safe functions over libc, each
//! `unsafe` block with what makes it sound. Every call that names a file names it within a
//! directory open as a descriptor (`openat`, `renameat`, `fstatat` …), so that the
//! directory cannot be swapped for another between two calls.

#![cfg(unix)]

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

/// `ret` as a result: `Err` with errno where it is -1.
pub fn checked(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// `bytes` as a C string; a name with a NUL byte in it cannot name a file.
fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

/// `open(path, flags, mode)`, close-on-exec.
pub fn open(path: &std::path::Path, flags: libc::c_int, mode: u32) -> io::Result<OwnedFd> {
    let path = c_string(path.as_os_str().as_bytes())?;
    let mode = libc::c_uint::from(mode as libc::mode_t);
    // SAFETY: a NUL-terminated path that outlives the call; the descriptor returned is new
    // and owned by no one else.
    let fd = checked(unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC, mode) })?;
    // SAFETY: `fd` was just opened by this call and is owned here alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `openat(dir, name, flags, mode)`, close-on-exec: `name` within the directory open as
/// `dir`.
pub fn open_in(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    flags: libc::c_int,
    mode: u32,
) -> io::Result<OwnedFd> {
    let name = c_string(name.as_bytes())?;
    let mode = libc::c_uint::from(mode as libc::mode_t);
    let flags = flags | libc::O_CLOEXEC;
    // SAFETY: an open directory and a NUL-terminated name that outlive the call; the
    // descriptor returned is new and owned by no one else.
    let fd = checked(unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, mode) })?;
    // SAFETY: `fd` was just opened by this call and is owned here alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `renameat(dir, from, dir, to)`: renames within the directory open as `dir`.
pub fn rename_in(dir: BorrowedFd<'_>, from: &OsStr, to: &OsStr) -> io::Result<()> {
    let (from, to) = (c_string(from.as_bytes())?, c_string(to.as_bytes())?);
    let dir = dir.as_raw_fd();
    // SAFETY: an open directory and two NUL-terminated names that outlive the call.
    checked(unsafe { libc::renameat(dir, from.as_ptr(), dir, to.as_ptr()) }).map(drop)
}

/// `unlinkat(dir, name, 0)`: removes a file within the directory open as `dir`.
pub fn remove_in(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let name = c_string(name.as_bytes())?;
    // SAFETY: an open directory and a NUL-terminated name that outlive the call.
    checked(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) }).map(drop)
}

/// `unlinkat(dir, name, AT_REMOVEDIR)`: removes an empty directory within `dir`.
pub fn remove_dir_in(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    let name = c_string(name.as_bytes())?;
    // SAFETY: an open directory and a NUL-terminated name that outlive the call.
    checked(unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) }).map(drop)
}

/// `mkdirat(dir, name, mode)`: makes a directory within `dir`.
pub fn make_dir_in(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> io::Result<()> {
    let name = c_string(name.as_bytes())?;
    // SAFETY: an open directory and a NUL-terminated name that outlive the call.
    checked(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), mode as libc::mode_t) })
        .map(drop)
}

/// What `fstat`/`fstatat` say of a file, the fields the doors judge by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    pub device: u64,
    pub inode: u64,
    pub owner: u32,
    /// The permission bits and the sticky bit (`st_mode & 0o7777`).
    pub mode: u32,
    pub kind: Kind,
    pub size: u64,
    /// When it was last changed, in seconds since the Unix epoch.
    pub modified_s: i64,
}

pub use crate::Kind;

impl Status {
    #[allow(
        clippy::unnecessary_cast,
        reason = "the stat fields' types differ between C libraries"
    )]
    fn of(raw: &libc::stat) -> Status {
        let kind = match raw.st_mode & libc::S_IFMT {
            libc::S_IFREG => Kind::Regular,
            libc::S_IFDIR => Kind::Directory,
            libc::S_IFLNK => Kind::Link,
            libc::S_IFIFO => Kind::Fifo,
            libc::S_IFSOCK => Kind::Socket,
            _ => Kind::Device,
        };
        Status {
            device: raw.st_dev as u64,
            inode: raw.st_ino as u64,
            owner: raw.st_uid,
            mode: (raw.st_mode & 0o7777) as u32,
            kind,
            size: u64::try_from(raw.st_size).unwrap_or(0),
            modified_s: raw.st_mtime as i64,
        }
    }

    /// How long ago it was last changed (zero for a time ahead of the clock).
    pub fn age(&self) -> std::time::Duration {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        std::time::Duration::from_secs(u64::try_from(now - self.modified_s).unwrap_or(0))
    }
}

/// `fstat(fd)`.
pub fn status(fd: BorrowedFd<'_>) -> io::Result<Status> {
    // SAFETY: a stat is integers; all zero is a valid one.
    let mut raw: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat writes one whole stat into `raw`, which outlives the call.
    checked(unsafe { libc::fstat(fd.as_raw_fd(), &mut raw) })?;
    Ok(Status::of(&raw))
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`: the entry itself, a link not followed.
pub fn status_in(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Status> {
    let name = c_string(name.as_bytes())?;
    // SAFETY: a stat is integers; all zero is a valid one.
    let mut raw: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: an open directory and a NUL-terminated name that outlive the call; fstatat
    // writes one whole stat into `raw`.
    checked(unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            name.as_ptr(),
            &mut raw,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    })?;
    Ok(Status::of(&raw))
}

/// `readlinkat(dir, name)`: the text of the link `name` within `dir`.
pub fn read_link_in(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<OsString> {
    let name = c_string(name.as_bytes())?;
    let mut buffer = vec![0u8; libc::PATH_MAX as usize + 1];
    // SAFETY: an open directory and a NUL-terminated name that outlive the call; readlinkat
    // writes at most `buffer.len()` bytes into `buffer`.
    let length = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            buffer.as_mut_ptr().cast(),
            buffer.len(),
        )
    };
    let length = usize::try_from(length).map_err(|_| io::Error::last_os_error())?;
    if length >= buffer.len() {
        return Err(io::Error::other("a link's text longer than PATH_MAX"));
    }
    buffer.truncate(length);
    Ok(OsString::from_vec(buffer))
}

/// The names in the directory open as `dir` (`.` and `..` left out), read through a
/// descriptor of its own so that `dir` is left as it was.
pub fn names_in(dir: BorrowedFd<'_>) -> io::Result<Vec<OsString>> {
    let own = open_in(dir, OsStr::new("."), libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
    let raw = std::os::fd::IntoRawFd::into_raw_fd(own);
    // SAFETY: `raw` is an open directory descriptor this function owns; fdopendir takes it
    // over (closedir closes it).
    let stream = unsafe { libc::fdopendir(raw) };
    if stream.is_null() {
        let error = io::Error::last_os_error();
        // SAFETY: fdopendir failed, so `raw` is still this function's to close.
        unsafe { libc::close(raw) };
        return Err(error);
    }
    let mut names = Vec::new();
    loop {
        // SAFETY: an open directory stream; readdir returns null at its end, else an entry
        // valid until the next call, whose name is NUL-terminated.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            break;
        }
        // SAFETY: as above: the entry and its name are valid until the next readdir.
        let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) };
        let bytes = name.to_bytes();
        if bytes != b"." && bytes != b".." {
            names.push(OsString::from_vec(bytes.to_vec()));
        }
    }
    // SAFETY: the stream opened above, closed once.
    unsafe { libc::closedir(stream) };
    Ok(names)
}

/// Writes all of `bytes` to the non-blocking descriptor `fd`, waiting (`poll`) while it
/// takes none; `Err` of kind `TimedOut` once it has taken none for `patience`.
pub fn write_with_patience(
    fd: BorrowedFd<'_>,
    bytes: &[u8],
    patience: std::time::Duration,
) -> io::Result<()> {
    let mut left = bytes;
    while !left.is_empty() {
        // SAFETY: an open descriptor, and a buffer valid for `left.len()` bytes that outlives
        // the call.
        let written = unsafe { libc::write(fd.as_raw_fd(), left.as_ptr().cast(), left.len()) };
        if let Ok(written) = usize::try_from(written) {
            left = &left[written..];
            continue;
        }
        let error = io::Error::last_os_error();
        match error.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => {}
            _ => return Err(error),
        }
        let mut wanted = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        };
        let timeout = libc::c_int::try_from(patience.as_millis()).unwrap_or(libc::c_int::MAX);
        // SAFETY: one pollfd, valid and writable for the call.
        let ready = unsafe { libc::poll(&mut wanted, 1, timeout) };
        match ready {
            0 => return Err(io::Error::from(io::ErrorKind::TimedOut)),
            -1 if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
            -1 => return Err(io::Error::last_os_error()),
            _ => {}
        }
    }
    Ok(())
}

/// The address space this process may have (`RLIMIT_AS`'s soft limit, `ulimit -v`), in
/// bytes; `None` where it is unlimited or cannot be read.
pub fn address_space_limit() -> Option<u64> {
    // SAFETY: an rlimit is two integers; all zero is a valid one.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: getrlimit writes one rlimit into `limit`, which outlives the call.
    checked(unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) }).ok()?;
    (limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur as u64)
}

/// The user this process acts as.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid takes nothing and cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether process `pid` exists: signal 0 may be sent to it, or it exists but belongs to
/// another user.
pub fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 sends nothing; kill only checks that the process may be signalled.
    let sent = unsafe { libc::kill(pid, 0) };
    sent == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Sends `signal` to every process of the group `group`; a group already gone is no error.
pub fn signal_group(group: u32, signal: libc::c_int) -> io::Result<()> {
    let group = libc::pid_t::try_from(group).map_err(|_| io::ErrorKind::InvalidInput)?;
    if group <= 1 {
        return Err(io::ErrorKind::InvalidInput.into());
    }
    // SAFETY: killpg takes a process group and a signal and touches no memory.
    match checked(unsafe { libc::killpg(group, signal) }) {
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
        other => other.map(drop),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    /// A pipe whose reader never reads takes its buffer's worth and then nothing: the write
    /// gives up after its patience, as TimedOut; one read in time takes every byte.
    #[test]
    fn a_write_gives_up_on_a_reader_that_takes_nothing() {
        let mut ends = [0; 2];
        // SAFETY: pipe2 writes two descriptors into `ends`, which outlives the call.
        checked(unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) })
            .unwrap();
        // SAFETY: both descriptors were just opened, and are owned here alone.
        let (reader, writer) =
            unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
        let patience = std::time::Duration::from_millis(200);
        let bytes = vec![7u8; 1 << 20];
        let started = std::time::Instant::now();
        let stalled = write_with_patience(writer.as_fd(), &bytes, patience).unwrap_err();
        assert_eq!(stalled.kind(), io::ErrorKind::TimedOut);
        assert!(started.elapsed() >= patience);
        // The reader takes what the pipe holds (up to where it would wait); then the pipe
        // has room again.
        let mut file = std::fs::File::from(reader);
        let mut sink = vec![0u8; 1 << 16];
        while std::io::Read::read(&mut file, &mut sink).is_ok_and(|n| n > 0) {}
        write_with_patience(writer.as_fd(), &bytes[..1000], patience).unwrap();
    }

    /// A file made, looked at, renamed and removed within a directory is there and then
    /// gone; a link reads back its text; a directory's names are its entries.
    #[test]
    fn the_calls_answer_as_the_system_does() {
        let dir = tempfile::tempdir().unwrap();
        let opened = open(dir.path(), libc::O_RDONLY | libc::O_DIRECTORY, 0).unwrap();
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        drop(open_in(opened.as_fd(), OsStr::new("a"), flags, 0o600).unwrap());
        let again = open_in(opened.as_fd(), OsStr::new("a"), flags, 0o600).unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::AlreadyExists);
        let a = status_in(opened.as_fd(), OsStr::new("a")).unwrap();
        assert_eq!(
            (a.kind, a.owner, a.size),
            (Kind::Regular, effective_uid(), 0)
        );
        rename_in(opened.as_fd(), OsStr::new("a"), OsStr::new("b")).unwrap();
        assert!(dir.path().join("b").exists() && !dir.path().join("a").exists());
        std::os::unix::fs::symlink("b", dir.path().join("l")).unwrap();
        assert_eq!(
            status_in(opened.as_fd(), OsStr::new("l")).unwrap().kind,
            Kind::Link
        );
        assert_eq!(read_link_in(opened.as_fd(), OsStr::new("l")).unwrap(), "b");
        make_dir_in(opened.as_fd(), OsStr::new("d"), 0o700).unwrap();
        let mut names = names_in(opened.as_fd()).unwrap();
        names.sort();
        assert_eq!(names, ["b", "d", "l"]);
        remove_dir_in(opened.as_fd(), OsStr::new("d")).unwrap();
        remove_in(opened.as_fd(), OsStr::new("b")).unwrap();
        assert!(!dir.path().join("b").exists() && !dir.path().join("d").exists());
        assert_eq!(status(opened.as_fd()).unwrap().kind, Kind::Directory);
        assert!(process_exists(std::process::id()));
        assert!(!process_exists(0) && !process_exists(u32::MAX));
    }
}
