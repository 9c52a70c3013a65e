//! `latlab compare` as CI uses it: the noise threshold, figures equal to the clock tick,
//! results in one file only, the machine-readable outputs and `--fail-if-slower`.

use crate::{latlab, synthetic_run_of};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A synthetic run of the branch probes, then a copy in which `cpu.branch/random` takes
/// `factor` times as long and `cpu.branch/mispredict` is missing.
fn run_and_changed_copy(dir: &Path, factor: f64) -> (PathBuf, PathBuf) {
    let before = dir.join("before.json");
    synthetic_run_of(dir, "cpu.call|cpu.branch")
        .args(["--json"])
        .arg(&before)
        .assert()
        .success();
    let mut run: Value = serde_json::from_slice(&std::fs::read(&before).unwrap()).unwrap();
    for probe in run["latlab"]["probes"].as_array_mut().unwrap() {
        let results = probe["results"].as_array_mut().unwrap();
        results.retain(|r| r["name"] != "cpu.branch/mispredict");
        for result in results {
            if result["name"] == "cpu.branch/random" {
                scale(&mut result["samples_ns"], factor);
                scale(&mut result["cpu_samples_ns"], factor);
                scale(&mut result["round_medians_ns"], factor);
                let summary = &mut result["summary"];
                for key in ["min", "p5", "median", "p95", "max", "mean", "stddev", "mad"] {
                    scale(&mut summary[key], factor);
                }
                scale(&mut summary["median_ci95"], factor);
            }
        }
    }
    let after = dir.join("after.json");
    std::fs::write(&after, serde_json::to_vec(&run).unwrap()).unwrap();
    (before, after)
}

fn scale(value: &mut Value, factor: f64) {
    match value {
        Value::Number(n) => *value = (n.as_f64().unwrap() * factor).into(),
        Value::Array(items) => items.iter_mut().for_each(|v| scale(v, factor)),
        _ => {}
    }
}

fn compare(dir: &Path, files: &(PathBuf, PathBuf), extra: &[&str]) -> (i32, String) {
    let output = latlab(dir)
        .arg("compare")
        .args([&files.0, &files.1])
        .args(extra)
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

fn line<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no line for {name} in {text}"))
}

#[test]
fn a_slower_result_past_the_threshold_is_called_slower_and_fails_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let files = run_and_changed_copy(dir.path(), 1.10);
    let (status, text) = compare(dir.path(), &files, &[]);
    assert_eq!(status, 0, "{text}");
    assert!(
        line(&text, "cpu.branch/random").contains("slower (p"),
        "{text}"
    );
    // Equal medians on a clock-tick grid are never different, however small p is.
    assert!(line(&text, "cpu.call/empty").contains("same (within a clock tick)"));
    assert!(
        line(&text, "cpu.branch/mispredict").ends_with("not in this run"),
        "{text}"
    );
    assert!(
        text.ends_with("B against A: 1 slower, 0 faster, 3 same; 1 only in A\n"),
        "{text}"
    );

    let (status, text) = compare(dir.path(), &files, &["--fail-if-slower", "5"]);
    assert_eq!(status, 1, "{text}");
    assert!(text.contains(
        "1 slower than A by more than 5% (--fail-if-slower):\n  cpu.branch/random in B: 1.10×\n"
    ));
    // The result B lacks fails a gate that nothing else fails, by its name.
    let (status, text) = compare(dir.path(), &files, &["--fail-if-slower", "20"]);
    assert_eq!(status, 1, "{text}");
    assert!(
        text.contains("B lacks 1 result of A (cpu.branch/mispredict): "),
        "{text}"
    );
    let gate = ["--fail-if-slower", "20", "--allow-missing"];
    let (status, text) = compare(dir.path(), &files, &gate);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.ends_with("no result is more than 20% slower than A\n"),
        "{text}"
    );
}

