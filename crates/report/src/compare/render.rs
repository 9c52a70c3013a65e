//! The comparison rendered: the verdicts' labels, the environments side by side, the
//! results table, the notes on noise and the summary, as text, Markdown, CSV and JSON.

use super::{
    Against, Comparison, DEFAULT_THRESHOLD, MIN_RESULTS_FOR_SCATTER, RunToRun, SIGNIFICANCE,
    SameBecause, Side, Unsteady, Verdict, sides,
};
use crate::ExportError;
use crate::terminal::{Paint, Terminal};
use crate::text_table::{Align, TextTable};
use crate::units::{format_clock, format_ns, format_ratio};
use latlab_engine::environment::describe_core_classes;
use latlab_engine::model::RunRecord;
use serde_json::{Value, json};
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
                SameBecause::RunToRunNoise { half_width } => format!(
                    "same (within run-to-run noise, ±{}%)",
                    format_percent_rounded(half_width)
                ),
                SameBecause::Chance { within } => {
                    format!("same (p {}, adjusted within {within})", format_p(p))
                }
            },
            Verdict::TwoRegimes { low_ns, high_ns } => format!(
                "two regimes: {} / {}",
                format_ns(low_ns),
                format_ns(high_ns)
            ),
            Verdict::Untested => "untested".into(),
            Verdict::NotComparable {
                check,
                how: Unsteady::DuringRun,
            } => format!("not comparable (the machine moved: {check})"),
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
    /// "same", the smallest change this comparison would have called:
    /// `same (p 0.571); adjusted within 108 sweep points of its probe; would have caught
    /// ±4.2%`.
    pub(crate) fn label(&self, threshold: f64) -> String {
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
        if let (Verdict::Same { .. }, Some(share)) = (self.verdict, self.detectable) {
            let _ = write!(
                label,
                "; would have caught ±{}%",
                format_percent_rounded(share)
            );
        }
        label
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
                } => format!(
                    "{label} against {first}: one run a side; each result's rounds show how \
                     far it moves within a run, and its noise is that, widened by how far \
                     results moved between the two runs beyond their rounds ({}); several \
                     runs a side measure it instead",
                    family_inflation(*inflation, *results, families)
                ),
                RunToRun::Unknown => format!(
                    "{label} against {first}: one run a side and fewer than \
                     {MIN_RESULTS_FOR_SCATTER} results, so only the rounds within each run \
                     show the noise, not how far results move between runs: take several runs \
                     a side (a directory each) before trusting a difference"
                ),
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
            .map(|(t, label)| {
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
    let fields: [EnvironmentField; 10] = [
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
fn results_table(comparison: &Comparison, fold: bool) -> (TextTable, usize) {
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
fn only_in_later_runs(comparison: &Comparison) -> Vec<String> {
    comparison
        .tallies
        .iter()
        .zip(&comparison.labels[1..])
        .filter(|(t, _)| !t.new.is_empty())
        .map(|(t, label)| format!("only in {label}: {}", t.new.join(", ")))
        .collect()
}

/// Every column of a comparison reads from the left.
fn all_left(table: &TextTable) -> Vec<Align> {
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
         caught' is the smallest change the test would have called; ± is half the range of a \
         side's round or run medians; figures are medians (of the runs' medians, for several \
         runs)",
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

/// A share as a percentage to read at a glance: one decimal below 10% (`0.6`, `4.2`),
/// whole above (`12`).
fn format_percent_rounded(fraction: f64) -> String {
    let percent = fraction * 100.0;
    if percent < 10.0 {
        format!("{percent:.1}")
    } else {
        format!("{percent:.0}")
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

/// The terminal rendering with the default threshold and no colour; in-between sweep points
/// are folded.
pub fn compare_text(runs: &[(String, RunRecord)]) -> String {
    let sides = sides(runs);
    compare_text_with(
        &sides,
        &Comparison::of_sides(&sides, DEFAULT_THRESHOLD),
        &Terminal::default(),
    )
}

/// The terminal rendering of `comparison` (of `sides`): the environments, the results,
/// faster and slower coloured when `terminal` says so, then the summary.
pub fn compare_text_with(sides: &[Side], comparison: &Comparison, terminal: &Terminal) -> String {
    let mut out = String::new();
    let environment = environment_table(sides);
    out.push_str(&environment.aligned(&all_left(&environment)));
    out.push('\n');
    let (results, folded) = results_table(comparison, true);
    out.push_str(
        &results.aligned_painted(&all_left(&results), terminal, |row, _, cell| {
            if row == 0 {
                Some(Paint::Heading)
            } else if cell.starts_with("slower") {
                Some(Paint::Bad)
            } else if cell.starts_with("faster") {
                Some(Paint::Good)
            } else {
                None
            }
        }),
    );
    if folded > 0 {
        out.push_str(&terminal.prose(
            "",
            &format!(
                "({folded} in-between points of the sweeps are not shown here; --markdown, \
                 --csv and --json have them all)"
            ),
        ));
    }
    out.push_str(&terminal.prose("", &format!("({})", footnote(comparison.threshold))));
    for line in comparison.noise_lines() {
        out.push_str(&terminal.prose("", &format!("({line})")));
    }
    for line in only_in_later_runs(comparison) {
        out.push_str(&terminal.prose("", &line));
    }
    out.push('\n');
    for line in comparison.summary_lines() {
        out.push_str(&terminal.prose("", &terminal.paint(Paint::Heading, &line)));
    }
    out
}

/// The Markdown rendering, every result included.
pub fn compare_markdown(sides: &[Side], comparison: &Comparison) -> String {
    let mut out = String::from("# latlab comparison\n\n");
    let environment = environment_table(sides);
    out.push_str(&environment.markdown(&all_left(&environment)));
    out.push('\n');
    let results = results_table(comparison, false).0;
    out.push_str(&results.markdown(&all_left(&results)));
    let _ = writeln!(out, "\n{}.", footnote(comparison.threshold));
    for line in comparison.noise_lines() {
        let _ = writeln!(out, "\n{}.", crate::text_table::escape_markdown(&line));
    }
    for line in only_in_later_runs(comparison) {
        let _ = writeln!(out, "\n{}", crate::text_table::escape_markdown(&line));
    }
    out.push('\n');
    for line in comparison.summary_lines() {
        let _ = writeln!(out, "- {line}");
    }
    out
}

/// The CSV rendering: one row per result and later run, with the verdict and its p-value;
/// a result a run lacks has an empty median and the verdict `missing`, one the first lacks
/// the verdict `new`.
pub fn compare_csv(comparison: &Comparison) -> Result<String, ExportError> {
    let encode = |detail: String| ExportError::Encode {
        format: "CSV",
        detail,
    };
    let mut writer = csv::Writer::from_writer(Vec::new());
    let header = [
        "benchmark",
        "baseline",
        "run",
        "baseline_median_ns",
        "median_ns",
        "ratio",
        "p",
        "difference",
        "detectable",
        "tested_within",
    ];
    writer
        .write_record(header)
        .map_err(|e| encode(e.to_string()))?;
    let first = &comparison.labels[0];
    for result in &comparison.results {
        for (against, label) in result.later.iter().zip(&comparison.labels[1..]) {
            let record = csv_record(result, against.as_ref(), first, label);
            writer
                .write_record(&record)
                .map_err(|e| encode(e.to_string()))?;
        }
    }
    for (tally, label) in comparison.tallies.iter().zip(&comparison.labels[1..]) {
        for name in &tally.new {
            let cell = crate::csv::text_cell;
            let none = String::new;
            let record = [
                cell(name),
                cell(first),
                cell(label),
                none(),
                none(),
                none(),
                none(),
                "new".to_string(),
                none(),
                none(),
            ];
            writer
                .write_record(record)
                .map_err(|e| encode(e.to_string()))?;
        }
    }
    let bytes = writer.into_inner().map_err(|e| encode(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| encode(e.to_string()))
}

/// One CSV row: `result` in the later run `label` (`against`, `None` where it lacks it)
/// beside the first run `first`.
fn csv_record(
    result: &super::ComparedResult,
    against: Option<&Against>,
    first: &str,
    label: &str,
) -> [String; 10] {
    let first_median = result.first_median_ns.to_string();
    match against {
        Some(a) => [
            crate::csv::text_cell(&result.name),
            crate::csv::text_cell(first),
            crate::csv::text_cell(label),
            first_median,
            a.median_ns.to_string(),
            a.ratio.to_string(),
            a.verdict
                .p()
                .map_or_else(String::new, |p| format!("{p:.3e}")),
            a.verdict.word().to_string(),
            a.detectable.map_or_else(String::new, |d| d.to_string()),
            a.tested_within
                .map_or_else(|| "alone".to_string(), |w| w.to_string()),
        ],
        None => [
            crate::csv::text_cell(&result.name),
            crate::csv::text_cell(first),
            crate::csv::text_cell(label),
            first_median,
            String::new(),
            String::new(),
            String::new(),
            "missing".to_string(),
            String::new(),
            String::new(),
        ],
    }
}

/// The JSON rendering: the threshold, each run's tally, and every result with each later
/// run's median, ratio, p-value and verdict.
pub fn compare_json(comparison: &Comparison) -> Result<String, ExportError> {
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
                        "p": a.verdict.p(),
                        "difference": a.verdict.word(),
                        "interval": a.interval.map(|(low, high)| [low, high]),
                        "detectable": a.detectable,
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
        .map(|(((t, label), runs), noise)| {
            json!({
                "run": label,
                "runs": runs,
                "run_to_run": json_noise(noise),
                "slower": t.slower,
                "faster": t.faster,
                "same": t.same,
                "untested": t.untested,
                "not_comparable": t.not_comparable,
                "two_regimes": t.two_regimes,
                "missing": t.missing,
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
        } => {
            let families: serde_json::Map<String, Value> = (families.iter())
                .map(|(family, factor)| (family.clone(), json!(factor)))
                .collect();
            json!({
                "from": "rounds, widened by how far results moved between the runs",
                "inflation": inflation,
                "results": results,
                "families": families,
            })
        }
        RunToRun::Unknown => json!({ "from": "rounds only" }),
    }
}
