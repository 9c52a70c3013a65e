//! One admission policy for the runs judged together (`latlab compare`'s sides, `latlab
//! noise`'s runs, a run or a harness against its baseline): copies of one run counted once
//! ([`crate::copies::RunIdentity`]), the runs in the order they started, and the notes
//! every reader gives alike, once: what a side's runs mix (machines, versions of latlab,
//! suites or the CPUs a run was allowed: a side whose runs differ so sets unlike figures
//! beside each other), which runs were interrupted, which counters counted, and sides
//! allowed other CPUs; an emulated run beside a native one is refused.

use crate::compare::Side;
use crate::copies::{self, RunIdentity};
use latlab_engine::model::RunRecord;
use std::collections::BTreeMap;
use std::path::Path;

/// A note for each way the runs of the side called `label` mix.
pub(crate) fn mixes(label: &str, runs: &[RunRecord]) -> Vec<String> {
    let machine = |run: &RunRecord| {
        format!(
            "{}/{}",
            run.environment.host_name, run.environment.cpu.model
        )
    };
    let version = |run: &RunRecord| run.latlab_version.clone();
    let suite = |run: &RunRecord| format!("{}, {} rounds", run.settings.suite, run.settings.rounds);
    let cpus = |run: &RunRecord| cpus_allowed(run).unwrap_or_default();
    // The CPUs allowed, among the runs that recorded them.
    let recorded: Vec<RunRecord> = (runs.iter())
        .filter(|run| run.environment.allowed_cpus.is_some())
        .cloned()
        .collect();
    let mut notes = Vec::new();
    if let Some(each) = counted_in(runs, &machine, &|m, n| format!("{n} on {m}")) {
        notes.push(format!(
            "{label} mixes machines ({each}): a side's runs should come from one machine; its \
             medians and noise here mix them"
        ));
    }
    if let Some(each) = counted_in(runs, &version, &|v, n| format!("{n} by latlab {v}")) {
        notes.push(format!(
            "{label} mixes versions of latlab ({each}): a method may differ between them, and \
             the side's medians and noise then mix the two"
        ));
    }
    if let Some(each) = counted_in(runs, &suite, &|s, n| format!("{n} of {s}")) {
        notes.push(format!(
            "{label} mixes suites ({each}): each samples differently, and the side's medians \
             and noise then mix them"
        ));
    }
    if let Some(each) = counted_in(&recorded, &cpus, &|c, n| format!("{n} on {c}")) {
        notes.push(format!(
            "{label} mixes the CPUs its runs were allowed ({each}): a figure measured on \
             one CPU is not one measured across two"
        ));
    }
    notes
}

