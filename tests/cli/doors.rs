//! The catalogues of hostile files and hostile paths, run against every reader and every
//! writer of the binary: each reader meets a FIFO, `/dev/zero`, a link, a truncated file,
//! a file of 1 GiB and binary garbage; each writer meets an input under another name, a
//! link swapped in during a race, `/proc/self/…`, `/dev/full` and a directory that is not
//! the user's. A new reader or writer is covered by a line in [`READERS`] or [`WRITERS`].
//! (The numbers inside a file are the report crate's catalogue, `hostile_numbers.rs`; the
//! hostile children are the doors crate's, `child.rs`.)

use crate::{latlab, results_file};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// How a command came to the file it reads.
#[derive(Clone, Copy, PartialEq)]
enum Reached {
    /// The user named it on the command line: a link is followed.
    Named,
    /// The command found it (in a directory named, a baseline): a link is refused.
    Found,
}

/// A command that reads a file: `set_up` puts the file to read (`file`, made by the
/// catalogue) where the command looks, in `dir` holding a good results file `good.json`
/// and a good noise table `table.tsv`, and gives the command's arguments.
struct Reader {
    what: &'static str,
    reached: Reached,
    set_up: fn(dir: &Path, file: &Path) -> Vec<String>,
}

const READERS: &[Reader] = &[
    Reader {
        what: "report FILE",
        reached: Reached::Named,
        set_up: |_, file| args(&["report", &shown(file), "--out", "page.html"]),
    },
    Reader {
        what: "export FILE",
        reached: Reached::Named,
        set_up: |_, file| args(&["export", &shown(file), "--csv", "-"]),
    },
    Reader {
        what: "compare FILE GOOD",
        reached: Reached::Named,
        set_up: |_, file| args(&["compare", &shown(file), "good.json"]),
    },
    Reader {
        what: "compare --noise-table FILE",
        reached: Reached::Named,
        set_up: |_, file| {
            let table = ["--noise-table", &shown(file)];
            args(&[&["compare", "good.json", "good.json"][..], &table].concat())
        },
    },
    Reader {
        what: "compare DIR GOOD, FILE in DIR",
        reached: Reached::Found,
        set_up: |dir, file| {
            place(file, &dir.join("side/run.json"));
            args(&["compare", "side", "good.json"])
        },
    },
    Reader {
        what: "noise DIR, FILE a run of DIR",
        reached: Reached::Found,
        set_up: |dir, file| {
            for k in 2..=5 {
                let run = dir.join(format!("runs/run-{k}/results.json"));
                std::fs::create_dir_all(run.parent().unwrap()).unwrap();
                std::fs::write(&run, started_at(&dir.join("good.json"), k)).unwrap();
            }
            place(file, &dir.join("runs/run-1/results.json"));
            args(&["noise", "runs"])
        },
    },
    Reader {
        what: "fleet DIR, FILE a host's results",
        reached: Reached::Found,
        set_up: |dir, file| {
            place(file, &dir.join("fleet/host/results.json"));
            args(&["fleet", "fleet"])
        },
    },
    Reader {
        what: "history DIR, FILE a run of DIR",
        reached: Reached::Found,
        set_up: |dir, file| {
            place(file, &dir.join("history/host/results.json"));
            args(&["history", "history"])
        },
    },
    Reader {
        what: "run --baseline B, FILE a run of B",
        reached: Reached::Found,
        set_up: |dir, file| {
            place(file, &dir.join("out/baselines/b/run-1.json"));
            synthetic_call_into("out", &["--baseline", "b"])
        },
    },
];

/// A hostile file, made in `dir`: its path, or `None` where the reader is given a path of
/// the system's (`/dev/zero`).
struct HostileFile {
    what: &'static str,
    make: fn(dir: &Path) -> PathBuf,
    /// What a reader that reached it as `Reached` must do: refuse it (in one line, status
    /// 2), or read it.
    read_when: Option<Reached>,
}

