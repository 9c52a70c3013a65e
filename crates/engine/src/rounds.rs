//! Measuring in rounds: each probe runs once per round, the plan's probes taken round-robin,
//! so that a result's rounds lie seconds apart with other work between them, on buffers and
//! threads set up afresh. Each round takes its share of the samples
//! (`Config::rounds`); the rounds of one result are merged into one, which
//! keeps each round's median beside its samples. How far those medians lie apart is the
//! run-to-run noise that the samples of one measurement, taken back to back, cannot show,
//! and that `compare` must see past before it calls two runs different.

use crate::model::{BenchResult, ProbeOutcome, ProbeStatus};

/// One probe's rounds so far, and their merged outcome.
pub struct ProbeRounds {
    /// Each result's rounds in the order measured, results in the order first measured.
    parts: Vec<(String, Vec<BenchResult>)>,
    merged: ProbeOutcome,
    /// Rounds taken in so far.
    rounds: usize,
}

impl ProbeRounds {
    /// The probe's first round.
    pub fn first(outcome: ProbeOutcome) -> ProbeRounds {
        let parts = (outcome.results.iter())
            .map(|r| (r.name.clone(), vec![r.clone()]))
            .collect();
        ProbeRounds {
            parts,
            merged: outcome,
            rounds: 1,
        }
    }

    /// Whether the probe should be measured in the next round: only one that measured,
    /// whole, in every round so far; a skipped or failed probe is not tried again.
    pub fn wants_another_round(&self) -> bool {
        self.merged.status == ProbeStatus::Ok
    }

    /// The merged outcome so far.
    pub fn outcome(&self) -> &ProbeOutcome {
        &self.merged
    }

    /// Takes in another round: results merged by name (one found only in this round is
    /// added after the others), durations added, and the status this round's when it did
    /// not end well, so that a failure or an interruption in a later round is said. A later
    /// round that failed or was skipped while the earlier ones measured fails the probe
    /// with the round and the reason, the earlier rounds' results kept: the probe measured
    /// part of what it should, which is neither "skipped" nor whole.
    pub fn add(&mut self, round: ProbeOutcome) {
        self.rounds += 1;
        let earlier_measured = !self.merged.results.is_empty();
        for result in round.results {
            match self.parts.iter_mut().find(|(name, _)| *name == result.name) {
                Some((_, rounds)) => rounds.push(result),
                None => self.parts.push((result.name.clone(), vec![result])),
            }
        }
        self.merged.results = (self.parts.iter())
            .filter_map(|(_, rounds)| BenchResult::from_rounds(rounds.clone()))
            .collect();
        self.merged.duration_ns += round.duration_ns;
        let partial = |what: String| ProbeStatus::Failed {
            reason: format!(
                "round {} of the run: {what}; the results of the rounds before it are kept",
                self.rounds
            ),
        };
        self.merged.status = match round.status {
            ProbeStatus::Ok => return,
            ProbeStatus::Skipped { reason } if earlier_measured => {
                partial(format!("skipped — {reason}"))
            }
            ProbeStatus::Failed { reason } if earlier_measured => partial(reason),
            other => other,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn result(name: &str, median: f64) -> BenchResult {
        BenchResult::derived(name, "test", vec![median; 4], Vec::new(), Vec::new()).unwrap()
    }

    fn outcome(status: ProbeStatus, results: Vec<BenchResult>) -> ProbeOutcome {
        ProbeOutcome {
            id: "probe".into(),
            method: "test".into(),
            status,
            results,
            duration_ns: 10,
        }
    }

    /// Rounds merge by name: every sample and each round's median kept, a result seen only
    /// later added at the end, durations added.
    #[test]
    fn rounds_merge_by_result_name() {
        let mut rounds = ProbeRounds::first(outcome(
            ProbeStatus::Ok,
            vec![result("a", 10.0), result("b", 20.0)],
        ));
        rounds.add(outcome(
            ProbeStatus::Ok,
            vec![result("b", 22.0), result("c", 5.0), result("a", 11.0)],
        ));
        rounds.add(outcome(
            ProbeStatus::Ok,
            vec![result("a", 12.0), result("b", 21.0)],
        ));
        let merged = rounds.outcome();
        let names: Vec<&str> = merged.results.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(merged.results[0].round_medians_ns, [10.0, 11.0, 12.0]);
        assert_eq!(merged.results[0].samples_ns.len(), 12);
        assert_eq!(merged.results[0].summary.median, 11.0);
        assert_eq!(merged.results[1].round_medians_ns, [20.0, 22.0, 21.0]);
        // Measured in one round only: no rounds to show.
        assert!(merged.results[2].round_medians_ns.is_empty());
        assert_eq!(merged.duration_ns, 30);
        assert!(rounds.wants_another_round());
    }

    /// A round that was interrupted or failed keeps what the earlier rounds measured, says
    /// so in the status, and the probe is not measured again.
    #[test]
    fn a_round_that_ends_badly_keeps_the_earlier_ones() {
        let mut rounds = ProbeRounds::first(outcome(ProbeStatus::Ok, vec![result("a", 10.0)]));
        rounds.add(outcome(ProbeStatus::Interrupted, Vec::new()));
        assert_eq!(rounds.outcome().status, ProbeStatus::Interrupted);
        assert_eq!(rounds.outcome().results[0].summary.median, 10.0);
        assert!(!rounds.wants_another_round());

        let skipped = ProbeStatus::Skipped {
            reason: "no GPU".into(),
        };
        let rounds = ProbeRounds::first(outcome(skipped.clone(), Vec::new()));
        assert!(!rounds.wants_another_round());

        // A later round skipped or failed after earlier ones measured: the probe failed
        // part-way, not skipped, and says which round and why.
        for (later, said) in [
            (skipped, "round 2 of the run: skipped — no GPU"),
            (
                ProbeStatus::Failed {
                    reason: "CUDA error".into(),
                },
                "round 2 of the run: CUDA error",
            ),
        ] {
            let mut rounds = ProbeRounds::first(outcome(ProbeStatus::Ok, vec![result("a", 10.0)]));
            rounds.add(outcome(later, Vec::new()));
            let ProbeStatus::Failed { reason } = &rounds.outcome().status else {
                panic!("{:?}", rounds.outcome().status);
            };
            assert_eq!(
                reason,
                &format!("{said}; the results of the rounds before it are kept")
            );
            assert_eq!(rounds.outcome().results.len(), 1);
            assert!(!rounds.wants_another_round());
        }
    }
}
