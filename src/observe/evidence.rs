//! Evidence: what one run (candidate or baseline) produced, the contract between running the
//! tests and judging them, and the tests it was asked about.

use super::ids::{IdSyntax, Index};
use super::junit::Report;
use super::status::{NotRunReason, TestStatus};
use serde::{Deserialize, Serialize};

/// What one run produced.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Evidence {
    /// The first attempt's report, then one report per retry of the tests that did not pass.
    pub attempts: Vec<Report>,
    /// Ids the runner refused (pytest: "not found"), with its words; they were left out of the
    /// run so the others could be graded.
    pub rejected: Vec<(String, String)>,
    /// The run ended without a usable report by the candidate's doing: the requested tests
    /// its (partial, often empty) report does not hold were not run, and count as failing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<NotRunReason>,
    /// The runner failed inside (pytest's `INTERNALERROR`), in words: its report is what it
    /// wrote before, where a failure it could not write may read as a pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_failure: Option<String>,
}

impl Evidence {
    /// Evidence from one report.
    pub fn single(report: Report) -> Evidence {
        Evidence {
            attempts: vec![report],
            rejected: Vec::new(),
            not_run: None,
            runner_failure: None,
        }
    }

    /// The evidence of a run the candidate cut short: what its report held, if anything, and
    /// every other test not run for this reason.
    pub fn cut_short(partial: Option<Report>, reason: NotRunReason) -> Evidence {
        Evidence {
            attempts: vec![partial.unwrap_or_default()],
            rejected: Vec::new(),
            not_run: Some(reason),
            runner_failure: None,
        }
    }

    /// Each attempt's report indexed by one id syntax, once, for every reader of this
    /// evidence (grading each group, listing the tests of files run whole, cutting a stored
    /// baseline down). Built on demand rather than kept inside, as the evidence's fields are
    /// open to change and a kept index could go stale.
    pub fn index(&self, syntax: IdSyntax) -> Indexed<'_> {
        Indexed {
            evidence: self,
            attempts: self
                .attempts
                .iter()
                .map(|r| Index::new(r, syntax))
                .collect(),
        }
    }
}

/// Evidence with each attempt's report indexed (see [`Evidence::index`]).
#[derive(Debug)]
pub struct Indexed<'a> {
    /// The evidence indexed.
    pub evidence: &'a Evidence,
    attempts: Vec<Index<'a>>,
}

impl<'a> Indexed<'a> {
    /// Each attempt's index, the first attempt first.
    pub fn attempts(&self) -> &[Index<'a>] {
        &self.attempts
    }

    /// Only the test cases that grading these ids can look at: those the ids match, and
    /// pytest's collection errors (which explain a missing id). Grading the requested ids
    /// against it gives what grading against the whole evidence gives, except suggestions for
    /// missing ids, which come from the candidate's run; so a stored baseline's size follows
    /// the graded ids, not the suite.
    pub fn for_ids(&self, requested: Requested<'_>) -> Evidence {
        let attempts = self
            .evidence
            .attempts
            .iter()
            .zip(&self.attempts)
            .map(|(report, index)| {
                let mut keep: Vec<(usize, usize)> = requested
                    .iter()
                    .flat_map(|(id, _)| index.matches(id))
                    .map(|c| (c.source, c.index))
                    .collect();
                keep.sort_unstable();
                let cases = report
                    .cases
                    .iter()
                    .filter(|c| {
                        keep.binary_search(&(c.source, c.index)).is_ok()
                            || (c.classname.is_empty() && c.observation.status == TestStatus::Error)
                    })
                    .cloned()
                    .collect();
                Report {
                    cases,
                    ..report.clone_without_cases()
                }
            })
            .collect();
        Evidence {
            attempts,
            rejected: self.evidence.rejected.clone(),
            not_run: self.evidence.not_run,
            runner_failure: self.evidence.runner_failure.clone(),
        }
    }
}

/// Which axis a requested test belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Group {
    /// Fail-to-pass: must pass after the patch.
    F2p,
    /// Pass-to-pass: must keep passing.
    P2p,
}

/// The requested tests, by group.
#[derive(Debug, Clone, Copy)]
pub struct Requested<'a> {
    /// Fail-to-pass ids.
    pub f2p: &'a [String],
    /// Pass-to-pass ids.
    pub p2p: &'a [String],
}

impl<'a> Requested<'a> {
    /// Every id with its group, F2P first.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, Group)> + 'a {
        let f = self.f2p.iter().map(|id| (id.as_str(), Group::F2p));
        f.chain(self.p2p.iter().map(|id| (id.as_str(), Group::P2p)))
    }

    /// Every id, F2P first.
    pub fn ids(&self) -> Vec<String> {
        self.iter().map(|(id, _)| id.to_string()).collect()
    }
}
