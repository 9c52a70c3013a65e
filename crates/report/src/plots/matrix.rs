//! A declared matrix ([`latlab_engine::presentation::PairMatrix`]) drawn as plain SVG: one
//! cell per pair (a pair of CPUs both ways round; a node's CPUs and a node's memory one way),
//! darker for slower, each cell's figure in its tooltip. A pair that behaved as one core's
//! SMT siblings is drawn grey, named so, and left out of the shading: it is not a figure
//! between two cores.

use super::svg::{Svg, px};
use crate::units::{figure_in, format_in, format_ns_axis, format_rate_axis};
use latlab_engine::Warning;
use latlab_engine::model::{BenchResult, RunRecord};
use latlab_engine::presentation::{PairMatrix, Unit};

/// One pair's cell.
struct Cell {
    row: usize,
    column: usize,
    /// The figure shown: nanoseconds, or gigabytes per second.
    figure: f64,
    siblings: bool,
}

/// A matrix drawn.
pub struct DrawnMatrix {
    pub id: &'static str,
    pub svg: String,
    /// The declared caption with the range of the figures.
    pub caption: String,
}

/// Side of a cell and the margin for the CPU numbers, in pixels.
const CELL: f64 = 44.0;
const MARGIN: f64 = 40.0;
/// Room on the right for the colour bar and its two figures.
const COLOUR_BAR: f64 = 90.0;

/// A cell's fill at `shade` (0 the fastest pair, 1 the slowest), and whether text on it
/// should be light.
fn fill(shade: f64) -> (String, bool) {
    let lightness = 92.0 - 55.0 * shade;
    (format!("hsl(210, 60%, {lightness:.0}%)"), lightness < 60.0)
}

/// What a matrix's cells show, in its unit.
#[derive(Clone, Copy)]
struct Figures(Unit);

impl Figures {
    fn of(self, result: &BenchResult) -> Option<f64> {
        figure_in(self.0, result)
    }

    /// Where `figure` lies from the fastest (0) to the slowest (1) of `(low, high)`.
    fn shade(self, figure: f64, (low, high): (f64, f64)) -> f64 {
        if high <= low {
            return 0.5;
        }
        let share = (figure - low) / (high - low);
        match self.0 {
            Unit::Nanoseconds => share,
            Unit::BytesPerSecond => 1.0 - share,
        }
    }

    fn format(self, figure: f64) -> String {
        format_in(self.0, figure)
    }

    fn format_axis(self, figure: f64) -> String {
        match self.0 {
            Unit::Nanoseconds => format_ns_axis(figure),
            Unit::BytesPerSecond => format_rate_axis(figure),
        }
    }

    /// The figures at the light end and the dark end of the shading.
    fn light_to_dark(self, (low, high): (f64, f64)) -> (f64, f64) {
        match self.0 {
            Unit::Nanoseconds => (low, high),
            Unit::BytesPerSecond => (high, low),
        }
    }
}

/// `matrix` drawn from `run`'s pairs, `None` when the run has none.
pub fn pair_matrix(run: &RunRecord, matrix: &PairMatrix) -> Option<DrawnMatrix> {
    let figures = Figures(matrix.unit);
    let cells: Vec<Cell> = (run.results())
        .filter(|r| matrix.results.matches(&r.name))
        .filter_map(|r| {
            Some(Cell {
                row: r.parameter(matrix.row)?.as_u64()? as usize,
                column: r.parameter(matrix.column)?.as_u64()? as usize,
                figure: figures.of(r)?,
                siblings: (r.warnings.iter())
                    .any(|w| matches!(w, Warning::BehavedAsSiblings { .. })),
            })
        })
        .collect();
    if cells.is_empty() {
        return None;
    }
    let mut ends: Vec<usize> = cells.iter().flat_map(|c| [c.row, c.column]).collect();
    ends.sort_unstable();
    ends.dedup();
    let (low, high) = (cells.iter())
        .filter(|c| !c.siblings)
        .fold((f64::MAX, f64::MIN), |(lo, hi), c| {
            (lo.min(c.figure), hi.max(c.figure))
        });
    let side = MARGIN + ends.len() as f64 * CELL;
    let width = side + COLOUR_BAR;
    let mut svg = Svg::sized(width, side, &[("role", &"img")]);
    axis_labels(&mut svg, &ends);
    for cell in &cells {
        draw_cell(&mut svg, cell, matrix, &ends, (low, high));
    }
    if low < high {
        colour_bar(&mut svg, side, figures, (low, high));
    }
    Some(DrawnMatrix {
        id: matrix.id,
        svg: svg.finish(),
        caption: range_caption(matrix.caption, figures, low, high),
    })
}

