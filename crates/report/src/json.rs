//! JSON: a superset of Google Benchmark's `--benchmark_format=json`.
//!
//! `context` and `benchmarks` follow Google Benchmark's schema (version 1), so its
//! `compare.py` and the dashboards built on it read latlab's results: each sample is a
//! repetition (`run_type: iteration`), followed by the `_mean`, `_median`, `_stddev` and `_cv`
//! aggregates it would print. Beside them, `latlab` holds the whole [`RunRecord`]: methods,
//! parameters, statistics, raw samples, verdicts, warnings, the environment and the clock.
//! The document is strict JSON: no figure is NaN or infinite.
//!
//! Which results get Google Benchmark rows, so that its tools (`compare.py`, whose overall
//! geometric mean takes the logarithm of every repetition's times, and whose U test wants
//! nine repetitions) never meet a figure they cannot use:
//! - a result computed from other results (`derived_from`, such as `cpu.branch/difference`)
//!   has none: its sources have theirs, and it stays in latlab's own section;
//! - a result with one row per sample (`run_type: iteration`) is timed directly (not a
//!   slope or difference, whose paired samples can dip below zero in noise), has at least
//!   [`MIN_REPETITIONS`] samples, every one above zero, each with the measuring thread's CPU
//!   time for that sample (`cpu_time`), above zero too. These depend on the method, not on
//!   the figures, so two runs of one suite have the same rows, and `compare.py`'s overall
//!   geometric mean compares like with like;
//! - any other result (a slope; fewer samples; events timed on other threads or cut into
//!   phases, where no CPU time belongs to a sample; the rare timed loop with a sample at or
//!   below the empty loop's) has its aggregates only, and only when its mean and median are
//!   above zero. Its aggregate `cpu_time` is 0 where no CPU time was measured: never a copy
//!   of `real_time`.
//!
//! Every sample, CPU times included, is in `latlab.probes[].results[]` whatever rows it got.

use crate::formats::FileFormat;
use crate::{ExportError, Exporter};
use latlab_engine::model::{BenchResult, ResultKind, RunRecord};
use serde::Serialize;

/// The version of latlab's own part of the document; raised on incompatible changes.
pub const JSON_SCHEMA_VERSION: u32 = 2;
/// The fewest samples written as one row each: below it Google Benchmark's `compare.py`
/// calls its U test unreliable.
pub const MIN_REPETITIONS: usize = 9;
/// The Google Benchmark JSON schema version the `context`/`benchmarks` part follows.
const GOOGLE_BENCHMARK_SCHEMA_VERSION: u32 = 1;

pub struct JsonExporter;

/// `--json FILE`: the results as JSON.
pub(crate) const FORMAT: FileFormat<RunRecord> = FileFormat {
    name: "json",
    help: "Also write the results as JSON here (the run's schema, a Google Benchmark \
        superset); '-' for standard output",
    exporter: |_| Box::new(JsonExporter),
};

/// The JSON Schema (draft 2020-12) of the document [`JsonExporter`] writes, generated from
/// the types that write it; the repository keeps a copy in `schema/results.schema.json`.
#[cfg(feature = "schema")]
pub fn json_schema() -> serde_json::Value {
    let mut schema = schemars::schema_for!(Document<'static>);
    schema.insert("title".into(), "latlab results".into());
    schema.insert(
        "description".into(),
        "A latlab run: Google Benchmark's context and benchmarks (its JSON schema version 1), \
         and latlab's own record of the run."
            .into(),
    );
    schema.to_value()
}

/// A latlab results file.
#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Document<'a> {
    latlab_schema_version: u32,
    context: Context,
    benchmarks: Vec<Row<'a>>,
    latlab: &'a RunRecord,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Context {
    date: String,
    host_name: String,
    executable: &'static str,
    num_cpus: usize,
    mhz_per_cpu: u64,
    cpu_scaling_enabled: bool,
    caches: Vec<Cache>,
    load_avg: Vec<f64>,
    library_build_type: String,
    json_schema_version: u32,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Cache {
    #[serde(rename = "type")]
    kind: String,
    level: u8,
    size: u64,
    num_sharing: usize,
}

#[derive(Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
struct Row<'a> {
    name: String,
    family_index: usize,
    per_family_instance_index: usize,
    run_name: &'a str,
    run_type: &'static str,
    repetitions: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    repetition_index: Option<usize>,
    threads: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    aggregate_name: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    aggregate_unit: Option<&'static str>,
    iterations: u64,
    real_time: f64,
    cpu_time: f64,
    time_unit: &'static str,
    /// For throughputs: bytes per operation over the real time (Google Benchmark's
    /// `SetBytesProcessed` counter, here always per wall-clock second).
    #[serde(skip_serializing_if = "Option::is_none")]
    bytes_per_second: Option<f64>,
    /// For item rates: items per operation over the real time (Google Benchmark's
    /// `SetItemsProcessed` counter).
    #[serde(skip_serializing_if = "Option::is_none")]
    items_per_second: Option<f64>,
    /// Instructions per call, where the harness counted them (`--count instructions`): a
    /// user counter, as Google Benchmark writes its own beside the times.
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<f64>,
}

