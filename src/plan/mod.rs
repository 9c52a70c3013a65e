//! Turns the parsed arguments into a validated plan: which probes, how much sampling, where
//! each output goes. Everything that can be refused is refused here, before anything is
//! measured or written, so bad input never leaves a partial file behind.

mod reading_plans;
mod selection;

pub use selection::Selection;

pub use reading_plans::{
    ComparePlan, ExportPlan, FleetPlan, HistoryPlan, NoisePlan, ReportPlan, compare, export,
    fleet, history, man, noise, report,
};

use crate::cli::{Budget, RunArgs};
use latlab_engine::locks::DirectoryLock;
use latlab_engine::model::RunRecord;
use latlab_engine::{Host, RealHost, SharedHost, SyntheticHost};
use latlab_front::{
    BaselineStore, Baselines, Controls, ResultFiles, RunOf, RunRequest, Stream, terminal,
};
use latlab_probes::options::Value;
use latlab_probes::{
    DIR_OPTION, MAX_SIZE_OPTION, OptionValues, PAIRS_OPTION, PROBES, ProbeSpec, Suite,
    default_max_size,
};
use latlab_report::JsonExporter;
use latlab_report::runs::{RESULTS_NAME, SUMMARY_NAME};
use latlab_report::stats::NoiseTables;
use latlab_report::summary::SummaryExporter;
use latlab_report::{FileFormat, Offered, OutputTarget};
use std::path::{Path, PathBuf};

/// Bad input: one line saying what was wrong and what to do. Exit status 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A results file that cannot be read is bad input too; its message names the file.
impl From<latlab_report::load::LoadError> for UsageError {
    fn from(error: latlab_report::load::LoadError) -> UsageError {
        UsageError(error.0)
    }
}

/// Where each output goes.
#[derive(Debug)]
pub struct Outputs {
    /// DIR/results.json.
    pub json: OutputTarget,
    /// DIR/summary.json: the run in brief, which a fleet reads in place of the results.
    pub summary: OutputTarget,
    /// The formats named (`--json`, `--csv`, `--markdown`, ...), each with where it goes;
    /// a `--json` naming DIR/results.json itself (or `--summary` DIR/summary.json) is left
    /// out, as it adds nothing.
    pub named: Vec<(&'static FileFormat<RunRecord>, OutputTarget)>,
    /// A directory to create before the first write (the default `--out`).
    pub create_dir: Option<PathBuf>,
    /// The results directory: results.json, summary.json, the page and the plots.
    pub results_dir: PathBuf,
    /// Held until the run ends: a second run into the same results directory is refused.
    pub _directory_lock: DirectoryLock,
}

impl Outputs {
    pub fn all(&self) -> impl Iterator<Item = &OutputTarget> {
        [&self.json, &self.summary]
            .into_iter()
            .chain(self.named.iter().map(|(_, target)| target))
    }

