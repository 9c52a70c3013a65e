//! Which runs speak for a result: the stability checks of its family, whether they moved
//! during a run, and whether the two sides read them apart.

use super::{Lookup, Side, Unsteady};
use latlab_engine::environment::data_cache_sizes;
use latlab_engine::model::{BenchResult, RunRecord, Warning};
use latlab_engine::names::key;
use latlab_engine::names::result::{STABILITY_CORE_TO_CORE, STABILITY_MEMORY_CHASE};
use latlab_engine::presentation::Presentations;

/// The stability checks that speak for `result`, as measured in `run`: those its probe
/// declares ([`Presentations::checks_for`]), less the memory chases for a working set
/// within the private caches (at most the level below the last one the kernel reports),
/// which neither main memory nor the neighbours who share the last cache can move.
pub(super) fn checks_for(
    declared: &Presentations,
    run: &RunRecord,
    result: &BenchResult,
) -> Vec<&'static str> {
    let checks = declared.checks_for(&result.name);
    let working_set = (result.parameter(key::WORKING_SET_BYTES))
        .or_else(|| result.parameter(key::SIZE_ESTIMATE_BYTES))
        .and_then(|v| v.as_u64());
    let private = private_cache_bytes(run);
    let memory = checks.contains(&STABILITY_MEMORY_CHASE);
    match (working_set, private) {
        (Some(set), Some(private)) if memory && set <= private => Vec::new(),
        _ => checks,
    }
}

/// The largest cache below the last level the kernel reports in `run`'s environment.
fn private_cache_bytes(run: &RunRecord) -> Option<u64> {
    match data_cache_sizes(&run.environment.caches)[..] {
        [.., below, _last] => Some(below),
        _ => None,
    }
}

/// Whether none of `checks` moved during `run`.
fn checks_held(run: &RunRecord, checks: &[&str]) -> bool {
    !(run.stability.iter()).any(|c| checks.contains(&c.name.as_str()) && c.moved.is_some())
}

/// Whether `run` speaks for its `result` (where it has one): none of `checks` moved during
/// it, and the result was not taken in another placement of the CPUs than the run's
/// ([`Warning::PlacementChanged`]).
pub(super) fn steady(run: &RunRecord, checks: &[&str], result: Option<&BenchResult>) -> bool {
    checks_held(run, checks) && !result.is_some_and(placement_changed)
}

/// Whether a result carries a placement change.
fn placement_changed(result: &BenchResult) -> bool {
    (result.warnings.iter()).any(|w| matches!(w, Warning::PlacementChanged { .. }))
}

/// The check of `checks` that says the machine under the steady runs of two sides differs:
/// its figures in the two sides lie apart (see [`Unsteady::BetweenRuns`]).
fn differing_check(
    first: &[&RunRecord],
    later: &[&RunRecord],
    checks: &[&'static str],
) -> Option<Changed> {
    checks.iter().find_map(|check| {
        let floor = (first.iter().chain(later))
            .flat_map(|run| &run.stability)
            .find(|c| c.name == *check)?
            .moved_share;
        let (a_low, a_high) = check_range(first, check)?;
        let (b_low, b_high) = check_range(later, check)?;
        let how = if b_low > a_high * (1.0 + floor) {
            Unsteady::BetweenRuns {
                first_ns: a_high,
                later_ns: b_low,
            }
        } else if a_low > b_high * (1.0 + floor) {
            Unsteady::BetweenRuns {
                first_ns: a_low,
                later_ns: b_high,
            }
        } else {
            return None;
        };
        Some((*check, how))
    })
}

/// The check that said the machine changed, and how.
type Changed = (&'static str, Unsteady);

/// Which runs of the later side speak for a result that `checks` speak for: those where none
/// of them moved; or why none can (every run of a side moved, or the sides' steady runs read a check
/// apart). With several runs a side, a run whose check moved is left out of the families its
/// check speaks for, and the others still compare.
pub(super) fn comparable_runs<'a>(
    (first, later): (&'a Side, &'a Side),
    checks: &[&'static str],
    name: &str,
    lookup: &Lookup,
) -> Result<Vec<&'a RunRecord>, Changed> {
    let keep = |side: &'a Side| -> Vec<&'a RunRecord> {
        (side.runs.iter())
            .filter(|run| steady(run, checks, lookup.result(run, name)))
            .collect()
    };
    let (a, b) = (keep(first), keep(later));
    if a.is_empty() || b.is_empty() {
        // A side left with no run: some run's check moved, or the result was taken in
        // another placement; name the check.
        let runs = || first.runs.iter().chain(&later.runs);
        let moved =
            (checks.iter().copied()).find(|check| runs().any(|run| !checks_held(run, &[check])));
        return Err(match moved {
            Some(check) => (check, Unsteady::DuringRun),
            None => (STABILITY_CORE_TO_CORE, Unsteady::Placement),
        });
    }
    match differing_check(&a, &b, checks) {
        Some(changed) => Err(changed),
        None => Ok(b),
    }
}

/// The lowest and highest median that stability check `check` read in `runs`, starts and
/// ends together; `None` where no run has it.
fn check_range(runs: &[&RunRecord], check: &str) -> Option<(f64, f64)> {
    let medians: Vec<f64> = (runs.iter())
        .flat_map(|run| &run.stability)
        .filter(|c| c.name == check)
        .flat_map(|c| std::iter::once(&c.start).chain(&c.end))
        .map(|summary| summary.median)
        .filter(|median| *median > 0.0)
        .collect();
    let low = medians.iter().copied().reduce(f64::min)?;
    let high = medians.iter().copied().reduce(f64::max)?;
    Some((low, high))
}
