//! The OpenMetrics exports read by the real Prometheus: a real run of the memory latency
//! probe (for its cache levels) and a fleet of three hosts made from it are exported, then
//! - `promtool check metrics` accepts every export;
//! - `promtool tsdb create-blocks-from openmetrics` ingests the fleet's backfill;
//! - a Prometheus server started on those blocks answers a PromQL query for a host's L2
//!   latency, at its run's start, with the value exported;
//! - the alerting rule the book gives (docs/src/fleets.md) passes `promtool check rules`, and `promtool test rules`
//!   shows it fires for the one slow host of a model and no other.
//!
//! It needs Debian's `prometheus` package (which brings `promtool`), so it is in the ignored
//! tier; `.ci/run` installs it. Without it the test fails and says so.

use crate::latlab;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The server this test started, stopped however the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn promtool(args: &[&str], dir: &Path) -> String {
    let output = Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("promtool, from Debian's prometheus package");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "promtool {args:?}: {text}");
    text
}

/// `promtool check metrics` reads the exposition on its standard input.
fn check_metrics(path: &Path) {
    let output = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(path).unwrap())
        .output()
        .expect("promtool, from Debian's prometheus package");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}: {said}", path.display());
}

/// A plain HTTP GET of `path` on the local port: the status line's code and the body.
fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let code = response.split(' ').nth(1)?.parse().ok()?;
    let body = response.split_once("\r\n\r\n")?.1.to_string();
    Some((code, body))
}

/// A query's text as a URL's query component has it.
fn url_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The alerting rule as the book's page on fleets gives it, between its markers.
fn documented_rule() -> String {
    rule_of("fleets.md")
}

/// The alerting rule the book's page `page` gives between its markers.
fn rule_of(page: &str) -> String {
    let path = format!("{}/docs/src/{page}", env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(path).unwrap();
    let start = readme
        .find("<!-- alert-rule-start -->")
        .expect("the rule's start");
    let end = readme
        .find("<!-- alert-rule-end -->")
        .expect("the rule's end");
    let block = &readme[start..end];
    let yaml = block.split_once("```yaml\n").unwrap().1;
    yaml.split_once("```").unwrap().0.to_string()
}

/// A fleet of three hosts from one real run: the run as `node0`, and as `node1` and
/// `node2` with their figures as they are (the exports need hosts, not new figures).
fn fleet_of(run: &Path, fleet: &Path) {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run).unwrap()).unwrap();
    for host in ["node0", "node1", "node2"] {
        let mut copy = json.clone();
        copy["latlab"]["environment"]["host_name"] = host.into();
        let dir = fleet.join(host);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("results.json"), copy.to_string()).unwrap();
    }
}

/// Starts a Prometheus server on the blocks in `dir/data`, waits until it is ready, and
/// asks it `query` at `time` (seconds): the one series' value.
fn answer_at(dir: &Path, query: &str, time: u64) -> f64 {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(dir.join("prometheus.yml"), "global: {}\n").unwrap();
    let _server = Server(
        Command::new("prometheus")
            .arg("--config.file=prometheus.yml")
            .arg("--storage.tsdb.path=data")
            .arg("--storage.tsdb.retention.time=100y")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus, from Debian's prometheus package"),
    );
    let started = Instant::now();
    while get(port, "/-/ready").is_none_or(|(code, _)| code != 200) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the server was not ready within a minute"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (code, body) = get(
        port,
        &format!("/api/v1/query?query={}&time={time}", url_encoded(query)),
    )
    .expect("an answer");
    assert_eq!(code, 200, "{body}");
    let answer: serde_json::Value = serde_json::from_str(&body).unwrap();
    let results = answer["data"]["result"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{body}");
    results[0]["value"][1].as_str().unwrap().parse().unwrap()
}

#[test]
#[ignore = "needs Debian's prometheus package (promtool and the server)"]
fn prometheus_reads_the_exports_and_answers_with_the_exported_value() {
    let dir = tempfile::tempdir().unwrap();
    let _alone = crate::machine_alone();
    latlab(dir.path())
        .args(["run", "-q", "--only", "mem.latency", "--max-size", "4MiB"])
        .args(["--out", "run", "--openmetrics", "run.prom"])
        .assert()
        .success();
    fleet_of(
        &dir.path().join("run/results.json"),
        &dir.path().join("fleet"),
    );
    latlab(dir.path())
        .args(["fleet", "fleet", "--openmetrics", "fleet.prom"])
        .args(["--openmetrics-backfill", "fleet.om"])
        .assert()
        .success();
    latlab(dir.path())
        .args([
            "export",
            "run/results.json",
            "--openmetrics-backfill",
            "run.om",
        ])
        .assert()
        .success();
    for export in ["run.prom", "fleet.prom", "run.om", "fleet.om"] {
        check_metrics(&dir.path().join(export));
    }
    let exported = std::fs::read_to_string(dir.path().join("fleet.om")).unwrap();
    let prefix = "latlab_latency_seconds{probe=\"mem.latency\",result=\"level/L2\",host=\"node1\",";
    let line = (exported.lines())
        .find(|line| line.starts_with(prefix))
        .unwrap_or_else(|| panic!("this machine's run found no L2 level: {exported}"));
    let mut fields = line.rsplit(' ');
    let stamp: u64 = fields.next().unwrap().parse().unwrap();
    let value: f64 = fields.next().unwrap().parse().unwrap();

    promtool(
        &[
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            "fleet.om",
            "data",
        ],
        dir.path(),
    );
    let query = "latlab_latency_seconds{probe=\"mem.latency\",result=\"level/L2\",host=\"node1\"}";
    assert_eq!(answer_at(dir.path(), query, stamp), value);

    std::fs::write(dir.path().join("rules.yml"), documented_rule()).unwrap();
    promtool(&["check", "rules", "rules.yml"], dir.path());
    std::fs::write(dir.path().join("rules_test.yml"), RULE_TEST).unwrap();
    promtool(&["test", "rules", "rules_test.yml"], dir.path());
}

