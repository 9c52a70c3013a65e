//! `latlab fleet DIR`: the headline figures of many machines side by side, the spread of
//! each across the fleet and the machines that are outliers for it.
//!
//! Every `*.json` file under the directory (recursively, links not followed) is read as a
//! run's summary ([`crate::summary`]) or its results file, the summary first where a run
//! directory has both (`read.rs`); each readable one is a host. What cannot be read is
//! skipped and counted in a note (another tool's JSON, a truncated file, a newer latlab's
//! schema); files of an older schema are converted as they are read, and a note says how
//! many. Files are read in parallel, a results file without its samples, and only the
//! headline figures, the results they are read from and the description are kept: ten
//! thousand summaries take seconds and little memory.
//!
//! Hosts are grouped by CPU model (from each run's environment): outliers are judged
//! within a group of at least three hosts, by the modified z-score of `robust.rs`, so that
//! a different machine type is never "the odd one out" merely for being different. Hosts
//! that share a name get their run's start time added to it. Runs of different suites are
//! compared where they have the same results: each row counts the hosts that have it.
//!
//! Where the directory holds several runs of a host (a nightly job's), those hosts' runs are
//! read again, every result of them, and searched for change points as `latlab history`
//! finds them: the hosts with one in their last few runs are named, with the result and the
//! ratio.

#[cfg(feature = "html")]
mod html;
mod metrics;
pub(crate) mod read;
mod text;

pub use crate::stats::robust::{MAD_FLOOR_SHARE, MIN_HOSTS, OUTLIER_Z, Robust};
#[cfg(feature = "html")]
pub use html::FleetHtml;
pub use metrics::{FleetOpenMetrics, carries_latest_runs_only, latest_runs, runs_left_out};
pub use text::FleetText;

/// A fleet as its renderings take it: the hosts and what was found across them, and the
/// directory they were read from. Each format is an [`crate::Exporter`] of it.
#[derive(Debug, Clone)]
pub struct FleetReport {
    pub fleet: Fleet,
    /// The directory, as the command line named it.
    pub dir: String,
}

/// A fleet, as `latlab fleet` also writes it.
impl crate::Offered for FleetReport {
    fn formats() -> &'static [crate::FileFormat<FleetReport>] {
        &[
            #[cfg(feature = "html")]
            html::FORMAT,
            metrics::FORMAT,
            metrics::BACKFILL_FORMAT,
        ]
    }
}

use crate::copies::RunIdentity;
use crate::headline::measurable_operations;
use crate::history::runs::HistoryRun;
use crate::history::{DEFAULT_HISTORY_OPTIONS, History, HostHistory};
use crate::json::JSON_SCHEMA_VERSION;
use crate::load::LoadError;
use crate::openmetrics::ResultFigure;
use crate::runs::{Walk, count, json_files, read_all};
use latlab_engine::presentation::Presentations;
use read::Extract;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Skipped files named in a note before "and N more".
const NAMED_IN_NOTE: usize = 3;

/// One host's run, as the fleet keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRun {
    /// The host's name, with its run's start time where another run has the same name.
    pub label: String,
    pub host_name: String,
    pub cpu_model: String,
    pub suite: String,
    pub started_at: String,
    pub path: PathBuf,
    /// The median of each row of [`Fleet::operations`], where the run has it.
    pub figures: Vec<Option<f64>>,
    /// The result each row's figure was read from, where the run has it.
    pub results: Vec<Option<ResultFigure>>,
}

/// Hosts of one CPU model.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub cpu_model: String,
    /// Indices into [`Fleet::hosts`], in label order.
    pub hosts: Vec<usize>,
}

/// A host whose figure for a row is an outlier within its group.
#[derive(Debug, Clone, PartialEq)]
pub struct Outlier {
    pub host: usize,
    pub row: usize,
    pub value: f64,
    /// Its group's median for the row.
    pub group_median: f64,
    /// The modified z-score.
    pub z: f64,
}

