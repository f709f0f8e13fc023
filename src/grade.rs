//! From what runs left behind (their reports) to graded tests: shared by `check`, which
//! produces the reports, and `grade`, which is given them.

use crate::check::{CheckError, validate_ids};
use crate::classify::{Classification, Group, Observed, classify};
use crate::draft::Draft;
use crate::ids::{IdSyntax, Index, Resolution};
use crate::junit::Report;
use crate::outcome::Outcome;
use crate::status::{Observation, TestStatus};
use crate::verdict::{ErrorCause, PatchInfo, RunInfo, Stage, TaskInfo, Verdict};
use std::path::PathBuf;
use std::time::Instant;

/// Grading reports that already exist: CI ran the tests, patchgrade classifies.
///
/// ```
/// # fn demo() -> Result<(), patchgrade::CheckError> {
/// use patchgrade::grade::FromReports;
/// use patchgrade::IdSyntax;
/// let verdict = FromReports {
///     junit: vec!["fixtures/junit/pytest/junit.xml".into()],
///     base_junit: Vec::new(),
///     f2p: vec!["tests/test_basic.py::test_pass".into()],
///     p2p: vec!["tests/test_basic.py::test_fail_assert".into()],
///     ids: IdSyntax::Pytest,
///     instance_id: None,
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
}

impl FromReports {
    /// Read the reports and classify. `Err` for bad input (ids, unreadable reports).
    pub fn run(&self) -> Result<Verdict, CheckError> {
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
            base: None,
            base_commit: None,
            test_cmd: None,
            ids: self.ids,
        };
        let mut draft = Draft::new(task, PatchInfo::default());
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
        let graded = grade(self.ids, requested, &cand, base.as_ref());
        draft.warn_about(&graded, base.is_some());
        let outcome: Outcome = graded.classification.outcome;
        Ok(draft.finish(outcome, Some(graded.classification), None, started))
    }
}

/// What one run (candidate or baseline) produced.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Evidence {
    /// The first attempt's report, then one report per retry of the tests that did not pass.
    pub attempts: Vec<Report>,
    /// Ids the runner refused (pytest: "not found"), with its words; they were left out of the
    /// run so the others could be graded.
    pub rejected: Vec<(String, String)>,
}

impl Evidence {
    /// Evidence from one report.
    pub fn single(report: Report) -> Evidence {
        Evidence {
            attempts: vec![report],
            rejected: Vec::new(),
        }
    }
}

impl Evidence {
    /// Only the test cases that grading these ids can look at: those the ids match, and
    /// pytest's collection errors (which explain a missing id). Grading the requested ids
    /// against it gives what grading against the whole evidence gives, except suggestions for
    /// missing ids, which come from the candidate's run; so a stored baseline's size follows
    /// the graded ids, not the suite.
    pub fn for_ids(&self, syntax: IdSyntax, requested: Requested<'_>) -> Evidence {
        let attempts = self
            .attempts
            .iter()
            .map(|report| {
                let index = Index::new(report, syntax);
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
            rejected: self.rejected.clone(),
        }
    }
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
}

/// The classification, and what was noticed on the way.
#[derive(Debug, Clone)]
pub struct Graded {
    /// Axes, outcome and per-test effects.
    pub classification: Classification,
    /// Ids that matched several different tests.
    pub ambiguous: Vec<String>,
    /// Truncated ids that were run and matched as their enclosing test.
    pub widened: Vec<String>,
    /// Ids that failed and then passed, in either run.
    pub flaky: Vec<String>,
    /// Ids the runner refused, with its words.
    pub rejected: Vec<(String, String)>,
}

/// Grade the requested tests from a candidate run and, when there is one, a baseline run.
pub fn grade(
    syntax: IdSyntax,
    requested: Requested<'_>,
    candidate: &Evidence,
    baseline: Option<&Evidence>,
) -> Graded {
    let cand = Lookup::new(syntax, candidate);
    let base = baseline.map(|b| Lookup::new(syntax, b));
    let mut graded = Graded {
        classification: classify(Vec::new()),
        ambiguous: Vec::new(),
        widened: Vec::new(),
        flaky: Vec::new(),
        rejected: candidate.rejected.clone(),
    };
    let mut observed = Vec::new();
    for (id, group) in requested.iter() {
        let after = cand.resolve(id);
        let before = base.as_ref().map(|b| b.resolve(id));
        if after.ambiguous {
            graded.ambiguous.push(id.to_string());
        }
        if after.widened {
            graded.widened.push(id.to_string());
        }
        let flaky = |r: &Option<Resolution>| {
            r.as_ref()
                .is_some_and(|r| r.observation.status == TestStatus::Flaky)
        };
        if after.observation.status == TestStatus::Flaky || flaky(&before) {
            graded.flaky.push(id.to_string());
        }
        observed.push(Observed {
            id,
            group,
            after: after.observation,
            base: before.map(|b| b.observation),
            did_you_mean: after.suggestions,
        });
    }
    graded.classification = classify(observed);
    graded
}

/// One run's reports, indexed.
struct Lookup<'a> {
    attempts: Vec<Index<'a>>,
    rejected: &'a [(String, String)],
}

