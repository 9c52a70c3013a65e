//! Writing an output: standard output for `-`, otherwise atomically (a temporary file in
//! the same directory, renamed over the target), so a reader never sees half a file and a
//! failure leaves the previous version, or nothing, in place. A target that exists and is not
//! a regular file (`/dev/null`, `/dev/stdout`, a FIFO) is written in place: renaming over it
//! would replace the device or pipe itself.

use crate::ExportError;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// What a temporary file's name starts with, before its owner's process id.
const TEMPORARY_KIND: &str = ".latlab-";

/// Where an output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputTarget {
    Stdout,
    File(PathBuf),
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
        }
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
        OutputTarget::File(path) => {
            write_atomically(path, contents).map_err(|source| ExportError::Write {
                path: path.display().to_string(),
                source,
            })
        }
    }
}

pub(crate) fn write_atomically(path: &Path, contents: impl AsRef<[u8]>) -> std::io::Result<()> {
    let contents = contents.as_ref();
    if !is_regular_or_absent(path) {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)?
            .write_all(contents);
    }
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    // A temporary file of a run that was killed while writing is removed by the next.
    latlab_engine::debris::remove_stale(directory, TEMPORARY_KIND);
    // Readable as any new file would be (0666 less the umask), not only by its owner.
    let mut file = tempfile::Builder::new()
        .prefix(&latlab_engine::debris::owned_prefix(TEMPORARY_KIND))
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(directory)?;
    file.write_all(contents)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
