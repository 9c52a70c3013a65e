//! A baseline of several runs, judged since each result's last change point. A baseline that
//! a CI adds each main-branch run to spans whatever happened to the machine over those runs:
//! a kernel upgrade half-way makes the runs before it another level, and a later run judged
//! against all of them is judged across the step (its between-run scatter inflated, its
//! level the mean of two). Each result whose baseline runs step (a change point of
//! [`super::changes_of`], as `latlab history` finds it) is judged against its runs since its
//! last change point only; its older runs are left out of the comparison for that result
//! alone, and the change is said.

use super::runs::HistoryRun;
use super::{Change, HistoryOptions, by_result, changes_of, log_series, steps::MIN_SEGMENT};
use crate::runs::RunShape;
use latlab_engine::model::RunRecord;
use latlab_engine::presentation::Presentations;

/// The change points of `runs` (a baseline's, oldest first), each result's last: for each,
/// that result is removed from the runs before it, so that a comparison judges it against
/// the runs since. Returns the changes, in the order of their results' names; none where
/// the runs are too few for a step to stand between two segments.
pub fn since_last_changes(
    runs: &mut [RunRecord],
    declared: &Presentations,
    options: HistoryOptions,
) -> Vec<Change> {
    if runs.len() < 2 * MIN_SEGMENT {
        return Vec::new();
    }
    let history: Vec<HistoryRun> = (runs.iter())
        .map(|run| HistoryRun::of_run(std::path::Path::new(""), run, 0, declared))
        .collect();
    let (by_name, names) = by_result(&history);
    let mut last_changes = Vec::new();
    for name in names {
        let series = log_series(&by_name[name]);
        let last = changes_of(name, &series, &history, options)
            .into_iter()
            .max_by_key(|change| change.at);
        last_changes.extend(last);
    }
    for change in &last_changes {
        for run in &mut runs[..change.at] {
            for probe in &mut run.probes {
                probe.results.retain(|result| result.name != change.result);
            }
        }
    }
    last_changes
}

/// The sentence that says which results of the baseline `name` (of `runs` runs) are judged
/// since their last change point, naming the first few; `None` where none is.
pub fn since_changes_note(name: &str, runs: usize, changes: &[Change]) -> Option<String> {
    let shown: Vec<String> = (changes.iter().take(3))
        .map(|change| {
            format!(
                "{} {:.3}x from the run of {} ({} of {runs} runs since)",
                change.result,
                change.ratio,
                change.after_run,
                runs - change.at
            )
        })
        .collect();
    let more = match changes.len() {
        0 => return None,
        1..=3 => String::new(),
        n => format!(" and {} more", n - 3),
    };
    let (count, their) = match changes.len() {
        1 => ("1 result".to_string(), "its"),
        n => (format!("{n} results"), "their"),
    };
    Some(format!(
        "the baseline {name}'s runs step: {count} judged against {their} runs since {their} \
         last change point, not across it: {}{more}",
        shown.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{probe, record};
    use latlab_engine::BenchResult;

    /// Ten baseline runs of two results, the second 10% slower from the seventh run on.
    fn baseline() -> Vec<RunRecord> {
        let jitter = [
            1.0, 1.004, 0.997, 1.002, 0.999, 1.003, 0.998, 1.001, 0.996, 1.002,
        ];
        (0..10)
            .map(|run| {
                let stepped = if run >= 6 { 1.1 } else { 1.0 };
                let results = [("a/steady", 10.0), ("a/stepped", 20.0 * stepped)].map(
                    |(name, ns): (&str, f64)| {
                        let samples = (0..20)
                            .map(|k| ns * jitter[run] * (1.0 + 1e-4 * k as f64))
                            .collect();
                        BenchResult::derived(name, "test", samples, Vec::new(), Vec::new()).unwrap()
                    },
                );
                let mut run_record = record(vec![probe("a", results.to_vec())]);
                run_record.started_at = format!("2026-11-{:02}T03:00:00Z", run + 1);
                run_record
            })
            .collect()
    }

    /// A result that stepped in the baseline's runs loses its runs before the step, and
    /// is named; the steady one keeps every run.
    #[test]
    fn a_stepped_result_is_judged_since_its_step() {
        let mut runs = baseline();
        let options = super::super::DEFAULT_HISTORY_OPTIONS;
        let changes = since_last_changes(&mut runs, &Presentations::default(), options);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(
            (changes[0].result.as_str(), changes[0].at),
            ("a/stepped", 6)
        );
        let kept = |name: &str| {
            (runs.iter())
                .filter(|run| run.results().any(|r| r.name == name))
                .count()
        };
        assert_eq!((kept("a/steady"), kept("a/stepped")), (10, 4));
        let note = since_changes_note("ci", 10, &changes).unwrap();
        assert!(
            note.contains("1 result judged against its runs since"),
            "{note}"
        );
        assert!(note.contains("a/stepped 1.09"), "{note}");
        assert!(note.contains("x from the run of 2026-11-07"), "{note}");

        let mut few = baseline()[..5].to_vec();
        assert!(since_last_changes(&mut few, &Presentations::default(), options).is_empty());
    }
}
