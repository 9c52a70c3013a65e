//! What a hostile user or a broken environment finds: outputs that are closed or full,
//! inputs that are not regular files, results files with figures no run writes, names with
//! escape sequences, more runs than letters, two outputs on one path. Each test here failed
//! before its fix.

use crate::{files_in, latlab, refused_in, results_file, synthetic_run_of};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A short real run of the file-read probe, for the tests of what file probes leave.
const QUICK_FILE_READ: [&str; 7] = [
    "run",
    "--only",
    "file.read",
    "--samples",
    "5",
    "--target-time",
    "100us",
];

fn binary() -> PathBuf {
    assert_cmd::cargo::cargo_bin("latlab")
}

/// `latlab ARGS` in `dir` under `ulimit LIMIT` (set by the shell, which then becomes latlab).
fn under_ulimit(dir: &Path, limit: &str, args: &str) -> std::process::Output {
    in_shell(
        dir,
        &format!("ulimit {limit} && exec {} {args}", binary().display()),
    )
}

/// `script` run by `sh` in `dir`.
fn in_shell(dir: &Path, script: &str) -> std::process::Output {
    Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .output()
        .unwrap()
}

/// The temporary files a write left under `dir` (`.latlab-PID-SPACE-…`), by their paths in
/// it.
fn temporary_files_in(dir: &Path) -> Vec<String> {
    files_in(dir)
        .into_iter()
        .filter(|n| {
            n.rsplit('/')
                .next()
                .is_some_and(|f| f.starts_with(".latlab-"))
        })
        .collect()
}

/// `latlab ARGS > /dev/full`: one line naming standard output, exit 2, no panic.
fn onto_a_full_disk(dir: &Path, args: &[&str]) {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let output = Command::new(binary())
        .current_dir(dir)
        .args(args)
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    assert_eq!(
        last, "error: could not write standard output: No space left on device (os error 28)",
        "{args:?}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}

/// `latlab ARGS | (closed at once)`: exit 0, nothing on stderr.
pub fn into_a_closed_pipe(dir: &Path, args: &[&str]) {
    let mut child = Command::new(binary())
        .current_dir(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}

#[test]
fn every_subcommand_survives_a_closed_or_full_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = results_file(dir.path(), "a.json");
    let file = file.to_str().unwrap();
    let page = dir.path().join("r.html");
    let page = page.to_str().unwrap();
    let quick_run = [
        "run",
        "--synthetic",
        "--only",
        "cpu.call",
        "--json",
        "run.json",
    ];
    for args in [
        &["list"][..],
        &["env", "--synthetic"],
        &["compare", file, file],
        &["report", file, "--out", page],
        &quick_run,
    ] {
        onto_a_full_disk(dir.path(), args);
        into_a_closed_pipe(dir.path(), args);
    }
}

#[test]
fn inputs_that_are_not_regular_files_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let good = results_file(dir.path(), "good.json");
    let fifo = dir.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    for args in [
        vec!["report".to_string(), "/dev/zero".to_string()],
        vec!["report".to_string(), fifo.display().to_string()],
        vec![
            "compare".to_string(),
            good.display().to_string(),
            fifo.display().to_string(),
        ],
    ] {
        refused_in(dir.path(), &args, "not a regular file");
    }
}

#[test]
fn an_output_fifo_is_checked_without_blocking_and_written_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let mut run = Command::new(binary())
        .current_dir(dir.path())
        .args(["run", "--synthetic", "--only", "cpu.call", "--json"])
        .arg(&fifo)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The reader comes after the checks, or during them: the check opens the FIFO and
    // closes it at once, which a reader there at that moment sees as an empty read. The
    // run waits for a reader only to write, and the JSON arrives whole.
    let json = loop {
        let text = std::fs::read_to_string(&fifo).unwrap();
        if !text.is_empty() {
            break text;
        }
    };
    assert!(run.wait().unwrap().success());
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["latlab"]["complete"], true);
}

/// Sets every sample and summary figure of the first result to `value`.
fn with_first_median(text: &str, value: f64) -> String {
    let mut json: serde_json::Value = serde_json::from_str(text).unwrap();
    let result = &mut json["latlab"]["probes"][0]["results"][0];
    let n = result["samples_ns"].as_array().unwrap().len();
    result["samples_ns"] = serde_json::json!(vec![value; n]);
    for field in ["min", "p5", "median", "p95", "max", "mean"] {
        result["summary"][field] = serde_json::json!(value);
    }
    result["summary"]["median_ci95"] = serde_json::json!([value, value]);
    // serde_json writes 5e-324 and 1e308 as numbers it reads back exactly.
    json.to_string()
}

#[test]
fn a_results_file_with_impossible_figures_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let good = results_file(dir.path(), "good.json");
    let text = std::fs::read_to_string(&good).unwrap();
    for (value, expected) in [(5e-324, "subnormal"), (1e308, "more than a day")] {
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, with_first_median(&text, value)).unwrap();
        let before = files_in(dir.path());
        for args in [
            vec!["report", bad.to_str().unwrap()],
            vec!["compare", good.to_str().unwrap(), bad.to_str().unwrap()],
        ] {
            let stderr = refused_in(dir.path(), &args, expected);
            assert!(stderr.contains("probes[0].results[0]"), "{stderr}");
        }
        assert_eq!(files_in(dir.path()), before, "nothing written");
    }
}

#[test]
fn escape_sequences_in_a_file_do_not_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let good = results_file(dir.path(), "good.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    json["latlab"]["environment"]["host_name"] = "evil\u{1b}]0;owned\u{7}host".into();
    json["latlab"]["probes"][0]["results"][0]["name"] = "cpu.call/\u{1b}[2Jcleared".into();
    let evil = dir.path().join("evil.json");
    std::fs::write(&evil, json.to_string()).unwrap();
    let output = latlab(dir.path())
        .args(["compare", good.to_str().unwrap(), evil.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
        "{stdout:?}"
    );
    assert!(stdout.contains("evil\\u{1b}]0;owned\\u{7}host"), "{stdout}");
}

