//! A declared matrix of CPU pairs ([`latlab_engine::presentation::PairMatrix`]) drawn as
//! plain SVG: one cell per pair, both ways round, darker for slower, each cell's figure in
//! its tooltip. A pair that behaved as one core's SMT siblings is drawn grey, named so, and
//! left out of the shading: it is not a figure between two cores.

use super::svg::{Svg, px};
use crate::units::{format_ns, format_ns_axis};
use latlab_engine::Warning;
use latlab_engine::model::RunRecord;
use latlab_engine::presentation::PairMatrix;

/// One pair's cell.
struct Cell {
    a: usize,
    b: usize,
    median: f64,
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

/// `matrix` drawn from `run`'s pairs, `None` when the run has none.
pub fn pair_matrix(run: &RunRecord, matrix: &PairMatrix) -> Option<DrawnMatrix> {
    let cells: Vec<Cell> = (run.results())
        .filter(|r| matrix.results.matches(&r.name))
        .filter_map(|r| {
            Some(Cell {
                a: r.parameter(matrix.cpu_a)?.as_u64()? as usize,
                b: r.parameter(matrix.cpu_b)?.as_u64()? as usize,
                median: r.summary.median,
                siblings: (r.warnings.iter())
                    .any(|w| matches!(w, Warning::BehavedAsSiblings { .. })),
            })
        })
        .collect();
    if cells.is_empty() {
        return None;
    }
    let mut cpus: Vec<usize> = cells.iter().flat_map(|c| [c.a, c.b]).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let (low, high) = (cells.iter())
        .filter(|c| !c.siblings)
        .fold((f64::MAX, f64::MIN), |(lo, hi), c| {
            (lo.min(c.median), hi.max(c.median))
        });
    let side = MARGIN + cpus.len() as f64 * CELL;
    let width = side + COLOUR_BAR;
    let mut svg = Svg::sized(width, side, &[("role", &"img")]);
    axis_labels(&mut svg, &cpus);
    for cell in &cells {
        draw_cell(&mut svg, cell, &cpus, (low, high));
    }
    if low < high {
        colour_bar(&mut svg, side, (low, high));
    }
    Some(DrawnMatrix {
        id: matrix.id,
        svg: svg.finish(),
        caption: range_caption(matrix.caption, low, high),
    })
}

/// The declared caption with the range the shading spans; where there is no range to shade
/// (one pair, pairs that all read alike, or every pair one core's siblings), says so
/// instead of a light-to-dark scale between one figure and itself.
fn range_caption(caption: &str, low: f64, high: f64) -> String {
    if low > high {
        format!(
            "{caption}: every pair behaved as one core's SMT siblings (grey), which is not a \
             core-to-core figure"
        )
    } else if format_ns(low) == format_ns(high) {
        format!(
            "{caption}, every pair {}: one figure, nothing to shade",
            format_ns(low)
        )
    } else {
        format!(
            "{caption}, {} (light) to {} (dark)",
            format_ns(low),
            format_ns(high)
        )
    }
}

/// A vertical bar of the shading from the fastest pair (top) to the slowest, with both
/// figures, right of the matrix that starts at `left`.
fn colour_bar(svg: &mut Svg, left: f64, (low, high): (f64, f64)) {
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
    for (y, figure) in [(top + 8.0, low), (top + height, high)] {
        (svg.element("text").attr("x", px(x + 18.0)))
            .attr("y", px(y))
            .attr("font-size", 11)
            .text(format_ns_axis(figure))
            .add();
    }
}

/// The CPU numbers along the top and down the left.
fn axis_labels(svg: &mut Svg, cpus: &[usize]) {
    for (i, cpu) in cpus.iter().enumerate() {
        let at = MARGIN + i as f64 * CELL + CELL / 2.0;
        for (x, y, anchor) in [(at, 28.0, "middle"), (28.0, at + 4.0, "end")] {
            (svg.element("text").attr("x", x))
                .attr("y", y)
                .attr("font-size", 11)
                .attr("text-anchor", anchor)
                .text(cpu)
                .add();
        }
    }
}

/// A pair's two cells (a, b) and (b, a), shaded within `(low, high)`.
fn draw_cell(svg: &mut Svg, cell: &Cell, cpus: &[usize], (low, high): (f64, f64)) {
    let index = |cpu: usize| cpus.iter().position(|&c| c == cpu).unwrap_or(0) as f64;
    let shade = if high > low {
        (cell.median - low) / (high - low)
    } else {
        0.5
    };
    let ((fill, light_text), what) = if cell.siblings {
        (
            ("hsl(0, 0%, 80%)".to_string(), false),
            format!(
                "{}, behaved as SMT siblings (not core to core)",
                format_ns(cell.median)
            ),
        )
    } else {
        (fill(shade), format_ns(cell.median))
    };
    let ink = if light_text { "#fff" } else { "#222" };
    let (a, b) = (cell.a, cell.b);
    for (row, column) in [(a, b), (b, a)] {
        let (x, y) = (MARGIN + index(column) * CELL, MARGIN + index(row) * CELL);
        (svg.element("rect").attr("x", x))
            .attr("y", y)
            .attr("width", CELL - 2.0)
            .attr("height", CELL - 2.0)
            .attr("fill", &fill)
            .title(format_args!("CPU {a} ↔ CPU {b}: {what}"))
            .add();
        (svg.element("text").attr("x", px(x + (CELL - 2.0) / 2.0)))
            .attr("y", px(y + (CELL - 2.0) / 2.0 + 3.5))
            .attr("font-size", 10)
            .attr("text-anchor", "middle")
            .attr("fill", ink)
            .text(format_ns_axis(cell.median))
            .add();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let declared = latlab_probes::presentations();
        let drawn = pair_matrix(&run, declared.matrices[0]).unwrap();
        for figure in ["20 ns", "80 ns", "50 ns"] {
            assert!(drawn.svg.contains(&format!(">{figure}</text>")), "{figure}");
        }
        // Ten steps of the bar, besides the six cells.
        assert_eq!(drawn.svg.matches("<rect").count(), 6 + 10);
        assert!(drawn.caption.contains("20.0 ns (light) to 80.0 ns (dark)"));
    }

    /// A matrix of one figure says so rather than shading "7.63 ns (light) to 7.63 ns
    /// (dark)"; one of siblings only says that; a range reads light to dark.
    #[test]
    fn a_matrix_without_a_range_says_so() {
        let one = range_caption("pairs", 7.63, 7.63);
        assert!(
            one.contains("every pair 7.63 ns") && !one.contains("(dark)"),
            "{one}"
        );
        let siblings = range_caption("pairs", f64::MAX, f64::MIN);
        assert!(siblings.contains("SMT siblings"), "{siblings}");
        assert!(range_caption("pairs", 20.0, 80.0).contains("20.0 ns (light) to 80.0 ns (dark)"));
    }
}
