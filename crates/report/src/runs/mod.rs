//! The runs layer: how every command that reads runs finds them, reads them and names what it
//! passed over. A walk of a directory goes through the doors' one walk
//! ([`latlab_doors::tree`]), bounded in depth and entries, links never followed; every file it
//! found or passed over is claimed as an input that no output may replace. Each file is read
//! once, in parallel, into what the reader keeps of a run (`RunShape`: the fleet's headline
//! figures, the history's every result). A compact summary ([`crate::summary`]) is read where
//! there is one: a `results.json` with a `summary.json` beside it is passed over for the
//! summary, and any `*.json` that begins as a summary is read as one. A full results file is
//! read without its samples ([`crate::load::figures_of`]).
//!
//! The summary stands for the results file beside it only while it can: where it cannot be
//! read (damaged, truncated, edited apart from its own results) or describes an earlier run
//! than a results file written after it, the results file is read instead, and the reader
//! says so. The files being read at once hold at most `BYTES_IN_FLIGHT` between them, and
//! a summary larger than `MAX_SUMMARY_BYTES` is refused before it is read. Copies of one
//! run are counted once ([`crate::copies`]).

pub mod admit;

use crate::load::{LoadError, RunFile, figures_of};
use crate::summary::{RunSummary, check_headline, is_summary, parse_summary};
use latlab_doors::tree::{Found, Limits, PassedOver};
use latlab_engine::model::RunRecord;
use latlab_engine::presentation::Presentations;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};

/// The deepest directory level searched below a directory of runs.
pub(crate) const MAX_DEPTH: usize = 8;
/// The most entries a walk looks at below one directory: a host run hourly for five years
/// keeps some 44,000 runs of a few files each.
const MAX_ENTRIES: usize = 1 << 20;
/// The most bytes of files the readers hold at once: one results file of the largest
/// size ([`crate::load::MAX_FILE_BYTES`]), or many small ones.
const BYTES_IN_FLIGHT: u64 = crate::load::MAX_FILE_BYTES;
/// The largest summary read: a summary is a few percent of its results file (the full
/// suite's is a few hundred KiB), so one this large is not one latlab wrote.
const MAX_SUMMARY_BYTES: u64 = 64 << 20;
/// How much later than its summary a results file must have been written for the summary to
/// be suspected of describing an earlier run: a copy that does not keep the times writes the
/// two within a moment of each other.
const STALE_AFTER_S: i64 = 1;

/// What a reader keeps of one run, built from a summary or from a full results file read
/// without its samples: the fleet's headline figures ([`Extract`]), or a history's every
/// result ([`crate::history`]).
pub(crate) trait RunShape: Sized + Send {
    fn of_summary(path: &Path, summary: RunSummary<'_>) -> Self;
    fn of_run(path: &Path, run: &RunRecord, schema: u64, declared: &Presentations) -> Self;
    /// When the run started, as the file has it: a summary stands for the results file
    /// beside it only if the two are of one run.
    fn started_at(&self) -> &str;
    /// Why the results file was read in place of the summary beside it.
    fn read_instead(&mut self, why: String);
}

/// The name of the full results file a run directory holds, and of its summary.
pub const RESULTS_NAME: &str = "results.json";
pub const SUMMARY_NAME: &str = "summary.json";

/// What a walk of the runs' directory found (the doors' one walk, [`latlab_doors::tree`]):
/// the `*.json` files (sorted), how many other files, and what it passed over, each with its
/// path.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    /// The files to read, sorted.
    pub(crate) found: Vec<Found>,
    pub(crate) ignored: usize,
    /// `results.json` files passed over for the `summary.json` beside them.
    pub(crate) summarised: usize,
    /// Each such `summary.json`'s `results.json`: read where the summary cannot stand for it.
    pub(crate) beside: HashMap<PathBuf, Found>,
    /// Links (a link back up the tree would be walked for ever), directories deeper than
    /// [`MAX_DEPTH`], `*.json` entries that are not regular files (never opened: a FIFO would
    /// block the read), directories that could not be listed, entries past [`MAX_ENTRIES`].
    passed_over: PassedOver,
}

