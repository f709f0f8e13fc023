//! Where the two scorings disagree: the rule behind every test patchgrade's and SWE-bench's
//! classifications count differently, and the other scoring's grade when its outcome differs.

use super::classify::Classification;
use super::outcome::Outcome;
use super::scoring::{Effect, Scoring};
use crate::observe::TestStatus;
use serde::{Deserialize, Serialize};

/// Why the two scorings count a test differently.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum ScoringRule {
    /// SWE-bench has no baseline: a P2P test already failing at base counts against the
    /// patch (or, passing after it, for it); patchgrade leaves it out.
    NoBaselineExclusion,
    /// SWE-bench runs once: a test that failed and then passed on a retry is a failure there.
    FirstAttemptOnly,
    /// SWE-bench counts a skipped test neither way where its log shows skips (Django); an F2P
    /// axis of skips alone is then full. patchgrade counts a skip as not passing, except a
    /// P2P test skipped at base too.
    SkippedNotCounted,
    /// SWE-bench's log shows no id for a skipped test (pytest's `-rA` summary, sympy) or an
    /// expected failure (Django, sympy), so it is absent there and fails; patchgrade keeps a
    /// P2P test that is skipped at base and after.
    SkippedIsAbsent,
    /// SWE-bench counts pytest's xfail as passing; patchgrade as not passing.
    XfailPasses,
    /// SWE-bench's log parser cannot read the line of a test that ran (sympy's last test of
    /// each file, whose line ends with the file's `[OK]` or `[FAIL]`): absent, so failing.
    UnreadInLog,
}

/// One rule and the tests it decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuleDifference {
    /// The rule.
    pub rule: ScoringRule,
    /// The tests (ids as given) the scorings count differently by it.
    pub tests: Vec<String>,
}

/// The other scoring's grade of the same observations, when its outcome differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OtherScoring {
    /// The other scoring.
    pub scoring: Scoring,
    /// Its outcome.
    pub outcome: Outcome,
    /// The rules that made the two differ, with the tests each decided.
    pub rules: Vec<RuleDifference>,
}

