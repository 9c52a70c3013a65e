//! Copies of one run (a copy, a hard link) are one run's evidence, not several: `compare`,
//! `fleet` and `history` count them once and say so. Two files are one run where they have
//! one [`RunIdentity`]: the host by its whole name and CPU model, the start, and what the
//! reader keeps of its figures (two runs of a real machine never measure alike).

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::path::Path;

/// What makes two files one run, for every reader of runs alike.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RunIdentity {
    host_name: String,
    cpu_model: String,
    started_at: String,
    /// A hash of the figures the reader keeps (each name with its values, in order): a
    /// copy of the run has the same, and keeping every name of ten thousand runs as a key
    /// would double what a reader holds.
    measured: u64,
}

impl RunIdentity {
    /// The identity of the run of `host_name` on `cpu_model` started at `started_at`, whose
    /// figures are `measured` (each a name and its values).
    pub fn new<'a, N: Hash + 'a, V: IntoIterator<Item = &'a f64>>(
        (host_name, cpu_model): (&str, &str),
        started_at: &str,
        measured: impl IntoIterator<Item = (N, V)>,
    ) -> RunIdentity {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for (name, values) in measured {
            name.hash(&mut hasher);
            for value in values {
                value.to_bits().hash(&mut hasher);
            }
        }
        RunIdentity {
            host_name: host_name.to_string(),
            cpu_model: cpu_model.to_string(),
            started_at: started_at.to_string(),
            measured: hasher.finish(),
        }
    }
}

/// `items` without the copies of a run already seen, and the copies, each in the order
/// given: an item whose `identity` an earlier one had is a copy.
pub fn distinct_runs<T>(
    items: impl IntoIterator<Item = T>,
    identity: impl Fn(&T) -> RunIdentity,
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
        let runs = [("a", 1.0), ("b", 2.0), ("c", 1.0), ("d", 1.0)];
        let identity = |(_, figure): &(&str, f64)| {
            RunIdentity::new(
                ("h", "m"),
                "2026-12-07T00:00:00Z",
                [("r", [*figure].iter())],
            )
        };
        let (kept, copies) = distinct_runs(runs, identity);
        assert_eq!(kept, [("a", 1.0), ("b", 2.0)]);
        assert_eq!(copies, [("c", 1.0), ("d", 1.0)]);
        // The same figures on another host, CPU model or start are another run.
        let elsewhere = RunIdentity::new(
            ("h", "other"),
            "2026-12-07T00:00:00Z",
            [("r", [1.0].iter())],
        );
        assert_ne!(identity(&("a", 1.0)), elsewhere);
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
