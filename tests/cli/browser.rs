//! The HTML report in a real browser: headless Chromium loads the page of a run, with no
//! console message (a failed fetch or a script error would print one), and shows the
//! headline table and the plots; laid out at a phone's width and a desktop's, the page body
//! never scrolls sideways, every figure has a caption, plot text stays readable and every ⚠
//! explains itself and links to its group. Needs the `chromium` package, so these tests are
//! in the ignored tier (`.ci/run` installs it and runs them; without it they fail).

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

/// Loads `page` in a frame `width` CSS pixels wide (a window cannot be made narrower than
/// 500 px), runs [`LAYOUT_CHECKS`] on it once loaded, and returns what they found.
fn layout_at(page: &std::path::Path, width: u32) -> serde_json::Value {
    let html = std::fs::read_to_string(page).unwrap();
    let attribute = html.replace('&', "&amp;").replace('"', "&quot;");
    let host = format!(
        "<!DOCTYPE html><html><body style=\"margin:0\"><iframe id=\"page\" style=\"border:0\" \
         width=\"{width}\" height=\"2000\" srcdoc=\"{attribute}\"></iframe><script>\
         document.getElementById('page').addEventListener('load', () => {{ {LAYOUT_CHECKS} }});\
         </script></body></html>"
    );
    let copy = page.with_file_name(format!("checked-at-{width}.html"));
    std::fs::write(&copy, host).unwrap();
    let output = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
        ])
        .args([
            "--window-size=1500,2200",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", copy.display()))
        .output()
        .unwrap();
    assert!(output.status.success(), "chromium failed: {output:?}");
    let dom = String::from_utf8_lossy(&output.stdout);
    let start = dom
        .find("<pre id=\"layout-checks\">")
        .expect("the checks ran")
        + 24;
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap()
}

/// Measured in the framed page: its viewport and its body's width, figures without a
/// caption, the smallest text drawn in a plot, elements sticking out of the page that are not
/// inside a scrolling box, ⚠ marks without a title or a target, how far the headline table
/// runs past its box, and whether a click on a table's "median" heading sorts its rows and
/// that heading stays in view (sticky).
const LAYOUT_CHECKS: &str = r#"
const win = document.getElementById('page').contentWindow;
const doc = win.document;
const width = doc.documentElement.clientWidth;
const figures = [...doc.querySelectorAll('figure')];
const uncaptioned = figures
  .filter(f => !(f.querySelector('figcaption')?.textContent.trim().length > 20))
  .map(f => f.id);
let smallest = 1e9;
for (const t of doc.querySelectorAll('figure svg text')) {
  const h = t.getBoundingClientRect().height;
  if (h > 0 && t.textContent.trim()) smallest = Math.min(smallest, h);
}
const sticking = [...doc.body.querySelectorAll('*')]
  .filter(e => !e.closest('.scroll') && e.getBoundingClientRect().right > width + 0.5)
  .map(e => e.tagName + (e.id ? '#' + e.id : ''))
  .slice(0, 8);
const marks = [...doc.querySelectorAll('a.warn, a.fail')];
const unexplained = marks
  .filter(a => !a.title || !doc.getElementById(a.getAttribute('href').slice(1)))
  .map(a => a.outerHTML)
  .slice(0, 4);
const headline = doc.getElementById('headline');
const sortable = [...doc.querySelectorAll('table.sortable')]
  .find(t => t.tBodies[0].rows.length > 2);
const heading = sortable.tHead.rows[0].cells[1];
heading.click();
const keys = [...sortable.tBodies[0].rows].map(r => r.cells[1].dataset.v);
const medians = keys.filter(k => k !== undefined).map(Number);
const blanks_last = keys.indexOf(undefined) === -1 || keys.slice(keys.indexOf(undefined)).every(k => k === undefined);
const report = { width, body: doc.documentElement.scrollWidth, figures: figures.length,
  uncaptioned, smallest, sticking, marks: marks.length, unexplained,
  contents: doc.querySelectorAll('nav#contents a').length,
  headline_overflow: headline.scrollWidth - headline.parentElement.clientWidth,
  sorted: blanks_last && medians.length > 2 && medians.every((m, i) => i === 0 || medians[i - 1] <= m),
  sticky: win.getComputedStyle(heading).position };
const out = document.createElement('pre');
out.id = 'layout-checks';
out.textContent = JSON.stringify(report);
document.body.appendChild(out);
"#;

#[test]
#[ignore = "needs Chromium (apt-get install chromium)"]
fn the_report_fits_a_phone_and_a_desktop() {
    let dir = tempfile::tempdir().unwrap();
    latlab(dir.path())
        .args(["run", "--synthetic", "--max-size", "256KiB", "--out", "res"])
        .args([
            "--only",
            "cpu|mem|thread.core_to_core|ipc.latency|file|sched.wakeup",
        ])
        .assert()
        .success();
    let page = dir.path().join("res/report.html");
    for width in [420, 1400] {
        let checks = layout_at(&page, width);
        let at = |key: &str| checks[key].as_f64().unwrap();
        assert_eq!(at("width"), f64::from(width), "{checks}");
        assert!(
            at("body") <= at("width"),
            "the page scrolls sideways at {width} px: {checks}"
        );
        assert_eq!(
            checks["sticking"],
            serde_json::json!([]),
            "at {width} px: {checks}"
        );
        // Memory, file, distribution and core-to-core figures.
        assert!(at("figures") >= 6.0, "{checks}");
        assert_eq!(checks["uncaptioned"], serde_json::json!([]), "{checks}");
        assert!(
            at("smallest") >= 8.0,
            "plot text too small at {width} px: {checks}"
        );
        assert!(at("marks") >= 1.0, "no warning marks to check: {checks}");
        assert_eq!(checks["unexplained"], serde_json::json!([]), "{checks}");
        assert!(at("contents") >= 6.0, "{checks}");
        assert!(
            at("headline_overflow") <= 0.0,
            "the headline scrolls in its box at {width} px: {checks}"
        );
        assert_eq!(checks["sorted"], true, "{checks}");
        assert_eq!(checks["sticky"], "sticky", "{checks}");
    }
}

#[test]
#[ignore = "needs Chromium (apt-get install chromium)"]
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
    assert!(dom.contains(" id=\"headline\">"), "no headline table");
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
