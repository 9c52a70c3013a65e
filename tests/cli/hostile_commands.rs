//! Commands as a hostile user or a broken environment runs them: a standard output closed
//! before the files are written, latlab's own handshake variable set by hand, odd sides
//! of a comparison, a probe's process asked for numbers no run asks for, values out of
//! range. Each test here failed before its fix.

use crate::{latlab, results_file, synthetic_run_of};

/// A closed standard output stops the printing only: every file named is still written.
/// Before: `fleet … | true` wrote neither OpenMetrics file, `export … | true` only the
/// first, both with status 0.
#[test]
fn a_closed_standard_output_loses_no_named_file() {
    let dir = tempfile::tempdir().unwrap();
    crate::fleet::host_run(dir.path(), "runs/a", "a", "Model X");
    let results = results_file(dir.path(), "r.json");
    let results = results.to_str().unwrap();
    for (args, files) in [
        (
            vec![
                "fleet",
                "runs",
                "--openmetrics",
                "f.prom",
                "--openmetrics-backfill",
                "f.om",
            ],
            vec!["f.prom", "f.om"],
        ),
        (
            vec![
                "export",
                results,
                "--csv",
                "e.csv",
                "--openmetrics",
                "e.prom",
                "--markdown",
                "e.md",
            ],
            vec!["e.csv", "e.prom", "e.md"],
        ),
        (vec!["report", results, "--out", "p.html"], vec!["p.html"]),
    ] {
        crate::hostile::into_a_closed_pipe(dir.path(), &args);
        for file in files {
            let written = std::fs::metadata(dir.path().join(file));
            assert!(
                written.is_ok_and(|m| m.len() > 0),
                "{args:?}: {file} was not written"
            );
        }
    }
}

/// `LATLAB_RUN_OF` set by hand is not believed: the baseline, the gate and the results
/// directory are as without it, and a note says it was ignored. A `--runs` command's own
/// runs still find their handshake. Before: the gate was skipped, a missing baseline
/// passed and the results went to `run-1/`.
#[test]
fn a_hand_set_run_of_variable_does_not_disarm_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str], variable: Option<&str>| {
        let mut command = latlab(dir.path());
        command.args(["run", "--synthetic", "--only", "cpu.call", "-q"]);
        command.args(extra);
        if let Some(value) = variable {
            command.env("LATLAB_RUN_OF", value);
        }
        command.output().unwrap()
    };
    for value in ["1/1", "2/3", "1/1 5 0123456789abcdef0123456789abcdef"] {
        let output = run(&["--baseline", "nonexistent"], Some(value));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{value}: {stderr}");
        assert!(
            stderr.contains("LATLAB_RUN_OF is set, but no latlab command with --runs"),
            "{value}: {stderr}"
        );
        assert!(stderr.contains("no baseline named nonexistent"), "{stderr}");
    }
    let output = run(&["--save-baseline", "main"], Some("1/2"));
    assert!(output.status.success());
    assert!(dir.path().join("latlab-results/baselines").exists());
    assert!(!dir.path().join("latlab-results/run-1").exists());
    // The command's own runs are believed, and their children are told nothing.
    let output = run(&["--runs", "2", "--out", "two"], None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("LATLAB_RUN_OF is set"), "{stderr}");
    for k in ["run-1", "run-2"] {
        assert!(dir.path().join("two").join(k).join("results.json").exists());
    }
}

/// Odd sides are said: a run of another version of latlab on a side is noted, a side's
/// runs are labelled from first start to last whatever their files are called, and a file
/// of schema 0 (which no latlab writes) is refused. Before: all silent, and the label ran
/// backwards.
#[test]
fn odd_sides_of_a_comparison_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let side = dir.path().join("side");
    std::fs::create_dir(&side).unwrap();
    let edit = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let made = results_file(dir.path(), name);
        let path = side.join(name);
        std::fs::rename(made, &path).unwrap();
        let mut json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        edit(&mut json);
        std::fs::write(&path, serde_json::to_string(&json).unwrap()).unwrap();
        path
    };
    edit("a.json", &|json| {
        json["latlab"]["started_at"] = "2026-11-28T03:37:00Z".into();
        json["latlab"]["latlab_version"] = "0.1.0".into();
    });
    edit("b.json", &|json| {
        json["latlab"]["started_at"] = "2026-01-02T00:00:00Z".into();
        json["latlab"]["latlab_version"] = "99.0.0".into();
    });
    let output = latlab(dir.path())
        .args(["compare", "side", "side/a.json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout.contains("2026-01-02T00:00:00Z to 2026-11-28T03:37:00Z"),
        "{stdout}"
    );
    assert!(
        stdout.contains("A mixes versions of latlab (1 by latlab 0.1.0, 1 by latlab 99.0.0)"),
        "{stdout}"
    );
    let zero = edit("zero.json", &|json| {
        json["latlab_schema_version"] = 0.into()
    });
    std::fs::rename(&zero, dir.path().join("zero.json")).unwrap();
    let zero = dir.path().join("zero.json");
    let output = latlab(dir.path())
        .arg("compare")
        .arg(&zero)
        .arg("side/a.json")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("latlab_schema_version is 0"), "{stderr}");
}

