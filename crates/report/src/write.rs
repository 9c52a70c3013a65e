//! Writing an output: standard output for `-`, otherwise atomically (a temporary file in
//! the same directory, created exclusively, then renamed over the target), so a reader never
//! sees half a file and a failure leaves the previous version, or nothing, in place.
//!
//! A path the user named (`--json FILE`, `--out FILE`) is where the user wants the output,
//! whatever it is ([`Destination`]):
//! - a regular file, or none yet, is replaced whole;
//! - a symbolic link is written through, never replaced: the file at the end of its chain
//!   (`latest.json -> runs/2026-11-26.json`) is replaced whole, or created when the link
//!   dangles, and the link stays;
//! - a device or FIFO (`/dev/null`, a pipe) is written in place, never truncated: renaming
//!   over it would replace the device or pipe itself. A FIFO is opened without blocking, so
//!   that one nobody reads is an error rather than a hang;
//! - a file reached through a process's descriptor link (`/dev/stdout`, `/proc/self/fd/1`,
//!   which the shell opened for `> file`) is appended to, as a write to the descriptor would
//!   be: replacing it would leave the shell's descriptor on a file nobody can see.
//!
//! The files latlab names itself in a results directory (`results.json`, the page, the
//! plots, baselines) are always replaced whole: a link or a device planted there by
//! someone else is replaced, never written through.

use crate::ExportError;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What a temporary file's name starts with, before its owner's process id and PID space.
const TEMPORARY_KIND: &str = ".latlab-";

/// Where an output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputTarget {
    Stdout,
    /// A path the user named: a device or FIFO there is written in place.
    File(PathBuf),
    /// A file latlab names itself in a results directory: always replaced whole.
    Replaced(PathBuf),
}

impl OutputTarget {
    /// `-` is standard output, anything else a file path.
    pub fn parse(text: &str) -> OutputTarget {
        if text == "-" {
            OutputTarget::Stdout
        } else {
            OutputTarget::named(PathBuf::from(text))
        }
    }

    /// A path the user named. One that is this process's standard output by another name
    /// (`/dev/stdout`, `/proc/self/fd/1`, or the file the shell opened for `> file`) is
    /// standard output, as `-` is: the output then goes there once, and the text that
    /// would have shared it goes to standard error, where writing both to one file would
    /// have the second overwrite the first. A terminal or device (`/dev/null`) is not.
    pub fn named(path: PathBuf) -> OutputTarget {
        if is_standard_output(&path) {
            OutputTarget::Stdout
        } else {
            OutputTarget::File(path)
        }
    }

    /// Whether the output can be rewritten whole after every probe: a regular file (or one
    /// not yet created). Standard output, devices and pipes take one write, at the end.
    pub fn is_rewritable(&self) -> bool {
        match self {
            OutputTarget::Stdout => false,
            OutputTarget::File(path) => {
                matches!(Destination::of(path), Ok(Destination::Replaced(_)))
            }
            OutputTarget::Replaced(_) => true,
        }
    }

    /// The file's path, unless the output is standard output.
    pub fn path(&self) -> Option<&Path> {
        match self {
            OutputTarget::Stdout => None,
            OutputTarget::File(path) | OutputTarget::Replaced(path) => Some(path),
        }
    }

    /// The output as messages name it: its path, or standard output.
    pub fn shown(&self) -> String {
        match self.path() {
            None => "standard output".to_string(),
            Some(path) => path.display().to_string(),
        }
    }
}

/// Whether `path` is the file, FIFO or socket this process's standard output is (the same
/// device and inode, links followed).
#[cfg(unix)]
fn is_standard_output(path: &Path) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let stdout = std::io::stdout().as_fd().try_clone_to_owned();
    let (Ok(named), Ok(stdout)) = (
        std::fs::metadata(path),
        stdout.and_then(|fd| std::fs::File::from(fd).metadata()),
    ) else {
        return false;
    };
    let kind = named.file_type();
    let device = kind.is_char_device() || kind.is_block_device();
    !device && named.dev() == stdout.dev() && named.ino() == stdout.ino()
}

/// Windows has no path that names standard output's file (no `/dev/stdout`).
#[cfg(not(unix))]
fn is_standard_output(_path: &Path) -> bool {
    false
}

