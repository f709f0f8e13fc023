//! `report`: the whole outcome distribution of a batch's results, not one resolve rate.

use super::results::id;
use super::stats::{share, wilson};
use crate::judge::verdict::{Level, NotRunReason, Outcome, Stage, Verdict};
use serde::Serialize;
use std::collections::BTreeMap;

/// A proportion with its 95% Wilson interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Rate {
    /// Successes.
    pub count: u64,
    /// Trials.
    pub of: u64,
    /// `count / of` (0 when `of` is 0).
    pub rate: f64,
    /// Lower bound of the 95% interval.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Rate {
    /// `count` of `of`.
    pub fn new(count: u64, of: u64) -> Rate {
        let (low, high) = wilson(count, of);
        Rate {
            count,
            of,
            rate: if of == 0 {
                0.0
            } else {
                count as f64 / of as f64
            },
            low,
            high,
        }
    }
}

/// One outcome's count.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Count {
    /// The outcome.
    pub outcome: Outcome,
    /// Tasks that ended in it.
    pub count: usize,
    /// Their share of all tasks.
    pub share: f64,
}

/// The distribution of a run's outcomes.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Summary {
    /// Version of this document's shape ([`super::SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// Tasks: those with a result, and those of the dataset without one (`incomplete`).
    pub tasks: usize,
    /// Tasks of the dataset (`report --tasks`) with no result: counted in `tasks`, so in the
    /// resolve rate's denominator, as not resolved.
    pub incomplete: Vec<String>,
    /// Tasks SWE-bench's rules resolve, whatever scoring graded them.
    pub swebench_resolved: usize,
    /// The nine outcomes (and the P2P-only ones, when any task had no F2P ids), in order.
    pub counts: Vec<Count>,
    /// Tasks per grid cell: rows F2P all/some/none, columns P2P all/some/none.
    pub grid: [[usize; 3]; 3],
    /// `resolved` among all tasks.
    pub resolve_rate: Rate,
    /// `regression` among the patches that applied, were judged and did not resolve: of the
    /// patches that failed, how many made things worse rather than nothing.
    pub regression_share: Rate,
    /// Tasks with P2P tests already failing at base (left out of their P2P axis).
    pub broken_at_base_tasks: usize,
    /// Those P2P tests, over all tasks.
    pub broken_at_base_tests: usize,
    /// Suspect tasks: F2P tests that already pass at base or are in neither report, P2P tests
    /// missing at base.
    pub suspect_tasks: Vec<String>,
    /// Tasks whose baseline could not be judged (or that could not be run): broken tasks.
    pub broken_tasks: Vec<String>,
    /// Tasks whose candidate cut its own run short (it crashed, hung or broke the setup while
    /// the baseline ran), per reason: graded against the patch and counted by their outcome.
    pub cut_short: BTreeMap<NotRunReason, Vec<String>>,
    /// Instance ids per outcome.
    pub by_outcome: BTreeMap<Outcome, Vec<String>>,
    /// Tasks whose patch broke downstream tests (outside their lists), per outcome: how many
    /// `no-op` patches were really regressions. Empty when no task ran downstream tests.
    pub downstream_breakage: BTreeMap<Outcome, Vec<String>>,
}

impl Summary {
    /// Count the verdicts, and the tasks of a dataset (its instance ids) that have none.
    pub fn with_tasks(verdicts: &[Verdict], tasks: &[String]) -> Summary {
        let have: std::collections::HashSet<&str> = verdicts.iter().map(id).collect();
        let mut incomplete: Vec<String> = tasks
            .iter()
            .filter(|t| !have.contains(t.as_str()))
            .cloned()
            .collect();
        incomplete.sort();
        incomplete.dedup();
        let mut s = Summary::of(verdicts);
        let n = s.tasks + incomplete.len();
        for c in &mut s.counts {
            c.share = share(c.count, n);
        }
        s.resolve_rate = Rate::new(s.resolve_rate.count, n as u64);
        s.tasks = n;
        s.incomplete = incomplete;
        s
    }

