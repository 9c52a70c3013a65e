//! The bad-argument matrix: every subcommand with every kind of bad value its flags can be
//! given. Each case must end in exit status 2 with one line on stderr (starting `error`),
//! nothing on stdout, no panic, and no file written.

use crate::{files_in, latlab, results_file};
use std::time::Duration;

/// Bad values for each flag of `run` (and `mem`, and latlab without a subcommand).
const RUN_CASES: &[(&str, &[&str])] = &[
    (
        "--samples",
        &["0", "-1", "4", "100001", "many", "1.5", "", "5e3", "0x10"],
    ),
    (
        "--target-time",
        &["0", "-1ms", "10", "abc", "", "5 parsecs", "1000000h"],
    ),
    ("--only", &["(", "[", "nosuch-probe", "*"]),
    ("--skip", &[".", "("]),
    ("--pin", &["99999", "-1", "abc", "", "1.5"]),
    (
        "--max-size",
        &["0", "abc", "-5MiB", "1ZiB", "", "1.5.5KiB", "99999999TiB"],
    ),
    ("--suite", &["fast", "", "QUICK1"]),
    ("--json", &["", "no/such/dir/r.json", "."]),
    ("--csv", &["", "no/such/dir/r.csv", "."]),
    ("--markdown", &["", "no/such/dir/r.md", "."]),
    ("--out", &["no/such/parent/dir", "file.txt"]),
    ("--dir", &["no/such/dir", "file.txt"]),
    ("--workers", &["0", "-2", "abc", "100000"]),
    ("--pairs", &["0", "-1", "abc", "100000"]),
    ("--iterations", &["0", "-1", "abc"]),
    ("--deadline", &["0", "abc", "-1us", ""]),
];

/// Whole argument lists that are wrong for `run`: unknown flags, stray arguments, two
/// outputs on standard output or on one file.
const RUN_SHAPES: &[&[&str]] = &[
    &["--bogus"],
    &["-z"],
    &["stray-argument"],
    &["--samples"],
    &["--json", "-", "--csv", "-"],
    &["--json", "same.out", "--csv", "same.out"],
    &["--only", "cpu.call", "--skip", "cpu.call"],
];

/// Runs one case in a fresh directory (holding `file.txt`, a regular file) and checks the
/// refusal.
fn refused(args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file.txt"), "not a directory").unwrap();
    let before = files_in(dir.path());
    let output = latlab(dir.path())
        .args(args)
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(
        stderr.lines().count(),
        1,
        "{args:?}: not one line: {stderr}"
    );
    assert!(stderr.starts_with("error"), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(output.stdout.is_empty(), "{args:?} wrote to stdout");
    assert_eq!(files_in(dir.path()), before, "{args:?} left files");
}

/// Every case of `run` under one command prefix.
fn run_cases(prefix: &[&str]) -> Vec<Vec<String>> {
    let mut cases = Vec::new();
    let with = |extra: &[&str]| -> Vec<String> {
        prefix
            .iter()
            .chain(["--synthetic"].iter())
            .chain(extra)
            .map(|s| s.to_string())
            .collect()
    };
    for (flag, values) in RUN_CASES {
        for value in *values {
            cases.push(with(&[flag, value]));
        }
    }
    for shape in RUN_SHAPES {
        cases.push(with(shape));
    }
    cases
}

#[test]
fn every_bad_argument_to_run_is_refused_in_one_line() {
    let mut count = 0;
    for prefix in [&["run"][..], &["mem"], &[]] {
        for case in run_cases(prefix) {
            let args: Vec<&str> = case.iter().map(String::as_str).collect();
            refused(&args);
            count += 1;
        }
    }
    assert!(count >= 180, "{count} cases");
}

#[test]
fn every_bad_argument_to_the_file_commands_and_the_rest_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let good = results_file(dir.path(), "good.json");
    let good = good.to_str().unwrap().to_string();
    let bad_text = dir.path().join("bad.json");
    std::fs::write(&bad_text, "not json").unwrap();
    let bad = bad_text.to_str().unwrap().to_string();
    let directory = dir.path().to_str().unwrap().to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec!["report"],
        vec!["report", "missing.json"],
        vec!["report", &bad],
        vec!["report", &directory],
        vec!["report", "/dev/zero"],
        vec!["report", "/dev/null"],
        vec!["report", &good, "--out", "no/such/dir/r.html"],
        vec!["report", &good, "--out"],
        vec!["report", &good, "--bogus"],
        vec!["report", &good, &good],
        vec!["compare"],
        vec!["compare", "missing.json", &good],
        vec!["compare", &good, &bad],
        vec!["compare", &good, &directory],
        vec!["compare", &good, "/dev/zero"],
        vec!["compare", &good, &good, "--markdown", ""],
        vec!["compare", &good, &good, "--markdown", "no/such/dir/c.md"],
        vec!["compare", &good, &good, "--bogus"],
        vec!["compare", &good, &good, "--threshold", "-1"],
        vec!["compare", &good, &good, "--threshold", "abc"],
        vec!["compare", &good, &good, "--fail-if-slower", "x%"],
        vec!["compare", &good, &good, "--csv", "-", "--json", "-"],
        vec!["compare", &good, &good, "--json", "no/such/dir/c.json"],
        vec!["compare", &good, &good, "--color", "sometimes"],
        vec!["run", "--baseline", "none-saved"],
        vec!["run", "--save-baseline", "../escape"],
        vec!["run", "--save-baseline", ""],
        vec!["completions"],
        vec!["completions", "tcsh"],
        vec!["man", "--dir", "no/such/dir"],
        vec!["man", "extra"],
        vec!["list", "extra"],
        vec!["list", "--bogus"],
        vec!["env", "extra"],
        vec!["env", "--bogus"],
        vec!["env", "--json", "--json"],
        vec!["nosuch-command"],
        vec!["--bogus"],
    ];
    for case in &cases {
        refused(case);
    }
}
