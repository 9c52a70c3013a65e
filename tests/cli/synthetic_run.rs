//! A whole run on the synthetic host: exact terminal output, and every output format written.

use crate::{files_in, latlab, synthetic_run_of};

/// What both screens end with: the stability check, then the headline table.
macro_rules! stability_and_headline {
    () => {
        "\
stability check
  stability/memory-chase: 49.1 ns at the start, 49.1 ns at the end: steady (within its noise or 10%)
  stability/cache-chase: 68.8 ns at the start, 68.8 ns at the end: steady (within its noise or 25%)
  stability/core-to-core: 24.8 ns at the start, 24.8 ns at the end: steady (within its noise or 25%)

about this run
  synthetic machine (--synthetic): every figure in this run is made up

Latency numbers for this machine

operation                                     this machine         p5 … p95     2012  ratio  if an L1 hit (2012) took 1 s  measured by
Branch mispredict                                   241 ns  236 ns … 246 ns  5.00 ns  48.2×                      8.04 min  cpu.branch/mispredict
Send 1 KiB over 1 Gbps network                           —                   10.0 µs                             (5.56 h)  reference only: needs a network and a second machine
Round trip within a data centre                          —                    500 µs                          (11.6 days)  reference only: needs a second machine
Disk seek                                                —                   10.0 ms                        (7.60 months)  reference only: needs a spinning disk, which latlab does not look for
Read 1 MB sequentially from a spinning disk              —                   20.0 ms                         (1.27 years)  reference only: needs a spinning disk, which latlab does not look for
Packet California → Netherlands → California             —                    150 ms                         (9.51 years)  reference only: needs two continents
(2012: the numbers popularised by Jeff Dean and Peter Norvig; ratio = this machine ÷ 2012; rows without a figure of this machine are references, never measured)
"
    };
}