/// A line break in any field describing the machine (the governor, the microcode, the
/// hypervisor, the clock source …) is shown escaped, never printed as a line of its own:
/// a crafted file cannot forge a line of the comparison. Before: those fields printed raw.
#[test]
fn a_field_of_the_machine_cannot_forge_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = results_file(dir.path(), "good.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    let forged = "x\nB against A: 0 slower, 0 faster, 99 same";
    let environment = &mut json["latlab"]["environment"];
    for field in ["virtualization", "clocksource", "transparent_hugepages"] {
        environment[field] = forged.into();
    }
    environment["cpu"]["governor"] = forged.into();
    environment["cpu"]["microcode"] = forged.into();
    let evil = dir.path().join("evil.json");
    std::fs::write(&evil, json.to_string()).unwrap();
    let output = latlab(dir.path())
        .args(["compare", good.to_str().unwrap(), evil.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{stdout}");
    assert!(
        !stdout
            .lines()
            .any(|l| l.starts_with("B against A: 0 slower, 0 faster, 99")),
        "{stdout}"
    );
    assert!(stdout.contains("x\\nB against A"), "{stdout}");
}

/// A start that is not a time to the second in UTC (empty, "garbage", another offset, a
/// fraction of a second, no such day) is refused naming the field, rather than sorted as
/// text ("" first, "garbage" last, "…00.5Z" before "…00Z").
#[test]
fn a_start_that_is_not_a_time_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    results_file(dir.path(), "good.json");
    for start in [
        "",
        "garbage",
        "2026-12-07T04:30:00-05:00",
        "2026-12-07T04:30:00.5Z",
        "2026-13-45T04:30:00Z",
    ] {
        edited_good(dir.path(), |json| {
            json["latlab"]["started_at"] = start.into()
        });
        let stderr = export_refused(dir.path());
        assert!(stderr.contains("started_at"), "{start}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

/// `good.json` in `dir`, edited, as `edited.json`.
fn edited_good(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let text = std::fs::read_to_string(dir.join("good.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut json);
    std::fs::write(dir.join("edited.json"), json.to_string()).unwrap();
}

/// `latlab export edited.json` in `dir`, refused with status 2: its standard error.
fn export_refused(dir: &Path) -> String {
    let output = latlab(dir)
        .args(["export", "edited.json", "--csv", "-"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    stderr
}

/// A host's name longer than any machine's is refused, not cut: two hosts whose names share
/// their first 256 characters were read as one.
#[test]
fn a_host_name_longer_than_any_machine_has_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    results_file(dir.path(), "good.json");
    let long = format!("{}-one", "h".repeat(300));
    edited_good(dir.path(), |json| {
        json["latlab"]["environment"]["host_name"] = long.into();
    });
    let stderr = export_refused(dir.path());
    assert!(
        stderr.contains("environment.host_name is 304 characters long"),
        "{stderr}"
    );
    assert!(stderr.len() < 400, "{stderr}");
}

/// A result's name past 1024 bytes is refused by its field, and any text of a mebibyte (a
/// suite, a method, a note, a key) before the file is read, by where it starts; neither is
/// quoted or kept: a directory of such files could take a fleet's memory. Before: only
/// names were bounded, and a suite or a method of any length was kept and printed.
#[test]
fn a_long_name_or_text_is_refused_without_being_quoted() {
    let dir = tempfile::tempdir().unwrap();
    results_file(dir.path(), "good.json");
    let text = "is 1048576 bytes long, more than any text latlab writes";
    type Edit = fn(&mut serde_json::Value, serde_json::Value);
    let edits: [(&str, Edit, &str); 5] = [
        (
            "name",
            |json, _| json["latlab"]["probes"][0]["results"][0]["name"] = "n".repeat(4000).into(),
            "probes[0].results[0].name is 4000 bytes long",
        ),
        (
            "suite",
            |json, long| json["latlab"]["settings"]["suite"] = long,
            text,
        ),
        (
            "method",
            |json, long| json["latlab"]["probes"][0]["method"] = long,
            text,
        ),
        (
            "note",
            |json, long| json["latlab"]["notes"] = vec![long].into(),
            text,
        ),
        (
            "key",
            |json, long| {
                let result = &mut json["latlab"]["probes"][0]["results"][0];
                result["parameters"][long.as_str().unwrap()] = 1.into();
            },
            text,
        ),
    ];
    for (what, edit, expected) in edits {
        edited_good(dir.path(), |json| edit(json, "t".repeat(1 << 20).into()));
        let stderr = export_refused(dir.path());
        assert!(stderr.contains(expected), "{what}: {stderr}");
        assert!(stderr.len() < 400, "{what}: {}", stderr.len());
    }
}

/// Under a memory limit too small to read runs in (`ulimit -v` of 20 to 150 MB), a command
/// that reads them refuses in one line with status 2. Before: history aborted ("memory
/// allocation of 7 bytes failed", SIGABRT, 134).
#[test]
fn a_memory_limit_too_small_to_read_in_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = results_file(dir.path(), "good.json");
    std::fs::create_dir_all(dir.path().join("runs/host")).unwrap();
    std::fs::rename(&good, dir.path().join("runs/host/results.json")).unwrap();
    let binary = assert_cmd::cargo::cargo_bin("latlab");
    // From 80 MiB: a test's build (its debug information mapped) cannot even be loaded in
    // 20; the release build refuses there too.
    for kib in [80 << 10, 150 << 10] {
        let output = Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {kib} && exec \"$0\" history runs"))
            .arg(&binary)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{kib} KiB: {stderr}");
        assert!(stderr.contains("(ulimit -v)"), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

#[test]
fn more_runs_than_letters_each_get_their_own_label() {
    let dir = tempfile::tempdir().unwrap();
    let file = results_file(dir.path(), "a.json");
    let file = file.to_str().unwrap();
    let args: Vec<&str> = std::iter::once("compare")
        .chain(std::iter::repeat_n(file, 28))
        .collect();
    let output = latlab(dir.path()).args(&args).output().unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let legend: Vec<&str> = stdout
        .lines()
        .take_while(|l| !l.is_empty())
        .map(|l| l.split(" = ").next().unwrap())
        .collect();
    assert_eq!(legend.len(), 28);
    assert_eq!(&legend[25..], ["Z", "AA", "AB"]);
}

#[test]
fn two_outputs_on_one_path_and_empty_paths_are_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    for (args, expected) in [
        (
            &[
                "run",
                "--synthetic",
                "--json",
                "same.out",
                "--csv",
                "same.out",
            ][..],
            "named by two outputs",
        ),
        (
            &[
                "run",
                "--synthetic",
                "--json",
                "./same.out",
                "--markdown",
                "same.out",
            ],
            "named by two outputs",
        ),
        (
            &["run", "--synthetic", "--json", ""],
            "--json '': an empty path",
        ),
        (
            &["run", "--synthetic", "--json", "a.json", "--csv", ""],
            "--csv '': an empty path",
        ),
        (
            &["run", "--synthetic", "--target-time", "10s"],
            "a sample may last at most 100ms",
        ),
        (
            &[
                "run",
                "--synthetic",
                "--suite",
                "full",
                "--target-time",
                "2s",
            ],
            "a sample may last at most 1s",
        ),
    ] {
        refused_in(dir.path(), args, expected);
    }
}

#[test]
fn ctrl_c_ends_the_wait_for_another_runs_lock() {
    let _alone = crate::machine_alone();
    let dir = tempfile::tempdir().unwrap();
    let mut holder = lock_holder(dir.path());
    let mut waiter = Command::new(binary())
        .current_dir(dir.path())
        .args(["run", "--only", "syscall.getppid", "--json", "waiter.json"])
        .args(["--out", "waiter"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted once it says it is waiting: its first line on standard error.
    let mut stderr = std::io::BufReader::new(waiter.stderr.take().unwrap());
    let mut first_line = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut first_line).unwrap();
    let interrupted_at = std::time::Instant::now();
    latlab_test_support::send(&waiter, libc::SIGINT);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = waiter.wait().unwrap();
    let waited = interrupted_at.elapsed();
    latlab_test_support::send(&holder, libc::SIGKILL);
    let _ = holder.wait();
    let stderr = first_line + &rest;
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("waiting up to 60 s"), "{stderr}");
    // The run waited for is named: its process and user, as the kernel says them.
    let named = format!("another latlab run (pid {} of uid ", holder.id());
    assert!(stderr.contains(&named), "{stderr}");
    assert!(stderr.contains("interrupted while waiting"), "{stderr}");
    assert!(waited < Duration::from_secs(5), "took {waited:?} to stop");
    assert!(!dir.path().join("waiter.json").exists());
}

/// A real run in `dir` that holds the machine's lock for far longer than a test lasts (the
/// full suite's wake-up probe, mostly asleep, takes about 25 s), once it holds it; the test
/// kills it at its end.
fn lock_holder(dir: &Path) -> std::process::Child {
    let holder = Command::new(binary())
        .current_dir(dir)
        .args(["run", "--suite", "full", "--only", "sched.wakeup"])
        .args(["--json", "holder.json", "--out", "holder"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the holder takes the machine's lock", || {
        holds_measurement_lock(holder.id())
    });
    holder
}

/// Whether process `pid` holds latlab's machine-wide measurement lock.
fn holds_measurement_lock(pid: u32) -> bool {
    abstract_names_held_by(pid).contains(&"latlab-measurement-lock".to_string())
}

/// The abstract Unix socket names process `pid` holds: those listed in /proc/net/unix with
/// a leading `@` whose inode is among the process's open descriptors.
fn abstract_names_held_by(pid: u32) -> Vec<String> {
    let table = std::fs::read_to_string("/proc/net/unix").unwrap_or_default();
    let descriptors: Vec<PathBuf> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.flatten()
                .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        })
        .map(Iterator::collect)
        .unwrap_or_default();
    (table.lines())
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let name = fields.get(7)?.strip_prefix('@')?;
            let socket = PathBuf::from(format!("socket:[{}]", fields.get(6)?));
            descriptors.contains(&socket).then(|| name.to_string())
        })
        .collect()
}

/// Polls `ready` until it holds, failing after 60 s with `what`.
fn wait_until(what: &str, ready: impl Fn() -> bool) {
    latlab_test_support::wait_until(what, Duration::from_secs(60), ready);
}

/// A process id that no longer exists: a child reaped at once.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn what_killed_runs_left_is_removed_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    let out = dir.path().join("out");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    // What a SIGKILL leaves: a file probe's workspace and a half-written temporary output,
    // each named with its dead owner's process id and PID space, unlocked, untouched for
    // two minutes. And a file of a live run in another PID namespace, where its process id
    // names no process: it holds its lock.
    let dead = dead_pid();
    let two_minutes_ago = std::time::SystemTime::now() - Duration::from_secs(120);
    let age = |path: &Path| {
        std::fs::File::open(path)
            .unwrap()
            .set_modified(two_minutes_ago)
            .unwrap();
    };
    let stale_workspace = files.join(format!("latlab-files-{dead}-0badf00d-AbCdEf"));
    std::fs::create_dir(&stale_workspace).unwrap();
    std::fs::write(stale_workspace.join("data"), vec![0u8; 4096]).unwrap();
    age(&stale_workspace);
    let stale_temporary = out.join(format!(".latlab-{dead}-0badf00d-XyZ123"));
    std::fs::write(&stale_temporary, "{\"half\": ").unwrap();
    age(&stale_temporary);
    let live = out.join(format!(".latlab-{dead}-0badf00d-InUse1"));
    std::fs::write(&live, "mine").unwrap();
    age(&live);
    let held = std::fs::File::open(&live).unwrap();
    latlab_doors::debris::hold(&held);
    latlab(dir.path())
        .args(QUICK_FILE_READ)
        .arg("--dir")
        .arg(&files)
        .arg("--out")
        .arg(&out)
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    assert!(
        !stale_workspace.exists(),
        "the dead run's workspace is gone"
    );
    assert!(
        !stale_temporary.exists(),
        "the dead run's temporary file is gone"
    );
    assert!(live.exists(), "a live run's file is left alone");
    drop(held);
    assert!(
        std::fs::read_dir(&files).unwrap().next().is_none(),
        "no workspace of its own left"
    );
}

#[test]
fn an_output_that_cannot_be_written_does_not_stop_the_run() {
    let dir = tempfile::tempdir().unwrap();
    // The CSV goes to a full device; the JSON to a file. Both probes are measured, the
    // table printed, the failure named once, and the status is 1.
    let output = synthetic_run_of(dir.path(), "cpu.call|clock.read")
        .args(["--json", "r.json", "--csv", "/dev/full"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr
            .matches("could not write /dev/full: No space left on device")
            .count(),
        1,
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("\ncpu.call ") && stdout.contains("\nclock.read "),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(json["latlab"]["complete"], true);
    assert_eq!(json["latlab"]["probes"].as_array().unwrap().len(), 2);
}

/// A fresh cgroup with its limits written, removed when dropped: v2 where the unified
/// hierarchy has the controller, else v1 (wherever its hierarchy is mounted).
struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    /// `latlab ARGS` in `dir`, started inside the cgroup: the shell joins it, then becomes
    /// latlab.
    fn run(&self, dir: &Path, args: &str) -> std::process::Output {
        let join = format!("echo $$ > {}/cgroup.procs", self.dir.display());
        in_shell(
            dir,
            &format!("{join} && exec {} {args}", binary().display()),
        )
    }

    /// A cgroup of `controller` whose files are set as `v2` says, or as `v1` says where
    /// only the v1 hierarchy has the controller. `Err` says why none can be made here.
    fn make(controller: &str, v2: &[(&str, &str)], v1: &[(&str, &str)]) -> Result<Cgroup, String> {
        // Unique among the tests of this process, which may make groups at once.
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let made = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("latlab-test-{controller}-{}-{made}", std::process::id());
        let unified = Path::new("/sys/fs/cgroup");
        let controllers = std::fs::read_to_string(unified.join("cgroup.controllers"));
        let (dir, files) = if controllers
            .is_ok_and(|c| c.split_whitespace().any(|c| c == controller))
        {
            let _ = std::fs::write(
                unified.join("cgroup.subtree_control"),
                format!("+{controller}"),
            );
            (unified.join(&name), v2)
        } else {
            let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
            let mount = mountinfo
                .lines()
                .find_map(|line| {
                    let (before, after) = line.split_once(" - ")?;
                    let mut later = after.split(' ');
                    let options = later.nth(2)?;
                    let mount_point = before.split(' ').nth(4)?;
                    (after.starts_with("cgroup ") && options.split(',').any(|o| o == controller))
                        .then(|| PathBuf::from(mount_point))
                })
                .ok_or_else(|| format!("no cgroup hierarchy has the {controller} controller"))?;
            (mount.join(&name), v1)
        };
        std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let group = Cgroup { dir };
        for (file, value) in files {
            std::fs::write(group.dir.join(file), value).map_err(|e| format!("{file}: {e}"))?;
        }
        Ok(group)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
#[ignore = "needs root and a cgroup file system with the memory controller"]
fn a_run_in_a_small_memory_cgroup_fits_its_working_sets_to_the_limit() {
    let limit = (200u64 << 20).to_string();
    let group = Cgroup::make(
        "memory",
        &[("memory.max", &limit)],
        &[("memory.limit_in_bytes", &limit)],
    )
    .unwrap_or_else(|why| {
        panic!("no memory cgroup can be made here ({why}): this test needs root and cgroups")
    });
    let _alone = crate::machine_alone();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = group.run(
        dir.path(),
        &format!("run --only mem.memcpy --json {}", json.display()),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "killed or failed: {stderr}");
    assert!(
        stdout.contains("what the memory cgroup still allows"),
        "{stdout}"
    );
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(results["latlab"]["complete"], true);
}

/// A clock probe fits a 64 MB memory cgroup (the stability check's main-memory chase is cut
/// to what the limit leaves, where it used to map twice the last-level cache and be killed
/// by the OOM killer, status 137, no word, an empty --out left); under 20 MB the run is
/// refused before measuring, in one line naming the need and what is available.
#[test]
#[ignore = "needs root and a cgroup file system with the memory controller"]
fn a_clock_probe_fits_a_64_mb_cgroup_and_a_smaller_one_is_refused_in_one_line() {
    let _alone = crate::machine_alone();
    for (megabytes, expected) in [(64u64, 0), (20, 2)] {
        let limit = (megabytes << 20).to_string();
        let group = Cgroup::make(
            "memory",
            &[("memory.max", &limit)],
            &[("memory.limit_in_bytes", &limit)],
        )
        .unwrap_or_else(|why| {
            panic!("no memory cgroup can be made here ({why}): this test needs root and cgroups")
        });
        let dir = tempfile::tempdir().unwrap();
        let output = group.run(dir.path(), "run --only clock.read --out out");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(expected),
            "{megabytes} MB: {stderr}"
        );
        if expected == 0 {
            assert!(dir.path().join("out/results.json").is_file());
        } else {
            assert!(
                stderr.contains("this run needs about 26MiB of memory")
                    && stderr.contains("is available now"),
                "{stderr}"
            );
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(!dir.path().join("out").exists());
        }
    }
}

/// Under a CPU quota of a tenth of a CPU the run records the quota, says it applies, and
/// what to do about unstable samples names the quota instead of other programs.
#[test]
#[ignore = "needs root and a cgroup file system with the cpu controller"]
fn a_run_under_a_cpu_quota_names_the_quota() {
    let group = Cgroup::make(
        "cpu",
        &[("cpu.max", "10000 100000")],
        &[
            ("cpu.cfs_period_us", "100000"),
            ("cpu.cfs_quota_us", "10000"),
        ],
    )
    .unwrap_or_else(|why| {
        panic!("no cpu cgroup can be made here ({why}): this test needs root and cgroups")
    });
    let dir = tempfile::tempdir().unwrap();
    let args = "run --only clock.read --samples 5 --target-time 100us --json r.json";
    let output = group.run(dir.path(), args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("a CPU quota of 0.10 CPUs"),
        "the quota is named among the notes: {stdout}"
    );
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("r.json")).unwrap()).unwrap();
    let quota = results["latlab"]["environment"]["cpu_quota"].as_f64();
    assert_eq!(quota, Some(0.1), "{}", results["latlab"]["environment"]);
}

/// A tmpfs of `size` mounted on `dir`, unmounted when dropped. Needs root.
pub struct SmallDisk(PathBuf);

impl SmallDisk {
    pub fn mount(dir: &Path, size: &str) -> SmallDisk {
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            mounted,
            "mounting a {size} tmpfs on {dir:?} failed: this test needs root"
        );
        SmallDisk(dir.to_path_buf())
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
#[ignore = "needs root to mount a small tmpfs"]
fn a_full_disk_under_out_loses_no_measurement_and_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    // 16 KiB: the table fits on the terminal, the results file does not fit on the disk.
    let _disk = SmallDisk::mount(&out, "16k");
    let output = synthetic_run_of(dir.path(), "cpu.call|clock.read|cpu.branch")
        .args(["--out"])
        .arg(&out)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The only results file could not be written: status 2, as when nothing is written.
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("results.json: No space left on device"),
        "{stderr}"
    );
    assert!(
        stderr.contains("no results file could be written"),
        "{stderr}"
    );
    for probe in ["cpu.call", "clock.read", "cpu.branch"] {
        assert!(
            stdout.lines().any(|l| l.starts_with(&format!("{probe} "))),
            "{probe} missing from the table: {stdout}"
        );
    }
    // Whole files or none: no half-written results.json, no temporary file.
    for name in files_in(&out) {
        assert!(!name.starts_with(".latlab-"), "temporary file left: {name}");
        if name == "results.json" {
            let text = std::fs::read_to_string(out.join(&name)).unwrap();
            assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok());
        }
        // The summary fits where the results do not, but never stands without them.
        assert_ne!(name, "summary.json", "a summary without its results");
    }
    assert!(!stderr.contains("summary.json"), "{stderr}");
}

