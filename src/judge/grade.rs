//! From the evidence of the runs to graded tests: each requested id resolved in the
//! candidate's run and the baseline's, retries and refused ids accounted for, then classified.

use super::classify::{Classification, Observed, classify};
use super::scoring::Scoring;
use crate::observe::ids::{Index, Resolution};
use crate::observe::{Indexed, NotRunReason, Observation, Requested, TestStatus};

/// The classification, and what was noticed on the way.
#[derive(Debug, Clone)]
pub struct Graded {
    /// Axes, outcome and per-test effects, by patchgrade's rules.
    pub classification: Classification,
    /// The same, by SWE-bench's rules.
    pub swebench: Classification,
    /// Ids that matched several different tests.
    pub ambiguous: Vec<String>,
    /// Truncated ids that were run and matched as their enclosing test.
    pub widened: Vec<String>,
    /// Ids that failed and then passed, in either run.
    pub flaky: Vec<String>,
    /// Ids the runner refused, with its words.
    pub rejected: Vec<(String, String)>,
    /// Requested ids that named at least one testcase after the patch, and at base.
    pub found: (usize, Option<usize>),
}

/// Grade the requested tests from a candidate run and, when there is one, a baseline run.
pub fn grade(
    requested: Requested<'_>,
    candidate: &Indexed<'_>,
    baseline: Option<&Indexed<'_>>,
) -> Graded {
    let cand = Lookup::new(candidate);
    let base = baseline.map(Lookup::new);
    let mut graded = Graded {
        classification: classify(Vec::new(), Scoring::Patchgrade),
        swebench: classify(Vec::new(), Scoring::Swebench),
        ambiguous: Vec::new(),
        widened: Vec::new(),
        flaky: Vec::new(),
        rejected: candidate.evidence.rejected.clone(),
        found: (0, base.as_ref().map(|_| 0)),
    };
    let mut observed = Vec::new();
    for (id, group) in requested.iter() {
        let after = cand.resolve(id);
        let before = base.as_ref().map(|b| b.resolve(id));
        graded.found.0 += usize::from(after.matches > 0);
        if let (Some(b), Some(n)) = (&before, &mut graded.found.1) {
            *n += usize::from(b.matches > 0);
        }
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
        let not_run = cand
            .not_run
            .filter(|_| after.observation.status == TestStatus::NotRun);
        observed.push(Observed {
            id,
            group,
            after: after.observation,
            base: before.map(|b| b.observation),
            swebench: after.swebench,
            did_you_mean: after.suggestions,
            not_run,
        });
    }
    graded.swebench = classify(observed.clone(), Scoring::Swebench);
    graded.classification = classify(observed, Scoring::Patchgrade);
    graded
}

/// One run's reports, indexed, with what grading adds to them.
struct Lookup<'a> {
    attempts: &'a [Index<'a>],
    rejected: &'a [(String, String)],
    not_run: Option<NotRunReason>,
}

impl<'a> Lookup<'a> {
    fn new(indexed: &'a Indexed<'a>) -> Lookup<'a> {
        Lookup {
            attempts: indexed.attempts(),
            rejected: &indexed.evidence.rejected,
            not_run: indexed.evidence.not_run,
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
            resolution.swebench = crate::observe::SwebenchView::Fail;
            return resolution;
        }
        let mut resolution = first.resolve(id);
        if let Some(reason) = self.not_run
            && resolution.observation.status == TestStatus::Missing
        {
            // Not in a report the candidate cut short: never run, not absent from the suite.
            resolution.observation = Observation {
                status: TestStatus::NotRun,
                message: Some(format!("not run: {}", reason.sentence())),
                details: None,
            };
            resolution.suggestions.clear();
            return resolution;
        }
        if let Some(reason) = self.not_run
            && resolution.observation.status.is_pass()
        {
            // A pass in a report whose run was cut short has nothing to vouch for it: code
            // under test could have written it and then hung, and a runner that failed inside
            // writes a failure it could not format as a bare test case. Its failures stand;
            // its passes do not count.
            resolution.observation = Observation {
                status: TestStatus::NotRun,
                message: Some(format!(
                    "reported passing by a run cut short, so not counted: {}",
                    reason.sentence()
                )),
                details: None,
            };
            // SWE-bench reads no status from a log cut short either (its parser needs the
            // summary a crashed or killed pytest never prints).
            resolution.swebench = crate::observe::SwebenchView::Fail;
            return resolution;
        }
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
            swebench: crate::observe::SwebenchView::Fail,
        }
    }
}

/// The ids of a run that did not pass and are worth running again.
pub fn retry_candidates(requested: Requested<'_>, evidence: &Indexed<'_>) -> Vec<String> {
    let lookup = Lookup::new(evidence);
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
    use crate::observe::ids::IdSyntax;
    use crate::observe::{Evidence, Report};

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
                IdSyntax::Js(crate::observe::ids::JsFlavor::Jest),
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
            let whole = whole.index(syntax);
            let cut = whole.for_ids(requested);
            assert!(cut.attempts[0].cases.len() < report.cases.len(), "{path}");
            let a = grade(requested, &whole, Some(&whole));
            let b = grade(requested, &whole, Some(&cut.index(syntax)));
            assert_eq!(
                format!("{:?}", a.classification),
                format!("{:?}", b.classification),
                "{path}"
            );
        }
    }
}
