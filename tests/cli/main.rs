//! End-to-end tests of the `latlab` command line, organised by topic. Most run on the
//! synthetic host (`--synthetic`): an imaginary machine whose figures are the same
//! everywhere, so output can be asserted exactly.

// A test reads and writes files as it pleases: the doors are for what latlab itself does.
#![allow(clippy::disallowed_methods)]

mod architecture_map;
mod bad_argument_matrix;
mod bad_input;
mod browser;
mod commands;
mod compare;
mod documentation_links;
mod doors;
mod fleet;
mod function_length;
mod fuzz_results;
mod google_benchmark;
mod gpu;
mod history;
mod hostile;
mod hostile_commands;
mod hostile_summaries;
mod import_circles;
mod json_schema;
mod openmetrics;
mod otava;
mod prometheus;
mod real_run;
mod slurm;
mod synthetic_run;
mod terminal_output;
mod windows;

use assert_cmd::Command;
use std::path::Path;

/// Held by a test that loads every CPU on purpose (a synthetic run of every probe: its
/// scheduling probes spin for real) and by a real run whose figures such load would spoil
/// (the headline's cache levels), so that the two never overlap.
pub fn machine_alone() -> std::sync::MutexGuard<'static, ()> {
    static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    MACHINE.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the main job prints, and its JSON, on the synthetic host with every probe: one run
/// shared by the tests that read it, since its scheduling probes spin for real.
pub struct EveryProbeRun {
    pub stdout: String,
    pub json: serde_json::Value,
}

pub fn every_probe_run() -> &'static EveryProbeRun {
    static RUN: std::sync::OnceLock<EveryProbeRun> = std::sync::OnceLock::new();
    RUN.get_or_init(|| {
        let _alone = machine_alone();
        let dir = tempfile::tempdir().unwrap();
        let output = latlab(dir.path())
            .args(["--synthetic", "--max-size", "64KiB", "--json", "every.json"])
            .assert()
            .success();
        let stdout = String::from_utf8(output.get_output().stdout.clone()).unwrap();
        let json = std::fs::read(dir.path().join("every.json")).unwrap();
        EveryProbeRun {
            stdout,
            json: serde_json::from_slice(&json).unwrap(),
        }
    })
}

/// The latlab binary, in a fresh temporary working directory, its tables as wide as they
/// need (no `COLUMNS` from the test's environment).
pub fn latlab(dir: &Path) -> Command {
    let mut command = Command::cargo_bin("latlab").expect("the latlab binary is built");
    command.current_dir(dir).env_remove("COLUMNS");
    command
}

/// What a run with no output options leaves in its directory.
pub const A_RUNS_FILES: [&str; 4] = [
    "latlab-results",
    "latlab-results/report.html",
    "latlab-results/results.json",
    "latlab-results/summary.json",
];

/// `latlab run --synthetic --only ONLY` in `dir`, for more arguments to be added.
pub fn synthetic_run_of(dir: &Path, only: &str) -> Command {
    let mut command = latlab(dir);
    command.args(["run", "--synthetic", "--only", only]);
    command
}

/// `latlab run --only ONLY` of this machine in `dir`, five samples of at least 100 µs each
/// (enough for a test, never a figure), for more arguments to be added.
pub fn short_run_of(dir: &Path, only: &str) -> Command {
    let mut command = latlab(dir);
    command.args([
        "run",
        "--only",
        only,
        "--samples",
        "5",
        "--target-time",
        "100us",
    ]);
    command
}

/// The run a results file's text records.
pub fn record(json: &[u8]) -> latlab_engine::model::RunRecord {
    let value: serde_json::Value = serde_json::from_slice(json).unwrap();
    serde_json::from_value(value["latlab"].clone()).unwrap()
}

/// A small real results file (`cpu.call` on the synthetic host) written as `dir/name`.
pub fn results_file(dir: &Path, name: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    synthetic_run_of(dir, "cpu.call")
        .args(["--json"])
        .arg(&path)
        .assert()
        .success();
    path
}

/// Every file under `dir`, relative, sorted.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            found.push(path.strip_prefix(dir).unwrap().display().to_string());
        }
    }
    found.sort();
    found
}

/// Runs latlab with `args` in `dir` and checks the refusal: exit 2 within 20 s, one line
/// naming the problem (with `expected` in it), nothing on stdout, and no file added to
/// `dir`. Returns the line.
pub fn refused_in<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(
    dir: &Path,
    args: &[S],
    expected: &str,
) -> String {
    let before = files_in(dir);
    let output = latlab(dir)
        .args(args)
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
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
    stderr
}