/// Whether `a` and `b` name one existing file (the same device and inode, links followed):
/// an output that is an input of the same command would replace what it reads.
#[cfg(unix)]
pub fn is_same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether `a` and `b` name one existing file: the same path once links and `.`/`..` are
/// resolved (Windows' file ids are not in std).
#[cfg(not(unix))]
pub fn is_same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The most links a chain may have before it counts as a loop (Linux's own limit).
const MAX_LINKS: usize = 40;

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
    /// links, or a link that cannot be read.
    pub fn of(path: &Path) -> std::io::Result<Destination> {
        let (end, through_proc) = end_of_links(path)?;
        Ok(match std::fs::metadata(&end) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Destination::Replaced(end),
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
/// `/proc/self/fd/1`, whose text is no path to follow by hand: the chain stops there).
fn end_of_links(path: &Path) -> std::io::Result<(PathBuf, bool)> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {}
            _ => return Ok((current, false)),
        }
        if absolute_in(&current).starts_with("/proc") {
            return Ok((current, true));
        }
        let text = std::fs::read_link(&current)?;
        current = match current.parent() {
            Some(parent) => parent.join(text),
            None => text,
        };
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links in a row (a loop of links?)"
    )))
}

/// `path` made absolute against the working directory (for telling where it lies; links
/// are not resolved).
fn absolute_in(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

pub fn write_output(target: &OutputTarget, contents: &str) -> Result<(), ExportError> {
    write_output_as(target, contents, Durability::Synced)
}

/// Whether a file that replaces another is synced to disk before it takes the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Synced: it survives a power cut as written. Every output's last write.
    Synced,
    /// Left to the kernel: it survives the process (a crash, Ctrl-C, a kill) whole, as the
    /// rename is atomic, but a power cut may lose it. For the rewrites of a results file
    /// during a run, each replaced by the next, whose syncing took about a second of a main
    /// job.
    Cached,
}

/// As [`write_output`], synced as `durability` says.
pub fn write_output_as(
    target: &OutputTarget,
    contents: &str,
    durability: Durability,
) -> Result<(), ExportError> {
    match target {
        OutputTarget::Stdout => write_all_waiting(
            &mut std::io::stdout().lock(),
            Stream::Stdout,
            contents.as_bytes(),
        )
        .map_err(|source| ExportError::Write {
            path: "standard output".into(),
            source,
        }),
        OutputTarget::File(path) | OutputTarget::Replaced(path) => {
            let written = match target {
                OutputTarget::File(_) => write_named(path, contents.as_bytes(), durability),
                _ => write_atomically(path, contents, durability),
            };
            written.map_err(|source| ExportError::Write {
                path: path.display().to_string(),
                source,
            })
        }
    }
}

/// How long a write waits for a full non-blocking pipe (standard output or error handed
/// over by a parent that set O_NONBLOCK) to take more, before it gives up.
pub const STALLED_PIPE: std::time::Duration = std::time::Duration::from_secs(30);

/// Which standard stream a write goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Writes all of `bytes` to `out` (standard output or error, as `stream` says) and flushes
/// it. Where the stream is a non-blocking pipe that is full, it waits for room, as a
/// blocking write would, up to [`STALLED_PIPE`] at a time; std's printing macros would
/// panic there instead.
pub fn write_all_waiting(
    out: &mut impl Write,
    stream: Stream,
    bytes: &[u8],
) -> std::io::Result<()> {
    use std::io::ErrorKind;
    let mut rest = bytes;
    while !rest.is_empty() {
        match out.write(rest) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(written) => rest = &rest[written..],
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => wait_for_room(stream)?,
            Err(e) => return Err(e),
        }
    }
    loop {
        match out.flush() {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => wait_for_room(stream)?,
            Err(e) => return Err(e),
        }
    }
}

/// Waits until `stream` can take a write, up to [`STALLED_PIPE`].
#[cfg(unix)]
fn wait_for_room(stream: Stream) -> std::io::Result<()> {
    use std::os::fd::AsFd;
    let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
    let fd = match stream {
        Stream::Stdout => stdout.as_fd(),
        Stream::Stderr => stderr.as_fd(),
    };
    if latlab_engine::sys::wait_until_ready(fd, libc::POLLOUT, STALLED_PIPE)? {
        return Ok(());
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::WouldBlock,
        format!(
            "the pipe's reader took nothing for {} s",
            STALLED_PIPE.as_secs()
        ),
    ))
}

/// Windows' standard streams, as std opens them, block: a write that would block there
/// is an error of its own, given up on.
#[cfg(not(unix))]
fn wait_for_room(_stream: Stream) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::WouldBlock,
        "a non-blocking standard stream cannot be waited on here",
    ))
}

/// Writes where the path the user named leads ([`Destination`]).
fn write_named(path: &Path, contents: &[u8], durability: Durability) -> std::io::Result<()> {
    match Destination::of(path)? {
        Destination::Replaced(file) => write_atomically(&file, contents, durability),
        Destination::InPlace(device) => write_in_place(&device, contents),
        Destination::Appended(file) => std::fs::OpenOptions::new()
            .append(true)
            .open(file)?
            .write_all(contents),
    }
}

