//! "Latency numbers for this machine": the classic operations, this machine's figure for
//! each, beside the 2012 table everyone quotes.
//!
//! Each row is declared by the probe it is read from ([`latlab_engine::presentation`]), so
//! nothing is measured here and no probe is named. A row whose probe did not run says so; a row that one machine cannot measure (a round trip
//! across a data centre or an ocean, a seek on a spinning disk) is shown as a reference only,
//! never as measured. The reference is `data/latency-2012.csv` (the numbers popularised by
//! Jeff Dean and Peter Norvig, as collected in 2012), bundled at build time. The human-scale
//! column stretches time so that this machine's L1 hit takes one second.

use crate::first_screen::source_result;
use crate::terminal::{Paint, Terminal};
use crate::text_table::{Align, TextTable};
use crate::units::{
    format_ns, format_percentiles, format_ratio, has_percentiles, percentiles_footnote,
};
use crate::{ExportError, Exporter};
use latlab_engine::model::{BenchResult, RunRecord};
use latlab_engine::presentation::{
    HeadlineRow as HeadlineDeclaration, Presentations, Source, Template,
};

const REFERENCE_CSV: &str = include_str!("../data/latency-2012.csv");

/// One row of the 2012 table.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct Reference {
    pub id: String,
    pub operation: String,
    pub nanoseconds: f64,
}

/// The 2012 table, read from the bundled CSV.
pub fn references() -> Vec<Reference> {
    ::csv::Reader::from_reader(REFERENCE_CSV.as_bytes())
        .deserialize()
        .collect::<Result<_, _>>()
        .expect("the bundled table is well formed")
}

/// A row of the 2012 table that one machine cannot measure, shown as a reference only.
struct ReferenceOnly {
    /// Where it goes among the probes' rows ([`HeadlineDeclaration::order`]).
    order: u16,
    operation: &'static str,
    reference: &'static str,
    why: &'static str,
}

const REFERENCE_ONLY: [ReferenceOnly; 5] = [
    ReferenceOnly {
        order: 160,
        operation: "Send 1 KiB over 1 Gbps network",
        reference: "send_1k_1gbps",
        why: "needs a network and a second machine",
    },
    ReferenceOnly {
        order: 220,
        operation: "Round trip within a data centre",
        reference: "dc_round_trip",
        why: "needs a second machine",
    },
    ReferenceOnly {
        order: 240,
        operation: "Disk seek",
        reference: "disk_seek",
        why: "needs a spinning disk, which latlab does not look for",
    },
    ReferenceOnly {
        order: 250,
        operation: "Read 1 MB sequentially from a spinning disk",
        reference: "disk_seq_1m",
        why: "needs a spinning disk, which latlab does not look for",
    },
    ReferenceOnly {
        order: 260,
        operation: "Packet California → Netherlands → California",
        reference: "wan_round_trip",
        why: "needs two continents",
    },
];

/// This machine's figure for a row.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub median_ns: f64,
    pub p5_ns: f64,
    pub p95_ns: f64,
    /// The samples behind the percentiles (for a cache level, the points of its plateau).
    pub samples: usize,
    /// The result it was read from, and how when not directly.
    pub source: String,
    /// The name of the result it was read from.
    pub result: String,
}

/// One row of the headline table.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadlineRow {
    pub operation: String,
    /// `None`: not measured in this run, or not measurable on one machine (see `note`).
    pub measured: Option<Measured>,
    pub reference_ns: Option<f64>,
    /// The 2012 table's row it stands beside, by id (`l1_hit`).
    pub reference: Option<&'static str>,
    /// Why a row has no figure, or what its figure is (page cache, device, one CPU).
    pub note: String,
}

impl HeadlineRow {
    /// This machine's median over the 2012 figure.
    pub fn ratio(&self) -> Option<f64> {
        Some(self.measured.as_ref()?.median_ns / self.reference_ns?)
    }

    /// The "measured by" text: the result read, with what it is; or why there is none.
    pub fn how(&self) -> String {
        match &self.measured {
            Some(m) if self.note.is_empty() => m.source.clone(),
            Some(m) => format!("{} ({})", m.source, self.note),
            None => self.note.clone(),
        }
    }

