//! The GPU family end to end without a GPU: once with no driver at all (one "skipped" line,
//! exit 0), and against the stand-in driver of `crates/fake-cuda`, which runs latlab's
//! kernels on the CPU and keeps a ledger of what is allocated. Its figures are the CPU's, so
//! these tests check behaviour, never values: every probe runs through the driver calls it
//! would make on a GPU, every address its kernels touch is inside its buffers, a full GPU
//! fails one probe and not the others, a kernel that faults fails its probe alone, and
//! nothing is left allocated after a run, a failure or Ctrl-C.
//!
//! The stand-in keeps the CUDA documentation's ordering and no more (a memset or a copy
//! from pageable memory on the legacy stream lands only when something waits for it): with
//! the probes' memsets and copies back on the legacy stream, as when `gpu.memory` faulted
//! on an H200, `every_gpu_probe_runs_through_the_driver_and_frees_everything` fails here
//! with that same `CUDA_ERROR_ILLEGAL_ADDRESS`.

use crate::latlab;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// A directory holding the stand-in driver as `libcuda.so.1`, built once.
fn fake_driver_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        // In the profile these tests were built in (`cargo test --release` looks in
        // target/release).
        let profile: &[&str] = if cfg!(debug_assertions) {
            &[]
        } else {
            &["--release"]
        };
        let status = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", "latlab-fake-cuda"])
            .args(profile)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "the stand-in driver builds");
        // The test binary is target/PROFILE/deps/cli-…; the library is in target/PROFILE.
        let exe = std::env::current_exe().unwrap();
        let built = exe
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("liblatlab_fake_cuda.so");
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(&built, dir.path().join("libcuda.so.1")).expect("the library was built");
        dir
    })
    .path()
}

/// What the stand-in driver still held when the context was destroyed, `name → count`, and
/// the chase kernels it ran (`chases_run`).
fn ledger(path: &Path) -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(path).expect("the driver wrote its ledger");
    text.lines()
        .map(|l| {
            let (name, count) = l.split_once('=').unwrap();
            (name.to_string(), count.parse().unwrap())
        })
        .collect()
}

