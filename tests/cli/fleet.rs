//! `latlab fleet DIR`: many hosts' runs read from a directory tree, compared row by row,
//! with what could not be read noted and bad arguments refused.

use crate::{latlab, synthetic_run_of};
use std::path::Path;

/// Writes the summary of `dir/sub/results.json` beside it, as a run does.
pub fn summarise(dir: &Path, sub: &str) {
    let run_dir = dir.join(sub);
    latlab(&run_dir)
        .args(["export", "results.json", "--summary", "summary.json"])
        .assert()
        .success();
}

/// A synthetic run of the system-call probe written into `dir/sub` (results.json with its
/// report and plots, as a host's run is), its host named `host` and its CPU `model`.
pub fn host_run(dir: &Path, sub: &str, host: &str, model: &str) {
    let run_dir = dir.join(sub);
    std::fs::create_dir_all(&run_dir).unwrap();
    let path = run_dir.join("results.json");
    synthetic_run_of(&run_dir, "syscall")
        .args(["--out"])
        .arg(&run_dir)
        .assert()
        .success();
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    json["latlab"]["environment"]["host_name"] = host.into();
    json["latlab"]["environment"]["cpu"]["model"] = model.into();
    std::fs::write(&path, serde_json::to_string(&json).unwrap()).unwrap();
    // The run's summary names the host the run had: the fleet would read it in place of
    // the file just rewritten. Runs of an older latlab had none.
    std::fs::remove_file(run_dir.join("summary.json")).unwrap();
}

