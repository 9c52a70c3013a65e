//! latlab's exporters: one result model ([`RunRecord`]), many renderings.
//!
//! Each format is one file behind the [`Exporter`] trait. Exporters never measure; they are
//! pure functions of the record, so they are tested on synthetic records and the command
//! line can rewrite every output after each probe (a crash then loses nothing).

// Tests read and write files as they please: the doors are for what latlab itself does.
#![cfg_attr(test, allow(clippy::disallowed_methods))]
#![forbid(unsafe_code)]

pub mod advice;
#[cfg(feature = "files")]
pub mod compare;
pub mod copies;
#[cfg(feature = "files")]
mod csv;
mod first_screen;
#[cfg(feature = "files")]
pub mod fleet;
pub mod formats;
mod group_ratio;
#[cfg(feature = "files")]
pub mod headline;
#[cfg(feature = "files")]
pub mod history;
#[cfg(all(test, feature = "files"))]
mod hostile_numbers;
#[cfg(feature = "html")]
mod html;
#[cfg(feature = "html")]
mod html_benchmarks;
#[cfg(feature = "html")]
mod html_paired;
#[cfg(feature = "files")]
mod json;
#[cfg(feature = "files")]
pub mod load;
mod markdown;
#[cfg(feature = "html")]
mod markup;
#[cfg(feature = "files")]
pub mod openmetrics;
#[cfg(feature = "files")]
mod parallel;
#[cfg(feature = "html")]
mod plots;
mod printable;
mod rows;
#[cfg(feature = "files")]
pub mod runs;
#[cfg(feature = "files")]
pub mod stats;
#[cfg(feature = "files")]
pub mod summary;
mod table;
pub mod terminal;
#[cfg(test)]
mod test_records;
mod text_table;
pub mod units;
#[cfg(feature = "files")]
pub mod validate;
pub mod warning_groups;
mod write;

#[cfg(feature = "files")]
pub use crate::csv::CsvExporter;
pub use formats::{FileFormat, Offered};
pub use group_ratio::group_ratio_sentence;
#[cfg(feature = "files")]
pub use headline::HeadlineExporter;
#[cfg(feature = "html")]
pub use html::{HtmlExporter, benchmarks_html_page, html_page};
#[cfg(feature = "html")]
pub use html_paired::{PairedPage, PairedRow, paired_html_page};
#[cfg(feature = "schema")]
pub use json::json_schema;
#[cfg(feature = "files")]
pub use json::{JSON_SCHEMA_VERSION, JsonExporter};
pub use latlab_doors::{Destination, Durability};
pub use markdown::MarkdownExporter;
#[cfg(feature = "html")]
pub use plots::{Formats, RenderedPlot, render_plots, write_plots};
pub use printable::{one_line, printable};
pub use table::TableExporter;
pub use text_table::{Align, TextTable};
pub use write::{
    OutputTarget, STALLED_PIPE, Stream, is_same_file, write_all_waiting, write_output,
    write_output_as,
};

use latlab_engine::model::RunRecord;

/// A run's results, in the forms both front ends also write them in (`--json FILE`, ...):
/// each format's file declares it, and its line here offers it.
impl Offered for RunRecord {
    fn formats() -> &'static [FileFormat<RunRecord>] {
        &[
            #[cfg(feature = "files")]
            json::FORMAT,
            #[cfg(feature = "files")]
            csv::FORMAT,
            markdown::FORMAT,
            #[cfg(feature = "files")]
            summary::FORMAT,
            #[cfg(feature = "files")]
            openmetrics::FORMAT,
            #[cfg(feature = "files")]
            openmetrics::BACKFILL_FORMAT,
        ]
    }
}

/// Why an output could not be produced.
#[derive(Debug)]
pub enum ExportError {
    Encode {
        format: &'static str,
        detail: String,
    },
    /// The cause is the source, which `{:#}` and error chains print after this.
    Write {
        path: String,
        source: std::io::Error,
    },
}

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExportError::Encode { format, detail } => {
                write!(f, "could not encode the results as {format}: {detail}")
            }
            ExportError::Write { path, .. } => write!(f, "could not write {path}"),
        }
    }
}

impl std::error::Error for ExportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ExportError::Encode { .. } => None,
            ExportError::Write { source, .. } => Some(source),
        }
    }
}

/// Renders a model in one format: a run (the default), a comparison
/// ([`compare::Compared`]) or a fleet ([`fleet::FleetReport`]). A new format is a type that
/// implements it, in a file of its own.
pub trait Exporter<Model: ?Sized = RunRecord> {
    fn render(&self, model: &Model) -> Result<String, ExportError>;
}

/// An exporter chosen as the program runs (a [`FileFormat`]'s) renders as the one it holds.
impl<Model: ?Sized, E: Exporter<Model> + ?Sized> Exporter<Model> for Box<E> {
    fn render(&self, model: &Model) -> Result<String, ExportError> {
        (**self).render(model)
    }
}
