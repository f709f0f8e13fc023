//! Derive: a task's F2P and P2P lists from its gold patch, observed. The whole suite runs at
//! base with the test patch and with the gold patch on top, side by side as a check runs them,
//! once and then once more per retry; every test becomes an id of the runner's own syntax.

use super::Check;
use super::prepare::RunRoot;
use super::race::{BaselineSide, CandidateSide};
use crate::judge::verdict::{ErrorCause, RunError, Stage};
use crate::observe::ids::Index;
use crate::observe::{IdSyntax, Report, TestStatus};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// What `derive` observed: the lists, and the tests it left out and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Derived {
    /// Failed, errored or was absent in every run at base; passed in every run with the gold
    /// patch.
    pub f2p: Vec<String>,
    /// Passed in every run, at base and with the gold patch.
    pub p2p: Vec<String>,
    /// Passed in every run at base, did not pass in any with the gold patch: the gold patch
    /// breaks them (a dataset builder drops such a task or these tests).
    pub broken_by_gold: Vec<String>,
    /// Their status changed between runs of one side, or the runner retried them: left out.
    pub unstable: Vec<String>,
    /// Ids that name more than one test in the report (or none as written): left out, since
    /// grading them would not be grading one test.
    pub not_exact: Vec<String>,
    /// How many times each side ran.
    pub runs: usize,
    /// The id syntax the lists are written in.
    pub ids: Option<IdSyntax>,
    /// The base commit.
    pub base_commit: String,
    /// The task's id, when the check has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// The preset that ran, when the test command is a preset's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runner: Option<crate::run::Preset>,
    /// The test command template, when it is not a preset's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_cmd: Option<String>,
    /// The setup command the runs used, so that the task runs the same way.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup_cmd: Option<String>,
    /// The test patch, for writing the task (not in the JSON: the caller has it).
    #[serde(skip)]
    pub test_patch: Option<String>,
    /// Why the lists could not be derived, when a run could not be judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
}

/// One side's statuses over its runs, by id.
#[derive(Default)]
struct Side {
    statuses: BTreeMap<String, Vec<TestStatus>>,
    runs: usize,
}

impl Side {
    /// Add one run's report; ids that do not name one test alone go to `not_exact`.
    fn add(&mut self, report: &Report, syntax: IdSyntax, not_exact: &mut BTreeSet<String>) {
        for listed in Index::new(report, syntax).listing() {
            if listed.exact {
                self.statuses
                    .entry(listed.id)
                    .or_default()
                    .push(listed.status);
            } else {
                not_exact.insert(listed.id);
            }
        }
        self.runs += 1;
    }

    /// The test's one status over every run (absent as missing), or `None` when it changed.
    fn steady(&self, id: &str) -> Option<TestStatus> {
        let seen = self.statuses.get(id).map_or(&[][..], Vec::as_slice);
        let mut all = seen.to_vec();
        all.resize(self.runs.max(seen.len()), TestStatus::Missing);
        let first = *all.first()?;
        (first != TestStatus::Flaky && all.iter().all(|s| *s == first)).then_some(first)
    }
}

