//! The page of a paired comparison of two builds (`cargo bench -- --against REV --html
//! FILE`): a line a benchmark as the terminal gives it, sortable, then the benchmarks one
//! side alone has and those not compared.

use crate::markup::{Contents, Section, page, sort_key};
use crate::units::format_ns;
use maud::html;

/// One benchmark compared.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedRow {
    pub name: String,
    /// Each side's median time a call, in nanoseconds.
    pub other_ns: f64,
    pub this_ns: f64,
    /// This build's time over the other's, and its 95% interval.
    pub ratio: f64,
    pub interval: Option<(f64, f64)>,
    /// `slower`, `faster` or `same`.
    pub verdict: String,
    /// The layout floor and the smallest change it would have caught nine times in ten,
    /// as shares.
    pub floor: Option<f64>,
    pub could_hear: Option<f64>,
    pub blocks: usize,
    pub process_pairs: usize,
    pub seconds: f64,
}

/// A paired comparison, as its page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedPage {
    /// The other build, as named: `main (3f2a9c1)`.
    pub other: String,
    pub rows: Vec<PairedRow>,
    pub only_here: Vec<String>,
    pub only_there: Vec<String>,
    /// Benchmarks one side could not serve, and why.
    pub not_compared: Vec<(String, String)>,
}

fn percent(share: f64) -> String {
    format!("{:+.1}%", 100.0 * share)
}

fn plus_minus(share: Option<f64>) -> String {
    share.map_or_else(|| "—".to_string(), |s| format!("±{:.1}%", 100.0 * s))
}

/// The page, self-contained.
pub fn paired_html_page(paired: &PairedPage) -> String {
    let table = html! {
        div.scroll { table.sortable {
            thead { tr {
                th { "benchmark" } th { (paired.other) } th { "this build" } th { "change" }
                th { "95% interval" } th { "verdict" } th { "layout floor" }
                th { "would have caught" } th { "blocks, pairs of processes" } th { "time" }
            } }
            tbody { @for row in &paired.rows {
                tr {
                    td { (row.name) }
                    td data-v=(sort_key(row.other_ns)) { (format_ns(row.other_ns)) }
                    td data-v=(sort_key(row.this_ns)) { (format_ns(row.this_ns)) }
                    td data-v=(sort_key(row.ratio)) { (percent(row.ratio - 1.0)) }
                    td { (row.interval.map_or_else(
                        || "fewer than six blocks".to_string(),
                        |(lo, hi)| format!("{} … {}", percent(lo - 1.0), percent(hi - 1.0)),
                    )) }
                    td { strong { (row.verdict) } }
                    td { (plus_minus(row.floor)) }
                    td { @if row.verdict == "same" { (plus_minus(row.could_hear)) } }
                    td { (row.blocks) ", " (row.process_pairs) }
                    td data-v=(sort_key(row.seconds)) { (format!("{:.1} s", row.seconds)) }
                }
            } }
        } }
    };
    let mut sections = vec![Section::new("compared", "Benchmarks compared", table)];
    let listed = |names: &[String]| html! { ul { @for name in names { li { (name) } } } };
    if !paired.only_here.is_empty() {
        sections.push(Section::new(
            "only-here",
            "Only in this build",
            listed(&paired.only_here),
        ));
    }
    if !paired.only_there.is_empty() {
        let title = format!("Only in {}", paired.other);
        sections.push(Section::new(
            "only-there",
            title,
            listed(&paired.only_there),
        ));
    }
    if !paired.not_compared.is_empty() {
        let body =
            html! { ul { @for (name, why) in &paired.not_compared { li { (name) ": " (why) } } } };
        sections.push(Section::new("not-compared", "Not compared", body));
    }
    let intro = html! {
        p {
            "This build against " (paired.other) ", benchmark by benchmark: blocks of four \
             slices (the other build's, this one's, this one's, the other's) in fresh pairs of \
             processes on one CPU; the change is the median of the blocks' ratios with its \
             distribution-free 95% interval, and a verdict is slower or faster only where the \
             whole interval lies past the layout floor the pairs of processes make."
        }
    };
    page(
        &format!("This build against {}", paired.other),
        intro,
        &sections,
        Contents::Unlisted,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_holds_every_benchmark_its_verdict_and_the_names_of_one_side() {
        let row = PairedRow {
            name: "sort/<1024>".into(),
            other_ns: 1200.0,
            this_ns: 1260.0,
            ratio: 1.05,
            interval: Some((1.04, 1.06)),
            verdict: "slower".into(),
            floor: Some(0.002),
            could_hear: Some(0.006),
            blocks: 48,
            process_pairs: 12,
            seconds: 2.1,
        };
        let html = paired_html_page(&PairedPage {
            other: "main (3f2a9c1)".into(),
            rows: vec![row],
            only_here: vec!["new/bench".into()],
            only_there: vec![],
            not_compared: vec![("threads/2".into(), "a benchmark of several threads".into())],
        });
        assert!(html.contains("sort/&lt;1024&gt;"), "the name is escaped");
        assert!(html.contains("+5.0%") && html.contains("+4.0% … +6.0%"));
        assert!(html.contains("<strong>slower</strong>") && html.contains("±0.2%"));
        assert!(html.contains("Only in this build") && html.contains("new/bench"));
        assert!(!html.contains("Only in main"));
        assert!(html.contains("threads/2: a benchmark of several threads"));
    }
}
