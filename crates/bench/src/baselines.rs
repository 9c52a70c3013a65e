//! Where the harness keeps baselines and runs: `latlab-baselines/` and `latlab-runs/` in
//! the target directory. The store itself, and the gate, are latlab-front's
//! ([`BaselineStore`], [`Baselines`]), shared with the binary.

use crate::options::Options;
use latlab_front::{BaselineStore, Baselines, RunOf};
use std::path::{Path, PathBuf};

/// What the options ask of the baselines in `target/latlab-baselines/`, checked and loaded
/// before measuring. A run started by a `--runs` command asks nothing: the command keeps and
/// compares its runs together. A run that names no baseline needs no target directory, so
/// a bench binary run from anywhere measures.
pub(crate) fn asked(options: &Options, run_of: Option<RunOf>) -> Result<Baselines, String> {
    let args = &options.baselines;
    let named = [&args.save_baseline, &args.add_to_baseline, &args.baseline];
    if run_of.is_some() || named.iter().all(|name| name.is_none()) {
        return Ok(Baselines::none());
    }
    // A user's benchmarks have no stability checks to speak for them.
    let declared = Default::default();
    Baselines::asked(
        BaselineStore::at(directory()?),
        &options.baselines,
        declared,
    )
}

/// Where the runs of the last `--runs` command are kept, `run-K.json` each:
/// `latlab-runs/` in the target directory, beside the baselines.
pub(crate) fn runs_directory() -> Result<PathBuf, String> {
    let runs = directory()?.with_file_name("latlab-runs");
    latlab_front::check_own_directory(&runs, false).map_err(|why| {
        format!(
            "{} {why}; runs are kept only in the user's own directories: remove it, or set \
             CARGO_TARGET_DIR to another target directory",
            runs.display()
        )
    })?;
    Ok(runs)
}

/// Where baselines are kept: `latlab-baselines/` in the target directory (from
/// `CARGO_TARGET_DIR`, else from where cargo put this binary: `target/release/deps/`).
fn directory() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return Ok(PathBuf::from(dir).join("latlab-baselines"));
    }
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot tell where this binary is: {e}"))?;
    exe.ancestors()
        .find(|dir| dir.file_name().is_some_and(|n| n == "deps"))
        .and_then(|deps| deps.parent()?.parent())
        .map(|target| target.join("latlab-baselines"))
        .ok_or_else(|| {
            "cannot find the target directory for baselines; set CARGO_TARGET_DIR".to_string()
        })
}

/// Where run `of` of a `--runs` command writes its results.
pub(crate) fn run_file(dir: &Path, of: RunOf) -> PathBuf {
    dir.join(format!("{}.json", of.name()))
}
