//! The catalogue of hostile numbers, run against every reader of latlab's files: NaN,
//! infinity, -1, 0, 1e300 and 2^64 - 1 put in each numeric field of a real file, one at a
//! time. Each reader must refuse each of them in one line, save where a run writes such a
//! number there itself: the allowances below, a line each, say where and why. A new reader
//! of a file is covered by a line in [`READERS`].

use crate::Exporter;
use crate::stats::NoiseTable;
use serde_json::Value;

/// The hostile values, as text put where the number was. NaN and infinity have no JSON
/// spelling: the text a hand or a careless program writes for them stands in.
const HOSTILE: [&str; 7] = [
    "NaN",
    "Infinity",
    "-1",
    "0",
    "1e300",
    "18446744073709551615",
    "5e-324",
];

/// A reader of one kind of file: a real file of its kind, and the reader itself (`Err` is
/// its refusal).
struct Reader {
    kind: &'static str,
    /// The fields it does not read (a fleet scans the samples past, unparsed).
    unread: &'static [&'static str],
    sample: fn() -> String,
    read: fn(&str) -> Result<(), String>,
    /// The sample with each numeric field in turn made `hostile`: the field's name and the
    /// text.
    variants: fn(&str, &str) -> Vec<(String, String)>,
}

const READERS: &[Reader] = &[
    Reader {
        kind: "results file",
        unread: &[],
        sample: results_sample,
        read: |text| crate::load::run_of(text.as_bytes()).map(drop),
        variants: json_variants,
    },
    Reader {
        kind: "results file read for a fleet (no samples)",
        unread: &[
            ".latlab.probes.results.samples_ns",
            ".latlab.probes.results.cpu_samples_ns",
        ],
        sample: results_sample,
        read: |text| crate::load::figures_of(text.as_bytes()).map(drop),
        variants: json_variants,
    },
    Reader {
        kind: "summary",
        unread: &[],
        sample: summary_sample,
        read: |text| {
            let summary = crate::summary::parse_summary(text.as_bytes())?;
            crate::summary::check_headline(&summary, &latlab_probes::presentations())
        },
        variants: json_variants,
    },
    Reader {
        kind: "noise table",
        unread: &[],
        sample: noise_sample,
        read: |text| NoiseTable::parse(text).map(drop),
        variants: tsv_variants,
    },
];

