//! `compare`: two runs over the same tasks, outcome by outcome, so that a change that trades
//! Regression for No-Op shows even when the resolve rate stays flat.

use super::results::id;
use super::stats::mcnemar_exact;
use crate::judge::verdict::{Outcome, Verdict};
use serde::Serialize;
use std::collections::BTreeMap;

/// A binary property (resolved, regression) in both runs, paired by task.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Paired {
    /// Tasks with it in A.
    pub a: usize,
    /// Tasks with it in B.
    pub b: usize,
    /// Tasks with it in B but not in A.
    pub gained: Vec<String>,
    /// Tasks with it in A but not in B.
    pub lost: Vec<String>,
    /// Exact McNemar p-value of `gained` against `lost`: how likely a split at least this
    /// uneven is if the change made no difference.
    pub p_value: f64,
}

impl Paired {
    fn of(pairs: &[(&str, Outcome, Outcome)], outcome: Outcome) -> Paired {
        let ids = |pred: &dyn Fn(Outcome, Outcome) -> bool| -> Vec<String> {
            pairs
                .iter()
                .filter(|(_, a, b)| pred(*a, *b))
                .map(|(id, _, _)| id.to_string())
                .collect()
        };
        let gained = ids(&|a, b| a != outcome && b == outcome);
        let lost = ids(&|a, b| a == outcome && b != outcome);
        Paired {
            a: pairs.iter().filter(|(_, a, _)| *a == outcome).count(),
            b: pairs.iter().filter(|(_, _, b)| *b == outcome).count(),
            p_value: mcnemar_exact(gained.len() as u64, lost.len() as u64),
            gained,
            lost,
        }
    }
}

/// One changed cell of the transition matrix.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Transition {
    /// The outcome in A.
    pub from: Outcome,
    /// The outcome in B.
    pub to: Outcome,
    /// The tasks that moved so.
    pub tasks: Vec<String>,
}

/// One outcome's count in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Net {
    /// The outcome.
    pub outcome: Outcome,
    /// Tasks in A.
    pub a: usize,
    /// Tasks in B.
    pub b: usize,
    /// `b - a`.
    pub change: i64,
}

/// Two runs compared over the tasks both graded.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Comparison {
    /// Version of this document's shape.
    pub schema_version: u32,
    /// The runs' names (their model, or their directory's name): A, then B.
    pub names: [String; 2],
    /// Tasks graded in both runs.
    pub tasks: usize,
    /// Tasks graded only in A, or only in B (not compared).
    pub only_a: Vec<String>,
    /// See `only_a`.
    pub only_b: Vec<String>,
    /// The outcomes of the matrix, in order.
    pub outcomes: Vec<Outcome>,
    /// `matrix[i][j]`: tasks with `outcomes[i]` in A and `outcomes[j]` in B.
    pub matrix: Vec<Vec<usize>>,
    /// Every off-diagonal cell with tasks, the most tasks first.
    pub changed: Vec<Transition>,
    /// Per outcome, both counts and the change.
    pub net: Vec<Net>,
    /// The resolve rate, paired.
    pub resolved: Paired,
    /// The Regression rate, paired.
    pub regression: Paired,
    /// Regression in A, No-Op in B: safer.
    pub safer: Vec<String>,
    /// No-Op in A, Regression in B: worse.
    pub worse: Vec<String>,
    /// Tasks (of those in both runs) whose patch broke downstream tests, in A and in B.
    pub downstream_breakage: (Vec<String>, Vec<String>),
}

impl Comparison {
    /// Compare run A with run B.
    pub fn of(a: &[Verdict], b: &[Verdict]) -> Comparison {
        let b_by: BTreeMap<&str, Outcome> = b.iter().map(|v| (id(v), v.outcome)).collect();
        let a_by: BTreeMap<&str, Outcome> = a.iter().map(|v| (id(v), v.outcome)).collect();
        let pairs: Vec<(&str, Outcome, Outcome)> = a_by
            .iter()
            .filter_map(|(id, oa)| Some((*id, *oa, *b_by.get(id)?)))
            .collect();
        let only = |x: &BTreeMap<&str, Outcome>, y: &BTreeMap<&str, Outcome>| -> Vec<String> {
            x.keys()
                .filter(|k| !y.contains_key(*k))
                .map(|k| k.to_string())
                .collect()
        };
        let mut outcomes: Vec<Outcome> = Outcome::ALL.to_vec();
        outcomes.extend(
            Outcome::P2P_ONLY
                .iter()
                .filter(|o| pairs.iter().any(|(_, a, b)| a == *o || b == *o)),
        );
        let at = |o: Outcome| outcomes.iter().position(|x| *x == o).unwrap_or(0);
        let mut matrix = vec![vec![0usize; outcomes.len()]; outcomes.len()];
        let mut cells: BTreeMap<(Outcome, Outcome), Vec<String>> = BTreeMap::new();
        for (id, oa, ob) in &pairs {
            matrix[at(*oa)][at(*ob)] += 1;
            if oa != ob {
                cells.entry((*oa, *ob)).or_default().push(id.to_string());
            }
        }
        let mut changed: Vec<Transition> = cells
            .into_iter()
            .map(|((from, to), tasks)| Transition { from, to, tasks })
            .collect();
        changed.sort_by_key(|t| std::cmp::Reverse(t.tasks.len()));
        let net = outcomes
            .iter()
            .map(|o| {
                let a = pairs.iter().filter(|(_, x, _)| x == o).count();
                let b = pairs.iter().filter(|(_, _, y)| y == o).count();
                Net {
                    outcome: *o,
                    a,
                    b,
                    change: b as i64 - a as i64,
                }
            })
            .collect();
        let moved = |from: Outcome, to: Outcome| -> Vec<String> {
            changed
                .iter()
                .find(|t| t.from == from && t.to == to)
                .map(|t| t.tasks.clone())
                .unwrap_or_default()
        };
        let breaking = |run: &[Verdict]| -> Vec<String> {
            run.iter()
                .filter(|v| v.downstream.as_ref().is_some_and(|d| !d.broken.is_empty()))
                .map(|v| id(v).to_string())
                .filter(|i| pairs.iter().any(|(p, _, _)| p == i))
                .collect()
        };
        Comparison {
            schema_version: super::SCHEMA_VERSION,
            names: ["A".into(), "B".into()],
            downstream_breakage: (breaking(a), breaking(b)),
            tasks: pairs.len(),
            only_a: only(&a_by, &b_by),
            only_b: only(&b_by, &a_by),
            resolved: Paired::of(&pairs, Outcome::Resolved),
            regression: Paired::of(&pairs, Outcome::Regression),
            safer: moved(Outcome::Regression, Outcome::NoOp),
            worse: moved(Outcome::NoOp, Outcome::Regression),
            outcomes,
            matrix,
            changed,
            net,
        }
    }
}

impl Comparison {
    /// The comparison with its runs named (the defaults are `A` and `B`).
    pub fn named(mut self, a: String, b: String) -> Comparison {
        self.names = [a, b];
        self
    }
}