/// The count `name` in the ledger as it stands now; 0 where the driver has not written it
/// (yet, or not whole).
fn counted_now(path: &Path, name: &str) -> u64 {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    (text.lines())
        .filter_map(|l| l.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
        .next()
        .unwrap_or(0)
}

fn assert_nothing_left(path: &Path) {
    let left: Vec<_> = (ledger(path).into_iter())
        .filter(|(name, n)| name != "chases_run" && *n > 0)
        .collect();
    assert!(left.is_empty(), "left allocated on the device: {left:?}");
}

fn results(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("gpu.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn status_of<'a>(json: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    json["latlab"]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == id)
        .unwrap_or_else(|| panic!("no {id}"))
}

/// The latlab binary with the stand-in driver first on the library path.
fn with_fake_driver(dir: &Path, ledger: &Path) -> assert_cmd::Command {
    let mut command = latlab(dir);
    command
        .env("LD_LIBRARY_PATH", fake_driver_dir())
        .env("LATLAB_FAKE_CUDA_LEDGER", ledger);
    command
}

#[test]
fn without_a_driver_the_family_is_one_skipped_line_and_the_run_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let output = latlab(dir.path())
        .env("LD_LIBRARY_PATH", empty.path())
        .args(["run", "--only", "gpu", "--json", "gpu.json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !stdout.contains("no CUDA driver") {
        latlab_test_support::skip!("this machine has a CUDA driver");
    }
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let skipped: Vec<&str> = stdout.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(
        skipped,
        ["  gpu: skipped — no CUDA driver (libcuda.so.1 not found)"]
    );
    assert!(!stdout.contains("GPU kernel launch"), "no empty GPU rows");
    let json = results(dir.path());
    for probe in json["latlab"]["probes"].as_array().unwrap() {
        assert_eq!(probe["status"], "skipped", "{probe}");
        assert_eq!(probe["reason"], "no CUDA driver (libcuda.so.1 not found)");
    }
}

#[test]
fn every_gpu_probe_runs_through_the_driver_and_frees_everything() {
    let _alone = crate::machine_alone();
    let dir = tempfile::tempdir().unwrap();
    let ledger_path = dir.path().join("ledger");
    // The default command, for its headline table.
    let output = with_fake_driver(dir.path(), &ledger_path)
        .args(["--only", "gpu", "--json", "gpu.json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let json = results(dir.path());
    for probe in latlab_probes::PROBES
        .iter()
        .filter(|p| p.id.starts_with("gpu."))
    {
        let outcome = status_of(&json, probe.id);
        assert_eq!(outcome["status"], "ok", "{}: {outcome}", probe.id);
        for result in outcome["results"].as_array().unwrap() {
            assert_eq!(
                result["parameters"]["gpu"], "latlab fake CUDA device (runs on the CPU)",
                "{}",
                result["name"]
            );
            assert_eq!(result["parameters"]["gpu_sm_count"], 4);
            assert_eq!(result["parameters"]["gpu_cuda"], "13.0");
        }
    }
    let names: Vec<&str> = json["latlab"]["probes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["results"].as_array().unwrap())
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    for expected in [
        "gpu.launch/sync",
        "gpu.launch/graph-kernel",
        "gpu.launch/event-sync-blocking",
        "gpu.copy/h2d/pinned/4KiB",
        "gpu.copy/d2h/pageable/1MiB",
        "gpu.copy/model/h2d/pinned",
        "gpu.memory/ca/1KiB",
        "gpu.memory/cg/8MiB",
        "gpu.memory/level/L1",
        "gpu.spread/l2",
        "gpu.spread/dram",
        "gpu.atomic/same/grid",
        "gpu.atomic/distinct/warp",
        "gpu.shared/load",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    // The stand-in has 64 MiB free: the quick suite's copies stop at 4 MiB, and the model
    // says why.
    assert!(names.contains(&"gpu.copy/h2d/pinned/4MiB"));
    assert!(!names.contains(&"gpu.copy/h2d/pinned/64MiB"));
    assert!(stdout.contains("copies above 4MiB skipped"), "{stdout}");
    assert!(stdout.contains("GPU kernel launch (+ sync)"), "{stdout}");
    assert!(stdout.contains("Copy 1 MiB host→device"), "{stdout}");
    assert_nothing_left(&ledger_path);
}

#[test]
fn a_full_gpu_fails_the_probes_that_need_memory_and_the_others_go_on() {
    let _alone = crate::machine_alone();
    let dir = tempfile::tempdir().unwrap();
    let ledger_path = dir.path().join("ledger");
    let output = with_fake_driver(dir.path(), &ledger_path)
        .env("LATLAB_FAKE_CUDA_OOM_ABOVE", "65536")
        .args([
            "run",
            "--only",
            "gpu.(memory|launch|shared)",
            "--json",
            "gpu.json",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let json = results(dir.path());
    let memory = status_of(&json, "gpu.memory");
    assert_eq!(memory["status"], "failed", "{memory}");
    let reason = memory["reason"].as_str().unwrap();
    assert!(
        reason.contains("cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"),
        "{reason}"
    );
    assert!(stdout.contains(reason), "the terminal says why: {stdout}");
    for id in ["gpu.launch", "gpu.shared"] {
        assert_eq!(status_of(&json, id)["status"], "ok", "{id}");
    }
    assert_ne!(
        output.status.code(),
        Some(0),
        "a failed probe fails the run"
    );
    assert_nothing_left(&ledger_path);
}

/// A kernel that faults, as `gpu.memory`'s chase did on an H200 when it read a ring still
/// being copied: the sticky error ends that probe's process and no other. The five other
/// probes keep every round's results, and the run exits 1 for the failed probe.
#[test]
fn a_faulting_kernel_fails_its_probe_and_the_others_keep_every_round() {
    let _alone = crate::machine_alone();
    let dir = tempfile::tempdir().unwrap();
    let ledger_path = dir.path().join("ledger");
    let output = with_fake_driver(dir.path(), &ledger_path)
        .env("LATLAB_FAKE_CUDA_FAULT_KERNEL", "chase_ca")
        .args([
            "run", "--only", "gpu", "--rounds", "3", "--json", "gpu.json",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let json = results(dir.path());
    let memory = status_of(&json, "gpu.memory");
    assert_eq!(memory["status"], "failed", "{memory}");
    let reason = memory["reason"].as_str().unwrap();
    assert!(reason.contains("CUDA_ERROR_ILLEGAL_ADDRESS"), "{reason}");
    assert!(stdout.contains(reason), "the terminal says why: {stdout}");
    for id in [
        "gpu.launch",
        "gpu.copy",
        "gpu.spread",
        "gpu.atomic",
        "gpu.shared",
    ] {
        let outcome = status_of(&json, id);
        assert_eq!(outcome["status"], "ok", "{id}: {outcome}");
        let results = outcome["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{id}");
        for result in results {
            assert_eq!(
                result["round_medians_ns"].as_array().map(Vec::len),
                Some(3),
                "{id}: {}",
                result["name"]
            );
        }
    }
    assert!(!stdout.contains("no usable CUDA device"), "{stdout}");
}

#[test]
fn ctrl_c_during_the_gpu_family_leaves_nothing_on_the_device() {
    let _alone = crate::machine_alone();
    let dir = tempfile::tempdir().unwrap();
    let ledger_path = dir.path().join("ledger");
    let mut run = Command::new(assert_cmd::cargo::cargo_bin("latlab"))
        .current_dir(dir.path())
        .env("LD_LIBRARY_PATH", fake_driver_dir())
        .env("LATLAB_FAKE_CUDA_LEDGER", &ledger_path)
        // Each chase launch takes 20 ms: gpu.memory runs for seconds.
        .env("LATLAB_FAKE_CUDA_KERNEL_DELAY_MS", "20")
        .args(["run", "--only", "gpu.memory", "--json", "gpu.json"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Interrupt once the probe is in its measured launches: memory allocated and a chase
    // run (the ledger counts both).
    let counted = |name| counted_now(&ledger_path, name);
    let chasing = || counted("device_allocations") > 0 && counted("chases_run") > 0;
    latlab_test_support::wait_until("the probe chasing", Duration::from_secs(30), chasing);
    assert_eq!(latlab_test_support::interrupt(&mut run), Some(130));
    let json = results(dir.path());
    assert_eq!(status_of(&json, "gpu.memory")["status"], "interrupted");
    assert_nothing_left(&ledger_path);
}
