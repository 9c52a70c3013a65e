//! The file family: what file operations cost by size, inside a private directory.
//!
//! Every file probe works in its own [`Workspace`]: a directory latlab creates (with a
//! random name, mode 0700) inside the system's temporary directory or `--dir`, touches
//! nothing outside it, and removes with everything in it when the probe ends, whether it
//! ends well, fails (a full disk) or is interrupted.

pub(crate) mod cold;
pub(crate) mod read;
pub(crate) mod write;

use crate::ProbeError;
use crate::options::{Kind, OptionSpec};

/// `--dir`: where the file probes make their private directory.
pub const DIR_OPTION: OptionSpec = OptionSpec {
    name: "dir",
    kind: Kind::Path,
    default: None,
    help: "Directory whose file system the file probes measure (they work in a private \
           directory made inside it, and remove it) [default: the system's temporary \
           directory].",
    heading: "File probes",
};
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{Line, Measure, Panel, Plot, Scale, Stroke, Template, Unit};
use std::ffi::CString;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Whether a file was read from the page cache or the device.
pub(crate) const CACHE: Key = Key::new("cache");
/// The directory a file probe worked in.
pub(crate) const DIRECTORY: Key = Key::new("directory");
/// The file system of that directory.
pub(crate) const FILE_SYSTEM: Key = Key::new("file_system");
/// `file.read`'s and `file.write`'s figure: the time of each operation by file size.
pub(crate) const BY_SIZE: Plot = Plot {
    stem: "file-sizes",
    title: "file.read and file.write: time by file size",
    caption: "file.read and file.write: the median time of each operation by file size, reads \
              (top) and whole-file writes with and without fsync (bottom; dashed: the unlink \
              that follows); both axes logarithmic, a 0-byte file left off.",
    x_parameter: key::SIZE_BYTES,
    x_label: "file size",
    x_axis: latlab_engine::presentation::XAxis::SizeLog,
    panels: &[
        Panel {
            y_label: "time per read (median)",
            y_unit: Unit::Nanoseconds,
            y_scale: Scale::Log,
            lines: &[
                by_size(
                    "file.read/open-read-close/{size}",
                    "open + read + close",
                    Stroke::Line,
                    0,
                ),
                by_size(
                    "file.read/pread/{size}",
                    "pread, descriptor kept open",
                    Stroke::Line,
                    1,
                ),
            ],
            levels: None,
            host_caches: false,
            reference: None,
        },
        Panel {
            y_label: "time per file (median)",
            y_unit: Unit::Nanoseconds,
            y_scale: Scale::Log,
            lines: &[
                by_size(
                    "file.write/no-fsync/{size}/create-write-close",
                    "create + write + close",
                    Stroke::Line,
                    2,
                ),
                by_size(
                    "file.write/fsync/{size}/create-write-fsync-close",
                    "… + fsync",
                    Stroke::Line,
                    3,
                ),
                by_size(
                    "file.write/no-fsync/{size}/unlink",
                    "unlink",
                    Stroke::Dashed,
                    2,
                ),
                by_size(
                    "file.write/fsync/{size}/unlink",
                    "unlink after fsync",
                    Stroke::Dashed,
                    3,
                ),
            ],
            levels: None,
            host_caches: false,
            reference: None,
        },
    ],
};

const fn by_size(results: &'static str, label: &'static str, stroke: Stroke, color: u8) -> Line {
    Line {
        results: Template(results),
        label,
        y: Measure::Median,
        stroke,
        color,
    }
}

/// File sizes: 1 B, 2 B, 4 B … 8 MiB (doubling), then 10 MiB.
pub(crate) fn sizes() -> Vec<u64> {
    let mut sizes: Vec<u64> = (0..24).map(|i| 1u64 << i).collect();
    sizes.push(10 << 20);
    sizes
}

/// Whether `size` is an in-between point of a file-size sweep, folded in the terminal table:
/// all but 0 B, 1 B, 4 KiB, 64 KiB, 1 MiB and 10 MiB.
pub(crate) fn is_sweep_detail(size: u64) -> bool {
    ![0, 1, 4 << 10, 64 << 10, 1 << 20, 10 << 20].contains(&size)
}

/// What a workspace's name starts with, before its owner's process id.
const WORKSPACE_KIND: &str = "latlab-files-";

/// A private directory for one probe's files, removed when dropped.
pub(crate) struct Workspace {
    dir: tempfile::TempDir,
    /// Holds the directory while the probe works, so that no other run (in any PID
    /// namespace) takes it for a killed run's.
    _held: std::fs::File,
    fs_type: String,
}

