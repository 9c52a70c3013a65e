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
//! run, and joins the directory when a run is added. A result whose baseline runs step (a
//! change point, as `latlab history` finds them) is judged against its runs since the
//! step, and the comparison says so.

use crate::{BaselineArgs, Unwritten};
use latlab_doors::Kind;
use latlab_doors::rules::next_run_number;
use latlab_doors::{Durability, Missing, OwnDir, Reached};
use latlab_engine::config_text::DEFAULT_BASELINE_HISTORY;
use latlab_engine::model::RunRecord;
use latlab_engine::presentation::Presentations;
use latlab_report::compare::{CompareText, Compared, DEFAULT_THRESHOLD, Excused, Gate, Side};
use latlab_report::history::{DEFAULT_HISTORY_OPTIONS, since_changes_note, since_last_changes};
use latlab_report::load::{MAX_FILE_BYTES, load_run};
use latlab_report::runs::admit;
use latlab_report::stats::NoiseTables;
use latlab_report::terminal::{Detail, Terminal};
use latlab_report::{ExportError, Exporter, JsonExporter};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where baselines are kept: a directory of one per name.
#[derive(Debug, Clone)]
pub struct BaselineStore {
    root: PathBuf,
}

/// How long keeping runs waits for another command keeping runs in the same baseline.
const STORE_PATIENCE: Duration = Duration::from_secs(60);

