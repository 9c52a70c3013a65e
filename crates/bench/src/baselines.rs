//! Where the harness keeps baselines and runs: `latlab-baselines/` and `latlab-runs/N/` in
//! the target directory. The store itself, and the gate, are latlab-front's
//! ([`BaselineStore`], [`Baselines`]), shared with the binary.

use crate::options::Options;
use latlab_doors::{Held, Missing, OwnDir};
use latlab_front::{BaselineStore, Baselines, RunOf};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the options ask of the baselines in `target/latlab-baselines/`, checked and loaded
/// before measuring. A run started by a `--runs` command asks nothing: the command keeps and
/// compares its runs together. A run that names no baseline needs no target directory, so
/// a bench binary run from anywhere measures.
pub(crate) fn asked(options: &Options, run_of: Option<RunOf>) -> Result<Baselines, String> {
    let args = &options.baselines;
    args.check()?;
    let named = [&args.save_baseline, &args.add_to_baseline, &args.baseline];
    if run_of.is_some() || named.iter().all(|name| name.is_none()) {
        return Ok(Baselines::none());
    }
    // A user's benchmarks have no stability checks to speak for them, and no machine's
    // noise table measured them.
    Baselines::asked(
        BaselineStore::at(directory()?),
        &options.baselines,
        Default::default(),
        Default::default(),
    )
}

/// The directory of one `--runs` command's runs, `run-K.json` each: `latlab-runs/N/` in the
/// target directory, beside the baselines, made anew for each command (N one past the
/// newest there) and held while the command runs, so that two commands in one target
/// directory never share one. Of earlier commands' directories, the newest
/// [`KEPT_COMMANDS`] stay (two commands' runs can be compared); older ones that no command
/// holds are removed.
pub(crate) struct CommandRuns {
    pub dir: OwnDir,
    _held: Held,
}

/// How many earlier commands' runs directories are kept.
const KEPT_COMMANDS: usize = 5;

pub(crate) fn runs_directory() -> Result<CommandRuns, String> {
    let path = directory()?.with_file_name("latlab-runs");
    let refused = |why: String| {
        format!(
            "{} {why}; runs are kept only in the user's own directories: remove it, or set \
             CARGO_TARGET_DIR to another target directory",
            path.display()
        )
    };
    latlab_front::check_own_directory(&path, false).map_err(refused)?;
    let parent = OwnDir::kept(&path, Missing::Made).map_err(|e| refused(e.to_string()))?;
    let mut earlier = commands_in(&parent)?;
    let mut next = earlier.last().map_or(1, |(n, _)| n + 1);
    let dir = loop {
        match parent.make_new(&next.to_string()) {
            Ok(Some(dir)) => break dir,
            Ok(None) => next += 1,
            Err(e) => return Err(format!("{}: {e}", parent.join(next.to_string()).display())),
        }
    };
    let held =
        (dir.lock(Duration::ZERO, || {})).map_err(|e| format!("{}: {e}", dir.path().display()))?;
    earlier.reverse();
    for (_, name) in earlier.iter().skip(KEPT_COMMANDS) {
        let unheld = (parent.sub(name, Missing::Refused))
            .is_ok_and(|old| old.lock(Duration::ZERO, || {}).is_ok());
        if unheld {
            let _ = parent.remove_tree(name);
        }
    }
    Ok(CommandRuns { dir, _held: held })
}

/// The commands' runs directories in `parent` (`N/`), in the order of N.
fn commands_in(parent: &OwnDir) -> Result<Vec<(u64, String)>, String> {
    let names = (parent.names()).map_err(|e| format!("{}: {e}", parent.path().display()))?;
    let mut numbered: Vec<(u64, String)> = (names.iter())
        .filter_map(|name| name.to_str())
        .filter_map(|name| {
            Some((
                latlab_doors::rules::run_number(name)?.ok()?,
                name.to_string(),
            ))
        })
        .collect();
    numbered.sort();
    Ok(numbered)
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
