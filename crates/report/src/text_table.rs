//! Tables as text, one way: columns aligned two spaces apart for the terminal, pipe tables
//! for Markdown. The results table, the headline table and `latlab compare` all render here.

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    /// Text: names, methods, verdicts.
    Left,
    /// Figures.
    Right,
}

/// Headers and rows of cells already formatted.
pub(crate) struct TextTable {
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
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.headers).chain(&self.rows) {
            let mut line = String::new();
            for (i, (cell, &width)) in row.iter().zip(&widths).enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = " ".repeat(width - cell.chars().count());
                match align.get(i).copied().unwrap_or(Align::Right) {
                    Align::Left => {
                        line.push_str(cell);
                        line.push_str(&pad);
                    }
                    Align::Right => {
                        line.push_str(&pad);
                        line.push_str(cell);
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

/// Text for a Markdown table cell or list item: `|` escaped.
pub(crate) fn escape_markdown(text: &str) -> String {
    text.replace('|', "\\|")
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

    #[test]
    fn markdown_escapes_pipes_and_states_alignment() {
        let text = table().markdown(&[Align::Left, Align::Right, Align::Left]);
        assert_eq!(
            text,
            "| name | median | note |\n|:--|--:|:--|\n| a/b | 1.25 ns | x\\|y |\n| longer/name | 120 ns |  |\n"
        );
    }
}
