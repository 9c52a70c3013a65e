use super::runs::RunFigure;
use super::steps::tests::noise;
use super::*;
use crate::Exporter;

/// Forty nightly runs of `host`: each result of `results` (name, figure) with 1% of scatter,
/// `step` (name, first run, factor) applied, and the kernel upgraded at run `kernel_at`.
fn nightly(
    host: &str,
    results: &[(&str, f64)],
    steps: &[(&str, usize, f64)],
    kernel_at: usize,
) -> Vec<HistoryRun> {
    let scatter: Vec<Vec<f64>> = (0..results.len())
        .map(|i| noise(40, 0.01, i as u64 + 7))
        .collect();
    (0..40)
        .map(|run| {
            let mut figures: Vec<(std::sync::Arc<str>, RunFigure)> = (results.iter().enumerate())
                .map(|(i, (name, figure))| {
                    let factor: f64 = (steps.iter())
                        .filter(|(stepped, at, _)| stepped == name && run >= *at)
                        .map(|(_, _, factor)| factor)
                        .product();
                    let median_ns = figure * factor * scatter[i][run].exp();
                    let interval_ns = [median_ns * 0.99, median_ns * 1.01];
                    let figure = RunFigure {
                        median_ns,
                        interval_ns,
                    };
                    (std::sync::Arc::from(*name), figure)
                })
                .collect();
            figures.sort_by(|a, b| a.0.cmp(&b.0));
            let kernel = if run < kernel_at { "6.8.0" } else { "6.9.1" };
            HistoryRun {
                path: format!("/runs/{host}/{run}/summary.json").into(),
                host_name: host.into(),
                cpu_model: "Test CPU".into(),
                started_at: format!("2026-11-{:02}T03:00:00Z", run % 30 + 1)
                    .replace("2026-11", if run < 30 { "2026-11" } else { "2026-12" }),
                environment: vec![("kernel", kernel.into()), ("latlab", "0.1.0".into())],
                figures,
                instead_of_summary: None,
            }
        })
        .collect()
}

const OPTIONS: HistoryOptions = DEFAULT_HISTORY_OPTIONS;

/// A history of `host` alone.
fn history_of(host: HostHistory) -> History {
    History {
        hosts: vec![host],
        notes: Vec::new(),
        read: Vec::new(),
    }
}

/// The history of one host's `runs`, no result declared on the core clock.
fn one_host(runs: &[HistoryRun]) -> History {
    history_of(HostHistory::of(
        runs,
        &Presentations::default(),
        OPTIONS,
        Spread::OverResults,
    ))
}

#[test]
fn a_step_is_found_with_the_kernel_that_changed_at_it() {
    let results = [
        ("a/quiet", 10.0),
        ("a/stepped", 20.0),
        ("mem.latency/level/L2", 8.0),
    ];
    let runs = nightly("h", &results, &[("mem.latency/level/L2", 25, 1.09)], 25);
    let host = HostHistory::of(
        &runs,
        &Presentations::default(),
        OPTIONS,
        Spread::OverResults,
    );
    assert_eq!(host.changes.len(), 1, "{:?}", host.changes);
    let change = &host.changes[0];
    assert_eq!(
        (change.result.as_str(), change.at),
        ("mem.latency/level/L2", 25)
    );
    assert!((1.06..1.12).contains(&change.ratio), "{change:?}");
    assert_eq!(change.after_run, runs[25].started_at);
    assert_eq!(change.before_run, runs[24].started_at);
    assert_eq!(
        change.environment_changes,
        [EnvironmentChange {
            field: "kernel",
            before: "6.8.0".into(),
            after: "6.9.1".into()
        }]
    );
    // A nightly gate: slower by more than 5%, within the last ten runs or not.
    let history = history_of(host);
    assert_eq!(history.slower_than(5.0).len(), 1);
    assert!(history.slower_than(20.0).is_empty());
    let recent = history.recent(None, Some(10));
    assert!(recent.hosts[0].changes.is_empty());
}

