//! `latlab history`: a step planted in a host's nightly runs is found at the run it was
//! planted in, named with the kernel that changed there, and gated; a host of one run has no
//! history yet; a damaged file is named and skipped; a directory of no runs is refused.

use crate::{latlab, synthetic_run_of};
use latlab_test_support::summary_text;
use serde_json::Value;
use std::path::Path;

/// Twelve nightly summaries of one synthetic run under `dir/nightly`, each figure moved by
/// up to ±0.5% from night to night, `cpu.call/empty` 30% slower and the kernel upgraded
/// from night `step_at` on.
pub(crate) fn nightly(dir: &Path, step_at: usize) {
    let summary = synthetic_summary(dir);
    for night in 0..12 {
        let mut run = summary.clone();
        run["started_at"] = format!("2026-11-{:02}T03:00:00Z", night + 1).into();
        let stepped = night >= step_at;
        run["environment"]["kernel"] = if stepped { "6.9.1" } else { "6.8.0" }.into();
        let jitter = 1.0 + 0.005 * ((night * 7 % 5) as f64 / 2.0 - 1.0);
        let factor = |name: &str| match name == "cpu.call/empty" && stepped {
            true => 1.3 * jitter,
            false => jitter,
        };
        for result in run["results"].as_array_mut().unwrap() {
            let f = factor(result["name"].as_str().unwrap());
            scale(&mut result["median_ns"], f);
            for bound in result["median_ci95_ns"].as_array_mut().unwrap() {
                scale(bound, f);
            }
        }
        for row in run["headline"].as_array_mut().unwrap() {
            let f = factor(row["result"].as_str().unwrap());
            for key in ["median_ns", "p5_ns", "p95_ns"] {
                scale(&mut row[key], f);
            }
        }
        let night_dir = dir.join(format!("nightly/night-{night:02}"));
        std::fs::create_dir_all(&night_dir).unwrap();
        std::fs::write(night_dir.join("summary.json"), summary_text(run)).unwrap();
    }
}

