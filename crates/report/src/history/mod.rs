//! A machine's history (`latlab history DIR…`): each host's runs in the order they started,
//! and the change points of each result over them, each named with what else changed on the
//! machine at that run. A step that many results share at one run is one event of the
//! machine ([`MachineEvent`]), reported once with its members; a result's step that no
//! other shares is its own. `steps.rs` finds the steps of a series of one level at a time,
//! `regimes.rs` the changes of mix of a series that flips between two regimes, `clock.rs`
//! the results that stepped with the core clock, `runs.rs` what is kept of each run,
//! `baseline.rs` a baseline's runs judged since each result's last change point, and
//! `text.rs`, `json.rs`, `tables.rs` (CSV and Markdown), `metrics.rs` (OpenMetrics) and
//! `html.rs` (a page of timelines) render a history.

mod baseline;
mod clock;
#[cfg(feature = "html")]
mod html;
mod json;
mod members;
mod metrics;
mod regimes;
pub(crate) mod runs;
mod steps;
mod tables;
mod text;

use crate::copies::RunIdentity;
use crate::load::LoadError;
use crate::runs::{Walk, count, json_files, read_all};
use latlab_engine::presentation::Presentations;
use runs::HistoryRun;
pub use runs::RunFigure;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
pub use steps::DEFAULT_BEYOND_SCATTER;

pub use baseline::{since_changes_note, since_last_changes};
#[cfg(feature = "html")]
pub use html::HistoryHtml;
#[cfg(feature = "html")]
pub(crate) use html::environment_words;
pub use json::HistoryJson;
pub use metrics::HistoryOpenMetrics;
pub(crate) use metrics::change_families;
pub use tables::{HistoryCsv, HistoryMarkdown};
pub(crate) use text::changes_text;
pub use text::{HistoryText, gate_text};

/// A history, as `latlab history` also writes it.
impl crate::Offered for History {
    fn formats() -> &'static [crate::FileFormat<History>] {
        &[
            json::FORMAT,
            tables::CSV_FORMAT,
            metrics::FORMAT,
            tables::MARKDOWN_FORMAT,
            #[cfg(feature = "html")]
            html::FORMAT,
        ]
    }
}

/// The result whose figure is the core clock's period: the engine's cycle.
pub use latlab_engine::cycle::CYCLE_RESULT as CLOCK_RESULT;

/// What a history is asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistoryOptions {
    /// The least step reported, as a share.
    pub threshold: f64,
    /// How many standard deviations of the runs of the wider of its two levels a step must
    /// move ([`DEFAULT_BEYOND_SCATTER`] unless told otherwise).
    pub beyond_scatter: f64,
}

/// The least step reported unless told otherwise: 2%, what runs of one machine differ by;
/// and one and a half times each level's scatter.
pub const DEFAULT_HISTORY_OPTIONS: HistoryOptions = HistoryOptions {
    threshold: 0.02,
    beyond_scatter: DEFAULT_BEYOND_SCATTER,
};

/// The runs of many hosts and the changes of each.
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    pub hosts: Vec<HostHistory>,
    /// What was skipped or counted once, each a sentence.
    pub notes: Vec<String>,
    /// Every file read (copies too): an output must not replace one.
    pub read: Vec<PathBuf>,
}

/// One host's runs, oldest first, and its changes, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct HostHistory {
    pub host: String,
    pub cpu_model: String,
    /// Each run's start, oldest first.
    pub runs: Vec<String>,
    /// The results' own changes, newest first: each shared by fewer than
    /// [`MACHINE_EVENT_MEMBERS`] results within a run.
    pub changes: Vec<Change>,
    /// The steps many results share at one run, newest first.
    pub events: Vec<MachineEvent>,
    /// The steps of the core clock, each with the results that stepped with it.
    pub clock_steps: Vec<ClockStep>,
    /// The figures, run by run, of each result with a change (the clock's first where it
    /// stepped), for the page's timelines.
    pub timelines: Vec<Timeline>,
}

