//! What every HTML page of the report shares: escaping text for HTML, and the page style
//! (the run's page, the benchmarks' page and the fleet's).

/// Escapes text for HTML element content and attribute values.
pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The style of every page: the run's, the benchmarks' and the fleet's.
pub(crate) const STYLE: &str = "
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1180px; color: #222; padding: 0 1em; overflow-wrap: break-word; }
h1 { font-size: 1.5em; overflow-wrap: anywhere; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { margin-bottom: .3em; overflow-wrap: anywhere; }
.scroll { overflow-x: auto; max-width: 100%; margin: .5em 0 1em; }
table { border-collapse: collapse; }
th, td { padding: .2em .6em; text-align: right; border-bottom: 1px solid #eee; vertical-align: top; white-space: nowrap; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
td.text { text-align: left; white-space: normal; min-width: 12em; }
#headline td:first-child { white-space: normal; min-width: 8em; } tr.reference td { color: #888; font-style: italic; }
.note { color: #555; font-size: .92em; } .warn { color: #a45a00; } .fail { color: #b00020; }
a.warn, a.fail { text-decoration: none; }
nav ul { columns: 2 16em; margin: .3em 0; }
figure { margin: 1em 0; max-width: 100%; } figcaption { color: #444; font-size: .92em; max-width: 60em; }
figure svg { display: block; max-width: 100%; height: auto; }
code { background: #f4f4f4; padding: 0 .2em; overflow-wrap: anywhere; }
li { margin: .15em 0; } details ul { font-size: .92em; }
@media (max-width: 600px) { body { margin: 1em auto; padding: 0 .6em; } h1 { font-size: 1.2em; } }
";
