//! `latlab list`, `latlab env`, help and version.

use crate::latlab;

#[test]
fn list_names_every_probe_with_its_method_timing_options_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let output = latlab(dir.path()).arg("list").assert().success();
    let stdout = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    let probes = latlab_probes::PROBES;
    let with_options = probes.iter().filter(|p| !p.options().is_empty()).count();
    assert_eq!(stdout.lines().count(), 3 * probes.len() + with_options);
    let lines: Vec<&str> = stdout.lines().collect();
    for probe in probes {
        let mut at = lines.iter().position(|l| l.starts_with(probe.id)).unwrap();
        assert!(lines[at].ends_with(probe.method), "{}", lines[at]);
        let timing = lines[at + 1].trim_start();
        assert_eq!(timing, format!("timing: {}", probe.timing_text()));
        if !probe.options().is_empty() {
            at += 1;
            let options: Vec<String> = probe
                .options()
                .iter()
                .map(|o| format!("--{}", o.name))
                .collect();
            assert_eq!(
                lines[at + 1].trim_start(),
                format!("options: {}", options.join(", "))
            );
        }
        let results = lines[at + 2].trim_start();
        assert_eq!(results, format!("results: {}", probe.results.join(", ")));
    }
}

#[test]
fn list_json_gives_each_result_name_with_the_names_it_stands_for() {
    let dir = tempfile::tempdir().unwrap();
    let output = latlab(dir.path())
        .args(["list", "--json"])
        .assert()
        .success();
    let listed: serde_json::Value = serde_json::from_slice(&output.get_output().stdout).unwrap();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), latlab_probes::PROBES.len());
    let memcpy = listed.iter().find(|p| p["id"] == "mem.memcpy").unwrap();
    assert!(memcpy["method"].as_str().unwrap().len() > 20);
    assert_eq!(memcpy["results"][0]["name"], "mem.memcpy/{size}");
    let names = regex::Regex::new(memcpy["results"][0]["regex"].as_str().unwrap()).unwrap();
    assert!(names.is_match("mem.memcpy/5.69KiB") && names.is_match("mem.memcpy/1B"));
    assert!(!names.is_match("mem.memcpy/5.69KiB/x") && !names.is_match("mem.memcpy/"));
}

#[test]
fn env_reports_the_synthetic_machine_exactly() {
    let dir = tempfile::tempdir().unwrap();
    latlab(dir.path())
        .args(["env", "--synthetic"])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "caches                  L1 data 32 KiB (shared by 1), L2 unified 1024 KiB (shared by 1), L3 unified 32768 KiB (shared by 4)\n",
        ))
        .stdout(predicates::str::contains(
            "privileges              euid 1000, RLIMIT_RTPRIO 0, RLIMIT_MEMLOCK 8388608, CAP_SYS_NICE no, CAP_IPC_LOCK no\n",
        ));
}

#[test]
fn env_describes_this_machine_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let output = latlab(dir.path())
        .args(["env", "--json"])
        .assert()
        .success();
    let value: serde_json::Value = serde_json::from_slice(&output.get_output().stdout).unwrap();
    let cpus = value["environment"]["cpu"]["logical_cpus"]
        .as_u64()
        .unwrap();
    assert_eq!(
        cpus as usize,
        std::thread::available_parallelism().unwrap().get()
    );
    assert!(value["clock"]["resolution_ns"].as_f64().unwrap() > 0.0);
    assert!(value["environment"]["kernel"].as_str().unwrap().len() > 3);
}

#[test]
fn completions_and_man_pages_come_from_the_command_line_definition() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = |args: &[&str]| {
        let output = latlab(dir.path()).args(args).assert().success();
        String::from_utf8(output.get_output().stdout.clone()).unwrap()
    };
    let bash = stdout(&["completions", "bash"]);
    assert!(bash.contains("complete -F _latlab"), "{bash}");
    for word in ["--only", "--fail-if-slower", "--save-baseline", "compare"] {
        assert!(
            bash.contains(word),
            "{word} missing from the bash completions"
        );
    }
    assert!(stdout(&["completions", "zsh"]).starts_with("#compdef latlab"));
    assert!(stdout(&["completions", "fish"]).contains("complete -c latlab"));
    let page = stdout(&["man"]);
    assert!(
        page.contains(".TH latlab 1") && page.contains("\\-\\-only"),
        "{page}"
    );
    std::fs::create_dir(dir.path().join("man")).unwrap();
    stdout(&["man", "--dir", "man"]);
    let pages = crate::files_in(&dir.path().join("man"));
    for page in [
        "latlab.1",
        "latlab-run.1",
        "latlab-compare.1",
        "latlab-completions.1",
    ] {
        assert!(
            pages.iter().any(|p| p == page),
            "{page} missing from {pages:?}"
        );
    }
}

