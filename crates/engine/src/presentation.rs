//! What a probe's results feed in the report, declared as data beside the probe.
//!
//! A probe says which figures its results are drawn in (a plot's axes, its lines by result
//! template, their units), which rows of the "latency numbers" table they give (which
//! result, which 2012 reference), which are drawn as a CPU-pair matrix, which as
//! distributions, and which as a grid of conditions by classes. The report renders any
//! declaration and names no probe: adding a probe touches its own file only.
//!
//! Results are found by template ([`crate::result_names`]): `mem.memcpy/{size}` covers every
//! size the probe measured.

use crate::parameters::Key;
use crate::result_names::template_matches;

/// A result-name template, `{placeholder}`s standing for values (a plain name is a template
/// without any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template(pub &'static str);

impl Template {
    /// Whether `name` is one of the names this template covers.
    pub fn matches(self, name: &str) -> bool {
        template_matches(self.0, name)
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

/// Everything one probe's results feed; [`Presentation::NONE`] for a probe shown in its
/// table rows only.
#[derive(Debug, Clone, Copy)]
pub struct Presentation {
    pub plots: &'static [Plot],
    pub headline: &'static [HeadlineRow],
    pub matrices: &'static [PairMatrix],
    /// Results whose every event is a sample worth seeing as a distribution (latency tails).
    pub distributions: &'static [Template],
    pub grids: &'static [Grid],
    /// Which of the run's stability checks speak for which of its results.
    pub checked_by: &'static [CheckedBy],
    /// Curves the first screen tells by their two ends rather than point by point.
    pub curve_ends: &'static [CurveEnds],
    /// Templates of the results whose figure is a count of the core's own cycles: work that
    /// runs within the core and its own caches (a call, a branch, an L1 or L2 hit), whose
    /// time scales with the core clock. A comparison may judge them in cycles where the core
    /// clock moved within its usual noise; every other result (main memory, the caches the
    /// cores share, system calls, IPC, files, the scheduler) is judged in time unless its
    /// own runs show it follows the clock.
    pub on_core_clock: &'static [&'static str],
}

impl Presentation {
    pub const NONE: Presentation = Presentation {
        plots: &[],
        headline: &[],
        matrices: &[],
        distributions: &[],
        grids: &[],
        checked_by: &[],
        curve_ends: &[],
        on_core_clock: &[],
    };
}

/// A curve of latency against load, told on the first screen by its two ends:
/// `read: 147 ns idle → 212 ns at 38 GB/s`, the idle end the point without load, the
/// other the point under the most.
#[derive(Debug, Clone, Copy)]
pub struct CurveEnds {
    /// The curve's name on the line.
    pub label: &'static str,
    pub results: Template,
    /// The parameter each point's load is read from, in bytes per second.
    pub load: Key,
}

/// Results whose figures a stability check speaks for: a move of the check's figures during
/// a run, or a difference between two runs, means the machine under them changed, and
/// `latlab compare` does not compare them across it.
#[derive(Debug, Clone, Copy)]
pub struct CheckedBy {
    pub check: StabilityCheck,
    /// Templates of the results, as the probe lists them.
    pub results: &'static [&'static str],
}

/// The run's stability checks (`latlab_probes::stability`), taken at its start and its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StabilityCheck {
    /// A main-memory chase and a chase within the last cache level: they speak for the
    /// memory hierarchy's figures.
    MemoryChases,
    /// A core-to-core pair: it speaks for figures that cross between CPUs.
    CoreToCore,
}

impl StabilityCheck {
    /// The names of the check's results in a run's `stability` list.
    pub fn names(self) -> &'static [&'static str] {
        use crate::names::result::{
            STABILITY_CACHE_CHASE, STABILITY_CORE_TO_CORE, STABILITY_MEMORY_CHASE,
        };
        match self {
            StabilityCheck::MemoryChases => &[STABILITY_MEMORY_CHASE, STABILITY_CACHE_CHASE],
            StabilityCheck::CoreToCore => &[STABILITY_CORE_TO_CORE],
        }
    }
}

