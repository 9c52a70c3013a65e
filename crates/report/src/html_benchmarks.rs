//! The parts of the HTML report that users' benchmarks (latlab-bench) add: comparisons
//! with each group's baseline, allocations per call, a distribution plot per benchmark,
//! and each profile with its hot functions and annotated disassembly.

use crate::advice;
use crate::group_ratio::group_ratio_sentence;
use crate::markup::Section;
use crate::plots::distribution;
use crate::units::format_ns;
use latlab_engine::model::{BenchResult, Profile, RunRecord};
use latlab_engine::units::format_bytes;
use maud::{Markup, PreEscaped, html};

/// "Comparisons": one sentence per benchmark compared with its group's baseline.
pub(crate) fn comparisons(run: &RunRecord) -> Option<Section> {
    let sentences: Vec<String> = run.results().filter_map(group_ratio_sentence).collect();
    if sentences.is_empty() {
        return None;
    }
    let body = html! {
        p.note {
            "Each benchmark against its group's baseline, sampled side by side; the interval \
             comes from the paired samples."
        }
        ul { @for sentence in &sentences { li { (sentence) } } }
    };
    Some(Section::new("comparisons", "Comparisons", body))
}

/// "Allocations per call", where a counting allocator counted them.
pub(crate) fn allocations(run: &RunRecord) -> Option<Section> {
    let counted: Vec<(&str, &latlab_engine::model::Allocations)> = (run.results())
        .filter_map(|r| Some((r.name.as_str(), r.allocations.as_ref()?)))
        .collect();
    if counted.is_empty() {
        return None;
    }
    let body = html! {
        div.scroll { table {
            tr { th { "benchmark" } th { "allocations" } th { "bytes" } th { "calls counted" } }
            @for (name, a) in &counted {
                tr {
                    td { (name) }
                    td { (format!("{:.2}", a.count)) }
                    td { (format_bytes(a.bytes)) }
                    td { (a.calls) }
                }
            }
        } }
    };
    Some(Section::new("allocations", "Allocations per call", body))
}

/// "Distributions": a histogram of each result's samples with its median, p90 and p99.
pub(crate) fn distributions(run: &RunRecord) -> Option<Section> {
    let figures: Vec<(&BenchResult, String)> = run
        .results()
        .filter_map(|r| Some((r, distribution::svg(&r.samples_ns, &r.name)?)))
        .collect();
    if figures.is_empty() {
        return None;
    }
    let body = html! {
        p.note { "Each benchmark's samples (time per call), from the fastest to the slowest." }
        @for (result, svg) in &figures {
            figure id={ "dist-" (result.name) } {
                (PreEscaped(svg))
                figcaption {
                    (result.name) ": how its " (result.samples_ns.len())
                    " samples spread, median " (format_ns(result.summary.median))
                }
            }
        }
    };
    Some(Section::new("distributions", "Distributions", body))
}

/// "Profiles": per profiled benchmark, its hot functions, hardware counts, and the hottest
/// function's instructions shaded by their share of its samples.
pub(crate) fn profiles(run: &RunRecord) -> Option<Section> {
    let profiled: Vec<(&str, &Profile)> = run
        .results()
        .filter_map(|r| Some((r.name.as_str(), r.profile.as_ref()?)))
        .collect();
    if profiled.is_empty() {
        return None;
    }
    let body = html! {
        @for (name, profile) in &profiled { (one_profile(name, profile)) }
    };
    Some(Section::new("profiles", "Profiles", body))
}

fn one_profile(name: &str, profile: &Profile) -> Markup {
    html! {
        h3 id={ "profile-" (name) } { (name) }
        p.note { (advice::profile_taken(profile)) "." }
        div.scroll { table {
            tr { th { "share" } th { "function" } }
            @for function in &profile.functions {
                tr {
                    td { (format!("{:.2}%", function.share * 100.0)) }
                    td.text { code { (function.name) } }
                }
            }
        } }
        @if let Some(counters) = &profile.counters {
            p { "Per call: " (advice::hardware_counts(counters)) "." }
        }
        @for note in [&profile.counters_note, &profile.annotation_note].into_iter().flatten() {
            p.note { (note) }
        }
        @if let Some(annotated) = &profile.annotated {
            details open {
                summary { "hottest function: " code { (annotated.name) } }
                div.scroll { table.asm {
                    tr { th { "share" } th { "address" } th { "instruction" } th { "source" } }
                    @for instruction in &annotated.instructions {
                        @let shade = instruction.share.min(1.0) * 0.8;
                        tr style={ "background: rgba(225, 87, 89, " (format!("{shade:.3}")) ")" } {
                            td {
                                @if instruction.samples > 0 {
                                    (format!("{:.2}%", instruction.share * 100.0))
                                }
                            }
                            td { code { (format!("{:x}", instruction.address)) } }
                            td.text { code { (instruction.text) } }
                            td.text.note { (instruction.line.as_deref().unwrap_or("")) }
                        }
                    }
                } }
            }
        }
    }
}