#[test]
fn a_difference_within_the_threshold_is_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let files = run_and_changed_copy(dir.path(), 1.018);
    let gate = ["--fail-if-slower", "5", "--allow-missing"];
    let (status, text) = compare(dir.path(), &files, &gate);
    assert_eq!(status, 0, "{text}");
    assert!(
        line(&text, "cpu.branch/random").contains(", within 2%)"),
        "{text}"
    );
    // The gate judges by its own percentage, tighter than the threshold's.
    let (status, text) = compare(dir.path(), &files, &["--fail-if-slower", "0.5"]);
    assert_eq!(status, 1, "{text}");
    let (_, text) = compare(dir.path(), &files, &["--threshold", "0.5"]);
    assert!(
        line(&text, "cpu.branch/random").contains("slower (p"),
        "{text}"
    );
}

#[test]
fn csv_and_json_carry_every_verdict_for_ci() {
    let dir = tempfile::tempdir().unwrap();
    let files = run_and_changed_copy(dir.path(), 1.10);
    let (status, _) = compare(
        dir.path(),
        &files,
        &[
            "--csv",
            "diff.csv",
            "--json",
            "diff.json",
            "--markdown",
            "diff.md",
        ],
    );
    assert_eq!(status, 0);
    let csv = std::fs::read_to_string(dir.path().join("diff.csv")).unwrap();
    assert!(
        csv.starts_with(
            "benchmark,baseline,run,baseline_median_ns,median_ns,ratio,p,difference,\
             detectable,tested_within,noise_from\n"
        ),
        "{csv}"
    );
    let random: Vec<&str> = (csv.lines())
        .find(|l| l.starts_with("cpu.branch/random,"))
        .unwrap()
        .split(',')
        .collect();
    assert_eq!(
        random[..5],
        ["cpu.branch/random", "A", "B", "133.1", "146.41"]
    );
    assert_eq!(random[7], "slower", "{random:?}");
    assert!(
        csv.contains("\ncpu.branch/mispredict,A,B,241.2,,,,missing,,,\n"),
        "{csv}"
    );

    let json: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("diff.json")).unwrap()).unwrap();
    assert_eq!(json["latlab_comparison_version"], 1);
    let verdicts: Vec<(&str, &str)> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap(),
                r["against"][0]["difference"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        verdicts.contains(&("cpu.branch/random", "slower")),
        "{verdicts:?}"
    );
    assert!(
        verdicts.contains(&("cpu.branch/mispredict", "missing")),
        "{verdicts:?}"
    );
    assert!(
        verdicts.contains(&("cpu.call/empty", "same")),
        "{verdicts:?}"
    );
    let markdown = std::fs::read_to_string(dir.path().join("diff.md")).unwrap();
    assert!(markdown.contains("- B against A: 1 slower, 0 faster, 3 same; 1 only in A\n"));
}

/// `latlab run --synthetic --only cpu.call ARGS` in `dir`: its status, stdout and stderr.
fn synthetic_run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let output = latlab(dir)
        .args(["run", "--synthetic", "--only", "cpu.call"])
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn save_and_compare_with_a_baseline_under_the_results_directory() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| synthetic_run(dir.path(), &[&["--out", "res"], extra].concat());
    let (status, _, stderr) = run(&["--baseline", "main"]);
    assert_eq!(status, 2);
    assert_eq!(
        stderr,
        "error: no baseline named main in res/baselines; save one with --save-baseline main\n"
    );
    let (status, _, stderr) = run(&["--save-baseline", "main"]);
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stderr.contains(
            "baseline main: res/baselines/main/run-1.json (1 run kept, at most 10: \
             --baseline-history)\n"
        ),
        "{stderr}"
    );
    let (status, stdout, _) = run(&["--baseline", "main"]);
    assert_eq!(status, 0);
    assert!(
        stdout.contains("\nagainst the baseline main:\n"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("this run against main: 0 slower, 0 faster, 1 same\n"),
        "{stdout}"
    );
    let (_, _, stderr) = run(&["--save-baseline", "../x"]);
    assert!(stderr.starts_with("error: "), "{stderr}");
}