    /// How long the row's figure (this machine's, else 2012's) would take if an L1 hit took
    /// `l1_ns` nanoseconds per second.
    pub fn human_scale(&self, l1_ns: f64) -> Option<String> {
        let ns = self
            .measured
            .as_ref()
            .map(|m| m.median_ns)
            .or(self.reference_ns)?;
        Some(human_duration(ns / l1_ns))
    }
}

/// This machine's L1 hit from the rows, if measured.
pub fn measured_l1_ns(rows: &[HeadlineRow]) -> Option<f64> {
    let l1 = rows
        .iter()
        .find(|row| row.reference == Some(L1_REFERENCE))?;
    l1.measured.as_ref().map(|m| m.median_ns)
}

/// The 2012 table's L1 hit, which the human-scale column stretches to one second.
const L1_REFERENCE: &str = "l1_hit";

/// The L1 hit the human-scale column stretches to one second: this machine's, else 2012's.
pub(crate) const REFERENCE_L1_NS: f64 = 0.5;

/// The operations of the rows one machine can measure, in the table's order.
pub fn measurable_operations(declared: &Presentations) -> Vec<&'static str> {
    declared.headline.iter().map(|row| row.operation).collect()
}

/// Whether `run` has a result of the family (`gpu` of `gpu.copy/…`) that `template` reads.
fn has_family(run: &RunRecord, template: &str) -> bool {
    let family = template
        .split_once('.')
        .map_or(template, |(family, _)| family);
    run.results().any(|r| {
        r.name
            .strip_prefix(family)
            .is_some_and(|rest| rest.starts_with('.'))
    })
}

/// Whether `run` ran the probe (`mem.latency` of `mem.latency/level/L1`) that `template`
/// reads, whatever came of it.
fn ran_probe(run: &RunRecord, template: &str) -> bool {
    let probe = template
        .split_once('/')
        .map_or(template, |(probe, _)| probe);
    run.probes.iter().any(|p| p.id == probe)
}

/// The headline rows for a run: the probes' declared rows and the references one machine
/// cannot measure, in their order. A row whose probe the run did not run (a selection) is
/// left out; the references are shown beside a run that measured any row.
pub fn headline_rows(run: &RunRecord, declared: &Presentations) -> Vec<HeadlineRow> {
    let references = references();
    let reference_ns = |id: &str| {
        references
            .iter()
            .find(|r| r.id == id)
            .map(|r| r.nanoseconds)
            .expect("every row's reference is in the bundled table")
    };
    let measured = (declared.headline.iter())
        .filter(|row| ran_probe(run, row.source.template().as_str()))
        .filter(|row| !row.only_with_family || has_family(run, row.source.template().as_str()))
        .map(|row| {
            let (measured, note) = measured_row(run, row);
            (
                row.order,
                HeadlineRow {
                    operation: row.operation.to_string(),
                    measured,
                    reference_ns: row.reference.map(reference_ns),
                    reference: row.reference,
                    note,
                },
            )
        });
    let unmeasurable = REFERENCE_ONLY.iter().map(|row| {
        (
            row.order,
            HeadlineRow {
                operation: row.operation.to_string(),
                measured: None,
                reference_ns: Some(reference_ns(row.reference)),
                reference: Some(row.reference),
                note: format!("reference only: {}", row.why),
            },
        )
    });
    let mut rows: Vec<(u16, HeadlineRow)> = measured.collect();
    if rows.iter().any(|(_, row)| row.measured.is_some()) {
        rows.extend(unmeasurable);
    }
    rows.sort_by_key(|(order, _)| *order);
    rows.into_iter().map(|(_, row)| row).collect()
}

/// A declared row's figure, with its qualifier; or why this run has none.
fn measured_row(run: &RunRecord, row: &HeadlineDeclaration) -> (Option<Measured>, String) {
    let Some(result) = source_result(run, row.source) else {
        let missing = unfilled(row.source.template());
        return (None, format!("no {missing} in this run"));
    };
    // A headline figure is the time an operation takes: a result that read none (its
    // median at or below zero, an optimised-away loop's) gives no row.
    if result.summary.median < latlab_doors::rules::MIN_TIME_NS {
        return (None, format!("{} read no positive time", result.name));
    }
    // A figure whose own check failed (a main-memory chase held within the caches) is not
    // the operation the row names.
    if let Some(check) = (result.warnings.iter()).find_map(|w| match w {
        latlab_engine::Warning::CheckFailed { check, .. } => Some(check),
        _ => None,
    }) {
        return (None, format!("{}: its {check} check failed", result.name));
    }
    let how = match row.source {
        Source::Result(_) => result.name.clone(),
        Source::LargestScaled { bytes, .. } => format!("{}, scaled to {bytes} bytes", result.name),
    };
    let measured = figure(result, scale(row.source, result.bytes_per_operation), &how);
    (Some(measured), row.qualifier.to_string())
}