/// Writes into the device or FIFO at `path`. A FIFO that no process has open for reading
/// is an error (ENXIO, "No such device or address"), not a wait for ever.
#[cfg(unix)]
fn write_in_place(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    // Opened first without blocking: for a FIFO, this fails at once when nobody reads it.
    let _probe = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => {
                std::io::Error::other("a FIFO that no process is reading; start its reader first")
            }
            _ => e,
        })?;
    // A reader is there, so this open does not wait; its writes block as usual, so a slow
    // reader is waited for.
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(contents)
}

/// Writes into the device at `path` (`NUL`, a console): Windows has no FIFOs to probe.
#[cfg(not(unix))]
fn write_in_place(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(contents)
}

/// Replaces `path` whole: a temporary file beside it, created exclusively (never through a
/// link), written and (as `durability` says) synced, then renamed over whatever `path` is
/// (a renamed-over link is replaced, not followed).
///
/// Every call names files relative to the directory, opened once: a working directory
/// deeper than `PATH_MAX` (4096 bytes) still takes `latlab-results/results.json`.
#[cfg(unix)]
pub(crate) fn write_atomically(
    path: &Path,
    contents: impl AsRef<[u8]>,
    durability: Durability,
) -> std::io::Result<()> {
    use latlab_engine::sys::{open, open_in, remove_in, rename_in};
    use std::ffi::OsStr;
    use std::os::fd::AsFd;
    let contents = contents.as_ref();
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "the path names no file")
    })?;
    // A temporary file of a run that was killed while writing is removed by the next.
    latlab_engine::debris::remove_stale(directory, TEMPORARY_KIND);
    let dir = open(directory, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
    let prefix = latlab_engine::debris::owned_prefix(TEMPORARY_KIND);
    let (temporary, fd) = (0u64..)
        .map(|attempt| format!("{prefix}{:016x}", random_word(attempt)))
        .find_map(|temporary| {
            // Readable as any new file would be (0666 less the umask), not only by its owner.
            let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
            let created = open_in(dir.as_fd(), OsStr::new(&temporary), flags, 0o666);
            match created {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
                other => Some(other.map(|fd| (temporary, fd))),
            }
        })
        .expect("an endless sequence of names")?;
    let mut file = std::fs::File::from(fd);
    // Locked while it is written, so that no other run takes it for a killed run's file.
    latlab_engine::debris::hold(&file);
    let written = file
        .write_all(contents)
        .and_then(|()| match durability {
            Durability::Synced => file.sync_all(),
            Durability::Cached => Ok(()),
        })
        .and_then(|()| rename_in(dir.as_fd(), OsStr::new(&temporary), name));
    if written.is_err() {
        let _ = remove_in(dir.as_fd(), OsStr::new(&temporary));
    }
    written
}