    /// Whether a machine format goes to standard output (the table then goes to stderr).
    pub fn uses_stdout(&self) -> bool {
        self.all().any(|t| *t == OutputTarget::Stdout)
    }
}

/// The plan of a run: what the lifecycle is asked to run (the machine, the sampling, the
/// controls, the results files, the baselines), the probes and their options, where the
/// outputs go, and how many runs (`--runs`).
pub struct RunPlan {
    pub request: RunRequest,
    pub probes: ProbePlan,
    pub outputs: Outputs,
    /// `--runs`: how many runs, each a process of its own; 1 for one run, and for each run a
    /// `--runs` command starts.
    pub runs: usize,
}

/// The probes a run measures, and what they measure with.
pub struct ProbePlan {
    pub specs: Vec<&'static ProbeSpec>,
    /// Which of their results are kept (`--only`/`--skip` by result name).
    pub selection: Selection,
    /// The values of the probes' options, checked against the machine.
    pub options: OptionValues,
    /// What the memory probes find as the run goes, for the probes after them.
    pub findings: std::sync::Arc<latlab_probes::Findings>,
    /// End the terminal output with "Latency numbers for this machine" (the main job does,
    /// as `latlab` and as `latlab run`).
    pub headline: bool,
}

/// Memory a run needs for a largest working set of `size` bytes: the memcpy sweep's source
/// and destination of `size` bytes each (more than a chase ring and its visiting order, one
/// index per line), and `room` beyond.
fn memory_needed(size: u64, room: u64) -> u64 {
    2 * size + room
}

/// The machine to measure: this one, or the synthetic one.
pub fn host(synthetic: bool) -> SharedHost {
    if synthetic {
        std::sync::Arc::new(SyntheticHost::default().with_model(&latlab_probes::synthetic::MODEL))
    } else {
        std::sync::Arc::new(RealHost::default())
    }
}

/// The plan of `latlab run` (and `mem`, and the default command): the probes of `family`
/// (an id prefix) when given.
pub fn run(
    args: &RunArgs,
    family: Option<&str>,
    run_of: Option<RunOf>,
) -> Result<RunPlan, UsageError> {
    let host = host(args.synthetic);
    let sampling = &args.sampling;
    let suite = sampling.suite;
    // The rounds are the plan's, each probe's set as it is measured (the stability check
    // measures in one).
    let config = sampling
        .suite
        .config()
        .overridden(sampling.samples, sampling.target_time);
    config
        .check_sample_fits_budget("--target-time")
        .map_err(UsageError)?;
    if let Some(cpu) = sampling.pin {
        check_cpu(host.as_ref(), cpu)?;
    }
    let selection = Selection::new(args.only.as_deref(), args.skip.as_deref())?;
    let probes = select_probes(family, &selection)?;
    let mut notes = test_hook_notes();
    let probes = probe_plan(args, host.as_ref(), probes, selection, &mut notes)?;
    let budget = budget(args, suite, &mut notes);
    let runs = runs(args, run_of)?;
    let outputs = outputs(args, run_of)?;
    let request = RunRequest {
        suite,
        rounds: sampling.rounds,
        controls: Controls {
            pin: sampling.pin,
            mlock: args.mlock,
            rt: args.rt,
        },
        notes,
        create_dir: outputs.create_dir.clone(),
        baselines: baselines(args, run_of)?,
        terminal: terminal(&args.terminal, Stream::beside(outputs.uses_stdout())),
        budget,
        ..RunRequest::new(host, config, result_files(&outputs))
    };
    let probes = ProbePlan {
        // The main job ends with the headline table, whether started as `latlab` or as
        // `latlab run`; a family's run does not.
        headline: family.is_none(),
        ..probes
    };
    Ok(RunPlan {
        request,
        probes,
        outputs,
        runs,
    })
}

/// The notes of the test hooks set in the environment.
fn test_hook_notes() -> Vec<String> {
    match latlab_engine::environment::claimed_last_cache() {
        Ok(Some(bytes)) => vec![format!(
            "{} is set: the kernel's last-level cache is taken to be {bytes} bytes, whatever \
             sysfs says (a test hook)",
            latlab_engine::environment::CLAIM_LAST_CACHE_VARIABLE
        )],
        Ok(None) => Vec::new(),
        Err(ignored) => vec![ignored],
    }
}

/// The probes `specs` with the options `args` give them, checked against `host`.
fn probe_plan(
    args: &RunArgs,
    host: &dyn Host,
    specs: Vec<&'static ProbeSpec>,
    selection: Selection,
    notes: &mut Vec<String>,
) -> Result<ProbePlan, UsageError> {
    let mut options = args.probe_options.values.clone();
    let asked = options.bytes(&MAX_SIZE_OPTION);
    if let Some(bytes) = max_size(host, asked, &specs, notes)? {
        options.set(&MAX_SIZE_OPTION, Value::Bytes(bytes));
    }
    if let Some(pairs) = options.count(&PAIRS_OPTION) {
        check_pairs(host, pairs)?;
    }
    if let Some(dir) = options.path(&DIR_OPTION) {
        check_dir(dir)?;
    }
    Ok(ProbePlan {
        options,
        findings: Default::default(),
        headline: false,
        specs,
        selection,
    })
}

/// The results files of a run written to `outputs`: `DIR/results.json`, its summary
/// `DIR/summary.json`, and the copies and other formats asked for.
fn result_files(outputs: &Outputs) -> ResultFiles {
    let mut files = ResultFiles::default();
    let declared = latlab_probes::presentations();
    files.add(outputs.json.clone(), JsonExporter);
    files.add_beside(
        outputs.summary.clone(),
        SummaryExporter {
            declared: declared.clone(),
        },
    );
    for (format, target) in &outputs.named {
        files.add(target.clone(), (format.exporter)(&declared));
    }
    files
}

/// The time the run may take: `--budget`, else the suite's default (none for a synthetic
/// run), with a note where `--budget` changed it.
fn budget(args: &RunArgs, suite: Suite, notes: &mut Vec<String>) -> Option<std::time::Duration> {
    // A synthetic run takes no budget unless asked: its made-up figures must be the same
    // on any machine, however fast or loaded, and a budget shares samples by real time.
    let budget = match args.budget {
        None if args.synthetic => None,
        None => Some(suite.default_budget()),
        Some(Budget::Limited(time)) => Some(time),
        Some(Budget::Unlimited) => None,
    };
    if args.budget.is_some() {
        let seconds = |time: std::time::Duration| format!("{:.0} s", time.as_secs_f64());
        notes.push(match budget {
            Some(time) => format!(
                "--budget: the run was given {} (the {} suite's default is {})",
                seconds(time),
                suite.name(),
                seconds(suite.default_budget())
            ),
            None => "--budget none: every probe took all it would, however long".to_string(),
        });
    }
    budget
}

/// What the run does with baselines, in the results directory's `baselines/`: compare
/// with one (and gate on it), keep the run as one, add it to one. A run started by a
/// `--runs` command does none of these: the command compares and keeps its runs together.
fn baselines(args: &RunArgs, run_of: Option<RunOf>) -> Result<Baselines, UsageError> {
    args.baselines.check().map_err(UsageError)?;
    if run_of.is_some() {
        return Ok(Baselines::none());
    }
    let results_dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_RESULTS_DIR));
    let store = BaselineStore::at(results_dir.join("baselines"));
    Baselines::asked(
        store,
        &args.baselines,
        latlab_probes::presentations(),
        NoiseTables::shipped(),
    )
    .map_err(UsageError)
}