/// A figure of panels stacked under each other, sharing a logarithmic x axis.
#[derive(Debug, Clone, Copy)]
pub struct Plot {
    /// The file name without its extension (`mem-latency`), also the figure's anchor.
    pub stem: &'static str,
    pub title: &'static str,
    /// What the figure shows and how to read it.
    pub caption: &'static str,
    /// The parameter each point's x is read from, in the axis's unit.
    pub x_parameter: Key,
    pub x_label: &'static str,
    pub x_axis: XAxis,
    pub panels: &'static [Panel],
}

/// A plot's x axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    /// Sizes in bytes on a logarithmic axis of powers of two (working sets, copy sizes).
    SizeLog,
    /// A rate in bytes per second on a linear axis from zero (a load's bandwidth).
    RateLinear,
}

/// One plot area of a figure.
#[derive(Debug, Clone, Copy)]
pub struct Panel {
    pub y_label: &'static str,
    pub y_unit: Unit,
    pub y_scale: Scale,
    pub lines: &'static [Line],
    /// Levels found on the lines (cache levels), drawn as bands at their figure over the
    /// points they were derived from, with a mark where each ends
    /// ([`crate::names::key::SIZE_ESTIMATE_BYTES`]).
    pub levels: Option<Template>,
    /// Marks where the kernel says this machine's data caches end, beside the ends the
    /// levels found (a guest's kernel may claim far more than the guest gets).
    pub host_caches: bool,
    /// A result of the run drawn as a dashed horizontal line at its median across the
    /// panel, to read the lines against (the idle main-memory latency under a loaded curve).
    pub reference: Option<ReferenceLine>,
}

/// A horizontal line at a result's median.
#[derive(Debug, Clone, Copy)]
pub struct ReferenceLine {
    pub result: Template,
    /// The legend's text, the figure after it.
    pub label: &'static str,
}

/// The unit of a panel's y axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Nanoseconds,
    /// Bytes per second (decimal units).
    BytesPerSecond,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Log,
    Linear,
}

/// One line: the results a template covers, each a point at its x parameter.
#[derive(Debug, Clone, Copy)]
pub struct Line {
    pub results: Template,
    /// The legend's text; `{key}` stands for the first point's parameter `key`.
    pub label: &'static str,
    pub y: Measure,
    pub stroke: Stroke,
    /// Index into the palette: lines that belong together share it.
    pub color: u8,
}

/// What of a result a line's y is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    Median,
    Minimum,
    /// The median over the point's x (time per byte).
    MedianPerX,
    MinimumPerX,
    /// Bytes per second at the median.
    Rate,
    /// A parameter of the result.
    Parameter(Key),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stroke {
    Line,
    Dashed,
    Dotted,
    Dots,
}

/// A row of the "latency numbers for this machine" table.
#[derive(Debug, Clone, Copy)]
pub struct HeadlineRow {
    /// Where the row goes: rows are shown by this number, the 2012 table's rows that no
    /// probe measures carrying theirs in the bundled table.
    pub order: u16,
    pub operation: &'static str,
    /// The 2012 table's row it stands beside, by id.
    pub reference: Option<&'static str>,
    pub source: Source,
    /// What the figure is, when that needs saying (page cache or device, one CPU).
    pub qualifier: &'static str,
    /// Left out of a run without any result of its probe's family, so that a machine
    /// without a GPU does not show five empty rows.
    pub only_with_family: bool,
}

/// Where a headline row's figure comes from.
#[derive(Debug, Clone, Copy)]
pub enum Source {
    /// A result by name.
    Result(Template),
    /// Of the results a template covers, the one with the largest parameter, its time per
    /// byte ([`crate::model::BenchResult::bytes_per_operation`]) scaled to this many bytes.
    LargestScaled {
        results: Template,
        largest_by: Key,
        bytes: u64,
    },
}

impl Source {
    /// The template the row reads.
    pub fn template(self) -> Template {
        match self {
            Source::Result(template)
            | Source::LargestScaled {
                results: template, ..
            } => template,
        }
    }
}