impl Walk {
    /// A walk of these of its files alone, each read as it is (the files an earlier read
    /// kept).
    pub(crate) fn of_files(&self, paths: &std::collections::HashSet<&Path>) -> Walk {
        let mut found: Vec<Found> = (self.found.iter().chain(self.beside.values()))
            .filter(|f| paths.contains(f.path.as_path()))
            .cloned()
            .collect();
        found.sort_by(|a, b| a.path.cmp(&b.path));
        Walk {
            found,
            ..Walk::default()
        }
    }

    /// This walk and `other` as one (the walks of several directories), its files sorted.
    pub(crate) fn absorb(&mut self, other: Walk) {
        self.found.extend(other.found);
        self.found.sort_by(|a, b| a.path.cmp(&b.path));
        self.ignored += other.ignored;
        self.summarised += other.summarised;
        self.beside.extend(other.beside);
        self.passed_over.absorb(other.passed_over);
    }

    /// A note for each kind of thing passed over, naming the first few.
    pub(crate) fn notes(&self) -> Vec<String> {
        let names = |paths: &[PathBuf]| crate::copies::first_few(paths);
        let mut notes = Vec::new();
        let passed = &self.passed_over;
        if !passed.links.is_empty() {
            notes.push(format!(
                "{} not followed (copy the file in instead): {}",
                count(passed.links.len(), "link was", "links were"),
                names(&passed.links)
            ));
        }
        if !passed.not_regular.is_empty() {
            notes.push(format!(
                "{} ending in .json but not regular (a FIFO, a socket or a device) {} left \
                 alone: {}",
                count(passed.not_regular.len(), "file", "files"),
                if passed.not_regular.len() == 1 {
                    "was"
                } else {
                    "were"
                },
                names(&passed.not_regular)
            ));
        }
        if !passed.too_deep.is_empty() {
            notes.push(format!(
                "{} deeper than {MAX_DEPTH} levels not read: {}",
                count(passed.too_deep.len(), "directory", "directories"),
                names(&passed.too_deep)
            ));
        }
        if self.summarised > 0 {
            notes.push(format!(
                "{} passed over for the {SUMMARY_NAME} beside {}",
                count(
                    self.summarised,
                    "results.json was",
                    "results.json files were"
                ),
                if self.summarised == 1 { "it" } else { "them" }
            ));
        }
        if passed.past_count > 0 {
            notes.push(format!(
                "{} past the first {MAX_ENTRIES} not looked at: give a directory of fewer runs",
                count(passed.past_count, "entry", "entries"),
            ));
        }
        for (path, why) in &passed.unreadable {
            notes.push(format!("{}: not read ({why})", path.display()));
        }
        notes
    }
}

/// The walk of `dir` for its `*.json` files, at most [`MAX_DEPTH`] levels and
/// [`MAX_ENTRIES`] entries deep, each `results.json` with a summary beside it passed over.
pub(crate) fn json_files(dir: &Path) -> Walk {
    let limits = Limits {
        depth: MAX_DEPTH,
        entries: MAX_ENTRIES,
    };
    let json = |name: &std::ffi::OsStr| Path::new(name).extension().is_some_and(|e| e == "json");
    let tree = latlab_doors::tree::walk(dir, limits, json);
    tree.claim();
    let mut walk = Walk {
        found: tree.found,
        ignored: tree.ignored,
        passed_over: tree.passed_over,
        ..Walk::default()
    };
    walk.pass_over_summarised();
    walk
}

/// Reads every file, on as many threads as there are CPUs, with at most [`BYTES_IN_FLIGHT`]
/// bytes of files held at once.
pub(crate) fn read_all<T: RunShape>(
    walk: &Walk,
    declared: &Presentations,
) -> Vec<Result<T, LoadError>> {
    let in_flight = InFlight::default();
    crate::parallel::map_in_order(&walk.found, "latlab-fleet-reader", |found| {
        let beside = walk.beside.get(&found.path);
        let size = (std::iter::once(found).chain(beside)).map(|f| f.size).sum();
        let held = in_flight.hold(size);
        let outcome = extract(found, beside, declared);
        in_flight.release(held);
        outcome
    })
}