/// The summary of a synthetic run of `cpu.call`, made under `dir/base` and removed.
pub(crate) fn synthetic_summary(dir: &Path) -> Value {
    let base = dir.join("base");
    std::fs::create_dir_all(&base).unwrap();
    synthetic_run_of(&base, "cpu.call")
        .args(["--out"])
        .arg(&base)
        .assert()
        .success();
    let text = std::fs::read_to_string(base.join("summary.json")).unwrap();
    std::fs::remove_dir_all(base).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn scale(value: &mut Value, factor: f64) {
    *value = (value.as_f64().unwrap() * factor).into();
}

#[test]
fn a_step_is_found_at_its_run_with_the_kernel_that_changed_there() {
    let dir = tempfile::tempdir().unwrap();
    nightly(dir.path(), 6);
    let output = latlab(dir.path())
        .args(["history", "nightly", "--json", "history.json"])
        .args(["--csv", "history.csv", "--markdown", "history.md"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&output.get_output().stdout).to_string();
    assert!(
        text.contains("cpu.call/empty:") && text.contains("kernel 6.8.0 → 6.9.1"),
        "{text}"
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("history.json")).unwrap())
            .unwrap();
    let changes = json["hosts"][0]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{json:#}");
    let change = &changes[0];
    assert_eq!(change["result"], "cpu.call/empty");
    assert_eq!(change["after_run"], "2026-11-07T03:00:00Z");
    assert_eq!(change["before_run"], "2026-11-06T03:00:00Z");
    assert!(
        (change["ratio"].as_f64().unwrap() - 1.3).abs() < 0.02,
        "{change}"
    );
    assert_eq!(change["environment_changes"][0]["field"], "kernel");
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert_eq!(read("history.csv").lines().count(), 2);
    assert!(read("history.md").contains("cpu.call/empty"));
    // A nightly gate: status 1 past 10%, 0 past 50%, and nothing once the step is older
    // than the runs asked for.
    let gate = |args: &[&str]| {
        latlab(dir.path())
            .arg("history")
            .arg("nightly")
            .args(args)
            .assert()
    };
    gate(&["--fail-if-slower", "10"]).code(1);
    gate(&["--fail-if-slower", "50"]).success();
    gate(&["--fail-if-slower", "10", "--last", "3"]).success();
    gate(&["--fail-if-slower", "10", "--since", "2026-11-08"]).success();
    // A result's own step is never a step of the machine to accept.
    gate(&["--fail-if-slower", "10", "--accept-machine-steps"]).code(1);
    gate(&["--accept-machine-steps"]).code(2);
    // The changes as gauges an alert rule can fire on.
    gate(&["--openmetrics", "history.om"]).success();
    let metrics = read("history.om");
    assert!(
        metrics
            .contains("latlab_change_ratio{probe=\"cpu.call\",result=\"empty\",kind=\"own\",host=")
            && metrics.contains("latlab_change_start_time_seconds{probe=\"cpu.call\"")
            && metrics.ends_with("# EOF\n"),
        "{metrics}"
    );
}

#[test]
fn one_run_a_damaged_file_and_no_runs_are_said() {
    let dir = tempfile::tempdir().unwrap();
    nightly(dir.path(), 99);
    for night in 1..12 {
        std::fs::remove_dir_all(dir.path().join(format!("nightly/night-{night:02}"))).unwrap();
    }
    std::fs::write(
        dir.path().join("nightly/damaged.json"),
        "{\"latlab_summary_version\": 1,",
    )
    .unwrap();
    let output = latlab(dir.path())
        .args(["history", "nightly"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&output.get_output().stdout).to_string();
    assert!(text.contains("one run: no history yet"), "{text}");
    assert!(text.contains("damaged.json"), "{text}");
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let refused = latlab(dir.path())
        .args(["history", "empty"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).to_string();
    assert!(stderr.contains("no latlab results file"), "{stderr}");
    for since in ["yesterday", "2026-13-45", "2026-02-30T00:00:00Z"] {
        latlab(dir.path())
            .args(["history", "nightly", "--since", since])
            .assert()
            .code(2);
    }
    let refused = latlab(dir.path())
        .args(["history", "nightly", "--beyond-scatter", "11"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).to_string();
    assert!(stderr.contains("from 0 to 10"), "{stderr}");
}

/// The page has the host that changed on its first screen and the stepped result's
/// timeline; the fleet report of the same runs names the host while the step is within the
/// runs asked for, and not after.
#[test]
fn the_page_and_the_fleet_name_the_host_that_stepped() {
    let dir = tempfile::tempdir().unwrap();
    nightly(dir.path(), 8);
    latlab(dir.path())
        .args(["history", "nightly", "--html", "history.html"])
        .assert()
        .success();
    let page = std::fs::read_to_string(dir.path().join("history.html")).unwrap();
    assert!(page.contains("Hosts that changed (1)"), "{page}");
    assert!(page.contains("cpu.call/empty, run by run"), "{page}");
    let fleet = |last: &str| {
        let output = latlab(dir.path())
            .args(["fleet", "nightly", "--last", last])
            .assert()
            .success();
        String::from_utf8_lossy(&output.get_output().stdout).to_string()
    };
    let named = fleet("5");
    assert!(named.contains(" · 12 runs of 1 host · "), "{named}");
    assert!(
        named.contains("changed within their last 5 runs: 1 host of the 1 with two runs or more"),
        "{named}"
    );
    assert!(
        named.contains("cpu.call/empty: ") && named.contains("kernel 6.8.0 → 6.9.1"),
        "{named}"
    );
    let older = fleet("3");
    assert!(
        older.contains("changed within their last 3 runs: 0 hosts of the 1"),
        "{older}"
    );
    latlab(dir.path())
        .args(["fleet", "nightly", "--last", "0"])
        .assert()
        .code(2);
}

/// On the project's own generated series (heavy-tailed scatter of 2%, 5% for one result in
/// six, one-run outliers, two regimes, steps of 5% to 10% and a kernel change), the steps of
/// three scatters or more are found within a run of where they were planted, the kernel
/// change is one step of the machine named by its kernel, and a result in two regimes at
/// the usual scatter is never given a step of its level.
#[test]
fn generated_steps_of_three_scatters_are_found_and_two_regimes_are_not_steps() {
    let dir = tempfile::tempdir().unwrap();
    let generated = latlab_test_support::Generated::new(84, 200, 40);
    let template = synthetic_summary(dir.path());
    generated
        .write_summaries(&template, &dir.path().join("nightly"))
        .unwrap();
    latlab(dir.path())
        .args(["history", "nightly", "--json", "history.json"])
        .assert()
        .success();
    let text = std::fs::read_to_string(dir.path().join("history.json")).unwrap();
    let host = serde_json::from_str::<Value>(&text).unwrap()["hosts"][0].clone();
    let runs: Vec<&str> = (host["runs"].as_array().unwrap().iter())
        .map(|run| run.as_str().unwrap())
        .collect();
    let events = host["machine_events"].as_array().unwrap();
    let members = events.iter().flat_map(|e| e["members"].as_array().unwrap());
    let changes: Vec<(String, usize, bool)> = (host["changes"].as_array().unwrap().iter())
        .chain(members)
        .map(|change| {
            let at = runs.iter().position(|run| *run == change["after_run"]);
            let name = change["result"].as_str().unwrap().to_string();
            (name, at.unwrap(), change["mix"].is_null())
        })
        .collect();
    let tall: Vec<_> = (generated.steps.iter())
        .filter(|(_, step)| step.scatters() >= 3.0)
        .collect();
    let missed: Vec<_> = (tall.iter())
        .filter(|(name, step)| {
            !(changes.iter()).any(|(n, at, _)| n == *name && at.abs_diff(step.at) <= 1)
        })
        .collect();
    assert!(tall.len() >= 30, "{} steps of three scatters", tall.len());
    assert!(missed.len() * 20 <= tall.len(), "missed {missed:?}");
    let kernel = events.iter().find(|event| {
        let members = event["members"].as_array().unwrap();
        members.len() >= 10 && event["environment_changes"][0]["field"] == "kernel"
    });
    assert!(kernel.is_some(), "{events:?}");
    let quiet_regimes = (generated.regimes.iter()).filter(|name| !generated.noisy.contains(name));
    for name in quiet_regimes {
        let steps = changes.iter().filter(|(n, _, level)| n == name && *level);
        assert_eq!(steps.count(), 0, "{name} in two regimes given a step");
    }
}
