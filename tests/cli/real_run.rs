//! Runs on the real clock: what the numbers must respect, and Ctrl-C. Small and short: these
//! check behaviour and orderings with wide margins, not speed.

use crate::{files_in, latlab, machine_alone, record, short_run_of};
use latlab_engine::model::{ProbeStatus, Verdict};
use std::time::Duration;

#[test]
fn a_system_call_costs_more_than_a_function_call() {
    let dir = tempfile::tempdir().unwrap();
    let output = latlab(dir.path())
        .args(["run", "--only", "cpu.call|syscall", "--samples", "20"])
        .args(["--target-time", "500us", "--json", "-"])
        .assert()
        .success();
    let run = record(&output.get_output().stdout);
    let median = |name: &str| {
        let result = run.results().find(|r| r.name == name).unwrap();
        assert_eq!(result.verdict, Verdict::Measured, "{name}");
        result.summary.median
    };
    let call = median("cpu.call/empty");
    let syscall = median("syscall.getppid/getppid");
    assert!(
        syscall > 10.0 * call,
        "getppid {syscall} ns vs call {call} ns"
    );
    assert!(run.clock.resolution_ns > 0.0);
    assert!(run.load_avg_after.is_some());
}

#[test]
fn each_control_takes_effect_or_says_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let output = short_run_of(dir.path(), "cpu.call")
        .args(["--pin", "0", "--mlock", "--rt", "--json", "-"])
        .assert()
        .success();
    let run = record(&output.get_output().stdout);
    let noted = |flag: &str| {
        run.notes
            .iter()
            .any(|n| n.starts_with(&format!("{flag} had no effect: ")))
    };
    assert!(
        run.settings.pinned_cpu == Some(0) || noted("--pin"),
        "{:?}",
        run.notes
    );
    assert!(
        run.settings.memory_locked || noted("--mlock"),
        "{:?}",
        run.notes
    );
    assert!(run.settings.realtime || noted("--rt"), "{:?}", run.notes);
    assert_eq!(run.probes[0].status, ProbeStatus::Ok);
}

#[test]
fn ctrl_c_stops_the_run_and_keeps_what_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    // Each benchmark takes its whole one-second budget; stop once the first probe is written.
    let written = dir.path().join("latlab-results/results.json");
    let args = ["run", "--only", "cpu.call|cpu.branch|syscall"];
    let args = [&args[..], &["--samples", "100000", "--target-time", "5ms"]].concat();
    let status = interrupt_once(dir.path(), &args, || written.exists());
    assert_eq!(status, Some(130));
    assert_eq!(files_in(dir.path()), crate::A_RUNS_FILES);
    let json = std::fs::read(dir.path().join("latlab-results/results.json")).unwrap();
    let run = record(&json);
    assert!(!run.complete);
    let last = run.probes.last().unwrap();
    assert_eq!(last.status, ProbeStatus::Interrupted);
    // Stopped part-way: fewer probes than were selected, and every one before the
    // interrupted one kept its results.
    let selected = (latlab_probes::PROBES.iter())
        .filter(|p| {
            ["cpu.call", "cpu.branch", "syscall"]
                .iter()
                .any(|s| p.id.contains(s))
        })
        .count();
    assert!(
        run.probes.len() < selected,
        "{} of {selected}",
        run.probes.len()
    );
    let before = &run.probes[..run.probes.len() - 1];
    assert!(!before.is_empty());
    for probe in before {
        assert!(!probe.results.is_empty(), "{} kept nothing", probe.id);
    }
}

/// Runs latlab with `args` in `dir`, sends it SIGINT as soon as `ready` holds (failing after
/// 60 s), and returns its exit status.
fn interrupt_once(dir: &std::path::Path, args: &[&str], ready: impl Fn() -> bool) -> Option<i32> {
    signal_once(dir, args, libc::SIGINT, ready)
}