/// Results of CPU pairs drawn as a matrix, darker for slower.
#[derive(Debug, Clone, Copy)]
pub struct PairMatrix {
    /// The figure's anchor.
    pub id: &'static str,
    pub results: Template,
    /// The parameters naming a cell's row and column: a pair's two CPUs, or the node a
    /// reader runs on and the node its memory is on.
    pub row: Key,
    pub column: Key,
    /// What the rows and columns are, as their tooltips name them (`CPU`, `node`).
    pub axis: &'static str,
    /// The matrix in a word, for the first screen's line of a directed one (`latency`).
    pub label: &'static str,
    /// Whether a cell's figure is its row's to its column's only (a node's CPUs reading
    /// another's memory); otherwise a pair's one figure is drawn both ways round.
    pub directed: bool,
    /// What a cell shows: the median time (darker for slower), or the bytes per second
    /// at the median (darker for fewer).
    pub unit: Unit,
    /// What a cell is; the range of the figures follows.
    pub caption: &'static str,
}

/// Results named `PREFIX/ROW/COLUMN` as a table of rows by columns.
#[derive(Debug, Clone, Copy)]
pub struct Grid {
    /// The section's anchor.
    pub id: &'static str,
    pub title: &'static str,
    pub prefix: &'static str,
    /// The rows' heading.
    pub rows: &'static str,
    /// A parameter shown after the median as a ratio (`2.1×`).
    pub ratio: Option<Key>,
    /// A parameter shown under the median, with its name.
    pub detail: Option<(&'static str, Key)>,
    /// What a cell is.
    pub note: &'static str,
}

/// Every probe's declarations, as the report reads them.
#[derive(Debug, Clone, Default)]
pub struct Presentations {
    pub plots: Vec<&'static Plot>,
    /// In the table's order.
    pub headline: Vec<&'static HeadlineRow>,
    pub matrices: Vec<&'static PairMatrix>,
    pub distributions: Vec<Template>,
    pub grids: Vec<&'static Grid>,
    pub checked_by: Vec<&'static CheckedBy>,
    pub curve_ends: Vec<&'static CurveEnds>,
    /// Templates of the results on the core clock ([`Presentation::on_core_clock`]).
    pub on_core_clock: Vec<&'static str>,
}

impl Presentations {
    /// The declarations of `presentations`, in their order; headline rows by their
    /// [`HeadlineRow::order`].
    pub fn of(presentations: impl IntoIterator<Item = &'static Presentation>) -> Presentations {
        let mut all = Presentations::default();
        for presentation in presentations {
            all.plots.extend(presentation.plots);
            all.headline.extend(presentation.headline);
            all.matrices.extend(presentation.matrices);
            all.distributions.extend(presentation.distributions);
            all.grids.extend(presentation.grids);
            all.checked_by.extend(presentation.checked_by);
            all.curve_ends.extend(presentation.curve_ends);
            all.on_core_clock.extend(presentation.on_core_clock);
        }
        all.headline.sort_by_key(|row| row.order);
        all
    }

    /// Whether `name` is drawn as a distribution.
    pub fn is_distribution(&self, name: &str) -> bool {
        self.distributions.iter().any(|t| t.matches(name))
    }

    /// The names of the stability checks that speak for result `name`, as its probe
    /// declares ([`CheckedBy`]), every check's that does (a figure under load is the memory
    /// path's and the CPUs' placement's); none for a result no check speaks for.
    pub fn checks_for(&self, name: &str) -> Vec<&'static str> {
        (self.checked_by.iter())
            .filter(|c| c.results.iter().any(|t| template_matches(t, name)))
            .flat_map(|c| c.check.names().iter().copied())
            .collect()
    }

    /// Whether result `name`'s probe declares that it runs on the core clock
    /// ([`Presentation::on_core_clock`]).
    pub fn on_core_clock(&self, name: &str) -> bool {
        (self.on_core_clock.iter()).any(|t| template_matches(t, name))
    }

    /// Every template the declarations read, for checking them against the probes'.
    pub fn templates(&self) -> Vec<Template> {
        let lines = (self.plots.iter())
            .flat_map(|plot| plot.panels)
            .flat_map(|panel| panel.lines.iter().map(|l| l.results).chain(panel.levels));
        (lines.chain(self.headline.iter().map(|row| row.source.template())))
            .chain(self.matrices.iter().map(|m| m.results))
            .chain(self.distributions.iter().copied())
            .chain((self.checked_by.iter()).flat_map(|c| c.results.iter().map(|t| Template(t))))
            .chain(self.on_core_clock.iter().map(|t| Template(t)))
            .collect()
    }
}
