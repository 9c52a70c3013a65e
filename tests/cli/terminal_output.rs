//! What a person at a terminal reads: warnings grouped by probe and kind (every one with
//! `--verbose`), `--quiet`, tables fitted to `COLUMNS`, colour only where asked, and the
//! progress line only on a terminal.

use crate::latlab;

/// The synthetic core-to-core probe: its made-up L2 hit (161 ns) is slower than every
/// made-up pair, so all twelve pairs behaved as siblings, each with the same warning.
fn core_to_core(dir: &std::path::Path, extra: &[&str]) -> (String, String) {
    let output = latlab(dir)
        .args(["run", "--synthetic", "--only", "thread.core_to_core"])
        .args(extra)
        .assert()
        .success();
    let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).unwrap();
    (
        text(&output.get_output().stdout),
        text(&output.get_output().stderr),
    )
}

/// The part of `text` from the line `from` up to (not including) the line `to`.
fn section<'a>(text: &'a str, from: &str, to: &str) -> &'a str {
    let start = text.find(&format!("\n{from}")).expect(from) + 1;
    let end = start + text[start..].find(&format!("\n{to}")).expect(to) + 1;
    &text[start..end]
}

#[test]
fn warnings_are_grouped_by_probe_and_kind_with_the_advice_once() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, _) = core_to_core(dir.path(), &[]);
    assert_eq!(
        section(&stdout, "warnings", "stability check"),
        "\
warnings (12 in 1 line; every one: --verbose, or the JSON, CSV and Markdown files)
  thread.core_to_core: 12 of 12 results behaved as SMT siblings (one way in 0.01–0.58 L2 hits)

what to do
  behaved as SMT siblings: a line passed between the pair in under two L2 hits, which no path between cores allows: the host ran the two vCPUs on one core then; these pairs are left out of the all-pairs summaries

"
    );
}

#[test]
fn verbose_lists_every_warning_then_what_to_do_once() {
    let dir = tempfile::tempdir().unwrap();
    let (stdout, _) = core_to_core(dir.path(), &["--verbose"]);
    let warnings = section(&stdout, "warnings", "stability check");
    assert!(
        warnings.starts_with("warnings (12, every one)\n"),
        "{warnings}"
    );
    for pair in ["cas/0-2", "cas/0-3", "rw/0-2", "rw/1-3"] {
        let line = format!("  thread.core_to_core/one-way/{pair}: ");
        assert!(warnings.contains(&line), "{line} missing from {warnings}");
    }
    let lines = (warnings.lines()).filter(|l| l.starts_with("  thread.core_to_core/"));
    assert_eq!(
        lines.filter(|l| l.contains("SMT siblings")).count(),
        12,
        "{warnings}"
    );
    assert_eq!(stdout.matches("what to do").count(), 1, "{stdout}");
}

#[test]
fn quiet_prints_the_headline_and_the_paths_only() {
    let dir = tempfile::tempdir().unwrap();
    let output = latlab(dir.path())
        .args([
            "--synthetic",
            "--only",
            "cpu|mem.latency",
            "--max-size",
            "64KiB",
            "-q",
        ])
        .assert()
        .success();
    let stdout = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    assert!(
        stdout.starts_with("Latency numbers for this machine\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("benchmark ") && !stdout.contains("warnings"));
    let stderr = String::from_utf8(output.get_output().stderr.clone()).unwrap();
    let kinds: Vec<&str> = stderr
        .lines()
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(kinds, ["results", "results", "report", "plots"], "{stderr}");
}

#[test]
fn tables_and_prose_fit_columns_leaving_out_the_least_useful_columns() {
    let dir = tempfile::tempdir().unwrap();
    let output = latlab(dir.path())
        .env("COLUMNS", "80")
        .args([
            "--synthetic",
            "--only",
            "thread|cpu",
            "--verbose",
            "--json",
            "-",
        ])
        .assert()
        .success();
    let stderr = String::from_utf8(output.get_output().stderr.clone()).unwrap();
    let table: Vec<&str> = stderr
        .lines()
        .take_while(|l| !l.starts_with("results: "))
        .collect();
    for line in &table {
        assert!(line.chars().count() <= 80, "{} > 80: {line}", line.len());
    }
    let header = table.iter().find(|l| l.starts_with("benchmark")).unwrap();
    assert!(
        header.contains("median") && !header.contains("p5 … p95"),
        "{header}"
    );
    assert!(
        stderr.contains("(left out to fit 80 columns: cold, p5 … p95"),
        "{stderr}"
    );
    // The first screen fits too, every line of it.
    let output = latlab(dir.path())
        .env("COLUMNS", "80")
        .args(["--synthetic", "--only", "thread|cpu", "--json", "-"])
        .assert()
        .success();
    let stderr = String::from_utf8(output.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("\nprobe "), "{stderr}");
    for line in stderr.lines() {
        assert!(line.chars().count() <= 80, "{} > 80: {line}", line.len());
    }
    // Without a width, every column is there.
    let (stdout, _) = core_to_core(dir.path(), &[]);
    assert!(stdout.contains("p5 … p95"));
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let escape = "\u{1b}[";
    let (plain, _) = core_to_core(dir.path(), &[]);
    assert!(!plain.contains(escape), "colour on a pipe by default");
    let (never, _) = core_to_core(dir.path(), &["--color", "never"]);
    assert!(!never.contains(escape));
    let (always, _) = core_to_core(dir.path(), &["--color", "always"]);
    assert!(always.contains(&format!("{escape}33mwarnings")), "{always}");
    // Colour changes no word of the text.
    let stripped = always
        .split(escape)
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                part
            } else {
                part.split_once('m').unwrap().1
            }
        })
        .collect::<String>();
    assert_eq!(stripped, plain);
}

