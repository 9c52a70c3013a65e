//! The rows that the terminal table and Markdown share: one per result, already formatted,
//! plus the warnings, notes and failures listed under the table.

use crate::text_table::TextTable;
use crate::units::{
    INTERVAL_FOOTNOTE, format_clock, format_interval, format_median, format_ns, format_percent,
    format_percentiles, format_result_rate, has_interval, has_percentiles, percentiles_footnote,
};
use latlab_engine::MIN_SAMPLES;
use latlab_engine::model::{BenchResult, ProbeOutcome, ProbeStatus, RunRecord};
use latlab_engine::stats::Summary;

/// The columns of the table. `cpu` (the measuring thread's median CPU time per operation, as
/// Google Benchmark prints it) only appears when some result spent a tenth of its time off
/// the CPU, blocked or waiting; `rate` only when some result is a throughput; `rounds ±`
/// (half the range of the medians of the rounds a result was measured in, spread over the
/// run, as a share of its median: how far it moves between measurements, which its interval,
/// from samples taken back to back, cannot show) only when some result was measured in
/// rounds.
const HEADERS: [&str; 10] = [
    "benchmark",
    "median",
    "cpu",
    "rate",
    "95% CI of median",
    "rounds ±",
    "p5 … p95",
    "cv",
    "cold",
    "samples",
];
const CPU_COLUMN: usize = 2;
const RATE_COLUMN: usize = 3;
const ROUNDS_COLUMN: usize = 5;
/// A result whose CPU time differs from its wall time by more than this share gets the
/// `cpu` column shown.
const OFF_CPU_SHARE: f64 = 0.1;

/// The median CPU time per operation, when measured.
fn cpu_median(result: &BenchResult) -> Option<f64> {
    Summary::of(&result.cpu_samples_ns).map(|s| s.median)
}

/// Whether the result spent a noticeable part of its time off the CPU.
fn waited(result: &BenchResult) -> bool {
    let wall = result.summary.median;
    cpu_median(result).is_some_and(|cpu| wall > 0.0 && (wall - cpu).abs() > OFF_CPU_SHARE * wall)
}

pub(crate) struct Rows {
    pub headers: Vec<&'static str>,
    /// One row per result, as many cells as headers.
    pub cells: Vec<Vec<String>>,
    /// What each row's result has against it, row for row.
    pub shown: Vec<RowFlags>,
    /// `(result name, message)`, verdicts first.
    pub findings: Vec<(String, String)>,
    /// Probes that failed, were skipped or interrupted: `(id, what happened)`.
    pub incomplete: Vec<(String, String)>,
    /// What was folded away, when sweeps were folded.
    pub folded: Option<String>,
    /// Why some cells are blank, once each, for under the table.
    pub footnotes: Vec<String>,
}

impl Rows {
    /// The headers and cells as a table to render.
    pub fn table(&self) -> TextTable {
        let mut table = TextTable::new(self.headers.iter().copied());
        table.rows = self.cells.clone();
        table
    }
}

/// What a row's result has against it, for colour.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RowFlags {
    /// A suspect verdict (optimised away).
    pub suspect: bool,
    /// At least one warning.
    pub warned: bool,
}

/// Whether in-between points of dense sweeps get rows of their own.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sweeps {
    Folded,
    Whole,
}

/// What a result's row says below the table: its suspect verdict, then its warnings, each
/// phrased once, beside its name.
fn findings_of(result: &BenchResult) -> Vec<(String, String)> {
    let verdict =
        (result.verdict.is_suspect()).then(|| crate::advice::verdict(result.verdict).to_string());
    (verdict.into_iter())
        .chain(result.warnings.iter().map(crate::advice::warning))
        .map(|finding| (result.name.clone(), finding))
        .collect()
}