/// `--add-to-baseline` keeps the runs kept before; `--fail-if-slower` gates this run on the
/// baseline as the harness's gate does: unchanged figures pass, and a baseline none of
/// whose results this run has fails, for want of anything compared.
#[test]
fn a_run_is_added_to_a_baseline_and_gated_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| synthetic_run(dir.path(), &[&["--out", "res"], extra].concat());
    let (status, _, stderr) = run(&["--fail-if-slower", "5"]);
    assert_eq!(status, 2);
    assert!(stderr.contains("--baseline"), "{stderr}");
    // Three runs added to a baseline that keeps two: the oldest goes.
    for k in 1..=3 {
        let (status, _, stderr) = run(&["--add-to-baseline", "ci", "--baseline-history", "2"]);
        assert_eq!(status, 0, "{stderr}");
        let held = k.min(2);
        let kept = format!(
            "baseline ci: res/baselines/ci/run-{k}.json ({held} run{} kept, at most 2: \
             --baseline-history)\n",
            if held == 1 { "" } else { "s" }
        );
        assert!(stderr.contains(&kept), "{stderr}");
    }
    let baseline = dir.path().join("res/baselines/ci");
    assert!(!baseline.join("run-1.json").exists());
    assert!(baseline.join("run-2.json").is_file() && baseline.join("run-3.json").is_file());
    let (status, stdout, stderr) = run(&["--baseline", "ci", "--fail-if-slower", "10"]);
    assert_eq!(status, 0, "{stdout}{stderr}");
    // The synthetic machine's runs start at one time and take the same samples: the
    // baseline's two are one run's evidence, admitted as a comparison's side is.
    assert!(
        stdout.contains("note: the baseline ci: 1 file repeats a run already read"),
        "{stdout}"
    );
    // The gate says what its baseline holds and what it could hear with it.
    assert!(
        stdout.contains(
            "the baseline ci holds 1 run: a result fails this gate once it is slower by 10% \
             and by its noise: at "
        ),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("no result is more than 10% slower than the baseline ci\n"),
        "{stdout}"
    );
    // The baseline's results renamed: nothing of this run can be judged against it.
    for k in 2..=3 {
        let path = baseline.join(format!("run-{k}.json"));
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("cpu.call/", "cpu.renamed/")).unwrap();
    }
    let (status, stdout, _) = run(&["--baseline", "ci", "--fail-if-slower", "10"]);
    assert_eq!(status, 1, "{stdout}");
    assert!(
        stdout.contains("--fail-if-slower: nothing was compared"),
        "{stdout}"
    );
}

/// `--html`: a page with, per probe, each result's ratio to the baseline (the regressed one
/// called slower at ×1.5) and its table, and the declared plots with both runs overlaid.
#[test]
fn the_html_comparison_shows_each_ratio_and_overlays_the_plots() {
    let dir = tempfile::tempdir().unwrap();
    let files = run_and_changed_copy(dir.path(), 1.5);
    let (status, _) = compare(dir.path(), &files, &["--html", "diff.html"]);
    assert_eq!(status, 0);
    let page = std::fs::read_to_string(dir.path().join("diff.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    let figure = &page[page
        .find("<figure id=\"ratios-cpu.branch\">")
        .expect("a ratio figure")..];
    let figure = &figure[..figure.find("</figure>").unwrap()];
    assert!(figure.contains("<title>1.50×</title>"), "{figure}");
    assert!(figure.contains(">slower</text>"));
    assert!(page.contains("<td class=\"slower\">slower"));
    assert!(
        !page.contains("Plots, the runs overlaid"),
        "no sweep, no plot"
    );

    let sweep = dir.path().join("sweep.json");
    synthetic_run_of(dir.path(), "mem.latency")
        .args(["--max-size", "64KiB"])
        .arg("--json")
        .arg(&sweep)
        .assert()
        .success();
    let output = latlab(dir.path())
        .args(["compare", "sweep.json", "sweep.json", "--html", "-"])
        .output()
        .unwrap();
    let page = String::from_utf8(output.stdout).unwrap();
    assert!(
        page.contains("<figure id=\"mem-latency-B\"><svg"),
        "overlaid plot"
    );
    assert!(page.contains("Pale: A, the baseline; in full colour: B."));
}

/// A gate that compared nothing fails, saying so: every result renamed in the later run
/// used to pass `--fail-if-slower` with "no result is more than 5% slower".
#[test]
fn a_gate_that_compared_nothing_fails() {
    let dir = tempfile::tempdir().unwrap();
    let (before, after) = run_and_changed_copy(dir.path(), 1.0);
    let mut run: Value = serde_json::from_slice(&std::fs::read(&after).unwrap()).unwrap();
    for probe in run["latlab"]["probes"].as_array_mut().unwrap() {
        for result in probe["results"].as_array_mut().unwrap() {
            let renamed = format!("{}-renamed", result["name"].as_str().unwrap());
            result["name"] = renamed.into();
        }
    }
    std::fs::write(&after, serde_json::to_vec(&run).unwrap()).unwrap();
    let (status, text) = compare(dir.path(), &(before, after), &["--fail-if-slower", "5"]);
    assert_eq!(status, 1, "{text}");
    assert!(
        text.contains("--fail-if-slower: nothing was compared: not one result of B was judged"),
        "{text}"
    );
    assert!(!text.contains("no result is more than"), "{text}");
}

/// `dir`/`name` as a copy of the results file `from` with the top-level fields `changes`.
fn variant(from: &Path, dir: &Path, name: &str, changes: &[(&str, &str, Value)]) -> PathBuf {
    let mut run: Value = serde_json::from_slice(&std::fs::read(from).unwrap()).unwrap();
    for (section, field, value) in changes {
        match *section {
            "" => run["latlab"][*field] = value.clone(),
            section => run["latlab"][section][*field] = value.clone(),
        }
    }
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(&run).unwrap()).unwrap();
    path
}