/// One result's figures over its host's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    pub result: String,
    /// Each run's index in its host's runs and the result's figure there, oldest first.
    pub points: Vec<(usize, RunFigure)>,
}

/// A change of one result between two levels of its runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub result: String,
    /// The index of the first run of the new level in its host's runs.
    pub at: usize,
    /// The start of the first run of the new level, and of the last run of the old.
    pub after_run: String,
    pub before_run: String,
    /// The levels before and after, in nanoseconds (geometric means of their runs).
    pub before: f64,
    pub after: f64,
    pub ratio: f64,
    /// The 95% interval of the ratio; `None` for a change of mix.
    pub interval: Option<(f64, f64)>,
    pub p: f64,
    /// What else differs between the last run of the old level and the first of the new.
    pub environment_changes: Vec<EnvironmentChange>,
    /// A change of the mix of two regimes, not of a level: the share of runs in the upper
    /// regime before and after.
    pub mix: Option<(f64, f64)>,
    /// The run (its index in its host's runs) at which the machine event this change is a
    /// member of began; `None` for a result's own change ([`MachineEvent`]).
    pub machine_event: Option<usize>,
}

/// The fewest results whose changes, within one run of one another, make one event of the
/// machine: a neighbour's load, a host's change, a kernel, rather than each result's own.
pub const MACHINE_EVENT_MEMBERS: usize = 3;

/// A step that many results share at one run: one event of the machine, reported once with
/// its members. The core clock's followers are counted on its step, not here.
#[derive(Debug, Clone, PartialEq)]
pub struct MachineEvent {
    /// The run (its index in its host's runs) most members' new level begins at.
    pub at: usize,
    /// The start of that run, and of the run before the earliest member's new level.
    pub after_run: String,
    pub before_run: String,
    /// Each member's change, by its result's name.
    pub members: Vec<Change>,
    /// What else differs between the run before the event and its last member's first run.
    pub environment_changes: Vec<EnvironmentChange>,
}

/// A field of the environment that differs at a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentChange {
    pub field: &'static str,
    pub before: String,
    pub after: String,
}

/// A step of the core clock's period, and how many results stepped with it (the same in
/// cycles, so not reported on their own).
#[derive(Debug, Clone, PartialEq)]
pub struct ClockStep {
    pub change: Change,
    pub followers: usize,
}

/// What `--fail-if-slower` fails on ([`History::slower_than`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Slower<'h> {
    /// A step of the core clock's period: the machine ran slower.
    ClockStep {
        host: &'h HostHistory,
        step: &'h ClockStep,
    },
    /// A machine event, with those of its members that were slower.
    Event {
        host: &'h HostHistory,
        event: &'h MachineEvent,
        members: Vec<&'h Change>,
    },
    /// A result's own change.
    Change {
        host: &'h HostHistory,
        change: &'h Change,
    },
}

impl History {
    /// Reads every results or summary file under `dirs` and finds each host's changes.
    /// Refuses directories that hold no run.
    pub fn load(
        dirs: &[PathBuf],
        declared: &Presentations,
        options: HistoryOptions,
    ) -> Result<History, LoadError> {
        let (runs, notes) = read_runs(dirs, declared)?;
        Ok(History::of_runs(runs, notes, declared, options))
    }

