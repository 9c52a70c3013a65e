//! Writing an output: standard output for `-`, otherwise atomically (a temporary file in
//! the same directory, created exclusively, then renamed over the target), so a reader never
//! sees half a file and a failure leaves the previous version, or nothing, in place.
//!
//! Only a path the user named (`--json FILE`, `--out FILE`) that exists and is not a regular
//! file (`/dev/null`, `/dev/stdout`, a FIFO) is written in place: renaming over it would
//! replace the device or pipe itself. A FIFO is opened without blocking, so that one nobody
//! reads is an error rather than a hang. The files latlab names itself in a results
//! directory (`results.json`, the page, the plots, baselines) are always replaced whole: a
//! link or a device planted there by someone else is replaced, never written through.

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
            OutputTarget::File(PathBuf::from(text))
        }
    }

    /// Whether the output can be rewritten whole after every probe: a regular file (or one
    /// not yet created). Standard output, devices and pipes take one write, at the end.
    pub fn is_rewritable(&self) -> bool {
        match self {
            OutputTarget::Stdout => false,
            OutputTarget::File(path) => is_regular_or_absent(path),
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

/// Whether `a` and `b` name one existing file (the same device and inode, links followed):
/// an output that is an input of the same command would replace what it reads.
pub fn is_same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

fn is_regular_or_absent(path: &Path) -> bool {
    std::fs::metadata(path).map_or(true, |m| m.file_type().is_file())
}

pub fn write_output(target: &OutputTarget, contents: &str) -> Result<(), ExportError> {
    match target {
        OutputTarget::Stdout => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(contents.as_bytes())
                .and_then(|()| stdout.flush())
                .map_err(|source| ExportError::Write {
                    path: "standard output".into(),
                    source,
                })
        }
        OutputTarget::File(path) | OutputTarget::Replaced(path) => {
            let written = match target {
                OutputTarget::File(_) if !is_regular_or_absent(path) => {
                    write_in_place(path, contents.as_bytes())
                }
                _ => write_atomically(path, contents),
            };
            written.map_err(|source| ExportError::Write {
                path: path.display().to_string(),
                source,
            })
        }
    }
}

/// Writes into the device or FIFO at `path`. A FIFO that no process has open for reading
/// is an error (ENXIO, "No such device or address"), not a wait for ever.
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

/// Replaces `path` whole: a temporary file beside it, created exclusively (never through a
/// link), written and synced, then renamed over whatever `path` is (a renamed-over link is
/// replaced, not followed).
///
/// Every call names files relative to the directory, opened once: a working directory
/// deeper than `PATH_MAX` (4096 bytes) still takes `latlab-results/results.json`.
pub(crate) fn write_atomically(path: &Path, contents: impl AsRef<[u8]>) -> std::io::Result<()> {
    use rustix::fs::{AtFlags, Mode, OFlags};
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
    let dir = rustix::fs::open(
        directory,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let prefix = latlab_engine::debris::owned_prefix(TEMPORARY_KIND);
    let (temporary, fd) = (0u64..)
        .map(|attempt| format!("{prefix}{:016x}", random_word(attempt)))
        .find_map(|temporary| {
            // Readable as any new file would be (0666 less the umask), not only by its owner.
            let created = rustix::fs::openat(
                &dir,
                temporary.as_str(),
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_bits_truncate(0o666),
            );
            match created {
                Err(rustix::io::Errno::EXIST) => None,
                other => Some(other.map(|fd| (temporary, fd))),
            }
        })
        .expect("an endless sequence of names")?;
    let mut file = std::fs::File::from(fd);
    // Locked while it is written, so that no other run takes it for a killed run's file.
    latlab_engine::debris::hold(&file);
    let written = file
        .write_all(contents)
        .and_then(|()| file.sync_all())
        .and_then(|()| Ok(rustix::fs::renameat(&dir, temporary.as_str(), &dir, name)?));
    if written.is_err() {
        let _ = rustix::fs::unlinkat(&dir, temporary.as_str(), AtFlags::empty());
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
