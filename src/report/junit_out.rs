//! Verdicts as JUnit reports, for CI dashboards: valid against the Jenkins JUnit schema
//! (`junit-10.xsd`), which allows properties and a timestamp on suites, not on testcases.

use crate::judge::verdict::{Effect, GradedTest, Group, Outcome, Verdict};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// One verdict: one suite `patchgrade` (its properties name the task, the base and the
/// outcome) with a testcase `outcome`, passing only for `resolved` (and, P2P-only,
/// `no-breakage`), an `<error>` for `error`, and one testcase per graded test, classname `f2p`,
/// `p2p` or `downstream`. Tests left out of their axis (broken at base, or uncounted by
/// SWE-bench's scoring) are skipped.
pub fn junit(v: &Verdict) -> Result<String, quick_junit::SerializeError> {
    let mut suite = suite("patchgrade", v);
    suite.add_test_case(outcome_case(v, "outcome", "patchgrade"));
    for t in &v.tests {
        let group = match t.group {
            Group::F2p => "f2p",
            Group::P2p => "p2p",
        };
        suite.add_test_case(test_case(t, group));
    }
    // Counted as P2P, they are among the tests already.
    if let Some(d) = v.downstream.as_ref().filter(|d| !d.counted_as_p2p) {
        for t in &d.broken {
            suite.add_test_case(test_case(t, "downstream"));
        }
    }
    let mut report = Report::new("patchgrade");
    report.add_test_suite(suite);
    report.to_string().map(jenkins)
}

/// Many verdicts (`batch --junit-out`): one suite per task, named by its instance id, with its
/// properties, holding one testcase whose status is the task's outcome and whose message is
/// the verdict's summary.
pub fn junit_batch(verdicts: &[Verdict]) -> Result<String, quick_junit::SerializeError> {
    let mut report = Report::new("patchgrade batch");
    let mut total = Duration::ZERO;
    for v in verdicts {
        let name = v.task.instance_id.as_deref().unwrap_or("task");
        let mut suite = suite(name, v);
        let classname = v.task.repo_name.as_deref().unwrap_or("patchgrade");
        suite.add_test_case(outcome_case(v, name, classname));
        total += Duration::from_millis(v.timings.total_ms);
        report.add_test_suite(suite);
    }
    report.set_time(total);
    report.to_string().map(jenkins)
}

/// quick-junit counts skipped tests on `<testsuites>`, an attribute the Jenkins schema does
/// not allow there (only on `<testsuite>`); the suites keep theirs.
fn jenkins(xml: String) -> String {
    let Some(start) = xml.find("<testsuites") else {
        return xml;
    };
    let end = xml[start..].find('>').map_or(xml.len(), |e| start + e);
    let tag = &xml[start..end];
    match tag.find(" skipped=\"") {
        Some(at) => {
            let value_end = tag[at + 10..]
                .find('"')
                .map_or(tag.len(), |e| at + 10 + e + 1);
            format!("{}{}{}", &xml[..start + at], &tag[value_end..], &xml[end..])
        }
        None => xml,
    }
}

/// A suite for a verdict: its time and start, and the task's properties.
fn suite(name: &str, v: &Verdict) -> TestSuite {
    let mut suite = TestSuite::new(name);
    suite.set_time(Duration::from_millis(v.timings.total_ms));
    if let Some(at) = v
        .started_at
        .as_deref()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
    {
        suite.set_timestamp(at);
    }
    let properties = [
        ("instance_id", v.task.instance_id.clone()),
        ("repo", v.task.repo_name.clone()),
        ("base", v.task.base_commit.clone().or(v.task.base.clone())),
        ("outcome", Some(v.outcome.name().to_string())),
        ("scoring", Some(v.scoring.name().to_string())),
        ("model", v.model_name_or_path.clone()),
    ];
    for (key, value) in properties {
        if let Some(value) = value {
            suite.add_property((key, value.as_str()));
        }
    }
    suite
}

/// The outcome as a testcase: a pass, a failure, or for `error` an error.
fn outcome_case(v: &Verdict, name: &str, classname: &str) -> TestCase {
    let mut status = if matches!(v.outcome, Outcome::Resolved | Outcome::NoBreakage) {
        TestCaseStatus::success()
    } else {
        let kind = if v.outcome == Outcome::Error {
            NonSuccessKind::Error
        } else {
            NonSuccessKind::Failure
        };
        let mut s = TestCaseStatus::non_success(kind);
        s.set_message(v.summary.as_str()).set_type(v.outcome.name());
        s
    };
    if let (TestCaseStatus::NonSuccess { .. }, Some(e)) = (&status, &v.error) {
        status.set_description(e.message.as_str());
    }
    let mut case = TestCase::new(name, status);
    case.set_classname(classname);
    case.set_time(Duration::from_millis(v.timings.total_ms));
    case
}

fn test_case(t: &GradedTest, classname: &str) -> TestCase {
    let status = match t.effect {
        Effect::Fixed | Effect::Kept => TestCaseStatus::success(),
        Effect::BrokenAtBase => {
            let mut s = TestCaseStatus::skipped();
            s.set_message("broken at base, not counted");
            s.set_type("broken-at-base");
            s
        }
        Effect::Uncounted => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(format!("{}, not counted (SWE-bench's scoring)", t.status));
            s.set_type("uncounted");
            s
        }
        Effect::NotFixed | Effect::Broken => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let message = match &t.message {
                Some(m) => format!("{}: {m}", t.status),
                None => t.status.to_string(),
            };
            s.set_message(message).set_type(t.status.name());
            if let Some(d) = &t.details {
                s.set_description(d.as_str());
            }
            s
        }
    };
    let mut case = TestCase::new(t.id.as_str(), status);
    case.set_classname(classname);
    case
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_root_loses_only_its_skipped_count() {
        let xml = "<?xml?>\n<testsuites name=\"p\" tests=\"1\" skipped=\"0\" failures=\"0\">\n<testsuite skipped=\"0\"/>";
        assert_eq!(
            super::jenkins(xml.to_string()),
            "<?xml?>\n<testsuites name=\"p\" tests=\"1\" failures=\"0\">\n<testsuite skipped=\"0\"/>"
        );
    }
}
