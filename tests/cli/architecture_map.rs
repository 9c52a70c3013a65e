//! ARCHITECTURE.md's table of modules names every source file of the binary and the crates,
//! and nothing that is not there: a file added without its line, or a line left behind by a
//! file moved, fails here.
//!
//! The table's rules: a row whose first cell is a crate in bold (`**`crates/front`**`, or
//! `**`src/`**` for the binary) starts that crate's rows. In a row, a name in backticks in the
//! first cell names a file by its path below the crate's `src/`; a directory there (`plans/`)
//! names its `mod.rs`, and every backticked file in that row's other cells is taken below it.

use std::collections::BTreeSet;
use std::path::Path;

/// The repository's root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The `.rs` files below `dir`, as paths relative to `base` with `/` between components.
fn sources(dir: &Path, base: &Path, into: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, base, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(base).unwrap();
            into.insert(relative.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// Every source file of the workspace: `crates/NAME/src/...` and the binary's `src/...`.
fn every_source_file() -> BTreeSet<String> {
    let mut files = BTreeSet::new();
    sources(&root().join("src"), root(), &mut files);
    for entry in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        let src = entry.path().join("src");
        if src.is_dir() {
            sources(&src, root(), &mut files);
        }
    }
    files
}

/// The backticked words of `cell`.
fn backticked(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// The files the Modules table of `text` names, as paths from the repository's root.
fn named_files(text: &str) -> BTreeSet<String> {
    let section = text
        .split("\n## Modules\n")
        .nth(1)
        .expect("ARCHITECTURE.md has a section \"Modules\"");
    let section = section.split("\n## ").next().unwrap();
    let mut named = BTreeSet::new();
    let mut crate_src: Option<String> = None;
    for row in section.lines().filter(|line| line.starts_with('|')) {
        let cells: Vec<&str> = row.trim_matches('|').split('|').collect();
        let first = cells[0].trim();
        let crate_name = (first.strip_prefix("**`")).and_then(|n| n.split_once("`**"));
        if let Some((name, _)) = crate_name {
            crate_src = match name.trim_end_matches('/') {
                "src" => Some("src/".to_string()),
                krate if krate.starts_with("crates/") => Some(format!("{krate}/src/")),
                _ => None,
            };
        }
        let Some(src) = &crate_src else { continue };
        let heading = first.starts_with("**");
        let (dirs, files): (Vec<&str>, Vec<&str>) = if heading {
            (Vec::new(), backticked(cells.get(1).copied().unwrap_or("")))
        } else {
            backticked(first)
                .into_iter()
                .partition(|w| w.ends_with('/'))
        };
        for file in files.iter().filter(|w| w.ends_with(".rs")) {
            named.insert(format!("{src}{file}"));
        }
        for dir in &dirs {
            named.insert(format!("{src}{dir}mod.rs"));
            let rest = cells[1..].join("|");
            for file in backticked(&rest).iter().filter(|w| w.ends_with(".rs")) {
                named.insert(format!("{src}{dir}{file}"));
            }
        }
    }
    named
}

#[test]
fn the_architecture_names_every_source_file_and_only_those() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let named = named_files(&text);
    let present = every_source_file();
    let unnamed: Vec<&String> = present.difference(&named).collect();
    let gone: Vec<&String> = named.difference(&present).collect();
    assert!(
        unnamed.is_empty() && gone.is_empty(),
        "ARCHITECTURE.md's table of modules does not name {unnamed:#?}, and names files that \
         are not there: {gone:#?}"
    );
}

/// The reader of the table: a directory's files are read below it, a crate's heading names
/// its `lib.rs`, and a row of another crate does not name this one's files.
#[test]
fn the_tables_reader_reads_directories_and_crates() {
    let text = "intro\n\n## Modules\n\n| module | job |\n|:--|:--|\n\
                | **`src/`** (the binary) | `main.rs` |\n\
                | `plans/` | a plan each: `run.rs`, `sub/x.rs` |\n\
                | `a.rs`, `b.rs` | two |\n\
                | **`crates/x`** | `lib.rs` |\n\
                | `a.rs` | x's |\n\
                | **`tests/cli/`** | `t.rs` |\n\
                | `u.rs` | not a source file |\n\n## Next\n| `z.rs` | not read |\n";
    let named: Vec<String> = named_files(text).into_iter().collect();
    assert_eq!(
        named,
        [
            "crates/x/src/a.rs",
            "crates/x/src/lib.rs",
            "src/a.rs",
            "src/b.rs",
            "src/main.rs",
            "src/plans/mod.rs",
            "src/plans/run.rs",
            "src/plans/sub/x.rs",
        ]
    );
}