const HOSTILE_FILES: &[HostileFile] = &[
    HostileFile {
        what: "a FIFO with no writer",
        make: |dir| {
            let fifo = dir.join("fifo");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            assert!(made.unwrap().success());
            fifo
        },
        read_when: None,
    },
    HostileFile {
        what: "/dev/zero",
        make: |_| PathBuf::from("/dev/zero"),
        read_when: None,
    },
    HostileFile {
        what: "a link to a good file",
        make: |dir| {
            let link = dir.join("link.json");
            std::os::unix::fs::symlink(dir.join("good.json"), &link).unwrap();
            link
        },
        read_when: Some(Reached::Named),
    },
    HostileFile {
        what: "a truncated file",
        make: |dir| {
            let good = std::fs::read(dir.join("good.json")).unwrap();
            let cut = dir.join("cut.json");
            std::fs::write(&cut, &good[..good.len() / 2]).unwrap();
            cut
        },
        read_when: None,
    },
    HostileFile {
        what: "a file of 1 GiB",
        make: |dir| {
            let big = dir.join("big.json");
            let file = std::fs::File::create(&big).unwrap();
            file.set_len((1 << 30) + 1).unwrap();
            big
        },
        read_when: None,
    },
    HostileFile {
        what: "binary garbage",
        make: |dir| {
            let garbage = dir.join("garbage.json");
            let bytes: Vec<u8> = (0u32..4096)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
                .collect();
            std::fs::write(&garbage, bytes).unwrap();
            garbage
        },
        read_when: None,
    },
];

/// Every reader meets every hostile file: it refuses it at once, in one line with status 2
/// and never a panic, or (a link the user named) reads what it leads to.
#[test]
fn every_reader_refuses_every_hostile_file() {
    for reader in READERS {
        for hostile in HOSTILE_FILES {
            let dir = tempfile::tempdir().unwrap();
            results_file(dir.path(), "good.json");
            let file = (hostile.make)(dir.path());
            let file = if reader.what.contains("noise-table") && hostile.what.contains("link") {
                let table = noise_table(dir.path());
                std::fs::remove_file(&file).unwrap();
                std::os::unix::fs::symlink(table, &file).unwrap();
                file
            } else {
                file
            };
            let args = (reader.set_up)(dir.path(), &file);
            let output = within(dir.path(), &args);
            let stderr = String::from_utf8_lossy(&output.stderr);
            let case = format!("{} with {}", reader.what, hostile.what);
            assert!(!stderr.contains("panicked"), "{case}: {stderr}");
            if hostile.read_when == Some(reader.reached) {
                assert_eq!(output.status.code(), Some(0), "{case}: {stderr}");
                continue;
            }
            assert_eq!(output.status.code(), Some(2), "{case}: {stderr}");
            let last = stderr.lines().last().unwrap_or_default();
            assert!(last.starts_with("error: "), "{case}: {stderr}");
        }
    }
}

/// A command that writes a file: `set_up` gives the command's arguments, writing to
/// `out`, in `dir` holding a good results file `good.json`, which the commands that read
/// one read.
struct Writer {
    what: &'static str,
    /// The file it reads, in `dir`, where it reads one.
    input: Option<&'static str>,
    set_up: fn(dir: &Path, out: &Path) -> Vec<String>,
}

const WRITERS: &[Writer] = &[
    Writer {
        what: "run --json OUT",
        input: None,
        set_up: |_, out| {
            args(&[
                "run",
                "--synthetic",
                "--only",
                "cpu.call",
                "--json",
                &shown(out),
            ])
        },
    },
    Writer {
        what: "export --csv OUT",
        input: Some("good.json"),
        set_up: |_, out| args(&["export", "good.json", "--csv", &shown(out)]),
    },
    Writer {
        what: "report --out OUT",
        input: Some("good.json"),
        set_up: |_, out| args(&["report", "good.json", "--out", &shown(out)]),
    },
    Writer {
        what: "compare --json OUT",
        input: Some("good.json"),
        set_up: |_, out| args(&["compare", "good.json", "good.json", "--json", &shown(out)]),
    },
    Writer {
        what: "noise --out OUT",
        input: Some("runs/run-1/results.json"),
        set_up: |dir, out| {
            for k in 1..=5 {
                let run = dir.join(format!("runs/run-{k}/results.json"));
                std::fs::create_dir_all(run.parent().unwrap()).unwrap();
                std::fs::write(&run, started_at(&dir.join("good.json"), k)).unwrap();
            }
            args(&["noise", "runs", "--out", &shown(out)])
        },
    },
    Writer {
        what: "fleet --openmetrics OUT",
        input: Some("fleet/host/results.json"),
        set_up: |dir, out| {
            std::fs::create_dir_all(dir.join("fleet/host")).unwrap();
            std::fs::copy(dir.join("good.json"), dir.join("fleet/host/results.json")).unwrap();
            args(&["fleet", "fleet", "--openmetrics", &shown(out)])
        },
    },
    Writer {
        what: "history --json OUT",
        input: Some("history/host/results.json"),
        set_up: |dir, out| history_writing(dir, "--json", out),
    },
    Writer {
        what: "history --csv OUT",
        input: Some("history/host/results.json"),
        set_up: |dir, out| history_writing(dir, "--csv", out),
    },
    Writer {
        what: "history --markdown OUT",
        input: Some("history/host/results.json"),
        set_up: |dir, out| history_writing(dir, "--markdown", out),
    },
    Writer {
        what: "history --openmetrics OUT",
        input: Some("history/host/results.json"),
        set_up: |dir, out| history_writing(dir, "--openmetrics", out),
    },
    Writer {
        what: "history --html OUT",
        input: Some("history/host/results.json"),
        set_up: |dir, out| history_writing(dir, "--html", out),
    },
    Writer {
        what: "history --json OUT, over a results.json passed over for its summary",
        input: Some("history/host/results.json"),
        set_up: |dir, out| {
            let args = history_writing(dir, "--json", out);
            summary_beside(dir, "history/host");
            args
        },
    },
    Writer {
        what: "fleet --openmetrics OUT, over a results.json passed over for its summary",
        input: Some("fleet/host/results.json"),
        set_up: |dir, out| {
            std::fs::create_dir_all(dir.join("fleet/host")).unwrap();
            std::fs::copy(dir.join("good.json"), dir.join("fleet/host/results.json")).unwrap();
            summary_beside(dir, "fleet/host");
            args(&["fleet", "fleet", "--openmetrics", &shown(out)])
        },
    },
];