/// The declared caption with the range the shading spans; where there is no range to shade
/// (one pair, pairs that all read alike, or every pair one core's siblings), says so
/// instead of a light-to-dark scale between one figure and itself.
fn range_caption(caption: &str, figures: Figures, low: f64, high: f64) -> String {
    if low > high {
        format!(
            "{caption}: every pair behaved as one core's SMT siblings (grey), which is not a \
             core-to-core figure"
        )
    } else if figures.format(low) == figures.format(high) {
        format!(
            "{caption}, every pair {}: one figure, nothing to shade",
            figures.format(low)
        )
    } else {
        let (light, dark) = figures.light_to_dark((low, high));
        format!(
            "{caption}, {} (light) to {} (dark)",
            figures.format(light),
            figures.format(dark)
        )
    }
}

/// A vertical bar of the shading from the fastest pair (top) to the slowest, with both
/// figures, right of the matrix that starts at `left`.
fn colour_bar(svg: &mut Svg, left: f64, figures: Figures, range: (f64, f64)) {
    const STEPS: usize = 10;
    let (x, top, height) = (left + 12.0, MARGIN, 120.0);
    for step in 0..STEPS {
        let (colour, _) = fill(step as f64 / (STEPS - 1) as f64);
        (svg.element("rect").attr("x", x))
            .attr("y", px(top + step as f64 * height / STEPS as f64))
            .attr("width", 14)
            .attr("height", px(height / STEPS as f64 + 0.5))
            .attr("fill", colour)
            .add();
    }
    let (light, dark) = figures.light_to_dark(range);
    for (y, figure) in [(top + 8.0, light), (top + height, dark)] {
        (svg.element("text").attr("x", px(x + 18.0)))
            .attr("y", px(y))
            .attr("font-size", 11)
            .text(figures.format_axis(figure))
            .add();
    }
}

/// The CPU or node numbers along the top and down the left.
fn axis_labels(svg: &mut Svg, ends: &[usize]) {
    for (i, end) in ends.iter().enumerate() {
        let at = MARGIN + i as f64 * CELL + CELL / 2.0;
        for (x, y, anchor) in [(at, 28.0, "middle"), (28.0, at + 4.0, "end")] {
            (svg.element("text").attr("x", x))
                .attr("y", y)
                .attr("font-size", 11)
                .attr("text-anchor", anchor)
                .text(end)
                .add();
        }
    }
}