/// A new pseudo-terminal: its controlling side, and the path of the terminal side.
fn pseudo_terminal() -> (std::fs::File, std::path::PathBuf) {
    use std::os::fd::FromRawFd;
    // SAFETY: posix_openpt returns a new descriptor or -1; grantpt, unlockpt and ptsname_r
    // act on that descriptor, and ptsname_r writes at most the buffer's length.
    unsafe {
        let fd = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(fd >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        let controller = std::fs::File::from_raw_fd(fd);
        assert_eq!(libc::grantpt(fd), 0);
        assert_eq!(libc::unlockpt(fd), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(fd, name.as_mut_ptr(), name.len()), 0);
        let path = std::ffi::CStr::from_ptr(name.as_ptr()).to_str().unwrap();
        (controller, path.into())
    }
}

/// Runs latlab with its standard streams on a pseudo-terminal, and returns everything the
/// terminal received.
fn on_a_terminal(dir: &std::path::Path, args: &[&str]) -> String {
    use std::io::Read;
    let (mut controller, path) = pseudo_terminal();
    let terminal = || {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap()
    };
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("latlab"))
        .args(args)
        .current_dir(dir)
        .env_remove("COLUMNS")
        .stdin(terminal())
        .stdout(terminal())
        .stderr(terminal())
        .spawn()
        .unwrap();
    // The terminal side is open in the child alone now: once it exits, reading the
    // controlling side ends (with EIO, as Linux reports a hung-up terminal).
    let mut shown = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match controller.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => shown.extend_from_slice(&buffer[..n]),
            Err(e) if e.raw_os_error() == Some(libc::EIO) => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => panic!("reading the terminal: {e}"),
        }
    }
    let status = child.wait().unwrap();
    let shown = String::from_utf8_lossy(&shown).into_owned();
    assert!(status.success(), "{status:?}: {shown}");
    shown
}

#[test]
fn progress_names_the_measurement_under_way_only_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let run = [
        "run",
        "--synthetic",
        "--only",
        "cpu|mem.memcpy",
        "--max-size",
        "256KiB",
    ];
    let shown = on_a_terminal(dir.path(), &run);
    let progress: Vec<&str> = shown
        .split(['\r', '\n'])
        .filter(|l| l.contains(" so far, "))
        .collect();
    // The line is redrawn at most 20 times a second, so which measurements of this quick
    // synthetic run it shows varies; each one it shows is named with its probe's place
    // among the 15 steps (5 probes, each in 3 rounds).
    let names_a_measurement = |l: &&str| {
        ["cpu.", "mem.memcpy/"].iter().any(|probe| {
            l.contains(&format!("/15] {probe}"))
                && l.split_whitespace()
                    .nth(2)
                    .is_some_and(|name| name.contains('/'))
        })
    };
    assert!(progress.iter().any(names_a_measurement), "{progress:?}");
    assert!(
        progress
            .iter()
            .any(|l| l.contains(" s left") || l.contains("finishing")),
        "{progress:?}"
    );
    let quiet = on_a_terminal(dir.path(), &[&run[..], &["-q"]].concat());
    assert!(!quiet.contains(" so far, "), "{quiet}");
    let output = latlab(dir.path())
        .args(["run", "--synthetic", "--only", "cpu.call"])
        .assert()
        .success();
    assert!(!String::from_utf8_lossy(&output.get_output().stderr).contains(" so far, "));
}
