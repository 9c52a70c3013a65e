//! The files a run writes (`ResultFiles`), each in its format, and where the run's text goes beside
//! them: the files are rewritten whole after each probe or benchmark set (so that a crash
//! or Ctrl-C loses at most the one under way), standard output, devices and FIFOs take one
//! write at the end, and the text goes to standard output unless a file takes it.

use crate::Unwritten;
use latlab_engine::model::RunRecord;
use latlab_report::{
    Durability, ExportError, Exporter, OutputTarget, write_output, write_output_as,
};

/// The results files asked for, each with its format.
#[derive(Default)]
pub struct ResultFiles {
    files: Vec<ResultFile>,
}

struct ResultFile {
    target: OutputTarget,
    exporter: Box<dyn Exporter + Send + Sync>,
    /// Written only at the end, however rewritable (a page with a plot per result).
    at_end: bool,
    /// Written only beside the file added before it, when that one was written: a summary
    /// of the results file must never describe another run than the file beside it.
    beside: bool,
}

impl ResultFiles {
    /// Adds `target`, written by `exporter` after each unit and at the end.
    pub fn add(&mut self, target: OutputTarget, exporter: impl Exporter + Send + Sync + 'static) {
        self.push(target, Box::new(exporter), false, false);
    }

    /// Adds `target`, written by `exporter` whenever the file added just before it is
    /// written, and removed whenever that one could not be (a full disk): a companion such
    /// as the results' summary, which is not a results file of its own.
    pub fn add_beside(
        &mut self,
        target: OutputTarget,
        exporter: impl Exporter + Send + Sync + 'static,
    ) {
        self.push(target, Box::new(exporter), false, true);
    }

    /// Adds `target`, written by `exporter` at the end only: a rendering too costly to
    /// redo after each unit.
    pub fn add_at_end(
        &mut self,
        target: OutputTarget,
        exporter: impl Exporter + Send + Sync + 'static,
    ) {
        self.push(target, Box::new(exporter), true, false);
    }

    fn push(
        &mut self,
        target: OutputTarget,
        exporter: Box<dyn Exporter + Send + Sync>,
        at_end: bool,
        beside: bool,
    ) {
        self.files.push(ResultFile {
            target,
            exporter,
            at_end,
            beside,
        });
    }

    fn targets(&self) -> impl Iterator<Item = &OutputTarget> {
        self.files.iter().map(|file| &file.target)
    }

    /// Whether a file takes standard output (the run's text then goes to standard error).
    pub fn uses_stdout(&self) -> bool {
        self.targets().any(|t| *t == OutputTarget::Stdout)
    }

    /// Rewrites the files that can be rewritten whole (not standard output, a device or a
    /// FIFO; not those written at the end only), synced as `durability` says (a rewrite the
    /// next replaces need not be); one that cannot be written (a full disk) is noted, and
    /// measuring goes on.
    pub fn write_so_far(
        &self,
        record: &RunRecord,
        unwritten: &mut Unwritten,
        durability: Durability,
    ) {
        self.write(
            record,
            |file| file.target.is_rewritable() && !file.at_end,
            unwritten,
            durability,
        );
    }

    /// Writes the outputs [`write_so_far`](ResultFiles::write_so_far) leaves: those that
    /// take a single write (standard output, devices, pipes) and those written at the end.
    pub fn write_at_end(&self, record: &RunRecord, unwritten: &mut Unwritten) {
        self.write(
            record,
            |file| !file.target.is_rewritable() || file.at_end,
            unwritten,
            Durability::Synced,
        );
    }

    fn write(
        &self,
        record: &RunRecord,
        which: impl Fn(&ResultFile) -> bool,
        unwritten: &mut Unwritten,
        durability: Durability,
    ) {
        let mut before_written = false;
        for file in self.files.iter().filter(|file| which(file)) {
            let target = &file.target;
            if file.beside && !before_written {
                // Neither it, nor an older one that would describe another run.
                if let Some(path) = target.path() {
                    let _ = latlab_doors::output::remove_own(path);
                }
                continue;
            }
            let written = file.exporter.render(record).and_then(|text| match target {
                OutputTarget::Stdout => print_out(&text),
                _ => write_output_as(target, &text, durability),
            });
            if !file.beside {
                before_written = written.is_ok();
            }
            unwritten.note(&target.shown(), written);
        }
    }

    /// Whether one of the files asked for was written (or none was asked for).
    pub fn any_kept(&self, unwritten: &Unwritten) -> bool {
        self.files.is_empty()
            || (self.files.iter())
                .any(|file| !file.beside && !unwritten.contains(&file.target.shown()))
    }

    /// Says on standard error where each file written went: `results: PATH`.
    pub fn say_written(&self, unwritten: &Unwritten) {
        let mut before_written = false;
        for file in &self.files {
            let written =
                !unwritten.contains(&file.target.shown()) && (!file.beside || before_written);
            if let Some(path) = file.target.path()
                && written
            {
                crate::say!("results: {}", path.display());
            }
            if !file.beside {
                before_written = written;
            }
        }
    }

    /// Prints the run's text: on standard output, or on standard error when a file takes
    /// standard output.
    pub fn print_beside(&self, text: &str) -> Result<(), ExportError> {
        crate::Stream::beside(self.uses_stdout()).print(text)
    }
}

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
