//! Warnings grouped for a person: one line per probe and kind of warning, with how many of
//! the probe's results have it and the range of its figure ("mem.bandwidth: 42 of 96 results
//! unstable (cv 10–29%)"), then what to do about each kind, once. The full list, one warning
//! per result with its advice, stays in the files and behind `--verbose`.

use latlab_engine::environment::Concern;
use latlab_engine::model::{RunRecord, Warning};

/// Kinds of warning that are grouped: each has a figure whose range the group line gives,
/// and one piece of advice. Warnings of other kinds (a skipped part, a failed check, a
/// cache-size disagreement, a verdict) are specific to their result and listed whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Unstable,
    NotSteady,
    Preempted,
    PageFaults,
    FewSamples,
    BelowMinimum,
    NoDifference,
    TwoModes,
    FasterPair,
    Moved,
    Placement,
    CycleUncertain,
    SharedCore,
}

impl Kind {
    fn of(warning: &Warning) -> Option<(Kind, f64)> {
        Some(match *warning {
            Warning::HighVariance { cv } => (Kind::Unstable, cv * 100.0),
            Warning::NotSteadyState { shift, .. } => (Kind::NotSteady, shift * 100.0),
            Warning::Preempted {
                involuntary_switches,
            } => (Kind::Preempted, involuntary_switches as f64),
            Warning::MajorPageFaults { count } => (Kind::PageFaults, count as f64),
            Warning::FewSamples { taken, .. } => (Kind::FewSamples, taken as f64),
            Warning::BelowMinimum { taken, .. } => (Kind::BelowMinimum, taken as f64),
            Warning::DifferenceNotSignificant => (Kind::NoDifference, 0.0),
            Warning::TwoModes {
                high_ns, low_ns, ..
            } => (Kind::TwoModes, high_ns / low_ns),
            Warning::FasterThanOtherPairs { ratio } => (Kind::FasterPair, ratio),
            Warning::MovedDuringRun { first_ns, last_ns } => (Kind::Moved, last_ns / first_ns),
            Warning::PlacementChanged { .. } => {
                (Kind::Placement, crate::advice::placement_spread(warning)?)
            }
            Warning::CycleUncertain {
                add_ns, check_ns, ..
            } => (Kind::CycleUncertain, check_ns / add_ns),
            Warning::BehavedAsSiblings {
                one_way_ns,
                l2_hit_ns,
            } => (Kind::SharedCore, one_way_ns / l2_hit_ns),
            Warning::CacheSizeMismatch { .. }
            | Warning::PartSkipped { .. }
            | Warning::CheckFailed { .. }
            | Warning::ImplausibleCycle { .. }
            | Warning::Phrased { .. } => return None,
        })
    }

    /// What the group's results have, with the range of the figure.
    fn describe(self, low: f64, high: f64) -> String {
        let range = |digits| span(low, high, digits);
        match self {
            Kind::Unstable => format!("unstable (cv {}%)", range(0)),
            Kind::NotSteady => {
                let word = match (low < 0.0, high < 0.0) {
                    (true, true) => "faster",
                    (false, false) => "slower",
                    _ => "faster or slower",
                };
                let (a, b) = (low.abs().min(high.abs()), low.abs().max(high.abs()));
                format!(
                    "not at steady state (first samples {}% {word})",
                    span(a, b, 0)
                )
            }
            Kind::Preempted => format!("preempted while sampling ({} times)", range(0)),
            Kind::PageFaults => format!("waited for storage ({} major page faults)", range(0)),
            Kind::FewSamples => format!("short of samples ({} taken)", range(0)),
            Kind::BelowMinimum => format!("too few samples for an interval (n = {})", range(0)),
            Kind::NoDifference => "no significant difference (the interval includes 0)".into(),
            Kind::TwoModes => format!("in two modes (the upper {}× the lower)", range(1)),
            Kind::FasterPair => format!("faster than the median pair ({}×)", range(1)),
            Kind::Moved => format!("moved during the run ({}× the first figure)", range(2)),
            Kind::Placement => format!(
                "taken in another placement of the CPUs (readings {}× apart)",
                range(1)
            ),
            Kind::SharedCore => {
                format!("behaved as SMT siblings (one way in {} L2 hits)", range(2))
            }
            Kind::CycleUncertain => format!(
                "in cycles uncertain (the check chain read {} add cycles)",
                range(2)
            ),
        }
    }

