//! The verdict for people, on a terminal.

use super::table::{Align, Table};
use crate::judge::verdict::{
    Downstream, DownstreamMethod, Effect, GradedTest, Level, Outcome, Stage, Verdict, Warning,
    WarningKind,
};
use std::fmt::Write;

/// The verdict for people: outcome, grid, axes, what failed, baseline findings, timings.
// Long because it is the page, section by section in the order a person reads it.
pub fn human(v: &Verdict) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", v.summary);
    if let Some(id) = &v.task.instance_id {
        let _ = writeln!(out, "task {id}");
    }
    out.push('\n');
    if let Some(e) = &v.error {
        let stage = match e.stage {
            Stage::Candidate => "candidate run",
            Stage::Baseline => "baseline run",
        };
        let _ = writeln!(out, "{stage}: {}\n", e.message.trim_end());
    }
    if let Some(a) = &v.aborted {
        let _ = writeln!(
            out,
            "candidate run ({}, graded against the patch: the baseline ran): {}\n",
            a.reason,
            a.message.trim_end()
        );
    }
    if let Some(f) = &v.patch.apply_failure {
        let _ = writeln!(out, "does not apply: {f}\n");
    }
    if v.outcome.cell().is_some() {
        grid(&mut out, v.outcome);
        let _ = writeln!(out, "F2P  {}/{} pass", v.f2p.passing, v.f2p.total);
        let _ = write!(out, "P2P  {}/{} kept", v.p2p.passing, v.p2p.total);
        if v.p2p.excluded > 0 {
            let _ = write!(out, " ({} broken at base, not counted)", v.p2p.excluded);
        }
        out.push_str("\n\n");
    } else if Outcome::P2P_ONLY.contains(&v.outcome) {
        let _ = write!(
            out,
            "F2P  none given (hidden): breakage only\nP2P  {}/{} kept",
            v.p2p.passing, v.p2p.total
        );
        if v.p2p.excluded > 0 {
            let _ = write!(out, " ({} broken at base, not counted)", v.p2p.excluded);
        }
        out.push_str("\n\n");
    }
    section(&mut out, "F2P tests not passing:", v, |t| {
        t.effect == Effect::NotFixed
    });
    section(&mut out, "P2P tests broken by the patch:", v, |t| {
        t.effect == Effect::Broken
    });
    if let Some(d) = &v.downstream {
        downstream(&mut out, d);
    }
    broken_at_base(&mut out, v);
    warnings(&mut out, v);
    footer(&mut out, v);
    out
}

/// The P2P tests that already failed at base, with their status and message there.
fn broken_at_base(out: &mut String, v: &Verdict) {
    let at_base: Vec<&GradedTest> = v
        .tests
        .iter()
        .filter(|t| t.effect == Effect::BrokenAtBase)
        .collect();
    if !at_base.is_empty() {
        out.push_str("Broken at base, not counted:\n");
        for t in at_base {
            let status = t.base_status.map(|s| s.name()).unwrap_or("?");
            let _ = writeln!(out, "  {} ({status}{})", t.id, msg(&t.base_message));
        }
        out.push('\n');
    }
}

/// The warnings, the task's findings first.
fn warnings(out: &mut String, v: &Verdict) {
    // Task findings first: they put every other line in question.
    let mut warnings: Vec<&Warning> = v.warnings.iter().collect();
    warnings.sort_by_key(|w| !w.kind.suspects_task());
    if !warnings.is_empty() {
        out.push_str("Warnings:\n");
        for w in warnings {
            let task = if w.kind.suspects_task() { "task: " } else { "" };
            let _ = writeln!(out, "  - {task}{}", w.message);
            // The broken-at-base tests are listed above, with why.
            if w.kind == WarningKind::P2pBrokenAtBase {
                continue;
            }
            for id in w.tests.iter().take(5) {
                let _ = writeln!(out, "      {id}");
            }
            if w.tests.len() > 5 {
                let _ = writeln!(out, "      … and {} more", w.tests.len() - 5);
            }
        }
        out.push('\n');
    }
}

