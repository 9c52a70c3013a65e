//! The verdicts of one later side, once every result is tested: each result against its
//! own noise, moderated by its family's, and the sweep points adjusted for their number.
//!
//! - **Noise per result.** A result's repetitions (runs, or the rounds of one run) give its
//!   own variance of logarithms, pooled over the two sides. Its family's variances (the
//!   primary results of its probe, or its probe's sweep points; all results where those
//!   are too few) give a prior, which moderates it as far as the family's variances agree
//!   ([`latlab_engine::moderation`]): a stable cache level keeps its own small noise beside
//!   its sweep's volatile edges.
//! - **Between runs, with one run a side.** Rounds of one run cannot show how far a figure
//!   moves between runs. The results' differences between the two runs, each over what its
//!   rounds predict, show it for the family together: the median of their squares over
//!   that of a squared t (one when nothing moves beyond the rounds) scales every result's
//!   variance alike, so each keeps its own noise, widened by how far the runs moved.
//! - **Primary figures on their own.** A result that is not a sweep point (a level, a
//!   per-operation cost) is tested at 5% on its own: one question about the machine each.
//!   A probe's sweep points are adjusted for their number together (Benjamini–Hochberg),
//!   so the hundreds of points of a sweep no longer drown a level.
//! - **Past the threshold with confidence.** Where the noise is known, a result is slower
//!   or faster only when the ratio's 95% interval lies wholly past the threshold: a result
//!   noisy enough to move 3% between runs is not called 2.5% slower by chance one time in
//!   twenty, and two runs of one binary stay "same".
//! - **Two regimes.** A side whose rounds (six or more, of all its runs) split into two
//!   clusters of two or more, apart by more than 5% and four times its set's noise within
//!   a run, and each cluster 2.5 times tighter than the gap, runs in two regimes: said,
//!   and not judged.

use super::{
    ComparedResult, MIN_RESULTS_FOR_SCATTER, RunToRun, SIGNIFICANCE, SameBecause, TestedWithin,
    Tests, Verdict, family,
};
use latlab_engine::moderation::{
    LogDifference, Prior, Variance, median_of_squared_t, pooled_variance,
};
use latlab_engine::stats::{benjamini_hochberg, median_in_place};

/// Two clusters of repetitions closer than this (a share) are one regime.
const REGIME_GAP: f64 = 0.05;
/// How many times the set's standard deviation within a run the gap between two regimes
/// must be.
const REGIME_SEPARATION: f64 = 4.0;
/// How many times either cluster's own width the gap between two regimes must be.
const REGIME_TIGHTNESS: f64 = 2.5;
/// The fewest results of a family from which its own `κ` is taken (see [`run_variances`]):
/// the median of fewer scatters by tens of per cent from one comparison to the next.
const MIN_RESULTS_FOR_FAMILY: usize = 50;
/// The fewest rounds of one side in which two regimes are told.
const MIN_ROUNDS_FOR_REGIMES: usize = 6;

/// One tested result of the side: its row, its tests, and the set it is judged in.
struct Tested<'t> {
    row: usize,
    tests: &'t Tests,
    /// The set whose variances form its prior: its probe, and whether it is a sweep point.
    set: (String, bool),
    /// The variance of its rounds within a run, pooled over every run of both sides.
    within: Option<Variance>,
    /// The variance of its runs' figures within each side, where a side has several.
    between: Option<Variance>,
    /// Rounds per run.
    rounds: f64,
}

impl Tested<'_> {
    /// One run a side: its runs cannot show how far it moves between runs.
    fn one_run_a_side(&self) -> bool {
        self.tests.runs.iter().all(|side| side.len() == 1)
    }

    /// The difference of the sides' figures, in logarithms, and the factor `1/na + 1/nb`
    /// on the variance of one run's figure that gives its variance.
    fn difference(&self) -> Option<(f64, f64)> {
        let [a, b] = &self.tests.runs;
        (!a.is_empty() && !b.is_empty()).then(|| {
            (
                mean(b) - mean(a),
                1.0 / a.len() as f64 + 1.0 / b.len() as f64,
            )
        })
    }
}

