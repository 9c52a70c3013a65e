//! The verdicts of one later side, once every result is tested: each result against its
//! own noise, moderated by its family's, and the sweep points adjusted for their number.
//!
//! - **Noise per result.** A result's rounds, over every run of both sides, less each
//!   run's level and each round's (a two-way analysis of variance: a warm first round that
//!   every run repeats is not noise between runs), give its own variance of logarithms
//!   within a run. Its set's variances (the primary results of its probe, or its probe's
//!   sweep points; all results where those are too few) give a prior, which moderates it
//!   as far as the set's variances agree ([`crate::stats::Prior`]): a stable cache
//!   level keeps its own small noise beside its sweep's volatile edges.
//! - **Between runs.** Rounds of one run cannot show how far a figure moves between runs.
//!   With one run a side, the results' moves between the two runs, each over what its
//!   rounds predict, show it for the set together: their median over that of a squared t
//!   scales every result's variance alike, so each keeps its own noise, widened by how far
//!   the runs moved. With several runs a side, each result's scatter of run figures over
//!   its scatter within a run, across the set, gives a prior for its runs' variance, worth
//!   as much as those ratios agree, pooled with its own runs' scatter.
//! - **Primary figures on their own.** A result that is not a sweep point (a level, a
//!   per-operation cost) is tested at 5% on its own: one question about the machine each.
//!   A probe's sweep points are adjusted for their number together (Benjamini–Hochberg),
//!   so the hundreds of points of a sweep no longer drown a level.
//! - **Past the threshold with confidence.** Where the noise is known, a result is slower
//!   or faster only when the ratio's 95% interval lies wholly past the threshold: a result
//!   noisy enough to move 3% between runs is not called 2.5% slower by chance one time in
//!   twenty, and two runs of one binary stay "same".
//! - **Two regimes.** A side whose rounds (six or more, of all its runs) split into two
//!   clusters of two or more, apart by more than 5% and four times the typical noise
//!   within a run, and each cluster 2.5 times tighter than the gap, runs in two regimes:
//!   said, and not judged.
//! - **The core clock.** Where the later side's core clock moved, the results that moved
//!   with it come here in cycles ([`super::clock`]).

use super::{
    Against, ComparedResult, MIN_RESULTS_FOR_SCATTER, NoiseFrom, PriorUse, RunToRun, SIGNIFICANCE,
    SameBecause, TestedWithin, Tests, Verdict, family,
};
use crate::stats::{
    LogDifference, Prior, Variance, benjamini_hochberg, fisher_upper_tail, mean,
    median_of_squared_t, pooled_variance, student_quantile,
};
use latlab_engine::stats::{mann_whitney_p, median_in_place};
use std::collections::HashMap;

/// Two clusters of repetitions closer than this (a share) are one regime.
const REGIME_GAP: f64 = 0.05;
/// How many times the typical standard deviation within a run (the median over the
/// results compared) the gap between two regimes must be.
const REGIME_SEPARATION: f64 = 4.0;
/// How many times either cluster's own width the gap between two regimes must be.
const REGIME_TIGHTNESS: f64 = 2.5;

/// Below this p-value of an F test, a result's rounds in a pair of single runs scatter
/// more than its noise table says it moves between runs, and they speak for it instead
/// ([`with_priors`]). At 1% a disturbed pair kept the table's noise and failed a gate of
/// unchanged code; at 5% the claims of one pair hold on the next about as often as at 1%
/// (the book's "Comparing runs", "The figures behind the rules").
const WIDER_ROUNDS: f64 = 0.05;

/// How often a change as large as a result's "would have caught" is called: nine times in
/// ten. A change at the critical value itself is called half the time, and a claim that it
/// "would have been caught" would be a coin's toss.
const CAUGHT: f64 = 0.9;

/// The fewest rounds of one side in which two regimes are told.
const MIN_ROUNDS_FOR_REGIMES: usize = 6;

