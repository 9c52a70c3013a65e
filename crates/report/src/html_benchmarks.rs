//! The parts of the HTML report that users' benchmarks (latlab-bench) add: comparisons
//! with each group's baseline, allocations per call, a distribution plot per benchmark,
//! and each profile with its hot functions and annotated disassembly.

use crate::advice;
use crate::comparison::comparison_sentence;
use crate::html::escape;
use crate::units::format_ns;
use latlab_engine::model::{BenchResult, Profile, RunRecord};
use latlab_engine::units::format_bytes;
use std::fmt::Write as _;

/// Bars of a distribution plot.
const BINS: usize = 24;

/// "Comparisons": one sentence per benchmark compared with its group's baseline.
pub(crate) fn comparisons(page: &mut String, run: &RunRecord) {
    let sentences: Vec<String> = run.results().filter_map(comparison_sentence).collect();
    if sentences.is_empty() {
        return;
    }
    page.push_str(
        "<h2>Comparisons</h2>\n<p class=\"note\">Each benchmark against its group's baseline, \
         sampled side by side; the interval comes from the paired samples.</p>\n<ul>\n",
    );
    for sentence in sentences {
        let _ = writeln!(page, "<li>{}</li>", escape(&sentence));
    }
    page.push_str("</ul>\n");
}

/// "Allocations per call", where a counting allocator counted them.
pub(crate) fn allocations(page: &mut String, run: &RunRecord) {
    let counted: Vec<&BenchResult> = run.results().filter(|r| r.allocations.is_some()).collect();
    if counted.is_empty() {
        return;
    }
    page.push_str(
        "<h2>Allocations per call</h2>\n<table>\n<tr><th>benchmark</th><th>allocations</th>\
         <th>bytes</th><th>calls counted</th></tr>\n",
    );
    for result in counted {
        let a = result.allocations.as_ref().expect("filtered");
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td></tr>",
            escape(&result.name),
            a.count,
            format_bytes(a.bytes),
            a.calls
        );
    }
    page.push_str("</table>\n");
}

/// "Distributions": a histogram of each result's samples, its median marked.
pub(crate) fn distributions(page: &mut String, run: &RunRecord) {
    let results: Vec<&BenchResult> = run.results().filter(|r| r.samples_ns.len() >= 5).collect();
    if results.is_empty() {
        return;
    }
    page.push_str(
        "<h2>Distributions</h2>\n<p class=\"note\">Each benchmark's samples (time per call), \
         from the fastest to the slowest; the line is the median.</p>\n",
    );
    for result in results {
        let _ = writeln!(
            page,
            "<figure id=\"dist-{}\">{}<figcaption>{}: {} samples, median {}</figcaption></figure>",
            escape(&result.name),
            histogram_svg(&result.samples_ns, result.summary.median),
            escape(&result.name),
            result.samples_ns.len(),
            format_ns(result.summary.median)
        );
    }
}

/// An inline SVG histogram of `samples` over their range, with the median as a line.
fn histogram_svg(samples: &[f64], median: f64) -> String {
    let (width, height, margin) = (420.0, 90.0, 14.0);
    let lo = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = hi - lo;
    let mut counts = [0usize; BINS];
    for &sample in samples {
        let bin = if span > 0.0 {
            (((sample - lo) / span) * BINS as f64) as usize
        } else {
            BINS / 2
        };
        counts[bin.min(BINS - 1)] += 1;
    }
    let most = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let bar = (width - 2.0 * margin) / BINS as f64;
    let plot_height = height - 2.0 * margin;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{}\" \
         viewBox=\"0 0 {width} {}\" role=\"img\">",
        height + 4.0,
        height + 4.0
    );
    for (i, &count) in counts.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let h = count as f64 / most * plot_height;
        let x = margin + i as f64 * bar;
        let from = lo + span * i as f64 / BINS as f64;
        let _ = write!(
            svg,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"#4e79a7\">\
             <title>{} … : {count}</title></rect>",
            margin + plot_height - h,
            bar - 1.0,
            format_ns(from)
        );
    }
    let median_x = if span > 0.0 {
        margin + (median - lo) / span * (width - 2.0 * margin)
    } else {
        width / 2.0
    };
    let _ = write!(
        svg,
        "<line x1=\"{median_x:.1}\" x2=\"{median_x:.1}\" y1=\"{margin}\" y2=\"{}\" \
         stroke=\"#e15759\" stroke-width=\"2\"/>\
         <text x=\"{margin}\" y=\"{}\" font-size=\"11\">{}</text>\
         <text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text></svg>",
        margin + plot_height,
        height,
        format_ns(lo),
        width - margin,
        height,
        format_ns(hi)
    );
    svg
}