/// Gives later side `index` its verdicts, and says how its run-to-run noise was known.
pub(super) fn judge_side(
    results: &mut [ComparedResult],
    tests: &[Vec<Option<Tests>>],
    index: usize,
    threshold: f64,
) -> RunToRun {
    let tested: Vec<Tested> = (tests.iter().enumerate())
        .filter_map(|(row, tested)| tested[index].as_ref().map(|t| (row, t)))
        .map(|(row, tests)| {
            let rounds: Vec<&[f64]> = tests.rounds.iter().map(Vec::as_slice).collect();
            Tested {
                row,
                tests,
                set: (family(&results[row].name).to_string(), tests.sweep_point),
                within: pooled_variance(&rounds),
                between: pooled_variance(&[&tests.runs[0], &tests.runs[1]]),
                rounds: mean(&rounds.iter().map(|r| r.len() as f64).collect::<Vec<_>>()),
            }
        })
        .collect();
    // Each result's variance within a run, moderated by its set's (or all results').
    let within = moderated(&tested, |t| t.within);
    let between = moderated(&tested, |t| t.between);
    let (run_variance, run_to_run) = run_variances(results, &tested, &within, &between);
    let differences: Vec<Option<LogDifference>> = (tested.iter())
        .zip(&run_variance)
        .map(|(t, variance)| {
            let variance = (*variance)?;
            let (difference, scale) = t.difference()?;
            Some(LogDifference {
                difference,
                standard_error: (variance.value * scale).sqrt(),
                degrees: variance.degrees,
            })
        })
        .collect();
    let joint: Vec<f64> = (tested.iter())
        .zip(&differences)
        .map(|(t, d)| d.map_or(t.tests.samples_p, |d| t.tests.samples_p.max(d.p())))
        .collect();
    // Sweep points adjusted within their probe's; primary results on their own.
    let mut adjusted = joint.clone();
    let mut set_size = vec![None; tested.len()];
    let mut sets: Vec<&(String, bool)> = Vec::new();
    for t in tested.iter().filter(|t| t.set.1) {
        if !sets.contains(&&t.set) {
            sets.push(&t.set);
        }
    }
    for sweep in sets {
        let members: Vec<usize> = (0..tested.len())
            .filter(|&i| &tested[i].set == sweep)
            .collect();
        let p: Vec<f64> = members.iter().map(|&i| joint[i]).collect();
        for (&i, q) in members.iter().zip(benjamini_hochberg(&p)) {
            adjusted[i] = q;
            set_size[i] = (members.len() > 1).then_some(TestedWithin {
                results: members.len(),
                sweep_points: sweep.1,
            });
        }
    }
    for (i, t) in tested.iter().enumerate() {
        let typical_sd = typical_within_sd(&tested, &within, &t.set);
        let regimes = (t.tests.sides_rounds.iter()).find_map(|logs| two_regimes(logs, typical_sd));
        let verdict = match regimes {
            Some((low, high)) => Verdict::TwoRegimes {
                low_ns: low.exp(),
                high_ns: high.exp(),
            },
            None => verdict(t.tests, differences[i], adjusted[i], set_size[i], threshold),
        };
        let alpha = SIGNIFICANCE / set_size[i].map_or(1, |set| set.results) as f64;
        if let Some(against) = results[t.row].later[index].as_mut() {
            against.verdict = verdict;
            against.tested_within = set_size[i];
            against.interval = differences[i].map(|d| {
                let (low, high) = d.interval(0.95);
                (low.exp(), high.exp())
            });
            let noise = differences[i].map_or(0.0, |d| d.smallest_called(alpha).exp_m1());
            against.detectable = Some(noise.max(threshold).max(t.tests.resolution));
        }
    }
    run_to_run
}