    /// Count the verdicts.
    pub fn of(verdicts: &[Verdict]) -> Summary {
        let mut by_outcome: BTreeMap<Outcome, Vec<String>> = BTreeMap::new();
        let mut grid = [[0usize; 3]; 3];
        let (mut bab_tasks, mut bab_tests) = (0, 0);
        let (mut suspect, mut broken) = (Vec::new(), Vec::new());
        let mut downstream: BTreeMap<Outcome, Vec<String>> = BTreeMap::new();
        let mut cut_short: BTreeMap<NotRunReason, Vec<String>> = BTreeMap::new();
        for v in verdicts {
            if let Some(a) = &v.aborted {
                cut_short
                    .entry(a.reason)
                    .or_default()
                    .push(id(v).to_string());
            }
            if v.downstream.as_ref().is_some_and(|d| !d.broken.is_empty()) {
                downstream
                    .entry(v.outcome)
                    .or_default()
                    .push(id(v).to_string());
            }
            by_outcome
                .entry(v.outcome)
                .or_default()
                .push(id(v).to_string());
            if let Some((f, p)) = cell(v.outcome, v.p2p.level) {
                grid[f.index()][p.index()] += 1;
            }
            if v.p2p.excluded > 0 {
                bab_tasks += 1;
                bab_tests += v.p2p.excluded;
            }
            if v.warnings.iter().any(|w| w.kind.suspects_task()) {
                suspect.push(id(v).to_string());
            }
            if v.error.as_ref().is_some_and(|e| e.stage == Stage::Baseline) {
                broken.push(id(v).to_string());
            }
        }
        let n = verdicts.len();
        let count = |o: Outcome| by_outcome.get(&o).map_or(0, Vec::len);
        let mut shown: Vec<Outcome> = Outcome::ALL.to_vec();
        shown.extend(Outcome::P2P_ONLY.iter().filter(|o| count(**o) > 0));
        let counts = shown
            .into_iter()
            .map(|o| Count {
                outcome: o,
                count: count(o),
                share: share(count(o), n),
            })
            .collect();
        let unresolved_applied: usize = [
            Outcome::BreakingResolved,
            Outcome::PartiallyResolved,
            Outcome::WorkInProgress,
            Outcome::NoOp,
            Outcome::Regression,
        ]
        .into_iter()
        .map(count)
        .sum();
        Summary {
            schema_version: super::SCHEMA_VERSION,
            tasks: n,
            incomplete: Vec::new(),
            swebench_resolved: verdicts
                .iter()
                .filter(|v| super::swebench::swebench_resolved(v))
                .count(),
            counts,
            grid,
            resolve_rate: Rate::new(count(Outcome::Resolved) as u64, n as u64),
            regression_share: Rate::new(
                count(Outcome::Regression) as u64,
                unresolved_applied as u64,
            ),
            broken_at_base_tasks: bab_tasks,
            broken_at_base_tests: bab_tests,
            suspect_tasks: suspect,
            broken_tasks: broken,
            cut_short,
            by_outcome,
            downstream_breakage: downstream,
        }
    }
}

/// The grid cell of a grid outcome: (F2P level, P2P level). The P2P column of a
/// `*-resolved`/`work-in-progress`/`regression` outcome is its observed level.
fn cell(outcome: Outcome, p2p: Level) -> Option<(Level, Level)> {
    let f2p = match outcome {
        Outcome::Resolved | Outcome::BreakingResolved => Level::All,
        Outcome::PartiallyResolved | Outcome::WorkInProgress => Level::Some,
        Outcome::NoOp | Outcome::Regression => Level::None,
        _ => return None,
    };
    Some((f2p, p2p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_cells_follow_the_outcome_and_the_observed_p2p_level() {
        assert_eq!(
            cell(Outcome::Regression, Level::None),
            Some((Level::None, Level::None))
        );
        assert_eq!(
            cell(Outcome::BreakingResolved, Level::Some),
            Some((Level::All, Level::Some))
        );
        assert_eq!(cell(Outcome::PatchFailed, Level::All), None);
        assert_eq!(cell(Outcome::NoBreakage, Level::All), None);
    }
}