/// The bytes the readers hold between them, waited on where the next file would pass
/// [`BYTES_IN_FLIGHT`] (a file larger than that alone is read while nothing else is).
#[derive(Default)]
struct InFlight {
    bytes: Mutex<u64>,
    released: Condvar,
}

impl InFlight {
    /// Waits until `size` more bytes fit, and holds them; returns what it holds.
    fn hold(&self, size: u64) -> u64 {
        let mut bytes = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        while *bytes > 0 && *bytes + size > BYTES_IN_FLIGHT {
            bytes = (self.released.wait(bytes)).unwrap_or_else(|e| e.into_inner());
        }
        *bytes += size;
        size
    }

    fn release(&self, held: u64) {
        let mut bytes = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        *bytes -= held;
        self.released.notify_all();
    }
}

/// Reads one run: the file `found`, or, for a summary with its results file `beside` it,
/// the summary where it stands for that file and the results file where it does not.
fn extract<T: RunShape>(
    found: &Found,
    beside: Option<&Found>,
    declared: &Presentations,
) -> Result<T, LoadError> {
    let Some(results) = beside else {
        return extract_file(found, declared);
    };
    let summary: T = match extract_file(found, declared) {
        Ok(summary) => summary,
        Err(why) => {
            let mut read: T = extract_file(results, declared)
                .map_err(|e| LoadError(format!("{}; and {}", why.0, e.0)))?;
            read.read_instead(why.0);
            return Ok(read);
        }
    };
    if results.modified_s - found.modified_s <= STALE_AFTER_S {
        return Ok(summary);
    }
    match extract_file::<T>(results, declared) {
        Ok(mut read) if read.started_at() != summary.started_at() => {
            let why = format!(
                "{}: of the run started {}, but {} beside it, written later, is of the run \
                 started {}",
                found.path.display(),
                summary.started_at(),
                RESULTS_NAME,
                read.started_at()
            );
            read.read_instead(why);
            Ok(read)
        }
        _ => Ok(summary),
    }
}

/// Reads one file and keeps what the fleet needs of it: a summary as it is, a full results
/// file without its samples.
fn extract_file<T: RunShape>(found: &Found, declared: &Presentations) -> Result<T, LoadError> {
    let path = found.path.as_path();
    let shown = path.display();
    let failed = |why: String| LoadError(format!("{shown}: {why}"));
    if found.size > MAX_SUMMARY_BYTES && begins_as_summary(found) {
        return Err(failed(format!(
            "a summary of {} MiB, more than the {} MiB a summary latlab writes can be; \
             read the results.json it was made from",
            found.size >> 20,
            MAX_SUMMARY_BYTES >> 20
        )));
    }
    let bytes = crate::load::read_found(found).map_err(failed)?;
    if is_summary(&bytes) {
        let summary = parse_summary(&bytes).map_err(failed)?;
        check_headline(&summary, declared).map_err(failed)?;
        return Ok(T::of_summary(path, summary));
    }
    let (run, schema) = figures_of(&bytes).map_err(failed)?;
    Ok(T::of_run(path, &run, schema, declared))
}

/// Whether `found` begins as a summary, read from its first bytes alone.
fn begins_as_summary(found: &Found) -> bool {
    found.head(256).is_ok_and(|head| is_summary(&head))
}

impl Walk {
    /// Leaves out each `results.json` that has a `summary.json` beside it: the summary says
    /// what the fleet needs of the run in a few percent of the bytes.
    fn pass_over_summarised(&mut self) {
        let summaries: std::collections::HashSet<PathBuf> = (self.found.iter())
            .map(|found| found.path.as_path())
            .filter(|path| path.file_name().is_some_and(|name| name == SUMMARY_NAME))
            .filter_map(|path| Some(path.parent()?.to_path_buf()))
            .collect();
        let before = self.found.len();
        let mut beside = HashMap::new();
        self.found.retain(|found| {
            let path = &found.path;
            let summarised = path.file_name().is_some_and(|name| name == RESULTS_NAME)
                && path.parent().is_some_and(|dir| summaries.contains(dir));
            if summarised {
                beside.insert(path.with_file_name(SUMMARY_NAME), found.clone());
            }
            !summarised
        });
        self.summarised = before - self.found.len();
        self.beside = beside;
    }
}