/// Each result's variance `of` it, moderated by the variances of its set (its probe's
/// primary results, or its probe's sweep points), or of all results where its set has too
/// few ([`Prior::fit`]).
fn moderated(tested: &[Tested], of: impl Fn(&Tested) -> Option<Variance>) -> Vec<Option<Variance>> {
    let all = Prior::fit(&tested.iter().filter_map(&of).collect::<Vec<_>>());
    (tested.iter())
        .map(|t| {
            let own = of(t)?;
            let set: Vec<Variance> = (tested.iter())
                .filter(|other| other.set == t.set)
                .filter_map(&of)
                .collect();
            Some(
                Prior::fit(&set)
                    .or(all)
                    .map_or(own, |prior| prior.moderate(Some(own))),
            )
        })
        .collect()
}

/// The median standard deviation within a run of the results of `set`: the noise two
/// regimes must stand out from (a result's own includes its regimes).
fn typical_within_sd(tested: &[Tested], within: &[Option<Variance>], set: &(String, bool)) -> f64 {
    let mut sds: Vec<f64> = (tested.iter().zip(within))
        .filter(|(t, _)| &t.set == set)
        .filter_map(|(_, w)| w.map(|w| w.value.sqrt()))
        .collect();
    if sds.is_empty() {
        0.0
    } else {
        median_in_place(&mut sds)
    }
}

/// The median of `ln(χ²_d / d)` (Wilson–Hilferty): what the logarithm of a variance of `d`
/// degrees of freedom reads, less the logarithm of the true variance, half the time.
fn log_variance_median(degrees: f64) -> f64 {
    3.0 * (1.0 - 2.0 / (9.0 * degrees)).ln()
}

