//! The graded tests as a JUnit report, for CI dashboards.

use crate::judge::verdict::{Effect, Group, Outcome, Verdict};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

/// One suite `patchgrade`: a testcase `outcome` (passing only for `resolved` and, P2P-only,
/// `no-breakage`) and one testcase
/// per graded test, classname `f2p` or `p2p`. Tests left out of their axis (broken at base, or
/// uncounted by SWE-bench's scoring) are skipped.
pub fn junit(v: &Verdict) -> Result<String, quick_junit::SerializeError> {
    let mut suite = TestSuite::new("patchgrade");
    let mut outcome_status = if matches!(v.outcome, Outcome::Resolved | Outcome::NoBreakage) {
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
    if let (TestCaseStatus::NonSuccess { .. }, Some(e)) = (&outcome_status, &v.error) {
        outcome_status.set_description(e.message.as_str());
    }
    let mut case = TestCase::new("outcome", outcome_status);
    case.set_classname("patchgrade");
    suite.add_test_case(case);
    for t in &v.tests {
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
        case.set_classname(match t.group {
            Group::F2p => "f2p",
            Group::P2p => "p2p",
        });
        suite.add_test_case(case);
    }
    let mut report = Report::new("patchgrade");
    report.add_test_suite(suite);
    report.to_string()
}
