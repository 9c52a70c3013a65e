//! Temporary files and directories a process leaves behind when it is killed (SIGKILL, a
//! second Ctrl-C), and how the next run tells them from another run's work in progress.
//!
//! Each entry is named `{kind}{pid}-{space}-…`: its owner's process id and a tag of the PID
//! space that id belongs to (this boot of this host, this PID namespace). While its owner
//! works, the entry is held by an exclusive `flock` (a file directly, a directory through
//! its [`LOCK_FILE`]). A lock is the same in every PID namespace and, over NFS, on every
//! host, so another run's entry is never taken for debris because its process id means
//! nothing here. An entry is stale when nobody holds its lock and either its owner's id is
//! of this PID space and names no process, or it has not changed for a minute (which covers
//! the instant between creating an entry and locking it, and a reused process id).

#[cfg(unix)]
use std::ffi::OsStr;
use std::fs::{File, TryLockError};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

/// The file inside a temporary directory whose lock holds the directory.
pub const LOCK_FILE: &str = ".latlab-lock";

/// How long an unlocked entry of another PID space is left alone.
const GRACE: Duration = Duration::from_secs(60);

/// The name prefix of this process's temporary entries of a kind: `{kind}{pid}-{space}-`.
pub fn owned_prefix(kind: &str) -> String {
    format!("{kind}{}-{}-", std::process::id(), pid_space())
}

/// Holds `file` for this process until it is closed: an exclusive lock (`flock` on Unix,
/// through std's `File::try_lock`). Where the file system has no locks the entry goes
/// unlocked, and the next run judges it by its process id alone, and only within this PID
/// space.
pub fn hold(file: &File) {
    // A failure only leaves it unlocked.
    let _ = file.try_lock();
}

/// Creates the [`LOCK_FILE`] in `directory` and holds it: the directory is in use while the
/// returned file is open.
pub fn hold_directory(directory: &Path) -> std::io::Result<File> {
    #[allow(clippy::disallowed_methods, reason = "the door's own debris")]
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(directory.join(LOCK_FILE))?;
    hold(&file);
    Ok(file)
}

/// Removes the entries of `directory` named `{kind}{pid}-{space}-…` that are stale (see the
/// module's comment): files, and directories with what they hold. Entries in use (another
/// run in any PID namespace, this one) and anything it cannot read or remove are left
/// alone. Returns how many it removed.
#[cfg(unix)]
pub fn remove_stale(directory: &Path, kind: &str) -> usize {
    match crate::sys::open(directory, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
        Ok(dir) => remove_stale_in(std::os::fd::AsFd::as_fd(&dir), kind),
        Err(_) => 0,
    }
}

/// As [`remove_stale`], in the directory open as `dir`: every entry named, looked at,
/// locked and removed within it, links never followed.
#[cfg(unix)]
pub fn remove_stale_in(dir: std::os::fd::BorrowedFd<'_>, kind: &str) -> usize {
    use crate::sys::{Kind, open_in, remove_in, status_in};
    use std::os::fd::AsFd;
    let Ok(names) = crate::sys::names_in(dir) else {
        return 0;
    };
    let mut removed = 0;
    for name in names {
        let Some((pid, space)) = name.to_str().and_then(|n| owner(n, kind)) else {
            continue;
        };
        let Ok(status) = status_in(dir, &name) else {
            continue;
        };
        let flags = libc::O_RDWR | libc::O_NOFOLLOW | libc::O_NONBLOCK;
        let lock_file = match status.kind {
            Kind::Directory => open_in(
                dir,
                &name,
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
                0,
            )
            .and_then(|inside| open_in(inside.as_fd(), OsStr::new(LOCK_FILE), flags, 0)),
            Kind::Regular => open_in(dir, &name, flags, 0),
            _ => continue,
        };
        // Held while the entry is removed, so that no run can take it up meanwhile.
        let (taken, unlocked) = match try_lock(lock_file.map(File::from)) {
            Lock::Held => continue,
            Lock::Taken(file) => (Some(file), true),
            Lock::Missing => (None, true),
            Lock::Unsupported => (None, false),
        };
        let _taken = taken;
        let untouched = status.age() >= GRACE;
        let ours_and_dead = space == pid_space() && !crate::sys::process_exists(pid);
        // Without a lock to test, only a process id of this PID space can be trusted.
        if !(ours_and_dead || (unlocked && untouched)) {
            continue;
        }
        let gone = match status.kind {
            Kind::Directory => remove_tree_in(dir, &name),
            _ => remove_in(dir, &name),
        };
        removed += usize::from(gone.is_ok());
    }
    removed
}

