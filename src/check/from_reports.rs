//! Grading reports that already exist: CI ran the tests, patchgrade classifies. The same
//! judging as a check, without checkouts or runs.

use super::Error;
use crate::judge::Draft;
use crate::judge::grade::grade;
use crate::judge::verdict::{ErrorCause, PatchInfo, RunInfo, Scoring, Stage, TaskInfo, Verdict};
use crate::observe::{Evidence, IdSyntax, Report, Requested};
use crate::task::validate_ids;
use std::path::PathBuf;
use std::time::Instant;

/// Grading reports that already exist: CI ran the tests, patchgrade classifies.
///
/// ```
/// # fn demo() -> Result<(), patchgrade::Error> {
/// use patchgrade::{FromReports, IdSyntax};
/// let verdict = FromReports {
///     junit: vec!["fixtures/junit/pytest/junit.xml".into()],
///     base_junit: Vec::new(),
///     f2p: vec!["tests/test_basic.py::test_pass".into()],
///     p2p: vec!["tests/test_basic.py::test_fail_assert".into()],
///     ids: IdSyntax::Pytest,
///     instance_id: None,
///     scoring: Default::default(),
/// }
/// .run()?;
/// assert_eq!(verdict.outcome, patchgrade::Outcome::BreakingResolved);
/// # Ok(()) }
/// # demo().unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct FromReports {
    /// Reports after the patch: files or directories, read as one.
    pub junit: Vec<PathBuf>,
    /// Reports at base, if any (without them, every P2P failure is blamed on the patch).
    pub base_junit: Vec<PathBuf>,
    /// Fail-to-pass ids.
    pub f2p: Vec<String>,
    /// Pass-to-pass ids.
    pub p2p: Vec<String>,
    /// How the ids map to testcases.
    pub ids: IdSyntax,
    /// Label for the verdict.
    pub instance_id: Option<String>,
    /// Whose rules grade the observations.
    pub scoring: Scoring,
}

impl FromReports {
    /// Read the reports and classify. `Err` for bad input (ids, unreadable reports).
    pub fn run(&self) -> Result<Verdict, Error> {
        let started = Instant::now();
        let (f2p, p2p) = validate_ids(&self.f2p, &self.p2p)?;
        let candidate = Report::read_all(&self.junit)?;
        let baseline = if self.base_junit.is_empty() {
            None
        } else {
            Some(Report::read_all(&self.base_junit)?)
        };
        let task = TaskInfo {
            instance_id: self.instance_id.clone(),
            repo: None,
            repo_name: None,
            base: None,
            base_commit: None,
            test_cmd: None,
            ids: self.ids,
        };
        let mut draft = Draft::new(task, PatchInfo::default());
        draft.scoring = self.scoring;
        let info = |report: &Report| RunInfo {
            attempts: 1,
            reports: report.sources.clone(),
            ..RunInfo::default()
        };
        draft.runs.candidate = Some(info(&candidate));
        draft.runs.baseline = baseline.as_ref().map(info);
        let empty = |stage| {
            (
                stage,
                (
                    ErrorCause::EmptyReport,
                    "the JUnit report holds no test case".to_string(),
                ),
            )
        };
        let failed = if baseline.as_ref().is_some_and(|b| b.cases.is_empty()) {
            Some(empty(Stage::Baseline))
        } else if candidate.cases.is_empty() {
            Some(empty(Stage::Candidate))
        } else {
            None
        };
        if let Some((stage, error)) = failed {
            return Ok(draft.fail(stage, error, started));
        }
        let requested = Requested {
            f2p: &f2p,
            p2p: &p2p,
        };
        let cand = Evidence::single(candidate);
        let base = baseline.map(Evidence::single);
        let base = base.as_ref().map(|b| b.index(self.ids));
        let graded = grade(requested, &cand.index(self.ids), base.as_ref());
        if let Some((stage, error)) = Draft::none_observed(&graded) {
            return Ok(draft.fail(stage, error, started));
        }
        draft.warn_about(&graded, base.is_some());
        Ok(draft.graded(graded, started))
    }
}