/// Many runs of many hosts.
#[derive(Debug, Clone, PartialEq)]
pub struct Fleet {
    /// The headline rows at least one host has a figure for, in the table's order.
    pub operations: Vec<String>,
    pub hosts: Vec<HostRun>,
    /// By CPU model, the largest group first.
    pub groups: Vec<Group>,
    pub outliers: Vec<Outlier>,
    /// What was skipped, converted or renamed, each a sentence.
    pub notes: Vec<String>,
    /// The files that repeat a run already read, counted once.
    pub copies: Vec<PathBuf>,
    /// Each host of two runs or more whose runs have a change point (as `latlab history`
    /// finds them) within its last [`Fleet::recent_runs`], with those changes alone.
    pub changed: Vec<HostHistory>,
    /// How many hosts have two runs or more, so a history.
    pub with_history: usize,
    /// How many of each host's last runs a change point is named within.
    pub recent_runs: usize,
}

impl Fleet {
    /// Reads every results file under `dir`, keeping the figures of the headline rows
    /// `declared`, and finds the hosts whose runs have a change point within their last
    /// `recent_runs`. Refuses a directory that holds none.
    pub fn load(
        dir: &Path,
        declared: &Presentations,
        recent_runs: usize,
    ) -> Result<Fleet, LoadError> {
        let metadata = std::fs::metadata(dir)
            .map_err(|e| LoadError(format!("{}: cannot read it ({e})", dir.display())))?;
        if !metadata.is_dir() {
            return Err(LoadError(format!(
                "{}: not a directory; give the directory the runs were written into",
                dir.display()
            )));
        }
        let walk = json_files(dir);
        let (mut extracts, mut refused) = (Vec::new(), Vec::new());
        for outcome in read_all::<Extract>(&walk, declared) {
            match outcome {
                Ok(extract) => extracts.push(extract),
                Err(error) => refused.push(error.0),
            }
        }
        if extracts.is_empty() {
            // Why each file could not be read, and what the walk passed over (which may be
            // where the runs are), said with the refusal.
            let why = match refused.is_empty() {
                true => String::new(),
                false => format!("; {}", skipped_note(&refused)),
            };
            let passed_over: String = (walk.notes().iter())
                .map(|note| format!("; {note}"))
                .collect();
            return Err(LoadError(format!(
                "{}: no latlab results file in it{why}{passed_over}; give the directory the \
                 runs were written into",
                dir.display(),
            )));
        }
        let mut notes = walk.notes();
        let instead: Vec<String> = (extracts.iter())
            .filter_map(|e| e.instead_of_summary.clone())
            .collect();
        if !instead.is_empty() {
            notes.push(instead_note(&instead));
        }
        let (extracts, copies) = distinct_runs(extracts, &mut notes);
        if walk.ignored > 0 {
            notes.push(format!(
                "{} not ending in .json {} left alone",
                count(walk.ignored, "file", "files"),
                if walk.ignored == 1 { "was" } else { "were" }
            ));
        }
        if !refused.is_empty() {
            notes.push(skipped_note(&refused));
        }
        let old = extracts
            .iter()
            .filter(|e| e.schema.is_some_and(|s| s < u64::from(JSON_SCHEMA_VERSION)))
            .count();
        if old > 0 {
            notes.push(format!(
                "{} of an older schema {} converted as {} read (parameters typed, warnings \
                 kept as written)",
                count(old, "file", "files"),
                if old == 1 { "was" } else { "were" },
                if old == 1 { "it was" } else { "they were" }
            ));
        }
        let (changed, with_history) = changed_lately(&walk, &extracts, declared, recent_runs);
        Ok(Fleet {
            copies,
            changed,
            with_history,
            recent_runs,
            ..Fleet::from_extracts(extracts, notes, declared)
        })
    }