    /// What to do about this kind, said once under the groups; `quota` is the CPU quota
    /// of the run's control group, in CPUs, when one applied; `pin` whether `--pin` can
    /// still help here.
    fn advice(self, quota: Option<f64>, pin: Pin) -> String {
        match self {
            Kind::Unstable => {
                if let Some(cpus) = quota {
                    return format!(
                        "unstable: the samples' coefficient of variation is high; the run's \
                         control group may use {cpus:.2} CPUs' worth of time (cgroup cpu.max \
                         or cpu.cfs_quota_us) and is stopped whenever it has used it up: \
                         raise the quota, or compare only runs under the same quota"
                    );
                }
                return format!(
                    "unstable: the samples' coefficient of variation is high; the machine was \
                     busy or its frequency changed: close other programs{} raise --samples",
                    pin.suggestion(", try --pin, or").unwrap_or(" or")
                );
            }
            Kind::Preempted => {
                if let Some(cpus) = quota {
                    return format!(
                        "preempted: the run was switched out while sampling, by another task \
                         or by its control group's CPU quota ({cpus:.2} CPUs) running out: \
                         raise the quota, then try --pin to an idle CPU"
                    );
                }
                return format!(
                    "preempted: another task wanted the CPU while sampling: try {}--rt",
                    pin.suggestion("--pin to an idle CPU, or ").unwrap_or("")
                );
            }
            _ => {}
        }
        self.fixed_advice().to_string()
    }

    /// What to do about a kind whose advice does not depend on the run's quota or pinning
    /// ([`Kind::advice`] says the other two).
    fn fixed_advice(self) -> &'static str {
        match self {
            Kind::Unstable | Kind::Preempted => unreachable!("said with the run's quota"),
            Kind::NotSteady => {
                "not at steady state: the first samples differed from the rest (frequency \
                 ramp, cold caches or page faults): raise --samples or --target-time"
            }
            Kind::PageFaults => {
                "major page faults: the benchmark waited for storage while sampling: try --mlock"
            }
            Kind::FewSamples => {
                "short of samples: fewer than wanted fitted in the time budget, so the \
                 intervals are wider: the full suite takes more"
            }
            Kind::BelowMinimum => {
                "too few samples: below the engine's minimum there is no interval or \
                 percentile: the full suite takes more"
            }
            Kind::NoDifference => {
                "no significant difference: the 95% interval of a derived difference includes \
                 zero, so no difference was detected"
            }
            Kind::TwoModes => {
                "two modes: what was measured changed while it ran (a VM's vCPUs moved between \
                 host cores), so the median describes neither: run again, or pin the VM's vCPUs \
                 on the host"
            }
            Kind::FasterPair => {
                "faster than the median pair, though not reported as threads of one core: the \
                 host probably runs these vCPUs on SMT siblings, and may move them"
            }
            Kind::Moved => {
                "moved during the run: measured again later, the figure had moved beyond its \
                 noise: the machine under the run changed; figures in between depend on when \
                 they ran"
            }
            Kind::Placement => {
                "another placement: the run's core-to-core reference, taken again just before \
                 and after the probe, lay apart from its reading at the run's start, or from the \
                 probe's own figure of the same pair: the host moved the vCPUs while the probe \
                 ran, and its figures belong to the placement they met (the stability check \
                 names them): run again, or pin the VM's vCPUs on the host"
            }
            Kind::SharedCore => {
                "behaved as SMT siblings: a line passed between the pair in under two L2 hits, \
                 which no path between cores allows: the host ran the two vCPUs on one core \
                 then; these pairs are left out of the all-pairs summaries"
            }
            Kind::CycleUncertain => {
                "cycles uncertain: the chain of adds and the check's chain (multiplies on \
                 x86-64, exclusive ors on aarch64) disagree on the length of a cycle (a core that folds additions, or a clock that changed \
                 between them): the nanoseconds hold, the figures in cycles do not"
            }
        }
    }
}

/// The grouped warnings of a run.
#[derive(Debug, Default, PartialEq)]
pub struct Grouped {
    /// One per group, or per warning that is not grouped, in the order of the run.
    pub groups: Vec<Group>,
    /// What to do, once per kind that occurred.
    pub advice: Vec<String>,
    /// How many warnings and verdicts the lines stand for.
    pub warnings: usize,
}