#[test]
fn a_mistyped_argument_keeps_clap_tip_and_points_at_the_subcommand_help() {
    let dir = tempfile::tempdir().unwrap();
    latlab(dir.path())
        .args(["compare", "a.json", "b.json", "--treshold", "3"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(
            "error: unexpected argument '--treshold' found; tip: a similar argument exists: \
             '--threshold'; see `latlab compare --help`\n",
        );
}

#[test]
fn help_documents_the_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    latlab(dir.path())
        .args(["run", "--help"])
        .assert()
        .success()
        .stdout(predicates::str::contains("130  interrupted by Ctrl-C"));
}

/// Two synthetic runs of a few probes, as results files in `dir`.
fn two_runs(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let files = (dir.join("a.json"), dir.join("b.json"));
    for file in [&files.0, &files.1] {
        latlab(dir)
            .args(["run", "--synthetic", "--only", "cpu.call|cpu.branch"])
            .arg("--json")
            .arg(file)
            .assert()
            .success();
    }
    files
}

#[test]
fn compare_puts_runs_side_by_side_and_writes_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = two_runs(dir.path());
    let markdown = dir.path().join("compare.md");
    let output = latlab(dir.path())
        .arg("compare")
        .args([&a, &b])
        .arg("--markdown")
        .arg(&markdown)
        .assert()
        .success();
    let stdout = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    assert!(
        stdout.starts_with(&format!("A = {} (test-host, ", a.display())),
        "{stdout}"
    );
    // Identical synthetic runs: every difference is noise.
    let line = stdout
        .lines()
        .find(|l| l.starts_with("cpu.call/empty"))
        .unwrap();
    assert!(line.contains("1.00×") && line.contains("same ("), "{line}");
    assert!(stdout.contains("Mann–Whitney U"));
    assert!(
        stdout.ends_with("B against A: 0 slower, 0 faster, 5 same\n"),
        "{stdout}"
    );
    let markdown = std::fs::read_to_string(markdown).unwrap();
    assert!(markdown.contains("| cpu.branch/mispredict |"), "{markdown}");
}

#[test]
fn report_writes_the_page_beside_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = two_runs(dir.path());
    let output = latlab(dir.path()).arg("report").arg(&a).assert().success();
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("cpu.branch/mispredict"));
    let stdout = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    assert!(stdout.starts_with("report: "), "{stdout}");
    let elsewhere = dir.path().join("elsewhere.html");
    latlab(dir.path())
        .arg("report")
        .arg(&a)
        .arg("--out")
        .arg(&elsewhere)
        .assert()
        .success();
    assert!(elsewhere.exists());
}

/// Help fits the terminal it is printed to, puts the run's flags under headings, and quotes
/// one way: at 80 columns no line of any command's help is wider, `latlab run --help` groups
/// its flags, and no help quotes with backticks.
#[test]
fn help_is_wrapped_grouped_and_quoted_one_way() {
    let dir = tempfile::tempdir().unwrap();
    let commands: [&[&str]; 10] = [
        &[],
        &["run"],
        &["compare"],
        &["fleet"],
        &["history"],
        &["export"],
        &["report"],
        &["list"],
        &["env"],
        &["completions"],
    ];
    for command in commands {
        let output = latlab(dir.path())
            .env("COLUMNS", "80")
            .args(command)
            .arg("--help")
            .assert()
            .success();
        let help = String::from_utf8(output.get_output().stdout.clone()).unwrap();
        for line in help.lines() {
            assert!(line.chars().count() <= 80, "{command:?}: {line}");
        }
        assert!(
            !help.contains('`'),
            "{command:?} quotes with backticks:\n{help}"
        );
    }
    let output = latlab(dir.path())
        .args(["run", "--help"])
        .assert()
        .success();
    let help = String::from_utf8(output.get_output().stdout.clone()).unwrap();
    for heading in [
        "Sampling:",
        "Selection:",
        "Outputs:",
        "Memory probes:",
        "Terminal:",
    ] {
        assert!(
            help.contains(&format!("\n{heading}\n")),
            "no {heading}:\n{help}"
        );
    }
}
