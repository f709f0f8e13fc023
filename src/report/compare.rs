//! A comparison of two runs (`compare`) for people: the paired rates, the transition matrix
//! and each outcome's net change, on a terminal or in Markdown.

use super::summary::pct;
use super::table::{Align, Table};
use crate::harness::compare::{Comparison, Paired};
use crate::judge::verdict::Outcome;
use std::fmt::Write;

fn paired_line(name: &str, p: &Paired, n: usize, names: &[String; 2]) -> String {
    let share = |k: usize| {
        if n == 0 {
            pct(0.0)
        } else {
            pct(k as f64 / n as f64)
        }
    };
    format!(
        "{name}: {} {} ({}), {} {} ({}); +{} −{}, exact McNemar p = {:.4}",
        names[0],
        p.a,
        share(p.a),
        names[1],
        p.b,
        share(p.b),
        p.gained.len(),
        p.lost.len(),
        p.p_value
    )
}

/// Short column names for the matrix.
fn short(o: Outcome) -> &'static str {
    match o {
        Outcome::Resolved => "res",
        Outcome::BreakingResolved => "brk-res",
        Outcome::PartiallyResolved => "part",
        Outcome::WorkInProgress => "wip",
        Outcome::NoOp => "no-op",
        Outcome::Regression => "regr",
        Outcome::EmptyPatch => "empty",
        Outcome::PatchFailed => "failed",
        Outcome::Error => "error",
        Outcome::NoBreakage => "no-brk",
        Outcome::Breaking => "brk",
    }
}

/// The transition matrix: A's outcome by row, B's by column.
fn matrix_table(c: &Comparison, bold: bool) -> Table {
    let corner = format!("{} \\ {}", c.names[0], c.names[1]);
    let head = std::iter::once((corner.as_str(), Align::Left))
        .chain(c.outcomes.iter().map(|o| (short(*o), Align::Right)));
    let mut t = Table::new(head);
    for (o, row) in c.outcomes.iter().zip(&c.matrix) {
        let label = if bold {
            format!("**{}**", short(*o))
        } else {
            short(*o).to_string()
        };
        t.row(std::iter::once(label).chain(row.iter().map(|n| n.to_string())));
    }
    t
}

/// Each outcome's count in both runs, for the outcomes either run has, and always `Error`:
/// a run that graded fewer tasks is no better for it.
fn net_table(c: &Comparison) -> Table {
    let mut t = Table::new([
        ("outcome", Align::Left),
        (c.names[0].as_str(), Align::Right),
        (c.names[1].as_str(), Align::Right),
        ("change", Align::Right),
    ]);
    for n in c
        .net
        .iter()
        .filter(|n| n.a + n.b > 0 || n.outcome == Outcome::Error)
    {
        t.row([
            n.outcome.title().to_string(),
            n.a.to_string(),
            n.b.to_string(),
            format!("{:+}", n.change),
        ]);
    }
    t
}

/// For people, on a terminal.
pub fn human(c: &Comparison) -> String {
    let mut out = String::new();
    let [a, b] = &c.names;
    let _ = writeln!(
        out,
        "{} tasks in both runs ({} only in {a}, {} only in {b})",
        c.tasks,
        c.only_a.len(),
        c.only_b.len()
    );
    let _ = writeln!(
        out,
        "{}",
        paired_line("Resolved", &c.resolved, c.tasks, &c.names)
    );
    let _ = writeln!(
        out,
        "{}",
        paired_line("Regression", &c.regression, c.tasks, &c.names)
    );
    if !c.safer.is_empty() {
        let _ = writeln!(
            out,
            "SAFER  Regression → No-Op: {} ({})",
            c.safer.len(),
            c.safer.join(", ")
        );
    }
    if !c.worse.is_empty() {
        let _ = writeln!(
            out,
            "WORSE  No-Op → Regression: {} ({})",
            c.worse.len(),
            c.worse.join(", ")
        );
    }
    let (da, db) = &c.downstream_breakage;
    if !da.is_empty() || !db.is_empty() {
        let _ = writeln!(
            out,
            "Downstream breakage (tests outside the task's lists): {a} {}, {b} {}",
            da.len(),
            db.len()
        );
    }
    out.push('\n');
    out.push_str(&matrix_table(c, false).text(""));
    out.push_str("\nNet change\n");
    out.push_str(&net_table(c).text("  "));
    if !c.changed.is_empty() {
        out.push_str("\nChanged\n");
        for t in &c.changed {
            let _ = writeln!(
                out,
                "  {} → {}: {}",
                t.from.title(),
                t.to.title(),
                t.tasks.join(", ")
            );
        }
    }
    out
}

/// For a GitHub step summary or a pull request.
pub fn markdown(c: &Comparison) -> String {
    let mut out = String::new();
    let [a, b] = &c.names;
    let _ = writeln!(
        out,
        "## patchgrade compare: {a} → {b}, {} tasks in both runs\n",
        c.tasks
    );
    let _ = writeln!(
        out,
        "- {}\n- {}",
        paired_line("Resolved", &c.resolved, c.tasks, &c.names),
        paired_line("Regression", &c.regression, c.tasks, &c.names)
    );
    if !c.safer.is_empty() {
        let _ = writeln!(out, "- ✓ **Safer** (Regression → No-Op): {}", c.safer.len());
    }
    if !c.worse.is_empty() {
        let _ = writeln!(out, "- ⚠ **Worse** (No-Op → Regression): {}", c.worse.len());
    }
    let (da, db) = &c.downstream_breakage;
    if !da.is_empty() || !db.is_empty() {
        let _ = writeln!(
            out,
            "- Downstream breakage (tests outside the task's lists): {a} {}, {b} {}",
            da.len(),
            db.len()
        );
    }
    out.push('\n');
    out.push_str(&matrix_table(c, true).markdown());
    out.push('\n');
    out.push_str(&net_table(c).markdown());
    if !c.changed.is_empty() {
        out.push_str("\n<details><summary>Changed tasks</summary>\n\n");
        for t in &c.changed {
            let ids: Vec<String> = t.tasks.iter().map(|i| format!("`{i}`")).collect();
            let _ = writeln!(
                out,
                "- {} → {}: {}",
                t.from.title(),
                t.to.title(),
                ids.join(", ")
            );
        }
        out.push_str("\n</details>\n");
    }
    out
}
