//! What the engine's and the probes' facts mean for the user, and what to do about them: the
//! one place where warnings, verdicts and the machine's concerns become sentences.
//!
//! The engine states facts with their figures (`Warning::HighVariance { cv }`); every
//! renderer phrases them through here, so the terminal, the files and the report say the
//! same thing, and grouping or translating them needs no parsing.

use crate::units::format_ns;
use latlab_engine::BenchResult;
use latlab_engine::analysis::SHARED_CORE_L2_HITS;
use latlab_engine::environment::Concern;
use latlab_engine::model::{Counters, Profile, RunRecord, StabilityCheck, Verdict, Warning};
use latlab_engine::names::{key, result as name};
use latlab_engine::{ClockInfo, ClockKind};

/// One warning as a sentence, with what to do.
pub fn warning(warning: &Warning) -> String {
    match warning {
        Warning::NotSteadyState {
            early_samples,
            shift,
        } => not_steady(*early_samples, *shift),
        // What to do about these two depends on the machine (whether --pin can help), so it
        // is said once per run under the grouped warnings, not here.
        Warning::HighVariance { cv } => format!(
            "unstable: coefficient of variation {:.0}%; the machine was busy or its frequency \
             changed",
            cv * 100.0
        ),
        Warning::Preempted {
            involuntary_switches,
        } => format!(
            "preempted {involuntary_switches} times while sampling: another task wanted this \
             CPU"
        ),
        Warning::MajorPageFaults { count } => format!(
            "{count} major page faults while sampling: the benchmark waited for storage; try \
             --mlock"
        ),
        Warning::FewSamples { taken, wanted } => format!(
            "only {taken} of {wanted} samples fitted in the time budget: the confidence \
             interval is wider; use the full suite for more"
        ),
        Warning::BelowMinimum { taken, minimum } => format!(
            "n = {taken}, below the minimum of {minimum} samples: no interval or percentiles; \
             the full suite takes more"
        ),
        Warning::DifferenceNotSignificant => "the 95% confidence interval of the difference \
                                              includes zero: no difference was detected"
            .into(),
        Warning::CacheSizeMismatch {
            level,
            measured_bytes,
            reported_bytes,
        } => cache_size_mismatch(level, *measured_bytes, *reported_bytes),
        Warning::TwoModes {
            low_ns,
            high_ns,
            low_share,
        } => two_modes(*low_ns, *high_ns, *low_share),
        Warning::BehavedAsSiblings {
            one_way_ns,
            l2_hit_ns,
        } => behaved_as_siblings(*one_way_ns, *l2_hit_ns),
        Warning::CycleUncertain {
            add_ns,
            check,
            check_ns,
            expected_cycles,
        } => cycle_uncertain(*add_ns, check, *check_ns, *expected_cycles),
        Warning::FasterThanOtherPairs { ratio } => format!(
            "{ratio:.1}× faster than the median pair, though the machine does not report these \
             CPUs as threads of one core: the host probably runs them on SMT siblings of one \
             core, and may move them"
        ),
        Warning::MovedDuringRun { first_ns, last_ns } => moved_during_run(*first_ns, *last_ns),
        Warning::PlacementChanged {
            read_ns,
            start_ns,
            beside_ns,
        } => placement_changed(*read_ns, *start_ns, *beside_ns),
        Warning::PartSkipped { part, reason } => format!("{part} skipped: {reason}"),
        Warning::CheckFailed { check, failure } => format!("{check} FAILED: {failure}"),
        Warning::ImplausibleCycle {
            measured_ghz,
            limit_ghz,
            basis,
        } => format!(
            "IMPLAUSIBLE: a cycle of {measured_ghz:.1} GHz, beyond the {limit_ghz:.1} GHz any \
             core of this machine can run at ({basis}): the add chain was folded or the \
             clock misread; every figure in cycles is wrong, the nanoseconds are not"
        ),
        Warning::Phrased { message, .. } => message.clone(),
    }
}

fn not_steady(early_samples: usize, shift: f64) -> String {
    format!(
        "not at steady state: the first {early_samples} samples were {:.0}% {} than the \
         rest (frequency ramp, cold caches or page faults); raise --samples or --target-time",
        shift.abs() * 100.0,
        if shift > 0.0 { "slower" } else { "faster" }
    )
}

