//! Writing an output: standard output for `-`, otherwise through the door out
//! ([`latlab_doors::output`]): whole or not at all, a temporary file renamed into place
//! inside a directory held open, so a reader never sees half a file and a failure leaves
//! the previous version, or nothing, in place. A path the user named is written where it
//! leads (a link of theirs followed, a device or FIFO written in place, a descriptor link
//! appended to, an input of the command refused); a file latlab names itself in a results
//! directory is always replaced whole, in a directory of the user's own.

use crate::ExportError;
use latlab_doors::output::{self, Destination, Durability};
use std::io::Write;
use std::path::{Path, PathBuf};

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

pub fn write_output(target: &OutputTarget, contents: &str) -> Result<(), ExportError> {
    write_output_as(target, contents, Durability::Synced)
}

/// As [`write_output`], synced as `durability` says.
pub fn write_output_as(
    target: &OutputTarget,
    contents: &str,
    durability: Durability,
) -> Result<(), ExportError> {
    match target {
        OutputTarget::Stdout => {
            let written = if output::stdout_closed_at_start() {
                Err(std::io::Error::other(
                    "it is closed (was it closed by the code measured, or by the shell with \
                     >&-?)",
                ))
            } else {
                write_all_waiting(
                    &mut std::io::stdout().lock(),
                    Stream::Stdout,
                    contents.as_bytes(),
                )
            };
            written.map_err(|source| ExportError::Write {
                path: "standard output".into(),
                source,
            })
        }
        OutputTarget::File(path) | OutputTarget::Replaced(path) => {
            let bytes = contents.as_bytes();
            let written = match target {
                OutputTarget::File(_) => output::write_named(path, bytes, durability),
                _ => output::write_own(path, bytes, durability),
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
        let fifo = latlab_test_support::fifo(dir.path(), "fifo");
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
