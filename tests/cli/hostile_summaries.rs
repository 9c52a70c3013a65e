//! A fleet's summaries as a hostile user or a broken copy leaves them: damaged, truncated,
//! edited apart from their own results, older than the results beside them, too large to
//! hold, or a results file that only looks like one. Each test here failed before its fix.

use crate::fleet::{host_run, summarise};
use crate::latlab;
use std::path::Path;

/// `latlab fleet DIR ARGS` in `dir`: its status, standard output and standard error.
fn fleet(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let output = latlab(dir).arg("fleet").args(args).output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Three hosts, each with its summary beside its results: `runs/a`, `runs/b`, `runs/c`.
fn three_summarised_hosts(dir: &Path) {
    for host in ["a", "b", "c"] {
        let sub = format!("runs/{host}");
        host_run(dir, &sub, host, "Model X");
        summarise(dir, &sub);
    }
}

/// Edits the JSON document at `path`, writing its first key first again (a summary is
/// known by its first key; serde_json's map sorts the keys).
fn edit_summary(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let text = std::fs::read_to_string(path).unwrap();
    let first_key: String = text.split('"').nth(1).unwrap().to_string();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut json);
    let object = json.as_object_mut().unwrap();
    let first = object.remove(&first_key).unwrap();
    let rest = serde_json::to_string(object).unwrap();
    let separator = if rest == "{}" { "" } else { "," };
    let text = format!("{{\"{first_key}\":{first}{separator}{}", &rest[1..]);
    std::fs::write(path, text).unwrap();
}

/// A summary that cannot be read (another document, a truncated one) gives way to the
/// results file beside it: every host is listed, and the note says which summaries were
/// passed over and why. A truncated summary is called damaged. Before: 1 host of 3, exit 0.
#[test]
fn a_damaged_summary_gives_way_to_the_results_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    three_summarised_hosts(dir.path());
    let runs = dir.path().join("runs");
    std::fs::write(runs.join("a/summary.json"), "{\"foo\":1}").unwrap();
    let whole = std::fs::read(runs.join("b/summary.json")).unwrap();
    std::fs::write(runs.join("b/summary.json"), &whole[..whole.len() / 2]).unwrap();
    let (status, stdout, stderr) = fleet(dir.path(), &["runs"]);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stdout.contains("3 hosts"), "{stdout}");
    assert!(
        stdout.contains("2 summary.json files could not stand for the results.json beside them"),
        "{stdout}"
    );
    assert!(stdout.contains("damaged: it is truncated"), "{stdout}");
    assert!(
        !stdout.contains("not a latlab summary this latlab reads (EOF"),
        "{stdout}"
    );
}

/// An edit of a JSON document.
type Edit = dyn Fn(&mut serde_json::Value);