/// How many of `runs` there are of each `key`, phrased by `each` and joined, where there are
/// two keys or more.
fn counted_in(
    runs: &[RunRecord],
    key: &dyn Fn(&RunRecord) -> String,
    each: &dyn Fn(&str, usize) -> String,
) -> Option<String> {
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for run in runs {
        *kinds.entry(key(run)).or_default() += 1;
    }
    (kinds.len() > 1).then(|| {
        (kinds.iter())
            .map(|(kind, n)| each(kind, *n))
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// A note where the sides' runs were allowed other CPUs than the first side's (`taskset -c
/// 0` against two CPUs): an unpinned figure measured on one CPU is not one measured across
/// two, whatever its name.
pub(crate) fn cpus_apart(sides: &[Side]) -> Option<String> {
    // Runs of a version that did not record them are left out of it.
    let allowed = |side: &Side| -> std::collections::BTreeSet<String> {
        side.runs.iter().filter_map(cpus_allowed).collect()
    };
    let first = sides.first().map(allowed).filter(|cpus| !cpus.is_empty())?;
    let apart: Vec<String> = (sides.iter().skip(1))
        .filter(|side| !allowed(side).is_empty() && allowed(side) != first)
        .map(|side| {
            let theirs: Vec<String> = allowed(side).into_iter().collect();
            format!("{} on {}", side.label, theirs.join(" and "))
        })
        .collect();
    let mine: Vec<String> = first.into_iter().collect();
    (!apart.is_empty()).then(|| {
        format!(
            "the sides ran on other CPUs ({} on {}; {}): a figure measured on one CPU is not \
             one measured across two, whatever its name",
            sides[0].label,
            mine.join(" and "),
            apart.join("; ")
        )
    })
}

/// A note where the sides' counts were made by more than one counter (callgrind's count of
/// every instruction, the CPU's `instructions:u`): they count differently, so each result
/// is judged by its counts only where both sides counted it alike.
pub(crate) fn counters(sides: &[Side]) -> Option<String> {
    let mut by_side: Vec<String> = Vec::new();
    let mut all: std::collections::BTreeSet<&str> = Default::default();
    for side in sides {
        let vias: std::collections::BTreeSet<&str> = (side.runs.iter())
            .flat_map(|run| run.results())
            .filter_map(|r| r.counted.as_ref().map(|c| c.via.as_str()))
            .collect();
        if !vias.is_empty() {
            let vias: Vec<&str> = vias.iter().copied().collect();
            by_side.push(format!("{} in {}", vias.join(" and "), side.label));
        }
        all.extend(vias);
    }
    (all.len() > 1).then(|| {
        format!(
            "the counts were made by more than one counter ({}), which count differently: a \
             result is judged by its counts only where both sides counted it with one counter, \
             else by its times",
            by_side.join(", ")
        )
    })
}

/// The CPUs a run was allowed, as its environment records them (`CPUs 0-1`); `None` for a
/// run of a version that did not record them.
fn cpus_allowed(run: &RunRecord) -> Option<String> {
    let cpus = run.environment.allowed_cpus.as_ref()?;
    Some(format!(
        "CPUs {}",
        latlab_engine::environment::cpu_ranges(cpus)
    ))
}

/// The runs of the side called `label`, each named by `names` (its file), admitted: copies
/// of a run counted once (the same host, CPU model, start and samples), the rest in the
/// order they started (then by name). Returns the runs kept and, for each, its index in
/// `runs`; the notes on the copies, the side's mixes and its interrupted runs go to `notes`.
pub fn side<N: AsRef<Path>>(
    label: &str,
    runs: Vec<RunRecord>,
    names: &[N],
    notes: &mut Vec<String>,
) -> (Vec<RunRecord>, Vec<usize>) {
    let (kept, copied) = copies::distinct_runs(runs.into_iter().enumerate(), |(_, run)| {
        let samples = (run.results()).map(|result| (&result.name, &result.samples_ns));
        let host = (&run.environment.host_name, &run.environment.cpu.model);
        RunIdentity::new((host.0.as_str(), host.1.as_str()), &run.started_at, samples)
    });
    if !copied.is_empty() {
        let paths: Vec<&Path> = copied.iter().map(|(i, _)| names[*i].as_ref()).collect();
        notes.push(format!(
            "{label}: {}",
            copies::copies_note(&paths, "samples")
        ));
    }
    let mut kept = kept;
    kept.sort_by(|(a, a_run), (b, b_run)| {
        (a_run.started_at.as_str(), names[*a].as_ref())
            .cmp(&(b_run.started_at.as_str(), names[*b].as_ref()))
    });
    let (indices, runs): (Vec<usize>, Vec<RunRecord>) = kept.into_iter().unzip();
    notes.extend(mixes(label, &runs));
    let stopped: Vec<&Path> = (runs.iter().zip(&indices))
        .filter(|(run, _)| !run.complete)
        .map(|(_, i)| names[*i].as_ref())
        .collect();
    notes.extend(interrupted(label, &stopped));
    (runs, indices)
}

/// The notes on `sides` judged together (each run named by `names`, side by side): which
/// counters counted and sides allowed other CPUs; `Err` where an emulated run stands beside
/// a native one, naming one of each: an emulator's translation of the code is not the
/// machine, whichever machine it ran on.
pub fn sides<N: AsRef<Path>>(sides: &[Side], names: &[Vec<N>]) -> Result<Vec<String>, String> {
    let runs = || (sides.iter().zip(names)).flat_map(|(side, names)| side.runs.iter().zip(names));
    let emulated = runs().find(|(run, _)| run.environment.emulated.is_some());
    let native = runs().find(|(run, _)| run.environment.emulated.is_none());
    if let (Some((_, emulated)), Some((_, native))) = (emulated, native) {
        return Err(format!(
            "{} was measured under an emulator and {} natively: an emulator's timings cannot \
             be set beside a machine's; compare runs made the same way",
            emulated.as_ref().display(),
            native.as_ref().display()
        ));
    }
    Ok(counters(sides)
        .into_iter()
        .chain(cpus_apart(sides))
        .collect())
}

/// A note for the runs of side `label` that were interrupted (`complete: false`), `stopped`
/// naming them: their probes stop where the run was stopped.
fn interrupted(label: &str, stopped: &[&Path]) -> Option<String> {
    let one = stopped.len() == 1;
    (!stopped.is_empty()).then(|| {
        format!(
            "{label}: {} interrupted before {} ended (complete: false), so {} results \
             stop where it was stopped: {}",
            if one { "a run was" } else { "runs were" },
            if one { "it" } else { "they" },
            if one { "its" } else { "their" },
            copies::first_few(stopped)
        )
    })
}