    /// The history of `runs` (read in any order, copies among them counted once), with the
    /// `notes` of their reading.
    pub(crate) fn of_runs(
        runs: Vec<HistoryRun>,
        mut notes: Vec<String>,
        declared: &Presentations,
        options: HistoryOptions,
    ) -> History {
        let read = runs.iter().map(|run| run.path.clone()).collect();
        let (runs, copies) = crate::copies::distinct_runs(runs, |run: &HistoryRun| {
            let figures = (run.figures.iter())
                .map(|(name, figure)| (name, std::slice::from_ref(&figure.median_ns)));
            RunIdentity::new((&run.host_name, &run.cpu_model), &run.started_at, figures)
        });
        if !copies.is_empty() {
            let paths: Vec<&Path> = copies.iter().map(|c| c.path.as_path()).collect();
            notes.push(crate::copies::copies_note(&paths, "figures"));
        }
        let mut by_host: BTreeMap<(String, String), Vec<HistoryRun>> = BTreeMap::new();
        for run in runs {
            let key = (run.host_name.clone(), run.cpu_model.clone());
            by_host.entry(key).or_default().push(run);
        }
        let mut hosts_runs = Vec::new();
        for mut runs in by_host.into_values() {
            runs.sort_by(|a, b| (&a.started_at, &a.path).cmp(&(&b.started_at, &b.path)));
            if runs.len() == 1 {
                notes.push(format!(
                    "{} ({}): one run: no history yet",
                    runs[0].host_name, runs[0].cpu_model
                ));
            } else {
                hosts_runs.push(runs);
            }
        }
        let hosts = of_hosts(&hosts_runs, declared, options);
        History { hosts, notes, read }
    }

    /// What made the machine slower by more than `percent` per cent, with its host: each
    /// result's own change ([`Change::slower_than`]), each step of the core clock, and each
    /// machine event with its members that did, judged as a whole. What a nightly job
    /// gates on, once [`History::recent`] has kept the recent ones. Nothing is forgiven for
    /// its cause: a machine event and the clock fail the gate as a result's change does.
    pub fn slower_than(&self, percent: f64) -> Vec<Slower<'_>> {
        let mut slower = Vec::new();
        for host in &self.hosts {
            for step in &host.clock_steps {
                if step.change.slower_than(percent) {
                    slower.push(Slower::ClockStep { host, step });
                }
            }
            for event in &host.events {
                let members: Vec<&Change> = (event.members.iter())
                    .filter(|change| change.slower_than(percent))
                    .collect();
                if !members.is_empty() {
                    slower.push(Slower::Event {
                        host,
                        event,
                        members,
                    });
                }
            }
            for change in &host.changes {
                if change.slower_than(percent) {
                    slower.push(Slower::Change { host, change });
                }
            }
        }
        slower
    }

    /// Keeps each host's changes whose new level began at `since` (RFC 3339) or later, or
    /// within its last `last` runs.
    pub fn recent(mut self, since: Option<&str>, last: Option<usize>) -> History {
        for host in &mut self.hosts {
            let first = last.map_or(0, |last| host.runs.len().saturating_sub(last));
            let recent = |change: &Change| {
                change.at >= first && since.is_none_or(|since| change.after_run.as_str() >= since)
            };
            host.changes.retain(recent);
            host.clock_steps.retain(|step| recent(&step.change));
            host.events.retain(|event| {
                event.at >= first && since.is_none_or(|since| event.after_run.as_str() >= since)
            });
            let changed: std::collections::HashSet<String> = (host.all_changes())
                .map(|change| change.result.clone())
                .collect();
            let clock_stepped = !host.clock_steps.is_empty();
            host.timelines
                .retain(|timeline| match timeline.result.as_str() {
                    CLOCK_RESULT => clock_stepped,
                    name => changed.contains(name),
                });
        }
        self
    }
}

/// Every run under `dirs`, and the notes of what the walks passed over or could not read.
fn read_runs(
    dirs: &[PathBuf],
    declared: &Presentations,
) -> Result<(Vec<HistoryRun>, Vec<String>), LoadError> {
    let mut walk = Walk::default();
    for dir in dirs {
        if !dir.is_dir() {
            return Err(LoadError(format!(
                "{}: not a directory; give the directories the runs were written into",
                dir.display()
            )));
        }
        walk.absorb(json_files(dir));
    }
    let mut notes = walk.notes();
    let (mut runs, mut refused) = (Vec::new(), Vec::new());
    for outcome in read_all::<HistoryRun>(&walk, declared) {
        match outcome {
            Ok(run) => runs.push(run),
            Err(error) => refused.push(error.0),
        }
    }
    if !refused.is_empty() {
        notes.push(format!(
            "{} could not be read and {} skipped: {}",
            count(refused.len(), "file", "files"),
            if refused.len() == 1 { "was" } else { "were" },
            crate::copies::first_few(&refused)
        ));
    }
    if runs.is_empty() {
        return Err(LoadError(format!(
            "{}: no latlab results file in them{}; give the directories the runs were written \
             into",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            notes.iter().map(|n| format!("; {n}")).collect::<String>()
        )));
    }
    let instead: Vec<&String> = runs
        .iter()
        .filter_map(|r| r.instead_of_summary.as_ref())
        .collect();
    if !instead.is_empty() {
        notes.push(format!(
            "{} read in place of the summary beside {}: {}",
            count(instead.len(), "results file was", "results files were"),
            if instead.len() == 1 { "it" } else { "them" },
            crate::copies::first_few(&instead)
        ));
    }
    Ok((runs, notes))
}