impl BaselineStore {
    pub fn at(root: PathBuf) -> BaselineStore {
        BaselineStore { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Baselines are written only into directories of this user's that are not links: a
    /// directory another user planted (`baselines/NAME -> /elsewhere`) would have a run
    /// written, and older runs deleted, wherever it points. (Checked again on the
    /// directories' descriptors when the runs are written.)
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

    /// The runs kept as the baseline `name`, oldest first, each with its file; `Err` when
    /// there is none of that name or one does not read.
    pub fn load(&self, name: &str) -> Result<Vec<(RunRecord, PathBuf)>, String> {
        let files = self
            .run_files(name)
            .map_err(|why| format!("baseline {name}: {why}"))?;
        if files.is_empty() {
            return Err(format!(
                "no baseline named {name} in {}; save one with --save-baseline {name}",
                self.root.display()
            ));
        }
        (files.iter())
            .map(|path| {
                let run = load_run(path, Reached::Found)
                    .map_err(|e| format!("baseline {name}: {}", e.0))?;
                Ok((run, path.clone()))
            })
            .collect()
    }

    /// Keeps `records` as the baseline `name`: alone (`add` false: the runs kept before go),
    /// or added after the runs kept already; either way only the newest `history` runs stay.
    /// The baseline's directory is held (locked) while its runs are numbered, written and
    /// trimmed, so that two commands keeping runs in one baseline each keep their own.
    /// Returns the files written.
    pub fn keep(
        &self,
        name: &str,
        records: &[RunRecord],
        add: bool,
        history: usize,
    ) -> Result<Vec<PathBuf>, ExportError> {
        let failed = |path: &Path, why: String| ExportError::Write {
            path: path.display().to_string(),
            source: std::io::Error::other(why),
        };
        let io_failed =
            |path: &Path, e: std::io::Error| failed(path, format!("{}: {e}", path.display()));
        let root = OwnDir::kept(&self.root, Missing::Made).map_err(|e| io_failed(&self.root, e))?;
        let dir = root
            .sub(name, Missing::Made)
            .map_err(|e| io_failed(&root.join(name), e))?;
        let _held = dir
            .lock(STORE_PATIENCE, || {
                crate::say!("baseline {name}: waiting for another latlab keeping runs in it");
            })
            .map_err(|e| io_failed(dir.path(), e))?;
        let mut kept = numbered_in(&dir).map_err(|why| failed(dir.path(), why))?;
        let legacy = format!("{name}.json");
        let has_legacy = root.kind_of(&legacy) == Some(Kind::Regular);
        if add && kept.is_empty() && has_legacy {
            // A run saved as NAME.json by an earlier version joins the directory first.
            let bytes = root
                .read(&legacy, MAX_FILE_BYTES)
                .map_err(|why| failed(&root.join(&legacy), why))?;
            dir.replace("run-1.json", &bytes, Durability::Synced)
                .map_err(|e| io_failed(&dir.join("run-1.json"), e))?;
            kept.push((1, "run-1.json".into()));
        }
        // After the newest: numbers go on past the runs an earlier history let go.
        let first = match (add, kept.last()) {
            (true, Some((last, _))) => {
                next_run_number(*last).map_err(|why| failed(dir.path(), why))?
            }
            _ => 1,
        };
        let newest = &records[records.len().saturating_sub(history.max(1))..];
        let mut written = Vec::new();
        for (k, record) in (first..).zip(newest) {
            let file = format!("run-{k}.json");
            let text = JsonExporter.render(record)?;
            dir.replace(&file, text.as_bytes(), Durability::Synced)
                .map_err(|e| io_failed(&dir.join(&file), e))?;
            written.push(file);
        }
        let older: Vec<&String> = (kept.iter())
            .map(|(_, file)| file)
            .filter(|file| !written.contains(file))
            .collect();
        let let_go = if add {
            (older.len() + written.len()).saturating_sub(history.max(1))
        } else {
            older.len()
        };
        for file in &older[..let_go.min(older.len())] {
            dir.remove(file)
                .map_err(|e| io_failed(&dir.join(file), e))?;
        }
        if has_legacy {
            root.remove(&legacy)
                .map_err(|e| io_failed(&root.join(&legacy), e))?;
        }
        Ok(written.iter().map(|file| dir.join(file)).collect())
    }

    /// The files of the baseline `name`: `NAME/run-K.json` in order of K, or an earlier
    /// version's `NAME.json`; `Err` names an entry no latlab writes there.
    fn run_files(&self, name: &str) -> Result<Vec<PathBuf>, String> {
        let dir = self.root.join(name);
        let numbered = crate::numbered_runs(&dir, ".json")?;
        if numbered.is_empty() {
            let legacy = self.root.join(format!("{name}.json"));
            return Ok(if legacy.is_file() {
                vec![legacy]
            } else {
                Vec::new()
            });
        }
        Ok(numbered.into_iter().map(|(_, path)| path).collect())
    }
}

/// The runs in the baseline directory `dir`, `(K, "run-K.json")` in order of K; `Err`
/// names an entry named as a run that is not a regular file, or numbered past where a run
/// may be, before anything is written.
fn numbered_in(dir: &OwnDir) -> Result<Vec<(u64, String)>, String> {
    let names = dir
        .names()
        .map_err(|e| format!("{}: {e}", dir.path().display()))?;
    let mut runs = Vec::new();
    for name in names.iter().filter_map(|n| n.to_str()) {
        let Some(number) = crate::RunOf::number_in(name, ".json") else {
            continue;
        };
        let number =
            number.map_err(|why| format!("{}: {why}; remove it", dir.join(name).display()))?;
        if dir.kind_of(name) != Some(Kind::Regular) {
            return Err(format!(
                "{} is not a file, so not a run latlab kept; remove it",
                dir.join(name).display()
            ));
        }
        runs.push((number, name.to_string()));
    }
    runs.sort();
    Ok(runs)
}

/// What a run was asked to do with baselines: compare with one (and gate on it), keep its
/// runs as one, add them to one.
#[derive(Debug, Default)]
pub struct Baselines {
    store: Option<BaselineStore>,
    /// The baseline to compare with, by name, and its runs, loaded before measuring so that
    /// a missing one is refused before anything is measured; each result that stepped in
    /// them is left out of the runs before its last change point, and the sentence saying
    /// so is kept.
    compared: Option<AgainstBaseline>,
    saved_as: Option<String>,
    added_to: Option<String>,
    fail_if_slower: Option<f64>,
    /// What `--accept-clock-moves` and `--allow-missing` excuse.
    excused: Excused,
    /// The runs a baseline keeps (`--baseline-history`).
    history: usize,
    /// The probes' declarations: which stability checks speak for which results.
    declared: Presentations,
    /// The noise tables one run a side takes its prior from.
    noise: NoiseTables<'static>,
}

/// The baseline a run is judged against, loaded before measuring so that a missing one is
/// refused before anything is measured: its runs admitted as a comparison's side is (copies
/// once, in the order they started), each result that stepped in them left out of the runs
/// before its last change point, with its files and the notes of both.
#[derive(Debug)]
struct AgainstBaseline {
    name: String,
    runs: Vec<RunRecord>,
    files: Vec<PathBuf>,
    notes: Vec<String>,
}

impl AgainstBaseline {
    fn load(
        store: &BaselineStore,
        name: &str,
        declared: &Presentations,
    ) -> Result<AgainstBaseline, String> {
        let (runs, files): (Vec<RunRecord>, Vec<PathBuf>) = store.load(name)?.into_iter().unzip();
        let mut notes = Vec::new();
        let label = format!("the baseline {name}");
        let (mut runs, kept) = admit::side(&label, runs, &files, &mut notes);
        let stepped = since_last_changes(&mut runs, declared, DEFAULT_HISTORY_OPTIONS);
        notes.extend(since_changes_note(name, runs.len(), &stepped));
        Ok(AgainstBaseline {
            name: name.to_string(),
            runs,
            files: kept.into_iter().map(|i| files[i].clone()).collect(),
            notes,
        })
    }
}

impl Baselines {
    /// What `args` ask of the baselines in `store`, checked and loaded before measuring:
    /// `Err` (one line) when a baseline to compare with is missing or does not read, or one
    /// to write is not the user's own directory. A comparison takes the stability checks
    /// that speak for each result from `declared`, and the prior of one run a side from
    /// `noise`.
    pub fn asked(
        store: BaselineStore,
        args: &BaselineArgs,
        declared: Presentations,
        noise: NoiseTables<'static>,
    ) -> Result<Baselines, String> {
        args.check()?;
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
            Some(name) => Some(AgainstBaseline::load(&store, name, &declared)?),
            None => None,
        };
        Ok(Baselines {
            compared,
            saved_as: args.save_baseline.clone(),
            added_to: args.add_to_baseline.clone(),
            fail_if_slower: args.fail_if_slower,
            excused: Excused {
                clock_moves: args.accept_clock_moves,
                missing: args.allow_missing,
            },
            history: (args.baseline_history).unwrap_or(DEFAULT_BASELINE_HISTORY),
            store: Some(store),
            declared,
            noise,
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
        let Some(baseline) = &self.compared else {
            return (String::new(), false);
        };
        let name = &baseline.name;
        // Both sides admitted as a comparison's are: what either side's runs mix (machines,
        // versions, suites, CPUs) is said first, and the results judged since a step in the
        // baseline's runs.
        let mut notes = baseline.notes.clone();
        let these_names = vec![PathBuf::from(&these.label); these.runs.len()];
        let (runs, _) = admit::side(&these.label, these.runs, &these_names, &mut notes);
        let sides = vec![
            Side {
                label: name.to_string(),
                runs: baseline.runs.clone(),
            },
            Side {
                label: these.label,
                runs,
            },
        ];
        match admit::sides(&sides, &[baseline.files.clone(), these_names]) {
            Ok(together) => notes.extend(together),
            Err(why) => {
                let text = format!("\nagainst the baseline {name}: not compared: {why}\n");
                return (text, self.fail_if_slower.is_some());
            }
        }
        let mixed: Vec<String> = (notes.iter())
            .map(|note| format!("note: {note}\n"))
            .collect();
        let compared = Compared::excusing(
            sides,
            DEFAULT_THRESHOLD,
            &self.declared,
            self.noise,
            self.excused,
        );
        let comparison = &compared.comparison;
        let mut text = match terminal.detail {
            Detail::Quiet => mixed.concat() + &comparison.summary_lines().join("\n") + "\n",
            _ => {
                let exporter = CompareText {
                    terminal: *terminal,
                };
                let rendered = exporter.render(&compared).unwrap_or_else(|e| e.to_string());
                format!(
                    "\nagainst the baseline {name}:\n{}{rendered}",
                    mixed.concat()
                )
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
    /// A run stopped before its end (Ctrl-C, a signal: `complete` false) is never kept: it
    /// would replace or join the runs a baseline holds with figures of part of a run.
    pub fn keep(&self, records: &[RunRecord], unwritten: &mut Unwritten) {
        let Some(store) = &self.store else { return };
        // Cloned only where a run must be left out.
        let whole: std::borrow::Cow<[RunRecord]> = if records.iter().all(|r| r.complete) {
            std::borrow::Cow::Borrowed(records)
        } else {
            (records.iter()).filter(|r| r.complete).cloned().collect()
        };
        for (name, add) in [(&self.saved_as, false), (&self.added_to, true)] {
            let Some(name) = name else { continue };
            if whole.len() < records.len() {
                let cut = records.len() - whole.len();
                crate::say!(
                    "baseline {name}: {} stopped before its end not kept{}",
                    if cut == 1 {
                        "a run".to_string()
                    } else {
                        format!("{cut} runs")
                    },
                    if whole.is_empty() {
                        "; the runs it held are as they were"
                    } else {
                        ""
                    }
                );
            }
            if whole.is_empty() {
                continue;
            }
            let kept = store.keep(name, &whole, add, self.history);
            if let Some(paths) = unwritten.note(&format!("the baseline {name}"), kept) {
                let held = store.run_files(name).map_or(0, |files| files.len());
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

    /// A baseline's runs are admitted as a comparison's side is: a copy among them counted
    /// once, and said; a run made under an emulator is not set beside a native baseline, and
    /// the gate fails on it. Before, the baselines built their own notes and skipped both.
    #[test]
    fn a_baseline_is_admitted_as_a_comparisons_side_is() {
        let dir = tempfile::tempdir().unwrap();
        let store = BaselineStore::at(dir.path().to_path_buf());
        let run = record();
        store
            .keep("ci", &[run.clone(), run.clone()], false, 10)
            .unwrap();
        let args = BaselineArgs {
            baseline: Some("ci".into()),
            fail_if_slower: Some(10.0),
            ..BaselineArgs::default()
        };
        let baselines = Baselines::asked(
            store,
            &args,
            Presentations::default(),
            NoiseTables::shipped(),
        )
        .unwrap();
        let against = baselines.compared.as_ref().unwrap();
        assert_eq!(against.runs.len(), 1);
        assert!(
            (against.notes.iter()).any(|n| n.contains("1 file repeats a run already read")),
            "{:?}",
            against.notes
        );
        let mut emulated = run.clone();
        emulated.environment.emulated = Some("qemu-aarch64".into());
        let these = Side {
            label: "this run".into(),
            runs: vec![emulated],
        };
        let (text, failed) = baselines.judged(these, &Terminal::default(), "result");
        assert!(text.contains("not compared"), "{text}");
        assert!(text.contains("measured under an emulator"), "{text}");
        assert!(failed);
    }

    /// A baseline keeps its newest `history` runs: adding past it lets the oldest go and
    /// numbers the new one after the newest; saving more runs than it keeps the last of
    /// them.
    #[test]
    fn a_baseline_keeps_its_last_runs() {
        let root = tempfile::tempdir().unwrap();
        let store = BaselineStore::at(root.path().to_path_buf());
        let numbers = |name: &str| -> Vec<u64> {
            (crate::numbered_runs(&root.path().join(name), ".json")
                .unwrap()
                .into_iter())
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
        assert_eq!(store.run_files("main").unwrap(), kept);

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

    /// A run stopped before its end leaves a baseline as it was, saved or added to. Before:
    /// Ctrl-C 0.3 s into `run --save-baseline ci` left the baseline one incomplete run, the
    /// four it held gone.
    #[test]
    fn a_run_stopped_before_its_end_leaves_the_baseline_as_it_was() {
        let root = tempfile::tempdir().unwrap();
        let store = BaselineStore::at(root.path().to_path_buf());
        let whole = RunRecord {
            complete: true,
            ..record()
        };
        store
            .keep("ci", &[whole.clone(), whole], false, 10)
            .unwrap();
        let before = std::fs::read(root.path().join("ci/run-1.json")).unwrap();
        for (save, add) in [(Some("ci"), None), (None, Some("ci"))] {
            let args = BaselineArgs {
                save_baseline: save.map(String::from),
                add_to_baseline: add.map(String::from),
                ..BaselineArgs::default()
            };
            let store = BaselineStore::at(root.path().to_path_buf());
            let asked = Baselines::asked(
                store,
                &args,
                Presentations::default(),
                NoiseTables::default(),
            );
            let mut unwritten = Unwritten::default();
            asked.unwrap().keep(&[record()], &mut unwritten);
            assert_eq!(store_runs(root.path()), 2, "{save:?} {add:?}");
            let after = std::fs::read(root.path().join("ci/run-1.json")).unwrap();
            assert_eq!(after, before);
        }
    }

    fn store_runs(root: &Path) -> usize {
        BaselineStore::at(root.to_path_buf())
            .load("ci")
            .unwrap()
            .len()
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

    /// A run numbered where the next would wrap, or past where a run may be, is refused by
    /// name, and so is an entry named as a run that is no file; either way before anything
    /// is written or deleted.
    #[test]
    fn a_baseline_no_latlab_wrote_is_refused_before_it_is_touched() {
        let root = tempfile::tempdir().unwrap();
        let store = BaselineStore::at(root.path().to_path_buf());
        store.keep("h", &[record(), record()], false, 10).unwrap();
        let dir = root.path().join("h");
        let run_1 = std::fs::read(dir.join("run-1.json")).unwrap();
        let huge = dir.join("run-18446744073709551615.json");
        std::fs::write(&huge, &run_1).unwrap();
        for add in [true, false] {
            let refused = store.keep("h", &[record()], add, 10).unwrap_err();
            let cause = std::error::Error::source(&refused).unwrap().to_string();
            assert!(cause.contains("run-18446744073709551615.json"), "{cause}");
            assert!(cause.contains("from 1 to 1000000000"), "{cause}");
        }
        assert!(
            store
                .load("h")
                .unwrap_err()
                .contains("run-18446744073709551615")
        );
        std::fs::remove_file(&huge).unwrap();
        std::fs::remove_file(dir.join("run-2.json")).unwrap();
        std::fs::create_dir(dir.join("run-2.json")).unwrap();
        let refused = store.keep("h", &[record()], false, 10).unwrap_err();
        let cause = std::error::Error::source(&refused).unwrap().to_string();
        assert!(cause.contains("h/run-2.json is not a file"), "{cause}");
        assert_eq!(std::fs::read(dir.join("run-1.json")).unwrap(), run_1);
        std::fs::remove_dir(dir.join("run-2.json")).unwrap();
        let last = dir.join(format!("run-{}.json", latlab_doors::rules::MAX_RUN_NUMBER));
        std::fs::write(&last, &run_1).unwrap();
        let refused = store.keep("h", &[record()], true, 10).unwrap_err();
        let cause = std::error::Error::source(&refused).unwrap().to_string();
        assert!(cause.contains("is the last a run may have"), "{cause}");
    }

    /// Two commands adding to one baseline at once each keep their own runs: the store is
    /// held while it numbers and writes them.
    #[test]
    fn commands_adding_to_one_baseline_at_once_each_keep_their_runs() {
        let root = tempfile::tempdir().unwrap();
        let adders: Vec<_> = (0..2)
            .map(|_| {
                let store = BaselineStore::at(root.path().to_path_buf());
                std::thread::spawn(move || {
                    for _ in 0..8 {
                        store.keep("ci", &[record()], true, 100).unwrap();
                    }
                })
            })
            .collect();
        for adder in adders {
            adder.join().unwrap();
        }
        let numbers: Vec<u64> = (crate::numbered_runs(&root.path().join("ci"), ".json"))
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(numbers, (1..=16).collect::<Vec<u64>>());
    }

    /// One baseline saved and added to at once, and a history with nothing kept, are
    /// refused before anything is measured.
    #[test]
    fn baseline_options_that_cannot_mean_anything_together_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let asked = |args: BaselineArgs| {
            Baselines::asked(
                BaselineStore::at(root.path().to_path_buf()),
                &args,
                Presentations::default(),
                NoiseTables::default(),
            )
            .err()
        };
        let twice = asked(BaselineArgs {
            save_baseline: Some("x".into()),
            add_to_baseline: Some("x".into()),
            ..BaselineArgs::default()
        });
        assert!(twice.unwrap().contains("name one baseline"));
        let alone = asked(BaselineArgs {
            baseline_history: Some(3),
            ..BaselineArgs::default()
        });
        assert!(
            alone
                .unwrap()
                .contains("--baseline-history 3: it says how many")
        );
        let both = asked(BaselineArgs {
            save_baseline: Some("x".into()),
            add_to_baseline: Some("y".into()),
            baseline_history: Some(3),
            ..BaselineArgs::default()
        });
        assert_eq!(both, None);
    }
}