fn cache_size_mismatch(level: &str, measured_bytes: u64, reported_bytes: u64) -> String {
    format!(
        "the latency curve puts the end of {level} near {} KiB but the kernel reports {} \
         KiB: a VM may report the host's caches, or the cache is shared with busy \
         neighbours; trust the curve for this machine as it runs",
        measured_bytes / 1024,
        reported_bytes / 1024
    )
}

fn two_modes(low_ns: f64, high_ns: f64, low_share: f64) -> String {
    format!(
        "two modes: {:.0}% of the samples near {}, the rest near {}; what was measured \
         changed while it ran (a VM's vCPUs moved between host cores): the median \
         describes neither; run again, or pin the VM's vCPUs on the host",
        low_share * 100.0,
        format_ns(low_ns),
        format_ns(high_ns)
    )
}

fn behaved_as_siblings(one_way_ns: f64, l2_hit_ns: f64) -> String {
    format!(
        "behaved as SMT siblings: a line passed one way in {}, under twice an L2 hit on \
         this core ({}), though the machine does not report these CPUs as threads of one \
         core: the host ran the two vCPUs on one core then, and this is not a \
         core-to-core figure (it is left out of the all-pairs summary)",
        format_ns(one_way_ns),
        format_ns(l2_hit_ns)
    )
}

fn cycle_uncertain(add_ns: f64, check: &str, check_ns: f64, expected_cycles: f64) -> String {
    format!(
        "the cycle is uncertain: a chain of dependent adds read {} a cycle ({:.2} GHz), but \
         a dependent {check}, {expected_cycles:.0} cycles on every current core, read {} = \
         {:.2} of those cycles; the core folded additions or its clock changed between the \
         two: trust the nanoseconds, not the figures in cycles",
        format_ns(add_ns),
        1.0 / add_ns,
        format_ns(check_ns),
        check_ns / add_ns
    )
}

fn moved_during_run(first_ns: f64, last_ns: f64) -> String {
    format!(
        "moved during the run: {} when first measured, {} when measured again; the \
         machine under the run changed (the host moved the vCPUs or the memory, or a \
         neighbour started or stopped): figures taken in between depend on when they ran",
        format_ns(first_ns),
        format_ns(last_ns)
    )
}

/// The range the placement reference read around a flagged round: at the run's start and
/// beside the round, lowest and highest.
fn placement_range(start_ns: f64, beside_ns: [f64; 2]) -> (f64, f64) {
    (start_ns.min(beside_ns[0]), start_ns.max(beside_ns[1]))
}

/// Whether a flagged result's own figure (`read_ns`) lay apart from every reading of the
/// placement reference around it, rather than the readings from each other.
fn read_apart(read_ns: Option<f64>, start_ns: f64, beside_ns: [f64; 2]) -> Option<f64> {
    let (low, high) = placement_range(start_ns, beside_ns);
    let agreement = 1.0 + latlab_engine::analysis::PLACEMENT_AGREEMENT;
    read_ns.filter(|&read| read > high * agreement || read * agreement < low)
}

/// How far apart the figures of a [`Warning::PlacementChanged`] lie, as a ratio of the
/// highest to the lowest (the result's own figure among them when it lay apart); `None`
/// for any other warning.
pub fn placement_spread(warning: &Warning) -> Option<f64> {
    let Warning::PlacementChanged {
        read_ns,
        start_ns,
        beside_ns,
    } = *warning
    else {
        return None;
    };
    let (low, high) = placement_range(start_ns, beside_ns);
    let (low, high) = match read_apart(read_ns, start_ns, beside_ns) {
        Some(read) => (low.min(read), high.max(read)),
        None => (low, high),
    };
    Some(high / low)
}

fn placement_changed(read_ns: Option<f64>, start_ns: f64, beside_ns: [f64; 2]) -> String {
    let (low, high) = placement_range(start_ns, beside_ns);
    match read_apart(read_ns, start_ns, beside_ns) {
        Some(read) => format!(
            "read {} while the run's reference read {} around it: the CPUs' placement \
             changed during this probe; the figure is not this run's, and compare does not \
             compare it",
            format_ns(read),
            span_ns(low, high)
        ),
        None => format!(
            "the run's core-to-core reference read {} at its start and {} beside this \
             probe: the CPUs' placement changed during the run, and this figure belongs to \
             the placement it met; compare does not compare it",
            format_ns(start_ns),
            span_ns(beside_ns[0], beside_ns[1])
        ),
    }
}