/// The directory a run writes into: `--out` (or `latlab-results`), and in it `run-K` for
/// run K of a `--runs` command.
fn results_dir(args: &RunArgs, run_of: Option<RunOf>) -> PathBuf {
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_RESULTS_DIR));
    match run_of {
        Some(of) => dir.join(of.name()),
        None => dir,
    }
}

/// The runs of a `--runs` command (1 for a plain run, and for each run it starts): refused
/// with outputs every run would write over (`--json FILE`, `--csv`, `--markdown`), and
/// where the results directory holds `run-K` beyond `run-N` from an earlier command, which
/// `latlab compare DIR` would count as runs of this side.
fn runs(args: &RunArgs, run_of: Option<RunOf>) -> Result<usize, UsageError> {
    let runs = args.sampling.runs;
    if runs == 1 || run_of.is_some() {
        return Ok(1);
    }
    latlab_front::check_outputs_for_runs(
        runs,
        &args.tables.by_flag(),
        &format!("each run's results.json is in its own directory (run-1 ... run-{runs})"),
    )
    .map_err(UsageError)?;
    // Runs of an earlier command of more runs, which `latlab compare DIR` would count.
    let dir = results_dir(args, run_of);
    let numbered = latlab_front::numbered_runs(&dir, "").map_err(UsageError)?;
    let others: Vec<String> = (numbered.into_iter())
        .filter(|(k, path)| *k > runs as u64 && path.join(RESULTS_NAME).exists())
        .filter_map(|(_, path)| Some(path.file_name()?.to_string_lossy().into_owned()))
        .collect();
    if !others.is_empty() {
        return Err(UsageError(format!(
            "--out {} holds runs of an earlier command ({}), which `latlab compare {}` would \
             count among these {runs}: remove them, or give --runs a directory of its own",
            dir.display(),
            others.join(", "),
            dir.display()
        )));
    }
    // Each run makes its directory `run-K`: something else of that name would stop the
    // command at that run, after the runs before it had been measured.
    for run in 1..=runs {
        let run_dir = dir.join(latlab_front::RunOf { run, runs }.name());
        if let Ok(metadata) = std::fs::symlink_metadata(&run_dir)
            && !metadata.is_dir()
        {
            return Err(UsageError(format!(
                "{}: not a directory, where run {run} of --runs {runs} would write its \
                 results; move it away, or give --runs a directory of its own with --out",
                run_dir.display()
            )));
        }
    }
    Ok(runs)
}

