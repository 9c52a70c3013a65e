//! Reading a results file back: latlab's JSON, and nothing that merely resembles it.
//!
//! Every refusal is one sentence naming the file and what to do: a missing or unreadable
//! file, text that is not JSON (or is cut short), JSON from another tool (Google Benchmark's
//! own files included: they lack latlab's record), and files from a newer latlab whose schema
//! this one does not know. Files of schema 1, whose parameters were all text, are read with
//! their numbers and histograms converted to the typed values of schema 2.

use crate::json::JSON_SCHEMA_VERSION;
use latlab_doors::Reached;
use latlab_engine::model::RunRecord;
use latlab_engine::parameters::{Histogram, Value};
use std::path::{Path, PathBuf};

/// Why a results file was refused; the message is the whole explanation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LoadError(pub String);

/// The largest results file read: a full run writes a few megabytes.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Reads the run recorded in the latlab JSON file at `path` (which the user named, or latlab
/// found: [`Reached`]), and checks that its figures are ones a run could have written
/// ([`crate::validate`]).
pub fn load_run(path: &Path, reached: Reached) -> Result<RunRecord, LoadError> {
    load_versioned_run(path, reached).map(|(run, _)| run)
}

/// As [`load_run`], with the schema version the file was written in (older ones are
/// converted as they are read).
pub fn load_versioned_run(path: &Path, reached: Reached) -> Result<(RunRecord, u64), LoadError> {
    let bytes = read_results_file(path, reached).map_err(|why| in_file(path, why))?;
    run_of(&bytes).map_err(|why| in_file(path, why))
}

/// A results file to read: one the user named, or one a walk of a directory the user named
/// found ([`latlab_doors::tree`]), read again from that directory without following a link.
#[derive(Debug, Clone)]
pub enum RunFile {
    Named(PathBuf),
    Found(latlab_doors::tree::Found),
}

impl RunFile {
    pub fn path(&self) -> &Path {
        match self {
            RunFile::Named(path) => path,
            RunFile::Found(found) => &found.path,
        }
    }

    /// The run it records, read as [`load_run`] reads it.
    pub fn load(&self) -> Result<RunRecord, LoadError> {
        let bytes = match self {
            RunFile::Named(path) => read_results_file(path, Reached::Named),
            RunFile::Found(found) => read_found(found),
        };
        let bytes = bytes.map_err(|why| in_file(self.path(), why))?;
        let (run, _) = run_of(&bytes).map_err(|why| in_file(self.path(), why))?;
        Ok(run)
    }
}

/// The runs of `files`, each read as [`load_run`] reads it, on as many threads as there are
/// CPUs (parsing is most of a comparison's time), in the order given; the first file in that
/// order that is refused is the error.
pub fn load_runs(files: &[RunFile]) -> Result<Vec<RunRecord>, LoadError> {
    crate::parallel::map_in_order(files, "latlab-loader", RunFile::load)
        .into_iter()
        .collect()
}

/// The run the bytes of a results file hold, parsed and checked as [`load_run`] does; the
/// error is why, without the file's name.
pub fn run_of(bytes: &[u8]) -> Result<(RunRecord, u64), String> {
    let (run, version) = parse_versioned_run(bytes)?;
    crate::validate::validate(&run)
        .map_err(|why| format!("{why}; give a results.json written by latlab"))?;
    Ok((one_line_fields(run), version))
}

/// `why` a file was refused, naming it.
fn in_file(path: &Path, why: String) -> LoadError {
    LoadError(format!("{}: {why}", path.display()))
}

/// As [`load_versioned_run`], with the results' samples left out (every `samples_ns` and
/// `cpu_samples_ns` empty): what a fleet of thousands of runs reads. The samples are
/// scanned, not parsed, and the rest is checked as [`crate::validate::validate_figures`]
/// says.
pub fn load_figures(path: &Path, reached: Reached) -> Result<(RunRecord, u64), LoadError> {
    let bytes = read_results_file(path, reached).map_err(|why| in_file(path, why))?;
    figures_of(&bytes).map_err(|why| in_file(path, why))
}

