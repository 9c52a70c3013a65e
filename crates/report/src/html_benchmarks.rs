//! The parts of the HTML report that users' benchmarks (latlab-bench) add: comparisons
//! with each group's baseline, allocations per call, a distribution plot per benchmark,
//! and each profile with its hot functions and annotated disassembly.

use crate::advice;
use crate::comparison::comparison_sentence;
use crate::markup::escape;
use crate::plots::distribution;
use crate::units::format_ns;
use latlab_engine::model::{BenchResult, Profile, RunRecord};
use latlab_engine::units::format_bytes;
use std::fmt::Write as _;

/// "Comparisons": one sentence per benchmark compared with its group's baseline.
pub(crate) fn comparisons(page: &mut String, run: &RunRecord) {
    let sentences: Vec<String> = run.results().filter_map(comparison_sentence).collect();
    if sentences.is_empty() {
        return;
    }
    page.push_str(
        "<h2 id=\"comparisons\">Comparisons</h2>\n<p class=\"note\">Each benchmark against its group's baseline, \
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
        "<h2 id=\"allocations\">Allocations per call</h2>\n<div class=\"scroll\"><table>\n<tr><th>benchmark</th><th>allocations</th>\
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
    page.push_str("</table></div>\n");
}

/// "Distributions": a histogram of each result's samples with its median, p90 and p99.
pub(crate) fn distributions(page: &mut String, run: &RunRecord) {
    let figures: Vec<(&BenchResult, String)> = run
        .results()
        .filter_map(|r| Some((r, distribution::svg(&r.samples_ns, &r.name)?)))
        .collect();
    if figures.is_empty() {
        return;
    }
    page.push_str(
        "<h2 id=\"distributions\">Distributions</h2>\n<p class=\"note\">Each benchmark's \
         samples (time per call), from the fastest to the slowest.</p>\n",
    );
    for (result, svg) in figures {
        let _ = writeln!(
            page,
            "<figure id=\"dist-{}\">{svg}<figcaption>{}: how its {} samples spread, median \
             {}</figcaption></figure>",
            escape(&result.name),
            escape(&result.name),
            result.samples_ns.len(),
            format_ns(result.summary.median)
        );
    }
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
    page.push_str("<h2 id=\"profiles\">Profiles</h2>\n");
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
    page.push_str("<div class=\"scroll\"><table>\n<tr><th>share</th><th>function</th></tr>\n");
    for function in &profile.functions {
        let _ = writeln!(
            page,
            "<tr><td>{:.2}%</td><td class=\"text\"><code>{}</code></td></tr>",
            function.share * 100.0,
            escape(&function.name)
        );
    }
    page.push_str("</table></div>\n");
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
         <div class=\"scroll\"><table class=\"asm\">\n<tr><th>share</th><th>address</th><th>instruction</th>\
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
    page.push_str("</table></div></details>\n");
}