/// What a run needs beyond its working sets, measured: the process, its tables, the page
/// and plots of a one-probe run and the stability check at its smallest (a 1 MiB chase)
/// peaked at 19 MB (`/usr/bin/time -v`, `latlab run --only clock.read`); with room to spare.
const RUN_BASE_BYTES: u64 = 24 << 20;
/// What a run of the memory probes needs beyond its working sets: the main job's page and
/// plots of every sweep.
const MEMORY_RUN_ROOM: u64 = 64 << 20;
/// The smallest working set the memory probes and the stability check are cut to.
const MIN_WORKING_SET: u64 = 1 << 20;
/// Where the memory available comes from, as the messages say it.
const AVAILABLE_FROM: &str = "free memory, what the memory cgroup still allows, or what \
                              `ulimit -v` still allows, whichever is least";

/// The largest working set: as asked when it fits in the memory available now (refused
/// otherwise), else the default, clamped with a note when it does not fit. The default is
/// the memory probes' (4 × the last-level cache), or, for a run without them, the stability
/// check's main-memory chase (2 × the last-level cache), which every run maps. A run that
/// cannot have even the smallest is refused before measuring, where the OOM killer used to
/// end it with status 137 and no word.
fn max_size(
    host: &dyn Host,
    asked: Option<u64>,
    probes: &[&ProbeSpec],
    notes: &mut Vec<String>,
) -> Result<Option<u64>, UsageError> {
    let available = host.available_memory_bytes();
    let size = |bytes: u64| latlab_engine::units::format_bytes(bytes as f64);
    if let Some(available) = available
        && available < RUN_BASE_BYTES + 2 * MIN_WORKING_SET
    {
        return Err(UsageError(format!(
            "this run needs about {} of memory (the process, its page and plots, and a {} \
             stability check), but {} is available now ({AVAILABLE_FROM}); raise the limit",
            size(RUN_BASE_BYTES + 2 * MIN_WORKING_SET),
            size(MIN_WORKING_SET),
            size(available)
        )));
    }
    let memory_probes = probes.iter().any(|p| p.id.starts_with("mem."));
    let room = if memory_probes {
        MEMORY_RUN_ROOM
    } else {
        RUN_BASE_BYTES
    };
    let fits = |bytes: u64| available.is_none_or(|a| memory_needed(bytes, room) <= a);
    match asked {
        // A size asked for is held to what a run needs at least; the default below keeps
        // more room for the page of every sweep.
        Some(asked) if available.is_none_or(|a| memory_needed(asked, RUN_BASE_BYTES) <= a) => {
            Ok(Some(asked))
        }
        Some(asked) => {
            let available = available.unwrap_or(0);
            Err(UsageError(format!(
                "--max-size {} needs about {} of memory but {} is available now \
                 ({AVAILABLE_FROM}); choose at most {}",
                size(asked),
                size(memory_needed(asked, RUN_BASE_BYTES)),
                size(available),
                size(largest_fitting(available, RUN_BASE_BYTES))
            )))
        }
        None => {
            let caches = host.caches();
            let (default, what, who) = if memory_probes {
                (
                    default_max_size(&caches),
                    "the default largest working set",
                    "the memory probes stop",
                )
            } else {
                (
                    latlab_probes::stability::memory_chase_default(&caches),
                    "the stability check's main-memory chase",
                    "the stability check's chases stop",
                )
            };
            if fits(default) {
                return Ok(None);
            }
            let clamped = largest_fitting(available.unwrap_or(0), room);
            notes.push(format!(
                "{what} ({}) does not fit in the memory available ({AVAILABLE_FROM}: {}); \
                 {who} at {}",
                size(default),
                size(available.unwrap_or(0)),
                size(clamped)
            ));
            Ok(Some(clamped))
        }
    }
}

