//! The file formats the front ends offer, each as an option `--NAME FILE`: its name, its
//! help and the exporter that writes it. The output options of `latlab run`, `cargo bench`
//! and `latlab compare` (both parsers, their help and their checks) are made from these
//! lists, and what each option names is written through its exporter. A new format is its
//! exporter's file, which declares its [`FileFormat`], and a line in the list of what it
//! writes, beside the file's `mod` line: [`Offered::formats`] of `RunRecord` in `lib.rs`
//! for a run's results, of [`crate::compare::Compared`] in `compare/mod.rs` for a
//! comparison. No front end changes.

use crate::Exporter;
use latlab_engine::presentation::Presentations;

/// A format offered as `--NAME FILE` for writing an `M` (a run, a comparison).
pub struct FileFormat<M: ?Sized + 'static> {
    /// The option's long name, without its dashes.
    pub name: &'static str,
    /// The option's help, as the help screens list it.
    pub help: &'static str,
    /// Makes the exporter, given the figures the front end's probes declare (which a page
    /// draws; the other formats ignore them).
    pub exporter: fn(&Presentations) -> Box<dyn Exporter<M> + Send + Sync>,
}

/// A format is shown by its option's name.
impl<M: ?Sized> std::fmt::Debug for FileFormat<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "--{}", self.name)
    }
}

impl<M: ?Sized> FileFormat<M> {
    /// `--NAME`, as messages name the option.
    pub fn flag(&self) -> String {
        format!("--{}", self.name)
    }
}

/// What formats are offered for: each model that options write files of.
pub trait Offered: 'static {
    /// The formats it can be written in, in the order the help lists them.
    fn formats() -> &'static [FileFormat<Self>];

    /// The options as a message lists them: `--json, --csv and --markdown`.
    fn flags_listed() -> String {
        let flags: Vec<String> = Self::formats().iter().map(FileFormat::flag).collect();
        listed(&flags)
    }
}

/// Items as a sentence lists them: `a`, `a and b`, `a, b and c`.
pub fn listed(items: &[impl AsRef<str>]) -> String {
    let items: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    match items.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Whether every format's option has a name of its own.
#[cfg(test)]
pub(crate) fn names_are_distinct<M: ?Sized>(formats: &[FileFormat<M>]) -> bool {
    let mut names: Vec<&str> = formats.iter().map(|f| f.name).collect();
    names.sort_unstable();
    names.dedup();
    names.len() == formats.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_engine::model::RunRecord;

    /// Every format's option is its own, and every one renders a run.
    #[test]
    fn the_formats_of_a_run_have_distinct_names_and_render() {
        let formats = RunRecord::formats();
        assert!(names_are_distinct(formats));
        let run = crate::test_records::record(vec![crate::test_records::probe(
            "cpu.call",
            vec![crate::test_records::result("cpu.call/empty", 1.5, &[])],
        )]);
        for format in formats {
            let text = (format.exporter)(&Presentations::default()).render(&run);
            assert!(!text.unwrap().is_empty(), "{}", format.name);
        }
        assert_eq!(
            listed(&["--json", "--csv", "--markdown"]),
            "--json, --csv and --markdown"
        );
        assert_eq!(listed(&["a"]), "a");
        assert_eq!(listed(&[] as &[&str]), "");
    }
}