/// One tested result of the side: its row, its tests, and the set it is judged in.
struct Tested<'t> {
    row: usize,
    tests: &'t Tests,
    /// The set whose variances form its prior: its probe, and whether it is a sweep point.
    set: (String, bool),
    /// The variance of its rounds within a run, over every run of both sides, less each
    /// run's level and each round's ([`round_noise`]).
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
    let tested = tested_of(results, tests, index);
    // Each result's variance within a run, moderated by its set's (or all results').
    let within = moderated(&tested, |t| t.within);
    let (run_variance, noise_from, run_to_run) = run_variances(&tested, &within);
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
    let (adjusted, set_size) = adjusted_within_sweeps(&tested, &joint);
    let typical_sd = typical_within_sd(&within);
    for (i, t) in tested.iter().enumerate() {
        let regimes = (t.tests.sides_rounds.iter())
            .find_map(|logs| two_regimes(logs, typical_sd))
            .or_else(|| regimes_in_both_sides(&t.tests.sides_rounds))
            .filter(|&regimes| !a_side_beyond(&t.tests.sides_rounds, regimes));
        let verdict = match regimes {
            Some((low, high)) => Verdict::TwoRegimes {
                low_ns: low.exp(),
                high_ns: high.exp(),
            },
            None if placement_rules(t) => Verdict::AtLevelEnd,
            None => verdict(t.tests, differences[i], adjusted[i], set_size[i], threshold),
        };
        if let Some(against) = results[t.row].later[index].as_mut() {
            against.verdict = verdict;
            if verdict == Verdict::AtLevelEnd {
                continue;
            }
            against.tested_within = set_size[i];
            against.noise_from = noise_from[i];
            with_reach(against, t, differences[i], threshold);
        }
    }
    run_to_run
}

/// Whether `t` is a sweep point at a cache level's end compared one run a side with no
/// table of its machine: the pages each process got rule its figure, and one run a side
/// cannot show how far they move it ([`super::places`]).
fn placement_rules(t: &Tested) -> bool {
    let own_table = (t.tests.prior.as_ref()).is_some_and(|p| p.same_machine || p.given);
    t.tests.at_level_end && t.one_run_a_side() && !own_table
}

/// The results later side `index` can be tested on, each with its noise within a run and
/// between runs, and the set it is tested in.
fn tested_of<'t>(
    results: &[ComparedResult],
    tests: &'t [Vec<Option<Tests>>],
    index: usize,
) -> Vec<Tested<'t>> {
    (tests.iter().enumerate())
        .filter_map(|(row, tested)| tested[index].as_ref().map(|t| (row, t)))
        .map(|(row, tests)| {
            let rounds: Vec<&[f64]> = tests.rounds.iter().map(Vec::as_slice).collect();
            Tested {
                row,
                tests,
                set: (family(&results[row].name).to_string(), tests.sweep_point),
                within: round_noise(&rounds),
                between: pooled_variance(&[&tests.runs[0], &tests.runs[1]]),
                rounds: mean(&rounds.iter().map(|r| r.len() as f64).collect::<Vec<_>>()),
            }
        })
        .collect()
}

/// What `against` (result `t`, its log `difference`, at `threshold`) could tell: its
/// interval, the smallest difference it calls, and the smallest change it would have caught
/// nine times in ten, which never stands beside a larger difference it called the same, nor
/// beside figures that have no ratio.
fn with_reach(
    against: &mut Against,
    t: &Tested,
    difference: Option<LogDifference>,
    threshold: f64,
) {
    let alpha = SIGNIFICANCE / against.tested_within.map_or(1, |set| set.results) as f64;
    against.interval = difference.map(|d| {
        let (low, high) = d.interval(0.95);
        (low.exp(), high.exp())
    });
    against.reach = difference.map(|d| d.smallest_called(SIGNIFICANCE).exp_m1());
    against.margin = difference.map(|d| d.margin_for(CAUGHT));
    // In logarithms: called at its level, and its interval past the threshold, with the
    // margin that makes it so nine times in ten.
    let called = difference.map_or(0.0, |d| d.smallest_called(alpha));
    let past_threshold =
        threshold.ln_1p() + difference.map_or(0.0, |d| d.smallest_called(SIGNIFICANCE));
    let caught = called.max(past_threshold) + against.margin.unwrap_or(0.0);
    against.detectable = Some(caught.exp_m1().max(t.tests.resolution));
    // The test that called it the same (its samples' too) could not tell that much,
    // whatever the runs' spread alone says.
    let observed = t
        .difference()
        .map(|(difference, _)| difference.abs().exp_m1());
    if let (Verdict::Same { .. }, Some(observed), Some(detectable)) =
        (against.verdict, observed, against.detectable)
        && observed >= detectable
    {
        against.detectable = None;
    }
    // Nor could its samples' test, at any size, where they are too few for its level.
    if samples_apart_p(&t.tests.samples) >= alpha {
        against.detectable = None;
        against.too_few_samples = true;
    }
    // A change is a ratio, and figures that are not both positive have none.
    if !against.ratio.is_finite() {
        against.detectable = None;
    }
}

