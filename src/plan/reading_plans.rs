//! The plans of the subcommands that read results files: `latlab report`, `compare`,
//! `fleet` and `export` (executed by `reading_commands.rs` beside `main.rs`). Every file is loaded
//! and every output checked here, so that a bad file or path is one line and status 2
//! before anything is written.

use super::UsageError;
use crate::cli::{
    CompareArgs, ExportArgs, FleetArgs, HistoryArgs, ManArgs, NoiseArgs, ReportArgs,
};
use latlab_doors::Reached;
use latlab_engine::model::RunRecord;
use latlab_front::{Stream, TerminalArgs};
use latlab_report::stats::{NoiseMachine, NoiseTable};
use latlab_report::compare::{Compared, Excused, Side};
use latlab_report::runs::admit;
use latlab_report::load::RunFile;
use latlab_report::fleet::{Fleet, FleetReport};
use latlab_report::history::{History, HistoryOptions};
use latlab_report::load::load_run;
use latlab_report::terminal::Terminal;
use latlab_report::{FileFormat, Offered, OutputTarget, is_same_file};
use std::path::{Path, PathBuf};

/// `latlab man --dir DIR`: the directory must exist (the pages are written into it) and be
/// the user's own: whoever owns it could have linked a page's name to another file.
pub fn man(args: &ManArgs) -> Result<(), UsageError> {
    let Some(dir) = &args.dir else {
        return Ok(());
    };
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "--dir {}: not a directory; create it first, or leave --dir out to print latlab.1",
            dir.display()
        )));
    }
    super::check_own("--dir", dir)
}

/// `latlab report`: the run to render and where the page goes.
pub struct ReportPlan {
    pub run: RunRecord,
    /// `--out FILE` as named, or `report.html` beside the results file (always replaced).
    pub out: OutputTarget,
}

pub fn report(args: &ReportArgs) -> Result<ReportPlan, UsageError> {
    if args
        .out
        .as_ref()
        .is_some_and(|out| out.as_os_str().is_empty())
    {
        return Err(UsageError(
            "--out '': an empty path; give the page's file name, such as report.html".into(),
        ));
    }
    let run = load_run(&args.file, Reached::Named)?;
    let out = args.out.clone().unwrap_or_else(|| {
        args.file
            .parent()
            .unwrap_or(Path::new("."))
            .join("report.html")
    });
    if is_same_file(&out, &args.file) {
        return Err(UsageError(format!(
            "--out {}: that is the results file being read, and the page would replace it; \
             choose another name, such as report.html",
            out.display()
        )));
    }
    if out
        .parent()
        .is_some_and(|p| !p.as_os_str().is_empty() && !p.is_dir())
    {
        return Err(UsageError(format!(
            "--out {}: its directory does not exist; create it or choose another",
            out.display()
        )));
    }
    if let Some(named) = &args.out {
        latlab_front::check_output_file(named).map_err(|why| UsageError(format!("--out {why}")))?;
    }
    let out = match &args.out {
        Some(named) => OutputTarget::named(named.clone()),
        None => OutputTarget::Replaced(out),
    };
    Ok(ReportPlan { run, out })
}

