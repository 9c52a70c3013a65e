//! A declared matrix of CPU pairs ([`latlab_engine::presentation::PairMatrix`]) drawn as
//! plain SVG: one cell per pair, both ways round, darker for slower, each cell's figure in
//! its tooltip. A pair that behaved as one core's SMT siblings is drawn grey, named so, and
//! left out of the shading: it is not a figure between two cores.

use crate::units::format_ns;
use latlab_engine::Warning;
use latlab_engine::model::RunRecord;
use latlab_engine::presentation::PairMatrix;
use std::fmt::Write as _;

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
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{side}\" height=\"{side}\" \
         viewBox=\"0 0 {side} {side}\" role=\"img\">"
    );
    axis_labels(&mut svg, &cpus);
    for cell in &cells {
        draw_cell(&mut svg, cell, &cpus, (low, high));
    }
    svg.push_str("</svg>");
    Some(DrawnMatrix {
        id: matrix.id,
        svg,
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

/// The CPU numbers along the top and down the left.
fn axis_labels(svg: &mut String, cpus: &[usize]) {
    for (i, cpu) in cpus.iter().enumerate() {
        let at = MARGIN + i as f64 * CELL + CELL / 2.0;
        let _ = write!(
            svg,
            "<text x=\"{at}\" y=\"28\" font-size=\"11\" text-anchor=\"middle\">{cpu}</text>\
             <text x=\"28\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{cpu}</text>",
            at + 4.0
        );
    }
}

/// A pair's two cells (a, b) and (b, a), shaded within `(low, high)`.
fn draw_cell(svg: &mut String, cell: &Cell, cpus: &[usize], (low, high): (f64, f64)) {
    let index = |cpu: usize| cpus.iter().position(|&c| c == cpu).unwrap_or(0) as f64;
    let shade = if high > low {
        (cell.median - low) / (high - low)
    } else {
        0.5
    };
    let (fill, what) = if cell.siblings {
        (
            "hsl(0, 0%, 80%)".to_string(),
            format!(
                "{}, behaved as SMT siblings (not core to core)",
                format_ns(cell.median)
            ),
        )
    } else {
        (
            format!("hsl(210, 60%, {:.0}%)", 92.0 - 55.0 * shade),
            format_ns(cell.median),
        )
    };
    let (a, b) = (cell.a, cell.b);
    for (row, column) in [(a, b), (b, a)] {
        let _ = write!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" \
             fill=\"{fill}\"><title>CPU {a} ↔ CPU {b}: {what}</title></rect>",
            MARGIN + index(column) * CELL,
            MARGIN + index(row) * CELL,
            CELL - 2.0,
            CELL - 2.0,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