    fn from_extracts(
        mut extracts: Vec<Extract>,
        mut notes: Vec<String>,
        declared: &Presentations,
    ) -> Fleet {
        extracts.sort_by(|a, b| {
            (&a.cpu_model, &a.host_name, &a.started_at, &a.path).cmp(&(
                &b.cpu_model,
                &b.host_name,
                &b.started_at,
                &b.path,
            ))
        });
        let operations: Vec<String> = measurable_operations(declared)
            .into_iter()
            .filter(|op| extracts.iter().any(|e| e.figures.contains_key(*op)))
            .map(str::to_string)
            .collect();
        let labels = labels(&extracts, &mut notes);
        let hosts: Vec<HostRun> = extracts
            .into_iter()
            .zip(labels)
            .map(|(e, label)| HostRun {
                figures: (operations.iter())
                    .map(|op| Some(e.figures.get(op)?.median_ns))
                    .collect(),
                results: (operations.iter())
                    .map(|op| Some(e.figures.get(op)?.result.clone()))
                    .collect(),
                label,
                host_name: e.host_name,
                cpu_model: e.cpu_model,
                suite: e.suite,
                started_at: e.started_at,
                path: e.path,
            })
            .collect();
        let mut suites: BTreeMap<&str, usize> = BTreeMap::new();
        for host in &hosts {
            *suites.entry(host.suite.as_str()).or_default() += 1;
        }
        if suites.len() > 1 {
            let counts: Vec<String> = suites.iter().map(|(s, n)| format!("{s}: {n}")).collect();
            notes.push(format!(
                "the runs are of different suites ({}); each row compares the hosts that have \
                 its result",
                counts.join(", ")
            ));
        }
        let groups = groups(&hosts);
        let outliers = outliers(&hosts, &groups, operations.len());
        Fleet {
            operations,
            hosts,
            groups,
            outliers,
            notes,
            copies: Vec::new(),
            changed: Vec::new(),
            with_history: 0,
            recent_runs: 0,
        }
    }

    /// The figures of row `row`, host by host, where present.
    pub fn row(&self, row: usize) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.hosts
            .iter()
            .enumerate()
            .filter_map(move |(i, h)| Some((i, h.figures[row]?)))
    }

    /// Whether host `host` is an outlier for row `row`.
    pub fn outlier(&self, host: usize, row: usize) -> Option<&Outlier> {
        self.outliers
            .iter()
            .find(|o| o.host == host && o.row == row)
    }
}

/// The hosts among `extracts` (distinct runs) with a change point within their last
/// `recent_runs`, with those changes alone, and how many hosts have two runs or more. Only
/// the runs of hosts with two runs or more are read again, every result of them: a fleet of
/// one run per host keeps its headline figures alone. The history's own notes (copies,
/// hosts of one run) are the fleet's already, or no news in a fleet.
fn changed_lately(
    walk: &Walk,
    extracts: &[Extract],
    declared: &Presentations,
    recent_runs: usize,
) -> (Vec<HostHistory>, usize) {
    let mut runs_of: BTreeMap<(&str, &str), Vec<&Path>> = BTreeMap::new();
    for extract in extracts {
        let host = (extract.host_name.as_str(), extract.cpu_model.as_str());
        runs_of.entry(host).or_default().push(&extract.path);
    }
    let again = walk.of_files(
        &(runs_of.into_values())
            .filter(|paths| paths.len() > 1)
            .flatten()
            .collect(),
    );
    if again.found.is_empty() {
        return (Vec::new(), 0);
    }
    let runs: Vec<HistoryRun> = (read_all::<HistoryRun>(&again, declared).into_iter())
        .filter_map(Result::ok)
        .collect();
    let history = History::of_runs(runs, Vec::new(), declared, DEFAULT_HISTORY_OPTIONS)
        .recent(None, Some(recent_runs));
    let with_history = history.hosts.len();
    let changed = (history.hosts.into_iter())
        .filter(HostHistory::changed)
        .collect();
    (changed, with_history)
}