/// The Mann–Whitney p-value of two sides of these sizes whose samples lie wholly apart: the
/// least their test can give. Three samples a side give 0.081, and ten 0.00018, which a
/// sweep of 160 points' level for a change alone in it (0.05 / 160) barely reaches.
fn samples_apart_p([first, later]: &[Vec<f64>; 2]) -> f64 {
    let ranks = |from: usize, count: usize| (from..from + count).map(|r| r as f64).collect();
    let (low, high): (Vec<f64>, Vec<f64>) =
        (ranks(0, first.len()), ranks(first.len(), later.len()));
    mann_whitney_p(&low, &high)
}

/// The p-values `joint` adjusted: each probe's sweep points within its sweep points
/// (Benjamini–Hochberg), primary results on their own; and the set each was adjusted
/// within, where it has more than one member.
fn adjusted_within_sweeps(
    tested: &[Tested],
    joint: &[f64],
) -> (Vec<f64>, Vec<Option<TestedWithin>>) {
    let mut adjusted = joint.to_vec();
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
    (adjusted, set_size)
}

/// Each result's variance `of` it, moderated by the variances of its set (its probe's
/// primary results, or its probe's sweep points), or of all results where its set has too
/// few ([`Prior::fit`]).
fn moderated(tested: &[Tested], of: impl Fn(&Tested) -> Option<Variance>) -> Vec<Option<Variance>> {
    let all = Prior::fit(&tested.iter().filter_map(&of).collect::<Vec<_>>());
    // Each set's variances gathered, and its prior fitted, once.
    let mut sets: HashMap<&(String, bool), Vec<Variance>> = HashMap::new();
    for t in tested {
        if let Some(variance) = of(t) {
            sets.entry(&t.set).or_default().push(variance);
        }
    }
    let priors: HashMap<&(String, bool), Option<Prior>> = (sets.iter())
        .map(|(set, variances)| (*set, Prior::fit(variances)))
        .collect();
    (tested.iter())
        .map(|t| {
            let own = of(t)?;
            let prior = priors.get(&t.set).copied().flatten().or(all);
            Some(prior.map_or(own, |prior| prior.moderate(Some(own))))
        })
        .collect()
}

/// How far a result's rounds scatter within a run beyond what every run shares: the
/// residual variance of its rounds' logarithms once each run's level and each round's
/// (the first round of every run warmer or colder than the rest, say) are taken out, a
/// two-way analysis of variance without replication. A round effect that every run
/// repeats does not move a run's figure between runs, and the plain scatter of the rounds
/// counted it as noise (`sched.priority/alone/idle` moved 0.8% between runs while its
/// rounds scattered 20% within each). Runs with another count of rounds than the first,
/// and a single run, fall back on the plain scatter.
fn round_noise(rounds: &[&[f64]]) -> Option<Variance> {
    let columns = rounds.first()?.len();
    if rounds.len() < 2 || columns < 2 || rounds.iter().any(|r| r.len() != columns) {
        return pooled_variance(rounds);
    }
    let rows = rounds.len();
    let row_means: Vec<f64> = rounds.iter().map(|r| mean(r)).collect();
    let column_means: Vec<f64> = (0..columns)
        .map(|c| rounds.iter().map(|r| r[c]).sum::<f64>() / rows as f64)
        .collect();
    let grand = mean(&row_means);
    let squares: f64 = (rounds.iter().zip(&row_means))
        .flat_map(|(r, row_mean)| {
            (r.iter().zip(&column_means))
                .map(move |(x, column_mean)| (x - row_mean - column_mean + grand).powi(2))
        })
        .sum();
    let degrees = ((rows - 1) * (columns - 1)) as f64;
    Some(Variance {
        value: squares / degrees,
        degrees,
    })
}