/// The results files of one side of a comparison: the file named, or, for a directory,
/// the runs in it: each `*.json` directly in it and each `*/results.json` one level down
/// (runs written with `--out DIR/1`, `--out DIR/2` …), in name order. A directory that
/// `--runs` wrote into is its runs alone (`run-K/results.json`): the results directory of
/// a single run before them, its own `results.json`, is not one of them: `numbered` says
/// which directory names are those runs'. `Err` is why, one line.
pub fn side_files(path: &Path, numbered: impl Fn(&str) -> bool) -> Result<Vec<RunFile>, String> {
    if !path.is_dir() {
        return Ok(vec![RunFile::Named(path.to_path_buf())]);
    }
    let limits = latlab_doors::tree::Limits {
        depth: 1,
        entries: 1 << 20,
    };
    let json = |name: &std::ffi::OsStr| Path::new(name).extension().is_some_and(|e| e == "json");
    let tree = latlab_doors::tree::walk(path, limits, json);
    tree.claim();
    // A run directory that cannot be listed, or a link, is an error, as an unreadable file
    // is: passed over, the side would count one run fewer unsaid.
    if let Some((dir, why)) = tree.passed_over.unreadable.first() {
        return Err(format!(
            "{}: cannot read it ({why}); make it readable, or move it out of {}",
            dir.display(),
            path.display()
        ));
    }
    if let Some(link) = tree.passed_over.links.first() {
        return Err(format!(
            "{}: a symbolic link, which latlab does not follow inside a directory of runs; \
             give it as a side of its own, or copy the run in",
            link.display()
        ));
    }
    let depth = |file: &Path| {
        file.strip_prefix(path)
            .map_or(0, |p| p.components().count())
    };
    let found: Vec<&Path> = tree.found.iter().map(|f| f.path.as_path()).collect();
    let mut files: Vec<RunFile> = (tree.found.iter())
        .filter(|file| match depth(&file.path) {
            1 => !is_summary_beside(&file.path, &found),
            2 => file.path.ends_with(RESULTS_NAME),
            _ => false,
        })
        .map(|file| RunFile::Found(file.clone()))
        .collect();
    if files.is_empty() {
        return Err(format!(
            "{}: no runs in it (neither *.json nor */results.json); give results files, or \
             a directory holding the runs of one side",
            path.display()
        ));
    }
    let is_numbered_run = |file: &Path| {
        let directory = file
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str());
        directory.is_some_and(&numbered) && file.ends_with(RESULTS_NAME)
    };
    if files.iter().any(|file| is_numbered_run(file.path())) {
        files.retain(|file| is_numbered_run(file.path()));
    }
    files.sort_by(|a, b| a.path().cmp(b.path()));
    Ok(files)
}

/// Whether `file` is the `summary.json` a run wrote beside its `results.json`: the same run
/// in brief, not another run.
fn is_summary_beside(file: &Path, found: &[&Path]) -> bool {
    file.file_name().is_some_and(|name| name == SUMMARY_NAME)
        && found.contains(&file.with_file_name(RESULTS_NAME).as_path())
}

/// `1 file`, `3 files`.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Every file the walk passes over is named in a note with why: a link, a directory too
    /// deep; files not ending in .json are counted.
    #[test]
    fn the_walk_notes_every_file_it_passes_over() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.json"), "{}").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "").unwrap();
        std::os::unix::fs::symlink(dir.path().join("a.json"), dir.path().join("b.json")).unwrap();
        let mut deep = dir.path().to_path_buf();
        for level in 0..=MAX_DEPTH {
            deep = deep.join(format!("d{level}"));
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("deep.json"), "{}").unwrap();
        let walk = json_files(dir.path());
        let found: Vec<&Path> = walk.found.iter().map(|f| f.path.as_path()).collect();
        assert_eq!(found, [dir.path().join("a.json")]);
        assert_eq!(walk.ignored, 1);
        let notes = walk.notes().join("\n");
        assert!(notes.contains("1 link was not followed"), "{notes}");
        assert!(notes.contains("b.json"), "{notes}");
        assert!(
            notes.contains("1 directory deeper than 8 levels not read"),
            "{notes}"
        );
        assert!(notes.contains("/d8"), "{notes}");
    }
}