/// Where the search is spread over the CPUs: over the hosts, each taking the next host,
/// or, where there are fewer hosts than CPUs, over each host's results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Spread {
    OverHosts,
    OverResults,
}

/// The history of each host of `hosts` (each its runs, oldest first), in order, searched on
/// as many threads as the machine has CPUs.
fn of_hosts(
    hosts: &[Vec<HistoryRun>],
    declared: &Presentations,
    options: HistoryOptions,
) -> Vec<HostHistory> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    match hosts.len() < cpus {
        true => (hosts.iter())
            .map(|runs| HostHistory::of(runs, declared, options, Spread::OverResults))
            .collect(),
        false => crate::parallel::map_in_order(hosts, "latlab-history", |runs| {
            HostHistory::of(runs, declared, options, Spread::OverHosts)
        }),
    }
}

impl HostHistory {
    /// The core clock's steps, the machine events' members, then the results' own changes
    /// (each names its result).
    pub fn all_changes(&self) -> impl Iterator<Item = &Change> {
        (self.clock_steps.iter().map(|step| &step.change))
            .chain(self.events.iter().flat_map(|event| &event.members))
            .chain(&self.changes)
    }

    /// Whether the host has a change, a machine event, or a step of its core clock.
    pub fn changed(&self) -> bool {
        self.all_changes().next().is_some()
    }

    /// The changes of `runs` (one host's, oldest first), its results searched on every CPU
    /// or on this thread alone, as `spread` says.
    fn of(
        runs: &[HistoryRun],
        declared: &Presentations,
        options: HistoryOptions,
        spread: Spread,
    ) -> HostHistory {
        let (by_name, names) = by_result(runs);
        let series = |name: &str| log_series(by_name.get(name).map_or(&[], Vec::as_slice));
        let clock = series(CLOCK_RESULT);
        let clock_changes = changes_of(CLOCK_RESULT, &clock, runs, options);
        let names: Vec<&str> = names.into_iter().filter(|&n| n != CLOCK_RESULT).collect();
        // Each result's changes, and the clock step each followed where it did.
        let judge = |name: &&str| -> Vec<(Change, Option<usize>)> {
            let own = series(name);
            let series = clock::Series {
                own: &own,
                clock: &clock,
                declared_on_clock: declared.on_core_clock(name),
            };
            (changes_of(name, &own, runs, options).into_iter())
                .map(|change| {
                    let followed = clock::followed(&change, &clock_changes, &series, options);
                    (change, followed)
                })
                .collect()
        };
        let judged = match spread {
            Spread::OverResults => crate::parallel::map_in_order(&names, "latlab-history", judge),
            Spread::OverHosts => names.iter().map(judge).collect(),
        };
        let mut followers = vec![0usize; clock_changes.len()];
        let (mut changes, mut on_clock) = (Vec::new(), std::collections::HashSet::new());
        for (change, followed) in judged.into_iter().flatten() {
            match followed {
                Some(step) => {
                    followers[step] += 1;
                    on_clock.insert(change.result.clone());
                }
                None => changes.push(change),
            }
        }
        let (mut events, mut changes) = machine_events(changes, runs);
        let others: Vec<&str> = (names.iter().copied())
            .filter(|name| !on_clock.contains(*name))
            .collect();
        let context = members::Context {
            runs,
            options,
            own: &changes,
        };
        context.join(&mut events, &others, &series, spread);
        changes.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| a.result.cmp(&b.result)));
        let mut changed: Vec<&str> = (changes.iter())
            .chain(events.iter().flat_map(|event| &event.members))
            .map(|c| c.result.as_str())
            .collect();
        changed.sort_unstable();
        changed.dedup();
        if !clock_changes.is_empty() {
            changed.insert(0, CLOCK_RESULT);
        }
        let timelines = (changed.into_iter())
            .map(|name| Timeline {
                result: name.to_string(),
                points: by_name.get(name).cloned().unwrap_or_default(),
            })
            .collect();
        HostHistory {
            timelines,
            host: runs[0].host_name.clone(),
            cpu_model: runs[0].cpu_model.clone(),
            runs: runs.iter().map(|run| run.started_at.clone()).collect(),
            changes,
            events,
            clock_steps: (clock_changes.into_iter().zip(followers))
                .map(|(change, followers)| ClockStep { change, followers })
                .collect(),
        }
    }
}