/// The median standard deviation within a run of the results compared: the noise two
/// regimes must stand out from (a result's own, or its set's, includes its regimes).
fn typical_within_sd(within: &[Option<Variance>]) -> f64 {
    let mut sds: Vec<f64> = within.iter().flatten().map(|w| w.value.sqrt()).collect();
    if sds.is_empty() {
        0.0
    } else {
        median_in_place(&mut sds)
    }
}

/// How a set's run figures move, read from its results together: what each result's own
/// variance within a run becomes between runs.
#[derive(Debug, Clone, Copy)]
enum Movement {
    /// One run a side: a result's variance between runs is `kappa` times its variance
    /// within a run: the median over the set of each result's squared move between the
    /// runs over what its rounds predict (about the results' median move, which takes out
    /// a change common to all), over the median of a squared t; the few results that
    /// changed do not move a median. Real runs move with heavier tails than that (a result
    /// steady within each run can move 40% between two), which one run a side cannot tell
    /// from a change: take several runs a side for a gate.
    OneRun { kappa: f64 },
    /// Several runs a side: a result's variance between runs is about `prior.variance`
    /// times its variance within a run, worth `prior.degrees` degrees of freedom beside its
    /// own runs' (Smyth's prior, fitted to the set's ratios of the two): where the set's
    /// ratios agree, the rounds speak for each result's runs; where they differ, its own
    /// runs do.
    Runs { prior: Prior },
}

/// The fewest results of a set from which its own [`Movement`] is read; fewer, and all
/// results' is.
const MIN_RESULTS_FOR_MOVEMENT: usize = MIN_RESULTS_FOR_SCATTER;

/// The variance of one run's figure of each result, with its degrees of freedom, where it
/// came from, and how the side's run-to-run noise was known.
///
/// Each result's variance within a run (`within`, its rounds') is scaled by how far its
/// set's run figures move beyond their rounds ([`Movement`], its set's where the set has
/// [`MIN_RESULTS_FOR_MOVEMENT`] results, else all results'); with several runs a side,
/// pooled with its own runs' variance as far as the set's ratios agree. Too few results to
/// read a movement from: a side's own runs where it has several, else the rounds taken as
/// repetitions. With one run a side, a result a noise table has ([`with_priors`]) takes the
/// larger of that and what the table measured.
fn run_variances(
    tested: &[Tested],
    within: &[Option<Variance>],
) -> (Vec<Option<Variance>>, Vec<Option<NoiseFrom>>, RunToRun) {
    let evidence = movement_evidence(tested, within);
    let movements = Movements::read(tested, &evidence);
    let mut from: Vec<Option<NoiseFrom>> = vec![None; tested.len()];
    let variances: Vec<Option<Variance>> = (tested.iter())
        .zip(within)
        .zip(&mut from)
        .map(|((t, within), from)| {
            let floor = 1.0 / t.rounds.max(1.0);
            let (variance, source) = match (within, movements.of(t)) {
                (Some(within), Some(Movement::OneRun { kappa })) => (
                    Some(Variance {
                        value: kappa.max(floor) * within.value,
                        degrees: within.degrees,
                    }),
                    NoiseFrom::Set,
                ),
                (Some(within), Some(Movement::Runs { prior })) => {
                    let predicted = Prior {
                        variance: prior.variance.max(floor) * within.value,
                        degrees: prior.degrees,
                    };
                    (Some(predicted.moderate(t.between)), NoiseFrom::Runs)
                }
                (Some(within), None) => match t.between {
                    Some(between) => (Some(between), NoiseFrom::Runs),
                    None => (
                        Some(Variance {
                            value: within.value * floor,
                            degrees: within.degrees,
                        }),
                        NoiseFrom::Rounds,
                    ),
                },
                (None, _) => (t.between, NoiseFrom::Runs),
            };
            *from = variance.map(|_| source);
            variance
        })
        .collect();
    let variances = borrowed_where_none(tested, variances, &mut from);
    let (variances, prior) = with_priors(tested, variances, &mut from);
    let run_to_run = movements.run_to_run(tested, prior);
    (variances, from, run_to_run)
}

