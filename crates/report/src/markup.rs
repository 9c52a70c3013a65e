//! What every HTML page of the report shares: the page around its sections, with a table
//! of contents where asked, and the page style (the run's page, the benchmarks' page and
//! the fleet's). Pages are written with maud's `html!` templates, which escape every piece
//! of text they are given; only drawn SVG goes in as it is.

use maud::{DOCTYPE, Markup, PreEscaped, html};

/// One section of a page: an `<h2>` with its anchor, and what follows it.
pub(crate) struct Section {
    pub id: String,
    pub title: String,
    pub body: Markup,
    /// Entries under it in the table of contents (`<h3>` anchors): `(id, title)`.
    pub parts: Vec<(String, String)>,
}

impl Section {
    pub(crate) fn new(id: impl Into<String>, title: impl Into<String>, body: Markup) -> Section {
        Section {
            id: id.into(),
            title: title.into(),
            body,
            parts: Vec::new(),
        }
    }

    /// The same section, listing `parts` under it in the table of contents.
    pub(crate) fn with_parts(self, parts: Vec<(String, String)>) -> Section {
        Section { parts, ..self }
    }
}

/// Whether a page lists its sections at the top.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Contents {
    Listed,
    Unlisted,
}

/// A whole self-contained page: `title` (the document's and the heading's), `intro` under
/// the heading, the table of contents when listed, then the sections in order.
pub(crate) fn page(title: &str, intro: Markup, sections: &[Section], contents: Contents) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { (title) }
                (intro)
                @if contents == Contents::Listed && !sections.is_empty() {
                    nav #contents aria-label="contents" {
                        ul {
                            @for section in sections {
                                li {
                                    a href={ "#" (section.id) } { (section.title) }
                                    @if !section.parts.is_empty() {
                                        ul.parts { @for (id, title) in &section.parts {
                                            li { a href={ "#" (id) } { (title) } }
                                        } }
                                    }
                                }
                            }
                        }
                    }
                }
                @for section in sections {
                    h2 id=(section.id) { (section.title) }
                    (section.body)
                }
                script { (PreEscaped(SORT_SCRIPT)) }
            }
        }
    }
    .into_string()
}

/// A table of more rows than this shows them folded, behind their count.
pub(crate) const FOLD_ROWS_ABOVE: usize = 8;

/// A figure as a table cell's sort key (`data-v`): four significant digits, enough to order
/// any two figures a table shows apart.
pub(crate) fn sort_key(value: f64) -> String {
    format!("{value:.3e}")
}

/// A figure as the page's markup: as `plots/svg.rs` wrote it, every text in it escaped
/// there.
pub(crate) fn inline_svg(svg: &str) -> PreEscaped<&str> {
    PreEscaped(svg)
}

/// `text` with its first letter capitalised, as a sentence.
pub(crate) fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// The page's one script, inline: a click (or Enter) on a column's heading in a table marked
/// `sortable` orders its rows by that column, ascending then descending, by each cell's
/// `data-v` in a column of figures (the figure behind "1.08 ns") and by its text in a column
/// of words; a cell without either ("—", blank) goes last. Without scripts the page reads the same, in the run's order.
const SORT_SCRIPT: &str = "
for (const table of document.querySelectorAll('table.sortable')) {
  const headings = [...table.tHead.rows[0].cells];
  headings.forEach((heading, column) => {
    heading.tabIndex = 0;
    heading.title = 'sort by ' + heading.textContent;
    const numeric = [...table.tBodies].some(body =>
      [...body.rows].some(row => row.cells[column]?.dataset.v !== undefined));
    const key = row => {
      const cell = row.cells[column];
      if (numeric) return cell?.dataset.v === undefined ? null : Number(cell.dataset.v);
      return cell?.textContent.trim() || null;
    };
    const sort = () => {
      const up = heading.getAttribute('aria-sort') !== 'ascending';
      headings.forEach(h => h.removeAttribute('aria-sort'));
      heading.setAttribute('aria-sort', up ? 'ascending' : 'descending');
      for (const body of table.tBodies) {
        const rows = [...body.rows].sort((a, b) => {
          const x = key(a), y = key(b);
          if (x === null || y === null) return (x === null) - (y === null);
          const order = typeof x === 'number' && typeof y === 'number'
            ? x - y : String(x).localeCompare(String(y), undefined, { numeric: true });
          return up ? order : -order;
        });
        body.append(...rows);
      }
    };
    heading.addEventListener('click', sort);
    heading.addEventListener('keydown', event => {
      if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); sort(); }
    });
  });
}
";

