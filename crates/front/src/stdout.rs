//! Standard output written without panicking, and told apart from a file that took its
//! place: the text of every command goes through [`print_out`].

use latlab_report::{ExportError, OutputTarget, write_output};

/// Writes `text` to standard output, never panicking as `print!` would: a full pipe is
/// waited for, and a closed one (`| head`) ends the text quietly, as it ends `cat`; any
/// other failure is the error, and so is a standard output that is closed (which the
/// standard library's writes would pass over in silence) or that is no longer the file it
/// was when the run began: the code measured closed or replaced it.
pub fn print_out(text: &str) -> Result<(), ExportError> {
    #[cfg(unix)]
    stdout_as_it_was().map_err(|source| ExportError::Write {
        path: "standard output".into(),
        source,
    })?;
    match write_output(&OutputTarget::Stdout, text) {
        Err(error) if is_broken_pipe(&error) => Ok(()),
        written => written,
    }
}

fn is_broken_pipe(error: &ExportError) -> bool {
    std::error::Error::source(error)
        .and_then(|cause| cause.downcast_ref::<std::io::Error>())
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Standard output's file when the run began, to tell one that the code measured closed
/// or replaced.
#[cfg(unix)]
static STDOUT_AT_START: std::sync::OnceLock<Option<(u64, u64)>> = std::sync::OnceLock::new();

/// The device and inode of the file standard output is, if it is open.
#[cfg(unix)]
fn stdout_identity() -> Option<(u64, u64)> {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let stdout = std::io::stdout();
    let file = std::fs::File::from(stdout.as_fd().try_clone_to_owned().ok()?);
    let metadata = file.metadata().ok()?;
    Some((metadata.dev(), metadata.ino()))
}

/// Notes which file standard output is before anything is measured: a benchmark's body may
/// close descriptor 1, and another file opened later would take its number.
pub(crate) fn remember_stdout() {
    #[cfg(unix)]
    STDOUT_AT_START.get_or_init(stdout_identity);
}

/// Whether standard output is open and, where it was noted, still the file it was.
#[cfg(unix)]
fn stdout_as_it_was() -> std::io::Result<()> {
    let now = stdout_identity();
    match (now, STDOUT_AT_START.get()) {
        (None, _) => Err(std::io::Error::other(
            "it is closed (was it closed by the code measured, or by the shell with >&-?)",
        )),
        (Some(now), Some(Some(then))) if now != *then => Err(std::io::Error::other(
            "it is no longer the file it was when the run began: the code measured closed it \
             and another file took its place",
        )),
        _ => Ok(()),
    }
}