/// `latlab fleet`: the fleet read, and where its outputs go.
pub struct FleetPlan {
    /// The fleet, and the directory as given.
    pub report: FleetReport,
    /// The formats named (`--html`, `--openmetrics`, ...), each with where it goes.
    pub outputs: Vec<(&'static FileFormat<FleetReport>, OutputTarget)>,
    /// How the text is coloured.
    pub terminal: Terminal,
}

impl FleetPlan {
    /// Whether an output takes standard output (the text then goes to standard error).
    pub fn uses_stdout(&self) -> bool {
        self.outputs.iter().any(|(_, t)| *t == OutputTarget::Stdout)
    }
}

/// Checks the outputs' paths before reading the fleet, then reads it.
pub fn fleet(args: &FleetArgs) -> Result<FleetPlan, UsageError> {
    let outputs = args.outputs.by_flag();
    let checked = args.outputs.checked(None).map_err(UsageError)?;
    let recent_runs = usize::try_from(args.last).unwrap_or(usize::MAX);
    let fleet = Fleet::load(&args.dir, &latlab_probes::presentations(), recent_runs)?;
    let read: Vec<(&str, &PathBuf)> = (fleet.hosts.iter())
        .map(|h| (h.label.as_str(), &h.path))
        .chain(fleet.copies.iter().map(|path| ("a copy", path)))
        .collect();
    for (flag, text) in &outputs {
        let Some(output) = text.as_deref().filter(|t| *t != "-") else {
            continue;
        };
        if let Some((host, _)) = read
            .iter()
            .find(|(_, path)| is_same_file(Path::new(output), path))
        {
            return Err(UsageError(format!(
                "{flag} {output}: that is {host}'s results file, which the output would \
                 replace; choose a name outside the results, such as fleet.html"
            )));
        }
    }
    let plan = FleetPlan {
        report: FleetReport {
            fleet,
            dir: args.dir.display().to_string(),
        },
        outputs: checked,
        terminal: Terminal::default(),
    };
    let terminal = text_terminal(args.color, plan.uses_stdout());
    Ok(FleetPlan { terminal, ..plan })
}

/// `latlab history`: the history read, and where each format goes.
pub struct HistoryPlan {
    pub history: History,
    pub outputs: Vec<(&'static FileFormat<History>, OutputTarget)>,
    pub fail_if_slower: Option<f64>,
    pub accept_machine_steps: bool,
}

impl HistoryPlan {
    /// Whether an output takes standard output (the text then goes to standard error).
    pub fn uses_stdout(&self) -> bool {
        self.outputs.iter().any(|(_, t)| *t == OutputTarget::Stdout)
    }
}

/// Checks the outputs and `--since` before reading the runs, then reads them and keeps the
/// changes asked for.
pub fn history(args: &HistoryArgs) -> Result<HistoryPlan, UsageError> {
    let outputs = args.outputs.checked(None).map_err(UsageError)?;
    let since = args.since.as_deref().map(since_of).transpose()?;
    if args.last == Some(0) {
        return Err(UsageError(
            "--last 0: no run to report a change in; give 1 or more".into(),
        ));
    }
    let options = HistoryOptions {
        threshold: args.threshold / 100.0,
        beyond_scatter: args.beyond_scatter,
    };
    let history = History::load(&args.dirs, &latlab_probes::presentations(), options)?
        .recent(since.as_deref(), args.last);
    for (flag, text) in args.outputs.by_flag() {
        let Some(output) = text.as_deref().filter(|t| *t != "-") else {
            continue;
        };
        if let Some(path) = (history.read.iter()).find(|path| is_same_file(Path::new(output), path)) {
            return Err(UsageError(format!(
                "{flag} {output}: that is {}, a run the history read, which the output would \
                 replace; choose a name outside the runs, such as history.json",
                path.display()
            )));
        }
    }
    Ok(HistoryPlan {
        history,
        outputs,
        fail_if_slower: args.fail_if_slower,
        accept_machine_steps: args.accept_machine_steps,
    })
}

/// `--since`: a date (`2026-11-20`) or an RFC 3339 time in UTC as the results files write it
/// (`2026-11-20T03:00:00Z`), which compare as text.
fn since_of(text: &str) -> Result<String, UsageError> {
    // A day alone is its first second; either way a real date and time, in UTC as runs
    // record their start, so that it orders against them.
    let time = match text.len() {
        10 => format!("{text}T00:00:00Z"),
        _ => text.to_string(),
    };
    if latlab_report::validate::is_start_time(&time) {
        Ok(time)
    } else {
        Err(UsageError(format!(
            "--since {text}: not a date; give one as 2026-11-20 or 2026-11-20T03:00:00Z"
        )))
    }
}

/// `latlab export`: the run, and where each format goes.
pub struct ExportPlan {
    pub run: RunRecord,
    pub outputs: Vec<(&'static FileFormat<RunRecord>, OutputTarget)>,
}

pub fn export(args: &ExportArgs) -> Result<ExportPlan, UsageError> {
    let outputs = args.outputs.by_flag();
    if outputs.iter().all(|(_, text)| text.is_none()) {
        return Err(UsageError(format!(
            "no output named; name at least one of {}, such as --openmetrics latlab.prom",
            RunRecord::flags_listed()
        )));
    }
    let checked = args.outputs.checked(None).map_err(UsageError)?;
    for (flag, text) in &outputs {
        if let Some(output) = text.as_deref().filter(|t| *t != "-")
            && is_same_file(Path::new(output), &args.file)
        {
            return Err(UsageError(format!(
                "{flag} {output}: that is the results file being read, which the output \
                 would replace; choose another name"
            )));
        }
    }
    let run = load_run(&args.file, Reached::Named)?;
    Ok(ExportPlan {
        run,
        outputs: checked,
    })
}

/// The terminal of a command's text (`compare`, `fleet`): on standard error when an output
/// takes standard output, coloured as `color` says.
fn text_terminal(color: latlab_front::ColorChoice, output_on_stdout: bool) -> Terminal {
    let args = TerminalArgs {
        quiet: false,
        verbose: false,
        color,
    };
    latlab_front::terminal(&args, Stream::beside(output_on_stdout))
}

/// The letters a run is shown by, as spreadsheet columns are: A … Z, AA, AB … ZZ, AAA ….
fn run_label(index: usize) -> String {
    let mut letters = Vec::new();
    let mut n = index + 1;
    while n > 0 {
        n -= 1;
        letters.push(char::from(b'A' + (n % 26) as u8));
        n /= 26;
    }
    letters.iter().rev().collect()
}

/// `latlab compare`: the sides, the first being the baseline, each with its letter and its
/// runs; the files each side's runs came from, in the same order; and where the outputs go.
pub struct ComparePlan {
    pub sides: Vec<Side>,
    pub paths: Vec<Vec<PathBuf>>,
    /// The formats named (`--markdown`, `--json`, ...), each with where it goes.
    pub outputs: Vec<(&'static FileFormat<Compared>, OutputTarget)>,
    /// Medians closer than this share are the same.
    pub threshold: f64,
    /// A result slower than this many per cent fails the comparison.
    pub fail_if_slower: Option<f64>,
    /// What `--accept-clock-moves` and `--allow-missing` excuse.
    pub excused: Excused,
    pub terminal: Terminal,
    /// What the reader should know about the sides: runs counted once, machines mixed in a
    /// side, runs that were interrupted. Each a sentence.
    pub notes: Vec<String>,
    /// `--noise-table FILE`, read: the prior of one run a side in place of the tables of the
    /// machines latlab has met.
    pub noise_table: Option<NoiseTable>,
}

impl ComparePlan {
    /// Whether an output takes standard output (the text then goes to standard error).
    pub fn uses_stdout(&self) -> bool {
        self.outputs.iter().any(|(_, t)| *t == OutputTarget::Stdout)
    }
}

pub fn compare(args: &CompareArgs) -> Result<ComparePlan, UsageError> {
    let outputs = args.outputs.by_flag();
    let checked = args.outputs.checked(None).map_err(UsageError)?;
    let paths = (args.files.iter())
        .map(|path| side_files(path))
        .collect::<Result<Vec<_>, UsageError>>()?;
    for (flag, text) in &outputs {
        let Some(output) = text.as_deref().filter(|t| *t != "-") else {
            continue;
        };
        if let Some(side) = (args.files.iter()).find(|side| is_inside(Path::new(output), side)) {
            return Err(UsageError(format!(
                "{flag} {output}: inside {}, a side of this comparison, where every *.json \
                 is read as a run: the next comparison of that side would fail on it; write \
                 it elsewhere",
                side.display()
            )));
        }
        if let Some(input) = (paths.iter().flatten().map(RunFile::path))
            .find(|f| is_same_file(Path::new(output), f))
        {
            return Err(UsageError(format!(
                "{flag} {output}: that is {}, a results file being compared, which the output \
                 would replace; choose another name",
                input.display()
            )));
        }
    }
    let mut notes = Vec::new();
    let mut sides = Vec::new();
    let mut kept_paths = Vec::new();
    for (i, files) in paths.iter().enumerate() {
        let label = run_label(i);
        let loaded = latlab_report::load::load_runs(files)?;
        let files: Vec<PathBuf> = files.iter().map(|f| f.path().to_path_buf()).collect();
        let (runs, kept) = admit::side(&label, loaded, &files, &mut notes);
        sides.push(Side { label, runs });
        kept_paths.push(kept.into_iter().map(|i| files[i].clone()).collect());
    }
    let paths: Vec<Vec<PathBuf>> = kept_paths;
    notes.extend(admit::sides(&sides, &paths).map_err(UsageError)?);
    let noise_table = args
        .noise_table
        .as_deref()
        .map(read_noise_table)
        .transpose()?;
    if let (Some(path), Some(table)) = (&args.noise_table, &noise_table) {
        notes.extend(given_table_notes(path, table, &sides)?);
    }
    let plan = ComparePlan {
        sides,
        paths,
        outputs: checked,
        threshold: args.threshold / 100.0,
        fail_if_slower: args.fail_if_slower,
        excused: Excused {
            clock_moves: args.accept_clock_moves,
            missing: args.allow_missing,
        },
        terminal: Terminal::default(),
        notes,
        noise_table,
    };
    let terminal = text_terminal(args.color, plan.uses_stdout());
    Ok(ComparePlan { terminal, ..plan })
}

/// The largest noise table read: a table of a run of 100,000 results is some 6 MiB.
const MAX_NOISE_TABLE_BYTES: u64 = 64 << 20;

/// `--noise-table FILE`, read and parsed; refused in one line naming what is wrong.
fn read_noise_table(path: &Path) -> Result<NoiseTable, UsageError> {
    let refused = |why: String| {
        UsageError(format!(
            "--noise-table {}: {why}; give a table written by latlab noise",
            path.display()
        ))
    };
    let bytes =
        latlab_doors::input::read(path, Reached::Named, MAX_NOISE_TABLE_BYTES).map_err(refused)?;
    let text = String::from_utf8(bytes).map_err(|_| refused("not text".into()))?;
    NoiseTable::parse(&text).map_err(|why| {
        UsageError(format!(
            "--noise-table {}: {why}; give a table written by latlab noise",
            path.display()
        ))
    })
}

/// What the reader should know of the noise table given, or its refusal: a table none of
/// whose results is compared is refused (it would change nothing, in silence); one that a
/// comparison of several runs a side does not take, or one measured on another machine
/// than the runs compared, is said.
fn given_table_notes(
    path: &Path,
    table: &NoiseTable,
    sides: &[Side],
) -> Result<Vec<String>, UsageError> {
    let shown = path.display();
    let later = || sides.iter().skip(1).flat_map(|side| side.runs.iter());
    let compared: std::collections::HashSet<&str> = later()
        .flat_map(|run| run.results().map(|r| r.name.as_str()))
        .collect();
    if !table
        .results
        .iter()
        .any(|r| compared.contains(r.name.as_str()))
    {
        return Err(UsageError(format!(
            "--noise-table {shown}: none of its {} results is among those compared; give a \
             table latlab noise measured from runs of the probes compared",
            table.results.len()
        )));
    }
    let mut notes = Vec::new();
    if sides.iter().any(|side| side.runs.len() > 1) {
        notes.push(format!(
            "--noise-table {shown} is taken only where each side has one run: a side of \
             several shows its own run-to-run noise"
        ));
    }
    let machines: std::collections::BTreeSet<String> = later()
        .map(|run| NoiseMachine::of(run).to_string())
        .filter(|machine| *machine != table.machine.to_string())
        .collect();
    if !machines.is_empty() {
        notes.push(format!(
            "--noise-table {shown} was measured on {}, not on the machine compared ({}): its \
             deviations are taken as given",
            table.machine,
            machines.into_iter().collect::<Vec<_>>().join("; ")
        ));
    }
    Ok(notes)
}

/// `latlab noise`: the table measured from the runs of a directory, where it goes, and what
/// the reader should know of the runs read (copies counted once).
pub struct NoisePlan {
    pub table: NoiseTable,
    pub out: OutputTarget,
    pub notes: Vec<String>,
}

pub fn noise(args: &NoiseArgs) -> Result<NoisePlan, UsageError> {
    let out = match &args.out {
        None => OutputTarget::Stdout,
        Some(named) => {
            latlab_front::check_output_file(named)
                .map_err(|why| UsageError(format!("--out {why}")))?;
            OutputTarget::named(named.clone())
        }
    };
    let mut files = Vec::new();
    for dir in &args.dirs {
        if !dir.is_dir() {
            return Err(UsageError(format!(
                "{}: not a directory; give the directory of runs that latlab run --runs 10 \
                 --out DIR wrote",
                dir.display()
            )));
        }
        files.extend(side_files(dir)?);
    }
    let loaded = latlab_report::load::load_runs(&files)?;
    let files: Vec<PathBuf> = files.iter().map(|f| f.path().to_path_buf()).collect();
    let mut notes = Vec::new();
    let named = (args.dirs.iter())
        .map(|dir| dir.display().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    let (runs, _) = admit::side(&named, loaded, &files, &mut notes);
    let table = latlab_report::compare::noise_table(&runs, &latlab_probes::presentations())
        .map_err(|why| UsageError(format!("{named}: {why}")))?;
    if !table.unsteady.is_empty() {
        notes.push(format!(
            "left out of the table, having moved more than tenfold (one standard deviation) or \
             ten-thousandfold (between two runs) from run to run, which is no noise a \
             comparison can take as a prior: {}",
            table.unsteady.join(", ")
        ));
    }
    Ok(NoisePlan { table, out, notes })
}

/// The results files of one side of a comparison, as the runs layer finds them
/// ([`latlab_report::runs::side_files`]); a run directory of `--runs` is `run-K`.
fn side_files(path: &Path) -> Result<Vec<RunFile>, UsageError> {
    let numbered = |name: &str| latlab_front::RunOf::number_in(name, "").is_some_and(|n| n.is_ok());
    latlab_report::runs::side_files(path, numbered).map_err(UsageError)
}

/// Whether `output` would be written inside the directory `side` (or a run directory in
/// it), where the side's runs are read from.
fn is_inside(output: &Path, side: &Path) -> bool {
    if !side.is_dir() {
        return false;
    }
    let Ok(side) = std::fs::canonicalize(side) else {
        return false;
    };
    std::fs::canonicalize(latlab_front::parent_or_current(output))
        .is_ok_and(|parent| parent.starts_with(&side))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_gets_its_own_label() {
        let labels: Vec<String> = (0..800).map(run_label).collect();
        assert_eq!(&labels[..3], ["A", "B", "C"]);
        assert_eq!(&labels[25..28], ["Z", "AA", "AB"]);
        assert_eq!(labels[701], "ZZ");
        assert_eq!(labels[702], "AAA");
        let unique: std::collections::HashSet<&String> = labels.iter().collect();
        assert_eq!(unique.len(), labels.len());
    }
}