/// `low–high` in one unit where they round apart, else the one figure.
fn span_ns(low: f64, high: f64) -> String {
    let (low_text, high_text) = (format_ns(low), format_ns(high));
    if low_text == high_text {
        return low_text;
    }
    match (low_text.rsplit_once(' '), high_text.rsplit_once(' ')) {
        (Some((low, unit)), Some((high, same))) if unit == same => format!("{low}–{high} {unit}"),
        _ => format!("{low_text}–{high_text}"),
    }
}

/// One line per probe whose figures a placement change flagged
/// ([`Warning::PlacementChanged`]), to be shown beside the stability check: a result
/// whose own figure lay apart from the reference around it is named with its figure, the
/// probe's other flagged results counted.
pub fn placement_changes(run: &RunRecord) -> Vec<String> {
    let mut lines = Vec::new();
    for probe in &run.probes {
        let flagged: Vec<(&BenchResult, &Warning)> = (probe.results.iter())
            .filter_map(|r| {
                let w = r.warnings.iter().find(|w| placement_spread(w).is_some())?;
                Some((r, w))
            })
            .collect();
        let apart = |w: &Warning| match *w {
            Warning::PlacementChanged {
                read_ns,
                start_ns,
                beside_ns,
            } => read_apart(read_ns, start_ns, beside_ns).is_some(),
            _ => false,
        };
        let (own, others): (Vec<_>, Vec<_>) = flagged.into_iter().partition(|(_, w)| apart(w));
        for (result, w) in &own {
            lines.push(format!("placement change: {} {}", result.name, warning(w)));
        }
        if let Some((_, w)) = others.first() {
            let count = match others.len() {
                1 => others[0].0.name.clone(),
                n => format!("{} ({n} results)", probe.id),
            };
            lines.push(format!("placement change: {count}: {}", warning(w)));
        }
    }
    lines
}

/// A verdict as the table and the report state it.
pub fn verdict(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Measured => "measured",
        Verdict::OptimisedAway => {
            "OPTIMISED AWAY? indistinguishable from the empty loop: the compiler removed the \
             work or it costs less than the loop can resolve; pass inputs and results through \
             std::hint::black_box"
        }
    }
}

/// One of the machine's concerns as a run note, with what to do.
pub fn concern(concern: &Concern) -> String {
    match concern {
        Concern::Emulated { why } => format!(
            "emulated: these are not this machine's timings ({why}); run a build for this \
             machine's architecture"
        ),
        Concern::DebugBuild => "this is a debug build: its figures say nothing about \
                                optimised code; run `cargo run --release`"
            .into(),
        Concern::Governor { governor } => format!(
            "the frequency governor is `{governor}`: figures vary with the clock speed; set \
             `performance` (cpupower frequency-set -g performance) for stable numbers"
        ),
        Concern::Virtualised { hypervisor } => format!(
            "running under {hypervisor}: the hypervisor can steal time and hide hardware \
             counters; compare only with runs on the same kind of machine"
        ),
        Concern::Loaded { load_average, cpus } => format!(
            "load average {load_average:.2} on {cpus} CPUs at the start: other work competes \
             for the CPUs; figures may be slower and noisier"
        ),
        Concern::CpuQuota { cpus, of } => format!(
            "a CPU quota of {cpus:.2} CPUs (of {of}) applies to this run's control group \
             (cgroup cpu.max or cpu.cfs_quota_us): once it is used up the run is stopped until the next period, \
             so samples that span a stop read slow and vary; raise the quota (docker --cpus, \
             systemd CPUQuota=) or compare only runs under the same quota"
        ),
    }
}

