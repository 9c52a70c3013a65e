//! Baselines: runs kept under a name in the target directory, and the gate a later run is
//! judged by against them.
//!
//! A baseline is a directory, `latlab-baselines/NAME/`, of one run or several
//! (`run-1.json`, `run-2.json` …): `--save-baseline NAME` makes it this run alone,
//! `--add-to-baseline NAME` adds this run to the runs kept, so that a baseline of several
//! runs shows how far each figure moves between runs of unchanged code, which is what the
//! gate then allows for. A baseline saved as `NAME.json` by an earlier version is read as a
//! baseline of that one run.

use crate::options::Options;
use latlab_engine::model::RunRecord;
use latlab_front::Unwritten;
use latlab_report::compare::{Comparison, DEFAULT_THRESHOLD, Gate, Side, compare_text_with};
use latlab_report::load::load_run;
use latlab_report::terminal::Terminal;
use latlab_report::{ExportError, Exporter, JsonExporter, OutputTarget, write_output};
use std::path::{Path, PathBuf};

/// What a run was asked to do with baselines: compare with one (and gate on it), save into
/// one, add to one.
pub(crate) struct Requested<'a> {
    options: &'a Options,
    /// The baseline to compare with, by name, and its runs, loaded before measuring so that
    /// a missing one is refused before anything is measured.
    compared: Option<(String, Vec<RunRecord>)>,
    /// Whether the runs are kept as the baselines the options name.
    keeps: bool,
}