/// `--verbose`: every result in columns, every warning, then the headline table.
const EXPECTED_TABLE: &str = concat!(
    "\
latlab 0.1.0 · quick suite · test-host · Synthetic CPU, 4 CPUs · clock synthetic at 1.000 GHz, resolution 1.00 ns, timed-region overhead 20.0 ns

benchmark                median   95% CI of median  rounds ±           p5 … p95    cv     cold      samples
cpu.call/empty          49.7 ns  49.2 ns … 50.2 ns     ±0.0%  48.7 ns … 50.7 ns  1.4%        –   30 × 16384
cpu.branch/random        133 ns    132 ns … 134 ns     ±0.0%    130 ns … 136 ns  1.4%  1.33 µs   30 × 16384
cpu.branch/predictable  12.5 ns  12.4 ns … 12.6 ns     ±0.0%  12.2 ns … 12.8 ns  1.5%   125 ns  30 × 262144
cpu.branch/difference    121 ns    119 ns … 122 ns     ±0.0%    118 ns … 123 ns  1.4%        –   30 × 16384
cpu.branch/mispredict    241 ns    239 ns … 244 ns     ±0.0%    236 ns … 246 ns  1.4%        –   30 × 16384
mem.alloc/16B            120 ns    119 ns … 122 ns     ±0.0%    118 ns … 123 ns  1.4%  1.20 µs   30 × 32768
mem.alloc/128B           152 ns    151 ns … 154 ns     ±0.0%    149 ns … 155 ns  1.4%  1.52 µs   30 × 16384
mem.alloc/1KiB          96.3 ns  95.3 ns … 97.3 ns     ±0.0%  94.4 ns … 98.2 ns  1.4%   963 ns   30 × 32768
  median: the middle sample's time per operation (≈: extrapolated, not measured)
  95% CI of median: where the median lies, 19 times in 20 (distribution-free)
  rounds ±: how far the rounds' medians lie from the median, at most
  p5 … p95: the 5th to the 95th percentile of the samples
  cv: the samples' standard deviation over their mean
  cold: the first call, timed alone before sampling ('<': below the clock's step)
  samples: samples × calls timed in each

",
    stability_and_headline!()
);

/// The first screen: a line per probe with its key figures, then the headline table.
const EXPECTED_FIRST_SCREEN: &str = concat!(
    "\
latlab 0.1.0 · quick suite · test-host · Synthetic CPU, 4 CPUs · clock synthetic at 1.000 GHz, resolution 1.00 ns, timed-region overhead 20.0 ns

probe       key figures
cpu.call    empty 49.7 ns
cpu.branch  mispredict 241 ns · random 133 ns · predictable 12.5 ns · difference 121 ns
mem.alloc   16B 120 ns · 128B 152 ns · 1KiB 96.3 ns

",
    stability_and_headline!()
);

#[test]
fn the_table_is_exactly_as_expected() {
    let dir = tempfile::tempdir().unwrap();
    synthetic_run_of(dir.path(), "cpu.call|cpu.branch|mem.alloc")
        .args(["--verbose"])
        .assert()
        .success()
        .stdout(EXPECTED_TABLE)
        .stderr(
            predicates::str::is_match(
                "^results: latlab-results/results.json\nresults: latlab-results/summary.json\n\
             report: latlab-results/report.html\n\
             time: [0-9.]+ s: probes [0-9.]+ s, stability checks [0-9.]+ s, results [0-9.]+ s, \
             page and plots [0-9.]+ s\n$",
            )
            .unwrap(),
        );
    assert_eq!(files_in(dir.path()), crate::A_RUNS_FILES);
}

/// `latlab` and `latlab run` print the same first screen: the key figures of each probe,
/// the headline table last.
#[test]
fn the_first_screen_is_exactly_as_expected() {
    for command in [&["run"][..], &[][..]] {
        let dir = tempfile::tempdir().unwrap();
        latlab(dir.path())
            .args(command)
            .args(["--synthetic", "--only", "cpu.call|cpu.branch|mem.alloc"])
            .assert()
            .success()
            .stdout(EXPECTED_FIRST_SCREEN);
    }
}

#[test]
fn no_arguments_runs_the_quick_suite_of_every_probe() {
    let stdout = &crate::every_probe_run().stdout;
    assert!(stdout.contains("quick suite"));
    // The default command ends with the headline table.
    let headline = stdout
        .find("\nLatency numbers for this machine\n")
        .expect("the headline table");
    assert!(stdout[headline..].contains("Branch mispredict"));
    assert!(stdout[headline..].contains("reference only: needs two continents"));
    // Every row with a figure has its spread: the points the headline reads are sampled
    // enough for a p5 … p95, even inside a sweep.
    let short: Vec<&str> = stdout[headline..]
        .lines()
        .filter(|line| line.contains("too few"))
        .collect();
    assert!(short.is_empty(), "{short:#?}");
    for probe in latlab_probes::PROBES {
        if probe.id.starts_with("gpu.") {
            continue;
        }
        assert!(
            stdout.contains(&format!("\n{} ", probe.id)),
            "{} missing",
            probe.id
        );
    }
    // The GPU family: its results where there is a GPU, else one line saying why not.
    assert!(
        stdout.contains("\ngpu.launch ") || stdout.contains("\n  gpu: skipped — "),
        "{stdout}"
    );
}

#[test]
fn every_format_is_written_where_asked() {
    let dir = tempfile::tempdir().unwrap();
    synthetic_run_of(dir.path(), "syscall")
        .args(["--json", "r.json"])
        .args(["--csv", "r.csv", "--markdown", "r.md", "--samples", "7"])
        .assert()
        .success();
    // Each is added to the results directory, as hyperfine's --export-* are.
    assert_eq!(
        files_in(dir.path()),
        [
            "latlab-results",
            "latlab-results/report.html",
            "latlab-results/results.json",
            "latlab-results/summary.json",
            "r.csv",
            "r.json",
            "r.md"
        ]
    );

    let csv = std::fs::read_to_string(dir.path().join("r.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("name,probe,kind,verdict,unit,median,")
    );
    let row = lines.next().unwrap();
    assert!(row.starts_with("syscall.getppid/getppid,syscall.getppid,timed_loop,measured,ns,"));
    assert_eq!(lines.next(), None);

    let markdown = std::fs::read_to_string(dir.path().join("r.md")).unwrap();
    assert!(markdown.contains("| benchmark | median | 95% CI of median |"));
    assert!(
        markdown.contains("| syscall.getppid/getppid | 46.5 ns |"),
        "{markdown}"
    );
}

#[test]
fn a_machine_format_on_stdout_moves_the_table_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let output = synthetic_run_of(dir.path(), "cpu.call")
        .args(["--csv", "-"])
        .assert()
        .success();
    let stdout = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    let stderr = String::from_utf8(output.get_output().stderr.clone()).unwrap();
    assert!(stdout.starts_with("name,probe,"), "{stdout}");
    assert!(
        (stderr.lines()).any(|l| l.starts_with("cpu.call ") && l.ends_with("empty 49.7 ns")),
        "{stderr}"
    );
}

#[test]
fn a_device_target_gets_one_document_and_stays_a_device() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let output = synthetic_run_of(dir.path(), "cpu|syscall")
        .args(["--json", "/dev/stdout"])
        .assert()
        .success();
    let stdout = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    assert_eq!(
        stdout.matches("\"latlab_schema_version\"").count(),
        1,
        "{stdout}"
    );
    let kind = std::fs::metadata("/dev/null").unwrap().file_type();
    assert!(kind.is_char_device());
    synthetic_run_of(dir.path(), "syscall")
        .args(["--json", "/dev/null"])
        .assert()
        .success();
    let kind = std::fs::metadata("/dev/null").unwrap().file_type();
    assert!(kind.is_char_device(), "/dev/null was replaced");
}