/// Each result's variance, and for one run a side where a noise table has the result, the
/// table's in its place: how far the result moved between runs measured beforehand, worth one
/// degree fewer than the runs behind it, and at least enough that the widest move the table saw
/// between two runs lies within the difference's 95% reach. One run a side shows how far its
/// results moved together beyond their rounds, not how far each one moves: a result steady
/// within each run can move far between runs (the book's "Comparing runs", "The figures behind
/// the rules"), and only runs show that.
///
/// Where the result's own rounds in the two runs scatter more than the table saw it move, and
/// by more than chance lets two estimates of one variance differ (an F test at
/// [`WIDER_ROUNDS`]), the pair was disturbed under it, and its rounds speak instead. A quiet
/// result whose rounds differ by chance keeps the table's noise: a test at 5% widens one result
/// in twenty by chance, and a claim made on one pair would not hold on the next. The set's
/// movement, read from the other results of the pair, is not taken for a result the table has:
/// a sweep's noisy edges would widen its quiet points. Says how the side took the tables.
fn with_priors(
    tested: &[Tested],
    variances: Vec<Option<Variance>>,
    from: &mut [Option<NoiseFrom>],
) -> (Vec<Option<Variance>>, Option<PriorUse>) {
    let mut used: Option<PriorUse> = None;
    let variances = (tested.iter().zip(variances).zip(from.iter_mut()))
        .map(|((t, variance), from)| {
            let Some(prior) = t.tests.prior.as_ref().filter(|_| t.one_run_a_side()) else {
                return variance;
            };
            let degrees = (prior.result.runs - 1) as f64;
            // The widest move the table saw between two unchanged runs lies within the
            // difference's 95% reach: a figure that flips between regimes moves further than
            // its deviation says, and a pair of runs that catches it in both must not call it
            // a change.
            let scale = t.difference().map_or(2.0, |(_, scale)| scale);
            let within_range =
                prior.result.range / (student_quantile(0.975, degrees) * scale.sqrt());
            let measured = Variance {
                value: prior.result.sd.max(within_range).powi(2),
                degrees,
            };
            let use_ = used.get_or_insert_with(|| PriorUse {
                provenance: prior.provenance.clone(),
                same_machine: prior.same_machine,
                given: prior.given,
                set: 0,
                held: 0,
            });
            use_.held += 1;
            let rounds = t.within.map(|within| Variance {
                value: within.value / t.rounds.max(1.0),
                degrees: within.degrees,
            });
            let wider = |rounds: &Variance| {
                fisher_upper_tail(
                    rounds.value / measured.value,
                    rounds.degrees,
                    measured.degrees,
                ) < WIDER_ROUNDS
            };
            match rounds.filter(wider) {
                Some(rounds) => {
                    *from = Some(NoiseFrom::Rounds);
                    Some(rounds)
                }
                None => {
                    use_.set += 1;
                    *from = Some(NoiseFrom::Prior {
                        same_machine: prior.same_machine,
                    });
                    Some(measured)
                }
            }
        })
        .collect();
    (variances, used)
}