/// The machine events among `changes` (one host's, of `runs`) and the changes left, each a
/// result's own. The run whose neighbourhood (it and one run either side) holds the most
/// changes, [`MACHINE_EVENT_MEMBERS`] or more, makes an event of them; then the next, on the
/// changes left. Newest event first.
fn machine_events(changes: Vec<Change>, runs: &[HistoryRun]) -> (Vec<MachineEvent>, Vec<Change>) {
    let mut rest = changes;
    let mut events = Vec::new();
    loop {
        let mut at_run = vec![0usize; runs.len() + 1];
        for change in &rest {
            at_run[change.at] += 1;
        }
        let near = |run: usize| at_run[run.saturating_sub(1)..(run + 2).min(at_run.len())].iter();
        let busiest = (1..runs.len())
            .map(|run| (run, near(run).sum::<usize>()))
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)));
        let Some((centre, _)) = busiest.filter(|(_, count)| *count >= MACHINE_EVENT_MEMBERS) else {
            break;
        };
        let (mut members, others): (Vec<Change>, Vec<Change>) =
            (rest.into_iter()).partition(|change| change.at.abs_diff(centre) <= 1);
        rest = others;
        let mut counts: Vec<(usize, usize)> = Vec::new();
        for change in &members {
            match counts.iter_mut().find(|(at, _)| *at == change.at) {
                Some((_, n)) => *n += 1,
                None => counts.push((change.at, 1)),
            }
        }
        let at = (counts.iter())
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
            .map_or(centre, |(at, _)| *at);
        let first = members.iter().map(|c| c.at).min().unwrap_or(at);
        let last = members.iter().map(|c| c.at).max().unwrap_or(at);
        for member in &mut members {
            member.machine_event = Some(at);
        }
        members.sort_by(|a, b| a.result.cmp(&b.result));
        events.push(MachineEvent {
            at,
            after_run: runs[at].started_at.clone(),
            before_run: runs[first - 1].started_at.clone(),
            members,
            environment_changes: environment_changes(&runs[first - 1], &runs[last]),
        });
    }
    events.sort_by_key(|event| std::cmp::Reverse(event.at));
    (events, rest)
}

/// Each result's figures, run by run: each run's index and the result's figure there.
pub(crate) type ByResult<'a> = HashMap<&'a str, Vec<(usize, RunFigure)>>;

/// Each result's figures in `runs`, gathered in one pass over the runs, and the results'
/// names in order.
pub(crate) fn by_result(runs: &[HistoryRun]) -> (ByResult<'_>, Vec<&str>) {
    let mut by_name = ByResult::new();
    for (i, run) in runs.iter().enumerate() {
        for (name, figure) in &run.figures {
            by_name.entry(&**name).or_default().push((i, *figure));
        }
    }
    let mut names: Vec<&str> = by_name.keys().copied().collect();
    names.sort_unstable();
    (by_name, names)
}