/// Replaces `path` whole, as on Unix: a temporary file beside it, created exclusively,
/// written and (as `durability` says) synced, then renamed over `path` (`MoveFileExW`,
/// which replaces an existing file).
#[cfg(not(unix))]
pub(crate) fn write_atomically(
    path: &Path,
    contents: impl AsRef<[u8]>,
    durability: Durability,
) -> std::io::Result<()> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    latlab_engine::debris::remove_stale(directory, TEMPORARY_KIND);
    let prefix = latlab_engine::debris::owned_prefix(TEMPORARY_KIND);
    let (temporary, mut file) = (0u64..)
        .map(|attempt| directory.join(format!("{prefix}{:016x}", random_word(attempt))))
        .find_map(|temporary| {
            let created = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temporary);
            match created {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
                other => Some(other.map(|file| (temporary, file))),
            }
        })
        .expect("an endless sequence of names")?;
    latlab_engine::debris::hold(&file);
    let written = file
        .write_all(contents.as_ref())
        .and_then(|()| match durability {
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

/// A random 64-bit word for a temporary name: std's per-process random hash keys, over a
/// counter, so that names differ between attempts and between processes.
fn random_word(attempt: u64) -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(attempt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_remains() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        let target = OutputTarget::File(path.clone());
        write_output(&target, "first").unwrap();
        write_output(&target, "second").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let umask = status
            .lines()
            .find_map(|l| l.strip_prefix("Umask:"))
            .map(|m| u32::from_str_radix(m.trim(), 8).unwrap())
            .unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask, "mode {mode:o}, umask {umask:o}");
    }

    #[test]
    fn a_device_is_written_in_place_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let target = OutputTarget::File("/dev/null".into());
        write_output(&target, "discarded").unwrap();
        let kind = std::fs::metadata("/dev/null").unwrap().file_type();
        assert!(kind.is_char_device(), "/dev/null is no longer a device");
    }

    /// A link planted where latlab writes a file of its own is replaced by the file: what it
    /// pointed to is untouched.
    #[test]
    fn a_link_in_a_results_directory_is_replaced_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let planted = dir.path().join("results.json");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        write_output(&OutputTarget::Replaced(planted.clone()), "{}").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(std::fs::symlink_metadata(&planted).unwrap().is_file());
        assert_eq!(std::fs::read_to_string(&planted).unwrap(), "{}");
    }

    /// A link the user names is written through: the file at the end of its chain gets the
    /// output, and the link stays a link (`latest.json -> runs/today.json`).
    #[test]
    fn a_link_the_user_names_is_written_through_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("runs")).unwrap();
        let today = dir.path().join("runs/today.json");
        std::fs::write(&today, "old").unwrap();
        let latest = dir.path().join("latest.json");
        std::os::unix::fs::symlink("runs/today.json", &latest).unwrap();
        let chained = dir.path().join("chained.json");
        std::os::unix::fs::symlink("latest.json", &chained).unwrap();
        let target = OutputTarget::File(chained.clone());
        assert!(target.is_rewritable());
        write_output(&target, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&today).unwrap(), "new");
        for link in [&latest, &chained] {
            assert!(std::fs::symlink_metadata(link).unwrap().is_symlink());
        }
        // A dangling link: its target is created, the link kept.
        let dangling = dir.path().join("next.json");
        std::os::unix::fs::symlink("runs/tomorrow.json", &dangling).unwrap();
        write_output(&OutputTarget::File(dangling.clone()), "made").unwrap();
        let made = std::fs::read_to_string(dir.path().join("runs/tomorrow.json")).unwrap();
        assert_eq!(made, "made");
        assert!(std::fs::symlink_metadata(&dangling).unwrap().is_symlink());
        // A loop of links is an error, not a file put in its place.
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", &b).unwrap();
        let error = write_output(&OutputTarget::File(a.clone()), "x").unwrap_err();
        assert!(anyhow_like(&error).contains("loop"), "{error}");
        assert!(std::fs::symlink_metadata(&a).unwrap().is_symlink());
    }

    /// A link to a process's descriptor (`/dev/stdout`, `/proc/self/fd/N`) reaching a regular
    /// file is appended to through the descriptor: neither the link nor the file the shell
    /// opened is replaced, and what the file held stays.
    #[test]
    fn a_descriptor_link_is_appended_to_not_replaced() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let shell_file = dir.path().join("f");
        std::fs::write(&shell_file, "before;").unwrap();
        let opened = std::fs::OpenOptions::new()
            .append(true)
            .open(&shell_file)
            .unwrap();
        let link = dir.path().join("o");
        let descriptor = format!("/proc/self/fd/{}", opened.as_raw_fd());
        std::os::unix::fs::symlink(&descriptor, &link).unwrap();
        let target = OutputTarget::File(link.clone());
        assert!(
            !target.is_rewritable(),
            "rewritten after every probe, it would repeat"
        );
        write_output(&target, "after").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(
            std::fs::read_to_string(&shell_file).unwrap(),
            "before;after"
        );
        let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
        assert_eq!(inode(&shell_file), inode(Path::new(&descriptor)));
    }

    /// The error and its cause, as one text.
    fn anyhow_like(error: &ExportError) -> String {
        use std::error::Error;
        let cause = error.source().map(ToString::to_string).unwrap_or_default();
        format!("{error}: {cause}")
    }

    /// A FIFO nobody reads is refused at once, with a reason, instead of blocking for ever.
    #[test]
    fn a_fifo_with_no_reader_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let error = write_output(&OutputTarget::File(fifo), "x").unwrap_err();
        let ExportError::Write { source, .. } = &error else {
            panic!("{error}")
        };
        assert!(
            source.to_string().contains("no process is reading"),
            "{source}"
        );
    }

    #[test]
    fn one_file_by_two_names_is_the_same_file_and_two_files_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
        std::fs::write(&a, "{}").unwrap();
        std::fs::write(&b, "{}").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&a, &link).unwrap();
        let dotted = dir.path().join(".").join("a.json");
        assert!(is_same_file(&a, &link));
        assert!(is_same_file(&a, &dotted));
        assert!(!is_same_file(&a, &b));
        assert!(!is_same_file(&a, &dir.path().join("absent.json")));
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_path() {
        let target = OutputTarget::File("/nonexistent-latlab-dir/out.json".into());
        let error = write_output(&target, "x").unwrap_err().to_string();
        assert!(
            error.contains("/nonexistent-latlab-dir/out.json"),
            "{error}"
        );
    }
}
