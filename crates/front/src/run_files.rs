//! The files a run writes (`ResultFiles`), each in its format, and where the run's text goes beside
//! them: the files are rewritten whole after each probe or benchmark set (so that a crash
//! or Ctrl-C loses at most the one under way), standard output, devices and FIFOs take one
//! write at the end, and the text goes to standard output unless a file takes it.

use crate::Unwritten;
use latlab_engine::model::RunRecord;
use latlab_report::{Durability, ExportError, Exporter, OutputTarget, write_output_as};

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
                OutputTarget::Stdout => crate::print_out(&text),
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
