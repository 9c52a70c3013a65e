//! The HTML report in a real browser: headless Chromium loads the page of a run, with no
//! console message (a failed fetch or a script error would print one), and shows the
//! headline table and the plots. Needs the `chromium` package (`.ci/run` installs it).

use crate::latlab;
use std::process::Command;

fn chromium() -> String {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| {
            Command::new(name)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect("this test needs Chromium: apt-get install chromium")
        .to_string()
}

#[test]
fn chromium_renders_the_report_without_errors() {
    let dir = tempfile::tempdir().unwrap();
    latlab(dir.path())
        .args(["run", "--synthetic", "--max-size", "64KiB", "--out", "res"])
        .args([
            "--only",
            "cpu|mem|thread.core_to_core|ipc.latency|file.read",
        ])
        .assert()
        .success();
    let page = dir.path().join("res/report.html");
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(size < 2 << 20, "the report is {size} bytes");
    let output = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(output.status.success(), "chromium failed: {output:?}");
    let dom = String::from_utf8_lossy(&output.stdout);
    let log = String::from_utf8_lossy(&output.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    // Nothing to fetch: the only URLs are the SVG and XLink namespaces, which name, not load.
    for (at, _) in dom.match_indices("http") {
        assert!(
            dom[at..].starts_with("http://www.w3.org/"),
            "a URL in the page: {}",
            &dom[at..(at + 60).min(dom.len())]
        );
    }
    assert!(dom.contains("<table id=\"headline\">"), "no headline table");
    assert!(dom.contains("Branch mispredict"));
    assert!(
        dom.contains("<figure id=\"mem-latency\"><svg"),
        "no memory plot"
    );
    assert!(
        dom.contains("<figure id=\"core-to-core-cas\"><svg"),
        "no core-to-core matrix"
    );
    assert!(
        dom.contains("<figure id=\"ipc.latency/pair0/other\"><svg"),
        "no histogram"
    );
}