/// A pair's cell (row, column), and its mirror (column, row) unless the matrix is
/// directed, shaded within `range`.
fn draw_cell(svg: &mut Svg, cell: &Cell, matrix: &PairMatrix, ends: &[usize], range: (f64, f64)) {
    let figures = Figures(matrix.unit);
    let index = |end: usize| ends.iter().position(|&e| e == end).unwrap_or(0) as f64;
    let ((fill, light_text), what) = if cell.siblings {
        (
            ("hsl(0, 0%, 80%)".to_string(), false),
            format!(
                "{}, behaved as SMT siblings (not core to core)",
                figures.format(cell.figure)
            ),
        )
    } else {
        (
            fill(figures.shade(cell.figure, range)),
            figures.format(cell.figure),
        )
    };
    let ink = if light_text { "#fff" } else { "#222" };
    let (a, b, axis) = (cell.row, cell.column, matrix.axis);
    let (title, places) = if matrix.directed {
        (
            format!("{axis} {a}'s CPUs → {axis} {b}'s memory: {what}"),
            vec![(a, b)],
        )
    } else {
        (
            format!("{axis} {a} ↔ {axis} {b}: {what}"),
            vec![(a, b), (b, a)],
        )
    };
    for (row, column) in places {
        let (x, y) = (MARGIN + index(column) * CELL, MARGIN + index(row) * CELL);
        (svg.element("rect").attr("x", x))
            .attr("y", y)
            .attr("width", CELL - 2.0)
            .attr("height", CELL - 2.0)
            .attr("fill", &fill)
            .title(&title)
            .add();
        (svg.element("text").attr("x", px(x + (CELL - 2.0) / 2.0)))
            .attr("y", px(y + (CELL - 2.0) / 2.0 + 3.5))
            .attr("font-size", 10)
            .attr("text-anchor", "middle")
            .attr("fill", ink)
            .text(figures.format_axis(cell.figure))
            .add();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use latlab_engine::parameters::Key;

    /// Every cell carries its figure, and a matrix with a range to shade has a colour bar
    /// from the fastest pair to the slowest, both named.
    #[test]
    fn cells_show_their_figures_beside_a_colour_bar() {
        use crate::test_records::{probe, record, result};
        let pair = |a: u64, b: u64, ns: f64| {
            result(
                &format!("thread.core_to_core/one-way/cas/{a}-{b}"),
                ns,
                &[
                    (latlab_engine::names::key::CPU_A, a.into()),
                    (latlab_engine::names::key::CPU_B, b.into()),
                ],
            )
        };
        let run = record(vec![probe(
            "thread.core_to_core",
            vec![pair(0, 1, 20.0), pair(0, 2, 80.0), pair(1, 2, 50.0)],
        )]);
        let drawn = pair_matrix(&run, declared("core-to-core-cas")).unwrap();
        for figure in ["20 ns", "80 ns", "50 ns"] {
            assert!(drawn.svg.contains(&format!(">{figure}</text>")), "{figure}");
        }
        // Ten steps of the bar, besides the six cells.
        assert_eq!(drawn.svg.matches("<rect").count(), 6 + 10);
        assert!(drawn.caption.contains("20.0 ns (light) to 80.0 ns (dark)"));
    }

    fn declared(id: &str) -> &'static PairMatrix {
        let declared = latlab_probes::presentations();
        (declared.matrices.iter().copied())
            .find(|m| m.id == id)
            .unwrap()
    }

    /// A node's CPUs reading a node's memory: one cell per pair, not mirrored, in bytes per
    /// second, the slowest (fewest bytes) darkest.
    #[test]
    fn a_directed_matrix_of_bandwidths_is_drawn_one_way() {
        use crate::test_records::{probe, record, result};
        let pair = |i: u64, j: u64, ns_per_line: f64| {
            result(
                &format!("mem.numa/bandwidth/{i}-{j}"),
                ns_per_line,
                &[
                    (Key::new("cpu_node"), i.into()),
                    (Key::new("memory_node"), j.into()),
                ],
            )
            .with_bytes_per_operation(64)
        };
        // 64 bytes in 1 ns is 64 GB/s; in 4 ns, 16 GB/s.
        let run = record(vec![probe(
            "mem.numa",
            vec![
                pair(0, 0, 1.0),
                pair(0, 1, 4.0),
                pair(1, 0, 2.0),
                pair(1, 1, 1.0),
            ],
        )]);
        let drawn = pair_matrix(&run, declared("numa-bandwidth")).unwrap();
        assert_eq!(drawn.svg.matches("<rect").count(), 4 + 10);
        assert!(
            drawn
                .svg
                .contains("node 0's CPUs → node 1's memory: 16.0 GB/s")
        );
        assert!(drawn.svg.contains(">32 GB/s</text>"), "{}", drawn.svg);
        assert!(
            drawn
                .caption
                .contains("64.0 GB/s (light) to 16.0 GB/s (dark)"),
            "{}",
            drawn.caption
        );
    }

    /// A matrix of one figure says so rather than shading "7.63 ns (light) to 7.63 ns
    /// (dark)"; one of siblings only says that; a range reads light to dark.
    #[test]
    fn a_matrix_without_a_range_says_so() {
        let ns = Figures(Unit::Nanoseconds);
        let one = range_caption("pairs", ns, 7.63, 7.63);
        assert!(
            one.contains("every pair 7.63 ns") && !one.contains("(dark)"),
            "{one}"
        );
        let siblings = range_caption("pairs", ns, f64::MAX, f64::MIN);
        assert!(siblings.contains("SMT siblings"), "{siblings}");
        assert!(
            range_caption("pairs", ns, 20.0, 80.0).contains("20.0 ns (light) to 80.0 ns (dark)")
        );
    }
}
