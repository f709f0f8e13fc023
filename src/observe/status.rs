//! What was observed of one test in one run.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The status of one requested test in one run, as read from the JUnit report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TestStatus {
    /// The testcase has no failure, error or skipped element.
    Passed,
    /// It failed, then passed on a later attempt (a runner's retry or `--retries`).
    Flaky,
    /// The testcase has a `<failure>`.
    Failed,
    /// The testcase has an `<error>` (setup/teardown/collection errors).
    Error,
    /// The testcase has a `<skipped>` (including pytest's xfail).
    Skipped,
    /// The test was requested but no testcase in the report matches it.
    Missing,
    /// The run ended without reporting it, by the candidate's doing (it crashed, hung or broke
    /// the setup; see [`NotRunReason`]): it counts as failing.
    NotRun,
}

impl TestStatus {
    /// Whether the test counts as passing.
    pub fn is_pass(self) -> bool {
        matches!(self, TestStatus::Passed | TestStatus::Flaky)
    }

    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            TestStatus::Passed => "passed",
            TestStatus::Flaky => "flaky",
            TestStatus::Failed => "failed",
            TestStatus::Error => "error",
            TestStatus::Skipped => "skipped",
            TestStatus::Missing => "missing",
            TestStatus::NotRun => "not-run",
        }
    }
}

impl fmt::Display for TestStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a candidate's run ended without a usable report, when the baseline was judged and so
/// the candidate is to blame (the attribution rule): the tests it did not report are
/// [`TestStatus::NotRun`] and count as failing.
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
pub enum NotRunReason {
    /// The test command ended (a crash, a signal, an exit) without a report with a test case
    /// in it, or with one that could not be read.
    Crashed,
    /// The test command ran past the timeout and was killed.
    TimedOut,
    /// The setup command failed in the candidate's checkout, so the tests never ran.
    SetupFailed,
    /// The test command ran into its memory or process limit (`--memory`, `--pids`).
    ResourceLimit,
}

impl NotRunReason {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            NotRunReason::Crashed => "crashed",
            NotRunReason::TimedOut => "timed-out",
            NotRunReason::SetupFailed => "setup-failed",
            NotRunReason::ResourceLimit => "resource-limit",
        }
    }

    /// What the candidate did, in words addressed to its author.
    pub fn sentence(self) -> &'static str {
        match self {
            NotRunReason::Crashed => {
                "your patch makes the test command crash before it writes a report"
            }
            NotRunReason::TimedOut => "your patch makes the test command hang past the timeout",
            NotRunReason::SetupFailed => "your patch makes the setup command fail",
            NotRunReason::ResourceLimit => {
                "your patch makes the tests run into their memory or process limit"
            }
        }
    }
}

impl fmt::Display for NotRunReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One test's status in one run, with the start of its message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// The status.
    pub status: TestStatus,
    /// The failure, error or skip message (first line or `message` attribute).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The first lines of the failure text (traceback), bounded in size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
}

impl Observation {
    /// An observation with no message.
    pub fn bare(status: TestStatus) -> Observation {
        Observation {
            status,
            message: None,
            details: None,
        }
    }

    /// A test that no testcase of the report matched.
    pub fn missing() -> Observation {
        Observation::bare(TestStatus::Missing)
    }
}

/// How SWE-bench's harness counts one test, from the status its log parser reads: `PASSED`
/// and `XFAIL` pass, `FAILED`, `ERROR` and a test absent from the log fail, and anything
/// else (`SKIPPED`, `XPASS`) counts neither way (`swebench.harness.grading.test_passed` and
/// `test_failed`). Which statuses its parser can read at all depends on the runner's log
/// ([`SwebenchLog`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwebenchView {
    /// Counted as passing.
    Pass,
    /// Counted as failing.
    Fail,
    /// Counted neither way.
    Uncounted,
}

/// The log SWE-bench's parser reads for a runner, which decides what it sees of skipped tests
/// and expected failures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SwebenchLog {
    /// pytest's `-rA` short summary (`parse_log_pytest` and its kin): `XFAIL <id>` is read,
    /// but a skip is printed `SKIPPED [1] file:line: reason`, without its id, so a skipped
    /// test is absent, and fails.
    PytestSummary,
    /// Django's runner at verbosity 2 (`parse_log_django`): `… skipped` is read and counts
    /// neither way; `… expected failure` and `… unexpected success` are not read at all.
    Django,
    /// sympy's `bin/test --verbose` (`parse_log_sympy`): only `ok`, `F` and `E` are read; a
    /// skip (`s`, `w`), an expected failure (`f`) and an unexpected pass (`X`) are absent, and
    /// so is the last test of each file, whose line ends with the file's `[OK]` or `[FAIL]`.
    Sympy,
    /// The grading rules alone, for a log that reads every status.
    Generic,
}