/// Removes the directory `name` in the directory open as `dir`, and everything in it:
/// every entry named within its directory's descriptor, links removed and never followed.
/// A directory already gone is no error.
#[cfg(unix)]
pub fn remove_tree_in(dir: std::os::fd::BorrowedFd<'_>, name: &OsStr) -> std::io::Result<()> {
    use crate::sys::{Kind, open_in, remove_dir_in, remove_in, status_in};
    use std::os::fd::AsFd;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
    let inside = match open_in(dir, name, flags, 0) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        opened => opened?,
    };
    for entry in crate::sys::names_in(inside.as_fd())? {
        match status_in(inside.as_fd(), &entry)?.kind {
            Kind::Directory => remove_tree_in(inside.as_fd(), &entry)?,
            _ => remove_in(inside.as_fd(), &entry)?,
        }
    }
    remove_dir_in(dir, name)
}

/// Elsewhere (Windows), the same by path.
#[cfg(not(unix))]
#[allow(clippy::disallowed_methods, reason = "the door's own debris")]
pub fn remove_stale(directory: &Path, kind: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((_pid, _space)) = name.to_str().and_then(|n| owner(n, kind)) else {
            continue;
        };
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        let lock_path = if file_type.is_dir() {
            path.join(LOCK_FILE)
        } else {
            path.clone()
        };
        #[allow(clippy::disallowed_methods, reason = "the door's own debris")]
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&lock_path);
        let (taken, unlocked) = match try_lock(opened) {
            Lock::Held => continue,
            Lock::Taken(file) => (Some(file), true),
            Lock::Missing => (None, true),
            Lock::Unsupported => (None, false),
        };
        let untouched = (taken.as_ref())
            .and_then(|file| file.metadata().ok())
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= GRACE);
        if !(unlocked && untouched) {
            continue;
        }
        let gone = if file_type.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        removed += usize::from(gone.is_ok());
    }
    removed
}

/// The owner's process id and PID space from an entry's name, if it is one of `kind`.
fn owner(name: &str, kind: &str) -> Option<(u32, String)> {
    let mut parts = name.strip_prefix(kind)?.splitn(3, '-');
    let pid = parts
        .next()?
        .parse::<u32>()
        .ok()
        .filter(|&p| p > 0 && i32::try_from(p).is_ok())?;
    let space = parts.next()?;
    parts.next()?;
    (space.len() == 8 && space.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| (pid, space.to_string()))
}

enum Lock {
    /// Another open file holds it: the entry is in use.
    Held,
    /// Nobody held it; this process does until the file is dropped.
    Taken(File),
    /// A directory without its lock file: killed before it was made, or not yet made.
    Missing,
    /// The file system cannot lock, or the file cannot be opened.
    Unsupported,
}

fn try_lock(opened: std::io::Result<File>) -> Lock {
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lock::Missing,
        Err(_) => return Lock::Unsupported,
    };
    match file.try_lock() {
        Ok(()) => Lock::Taken(file),
        Err(TryLockError::WouldBlock) => Lock::Held,
        Err(TryLockError::Error(_)) => Lock::Unsupported,
    }
}

/// Eight hex digits naming the space this process's id belongs to: this boot of this host
/// and this PID namespace.
fn pid_space() -> &'static str {
    static SPACE: OnceLock<String> = OnceLock::new();
    SPACE.get_or_init(|| {
        let boot = crate::input::system_text(Path::new("/proc/sys/kernel/random/boot_id"))
            .unwrap_or_default();
        let namespace = pid_namespace();
        // FNV-1a: the same in every process and every build, unlike std's hashers.
        let hash = boot
            .trim()
            .bytes()
            .chain(namespace.to_le_bytes())
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
        format!("{:08x}", (hash >> 32) as u32 ^ hash as u32)
    })
}

