//! The rows that the terminal table and Markdown share: one per result, already formatted,
//! plus the warnings, notes and failures listed under the table.

use crate::units::{format_ns, format_percent, format_rate};
use latlab_engine::model::{ProbeStatus, RunRecord};

/// The columns of the table; `rate` only appears when some result is a throughput.
const HEADERS: [&str; 8] = [
    "benchmark",
    "median",
    "rate",
    "95% CI of median",
    "p5 … p95",
    "cv",
    "cold",
    "samples",
];
const RATE_COLUMN: usize = 2;

pub(crate) struct Rows {
    pub headers: Vec<&'static str>,
    /// One row per result, as many cells as headers.
    pub cells: Vec<Vec<String>>,
    /// `(result name, message)`, verdicts first.
    pub findings: Vec<(String, String)>,
    /// Probes that failed, were skipped or interrupted: `(id, what happened)`.
    pub incomplete: Vec<(String, String)>,
    /// What was folded away, when sweeps were folded.
    pub folded: Option<String>,
}

/// Whether in-between points of dense sweeps get rows of their own.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sweeps {
    Folded,
    Whole,
}

pub(crate) fn rows(run: &RunRecord, sweeps: Sweeps) -> Rows {
    let mut cells = Vec::new();
    let mut findings = Vec::new();
    let with_rate = run.results().any(|r| r.bytes_per_operation.is_some());
    let (mut folded_points, mut folded_findings) = (0, 0);
    for result in run.results() {
        if sweeps == Sweeps::Folded && result.sweep_detail {
            folded_points += 1;
            folded_findings += result.warnings.len() + usize::from(result.verdict.is_suspect());
            continue;
        }
        let s = &result.summary;
        let mut name = result.name.clone();
        if result.verdict.is_suspect() {
            name.push_str("  !! OPTIMISED AWAY?");
            findings.push((result.name.clone(), result.verdict.to_string()));
        }
        findings.extend(
            result
                .warnings
                .iter()
                .map(|w| (result.name.clone(), w.message.clone())),
        );
        let mut row = vec![
            name,
            format_ns(s.median),
            result
                .gigabytes_per_second()
                .map_or_else(String::new, format_rate),
            format!(
                "{} … {}",
                format_ns(s.median_ci95[0]),
                format_ns(s.median_ci95[1])
            ),
            format!("{} … {}", format_ns(s.p5), format_ns(s.p95)),
            s.cv.map_or_else(|| "–".to_string(), format_percent),
            result.cold_ns.map_or_else(
                || "–".to_string(),
                |cold| {
                    if cold < run.clock.resolution_ns {
                        format!("< {}", format_ns(run.clock.resolution_ns))
                    } else {
                        format_ns(cold)
                    }
                },
            ),
            if result.iterations > 1 {
                format!("{} × {}", s.n, result.iterations)
            } else {
                s.n.to_string()
            },
        ];
        if !with_rate {
            row.remove(RATE_COLUMN);
        }
        cells.push(row);
    }
    let incomplete = run
        .probes
        .iter()
        .filter_map(|p| {
            let what = match &p.status {
                ProbeStatus::Ok => return None,
                ProbeStatus::Failed { reason } => format!("failed: {reason}"),
                ProbeStatus::Skipped { reason } => format!("skipped: {reason}"),
                ProbeStatus::Interrupted => "interrupted".to_string(),
            };
            Some((p.id.clone(), what))
        })
        .collect();
    let mut headers = HEADERS.to_vec();
    if !with_rate {
        headers.remove(RATE_COLUMN);
    }
    let folded = (folded_points > 0).then(|| {
        format!(
            "{folded_points} in-between points of the sweeps (with {folded_findings} warnings) are \
             not shown here; the JSON, CSV and Markdown files and the plots have them all"
        )
    });
    Rows {
        headers,
        cells,
        findings,
        incomplete,
        folded,
    }
}

/// One line saying what was measured how: version, suite, CPU, clock.
pub(crate) fn headline(run: &RunRecord) -> String {
    let env = &run.environment;
    let clock = &run.clock;
    let machine = match &env.virtualization {
        Some(hypervisor) => format!(
            "{}, {} CPUs, {hypervisor}",
            env.cpu.model, env.cpu.logical_cpus
        ),
        None => format!("{}, {} CPUs", env.cpu.model, env.cpu.logical_cpus),
    };
    format!(
        "latlab {} · {} suite · {} · {} · clock {} at {:.3} GHz, resolution {}, timed-region overhead {}",
        run.latlab_version,
        run.settings.suite,
        env.host_name,
        machine,
        clock.kind,
        clock.frequency_hz / 1e9,
        format_ns(clock.resolution_ns),
        format_ns(clock.region_overhead_ns),
    )
}
