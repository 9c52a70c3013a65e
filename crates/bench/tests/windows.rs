//! The harness on Windows: cross-built with MinGW for `x86_64-pc-windows-gnu` and run under
//! Wine. The fixture's benchmarks have known answers and a planted body the compiler
//! deletes; the harness's own examples (`lists`, `features`) are what a new user runs first.
//! Built into the test target directory, run in temporary ones.

// A test reads and writes files as it pleases: the doors are for what latlab itself does.
#![allow(clippy::disallowed_methods)]
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod wine;

const TARGET: &str = "x86_64-pc-windows-gnu";

/// Held by each test for the whole of it: one test's build does not load the CPUs the
/// other measures on.
static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `cargo bench --no-run --target x86_64-pc-windows-gnu ARGS` in `dir`, into a target
/// directory of the tests' own; the executables it built, as cargo names them.
fn windows_benches(dir: &Path, args: &[&str]) -> Vec<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("windows");
    let built = Command::new(cargo)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .args(["bench", "--no-run", "--target", TARGET])
        .args(args)
        .output()
        .expect("cargo runs");
    let stderr = text(&built.stderr);
    assert!(built.status.success(), "{stderr}");
    stderr
        .lines()
        .filter(|l| l.trim_start().starts_with("Executable"))
        .map(|l| PathBuf::from(l.rsplit_once('(').unwrap().1.trim_end_matches(')')))
        .collect()
}

/// Runs `program` (copied into `dir`) under Wine with `args`, in `dir`.
fn under_wine(dir: &Path, program: &Path, args: &[&str]) -> Output {
    let name = program.file_name().unwrap();
    std::fs::copy(program, dir.join(name)).unwrap();
    wine::command(dir, name.to_str().unwrap())
        .env("CARGO_TARGET_DIR", "target")
        .args(args)
        .output()
        .expect("wine runs")
}

/// Every result of a results file, by name: (verdict, median in nanoseconds).
fn verdicts(json: &Value) -> Vec<(String, String, f64)> {
    json["latlab"]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["results"].as_array().unwrap())
        .map(|r| {
            let name = r["name"].as_str().unwrap().to_string();
            let verdict = r["verdict"].as_str().unwrap().to_string();
            (name, verdict, r["summary"]["median"].as_f64().unwrap())
        })
        .collect()
}

fn read_results(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("the results file was written")).unwrap()
}

/// The fixture's benchmarks run on Windows as on Linux: the run ends with status 0, writes
/// its results, times with a calibrated clock, finds 64 dependent adds far slower than one,
/// measures a sort of 1,000 numbers, and calls the two planted bodies optimised away.
#[test]
#[ignore = "needs Wine, the MinGW cross compiler and the x86_64-pc-windows-gnu target"]
fn the_fixtures_benchmarks_run_on_windows() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixture");
    let built = windows_benches(&fixture, &["--locked", "--bench", "known"]);
    let dir = wine::directory();
    let args = [
        "--bench",
        "--samples",
        "20",
        "--rounds",
        "2",
        "--json",
        "results.json",
    ];
    let patterns = [
        "chains/add",
        "planted/(empty|unused_result)",
        "inputs/",
        "lists/",
    ];
    let run = under_wine(dir.path(), &built[0], &[&args[..], &patterns[..]].concat());
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let json = read_results(&dir.path().join("results.json"));
    let kind = &json["latlab"]["clock"]["kind"];
    assert!(
        kind == "tsc" || kind == "query_performance_counter",
        "{kind}"
    );
    let results = verdicts(&json);
    let find = |name: &str| {
        results
            .iter()
            .find(|(n, _, _)| n == name)
            .unwrap_or_else(|| panic!("no {name} in {results:?}"))
    };
    for planted in ["planted/empty", "planted/unused_result", "inputs/ignored"] {
        assert_eq!(find(planted).1, "optimised_away", "{results:?}");
    }
    for measured in ["chains/add/1", "chains/add/64", "inputs/sort_1000"] {
        assert_eq!(find(measured).1, "measured", "{results:?}");
    }
    let (one, sixty_four) = (find("chains/add/1").2, find("chains/add/64").2);
    assert!(sixty_four > 16.0 * one, "{one} ns, {sixty_four} ns");
}

/// The harness's own examples, as a new user runs them first: each ends with status 0 and
/// writes a result with a figure for every benchmark it lists.
#[test]
#[ignore = "needs Wine, the MinGW cross compiler and the x86_64-pc-windows-gnu target"]
fn the_harnesss_examples_run_on_windows() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let built = windows_benches(crate_dir, &["--bench", "lists", "--bench", "features"]);
    assert_eq!(built.len(), 2, "{built:?}");
    let dir = wine::directory();
    for example in &built {
        let listed = under_wine(dir.path(), example, &["--list"]);
        assert_eq!(listed.status.code(), Some(0), "{}", text(&listed.stderr));
        let names = text(&listed.stdout).lines().count();
        assert!(names > 0, "{} lists no benchmark", example.display());
        let args = [
            "--bench",
            "--samples",
            "12",
            "--rounds",
            "1",
            "--target-time",
            "1ms",
        ];
        let run = under_wine(
            dir.path(),
            example,
            &[&args[..], &["--json", "r.json"]].concat(),
        );
        assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
        // A result for every benchmark listed, each with a figure, or a skip with its
        // reason: threads that could not run together (four threads on a 2-CPU machine, or
        // two the kernel kept on one CPU) give no figure. Their verdicts are not asserted:
        // with one round of 12 samples beside the other test's build (before the tests
        // took turns), slopes judged on wall time (no CPU time on Windows) called 2 of 15
        // real bodies optimised away once; the fixture's test asserts the verdicts.
        // The harness also keeps the cycle it measured before the benchmarks, which
        // `--list` does not name.
        let json = read_results(&dir.path().join("r.json"));
        let (cycle, results): (Vec<_>, Vec<_>) =
            (verdicts(&json).into_iter()).partition(|(name, _, _)| name == "cpu.frequency/cycle");
        assert_eq!(cycle.len(), 1, "{cycle:?}");
        let skipped: Vec<&str> = (json["latlab"]["probes"].as_array().unwrap().iter())
            .filter(|probe| probe["status"] == "skipped")
            .map(|probe| probe["reason"].as_str().unwrap())
            .collect();
        assert!(
            (skipped.iter()).all(|why| why.contains("threads:") && why.contains("the same time")),
            "{skipped:?}"
        );
        assert_eq!(
            results.len() + skipped.len(),
            names,
            "{results:?} {skipped:?}"
        );
        assert!(
            results.iter().all(|(_, _, median)| median.is_finite()),
            "{results:?}"
        );
    }
}
