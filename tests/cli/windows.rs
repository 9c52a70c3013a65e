//! The command elsewhere than Linux: built for Windows with MinGW and run under Wine, it
//! refuses in one line, and says where to turn (the harness builds and runs there).

use std::path::Path;
use std::process::Command;

#[path = "../../crates/bench/tests/wine/mod.rs"]
mod wine;

/// `latlab run` on Windows: status 2, one line on standard error naming the systems it
/// runs on, nothing on standard output, nothing written.
#[test]
#[ignore = "needs Wine, the MinGW cross compiler and the x86_64-pc-windows-gnu target"]
fn the_command_refuses_on_windows_in_one_line() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("windows");
    let built = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("CARGO_TARGET_DIR", &target)
        .args([
            "build",
            "--bin",
            "latlab",
            "--target",
            "x86_64-pc-windows-gnu",
        ])
        .output()
        .expect("cargo runs");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let dir = wine::directory();
    std::fs::copy(
        target.join("x86_64-pc-windows-gnu/debug/latlab.exe"),
        dir.path().join("latlab.exe"),
    )
    .unwrap();
    let run = wine::command(dir.path(), "latlab.exe")
        .args(["run", "--out", "results"])
        .output()
        .expect("wine runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(run.stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("runs on Linux and Android only") && stderr.contains("not on windows"),
        "{stderr}"
    );
    assert!(!dir.path().join("results").exists());
}