/// Multiplies every time of every result of the results file at `path` by `factor`: its
/// samples and its summary with them.
fn scale_figures(path: &Path, factor: f64) {
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let scale = |value: &mut serde_json::Value| {
        if let Some(x) = value.as_f64() {
            *value = (x * factor).into();
        }
    };
    for probe in json["latlab"]["probes"].as_array_mut().unwrap() {
        for result in probe["results"].as_array_mut().unwrap() {
            result["samples_ns"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .for_each(scale);
            let summary = &mut result["summary"];
            for key in ["min", "p5", "median", "p95", "max", "mean", "stddev", "mad"] {
                scale(&mut summary[key]);
            }
            summary["median_ci95"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .for_each(scale);
        }
    }
    std::fs::write(path, serde_json::to_string(&json).unwrap()).unwrap();
}

/// Rewrites a results file as schema `version` would have it: schema 1 wrote parameters as
/// text and warnings as a code and a sentence.
fn as_schema(path: &Path, version: u64) {
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    json["latlab_schema_version"] = version.into();
    if version == 1 {
        for probe in json["latlab"]["probes"].as_array_mut().unwrap() {
            for result in probe["results"].as_array_mut().unwrap() {
                for (_, value) in result["parameters"].as_object_mut().unwrap() {
                    *value = value.to_string().trim_matches('"').into();
                }
                for warning in result["warnings"].as_array_mut().unwrap() {
                    let code = warning["kind"].clone();
                    *warning = serde_json::json!({"code": code, "message": "a sentence"});
                }
            }
        }
    }
    std::fs::write(path, serde_json::to_string(&json).unwrap()).unwrap();
}

#[test]
fn a_directory_of_runs_becomes_one_table_and_page() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    for (i, model) in ["M1", "M1", "M1", "M2"].iter().enumerate() {
        host_run(&runs, &format!("node{i}-2026"), &format!("node{i}"), model);
    }
    // A second run of node0 (a synthetic run is the same every time: this one started a
    // day later), a copy of a run (counted once), a Slurm log and another tool's JSON.
    host_run(&runs, "node0-again", "node0", "M1");
    let again = runs.join("node0-again/results.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&again).unwrap()).unwrap();
    json["latlab"]["started_at"] = "2000-01-02T00:00:00Z".into();
    std::fs::write(&again, serde_json::to_string(&json).unwrap()).unwrap();
    std::fs::create_dir(runs.join("copy")).unwrap();
    std::fs::hard_link(
        runs.join("node1-2026/results.json"),
        runs.join("copy/results.json"),
    )
    .unwrap();
    std::fs::write(runs.join("slurm-17.out"), "latlab finished\n").unwrap();
    // A run from an older latlab, read with a note, and one from a newer, skipped.
    host_run(&runs, "old", "old-node", "M2");
    as_schema(&runs.join("old/results.json"), 1);
    host_run(&runs, "new", "new-node", "M2");
    as_schema(&runs.join("new/results.json"), 3);
    std::fs::write(runs.join("bench.json"), "{\"benchmarks\": []}").unwrap();
    let page = dir.path().join("fleet.html");
    let output = latlab(dir.path())
        .arg("fleet")
        .arg(&runs)
        .arg("--html")
        .arg(&page)
        .assert()
        .success();
    let stdout = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    assert!(
        stdout.contains("6 runs of 5 hosts · 2 CPU models"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 file repeats a run already read (the same host, start time and figures), counted once:")
            && stdout.contains("node1-2026/results.json"),
        "{stdout}"
    );
    assert!(stdout.contains("old-node"), "{stdout}");
    assert!(
        stdout.contains("1 file of an older schema was converted as it was read"),
        "{stdout}"
    );
    assert!(
        stdout.contains("2 JSON files are not latlab results")
            && stdout.contains("new/results.json: written by a newer latlab (schema 3"),
        "{stdout}"
    );
    assert!(stdout.contains("\nSystem call "), "{stdout}");
    assert!(
        stdout.contains("node0@"),
        "repeated names get their start time: {stdout}"
    );
    // The Slurm log and each run's report.
    assert!(
        stdout.contains("8 files not ending in .json were left alone"),
        "{stdout}"
    );
    assert!(
        stdout.contains("bench.json: a Google Benchmark file"),
        "{stdout}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<figure>") && html.contains("System call"));
}

#[test]
fn a_directory_without_runs_and_bad_paths_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    std::fs::write(empty.join("x.json"), "not json").unwrap();
    let cases: [(Vec<&str>, &str); 4] = [
        (vec!["fleet", "missing"], "missing: cannot read it"),
        (vec!["fleet", "empty"], "no latlab results file in it"),
        (vec!["fleet", "empty/x.json"], "not a directory"),
        (
            vec!["fleet", "empty", "--html", "nowhere/page.html"],
            "the directory nowhere does not exist",
        ),
    ];
    for (args, expected) in cases {
        let output = latlab(dir.path()).args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
    assert!(!dir.path().join("nowhere").exists());
}

/// Read by a user who may not list one subdirectory, `fleet` says that directory was not
/// read and why, and counts only the hosts it could read; it does not drop one silently.
#[test]
#[ignore = "needs root, to run as another user"]
fn a_subdirectory_the_user_cannot_read_is_noted() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    for (i, sub) in ["a", "b", "locked"].iter().enumerate() {
        host_run(&runs, sub, &format!("node{i}"), "M1");
    }
    let open = |path: &Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    open(dir.path(), 0o755);
    for sub in ["", "a", "b"] {
        open(&runs.join(sub), 0o755);
        for file in std::fs::read_dir(runs.join(sub)).unwrap().flatten() {
            if file.path().is_file() {
                open(&file.path(), 0o644);
            }
        }
    }
    open(&runs.join("locked"), 0o700);
    let copy = dir.path().join("latlab");
    std::fs::copy(assert_cmd::cargo::cargo_bin("latlab"), &copy).unwrap();
    let output = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&copy)
        .arg("fleet")
        .arg(&runs)
        .current_dir(dir.path())
        .output()
        .expect("setpriv (util-linux)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stdout.contains("2 hosts"), "{stdout}");
    assert!(
        stdout.contains("locked: not read (Permission denied"),
        "{stdout}"
    );
}

/// What the walk passed over is said, never dropped: runs only deeper than the walk goes
/// are named in the refusal, and a FIFO named like a results file is called what it is.
#[test]
fn runs_too_deep_and_a_fifo_named_json_are_said_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let deep = (0..10).fold(dir.path().join("deep"), |path, level| {
        path.join(format!("l{level}"))
    });
    host_run(&deep, "run", "node0", "M1");
    let output = latlab(dir.path()).args(["fleet", "deep"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("no latlab results file in it") && stderr.contains("deeper than 8 levels"),
        "{stderr}"
    );

    let runs = dir.path().join("runs");
    host_run(&runs, "a", "node0", "M1");
    let made = std::process::Command::new("mkfifo")
        .arg(runs.join("b.json"))
        .status()
        .unwrap();
    assert!(made.success());
    let output = latlab(dir.path()).args(["fleet", "runs"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "1 file ending in .json but not regular (a FIFO, a socket or a device) was left alone"
        ) && stdout.contains("b.json"),
        "{stdout}"
    );
}

/// A fleet of summaries reads as the same fleet of full files: the same table and the
/// same outliers, each full file with a summary beside it passed over and counted; a
/// summary is also read on its own, under any name.
#[test]
fn summaries_are_read_in_place_of_the_full_files() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    for (i, model) in ["M1", "M1", "M1", "M2"].iter().enumerate() {
        host_run(&runs, &format!("n{i}"), &format!("node{i}"), model);
    }
    // Figures of their own, and one outlier.
    for (i, factor) in [1.0, 1.02, 1.7, 0.9].iter().enumerate() {
        scale_figures(&runs.join(format!("n{i}/results.json")), *factor);
    }
    let fleet = |dir: &Path| {
        let output = latlab(dir).args(["fleet", "runs"]).assert().success();
        String::from_utf8(output.get_output().stdout.clone()).unwrap()
    };
    let full = fleet(dir.path());
    for i in 0..3 {
        summarise(&runs, &format!("n{i}"));
    }
    // The fourth host's summary sits alone, under a name of its own.
    latlab(dir.path())
        .args([
            "export",
            "runs/n3/results.json",
            "--summary",
            "runs/node3.json",
        ])
        .assert()
        .success();
    std::fs::remove_file(runs.join("n3/results.json")).unwrap();
    let summarised = fleet(dir.path());
    let table = |text: &str| -> String {
        text.lines()
            .take_while(|line| *line != "notes")
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        table(&summarised),
        table(&full),
        "{summarised}\n---\n{full}"
    );
    assert!(summarised.contains("4 hosts"), "{summarised}");
    assert!(summarised.contains("node2: System call"), "{summarised}");
    assert!(
        summarised
            .contains("3 results.json files were passed over for the summary.json beside them"),
        "{summarised}"
    );
    // `compare` takes a run directory's results.json, never its summary.
    let output = latlab(dir.path())
        .args(["compare", "runs/n0", "runs/n1"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&output.get_output().stdout);
    assert!(text.contains("A = runs/n0/results.json"), "{text}");
    let output = latlab(dir.path())
        .args(["report", "runs/node3.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("a run's summary, which holds no samples"),
        "{stderr}"
    );
}
