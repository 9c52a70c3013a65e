//! The placement reference beside the probes whose figures depend on where the CPUs run.
//!
//! A VM's host may move its vCPUs to another core complex, or onto one core's SMT siblings,
//! for a few seconds and back: a core-to-core figure then reads four times the run's, and
//! the stability check at the run's start and end sees nothing. So the check's core-to-core
//! pair is taken again just before and just after each round of every probe that declares
//! the core-to-core check speaks for it (`thread.core_to_core`, the pipe, the hand-off,
//! contended locks and atomics, IPC), and each of the round's results is flagged
//! ([`placement_changed`]) where those readings and the run's start lie apart, or where a
//! result that measures what the reference measures lies apart from all of them. The
//! reference taken after one such probe is the next one's "before" when nothing ran
//! between them.

use latlab_engine::analysis::placement_changed;
use latlab_engine::model::BenchResult;
use latlab_engine::presentation::{StabilityCheck, Template};
use latlab_engine::stats::Summary;
use latlab_probes::stability::{Reference, placement_reference};
use latlab_probes::{ProbeContext, ProbeSpec};

/// What the run knows of its CPUs' placement as it goes.
#[derive(Debug, Default)]
pub(crate) struct PlacementWatch {
    /// The reference at the run's start; `None` where the run took none (one CPU, or the
    /// stability check failed), and nothing is taken beside the probes then.
    start: Option<Summary>,
    /// The probe result the reference measures again.
    reproduces: Option<String>,
    /// The reference taken just after the unit measured last, when that unit depended on
    /// the placement: the next such unit's reading before it.
    last: Option<Summary>,
}

impl PlacementWatch {
    /// Watches from the run's first stability check, whose core-to-core pair (if it took
    /// one) is the start.
    pub(crate) fn from_start(references: &[Reference]) -> PlacementWatch {
        let pair = references.iter().find(|r| r.reproduces.is_some());
        PlacementWatch {
            start: pair.map(|r| r.result.summary.clone()),
            reproduces: pair.and_then(|r| r.reproduces.clone()),
            last: None,
        }
    }

    /// Whether `probe`'s figures depend on the CPUs' placement and the run can watch it.
    pub(crate) fn watches(&self, probe: &ProbeSpec) -> bool {
        self.start.is_some() && !core_to_core_checked(probe).is_empty()
    }

    /// The reading just before a round of a probe this watch `watches`: the one taken after
    /// the unit before it when that unit was watched too, else one taken now. `None` when
    /// it could not be taken (a signal, or a failure, which the probe will meet too).
    pub(crate) fn before(&mut self, ctx: &mut ProbeContext) -> Option<Summary> {
        self.last.take().or_else(|| reading(ctx))
    }

    /// A unit this watch does not watch ran: the last reading is no longer beside the next.
    pub(crate) fn passed(&mut self) {
        self.last = None;
    }

    /// Takes the reading just after a round of `probe` and flags the round's `results`
    /// that the readings around it (`before`, this one, and the run's start) say were
    /// taken in another placement.
    pub(crate) fn after(
        &mut self,
        ctx: &mut ProbeContext,
        probe: &ProbeSpec,
        before: Option<Summary>,
        results: &mut [BenchResult],
    ) {
        self.last = reading(ctx);
        let beside: Vec<Summary> = before.into_iter().chain(self.last.clone()).collect();
        self.flag(probe, &beside, results);
    }

    /// Flags each of `results` that `probe` declares the core-to-core check speaks for,
    /// where [`placement_changed`] says so against the readings `beside` its round.
    fn flag(&self, probe: &ProbeSpec, beside: &[Summary], results: &mut [BenchResult]) {
        let Some(start) = &self.start else {
            return;
        };
        let templates = core_to_core_checked(probe);
        for result in results {
            if !templates.iter().any(|t| Template(t).matches(&result.name)) {
                continue;
            }
            let reproduced = self.reproduces.as_deref() == Some(result.name.as_str());
            let figure = reproduced.then_some(&result.summary);
            result
                .warnings
                .extend(placement_changed(start, beside, figure));
        }
    }
}

