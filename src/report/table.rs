//! One table model for every table patchgrade prints: a terminal's aligned columns and a
//! Markdown pipe table come from the same rows, so the two cannot drift apart.

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

/// A table: a header and rows of cells.
#[derive(Debug, Clone, Default)]
pub struct Table {
    head: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers (empty headers print no header line on a terminal).
    pub fn new<S: Into<String>>(head: impl IntoIterator<Item = (S, Align)>) -> Table {
        Table {
            head: head.into_iter().map(|(h, a)| (h.into(), a)).collect(),
            rows: Vec::new(),
        }
    }

    /// Add a row; missing cells are empty, extra cells are dropped.
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Table {
        let mut row: Vec<String> = cells.into_iter().map(Into::into).collect();
        row.resize(self.head.len(), String::new());
        self.rows.push(row);
        self
    }

    /// For a terminal: each column as wide as its widest cell, two spaces apart, each line
    /// after `indent`.
    pub fn text(&self, indent: &str) -> String {
        let width = |s: &str| s.chars().count();
        let widths: Vec<usize> = (0..self.head.len())
            .map(|c| {
                let cells = self.rows.iter().map(|r| width(&r[c]));
                cells.chain([width(&self.head[c].0)]).max().unwrap_or(0)
            })
            .collect();
        let line = |cells: Vec<&str>| {
            let mut out = indent.to_string();
            for (c, cell) in cells.into_iter().enumerate() {
                if c > 0 {
                    out.push_str("  ");
                }
                let pad = " ".repeat(widths[c] - width(cell));
                match self.head[c].1 {
                    Align::Left => {
                        out.push_str(cell);
                        out.push_str(&pad);
                    }
                    Align::Right => {
                        out.push_str(&pad);
                        out.push_str(cell);
                    }
                }
            }
            format!("{}\n", out.trim_end())
        };
        let mut out = String::new();
        if self.head.iter().any(|(h, _)| !h.is_empty()) {
            out.push_str(&line(self.head.iter().map(|(h, _)| h.as_str()).collect()));
        }
        for row in &self.rows {
            out.push_str(&line(row.iter().map(String::as_str).collect()));
        }
        out
    }

    /// A Markdown (GitHub) pipe table.
    pub fn markdown(&self) -> String {
        let escape = |s: &str| s.replace('|', "\\|");
        let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        let mut out = line(self.head.iter().map(|(h, _)| escape(h)).collect());
        let rule: Vec<&str> = self
            .head
            .iter()
            .map(|(_, a)| match a {
                Align::Left => "---",
                Align::Right => "---:",
            })
            .collect();
        out.push_str(&format!("|{}|\n", rule.join("|")));
        for row in &self.rows {
            out.push_str(&line(row.iter().map(|c| escape(c)).collect()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new([("outcome", Align::Left), ("tasks", Align::Right)]);
        t.row(["Resolved", "12"]).row(["No-Op", "3"]).row(["a|b"]);
        t
    }

    #[test]
    fn text_aligns_columns_and_trims_line_ends() {
        assert_eq!(
            sample().text("  "),
            "  outcome   tasks\n  Resolved     12\n  No-Op         3\n  a|b\n"
        );
        let mut bare = Table::new([("", Align::Left), ("", Align::Right)]);
        bare.row(["x", "1"]);
        assert_eq!(bare.text(""), "x  1\n", "no header line without headers");
    }

    #[test]
    fn markdown_marks_alignment_and_escapes_pipes() {
        assert_eq!(
            sample().markdown(),
            "| outcome | tasks |\n|---|---:|\n| Resolved | 12 |\n| No-Op | 3 |\n| a\\|b |  |\n"
        );
    }
}