/// Each result's evidence of how far its runs move beyond its rounds: one run a side, its
/// squared move (about the results' median move, which takes out a change common to all)
/// over what its rounds predict; several runs, its variance between runs over its variance
/// within a run.
fn movement_evidence(tested: &[Tested], within: &[Option<Variance>]) -> Vec<Option<f64>> {
    let median_move = {
        let mut d: Vec<f64> = (tested.iter())
            .filter(|t| t.one_run_a_side())
            .filter_map(|t| t.difference().map(|(d, _)| d))
            .collect();
        (!d.is_empty()).then(|| median_in_place(&mut d))
    };
    (tested.iter())
        .zip(within)
        .map(|(t, within)| {
            let within = (*within).filter(|w| w.value > 0.0)?;
            if t.one_run_a_side() {
                let (difference, scale) = t.difference()?;
                let centred = difference - median_move.unwrap_or(0.0);
                let unit = within.value * scale * median_of_squared_t(within.degrees);
                Some(centred.powi(2) / unit)
            } else {
                let between = t.between.filter(|b| b.value > 0.0)?;
                Some(between.value / within.value)
            }
        })
        .collect()
}

/// The [`Movement`]s read from the results together: for all results, and for each set with
/// enough results of its own; one run a side and several apart.
struct Movements {
    overall: [Option<Movement>; 2],
    /// Each set's (and whether of one run a side), in the order the results first give it.
    by_set: Vec<((String, bool), bool, Movement)>,
    /// Where each set's is in `by_set`.
    index: HashMap<((String, bool), bool), usize>,
    /// How many results of one run a side gave evidence (their rounds scatter).
    one_run_evidence: usize,
}

impl Movements {
    fn read(tested: &[Tested], evidence: &[Option<f64>]) -> Movements {
        let movement_of = |members: &[usize], one_run: bool| -> Option<Movement> {
            let values: Vec<f64> = members.iter().filter_map(|&i| evidence[i]).collect();
            if values.len() < MIN_RESULTS_FOR_MOVEMENT {
                return None;
            }
            if one_run {
                let kappa = median_in_place(&mut values.clone());
                Some(Movement::OneRun { kappa })
            } else {
                let degrees = (members.iter())
                    .find_map(|&i| tested[i].between.map(|b| b.degrees))
                    .unwrap_or(1.0);
                let ratios: Vec<Variance> = (values.iter())
                    .map(|&value| Variance { value, degrees })
                    .collect();
                Prior::fit(&ratios).map(|prior| Movement::Runs { prior })
            }
        };
        // The results of one run a side and of several apart, overall and by set, each
        // gathered in one pass.
        let mut overall_members: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
        let mut order: Vec<((String, bool), bool)> = Vec::new();
        let mut set_members: HashMap<((String, bool), bool), Vec<usize>> = HashMap::new();
        for (i, t) in tested.iter().enumerate() {
            let one = t.one_run_a_side();
            overall_members[usize::from(one)].push(i);
            let members = set_members.entry((t.set.clone(), one)).or_insert_with(|| {
                order.push((t.set.clone(), one));
                Vec::new()
            });
            members.push(i);
        }
        let overall = [false, true].map(|one| movement_of(&overall_members[usize::from(one)], one));
        let by_set: Vec<((String, bool), bool, Movement)> = (order.into_iter())
            .filter_map(|(set, one)| {
                let movement = movement_of(&set_members[&(set.clone(), one)], one)?;
                Some((set, one, movement))
            })
            .collect();
        let index = (by_set.iter().enumerate())
            .map(|(i, (set, one, _))| ((set.clone(), *one), i))
            .collect();
        let one_run_evidence = (overall_members[1].iter())
            .filter(|&&i| evidence[i].is_some())
            .count();
        Movements {
            overall,
            by_set,
            index,
            one_run_evidence,
        }
    }

    /// The movement that speaks for `t`: its set's, else all results'.
    fn of(&self, t: &Tested) -> Option<Movement> {
        let one = t.one_run_a_side();
        (self.index.get(&(t.set.clone(), one)))
            .map(|&i| self.by_set[i].2)
            .or(self.overall[usize::from(one)])
    }