/// A summary is held to the results file's rules: a headline of -118 ns, of 1e-300 ns, of
/// 5 ns beside its own result's 118 ns or of no samples, a result named twice, and a start
/// that is not a time, are refused (and the results file beside it read instead). Before:
/// each was read as it was.
#[test]
fn a_summary_edited_apart_from_its_results_is_not_believed() {
    let dir = tempfile::tempdir().unwrap();
    let edits: [(&str, Box<Edit>); 6] = [
        (
            "unsampled",
            Box::new(|json| json["headline"][0]["samples"] = 0.into()),
        ),
        (
            "undated",
            Box::new(|json| json["started_at"] = "garbage".into()),
        ),
        (
            "negative",
            Box::new(|json| json["headline"][0]["median_ns"] = (-118.0).into()),
        ),
        (
            "tiny",
            Box::new(|json| json["headline"][0]["median_ns"] = 1e-300.into()),
        ),
        (
            "apart",
            Box::new(|json| {
                let result = json["headline"][0]["result"].clone();
                let results = json["results"].as_array_mut().unwrap();
                let named = results.iter_mut().find(|r| r["name"] == result).unwrap();
                named["median_ns"] = 118.0.into();
                named["median_ci95_ns"] = serde_json::json!([118.0, 118.0]);
                json["headline"][0]["median_ns"] = 5.0.into();
            }),
        ),
        (
            "twice",
            Box::new(|json| {
                let results = json["results"].as_array_mut().unwrap();
                let first = results[0].clone();
                results.push(first);
            }),
        ),
    ];
    for (host, edit) in &edits {
        let sub = format!("runs/{host}");
        host_run(dir.path(), &sub, host, "Model X");
        summarise(dir.path(), &sub);
        edit_summary(&dir.path().join(&sub).join("summary.json"), edit);
    }
    let (status, stdout, stderr) = fleet(dir.path(), &["runs"]);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stdout.contains("6 hosts"), "{stdout}");
    assert!(
        stdout.contains("6 summary.json files could not stand for"),
        "{stdout}"
    );
    assert!(stdout.contains("and 3 more"), "{stdout}");
    // Alone (no results file beside them), such summaries are skipped, not read.
    for host in ["negative", "tiny", "apart", "twice", "unsampled", "undated"] {
        std::fs::remove_file(dir.path().join("runs").join(host).join("results.json")).unwrap();
    }
    let (status, _, stderr) = fleet(dir.path(), &["runs"]);
    assert_eq!(status, Some(2), "{stderr}");
    // The three others are "and 3 more".
    for why in ["below 1e-6 ns", "makes it 118 ns", "and 3 more"] {
        assert!(stderr.contains(why), "{why}: {stderr}");
    }
}

/// A summary older than the results file written after it (another run's) gives way to
/// it, and the note names both starts; a copy that wrote the two a moment apart keeps the
/// summary. Before: the stale summary was used silently.
#[test]
fn a_summary_of_an_earlier_run_gives_way_to_the_newer_results() {
    let dir = tempfile::tempdir().unwrap();
    host_run(dir.path(), "runs/a", "a", "Model X");
    summarise(dir.path(), "runs/a");
    let results = dir.path().join("runs/a/results.json");
    edit_summary(&results, |json| {
        json["latlab"]["started_at"] = "2031-01-01T00:00:00Z".into();
    });
    // Written a minute after the summary.
    let summary_time = std::fs::metadata(dir.path().join("runs/a/summary.json"))
        .unwrap()
        .modified()
        .unwrap();
    let later = summary_time + std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&results)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let (status, stdout, stderr) = fleet(dir.path(), &["runs"]);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(
        stdout.contains(
            "results.json beside it, written later, is of the run started 2031-01-01T00:00:00Z"
        ),
        "{stdout}"
    );
    // The same start: the summary stands.
    edit_summary(&results, |json| {
        json["latlab"]["started_at"] = "2000-01-01T00:00:00Z".into();
    });
    let (status, stdout, stderr) = fleet(dir.path(), &["runs"]);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(!stdout.contains("could not stand for"), "{stdout}");
}

/// A summary far larger than any latlab writes is refused from its size, before it is
/// read, and skipped with a note: under a memory limit it used to abort the fleet.
#[test]
fn a_summary_too_large_to_be_one_is_skipped_unread() {
    let dir = tempfile::tempdir().unwrap();
    host_run(dir.path(), "runs/a", "a", "Model X");
    let big = dir.path().join("runs/big.json");
    let file = std::fs::File::create(&big).unwrap();
    std::io::Write::write_all(&mut &file, b"{\"latlab_summary_version\":1,").unwrap();
    // Sparse: 100 MiB that take no disk.
    file.set_len(100 << 20).unwrap();
    let (status, stdout, stderr) = fleet(dir.path(), &["runs"]);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stdout.contains("1 host"), "{stdout}");
    assert!(
        stdout.contains("a summary of 100 MiB, more than the 64 MiB a summary latlab writes"),
        "{stdout}"
    );
}