/// "Profiles": per profiled benchmark, its hot functions, hardware counts, and the hottest
/// function's instructions shaded by their share of its samples.
pub(crate) fn profiles(page: &mut String, run: &RunRecord) {
    let profiled: Vec<(&str, &Profile)> = run
        .results()
        .filter_map(|r| Some((r.name.as_str(), r.profile.as_ref()?)))
        .collect();
    if profiled.is_empty() {
        return;
    }
    page.push_str("<h2>Profiles</h2>\n");
    for (name, profile) in profiled {
        one_profile(page, name, profile);
    }
}

fn one_profile(page: &mut String, name: &str, profile: &Profile) {
    let _ = writeln!(
        page,
        "<h3 id=\"profile-{}\">{}</h3>\n<p class=\"note\">{}.</p>",
        escape(name),
        escape(name),
        escape(&advice::profile_taken(profile))
    );
    page.push_str("<table>\n<tr><th>share</th><th>function</th></tr>\n");
    for function in &profile.functions {
        let _ = writeln!(
            page,
            "<tr><td>{:.2}%</td><td class=\"text\"><code>{}</code></td></tr>",
            function.share * 100.0,
            escape(&function.name)
        );
    }
    page.push_str("</table>\n");
    if let Some(counters) = &profile.counters {
        let counts = advice::hardware_counts(counters);
        let _ = writeln!(page, "<p>Per call: {counts}.</p>");
    }
    for note in [&profile.counters_note, &profile.annotation_note]
        .into_iter()
        .flatten()
    {
        let _ = writeln!(page, "<p class=\"note\">{}</p>", escape(note));
    }
    let Some(annotated) = &profile.annotated else {
        return;
    };
    let _ = writeln!(
        page,
        "<details open><summary>hottest function: <code>{}</code></summary>\n\
         <table class=\"asm\">\n<tr><th>share</th><th>address</th><th>instruction</th>\
         <th>source</th></tr>",
        escape(&annotated.name)
    );
    for instruction in &annotated.instructions {
        let share = if instruction.samples > 0 {
            format!("{:.2}%", instruction.share * 100.0)
        } else {
            String::new()
        };
        let _ = writeln!(
            page,
            "<tr style=\"background: rgba(225, 87, 89, {:.3})\"><td>{share}</td>\
             <td><code>{:x}</code></td><td class=\"text\"><code>{}</code></td>\
             <td class=\"text note\">{}</td></tr>",
            instruction.share.min(1.0) * 0.8,
            instruction.address,
            escape(&instruction.text),
            escape(instruction.line.as_deref().unwrap_or(""))
        );
    }
    page.push_str("</table></details>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_draws_one_bar_per_occupied_bin_and_spans_min_to_max() {
        let samples = [1.0, 1.0, 1.0, 2.0, 3.0];
        let svg = histogram_svg(&samples, 1.0);
        assert_eq!(svg.matches("<rect").count(), 3);
        assert!(svg.contains(&format_ns(1.0)) && svg.contains(&format_ns(3.0)));
        // Equal samples: one bar, no division by a zero span.
        let flat = histogram_svg(&[2.0; 6], 2.0);
        assert_eq!(flat.matches("<rect").count(), 1);
        assert!(!flat.contains("NaN"));
    }
}