/// The rules behind every test the two classifications count differently. Both list the same
/// tests in the same order.
pub fn differences(own: &Classification, swebench: &Classification) -> Vec<RuleDifference> {
    let mut out: Vec<RuleDifference> = Vec::new();
    for (a, b) in own.tests.iter().zip(&swebench.tests) {
        if a.effect == b.effect {
            continue;
        }
        let rule = if a.effect == Effect::BrokenAtBase {
            ScoringRule::NoBaselineExclusion
        } else if a.status == TestStatus::Flaky {
            ScoringRule::FirstAttemptOnly
        } else if b.effect == Effect::Uncounted {
            ScoringRule::SkippedNotCounted
        } else if matches!(b.effect, Effect::Broken | Effect::NotFixed) && a.status.is_pass() {
            ScoringRule::UnreadInLog
        } else if matches!(b.effect, Effect::Broken | Effect::NotFixed) {
            ScoringRule::SkippedIsAbsent
        } else {
            // patchgrade counts every status SWE-bench passes as passing except an xfail.
            ScoringRule::XfailPasses
        };
        match out.iter_mut().find(|d| d.rule == rule) {
            Some(d) => d.tests.push(a.id.clone()),
            None => out.push(RuleDifference {
                rule,
                tests: vec![a.id.clone()],
            }),
        }
    }
    out.sort_by_key(|d| d.rule);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::classify::{Observed, classify};
    use crate::observe::Observation;
    use crate::observe::status::SwebenchLog;
    use crate::observe::{Group, SwebenchView};
    use TestStatus::*;

    /// One test: (id, group, after, xfail, base).
    type Row = (&'static str, Group, TestStatus, bool, Option<TestStatus>);

    fn both(rows: &[Row]) -> (Classification, Classification) {
        let observed = || {
            rows.iter()
                .map(|&(id, group, after, xfail, base)| Observed {
                    id,
                    group,
                    after: Observation::bare(after),
                    base: base.map(Observation::bare),
                    // A flaky test's first attempt failed.
                    swebench: SwebenchView::of_cases(
                        SwebenchLog::Generic,
                        [(if after == Flaky { Failed } else { after }, xfail)],
                    ),
                    did_you_mean: Vec::new(),
                    not_run: None,
                })
                .collect::<Vec<_>>()
        };
        (
            classify(observed(), Scoring::Patchgrade),
            classify(observed(), Scoring::Swebench),
        )
    }

    #[test]
    fn the_same_observations_grade_alike_when_no_rule_differs() {
        let (own, swe) = both(&[
            ("f", Group::F2p, Passed, false, Some(Failed)),
            ("p", Group::P2p, Passed, false, Some(Passed)),
            ("q", Group::P2p, Failed, false, Some(Passed)),
        ]);
        assert_eq!(own.outcome, Outcome::BreakingResolved);
        assert_eq!(swe.outcome, Outcome::BreakingResolved);
        assert!(differences(&own, &swe).is_empty());
    }

    #[test]
    fn each_rule_is_named_with_its_tests() {
        // An xfail F2P test: SWE-bench resolves, patchgrade does not.
        let (own, swe) = both(&[
            ("f", Group::F2p, Skipped, true, Some(Failed)),
            ("p", Group::P2p, Passed, false, Some(Passed)),
        ]);
        assert_eq!(
            (own.outcome, swe.outcome),
            (Outcome::NoOp, Outcome::Resolved)
        );
        assert_eq!(
            differences(&own, &swe),
            [RuleDifference {
                rule: ScoringRule::XfailPasses,
                tests: vec!["f".into()]
            }]
        );
        // Skipped F2P tests alone: SWE-bench's F2P axis is vacuously full.
        let (own, swe) = both(&[
            ("f", Group::F2p, Skipped, false, Some(Failed)),
            ("p", Group::P2p, Passed, false, Some(Passed)),
        ]);
        assert_eq!(
            (own.outcome, swe.outcome),
            (Outcome::NoOp, Outcome::Resolved)
        );
        assert_eq!((swe.f2p.total, swe.f2p.excluded), (0, 1));
        assert_eq!(
            differences(&own, &swe)[0].rule,
            ScoringRule::SkippedNotCounted
        );
        // A P2P test broken at base and after: patchgrade leaves it out, SWE-bench does not.
        let (own, swe) = both(&[
            ("f", Group::F2p, Passed, false, Some(Failed)),
            ("p", Group::P2p, Failed, false, Some(Failed)),
        ]);
        assert_eq!(
            (own.outcome, swe.outcome),
            (Outcome::Resolved, Outcome::BreakingResolved)
        );
        assert_eq!(
            differences(&own, &swe)[0].rule,
            ScoringRule::NoBaselineExclusion
        );
        // A retry that passed: SWE-bench saw the failure.
        let (own, swe) = both(&[("f", Group::F2p, Flaky, false, Some(Failed))]);
        assert_eq!(
            (own.outcome, swe.outcome),
            (Outcome::Resolved, Outcome::NoOp)
        );
        assert_eq!(
            differences(&own, &swe)[0].rule,
            ScoringRule::FirstAttemptOnly
        );
        // A P2P test passing at base and skipped after: breakage here, nothing there.
        let (own, swe) = both(&[
            ("f", Group::F2p, Passed, false, Some(Failed)),
            ("p", Group::P2p, Skipped, false, Some(Passed)),
        ]);
        assert_eq!(
            (own.outcome, swe.outcome),
            (Outcome::BreakingResolved, Outcome::Resolved)
        );
        assert_eq!(
            differences(&own, &swe)[0].rule,
            ScoringRule::SkippedNotCounted
        );
    }
}
