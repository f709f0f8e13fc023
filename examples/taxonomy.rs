//! The taxonomy's tables and figure (docs/taxonomy.md, issue 32), drawn from its results file by patchgrade's report.
//!
//! ```sh
//! cargo run --example taxonomy -- docs/taxonomy/results.jsonl docs/taxonomy/figure.svg
//! ```
//!
//! Prints the tables (Markdown) and writes the figure (SVG). Counted: the predictions graded
//! in an environment their instance's gold patch resolves in (one SWE-bench's own validation
//! would accept); the others are counted apart, never dropped. `tests/it/main.rs` includes
//! this file to check that the page and the figure are what the results file gives.

use patchgrade::Outcome;
use patchgrade::report::{Bar, Distribution, DistributionFormat, render};
use serde_json::Value;
use std::collections::BTreeMap;

/// One line of the results file.
struct Row {
    run: String,
    repo: String,
    outcome: Option<Outcome>,
    gold_resolved: bool,
    /// Whether SWE-bench's scoring resolves the gold patch here too.
    gold_swebench: bool,
    official: Option<bool>,
    swebench: Option<bool>,
}

fn rows(results: &str) -> Vec<Row> {
    results
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| Row {
            run: v["run"].as_str().unwrap_or_default().to_string(),
            repo: v["repo"].as_str().unwrap_or_default().to_string(),
            outcome: v["outcome"].as_str().and_then(|o| o.parse().ok()),
            gold_resolved: v["gold_outcome"] == "resolved",
            gold_swebench: v["gold_swebench_resolved"] == true,
            official: v["official_resolved"].as_bool(),
            swebench: v["swebench_resolved"].as_bool(),
        })
        .collect()
}

/// The counted rows: graded, in a validated environment.
fn counted(rows: &[Row]) -> Vec<&Row> {
    rows.iter()
        .filter(|r| r.outcome.is_some() && r.gold_resolved)
        .collect()
}

fn bars_by(rows: &[&Row], key: impl Fn(&Row) -> &str) -> Vec<Bar> {
    let mut groups: BTreeMap<&str, BTreeMap<Outcome, usize>> = BTreeMap::new();
    for r in rows {
        if let Some(o) = r.outcome {
            *groups.entry(key(r)).or_default().entry(o).or_default() += 1;
        }
    }
    groups
        .into_iter()
        .map(|(label, counts)| Bar {
            label: label.to_string(),
            counts: counts.into_iter().collect(),
        })
        .collect()
}

/// The figure: the outcome distribution per run.
pub fn figure(results: &str) -> String {
    let rows = rows(results);
    let counted = counted(&rows);
    let bars = bars_by(&counted, |r| &r.run);
    let title = format!(
        "Outcomes of {} real SWE-bench Lite predictions, graded by patchgrade",
        counted.len()
    );
    let doc = Distribution {
        title: &title,
        kind: "run",
        bars: &bars,
    };
    render(&doc, DistributionFormat::Svg).unwrap_or_default()
}

/// The tables and the figures they give: per run, per repository, the share of No-Op and
/// Regression among the applied, unresolved patches, and the agreement with the official
/// flags.
pub fn tables(results: &str) -> String {
    let rows = rows(results);
    let counted = counted(&rows);
    let table = |kind: &str, bars: Vec<Bar>| {
        let doc = Distribution {
            title: "",
            kind,
            bars: &bars,
        };
        render(&doc, DistributionFormat::Markdown).unwrap_or_default()
    };
    let mut out = table("run", bars_by(&counted, |r| &r.run));
    out.push('\n');
    out.push_str(&table("repository", bars_by(&counted, |r| &r.repo)));
    let unresolved_applied = counted
        .iter()
        .filter(|r| {
            !matches!(
                r.outcome,
                Some(
                    Outcome::Resolved | Outcome::EmptyPatch | Outcome::PatchFailed | Outcome::Error
                )
            )
        })
        .count();
    let idle_or_worse = counted
        .iter()
        .filter(|r| matches!(r.outcome, Some(Outcome::NoOp | Outcome::Regression)))
        .count();
    // Compared with the official flags only where SWE-bench's own scoring resolves the gold
    // patch here as well: elsewhere its rules meet a test this environment cannot pass (one
    // needing the network, an id that names no test), whatever the prediction.
    let flagged: Vec<&&Row> = counted
        .iter()
        .filter(|r| r.official.is_some() && r.gold_swebench)
        .collect();
    let agree = flagged.iter().filter(|r| r.swebench == r.official).count();
    let apart = rows
        .iter()
        .filter(|r| r.outcome.is_some() && !r.gold_resolved)
        .count();
    let waiting = rows.iter().filter(|r| r.outcome.is_none()).count();
    let pct = |a: usize, b: usize| {
        if b == 0 {
            "-".to_string()
        } else {
            format!("{:.1}%", 100.0 * a as f64 / b as f64)
        }
    };
    out.push_str(&format!(
        "\n- Counted: {} graded predictions whose instance's gold patch resolves here; {} more \
         graded where it does not (kept apart); {} not graded.\n\
         - No-Op + Regression among the applied, unresolved patches: {} of {} ({}).\n\
         - Resolved by SWE-bench's scoring against the official flag, where that scoring resolves \
         the gold patch here too: {} of {} agree ({}).\n",
        counted.len(),
        apart,
        waiting,
        idle_or_worse,
        unresolved_applied,
        pct(idle_or_worse, unresolved_applied),
        agree,
        flagged.len(),
        pct(agree, flagged.len()),
    ));
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [results, svg] = args.as_slice() else {
        return Err("usage: taxonomy RESULTS.jsonl FIGURE.svg".into());
    };
    let text = std::fs::read_to_string(results)?;
    std::fs::write(svg, figure(&text))?;
    print!("{}", tables(&text));
    Ok(())
}