/// The inode of this process's PID namespace (Linux); 0 where there is none to read.
fn pid_namespace() -> u64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self/ns/pid").map_or(0, |m| m.ino())
    }
    #[cfg(not(unix))]
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIND: &str = ".latlab-test-";

    /// A process that has exited: a child reaped before its entry is made.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        dead
    }

    fn set_age(path: &Path, age: Duration) {
        let then = std::time::SystemTime::now() - age;
        File::open(path).unwrap().set_modified(then).unwrap();
    }

    #[test]
    fn only_the_entries_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let dead = dead_pid();
        let space = pid_space();
        let stale_file = dir.path().join(format!("{KIND}{dead}-{space}-abc"));
        let stale_dir = dir.path().join(format!("{KIND}{dead}-{space}-dir"));
        let ours = dir.path().join(format!("{}xyz", owned_prefix(KIND)));
        let unrelated = dir.path().join("results.json");
        std::fs::write(&stale_file, "half").unwrap();
        std::fs::create_dir(&stale_dir).unwrap();
        std::fs::write(stale_dir.join("data"), "x").unwrap();
        std::fs::write(&ours, "in use").unwrap();
        std::fs::write(&unrelated, "{}").unwrap();
        assert_eq!(remove_stale(dir.path(), KIND), 2);
        assert!(!stale_file.exists() && !stale_dir.exists());
        assert!(ours.exists() && unrelated.exists());
    }

    #[test]
    fn a_locked_entry_is_in_use_whatever_its_process_id_says() {
        // A run in another PID namespace: its id names no process here, or a dead one.
        let dir = tempfile::tempdir().unwrap();
        let dead = dead_pid();
        let space = pid_space();
        let file = dir.path().join(format!("{KIND}{dead}-{space}-file"));
        let held_file = File::create(&file).unwrap();
        hold(&held_file);
        let workspace = dir.path().join(format!("{KIND}{dead}-{space}-dir"));
        std::fs::create_dir(&workspace).unwrap();
        let held_dir = hold_directory(&workspace).unwrap();
        set_age(&file, GRACE * 2);
        set_age(&workspace, GRACE * 2);
        assert_eq!(remove_stale(dir.path(), KIND), 0);
        assert!(file.exists() && workspace.exists());
        // Its owner gone (the locks released), both are debris.
        drop((held_file, held_dir));
        assert_eq!(remove_stale(dir.path(), KIND), 2);
        assert!(!file.exists() && !workspace.exists());
    }

    #[test]
    fn an_unlocked_entry_of_another_pid_space_waits_out_the_grace() {
        let dir = tempfile::tempdir().unwrap();
        // Another namespace's entry between its creation and its lock: its process id
        // means nothing here, so only its age can say it was abandoned.
        let other = if pid_space() == "00000000" {
            "00000001"
        } else {
            "00000000"
        };
        let fresh = dir.path().join(format!("{KIND}1-{other}-fresh"));
        let old = dir.path().join(format!("{KIND}1-{other}-old"));
        std::fs::write(&fresh, "").unwrap();
        std::fs::write(&old, "").unwrap();
        set_age(&old, GRACE * 2);
        assert_eq!(remove_stale(dir.path(), KIND), 1);
        assert!(fresh.exists() && !old.exists());
    }

    #[test]
    fn names_of_other_forms_are_not_entries() {
        assert_eq!(
            owner(".latlab-12-0a1b2c3d-x", ".latlab-"),
            Some((12, "0a1b2c3d".into()))
        );
        for name in [
            ".latlab-12-x",
            ".latlab-12-0a1b2c3d",
            ".latlab-0-0a1b2c3d-x",
            "results.json",
        ] {
            assert_eq!(owner(name, ".latlab-"), None, "{name}");
        }
    }
}