/// As [`load_figures`], from the file's bytes; the error is why, without the file's name.
pub fn figures_of(bytes: &[u8]) -> Result<(RunRecord, u64), String> {
    let (run, version) = latlab_engine::model::without_samples(|| parse_versioned_run(bytes))?;
    crate::validate::validate_figures(&run)
        .map_err(|why| format!("{why}; give a results.json written by latlab"))?;
    Ok((one_line_fields(run), version))
}

/// The record with every field that is one line (names, the host, the CPU, the kernel,
/// every value describing the machine; the start is checked to be a time) made one line ([`crate::printable::one_line`]): anyone can write a results file, and a
/// line break or a bidirectional control in a name could forge a line of what is printed
/// from it ("B against A: 0 slower …").
fn one_line_fields(mut run: RunRecord) -> RunRecord {
    use crate::printable::{make_environment_one_line, make_one_line as fix, make_short_line};
    make_environment_one_line(&mut run.environment);
    make_short_line(&mut run.latlab_version);
    for probe in &mut run.probes {
        fix(&mut probe.id);
        for result in &mut probe.results {
            fix(&mut result.name);
        }
    }
    run
}

/// The bytes of a results file of at most [`MAX_FILE_BYTES`], through the door in
/// ([`latlab_doors::input`]): a regular file only, refused with what to give instead.
pub(crate) fn read_results_file(path: &Path, reached: Reached) -> Result<Vec<u8>, String> {
    latlab_doors::input::read(path, reached, MAX_FILE_BYTES).map_err(refused_results_file)
}

/// As [`read_results_file`], for a file a walk found ([`latlab_doors::tree`]).
pub(crate) fn read_found(found: &latlab_doors::tree::Found) -> Result<Vec<u8>, String> {
    found.read(MAX_FILE_BYTES).map_err(refused_results_file)
}

/// Why a results file could not be read, with what to give instead.
fn refused_results_file(why: String) -> String {
    if why.starts_with("cannot read it") || why.contains("memory") {
        why
    } else if why.contains("more than the") || why.contains("grew past") {
        format!("{why}; is it a results file?")
    } else {
        format!("{why}; give a results.json written by latlab")
    }
}

/// Parses a latlab JSON document; the error says what is wrong with it.
pub fn parse_run(bytes: &[u8]) -> Result<RunRecord, String> {
    parse_versioned_run(bytes).map(|(run, _)| run)
}

/// A document of the current schema, read straight into the record.
#[derive(serde::Deserialize)]
struct CurrentDocument {
    latlab_schema_version: u64,
    latlab: RunRecord,
}

/// Parses a latlab JSON document and says which schema it was written in. A document of
/// the current schema is read straight into the record (a fleet reads hundreds); anything
/// else takes the path that converts older schemas and explains refusals.
pub fn parse_versioned_run(bytes: &[u8]) -> Result<(RunRecord, u64), String> {
    // A UTF-8 byte-order mark, which some editors add, is not part of the JSON (RFC 8259
    // lets a reader ignore it).
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if crate::summary::is_summary(bytes) {
        return Err(
            "a run's summary, which holds no samples; give the results.json written \
                    beside it"
                .into(),
        );
    }
    crate::validate::strings_bounded(bytes)?;
    match serde_json::from_slice::<CurrentDocument>(bytes) {
        Ok(document) if document.latlab_schema_version == u64::from(JSON_SCHEMA_VERSION) => {
            return Ok((document.latlab, document.latlab_schema_version));
        }
        Err(e) if e.to_string().starts_with("duplicate field") => {
            return Err(format!(
                "{e}: a key appears twice, so the file was edited or damaged; give a \
                 results.json as latlab wrote it"
            ));
        }
        _ => {}
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        if e.is_eof() {
            "the JSON ends too soon: the file is truncated (was the run interrupted while it \
             was written by another program?)"
                .to_string()
        } else {
            format!("not JSON ({e}); give a results.json written by latlab")
        }
    })?;
    let object = value.as_object().ok_or(
        "JSON, but not latlab's results (not an object); give a results.json written by latlab",
    )?;
    let version = schema_version(object)?;
    let record = object
        .get("latlab")
        .ok_or("latlab's record (the \"latlab\" field) is missing: the file is damaged")?;
    Ok((record_of_schema(record.clone(), version)?, version))
}

