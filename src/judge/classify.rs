//! Classification: from per-test observations to axes and a grid outcome.
//!
//! Pure and synchronous, so every cell and edge is unit-tested without running anything.

use super::outcome::{Level, Outcome};
use super::scoring::{Effect, Scoring, swebench_effect};
use crate::observe::{Group, NotRunReason, Observation, SwebenchView, TestStatus};
use serde::{Deserialize, Serialize};

/// One requested test as graded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GradedTest {
    /// The id as the user gave it.
    pub id: String,
    /// F2P or P2P.
    pub group: Group,
    /// What it contributes.
    pub effect: Effect,
    /// What it contributes under the other scoring, when that differs (see
    /// `Verdict::other_scoring`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_effect: Option<Effect>,
    /// Status after the patch.
    pub status: TestStatus,
    /// Status at base, when a baseline was run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_status: Option<TestStatus>,
    /// Message after the patch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// First lines of the failure text after the patch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
    /// Message at base (why it was broken at base).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_message: Option<String>,
    /// For a missing test: the closest ids the report does hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub did_you_mean: Vec<String>,
    /// For a test `not-run` after the patch: why the candidate's run was cut short
    /// (`crashed`, `timed-out`, `setup-failed`; see `Verdict::aborted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run_reason: Option<NotRunReason>,
}

/// Counts for one axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Axis {
    /// Tests counted on this axis (for P2P: without those broken at base).
    pub total: usize,
    /// Of those, how many pass (F2P) or are kept (P2P).
    pub passing: usize,
    /// The level derived from the counts.
    pub level: Level,
    /// Tests left out of the axis: P2P tests broken at base, and under SWE-bench's scoring
    /// tests it counts neither way (skipped).
    pub excluded: usize,
}

impl Axis {
    fn new(passing: usize, total: usize, excluded: usize) -> Axis {
        Axis {
            total,
            passing,
            level: Level::of(passing, total),
            excluded,
        }
    }
}

/// The result of classifying a run's observations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    /// The grid outcome.
    pub outcome: Outcome,
    /// The F2P axis.
    pub f2p: Axis,
    /// The P2P axis.
    pub p2p: Axis,
    /// Every requested test, F2P first, in the order given.
    pub tests: Vec<GradedTest>,
}

/// One requested test with what was observed of it.
#[derive(Debug, Clone)]
pub struct Observed<'a> {
    /// The id as the user gave it.
    pub id: &'a str,
    /// F2P or P2P.
    pub group: Group,
    /// After the patch.
    pub after: Observation,
    /// At base, or `None` when the baseline was not run.
    pub base: Option<Observation>,
    /// How SWE-bench would count it after the patch (its first attempt).
    pub swebench: SwebenchView,
    /// For a missing test: the closest ids the report does hold.
    pub did_you_mean: Vec<String>,
    /// For a test not run after the patch: why the candidate's run was cut short.
    pub not_run: Option<NotRunReason>,
}

/// The effect of one test, from its statuses after the patch and at base.
///
/// Rules (documented in the guide, docs/guide/src/classification.md):
/// - F2P: fixed iff it passes after; its base status never changes that (a pass at base only
///   makes the task suspect, which the caller warns about).
/// - Flaky (failed, then passed on a retry) counts as passing after the patch.
/// - Not run after the patch (the candidate cut its run short) counts as failing.
/// - P2P with a baseline: failed/error/missing/flaky at base → broken at base (not counted);
///   passed at base → kept iff passed after; skipped at base → kept iff passed or skipped after.
/// - P2P without a baseline: kept iff passed after (a skip proves nothing ran).
pub fn effect(group: Group, after: TestStatus, base: Option<TestStatus>) -> Effect {
    match group {
        Group::F2p if after.is_pass() => Effect::Fixed,
        Group::F2p => Effect::NotFixed,
        Group::P2p => match base {
            // A test that is flaky at base cannot tell a patch's breakage from chance.
            Some(
                TestStatus::Failed
                | TestStatus::Error
                | TestStatus::Missing
                | TestStatus::NotRun
                | TestStatus::Flaky,
            ) => Effect::BrokenAtBase,
            Some(TestStatus::Skipped)
                if matches!(after, TestStatus::Passed | TestStatus::Skipped) =>
            {
                Effect::Kept
            }
            _ if after.is_pass() => Effect::Kept,
            _ => Effect::Broken,
        },
    }
}

/// Classify observations into axes and a grid outcome, by one scoring's rules.
pub fn classify(observed: Vec<Observed<'_>>, scoring: Scoring) -> Classification {
    let tests: Vec<GradedTest> = observed
        .into_iter()
        .map(|o| {
            let base_status = o.base.as_ref().map(|b| b.status);
            let effect = match scoring {
                Scoring::Patchgrade => effect(o.group, o.after.status, base_status),
                Scoring::Swebench => swebench_effect(o.group, o.swebench),
            };
            GradedTest {
                id: o.id.to_string(),
                group: o.group,
                effect,
                other_effect: None,
                status: o.after.status,
                base_status,
                message: o.after.message,
                details: o.after.details,
                base_message: o.base.and_then(|b| b.message),
                did_you_mean: o.did_you_mean,
                not_run_reason: o.not_run,
            }
        })
        .collect();
    classify_effects(tests)
}

