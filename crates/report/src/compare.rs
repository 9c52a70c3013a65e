//! Comparing runs: the same results side by side, the ratio to the first run, and whether
//! each difference is larger than the noise.
//!
//! The test is the Mann–Whitney U test on the two results' samples (two-sided, normal
//! approximation with the tie correction, α = 0.05): distribution-free, as timing samples
//! need. A result is `faster` or `slower` only when the test rejects "same distribution";
//! otherwise `same`, however different the medians look. The environments are listed side by
//! side, and every line where they differ is marked, since a difference between machines is
//! often the answer.

use crate::text_table::{Align, TextTable};
use crate::units::{format_clock, format_ns, format_ratio};
use latlab_engine::environment::describe_core_classes;
use latlab_engine::model::{BenchResult, RunRecord};
use latlab_engine::stats::mann_whitney_p;
use std::fmt::Write as _;

/// Below this p-value a difference is called real.
pub const SIGNIFICANCE: f64 = 0.05;
/// Fewer samples than this on either side and no test is made.
const MIN_SAMPLES: usize = 3;

/// What the test said about one result in one later run against the first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    Faster {
        p: f64,
    },
    Slower {
        p: f64,
    },
    Same {
        p: f64,
    },
    /// Too few samples to test (a derived figure, a single observation).
    Untested,
}

impl Verdict {
    fn of(first: &BenchResult, later: &BenchResult) -> Verdict {
        if first.samples_ns.len() < MIN_SAMPLES || later.samples_ns.len() < MIN_SAMPLES {
            return Verdict::Untested;
        }
        let p = mann_whitney_p(&first.samples_ns, &later.samples_ns);
        if p >= SIGNIFICANCE {
            Verdict::Same { p }
        } else if later.summary.median > first.summary.median {
            Verdict::Slower { p }
        } else {
            Verdict::Faster { p }
        }
    }

    fn label(self) -> String {
        match self {
            Verdict::Faster { p } => format!("faster (p {})", format_p(p)),
            Verdict::Slower { p } => format!("slower (p {})", format_p(p)),
            Verdict::Same { p } => format!("same (p {})", format_p(p)),
            Verdict::Untested => "untested".into(),
        }
    }
}

fn format_p(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// One line of the environment table: its name, and how to read it from a run.
type EnvironmentField = (&'static str, fn(&RunRecord) -> String);

/// The environments, one column per run, `≠` before each line where they differ.
fn environment_table(runs: &[(String, RunRecord)]) -> TextTable {
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
    headers.extend(runs.iter().map(|(label, _)| label.clone()));
    let rows = fields
        .iter()
        .map(|(name, value)| {
            let values: Vec<String> = runs.iter().map(|(_, run)| value(run)).collect();
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
fn results_table(runs: &[(String, RunRecord)], fold: bool) -> (TextTable, usize) {
    let (first_label, first) = &runs[0];
    let mut headers = vec!["benchmark".to_string(), first_label.clone()];
    for (label, _) in &runs[1..] {
        headers.push(label.clone());
        headers.push(format!("{label}/{first_label}"));
        headers.push("difference".to_string());
    }
    let mut folded = 0;
    let mut rows = Vec::new();
    for result in first.results() {
        if fold && result.sweep_detail {
            folded += 1;
            continue;
        }
        let mut row = vec![result.name.clone(), format_ns(result.summary.median)];
        for (_, run) in &runs[1..] {
            match run.results().find(|r| r.name == result.name) {
                Some(later) => {
                    row.push(format_ns(later.summary.median));
                    row.push(format_ratio(later.summary.median / result.summary.median));
                    row.push(Verdict::of(result, later).label());
                }
                None => row.extend(["—".to_string(), String::new(), "not in this run".into()]),
            }
        }
        rows.push(row);
    }
    (TextTable { headers, rows }, folded)
}

/// Every column of a comparison reads from the left.
fn all_left(table: &TextTable) -> Vec<Align> {
    vec![Align::Left; table.headers.len()]
}

const FOOTNOTE: &str = "difference: Mann–Whitney U test on the two results' samples, two-sided, \
                        p < 0.05 for faster or slower; ratios are of medians";

/// The terminal rendering; in-between sweep points are folded.
pub fn compare_text(runs: &[(String, RunRecord)]) -> String {
    let mut out = String::new();
    let environment = environment_table(runs);
    out.push_str(&environment.aligned(&all_left(&environment)));
    out.push('\n');
    let (results, folded) = results_table(runs, true);
    out.push_str(&results.aligned(&all_left(&results)));
    if folded > 0 {
        let _ = writeln!(
            out,
            "({folded} in-between points of the sweeps are not shown here; --markdown has them all)"
        );
    }
    let _ = writeln!(out, "({FOOTNOTE})");
    out
}

/// The Markdown rendering, every result included.
pub fn compare_markdown(runs: &[(String, RunRecord)]) -> String {
    let mut out = String::from("# latlab comparison\n\n");
    let environment = environment_table(runs);
    out.push_str(&environment.markdown(&all_left(&environment)));
    out.push('\n');
    let results = results_table(runs, false).0;
    out.push_str(&results.markdown(&all_left(&results)));
    let _ = writeln!(out, "\n{FOOTNOTE}.");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{probe, record};

    fn timed(name: &str, samples: Vec<f64>) -> BenchResult {
        BenchResult::derived(name, "test", samples, Vec::new(), Vec::new()).unwrap()
    }

    fn runs() -> Vec<(String, RunRecord)> {
        let noise = |base: f64| {
            (0..30)
                .map(|i| base + (i % 7) as f64 * 0.01)
                .collect::<Vec<_>>()
        };
        let a = record(vec![probe(
            "x",
            vec![
                timed("x/steady", noise(10.0)),
                timed("x/regressed", noise(10.0)),
                timed("x/improved", noise(10.0)),
                timed("x/single", vec![5.0]),
            ],
        )]);
        let mut b = record(vec![probe(
            "x",
            vec![
                timed("x/steady", noise(10.0)),
                timed("x/regressed", noise(12.0)),
                timed("x/improved", noise(8.0)),
            ],
        )]);
        b.environment.kernel = "7.0.0 other".into();
        vec![("A".into(), a), ("B".into(), b)]
    }

    #[test]
    fn real_differences_are_called_and_noise_is_not() {
        let text = compare_text(&runs());
        let line = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(name))
                .unwrap()
                .to_string()
        };
        assert!(line("x/steady").contains("same (p"), "{}", line("x/steady"));
        assert!(
            line("x/regressed").contains("slower (p < 0.001)"),
            "{}",
            line("x/regressed")
        );
        assert!(line("x/regressed").contains("1.20×"));
        assert!(line("x/improved").contains("faster"));
        assert!(line("x/single").contains("not in this run"));
        assert!(text.contains("Mann–Whitney"));
    }

    #[test]
    fn differing_environments_are_marked() {
        let text = compare_text(&runs());
        let kernel = text.lines().find(|l| l.contains("kernel")).unwrap();
        assert!(kernel.starts_with('≠'), "{kernel}");
        let cpu = text.lines().find(|l| l.contains("  cpu  ")).unwrap();
        assert!(!cpu.starts_with('≠'), "{cpu}");
        let markdown = compare_markdown(&runs());
        assert!(markdown.contains("| ≠ | kernel |"), "{markdown}");
    }
}
