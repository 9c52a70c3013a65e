//! Mutated real results files thrown at the loader and every renderer: each is read and
//! rendered, or refused with an error, never a panic and never a hang. 2,000 cases from a
//! fixed seed, each with a time limit, so that a failure repeats.

use crate::latlab;
use latlab_report::compare::{
    CompareCsv, CompareJson, CompareMarkdown, CompareText, Compared, DEFAULT_THRESHOLD, sides,
};
use latlab_report::load::parse_run;
use latlab_report::stats::NoiseTables;
use latlab_report::validate::validate;
use latlab_report::{
    CsvExporter, Exporter, HeadlineExporter, HtmlExporter, JsonExporter, MarkdownExporter,
    TableExporter,
};
use serde_json::Value;
use std::sync::mpsc;
use std::time::Duration;

const CASES: usize = 2_000;
/// A case that takes longer than this is a hang.
const CASE_LIMIT: Duration = Duration::from_secs(10);

/// xorshift64*: a fixed sequence of mutations, the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Numbers no run writes, and values of the wrong type.
fn extreme(rng: &mut Rng) -> Value {
    let choices = [
        serde_json::json!(5e-324),
        serde_json::json!(1e308),
        serde_json::json!(-1e308),
        serde_json::json!(0.0),
        serde_json::json!(-0.0),
        serde_json::json!(u64::MAX),
        serde_json::json!(i64::MIN),
        serde_json::json!(1e-300),
        serde_json::json!(-1.0),
        serde_json::json!("1.5"),
        serde_json::json!(null),
        serde_json::json!([]),
        serde_json::json!({}),
        serde_json::json!(true),
        serde_json::json!([1e308, 5e-324]),
    ];
    choices[rng.below(choices.len())].clone()
}

/// A random node of `value` (depth-first), to mutate.
fn random_node<'v>(value: &'v mut Value, rng: &mut Rng) -> &'v mut Value {
    let mut node = value;
    for _ in 0..12 {
        let len = match &*node {
            Value::Array(items) => items.len(),
            Value::Object(map) => map.len(),
            _ => 0,
        };
        if len == 0 || rng.below(4) == 0 {
            break;
        }
        let i = rng.below(len);
        node = match node {
            Value::Array(items) => &mut items[i],
            Value::Object(map) => map.values_mut().nth(i).expect("in range"),
            _ => unreachable!(),
        };
    }
    node
}

/// One mutation of the real file: byte flips, truncation, a deleted field, a swapped type,
/// an extreme number, or several of these.
fn mutate(original: &Value, text: &str, rng: &mut Rng) -> Vec<u8> {
    match rng.below(6) {
        0 => {
            let mut bytes = text.as_bytes().to_vec();
            for _ in 0..=rng.below(4) {
                let at = rng.below(bytes.len());
                bytes[at] = rng.next() as u8;
            }
            bytes
        }
        1 => text.as_bytes()[..rng.below(text.len())].to_vec(),
        _ => {
            let mut value = original.clone();
            for _ in 0..=rng.below(3) {
                let node = random_node(&mut value, rng);
                match rng.below(3) {
                    0 => {
                        if let Value::Object(map) = node
                            && let Some(key) = map.keys().nth(rng.below(map.len())).cloned()
                        {
                            map.remove(&key);
                        }
                    }
                    _ => *node = extreme(rng),
                }
            }
            value.to_string().into_bytes()
        }
    }
}

/// What a case came to: refused by the loader, or read and rendered by everything.
enum Outcome {
    Refused,
    Rendered,
}

fn read_and_render(bytes: &[u8]) -> Outcome {
    let Ok(run) = parse_run(bytes) else {
        return Outcome::Refused;
    };
    if validate(&run).is_err() {
        return Outcome::Refused;
    }
    let table = TableExporter::default();
    let declared = latlab_probes::presentations();
    let headline = HeadlineExporter {
        declared: declared.clone(),
        ..HeadlineExporter::default()
    };
    let page = HtmlExporter { declared };
    for exporter in [
        &table as &dyn Exporter,
        &MarkdownExporter,
        &CsvExporter,
        &JsonExporter,
        &headline,
        &page,
    ] {
        let _ = exporter.render(&run);
    }
    let pair = [("A".to_string(), run.clone()), ("B".to_string(), run)];
    let compared = Compared::of(
        sides(&pair),
        DEFAULT_THRESHOLD,
        &latlab_probes::presentations(),
        NoiseTables::shipped(),
    );
    let formats: [&dyn Exporter<Compared>; 4] = [
        &CompareText::default(),
        &CompareMarkdown,
        &CompareCsv,
        &CompareJson,
    ];
    for exporter in formats {
        let _ = exporter.render(&compared);
    }
    Outcome::Rendered
}

#[test]
fn mutated_results_are_refused_or_rendered_never_panicked_on_or_hung() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    // Results of every kind the renderers draw: a latency curve and levels, the memcpy
    // sweep, file sizes, IPC histograms, the core-to-core matrix, plain timed loops.
    latlab(dir.path())
        .args([
            "run",
            "--synthetic",
            "--max-size",
            "256KiB",
            "--only",
            "mem.latency|mem.memcpy|file.write|ipc.latency|thread.core_to_core|cpu.call",
            "--samples",
            "5",
            "--json",
        ])
        .arg(&path)
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    // At most 24 results a probe (still every kind), so that 2,000 cases take seconds.
    let mut original: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for probe in original["latlab"]["probes"].as_array_mut().unwrap() {
        probe["results"].as_array_mut().unwrap().truncate(24);
    }
    // Google Benchmark's rows are not read back; a few keep their shape in the file.
    original["benchmarks"].as_array_mut().unwrap().truncate(24);
    let text = original.to_string();
    let mut rng = Rng(0x005E_ED1A_71AB);
    let mut rendered = 0;
    for case in 0..CASES {
        let bytes = mutate(&original, &text, &mut rng);
        let (sender, receiver) = mpsc::channel();
        let worker = std::thread::spawn({
            let bytes = bytes.clone();
            move || {
                let outcome = std::panic::catch_unwind(|| read_and_render(&bytes));
                let _ = sender.send(outcome.is_ok().then_some(outcome));
            }
        });
        match receiver.recv_timeout(CASE_LIMIT) {
            Ok(Some(Ok(Outcome::Rendered))) => rendered += 1,
            Ok(Some(Ok(Outcome::Refused))) => {}
            Ok(_) => {
                let shown = String::from_utf8_lossy(&bytes);
                panic!(
                    "case {case} panicked on: {}",
                    &shown[..shown.len().min(2000)]
                );
            }
            Err(_) => {
                let shown = String::from_utf8_lossy(&bytes);
                panic!(
                    "case {case} took longer than {CASE_LIMIT:?}: {}",
                    &shown[..shown.len().min(2000)]
                );
            }
        }
        worker.join().unwrap();
    }
    eprintln!("{rendered} of {CASES} mutated files were read and rendered, the rest refused");
    // Mutations that keep the file valid still go through every renderer.
    assert!(
        rendered >= CASES / 20,
        "only {rendered} of {CASES} cases rendered"
    );
}
