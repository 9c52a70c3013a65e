//! Copies of one run (a copy, a hard link) are one run's evidence, not several: `compare`
//! and `fleet` count them once and say so. What makes two runs one is the caller's: its
//! host, its start time and what it measured (two runs of a real machine never measure
//! alike).

use std::collections::HashSet;
use std::hash::Hash;
use std::path::Path;

/// `items` without the copies of a run already seen, and the copies, each in the order
/// given: an item whose `identity` an earlier one had is a copy.
pub fn distinct_runs<T, K: Hash + Eq>(
    items: impl IntoIterator<Item = T>,
    identity: impl Fn(&T) -> K,
) -> (Vec<T>, Vec<T>) {
    let mut seen = HashSet::new();
    items
        .into_iter()
        .partition(|item| seen.insert(identity(item)))
}

/// The note on `copies`: how many files repeat a run already read (the same host, start
/// time and `measured`), counted once, and the first few of them.
pub fn copies_note(copies: &[&Path], measured: &str) -> String {
    format!(
        "{} {} a run already read (the same host, start time and {measured}), counted \
         once: {}",
        copies.len(),
        if copies.len() == 1 {
            "file repeats"
        } else {
            "files repeat"
        },
        first_few(copies)
    )
}

/// The first three of `paths`, and how many more: `a, b, c and 17 more`.
pub fn first_few(paths: &[impl AsRef<Path>]) -> String {
    let shown: Vec<String> = (paths.iter().take(3))
        .map(|p| p.as_ref().display().to_string())
        .collect();
    match paths.len() {
        0..=3 => shown.join(", "),
        n => format!("{} and {} more", shown.join(", "), n - 3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_counted_once_and_named() {
        let runs = [("a", 1), ("b", 2), ("c", 1), ("d", 1)];
        let (kept, copies) = distinct_runs(runs, |(_, run)| *run);
        assert_eq!(kept, [("a", 1), ("b", 2)]);
        assert_eq!(copies, [("c", 1), ("d", 1)]);
        let paths = [Path::new("c.json"), Path::new("d.json")];
        assert_eq!(
            copies_note(&paths, "samples"),
            "2 files repeat a run already read (the same host, start time and samples), \
             counted once: c.json, d.json"
        );
        let many: Vec<String> = (1..=20).map(|i| format!("r{i}.json")).collect();
        assert_eq!(first_few(&many), "r1.json, r2.json, r3.json and 17 more");
    }
}