/// The schema `object` says it was written in: one this latlab reads, or why not.
fn schema_version(object: &serde_json::Map<String, serde_json::Value>) -> Result<u64, String> {
    let Some(version) = object.get("latlab_schema_version") else {
        return Err(if object.contains_key("benchmarks") {
            "a Google Benchmark file without latlab's record; give a results.json written by \
             latlab"
                .to_string()
        } else {
            "JSON, but not latlab's results (no latlab_schema_version); give a results.json \
             written by latlab"
                .to_string()
        });
    };
    let version = version
        .as_u64()
        .ok_or("latlab_schema_version is not a whole number: the file is damaged")?;
    if version == 0 {
        return Err(
            "latlab_schema_version is 0, which no latlab writes (the first schema is 1): the \
             file was edited or damaged; give a results.json as latlab wrote it"
                .into(),
        );
    }
    if version > u64::from(JSON_SCHEMA_VERSION) {
        return Err(format!(
            "written by a newer latlab (schema {version}; this one reads up to \
             {JSON_SCHEMA_VERSION}); use that latlab or a newer one"
        ));
    }
    Ok(version)
}

/// The record of a document of schema `version`, converted to the current schema.
fn record_of_schema(mut record: serde_json::Value, version: u64) -> Result<RunRecord, String> {
    if version < 2 {
        tag_phrased_warnings(&mut record);
    }
    // Read from text, as the current schema is, so that the record's deserialiser is built
    // once (from a Value it would be built again, a third of this crate's build).
    let text = serde_json::to_vec(&record).expect("a JSON value serialises");
    let mut run: RunRecord = serde_json::from_slice(&text).map_err(|e| {
        // The position is in that text, not in the file: left out.
        let position = format!(" at line {} column {}", e.line(), e.column());
        let why = e.to_string();
        let why = why.strip_suffix(&position).unwrap_or(&why);
        format!("latlab's record does not read ({why}): the file is damaged")
    })?;
    if version < 2 {
        type_text_parameters(&mut run);
    }
    Ok(run)
}

/// Schema 1 wrote a warning as `{"code", "message"}`: it is read as the sentence it was.
fn tag_phrased_warnings(record: &mut serde_json::Value) {
    let Some(probes) = record.get_mut("probes").and_then(|p| p.as_array_mut()) else {
        return;
    };
    let warnings = probes
        .iter_mut()
        .filter_map(|p| p.get_mut("results")?.as_array_mut())
        .flatten()
        .filter_map(|r| r.get_mut("warnings")?.as_array_mut())
        .flatten();
    for warning in warnings {
        if let Some(object) = warning.as_object_mut() {
            object.insert("kind".into(), "phrased".into());
        }
    }
}

/// Schema 1 wrote every parameter as text: numbers become numbers, `histogram_us` a
/// histogram, and the rest stays text.
fn type_text_parameters(run: &mut RunRecord) {
    let values = run
        .probes
        .iter_mut()
        .flat_map(|p| p.results.iter_mut())
        .flat_map(|r| r.parameters.iter_mut());
    for (key, value) in values {
        let Value::Text(text) = value else {
            continue;
        };
        if let Ok(n) = text.parse::<i64>() {
            *value = Value::Integer(n);
        } else if let Ok(x) = text.parse::<f64>() {
            *value = Value::Number(x);
        } else if key == latlab_engine::names::key::HISTOGRAM_US.name()
            && let Some(histogram) = parse_histogram(text)
        {
            *value = Value::Histogram(histogram);
        }
    }
}