/// The summary of `good.json`, written as `summary.json` into `at` (beside the copy of it
/// there): a reader of runs reads the summary and passes over the results file.
fn summary_beside(dir: &Path, at: &str) {
    let summary = format!("{at}/summary.json");
    let _ = std::fs::remove_file(dir.join(&summary));
    crate::latlab(dir)
        .args(["export", "good.json", "--summary", &summary])
        .assert()
        .success();
}

/// `history history FLAG OUT`, with a host's run under `history/` for it to read.
fn history_writing(dir: &Path, flag: &str, out: &Path) -> Vec<String> {
    std::fs::create_dir_all(dir.join("history/host")).unwrap();
    let run = dir.join("history/host/results.json");
    std::fs::copy(dir.join("good.json"), run).unwrap();
    args(&["history", "history", flag, &shown(out)])
}

/// Every writer meets the hostile paths: an input under another name is refused with
/// status 2 and left as it was; `/proc/self/…` is refused; `/dev/full` is a full disk, said.
#[test]
fn every_writer_refuses_every_hostile_path() {
    for writer in WRITERS {
        let dir = tempfile::tempdir().unwrap();
        results_file(dir.path(), "good.json");
        // Its input made, then named otherwise: a hard link, and a link to it.
        let _ = (writer.set_up)(dir.path(), Path::new("unused"));
        let input = dir.path().join(writer.input.unwrap_or("good.json"));
        let before = std::fs::read(&input).unwrap();
        std::fs::hard_link(&input, dir.path().join("hard.json")).unwrap();
        std::os::unix::fs::symlink(&input, dir.path().join("soft.json")).unwrap();
        for (out, says) in [
            ("hard.json", "would replace"),
            ("soft.json", "would replace"),
            ("/proc/self/environ", "under /proc"),
            ("/dev/full", "No space left on device"),
        ] {
            if says.contains("replace") && writer.input.is_none() {
                continue;
            }
            let args = (writer.set_up)(dir.path(), Path::new(out));
            let output = within(dir.path(), &args);
            let stderr = String::from_utf8_lossy(&output.stderr);
            let case = format!("{} to {out}", writer.what);
            assert!(!stderr.contains("panicked"), "{case}: {stderr}");
            assert_ne!(output.status.code(), Some(0), "{case}: {stderr}");
            assert!(stderr.contains(says), "{case}: {stderr}");
            assert_eq!(
                std::fs::read(&input).unwrap(),
                before,
                "{case}: the input was changed"
            );
        }
    }
}