    /// How the side's run-to-run noise was known, for the summary line: `prior` is how
    /// its results took the noise tables.
    fn run_to_run(&self, tested: &[Tested], prior: Option<PriorUse>) -> RunToRun {
        let one_run: Vec<&Tested> = tested.iter().filter(|t| t.one_run_a_side()).collect();
        if one_run.is_empty() && !tested.is_empty() {
            return RunToRun::Measured;
        }
        let rounds = mean(&one_run.iter().map(|t| t.rounds).collect::<Vec<_>>());
        let inflation = |movement: &Movement| match movement {
            Movement::OneRun { kappa, .. } => (kappa * rounds).max(1.0).sqrt(),
            Movement::Runs { .. } => 1.0,
        };
        match &self.overall[1] {
            Some(movement) => RunToRun::Estimated {
                inflation: inflation(movement),
                results: one_run.len(),
                families: (self.by_set.iter())
                    .filter(|(_, one, _)| *one)
                    .map(|((family, sweep), _, movement)| {
                        let set = if *sweep {
                            "sweep points"
                        } else {
                            "primary results"
                        };
                        (format!("{family} {set}"), inflation(movement))
                    })
                    .collect(),
                prior,
            },
            None => RunToRun::Unknown {
                prior,
                results: one_run.len(),
                scattered: self.one_run_evidence,
            },
        }
    }
}

