//! What a paired comparison prints, writes (`--json`) and exits with.

use super::paired::Verdict;
use super::{AgainstArgs, Compared, Comparison};
use latlab_report::units::format_ns;
use serde_json::json;

/// A share as a signed percentage, `+1.2%`.
fn percent(share: f64) -> String {
    format!("{:+.1}%", 100.0 * share)
}

/// One benchmark's line: its name, both sides' time a call, the ratio and its interval,
/// the verdict (or what it would have caught) beside the layout floor, and how long it took.
pub(super) fn line(compared: &Compared, other: &str) -> String {
    let p = &compared.paired;
    let per_call = |slice: f64| format_ns(slice / compared.turns as f64);
    let interval = p.interval.map_or_else(
        || "no interval (fewer than six blocks)".to_string(),
        |(lo, hi)| format!("[{}, {}]", percent(lo - 1.0), percent(hi - 1.0)),
    );
    let verdict = match (p.verdict(), p.could_hear()) {
        (Verdict::Same, Some(d)) if p.inside_floor() => format!(
            "same: the blocks' interval is past no change but inside the layout floor, which \
             the pairs of processes make; would have caught ±{:.1}%",
            100.0 * d
        ),
        (Verdict::Same, Some(d)) => format!("same, would have caught ±{:.1}%", 100.0 * d),
        (Verdict::Same, None) => "same, too few blocks or rounds to hear a change".to_string(),
        (verdict, _) => verdict.word().to_string(),
    };
    let floor = p.floor.map_or_else(
        || "not measured".to_string(),
        |f| format!("±{:.1}%", 100.0 * f),
    );
    let bursts = match p.bursts {
        0 => String::new(),
        n => format!(", {n} slice pair(s) slowed on both sides by a burst (kept)"),
    };
    format!(
        "{}: {other} {}, this build {}, {} {interval}: {verdict} (layout floor {floor}); {} \
         blocks in {} pairs of processes, {:.1} s{bursts}",
        compared.name,
        per_call(p.slice_a),
        per_call(p.slice_b),
        percent(p.ratio - 1.0),
        p.blocks,
        p.rounds,
        compared.took.as_secs_f64(),
    )
}

pub(super) fn print_line(compared: &Compared, other: &str) {
    print(&format!("{}\n", line(compared, other)));
}

/// The line of a benchmark one side could not serve, as it happens.
pub(super) fn print_line_not_compared(name: &str, why: &str) {
    print(&format!("{name}: not compared: {why}\n"));
}

fn print(text: &str) {
    if let Err(error) = latlab_front::print_out(text) {
        latlab_front::say!("error: {}", latlab_front::with_causes(&error));
    }
}

/// What follows the benchmarks' lines: those one side alone has, those not compared.
pub(super) fn print_end(comparison: &Comparison) {
    let mut text = String::new();
    if !comparison.only_here.is_empty() {
        text += &format!("only in this build: {}\n", comparison.only_here.join(", "));
    }
    if !comparison.only_there.is_empty() {
        text += &format!(
            "only in {}: {}\n",
            comparison.other,
            comparison.only_there.join(", ")
        );
    }
    if comparison.interrupted {
        text += "interrupted: the benchmarks above were compared, the rest were not\n";
    }
    print(&text);
}

/// The comparison as JSON, for a CI to keep.
pub(super) fn json(comparison: &Comparison, args: &AgainstArgs) -> serde_json::Value {
    let benchmarks: Vec<serde_json::Value> = (comparison.compared.iter())
        .map(|c| {
            let p = &c.paired;
            json!({
                "name": c.name,
                "other_ns": p.slice_a / c.turns as f64,
                "this_ns": p.slice_b / c.turns as f64,
                "ratio": p.ratio,
                "ratio_ci95": p.interval.map(|(lo, hi)| [lo, hi]),
                "verdict": p.verdict().word(),
                "would_have_caught": p.could_hear(),
                "layout_floor": p.floor,
                "inside_layout_floor": p.inside_floor(),
                "blocks": p.blocks,
                "process_pairs": p.rounds,
                "turns_per_slice": c.turns,
                "bursts_on_both_sides": p.bursts,
                "seconds": c.took.as_secs_f64(),
            })
        })
        .collect();
    json!({
        "against": args.rev,
        "other": comparison.other,
        "precision": args.precision,
        "time_per_benchmark_seconds": args.time.as_secs_f64(),
        "benchmarks": benchmarks,
        "only_in_this_build": comparison.only_here,
        "only_in_other": comparison.only_there,
        "not_compared": (comparison.not_compared.iter())
            .map(|(name, why)| json!({"name": name, "why": why}))
            .collect::<Vec<_>>(),
        "interrupted": comparison.interrupted,
    })
}

pub(super) fn write_json(
    comparison: &Comparison,
    args: &AgainstArgs,
    path: &str,
) -> Result<(), String> {
    let text = serde_json::to_string_pretty(&json(comparison, args))
        .map_err(|e| format!("--json: {e}"))?;
    let target = latlab_report::OutputTarget::parse(path);
    latlab_report::write_output(&target, &(text + "\n"))
        .map_err(|e| format!("--json {path}: {}", latlab_front::with_causes(&e)))
}

/// The exit status: 130 (or the signal's) when interrupted, 1 when a benchmark's whole
/// interval lies past `--fail-if-slower` or one could not be compared, else 0.
pub(super) fn status(comparison: &Comparison, args: &AgainstArgs) -> i32 {
    if comparison.interrupted {
        return 130;
    }
    let past = |c: &Compared| {
        (args.fail_if_slower).is_some_and(|limit| {
            let floor = c.paired.floor.unwrap_or(f64::INFINITY);
            c.paired
                .interval
                .is_some_and(|(lo, _)| lo > 1.0 + limit.max(floor))
        })
    };
    let failed = comparison.compared.iter().any(past) || !comparison.not_compared.is_empty();
    i32::from(failed)
}

/// The comparison's page (`--html FILE`).
#[cfg(feature = "html")]
pub(super) fn write_html(comparison: &Comparison, path: &str) -> Result<(), String> {
    use latlab_report::{PairedPage, PairedRow};
    let rows = (comparison.compared.iter())
        .map(|c| {
            let p = &c.paired;
            PairedRow {
                name: c.name.clone(),
                other_ns: p.slice_a / c.turns as f64,
                this_ns: p.slice_b / c.turns as f64,
                ratio: p.ratio,
                interval: p.interval,
                verdict: p.verdict().word().to_string(),
                floor: p.floor,
                could_hear: p.could_hear(),
                blocks: p.blocks,
                process_pairs: p.rounds,
                seconds: c.took.as_secs_f64(),
            }
        })
        .collect();
    let page = latlab_report::paired_html_page(&PairedPage {
        other: comparison.other.clone(),
        rows,
        only_here: comparison.only_here.clone(),
        only_there: comparison.only_there.clone(),
        not_compared: comparison.not_compared.clone(),
    });
    let target = latlab_report::OutputTarget::parse(path);
    latlab_report::write_output(&target, &page)
        .map_err(|e| format!("--html {path}: {}", latlab_front::with_causes(&e)))
}
