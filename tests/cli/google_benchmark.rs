//! Google Benchmark's own `compare.py` on two real runs: it must read them without a NaN, a
//! warning or a traceback, in its `benchmarks` and `filters` modes. Needs Debian's
//! `libbenchmark-tools` and `python3-scipy`, so it is in the ignored tier (`.ci/run` installs
//! them and runs it; without them it fails).

use crate::latlab;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const COMPARE_PY: &str = "/usr/share/benchmark/compare.py";

/// A real run of probes whose results take every shape of row: timed loops, slopes,
/// differences of other results, events cut into phases, sweeps.
fn real_run(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    latlab(dir)
        .args(["run", "--only", "cpu|syscall|thread.lifecycle|mem.latency"])
        .args(["--max-size", "512KiB", "--quiet", "--json"])
        .arg(&path)
        .assert()
        .success();
    path
}

fn compare_py(args: &[&std::ffi::OsStr]) -> String {
    assert!(
        Path::new(COMPARE_PY).exists(),
        "this test needs Google Benchmark's tools: apt-get install libbenchmark-tools \
         python3-scipy"
    );
    let output = Command::new("/usr/bin/python3")
        .arg(COMPARE_PY)
        .arg("--no-color")
        .args(args)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "compare.py {args:?} failed: {stderr}"
    );
    assert!(
        stderr.trim().is_empty(),
        "compare.py {args:?} warned: {stderr}"
    );
    let lower = stdout.to_lowercase();
    for bad in ["warning", "traceback"] {
        assert!(
            !lower.contains(bad),
            "compare.py {args:?} printed {bad}:\n{stdout}"
        );
    }
    let not_finite = lower
        .split_whitespace()
        .find(|word| ["nan", "inf"].contains(&word.trim_start_matches(['+', '-'])));
    assert!(
        not_finite.is_none(),
        "compare.py {args:?} printed {not_finite:?}:\n{stdout}"
    );
    stdout
}

#[test]
#[ignore = "needs Google Benchmark's compare.py and SciPy (apt-get install libbenchmark-tools python3-scipy)"]
fn compare_py_reads_two_runs_without_nan_or_warning() {
    let dir = tempfile::tempdir().unwrap();
    let a = real_run(dir.path(), "a.json");
    let b = real_run(dir.path(), "b.json");

    // No row compare.py cannot use: every repetition's times above zero, nothing computed
    // from other results, and both runs with nearly the same results as repetition rows
    // (how many repetitions fit a time budget varies, and compare.py pairs as many as both
    // have).
    let iterations = |path: &Path| {
        let run: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let rows = run["benchmarks"].as_array().unwrap().clone();
        assert!(rows.iter().all(|r| r["name"] != "cpu.branch/difference"));
        let iterations: Vec<String> = rows
            .iter()
            .filter(|r| r["run_type"] == "iteration")
            .inspect(|r| {
                let positive = |key: &str| r[key].as_f64().unwrap() > 0.0;
                assert!(positive("real_time") && positive("cpu_time"), "{r}");
            })
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect();
        assert!(iterations.len() > 100, "{}", iterations.len());
        iterations
            .into_iter()
            .collect::<std::collections::BTreeSet<String>>()
    };
    let (in_a, in_b) = (iterations(&a), iterations(&b));
    let both = in_a.intersection(&in_b).count();
    let either = in_a.union(&in_b).count();
    // Nearly: at most a tenth of the names, or one, in only one run (a noisy neighbour can
    // make one run's repetitions of a result unusable).
    assert!(either - both <= (either / 10).max(1), "{in_a:?}\n{in_b:?}");

    let report = compare_py(&["benchmarks".as_ref(), a.as_os_str(), b.as_os_str()]);
    let geomean = report
        .lines()
        .find(|l| l.starts_with("OVERALL_GEOMEAN"))
        .expect("an overall geometric mean");
    let change: f64 = geomean.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(change.is_finite(), "{geomean}");
    assert!(
        report.contains("syscall.getppid/getppid_pvalue"),
        "{report}"
    );

    let report = compare_py(&[
        "filters".as_ref(),
        a.as_os_str(),
        "cpu.branch/random".as_ref(),
        "cpu.branch/predictable".as_ref(),
    ]);
    assert!(
        report.contains("[cpu.branch/random vs. cpu.branch/predictable]_median"),
        "{report}"
    );
}