/// Runs latlab with `args` in `dir`, sends it `signal` as soon as `ready` holds (failing
/// after 60 s), and returns its exit status.
fn signal_once(
    dir: &std::path::Path,
    args: &[&str],
    signal: i32,
    ready: impl Fn() -> bool,
) -> Option<i32> {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("latlab"))
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !ready() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("latlab {args:?} never got ready to be interrupted");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    latlab_test_support::send(&child, signal);
    child.wait().unwrap().code()
}

/// The pids of processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            String::from_utf8_lossy(&cmdline)
                .contains(marker)
                .then_some(pid)
        })
        .collect()
}

#[test]
fn ctrl_c_or_sighup_during_a_ping_pong_leaves_no_process_behind() {
    for (signal, status) in [(libc::SIGINT, 130), (libc::SIGHUP, 129)] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("peers-marker-results");
        let marker = out.display().to_string();
        let args = ["run", "--only", "proc.pipe", "--samples", "100000"];
        let args = [&args[..], &["--target-time", "5ms", "--out", &marker]].concat();
        // Stopped once the forked peer is there (latlab and its child share the command line).
        let stopped = signal_once(dir.path(), &args, signal, || {
            processes_with(&marker).len() >= 2
        });
        assert_eq!(stopped, Some(status));
        // latlab kills and reaps its peers before it exits: none outlives it.
        assert_eq!(
            processes_with(&marker),
            Vec::<u32>::new(),
            "signal {signal}"
        );
        let run = record(&std::fs::read(out.join("results.json")).unwrap());
        assert_eq!(run.probes[0].status, ProbeStatus::Interrupted);
    }
}

#[test]
fn the_file_probes_touch_only_their_own_directory() {
    let dir = tempfile::tempdir().unwrap();
    let measured = dir.path().join("measured");
    std::fs::create_dir(&measured).unwrap();
    std::fs::write(measured.join("keep-me"), b"untouched").unwrap();
    let output = short_run_of(dir.path(), "file.read")
        .args(["--json", "-", "--dir"])
        .arg(&measured)
        .assert()
        .success();
    let run = record(&output.get_output().stdout);
    let result = run.results().next().unwrap();
    assert_eq!(
        result.parameters["directory"].as_str(),
        Some(measured.display().to_string().as_str())
    );
    assert!(
        !result.parameters["file_system"]
            .as_str()
            .unwrap()
            .is_empty()
    );
    assert_eq!(files_in(&measured), ["keep-me"]);
    assert_eq!(
        std::fs::read(measured.join("keep-me")).unwrap(),
        b"untouched"
    );
}

