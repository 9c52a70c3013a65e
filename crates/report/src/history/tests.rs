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

#[test]
fn a_step_is_found_with_the_kernel_that_changed_at_it() {
    let results = [
        ("a/quiet", 10.0),
        ("a/stepped", 20.0),
        ("mem.latency/level/L2", 8.0),
    ];
    let runs = nightly("h", &results, &[("mem.latency/level/L2", 25, 1.09)], 25);
    let host = HostHistory::of(&runs, &Presentations::default(), OPTIONS);
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
    let history = History {
        hosts: vec![host],
        notes: Vec::new(),
        read: Vec::new(),
    };
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
    let host = HostHistory::of(&runs, &on_the_clock(&["cpu.call/empty"]), OPTIONS);
    assert_eq!(host.clock_steps.len(), 1, "{host:?}");
    assert_eq!(host.clock_steps[0].followers, 2, "{host:?}");
    let named: Vec<&str> = host.changes.iter().map(|c| c.result.as_str()).collect();
    assert_eq!(named, ["c/d", "mem.latency/level/DRAM"]);
}

/// Results that step at one run, or a run apart, each say how many others did: the
/// machine's step, not each result's own.
#[test]
fn a_change_says_how_many_other_results_changed_with_it() {
    let results = [("a/b", 5.0), ("c/d", 9.0), ("e/f", 3.0), ("g/h", 7.0)];
    let steps = [("a/b", 20, 1.2), ("c/d", 21, 0.8), ("e/f", 30, 1.2)];
    let host = HostHistory::of(
        &nightly("h", &results, &steps, 99),
        &Presentations::default(),
        OPTIONS,
    );
    let shared: Vec<(&str, usize)> = (host.changes.iter())
        .map(|c| (c.result.as_str(), c.shared_with))
        .collect();
    assert_eq!(shared, [("e/f", 0), ("c/d", 1), ("a/b", 1)]);
    let words = text::change_words(&host.changes[1]);
    assert!(
        words.ends_with("; 1 other result changed within a run of it"),
        "{words}"
    );
    assert!(!text::change_words(&host.changes[0]).contains("other result"));
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
    let host = HostHistory::of(&runs, &Presentations::default(), OPTIONS);
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
    );
    assert!(host.changes.is_empty(), "{:?}", host.changes);
}

/// The tables carry each change with its host and the kernel that changed at it, and a name
/// from a file can neither start a spreadsheet formula nor break a Markdown row.
#[test]
fn the_tables_carry_each_change_and_defuse_hostile_names() {
    let results = [("=cmd|' /C calc'!A0", 10.0)];
    let runs = nightly("h", &results, &[("=cmd|' /C calc'!A0", 25, 1.2)], 25);
    let history = History {
        hosts: vec![HostHistory::of(&runs, &Presentations::default(), OPTIONS)],
        notes: Vec::new(),
        read: Vec::new(),
    };
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
    let host = HostHistory::of(&runs, &Presentations::default(), OPTIONS);
    let timelines: Vec<&str> = host.timelines.iter().map(|t| t.result.as_str()).collect();
    assert_eq!(timelines, ["<b>/stepped"]);
    assert_eq!(host.timelines[0].points.len(), 40);
    let history = History {
        hosts: vec![host],
        notes: Vec::new(),
        read: Vec::new(),
    };
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
