//! Baselines: runs kept under a name, and the gate a later run is judged by against them.
//! One store for both front ends: `DIR/baselines/` of `latlab run`'s results directory,
//! `target/latlab-baselines/` for `cargo bench`.
//!
//! A baseline is a directory, `NAME/`, of one run or several (`run-1.json`, `run-2.json`
//! …): `--save-baseline NAME` makes it this run (or the runs of a `--runs` command) alone,
//! `--add-to-baseline NAME` adds this run to the runs kept, so that a baseline of several
//! runs shows how far each figure moves between runs of unchanged code, which the gate then
//! allows for. Either keeps the last `--baseline-history` runs (10 unless told otherwise)
//! and deletes older ones: a CI that adds each main-branch run keeps a recent history. A
//! baseline saved as `NAME.json` by an earlier version is read as a baseline of that one
//! run, and joins the directory when a run is added.

use crate::{BaselineArgs, Unwritten};
use latlab_engine::config_text::DEFAULT_BASELINE_HISTORY;
use latlab_engine::model::RunRecord;
use latlab_engine::presentation::Presentations;
use latlab_report::compare::{CompareText, Compared, DEFAULT_THRESHOLD, Gate, Side};
use latlab_report::load::load_run;
use latlab_report::terminal::{Detail, Terminal};
use latlab_report::{ExportError, Exporter, JsonExporter, OutputTarget, write_output};
use std::path::{Path, PathBuf};

/// Where baselines are kept: a directory of one per name.
#[derive(Debug, Clone)]
pub struct BaselineStore {
    root: PathBuf,
}