/// A full file system fails the probe with a plain reason, keeping the sizes measured before
/// it; the run goes on, and the private directory is removed.
#[test]
#[ignore = "needs root to mount a small tmpfs"]
fn a_full_disk_is_reported_and_cleaned_up() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let disk = crate::hostile::SmallDisk::mount(&small, "2m");
    let output = short_run_of(dir.path(), "file.write|file.cold")
        .args(["--json", "-", "--dir"])
        .arg(&small)
        .output()
        .unwrap();
    let left = files_in(&small);
    drop(disk);
    assert_eq!(output.status.code(), Some(1));
    let run = record(&output.stdout);
    let write = run.probes.iter().find(|p| p.id == "file.write").unwrap();
    match &write.status {
        ProbeStatus::Failed { reason } => {
            assert!(reason.contains("is full"), "{reason}");
            assert!(reason.contains("measured before it are kept"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    // The sizes that fitted are kept.
    assert!(
        write
            .results
            .iter()
            .any(|r| r.name == "file.write/no-fsync/64KiB/create-write-close"),
        "{:?}",
        write.results.iter().map(|r| &r.name).collect::<Vec<_>>()
    );
    // The run went on to the next probe, which also found no room.
    let cold = run.probes.iter().find(|p| p.id == "file.cold").unwrap();
    assert!(
        matches!(&cold.status, ProbeStatus::Failed { reason } if reason.contains("is full")),
        "{:?}",
        cold.status
    );
    assert_eq!(left, Vec::<String>::new());
}

#[test]
fn ctrl_c_sigterm_or_sighup_during_the_file_probes_leave_no_files_and_keep_the_results() {
    for (signal, status) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let measured = dir.path().join("measured");
        std::fs::create_dir(&measured).unwrap();
        let dir_arg = measured.display().to_string();
        let args = [
            "run",
            "--only",
            "file.read",
            "--samples",
            "100000",
            "--dir",
            &dir_arg,
        ];
        // Stopped once the probe's private directory has files in it.
        let stopped = signal_once(dir.path(), &args, signal, || files_in(&measured).len() >= 2);
        assert_eq!(stopped, Some(status), "signal {signal}");
        assert_eq!(files_in(&measured), Vec::<String>::new(), "signal {signal}");
        let json = std::fs::read(dir.path().join("latlab-results/results.json")).unwrap();
        let run = record(&json);
        assert!(!run.complete, "signal {signal}");
        assert_eq!(run.probes[0].status, ProbeStatus::Interrupted);
    }
}

/// Every row of the headline table that one machine can measure finds its result in a real
/// quick run of the probes it reads: a probe that renamed a result would leave its row empty
/// ("no … in this run") and fail here. The probes come from the table itself. How many cache
/// levels the latency curve shows is the machine's (a VM's slice of a shared L3 can merge
/// with L2 under load, or noise can split one), so the L2 and L3 rows may be empty; the L1
/// and main-memory rows never are. The same holds for a GPU's levels, where there is one.
#[test]
fn every_headline_row_finds_its_result_in_a_real_run() {
    const LEVEL_PREFIX: &str = "mem.latency/level/";
    const GPU_LEVEL_PREFIX: &str = "gpu.memory/level/";
    let _alone = machine_alone();
    let dir = tempfile::tempdir().unwrap();
    let declared = latlab_probes::presentations();
    let headline_probes: Vec<&str> = (latlab_probes::PROBES.iter())
        .filter(|probe| !probe.presentation.headline.is_empty())
        .map(|probe| probe.id)
        .collect();
    let only = format!("^({})$", headline_probes.join("|"));
    let output = latlab(dir.path())
        .args(["run", "--only", &only, "--samples", "10", "--json", "-"])
        .assert()
        .success();
    let run = record(&output.get_output().stdout);
    let rows = latlab_report::headline::headline_rows(&run, &declared);
    let shown = |name: &str| {
        rows.iter()
            .filter_map(|row| row.measured.as_ref())
            .any(|m| m.source == name)
    };
    let levels: Vec<&str> = run
        .results()
        .map(|r| r.name.as_str())
        .filter(|name| name.starts_with(LEVEL_PREFIX))
        .collect();
    for name in ["mem.latency/level/L1", "mem.latency/level/DRAM"] {
        assert!(
            shown(name),
            "{name} has no figure; levels found: {levels:?}"
        );
    }
    let empty: Vec<String> = rows
        .iter()
        .filter(|row| row.measured.is_none() && !row.note.starts_with("reference only"))
        .filter(|row| !row.note.contains(LEVEL_PREFIX) && !row.note.contains(GPU_LEVEL_PREFIX))
        .map(|row| format!("{}: {}", row.operation, row.note))
        .collect();
    assert!(empty.is_empty(), "rows without a figure: {empty:?}");
}

/// `--rt` without `--pin`: the run measures at SCHED_FIFO and ends normally, where the
/// core-to-core check's wait for its peer once spun until RLIMIT_RTTIME killed it (SIGXCPU).
#[test]
#[ignore = "needs root (SCHED_FIFO)"]
fn rt_without_pin_runs_to_the_end() {
    let _alone = machine_alone();
    let dir = tempfile::tempdir().unwrap();
    let output = latlab(dir.path())
        .args([
            "run",
            "--rt",
            "--only",
            "clock.read|thread.core_to_core",
            "--json",
            "-",
        ])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let run = record(&output.stdout);
    assert!(run.settings.realtime, "{:?}", run.notes);
    assert!(run.probes.iter().all(|p| p.status == ProbeStatus::Ok));
}

/// Started on one CPU of several (as `taskset -c 1` starts it), no probe runs anywhere
/// else: the pair probes measure only what that one CPU allows and say so.
#[test]
fn the_affinity_latlab_starts_with_is_respected_by_every_probe() {
    use std::os::unix::process::CommandExt;
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    if online < 2 {
        latlab_test_support::skip!("one CPU: there is nothing to fence off");
    }
    let dir = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("latlab"));
    command
        .current_dir(dir.path())
        .args([
            "run",
            "--only",
            "thread.core_to_core|thread.handoff|proc.pipe",
        ])
        .args(["--samples", "10", "--target-time", "100us", "--json", "-"]);
    // SAFETY: the closure runs in the child between fork and exec and makes one
    // async-signal-safe system call on memory of its own stack.
    unsafe {
        command.pre_exec(|| {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(1, &mut set);
            match libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        })
    };
    let output = command.output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let run = record(&output.stdout);
    use latlab_engine::names::key::{CPU_A, CPU_B, CPUS};
    use latlab_engine::parameters::Value;
    for result in run.results() {
        for key in [CPUS, CPU_A, CPU_B] {
            let used = match result.parameter(key) {
                Some(Value::Integer(cpu)) => vec![*cpu],
                Some(Value::Integers(cpus)) => cpus.clone(),
                Some(other) => panic!("{}: {key} = {other:?}", result.name),
                None => continue,
            };
            assert!(
                used.iter().all(|&cpu| cpu == 1),
                "{}: {key} = {used:?}",
                result.name
            );
        }
    }
    let pairs = run
        .probes
        .iter()
        .find(|p| p.id == "thread.core_to_core")
        .unwrap();
    assert!(
        matches!(&pairs.status, ProbeStatus::Skipped { reason } if reason.contains("one CPU")),
        "{:?}",
        pairs.status
    );
}

/// No thread of latlab's own lives beside a measurement: looked at every millisecond, a real
/// run's process never has a second thread but a probe's own named helper (the peer of the
/// core-to-core pair the stability check and the placement reference measure). While a
/// second thread lives, even asleep, every system call on a descriptor and every switch
/// into the process costs more: the run lock's waiters are answered between units, and the
/// progress line has no thread.
#[test]
fn a_run_keeps_no_thread_of_its_own_beside_its_measurements() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = std::process::Command::new(assert_cmd::cargo::cargo_bin("latlab"))
        .current_dir(dir.path())
        .args([
            "run",
            "--only",
            "syscall.getppid|proc.pipe/pinned/write-read",
        ])
        .args(["--samples", "10", "--quiet", "--out", "out"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = run.id().to_string();
    let tasks = std::path::PathBuf::from(format!("/proc/{pid}/task"));
    // Each thread by its id, with the last name it was seen under: a new thread runs under
    // the process's name for a moment before it names itself.
    let mut threads = std::collections::BTreeMap::new();
    let mut looks = 0;
    while run.try_wait().unwrap().is_none() {
        for task in std::fs::read_dir(&tasks).into_iter().flatten().flatten() {
            let tid = task.file_name().to_string_lossy().into_owned();
            if let Ok(name) = std::fs::read_to_string(task.path().join("comm")) {
                threads.insert(tid, name.trim().to_string());
            }
        }
        looks += 1;
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(run.wait().unwrap().success());
    assert!(looks >= 20, "the run was looked at {looks} times only");
    let beside: Vec<&String> = (threads.iter())
        .filter(|(tid, name)| **tid != pid && !name.starts_with("latlab-core-to"))
        .map(|(_, name)| name)
        .collect();
    assert!(
        threads.contains_key(&pid),
        "the measuring thread was never seen"
    );
    assert_eq!(
        beside,
        Vec::<&String>::new(),
        "threads beside the measuring one"
    );
}