impl Workspace {
    /// Creates the directory inside `parent` (the system's temporary directory if `None`),
    /// named with this process's id and held by its lock; first removes the directories
    /// that killed runs left there.
    pub(crate) fn create(parent: Option<&Path>) -> Result<Workspace, ProbeError> {
        let parent = parent.map_or_else(std::env::temp_dir, Path::to_path_buf);
        use std::os::unix::fs::PermissionsExt;
        latlab_doors::debris::remove_stale(&parent, WORKSPACE_KIND);
        let dir = tempfile::Builder::new()
            .prefix(&latlab_doors::debris::owned_prefix(WORKSPACE_KIND))
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(&parent)
            .map_err(|e| io_error(&format!("creating a directory in {}", parent.display()), &e))?;
        let held = latlab_doors::debris::hold_directory(dir.path())
            .map_err(|e| io_error(&format!("creating a lock in {}", dir.path().display()), &e))?;
        let fs_type = filesystem_type(dir.path());
        Ok(Workspace {
            dir,
            _held: held,
            fs_type,
        })
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The file system's type (`ext4`, `tmpfs` …), from statfs.
    pub(crate) fn fs_type(&self) -> &str {
        &self.fs_type
    }

    /// Where the directory is, for the results.
    pub(crate) fn location(&self) -> String {
        self.dir
            .path()
            .parent()
            .map_or_else(String::new, |p| p.display().to_string())
    }

    /// Writes a file of `size` bytes of a non-zero pattern (so no file system can store it
    /// as a hole or compress it to nothing).
    pub(crate) fn fill(&self, name: &str, size: u64) -> Result<PathBuf, ProbeError> {
        let path = self.path(name);
        let chunk: Vec<u8> = (0..(1 << 20))
            .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8 | 1)
            .collect();
        #[allow(
            clippy::disallowed_methods,
            reason = "the probe's workload, in its own workspace, not an output"
        )]
        let mut file = std::fs::File::create(&path)
            .map_err(|e| io_error(&format!("creating {}", path.display()), &e))?;
        let mut left = size;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            file.write_all(&chunk[..n])
                .map_err(|e| io_error(&format!("writing {}", path.display()), &e))?;
            left -= n as u64;
        }
        Ok(path)
    }
}

/// An I/O error as the probe's failure, a full disk said plainly.
pub(crate) fn io_error(what: &str, e: &io::Error) -> ProbeError {
    if e.raw_os_error() == Some(libc::ENOSPC) || e.raw_os_error() == Some(libc::EDQUOT) {
        ProbeError::Failed(format!(
            "{what}: the file system is full ({e}); free some space or measure another with --dir"
        ))
    } else {
        ProbeError::Failed(format!("{what}: {e}"))
    }
}

/// A path as a C string, for the raw calls of the measured loops.
pub(crate) fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).expect("latlab's own paths have no NUL")
}

/// The last OS error as the probe's failure.
pub(crate) fn last_error(what: &str) -> ProbeError {
    io_error(what, &io::Error::last_os_error())
}

/// The name of the file system holding `path`, from statfs's magic number.
pub(crate) fn filesystem_type(path: &Path) -> String {
    let Ok(stat) = rustix::fs::statfs(path) else {
        return "unknown".into();
    };
    let magic = stat.f_type as u64;
    let name = match magic {
        0xEF53 => "ext4",
        0x0102_1994 => "tmpfs",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x794C_7630 => "overlayfs",
        0x6969 => "nfs",
        0x2FC1_2FC1 => "zfs",
        0xF2F5_2010 => "f2fs",
        0x6573_5546 => "fuse",
        0x7366_7362 | 0x7346_7362 => "squashfs",
        0x4d44 => "vfat",
        0x5346_544e => "ntfs",
        0x0102_1997 => "9p",
        0x6264_6576 => "bcachefs",
        0x858458f6 => "ramfs",
        _ => return format!("unknown (statfs type {magic:#x})"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_is_private_and_removed() {
        let workspace = Workspace::create(None).unwrap();
        let file = workspace.fill("data", 3 << 20).unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 3 << 20);
        let dir = file.parent().unwrap().to_path_buf();
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert!(!workspace.fs_type().is_empty());
        drop(workspace);
        assert!(!dir.exists(), "{} was left behind", dir.display());
    }

    #[test]
    fn sizes_double_from_one_byte_and_end_at_ten_mebibytes() {
        let sizes = sizes();
        assert_eq!(sizes[0], 1);
        assert_eq!(sizes[sizes.len() - 2], 8 << 20);
        assert_eq!(*sizes.last().unwrap(), 10 << 20);
    }
}
