//! JSON: a superset of Google Benchmark's `--benchmark_format=json`.
//!
//! `context` and `benchmarks` follow Google Benchmark's schema (version 1), so its
//! `compare.py` and the dashboards built on it read latlab's results: each sample is a
//! repetition (`run_type: iteration`), followed by the `_mean`, `_median`, `_stddev` and `_cv`
//! aggregates it would print. Beside them, `latlab` holds the whole [`RunRecord`]: methods,
//! parameters, statistics, raw samples, verdicts, warnings, the environment and the clock.
//! The document is strict JSON: no figure is NaN or infinite. A Google Benchmark row's
//! `cpu_time` is the measuring thread's CPU time for that sample; where none was measured it
//! repeats `real_time`, and `latlab.probes[].results[].cpu_samples_ns` is empty.

use crate::{ExportError, Exporter};
use latlab_engine::model::{BenchResult, RunRecord};
use serde::Serialize;

/// The version of latlab's own part of the document; raised on incompatible changes.
pub const JSON_SCHEMA_VERSION: u32 = 2;
/// The Google Benchmark JSON schema version the `context`/`benchmarks` part follows.
const GOOGLE_BENCHMARK_SCHEMA_VERSION: u32 = 1;

pub struct JsonExporter;

#[derive(Serialize)]
struct Document<'a> {
    latlab_schema_version: u32,
    context: Context,
    benchmarks: Vec<Row<'a>>,
    latlab: &'a RunRecord,
}

#[derive(Serialize)]
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
struct Cache {
    #[serde(rename = "type")]
    kind: String,
    level: u8,
    size: u64,
    num_sharing: usize,
}

#[derive(Serialize)]
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

/// One row per sample, then the aggregates Google Benchmark would compute over them.
fn result_rows(result: &BenchResult, family_index: usize, instance: usize) -> Vec<Row<'_>> {
    let n = result.samples_ns.len();
    let cpu = |i: usize| result.cpu_samples_ns.get(i).copied();
    let threads = result
        .parameter(latlab_engine::names::key::THREADS)
        .and_then(|t| t.as_u64())
        .and_then(|t| u32::try_from(t).ok())
        .unwrap_or(1);
    // A rate for each sample and for the central aggregates; a spread has none.
    let rate = |aggregate: Option<&str>, real_ns: f64| match (result.bytes_per_operation, aggregate)
    {
        (Some(bytes), None | Some("mean" | "median")) if real_ns > 0.0 => {
            Some(bytes as f64 / real_ns * 1e9)
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
        bytes_per_second: rate(aggregate.map(|a| a.0), real),
    };
    let mut rows: Vec<Row> = result
        .samples_ns
        .iter()
        .enumerate()
        .map(|(i, &real)| {
            let cpu_time = cpu(i).unwrap_or(real);
            row(
                result.name.clone(),
                "iteration",
                Some(i),
                None,
                result.iterations,
                real,
                cpu_time,
            )
        })
        .collect();
    let real = latlab_engine::stats::Summary::of(&result.samples_ns);
    let cpu_summary = latlab_engine::stats::Summary::of(&result.cpu_samples_ns);
    if let Some(real) = real {
        let cpu = cpu_summary.unwrap_or_else(|| real.clone());
        let aggregates = [
            ("mean", "time", Some(real.mean), Some(cpu.mean)),
            ("median", "time", Some(real.median), Some(cpu.median)),
            ("stddev", "time", Some(real.stddev), Some(cpu.stddev)),
            ("cv", "percentage", real.cv, cpu.cv),
        ];
        for (name, unit, real_value, cpu_value) in aggregates {
            if let (Some(real_value), Some(cpu_value)) = (real_value, cpu_value) {
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
        }
    }
    rows
}