/// `<1:3 1-2:40 2-4:7` as a histogram; `None` when it is not one.
fn parse_histogram(text: &str) -> Option<Histogram> {
    let mut histogram = Histogram {
        upper_us: Vec::new(),
        counts: Vec::new(),
    };
    for bucket in text.split_whitespace() {
        let (label, count) = bucket.rsplit_once(':')?;
        let upper = match label {
            "<1" => 1,
            range => range.split_once('-')?.1.parse().ok()?,
        };
        histogram.upper_us.push(upper);
        histogram.counts.push(count.parse().ok()?);
    }
    Some(histogram)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Exporter;
    use proptest::prelude::*;

    fn sample() -> String {
        let run = crate::test_records::record(vec![crate::test_records::probe(
            "cpu.call",
            vec![crate::test_records::result("cpu.call/empty", 1.2, &[])],
        )]);
        crate::JsonExporter.render(&run).unwrap()
    }

    #[test]
    fn latlab_json_reads_back() {
        let run = parse_run(sample().as_bytes()).unwrap();
        assert_eq!(run.results().next().unwrap().name, "cpu.call/empty");
    }

    #[test]
    fn a_schema_1_file_reads_with_typed_parameters() {
        let mut old: serde_json::Value = serde_json::from_str(&sample()).unwrap();
        old["latlab_schema_version"] = 1.into();
        old["latlab"]["clock"]["kind"] = "fake".into();
        old["latlab"]["probes"][0]["results"][0]["warnings"] = serde_json::json!([
            {"code": "high_variance", "message": "unstable: coefficient of variation 23%"}
        ]);
        old["latlab"]["probes"][0]["results"][0]["parameters"] = serde_json::json!({
            "working_set_bytes": "65536",
            "meet_rate": "0.9990",
            "histogram_us": "<1:3 1-2:40 32-64:1",
            "layout": "random",
        });
        let run = parse_run(old.to_string().as_bytes()).unwrap();
        let result = run.results().next().unwrap();
        assert_eq!(
            result.parameters["working_set_bytes"],
            Value::Integer(65536)
        );
        assert_eq!(result.parameters["meet_rate"], Value::Number(0.999));
        assert_eq!(result.parameters["layout"], Value::from("random"));
        assert_eq!(
            crate::advice::warning(&result.warnings[0]),
            "unstable: coefficient of variation 23%"
        );
        assert_eq!(run.clock.kind, latlab_engine::ClockKind::Synthetic);
        let histogram = result.parameters["histogram_us"].as_histogram().unwrap();
        assert_eq!(histogram.upper_us, [1, 2, 64]);
        assert_eq!(histogram.counts, [3, 40, 1]);
    }

    #[test]
    fn each_kind_of_bad_file_is_refused_with_its_reason() {
        let refused = |text: &str| parse_run(text.as_bytes()).unwrap_err();
        assert!(refused("hello").contains("not JSON"));
        let full = sample();
        assert!(refused(&full[..full.len() / 2]).contains("truncated"));
        assert!(refused("[1, 2]").contains("not an object"));
        assert!(refused(r#"{"context": {}, "benchmarks": []}"#).contains("Google Benchmark"));
        assert!(refused(r#"{"tool": "other"}"#).contains("not latlab's results"));
        let mut newer: serde_json::Value = serde_json::from_str(&full).unwrap();
        newer["latlab_schema_version"] = 99.into();
        assert!(refused(&newer.to_string()).contains("newer latlab"));
        assert!(refused(r#"{"latlab_schema_version": 1}"#).contains("missing"));
        assert!(refused(r#"{"latlab_schema_version": 1, "latlab": {"x": 1}}"#).contains("damaged"));
        // An older schema's record that does not read says what is wrong with it, and no
        // position (which would be in the converted text, not in the file).
        let mut old: serde_json::Value = serde_json::from_str(&full).unwrap();
        old["latlab_schema_version"] = 1.into();
        old["latlab"]["probes"] = "none".into();
        let why = refused(&old.to_string());
        assert!(
            why.starts_with("latlab's record does not read (invalid type"),
            "{why}"
        );
        assert!(!why.contains(" at line "), "{why}");
    }

    #[test]
    fn a_byte_order_mark_is_passed_over_and_a_repeated_key_named() {
        let with_mark = [&b"\xEF\xBB\xBF"[..], sample().as_bytes()].concat();
        assert!(parse_run(&with_mark).is_ok());
        let text = sample();
        let twice = text.replacen('{', "{\"latlab_schema_version\": 2, ", 1);
        let refused = parse_run(twice.as_bytes()).unwrap_err();
        assert!(
            refused.contains("duplicate field `latlab_schema_version`"),
            "{refused}"
        );
        assert!(refused.contains("a key appears twice"), "{refused}");
    }

    #[test]
    fn a_missing_file_is_named() {
        let error = load_run(Path::new("/nonexistent/results.json"), Reached::Named).unwrap_err();
        assert!(
            error
                .0
                .starts_with("/nonexistent/results.json: cannot read it")
        );
    }

    /// Any JSON value: scalars of every kind (huge, negative, fractional numbers; empty and
    /// odd strings) and arrays and objects of them, a few levels deep.
    fn any_json() -> impl Strategy<Value = serde_json::Value> {
        let scalar = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            any::<i64>().prop_map(serde_json::Value::from),
            any::<u64>().prop_map(serde_json::Value::from),
            any::<f64>()
                .prop_filter("JSON has no NaN or infinity", |x| x.is_finite())
                .prop_map(serde_json::Value::from),
            "[a-z_:<>0-9 \\-]{0,12}".prop_map(serde_json::Value::from),
        ];
        scalar.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                proptest::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// The node of `root` that `turns` lead to: each turn picks a child (modulo how many
    /// there are), stopping at a scalar.
    fn node_at<'a>(
        mut node: &'a mut serde_json::Value,
        turns: &[usize],
    ) -> &'a mut serde_json::Value {
        for &turn in turns {
            let children = match node {
                serde_json::Value::Array(items) if !items.is_empty() => items.len(),
                serde_json::Value::Object(fields) if !fields.is_empty() => fields.len(),
                _ => break,
            };
            node = match node {
                serde_json::Value::Array(items) => &mut items[turn % children],
                serde_json::Value::Object(fields) => {
                    fields.values_mut().nth(turn % children).unwrap()
                }
                _ => unreachable!(),
            };
        }
        node
    }

    proptest! {
        /// A real file with any one of its values, at any depth, replaced by any other JSON
        /// value (or removed from its object) reads or is refused with one line of reason,
        /// and never panics: every case is valid JSON, so each one reaches the record's own
        /// checks rather than stopping at the first syntax error.
        #[test]
        fn a_file_with_any_value_replaced_reads_or_is_refused_in_one_line(
            turns in proptest::collection::vec(any::<usize>(), 0..8),
            replacement in any_json(),
            remove in any::<bool>(),
        ) {
            let mut root: serde_json::Value = serde_json::from_str(&sample()).unwrap();
            let (parent_turns, last) = turns.split_at(turns.len().saturating_sub(1));
            let parent = node_at(&mut root, parent_turns);
            match (parent, last.first()) {
                (serde_json::Value::Object(fields), Some(&turn)) if remove && !fields.is_empty() => {
                    let key = fields.keys().nth(turn % fields.len()).unwrap().clone();
                    fields.remove(&key);
                }
                (parent, _) => *node_at(parent, last) = replacement,
            }
            if let Err(reason) = parse_run(root.to_string().as_bytes()) {
                prop_assert!(!reason.trim().is_empty());
                prop_assert!(!reason.contains('\n'), "{}", reason);
            }
        }

        /// A real file with one byte changed, or cut anywhere, reads or is refused, and
        /// never panics.
        #[test]
        fn mutated_files_read_or_are_refused(at in 0usize..4096, byte in any::<u8>(), cut in 0usize..4096) {
            let mut bytes = sample().into_bytes();
            let at = at % bytes.len();
            bytes[at] = byte;
            let _ = parse_run(&bytes);
            let cut = cut % bytes.len();
            prop_assert!(parse_run(&bytes[..cut]).is_err());
        }
    }
}
