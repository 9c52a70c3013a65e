//! The JSON document parsed back against a test-side schema: Google Benchmark's fields with
//! their types (so its tools read it), and latlab's own record.

use crate::latlab;
use latlab_engine::model::{ProbeStatus, ResultKind, RunRecord};
use latlab_engine::result_names::template_regex;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    latlab_schema_version: u32,
    context: Context,
    benchmarks: Vec<Row>,
    latlab: RunRecord,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Context {
    date: String,
    host_name: String,
    executable: String,
    num_cpus: u32,
    mhz_per_cpu: u64,
    cpu_scaling_enabled: bool,
    caches: Vec<Cache>,
    load_avg: Vec<f64>,
    library_build_type: String,
    json_schema_version: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cache {
    #[serde(rename = "type")]
    kind: String,
    level: u32,
    size: u64,
    num_sharing: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    name: String,
    family_index: usize,
    per_family_instance_index: usize,
    run_name: String,
    run_type: String,
    repetitions: usize,
    repetition_index: Option<usize>,
    threads: u32,
    aggregate_name: Option<String>,
    aggregate_unit: Option<String>,
    iterations: u64,
    real_time: f64,
    cpu_time: f64,
    time_unit: String,
    bytes_per_second: Option<f64>,
}

fn synthetic_document(only: &str) -> (String, Document) {
    let dir = tempfile::tempdir().unwrap();
    let output = latlab(dir.path())
        .args(["run", "--synthetic", "--max-size", "16KiB"])
        .args(["--only", only, "--json", "-"])
        .assert()
        .success();
    let text = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    let document = serde_json::from_str(&text).expect("the JSON matches the schema");
    (text, document)
}

#[test]
fn the_context_is_google_benchmarks() {
    let (_, doc) = synthetic_document("syscall");
    assert_eq!(doc.latlab_schema_version, 2);
    let c = &doc.context;
    assert_eq!(c.json_schema_version, 1);
    assert_eq!(c.date, "2000-01-01T00:00:00Z");
    assert_eq!(
        (c.host_name.as_str(), c.executable.as_str()),
        ("test-host", "latlab")
    );
    assert_eq!(
        (c.num_cpus, c.mhz_per_cpu, c.cpu_scaling_enabled),
        (4, 1000, false)
    );
    assert_eq!(c.library_build_type, "release");
    assert_eq!(c.load_avg.len(), 3);
    let l3 = c.caches.iter().find(|cache| cache.level == 3).unwrap();
    assert_eq!(
        (l3.kind.as_str(), l3.size, l3.num_sharing),
        ("Unified", 32 << 20, 4)
    );
}

#[test]
fn each_sample_is_a_repetition_followed_by_the_aggregates() {
    let (_, doc) = synthetic_document("syscall");
    let rows = &doc.benchmarks;
    let samples: Vec<&Row> = rows.iter().filter(|r| r.run_type == "iteration").collect();
    assert_eq!(samples.len(), 30);
    for (i, row) in samples.iter().enumerate() {
        assert_eq!(row.name, "syscall.getppid/getppid");
        assert_eq!(row.run_name, row.name);
        assert_eq!(row.repetition_index, Some(i));
        assert_eq!((row.repetitions, row.threads), (30, 1));
        assert_eq!((row.family_index, row.per_family_instance_index), (0, 0));
        assert_eq!(row.time_unit, "ns");
        assert!(row.iterations > 1 && row.real_time > 0.0 && row.cpu_time > 0.0);
        assert!(row.aggregate_name.is_none() && row.aggregate_unit.is_none());
    }
    let aggregates: Vec<(&str, &str, &str)> = rows
        .iter()
        .filter(|r| r.run_type == "aggregate")
        .map(|r| {
            (
                r.name.as_str(),
                r.aggregate_name.as_deref().unwrap(),
                r.aggregate_unit.as_deref().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        aggregates,
        [
            ("syscall.getppid/getppid_mean", "mean", "time"),
            ("syscall.getppid/getppid_median", "median", "time"),
            ("syscall.getppid/getppid_stddev", "stddev", "time"),
            ("syscall.getppid/getppid_cv", "cv", "percentage"),
        ]
    );
    let median = rows.iter().find(|r| r.name.ends_with("_median")).unwrap();
    let record_median = doc.latlab.probes[0].results[0].summary.median;
    assert_eq!(median.real_time, record_median);
}

#[test]
fn latlabs_own_record_is_complete_and_strict() {
    let (text, doc) = synthetic_document("cpu.branch");
    assert!(!text.contains("NaN") && !text.contains("Infinity"));
    let run = &doc.latlab;
    assert!(run.complete);
    assert_eq!(run.settings.suite, "quick");
    assert_eq!(run.probes.len(), 1);
    let probe = &run.probes[0];
    assert_eq!(probe.status, ProbeStatus::Ok);
    let names: Vec<&str> = probe.results.iter().map(|r| r.name.as_str()).collect();
    // The branch probe's results have no placeholder: its list is its names, in order.
    let branch = latlab_probes::PROBES.iter().find(|p| p.id == "cpu.branch");
    assert_eq!(names, branch.unwrap().results);
    let random = &probe.results[0];
    assert_eq!(random.kind, ResultKind::TimedLoop);
    assert_eq!(random.samples_ns.len(), 30);
    assert_eq!(random.parameters["pattern"].as_str(), Some("random"));
    assert!(random.loop_overhead_ns.is_some() && random.cold_ns.is_some());
    let mispredict = &probe.results[3];
    assert_eq!(mispredict.kind, ResultKind::Derived);
    assert_eq!(
        mispredict.derived_from,
        ["cpu.branch/random", "cpu.branch/predictable"]
    );
    let difference = &probe.results[2];
    assert!((mispredict.summary.median - 2.0 * difference.summary.median).abs() < 1e-9);
}

/// Throughputs carry Google Benchmark's `bytes_per_second` beside their times, and latlab's
/// record the bytes per operation it was computed from.
#[test]
fn throughputs_carry_bytes_per_second() {
    let (_, doc) = synthetic_document("mem.bandwidth");
    let result = doc
        .latlab
        .results()
        .find(|r| r.name == "mem.bandwidth/modify/all/16KiB")
        .unwrap();
    assert_eq!(result.bytes_per_operation, Some(16));
    let rows: Vec<&Row> = doc
        .benchmarks
        .iter()
        .filter(|r| r.run_name == result.name)
        .collect();
    for row in &rows {
        match row.aggregate_name.as_deref() {
            None | Some("mean") | Some("median") => {
                let expected = 16.0 / row.real_time * 1e9;
                let rate = row.bytes_per_second.unwrap();
                assert!((rate - expected).abs() <= 1e-9 * expected, "{}", row.name);
            }
            Some(_) => assert!(row.bytes_per_second.is_none(), "{}", row.name),
        }
    }
    let latency = doc
        .benchmarks
        .iter()
        .find(|r| r.run_name.starts_with("cpu."));
    assert!(latency.is_none_or(|r| r.bytes_per_second.is_none()));
}

/// `schema/results.schema.json` (generated from the writing types; a unit test keeps it in
/// step) accepts real output of every probe, and refuses a document that breaks it.
#[test]
fn a_run_of_every_probe_fits_the_schema_and_its_listed_result_names() {
    let schema: serde_json::Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/schema/results.schema.json"
    )))
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid JSON Schema");
    let mut document = crate::every_probe_run().json.clone();
    let errors: Vec<String> = validator
        .iter_errors(&document)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    every_result_is_named_as_its_probe_lists(&document);
    document["latlab"]["probes"][0]["results"][0]["summary"]["median"] = "fast".into();
    document["benchmarks"][0]["real_time"] = serde_json::Value::Null;
    assert_eq!(validator.iter_errors(&document).count(), 2);
}

/// Each result's name matches one of the templates its probe lists (`latlab list`), which
/// `--only` and `--skip` rely on to decide which probes to run.
fn every_result_is_named_as_its_probe_lists(document: &serde_json::Value) {
    let probes = document["latlab"]["probes"].as_array().unwrap();
    assert_eq!(probes.len(), latlab_probes::PROBES.len());
    let mut checked = 0;
    for probe in probes {
        let id = probe["id"].as_str().unwrap();
        let spec = latlab_probes::PROBES.iter().find(|p| p.id == id).unwrap();
        let templates: Vec<regex::Regex> = spec
            .results
            .iter()
            .map(|t| regex::Regex::new(&template_regex(t).unwrap()).unwrap())
            .collect();
        for result in probe["results"].as_array().unwrap() {
            let name = result["name"].as_str().unwrap();
            assert!(
                templates.iter().any(|t| t.is_match(name)),
                "{name} matches none of {:?}",
                spec.results
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} results");
}
