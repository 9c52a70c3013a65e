//! `latlab export` and the OpenMetrics exports of a run and a fleet: every format named is
//! written, bad requests are refused with one line, label values are escaped and a file
//! that is not UTF-8 is refused, never copied into a label.

use crate::fleet::host_run;
use crate::{latlab, synthetic_run_of};
use std::path::Path;

/// A synthetic run of the system-call and call probes in `dir/run`.
fn run(dir: &Path) {
    synthetic_run_of(dir, "syscall|cpu.call")
        .args(["--out", "run"])
        .assert()
        .success();
}

/// The sample lines of an exposition, each checked to be `name{labels} value [stamp]`
/// with every label value closed: the labels' text and what follows them.
fn samples(text: &str) -> Vec<(String, String)> {
    (text.lines())
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let open = line
                .find('{')
                .unwrap_or_else(|| panic!("no labels: {line}"));
            let mut chars = line[open + 1..].char_indices();
            let mut in_value = false;
            let close = loop {
                let (i, c) = chars.next().unwrap_or_else(|| panic!("unclosed: {line}"));
                match (in_value, c) {
                    (true, '\\') => {
                        chars.next();
                    }
                    (_, '"') => in_value = !in_value,
                    (false, '}') => break open + 1 + i,
                    _ => {}
                }
            };
            (
                line[open + 1..close].to_string(),
                line[close + 1..].to_string(),
            )
        })
        .collect()
}

/// Every format named is written from a results file; the OpenMetrics file ends `# EOF`,
/// its samples unstamped, and the backfill's stamped with the run's start.
#[test]
fn export_writes_every_format_named() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path());
    let output = latlab(dir.path())
        .args(["export", "run/results.json", "--openmetrics", "m.prom"])
        .args(["--openmetrics-backfill", "b.prom", "--summary", "s.json"])
        .args(["--csv", "r.csv"])
        .assert()
        .success();
    let said = String::from_utf8_lossy(&output.get_output().stdout).to_string();
    for line in ["openmetrics: m.prom", "summary: s.json", "csv: r.csv"] {
        assert!(said.contains(line), "{said}");
    }
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let metrics = read("m.prom");
    assert!(metrics.ends_with("\n# EOF\n"), "{metrics}");
    assert!(
        metrics.contains(
            "latlab_latency_seconds{probe=\"syscall.getppid\",result=\"getppid\",\
             host=\"test-host\",cpu_model=\"Synthetic CPU\"} "
        ),
        "{metrics}"
    );
    assert!(metrics.contains("latlab_headline_seconds{operation=\"System call\""));
    for (_, rest) in samples(&metrics) {
        assert_eq!(rest.split(' ').count(), 2, "one value, no stamp: {rest}");
    }
    // The synthetic run starts at 2000-01-01T00:00:00Z.
    for (_, rest) in samples(&read("b.prom")) {
        assert!(rest.ends_with(" 946684800"), "{rest}");
    }
    assert_eq!(read("s.json"), read("run/summary.json"));
    assert!(read("r.csv").starts_with("name,"));
}

/// No output, an output that is the input, a summary given for a results file and two
/// outputs on one file are refused with one line and exit 2, writing nothing.
#[test]
fn export_refuses_bad_requests() {
    let dir = tempfile::tempdir().unwrap();
    run(dir.path());
    let cases: [(&[&str], &str); 4] = [
        (&["export", "run/results.json"], "no output named"),
        (
            &["export", "run/results.json", "--csv", "run/results.json"],
            "the results file being read",
        ),
        (
            &["export", "run/summary.json", "--openmetrics", "m.prom"],
            "a run's summary, which holds no samples",
        ),
        (
            &[
                "export",
                "run/results.json",
                "--csv",
                "x",
                "--openmetrics",
                "x",
            ],
            "x is named by two outputs",
        ),
    ];
    for (args, expected) in cases {
        let output = latlab(dir.path()).args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!dir.path().join("m.prom").exists() && !dir.path().join("x").exists());
    }
}

/// A host name with a quote, a backslash and a line break cannot end a label or a line:
/// every sample line parses, each names the host escaped. A results file with a byte that
/// is not UTF-8 is refused by `export` and skipped with a note by `fleet`.
#[test]
fn bad_label_values_are_escaped_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    host_run(&runs, "a", "evil\"} 1\n# EOF\\", "M1");
    let output = latlab(dir.path())
        .args(["export", "runs/a/results.json", "--openmetrics", "-"])
        .assert()
        .success();
    let text = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    assert_eq!(text.lines().filter(|l| *l == "# EOF").count(), 1, "{text}");
    let lines = samples(&text);
    assert!(!lines.is_empty());
    for (labels, _) in &lines {
        // The line break is made visible when the file is read, then the quote and the
        // backslashes are escaped.
        assert!(labels.contains("host=\"evil\\\"} 1"), "{labels}");
        assert!(!labels.contains('\n'));
    }

    host_run(&runs, "b", "node-b", "M1");
    let path = runs.join("b/results.json");
    let mut damaged = std::fs::read(&path).unwrap();
    let at = damaged.windows(6).position(|w| w == b"node-b").unwrap() + 5;
    damaged[at] = 0xFF;
    std::fs::write(&path, damaged).unwrap();
    let output = latlab(dir.path())
        .args(["export", "runs/b/results.json", "--openmetrics", "b.prom"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("runs/b/results.json: not JSON"), "{stderr}");
    assert!(!dir.path().join("b.prom").exists());
    let output = latlab(dir.path())
        .args(["fleet", "runs", "--openmetrics", "f.prom"])
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&output.get_output().stdout);
    assert!(
        stdout.contains("1 JSON file is not latlab results"),
        "{stdout}"
    );
    let fleet = std::fs::read_to_string(dir.path().join("f.prom")).unwrap();
    assert!(!fleet.contains("node-"), "{fleet}");
}

/// A fleet exports each host's latest run once: a host run twice has one series per
/// figure, at its later start.
#[test]
fn a_fleet_exports_each_hosts_latest_run() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    for (sub, host) in [
        ("a", "node0"),
        ("b", "node1"),
        ("c", "node2"),
        ("d", "node0"),
    ] {
        host_run(&runs, sub, host, "M1");
    }
    let later = runs.join("d/results.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&later).unwrap()).unwrap();
    json["latlab"]["started_at"] = "2000-01-02T00:00:00Z".into();
    std::fs::write(&later, serde_json::to_string(&json).unwrap()).unwrap();
    latlab(dir.path())
        .args(["fleet", "runs", "--openmetrics", "f.prom"])
        .assert()
        .success();
    let text = std::fs::read_to_string(dir.path().join("f.prom")).unwrap();
    let starts: Vec<&str> = (text.lines())
        .filter(|line| line.starts_with("latlab_run_start_time_seconds{"))
        .collect();
    assert_eq!(starts.len(), 3, "{text}");
    // 2000-01-02T00:00:00Z, the later run's start.
    assert!(
        starts
            .contains(&"latlab_run_start_time_seconds{host=\"node0\",cpu_model=\"M1\"} 9.467712e8"),
        "{text}"
    );
    let mut seen = std::collections::HashSet::new();
    for line in text.lines().filter(|line| !line.starts_with('#')) {
        let series = line.rsplit_once(' ').unwrap().0;
        assert!(seen.insert(series.to_string()), "twice: {series}");
    }
}
