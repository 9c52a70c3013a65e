//! The results directory a run makes for its outputs once the lock is held.

use std::path::Path;

/// Creates the results directory, or takes the one another run of this user made since the
/// request was checked (two runs started into one new `--out`: the second waited for the
/// lock).
pub(super) fn create_results_dir(dir: &Path) -> Result<(), String> {
    let cannot = |e: std::io::Error| {
        format!(
            "could not create the results directory {}: {e}",
            dir.display()
        )
    };
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let mine = std::fs::symlink_metadata(dir).is_ok_and(|m| {
                m.is_dir() && crate::directories::check_own_directory(dir, false).is_ok()
            });
            if mine {
                Ok(())
            } else {
                Err(format!(
                    "could not create the results directory {}: something else was made \
                     there while this run waited; choose another --out",
                    dir.display()
                ))
            }
        }
        created => created.map_err(cannot),
    }
}
