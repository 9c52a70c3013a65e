//! What every rendering of a comparison shares: the verdicts' labels, the environments side
//! by side, the results table, the notes on noise and the summary. Each format is a file of
//! its own (text.rs, markdown.rs, csv.rs, json.rs, html.rs), an [`crate::Exporter`] of a
//! [`super::Compared`].

use super::{
    Against, Comparison, MIN_RESULTS_FOR_SCATTER, PriorUse, RunToRun, SameBecause, Side, Unsteady,
    Verdict,
};
use crate::text_table::{Align, TextTable};
use crate::units::{format_clock, format_ns, format_ratio, plural};
use latlab_engine::environment::describe_core_classes;
use latlab_engine::model::RunRecord;
use std::fmt::Write as _;

impl Verdict {
    pub(crate) fn label(self, threshold: f64) -> String {
        match self {
            Verdict::Faster { p } => format!("faster (p {})", format_p(p)),
            Verdict::Slower { p } => format!("slower (p {})", format_p(p)),
            Verdict::Same { p, why } => match why {
                SameBecause::NotSignificant => format!("same (p {})", format_p(p)),
                SameBecause::WithinThreshold => {
                    format!(
                        "same (p {}, within {}%)",
                        format_p(p),
                        format_percent(threshold)
                    )
                }
                SameBecause::WithinResolution => "same (within a clock tick)".into(),
                SameBecause::CountsAgree => format!(
                    "same (instructions within {}%)",
                    format_percent(super::COUNT_TOLERANCE)
                ),
                SameBecause::RunToRunNoise { half_width } => format!(
                    "same (within run-to-run noise, {})",
                    format_either_way(half_width)
                ),
                SameBecause::Chance { within } => {
                    format!("same (p {}, adjusted within {within})", format_p(p))
                }
                SameBecause::FollowsClock { clock_ratio } => format!(
                    "same in cycles (p {}; moved with the core clock, {})",
                    format_p(p),
                    clock_words(clock_ratio)
                ),
            },
            Verdict::TwoRegimes { low_ns, high_ns } => format!(
                "two regimes: {} / {}",
                format_ns(low_ns),
                format_ns(high_ns)
            ),
            Verdict::Untested => "untested".into(),
            Verdict::AtLevelEnd => "not judged (at a cache level's end, where the pages a \
                                    process gets rule the figure: one run a side cannot tell \
                                    that from a change; take several runs a side)"
                .into(),
            Verdict::NotComparable {
                check,
                how: Unsteady::DuringRun,
            } => format!("not comparable (the machine moved: {check})"),
            Verdict::NotComparable {
                check,
                how: Unsteady::Placement,
            } => format!("not comparable (taken in another placement of the CPUs: {check})"),
            Verdict::NotComparable {
                check,
                how: Unsteady::BetweenRuns { first_ns, later_ns },
            } => format!(
                "not comparable (the machine differs: {check} {} against {})",
                format_ns(later_ns),
                format_ns(first_ns)
            ),
        }
    }
}

impl Against {
    /// The verdict's label, with the set its p-value was adjusted within and, beside a
    /// "same", the smallest change this comparison would have called and where its noise
    /// came from: `same (p 0.571); adjusted within 108 sweep points of its probe; would have
    /// caught ±4.2% (noise: prior)`.
    pub(crate) fn label(&self, threshold: f64) -> String {
        if let Some((first, later)) = self.counts {
            let counts = format!("instructions {} → {} a call", count(first), count(later));
            return match self.verdict {
                Verdict::Same { .. } => format!(
                    "same ({counts}, within {}%)",
                    format_percent(super::COUNT_TOLERANCE)
                ),
                verdict => format!("{} ({counts})", verdict.word()),
            };
        }
        let mut label = self.verdict.label(threshold);
        let said_its_set = matches!(
            self.verdict,
            Verdict::Same {
                why: SameBecause::Chance { .. },
                ..
            }
        );
        if let Some(within) = self.tested_within
            && self.verdict.p().is_some()
            && !said_its_set
        {
            let _ = write!(label, "; adjusted within {within}");
        }
        if matches!(self.verdict, Verdict::Same { .. }) && self.too_few_samples {
            label.push_str("; too few samples to call any change within its set");
        }
        if let (Verdict::Same { .. }, Some(share)) = (self.verdict, self.detectable) {
            let _ = write!(label, "; would have caught {}", format_either_way(share));
            if let Some(from) = self.noise_from {
                let _ = write!(label, " (noise: {})", from.word());
            }
        }
        label
    }
}

