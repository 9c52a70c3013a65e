//! The documentation's links hold: every relative link of the README, CONTRIBUTING.md,
//! ARCHITECTURE.md and the book's pages (`docs/src`) names a file that exists and, where it
//! names an anchor, a heading of that file (as mdBook and GitHub make anchors); every page of
//! the book is in its table of contents; and the README stays one page.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every Markdown file of the book, below `dir`.
fn book_pages(dir: &Path) -> Vec<PathBuf> {
    let mut pages = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            pages.extend(book_pages(&path));
        } else if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages
}

/// The documents whose links are checked.
fn documents() -> Vec<PathBuf> {
    let mut documents: Vec<PathBuf> = ["README.md", "CONTRIBUTING.md", "ARCHITECTURE.md"]
        .iter()
        .map(|name| root().join(name))
        .collect();
    documents.extend(book_pages(&root().join("docs/src")));
    documents
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push(line);
        }
    }
    lines
}

/// The anchor a heading gets: lowercase letters, digits, `-` and `_` kept, spaces made `-`,
/// the rest dropped.
fn anchor_of(heading: &str) -> String {
    (heading.trim().chars())
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c.to_ascii_lowercase()),
            _ => None,
        })
        .collect()
}

/// The anchors of the headings of the Markdown file at `path`.
fn anchors(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    (prose(&text).into_iter())
        .filter(|line| line.starts_with('#'))
        .map(|line| anchor_of(line.trim_start_matches('#')))
        .collect()
}

/// The targets of the inline links `[text](target)` of `line`, code spans left out.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let outside_code: String = (line.split('`').enumerate())
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, part)| part)
        .collect::<Vec<_>>()
        .join(" ");
    let mut rest = outside_code.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        targets.push(after[..end].to_string());
        rest = &after[end..];
    }
    targets
}

/// What is wrong with the links of the document at `path`, one line each.
fn broken_links(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let shown = path.strip_prefix(root()).unwrap().display().to_string();
    let mut broken = Vec::new();
    for target in prose(&text).into_iter().flat_map(link_targets) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, anchor) = match target.split_once('#') {
            Some((file, anchor)) => (file, Some(anchor)),
            None => (target.as_str(), None),
        };
        let linked = if file.is_empty() {
            path.to_path_buf()
        } else {
            path.parent().unwrap().join(file)
        };
        if !linked.exists() {
            broken.push(format!("{shown}: {target}: no such file"));
        } else if let Some(anchor) = anchor
            && linked.extension().is_some_and(|e| e == "md")
            && !anchors(&linked).contains(anchor)
        {
            broken.push(format!("{shown}: {target}: no such heading"));
        }
    }
    broken
}

#[test]
fn every_link_of_the_documentation_names_a_file_and_heading_that_exist() {
    let broken: Vec<String> = documents().iter().flat_map(|d| broken_links(d)).collect();
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn every_page_of_the_book_is_in_its_contents_and_the_readme_is_one_page() {
    let book = root().join("docs/src");
    let summary = std::fs::read_to_string(book.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = (prose(&summary).into_iter())
        .flat_map(link_targets)
        .map(|target| book.join(target))
        .collect();
    for page in book_pages(&book) {
        if page.file_name().is_some_and(|n| n == "SUMMARY.md") {
            continue;
        }
        assert!(
            listed.contains(&page),
            "{} is not in SUMMARY.md",
            page.display()
        );
    }
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.lines().count() <= 200,
        "the README is more than one page"
    );
    assert!(
        readme.contains("cargo run --release") && readme.contains("cargo test"),
        "the README's first commands"
    );
}

#[test]
fn anchors_are_made_as_the_book_makes_them() {
    assert_eq!(anchor_of(" Into Prometheus"), "into-prometheus");
    assert_eq!(
        anchor_of(" Security: what latlab writes, and where"),
        "security-what-latlab-writes-and-where"
    );
    assert_eq!(
        link_targets("see [a](b.md#c) and `[x](y)` [d](e.md)"),
        ["b.md#c", "e.md"]
    );
}
