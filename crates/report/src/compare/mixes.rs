//! What a side's runs mix: machines, versions of latlab, suites or the CPUs a run was
//! allowed. A side whose runs differ so sets unlike figures beside each other, and its
//! medians and spread mix them: each mix is a note, said wherever runs are judged together
//! (`latlab compare`, a run or a harness against its baseline).

use latlab_engine::model::RunRecord;
use std::collections::BTreeMap;

/// A note for each way the runs of the side called `label` mix.
pub fn mixes(label: &str, runs: &[RunRecord]) -> Vec<String> {
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
pub fn cpus_apart(sides: &[super::Side]) -> Option<String> {
    // Runs of a version that did not record them are left out of it.
    let allowed = |side: &super::Side| -> std::collections::BTreeSet<String> {
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
pub fn counters(sides: &[super::Side]) -> Option<String> {
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
