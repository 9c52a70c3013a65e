//! Windows programs under Wine, for the tests that run the harness and the command built
//! for Windows: a directory to run them in, the Wine prefix, and the `wine` command. Used by
//! `crates/bench/tests/windows.rs` and, by path, `tests/cli/windows.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A directory to run Windows programs in, with the `bcryptprimitives.dll` that Debian 12's
/// Wine lacks and Rust's standard library imports (see `bcryptprimitives.c` beside this
/// file), compiled there with MinGW.
pub fn directory() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("bcryptprimitives.c");
    std::fs::write(&source, include_str!("bcryptprimitives.c")).unwrap();
    let compiled = Command::new("x86_64-w64-mingw32-gcc")
        .args(["-shared", "-O2", "-o"])
        .arg(dir.path().join("bcryptprimitives.dll"))
        .arg(&source)
        .output()
        .expect("the MinGW compiler runs");
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    dir
}

/// The Wine prefix the tests run in, kept in the test target directory: made (in seconds)
/// before the first program runs, so that Wine's words on making it stay out of the
/// program's standard error.
fn prefix() -> &'static Path {
    static PREFIX: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    PREFIX.get_or_init(|| {
        let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wine-prefix");
        let booted = Command::new("wineboot")
            .arg("--init")
            .env("WINEPREFIX", &prefix)
            .env("WINEDEBUG", "-all")
            .output()
            .expect("wineboot runs");
        assert!(
            booted.status.success(),
            "{}",
            String::from_utf8_lossy(&booted.stderr)
        );
        prefix
    })
}

/// `wine PROGRAM` in `dir` (made by [`directory`]), with the tests' prefix and Wine's own
/// messages off; the caller adds the program's arguments.
pub fn command(dir: &Path, program: &str) -> Command {
    let mut command = Command::new("wine");
    command
        .current_dir(dir)
        .env("WINEPREFIX", prefix())
        .env("WINEDEBUG", "-all")
        .arg(program);
    command
}