impl SwebenchView {
    /// The view of the testcases that one id names. SWE-bench keys its status map by the id
    /// it reads from the log, so testcases that share an id (a SWE-bench id cut at its first
    /// space names every parameter it starts) overwrite each other, and the status printed
    /// last stands. pytest's `-rA` summary prints passed, skipped, xfailed, xpassed, errors,
    /// then failures, so the last is the worst in that order. Each element is (status,
    /// expected failure); none at all is a test absent from the log.
    pub fn of_cases(
        log: SwebenchLog,
        cases: impl IntoIterator<Item = (TestStatus, bool)>,
    ) -> SwebenchView {
        cases
            .into_iter()
            .filter_map(|c| log.line(c))
            .max_by_key(|(rank, _)| *rank)
            .map_or(SwebenchView::Fail, |(_, view)| view)
    }
}

impl SwebenchLog {
    /// What the log shows of one testcase: its rank in pytest's short summary order (so the
    /// status printed last ranks highest) and how it counts; `None` when its id is not in the
    /// log at all.
    fn line(self, (status, expected_failure): (TestStatus, bool)) -> Option<(u8, SwebenchView)> {
        use SwebenchLog::*;
        match status {
            TestStatus::Passed | TestStatus::Flaky => Some((0, SwebenchView::Pass)),
            TestStatus::Skipped if expected_failure => match self {
                PytestSummary | Generic => Some((2, SwebenchView::Pass)),
                Django | Sympy => None,
            },
            TestStatus::Skipped => match self {
                Django | Generic => Some((1, SwebenchView::Uncounted)),
                PytestSummary | Sympy => None,
            },
            TestStatus::Error => Some((4, SwebenchView::Fail)),
            TestStatus::Failed => Some((5, SwebenchView::Fail)),
            // SWE-bench reads a test its log does not show as failing.
            TestStatus::Missing | TestStatus::NotRun => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TestStatus::*;

    fn view(log: SwebenchLog, cases: &[(TestStatus, bool)]) -> SwebenchView {
        SwebenchView::of_cases(log, cases.iter().copied())
    }

    #[test]
    fn what_each_log_shows_of_a_test() {
        use SwebenchLog::*;
        use SwebenchView::{Fail, Pass, Uncounted};
        // (status, expected failure) → pytest, Django, sympy, generic
        let table = [
            ((Passed, false), [Pass, Pass, Pass, Pass]),
            ((Skipped, true), [Pass, Fail, Fail, Pass]),
            ((Skipped, false), [Fail, Uncounted, Fail, Uncounted]),
            ((Failed, false), [Fail, Fail, Fail, Fail]),
            ((Error, false), [Fail, Fail, Fail, Fail]),
            ((Missing, false), [Fail, Fail, Fail, Fail]),
            ((NotRun, false), [Fail, Fail, Fail, Fail]),
        ];
        for (case, want) in table {
            for (log, want) in [PytestSummary, Django, Sympy, Generic]
                .into_iter()
                .zip(want)
            {
                assert_eq!(view(log, &[case]), want, "{case:?} in {log:?}");
            }
        }
        assert_eq!(view(Generic, &[]), Fail);
    }

    #[test]
    fn the_status_printed_last_stands_for_a_shared_id() {
        use SwebenchLog::Generic;
        assert_eq!(
            view(Generic, &[(Passed, false), (Skipped, false)]),
            SwebenchView::Uncounted
        );
        assert_eq!(
            view(Generic, &[(Skipped, false), (Skipped, true)]),
            SwebenchView::Pass
        );
        assert_eq!(
            view(
                SwebenchLog::PytestSummary,
                &[(Skipped, true), (Passed, false)]
            ),
            SwebenchView::Pass
        );
        // pytest prints a skip without its id: it overwrites nothing.
        assert_eq!(
            view(
                SwebenchLog::PytestSummary,
                &[(Passed, false), (Skipped, false)]
            ),
            SwebenchView::Pass
        );
        assert_eq!(
            view(Generic, &[(Failed, false), (Passed, false)]),
            SwebenchView::Fail
        );
        assert_eq!(
            view(Generic, &[(Skipped, true), (Error, false)]),
            SwebenchView::Fail
        );
    }
}