/// Axes and a grid outcome from tests whose effects are decided (by [`classify`], or by a
/// harness that graded them elsewhere), F2P first.
pub fn classify_effects(mut tests: Vec<GradedTest>) -> Classification {
    let f2p_requested = tests.iter().any(|t| t.group == Group::F2p);
    // Stable: keeps the user's order within each group.
    tests.sort_by_key(|t| t.group == Group::P2p);

    let count = |e: Effect| tests.iter().filter(|t| t.effect == e).count();
    let uncounted = |g: Group| {
        tests
            .iter()
            .filter(|t| t.group == g && t.effect == Effect::Uncounted)
            .count()
    };
    let f2p = Axis::new(
        count(Effect::Fixed),
        count(Effect::Fixed) + count(Effect::NotFixed),
        uncounted(Group::F2p),
    );
    let p2p = Axis::new(
        count(Effect::Kept),
        count(Effect::Kept) + count(Effect::Broken),
        count(Effect::BrokenAtBase) + uncounted(Group::P2p),
    );
    // Without F2P tests (hidden from an agent) the verdict is about breakage alone. F2P tests
    // that are all uncounted make a vacuously full axis, as SWE-bench counts it.
    let outcome = if !f2p_requested {
        Outcome::p2p_only(p2p.level)
    } else {
        Outcome::from_grid(f2p.level, p2p.level)
    };
    Classification {
        outcome,
        f2p,
        p2p,
        tests,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::*;

    const STATUSES: [TestStatus; 7] = [Passed, Flaky, Failed, Error, Skipped, Missing, NotRun];

    fn obs<'a>(
        id: &'a str,
        group: Group,
        after: TestStatus,
        base: Option<TestStatus>,
    ) -> Observed<'a> {
        Observed {
            id,
            group,
            after: Observation::bare(after),
            base: base.map(Observation::bare),
            swebench: SwebenchView::of_cases(
                crate::observe::status::SwebenchLog::Generic,
                [(after, false)],
            ),
            did_you_mean: Vec::new(),
            not_run: None,
        }
    }

    /// Builds a run with `f_pass` of `f_total` F2P passing and `p_pass` of `p_total` P2P kept.
    fn run(f_pass: usize, f_total: usize, p_pass: usize, p_total: usize) -> Classification {
        let ids: Vec<String> = (0..f_total + p_total).map(|i| format!("t{i}")).collect();
        let mut v = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            let (group, base, pass) = if i < f_total {
                (Group::F2p, Failed, i < f_pass)
            } else {
                (Group::P2p, Passed, i - f_total < p_pass)
            };
            v.push(obs(
                id,
                group,
                if pass { Passed } else { Failed },
                Some(base),
            ));
        }
        classify(v, Scoring::Patchgrade)
    }

    #[test]
    fn all_nine_cells_from_counts() {
        // (f2p passing of 2, p2p kept of 2) → outcome
        let cases = [
            ((2, 2), Outcome::Resolved),
            ((2, 1), Outcome::BreakingResolved),
            ((2, 0), Outcome::BreakingResolved),
            ((1, 2), Outcome::PartiallyResolved),
            ((1, 1), Outcome::WorkInProgress),
            ((1, 0), Outcome::WorkInProgress),
            ((0, 2), Outcome::NoOp),
            ((0, 1), Outcome::Regression),
            ((0, 0), Outcome::Regression),
        ];
        for ((f, p), want) in cases {
            let c = run(f, 2, p, 2);
            assert_eq!(c.outcome, want, "f2p {f}/2 p2p {p}/2");
            assert_eq!((c.f2p.passing, c.f2p.total), (f, 2));
            assert_eq!((c.p2p.passing, c.p2p.total), (p, 2));
        }
    }

    #[test]
    fn empty_p2p_is_vacuously_all_and_no_f2p_is_breakage_only() {
        // Without F2P tests the verdict is never "resolved": only whether something broke.
        assert_eq!(run(0, 0, 0, 0).outcome, Outcome::NoBreakage);
        assert_eq!(run(0, 0, 2, 2).outcome, Outcome::NoBreakage);
        assert_eq!(run(0, 0, 1, 2).outcome, Outcome::Breaking);
        assert_eq!(run(0, 0, 0, 3).outcome, Outcome::Breaking);
        assert_eq!(run(1, 1, 0, 0).outcome, Outcome::Resolved);
        assert_eq!(run(0, 1, 0, 0).outcome, Outcome::NoOp);
        assert_eq!(run(1, 3, 0, 0).outcome, Outcome::PartiallyResolved);
    }

    #[test]
    fn single_tests() {
        assert_eq!(run(1, 1, 1, 1).outcome, Outcome::Resolved);
        assert_eq!(run(1, 1, 0, 1).outcome, Outcome::BreakingResolved);
        assert_eq!(run(0, 1, 1, 1).outcome, Outcome::NoOp);
        assert_eq!(run(0, 1, 0, 1).outcome, Outcome::Regression);
    }

    #[test]
    fn all_missing_is_regression_when_both_axes_have_tests() {
        let c = classify(
            vec![
                obs("a", Group::F2p, Missing, Some(Missing)),
                obs("b", Group::P2p, Missing, Some(Passed)),
            ],
            Scoring::Patchgrade,
        );
        assert_eq!(c.outcome, Outcome::Regression);
        assert_eq!(c.tests[1].effect, Effect::Broken);
    }

    #[test]
    fn all_missing_at_both_is_no_op_with_p2p_excluded() {
        let c = classify(
            vec![
                obs("a", Group::F2p, Missing, Some(Missing)),
                obs("b", Group::P2p, Missing, Some(Missing)),
            ],
            Scoring::Patchgrade,
        );
        assert_eq!(c.outcome, Outcome::NoOp);
        assert_eq!(c.p2p.total, 0);
        assert_eq!(c.p2p.excluded, 1);
    }

    #[test]
    fn f2p_only_passed_or_flaky_counts() {
        for s in STATUSES {
            for b in [None, Some(Failed), Some(Passed)] {
                let want = if matches!(s, Passed | Flaky) {
                    Effect::Fixed
                } else {
                    Effect::NotFixed
                };
                assert_eq!(effect(Group::F2p, s, b), want, "{s:?} base {b:?}");
            }
        }
    }

    #[test]
    fn p2p_effect_table_is_exhaustive() {
        for after in STATUSES {
            // No baseline: only a pass keeps.
            let want = if matches!(after, Passed | Flaky) {
                Effect::Kept
            } else {
                Effect::Broken
            };
            assert_eq!(
                effect(Group::P2p, after, None),
                want,
                "no base, after {after:?}"
            );
            for base in STATUSES {
                let want = match (base, after) {
                    (Failed | Error | Missing | NotRun | Flaky, _) => Effect::BrokenAtBase,
                    (Skipped, Passed | Flaky | Skipped) => Effect::Kept,
                    (Passed, Passed | Flaky) => Effect::Kept,
                    _ => Effect::Broken,
                };
                assert_eq!(
                    effect(Group::P2p, after, Some(base)),
                    want,
                    "base {base:?} after {after:?}"
                );
            }
        }
    }

    #[test]
    fn broken_at_base_is_not_blamed() {
        let c = classify(
            vec![
                obs("f", Group::F2p, Passed, Some(Failed)),
                obs("p1", Group::P2p, Passed, Some(Passed)),
                obs("p2", Group::P2p, Failed, Some(Failed)),
            ],
            Scoring::Patchgrade,
        );
        assert_eq!(c.outcome, Outcome::Resolved);
        assert_eq!(
            c.p2p,
            Axis {
                total: 1,
                passing: 1,
                level: Level::All,
                excluded: 1
            }
        );
    }

    #[test]
    fn passed_at_base_then_skipped_is_broken() {
        let c = classify(
            vec![
                obs("f", Group::F2p, Failed, Some(Failed)),
                obs("p", Group::P2p, Skipped, Some(Passed)),
            ],
            Scoring::Patchgrade,
        );
        assert_eq!(c.outcome, Outcome::Regression);
    }

    #[test]
    fn skipped_at_base_and_after_is_kept() {
        let c = classify(
            vec![
                obs("f", Group::F2p, Failed, Some(Failed)),
                obs("p", Group::P2p, Skipped, Some(Skipped)),
            ],
            Scoring::Patchgrade,
        );
        assert_eq!(c.outcome, Outcome::NoOp);
    }

    #[test]
    fn f2p_listed_first_in_user_order() {
        let c = classify(
            vec![
                obs("p1", Group::P2p, Passed, None),
                obs("f2", Group::F2p, Passed, None),
                obs("p0", Group::P2p, Passed, None),
                obs("f1", Group::F2p, Passed, None),
            ],
            Scoring::Patchgrade,
        );
        let ids: Vec<&str> = c.tests.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["f2", "f1", "p1", "p0"]);
    }

    #[test]
    fn messages_are_carried() {
        let c = classify(
            vec![Observed {
                id: "p",
                group: Group::P2p,
                after: Observation {
                    status: Failed,
                    message: Some("assert 1 == 2".into()),
                    details: Some("trace".into()),
                },
                base: Some(Observation {
                    status: Passed,
                    message: None,
                    details: None,
                }),
                swebench: SwebenchView::Fail,
                did_you_mean: Vec::new(),
                not_run: None,
            }],
            Scoring::Patchgrade,
        );
        assert_eq!(c.tests[0].message.as_deref(), Some("assert 1 == 2"));
        assert_eq!(c.tests[0].details.as_deref(), Some("trace"));
        assert_eq!(c.tests[0].base_status, Some(Passed));
    }
}
