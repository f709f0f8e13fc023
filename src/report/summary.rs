//! A run's summary (`report`) for people: its rates, counts, grid and tasks, on a terminal or
//! in Markdown.

use super::table::{Align, Table};
use crate::harness::stats::share;
use crate::harness::summary::{Rate, Summary};
use std::fmt::Write;

/// The runs candidates cut short, per reason: `Cut short by the patch (graded by their
/// outcome): crashed 2 (a, b), timed-out 1 (c)`; `None` when there is none. Markdown gives
/// the counts alone, and the ids are in the task list.
fn cut_short_line(s: &Summary, markdown: bool) -> Option<String> {
    if s.cut_short.is_empty() {
        return None;
    }
    let per: Vec<String> = s
        .cut_short
        .iter()
        .map(|(reason, ids)| {
            if markdown {
                format!("{reason} {}", ids.len())
            } else {
                format!("{reason} {} ({})", ids.len(), ids.join(", "))
            }
        })
        .collect();
    Some(format!(
        "Runs the patch cut short (graded against it, counted by their outcome): {}",
        per.join(", ")
    ))
}

/// Tasks with downstream breakage, per outcome: `… 3 task(s) (No-Op 2, Resolved 1)`;
/// `None` when there is none.
pub(super) fn downstream_line(s: &Summary) -> Option<String> {
    let n: usize = s.downstream_breakage.values().map(Vec::len).sum();
    if n == 0 {
        return None;
    }
    let per: Vec<String> = s
        .downstream_breakage
        .iter()
        .map(|(o, ids)| format!("{} {}", o.title(), ids.len()))
        .collect();
    Some(format!(
        "Downstream breakage (tests outside the task's lists broken): {n} task(s) ({})",
        per.join(", ")
    ))
}

/// A percentage with one decimal.
pub(super) fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn rate_text(r: &Rate) -> String {
    format!(
        "{} ({} of {}; 95% CI {}–{})",
        pct(r.rate),
        r.count,
        r.of,
        pct(r.low),
        pct(r.high)
    )
}

/// The outcome counts: outcome, tasks, share.
fn counts_table(s: &Summary, head: bool) -> Table {
    let name = |h: &'static str| if head { h } else { "" };
    let mut t = Table::new([
        (name("outcome"), Align::Left),
        (name("tasks"), Align::Right),
        (name("share"), Align::Right),
    ]);
    for c in &s.counts {
        t.row([
            c.outcome.title().to_string(),
            c.count.to_string(),
            pct(c.share),
        ]);
    }
    if !s.incomplete.is_empty() {
        t.row([
            "Incomplete (no result)".to_string(),
            s.incomplete.len().to_string(),
            pct(share(s.incomplete.len(), s.tasks)),
        ]);
    }
    t
}

/// The 3×3 grid of counts, F2P rows by P2P columns.
fn grid_table(s: &Summary, bold: bool) -> Table {
    let mut t = Table::new([
        ("", Align::Left),
        ("all P2P", Align::Right),
        ("some P2P", Align::Right),
        ("no P2P", Align::Right),
    ]);
    for (row, name) in s.grid.iter().zip(["all", "some", "no"]) {
        let label = if bold {
            format!("**{name} F2P**")
        } else {
            format!("{name} F2P")
        };
        t.row([
            label,
            row[0].to_string(),
            row[1].to_string(),
            row[2].to_string(),
        ]);
    }
    t
}

/// For people, on a terminal.
pub fn human(s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} tasks", s.tasks);
    let _ = writeln!(out, "Resolve rate      {}", rate_text(&s.resolve_rate));
    let _ = writeln!(
        out,
        "Regression share  {} of the applied, unresolved patches",
        rate_text(&s.regression_share)
    );
    if s.swebench_resolved != s.resolve_rate.count as usize {
        let _ = writeln!(
            out,
            "SWE-bench's rules resolve {} (see other_scoring in the results)",
            s.swebench_resolved
        );
    }
    out.push('\n');
    out.push_str(&counts_table(s, false).text("  "));
    out.push('\n');
    out.push_str(&grid_table(s, false).text(""));
    out.push('\n');
    let _ = writeln!(
        out,
        "Broken at base: {} task(s), {} P2P test(s) left out",
        s.broken_at_base_tasks, s.broken_at_base_tests
    );
    let list = |ids: &[String]| {
        if ids.is_empty() {
            "none".to_string()
        } else {
            ids.join(", ")
        }
    };
    let _ = writeln!(
        out,
        "Suspect tasks (F2P passing at base or missing, P2P missing at base): {}",
        list(&s.suspect_tasks)
    );
    let _ = writeln!(
        out,
        "Broken tasks (baseline not judged): {}",
        list(&s.broken_tasks)
    );
    if let Some(line) = cut_short_line(s, false) {
        let _ = writeln!(out, "{line}");
    }
    if !s.incomplete.is_empty() {
        let _ = writeln!(out, "Incomplete (no result): {}", list(&s.incomplete));
    }
    if let Some(line) = downstream_line(s) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    for (outcome, ids) in &s.by_outcome {
        let _ = writeln!(out, "{}: {}", outcome.title(), ids.join(", "));
    }
    out
}

/// For a GitHub step summary or a pull request.
pub fn markdown(s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## patchgrade: {} tasks\n", s.tasks);
    let _ = writeln!(
        out,
        "**Resolve rate** {}  \n**Regression share** {} of the applied, unresolved patches\n",
        rate_text(&s.resolve_rate),
        rate_text(&s.regression_share)
    );
    out.push_str(&counts_table(s, true).markdown());
    out.push('\n');
    out.push_str(&grid_table(s, true).markdown());
    let _ = writeln!(
        out,
        "\nBroken at base: {} task(s), {} P2P test(s) left out. Suspect tasks: {}. Broken tasks: {}.",
        s.broken_at_base_tasks,
        s.broken_at_base_tests,
        s.suspect_tasks.len(),
        s.broken_tasks.len()
    );
    if let Some(line) = cut_short_line(s, true) {
        let _ = writeln!(out, "{line}");
    }
    if !s.incomplete.is_empty() {
        let _ = writeln!(out, "Incomplete (no result): {}.", s.incomplete.len());
    }
    if let Some(line) = downstream_line(s) {
        let _ = writeln!(out, "\n{line}");
    }
    out.push_str("\n<details><summary>Tasks by outcome</summary>\n\n");
    for (outcome, ids) in &s.by_outcome {
        let ids: Vec<String> = ids.iter().map(|i| format!("`{i}`")).collect();
        let _ = writeln!(out, "- **{}**: {}", outcome.title(), ids.join(", "));
    }
    out.push_str("\n</details>\n");
    out
}