#[test]
fn two_ctrl_c_in_a_row_stop_at_once_and_the_next_run_clears_what_was_left() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = Command::new(binary())
        .current_dir(dir.path())
        .args(["run", "--synthetic", "--max-size", "256KiB", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Once the first probe is written, two SIGINTs 2 ms apart.
    wait_until("the first probe written", || {
        out.join("results.json").exists()
    });
    for _ in 0..2 {
        latlab_test_support::send(&run, libc::SIGINT);
        std::thread::sleep(Duration::from_millis(2));
    }
    let status = run.wait_with_output().unwrap().status;
    assert_eq!(status.code(), Some(130));
    // Whatever the second signal cut short, a later run in the same directory clears it.
    synthetic_run_of(dir.path(), "cpu.call")
        .args(["--out"])
        .arg(&out)
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let left = temporary_files_in(&out);
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn sigkill_during_the_file_probes_then_a_second_run_leaves_no_workspace() {
    let _alone = crate::machine_alone();
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let mut killed = Command::new(binary())
        .current_dir(dir.path())
        // One round: the probe's workspace lives through it, not removed between rounds
        // before the kill can land.
        .args([
            "run",
            "--only",
            "file.write",
            "--rounds",
            "1",
            "--json",
            "k.json",
            "--dir",
        ])
        .arg(&files)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let has_workspace = |names: &[String]| names.iter().any(|n| n.starts_with("latlab-files-"));
    while !has_workspace(&files_in(&files)) && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    killed.kill().unwrap();
    killed.wait().unwrap();
    let left = files_in(&files);
    assert!(has_workspace(&left), "the killed run's workspace: {left:?}");
    latlab(dir.path())
        .args(QUICK_FILE_READ)
        .args(["--json", "second.json", "--dir"])
        .arg(&files)
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    assert_eq!(files_in(&files), Vec::<String>::new());
}

#[test]
fn an_output_that_names_an_input_is_refused_and_the_input_kept() {
    let dir = tempfile::tempdir().unwrap();
    let a = results_file(dir.path(), "a.json");
    let b = results_file(dir.path(), "b.json");
    std::fs::create_dir(dir.path().join("runs")).unwrap();
    std::os::unix::fs::symlink(&a, dir.path().join("runs/link.json")).unwrap();
    let kept = [std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap()];
    for (args, expected) in [
        (
            &["report", "a.json", "--out", "a.json"][..],
            "the results file being read",
        ),
        (
            &["report", "a.json", "--out", "./a.json"],
            "the results file being read",
        ),
        (
            &["report", "runs/link.json", "--out", "a.json"],
            "the results file being read",
        ),
        (
            &["compare", "a.json", "b.json", "--json", "a.json"],
            "being compared",
        ),
        (
            &["compare", "a.json", "b.json", "--csv", "b.json"],
            "being compared",
        ),
        (
            &[
                "compare",
                "a.json",
                "b.json",
                "--markdown",
                "runs/link.json",
            ],
            "being compared",
        ),
        (
            &["fleet", ".", "--html", "b.json"],
            "results file, which the output would replace",
        ),
    ] {
        refused_in(dir.path(), args, expected);
        assert_eq!(
            [std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap()],
            kept,
            "{args:?} changed an input"
        );
    }
}

/// A link planted where latlab writes its own files (results.json, the page) is replaced,
/// never written through: the file it points to is untouched.
#[test]
fn a_planted_link_in_the_results_directory_is_replaced_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    for name in ["results.json", "report.html"] {
        std::os::unix::fs::symlink(&victim, out.join(name)).unwrap();
    }
    synthetic_run_of(dir.path(), "cpu.call")
        .args(["--out"])
        .arg(&out)
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    for name in ["results.json", "report.html"] {
        assert!(
            std::fs::symlink_metadata(out.join(name)).unwrap().is_file(),
            "{name}"
        );
    }
}

/// A FIFO named as an output that no process reads: the run measures, says why that output
/// was not written, and ends instead of waiting for ever.
#[test]
fn a_fifo_output_with_no_reader_is_reported_not_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let made = Command::new("mkfifo")
        .arg(dir.path().join("ff"))
        .status()
        .unwrap();
    assert!(made.success());
    let output = synthetic_run_of(dir.path(), "cpu.call")
        .args(["--json", "ff"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("ff: a FIFO that no process is reading"),
        "{stderr}"
    );
    assert!(dir.path().join("latlab-results/results.json").is_file());
}

/// A FIFO named as an output whose reader holds it open and never reads: past the pipe's
/// 64 KiB the output takes no bytes, and is abandoned in one line after its patience (10 s),
/// the other outputs written. Before: the command waited for ever.
#[test]
fn a_fifo_output_whose_reader_never_reads_is_abandoned() {
    let dir = tempfile::tempdir().unwrap();
    latlab_test_support::fifo(dir.path(), "ff");
    // The reader: opens the FIFO and sleeps, never reading.
    let mut reader = Command::new("sh")
        .arg("-c")
        .arg("exec sleep 60 < ff")
        .current_dir(dir.path())
        .spawn()
        .unwrap();
    // A results file past the pipe's 64 KiB.
    let good = dir.path().join("good.json");
    synthetic_run_of(dir.path(), "mem.latency")
        .arg("--json")
        .arg(&good)
        .assert()
        .success();
    let started = std::time::Instant::now();
    let output = latlab(dir.path())
        .arg("export")
        .arg(&good)
        .args(["--json", "ff", "--csv", "good.csv"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let _ = reader.kill();
    let _ = reader.wait();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_ne!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("ff: its reader took no bytes for 10 s"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(40), "{stderr}");
    assert!(dir.path().join("good.csv").is_file(), "{stderr}");
}

/// One output that cannot be written does not drop the others: `history --json /dev/full
/// --csv a.csv --markdown a.md` writes both files and its text, and ends with the full
/// disk's error. Before: neither file and no text.
#[test]
fn one_output_that_fails_leaves_the_others_written() {
    let dir = tempfile::tempdir().unwrap();
    let good = results_file(dir.path(), "good.json");
    std::fs::create_dir_all(dir.path().join("runs/host")).unwrap();
    std::fs::rename(&good, dir.path().join("runs/host/results.json")).unwrap();
    let output = latlab(dir.path())
        .args(["history", "runs", "--json", "/dev/full"])
        .args(["--csv", "a.csv", "--markdown", "a.md"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
    for written in ["a.csv", "a.md"] {
        assert!(dir.path().join(written).is_file(), "{written}: {stderr}");
    }
    assert!(!output.stdout.is_empty(), "{stderr}");
}

/// Root (or anyone) running in a results directory that another user owns is refused before
/// measuring: that user could have linked results.json to a device.
#[test]
#[ignore = "needs root, to give a directory to another user"]
fn a_results_directory_of_another_user_is_refused() {
    refused_in_nobodys_directory(
        "latlab-results",
        "results.json",
        &["run", "--synthetic", "--only", "cpu.call"],
    );
}

/// `latlab ARGS` where the directory `sub` belongs to nobody (uid 65534, as an unprivileged
/// user's shared directory would) and holds a link named `planted` to a file of the
/// test's: refused in one line naming the owner, status 2, the file untouched.
fn refused_in_nobodys_directory(sub: &str, planted: &str, args: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let owned = dir.path().join(sub);
    std::fs::create_dir(&owned).unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::os::unix::fs::symlink(&victim, owned.join(planted)).unwrap();
    std::os::unix::fs::chown(&owned, Some(65534), Some(65534))
        .expect("chown needs root: this test needs root");
    let output = latlab(dir.path())
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(stderr.contains("belongs to uid 65534"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}

/// Under a file-size limit (`ulimit -f`) a write that would pass it fails with "File too
/// large" and is reported, as a full disk is: no death by SIGXFSZ, no temporary file left,
/// and no empty results directory.
#[test]
fn a_file_size_limit_fails_the_write_with_a_message_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let results = results_file(dir.path(), "r.json");
    for command in [
        "run --synthetic --only cpu.call --out out".to_string(),
        format!("report {} --out page.html", results.display()),
    ] {
        let output = under_ulimit(dir.path(), "-f 1", &command);
        let stderr = String::from_utf8_lossy(&output.stderr);
        // Nothing could be written: status 2, for a run that measured as for a report.
        assert_eq!(output.status.code(), Some(2), "{command}: {stderr}");
        assert!(stderr.contains("File too large"), "{command}: {stderr}");
        if command.starts_with("run") {
            assert!(
                stderr.contains("no results file could be written"),
                "{stderr}"
            );
            // The results directory the run made is not left behind, empty.
            assert!(!dir.path().join("out").exists(), "{command}: out left");
        }
        let left = temporary_files_in(dir.path());
        assert!(left.is_empty(), "{command}: {left:?}");
    }
}

/// A run in `dir` of `samples` samples of getppid into the results directory `same`, its
/// standard error piped.
fn getppid_run_into_same(dir: &Path, samples: &str) -> Command {
    let mut command = Command::new(binary());
    command
        .current_dir(dir)
        .args(["run", "--only", "syscall.getppid", "--samples", samples])
        .args(["--target-time", "100us", "--out", "same"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// Another user cannot hold a results directory against its owner. `nobody` binds the
/// very lock name root's run held on the directory, and more of its stem, then root's next
/// run into the directory goes ahead. Before, the lock was that one name, which any user
/// could bind first: root's run was refused ("another latlab run is writing its results
/// into this directory", status 2).
#[test]
#[ignore = "needs root, /usr/bin/python3 and setpriv, to squat the lock as another user (nobody)"]
fn another_user_cannot_hold_a_results_directory_against_its_owner() {
    let _alone = crate::machine_alone();
    let dir = tempfile::tempdir().unwrap();
    let run = |samples: &str| getppid_run_into_same(dir.path(), samples);
    let mut first = run("100000").spawn().unwrap();
    let directory_lock = |pid| {
        (abstract_names_held_by(pid).into_iter())
            .find(|name| name.starts_with("latlab-results-directory-"))
    };
    wait_until("root's run to hold the directory's lock", || {
        directory_lock(first.id()).is_some()
    });
    let held = directory_lock(first.id()).unwrap();
    latlab_test_support::send(&first, libc::SIGKILL);
    let _ = first.wait();
    let stem = held.rsplit_once('-').unwrap().0;
    let mut names: Vec<String> = (0..64).map(|k| format!("{stem}-{k:016x}")).collect();
    names.push(held.clone());
    let squat = "import socket, sys, time\n\
                 held = []\n\
                 for name in sys.argv[1:]:\n\
                 \x20   s = socket.socket(socket.AF_UNIX)\n\
                 \x20   s.bind('\\0' + name)\n\
                 \x20   s.listen()\n\
                 \x20   held.append(s)\n\
                 print('held', flush=True)\n\
                 time.sleep(120)\n";
    let mut nobody = Command::new("setpriv")
        .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
        .args(["/usr/bin/python3", "-c", squat])
        .args(&names)
        .stdout(Stdio::piped())
        .spawn()
        .expect("setpriv (util-linux) and python3");
    let mut said = String::new();
    let mut out = std::io::BufReader::new(nobody.stdout.take().unwrap());
    std::io::BufRead::read_line(&mut out, &mut said).unwrap();
    assert_eq!(said.trim(), "held", "nobody could not bind the names");
    assert!(abstract_names_held_by(nobody.id()).contains(&held));
    let second = run("10").output().unwrap();
    latlab_test_support::send(&nobody, libc::SIGKILL);
    let _ = nobody.wait();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(0), "{stderr}");
    assert!(dir.path().join("same/results.json").exists(), "{stderr}");
}

/// A second run into the results directory another run is writing is refused before it
/// measures (status 2, one line), where it used to replace the first run's results; once
/// the first has ended, a run into the directory goes ahead.
#[test]
fn a_second_run_into_a_results_directory_in_use_is_refused() {
    let _alone = crate::machine_alone();
    let dir = tempfile::tempdir().unwrap();
    let run = |samples: &str| getppid_run_into_same(dir.path(), samples);
    let first = run("20000").spawn().unwrap();
    wait_until("the first run to hold the measurement lock", || {
        holds_measurement_lock(first.id())
    });
    let second = run("10").output().unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("another latlab run is writing its results into this directory"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let first = first.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(0), "{stderr}");
    let kept = std::fs::read(dir.path().join("same/results.json")).unwrap();
    assert_eq!(crate::record(&kept).settings.samples, 20000);
    let third = run("10").output().unwrap();
    let stderr = String::from_utf8_lossy(&third.stderr);
    assert_eq!(third.status.code(), Some(0), "{stderr}");
}

/// A result name with a pipe, a line break, HTML, escape and bell bytes and a leading `=`:
/// compare's terminal text shows the bytes escaped, its Markdown keeps one row per result
/// with no markup, its CSV cell is text rather than a formula.
#[test]
fn a_hostile_result_name_is_inert_in_every_compare_output() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = "=HYPERLINK(\"x\")|<img src=x onerror=alert(1)>\n\u{1b}[31m\u{7}";
    for name in ["a.json", "b.json"] {
        let path = results_file(dir.path(), name);
        let mut json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        json["latlab"]["probes"][0]["results"][0]["name"] = hostile.into();
        std::fs::write(&path, json.to_string()).unwrap();
    }
    let output = latlab(dir.path())
        .args([
            "compare",
            "a.json",
            "b.json",
            "--markdown",
            "c.md",
            "--csv",
            "c.csv",
        ])
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!stdout.contains(['\u{1b}', '\u{7}']), "{stdout}");
    let markdown = std::fs::read_to_string(dir.path().join("c.md")).unwrap();
    assert!(!markdown.contains(['\u{1b}', '\u{7}']));
    assert!(!markdown.contains("<img"), "{markdown}");
    let row = markdown
        .lines()
        .find(|l| l.contains("HYPERLINK"))
        .expect("the result's row");
    assert!(row.starts_with("| ") && row.ends_with(" |"), "{row}");
    assert!(row.contains("\\|&lt;img") && row.contains("\\n"), "{row}");
    let csv = std::fs::read_to_string(dir.path().join("c.csv")).unwrap();
    let cell = csv
        .lines()
        .find(|l| l.contains("HYPERLINK"))
        .expect("the result's row");
    assert!(cell.starts_with("\"'=HYPERLINK"), "{cell}");
    assert!(!csv.contains(['\u{1b}', '\u{7}']));
}

/// An address-space limit (`ulimit -v`) counts as memory the run cannot have: a working set
/// past it is refused before measuring, with a size that fits, rather than failing to map
/// part way and losing what was measured.
#[test]
fn an_address_space_limit_is_counted_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let output = under_ulimit(
        dir.path(),
        "-v 2000000",
        "run --only mem.latency --max-size 4GiB",
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("`ulimit -v` still allows"), "{stderr}");
    assert!(stderr.contains("choose at most"), "{stderr}");
    assert!(files_in(dir.path()).is_empty());
}

/// An output directory behind a loop of links is named as such, not as missing; a results
/// file with a byte-order mark reads; one with a key twice is refused naming the key.
#[test]
fn a_link_loop_a_byte_order_mark_and_a_repeated_key_are_said_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("loop-b", dir.path().join("loop-a")).unwrap();
    std::os::unix::fs::symlink("loop-a", dir.path().join("loop-b")).unwrap();
    let output = latlab(dir.path())
        .args(["run", "--synthetic", "--out", "loop-a/results"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("Too many levels of symbolic links"),
        "{stderr}"
    );

    let results = results_file(dir.path(), "r.json");
    let text = std::fs::read(&results).unwrap();
    std::fs::write(&results, [&b"\xEF\xBB\xBF"[..], &text].concat()).unwrap();
    latlab(dir.path())
        .args(["report", "r.json", "--out", "page.html"])
        .assert()
        .success();
    let twice =
        String::from_utf8(text)
            .unwrap()
            .replacen('{', "{\"latlab_schema_version\": 2, ", 1);
    std::fs::write(&results, twice).unwrap();
    let output = latlab(dir.path())
        .args(["report", "r.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("a key appears twice"), "{stderr}");
}

/// A run in another PID namespace (a container, with its own network namespace and its own
/// /dev/shm, so the two runs do not share the measurement lock) writes its file workspace
/// into the same `--dir`,
/// under a process id that names no process here. A run here sweeping that directory for
/// killed runs' debris leaves the live workspace alone, and both runs succeed.
#[test]
#[ignore = "needs root, for unshare --pid --net and ns_last_pid"]
fn a_run_in_another_pid_namespace_keeps_its_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    // The namespace's next process id: one that no process has here.
    let pid_max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let inner_pid = (pid_max - 1000..pid_max - 1)
        .rev()
        .find(|pid| !Path::new(&format!("/proc/{pid}")).exists())
        .unwrap();
    // Trailing commands keep the shell from exec'ing latlab, so latlab is its child. One
    // round, so that one workspace lives through the whole probe (each round makes its own);
    // six times the full suite's samples (about 15 s here), so that it is still measuring
    // when the quick run beside it has swept and finished, however loaded the machine
    // (under CI load the full suite's samples once ended first, and twice them twice ended
    // their probe, removing their own workspace, before the quick run had finished).
    let script = format!(
        "mount -t tmpfs tmpfs /dev/shm && echo {} > /proc/sys/kernel/ns_last_pid && {} run \
         --only file.read --suite full --samples 180 --rounds 1 --json inner.json --dir {}; \
         status=$?; exit $status",
        inner_pid - 1,
        binary().display(),
        files.display()
    );
    let mut inner = Command::new("unshare")
        .args([
            "--pid",
            "--net",
            "--fork",
            "--mount-proc",
            "sh",
            "-c",
            &script,
        ])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare (util-linux)");
    let workspace = its_workspace(&mut inner, &files);
    assert!(
        workspace.starts_with(&format!("latlab-files-{inner_pid}-")),
        "{workspace}: the namespaced run has the id it was given"
    );
    assert!(!Path::new(&format!("/proc/{inner_pid}")).exists());
    latlab(dir.path())
        .args(QUICK_FILE_READ)
        .args(["--json", "outer.json", "--dir"])
        .arg(&files)
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let swept_while_working = inner.try_wait().unwrap().is_none();
    let kept = files.join(&workspace).is_dir();
    let output = inner.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        swept_while_working,
        "the namespaced run ended before the sweep"
    );
    assert!(kept, "its workspace was kept");
    assert!(!stderr.contains("could not"), "{stderr}");
    assert!(files_in(&files).is_empty(), "{:?}", files_in(&files));
}

/// The name of the workspace the run `inner` makes in `files`, once it is there; a panic
/// when the run ends first, or after a minute.
fn its_workspace(inner: &mut std::process::Child, files: &Path) -> String {
    let started = std::time::Instant::now();
    loop {
        if let Some(name) = files_in(files)
            .into_iter()
            .find(|n| n.starts_with("latlab-files-") && !n.contains('/'))
        {
            return name;
        }
        if let Some(status) = inner.try_wait().unwrap() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(inner.stderr.as_mut().unwrap(), &mut stderr).unwrap();
            panic!("the namespaced run ended first ({status}): {stderr}");
        }
        assert!(started.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Under an address-space limit that lets the smaller working sets map but not the largest,
/// the memory sweep fails at the first size it cannot map and keeps every size measured
/// before it. (The synthetic machine reports no memory figure, so the limit is met part-way
/// instead of refused up front, as it is on a real one.)
#[test]
fn a_mapping_refused_part_way_keeps_the_sizes_measured() {
    let dir = tempfile::tempdir().unwrap();
    let output = under_ulimit(
        dir.path(),
        "-v 600000",
        "run --synthetic --only mem.latency --max-size 1GiB --json r.json",
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let run = crate::record(&std::fs::read(dir.path().join("r.json")).unwrap());
    let probe = &run.probes[0];
    match &probe.status {
        latlab_engine::model::ProbeStatus::Failed { reason } => {
            assert!(reason.contains("could not map"), "{reason}");
            assert!(reason.contains("measured before it are kept"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let sizes: Vec<u64> = probe
        .results
        .iter()
        .filter_map(|r| r.parameters.get("working_set_bytes")?.as_u64())
        .collect();
    assert!(sizes.len() >= 10, "{sizes:?}");
    assert!(sizes.iter().any(|&s| s >= 64 << 20), "{sizes:?}");
    assert!(sizes.iter().all(|&s| s < 1 << 30), "{sizes:?}");
}

/// An unprivileged user at the limit on processes and threads (`ulimit -u`; here 1, so no
/// thread or child can start): each probe that needs one fails with a line naming the limit;
/// none panics, none waits for ever for a helper that never started, and the memory sweep
/// keeps the sizes it measured on one thread.
#[test]
#[ignore = "needs root, to run as another user under a process limit"]
fn a_process_limit_fails_the_probes_that_need_threads_and_nothing_hangs() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    // A copy nobody can run, in a directory nobody can write.
    let copy = dir.path().join("latlab");
    std::fs::copy(binary(), &copy).unwrap();
    let stderr_path = dir.path().join("stderr");
    let mut run = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["prlimit", "--nproc=1"])
        .arg(&copy)
        .args(["run", "--only"])
        .arg("mem.bandwidth|thread.pool|proc.spawn|ipc.latency|sched.wakeup")
        .args([
            "--max-size",
            "256KiB",
            "--samples",
            "5",
            "--target-time",
            "100us",
        ])
        .args(["--json", "r.json"])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .expect("setpriv and prlimit (util-linux)");
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(120) {
            run.kill().unwrap();
            run.wait().unwrap();
            panic!("still running after 120 s: a thread waits for one that never started");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stderr = std::fs::read_to_string(&stderr_path).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let run = crate::record(&std::fs::read(dir.path().join("r.json")).unwrap());
    assert_eq!(run.probes.len(), 5);
    for probe in &run.probes {
        let latlab_engine::model::ProbeStatus::Failed { reason } = &probe.status else {
            panic!("{}: {:?}", probe.id, probe.status);
        };
        assert!(
            reason.contains("ulimit -u") || reason.contains("fork: Resource temporarily"),
            "{}: {reason}",
            probe.id
        );
    }
    let bandwidth = run.probes.iter().find(|p| p.id == "mem.bandwidth").unwrap();
    assert!(
        !bandwidth.results.is_empty(),
        "the one-thread sizes are kept"
    );
}

/// A working directory deeper than PATH_MAX (4096 bytes): the results directory and its
/// files are named relative to it, so they are written, where absolute paths would fail
/// ("File name too long") and lose the run.
#[test]
fn a_working_directory_deeper_than_path_max_still_gets_its_results() {
    let dir = tempfile::tempdir().unwrap();
    let level = "d".repeat(100);
    let script = format!(
        "for i in $(seq 1 45); do mkdir {level} && cd -P {level} || exit 9; done; \
         test $(pwd | wc -c) -gt 4096 || exit 8; \
         {} run --synthetic --only cpu.call >/dev/null 2>err; echo status $?; \
         test -s latlab-results/results.json && echo written; cat err",
        binary().display()
    );
    let output = in_shell(dir.path(), &script);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{:?}: {stdout}", output.status);
    assert!(stdout.starts_with("status 0\nwritten\n"), "{stdout}");
}

/// An output path the user names that is a link is written through, never replaced: a link
/// to the file the shell opened for standard output (`/proc/self/fd/1`) gets the JSON, as
/// `--json -` would, and stays a link; `latest.json -> runs/today.json` keeps pointing at
/// the run it names, which gets the output. Each used to be replaced by a regular file.
#[test]
fn an_output_link_is_written_through_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let a = results_file(dir.path(), "a.json");
    let descriptor_link = dir.path().join("o");
    std::os::unix::fs::symlink("/proc/self/fd/1", &descriptor_link).unwrap();
    let shell_file = std::fs::File::create(dir.path().join("f")).unwrap();
    let output = Command::new(binary())
        .current_dir(dir.path())
        .args(["compare", "a.json", "a.json", "--json", "o"])
        .stdout(shell_file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        std::fs::symlink_metadata(&descriptor_link)
            .unwrap()
            .is_symlink()
    );
    let written = std::fs::read_to_string(dir.path().join("f")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&written).expect("the JSON alone");
    assert_eq!(json["baseline"], "A");
    // The comparison's text, which would have shared the file, went to standard error.
    assert!(stderr.contains("B against A"), "{stderr}");

    std::fs::create_dir(dir.path().join("runs")).unwrap();
    std::fs::write(dir.path().join("runs/today.json"), "old").unwrap();
    let latest = dir.path().join("latest.json");
    std::os::unix::fs::symlink("runs/today.json", &latest).unwrap();
    for args in [
        vec!["compare", "a.json", "a.json", "--json", "latest.json"],
        vec!["report", "a.json", "--out", "latest.json"],
        vec![
            "run",
            "--synthetic",
            "--only",
            "cpu.call",
            "--json",
            "latest.json",
        ],
    ] {
        let output = Command::new(binary())
            .current_dir(dir.path())
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(
            std::fs::symlink_metadata(&latest).unwrap().is_symlink(),
            "{args:?} replaced the link"
        );
        let today = std::fs::read_to_string(dir.path().join("runs/today.json")).unwrap();
        assert_ne!(today, "old", "{args:?} did not write through the link");
    }
    assert!(a.is_file());
}

/// `latlab man --dir` into a directory another user owns is refused (that user could have
/// linked a page's name to any file); in the user's own directory, a link planted under a
/// page's name is replaced by the page, and what it pointed to is untouched.
#[test]
fn man_pages_never_follow_a_planted_link() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let man = dir.path().join("man");
    std::fs::create_dir(&man).unwrap();
    std::os::unix::fs::symlink(&victim, man.join("latlab-fleet.1")).unwrap();
    latlab(dir.path())
        .args(["man", "--dir", "man"])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let page = std::fs::symlink_metadata(man.join("latlab-fleet.1")).unwrap();
    assert!(page.is_file(), "the planted link was kept");
    assert!(temporary_files_in(&man).is_empty());
}

#[test]
#[ignore = "needs root, to give a directory to another user"]
fn man_pages_are_not_written_into_another_users_directory() {
    refused_in_nobodys_directory("man", "latlab-fleet.1", &["man", "--dir", "man"]);
}

/// Standard error on a closed pipe (`2>&1 | head -0`) is no reason to panic: each command
/// ends as it would have (a missing file: status 2; a run: status 0, its results written).
#[test]
fn a_closed_standard_error_is_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let a = results_file(dir.path(), "a.json");
    for (args, expected) in [
        (vec!["compare", a.to_str().unwrap(), "missing.json"], 2),
        (
            vec!["run", "--synthetic", "--only", "cpu.call", "--out", "o"],
            0,
        ),
        (
            vec![
                "compare",
                a.to_str().unwrap(),
                a.to_str().unwrap(),
                "--json",
                "-",
            ],
            0,
        ),
    ] {
        let mut child = Command::new(binary())
            .current_dir(dir.path())
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stderr.take());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(expected), "{args:?}");
    }
    assert!(dir.path().join("o/results.json").is_file());
}

/// A line break and a bidirectional override in a result name cannot forge a line of the
/// comparison ("B against A: 0 slower, 0 faster, 99 same"): the name is one line, its
/// controls escaped, on the terminal and in every file written from it.
#[test]
fn a_result_name_cannot_forge_a_line_of_the_comparison() {
    let dir = tempfile::tempdir().unwrap();
    let forged = "B against A: 0 slower, 0 faster, 99 same";
    let path = results_file(dir.path(), "a.json");
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    json["latlab"]["probes"][0]["results"][0]["name"] =
        format!("cpu.call/empty\n{forged}\u{202e}").into();
    std::fs::write(&path, json.to_string()).unwrap();
    let output = latlab(dir.path())
        .args(["compare", "a.json", "a.json", "--markdown", "c.md"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(!stdout.lines().any(|l| l.starts_with(forged)), "{stdout}");
    assert!(stdout.contains("cpu.call/empty\\nB against A"), "{stdout}");
    let markdown = std::fs::read_to_string(dir.path().join("c.md")).unwrap();
    for text in [&stdout[..], &markdown[..]] {
        assert!(!text.contains('\u{202e}'), "{text}");
    }
}

/// `COLUMNS=1` does not make `--help` one word a line (it is wrapped at 60 columns at the
/// least, as the harness's is), and a working directory deleted under latlab is said as
/// such, not as a permission refused.
#[test]
fn a_one_column_terminal_and_a_deleted_working_directory_are_said_plainly() {
    let dir = tempfile::tempdir().unwrap();
    let help = latlab(dir.path())
        .env("COLUMNS", "1")
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    let wide = latlab(dir.path()).arg("--help").output().unwrap();
    let wide_lines = String::from_utf8_lossy(&wide.stdout).lines().count();
    assert!(
        text.lines().count() < 2 * wide_lines,
        "{} lines against {wide_lines}",
        text.lines().count()
    );
    // Wrapped at 60: only a word too long to break (a path) runs past it.
    let over = text.lines().filter(|l| l.chars().count() > 60).count();
    assert!(over <= 3, "{over} lines over 60 columns: {text}");
    assert!(text.lines().any(|l| l.chars().count() > 40), "{text}");

    let gone = dir.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    let script = format!(
        "cd {} && rmdir \"$PWD\" && exec {} run --synthetic --only cpu.call",
        gone.display(),
        binary().display()
    );
    let output = Command::new("sh").args(["-c", &script]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the working directory no longer exists"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// A run in another network namespace (`unshare -n`, as in a container sharing the host's
/// /dev/shm) sees the run that measures on the host, through the lock's file, and waits
/// for it: the socket lock alone is per namespace, and the two used to measure together.
#[test]
#[ignore = "needs root, for unshare -n"]
fn a_run_in_another_network_namespace_waits_for_the_host_run() {
    let _alone = crate::machine_alone();
    let dir = tempfile::tempdir().unwrap();
    let mut holder = lock_holder(dir.path());
    let mut waiter = Command::new("unshare")
        .arg("-n")
        .arg(binary())
        .current_dir(dir.path())
        .args(["run", "--only", "syscall.getppid", "--out", "waiter"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare (util-linux)");
    let mut stderr = std::io::BufReader::new(waiter.stderr.take().unwrap());
    let mut first_line = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut first_line).unwrap();
    let _ = latlab_test_support::interrupt(&mut waiter);
    latlab_test_support::send(&holder, libc::SIGKILL);
    let _ = holder.wait();
    assert!(
        first_line.contains("is measuring on this machine; waiting"),
        "{first_line}"
    );
}

/// A loaded-latency curve whose chase the working-set limit (`--max-size`, or one fitted to
/// `ulimit -v`) keeps within the caches is not sold as main memory: every figure says so,
/// and the headline's loaded row reads none of them. Before: under `ulimit -v 60000` the
/// chase was clipped to 1 MiB, inside L2, and read "Main memory reference under full load
/// 7.17 ns", with 40-49 GB/s peaks, and no warning.
#[test]
fn a_chase_held_within_the_caches_is_not_sold_as_main_memory() {
    let dir = tempfile::tempdir().unwrap();
    let output = synthetic_run_of(dir.path(), "mem.loaded")
        .args(["--max-size", "1MiB"])
        .args(["--json", "r.json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let run = crate::record(&std::fs::read(dir.path().join("r.json")).unwrap());
    let results = &run.probes[0].results;
    assert!(!results.is_empty());
    for result in results {
        let said = result.warnings.iter().any(|w| {
            matches!(w, latlab_engine::Warning::CheckFailed { check, failure }
                if check == "main memory" && failure.contains("lies within the caches"))
        });
        assert!(said, "{}: {:?}", result.name, result.warnings);
    }
    assert!(stdout.contains("its main memory check failed"), "{stdout}");
}
