//! A comparison as JSON (`latlab_comparison_version` 1).

use super::{Compared, Comparison, PriorUse, RunToRun, SIGNIFICANCE, Verdict};
use crate::formats::FileFormat;
use crate::{ExportError, Exporter};
use serde_json::{Value, json};

/// The JSON rendering: the threshold, each run's tally, and every result with each later
/// run's median, ratio, p-value and verdict.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompareJson;

impl Exporter<Compared> for CompareJson {
    fn render(&self, compared: &Compared) -> Result<String, ExportError> {
        json_text(&compared.comparison)
    }
}

/// `latlab compare --json FILE`.
pub(crate) const FORMAT: FileFormat<Compared> = FileFormat {
    name: "json",
    help: "Also write the comparison as JSON here, with each run's tally; '-' for \
        standard output",
    exporter: |_| Box::new(CompareJson),
};

fn json_text(comparison: &Comparison) -> Result<String, ExportError> {
    let document = json!({
        "latlab_comparison_version": 1,
        "baseline": comparison.labels[0],
        "baseline_runs": comparison.runs_per_side[0],
        "threshold": comparison.threshold,
        "significance": SIGNIFICANCE,
        "runs": json_runs(comparison),
        "results": json_results(comparison),
    });
    serde_json::to_string_pretty(&document)
        .map(|mut text| {
            text.push('\n');
            text
        })
        .map_err(|e| ExportError::Encode {
            format: "JSON",
            detail: e.to_string(),
        })
}

/// Each result of the comparison in the JSON: its baseline figure and each later side's.
fn json_results(comparison: &Comparison) -> Vec<Value> {
    (comparison.results.iter())
        .map(|result| {
            let against: Vec<Value> = (result.later.iter())
                .zip(&comparison.labels[1..])
                .map(|(against, label)| match against {
                    Some(a) => json!({
                        "run": label,
                        "median_ns": a.median_ns,
                        "spread": a.spread,
                        "ratio": a.ratio,
                        "p": if a.counts.is_some() { None } else { a.verdict.p() },
                        "difference": a.verdict.word(),
                        "interval": a.interval.map(|(low, high)| [low, high]),
                        "detectable": a.detectable,
                        "too_few_samples": a.too_few_samples,
                        "reach": a.reach,
                        "noise_from": a.noise_from.map(|from| from.word()),
                        "instructions": a.counts.map(|(first, later)| [first, later]),
                        "tested_within": a.tested_within
                            .map_or_else(|| "alone".to_string(), |w| w.to_string()),
                        "regimes_ns": match a.verdict {
                            Verdict::TwoRegimes { low_ns, high_ns } => json!([low_ns, high_ns]),
                            _ => Value::Null,
                        },
                    }),
                    None => json!({ "run": label, "difference": "missing" }),
                })
                .collect();
            json!({
                "name": result.name,
                "baseline_median_ns": result.first_median_ns,
                "baseline_spread": result.first_spread,
                "against": against,
            })
        })
        .collect()
}

/// Each later side in the JSON: its runs, how its run-to-run noise was known, its tally.
fn json_runs(comparison: &Comparison) -> Vec<Value> {
    (comparison.tallies.iter())
        .zip(&comparison.labels[1..])
        .zip(&comparison.runs_per_side[1..])
        .zip(&comparison.run_to_run)
        .zip(&comparison.clock_moves)
        .map(|((((t, label), runs), noise), clock)| {
            json!({
                "excused": comparison.excused.options(),
                "run": label,
                "runs": runs,
                "run_to_run": json_noise(noise),
                "core_clock": clock.map(|c| json!({
                    "cycle_ratio": c.ratio,
                    "results_moved_with_it": c.results,
                    "within_noise": c.within_noise,
                    "judged_in_cycles": c.in_cycles,
                })),
                "slower": t.slower,
                "faster": t.faster,
                "same": t.same,
                "untested": t.untested,
                "not_comparable": t.not_comparable,
                "two_regimes": t.two_regimes,
                "missing": t.missing.iter().map(|m| &m.name).collect::<Vec<_>>(),
                "missing_why": t.missing.iter().map(|m| json!({
                    "result": m.name,
                    "probe": m.probe,
                    "why": m.why.to_string(),
                    "gated": m.gated,
                })).collect::<Vec<_>>(),
                "new": t.new,
            })
        })
        .collect()
}

/// How a side's run-to-run noise was known, in the JSON.
fn json_noise(noise: &RunToRun) -> Value {
    match noise {
        RunToRun::Measured => json!({ "from": "runs" }),
        RunToRun::Estimated {
            inflation,
            results,
            families,
            prior,
        } => {
            let families: serde_json::Map<String, Value> = (families.iter())
                .map(|(family, factor)| (family.clone(), json!(factor)))
                .collect();
            json!({
                "from": "rounds, widened by how far results moved between the runs",
                "inflation": inflation,
                "results": results,
                "families": families,
                "prior": prior.as_ref().map(json_prior),
            })
        }
        RunToRun::Unknown {
            prior,
            results,
            scattered,
        } => json!({
            "from": "rounds only",
            "results": results,
            "scattered": scattered,
            "prior": prior.as_ref().map(json_prior),
        }),
    }
}

/// How a side took the noise tables, in the JSON.
fn json_prior(prior: &PriorUse) -> Value {
    json!({
        "measured": prior.provenance,
        "same_machine": prior.same_machine,
        "given": prior.given,
        "results_held": prior.held,
        "results_set": prior.set,
    })
}