/// The largest working set whose `memory_needed` fits in `available`.
fn largest_fitting(available: u64, room: u64) -> u64 {
    ((available.saturating_sub(room) / 2) & !(MIN_WORKING_SET - 1)).max(MIN_WORKING_SET)
}

fn select_probes(
    family: Option<&str>,
    selection: &Selection,
) -> Result<Vec<&'static ProbeSpec>, UsageError> {
    let selected: Vec<&'static ProbeSpec> = PROBES
        .iter()
        .filter(|probe| family.is_none_or(|prefix| probe.id.starts_with(prefix)))
        .filter(|probe| selection.runs(probe))
        .collect();
    if selected.is_empty() {
        let what = match (selection.only(), selection.skip()) {
            (Some(only), None) if only.contains('/') => {
                format!("--only '{only}' matches no result name")
            }
            (Some(only), None) => format!("--only '{only}' matches no probe id"),
            (None, Some(skip)) => format!("--skip '{skip}' leaves no probe"),
            (Some(only), Some(skip)) => {
                format!("--only '{only}' with --skip '{skip}' leaves no probe")
            }
            (None, None) => "there are no probes".to_string(),
        };
        return Err(UsageError(format!(
            "{what}; `latlab list` shows the probe ids and their results"
        )));
    }
    Ok(selected)
}

fn check_cpu(host: &dyn Host, cpu: usize) -> Result<(), UsageError> {
    latlab_front::check_pin(host, cpu).map_err(UsageError)
}

/// The file probes' --dir: an existing directory this process can write in.
fn check_dir(dir: &Path) -> Result<(), UsageError> {
    let shown = dir.display();
    let metadata = std::fs::metadata(dir).map_err(|e| {
        UsageError(format!(
            "--dir {shown}: {e}; give an existing directory on the file system to measure"
        ))
    })?;
    if !metadata.is_dir() {
        return Err(UsageError(format!(
            "--dir {shown}: not a directory; give a directory on the file system to measure"
        )));
    }
    // The surest test of writability is to do it: an unnamed file, which a kill cannot
    // leave behind (the probes' own workspace is made later, with its owner's name).
    latlab_front::check_writable(dir, &format!("--dir {shown}")).map_err(UsageError)
}

/// At most one IPC latency pair per online CPU.
fn check_pairs(host: &dyn Host, pairs: usize) -> Result<(), UsageError> {
    let cpus = host
        .online_cpus()
        .len()
        .max(host.allowed_cpus().len())
        .max(1);
    if pairs <= cpus {
        Ok(())
    } else {
        Err(UsageError(format!(
            "--pairs {pairs} is more than the {cpus} CPUs of this machine; use at most {cpus}"
        )))
    }
}

/// The results directory when neither --out nor --json says otherwise.
const DEFAULT_RESULTS_DIR: &str = "latlab-results";

