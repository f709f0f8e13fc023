//! The verdict under construction: findings become warnings, and everything becomes a
//! [`Verdict`].

use super::classify::{Axis, Classification, GradedTest};
use super::differences::{OtherScoring, differences};
use super::grade::Graded;
use super::outcome::{Level, Outcome};
use super::scoring::{Effect, Scoring};
use super::verdict::*;
use crate::observe::{Group, TestStatus};
use crate::run::sandbox::Isolation;
use std::time::Instant;

/// The verdict under construction.
pub(crate) struct Draft {
    pub(crate) task: TaskInfo,
    pub(crate) patch: PatchInfo,
    pub(crate) runs: Runs,
    pub(crate) warnings: Vec<Warning>,
    pub(crate) timings: Timings,
    pub(crate) isolation: Isolation,
    pub(crate) scoring: Scoring,
    pub(crate) downstream: Option<super::downstream::Downstream>,
    /// The candidate cut its run short and is graded for it (the attribution rule).
    pub(crate) aborted: Option<Aborted>,
    started_at: String,
}

impl Draft {
    pub(crate) fn new(task: TaskInfo, patch: PatchInfo) -> Draft {
        Draft {
            task,
            patch,
            runs: Runs::default(),
            warnings: Vec::new(),
            timings: Timings::default(),
            isolation: Isolation::default(),
            scoring: Scoring::default(),
            downstream: None,
            aborted: None,
            started_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        }
    }

    pub(crate) fn warn(&mut self, kind: WarningKind, message: String, tests: Vec<String>) {
        self.warnings.push(Warning {
            kind,
            message,
            tests,
        });
    }

    /// Warnings about the graded tests, in the order they are shown. `baseline`: whether a
    /// baseline was observed.
    pub(crate) fn warn_about(&mut self, graded: &Graded, baseline: bool) {
        self.warn_about_task(graded, baseline);
        self.warn_about_ids(graded);
    }

    /// What the task's lists look like from what ran: tests passing or missing at base, P2P
    /// broken at base, an empty P2P axis, no baseline to tell.
    fn warn_about_task(&mut self, graded: &Graded, baseline: bool) {
        let c = &graded.classification;
        let ids = |pred: &dyn Fn(&GradedTest) -> bool| -> Vec<String> {
            c.tests
                .iter()
                .filter(|t| pred(t))
                .map(|t| t.id.clone())
                .collect()
        };
        let suspect = ids(&|t| t.group == Group::F2p && t.base_status == Some(TestStatus::Passed));
        if !suspect.is_empty() {
            self.warn(
                WarningKind::F2pPassesAtBase,
                format!(
                    "{} fail-to-pass test(s) already pass at base: the task is suspect",
                    suspect.len()
                ),
                suspect,
            );
        }
        // A requested test that is in no report cannot have been fixed or kept by anything: the
        // id is wrong for this runner, or the test patch does not add it. Only a baseline can
        // tell that from a candidate that stopped the test being collected.
        let f2p_missing = ids(&|t| {
            t.group == Group::F2p
                && t.status == TestStatus::Missing
                && t.base_status == Some(TestStatus::Missing)
        });
        if !f2p_missing.is_empty() {
            self.warn(
                WarningKind::F2pMissing,
                format!(
                    "{} fail-to-pass test(s) are in neither run's report: the task is suspect \
                     (a wrong id, or a test the test patch does not add)",
                    f2p_missing.len()
                ),
                f2p_missing,
            );
        }
        let p2p_missing =
            ids(&|t| t.group == Group::P2p && t.base_status == Some(TestStatus::Missing));
        if !p2p_missing.is_empty() {
            self.warn(
                WarningKind::P2pMissingAtBase,
                format!(
                    "{} pass-to-pass test(s) are not in the base run's report and were not \
                     counted: the task is suspect (a wrong id?)",
                    p2p_missing.len()
                ),
                p2p_missing,
            );
        }
        let broken = ids(&|t| {
            t.effect == Effect::BrokenAtBase && t.base_status != Some(TestStatus::Missing)
        });
        if !broken.is_empty() {
            self.warn(
                WarningKind::P2pBrokenAtBase,
                format!(
                    "{} pass-to-pass test(s) already fail at base and were not counted",
                    broken.len()
                ),
                broken,
            );
        }
        if c.p2p.total == 0 {
            self.warn(
                WarningKind::EmptyP2p,
                "no pass-to-pass test is counted: the P2P axis is vacuously all-kept".into(),
                Vec::new(),
            );
        }
        if !baseline {
            self.warn(
                WarningKind::BaselineSkipped,
                "baseline skipped: P2P tests that already failed at base are blamed on the patch"
                    .into(),
                Vec::new(),
            );
        }
    }