/// The variance of one run's figure of each result, with its degrees of freedom, and how
/// the side's run-to-run noise was known.
///
/// A run's figure moves between runs by `κ` times the variance of its rounds within a run,
/// `κ` one for all results of a family (its probe's, where it has
/// [`MIN_RESULTS_FOR_FAMILY`] results, else all results', where they are at least
/// [`MIN_RESULTS_FOR_SCATTER`]): at least `1/rounds` (no
/// movement beyond the rounds), more where runs move besides. Several runs a side show it:
/// the median over the family of each result's between-runs variance over its within-run
/// one. One run a side shows it too, from how far the results moved between the two runs
/// over what their rounds predict. Each result's variance is then `κ` times its own
/// within-run variance, pooled with its own between-runs variance where it has one.
fn run_variances(
    results: &[ComparedResult],
    tested: &[Tested],
    within: &[Option<Variance>],
    between: &[Option<Variance>],
) -> (Vec<Option<Variance>>, RunToRun) {
    let median_difference = {
        let mut d: Vec<f64> = (tested.iter())
            .filter(|t| t.one_run_a_side())
            .filter_map(|t| t.difference().map(|(d, _)| d))
            .collect();
        (!d.is_empty()).then(|| median_in_place(&mut d))
    };
    // Each result's evidence of κ, with its family.
    // Each result's own variances, not moderated, so that their scatter is chance's alone.
    let evidence: Vec<Option<(&str, f64, bool)>> = (tested.iter())
        .map(|t| {
            let within = t.within.filter(|w| w.value > 0.0)?;
            let between = &t.between;
            let name = family(&results[t.row].name);
            if t.one_run_a_side() {
                let (difference, scale) = t.difference()?;
                // Its squared difference from the results' median difference (which takes
                // out a change common to all), in units of what its rounds predict.
                let unit = within.value * scale * median_of_squared_t(within.degrees);
                let centred = difference - median_difference.unwrap_or(0.0);
                Some((name, centred.powi(2) / unit, true))
            } else {
                let between = (*between).filter(|b| b.value > 0.0)?;
                let log_ratio =
                    between.value.ln() - within.value.ln() - log_variance_median(between.degrees)
                        + log_variance_median(within.degrees);
                Some((name, log_ratio, false))
            }
        })
        .collect();
    // κ from a set of evidence: one run a side gives squared differences (their median is
    // robust to the few results that changed), several runs give log ratios.
    let kappa_of = |members: &[(usize, f64, bool)], fewest: usize| -> Option<f64> {
        if members.len() < fewest {
            return None;
        }
        let mut values: Vec<f64> = members.iter().map(|m| m.1).collect();
        let middle = median_in_place(&mut values);
        Some(if members[0].2 { middle } else { middle.exp() })
    };
    let group = |one_run: bool, family: Option<&str>| -> Vec<(usize, f64, bool)> {
        (evidence.iter().enumerate())
            .filter_map(|(i, e)| e.map(|e| (i, e)))
            .filter(|(_, (name, _, one))| *one == one_run && family.is_none_or(|f| f == *name))
            .map(|(i, (_, value, one))| (i, value, one))
            .collect()
    };
    let mut families: Vec<(String, bool, f64)> = Vec::new();
    for (name, _, one) in evidence.iter().flatten() {
        if families.iter().any(|(f, o, _)| f == name && o == one) {
            continue;
        }
        if let Some(kappa) = kappa_of(&group(*one, Some(name)), MIN_RESULTS_FOR_FAMILY) {
            families.push((name.to_string(), *one, kappa));
        }
    }
    let overall = [false, true].map(|one| kappa_of(&group(one, None), MIN_RESULTS_FOR_SCATTER));
    let kappa_for = |t: &Tested| -> Option<f64> {
        let one = t.one_run_a_side();
        (families.iter())
            .find(|(f, o, _)| f == family(&results[t.row].name) && *o == one)
            .map(|(_, _, kappa)| *kappa)
            .or(overall[usize::from(one)])
    };
    let variances = (tested.iter())
        .zip(within.iter().zip(between))
        .map(|(t, (within, between))| {
            let floor = 1.0 / t.rounds.max(1.0);
            match (within, kappa_for(t)) {
                (Some(within), Some(kappa)) => {
                    // As a share of the within-run variance, in one run's units.
                    let predicted = Variance {
                        value: kappa.max(floor) * within.value,
                        degrees: within.degrees,
                    };
                    Some(match between {
                        Some(between) => pooled(predicted, *between),
                        None => predicted,
                    })
                }
                // Too few results to tell how far runs move: a side's own runs where it
                // has several, else the rounds taken as repetitions.
                (Some(within), None) => Some(between.unwrap_or(Variance {
                    value: within.value * floor,
                    degrees: within.degrees,
                })),
                (None, _) => *between,
            }
        })
        .collect();
    let one_run: Vec<&Tested> = tested.iter().filter(|t| t.one_run_a_side()).collect();
    let run_to_run = if one_run.is_empty() && !tested.is_empty() {
        RunToRun::Measured
    } else {
        match overall[1] {
            Some(kappa) => {
                let rounds = mean(&one_run.iter().map(|t| t.rounds).collect::<Vec<_>>());
                let inflation = |kappa: f64| (kappa * rounds).max(1.0).sqrt();
                RunToRun::Estimated {
                    inflation: inflation(kappa),
                    results: group(true, None).len(),
                    families: (families.iter())
                        .filter(|(_, one, _)| *one)
                        .map(|(f, _, kappa)| (f.clone(), inflation(*kappa)))
                        .collect(),
                }
            }
            None => RunToRun::Unknown,
        }
    };
    (variances, run_to_run)
}

/// Two variances of one quantity pooled by their degrees of freedom.
fn pooled(a: Variance, b: Variance) -> Variance {
    let degrees = a.degrees + b.degrees;
    Variance {
        value: (a.degrees * a.value + b.degrees * b.value) / degrees,
        degrees,
    }
}