impl<'a> Lookup<'a> {
    fn new(syntax: IdSyntax, evidence: &'a Evidence) -> Lookup<'a> {
        Lookup {
            attempts: evidence
                .attempts
                .iter()
                .map(|r| Index::new(r, syntax))
                .collect(),
            rejected: &evidence.rejected,
        }
    }

    /// The first attempt decides, unless a test that failed passed on a retry: then it is
    /// flaky.
    fn resolve(&self, id: &str) -> Resolution {
        let Some((first, retries)) = self.attempts.split_first() else {
            return self.missing();
        };
        if let Some((_, why)) = self.rejected.iter().find(|(r, _)| r == id) {
            // Not run at all; the report still knows the ids it might have meant.
            let mut resolution = first.resolve(id);
            resolution.observation = Observation {
                message: Some(format!("rejected by the runner: {why}")),
                ..Observation::missing()
            };
            return resolution;
        }
        let mut resolution = first.resolve(id);
        let status = resolution.observation.status;
        if !matches!(status, TestStatus::Failed | TestStatus::Error) {
            return resolution;
        }
        for (n, retry) in retries.iter().enumerate() {
            let again = retry.resolve(id);
            if again.observation.status.is_pass() {
                let first_failure = resolution.observation.message.take().unwrap_or_default();
                resolution.observation = Observation {
                    status: TestStatus::Flaky,
                    message: Some(format!(
                        "{status}, then passed on retry {}: {first_failure}",
                        n + 1
                    )),
                    details: resolution.observation.details.take(),
                };
                break;
            }
        }
        resolution
    }

    fn missing(&self) -> Resolution {
        Resolution {
            observation: Observation::missing(),
            matches: 0,
            ambiguous: false,
            widened: false,
            suggestions: Vec::new(),
        }
    }
}

/// The ids of a run that did not pass and are worth running again.
pub fn retry_candidates(
    syntax: IdSyntax,
    requested: Requested<'_>,
    evidence: &Evidence,
) -> Vec<String> {
    let lookup = Lookup::new(syntax, evidence);
    requested
        .iter()
        .map(|(id, _)| id)
        .filter(|id| {
            matches!(
                lookup.resolve(id).observation.status,
                TestStatus::Failed | TestStatus::Error
            )
        })
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report of the corpus and the native ids of its tests (from `expected.json`).
    fn fixture(runner: &str, file: &str) -> (Report, Vec<String>) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/junit")
            .join(runner);
        let expected: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("expected.json")).unwrap()).unwrap();
        let ids = expected[file]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["native_id"].as_str().map(str::to_string))
            .collect();
        (Report::read(&dir.join(file)).unwrap(), ids)
    }

    /// A baseline cut down to the requested ids grades exactly as the whole one.
    #[test]
    fn evidence_for_the_ids_grades_as_the_whole() {
        let cases = [
            ("pytest", "junit.xml", IdSyntax::Pytest),
            (
                "pytest",
                "junit-collection-error-continue.xml",
                IdSyntax::Pytest,
            ),
            (
                "jest",
                "junit.xml",
                IdSyntax::Js(crate::ids::JsFlavor::Jest),
            ),
            ("go", "junit.xml", IdSyntax::Go),
        ];
        for (runner, file, syntax) in cases {
            let path = format!("{runner}/{file}");
            let (report, all) = fixture(runner, file);
            // Test ids only: a collection error's own id would keep it by matching.
            let mut ids: Vec<String> = all
                .into_iter()
                .filter(|id| runner != "pytest" || id.contains("::"))
                .step_by(2)
                .collect();
            // Missing, and missing from a module that failed to import.
            ids.push("tests/test_gone.py::test_missing".into());
            ids.push("broken/test_syntax_error.py::test_x".into());
            let (f2p, p2p) = ids.split_at(ids.len() / 2);
            let requested = Requested { f2p, p2p };
            let whole = Evidence::single(report.clone());
            let cut = whole.for_ids(syntax, requested);
            assert!(cut.attempts[0].cases.len() < report.cases.len(), "{path}");
            let a = grade(syntax, requested, &whole, Some(&whole));
            let b = grade(syntax, requested, &whole, Some(&cut));
            assert_eq!(
                format!("{:?}", a.classification),
                format!("{:?}", b.classification),
                "{path}"
            );
        }
    }
}