/// What a row read from `source` multiplies its result's median by: 1 for a result read as
/// it is; for a time per operation of `bytes_per_operation` bytes scaled to the row's
/// bytes, their ratio.
pub fn scale(source: Source, bytes_per_operation: Option<u64>) -> f64 {
    match source {
        Source::Result(_) => 1.0,
        Source::LargestScaled { bytes, .. } => {
            bytes as f64 / bytes_per_operation.unwrap_or(1) as f64
        }
    }
}

fn figure(result: &BenchResult, scale: f64, source: &str) -> Measured {
    Measured {
        median_ns: result.summary.median * scale,
        p5_ns: result.summary.p5 * scale,
        p95_ns: result.summary.p95 * scale,
        samples: result.summary.n,
        source: source.to_string(),
        result: result.name.clone(),
    }
}

impl Measured {
    /// The 5th to 95th percentiles; blank where the samples are too few for them.
    pub fn percentiles(&self) -> String {
        format_percentiles(self.samples, self.p5_ns, self.p95_ns)
    }
}

/// A template as the table names what it missed: up to its first placeholder, then "…".
fn unfilled(template: Template) -> String {
    match template.as_str().split_once('{') {
        Some((known, _)) => format!("{known}…"),
        None => template.as_str().to_string(),
    }
}

/// A duration in seconds as people say it: seconds, minutes, hours, days, months, years.
pub fn human_duration(seconds: f64) -> String {
    const MINUTE: f64 = 60.0;
    const HOUR: f64 = 60.0 * MINUTE;
    const DAY: f64 = 24.0 * HOUR;
    const MONTH: f64 = 30.44 * DAY;
    const YEAR: f64 = 365.25 * DAY;
    let (value, unit) = if seconds < MINUTE {
        (seconds, "s")
    } else if seconds < HOUR {
        (seconds / MINUTE, "min")
    } else if seconds < DAY {
        (seconds / HOUR, "h")
    } else if seconds < MONTH {
        (seconds / DAY, "days")
    } else if seconds < YEAR {
        (seconds / MONTH, "months")
    } else {
        (seconds / YEAR, "years")
    };
    let digits = latlab_engine::units::three_digit_decimals(value);
    format!("{value:.digits$} {unit}")
}

/// The headline table's columns, the least useful first: the first to go when the terminal
/// is too narrow. The operation and this machine's figure always stay.
const LEAST_USEFUL_FIRST: [&str; 6] = [
    "measured by",
    "p5 … p95",
    "if an L1 hit (2012) took 1 s",
    "if an L1 hit took 1 s",
    "ratio",
    "2012",
];

/// The terminal rendering: the rows, aligned and fitted to the terminal, under a title.
#[derive(Debug, Default)]
pub struct HeadlineExporter {
    pub terminal: Terminal,
    /// The rows the probes declare.
    pub declared: Presentations,
}

