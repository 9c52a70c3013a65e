//! Tables as text, one way: columns aligned two spaces apart for the terminal, pipe tables
//! for Markdown. The results table, the headline table, `latlab compare` and the harness's
//! tables of allocations and cycles all render here.

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text: names, methods, verdicts.
    Left,
    /// Figures.
    Right,
}

use crate::terminal::{Paint, Terminal};

/// Headers and rows of cells already formatted.
pub struct TextTable {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl TextTable {
    pub fn new(headers: impl IntoIterator<Item = impl Into<String>>) -> TextTable {
        TextTable {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// The table with its columns aligned, each line without trailing spaces. `align` is
    /// the alignment of each column; columns beyond it are right-aligned.
    pub fn aligned(&self, align: &[Align]) -> String {
        self.aligned_painted(align, &Terminal::default(), |_, _, _| None)
    }

    /// The width of each column: its widest cell or header.
    fn widths(&self) -> Vec<usize> {
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        widths
    }

    /// The width of the aligned table's widest line.
    pub fn width(&self) -> usize {
        let widths = self.widths();
        widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1)
    }

    /// Fits the table to the terminal's width where it has one (its columns dropped, the
    /// least useful first, until it fits);
    /// returns the line to print under it naming the columns left out, `hint` after them,
    /// or `None` when none was.
    pub fn fit_to_terminal(
        &mut self,
        width: Option<usize>,
        least_useful_first: &[&str],
        align: &mut Vec<Align>,
        hint: &str,
    ) -> Option<String> {
        let width = width?;
        let dropped = self.fit(width, least_useful_first, align);
        (!dropped.is_empty()).then(|| {
            format!(
                "(left out to fit {width} columns: {}{hint})",
                dropped.join(", ")
            )
        })
    }

    /// Drops columns, the least useful first as `least_useful_first` names their headers,
    /// until the table fits in `width` characters or none of them is left; `align` loses
    /// the dropped columns' entries. Returns the headers dropped.
    fn fit(
        &mut self,
        width: usize,
        least_useful_first: &[&str],
        align: &mut Vec<Align>,
    ) -> Vec<String> {
        let mut dropped = Vec::new();
        for header in least_useful_first {
            if self.width() <= width {
                break;
            }
            let Some(column) = self.headers.iter().position(|h| h == header) else {
                continue;
            };
            dropped.push(self.headers.remove(column));
            for row in &mut self.rows {
                if column < row.len() {
                    row.remove(column);
                }
            }
            if column < align.len() {
                align.remove(column);
            }
        }
        dropped
    }

    /// As [`TextTable::aligned`], with each cell for which `paint(row, column, cell)` gives a
    /// paint coloured by `terminal` (row 0 is the headers); the colour does not count in
    /// the alignment.
    pub fn aligned_painted(
        &self,
        align: &[Align],
        terminal: &Terminal,
        paint: impl Fn(usize, usize, &str) -> Option<Paint>,
    ) -> String {
        let widths = self.widths();
        let mut out = String::new();
        for (r, row) in std::iter::once(&self.headers).chain(&self.rows).enumerate() {
            let mut line = String::new();
            for (i, (cell, &width)) in row.iter().zip(&widths).enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = " ".repeat(width - cell.chars().count());
                let text = match paint(r, i, cell) {
                    Some(p) => terminal.paint(p, cell),
                    None => cell.clone(),
                };
                match align.get(i).copied().unwrap_or(Align::Right) {
                    Align::Left => {
                        line.push_str(&text);
                        line.push_str(&pad);
                    }
                    Align::Right => {
                        line.push_str(&pad);
                        line.push_str(&text);
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }

    /// The table as a Markdown pipe table, `|` in cells escaped.
    pub fn markdown(&self, align: &[Align]) -> String {
        let line = |cells: &[String]| {
            let cells: Vec<String> = cells.iter().map(|c| escape_markdown(c)).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let rule: Vec<String> = (0..self.headers.len())
            .map(|i| match align.get(i).copied().unwrap_or(Align::Right) {
                Align::Left => ":--".to_string(),
                Align::Right => "--:".to_string(),
            })
            .collect();
        let mut out = line(&self.headers);
        out.push_str(&format!("|{}|\n", rule.join("|")));
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

/// `text` as one Markdown table cell shows it literally: control characters escaped as
/// Rust writes them (`\u{1b}`), a line break as `\n`, the characters Markdown acts on
/// backslash-escaped, and HTML's as entities, so that a name from a results file can
/// neither break the row, nor become a link, emphasis or markup, nor act on a terminal.
pub(crate) fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '|' | '\\' | '`' | '*' | '[' | ']' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push_str(&crate::printable(&c.to_string())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> TextTable {
        let mut table = TextTable::new(["name", "median", "note"]);
        table
            .rows
            .push(vec!["a/b".into(), "1.25 ns".into(), "x|y".into()]);
        table
            .rows
            .push(vec!["longer/name".into(), "120 ns".into(), "".into()]);
        table
    }

    #[test]
    fn columns_line_up_as_asked() {
        let text = table().aligned(&[Align::Left, Align::Right, Align::Left]);
        assert_eq!(
            text,
            "name          median  note\n\
             a/b          1.25 ns  x|y\n\
             longer/name   120 ns\n"
        );
    }

    /// Columns go, the least useful first, until the table fits; the first column stays
    /// when it is not named.
    #[test]
    fn a_table_drops_its_least_useful_columns_to_fit() {
        let mut narrow = table();
        let mut align = vec![Align::Left, Align::Right, Align::Left];
        assert_eq!(narrow.width(), 26);
        let dropped = narrow.fit(20, &["note", "median"], &mut align);
        assert_eq!(dropped, ["note"]);
        assert_eq!(align, [Align::Left, Align::Right]);
        assert_eq!(
            narrow.aligned(&align),
            "name          median\na/b          1.25 ns\nlonger/name   120 ns\n"
        );
        let dropped = narrow.fit(5, &["note", "median"], &mut align);
        assert_eq!(dropped, ["median"]);
        assert_eq!(narrow.headers, ["name"]);
        let mut wide = table();
        assert!(wide.fit(80, &["note"], &mut vec![]).is_empty());
    }

    /// Colour wraps the cell's text only, so that the columns still line up.
    #[test]
    fn painted_cells_keep_their_alignment() {
        let terminal = Terminal {
            colour: true,
            ..Terminal::default()
        };
        let text = table().aligned_painted(&[Align::Left], &terminal, |row, column, _| {
            (row == 2 && column == 1).then_some(Paint::Bad)
        });
        let plain: String = text
            .split('\u{1b}')
            .enumerate()
            .map(|(i, part)| {
                if i == 0 {
                    part
                } else {
                    &part[part.find('m').unwrap() + 1..]
                }
            })
            .collect();
        assert_eq!(plain, table().aligned(&[Align::Left]));
        assert!(text.lines().nth(2).unwrap().contains("\u{1b}["));
    }

    #[test]
    fn a_hostile_name_stays_one_literal_cell() {
        let cell = escape_markdown("a|b\n<img src=x onerror=alert(1)>\u{1b}[31m\u{7}[x](y)*z*");
        assert_eq!(
            cell,
            "a\\|b\\n&lt;img src=x onerror=alert(1)&gt;\\u{1b}\\[31m\\u{7}\\[x\\](y)\\*z\\*"
        );
        assert!(!cell.contains(['\n', '\u{1b}', '\u{7}', '<']));
    }

    #[test]
    fn markdown_escapes_pipes_and_states_alignment() {
        let text = table().markdown(&[Align::Left, Align::Right, Align::Left]);
        assert_eq!(
            text,
            "| name | median | note |\n|:--|--:|:--|\n| a/b | 1.25 ns | x\\|y |\n| longer/name | 120 ns |  |\n"
        );
    }
}