impl<'a> Requested<'a> {
    /// Loads the baseline `--baseline` names; `Err` when there is none of that name or it
    /// does not read.
    pub(crate) fn load(options: &'a Options) -> Result<Requested<'a>, String> {
        for (flag, name) in [
            ("--save-baseline", &options.baselines.save_baseline),
            ("--add-to-baseline", &options.add_to_baseline),
        ] {
            if let Some(name) = name {
                check_directories(&directory()?, name)
                    .map_err(|why| format!("{flag} {name}: {why}"))?;
            }
        }
        let compared = match &options.baselines.baseline {
            Some(name) => Some((name.clone(), load(&directory()?, name)?)),
            None => None,
        };
        Ok(Requested {
            options,
            compared,
            keeps: true,
        })
    }

    /// Nothing asked of baselines: what a run started by a `--runs` command is given, the
    /// command keeping and comparing its runs together.
    pub(crate) fn none(options: &'a Options) -> Requested<'a> {
        Requested {
            options,
            compared: None,
            keeps: false,
        }
    }

    /// `text` followed by the comparison of `these` runs with the baseline, and the gate's
    /// verdict under `--fail-if-slower`; true when the gate finds a benchmark slower.
    pub(crate) fn judged(&self, these: Side, mut text: String) -> (String, bool) {
        let Some((name, runs)) = &self.compared else {
            return (text, false);
        };
        let sides = [
            Side {
                label: name.to_string(),
                runs: runs.clone(),
            },
            these,
        ];
        let comparison = Comparison::of_sides(&sides, DEFAULT_THRESHOLD);
        text.push_str(&format!("\nagainst the baseline {name}:\n"));
        text.push_str(&compare_text_with(
            &sides,
            &comparison,
            &Terminal::default(),
        ));
        let Some(percent) = self.options.fail_if_slower else {
            return (text, false);
        };
        let gate = Gate::of(&comparison, percent);
        text.push_str(&gate.text("benchmark", &format!("the baseline {name}")));
        (text, gate.failed())
    }

    /// Keeps `records` (this run, or the runs of a `--runs` command) as the baselines
    /// `--save-baseline` (these runs alone) and `--add-to-baseline` (these runs added) name;
    /// a baseline that cannot be written is noted in `unwritten`.
    pub(crate) fn save(&self, records: &[RunRecord], unwritten: &mut Unwritten) {
        if !self.keeps {
            return;
        }
        for (name, add) in [
            (&self.options.baselines.save_baseline, false),
            (&self.options.add_to_baseline, true),
        ] {
            let Some(name) = name else { continue };
            let saved = (directory())
                .map_err(|why| ExportError::Write {
                    path: "the baseline directory".into(),
                    source: std::io::Error::other(why),
                })
                .and_then(|root| {
                    let mut written = Vec::new();
                    for (k, record) in records.iter().enumerate() {
                        written.push(save(&root, name, record, add || k > 0)?);
                    }
                    Ok(written)
                });
            if let Some(paths) = unwritten.note(&format!("the baseline {name}"), saved) {
                match paths.as_slice() {
                    [path] => latlab_front::say!("baseline {name}: {}", path.display()),
                    paths => latlab_front::say!(
                        "baseline {name}: {} runs, in {}",
                        paths.len(),
                        paths[0].parent().map_or(Path::new(""), |d| d).display()
                    ),
                }
            }
        }
    }
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

/// Baselines are written only into directories of this user's that are not links: a
/// directory another user planted (`latlab-baselines/NAME -> /elsewhere`) would have a run
/// written, and older runs deleted, wherever it points.
fn check_directories(root: &Path, name: &str) -> Result<(), String> {
    for dir in [root.to_path_buf(), root.join(name)] {
        latlab_front::check_own_directory(&dir, false).map_err(|why| {
            format!(
                "{} {why}; baselines are kept only in the user's own directories: remove it, \
                 or set CARGO_TARGET_DIR to another target directory",
                dir.display()
            )
        })?;
    }
    Ok(())
}

/// The runs kept as the baseline `name` in `root`, oldest first.
fn load(root: &Path, name: &str) -> Result<Vec<RunRecord>, String> {
    let files = run_files(root, name);
    if files.is_empty() {
        return Err(format!(
            "no baseline named {name} in {}; save one with --save-baseline {name}",
            root.display()
        ));
    }
    (files.iter())
        .map(|path| load_run(path).map_err(|e| format!("baseline {name}: {}", e.0)))
        .collect()
}

/// Keeps `record` as the baseline `name` in `root`: alone, or (`add`) beside the runs kept
/// already. Returns the file written.
fn save(root: &Path, name: &str, record: &RunRecord, add: bool) -> Result<PathBuf, ExportError> {
    let dir = root.join(name);
    let write_error = |path: &Path, source| ExportError::Write {
        path: path.display().to_string(),
        source,
    };
    check_directories(root, name).map_err(|why| write_error(&dir, std::io::Error::other(why)))?;
    std::fs::create_dir_all(&dir).map_err(|e| write_error(&dir, e))?;
    let kept = run_files(root, name);
    let path = if add {
        // A run saved as NAME.json by an earlier version joins the directory first.
        let legacy = root.join(format!("{name}.json"));
        if kept == [legacy.clone()] {
            let first = dir.join("run-1.json");
            std::fs::copy(&legacy, &first).map_err(|e| write_error(&first, e))?;
        }
        dir.join(format!("run-{}.json", run_files(root, name).len() + 1))
    } else {
        dir.join("run-1.json")
    };
    let json = JsonExporter.render(record)?;
    write_output(&OutputTarget::Replaced(path.clone()), &json)?;
    if !add {
        for old in run_files(root, name).into_iter().filter(|p| *p != path) {
            std::fs::remove_file(&old).map_err(|e| write_error(&old, e))?;
        }
    }
    Ok(path)
}

/// The files of the baseline `name`: `NAME/run-K.json` in order of K, or an earlier
/// version's `NAME.json`.
fn run_files(root: &Path, name: &str) -> Vec<PathBuf> {
    let numbered = latlab_front::numbered_runs(&root.join(name), ".json");
    if numbered.is_empty() {
        let legacy = root.join(format!("{name}.json"));
        return if legacy.is_file() {
            vec![legacy]
        } else {
            Vec::new()
        };
    }
    numbered.into_iter().map(|(_, path)| path).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> RunRecord {
        let settings = latlab_engine::model::RunSettings {
            suite: "quick".into(),
            samples: 30,
            target_sample_time_ns: 1_000_000,
            budget_per_benchmark_ns: 1_000_000_000,
            rounds: 1,
            pinned_cpu: None,
            memory_locked: false,
            realtime: false,
        };
        RunRecord::begin(
            &latlab_engine::SyntheticHost::default(),
            settings,
            Vec::new(),
        )
    }

    /// Saving replaces the runs kept; adding keeps them, numbered in order; an earlier
    /// version's single file is read, and joins the directory when a run is added.
    #[test]
    fn a_baseline_keeps_one_run_or_several() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        assert!(
            load(root, "main")
                .unwrap_err()
                .contains("no baseline named main")
        );
        save(root, "main", &record(), true).unwrap();
        save(root, "main", &record(), true).unwrap();
        assert_eq!(load(root, "main").unwrap().len(), 2);
        save(root, "main", &record(), false).unwrap();
        assert_eq!(run_files(root, "main"), [root.join("main/run-1.json")]);

        std::fs::write(
            root.join("old.json"),
            std::fs::read(root.join("main/run-1.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(load(root, "old").unwrap().len(), 1);
        save(root, "old", &record(), true).unwrap();
        assert_eq!(load(root, "old").unwrap().len(), 2);
    }

    /// A baseline directory planted as a link (`ci -> /elsewhere`) is refused whether the
    /// run is saved or added: nothing is written there and nothing there is deleted. So is
    /// a linked `latlab-baselines` itself.
    #[test]
    fn a_linked_baseline_directory_is_neither_written_nor_emptied() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        for kept in ["run-1.json", "run-2.json", "run-7.json"] {
            std::fs::write(elsewhere.join(kept), "precious").unwrap();
        }
        let root = dir.path().join("latlab-baselines");
        std::fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("ci")).unwrap();
        for add in [false, true] {
            let refused = save(&root, "ci", &record(), add).unwrap_err();
            let cause = std::error::Error::source(&refused).unwrap().to_string();
            assert!(cause.contains("is a symbolic link"), "{cause}");
        }
        let linked_root = dir.path().join("linked-baselines");
        std::os::unix::fs::symlink(&elsewhere, &linked_root).unwrap();
        assert!(check_directories(&linked_root, "main").is_err());
        assert!(save(&linked_root, "main", &record(), false).is_err());
        for kept in ["run-1.json", "run-2.json", "run-7.json"] {
            let text = std::fs::read_to_string(elsewhere.join(kept)).unwrap();
            assert_eq!(text, "precious", "{kept}");
        }
        assert!(!elsewhere.join("main").exists());
    }
}