impl BaselineStore {
    pub fn at(root: PathBuf) -> BaselineStore {
        BaselineStore { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Baselines are written only into directories of this user's that are not links: a
    /// directory another user planted (`baselines/NAME -> /elsewhere`) would have a run
    /// written, and older runs deleted, wherever it points.
    pub fn check(&self, name: &str) -> Result<(), String> {
        for dir in [self.root.clone(), self.root.join(name)] {
            crate::check_own_directory(&dir, false).map_err(|why| {
                format!(
                    "{} {why}; baselines are kept only in the user's own directories: remove \
                     it, or choose another directory",
                    dir.display()
                )
            })?;
        }
        Ok(())
    }

    /// The runs kept as the baseline `name`, oldest first; `Err` when there is none of that
    /// name or one does not read.
    pub fn load(&self, name: &str) -> Result<Vec<RunRecord>, String> {
        let files = self.run_files(name);
        if files.is_empty() {
            return Err(format!(
                "no baseline named {name} in {}; save one with --save-baseline {name}",
                self.root.display()
            ));
        }
        (files.iter())
            .map(|path| load_run(path).map_err(|e| format!("baseline {name}: {}", e.0)))
            .collect()
    }

    /// Keeps `records` as the baseline `name`: alone (`add` false: the runs kept before go),
    /// or added after the runs kept already; either way only the newest `history` runs stay.
    /// Returns the files written and kept.
    pub fn keep(
        &self,
        name: &str,
        records: &[RunRecord],
        add: bool,
        history: usize,
    ) -> Result<Vec<PathBuf>, ExportError> {
        let dir = self.root.join(name);
        let write_error = |path: &Path, source| ExportError::Write {
            path: path.display().to_string(),
            source,
        };
        self.check(name)
            .map_err(|why| write_error(&dir, std::io::Error::other(why)))?;
        std::fs::create_dir_all(&dir).map_err(|e| write_error(&dir, e))?;
        let legacy = self.root.join(format!("{name}.json"));
        let mut first = 1;
        if add {
            // A run saved as NAME.json by an earlier version joins the directory first.
            if self.run_files(name) == [legacy.clone()] {
                let into = dir.join("run-1.json");
                std::fs::copy(&legacy, &into).map_err(|e| write_error(&into, e))?;
            }
            // After the newest: numbers go on past the runs an earlier history let go.
            first = (crate::numbered_runs(&dir, ".json").last()).map_or(1, |(n, _)| n + 1);
        }
        let mut written = Vec::new();
        let newest = &records[records.len().saturating_sub(history.max(1))..];
        for (k, record) in newest.iter().enumerate() {
            let path = dir.join(format!("run-{}.json", first + k));
            write_output(
                &OutputTarget::Replaced(path.clone()),
                &JsonExporter.render(record)?,
            )?;
            written.push(path);
        }
        let kept = crate::numbered_runs(&dir, ".json");
        let keep_from = if add {
            kept.len().saturating_sub(history.max(1))
        } else {
            kept.len()
        };
        for (index, (_, old)) in kept.iter().enumerate() {
            if index < keep_from && !written.contains(old) {
                std::fs::remove_file(old).map_err(|e| write_error(old, e))?;
            }
        }
        if legacy.is_file() {
            std::fs::remove_file(&legacy).map_err(|e| write_error(&legacy, e))?;
        }
        Ok(written)
    }

    /// The files of the baseline `name`: `NAME/run-K.json` in order of K, or an earlier
    /// version's `NAME.json`.
    fn run_files(&self, name: &str) -> Vec<PathBuf> {
        let numbered = crate::numbered_runs(&self.root.join(name), ".json");
        if numbered.is_empty() {
            let legacy = self.root.join(format!("{name}.json"));
            return if legacy.is_file() {
                vec![legacy]
            } else {
                Vec::new()
            };
        }
        numbered.into_iter().map(|(_, path)| path).collect()
    }
}

/// What a run was asked to do with baselines: compare with one (and gate on it), keep its
/// runs as one, add them to one.
#[derive(Debug, Default)]
pub struct Baselines {
    store: Option<BaselineStore>,
    /// The baseline to compare with, by name, and its runs, loaded before measuring so that
    /// a missing one is refused before anything is measured.
    compared: Option<(String, Vec<RunRecord>)>,
    saved_as: Option<String>,
    added_to: Option<String>,
    fail_if_slower: Option<f64>,
    /// The runs a baseline keeps (`--baseline-history`).
    history: usize,
    /// The probes' declarations: which stability checks speak for which results.
    declared: Presentations,
}

impl Baselines {
    /// What `args` ask of the baselines in `store`, checked and loaded before measuring:
    /// `Err` (one line) when a baseline to compare with is missing or does not read, or one
    /// to write is not the user's own directory. A comparison takes the stability checks
    /// that speak for each result from `declared`.
    pub fn asked(
        store: BaselineStore,
        args: &BaselineArgs,
        declared: Presentations,
    ) -> Result<Baselines, String> {
        for (flag, name) in [
            ("--save-baseline", &args.save_baseline),
            ("--add-to-baseline", &args.add_to_baseline),
        ] {
            if let Some(name) = name {
                store
                    .check(name)
                    .map_err(|why| format!("{flag} {name}: {why}"))?;
            }
        }
        let compared = match &args.baseline {
            Some(name) => Some((name.clone(), store.load(name)?)),
            None => None,
        };
        Ok(Baselines {
            compared,
            saved_as: args.save_baseline.clone(),
            added_to: args.add_to_baseline.clone(),
            fail_if_slower: args.fail_if_slower,
            history: (args.baseline_history).unwrap_or(DEFAULT_BASELINE_HISTORY),
            store: Some(store),
            declared,
        })
    }

    /// Nothing asked of baselines: what a run started by a `--runs` command is given, the
    /// command keeping and comparing its runs together.
    pub fn none() -> Baselines {
        Baselines::default()
    }

    /// The comparison of `these` runs with the baseline, as `terminal` lays text out (its
    /// summary alone when quiet), and the gate's verdict under `--fail-if-slower`; empty
    /// text, and no regression, when no baseline was asked for. `what` names a result in the
    /// gate's text ("result", "benchmark").
    pub fn judged(&self, these: Side, terminal: &Terminal, what: &str) -> (String, bool) {
        let Some((name, runs)) = &self.compared else {
            return (String::new(), false);
        };
        let sides = vec![
            Side {
                label: name.to_string(),
                runs: runs.clone(),
            },
            these,
        ];
        let compared = Compared::of(sides, DEFAULT_THRESHOLD, &self.declared);
        let comparison = &compared.comparison;
        let mut text = match terminal.detail {
            Detail::Quiet => comparison.summary_lines().join("\n") + "\n",
            _ => {
                let exporter = CompareText {
                    terminal: *terminal,
                };
                let rendered = exporter.render(&compared).unwrap_or_else(|e| e.to_string());
                format!("\nagainst the baseline {name}:\n{rendered}")
            }
        };
        let Some(percent) = self.fail_if_slower else {
            return (text, false);
        };
        let gate = Gate::of(comparison, percent);
        text.push_str(&gate.text(what, &format!("the baseline {name}")));
        (text, gate.failed())
    }

    /// Keeps `records` (this run, or the runs of a `--runs` command) as the baselines
    /// `--save-baseline` (these runs alone) and `--add-to-baseline` (these runs added) name,
    /// saying where; a baseline that cannot be written is noted in `unwritten`.
    pub fn keep(&self, records: &[RunRecord], unwritten: &mut Unwritten) {
        let Some(store) = &self.store else { return };
        for (name, add) in [(&self.saved_as, false), (&self.added_to, true)] {
            let Some(name) = name else { continue };
            let kept = store.keep(name, records, add, self.history);
            if let Some(paths) = unwritten.note(&format!("the baseline {name}"), kept) {
                let held = store.run_files(name).len();
                let written = match paths.as_slice() {
                    [path] => path.display().to_string(),
                    paths => format!(
                        "{} runs, in {}",
                        paths.len(),
                        crate::parent_or_current(&paths[0]).display()
                    ),
                };
                let history = self.history;
                crate::say!(
                    "baseline {name}: {written} ({held} run{} kept, at most {history}: \
                     --baseline-history)",
                    if held == 1 { "" } else { "s" }
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> RunRecord {
        let config = latlab_engine::Config::quick();
        let settings = latlab_engine::model::RunSettings::uncontrolled("quick", &config, 1);
        RunRecord::begin(
            &latlab_engine::SyntheticHost::default(),
            settings,
            Vec::new(),
        )
    }

    /// A baseline keeps its newest `history` runs: adding past it lets the oldest go and
    /// numbers the new one after the newest; saving more runs than it keeps the last of
    /// them.
    #[test]
    fn a_baseline_keeps_its_last_runs() {
        let root = tempfile::tempdir().unwrap();
        let store = BaselineStore::at(root.path().to_path_buf());
        let numbers = |name: &str| -> Vec<usize> {
            (crate::numbered_runs(&root.path().join(name), ".json").into_iter())
                .map(|(n, _)| n)
                .collect()
        };
        for _ in 0..5 {
            store.keep("ci", &[record()], true, 3).unwrap();
        }
        assert_eq!(numbers("ci"), [3, 4, 5]);
        let written = store.keep("ci", &[record()], true, 3).unwrap();
        assert_eq!(written, [root.path().join("ci/run-6.json")]);
        assert_eq!(numbers("ci"), [4, 5, 6]);
        assert_eq!(store.load("ci").unwrap().len(), 3);
        let five = vec![record(); 5];
        store.keep("ci", &five, false, 3).unwrap();
        assert_eq!(numbers("ci"), [1, 2, 3]);
        store.keep("ci", &five, true, 2).unwrap();
        assert_eq!(numbers("ci"), [4, 5]);
    }

    /// Keeping replaces the runs kept; adding keeps them, numbered in order; an earlier
    /// version's single file is read, joins the directory when a run is added, and goes when
    /// the name is kept anew.
    #[test]
    fn a_baseline_keeps_one_run_or_several() {
        let root = tempfile::tempdir().unwrap();
        let store = BaselineStore::at(root.path().to_path_buf());
        assert!(
            store
                .load("main")
                .unwrap_err()
                .contains("no baseline named main")
        );
        store.keep("main", &[record()], true, 10).unwrap();
        store.keep("main", &[record(), record()], true, 10).unwrap();
        assert_eq!(store.load("main").unwrap().len(), 3);
        let kept = store.keep("main", &[record()], false, 10).unwrap();
        assert_eq!(kept, [root.path().join("main/run-1.json")]);
        assert_eq!(store.run_files("main"), kept);

        std::fs::write(
            root.path().join("old.json"),
            std::fs::read(root.path().join("main/run-1.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(store.load("old").unwrap().len(), 1);
        store.keep("old", &[record()], true, 10).unwrap();
        assert_eq!(store.load("old").unwrap().len(), 2);
        assert!(!root.path().join("old.json").exists());
    }

    /// A baseline directory planted as a link (`ci -> /elsewhere`) is refused whether the
    /// run is kept or added: nothing is written there and nothing there is deleted. So is
    /// a linked store itself.
    #[test]
    fn a_linked_baseline_directory_is_neither_written_nor_emptied() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        for kept in ["run-1.json", "run-2.json", "run-7.json"] {
            std::fs::write(elsewhere.join(kept), "precious").unwrap();
        }
        let root = dir.path().join("baselines");
        std::fs::create_dir(&root).unwrap();
        std::os::unix::fs::symlink(&elsewhere, root.join("ci")).unwrap();
        let store = BaselineStore::at(root);
        for add in [false, true] {
            let refused = store.keep("ci", &[record()], add, 10).unwrap_err();
            let cause = std::error::Error::source(&refused).unwrap().to_string();
            assert!(cause.contains("is a symbolic link"), "{cause}");
        }
        let linked_root = dir.path().join("linked-baselines");
        std::os::unix::fs::symlink(&elsewhere, &linked_root).unwrap();
        let linked = BaselineStore::at(linked_root);
        assert!(linked.check("main").is_err());
        assert!(linked.keep("main", &[record()], false, 10).is_err());
        for kept in ["run-1.json", "run-2.json", "run-7.json"] {
            let text = std::fs::read_to_string(elsewhere.join(kept)).unwrap();
            assert_eq!(text, "precious", "{kept}");
        }
        assert!(!elsewhere.join("main").exists());
    }
}