/// The verdict of one result that does not run in two regimes: its difference against its
/// noise (`difference`, where its repetitions give one), its joint p-value `p` adjusted
/// within the `set` of sweep points it belongs to.
fn verdict(
    tests: &Tests,
    difference: Option<LogDifference>,
    p: f64,
    set: Option<TestedWithin>,
    threshold: f64,
) -> Verdict {
    let same = |why| Verdict::Same { p, why };
    if tests.within_resolution {
        same(SameBecause::WithinResolution)
    } else if tests.samples_p >= SIGNIFICANCE {
        same(SameBecause::NotSignificant)
    } else if let Some(d) = difference.filter(|d| d.p() >= SIGNIFICANCE) {
        let (low, high) = d.interval(0.95);
        same(SameBecause::RunToRunNoise {
            half_width: ((high - low) / 2.0).exp_m1(),
        })
    } else if difference.is_some_and(|d| !past_threshold(&d, threshold)) {
        same(SameBecause::WithinThreshold)
    } else if p >= SIGNIFICANCE {
        same(SameBecause::Chance {
            within: set.unwrap_or(TestedWithin {
                results: 1,
                sweep_points: false,
            }),
        })
    } else if tests.within_threshold(threshold) {
        same(SameBecause::WithinThreshold)
    } else if tests.figures.1 > tests.figures.0 {
        Verdict::Slower { p }
    } else {
        Verdict::Faster { p }
    }
}

/// Whether the 95% interval of difference `d` (of logarithms) lies wholly past the
/// threshold, either way.
fn past_threshold(d: &LogDifference, threshold: f64) -> bool {
    let (low, high) = d.interval(0.95);
    let limit = threshold.ln_1p();
    low > limit || high < -limit
}

/// The two regimes `logs` (one side's rounds, of all its runs, in logarithms) fall into, as
/// the logarithms of each cluster's median: the largest gap between neighbours, wider than
/// [`REGIME_GAP`], [`REGIME_SEPARATION`] times the set's standard deviation within a run
/// `typical_sd` and [`REGIME_TIGHTNESS`] times either cluster's own width, with at least two
/// rounds in each cluster. Three rounds cannot tell two regimes from noise (two of three lie close
/// together by chance often enough), so fewer than [`MIN_ROUNDS_FOR_REGIMES`] are never
/// two regimes.
fn two_regimes(logs: &[f64], typical_sd: f64) -> Option<(f64, f64)> {
    if logs.len() < MIN_ROUNDS_FOR_REGIMES {
        return None;
    }
    let mut sorted = logs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let (at, gap) = (1..sorted.len())
        .map(|i| (i, sorted[i] - sorted[i - 1]))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let (low, high) = sorted.split_at(at);
    let width = |cluster: &[f64]| cluster[cluster.len() - 1] - cluster[0];
    let apart = low.len() >= 2
        && high.len() >= 2
        && gap >= REGIME_GAP.ln_1p()
        && gap >= REGIME_SEPARATION * typical_sd
        && gap >= REGIME_TIGHTNESS * width(low).max(width(high));
    apart.then(|| {
        (
            median_in_place(&mut low.to_vec()),
            median_in_place(&mut high.to_vec()),
        )
    })
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_clusters_apart_are_two_regimes_and_scatter_is_not() {
        let logs = |ns: &[f64]| ns.iter().map(|x| x.ln()).collect::<Vec<_>>();
        let flips = [0.90, 1.25, 0.901, 1.251, 0.899, 0.90];
        let (low, high) = two_regimes(&logs(&flips), 0.01).unwrap();
        assert!((low.exp() - 0.90).abs() < 1e-3 && (high.exp() - 1.2505).abs() < 1e-3);
        // Rounds scattered evenly, or apart by less than 5%, or than the set's noise, or
        // one round alone, or too few rounds: one regime.
        assert!(two_regimes(&logs(&[1.0, 1.05, 1.1, 1.15, 1.2, 1.25]), 0.01).is_none());
        assert!(two_regimes(&logs(&[1.0, 1.001, 1.0, 1.04, 1.041, 1.04]), 0.001).is_none());
        assert!(two_regimes(&logs(&[1.0, 1.001, 1.0, 1.3, 1.301, 1.3]), 0.1).is_none());
        assert!(two_regimes(&logs(&[1.0, 1.001, 1.0, 1.0, 1.001, 1.3]), 0.0).is_none());
        assert!(two_regimes(&logs(&[0.9, 1.25, 0.9]), 0.0).is_none());
    }
}