/// A link swapped in during a race: while a run writes its results again and again, a
/// loop renames its results directory away and plants a link of its own (here this
/// user's, which the run follows; another user's is refused, see the root tier) to a
/// directory elsewhere. Nothing of the run's may land in that directory unless through
/// the link, and the directory's files are never deleted.
#[test]
fn a_link_swapped_in_while_a_run_writes_never_redirects_a_file_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::create_dir_all(victim.join("baselines/x")).unwrap();
    std::fs::write(victim.join("baselines/x/run-1.json"), "precious").unwrap();
    std::fs::write(victim.join("keep"), "precious").unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (dir, stop) = (dir.path().to_path_buf(), std::sync::Arc::clone(&stop));
        std::thread::spawn(move || {
            let (race, away) = (dir.join("race"), dir.join("away"));
            let mut swaps = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if std::fs::rename(&race, &away).is_ok() {
                    let _ = std::fs::remove_dir_all(&away);
                    let _ = std::os::unix::fs::symlink(dir.join("victim"), &race);
                    swaps += 1;
                    std::thread::sleep(Duration::from_micros(200));
                    let _ = std::fs::remove_file(&race);
                }
            }
            swaps
        })
    };
    for _ in 0..15 {
        let _ = within(
            dir.path(),
            &synthetic_call_into("race", &["--save-baseline", "x"]),
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(
        std::fs::read_to_string(victim.join("keep")).unwrap(),
        "precious"
    );
    // The victim was reached only through a link of this user's own, never by a rename
    // between a check and a write: its baseline's older run is untouched unless replaced
    // whole, and nothing half-written lies there.
    for entry in std::fs::read_dir(victim.join("baselines/x"))
        .unwrap()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            !name.starts_with(".latlab-"),
            "a temporary file was left: {name}"
        );
    }
}