/// The templates of `probe`'s results that the core-to-core check speaks for.
fn core_to_core_checked(probe: &ProbeSpec) -> Vec<&'static str> {
    (probe.presentation.checked_by.iter())
        .filter(|c| c.check == StabilityCheck::CoreToCore)
        .flat_map(|c| c.results.iter().copied())
        .collect()
}

/// The placement reference now; `None` where it could not be taken.
fn reading(ctx: &mut ProbeContext) -> Option<Summary> {
    Some(placement_reference(ctx).ok()??.result.summary)
}

#[cfg(test)]
mod tests {
    use latlab_engine::host::{Moved, Noise};
    use latlab_engine::model::RunRecord;
    use latlab_engine::Warning;

    /// The pair the synthetic machine's placement reference measures, as
    /// `thread.core_to_core` names it.
    const PAIR: &str = "thread.core_to_core/one-way/cas/0-1";

    /// `latlab run --synthetic` of the core-to-core pairs and the hand-off on a
    /// synthetic machine whose pair 0-1 reads as `moved` says: its record.
    fn synthetic_run(moved: Vec<Moved>) -> RunRecord {
        // Each measurement drifts as a guest's core-to-core figure wanders within one
        // placement (a tenth in logarithms), its samples jitter: the flag must hear a move
        // through that, and not take the wander for one.
        let noise = Noise {
            seed: 59,
            round_sd: 0.1,
            sample_sd: 0.03,
            moved,
            ..Noise::default()
        };
        crate::run::synthetic_run_with("^(thread.handoff|thread.core_to_core)", noise)
    }

    /// Each result of `run` flagged with a placement change, and the warning.
    fn flagged(run: &RunRecord) -> Vec<(String, Warning)> {
        (run.results())
            .flat_map(|r| r.warnings.iter().map(move |w| (r.name.clone(), w.clone())))
            .filter(|(_, w)| matches!(w, Warning::PlacementChanged { .. }))
            .collect()
    }

    /// The pair's measurements, in order: the run's start check (0), the reading before
    /// the hand-off (1), the one after it (2), which is also the one before
    /// `thread.core_to_core`, whose own first measurement of the pair is 3.
    #[test]
    fn a_placement_change_during_one_probe_is_flagged_and_none_is_not() {
        assert_eq!(flagged(&synthetic_run(Vec::new())), []);

        // The pair reads several times slower for the probe's own measurements only (its
        // first one and the one it takes again at its end), while the reference beside the
        // probe held (the book's "How it measures", "The figures behind the rules").
        let during = synthetic_run(vec![Moved {
            name: PAIR.into(),
            measurements: 3..5,
            factor: 4.5,
        }]);
        let flags = flagged(&during);
        assert_eq!(flags.len(), 1, "{flags:?}");
        let (
            name,
            Warning::PlacementChanged {
                read_ns,
                start_ns,
                beside_ns,
            },
        ) = &flags[0]
        else {
            unreachable!()
        };
        assert_eq!(name, PAIR);
        let read = read_ns.expect("the pair measures what the reference measures");
        assert!(
            read > 4.0 * start_ns && read > 4.0 * beside_ns[1],
            "{flags:?}"
        );
        let line = latlab_report::advice::placement_changes(&during).join("\n");
        assert!(
            line.contains("the CPUs' placement changed during this probe"),
            "{line}"
        );

        // The pair reads 4.5 times slower from the reading before the hand-off on: every
        // figure of both probes that crosses CPUs is flagged, the stability check at the
        // end says MOVED.
        let after_start = synthetic_run(vec![Moved {
            name: PAIR.into(),
            measurements: 1..u64::MAX,
            factor: 4.5,
        }]);
        let names: Vec<String> = flagged(&after_start).into_iter().map(|(n, _)| n).collect();
        assert!(
            names.contains(&"thread.handoff/two-cpus".to_string()),
            "{names:?}"
        );
        assert!(names.contains(&PAIR.to_string()), "{names:?}");
        assert!(!names.contains(&"thread.handoff/same-cpu".to_string()));
        let check = &after_start.stability.last().unwrap();
        assert!(check.moved.is_some(), "{check:?}");
    }
}