/// What the patch touched, what the test patch replaced, the timings, kept checkouts.
fn footer(out: &mut String, v: &Verdict) {
    if !v.patch.files.is_empty() {
        let _ = writeln!(out, "Patch touches: {}", v.patch.files.join(", "));
    }
    if !v.patch.overridden_files.is_empty() {
        let _ = writeln!(
            out,
            "Overridden by the test patch: {}",
            v.patch.overridden_files.join(", ")
        );
    }
    if !v.patch.merged_files.is_empty() {
        let _ = writeln!(
            out,
            "Merged with the test patch hunk by hunk: {}",
            v.patch.merged_files.join(", ")
        );
    }
    if !v.patch.overridden_hunks.is_empty() {
        let _ = writeln!(
            out,
            "Edits replaced by the test patch's: {}",
            super::feedback::hunk_list(&v.patch.overridden_hunks)
        );
    }
    // `grade` reads reports and runs nothing: no timings worth a line.
    let t = &v.timings;
    if v.task.test_cmd.is_some() {
        let _ = writeln!(
            out,
            "Timings: prepare {:.1}s, tests {:.1}s, total {:.1}s",
            secs(t.prepare_ms),
            secs(t.test_ms),
            secs(t.total_ms)
        );
    }
    for (name, run) in [
        ("candidate", &v.runs.candidate),
        ("baseline", &v.runs.baseline),
    ] {
        if let Some(dir) = run.as_ref().and_then(|r| r.dir.as_ref()) {
            let _ = writeln!(out, "Kept {name} checkout and logs: {}", dir.display());
        }
    }
}

/// The downstream group: how its tests were found, how many ran, and those the patch broke.
fn downstream(out: &mut String, d: &Downstream) {
    let method = match d.method {
        DownstreamMethod::Coverage => "by coverage at base",
        DownstreamMethod::Imports => "by imports",
        DownstreamMethod::List => "from the list given",
        DownstreamMethod::Unavailable => "none found",
    };
    let _ = write!(
        out,
        "Downstream ({method}{}): {} found, {} run, {} kept",
        if d.map_cached { ", map cached" } else { "" },
        d.found,
        d.run,
        d.kept
    );
    if d.skipped > 0 {
        let _ = write!(out, ", {} beyond --downstream-max", d.skipped);
    }
    if d.broken_at_base > 0 {
        let _ = write!(out, ", {} broken at base", d.broken_at_base);
    }
    out.push('\n');
    if let Some(note) = &d.note {
        let _ = writeln!(out, "  {note}");
    }
    if !d.broken.is_empty() {
        let counted = if d.counted_as_p2p {
            " (counted as P2P)"
        } else {
            " (the outcome is the task's lists' alone)"
        };
        let _ = writeln!(out, "Downstream tests broken by the patch{counted}:");
        for t in &d.broken {
            test_line(out, t);
        }
    }
    out.push('\n');
}

/// The grid with the outcome's cell in brackets.
fn grid(out: &mut String, outcome: Outcome) {
    let mut t = Table::new([
        ("", Align::Left),
        ("all P2P", Align::Left),
        ("some P2P", Align::Left),
        ("no P2P", Align::Left),
    ]);
    for (f, row) in Level::ALL
        .into_iter()
        .zip(["all F2P", "some F2P", "no F2P"])
    {
        let cells = Level::ALL.into_iter().map(|p| {
            let cell = Outcome::from_grid(f, p);
            if outcome.cell() == Some((f, p)) {
                format!("[{}]", cell.title())
            } else {
                format!(" {} ", cell.title())
            }
        });
        t.row(std::iter::once(row.to_string()).chain(cells));
    }
    out.push_str(&t.text(""));
    out.push('\n');
}

fn section(out: &mut String, title: &str, v: &Verdict, pred: impl Fn(&GradedTest) -> bool) {
    let tests: Vec<&GradedTest> = v.tests.iter().filter(|t| pred(t)).collect();
    if tests.is_empty() {
        return;
    }
    let _ = writeln!(out, "{title}");
    for t in tests {
        test_line(out, t);
        if !t.did_you_mean.is_empty() {
            let _ = writeln!(
                out,
                "           did you mean: {}",
                t.did_you_mean.join(", ")
            );
        }
    }
    out.push('\n');
}

/// `  FAILED   id — message`.
fn test_line(out: &mut String, t: &GradedTest) {
    let _ = writeln!(
        out,
        "  {:8} {}{}",
        t.status.name().to_uppercase(),
        t.id,
        msg(&t.message)
    );
}

fn msg(m: &Option<String>) -> String {
    m.as_deref()
        .and_then(|m| m.lines().next())
        .map(|m| format!(" — {m}"))
        .unwrap_or_default()
}

fn secs(ms: u64) -> f64 {
    ms as f64 / 1000.0
}