impl Check {
    /// Derive the F2P and P2P lists from this check's patch, taken as the gold patch: the
    /// whole suite (the test command with no ids) at base with the test patch, and with the
    /// gold patch on top, `1 + retries` times each. The baseline cache and the workdir pool are
    /// not used: every run starts from a fresh checkout. The ids given to the check are
    /// ignored. `Err` only for bad input; a run that cannot be judged is in
    /// [`Derived::error`].
    pub async fn derive(&self) -> Result<Derived, super::Error> {
        let mut check = self.clone();
        let s = &mut check.settings;
        (s.cache, s.pool, s.baseline, s.retries) = (None, None, true, 0);
        (s.f2p, s.p2p) = (Vec::new(), Vec::new());
        let plan = check.validate_inputs(Vec::new(), Vec::new())?;
        let Some(gold) = plan.candidate.clone() else {
            return Err(super::Error::EmptyGold);
        };
        let syntax = plan.command.ids();
        let preset = plan
            .command
            .preset_of()
            .filter(|p| p.template() == plan.command.template().as_str());
        let mut derived = Derived {
            runs: 1 + self.settings.retries,
            ids: Some(syntax),
            base_commit: plan.source.commit.to_string(),
            instance_id: self.settings.instance_id.clone(),
            runner: preset,
            test_cmd: preset
                .is_none()
                .then(|| plan.command.template().as_str().to_string()),
            setup_cmd: self.settings.setup_cmd.clone(),
            test_patch: self
                .settings
                .test_patch
                .as_ref()
                .map(|(_, text)| String::from_utf8_lossy(text).into_owned()),
            ..Derived::default()
        };
        let (mut base, mut after) = (Side::default(), Side::default());
        let mut not_exact = BTreeSet::new();
        for _ in 0..derived.runs {
            let root = Arc::new(RunRoot::new(None)?);
            let raced = plan.race(&root, gold.clone()).await;
            let error = |stage, (cause, message)| RunError {
                stage,
                cause,
                message,
            };
            // `None`: not run, which a check does when the candidate does not apply.
            let base_report = match raced.baseline {
                BaselineSide::Ran { run, .. } => Some(
                    run.evidence
                        .map_err(|e| error(Stage::Baseline, e.into_error())),
                ),
                BaselineSide::Failed(e) => Some(Err(error(Stage::Baseline, e))),
                BaselineSide::Skipped | BaselineSide::Cached(_) => None,
            };
            let after_report = match raced.candidate {
                CandidateSide::Ran(ran) => ran
                    .1
                    .evidence
                    .map_err(|e| error(Stage::Candidate, e.into_error())),
                CandidateSide::Rejected(failure) => Err(error(
                    Stage::Candidate,
                    (
                        ErrorCause::GoldDoesNotApply,
                        format!("the gold patch does not apply: {failure}"),
                    ),
                )),
                CandidateSide::Failed(e) => Err(error(Stage::Candidate, e)),
            };
            // A broken base outranks the gold patch, as in a check.
            match (base_report, after_report) {
                (Some(Ok(b)), Ok(a)) => {
                    for report in b.attempts.iter().take(1) {
                        base.add(report, syntax, &mut not_exact);
                    }
                    for report in a.attempts.iter().take(1) {
                        after.add(report, syntax, &mut not_exact);
                    }
                }
                (Some(Err(e)), _) | (_, Err(e)) => {
                    derived.error = Some(e);
                    return Ok(derived);
                }
                (None, Ok(_)) => {
                    derived.error = Some(error(
                        Stage::Baseline,
                        (
                            ErrorCause::CheckoutFailed,
                            "the baseline did not run".into(),
                        ),
                    ));
                    return Ok(derived);
                }
            }
        }
        classify(&base, &after, &mut derived);
        derived.not_exact = not_exact.into_iter().collect();
        Ok(derived)
    }
}

/// Sort every id seen on either side into the lists.
fn classify(base: &Side, after: &Side, derived: &mut Derived) {
    let ids: BTreeSet<&String> = base.statuses.keys().chain(after.statuses.keys()).collect();
    let failing = |s: TestStatus| matches!(s, TestStatus::Failed | TestStatus::Error);
    for id in ids {
        let (Some(before), Some(with_gold)) = (base.steady(id), after.steady(id)) else {
            derived.unstable.push(id.clone());
            continue;
        };
        let list = match (before, with_gold) {
            (b, TestStatus::Passed) if failing(b) || b == TestStatus::Missing => &mut derived.f2p,
            (TestStatus::Passed, TestStatus::Passed) => &mut derived.p2p,
            (TestStatus::Passed, a) if failing(a) || a == TestStatus::Missing => {
                &mut derived.broken_by_gold
            }
            _ => continue,
        };
        list.push(id.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(runs: &[&[(&str, TestStatus)]]) -> Side {
        let mut side = Side::default();
        for run in runs {
            for (id, status) in *run {
                side.statuses
                    .entry(id.to_string())
                    .or_default()
                    .push(*status);
            }
            side.runs += 1;
        }
        side
    }

    #[test]
    fn every_pair_of_steady_statuses_lands_in_one_list_or_none() {
        use TestStatus::*;
        let base = side(&[&[
            ("fixed", Failed),
            ("fixed_error", Error),
            ("p2p", Passed),
            ("broken", Passed),
            ("removed", Passed),
            ("skipped", Skipped),
            ("still_failing", Failed),
        ]]);
        let after = side(&[&[
            ("fixed", Passed),
            ("fixed_error", Passed),
            ("new", Passed),
            ("p2p", Passed),
            ("broken", Failed),
            ("skipped", Skipped),
            ("still_failing", Failed),
        ]]);
        let mut d = Derived::default();
        classify(&base, &after, &mut d);
        assert_eq!(d.f2p, ["fixed", "fixed_error", "new"]);
        assert_eq!(d.p2p, ["p2p"]);
        assert_eq!(d.broken_by_gold, ["broken", "removed"]);
        assert!(d.unstable.is_empty());
    }

    #[test]
    fn a_status_that_changes_between_runs_or_a_retried_test_is_unstable() {
        use TestStatus::*;
        let base = side(&[
            &[("a", Failed), ("b", Passed), ("c", Passed), ("d", Flaky)],
            &[("a", Passed), ("b", Passed), ("c", Passed), ("d", Flaky)],
        ]);
        // `c` is absent from the second run with the gold patch.
        let after = side(&[
            &[("a", Passed), ("b", Passed), ("c", Passed), ("d", Passed)],
            &[("a", Passed), ("b", Passed), ("d", Passed)],
        ]);
        let mut d = Derived::default();
        classify(&base, &after, &mut d);
        assert_eq!(d.unstable, ["a", "c", "d"]);
        assert_eq!(d.p2p, ["b"]);
        assert!(d.f2p.is_empty());
    }
}
