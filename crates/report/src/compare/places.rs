//! Where a sweep point lies on its machine's own curve: inside a cache level, or at a
//! level's end. A point's name says what it spans (`mem.latency/random/128KiB`), not what it
//! is: 128 KiB of span sits inside one core's L2 and at another's L1 end, where the
//! physical pages a process's ring gets rule the figure and move it between processes (the
//! book's "Comparing runs", "The figures behind the rules"). So the noise a table
//! measured on one machine is not a sweep point's on another ([`crate::stats::NoiseTables`]),
//! and from one run a side a point at a level's end is not judged: its runs cannot show how
//! far the pages move it.
//!
//! The levels are those a plot declares ([`Panel::levels`]) and the run found: each cache
//! level ends where its curve leaves it (`end_span_bytes`, in the bytes a ring spans) and
//! holds its size (`size_estimate_bytes`, the bytes of a ring over every line); the last,
//! main memory, has no end. A point of the plot's lines lies at a level's end where its span
//! ([`Plot::x_parameter`]) is within [`LEVEL_END`] of either, or where it lies past every
//! cache level's end and still below [`CLIMBING`] of memory's figure: the curve climbs
//! there, through a level the run did not find (a last-level cache too short to show a
//! plateau) or towards memory.

use latlab_engine::model::{BenchResult, RunRecord};
use latlab_engine::names::key;
use latlab_engine::parameters::Key;
use latlab_engine::presentation::{Panel, Plot, Presentations, Template};
use std::collections::HashSet;

/// How far from where a level ends (a factor, either way) a point lies at its end: an
/// octave, as wide as the points that moved between unchanged runs around an L1's end.
pub const LEVEL_END: f64 = 2.0;

/// Where the page-group curve leaves a level, in the bytes its ring spans there.
const END_SPAN_BYTES: Key = Key::new("end_span_bytes");

/// Below this share of main memory's figure, a point past every cache level's end is still
/// climbing towards it.
const CLIMBING: f64 = 0.8;

/// The names of the sweep points of `runs` that lie at a cache level's end on their own
/// run's curve, in any of the runs.
pub(super) fn at_level_ends<'r>(
    runs: impl Iterator<Item = &'r RunRecord>,
    declared: &Presentations,
) -> HashSet<String> {
    let panels: Vec<(&Plot, &Panel, Template)> = (declared.plots.iter())
        .flat_map(|plot| plot.panels.iter().map(move |panel| (*plot, panel)))
        .filter_map(|(plot, panel)| Some((plot, panel, panel.levels?)))
        .collect();
    let mut names = HashSet::new();
    for run in runs {
        for &(plot, panel, levels) in &panels {
            let curve = Curve::of(run, levels);
            let points = (run.results())
                .filter(|r| panel.lines.iter().any(|line| line.results.matches(&r.name)))
                .filter(|r| number(r, plot.x_parameter).is_some_and(|span| curve.at_end(span, r)));
            names.extend(points.map(|r| r.name.clone()));
        }
    }
    names
}

/// The levels a run found on one curve.
struct Curve {
    /// Where each cache level ends: the span its curve leaves it at, and the size it holds.
    ends: Vec<f64>,
    /// Main memory's figure: the level with no end.
    memory_ns: Option<f64>,
}

impl Curve {
    /// The levels of `run` that `levels` names.
    fn of(run: &RunRecord, levels: Template) -> Curve {
        let found: Vec<&BenchResult> = run.results().filter(|r| levels.matches(&r.name)).collect();
        let ends = (found.iter())
            .flat_map(|r| {
                [
                    number(r, END_SPAN_BYTES),
                    number(r, key::SIZE_ESTIMATE_BYTES),
                ]
            })
            .flatten()
            .filter(|bytes| *bytes > 0.0)
            .collect();
        let memory_ns = (found.iter())
            .find(|r| number(r, END_SPAN_BYTES).is_none())
            .map(|r| r.summary.median);
        Curve { ends, memory_ns }
    }

    /// Whether `point`, spanning `span` bytes, lies at a level's end: near one, or past every
    /// cache level's end and still climbing towards memory.
    fn at_end(&self, span: f64, point: &BenchResult) -> bool {
        let near = |end: &f64| span >= end / LEVEL_END && span <= end * LEVEL_END;
        let past_caches = self.ends.iter().all(|end| span > *end);
        let climbing =
            (self.memory_ns).is_some_and(|memory| point.summary.median < CLIMBING * memory);
        self.ends.iter().any(near) || (past_caches && climbing)
    }
}

/// Parameter `key` of `result`, where it is a number.
fn number(result: &BenchResult, key: Key) -> Option<f64> {
    result.parameter(key).and_then(|value| value.as_f64())
}