/// What the run must say about the machine moving under it: each stability check that moved,
/// and (once) what that means for the cross-CPU figures, when the core-to-core check or the
/// `thread.core_to_core` probe saw the placement of the CPUs change or differ.
pub fn stability(run: &RunRecord) -> Vec<String> {
    let mut notes: Vec<String> = run
        .stability
        .iter()
        .filter_map(|check| {
            Some(format!(
                "{}: {}",
                check.name,
                warning(check.moved.as_ref()?)
            ))
        })
        .collect();
    let check_moved = run
        .stability
        .iter()
        .any(|c| c.name == name::STABILITY_CORE_TO_CORE && c.moved.is_some());
    // The probes that measure CPU pairs: their summaries carry what they saw too.
    let probe_saw = (run.probes.iter())
        .filter(|p| p.results.iter().any(|r| r.parameter(key::CPU_A).is_some()))
        .flat_map(|p| &p.results)
        .flat_map(|r| &r.warnings)
        .any(|w| {
            matches!(
                w,
                Warning::TwoModes { .. }
                    | Warning::FasterThanOtherPairs { .. }
                    | Warning::MovedDuringRun { .. }
                    | Warning::PlacementChanged { .. }
            )
        });
    if check_moved || probe_saw || !regime_changes(run).is_empty() {
        notes.push(
            "where the host runs this machine's CPUs changed during the run or differs between \
             pairs (see the core-to-core figures and the stability check): every figure that \
             crosses CPUs (IPC, the unpinned pipe, the hand-off between CPUs, contended \
             mutexes and atomics, core-to-core) depends on when it was taken; compare such \
             figures only between runs whose checks agree"
                .into(),
        );
    }
    notes
}