impl Exporter for HeadlineExporter {
    fn render(&self, run: &RunRecord) -> Result<String, ExportError> {
        let rows = headline_rows(run, &self.declared);
        let l1 = measured_l1_ns(&rows);
        let scale_title = if l1.is_some() {
            "if an L1 hit took 1 s"
        } else {
            "if an L1 hit (2012) took 1 s"
        };
        let l1_ns = l1.unwrap_or(REFERENCE_L1_NS);
        let mut table = TextTable::new([
            "operation",
            "this machine",
            "p5 … p95",
            "2012",
            "ratio",
            scale_title,
            "measured by",
        ]);
        let emulated = run.environment.emulated.is_some();
        table.rows = (rows.iter())
            .map(|row| row_cells(row, l1_ns, emulated))
            .collect();
        let terminal = &self.terminal;
        let title = if emulated {
            "Latency numbers under an emulator: not this machine's"
        } else {
            "Latency numbers for this machine"
        };
        let mut out = format!("\n{}\n\n", terminal.paint(Paint::Heading, title));
        // The operation and the "measured by" text on the left, the figures right-aligned.
        let mut align = vec![Align::Right; table.headers.len()];
        align[0] = Align::Left;
        align[table.headers.len() - 1] = Align::Left;
        let left_out = table.fit_to_terminal(terminal.width, &LEAST_USEFUL_FIRST, &mut align, "");
        out.push_str(&table.aligned_painted(&align, terminal, |row, _, _| {
            (row == 0).then_some(Paint::Heading)
        }));
        if let Some(left_out) = left_out {
            out.push_str(&terminal.prose("", &left_out));
        }
        if rows.iter().any(|row| {
            row.measured
                .as_ref()
                .is_some_and(|m| !has_percentiles(m.samples))
        }) {
            out.push_str(&terminal.prose("", &format!("({})", percentiles_footnote())));
        }
        out.push_str(&terminal.prose(
            "",
            "(2012: the numbers popularised by Jeff Dean and Peter Norvig; ratio = this machine \
             ÷ 2012; rows without a figure of this machine are references, never measured)",
        ));
        Ok(out)
    }
}