/// Where a run writes such a value itself: the field (its path, indices left out) and the
/// values it may hold there. Anything else hostile is refused.
const ALLOWED: &[(&str, &[&str])] = &[
    // A sample under a subtracted empty loop can dip to zero or below; a round's median
    // too. (Not all of them: that is refused by the run's own rule.)
    (".latlab.probes.results.samples_ns", &["-1", "0"]),
    (".latlab.probes.results.cpu_samples_ns", &["-1", "0"]),
    (".latlab.probes.results.round_medians_ns", &["-1", "0"]),
    // A time next to the one measured may be no time at all, or less: the timed region's
    // cost on a fast clock, a first call or an empty loop under the overhead subtracted.
    (".latlab.clock.region_overhead_ns", &["0"]),
    (".latlab.probes.results.cold_ns", &["-1", "0"]),
    (".latlab.probes.results.loop_overhead_ns", &["-1", "0"]),
    // What the kernel does not say reads zero: a cache's size, line or sharing, a CPU's
    // clock (a guest's), a memory node of CPUs alone.
    (".latlab.environment.caches.size_bytes", &["0"]),
    (".latlab.environment.caches.line_bytes", &["0"]),
    (".latlab.environment.caches.shared_by_cpus", &["0"]),
    (".latlab.environment.cpu.mhz", &["0"]),
    (".latlab.environment.core_classes.max_frequency_khz", &["0"]),
    (".latlab.environment.memory_nodes.memory_bytes", &["0"]),
    // A result's least sample may dip to zero or below (its summary is held to its
    // samples where they are read).
    (".latlab.probes.results.summary.min", &["-1", "0"]),
    // Counts of what happened during a result, and spreads, are zero when nothing did.
    (".latlab.probes.results.summary.outliers_low", &["0"]),
    (".latlab.probes.results.summary.outliers_high", &["0"]),
    (".latlab.probes.results.summary.stddev", &["0"]),
    (".latlab.probes.results.summary.mad", &["0"]),
    (".latlab.probes.results.summary.cv", &["0"]),
    (
        ".latlab.probes.results.integrity.voluntary_switches",
        &["0"],
    ),
    (
        ".latlab.probes.results.integrity.involuntary_switches",
        &["0"],
    ),
    (".latlab.probes.results.integrity.minor_page_faults", &["0"]),
    (".latlab.probes.results.integrity.major_page_faults", &["0"]),
    (".latlab.stability.start.outliers_low", &["0"]),
    (".latlab.stability.start.outliers_high", &["0"]),
    (".latlab.stability.start.stddev", &["0"]),
    (".latlab.stability.start.mad", &["0"]),
    (".latlab.stability.start.cv", &["0"]),
    // A probe that took less than a nanosecond, an idle machine, CPU and node 0, root.
    (".latlab.probes.duration_ns", &["0"]),
    (".latlab.environment.load_avg", &["0"]),
    (".latlab.load_avg_after", &["0"]),
    (".latlab.environment.allowed_cpus", &["0"]),
    (".latlab.environment.core_classes.cpus", &["0"]),
    (".latlab.environment.memory_nodes.cpus", &["0"]),
    (".latlab.environment.memory_nodes.node", &["0"]),
    (".latlab.environment.privileges.euid", &["0"]),
    (".latlab.environment.perf_counters.paranoid", &["-1", "0"]),
    (
        ".latlab.environment.privileges.rtprio_limit",
        &["0", "18446744073709551615"],
    ),
    (
        ".latlab.environment.privileges.memlock_limit_bytes",
        &["0", "18446744073709551615"],
    ),
    // A summary's spread between rounds is zero where the rounds agree, and the lower end
    // of a median's interval may dip as its samples do; the machine's fields as a results
    // file's.
    (".results.between_rounds_cv", &["0"]),
    (".results.median_ci95_ns", &["-1", "0"]),
    (".environment.caches.size_bytes", &["0"]),
    (".environment.caches.line_bytes", &["0"]),
    (".environment.caches.shared_by_cpus", &["0"]),
    (".environment.cpu.mhz", &["0"]),
    (".environment.core_classes.max_frequency_khz", &["0"]),
    (".environment.memory_nodes.memory_bytes", &["0"]),
    (".environment.load_avg", &["0"]),
    (".environment.allowed_cpus", &["0"]),
    (".environment.core_classes.cpus", &["0"]),
    (".environment.memory_nodes.cpus", &["0"]),
    (".environment.memory_nodes.node", &["0"]),
    (".environment.privileges.euid", &["0"]),
    (".environment.perf_counters.paranoid", &["-1", "0"]),
    (
        ".environment.privileges.rtprio_limit",
        &["0", "18446744073709551615"],
    ),
    (
        ".environment.privileges.memlock_limit_bytes",
        &["0", "18446744073709551615"],
    ),
    // A result that moved not at all between runs.
    ("sd", &["0"]),
    ("range", &["0"]),
];

/// Every reader refuses every hostile number in every field, in one line, but where a run
/// writes it itself; and never panics.
#[test]
fn every_reader_refuses_every_hostile_number_no_run_writes() {
    let mut accepted = Vec::new();
    for reader in READERS {
        let sample = (reader.sample)();
        assert_eq!(
            (reader.read)(&sample),
            Ok(()),
            "{}: its sample",
            reader.kind
        );
        for hostile in HOSTILE {
            for (field, text) in (reader.variants)(&sample, hostile) {
                let allowed = ALLOWED
                    .iter()
                    .any(|(f, values)| *f == field && values.contains(&hostile))
                    || reader.unread.contains(&field.as_str());
                match (reader.read)(&text) {
                    Err(why) => assert!(!why.contains('\n'), "{field} = {hostile}: {why}"),
                    Ok(()) if allowed => {}
                    Ok(()) => accepted.push(format!("{}: {field} = {hostile}", reader.kind)),
                }
            }
        }
    }
    assert!(accepted.is_empty(), "accepted:\n{}", accepted.join("\n"));
}

