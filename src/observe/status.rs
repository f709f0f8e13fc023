//! What was observed of one test in one run.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The status of one requested test in one run, as read from the JUnit report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
        }
    }
}

impl fmt::Display for TestStatus {
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