/// The presentations of results `on_clock`, as a probe declares them.
fn on_the_clock(on_clock: &[&'static str]) -> Presentations {
    Presentations {
        on_core_clock: on_clock.to_vec(),
        ..Presentations::default()
    }
}

/// Only results on the core clock are counted on its step: one its probe declares so, and
/// one whose runs follow the clock run by run between its steps. One that merely stepped
/// with it (main memory, say) is a change of its own; one that stepped further is too.
#[test]
fn results_on_the_core_clock_that_step_with_it_are_counted_on_its_step() {
    let results = [
        (CLOCK_RESULT, 0.4),
        ("cpu.call/empty", 2.0),
        ("mem.latency/level/DRAM", 90.0),
        ("c/d", 9.0),
        ("e/f", 3.0),
    ];
    let clocked = [
        (CLOCK_RESULT, 20, 1.06),
        ("cpu.call/empty", 20, 1.06),
        ("mem.latency/level/DRAM", 20, 1.06),
        // Beyond the clock's step: still a change in cycles.
        ("c/d", 20, 1.25),
    ];
    let mut runs = nightly("h", &results, &clocked, 99);
    // e/f is not declared on the clock, but its runs follow the clock's, run by run.
    for run in &mut runs {
        let figure = |name: &str| run.figures.iter().position(|(n, _)| &**n == name).unwrap();
        let (clock, own) = (figure(CLOCK_RESULT), figure("e/f"));
        run.figures[own].1.median_ns = 7.5 * run.figures[clock].1.median_ns;
    }
    let host = HostHistory::of(
        &runs,
        &on_the_clock(&["cpu.call/empty"]),
        OPTIONS,
        Spread::OverResults,
    );
    assert_eq!(host.clock_steps.len(), 1, "{host:?}");
    assert_eq!(host.clock_steps[0].followers, 2, "{host:?}");
    let named: Vec<&str> = host.changes.iter().map(|c| c.result.as_str()).collect();
    assert_eq!(named, ["c/d", "mem.latency/level/DRAM"]);
}

/// Results that step at one run, or a run apart, are one step of the machine: reported once,
/// with its members, the size of each and what changed in the environment; a result's step
/// that no other shares is its own. Every file names the event.
#[test]
fn a_step_many_results_share_is_one_machine_event_reported_once() {
    let results = [
        ("a/b", 5.0),
        ("c/d", 9.0),
        ("e/f", 3.0),
        ("g/h", 7.0),
        ("i/j", 4.0),
        ("k/l", 6.0),
    ];
    let steps = [
        ("a/b", 20, 1.2),
        ("c/d", 21, 0.8),
        ("g/h", 20, 1.15),
        ("i/j", 19, 1.25),
        ("e/f", 30, 1.2),
    ];
    let runs = nightly("h", &results, &steps, 20);
    let host = HostHistory::of(
        &runs,
        &Presentations::default(),
        OPTIONS,
        Spread::OverResults,
    );
    assert_eq!(host.events.len(), 1, "{host:?}");
    let event = &host.events[0];
    let members: Vec<&str> = event.members.iter().map(|c| c.result.as_str()).collect();
    assert_eq!(members, ["a/b", "c/d", "g/h", "i/j"]);
    assert_eq!(event.at, 20);
    assert_eq!(event.after_run, runs[20].started_at);
    assert_eq!(event.before_run, runs[18].started_at);
    assert_eq!(event.environment_changes[0].field, "kernel");
    assert!(event.members.iter().all(|m| m.machine_event == Some(20)));
    let own: Vec<&str> = host.changes.iter().map(|c| c.result.as_str()).collect();
    assert_eq!(own, ["e/f"]);
    let history = history_of(host);
    let text = HistoryText.render(&history).unwrap();
    assert_eq!(text.matches("a step of the machine").count(), 1, "{text}");
    assert!(
        text.contains("4 results, 3 slower and 1 faster; kernel 6.8.0 → 6.9.1"),
        "{text}"
    );
    assert!(text.contains("    c/d: "), "{text}");
    assert_eq!(text.matches("a/b").count(), 1, "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&HistoryJson.render(&history).unwrap()).unwrap();
    let host_json = &json["hosts"][0];
    assert_eq!(
        host_json["machine_events"][0]["members"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    assert_eq!(
        host_json["machine_events"][0]["members"][0]["machine_event"],
        runs[20].started_at.as_str()
    );
    assert_eq!(
        host_json["changes"][0]["machine_event"],
        serde_json::Value::Null
    );
    let timeline = &host_json["timelines"][0];
    assert_eq!(timeline["points"].as_array().unwrap().len(), 40);
    assert_eq!(timeline["points"][0]["start"], runs[0].started_at.as_str());
    let csv = HistoryCsv.render(&history).unwrap();
    assert!(csv.matches(&runs[20].started_at).count() >= 4, "{csv}");
}

/// A result that moved at a step of the machine where the kernel changed, by less than its
/// levels' scatter times the factor a search asks, joins it: one test at a known run. One
/// that did not move does not; and where nothing changed in the environment, none joins.
#[test]
fn a_result_that_moved_with_a_step_of_the_machine_joins_it() {
    let results = [
        ("a/b", 5.0),
        ("c/d", 9.0),
        ("g/h", 7.0),
        ("m/n", 4.0),
        ("o/p", 6.0),
    ];
    let steps = [
        ("a/b", 20, 1.2),
        ("c/d", 20, 1.2),
        ("g/h", 20, 1.2),
        ("m/n", 20, 1.05),
    ];
    let unexplained = HostHistory::of(
        &with_more_scatter(nightly("h", &results, &steps, 99)),
        &Presentations::default(),
        OPTIONS,
        Spread::OverHosts,
    );
    let unexplained: Vec<&str> = (unexplained.events[0].members.iter())
        .map(|c| c.result.as_str())
        .collect();
    assert_eq!(unexplained, ["a/b", "c/d", "g/h"]);
    let runs = with_more_scatter(nightly("h", &results, &steps, 20));
    let searched = HostHistory::of(&runs, &Presentations::default(), OPTIONS, Spread::OverHosts);
    let by_search: Vec<&str> = (searched.all_changes())
        .map(|c| c.result.as_str())
        .collect();
    let logs: Vec<f64> = (runs.iter())
        .map(|run| {
            run.figures
                .iter()
                .find(|(n, _)| &**n == "m/n")
                .unwrap()
                .1
                .median_ns
                .ln()
        })
        .collect();
    assert!(
        steps::steps(&logs, OPTIONS).is_empty(),
        "the search alone finds m/n's step"
    );
    assert_eq!(searched.events.len(), 1, "{searched:?}");
    let members: Vec<&str> = searched.events[0]
        .members
        .iter()
        .map(|c| c.result.as_str())
        .collect();
    assert_eq!(members, ["a/b", "c/d", "g/h", "m/n"], "{by_search:?}");
    let joined = &searched.events[0].members[3];
    assert_eq!((joined.at, joined.machine_event), (20, Some(20)));
    assert!((1.0..1.12).contains(&joined.ratio), "{joined:?}");
    assert!(searched.changes.is_empty(), "{:?}", searched.changes);
}

/// `runs` with m/n and o/p scattering by 4% more: m/n's step of 5% then lies within one and a
/// half times its levels' scatter.
fn with_more_scatter(mut runs: Vec<HistoryRun>) -> Vec<HistoryRun> {
    for (name, seed) in [("m/n", 31), ("o/p", 32)] {
        for (run, extra) in runs.iter_mut().zip(noise(40, 0.04, seed)) {
            let figure = &mut run
                .figures
                .iter_mut()
                .find(|(n, _)| &**n == name)
                .unwrap()
                .1;
            figure.median_ns *= extra.exp();
        }
    }
    runs
}

/// `--fail-if-slower` judges a step of the machine as a whole: one line, naming the members
/// slower past the percentage. It fails the gate whatever its cause; asked to, it takes one
/// that no environment change explains as the host's own, and says so, but never one a
/// kernel explains. A step of the core clock is judged the same way.
#[test]
fn the_gate_judges_a_machine_event_whole_and_never_forgives_it_unasked() {
    let results = [("a/b", 5.0), ("c/d", 9.0), ("g/h", 7.0), ("x/y", 2.0)];
    let steps = [("a/b", 20, 1.3), ("c/d", 20, 1.25), ("g/h", 20, 1.3)];
    let gate = |kernel_at: usize, accept: bool| {
        let runs = nightly("h", &results, &steps, kernel_at);
        let history = one_host(&runs);
        gate_text(&history.slower_than(10.0), 10.0, accept)
    };
    let (text, failed) = gate(99, false);
    assert!(failed, "{text}");
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.contains("a step of the machine on h from the run of")
            && text.contains("3 of its 3 results slower"),
        "{text}"
    );
    let (text, failed) = gate(99, true);
    assert!(!failed, "{text}");
    assert!(text.contains("(--accept-machine-steps)"), "{text}");
    let (text, failed) = gate(20, true);
    assert!(failed && text.contains("kernel 6.8.0 → 6.9.1"), "{text}");
    let clock = [(CLOCK_RESULT, 0.4), ("x/y", 2.0)];
    let runs = nightly("h", &clock, &[(CLOCK_RESULT, 20, 1.2)], 99);
    let history = one_host(&runs);
    let (text, failed) = gate_text(&history.slower_than(10.0), 10.0, false);
    assert!(
        failed && text.contains("the core clock on h: its cycle 1.2"),
        "{text}"
    );
}

/// A change of mix that makes a result's typical figure slower past the percentage fails
/// the gate, with its shares before and after: the case, one result at twice its
/// figure from run 20 on, but for runs 27 and 34.
#[test]
fn a_change_of_mix_fails_the_gate_with_its_shares() {
    let results = [("proc.pipe/round-trip", 3.0)];
    let mut runs = nightly("h", &results, &[], 99);
    for (i, run) in runs.iter_mut().enumerate() {
        if i >= 20 && i != 27 && i != 34 {
            run.figures[0].1.median_ns *= 2.0;
        }
    }
    let history = one_host(&runs);
    let change = &history.hosts[0].changes[0];
    assert!(change.mix.is_some(), "{change:?}");
    let (text, failed) = gate_text(&history.slower_than(10.0), 10.0, false);
    assert!(failed, "{text}");
    assert!(
        text.contains("proc.pipe/round-trip on h: its typical figure")
            && text.contains("runs in the upper regime 0.0% → 90%"),
        "{text}"
    );
}

#[test]
fn a_result_flipping_between_two_regimes_has_no_step() {
    let results = [("proc.pipe/round-trip", 3.0)];
    let mut runs = nightly("h", &results, &[], 99);
    for (i, run) in runs.iter_mut().enumerate() {
        if i % 3 == 1 || i % 7 == 0 {
            run.figures[0].1.median_ns *= 1.5;
        }
    }
    let host = HostHistory::of(
        &runs,
        &Presentations::default(),
        OPTIONS,
        Spread::OverResults,
    );
    assert!(host.changes.is_empty(), "{:?}", host.changes);
}

#[test]
fn unchanged_runs_have_no_change_point() {
    let results: Vec<(String, f64)> = (0..50)
        .map(|i| (format!("r/{i}"), 1.0 + i as f64))
        .collect();
    let named: Vec<(&str, f64)> = results.iter().map(|(n, f)| (n.as_str(), *f)).collect();
    let host = HostHistory::of(
        &nightly("h", &named, &[], 99),
        &Presentations::default(),
        OPTIONS,
        Spread::OverResults,
    );
    assert!(host.changes.is_empty(), "{:?}", host.changes);
}

/// The tables carry each change with its host and the kernel that changed at it, and a name
/// from a file can neither start a spreadsheet formula nor break a Markdown row.
#[test]
fn the_tables_carry_each_change_and_defuse_hostile_names() {
    let results = [("=cmd|' /C calc'!A0", 10.0)];
    let runs = nightly("h", &results, &[("=cmd|' /C calc'!A0", 25, 1.2)], 25);
    let history = one_host(&runs);
    let csv = HistoryCsv.render(&history).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 2, "{csv}");
    assert!(lines[0].starts_with("host,cpu_model,result,before_run,after_run"));
    assert!(
        lines[1].contains("'=cmd") && lines[1].contains("kernel 6.8.0 → 6.9.1"),
        "{csv}"
    );
    let markdown = HistoryMarkdown.render(&history).unwrap();
    assert!(markdown.contains("## h (Test CPU)"), "{markdown}");
    assert!(markdown.contains("=cmd\\|"), "{markdown}");
    assert!(markdown.contains("kernel 6.8.0 → 6.9.1"), "{markdown}");
}

/// A changed result gets a timeline of every run; a result that did not change gets none,
/// and keeping only recent changes lets an old change's timeline go.
#[test]
fn each_changed_result_has_a_timeline_and_the_page_shows_it() {
    let results = [("a/quiet", 10.0), ("<b>/stepped", 20.0)];
    let runs = nightly("<host>", &results, &[("<b>/stepped", 25, 1.2)], 25);
    let host = HostHistory::of(
        &runs,
        &Presentations::default(),
        OPTIONS,
        Spread::OverResults,
    );
    let timelines: Vec<&str> = host.timelines.iter().map(|t| t.result.as_str()).collect();
    assert_eq!(timelines, ["<b>/stepped"]);
    assert_eq!(host.timelines[0].points.len(), 40);
    let history = history_of(host);
    #[cfg(feature = "html")]
    {
        let page = HistoryHtml.render(&history).unwrap();
        assert!(page.contains("Hosts that changed (1)"), "{page}");
        assert!(page.contains("href=\"#host-0\""), "{page}");
        assert_eq!(page.matches("<svg").count(), 1, "{page}");
        assert_eq!(page.matches("stroke-dasharray").count(), 1, "{page}");
        assert!(page.contains("kernel 6.8.0 → 6.9.1"), "{page}");
        assert!(!page.contains("<host>") && !page.contains("<b>/"), "{page}");
        assert!(page.contains("&lt;host&gt;"), "{page}");
    }
    let recent = history.recent(None, Some(10));
    assert!(recent.hosts[0].timelines.is_empty());
}