/// The JSON text with each number in turn made `hostile`, with its field's path (array
/// indices left out). A results file's Google Benchmark part (`context`, `benchmarks`) is
/// for Google Benchmark's tools, and latlab does not read it.
fn json_variants(text: &str, hostile: &str) -> Vec<(String, String)> {
    let value: Value = serde_json::from_str(text).unwrap();
    let mut places = Vec::new();
    numbers_in(&value, &mut Vec::new(), String::new(), &mut places);
    places.retain(|(field, _)| !field.starts_with(".benchmarks") && !field.starts_with(".context"));
    // Set as a marker, then spelled as the text itself: NaN has no JSON spelling.
    const MARKER: &str = "\u{1}hostile\u{1}";
    (places.into_iter())
        .map(|(field, steps)| {
            let mut changed = value.clone();
            let mut at = &mut changed;
            for step in &steps {
                at = match step {
                    Step::Key(key) => &mut at[key.as_str()],
                    Step::Index(i) => &mut at[*i],
                };
            }
            *at = Value::from(MARKER);
            let text = serde_json::to_string(&changed).unwrap();
            let spelled = serde_json::to_string(MARKER).unwrap();
            (field, text.replace(&spelled, hostile))
        })
        .collect()
}

/// One step into a JSON value.
#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every number under `value`: its field's path and the steps to it.
fn numbers_in(
    value: &Value,
    steps: &mut Vec<Step>,
    path: String,
    into: &mut Vec<(String, Vec<Step>)>,
) {
    match value {
        Value::Number(_) => into.push((path, steps.clone())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                steps.push(Step::Index(i));
                numbers_in(item, steps, path.clone(), into);
                steps.pop();
            }
        }
        Value::Object(fields) => {
            for (key, item) in fields {
                steps.push(Step::Key(key.clone()));
                numbers_in(item, steps, format!("{path}.{key}"), into);
                steps.pop();
            }
        }
        _ => {}
    }
}

/// A noise table with each number in turn made `hostile`: its header's numbers, and each
/// result's deviation, range and runs, named by their column.
fn tsv_variants(text: &str, hostile: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let columns = lines
        .iter()
        .position(|l| l.starts_with("result\t"))
        .unwrap();
    let mut variants = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        let numbered: Vec<(usize, String)> = if i > columns {
            (1..fields.len())
                .map(|f| (f, ["sd", "range", "runs"][f - 1].to_string()))
                .collect()
        } else if ["logical_cpus", "rounds", "runs"].contains(&fields[0]) {
            // The header's numbers (its other fields are text: the version, the CPU).
            vec![(1, fields[0].to_string())]
        } else {
            Vec::new()
        };
        for (f, name) in numbered {
            let mut changed = fields.clone();
            changed[f] = hostile;
            let mut all = lines.clone();
            let joined = changed.join("\t");
            all[i] = &joined;
            variants.push((name, all.join("\n") + "\n"));
        }
    }
    variants
}

/// A run of the synthetic host: a timed result with its samples, rounds and counts, a
/// stability check, the synthetic machine's environment with the CPUs it was allowed.
fn sample_run() -> latlab_engine::model::RunRecord {
    use latlab_engine::model::Counted;
    let host: latlab_engine::SharedHost = std::sync::Arc::new(
        latlab_engine::SyntheticHost::default().with_model(&latlab_probes::synthetic::MODEL),
    );
    let config = latlab_engine::Config {
        samples: 5,
        ..latlab_engine::Config::quick()
    };
    let mut runner = latlab_engine::Runner::on(std::sync::Arc::clone(&host), config);
    let mut timed = runner.bench("x/a", "nothing", || 1).unwrap();
    timed.round_medians_ns = vec![timed.summary.median; 3];
    timed.counted = Some(Counted {
        via: "callgrind".into(),
        instructions: 12.5,
        cache: None,
        calls: 300,
    });
    let mut check = runner
        .bench("stability/memory-chase", "nothing", || 2)
        .unwrap();
    check.name = "stability/memory-chase".into();
    let mut run = crate::test_records::record(vec![crate::test_records::probe("x", vec![timed])]);
    run.environment.allowed_cpus = Some(vec![0, 1]);
    run.stability.push(latlab_engine::model::StabilityCheck {
        name: check.name.clone(),
        method: "test".into(),
        start: check.summary.clone(),
        end: None,
        moved_share: 0.1,
        moved: None,
    });
    run
}

fn results_sample() -> String {
    crate::JsonExporter.render(&sample_run()).unwrap()
}

fn summary_sample() -> String {
    let exporter = crate::summary::SummaryExporter {
        declared: latlab_probes::presentations(),
    };
    exporter.render(&sample_run()).unwrap()
}

fn noise_sample() -> String {
    let runs: Vec<_> = (0..5)
        .map(|k| {
            let mut run = sample_run();
            run.probes[0].results[0].summary.median *= 1.0 + 0.01 * k as f64;
            run
        })
        .collect();
    NoiseTable::measure(&runs, |_, _| true).unwrap().to_text()
}