/// Each result's variance, and for one with none (a figure derived once a run, whose runs
/// the stability checks left one a side), the median of its set's (or of all results'):
/// its samples alone cannot show how far it moves between runs, and a test on them would
/// call every such move a difference. Where no result has one, none is given (the samples'
/// test alone judges).
fn borrowed_where_none(
    tested: &[Tested],
    variances: Vec<Option<Variance>>,
    from: &mut [Option<NoiseFrom>],
) -> Vec<Option<Variance>> {
    let median_of = |members: Vec<Variance>| -> Option<Variance> {
        if members.is_empty() {
            return None;
        }
        let mut values: Vec<f64> = members.iter().map(|v| v.value).collect();
        let mut degrees: Vec<f64> = members.iter().map(|v| v.degrees).collect();
        Some(Variance {
            value: median_in_place(&mut values),
            degrees: median_in_place(&mut degrees),
        })
    };
    let all = median_of(variances.iter().flatten().copied().collect());
    (tested.iter().zip(&variances).zip(from))
        .map(|((t, own), from)| {
            own.or_else(|| {
                let set = (tested.iter().zip(&variances))
                    .filter(|(other, _)| other.set == t.set)
                    .filter_map(|(_, v)| *v)
                    .collect();
                let borrowed = median_of(set).or(all);
                *from = borrowed.map(|_| NoiseFrom::Set);
                borrowed
            })
        })
        .collect()
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
pub(super) fn past_threshold(d: &LogDifference, threshold: f64) -> bool {
    let (low, high) = d.interval(0.95);
    let limit = threshold.ln_1p();
    low > limit || high < -limit
}

/// The two regimes `logs` (one side's rounds, of all its runs, in logarithms) fall into, as
/// the logarithms of each cluster's median: the largest gap between neighbours, wider than
/// [`REGIME_GAP`], [`REGIME_SEPARATION`] times the typical standard deviation within a run
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

/// The two regimes both sides' rounds together fall into (as [`two_regimes`] finds them
/// in one side's), where each side has rounds in both: the sides then differ in how often
/// they ran in each regime, not in either regime's figure: three runs of one binary that
/// happened to take mostly one regime against three mostly in the other read "slower"
/// (the book's "Comparing runs", "The figures behind the rules"). A change moves every round of the later side, and no
/// round of the first side lies among them. The gap is measured against each regime's own
/// width alone, not against the typical noise within a run: on a guest where many results
/// flip so, that typical noise is itself made of the flips.
/// Each side needs [`MIN_ROUNDS_FOR_REGIMES`] rounds of its own, as one side alone does.
fn regimes_in_both_sides(sides: &[Vec<f64>; 2]) -> Option<(f64, f64)> {
    // Each side must have rounds enough to show two regimes of its own: three rounds a
    // side, six together, would call a noisy result's chance gap two regimes.
    if sides.iter().any(|side| side.len() < MIN_ROUNDS_FOR_REGIMES) {
        return None;
    }
    let all: Vec<f64> = sides.iter().flatten().copied().collect();
    let (low, high) = two_regimes(&all, 0.0)?;
    let boundary = (low + high) / 2.0;
    let in_both =
        |logs: &Vec<f64>| logs.iter().any(|&x| x < boundary) && logs.iter().any(|&x| x > boundary);
    sides.iter().all(in_both).then_some((low, high))
}

/// Whether every round of a side lies beyond both `regimes` (logarithms of each cluster's
/// median), by more than [`REGIME_GAP`]: a side that ran in neither regime changed, and a
/// baseline's two regimes must not hide that (a benchmark sixteen times slower read "two
/// regimes" beside a baseline whose rounds split 28.9 / 38.2 ns).
fn a_side_beyond(sides: &[Vec<f64>; 2], (low, high): (f64, f64)) -> bool {
    let gap = REGIME_GAP.ln_1p();
    sides.iter().any(|logs| {
        !logs.is_empty()
            && (logs.iter().all(|&x| x > high + gap) || logs.iter().all(|&x| x < low - gap))
    })
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

    /// A later side that ran in neither of the baseline's regimes changed: far above both
    /// (sixteen times the work), or below both; within their span it does not.
    #[test]
    fn a_side_beyond_both_regimes_is_a_change_not_two_regimes() {
        let logs = |ns: &[f64]| ns.iter().map(|x| x.ln()).collect::<Vec<_>>();
        let baseline = logs(&[28.9, 38.2, 29.1, 38.0, 28.7, 38.4]);
        let regimes = two_regimes(&baseline, 0.01).unwrap();
        for (later, beyond) in [
            (logs(&[600.0, 610.0]), true),
            (logs(&[20.0, 20.5]), true),
            (logs(&[29.0, 38.1]), false),
            (logs(&[39.0, 38.5]), false),
        ] {
            let sides = [baseline.clone(), later];
            assert_eq!(a_side_beyond(&sides, regimes), beyond, "{:?}", sides[1]);
        }
    }

    #[test]
    fn sides_that_ran_in_both_regimes_in_other_proportions_run_in_two_regimes() {
        let logs = |x: &[f64]| x.iter().map(|x| x.ln()).collect::<Vec<f64>>();
        // Mostly the fast regime, then mostly the slow one: neither side alone has two
        // rounds in each regime.
        let first = logs(&[
            211.2, 204.9, 209.4, 211.3, 203.5, 198.9, 267.2, 206.1, 209.5,
        ]);
        let later = logs(&[
            267.3, 270.3, 277.7, 202.6, 262.5, 283.4, 281.3, 275.4, 276.0,
        ]);
        assert!(two_regimes(&first, 0.0).is_none() && two_regimes(&later, 0.0).is_none());
        let (low, high) = regimes_in_both_sides(&[first.clone(), later]).unwrap();
        assert!((low.exp() - 207.0).abs() < 5.0 && (high.exp() - 272.0).abs() < 8.0);
        // A change: every later round moved, none of the first side's among them.
        let changed = logs(&[
            267.3, 270.3, 277.7, 272.6, 262.5, 283.4, 281.3, 275.4, 276.0,
        ]);
        assert!(regimes_in_both_sides(&[first, changed]).is_none());
        // Three rounds a side are too few, together as alone.
        let sides = [logs(&[0.90, 1.25, 0.90]), logs(&[1.25, 0.90, 1.25])];
        assert!(regimes_in_both_sides(&sides).is_none());
    }

    /// The least p-value of two sides' samples: three a side never reach 5%, and ten a side
    /// reach the level of a change alone in a sweep of 160 points only when wholly apart.
    #[test]
    fn samples_wholly_apart_give_the_least_p_their_count_allows() {
        let sides = |n: usize| [vec![1.0; n], vec![2.0; n]];
        assert!(samples_apart_p(&sides(3)) > SIGNIFICANCE);
        assert!(samples_apart_p(&sides(10)) < SIGNIFICANCE / 160.0);
        assert!(samples_apart_p(&sides(10)) > SIGNIFICANCE / 1000.0);
        assert!(samples_apart_p(&sides(30)) < samples_apart_p(&sides(10)));
    }
}
