//! The results directory a run makes for its outputs once the lock is held.

use latlab_doors::{Missing, OwnDir};
use std::path::Path;

/// Creates the results directory, or takes the one another run of this user made since the
/// request was checked (two runs started into one new `--out`: the second waited for the
/// lock). It is made through its parent's descriptor and must be the user's own and no
/// link: whatever another user planted there meanwhile is refused.
pub(super) fn create_results_dir(dir: &Path) -> Result<(), String> {
    OwnDir::kept(dir, Missing::Made).map(drop).map_err(|e| {
        format!(
            "could not create the results directory {}: {e}; choose another --out",
            dir.display()
        )
    })
}
