//! End to end: a user's crate (tests/fixture) built and run through `cargo bench`, as a user
//! would. Its benchmarks have known answers. The build takes a minute the first time (a
//! target directory of its own), so one test covers the whole path.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture")
}

/// `cargo bench --bench known -- ARGS` in the fixture crate.
fn cargo_bench(args: &[&str]) -> Output {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/fixture");
    Command::new(cargo)
        .current_dir(fixture())
        .env("CARGO_TARGET_DIR", target)
        .args(["bench", "--quiet", "--bench", "known", "--"])
        .args(args)
        .output()
        .expect("cargo runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn results(json: &Value) -> Vec<&Value> {
    json["latlab"]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["results"].as_array().unwrap())
        .collect()
}

fn result<'a>(json: &'a Value, name: &str) -> &'a Value {
    results(json)
        .into_iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no result {name}"))
}

#[test]
fn a_users_benchmarks_run_through_cargo_bench() {
    // Listing: every benchmark, one per argument, in source order.
    let listed = cargo_bench(&["--list"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    let names: Vec<String> = text(&listed.stdout).lines().map(String::from).collect();
    assert_eq!(names[0], "chains/add/1: benchmark");
    assert!(names.contains(&"lists/push_grow: benchmark".to_string()));
    assert_eq!(names.len(), 11, "{names:?}");

    // Bad input: one line, exit 2.
    for args in [
        &["no_such_benchmark"][..],
        &["--baseline", "never-saved"],
        &["--samples", "2"],
    ] {
        let refused = cargo_bench(args);
        assert_eq!(
            refused.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&refused.stderr)
        );
        assert!(
            text(&refused.stderr)
                .lines()
                .any(|l| l.starts_with("error"))
        );
    }

    // A measured run of the planted and compared benchmarks, saved as a baseline.
    let dir = tempfile::tempdir().unwrap();
    let json_path = dir.path().join("known.json");
    let quick = ["--samples", "10", "--target-time", "200us"];
    let mut args = vec![
        "planted|lists|chains/.*/64",
        "--json",
        json_path.to_str().unwrap(),
    ];
    args.extend(quick);
    args.extend(["--save-baseline", "harness-test"]);
    let run = cargo_bench(&args);
    let stderr = text(&run.stderr);
    assert_eq!(
        run.status.code(),
        Some(1),
        "never_measured fails the run: {stderr}"
    );
    let stdout = text(&run.stdout);
    assert!(
        stdout.contains("planted/never_measured: the benchmark returned without calling"),
        "{stdout}"
    );
    let json: Value = serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    for planted in ["planted/empty", "planted/unused_result"] {
        assert_eq!(
            result(&json, planted)["verdict"],
            "optimised_away",
            "{planted}"
        );
    }
    // Growing a vector as it is pushed to costs more than filling one made to size, and the
    // ratio comes from paired samples.
    let grow = result(&json, "lists/push_grow");
    assert_eq!(grow["parameters"]["baseline"], "lists/with_capacity");
    let ratio = grow["parameters"]["ratio"].as_f64().unwrap();
    assert!(ratio > 1.5, "push_grow / with_capacity = {ratio}");
    let [lo, hi] = [0, 1].map(|i| grow["parameters"]["ratio_ci95"][i].as_f64().unwrap());
    assert!(lo <= ratio && ratio <= hi);
    assert!(stdout.contains("lists/push_grow is "), "{stdout}");
    // A dependent multiply takes several times a dependent add (3 and 1 cycles on current
    // x86-64 cores), measured per call of 64 of each.
    let median = |name: &str| result(&json, name)["summary"]["median"].as_f64().unwrap();
    let (add, imul) = (median("chains/add/64"), median("chains/imul/64"));
    assert!(
        imul > 2.0 * add && imul < 4.5 * add,
        "64 imul {imul} ns vs 64 add {add} ns"
    );

    // The next run compared with the saved baseline.
    let mut args = vec!["lists", "--baseline", "harness-test"];
    args.extend(quick);
    let compared = cargo_bench(&args);
    assert!(compared.status.success(), "{}", text(&compared.stderr));
    assert!(
        text(&compared.stdout).contains("against the baseline harness-test"),
        "{}",
        text(&compared.stdout)
    );

    // Without --bench (as `cargo test --benches` runs them), each runs once.
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/fixture");
    let binary = std::fs::read_dir(target.join("release/deps"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("known-")
                && p.extension().is_none()
        })
        .expect("the fixture's bench binary");
    let once = Command::new(binary).arg("lists").output().unwrap();
    assert!(once.status.success());
    assert!(text(&once.stdout).contains("bench lists/push_grow ... ok"));
}
