//! The benchmarks a binary registered with `#[bench]`, one entry per function, and the
//! benchmarks they make: one per argument, named `group/function/argument`.

use crate::bencher::Benchmark;
use linkme::distributed_slice;

/// One `#[bench]` function, as the attribute registers it.
#[doc(hidden)]
pub struct Entry {
    pub name: &'static str,
    /// The group given with `group = ".."`; otherwise the module decides.
    pub group: Option<&'static str>,
    pub module: &'static str,
    pub file: &'static str,
    pub line: u32,
    /// Its place among the benchmarks one attribute registers (one per type of
    /// `types = [..]`), to keep them in the order written.
    pub ordinal: usize,
    /// Whether the group's other benchmarks are compared with this one.
    pub baseline: bool,
    /// The thread counts of `threads = [..]`: one benchmark per count, the body run on
    /// that many threads at once; empty without it.
    pub threads: &'static [usize],
    /// The labels of the arguments given with `args = [..]`; empty without arguments.
    pub arg_labels: fn() -> Vec<String>,
    /// Runs the benchmark with the argument at that index.
    pub run: fn(crate::Bencher<'_, '_>, usize),
}

/// Every `#[bench]` function linked into this binary.
#[doc(hidden)]
#[distributed_slice]
pub static BENCHMARKS: [Entry];

impl Entry {
    /// The group: the one given, or the module path without the crate's own name (a
    /// benchmark in the bench target's root has none).
    fn group(&self) -> String {
        match self.group {
            Some(group) => group.to_string(),
            None => self
                .module
                .split_once("::")
                .map(|(_, rest)| rest.replace("::", "/"))
                .unwrap_or_default(),
        }
    }
}

/// Every registered benchmark, in source order (file, then line, then the order of its
/// types), one per argument.
pub(crate) fn all() -> Vec<Benchmark> {
    let mut entries: Vec<&'static Entry> = BENCHMARKS.iter().collect();
    entries.sort_by_key(|e| (e.file, e.line, e.ordinal));
    let mut benchmarks = Vec::new();
    for entry in entries {
        let group = entry.group();
        let stem = if group.is_empty() {
            entry.name.to_string()
        } else {
            format!("{group}/{}", entry.name)
        };
        let labels = (entry.arg_labels)();
        let arguments: Vec<(usize, Option<String>)> = if labels.is_empty() {
            vec![(0, None)]
        } else {
            labels.into_iter().map(Some).enumerate().collect()
        };
        let counts: Vec<Option<usize>> = if entry.threads.is_empty() {
            vec![None]
        } else {
            entry.threads.iter().map(|&n| Some(n)).collect()
        };
        for (arg_index, arg) in arguments {
            for &threads in &counts {
                let mut name = stem.clone();
                if let Some(label) = &arg {
                    name = format!("{name}/{label}");
                }
                if let Some(n) = threads {
                    name = format!("{name}/threads:{n}");
                }
                benchmarks.push(Benchmark {
                    run: entry.run,
                    baseline: entry.baseline,
                    group: group.clone(),
                    name,
                    arg_index,
                    arg: arg.clone(),
                    threads,
                });
            }
        }
    }
    benchmarks
}

/// The benchmarks measured side by side: those of one group with the same argument, the
/// baseline first, when the group has a baseline among the selected ones. Any other
/// benchmark, and any run on several threads, is measured on its own.
pub(crate) fn side_by_side(selected: Vec<Benchmark>) -> Vec<Vec<Benchmark>> {
    let with_baseline: Vec<String> = selected
        .iter()
        .filter(|b| b.baseline)
        .map(|b| b.group.clone())
        .collect();
    let mut sets: Vec<Vec<Benchmark>> = Vec::new();
    for benchmark in selected {
        let joins = |set: &&mut Vec<Benchmark>| {
            benchmark.threads.is_none()
                && set[0].threads.is_none()
                && with_baseline.contains(&benchmark.group)
                && set[0].group == benchmark.group
                && set[0].arg == benchmark.arg
        };
        match sets.iter_mut().find(joins) {
            Some(set) => set.push(benchmark),
            None => sets.push(vec![benchmark]),
        }
    }
    for set in &mut sets {
        set.sort_by_key(|b| !b.baseline);
    }
    sets
}