#[test]
fn mem_runs_the_memory_family_only() {
    let dir = tempfile::tempdir().unwrap();
    let output = latlab(dir.path())
        .args([
            "mem",
            "--synthetic",
            "--max-size",
            "64KiB",
            "--verbose",
            "--json",
            "-",
        ])
        .assert()
        .success();
    let value: serde_json::Value = serde_json::from_slice(&output.get_output().stdout).unwrap();
    let probes = value["latlab"]["probes"].as_array().unwrap();
    let ids: Vec<&str> = probes.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "mem.alloc",
            "mem.latency",
            "mem.bandwidth",
            "mem.memcpy",
            "mem.loaded",
            "mem.numa"
        ]
    );
    // The largest working set, or copy (whose working set is twice as big), or chase under
    // load or across nodes, is --max-size.
    for (sweep, key) in probes[1..].iter().zip([
        "working_set_bytes",
        "working_set_bytes",
        "copy_bytes",
        "working_set_bytes",
        "working_set_bytes",
    ]) {
        let largest = sweep["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["parameters"][key].as_u64())
            .max();
        assert_eq!(largest, Some(64 << 10), "{}", sweep["id"]);
    }
    let names: Vec<&str> = probes[3]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"mem.memcpy/70B") && names.contains(&"mem.memcpy/64KiB"));
    // Throughputs get a rate column; the table goes to stderr when JSON takes stdout.
    let table = String::from_utf8_lossy(&output.get_output().stderr).into_owned();
    let header = table.lines().find(|l| l.starts_with("benchmark")).unwrap();
    assert!(header.contains("  rate  "), "{header}");
    let read = table
        .lines()
        .find(|l| l.starts_with("mem.bandwidth/read/all/64KiB "))
        .unwrap();
    assert!(read.contains(" GB/s") || read.contains(" MB/s"), "{read}");
    // --verbose shows every point of the sweeps, the in-between ones too.
    assert!(table.contains("\nmem.memcpy/64B ") && table.contains("\nmem.memcpy/70B "));
    // --json adds a copy: the results directory is written as without it.
    let files = files_in(dir.path());
    for file in ["latlab-results/results.json", "latlab-results/report.html"] {
        assert!(
            files.iter().any(|f| f == file),
            "{file} missing from {files:?}"
        );
    }
}

#[test]
fn plots_go_into_the_results_directory() {
    let dir = tempfile::tempdir().unwrap();
    let output = latlab(dir.path())
        .args(["mem", "--synthetic", "--max-size", "64KiB", "--out", "res"])
        .assert()
        .success();
    let mut expected: Vec<String> = ["latency", "bandwidth", "memcpy", "loaded"]
        .iter()
        .flat_map(|p| ["png", "svg"].map(|ext| format!("res/mem-{p}.{ext}")))
        .collect();
    expected.extend([
        "res".into(),
        "res/report.html".into(),
        "res/results.json".into(),
        "res/summary.json".into(),
    ]);
    expected.sort();
    assert_eq!(files_in(dir.path()), expected);
    let stderr = String::from_utf8_lossy(&output.get_output().stderr);
    assert!(
        stderr.contains("plots: res/{mem-latency,mem-bandwidth,mem-memcpy,mem-loaded}.{svg,png}\n"),
        "{stderr}"
    );
    let svg = std::fs::read_to_string(dir.path().join("res/mem-memcpy.svg")).unwrap();
    assert!(svg.contains("time per added byte") && svg.contains("derivative of the minimum"));
    // SI-scaled axes: a time never reads as a bare count of nanoseconds.
    let si_time = regex::Regex::new(r">-?[0-9.]+ (ps|ns|µs|ms)</text>").unwrap();
    assert!(si_time.is_match(&svg), "no SI time on an axis");
}

#[test]
fn only_and_skip_select_results_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let run = |only: &str, skip: &str| {
        let output = latlab(dir.path())
            .args(["run", "--synthetic", "--max-size", "64KiB", "--json", "-"])
            .args(["--only", only, "--skip", skip])
            .assert()
            .success();
        let doc: serde_json::Value = serde_json::from_slice(&output.get_output().stdout).unwrap();
        doc["latlab"]["probes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|probe| {
                let results: Vec<String> = probe["results"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| r["name"].as_str().unwrap().to_string())
                    .collect();
                (probe["id"].as_str().unwrap().to_string(), results)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        run("cpu.branch/random|mem.memcpy/1KiB$", "^clock"),
        [
            (
                "cpu.branch".to_string(),
                vec!["cpu.branch/random".to_string()]
            ),
            (
                "mem.memcpy".to_string(),
                vec!["mem.memcpy/1KiB".to_string()]
            ),
        ]
    );
    let branch = run("cpu.branch", "/(mispredict|difference)");
    assert_eq!(branch.len(), 1);
    assert_eq!(branch[0].1, ["cpu.branch/random", "cpu.branch/predictable"]);
}
