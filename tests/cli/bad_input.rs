//! Bad input: one line on stderr saying what was wrong and what to do, exit status 2, no
//! panic, and nothing written.

use crate::{refused_in, results_file};

/// Runs latlab with `args` in an empty directory and checks the refusal.
fn refused(args: &[&str], expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    refused_in(dir.path(), args, expected);
}

#[test]
fn an_unknown_probe_pattern() {
    for (args, expected) in [
        (
            &["run", "--synthetic", "--only", "nosuch"][..],
            "--only 'nosuch' matches no probe id; `latlab list` shows the probe ids",
        ),
        (
            &["run", "--synthetic", "--only", "cpu.branch/nosuch"],
            "--only 'cpu.branch/nosuch' matches no result name; `latlab list`",
        ),
        (&["run", "--synthetic", "--skip", "."], "leaves no probe"),
    ] {
        refused(args, expected);
    }
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
    for (args, expected) in [
        (
            &["run", "--synthetic", "--target-time", "soon"][..],
            "not a duration",
        ),
        (
            &["run", "--synthetic", "--target-time", "5"],
            "not a duration",
        ),
        (
            &["run", "--synthetic", "--target-time", "-2ms"],
            "'-2ms' for '--target-time <DURATION>': must be from 10us to 10s",
        ),
        (
            &["run", "--synthetic", "--target-time", "1h"],
            "from 10us to 10s",
        ),
        (
            &["run", "--synthetic", "--target-time", "1ns"],
            "from 10us to 10s",
        ),
    ] {
        refused(args, expected);
    }
}

#[test]
fn outputs_in_missing_or_unwritable_directories() {
    for (args, expected) in [
        (
            &["run", "--synthetic", "--json", "missing/r.json"][..],
            "does not exist",
        ),
        (
            &["run", "--synthetic", "--csv", "missing/r.csv"],
            "does not exist",
        ),
        (
            &["run", "--synthetic", "--out", "missing/deeper"],
            "does not exist",
        ),
        (
            &["run", "--synthetic", "--json", "/proc/r.json"],
            "under /proc, which holds the kernel's files, not outputs",
        ),
        (&["run", "--synthetic", "--markdown", "."], "is a directory"),
        (
            &["run", "--synthetic", "--csv", "-", "--json", "-"],
            "only one of",
        ),
    ] {
        refused(args, expected);
    }
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
    for (args, expected) in [
        (
            &["mem", "--synthetic", "--max-size", "100000GiB"][..],
            "is available now (free memory, what the memory cgroup still allows, or what `ulimit -v` still allows",
        ),
        (&["mem", "--synthetic", "--max-size", "12"], "at least 4KiB"),
        (&["mem", "--synthetic", "--max-size", "big"], "not a size"),
        (
            &["mem", "--synthetic", "--only", "^cpu"],
            "matches no probe",
        ),
    ] {
        refused(args, expected);
    }
}

#[test]
fn a_cpu_that_does_not_exist() {
    for (args, expected) in [
        (
            &["run", "--synthetic", "--pin", "4095"][..],
            "cannot run on CPU 4095",
        ),
        (&["run", "--synthetic", "--pin", "-1"], "a CPU number"),
    ] {
        refused(args, expected);
    }
}

#[test]
fn an_unknown_flag_or_suite() {
    for (args, expected) in [
        (&["run", "--frobnicate"][..], "--frobnicate"),
        (&["run", "--suite", "huge"], "huge"),
    ] {
        refused(args, expected);
    }
}

#[test]
fn more_ipc_pairs_than_cpus() {
    for (args, expected) in [
        (
            &[
                "run",
                "--synthetic",
                "--only",
                "ipc.latency",
                "--pairs",
                "100000",
            ][..],
            "--pairs 100000 is more than the",
        ),
        (&["run", "--pairs", "0"], "at least 1"),
    ] {
        refused(args, expected);
    }
}

#[test]
fn a_malformed_ipc_deadline_or_iteration_count() {
    for (args, expected) in [
        (&["run", "--deadline", "soon"][..], "not a duration"),
        (&["run", "--deadline", "20s"], "must be from 1us to 10s"),
        (
            &["run", "--iterations", "3"],
            "must be a whole number from 10",
        ),
    ] {
        refused(args, expected);
    }
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