/// The distinct runs among `extracts`: a run is its host (name and CPU model), its start
/// time and its figures, so copies and hard links of one results file count once (five
/// copies used to make five hosts, and outliers of each other). The copies are said in
/// `notes`.
fn distinct_runs(extracts: Vec<Extract>, notes: &mut Vec<String>) -> (Vec<Extract>, Vec<PathBuf>) {
    let (distinct, copies) = crate::copies::distinct_runs(extracts, |extract| {
        let figures = (extract.figures.iter())
            .map(|(row, figure)| (row, std::slice::from_ref(&figure.median_ns)));
        let host = (extract.host_name.as_str(), extract.cpu_model.as_str());
        RunIdentity::new(host, &extract.started_at, figures)
    });
    let copies: Vec<PathBuf> = copies.into_iter().map(|copy| copy.path).collect();
    if !copies.is_empty() {
        let paths: Vec<&Path> = copies.iter().map(PathBuf::as_path).collect();
        notes.push(crate::copies::copies_note(&paths, "figures"));
    }
    (distinct, copies)
}

/// The note on skipped files: how many, and the first few reasons.
fn skipped_note(refused: &[String]) -> String {
    format!(
        "{} {} not latlab results this latlab reads, and skipped: {}",
        count(refused.len(), "JSON file", "JSON files"),
        if refused.len() == 1 { "is" } else { "are" },
        first_few_reasons(refused)
    )
}

/// The note on summaries passed over for the results file beside them: how many, and the
/// first few reasons.
fn instead_note(why: &[String]) -> String {
    format!(
        "{} could not stand for the results.json beside {}, which {} read instead: {}",
        count(why.len(), "summary.json", "summary.json files"),
        if why.len() == 1 { "it" } else { "them" },
        if why.len() == 1 { "was" } else { "were" },
        first_few_reasons(why)
    )
}

/// The first [`NAMED_IN_NOTE`] of `reasons`, then how many more.
fn first_few_reasons(reasons: &[String]) -> String {
    let mut named: Vec<&str> = reasons
        .iter()
        .take(NAMED_IN_NOTE)
        .map(String::as_str)
        .collect();
    let more = reasons.len().saturating_sub(NAMED_IN_NOTE);
    let more_text = format!("and {more} more");
    if more > 0 {
        named.push(&more_text);
    }
    named.join("; ")
}