pub(crate) fn rows(run: &RunRecord, sweeps: Sweeps) -> Rows {
    let mut cells = Vec::new();
    let mut shown_rows = Vec::new();
    let mut findings = Vec::new();
    let with_rate =
        (run.results()).any(|r| r.bytes_per_operation.is_some() || r.items_per_operation.is_some());
    let with_cpu = run
        .results()
        .any(|r| waited(r) && !(sweeps == Sweeps::Folded && r.sweep_detail));
    let with_rounds = run.results().any(|r| r.round_spread().is_some());
    let shown = |column: usize| match column {
        CPU_COLUMN => with_cpu,
        RATE_COLUMN => with_rate,
        ROUNDS_COLUMN => with_rounds,
        _ => true,
    };
    let (mut folded_points, mut folded_findings) = (0, 0);
    let (mut without_interval, mut without_percentiles) = (false, false);
    for result in run.results() {
        if sweeps == Sweeps::Folded && result.sweep_detail {
            folded_points += 1;
            folded_findings += result.warnings.len() + usize::from(result.verdict.is_suspect());
            continue;
        }
        shown_rows.push(RowFlags {
            suspect: result.verdict.is_suspect(),
            warned: !result.warnings.is_empty(),
        });
        let mut name = result.name.clone();
        if result.verdict.is_suspect() {
            name.push_str("  !! OPTIMISED AWAY?");
        }
        findings.extend(findings_of(result));
        without_interval |= !has_interval(result);
        without_percentiles |= !has_percentiles(result.summary.n);
        let row = row_cells(name, result, run.clock.resolution_ns);
        cells.push(
            row.into_iter()
                .enumerate()
                .filter_map(|(i, cell)| shown(i).then_some(cell))
                .collect(),
        );
    }
    let incomplete = incomplete_probes(&run.probes);
    let headers = HEADERS
        .iter()
        .enumerate()
        .filter_map(|(i, &header)| shown(i).then_some(header))
        .collect();
    let folded = (folded_points > 0).then(|| {
        format!(
            "{folded_points} in-between points of the sweeps (with {folded_findings} warnings) are \
             not shown here; the JSON, CSV and Markdown files and the plots have them all"
        )
    });
    let mut footnotes = Vec::new();
    if without_interval {
        footnotes.push(INTERVAL_FOOTNOTE.to_string());
    }
    if without_percentiles {
        footnotes.push(percentiles_footnote());
    }
    Rows {
        headers,
        cells,
        shown: shown_rows,
        findings,
        incomplete,
        folded,
        footnotes,
    }
}

/// One result's cells, every column: its name as shown, median, CPU time, rate, interval,
/// rounds' spread, percentiles, cv, cold call (below the clock's `resolution_ns`, said so)
/// and samples.
fn row_cells(name: String, result: &BenchResult, resolution_ns: f64) -> Vec<String> {
    let s = &result.summary;
    let cold = |cold: f64| {
        if cold < resolution_ns {
            format!("< {}", format_ns(resolution_ns))
        } else {
            format_ns(cold)
        }
    };
    vec![
        name,
        format_median(result),
        cpu_median(result).map_or_else(|| "–".to_string(), format_ns),
        format_result_rate(result).unwrap_or_default(),
        format_interval(result),
        (result.round_spread())
            .map_or_else(|| "–".to_string(), |r| format!("±{}", format_percent(r))),
        format_percentiles(s.n, s.p5, s.p95),
        (s.cv)
            .filter(|_| s.n >= MIN_SAMPLES)
            .map_or_else(|| "–".to_string(), format_percent),
        result.cold_ns.map_or_else(|| "–".to_string(), cold),
        format_samples(result),
    ]
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
        "latlab {} · {} suite · {} · {} · clock {}, resolution {}, timed-region overhead {}",
        run.latlab_version,
        run.settings.suite,
        env.host_name,
        machine,
        format_clock(clock),
        format_ns(clock.resolution_ns),
        format_ns(clock.region_overhead_ns),
    )
}

/// A result's sample count, with the calls per sample of a timed loop, marked when below the
/// engine's minimum.
pub(crate) fn format_samples(result: &BenchResult) -> String {
    let n = result.summary.n;
    if n < MIN_SAMPLES {
        format!("{n} (too few)")
    } else if result.iterations > 1 {
        format!("{n} × {}", result.iterations)
    } else {
        n.to_string()
    }
}