/// The style of every page: the run's, the benchmarks' and the fleet's.
pub(crate) const STYLE: &str = "
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1180px; color: #222; padding: 0 1em; overflow-wrap: break-word; }
h1 { font-size: 1.5em; overflow-wrap: anywhere; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; } h3 { margin-bottom: .3em; overflow-wrap: anywhere; }
.scroll { max-width: 100%; margin: .5em 0 1em; }
@media (max-width: 1000px) { .scroll { overflow-x: auto; } }
thead th { position: sticky; top: 0; z-index: 1; }
table.sortable thead th { cursor: pointer; } th[aria-sort=ascending]::after { content: \" ▴\"; } th[aria-sort=descending]::after { content: \" ▾\"; }
h3 .method { font-weight: normal; font-size: .8em; color: #555; }
div.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 540px), 1fr)); gap: 0 2em; }
ul.warnings { list-style: none; padding-left: .3em; } ul.warnings details > summary { color: inherit; } ul.warnings ul { list-style: disc; }
table { border-collapse: collapse; }
th, td { padding: .2em .6em; text-align: right; border-bottom: 1px solid #eee; vertical-align: top; white-space: nowrap; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
td.text { text-align: left; white-space: normal; min-width: 12em; } #headline th:last-child { text-align: left; }
#headline td:first-child { white-space: normal; min-width: 8em; } tr.reference td { color: #888; font-style: italic; }
.note { color: #555; font-size: .92em; } .warn { color: #a45a00; } .fail { color: #b00020; }
#environment td, #environment th { text-align: left; } td.slower { color: #b00020; } td.faster { color: #1a7f37; } tr.differs td { font-weight: 600; }
a.warn, a.fail { text-decoration: none; }
nav > ul { margin: .3em 0; }
figure { margin: 1em 0; max-width: 100%; } figcaption { color: #444; font-size: .92em; max-width: 60em; }
figure svg { display: block; max-width: 100%; height: auto; }
code { background: #f4f4f4; padding: 0 .2em; overflow-wrap: anywhere; }
li { margin: .15em 0; } details ul { font-size: .92em; }
@media (max-width: 600px) { body { margin: 1em auto; padding: 0 .6em; } h1 { font-size: 1.2em; } #summary td.text { min-width: 0; white-space: normal; } }
@media (max-width: 700px) {
  #headline, #headline tbody, #headline tr { display: block; } #headline thead { display: none; }
  #headline tr { padding: .35em 0; border-bottom: 1px solid #ccc; }
  #headline td { display: inline-block; border: 0; padding: 0 1em 0 0; text-align: left; white-space: normal; }
  #headline td:first-child, #headline td.text { display: block; } #headline td.text { font-size: .9em; min-width: 0; }
  #headline td:first-child { font-weight: 600; } #headline td:empty { display: none; }
  #headline td[data-label]::before { content: attr(data-label) \": \"; color: #777; }
}
:root { color-scheme: light dark; }
nav ul.parts { columns: 5 9em; font-size: .9em; margin: .2em 0 .4em; padding-left: 1.2em; }
#summary th, #summary td { text-align: left; } #summary td.text { min-width: 20em; }
details > summary { cursor: pointer; color: #555; }
@media (prefers-color-scheme: dark) {
  body { background: #161618; color: #ddd; } a { color: #8ab4f8; }
  th { background: #26262a; } th, td { border-bottom-color: #333; }
  .note, figcaption, details > summary, h3 .method { color: #aaa; } tr.reference td { color: #888; }
  code { background: #26262a; } .warn { color: #e0a050; } .fail, td.slower { color: #ff6b6b; } td.faster { color: #6bd08b; }
  figure svg { filter: invert(0.9) hue-rotate(180deg); }
}
";