/// A result's series as the search takes it: each run's index and the logarithm of its
/// median, runs without a positive finite figure left out.
pub(crate) fn log_series(points: &[(usize, RunFigure)]) -> Vec<(usize, f64)> {
    (points.iter())
        .map(|(i, figure)| (*i, figure.median_ns))
        .filter(|(_, figure)| *figure > 0.0 && figure.is_finite())
        .map(|(i, figure)| (i, figure.ln()))
        .collect()
}

/// The changes of result `name`'s `series` (run index and logarithm of its figure): the
/// changes of mix where its runs flip between two regimes, else its steps.
pub(crate) fn changes_of(
    name: &str,
    series: &[(usize, f64)],
    runs: &[HistoryRun],
    options: HistoryOptions,
) -> Vec<Change> {
    let logs: Vec<f64> = series.iter().map(|(_, log)| *log).collect();
    let change = |at: usize| {
        let (after, before) = (series[at].0, series[at - 1].0);
        (
            after,
            before,
            environment_changes(&runs[before], &runs[after]),
        )
    };
    if let Some(found) = regimes::regimes(&logs) {
        return (regimes::mix_changes(&found.upper).into_iter())
            .map(|mix| {
                let (after, before, environment_changes) = change(mix.at);
                let level = |share: f64| (found.low + share * (found.high - found.low)).exp();
                Change {
                    result: name.to_string(),
                    at: after,
                    after_run: runs[after].started_at.clone(),
                    before_run: runs[before].started_at.clone(),
                    before: level(mix.before),
                    after: level(mix.after),
                    ratio: level(mix.after) / level(mix.before),
                    interval: None,
                    p: mix.p,
                    environment_changes,
                    mix: Some((mix.before, mix.after)),
                    machine_event: None,
                }
            })
            .collect();
    }
    (steps::steps(&logs, options).into_iter())
        .map(|step| step_change(name, series, runs, &step))
        .collect()
}

/// The change of result `name` that `step` of its `series` makes.
fn step_change(
    name: &str,
    series: &[(usize, f64)],
    runs: &[HistoryRun],
    step: &steps::Step,
) -> Change {
    let (after, before) = (series[step.at].0, series[step.at - 1].0);
    Change {
        result: name.to_string(),
        at: after,
        after_run: runs[after].started_at.clone(),
        before_run: runs[before].started_at.clone(),
        before: step.before.exp(),
        after: step.after.exp(),
        ratio: (step.after - step.before).exp(),
        interval: Some((step.interval.0.exp(), step.interval.1.exp())),
        p: step.p,
        environment_changes: environment_changes(&runs[before], &runs[after]),
        mix: None,
        machine_event: None,
    }
}

impl Change {
    /// Whether it made its result slower by more than `percent` per cent: a step whose
    /// whole 95% interval lies past it, or a change of mix whose typical figure (the levels
    /// weighted by the shares of runs in each) did.
    pub fn slower_than(&self, percent: f64) -> bool {
        let past = 1.0 + percent / 100.0;
        match (self.mix, self.interval) {
            (Some(_), _) => self.ratio > past,
            (None, Some((low, _))) => low > past,
            (None, None) => false,
        }
    }

    /// What else changed in the environment: `kernel 6.8.0 → 6.9.1; latlab 0.1.0 → 0.2.0`,
    /// empty where nothing did.
    pub fn environment_text(&self) -> String {
        environment_text(&self.environment_changes)
    }
}

/// The fields that changed: `kernel 6.8.0 → 6.9.1; latlab 0.1.0 → 0.2.0`, empty where none
/// did.
pub(crate) fn environment_text(changes: &[EnvironmentChange]) -> String {
    (changes.iter())
        .map(|f| format!("{} {} → {}", f.field, f.before, f.after))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The fields of the environment that differ between `before` and `after`.
fn environment_changes(before: &HistoryRun, after: &HistoryRun) -> Vec<EnvironmentChange> {
    (before.environment.iter().zip(&after.environment))
        .filter(|((_, a), (_, b))| a != b)
        .map(|((field, a), (_, b))| EnvironmentChange {
            field,
            before: a.clone(),
            after: b.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests;
