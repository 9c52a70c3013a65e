//! Bad input: one line on stderr saying what was wrong and what to do, exit status 2, no
//! panic, and nothing written.

use crate::{files_in, latlab, results_file};
use std::path::Path;

/// Runs latlab with `args` in an empty directory and checks the refusal.
fn refused(args: &[&str], expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    refused_in(dir.path(), args, expected);
}

/// Runs latlab with `args` in `dir` and checks the refusal: exit 2, one line naming the
/// problem, nothing on stdout, and no file added to `dir`.
fn refused_in(dir: &Path, args: &[&str], expected: &str) {
    let before = files_in(dir);
    let output = latlab(dir).args(args).output().unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: not one line: {stderr}"
    );
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    assert!(
        stderr.contains(expected),
        "{args:?}: expected {expected:?} in {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(output.stdout.is_empty(), "{args:?} wrote to stdout");
    assert_eq!(files_in(dir), before, "{args:?} left files");
}

#[test]
fn an_unknown_probe_pattern() {
    refused(
        &["run", "--synthetic", "--only", "nosuch"],
        "--only 'nosuch' matches no probe id; `latlab list` shows the probe ids",
    );
    refused(
        &["run", "--synthetic", "--only", "cpu.branch/nosuch"],
        "--only 'cpu.branch/nosuch' matches no result name; `latlab list`",
    );
    refused(&["run", "--synthetic", "--skip", "."], "leaves no probe");
}

#[test]
fn an_invalid_pattern() {
    refused(
        &["run", "--synthetic", "--only", "clock("],
        "not a valid regular expression",
    );
}

#[test]
fn zero_negative_and_absurd_sample_counts() {
    for n in ["0", "-3", "4", "1000000", "many"] {
        refused(&["run", "--synthetic", "--samples", n], "from 5 to 100000");
    }
}

#[test]
fn unparsable_and_absurd_durations() {
    refused(
        &["run", "--synthetic", "--target-time", "soon"],
        "not a duration",
    );
    refused(
        &["run", "--synthetic", "--target-time", "5"],
        "not a duration",
    );
    refused(
        &["run", "--synthetic", "--target-time", "-2ms"],
        "'-2ms' for '--target-time <DURATION>': must be from 10us to 10s",
    );
    refused(
        &["run", "--synthetic", "--target-time", "1h"],
        "from 10us to 10s",
    );
    refused(
        &["run", "--synthetic", "--target-time", "1ns"],
        "from 10us to 10s",
    );
}

#[test]
fn outputs_in_missing_or_unwritable_directories() {
    refused(
        &["run", "--synthetic", "--json", "missing/r.json"],
        "does not exist",
    );
    refused(
        &["run", "--synthetic", "--csv", "missing/r.csv"],
        "does not exist",
    );
    refused(
        &["run", "--synthetic", "--out", "missing/deeper"],
        "does not exist",
    );
    refused(
        &["run", "--synthetic", "--json", "/proc/r.json"],
        "under /proc, which holds the kernel's files, not outputs",
    );
    refused(&["run", "--synthetic", "--markdown", "."], "is a directory");
    refused(
        &["run", "--synthetic", "--csv", "-", "--json", "-"],
        "only one of",
    );
}

#[test]
fn an_out_path_that_is_a_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("taken"), "x").unwrap();
    refused_in(
        dir.path(),
        &["run", "--synthetic", "--out", "taken"],
        "is not a directory",
    );
}

#[test]
fn a_working_set_beyond_memory_or_malformed() {
    refused(
        &["mem", "--synthetic", "--max-size", "100000GiB"],
        "is available now (free memory, what the memory cgroup still allows, or what `ulimit -v` still allows",
    );
    refused(&["mem", "--synthetic", "--max-size", "12"], "at least 4KiB");
    refused(&["mem", "--synthetic", "--max-size", "big"], "not a size");
    refused(
        &["mem", "--synthetic", "--only", "^cpu"],
        "matches no probe",
    );
}

#[test]
fn a_cpu_that_does_not_exist() {
    refused(
        &["run", "--synthetic", "--pin", "4095"],
        "cannot run on CPU 4095",
    );
    refused(&["run", "--synthetic", "--pin", "-1"], "a CPU number");
}

#[test]
fn an_unknown_flag_or_suite() {
    refused(&["run", "--frobnicate"], "--frobnicate");
    refused(&["run", "--suite", "huge"], "huge");
}

#[test]
fn more_ipc_pairs_than_cpus() {
    refused(
        &[
            "run",
            "--synthetic",
            "--only",
            "ipc.latency",
            "--pairs",
            "100000",
        ],
        "--pairs 100000 is more than the",
    );
    refused(&["run", "--pairs", "0"], "at least 1");
}

#[test]
fn a_malformed_ipc_deadline_or_iteration_count() {
    refused(&["run", "--deadline", "soon"], "not a duration");
    refused(&["run", "--deadline", "20s"], "must be from 1us to 10s");
    refused(
        &["run", "--iterations", "3"],
        "must be a whole number from 10",
    );
}

#[test]
fn a_file_directory_that_cannot_be_used() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    refused(
        &["run", "--only", "file", "--dir", missing.to_str().unwrap()],
        "give an existing directory",
    );
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    refused(
        &["run", "--only", "file", "--dir", file.to_str().unwrap()],
        "not a directory",
    );
    // Not even root may create files in /proc.
    refused(
        &["run", "--only", "file", "--dir", "/proc"],
        "is not writable",
    );
}

#[test]
fn compare_refuses_what_is_not_a_latlab_results_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = results_file(dir.path(), "good.json");
    let text = std::fs::read_to_string(&good).unwrap();
    let write = |name: &str, contents: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, contents).unwrap();
        path.display().to_string()
    };
    let truncated = write("truncated.json", &text[..text.len() / 3]);
    let not_json = write("notes.json", "these are not results");
    let google = write("gb.json", r#"{"context": {}, "benchmarks": []}"#);
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["latlab_schema_version"] = 99.into();
    let newer = write("newer.json", &value.to_string());
    let good = good.display().to_string();
    for (bad, expected) in [
        ("missing.json".to_string(), "cannot read it"),
        (truncated, "truncated"),
        (not_json, "not JSON"),
        (google, "Google Benchmark file"),
        (newer, "newer latlab"),
    ] {
        refused_in(dir.path(), &["compare", &good, &bad], expected);
    }
}

#[test]
fn report_refuses_a_bad_file_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("results.json");
    std::fs::write(&bad, "{\"benchmarks\": [").unwrap();
    refused_in(dir.path(), &["report", bad.to_str().unwrap()], "truncated");
    refused_in(
        dir.path(),
        &["report", dir.path().join("missing.json").to_str().unwrap()],
        "cannot read it",
    );
}