/// A summary's texts are bounded as read: a suite of a mebibyte is cut to one short line
/// (its machine's fields are), a method id past a name's length refuses the summary, which
/// gives way to the results beside it, and neither is quoted whole. Before: the texts were
/// kept, and eight such summaries took 2.1 GB and wrote 428 MB of JSON.
#[test]
fn a_summarys_long_texts_are_cut_or_refused_never_kept() {
    let dir = tempfile::tempdir().unwrap();
    three_summarised_hosts(dir.path());
    edit_summary(&dir.path().join("runs/b/summary.json"), |json| {
        json["suite"] = "s".repeat(1 << 20).into();
    });
    edit_summary(&dir.path().join("runs/c/summary.json"), |json| {
        json["results"][0]["method_id"] = "m".repeat(1 << 20).into();
    });
    let (status, stdout, stderr) = fleet(dir.path(), &["runs"]);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stdout.contains("3 hosts"), "{stdout}");
    assert!(
        stdout.contains("a result's method id is 1048576 bytes long"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("{}…", "s".repeat(256))),
        "{stdout}"
    );
    assert!(stdout.len() + stderr.len() < 100_000, "{}", stdout.len());
}

/// A results file whose host is named as the summary's key is a results file: only a
/// document's first key makes a summary. Before: `report` refused it as a summary.
#[test]
fn a_results_file_is_not_taken_for_a_summary_by_a_name_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = crate::results_file(dir.path(), "r.json");
    edit_summary(&path, |json| {
        json["latlab"]["environment"]["host_name"] = "latlab_summary_version".into();
    });
    latlab(dir.path())
        .args(["report", "r.json", "--out", "r.html"])
        .assert()
        .success();
}

/// A fleet of files none of which can be read says why each could not, in its one line.
/// Before: only how many.
#[test]
fn a_fleet_of_unreadable_files_says_why() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("runs")).unwrap();
    std::fs::write(dir.path().join("runs/x.json"), "{\"foo\":1}").unwrap();
    std::fs::write(dir.path().join("runs/y.json"), "[1,").unwrap();
    let (status, stdout, stderr) = fleet(dir.path(), &["runs"]);
    assert_eq!(status, Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no latlab_schema_version"), "{stderr}");
    assert!(stderr.contains("truncated"), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
}

/// Two machines that share a name but not a CPU model are two series in OpenMetrics, as
/// they are two hosts in the table; a host's earlier run is left out and said. Before: one
/// `host="vm"` series, silently.
#[test]
fn openmetrics_keeps_machines_that_share_a_name() {
    let dir = tempfile::tempdir().unwrap();
    host_run(dir.path(), "runs/one", "vm", "Model X");
    host_run(dir.path(), "runs/two", "vm", "Model Y");
    host_run(dir.path(), "runs/old", "vm", "Model Y");
    edit_summary(&dir.path().join("runs/old/results.json"), |json| {
        json["latlab"]["started_at"] = "1999-01-01T00:00:00Z".into();
    });
    let (status, stdout, stderr) = fleet(dir.path(), &["runs", "--openmetrics", "f.prom"]);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stdout.contains("3 hosts"), "{stdout}");
    let exported = std::fs::read_to_string(dir.path().join("f.prom")).unwrap();
    let starts: Vec<&str> = (exported.lines())
        .filter(|l| l.starts_with("latlab_run_start_time_seconds{"))
        .collect();
    assert_eq!(starts.len(), 2, "{exported}");
    assert!(starts.iter().any(|l| l.contains("cpu_model=\"Model X\"")));
    assert!(starts.iter().any(|l| l.contains("cpu_model=\"Model Y\"")));
    assert!(
        stderr.contains("1 earlier run(s) of a host whose later run it carries left out"),
        "{stderr}"
    );
    assert!(stderr.contains("vm@1999-01-01T00:00:00Z"), "{stderr}");
}