/// A history's changes as gauges: `promtool check metrics` accepts the export, and the
/// alerting rule the book's history page gives fires for a step slower than 10% that began
/// within two days, and for no other.
#[test]
#[ignore = "needs Debian's prometheus package (promtool)"]
fn prometheus_reads_the_history_export_and_its_rule_fires_on_a_recent_step() {
    let dir = tempfile::tempdir().unwrap();
    crate::history::nightly(dir.path(), 6);
    latlab(dir.path())
        .args(["history", "nightly", "--openmetrics", "history.prom"])
        .assert()
        .success();
    check_metrics(&dir.path().join("history.prom"));
    let exported = std::fs::read_to_string(dir.path().join("history.prom")).unwrap();
    assert!(exported.contains("latlab_change_ratio{"), "{exported}");
    std::fs::write(dir.path().join("rules.yml"), rule_of("history.md")).unwrap();
    promtool(&["check", "rules", "rules.yml"], dir.path());
    std::fs::write(dir.path().join("rules_test.yml"), HISTORY_RULE_TEST).unwrap();
    promtool(&["test", "rules", "rules_test.yml"], dir.path());
}

/// Three results' newest changes: 1.25× from a minute in, 1.05× from a minute in, and 1.3×
/// from long before the evaluation. The rule fires for the first alone.
const HISTORY_RULE_TEST: &str = r#"rule_files:
  - rules.yml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'latlab_change_ratio{probe="mem.latency",result="level/DRAM",kind="machine",host="a",cpu_model="M"}'
        values: '1.25+0x60'
      - series: 'latlab_change_start_time_seconds{probe="mem.latency",result="level/DRAM",kind="machine",host="a",cpu_model="M"}'
        values: '60+0x60'
      - series: 'latlab_change_ratio{probe="syscall.getppid",result="getppid",kind="own",host="a",cpu_model="M"}'
        values: '1.05+0x60'
      - series: 'latlab_change_start_time_seconds{probe="syscall.getppid",result="getppid",kind="own",host="a",cpu_model="M"}'
        values: '60+0x60'
      - series: 'latlab_change_ratio{probe="proc.pipe",result="round-trip",kind="own",host="a",cpu_model="M"}'
        values: '1.3+0x60'
      - series: 'latlab_change_start_time_seconds{probe="proc.pipe",result="round-trip",kind="own",host="a",cpu_model="M"}'
        values: '-1000000+0x60'
    alert_rule_test:
      - eval_time: 30m
        alertname: LatlabStepSlower
        exp_alerts:
          - exp_labels:
              severity: warning
              probe: mem.latency
              result: level/DRAM
              kind: machine
              host: a
              cpu_model: M
            exp_annotations:
              summary: "a: mem.latency/level/DRAM stepped 1.25× (machine) at its newest change"
"#;

/// Four hosts of model M (one 40% slower than the others) and one of model N alone: the
/// rule fires for the slow host only, after its hour.
const RULE_TEST: &str = r#"rule_files:
  - rules.yml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'latlab_latency_seconds{probe="mem.latency",result="level/DRAM",host="a",cpu_model="M"}'
        values: '0.0000001+0x120'
      - series: 'latlab_latency_seconds{probe="mem.latency",result="level/DRAM",host="b",cpu_model="M"}'
        values: '0.000000102+0x120'
      - series: 'latlab_latency_seconds{probe="mem.latency",result="level/DRAM",host="c",cpu_model="M"}'
        values: '0.000000099+0x120'
      - series: 'latlab_latency_seconds{probe="mem.latency",result="level/DRAM",host="slow",cpu_model="M"}'
        values: '0.00000014+0x120'
      - series: 'latlab_latency_seconds{probe="mem.latency",result="level/DRAM",host="other",cpu_model="N"}'
        values: '0.0000003+0x120'
    alert_rule_test:
      - eval_time: 30m
        alertname: LatlabMainMemorySlow
        exp_alerts: []
      - eval_time: 90m
        alertname: LatlabMainMemorySlow
        exp_alerts:
          - exp_labels:
              severity: warning
              probe: mem.latency
              result: level/DRAM
              host: slow
              cpu_model: M
            exp_annotations:
              summary: "slow: main memory takes 140ns, more than 20% above its CPU model's fleet median"
"#;
