//! Gates for CI: conditions on a run's summary (`report --fail-if 'regression>0'`,
//! `--min-resolve-rate 0.4`) and on a comparison (`compare --fail-on-worse`), so that a
//! workflow can block a change to an agent.

use super::compare::Comparison;
use super::summary::Summary;
use crate::judge::Outcome;
use std::fmt;
use std::str::FromStr;

/// What a gate measures on a summary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measure {
    /// Tasks with this outcome.
    Outcome(Outcome),
    /// `resolved` among all tasks (a fraction; `40%` is read as 0.4).
    ResolveRate,
    /// `regression` among the applied, unresolved patches.
    RegressionShare,
    /// Tasks whose patch broke downstream tests.
    DownstreamBreakage,
    /// Suspect tasks.
    Suspect,
    /// Tasks of the dataset without a result.
    Incomplete,
}

/// A comparison: `>`, `>=`, `<`, `<=`, `==`, `!=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `==` (or `=`)
    Eq,
    /// `!=`
    Ne,
}

/// One `--fail-if` condition: the run fails when it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// What is measured.
    pub measure: Measure,
    /// How it is compared.
    pub op: Op,
    /// With what.
    pub value: f64,
    /// As written, for messages.
    pub text: String,
}

/// A condition that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid condition `{0}`: expected NAME OP NUMBER, e.g. 'regression>0' or \
     'resolve_rate<0.4' (NAME: an outcome, resolve_rate, regression_share, \
     downstream_breakage, suspect, incomplete; OP: > >= < <= == !=)"
)]
pub struct BadCondition(pub String);

impl FromStr for Condition {
    type Err = BadCondition;

    fn from_str(s: &str) -> Result<Condition, BadCondition> {
        let bad = || BadCondition(s.to_string());
        let at = s.find(['<', '>', '=', '!']).ok_or_else(bad)?;
        let (name, rest) = s.split_at(at);
        let (op, number) = [
            (">=", Op::Ge),
            ("<=", Op::Le),
            ("==", Op::Eq),
            ("!=", Op::Ne),
            (">", Op::Gt),
            ("<", Op::Lt),
            ("=", Op::Eq),
        ]
        .iter()
        .find_map(|(t, op)| rest.strip_prefix(t).map(|n| (*op, n)))
        .ok_or_else(bad)?;
        let measure = match name.trim().replace('-', "_").as_str() {
            "resolve_rate" => Measure::ResolveRate,
            "regression_share" => Measure::RegressionShare,
            "downstream_breakage" => Measure::DownstreamBreakage,
            "suspect" => Measure::Suspect,
            "incomplete" => Measure::Incomplete,
            other => Measure::Outcome(other.replace('_', "-").parse().map_err(|_| bad())?),
        };
        let number = number.trim();
        let value = match number.strip_suffix('%') {
            Some(p) => p.trim().parse::<f64>().map_err(|_| bad())? / 100.0,
            None => number.parse::<f64>().map_err(|_| bad())?,
        };
        if !value.is_finite() {
            return Err(bad());
        }
        Ok(Condition {
            measure,
            op,
            value,
            text: s.trim().to_string(),
        })
    }
}

impl Condition {
    /// The measured value on a summary.
    pub fn measured(&self, s: &Summary) -> f64 {
        match self.measure {
            Measure::Outcome(o) => s
                .counts
                .iter()
                .find(|c| c.outcome == o)
                .map_or(0, |c| c.count) as f64,
            Measure::ResolveRate => s.resolve_rate.rate,
            Measure::RegressionShare => s.regression_share.rate,
            Measure::DownstreamBreakage => {
                s.downstream_breakage.values().map(Vec::len).sum::<usize>() as f64
            }
            Measure::Suspect => s.suspect_tasks.len() as f64,
            Measure::Incomplete => s.incomplete.len() as f64,
        }
    }

    /// Whether the condition holds (and so the run fails).
    pub fn holds(&self, s: &Summary) -> bool {
        let x = self.measured(s);
        match self.op {
            Op::Gt => x > self.value,
            Op::Ge => x >= self.value,
            Op::Lt => x < self.value,
            Op::Le => x <= self.value,
            Op::Eq => x == self.value,
            Op::Ne => x != self.value,
        }
    }
}

/// Why a gate failed, one line each.
#[derive(Debug, Clone, PartialEq)]
pub struct Failed(pub Vec<String>);

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("\n"))
    }
}

/// The conditions that hold on a summary, each as a line: empty when the run passes.
pub fn check_summary(s: &Summary, conditions: &[Condition]) -> Vec<String> {
    conditions
        .iter()
        .filter(|c| c.holds(s))
        .map(|c| {
            let x = c.measured(s);
            let shown = match c.measure {
                Measure::ResolveRate | Measure::RegressionShare => format!("{x:.4}"),
                _ => format!("{x}"),
            };
            format!("gate failed: {} (it is {shown})", c.text)
        })
        .collect()
}

/// `compare --fail-on-worse`: B's Regression rate rose, significantly (exact McNemar p below
/// `alpha`), over the tasks both runs graded. The line saying so, if it did.
pub fn worse(c: &Comparison, alpha: f64) -> Option<String> {
    let r = &c.regression;
    (r.b > r.a && r.p_value < alpha).then(|| {
        format!(
            "gate failed: Regression rose from {} to {} of {} tasks (exact McNemar p = {:.4} < \
             {alpha}): {}",
            r.a,
            r.b,
            c.tasks,
            r.p_value,
            r.gained.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_read_every_form_and_refuse_the_rest() {
        let c: Condition = "regression>0".parse().unwrap();
        assert_eq!(
            (c.measure, c.op, c.value),
            (Measure::Outcome(Outcome::Regression), Op::Gt, 0.0)
        );
        let c: Condition = "resolve_rate < 40%".parse().unwrap();
        assert_eq!(
            (c.measure, c.op, c.value),
            (Measure::ResolveRate, Op::Lt, 0.4)
        );
        let c: Condition = "no-op>=3".parse().unwrap();
        assert_eq!(c.measure, Measure::Outcome(Outcome::NoOp));
        let c: Condition = "breaking_resolved!=0".parse().unwrap();
        assert_eq!(
            (c.measure, c.op),
            (Measure::Outcome(Outcome::BreakingResolved), Op::Ne)
        );
        for bad in [
            "regression",
            "regresion>0",
            "regression>x",
            "resolve_rate<<1",
            ">1",
            "x>nan",
        ] {
            assert!(bad.parse::<Condition>().is_err(), "{bad}");
        }
    }
}
