//! The command elsewhere than Linux: built for Windows with MinGW and run under Wine, it
//! refuses in one line, and says where to turn (the harness builds and runs there).

use std::path::Path;
use std::process::Command;

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
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        target.join("x86_64-pc-windows-gnu/debug/latlab.exe"),
        dir.path().join("latlab.exe"),
    )
    .unwrap();
    // Debian 12's Wine lacks a DLL Rust's standard library imports: see the source.
    let shim =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/bench/tests/wine/bcryptprimitives.c");
    let compiled = Command::new("x86_64-w64-mingw32-gcc")
        .args(["-shared", "-O2", "-o"])
        .arg(dir.path().join("bcryptprimitives.dll"))
        .arg(shim)
        .status()
        .expect("the MinGW compiler runs");
    assert!(compiled.success());
    // Wine makes its prefix on first use, and says so on standard error: made first.
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wine-prefix");
    let booted = Command::new("wineboot")
        .arg("--init")
        .env("WINEPREFIX", &prefix)
        .env("WINEDEBUG", "-all")
        .output()
        .expect("wineboot runs");
    assert!(booted.status.success());
    let run = Command::new("wine")
        .current_dir(dir.path())
        .env("WINEPREFIX", &prefix)
        .env("WINEDEBUG", "-all")
        .args(["latlab.exe", "run", "--out", "results"])
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