/// The changes of regime a run saw in its core-to-core figures, one line each, to be shown
/// beside the stability check. A one-way figure under [`SHARED_CORE_L2_HITS`] L2 hits is
/// two SMT siblings of one core, whatever the kernel reports; above it, two cores. The
/// stability check and `thread.core_to_core` measure the same kind of figure, so a pair
/// that behaved as siblings while the check read across cores (or the check crossing the
/// line between the start and the end) means the host changed how it ran the vCPUs during
/// the run. Empty when the run has no core-to-core figure in an L2 hit's terms.
pub fn regime_changes(run: &RunRecord) -> Vec<String> {
    let pairs: Vec<&BenchResult> = (run.results())
        .filter(|r| r.parameter(key::L2_HIT_NS).is_some())
        .collect();
    let Some(l2_hit_ns) = pairs
        .iter()
        .find_map(|r| r.parameter(key::L2_HIT_NS)?.as_f64())
    else {
        return Vec::new();
    };
    let line_ns = SHARED_CORE_L2_HITS * l2_hit_ns;
    let across = |ns: f64| ns >= line_ns;
    let regime = |ns: f64| {
        if across(ns) {
            "across cores"
        } else {
            "as one core's SMT siblings"
        }
    };
    let check = run
        .stability
        .iter()
        .find(|c| c.name == name::STABILITY_CORE_TO_CORE);
    let mut lines = Vec::new();
    let Some(check) = check else {
        return lines;
    };
    let start = check.start.median;
    let end = check.end.as_ref().map(|e| e.median);
    let bound = format!("{} L2 hits = {}", SHARED_CORE_L2_HITS, format_ns(line_ns));
    if let Some(end) = end
        && across(start) != across(end)
    {
        lines.push(format!(
            "regime change: {} read {} at the start, {}, and {} at the end, {} (the line \
             between them is {bound}): the host changed how it runs these vCPUs during the run",
            check.name,
            format_ns(start),
            regime(start),
            format_ns(end),
            regime(end),
        ));
    }
    let check_across = across(start) || end.is_some_and(across);
    let siblings: Vec<String> = pairs
        .iter()
        .filter(|r| {
            r.warnings
                .iter()
                .any(|w| matches!(w, Warning::BehavedAsSiblings { .. }))
        })
        .map(|r| format!("{} {}", r.name, format_ns(r.summary.median)))
        .collect();
    if check_across && !siblings.is_empty() {
        let shown = siblings.len().min(3);
        let more = match siblings.len() - shown {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        let end = end.map_or(String::new(), |e| {
            format!(" and {} at the end", format_ns(e))
        });
        lines.push(format!(
            "regime change: {}{more} behaved as one core's SMT siblings (under {bound}), while \
             {} read {} at the start{end}, across cores at least once: the host ran these vCPUs \
             on one core while the probe measured them, not throughout the run",
            siblings[..shown].join(", "),
            check.name,
            format_ns(start),
        ));
    }
    lines
}

/// One stability check in a line: its figure at the start and the end, and whether it held.
pub fn stability_check(check: &StabilityCheck) -> String {
    let start = format_ns(check.start.median);
    match (&check.end, &check.moved) {
        (None, _) => format!("{start} at the start; not measured again"),
        (Some(end), None) if (end.median / check.start.median - 1.0).abs() > check.moved_share => {
            format!(
                "{start} at the start, {} at the end: apart by more than {:.0}%, but not told \
                 from its noise (each reading's interval holds the other)",
                format_ns(end.median),
                check.moved_share * 100.0,
            )
        }
        (Some(end), None) => format!(
            "{start} at the start, {} at the end: steady (within its noise or {:.0}%)",
            format_ns(end.median),
            check.moved_share * 100.0,
        ),
        (Some(end), Some(_)) => format!(
            "{start} at the start, {} at the end: MOVED",
            format_ns(end.median),
        ),
    }
}

/// How a profile was taken: "2026 samples of cpu-clock (software) every 100 µs over 13824
/// turns of its loop (0.22 s)", and how many samples were lost, if any.
pub fn profile_taken(profile: &Profile) -> String {
    let lost = if profile.lost > 0 {
        format!(", {} lost", profile.lost)
    } else {
        String::new()
    };
    format!(
        "{} samples of {} every {} µs over {} turns of its loop ({:.2} s){lost}",
        profile.samples,
        profile.event,
        profile.period_ns / 1_000,
        profile.iterations,
        profile.duration_ns as f64 / 1e9,
    )
}

/// Hardware counts per call: "12.0 cycles, 40.0 instructions (IPC 3.33), 0.001 branch
/// misses, 0.000 cache misses".
pub fn hardware_counts(counters: &Counters) -> String {
    format!(
        "{:.1} cycles, {:.1} instructions (IPC {:.2}), {:.3} branch misses, {:.3} cache misses",
        counters.cycles,
        counters.instructions,
        counters.ipc,
        counters.branch_misses,
        counters.cache_misses
    )
}

/// What a run must say about the clock it was timed with, if anything.
pub fn clock(clock: &ClockInfo) -> Option<String> {
    if clock.kind == ClockKind::Synthetic {
        return Some("synthetic machine (--synthetic): every figure in this run is made up".into());
    }
    clock.fallback_reason.as_ref().map(|reason| {
        format!(
            "no cycle counter: {reason}; timing with clock_gettime, whose resolution limits \
             figures below a few hundred nanoseconds"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_warning_says_what_it_saw() {
        let high = warning(&Warning::HighVariance { cv: 0.23 });
        assert!(high.contains("23%"), "{high}");
        // Whether --pin helps depends on the machine: the run's advice says it, once.
        assert!(!high.contains("--pin"), "{high}");
        let early = warning(&Warning::NotSteadyState {
            early_samples: 6,
            shift: -0.12,
        });
        assert!(early.contains("first 6 samples were 12% faster"), "{early}");
        let cache = warning(&Warning::CacheSizeMismatch {
            level: "L3".into(),
            measured_bytes: 5 << 20,
            reported_bytes: 32 << 20,
        });
        assert!(
            cache.contains("5120 KiB") && cache.contains("32768 KiB"),
            "{cache}"
        );
        let modes = warning(&Warning::TwoModes {
            low_ns: 28.0,
            high_ns: 110.0,
            low_share: 0.25,
        });
        assert!(modes.contains("25% of the samples near 28.0 ns"), "{modes}");
    }

    /// A steady check says nothing; a moved core-to-core check says that it moved and what
    /// that means for the cross-CPU figures; a two-mode pair in the probe says the latter.
    #[test]
    fn a_machine_that_moved_is_said_once_with_its_consequence() {
        use crate::test_records::{probe, record, result};
        let summary = |median: f64| {
            latlab_engine::stats::Summary::of(&[median, median * 1.01, median * 0.99]).unwrap()
        };
        let check = |name: &str, moved: Option<Warning>| StabilityCheck {
            name: name.into(),
            method: "test".into(),
            start: summary(60.0),
            end: Some(summary(if moved.is_some() { 120.0 } else { 61.0 })),
            moved_share: 0.25,
            moved,
        };
        let mut run = record(Vec::new());
        run.stability = vec![check("stability/core-to-core", None)];
        assert!(stability(&run).is_empty());
        assert!(stability_check(&run.stability[0]).contains("steady"));

        let moved = Warning::MovedDuringRun {
            first_ns: 60.0,
            last_ns: 120.0,
        };
        run.stability = vec![check("stability/core-to-core", Some(moved))];
        let notes = stability(&run);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].starts_with("stability/core-to-core: moved during the run"));
        assert!(notes[1].contains("every figure that crosses CPUs"));
        assert!(stability_check(&run.stability[0]).contains("MOVED"));

        let mut pair = result(
            "thread.core_to_core/one-way/cas/0-1",
            60.0,
            &[(key::CPU_A, 0u64.into()), (key::CPU_B, 1u64.into())],
        );
        pair.warnings.push(Warning::TwoModes {
            low_ns: 30.0,
            high_ns: 110.0,
            low_share: 0.5,
        });
        let run = record(vec![probe("thread.core_to_core", vec![pair])]);
        let notes = stability(&run);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("every figure that crosses CPUs"));
    }

    /// A pair that read under two L2 hits one way (siblings) while the stability check read
    /// across cores (the book's "Threads and processes"). That is a
    /// change of regime, said beside the check with both figures; the same pair
    /// beside a check that also read as siblings is not, and nor is a check that crossed
    /// nothing. A check that crossed the line between start and end is one too.
    #[test]
    fn a_pair_on_one_core_beside_a_check_across_cores_is_a_regime_change() {
        use crate::test_records::{probe, record, result};
        let summary = |median: f64| latlab_engine::stats::Summary::of(&[median; 3]).unwrap();
        let check = |start: f64, end: f64| StabilityCheck {
            name: "stability/core-to-core".into(),
            method: "test".into(),
            start: summary(start),
            end: Some(summary(end)),
            moved_share: 0.25,
            moved: None,
        };
        let mut pair = result(
            "thread.core_to_core/one-way/cas/0-1",
            7.63,
            &[(latlab_engine::names::key::L2_HIT_NS, 4.1.into())],
        );
        pair.warnings.push(Warning::BehavedAsSiblings {
            one_way_ns: 7.63,
            l2_hit_ns: 4.1,
        });
        let mut run = record(vec![probe("thread.core_to_core", vec![pair.clone()])]);
        run.stability = vec![check(51.0, 69.6)];
        let lines = regime_changes(&run);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("thread.core_to_core/one-way/cas/0-1 7.63 ns")
                && lines[0].contains("51.0 ns at the start and 69.6 ns at the end")
                && lines[0].contains("8.20 ns"),
            "{}",
            lines[0]
        );
        assert!(
            stability(&run)
                .iter()
                .any(|n| n.contains("every figure that crosses CPUs"))
        );

        run.stability = vec![check(7.5, 7.9)];
        assert!(regime_changes(&run).is_empty());

        let across = result(
            "thread.core_to_core/one-way/cas/0-1",
            55.0,
            &[(latlab_engine::names::key::L2_HIT_NS, 4.1.into())],
        );
        let mut run = record(vec![probe("thread.core_to_core", vec![across])]);
        run.stability = vec![check(51.0, 69.6)];
        assert!(regime_changes(&run).is_empty());
        run.stability = vec![check(51.0, 7.9)];
        let lines = regime_changes(&run);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("51.0 ns at the start, across cores"),
            "{}",
            lines[0]
        );
    }

    /// A check read far apart at the start and the end is never called steady: where its
    /// intervals overlap (too noisy to flag), it says so.
    #[test]
    fn a_check_read_far_apart_is_never_steady() {
        let reading = |median: f64| latlab_engine::stats::Summary::of(&[median; 5]).unwrap();
        let check = |end: f64| StabilityCheck {
            name: "stability/cache-chase".into(),
            method: "test".into(),
            start: reading(4.3),
            end: Some(reading(end)),
            moved_share: 0.25,
            moved: None,
        };
        assert!(stability_check(&check(4.4)).contains("steady"));
        let apart = stability_check(&check(13.3));
        assert!(
            !apart.contains("steady") && apart.contains("not told"),
            "{apart}"
        );
    }
}