/// How the later side's clock ran, its cycle `ratio` times the first's: `ran 6.0% slower`.
pub(super) fn clock_words(ratio: f64) -> String {
    let (share, word) = match ratio >= 1.0 {
        true => (1.0 - 1.0 / ratio, "slower"),
        false => (1.0 / ratio - 1.0, "faster"),
    };
    format!("ran {}% {word}", format_percent(share))
}

/// What a comparison made of a clock's move: judged in cycles within its noise, or beyond
/// it under `--accept-clock-moves`, or every result in time.
fn clock_outcome(clock: &super::ClockMove) -> String {
    let results = |n: usize| format!("{} on the core clock", plural(n, "result"));
    match (clock.within_noise, clock.in_cycles) {
        (true, _) => format!(
            "within its noise between runs: {} moved with it, judged in cycles, the same there",
            results(clock.results)
        ),
        (false, true) => format!(
            "beyond its noise between runs, taken as noise (--accept-clock-moves): {} moved \
             with it, judged in cycles, the same there",
            results(clock.results)
        ),
        (false, false) => format!(
            "beyond its noise between runs: every result judged in time, and {} moved with it",
            results(clock.results)
        ),
    }
}

/// A count per call: whole where it is large, to a hundredth where small.
fn count(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

fn format_p(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

impl Comparison {
    /// One line per later side: how its run-to-run noise was known.
    pub fn noise_lines(&self) -> Vec<String> {
        let first = &self.labels[0];
        (self.run_to_run.iter())
            .zip(&self.labels[1..])
            .zip(&self.runs_per_side[1..])
            .map(|((noise, label), runs)| match noise {
                RunToRun::Measured => format!(
                    "{label} against {first}: run-to-run noise measured on {} and {runs} \
                     runs (each result's run medians, pooled with what its rounds and its \
                     set's predict, 95%)",
                    self.runs_per_side[0]
                ),
                RunToRun::Estimated {
                    inflation,
                    results,
                    families,
                    prior,
                } => format!(
                    "{label} against {first}: one run a side; each result's rounds show how \
                     far it moves within a run, and its noise is that, widened by how far \
                     results moved between the two runs beyond their rounds ({}){}; several \
                     runs a side measure it instead",
                    family_inflation(*inflation, *results, families),
                    prior_clause(prior.as_ref()),
                ),
                RunToRun::Unknown {
                    prior,
                    results,
                    scattered,
                } => {
                    let few = if *results < MIN_RESULTS_FOR_SCATTER {
                        format!("fewer than {MIN_RESULTS_FOR_SCATTER} results")
                    } else {
                        format!(
                            "only {scattered} of its {results} results with rounds that \
                             scatter ({MIN_RESULTS_FOR_SCATTER} are needed)"
                        )
                    };
                    format!(
                        "{label} against {first}: one run a side and {few}, so only the rounds \
                         within each run show the noise, not how far results move between \
                         runs{}: take several runs a side (a directory each) before trusting \
                         a difference",
                        prior_clause(prior.as_ref()),
                    )
                }
            })
            .collect()
    }

    /// One line per later run: "B against A: 3 slower, 2 faster, 40 same, 1 untested; 2 only
    /// in A, 1 only in B".
    pub fn summary_lines(&self) -> Vec<String> {
        let first = &self.labels[0];
        self.tallies
            .iter()
            .zip(&self.labels[1..])
            .zip(&self.clock_moves)
            .map(|((t, label), clock)| {
                let mut line = format!(
                    "{label} against {first}: {} slower, {} faster, {} same",
                    t.slower, t.faster, t.same
                );
                if t.two_regimes > 0 {
                    let _ = write!(line, ", {} in two regimes", t.two_regimes);
                }
                if t.untested > 0 {
                    let _ = write!(line, ", {} untested", t.untested);
                }
                if t.not_comparable > 0 {
                    let _ = write!(
                        line,
                        ", {} not comparable (the machine changed)",
                        t.not_comparable
                    );
                }
                let mut only = Vec::new();
                if !t.missing.is_empty() {
                    only.push(format!("{} only in {first}", t.missing.len()));
                }
                if !t.new.is_empty() {
                    only.push(format!("{} only in {label}", t.new.len()));
                }
                if !only.is_empty() {
                    let _ = write!(line, "; {}", only.join(", "));
                }
                if let Some(clock) = clock {
                    let _ = write!(
                        line,
                        "; {label}'s core clock {} (its cycle {} {first}'s), {}",
                        clock_words(clock.ratio),
                        format_ratio(clock.ratio),
                        clock_outcome(clock)
                    );
                }
                line
            })
            .collect()
    }
}

/// One line of the environment table: its name, and how to read it from a run.
type EnvironmentField = (&'static str, fn(&RunRecord) -> String);

/// The environments, one column per side (its first run), `≠` before each line where they
/// differ.
pub(super) fn environment_table(sides: &[Side]) -> TextTable {
    let fields: [EnvironmentField; 11] = [
        ("host", |r| r.environment.host_name.clone()),
        ("cpu", |r| {
            format!(
                "{}, {} CPUs",
                r.environment.cpu.model, r.environment.cpu.logical_cpus
            )
        }),
        ("core classes", |r| {
            describe_core_classes(&r.environment.core_classes)
        }),
        ("kernel", |r| r.environment.kernel.clone()),
        ("virtualisation", |r| {
            r.environment
                .virtualization
                .clone()
                .unwrap_or_else(|| "none".into())
        }),
        ("clocksource", |r| {
            r.environment
                .clocksource
                .clone()
                .unwrap_or_else(|| "unknown".into())
        }),
        ("governor", |r| {
            r.environment
                .cpu
                .governor
                .clone()
                .unwrap_or_else(|| "none".into())
        }),
        ("microcode", |r| {
            r.environment
                .cpu
                .microcode
                .clone()
                .unwrap_or_else(|| "unknown".into())
        }),
        ("clock", |r| format_clock(&r.clock)),
        ("suite", |r| r.settings.suite.clone()),
        ("latlab", |r| r.latlab_version.clone()),
    ];
    let mut headers = vec![String::new(), "environment".to_string()];
    headers.extend(sides.iter().map(|side| match side.runs.len() {
        1 => side.label.clone(),
        n => format!("{} ({n} runs)", side.label),
    }));
    let rows = fields
        .iter()
        .map(|(name, value)| {
            let values: Vec<String> = sides.iter().map(|side| value(side.first_run())).collect();
            let differs = values.iter().any(|v| *v != values[0]);
            let mut row = vec![if differs { "≠" } else { "" }.to_string(), name.to_string()];
            row.extend(values);
            row
        })
        .collect();
    TextTable { headers, rows }
}

/// The results of the first run, each beside its namesakes in the later runs. In-between
/// sweep points are left out when `fold` is set; returns how many were.
pub(super) fn results_table(comparison: &Comparison, fold: bool) -> (TextTable, usize) {
    let first_label = &comparison.labels[0];
    let mut headers = vec!["benchmark".to_string(), first_label.clone()];
    for label in &comparison.labels[1..] {
        headers.push(label.clone());
        headers.push(format!("{label}/{first_label}"));
        headers.push("difference".to_string());
    }
    let mut folded = 0;
    let mut rows = Vec::new();
    for result in &comparison.results {
        if fold && result.sweep_detail {
            folded += 1;
            continue;
        }
        let mut row = vec![
            result.name.clone(),
            format_figure(result.first_median_ns, result.first_spread),
        ];
        for against in &result.later {
            match against {
                Some(a) => {
                    row.push(format_figure(a.median_ns, a.spread));
                    row.push(format_ratio(a.ratio));
                    row.push(a.label(comparison.threshold));
                }
                None => row.extend(["—".to_string(), String::new(), "not in this run".into()]),
            }
        }
        rows.push(row);
    }
    (TextTable { headers, rows }, folded)
}

/// The results some later run has and the first lacks, one line per run.
pub(super) fn only_in_later_runs(comparison: &Comparison) -> Vec<String> {
    comparison
        .tallies
        .iter()
        .zip(&comparison.labels[1..])
        .filter(|(t, _)| !t.new.is_empty())
        .map(|(t, label)| format!("only in {label}: {}", t.new.join(", ")))
        .collect()
}

/// Every column of a comparison reads from the left.
pub(super) fn all_left(table: &TextTable) -> Vec<Align> {
    vec![Align::Left; table.headers.len()]
}

pub(super) fn footnote(threshold: f64) -> String {
    format!(
        "difference: faster or slower only when the Mann–Whitney U test on the two sides' \
         samples and a t test of the run figures against the result's own noise (its rounds' \
         scatter, moderated by its set's, widened by how far runs move beyond their rounds) \
         both reject, their larger p is below 0.05 (a sweep point's adjusted within its \
         probe's sweep points, Benjamini–Hochberg), the ratio's 95% interval lies past {}% \
         and the figures are one clock tick per operation apart; p is that p; 'would have \
         caught' is the smallest change the test would have called nine times in ten; ± is half the range of a \
         side's round or run medians; figures are medians (of the runs' medians, for several \
         runs); a benchmark whose instructions both sides counted (--count) is judged by the \
         counts instead, the same within 0.1%",
        format_percent(threshold)
    )
}

/// How far results moved between two runs beyond their rounds, as a factor on each
/// result's standard deviation: `×1.4 for mem.latency sweep points, ×2.0 for the rest (463
/// results in all), on each result's standard deviation`.
fn family_inflation(inflation: f64, results: usize, families: &[(String, f64)]) -> String {
    let mut parts: Vec<String> = (families.iter())
        .map(|(family, factor)| format!("×{factor:.1} for {family}"))
        .collect();
    let rest = if families.is_empty() {
        "all"
    } else {
        "the rest"
    };
    parts.push(format!(
        "×{inflation:.1} for {rest} ({results} results in all), on each result's standard \
         deviation"
    ));
    parts.join(", ")
}

/// How a side took the noise tables, as a clause of its noise line: `; for the 640 results
/// a table has, how far each moved between 12 runs of AMD EPYC, 2 CPUs, kvm on 2026-11-28
/// (this machine's table), or its rounds where they scatter more (12 of them)`.
fn prior_clause(prior: Option<&PriorUse>) -> String {
    let Some(prior) = prior else {
        return String::new();
    };
    let whose = match (prior.given, prior.same_machine) {
        (true, true) => "the table given, of this machine",
        (true, false) => "the table given, of another machine, taken as given",
        (false, true) => "this machine's table",
        (false, false) => {
            "another machine's table: this one's is not among those the project has measured"
        }
    };
    format!(
        "; for the {} results a table has, how far each moved between {} ({whose}), or its \
         rounds where they scatter more ({} of them)",
        prior.held,
        prior.provenance,
        prior.held - prior.set
    )
}

/// A share as a percentage to read at a glance: one decimal below 10% (`0.6`, `4.2`),
/// whole above (`12`).
pub(super) fn format_percent_rounded(fraction: f64) -> String {
    let percent = fraction * 100.0;
    if percent < 10.0 {
        format!("{percent:.1}")
    } else {
        format!("{percent:.0}")
    }
}

/// A change either way, as a comparison's noise and reach are (a share up, or the same
/// factor down): `±43%` under a doubling, `94× either way` from one up, where a percentage
/// of thousands would read as a figure.
pub(super) fn format_either_way(share: f64) -> String {
    if share < 1.0 {
        format!("±{}%", format_percent_rounded(share))
    } else {
        format!("{} either way", format_ratio(1.0 + share))
    }
}

/// A side's figure with its run-to-run spread where it has one: `12.3 ns ±1.2%`.
fn format_figure(median_ns: f64, spread: Option<f64>) -> String {
    match spread {
        Some(spread) => format!(
            "{} ±{}%",
            format_ns(median_ns),
            format_percent_rounded(spread)
        ),
        None => format_ns(median_ns),
    }
}

/// A fraction as a percentage without trailing zeros: 0.02 → `2`, 0.005 → `0.5`.
fn format_percent(fraction: f64) -> String {
    format!("{}", (fraction * 100.0 * 100.0).round() / 100.0)
}