/// A side's copies of one run (hard links, copies) count once, with a note: 20 copies of
/// one run against 20 of another used to be 20 runs a side, each as much evidence as a
/// run of its own. A side that mixes machines and a run that was interrupted are said.
#[test]
fn copies_count_once_and_mixed_or_interrupted_sides_are_said() {
    let dir = tempfile::tempdir().unwrap();
    let (before, after) = run_and_changed_copy(dir.path(), 1.3);
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    for i in 0..20 {
        std::fs::hard_link(&before, a.join(format!("run{i:02}.json"))).unwrap();
        std::fs::copy(&after, b.join(format!("run{i:02}.json"))).unwrap();
    }
    let (status, text) = compare(dir.path(), &(a.clone(), b.clone()), &[]);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("note: A: 19 files repeat a run already read (the same host, start time and samples), counted once"),
        "{text}"
    );
    assert!(text.contains("note: B: 19 files repeat"), "{text}");
    assert!(
        text.starts_with("A = ") && text.contains("/a/run00.json (test-host"),
        "{text}"
    );
    let single = compare(dir.path(), &(before.clone(), after.clone()), &[]).1;
    let tally = |text: &str| text.lines().last().unwrap().to_string();
    assert_eq!(tally(&text), tally(&single), "{text}");

    let mixed = dir.path().join("mixed");
    std::fs::create_dir(&mixed).unwrap();
    std::fs::copy(&before, mixed.join("1.json")).unwrap();
    let other_host = vec![
        ("environment", "host_name", Value::from("otherhost")),
        ("", "started_at", Value::from("2000-01-02T00:00:00Z")),
        ("", "complete", Value::from(false)),
    ];
    variant(&before, &mixed, "2.json", &other_host);
    let (status, text) = compare(dir.path(), &(mixed, b), &[]);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains(
            "note: A mixes machines (1 on otherhost/Synthetic CPU, 1 on test-host/Synthetic CPU)"
        ),
        "{text}"
    );
    assert!(
        text.contains("note: A: a run was interrupted before it ended (complete: false)")
            && text.contains("mixed/2.json"),
        "{text}"
    );
}

