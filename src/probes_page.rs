//! The book's probe page (`docs/src/probes.md`), made from the registry: every probe with
//! its method, how its time becomes figures, its options and its results, then every
//! option with its help. A test fails when the page in the book is not what the registry
//! makes; `LATLAB_WRITE_BOOK=1 cargo test probes_page` rewrites it.

use latlab_probes::options::{OptionSpec, declared};
use latlab_probes::{PROBES, ProbeSpec};

const INTRO: &str = "\
# What it measures

This page is made from the probes' declarations (`PROBES` in `crates/probes/src/lib.rs`):
a test fails when it differs from them. `latlab list` prints the same, with `--json` as an
array, each result name with the regular expression of the names it stands for. A result
name's `{placeholder}` stands for a size, a CPU, a count or a level. `--only`/`--skip` select
probes by id, or results by name.
";

/// The page, as the book keeps it.
pub fn page() -> String {
    let mut page = String::from(INTRO);
    page.push_str("\n| probe | method | timing | options | results |\n|:--|:--|:--|:--|:--|\n");
    for probe in PROBES {
        page.push_str(&probe_row(probe));
    }
    page.push_str("\n## Options\n\nEach option is read by the probes named after it.\n\n");
    for option in declared() {
        page.push_str(&option_entry(option));
    }
    page
}

/// A probe's row of the table.
fn probe_row(probe: &ProbeSpec) -> String {
    let options: Vec<String> = (probe.options().iter())
        .map(|option| format!("`--{}`", option.name))
        .collect();
    let results: Vec<String> = (probe.results.iter())
        .map(|name| format!("`{name}`"))
        .collect();
    format!(
        "| `{}` | {} | {} | {} | {} |\n",
        probe.id,
        cell(probe.method),
        cell(&probe.timing_text()),
        if options.is_empty() { "—".to_string() } else { options.join(", ") },
        results.join(", ")
    )
}

/// An option's entry in the list below the table.
fn option_entry(option: &OptionSpec) -> String {
    let readers: Vec<String> = (PROBES.iter())
        .filter(|probe| probe.options().iter().any(|o| o.name == option.name))
        .map(|probe| format!("`{}`", probe.id))
        .collect();
    let value = option.value_name().map_or(String::new(), |name| format!(" {name}"));
    let default = option.default.map_or(String::new(), |text| format!(" [default: {text}]"));
    format!(
        "- **`--{}{value}`** ({}): {}{default} Read by {}.\n",
        option.name,
        option.heading,
        option.help,
        readers.join(", ")
    )
}

/// `text` fit for a table cell: its pipes escaped.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    /// The book's page is the one the registry makes.
    #[test]
    fn the_books_probes_page_is_made_from_the_registry() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/probes.md");
        let made = super::page();
        if std::env::var_os("LATLAB_WRITE_BOOK").is_some() {
            std::fs::write(&path, &made).unwrap();
        }
        let kept = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            kept == made,
            "{} differs from the probes' declarations: rewrite it with \
             LATLAB_WRITE_BOOK=1 cargo test probes_page",
            path.display()
        );
    }
}