/// Each host's label: its name, with its start time where names repeat, and a number
/// where even that repeats.
fn labels(extracts: &[Extract], notes: &mut Vec<String>) -> Vec<String> {
    let mut by_name: BTreeMap<&str, usize> = BTreeMap::new();
    for e in extracts {
        *by_name.entry(e.host_name.as_str()).or_default() += 1;
    }
    let repeated: std::collections::BTreeSet<&str> = by_name
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(name, _)| *name)
        .collect();
    if !repeated.is_empty() {
        notes.push(format!(
            "{} in more than one run ({}): each such run is named by its start time too",
            count(repeated.len(), "host name appears", "host names appear"),
            repeated
                .iter()
                .take(NAMED_IN_NOTE)
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut labels: Vec<String> = extracts
        .iter()
        .map(|e| {
            if repeated.contains(&e.host_name.as_str()) {
                format!("{}@{}", e.host_name, e.started_at)
            } else {
                e.host_name.clone()
            }
        })
        .collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for label in &mut labels {
        let n = seen.entry(label.clone()).or_default();
        *n += 1;
        if *n > 1 {
            label.push_str(&format!("#{n}"));
        }
    }
    labels
}

/// Hosts by CPU model, the largest group first.
fn groups(hosts: &[HostRun]) -> Vec<Group> {
    let mut by_model: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, host) in hosts.iter().enumerate() {
        by_model.entry(host.cpu_model.as_str()).or_default().push(i);
    }
    let mut groups: Vec<Group> = by_model
        .into_iter()
        .map(|(model, hosts)| Group {
            cpu_model: model.to_string(),
            hosts,
        })
        .collect();
    groups.sort_by(|a, b| {
        b.hosts
            .len()
            .cmp(&a.hosts.len())
            .then(a.cpu_model.cmp(&b.cpu_model))
    });
    groups
}

/// Every (host, row) whose figure is an outlier within its group.
fn outliers(hosts: &[HostRun], groups: &[Group], rows: usize) -> Vec<Outlier> {
    let mut found = Vec::new();
    for group in groups {
        for row in 0..rows {
            let figures: Vec<(usize, f64)> = group
                .hosts
                .iter()
                .filter_map(|&h| Some((h, hosts[h].figures[row]?)))
                .collect();
            let values: Vec<f64> = figures.iter().map(|&(_, v)| v).collect();
            let Some(robust) = Robust::of(&values) else {
                continue;
            };
            for (host, value) in figures {
                if robust.is_outlier(value) {
                    found.push(Outlier {
                        host,
                        row,
                        value,
                        group_median: robust.median,
                        z: robust.z(value),
                    });
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Exporter;
    use crate::terminal::Terminal;

    fn host(name: &str, model: &str, suite: &str, figures: &[(&str, f64)]) -> Extract {
        Extract {
            path: PathBuf::from(format!("{name}.json")),
            host_name: name.into(),
            cpu_model: model.into(),
            suite: suite.into(),
            started_at: format!("2026-11-24T00:00:0{}Z", name.len() % 10),
            schema: Some(u64::from(JSON_SCHEMA_VERSION)),
            figures: (figures.iter())
                .map(|&(op, v)| {
                    let result = ResultFigure {
                        name: format!("probe/{op}"),
                        median_ns: v,
                        bytes_per_operation: None,
                    };
                    (
                        op.to_string(),
                        read::RowFigure {
                            median_ns: v,
                            result,
                        },
                    )
                })
                .collect(),
            instead_of_summary: None,
        }
    }

    const DRAM: &str = "Main memory reference";
    const SYSCALL: &str = "System call";

    /// Ten hosts of one model and three of another: the slow one of the ten is the only
    /// outlier, the other model's hosts (all slower) are not, and the groups come largest
    /// first.
    #[test]
    fn the_odd_host_out_is_found_within_its_cpu_model() {
        let mut extracts: Vec<Extract> = (0..10)
            .map(|i| {
                let dram = if i == 6 { 160.0 } else { 100.0 + i as f64 };
                host(
                    &format!("x{i}"),
                    "Xeon",
                    "quick",
                    &[(DRAM, dram), (SYSCALL, 120.0)],
                )
            })
            .collect();
        extracts.extend((0..3).map(|i| {
            host(
                &format!("e{i}"),
                "EPYC",
                "quick",
                &[(DRAM, 140.0 + i as f64)],
            )
        }));
        let fleet = Fleet::from_extracts(extracts, Vec::new(), &latlab_probes::presentations());
        assert_eq!(fleet.operations, [DRAM, SYSCALL]);
        assert_eq!(fleet.groups[0].cpu_model, "Xeon");
        assert_eq!(fleet.groups[1].hosts.len(), 3);
        assert_eq!(fleet.outliers.len(), 1, "{:?}", fleet.outliers);
        let outlier = &fleet.outliers[0];
        assert_eq!(fleet.hosts[outlier.host].label, "x6");
        assert_eq!(fleet.operations[outlier.row], DRAM);
        assert!(outlier.z > 3.5 && (outlier.group_median - 104.5).abs() < 1e-9);
        // The EPYC hosts lack the system call: that row counts ten hosts.
        assert_eq!(fleet.row(1).count(), 10);
        assert!(fleet.notes.is_empty(), "{:?}", fleet.notes);
    }

    /// Repeated host names are told apart by start time, then by number; mixed suites and
    /// the renames are noted.
    #[test]
    fn repeated_names_and_mixed_suites_are_noted() {
        let extracts = vec![
            host("a", "M", "quick", &[(DRAM, 1.0)]),
            host("a", "M", "full", &[(DRAM, 1.0)]),
            host("a", "M", "quick", &[(DRAM, 1.0)]),
            host("bb", "M", "quick", &[(DRAM, 1.0)]),
        ];
        let fleet = Fleet::from_extracts(extracts, Vec::new(), &latlab_probes::presentations());
        let labels: Vec<&str> = fleet.hosts.iter().map(|h| h.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "a@2026-11-24T00:00:01Z",
                "a@2026-11-24T00:00:01Z#2",
                "a@2026-11-24T00:00:01Z#3",
                "bb"
            ]
        );
        assert!(
            fleet
                .notes
                .iter()
                .any(|n| n.starts_with("1 host name appears"))
        );
        assert!(fleet.notes.iter().any(|n| n.contains("full: 1, quick: 3")));
        assert!(fleet.outliers.is_empty());
    }

    #[test]
    fn group_names_run_past_z() {
        use super::text::group_name;
        assert_eq!(group_name(0), "A");
        assert_eq!(group_name(25), "Z");
        assert_eq!(group_name(26), "AA");
        assert_eq!(group_name(27), "AB");
    }

    /// A few hosts get a column each, their outliers marked; many get a column per model,
    /// and the table grows with 500 hosts only by the digits of its counts.
    #[test]
    fn the_table_has_a_column_per_host_or_per_model() {
        let few: Vec<Extract> = (0..4)
            .map(|i| {
                host(
                    &format!("h{i}"),
                    "M",
                    "quick",
                    &[(DRAM, if i == 2 { 300.0 } else { 100.0 })],
                )
            })
            .collect();
        let fleet = Fleet::from_extracts(few, Vec::new(), &latlab_probes::presentations());
        let report = FleetReport {
            fleet,
            dir: "runs".into(),
        };
        let text = FleetText::default().render(&report).unwrap();
        let header = text.lines().nth(2).unwrap();
        assert!(header.contains("h0") && header.contains("h3"), "{text}");
        assert!(text.contains("300 ns !"), "{text}");
        assert!(
            text.contains("h2: Main memory reference 300 ns (3.00× its CPU model's 100 ns"),
            "{text}"
        );
        // In colour, the outlier's host is red and bold; without, no escape at all.
        let coloured = Terminal {
            colour: true,
            ..Terminal::default()
        };
        let text = FleetText { terminal: coloured }.render(&report).unwrap();
        assert!(
            text.contains("\u{1b}[1m\u{1b}[31mh2\u{1b}[0m: "),
            "{text:?}"
        );
        let width = |n: usize| {
            let many: Vec<Extract> = (0..n)
                .map(|i| {
                    host(
                        &format!("node{i:03}"),
                        if i % 2 == 0 { "M" } else { "N" },
                        "quick",
                        &[(DRAM, 100.0)],
                    )
                })
                .collect();
            let report = FleetReport {
                fleet: Fleet::from_extracts(many, Vec::new(), &latlab_probes::presentations()),
                dir: "runs".into(),
            };
            let text = FleetText::default().render(&report).unwrap();
            text.lines().nth(3).unwrap().chars().count()
        };
        assert!(
            width(500) <= width(7) + 6,
            "{} against {}",
            width(500),
            width(7)
        );
        assert!(width(500) < 120);
    }

    /// The page has the table, the outliers with their files, and a plot per row with a
    /// dot per host.
    #[cfg(feature = "html")]
    #[test]
    fn the_page_plots_every_row_across_the_hosts() {
        let extracts: Vec<Extract> = (0..5)
            .map(|i| {
                host(
                    &format!("h{i}"),
                    "M",
                    "quick",
                    &[(DRAM, if i == 2 { 300.0 } else { 100.0 }), (SYSCALL, 99.0)],
                )
            })
            .collect();
        let report = FleetReport {
            fleet: Fleet::from_extracts(extracts, Vec::new(), &latlab_probes::presentations()),
            dir: "runs".into(),
        };
        let page = FleetHtml.render(&report).unwrap();
        assert_eq!(page.matches("<figure>").count(), 2);
        assert_eq!(page.matches("<circle").count(), 10);
        assert!(
            page.contains("<td>h2.json</td>"),
            "the outlier's file is named"
        );
        assert!(page.contains("fill=\"#c62828\""), "the outlier is red");
    }
}