impl Exporter for JsonExporter {
    fn render(&self, run: &RunRecord) -> Result<String, ExportError> {
        let document = Document {
            latlab_schema_version: JSON_SCHEMA_VERSION,
            context: context(run),
            benchmarks: rows(run),
            latlab: run,
        };
        let mut text =
            serde_json::to_string_pretty(&document).map_err(|e| ExportError::Encode {
                format: "JSON",
                detail: e.to_string(),
            })?;
        text.push('\n');
        Ok(text)
    }
}

fn context(run: &RunRecord) -> Context {
    let env = &run.environment;
    // Google Benchmark reports the cycle counter's rate; without one, the CPU's nominal rate.
    let mhz = if run.clock.kind == latlab_engine::ClockKind::MonotonicRaw {
        env.cpu.mhz.unwrap_or(0.0)
    } else {
        run.clock.frequency_hz / 1e6
    };
    Context {
        date: run.started_at.clone(),
        host_name: env.host_name.clone(),
        executable: "latlab",
        num_cpus: env.cpu.logical_cpus,
        mhz_per_cpu: mhz.round() as u64,
        cpu_scaling_enabled: env
            .cpu
            .governor
            .as_deref()
            .is_some_and(|g| g != "performance"),
        caches: env
            .caches
            .iter()
            .map(|c| Cache {
                kind: c.kind.clone(),
                level: c.level,
                size: c.size_bytes,
                num_sharing: c.shared_by_cpus,
            })
            .collect(),
        load_avg: env.load_avg.map_or_else(Vec::new, |l| l.to_vec()),
        library_build_type: env.build_profile.clone(),
        json_schema_version: GOOGLE_BENCHMARK_SCHEMA_VERSION,
    }
}

fn rows(run: &RunRecord) -> Vec<Row<'_>> {
    let mut rows = Vec::new();
    for (family_index, probe) in run.probes.iter().enumerate() {
        for (instance, result) in probe.results.iter().enumerate() {
            rows.extend(result_rows(result, family_index, instance));
        }
    }
    rows
}

/// How a result is written among Google Benchmark's rows (see the module's documentation).
#[derive(Debug, PartialEq, Eq)]
enum Rows {
    SamplesAndAggregates,
    AggregatesOnly,
    None,
}

fn rows_for(result: &BenchResult) -> Rows {
    let positive = |values: &[f64]| values.iter().all(|&v| v > 0.0);
    let n = result.samples_ns.len();
    if !result.derived_from.is_empty() {
        Rows::None
    } else if !matches!(result.kind, ResultKind::Derived | ResultKind::Extrapolated)
        && n >= MIN_REPETITIONS
        && result.cpu_samples_ns.len() == n
        && positive(&result.samples_ns)
        && positive(&result.cpu_samples_ns)
    {
        Rows::SamplesAndAggregates
    } else if result.summary.median > 0.0 && result.summary.mean > 0.0 {
        Rows::AggregatesOnly
    } else {
        Rows::None
    }
}

/// One row per sample, then the aggregates Google Benchmark would compute over them, as
/// [`rows_for`] allows.
fn result_rows(result: &BenchResult, family_index: usize, instance: usize) -> Vec<Row<'_>> {
    let layout = rows_for(result);
    if layout == Rows::None {
        return Vec::new();
    }
    let n = result.samples_ns.len();
    let threads = result
        .parameter(latlab_engine::names::key::THREADS)
        .and_then(|t| t.as_u64())
        .and_then(|t| u32::try_from(t).ok())
        .unwrap_or(1);
    // A rate for each sample and for the central aggregates; a spread has none.
    let rate = |per_operation: Option<u64>, aggregate: Option<&str>, real_ns: f64| match (
        per_operation,
        aggregate,
    ) {
        (Some(count), None | Some("mean" | "median")) if real_ns > 0.0 => {
            Some(count as f64 / real_ns * 1e9)
        }
        _ => None,
    };
    let row = |name: String,
               run_type,
               index,
               aggregate: Option<(&'static str, &'static str)>,
               iterations,
               real,
               cpu_time| Row {
        name,
        family_index,
        per_family_instance_index: instance,
        run_name: &result.name,
        run_type,
        repetitions: n,
        repetition_index: index,
        threads,
        aggregate_name: aggregate.map(|a| a.0),
        aggregate_unit: aggregate.map(|a| a.1),
        iterations,
        real_time: real,
        cpu_time,
        time_unit: "ns",
        bytes_per_second: rate(result.bytes_per_operation, aggregate.map(|a| a.0), real),
        items_per_second: rate(result.items_per_operation, aggregate.map(|a| a.0), real),
        instructions: result.counted.as_ref().map(|counted| counted.instructions),
    };
    let mut rows: Vec<Row> = Vec::new();
    if layout == Rows::SamplesAndAggregates {
        for (i, (&real, &cpu)) in result
            .samples_ns
            .iter()
            .zip(&result.cpu_samples_ns)
            .enumerate()
        {
            rows.push(row(
                result.name.clone(),
                "iteration",
                Some(i),
                None,
                result.iterations,
                real,
                cpu,
            ));
        }
    }
    for (name, unit, real_value, cpu_value) in aggregates(result) {
        rows.push(row(
            format!("{}_{name}", result.name),
            "aggregate",
            None,
            Some((name, unit)),
            n as u64,
            real_value,
            cpu_value,
        ));
    }
    rows
}

