//! Outcome distributions as a picture (SVG stacked bars) and as a Markdown table.

use super::html::{esc, tone};
use crate::judge::outcome::Outcome;
use std::fmt::Write as _;

/// One bar: a label (a run, a repository) and how many results ended in each outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bar {
    /// What the bar counts.
    pub label: String,
    /// Results per outcome; outcomes left out count 0.
    pub counts: Vec<(Outcome, usize)>,
}

impl Bar {
    fn count(&self, outcome: Outcome) -> usize {
        self.counts
            .iter()
            .filter(|(o, _)| *o == outcome)
            .map(|(_, n)| n)
            .sum()
    }

    fn total(&self) -> usize {
        self.counts.iter().map(|(_, n)| n).sum()
    }
}

/// The outcomes drawn, in the grid's reading order: those of the nine with a result in some
/// bar, then the P2P-only ones where any bar has them.
fn drawn(bars: &[Bar]) -> Vec<Outcome> {
    let extra = [Outcome::NoBreakage, Outcome::Breaking];
    Outcome::ALL
        .into_iter()
        .chain(extra)
        .filter(|o| bars.iter().any(|b| b.count(*o) > 0))
        .collect()
}

/// The RGB of an outcome's colour family, as the HTML report's page styles them; the
/// outcomes sharing a family (Breaking Resolved and Work in Progress; the three outside the
/// grid) are told apart by their opacity.
fn colour(o: Outcome) -> (&'static str, &'static str) {
    let rgb = match tone(o) {
        "good" => "46,160,67",
        "fair" => "120,170,60",
        "mixed" => "214,140,20",
        "idle" => "130,140,155",
        "bad" => "208,48,48",
        _ => "150,150,150",
    };
    let opacity = match o {
        Outcome::WorkInProgress | Outcome::PatchFailed => "0.7",
        Outcome::Error => "0.45",
        _ => "1",
    };
    (rgb, opacity)
}

const LABEL_W: usize = 340;
const BAR_W: usize = 480;
const ROW_H: usize = 26;
const TOP: usize = 44;

/// Horizontal stacked bars, one per [`Bar`], each as wide as its results (shares of its own
/// total), the count written in every segment wide enough to hold it, the total at the end;
/// a legend of the outcomes drawn below. Deterministic: the same bars give the same bytes.
pub fn svg(title: &str, bars: &[Bar]) -> String {
    let outcomes = drawn(bars);
    let legend_rows = outcomes.len().div_ceil(3);
    let width = LABEL_W + BAR_W + 70;
    let height = TOP + bars.len() * ROW_H + 16 + legend_rows * 20 + 8;
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" font-family=\"system-ui,sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n\
         <text x=\"8\" y=\"24\" font-size=\"16\" font-weight=\"600\" fill=\"#1d2330\">{}</text>\n",
        esc(title)
    );
    for (i, bar) in bars.iter().enumerate() {
        let y = TOP + i * ROW_H;
        let total = bar.total();
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#1d2330\">{}</text>",
            LABEL_W - 8,
            y + 15,
            esc(&bar.label)
        );
        let mut x = LABEL_W as f64;
        for &o in &outcomes {
            let n = bar.count(o);
            if n == 0 || total == 0 {
                continue;
            }
            let w = BAR_W as f64 * n as f64 / total as f64;
            let (rgb, opacity) = colour(o);
            let _ = writeln!(
                out,
                "<rect x=\"{x:.1}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" \
                 fill=\"rgb({rgb})\" fill-opacity=\"{opacity}\"><title>{}: {n} of {total}</title></rect>",
                ROW_H - 6,
                o.title()
            );
            if w >= 8.0 * n.to_string().len() as f64 + 4.0 {
                let _ = writeln!(
                    out,
                    "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#ffffff\">{n}</text>",
                    x + w / 2.0,
                    y + 14
                );
            }
            x += w;
        }
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" fill=\"#555555\">n={total}</text>",
            LABEL_W + BAR_W + 6,
            y + 15
        );
    }
    let legend_top = TOP + bars.len() * ROW_H + 16;
    for (i, &o) in outcomes.iter().enumerate() {
        let x = 8 + (i % 3) * 250;
        let y = legend_top + (i / 3) * 20;
        let (rgb, opacity) = colour(o);
        let _ = writeln!(
            out,
            "<rect x=\"{x}\" y=\"{y}\" width=\"12\" height=\"12\" fill=\"rgb({rgb})\" \
             fill-opacity=\"{opacity}\"/><text x=\"{}\" y=\"{}\" fill=\"#1d2330\">{}</text>",
            x + 18,
            y + 10,
            o.title()
        );
    }
    out.push_str("</svg>\n");
    out
}

/// The same bars as a Markdown table: a row per bar, a column per outcome drawn (count and
/// share of the row), and the row's total.
pub fn markdown(first_column: &str, bars: &[Bar]) -> String {
    let outcomes = drawn(bars);
    let mut out = format!("| {first_column} |");
    for o in &outcomes {
        let _ = write!(out, " {} |", o.title());
    }
    out.push_str(" total |\n|---|");
    out.push_str(&"---:|".repeat(outcomes.len() + 1));
    out.push('\n');
    for bar in bars {
        let total = bar.total();
        let _ = write!(out, "| {} |", bar.label.replace('|', "\\|"));
        for &o in &outcomes {
            let n = bar.count(o);
            if n == 0 {
                out.push_str(" 0 |");
            } else {
                let share = 100.0 * n as f64 / total as f64;
                let _ = write!(out, " {n} ({share:.0}%) |");
            }
        }
        let _ = writeln!(out, " {total} |");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars() -> Vec<Bar> {
        vec![
            Bar {
                label: "run <a>".into(),
                counts: vec![(Outcome::NoOp, 7), (Outcome::Regression, 3)],
            },
            Bar {
                label: "run b".into(),
                counts: vec![(Outcome::Resolved, 1), (Outcome::NoOp, 0)],
            },
        ]
    }

    #[test]
    fn only_outcomes_some_bar_has_are_drawn_in_the_grid_order() {
        assert_eq!(
            drawn(&bars()),
            vec![Outcome::Resolved, Outcome::NoOp, Outcome::Regression]
        );
        assert!(drawn(&[]).is_empty());
    }

    #[test]
    fn segments_are_shares_of_their_own_bar_and_labels_are_escaped() {
        let svg = svg("t & u", &bars());
        assert!(svg.contains("t &amp; u") && svg.contains("run &lt;a&gt;"));
        // 7 of 10 of 480 px, then 3 of 10 from where it ends; the single result fills its bar.
        assert!(
            svg.contains("x=\"340.0\" y=\"44\" width=\"336.0\""),
            "{svg}"
        );
        assert!(
            svg.contains("x=\"676.0\" y=\"44\" width=\"144.0\""),
            "{svg}"
        );
        assert!(
            svg.contains("x=\"340.0\" y=\"70\" width=\"480.0\""),
            "{svg}"
        );
        assert!(svg.contains("No-Op: 7 of 10") && svg.contains("n=10") && svg.contains("n=1"));
        assert_eq!(svg, super::svg("t & u", &bars()));
    }

    #[test]
    fn the_table_gives_counts_shares_and_totals() {
        assert_eq!(
            markdown("run", &bars()),
            "| run | Resolved | No-Op | Regression | total |\n|---|---:|---:|---:|---:|\n\
             | run <a> | 0 | 7 (70%) | 3 (30%) | 10 |\n| run b | 1 (100%) | 0 | 0 | 1 |\n"
        );
    }
}