/// A row's cells; under an emulator every figure of this machine says so.
fn row_cells(row: &HeadlineRow, l1_ns: f64, emulated: bool) -> Vec<String> {
    let figure = |m: &Measured| {
        if emulated {
            format!("{} (emulated)", format_ns(m.median_ns))
        } else {
            format_ns(m.median_ns)
        }
    };
    vec![
        row.operation.clone(),
        row.measured.as_ref().map_or_else(|| "—".into(), figure),
        row.measured
            .as_ref()
            .map_or_else(String::new, Measured::percentiles),
        row.reference_ns.map_or_else(|| "—".into(), format_ns),
        row.ratio().map_or_else(String::new, format_ratio),
        row.human_scale(l1_ns).map_or_else(String::new, |scaled| {
            if row.measured.is_some() {
                scaled
            } else {
                format!("({scaled})")
            }
        }),
        row.how(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_reference_parses_and_has_every_row() {
        let references = references();
        assert_eq!(references.len(), 14);
        assert_eq!(references[0].id, "l1_hit");
        assert_eq!(references[0].nanoseconds, 0.5);
        let declared = latlab_probes::presentations();
        let ids = (declared.headline.iter().filter_map(|row| row.reference))
            .chain(REFERENCE_ONLY.iter().map(|row| row.reference));
        for id in ids {
            assert!(references.iter().any(|r| r.id == id), "{id}");
        }
    }

    /// Rows read the results they name, scale the memory bandwidth to 1 MB, keep the
    /// reference-only rows unmeasured, and say which rows this run did not measure.
    #[test]
    fn rows_come_from_the_named_results_and_references_stay_references() {
        use crate::test_records::{probe, record, result};
        let bandwidth: Vec<_> = [4096u64, 1 << 20]
            .iter()
            .map(|&size| {
                result(
                    &format!(
                        "mem.bandwidth/read/all/{}",
                        latlab_engine::units::format_bytes(size as f64)
                    ),
                    if size == 4096 { 0.01 } else { 0.4 },
                    &[(latlab_engine::names::key::WORKING_SET_BYTES, size.into())],
                )
                .with_bytes_per_operation(8)
            })
            .collect();
        let run = record(vec![
            probe(
                "mem.latency",
                vec![result("mem.latency/level/L1", 1.25, &[])],
            ),
            probe("mem.bandwidth", bandwidth),
            probe("thread.mutex", Vec::new()),
        ]);
        let declared = latlab_probes::presentations();
        let rows = headline_rows(&run, &declared);
        // Rows of probes that did not run are left out; one that ran without its result
        // says so.
        assert!(!rows.iter().any(|r| r.operation == "System call"));
        let row = |operation: &str| rows.iter().find(|r| r.operation == operation).unwrap();
        let l1 = row("L1 cache hit");
        assert_eq!(l1.measured.as_ref().unwrap().median_ns, 1.25);
        assert_eq!(l1.ratio(), Some(2.5));
        let memory = row("Read 1 MB sequentially from memory");
        // 0.4 ns per 8-byte element at the largest working set: 50 µs per million bytes.
        assert_eq!(memory.measured.as_ref().unwrap().median_ns, 50_000.0);
        assert!(memory.measured.as_ref().unwrap().source.contains("/1MiB"));
        let seek = row("Disk seek");
        assert!(seek.measured.is_none() && seek.note.starts_with("reference only"));
        let mutex = row("Mutex lock/unlock");
        assert!(mutex.measured.is_none() && mutex.note.starts_with("no thread.mutex"));
        let text = HeadlineExporter {
            declared,
            ..HeadlineExporter::default()
        }
        .render(&run)
        .unwrap();
        assert!(text.contains("Latency numbers for this machine"));
        assert!(text.contains("if an L1 hit took 1 s"));
        // The L1 row is one second by definition; a 2012 disk seek would be months.
        let l1_line = text
            .lines()
            .find(|l| l.starts_with("L1 cache hit"))
            .unwrap();
        assert!(l1_line.contains("1.00 s"), "{l1_line}");
        let seek_line = text.lines().find(|l| l.starts_with("Disk seek")).unwrap();
        assert!(seek_line.contains("months)"), "{seek_line}");

        // Under an emulator the title says whose timings these are, and every figure does.
        let mut emulated = run.clone();
        emulated.environment.emulated = Some("an aarch64 build on an x86 CPU".into());
        let text = HeadlineExporter {
            declared: latlab_probes::presentations(),
            ..HeadlineExporter::default()
        }
        .render(&emulated)
        .unwrap();
        assert!(text.contains("Latency numbers under an emulator: not this machine's"));
        let l1_line = (text.lines())
            .find(|l| l.starts_with("L1 cache hit"))
            .unwrap();
        assert!(l1_line.contains("1.25 ns (emulated)"), "{l1_line}");
        let seek_line = text.lines().find(|l| l.starts_with("Disk seek")).unwrap();
        assert!(!seek_line.contains("emulated"), "{seek_line}");
    }

    /// The GPU rows appear when the run has GPU results, read from them, and are left out
    /// of a run without any.
    #[test]
    fn gpu_rows_appear_only_with_gpu_results() {
        use crate::test_records::{probe, record, result};
        let cpu_only = record(vec![probe(
            "mem.latency",
            vec![result("mem.latency/level/L1", 1.25, &[])],
        )]);
        let declared = latlab_probes::presentations();
        let operations = |run: &RunRecord| -> Vec<String> {
            headline_rows(run, &declared)
                .into_iter()
                .map(|r| r.operation)
                .collect()
        };
        assert!(!operations(&cpu_only).iter().any(|o| o.contains("GPU")));
        let with_gpu = record(vec![
            probe("gpu.launch", vec![result("gpu.launch/sync", 8_000.0, &[])]),
            probe("gpu.memory", Vec::new()),
            probe("gpu.copy", Vec::new()),
        ]);
        let rows = headline_rows(&with_gpu, &declared);
        let gpu: Vec<&HeadlineRow> = rows
            .iter()
            .filter(|r| r.operation.contains("GPU") || r.operation.contains("host→device"))
            .collect();
        assert_eq!(gpu.len(), 5);
        let launch = gpu
            .iter()
            .find(|r| r.operation == "GPU kernel launch (+ sync)")
            .unwrap();
        assert_eq!(launch.measured.as_ref().unwrap().median_ns, 8_000.0);
        assert!(gpu.iter().filter(|r| r.measured.is_none()).count() == 4);
    }

    #[test]
    fn ratios_keep_three_significant_digits() {
        assert_eq!(format_ratio(0.000867), "0.000867×");
        assert_eq!(format_ratio(0.42), "0.420×");
        assert_eq!(format_ratio(3.5), "3.50×");
        assert_eq!(format_ratio(120.0), "120×");
    }

    #[test]
    fn human_durations_read_naturally() {
        assert_eq!(human_duration(1.0), "1.00 s");
        assert_eq!(human_duration(200.0), "3.33 min");
        assert_eq!(human_duration(2.0 * 86_400.0), "2.00 days");
        assert_eq!(human_duration(3e8 / 2.0), "4.75 years");
    }
}