/// `latlab ARGS` in `dir`, given at most 60 s: a reader that waits on a FIFO or reads a
/// device for ever fails here, not the whole run of tests.
fn within(dir: &Path, args: &[String]) -> Output {
    latlab(dir)
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

/// A quiet synthetic run of `cpu.call` into `out`, then `more`.
fn synthetic_call_into(out: &str, more: &[&str]) -> Vec<String> {
    let words = [
        "run",
        "--synthetic",
        "--only",
        "cpu.call",
        "-q",
        "--out",
        out,
    ];
    args(&[&words[..], more].concat())
}

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// Puts `file` at `at`: moved there, or for a path of the system's (`/dev/zero`) a link to
/// it.
fn place(file: &Path, at: &Path) {
    std::fs::create_dir_all(at.parent().unwrap()).unwrap();
    if file.starts_with("/dev") {
        std::os::unix::fs::symlink(file, at).unwrap();
    } else if std::fs::rename(file, at).is_err() {
        std::fs::copy(file, at).unwrap();
    }
}

/// The results file `good` as if started on day `k`: another run of it.
fn started_at(good: &Path, k: usize) -> Vec<u8> {
    let mut run: serde_json::Value = serde_json::from_slice(&std::fs::read(good).unwrap()).unwrap();
    run["latlab"]["started_at"] = format!("2000-01-0{k}T00:00:00Z").into();
    serde_json::to_vec(&run).unwrap()
}

/// A good noise table of five runs like `good.json`, in `dir`.
fn noise_table(dir: &Path) -> PathBuf {
    for k in 1..=5 {
        let run = dir.join(format!("tableruns/run-{k}/results.json"));
        std::fs::create_dir_all(run.parent().unwrap()).unwrap();
        std::fs::write(&run, started_at(&dir.join("good.json"), k)).unwrap();
    }
    latlab(dir)
        .args(["noise", "tableruns", "--out", "table.tsv"])
        .assert()
        .success();
    dir.join("table.tsv")
}

/// Another user cannot redirect root's files: a loop of `nobody`'s renames a freshly made
/// `nb/w/race` (its parent `nobody`'s), plants `race -> a root-owned directory` or a
/// directory of its own, while root runs `latlab run --out nb/w/race --save-baseline x`
/// fifteen times. Not one file of root's lands in the root-owned directory, and none of its
/// baseline's runs is deleted or replaced. Before: results, summary and page landed there,
/// and the baseline's runs 2 to 5 were deleted.
#[test]
#[ignore = "needs root, to race another user (nobody) against root's runs"]
fn another_user_cannot_redirect_roots_files() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let victim = dir.path().join("victim");
    std::fs::create_dir_all(victim.join("baselines/x")).unwrap();
    for k in 1..=5 {
        std::fs::write(victim.join(format!("baselines/x/run-{k}.json")), "precious").unwrap();
    }
    let before = crate::files_in(&victim);
    let nb = dir.path().join("nb/w");
    std::fs::create_dir_all(&nb).unwrap();
    for owned in [dir.path().join("nb"), nb.clone()] {
        std::os::unix::fs::chown(&owned, Some(65534), Some(65534)).expect("chown needs root");
    }
    let script = format!(
        "cd {nb} || exit 1; while [ ! -e {stop} ]; do mv race gone 2>/dev/null; \
         rm -rf gone 2>/dev/null; ln -s {victim} race 2>/dev/null; sleep 0.001; \
         rm -f race; mkdir race 2>/dev/null; sleep 0.001; rmdir race 2>/dev/null; done",
        nb = nb.display(),
        stop = dir.path().join("stop").display(),
        victim = victim.display(),
    );
    let mut nobody = std::process::Command::new("setpriv")
        .args([
            "--reuid",
            "65534",
            "--regid",
            "65534",
            "--clear-groups",
            "sh",
            "-c",
        ])
        .arg(&script)
        .spawn()
        .expect("setpriv (util-linux)");
    for _ in 0..15 {
        let output = within(
            dir.path(),
            &synthetic_call_into("nb/w/race", &["--save-baseline", "x"]),
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    std::fs::write(dir.path().join("stop"), "").unwrap();
    let _ = nobody.wait();
    assert_eq!(
        crate::files_in(&victim),
        before,
        "root's files landed in the victim"
    );
    for k in 1..=5 {
        let run = std::fs::read_to_string(victim.join(format!("baselines/x/run-{k}.json")));
        assert_eq!(
            run.unwrap(),
            "precious",
            "run-{k}.json was replaced or deleted"
        );
    }
}

/// Another user cannot lead root's reading of runs elsewhere: while root runs `latlab
/// history` over a directory of runs of `nobody`'s fifteen times, a loop of `nobody`'s swaps
/// a host's sub-directory for a link to a root-only directory and back. Root never reads
/// what lies there: every directory below the one named is opened through its parent, no
/// link followed, and a file found is read again the same way. Before: the walk refused a
/// link it met, but read each file by its path afterwards, through a link swapped in
/// meanwhile.
#[test]
#[ignore = "needs root, to race another user (nobody) against root's reading"]
fn another_user_cannot_lead_roots_reading_elsewhere() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let good = results_file(dir.path(), "good.json");
    // Many runs, so that reading them takes long enough for the swap to fall within it.
    let (secret, runs) = (dir.path().join("secret"), dir.path().join("nb/runs"));
    let mut run: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&good).unwrap()).unwrap();
    for k in 1..=300 {
        run["latlab"]["started_at"] = format!("2000-01-01T00:{:02}:{:02}Z", k / 60, k % 60).into();
        run["latlab"]["environment"]["host_name"] = "h1-host".into();
        let mine = runs.join(format!("h1/r{k}/results.json"));
        std::fs::create_dir_all(mine.parent().unwrap()).unwrap();
        std::fs::write(&mine, run.to_string()).unwrap();
        run["latlab"]["environment"]["host_name"] = "secret-host".into();
        let theirs = secret.join(format!("h/r{k}/results.json"));
        std::fs::create_dir_all(theirs.parent().unwrap()).unwrap();
        std::fs::write(&theirs, run.to_string()).unwrap();
    }
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o700)).unwrap();
    let nb = dir.path().join("nb");
    let chown = std::process::Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(&nb)
        .status()
        .expect("chown");
    assert!(chown.success(), "chown needs root");
    let script = format!(
        "cd {runs} || exit 1; while [ ! -e {stop} ]; do mv h1 away 2>/dev/null; \
         ln -s {secret}/h h1 2>/dev/null; sleep 0.01; rm -f h1; mv away h1 2>/dev/null; \
         sleep 0.01; done",
        runs = runs.display(),
        stop = dir.path().join("stop").display(),
        secret = secret.display(),
    );
    let mut nobody = std::process::Command::new("setpriv")
        .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
        .args(["sh", "-c"])
        .arg(&script)
        .spawn()
        .expect("setpriv (util-linux)");
    let mut said = String::new();
    for _ in 0..15 {
        let output = within(dir.path(), &args(&["history", "nb/runs", "--json", "-"]));
        said.push_str(&String::from_utf8_lossy(&output.stdout));
        said.push_str(&String::from_utf8_lossy(&output.stderr));
    }
    std::fs::write(dir.path().join("stop"), "").unwrap();
    let _ = nobody.wait();
    assert!(!said.contains("panicked"), "{said}");
    assert!(
        !said.contains("secret-host"),
        "root read the other user's link: {said}"
    );
}