/// Google Benchmark's aggregates of `result`, each `(name, unit, real, cpu)`: mean, median,
/// standard deviation and coefficient of variation, of the wall and the CPU times (0 for
/// CPU times not measured); none without samples, and no cv where it is undefined.
fn aggregates(result: &BenchResult) -> Vec<(&'static str, &'static str, f64, f64)> {
    use latlab_engine::stats::Summary;
    let Some(real) = Summary::of(&result.samples_ns) else {
        return Vec::new();
    };
    let cpu = Summary::of(&result.cpu_samples_ns);
    // Without CPU times, 0: not measured.
    let cpu_of = |f: fn(&Summary) -> Option<f64>| match &cpu {
        Some(cpu) => f(cpu),
        None => Some(0.0),
    };
    [
        ("mean", "time", Some(real.mean), cpu_of(|s| Some(s.mean))),
        (
            "median",
            "time",
            Some(real.median),
            cpu_of(|s| Some(s.median)),
        ),
        (
            "stddev",
            "time",
            Some(real.stddev),
            cpu_of(|s| Some(s.stddev)),
        ),
        ("cv", "percentage", real.cv, cpu_of(|s| s.cv)),
    ]
    .into_iter()
    .filter_map(|(name, unit, real, cpu)| Some((name, unit, real?, cpu?)))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directly timed result with `n` samples of `value` ns, with CPU times or without.
    fn timed(n: usize, value: f64, cpu: bool) -> BenchResult {
        let cpu_samples = if cpu { vec![value; n] } else { Vec::new() };
        let mut result =
            BenchResult::derived("p/x", "m", vec![value; n], cpu_samples, Vec::new()).unwrap();
        result.kind = ResultKind::TimedLoop;
        result
    }

    #[test]
    fn the_repository_keeps_the_generated_schema() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../schema/results.schema.json");
        let generated = serde_json::to_string_pretty(&json_schema()).unwrap() + "\n";
        if std::env::var_os("LATLAB_WRITE_SCHEMA").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            kept == generated,
            "{} differs from the types that write the JSON: rewrite it with \
             LATLAB_WRITE_SCHEMA=1 cargo test -p latlab-report schema, and raise \
             JSON_SCHEMA_VERSION if the change is incompatible",
            path.display()
        );
    }

    fn kinds(result: &BenchResult) -> Vec<(&'static str, f64, f64)> {
        result_rows(result, 0, 0)
            .iter()
            .map(|r| (r.run_type, r.real_time, r.cpu_time))
            .collect()
    }

    #[test]
    fn only_rows_compare_py_can_use_are_written() {
        // Timed, enough samples, CPU times: a row per sample, then four aggregates.
        let rows = kinds(&timed(9, 5.0, true));
        assert_eq!(rows.len(), 13);
        assert!(rows[..9].iter().all(|r| *r == ("iteration", 5.0, 5.0)));
        // Too few samples, or no CPU time: aggregates only, CPU time 0 (not measured).
        assert!(
            kinds(&timed(8, 5.0, true))
                .iter()
                .all(|r| r.0 == "aggregate")
        );
        let no_cpu = kinds(&timed(30, 5.0, false));
        assert_eq!(no_cpu.len(), 4);
        assert!(no_cpu.iter().all(|r| r.0 == "aggregate" && r.2 == 0.0));
        // A slope: aggregates only, even when every sample is above zero.
        let mut slope = timed(30, 5.0, true);
        slope.kind = ResultKind::Derived;
        assert!(kinds(&slope).iter().all(|r| r.0 == "aggregate"));
        // A sample at zero: aggregates; a median at or below zero, or a difference of other
        // results: nothing.
        let mut dip = timed(30, 5.0, true);
        dip.samples_ns[3] = -1.0;
        assert!(kinds(&dip).iter().all(|r| r.0 == "aggregate"));
        assert!(kinds(&timed(30, -2.0, true)).is_empty());
        let mut difference = timed(30, 5.0, true);
        difference.derived_from = vec!["p/a".into(), "p/b".into()];
        assert!(kinds(&difference).is_empty());
    }
}