/// One line of the grouped warnings and the results it stands for.
#[derive(Debug, Default, PartialEq)]
pub struct Group {
    pub line: String,
    pub results: Vec<String>,
}

impl Grouped {
    /// Each group's line.
    pub fn lines(&self) -> Vec<&str> {
        self.groups.iter().map(|g| g.line.as_str()).collect()
    }
}

/// Groups every warning and verdict of `run`, the points of folded sweeps included.
pub fn grouped(run: &RunRecord) -> Grouped {
    let mut out = Grouped::default();
    let mut kinds = Vec::new();
    for probe in &run.probes {
        let total = probe.results.len();
        // (kind, lowest figure, highest figure, the results with it)
        let mut groups: Vec<(Kind, f64, f64, Vec<&str>)> = Vec::new();
        for result in &probe.results {
            if result.verdict.is_suspect() {
                out.warnings += 1;
                out.groups.push(Group {
                    line: format!(
                        "{}: {}",
                        result.name,
                        crate::advice::verdict(result.verdict)
                    ),
                    results: vec![result.name.clone()],
                });
            }
            for warning in &result.warnings {
                out.warnings += 1;
                let Some((kind, figure)) = Kind::of(warning) else {
                    out.groups.push(Group {
                        line: format!("{}: {}", result.name, crate::advice::warning(warning)),
                        results: vec![result.name.clone()],
                    });
                    continue;
                };
                match groups.iter_mut().find(|g| g.0 == kind) {
                    Some(group) => {
                        group.1 = group.1.min(figure);
                        group.2 = group.2.max(figure);
                        if group.3.last() != Some(&result.name.as_str()) {
                            group.3.push(&result.name);
                        }
                    }
                    None => groups.push((kind, figure, figure, vec![&result.name])),
                }
            }
        }
        groups.sort_by_key(|g| g.0);
        for (kind, low, high, results) in groups {
            let what = kind.describe(low, high);
            out.groups.push(Group {
                line: match results.as_slice() {
                    [only] => format!("{only}: {what}"),
                    _ => format!("{}: {} of {total} results {what}", probe.id, results.len()),
                },
                results: results.iter().map(|r| r.to_string()).collect(),
            });
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    }
    kinds.sort();
    let quota = run
        .environment
        .concerns()
        .into_iter()
        .find_map(|c| match c {
            Concern::CpuQuota { cpus, .. } => Some(cpus),
            _ => None,
        });
    let pin = Pin::of(run);
    out.advice = kinds.into_iter().map(|k| k.advice(quota, pin)).collect();
    out
}

/// Whether `--pin` can still help a run: not when it was pinned already, nor on a machine
/// of fewer than four CPUs, where no CPU is left idle for the measuring thread (latlab's
/// own helpers and the system share the other).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pin {
    Helps,
    CannotHelp,
}

impl Pin {
    /// The fewest CPUs on which one can be set aside for the measuring thread.
    const FEWEST_CPUS: usize = 4;

    fn of(run: &RunRecord) -> Pin {
        let cpus = run.environment.cpu.logical_cpus;
        if run.settings.pinned_cpu.is_none() && cpus >= Pin::FEWEST_CPUS {
            Pin::Helps
        } else {
            Pin::CannotHelp
        }
    }

    /// `text` where pinning helps, `None` where it cannot.
    fn suggestion(self, text: &str) -> Option<&str> {
        (self == Pin::Helps).then_some(text)
    }
}