fn outputs(args: &RunArgs, run_of: Option<RunOf>) -> Result<Outputs, UsageError> {
    let results_dir = results_dir(args, run_of);
    check_out_dir(&results_dir)?;
    let directory_lock = DirectoryLock::take(&results_dir).map_err(|why| {
        UsageError(format!(
            "--out {}: {why}; wait for it to finish, or choose another --out",
            results_dir.display()
        ))
    })?;
    let create_dir = (!results_dir.exists()).then(|| results_dir.clone());
    let json = OutputTarget::Replaced(results_dir.join(RESULTS_NAME));
    let summary = OutputTarget::Replaced(results_dir.join(SUMMARY_NAME));
    let checked = (args.tables.checked(create_dir.as_deref())).map_err(UsageError)?;
    // --json naming DIR/results.json itself adds nothing, nor --summary DIR/summary.json.
    let written_anyway = |format: &FileFormat<RunRecord>| match format.name {
        "json" => json.path(),
        "summary" => summary.path(),
        _ => None,
    };
    let named: Vec<(&'static FileFormat<RunRecord>, OutputTarget)> = (checked.into_iter())
        .filter(|(format, target)| match (target, written_anyway(format)) {
            (OutputTarget::File(copy), Some(main)) => !latlab_front::same_file(copy, main),
            _ => true,
        })
        .collect();
    // Any other option naming a file the run writes anyway would write over it.
    let written: Vec<&Path> = [json.path(), summary.path()]
        .into_iter()
        .flatten()
        .collect();
    for path in named.iter().filter_map(|(_, target)| target.path()) {
        if written
            .iter()
            .any(|main| latlab_front::same_file(main, path))
        {
            return Err(UsageError(format!(
                "{} is named by two outputs; give each of {} its own file",
                path.display(),
                RunRecord::flags_listed()
            )));
        }
    }
    Ok(Outputs {
        json,
        summary,
        named,
        create_dir,
        results_dir,
        _directory_lock: directory_lock,
    })
}

/// The directory `flag` names must be the user's own ([`latlab_front::check_own_directory`]).
fn check_own(flag: &str, dir: &Path) -> Result<(), UsageError> {
    latlab_front::check_own_directory(dir, true).map_err(|why| {
        UsageError(format!(
            "{flag} {}: {why}; latlab writes only into its own directories: choose another \
             {flag}",
            dir.display()
        ))
    })
}

/// The results directory must exist, belong to the user running latlab and be writable, or
/// be creatable in an existing parent. A directory of another user's is refused, root's
/// runs included: its owner could have planted links or FIFOs where latlab writes.
fn check_out_dir(dir: &Path) -> Result<(), UsageError> {
    if dir.exists() && !dir.is_dir() {
        return Err(UsageError(format!(
            "--out {}: exists and is not a directory; name a directory",
            dir.display()
        )));
    }
    check_own("--out", dir)?;
    let context = format!("--out {}", dir.display());
    if dir.is_dir() {
        return latlab_front::check_writable(dir, &context).map_err(UsageError);
    }
    latlab_front::existing_writable(
        &context,
        "the parent directory",
        latlab_front::parent_or_current(dir),
    )
    .map_err(UsageError)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn select(
        family: Option<&str>,
        only: Option<&str>,
        skip: Option<&str>,
    ) -> Result<Vec<&'static ProbeSpec>, String> {
        let selection = Selection::new(only, skip).map_err(|e| e.0)?;
        select_probes(family, &selection).map_err(|e| e.0)
    }

    #[test]
    fn patterns_select_by_id() {
        let clock = select(None, Some("^clock\\."), None).unwrap();
        assert!(!clock.is_empty() && clock.iter().all(|p| p.id.starts_with("clock.")));
        let rest = select(None, None, Some("clock")).unwrap();
        assert!(rest.iter().all(|p| !p.id.contains("clock")));
        assert_eq!(clock.len() + rest.len(), PROBES.len());
    }

    #[test]
    fn a_family_narrows_the_selection() {
        let memory = select(Some("mem."), None, None).unwrap();
        assert!(memory.iter().all(|p| p.id.starts_with("mem.")));
        let latency = select(Some("mem."), Some("latency"), None).unwrap();
        assert_eq!(latency.len(), 1);
        assert!(select(Some("mem."), Some("^cpu"), None).is_err());
    }

    #[test]
    fn the_largest_fitting_size_fits() {
        for available in [100 << 20, 1 << 30, 24 << 30] {
            for room in [RUN_BASE_BYTES, MEMORY_RUN_ROOM] {
                assert!(memory_needed(largest_fitting(available, room), room) <= available);
            }
        }
        // Never below the smallest working set, which a run that cannot have is refused.
        assert_eq!(largest_fitting(30 << 20, MEMORY_RUN_ROOM), MIN_WORKING_SET);
    }

    #[test]
    fn unknown_and_invalid_patterns_are_refused_in_one_line() {
        let unknown = select(None, Some("no-such-probe"), None).unwrap_err();
        assert!(unknown.contains("matches no probe") && unknown.contains("latlab list"));
        let invalid = select(None, Some("clock("), None).unwrap_err();
        assert!(
            invalid.contains("not a valid regular expression"),
            "{invalid}"
        );
        assert!(!invalid.contains('\n'), "{invalid}");
    }
}