/// A run directory of a side whose results.json cannot be looked at (a link, never followed
/// inside a side) is an error, as an unreadable file is, rather than one run fewer unsaid; an output inside a side's
/// directory, where the next comparison would read it as a run, is refused.
#[test]
fn an_unreadable_run_of_a_side_and_an_output_inside_a_side_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (before, after) = run_and_changed_copy(dir.path(), 1.0);
    let side = dir.path().join("side");
    std::fs::create_dir_all(side.join("2")).unwrap();
    std::fs::copy(&before, side.join("1.json")).unwrap();
    // A loop of links where the run's results.json should be: no link inside a side is
    // followed, and it is said rather than passed over.
    std::os::unix::fs::symlink("results.json", side.join("2/results.json")).unwrap();
    let output = latlab(dir.path())
        .args(["compare", "side"])
        .arg(&after)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("side/2/results.json: a symbolic link, which latlab does not follow"),
        "{stderr}"
    );
    std::fs::remove_file(side.join("2/results.json")).unwrap();
    for (flag, path) in [("--json", "side/c.json"), ("--csv", "side/2/c.csv")] {
        let output = latlab(dir.path())
            .args(["compare", "side"])
            .arg(&after)
            .args([flag, path])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("a side of this comparison"), "{stderr}");
        assert!(!dir.path().join(path).exists());
    }
}

