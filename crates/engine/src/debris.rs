//! Temporary files and directories a process leaves behind when it is killed (SIGKILL, a
//! second Ctrl-C): each is named with its owner's process id, and the next run that writes
//! in the same directory removes those whose process is gone.

use std::path::Path;

/// The name prefix of this process's temporary entries of a kind: `{kind}{pid}-`.
pub fn owned_prefix(kind: &str) -> String {
    format!("{kind}{}-", std::process::id())
}

/// Removes the entries of `directory` named `{kind}{pid}-…` whose process no longer exists:
/// files, and directories with what they hold. Entries of live processes (another run, this
/// one) and anything it cannot read or remove are left alone. Returns how many it removed.
pub fn remove_stale(directory: &Path, kind: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(kind))
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if pid <= 0 || process_exists(pid) {
            continue;
        }
        let path = entry.path();
        let gone = match entry.file_type() {
            Ok(t) if t.is_dir() => std::fs::remove_dir_all(&path),
            _ => std::fs::remove_file(&path),
        };
        removed += usize::from(gone.is_ok());
    }
    removed
}

fn process_exists(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    alive || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_entries_of_dead_processes_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        // A process that has exited: a child reaped before its entry is made.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let kind = ".latlab-test-";
        let stale_file = dir.path().join(format!("{kind}{dead}-abc"));
        let stale_dir = dir.path().join(format!("{kind}{dead}-dir"));
        let ours = dir.path().join(format!("{}xyz", owned_prefix(kind)));
        let unrelated = dir.path().join("results.json");
        std::fs::write(&stale_file, "half").unwrap();
        std::fs::create_dir(&stale_dir).unwrap();
        std::fs::write(stale_dir.join("data"), "x").unwrap();
        std::fs::write(&ours, "in use").unwrap();
        std::fs::write(&unrelated, "{}").unwrap();
        assert_eq!(remove_stale(dir.path(), kind), 2);
        assert!(!stale_file.exists() && !stale_dir.exists());
        assert!(ours.exists() && unrelated.exists());
    }
}