/// `low–high` with `digits` decimals, or one figure when both read the same.
fn span(low: f64, high: f64, digits: usize) -> String {
    let (a, b) = (format!("{low:.digits$}"), format!("{high:.digits$}"));
    if a == b { a } else { format!("{a}–{b}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{probe, record, result};
    use latlab_engine::Verdict;

    fn warned(name: &str, warnings: Vec<Warning>) -> latlab_engine::BenchResult {
        let mut r = result(name, 10.0, &[]);
        r.warnings = warnings;
        r
    }

    /// `--pin` is suggested where it can help: on four CPUs or more, in a run not pinned
    /// already; never on a two-CPU guest, where no CPU is left idle to pin to.
    #[test]
    fn pinning_is_advised_only_where_it_can_help() {
        let preempted = Warning::Preempted {
            involuntary_switches: 40,
        };
        let unstable = Warning::HighVariance { cv: 0.3 };
        let advice = |cpus: usize, pinned: Option<usize>| {
            let mut run = record(vec![probe(
                "cpu.call",
                vec![warned(
                    "cpu.call/empty",
                    vec![preempted.clone(), unstable.clone()],
                )],
            )]);
            run.environment.cpu.logical_cpus = cpus;
            run.settings.pinned_cpu = pinned;
            grouped(&run).advice.join("\n")
        };
        assert!(!advice(2, None).contains("--pin"), "{}", advice(2, None));
        assert!(advice(2, None).contains("--rt"));
        assert_eq!(
            advice(8, None).matches("--pin").count(),
            2,
            "{}",
            advice(8, None)
        );
        assert!(!advice(8, Some(3)).contains("--pin"));
    }

    /// Many results of a probe with one kind make one line with a count and a range, a single
    /// one is named, unrelated kinds and verdicts keep their own lines, and each kind's
    /// advice is said once.
    #[test]
    fn warnings_are_grouped_by_probe_and_kind() {
        let unstable = |cv| Warning::HighVariance { cv };
        let mut away = result("cpu.call/empty", 1.0, &[]);
        away.verdict = Verdict::OptimisedAway;
        let run = record(vec![
            probe(
                "mem.bandwidth",
                vec![
                    warned("mem.bandwidth/read/4KiB", vec![unstable(0.10)]),
                    warned("mem.bandwidth/read/8KiB", vec![]),
                    warned(
                        "mem.bandwidth/read/16KiB",
                        vec![
                            unstable(0.29),
                            Warning::NotSteadyState {
                                early_samples: 3,
                                shift: 0.2,
                            },
                        ],
                    ),
                    warned("mem.bandwidth/read/32KiB", vec![unstable(0.155)]),
                ],
            ),
            probe(
                "cpu.call",
                vec![away, warned("cpu.call/other", vec![unstable(0.39)])],
            ),
            probe(
                "sched.priority",
                vec![warned(
                    "sched.priority/alone/nice0",
                    vec![Warning::part_skipped("the batch class", "not permitted")],
                )],
            ),
        ]);
        let grouped = grouped(&run);
        assert_eq!(
            grouped.lines(),
            [
                "mem.bandwidth: 3 of 4 results unstable (cv 10–29%)",
                "mem.bandwidth/read/16KiB: not at steady state (first samples 20% slower)",
                "cpu.call/empty: OPTIMISED AWAY? indistinguishable from the empty loop: the \
                 compiler removed the work or it costs less than the loop can resolve; pass \
                 inputs and results through std::hint::black_box",
                "cpu.call/other: unstable (cv 39%)",
                "sched.priority/alone/nice0: the batch class skipped: not permitted",
            ]
        );
        assert_eq!(grouped.warnings, 7);
        assert_eq!(grouped.advice.len(), 2, "{:?}", grouped.advice);
        assert!(grouped.advice[0].starts_with("unstable: "));
        assert!(grouped.advice[1].starts_with("not at steady state: "));
    }

    /// Under a CPU quota, what to do about unstable samples names the quota, not other
    /// programs.
    #[test]
    fn under_a_cpu_quota_the_advice_names_the_quota() {
        let unstable = || warned("p/a", vec![Warning::HighVariance { cv: 0.4 }]);
        let free = record(vec![probe("p", vec![unstable()])]);
        assert!(grouped(&free).advice[0].contains("close other programs"));
        let mut throttled = record(vec![probe("p", vec![unstable()])]);
        throttled.environment.cpu_quota = Some(0.1);
        let advice = &grouped(&throttled).advice[0];
        assert!(
            advice.contains("0.10 CPUs' worth") && advice.contains("cpu.max"),
            "{advice}"
        );
        assert!(!advice.contains("close other programs"), "{advice}");
    }

    #[test]
    fn shifts_both_ways_say_so() {
        let shifted = |shift| Warning::NotSteadyState {
            early_samples: 3,
            shift,
        };
        let run = record(vec![probe(
            "p",
            vec![
                warned("p/a", vec![shifted(-0.12)]),
                warned("p/b", vec![shifted(0.3)]),
            ],
        )]);
        assert_eq!(
            grouped(&run).lines(),
            ["p: 2 of 2 results not at steady state (first samples 12–30% faster or slower)"]
        );
    }
}