/// `--runs N`: N runs, each a process of its own, into run-1 ... run-N of the results
/// directory; kept together as one baseline, compared with one together, and compared as
/// a directory of runs by `latlab compare` (the single run's results.json before them
/// left out). Outputs every run would write over, and runs of an earlier command of more
/// runs, which a comparison would count, are refused.
#[test]
fn several_runs_as_one_command_are_kept_and_compared_together() {
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| synthetic_run(dir.path(), &[&["-q"], extra].concat());
    let (status, _, stderr) = run(&["--out", "res", "--save-baseline", "main"]);
    assert_eq!(status, 0, "{stderr}");
    let (status, _, stderr) = run(&["--out", "res", "--runs", "3", "--save-baseline", "main"]);
    assert_eq!(status, 0, "{stderr}");
    for k in 1..=3 {
        assert!(stderr.contains(&format!("latlab: run {k} of 3, into res/run-{k}\n")));
        let runs = dir.path().join("res/baselines/main");
        assert!(runs.join(format!("run-{k}.json")).is_file(), "{stderr}");
        let results = std::fs::read(dir.path().join(format!("res/run-{k}/results.json")));
        assert!(results.is_ok(), "run {k}: {stderr}");
    }
    // The runs replace the single run kept under the name.
    assert!(!dir.path().join("res/baselines/main.json").exists());
    assert!(
        stderr.contains(
            "baseline main: 3 runs, in res/baselines/main (3 runs kept, at most 10: \
             --baseline-history)\n"
        ),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(
            "latlab: 3 runs in res/run-1 ... run-3; `latlab compare res OTHER` compares them \
             with another directory of runs\n"
        ),
        "{stderr}"
    );
    let (status, stdout, stderr) = run(&["--out", "res", "--runs", "2", "--baseline", "main"]);
    assert_eq!(status, 2, "{stdout}{stderr}");
    assert!(
        stderr.starts_with(
            "error: --out res holds runs of an earlier command (run-3), which `latlab compare res`"
        ),
        "{stderr}"
    );
    let (status, stdout, stderr) = run(&["--out", "res", "--runs", "3", "--baseline", "main"]);
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stdout.ends_with("these 3 runs against main: 0 slower, 0 faster, 1 same\n"),
        "{stdout}"
    );
    let (status, _, stderr) = run(&["--out", "other", "--runs", "2", "--json", "x.json"]);
    assert_eq!(status, 2);
    assert!(
        stderr.starts_with("error: --json x.json with --runs 2: each run would write over"),
        "{stderr}"
    );
    assert!(!dir.path().join("other").exists());
    let (status, _, stderr) = run(&["--out", "other", "--runs", "2"]);
    assert_eq!(status, 0, "{stderr}");
    let compared = latlab(dir.path())
        .args(["compare", "res", "other"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(compared.stdout).unwrap();
    assert_eq!(compared.status.code(), Some(0), "{stdout}");
    // The synthetic machine's runs are alike, sample for sample, and counted once; what
    // matters here is which files were read: the three runs, not the single run before.
    for run in ["res/run-1/results.json", "res/run-3/results.json"] {
        assert!(stdout.contains(run), "{stdout}");
    }
    assert!(!stdout.contains("res/results.json"), "{stdout}");
}

/// An emulated run is never set beside a native one: one line naming both, exit 2; two
/// emulated runs compare as any two runs do.
#[test]
fn an_emulated_run_is_not_compared_with_a_native_one() {
    let dir = tempfile::tempdir().unwrap();
    let runs = run_and_changed_copy(dir.path(), 1.0);
    let emulate = |from: &Path, name: &str| {
        let mut run: Value = serde_json::from_slice(&std::fs::read(from).unwrap()).unwrap();
        run["latlab"]["environment"]["emulated"] =
            "this aarch64 build runs on a CPU that /proc/cpuinfo describes as x86".into();
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_vec(&run).unwrap()).unwrap();
        path
    };
    let emulated = (emulate(&runs.0, "e1.json"), emulate(&runs.1, "e2.json"));
    let output = latlab(dir.path())
        .args(["compare", "before.json", "e2.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("e2.json was measured under an emulator and before.json natively"),
        "{stderr}"
    );
    let (status, text) = compare(dir.path(), &emulated, &[]);
    assert_eq!(status, 0, "{text}");
}

/// `latlab noise` reads directories of runs into a noise table, which `compare
/// --noise-table` then takes as each result's prior; too few runs, and a malformed table,
/// are refused in one line with status 2, writing nothing. The runs are one synthetic run
/// copied with other start times, `cpu.branch/random` 1% slower in each copy than the last:
/// the synthetic machine's own figures do not move.
fn copies_of(one: &Path, runs: &Path, count: usize) -> PathBuf {
    let run: Value = serde_json::from_slice(&std::fs::read(one).unwrap()).unwrap();
    std::fs::create_dir(runs).unwrap();
    for k in 0..count {
        let mut copy = run.clone();
        copy["latlab"]["started_at"] = format!("2000-01-0{}T00:00:00Z", k + 1).into();
        for probe in copy["latlab"]["probes"].as_array_mut().unwrap() {
            for result in probe["results"].as_array_mut().unwrap() {
                if result["name"] == "cpu.branch/random" {
                    let factor = 1.0 + 0.01 * k as f64;
                    scale(&mut result["samples_ns"], factor);
                    scale(&mut result["cpu_samples_ns"], factor);
                    scale(&mut result["round_medians_ns"], factor);
                    let summary = &mut result["summary"];
                    for key in ["min", "p5", "median", "p95", "max", "mean", "stddev", "mad"] {
                        scale(&mut summary[key], factor);
                    }
                    scale(&mut summary["median_ci95"], factor);
                }
            }
        }
        let path = runs.join(format!("{k}.json"));
        std::fs::write(path, serde_json::to_vec(&copy).unwrap()).unwrap();
    }
    runs.to_path_buf()
}

#[test]
fn a_noise_table_is_measured_from_runs_and_taken_by_compare() {
    let dir = tempfile::tempdir().unwrap();
    let (one, _) = run_and_changed_copy(dir.path(), 1.0);
    let copies = |into: &str, count: usize| copies_of(&one, &dir.path().join(into), count);
    copies("two", 2);
    let refused = latlab(dir.path())
        .args(["noise", "two", "--out", "two.tsv"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("2 runs are too few") && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert!(!dir.path().join("two.tsv").exists());

    let runs = copies("five", 5);
    let written = latlab(dir.path())
        .args(["noise", "five", "--out", "table.tsv"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(written.stderr).unwrap();
    assert!(written.status.success(), "{stderr}");
    assert!(stderr.contains("from 5 runs of "), "{stderr}");
    let table = std::fs::read_to_string(dir.path().join("table.tsv")).unwrap();
    let table = latlab_report::stats::NoiseTable::parse(&table).unwrap();
    assert_eq!(table.runs, 5);
    // The standard deviation of ln(1.00), ln(1.01) … ln(1.04): 1.6%.
    let moved = table.of("cpu.branch/random").unwrap().sd;
    assert!((0.0150..0.0165).contains(&moved), "{moved}");
    assert_eq!(table.of("cpu.call/empty").unwrap().sd, 0.0);

    let files = (runs.join("0.json"), runs.join("4.json"));
    let (status, text) = compare(dir.path(), &files, &["--noise-table", "table.tsv"]);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains(&format!(
            "for the {} results a table has",
            table.results.len()
        )),
        "{text}"
    );
    assert!(
        line(&text, "cpu.branch/random").contains("(noise: prior"),
        "{text}"
    );

    std::fs::write(dir.path().join("bad.tsv"), "not a table\n").unwrap();
    let refused = latlab(dir.path())
        .arg("compare")
        .args([&files.0, &files.1])
        .args(["--noise-table", "bad.tsv"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--noise-table bad.tsv: not a latlab run-to-run noise table")
            && stderr.lines().count() == 1,
        "{stderr}"
    );
}

/// `latlab compare` of `files` with `table` as its noise table, refused: its one line.
fn refused_table(dir: &Path, files: &(PathBuf, PathBuf), table: &str) -> String {
    std::fs::write(dir.join("given.tsv"), table).unwrap();
    let refused = latlab(dir)
        .arg("compare")
        .args([&files.0, &files.1])
        .args(["--noise-table", "given.tsv"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

/// A noise table no `latlab noise` writes is refused; one that would change nothing is
/// refused; one of another machine, or beside sides of several runs, is said to be taken as
/// given, or not taken.
#[test]
fn a_noise_table_that_is_impossible_or_does_not_apply_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let (one, _) = run_and_changed_copy(dir.path(), 1.0);
    let runs = copies_of(&one, &dir.path().join("five"), 5);
    let written = latlab(dir.path())
        .args(["noise", "five", "--out", "table.tsv"])
        .output()
        .unwrap();
    assert!(written.status.success());
    let files = (runs.join("0.json"), runs.join("4.json"));
    // A table no `latlab noise` writes is refused: a deviation of fifty, a result measured
    // by more runs than the table has, a header that never ends.
    let text = std::fs::read_to_string(dir.path().join("table.tsv")).unwrap();
    let random = |sd: &str, runs: &str| {
        let row = format!("cpu.branch/random\t{sd}\t{sd}\t{runs}");
        (text.lines())
            .map(|l| {
                if l.starts_with("cpu.branch/random\t") {
                    row.clone()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (bad, says) in [
        (random("50", "5"), "a deviation latlab noise writes"),
        (random("1e300", "5"), "a deviation latlab noise writes"),
        (random("0.01", "1000000"), "to the header's 5"),
        (text.replace("result\tsd\trange\truns\n", ""), "never ends"),
    ] {
        std::fs::write(dir.path().join("bad.tsv"), bad).unwrap();
        let refused = latlab(dir.path())
            .arg("compare")
            .args([&files.0, &files.1])
            .args(["--noise-table", "bad.tsv"])
            .output()
            .unwrap();
        let stderr = String::from_utf8(refused.stderr).unwrap();
        assert_eq!(refused.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(says) && stderr.lines().count() == 1,
            "{stderr}"
        );
    }

    // A table that would change nothing is refused; one of another machine, or beside
    // sides of several runs, is said to be taken as given, or not taken.
    let none_compared = text
        .lines()
        .map(|l| l.replace("cpu.", "gone."))
        .collect::<Vec<_>>()
        .join("\n");
    let stderr = refused_table(dir.path(), &files, &none_compared);
    assert!(stderr.contains("none of its"), "{stderr}");
    let bare_metal = text.replace("cpu	Synthetic CPU", "cpu	Another CPU");
    std::fs::write(dir.path().join("metal.tsv"), bare_metal).unwrap();
    let (status, text) = compare(dir.path(), &files, &["--noise-table", "metal.tsv"]);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("note: --noise-table metal.tsv was measured on Another CPU"),
        "{text}"
    );
    assert!(
        text.contains("the table given, of another machine, taken as given"),
        "{text}"
    );
    let (status, text) = compare(
        dir.path(),
        &(runs.clone(), runs.clone()),
        &["--noise-table", "table.tsv"],
    );
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("is taken only where each side has one run"),
        "{text}"
    );
}

/// `latlab noise` never writes over a run it reads, by any name.
#[test]
fn noise_never_writes_over_its_own_input() {
    let dir = tempfile::tempdir().unwrap();
    let (one, _) = run_and_changed_copy(dir.path(), 1.0);
    let runs = dir.path().join("runs");
    let run: Value = serde_json::from_slice(&std::fs::read(&one).unwrap()).unwrap();
    for k in 1..=5 {
        let run_dir = runs.join(format!("run-{k}"));
        std::fs::create_dir_all(&run_dir).unwrap();
        let mut copy = run.clone();
        copy["latlab"]["started_at"] = format!("2000-01-0{k}T00:00:00Z").into();
        std::fs::write(
            run_dir.join("results.json"),
            serde_json::to_vec(&copy).unwrap(),
        )
        .unwrap();
    }
    let input = runs.join("run-1/results.json");
    std::os::unix::fs::symlink(&input, dir.path().join("link.json")).unwrap();
    std::fs::hard_link(&input, dir.path().join("hard.json")).unwrap();
    let before = std::fs::read(&input).unwrap();
    for out in ["runs/run-1/results.json", "link.json", "hard.json"] {
        let refused = latlab(dir.path())
            .args(["noise", "runs", "--out", out])
            .output()
            .unwrap();
        let stderr = String::from_utf8(refused.stderr).unwrap();
        assert_eq!(refused.status.code(), Some(2), "{out}: {stderr}");
        assert!(
            stderr.contains("which this command reads"),
            "{out}: {stderr}"
        );
        assert_eq!(std::fs::read(&input).unwrap(), before, "{out}");
    }
}

/// A threshold wider than the gate does not disarm it: the gate judges by its own
/// percentage.
#[test]
fn a_threshold_wider_than_the_gate_does_not_disarm_it() {
    let dir = tempfile::tempdir().unwrap();
    let files = run_and_changed_copy(dir.path(), 2.0);
    let (status, text) = compare(
        dir.path(),
        &files,
        &["--threshold", "1000", "--fail-if-slower", "10"],
    );
    assert_eq!(status, 1, "{text}");
    assert!(
        line(&text, "cpu.branch/random").contains("within 1000%"),
        "{text}"
    );
    assert!(text.contains("cpu.branch/random in B: 2.00×"), "{text}");
}

/// A probe that crashed in B fails the gate by name, with its reason, where it used to pass
/// as "2 only in A … no result is more than 10% slower"; `--allow-missing` accepts it and
/// says so, and is refused without a gate to excuse.
#[test]
fn a_failed_probe_fails_the_gate_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (before, after) = run_and_changed_copy(dir.path(), 1.0);
    let mut run: Value = serde_json::from_slice(&std::fs::read(&before).unwrap()).unwrap();
    for probe in run["latlab"]["probes"].as_array_mut().unwrap() {
        if probe["id"] == "cpu.branch" {
            probe["status"] = "failed".into();
            probe["reason"] = "killed by SIGSEGV".into();
            probe["results"] = Value::Array(Vec::new());
        }
    }
    std::fs::write(&after, serde_json::to_vec(&run).unwrap()).unwrap();
    let files = (before, after);
    let (status, text) = compare(dir.path(), &files, &["--fail-if-slower", "10"]);
    assert_eq!(status, 1, "{text}");
    assert!(
        text.contains("B lacks 4 results of A (cpu.branch/random and 3 more): cpu.branch failed: killed by SIGSEGV; the gate fails"),
        "{text}"
    );
    assert!(!text.contains("no result is more than"), "{text}");
    let (status, text) = compare(
        dir.path(),
        &files,
        &["--fail-if-slower", "10", "--allow-missing"],
    );
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("--allow-missing: B lacks 4 results of A (cpu.branch/random and 3 more): cpu.branch failed: killed by SIGSEGV; not failing the gate"),
        "{text}"
    );
    let (status, _) = compare(dir.path(), &files, &["--allow-missing"]);
    assert_eq!(status, 2);
}