/// A probe's process refuses numbers no run asks for in one line, status 2: a pause of
/// 2^64-1 ns used to sleep through SIGTERM, and as many samples a capacity overflow.
#[test]
fn a_probe_process_refuses_numbers_no_run_asks_for() {
    let dir = tempfile::tempdir().unwrap();
    let huge = u64::MAX.to_string();
    for (args, expected) in [
        (
            ["30", "2000000", "30000000000", "3", huge.as_str(), "0.5"],
            "the pause",
        ),
        (
            [huge.as_str(), "2000000", "30000000000", "3", "-", "0.5"],
            "samples",
        ),
        (
            ["30", huge.as_str(), "30000000000", "3", "-", "0.5"],
            "the sample time",
        ),
        (
            ["30", "2000000", huge.as_str(), "3", "-", "0.5"],
            "the budget",
        ),
        (["30", "2000000", "30000000000", "99", "-", "0.5"], "rounds"),
    ] {
        let output = latlab(dir.path())
            .args(["__probe-process", "syscall.getppid", "quick"])
            .args(args)
            .arg("-")
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// Values out of range are refused with the range: a negative budget, a run directory
/// that is a file (before the first run, not after), `--json -` with `--runs` (for what it
/// is), a name of ten thousand characters (not echoed whole). A bad test-hook value is
/// noted. Before: "unexpected argument '-5' found", a refusal after run 1 claiming "the 0
/// whole run(s) before it", "each run would write over the last", the whole name, silence.
#[test]
fn values_out_of_range_are_refused_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("b")).unwrap();
    std::fs::write(dir.path().join("b/run-1"), "a file").unwrap();
    let long_name = "a".repeat(10_000);
    for (args, expected) in [
        (
            vec!["run", "--budget", "-5s"],
            "invalid value '-5s' for '--budget <DURATION>': must be from 1s to 7days",
        ),
        (
            vec!["run", "--synthetic", "--runs", "2", "--out", "b"],
            "b/run-1: not a directory, where run 1 of --runs 2 would write its results",
        ),
        (
            vec!["run", "--synthetic", "--runs", "2", "--json", "-"],
            "standard output would carry 2 documents one after another",
        ),
        (
            vec!["run", "--save-baseline", &long_name],
            "(10000 characters)",
        ),
    ] {
        let output = latlab(dir.path()).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{expected}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{expected}: {stderr}");
        assert!(stderr.len() < 400, "{stderr}");
    }
    assert!(!dir.path().join("b/run-2").exists());
    for bad in ["-1", "abc"] {
        let output = latlab(dir.path())
            .env("LATLAB_CLAIM_LAST_CACHE_BYTES", bad)
            .args(["run", "--synthetic", "--only", "cpu.call", "--out", "c"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{stdout}");
        assert!(
            stdout.contains(&format!(
                "LATLAB_CLAIM_LAST_CACHE_BYTES is set to \"{bad}\", not a whole number of bytes"
            )),
            "{stdout}"
        );
    }
}

/// The synthetic machine's all-CPU bandwidth is a figure its own loader reads: per element,
/// not per element divided again by every pass. Before: 1.8e-9 ns, which `report` refused.
#[test]
fn the_synthetic_all_cpu_bandwidth_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    synthetic_run_of(dir.path(), "mem.bandwidth")
        .args(["-q"])
        .args(["--out", "r", "--max-size", "8MiB"])
        .assert()
        .success();
    let text = std::fs::read(dir.path().join("r/results.json")).unwrap();
    let run = crate::record(&text);
    let all_cpus: Vec<f64> = (run.results())
        .filter(|r| r.name.ends_with("/all-cpus"))
        .map(|r| r.summary.median)
        .collect();
    assert!(!all_cpus.is_empty());
    assert!(all_cpus.iter().all(|&m| m >= 1e-6), "{all_cpus:?}");
    latlab(dir.path())
        .args(["report", "r/results.json", "--out", "p.html"])
        .assert()
        .success();
}

/// A standard output the shell closed (`>&-`) is said, with status 2, by every command that
/// writes to it: the standard library reopens a closed descriptor 1 on `/dev/null` before
/// `main`, and every write went there in silence with status 0.
#[test]
fn a_standard_output_closed_by_the_shell_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let results = results_file(dir.path(), "r.json");
    let results = results.to_str().unwrap();
    let binary = assert_cmd::cargo::cargo_bin("latlab");
    for args in [
        format!("export {results} --csv -"),
        format!("compare {results} {results}"),
        "run --synthetic --only cpu.call -q --out out".to_string(),
        "list".to_string(),
    ] {
        let output = std::process::Command::new("sh")
            .current_dir(dir.path())
            .args(["-c", &format!("exec {} {args} >&-", binary.display())])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args}: {stderr}");
        assert!(
            stderr.contains("could not write standard output: it is closed"),
            "{args}: {stderr}"
        );
    }
    assert!(
        dir.path().join("out/results.json").is_file(),
        "the results are written"
    );
}