/// The probes that failed, were skipped or were interrupted, as `(id, what happened)`. A
/// family whose every probe was skipped for one reason (the GPU family without a driver) is
/// one entry, named by the family.
pub(crate) fn incomplete_probes(probes: &[ProbeOutcome]) -> Vec<(String, String)> {
    let family = |id: &str| id.split_once('.').map_or(id, |(f, _)| f).to_string();
    let skipped_alike = |f: &str| -> Option<&str> {
        let mut members = probes.iter().filter(|p| family(&p.id) == f);
        let first = members.next()?;
        let ProbeStatus::Skipped { reason } = &first.status else {
            return None;
        };
        let count = 1 + members
            .map(|p| match &p.status {
                ProbeStatus::Skipped { reason: r } if r == reason => Some(()),
                _ => None,
            })
            .collect::<Option<Vec<()>>>()?
            .len();
        (count > 1).then_some(reason.as_str())
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for p in probes {
        let f = family(&p.id);
        if let Some(reason) = skipped_alike(&f) {
            if !out.iter().any(|(id, _)| *id == f) {
                out.push((f, format!("skipped — {reason}")));
            }
            continue;
        }
        let what = match &p.status {
            ProbeStatus::Ok => continue,
            ProbeStatus::Failed { reason } => format!("failed: {reason}"),
            ProbeStatus::Skipped { reason } => format!("skipped — {reason}"),
            ProbeStatus::Interrupted => "interrupted".to_string(),
        };
        out.push((p.id.clone(), what));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{probe, record};

    /// A family skipped whole for one reason is one line; a family whose probes were
    /// skipped for different reasons, or of which one ran, keeps a line per probe.
    #[test]
    fn a_family_skipped_for_one_reason_is_one_line() {
        let with = |id: &str, status: ProbeStatus| ProbeOutcome {
            status,
            ..probe(id, Vec::new())
        };
        let skipped = |reason: &str| ProbeStatus::Skipped {
            reason: reason.into(),
        };
        let no_driver = "no CUDA driver (libcuda.so.1 not found)";
        let probes = vec![
            with("mem.latency", ProbeStatus::Ok),
            with("gpu.launch", skipped(no_driver)),
            with("gpu.copy", skipped(no_driver)),
            with("sched.priority", skipped("not permitted")),
            with("sched.wakeup", ProbeStatus::Ok),
            with(
                "file.read",
                ProbeStatus::Failed {
                    reason: "disk full".into(),
                },
            ),
        ];
        assert_eq!(
            incomplete_probes(&probes),
            [
                ("gpu".to_string(), format!("skipped — {no_driver}")),
                ("sched.priority".into(), "skipped — not permitted".into()),
                ("file.read".into(), "failed: disk full".into()),
            ]
        );
        let mixed = vec![
            with("gpu.launch", skipped(no_driver)),
            with("gpu.copy", skipped("another reason")),
        ];
        assert_eq!(incomplete_probes(&mixed).len(), 2);
    }

    /// Two samples get neither an interval nor percentiles and are marked; thirty get both.
    #[test]
    fn too_few_samples_show_no_interval_or_percentiles() {
        let with = |n: usize| {
            let samples = (0..n).map(|i| 100.0 + i as f64).collect();
            BenchResult::derived(&format!("n{n}"), "test", samples, Vec::new(), Vec::new()).unwrap()
        };
        let run = record(vec![probe("p", vec![with(2), with(10), with(30)])]);
        let table = rows(&run, Sweeps::Folded).table().aligned(&[]);
        let line = |name: &str| {
            table
                .lines()
                .find(|l| l.trim_start().starts_with(name))
                .unwrap_or_else(|| panic!("{table}"))
        };
        // Blank cells, each said once under the table: no interval for two, no percentiles
        // for two or ten; thirty get both.
        let rows = rows(&run, Sweeps::Folded);
        assert_eq!(rows.footnotes.len(), 2, "{:?}", rows.footnotes);
        assert!(rows.footnotes[0].contains("blank 95% CI"));
        assert!(rows.footnotes[1].contains("blank p5 … p95"));
        assert_eq!(line("n2 ").matches(" … ").count(), 0, "{table}");
        assert!(line("n2 ").contains("2 (too few)"), "{table}");
        assert_eq!(line("n10").matches(" … ").count(), 1, "{table}");
        assert_eq!(line("n30").matches(" … ").count(), 2, "{table}");
    }

    /// An extrapolated figure is shown as an estimate, with no interval claimed; the CSV
    /// leaves its interval empty and `compare` does not test it.
    #[test]
    #[cfg(feature = "files")]
    fn an_extrapolated_figure_claims_no_interval() {
        let mut estimate =
            BenchResult::derived("p/idle", "test", vec![2.69e8; 30], Vec::new(), Vec::new())
                .unwrap();
        estimate.kind = latlab_engine::model::ResultKind::Extrapolated;
        let run = record(vec![probe("p", vec![estimate.clone()])]);
        let shown = rows(&run, Sweeps::Folded);
        let table = shown.table().aligned(&[]);
        let line = table.lines().find(|l| l.contains("p/idle")).unwrap();
        assert!(line.contains("≈269 ms"), "{line}");
        // Its interval is blank (the percentiles are there), and the footnote says why.
        assert_eq!(line.matches(" … ").count(), 1, "{line}");
        assert_eq!(shown.footnotes, [crate::units::INTERVAL_FOOTNOTE]);
        let csv = crate::Exporter::render(&crate::CsvExporter, &run).unwrap();
        let row = csv.lines().nth(1).unwrap();
        assert!(
            row.contains(",extrapolated,measured,ns,269000000,,,"),
            "{row}"
        );
        let mut later = estimate.clone();
        later.samples_ns = vec![5.0e8; 30];
        later.summary = latlab_engine::stats::Summary::of(&later.samples_ns).unwrap();
        let runs = [
            ("A".to_string(), run),
            ("B".to_string(), record(vec![probe("p", vec![later])])),
        ];
        let compared = crate::compare::Comparison::of(
            &runs,
            0.05,
            &latlab_probes::presentations(),
            crate::stats::NoiseTables::shipped(),
        );
        assert_eq!(compared.tallies[0].untested, 1);
    }
}