    /// How the ids met the reports and the runs: ambiguous, widened, refused, flaky.
    fn warn_about_ids(&mut self, graded: &Graded) {
        if !graded.ambiguous.is_empty() {
            self.warn(
                WarningKind::AmbiguousId,
                "these ids matched more than one test; the first that did not pass decided".into(),
                graded.ambiguous.clone(),
            );
        }
        if !graded.widened.is_empty() {
            self.warn(
                WarningKind::WidenedId,
                "these ids were cut short (an unclosed `[`): their enclosing test was run and \
                 every parameter starting with the id was graded"
                    .into(),
                graded.widened.clone(),
            );
        }
        if !graded.rejected.is_empty() {
            self.warn(
                WarningKind::RejectedId,
                "the runner refused these ids; they were left out of the run, count as missing, \
                 and the other tests were graded"
                    .into(),
                graded.rejected.iter().map(|(id, _)| id.clone()).collect(),
            );
        }
        if !graded.flaky.is_empty() {
            self.warn(
                WarningKind::Unstable,
                "these tests failed, then passed on a retry: counted as passing after the patch, \
                 as broken at base"
                    .into(),
                graded.flaky.clone(),
            );
        }
    }

    /// The error when not one requested test was in any run's report: nothing about the
    /// patch was observed. With a baseline the task is in question; without one, the run.
    pub(crate) fn none_observed(graded: &Graded) -> Option<(Stage, (ErrorCause, String))> {
        let (after, base) = graded.found;
        if after > 0 || base.is_some_and(|b| b > 0) {
            return None;
        }
        let stage = if base.is_some() {
            Stage::Baseline
        } else {
            Stage::Candidate
        };
        let runs = if base.is_some() {
            "either run's report (at base and after the patch)"
        } else {
            "the report"
        };
        Some((
            stage,
            (
                ErrorCause::NoRequestedTestRan,
                format!(
                    "none of the {} requested tests is in {runs}: check the ids and the test \
                     command",
                    graded.classification.tests.len()
                ),
            ),
        ))
    }

    /// The verdict of graded tests, by the draft's scoring, with the other scoring's grade
    /// when it differs.
    pub(crate) fn graded(self, graded: Graded, started: Instant) -> Verdict {
        let Graded {
            classification: own,
            swebench,
            ..
        } = graded;
        let rules = differences(&own, &swebench);
        let swebench_resolved = swebench.outcome == Outcome::Resolved;
        let (mut chosen, other) = match self.scoring {
            Scoring::Patchgrade => (own, swebench),
            Scoring::Swebench => (swebench, own),
        };
        for (test, theirs) in chosen.tests.iter_mut().zip(&other.tests) {
            test.other_effect = (theirs.effect != test.effect).then_some(theirs.effect);
        }
        let other_scoring = (other.outcome != chosen.outcome).then(|| OtherScoring {
            scoring: self.scoring.other(),
            outcome: other.outcome,
            rules,
        });
        let disagree = swebench_resolved != (chosen.outcome == Outcome::Resolved);
        let mut verdict = self.finish(chosen.outcome, Some(chosen), None, started);
        verdict.swebench_resolved = disagree.then_some(swebench_resolved);
        verdict.other_scoring = other_scoring;
        verdict
    }

    pub(crate) fn fail(
        self,
        stage: Stage,
        (cause, message): (ErrorCause, String),
        started: Instant,
    ) -> Verdict {
        let error = RunError {
            stage,
            cause,
            message,
        };
        self.finish(Outcome::Error, None, Some(error), started)
    }

    pub(crate) fn finish(
        mut self,
        outcome: Outcome,
        classification: Option<Classification>,
        error: Option<RunError>,
        started: Instant,
    ) -> Verdict {
        self.timings.total_ms = crate::util::time::ms(started.elapsed());
        let empty = Axis {
            total: 0,
            passing: 0,
            level: Level::All,
            excluded: 0,
        };
        let (f2p, p2p, tests) = match classification {
            Some(c) => (c.f2p, c.p2p, c.tests),
            None => (empty, empty, Vec::new()),
        };
        let summary = match &error {
            Some(e) => format!(
                "{}: the {} run could not be judged ({})",
                outcome.title(),
                match e.stage {
                    Stage::Candidate => "candidate",
                    Stage::Baseline => "baseline",
                },
                serde_plain(&e.cause)
            ),
            None => format!("{}: {}", outcome.title(), outcome.meaning()),
        };
        // Why every test it did not report counts as failing, in the one line all front ends show.
        let summary = match &self.aborted {
            Some(a) => format!("{summary}: {}", a.reason.sentence()),
            None => summary,
        };
        // What the outcome does not count is said beside it, not left for the JSON.
        let summary = match &self.downstream {
            Some(d) if !d.broken.is_empty() && !d.counted_as_p2p => format!(
                "{summary} (by the task's lists); downstream, {} test(s) outside them that \
                 passed at base fail after it",
                d.broken.len()
            ),
            _ => summary,
        };
        Verdict {
            schema_version: SCHEMA_VERSION,
            outcome,
            model_name_or_path: None,
            summary,
            task: self.task,
            patch: self.patch,
            f2p,
            p2p,
            tests,
            downstream: self.downstream,
            scoring: self.scoring,
            swebench_resolved: None,
            other_scoring: None,
            error,
            aborted: self.aborted,
            warnings: self.warnings,
            runs: self.runs,
            started_at: Some(self.started_at),
            timings: self.timings,
            isolation: self.isolation,
            redacted: false,
        }
    }
}

/// A kebab-case enum's serialised name.
fn serde_plain<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
