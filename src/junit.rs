//! Reading JUnit XML reports into flat test cases.
//!
//! Reading uses `junit-parser`, which accepts every report in the shared corpus (nested suites,
//! bare `<testsuite>` roots, rerun/flaky elements). Writing lives in `report::junit_out`.

use crate::status::{Observation, TestStatus};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

/// Lines of failure text kept per test.
const DETAIL_LINES: usize = 30;
/// Bytes of failure text kept per test.
const DETAIL_BYTES: usize = 4000;
/// Bytes of a one-line message kept per test.
const MESSAGE_BYTES: usize = 500;

/// One `<testcase>` of a report, with nested suites flattened in document order.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The `classname` attribute (empty when absent).
    pub classname: String,
    /// The `name` attribute.
    pub name: String,
    /// The `file` attribute, when the runner writes one.
    pub file: Option<String>,
    /// Status and message.
    pub observation: Observation,
}

/// All test cases of one report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// Test cases in document order.
    pub cases: Vec<Case>,
}

/// Why a report could not be read.
#[derive(Debug, thiserror::Error)]
pub enum JunitError {
    /// The test command did not write the report.
    #[error("no JUnit report at {0}")]
    Missing(PathBuf),
    /// The file exists but could not be opened.
    #[error("cannot read JUnit report {path}: {source}")]
    Io {
        /// The report.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a JUnit report.
    #[error("unreadable JUnit report {path}: {source}")]
    Malformed {
        /// The report.
        path: PathBuf,
        /// What the parser said.
        source: junit_parser::Error,
    },
}

impl Report {
    /// Read a report from a file.
    pub fn read(path: &Path) -> Result<Report, JunitError> {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(JunitError::Missing(path.to_path_buf()));
            }
            Err(source) => {
                return Err(JunitError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        Report::parse(BufReader::new(file)).map_err(|source| JunitError::Malformed {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Parse a report from any reader.
    pub fn parse(reader: impl std::io::BufRead) -> Result<Report, junit_parser::Error> {
        let suites = junit_parser::from_reader(reader)?;
        let mut cases = Vec::new();
        for suite in &suites.suites {
            flatten(suite, &mut cases);
        }
        Ok(Report { cases })
    }
}

fn flatten(suite: &junit_parser::TestSuite, out: &mut Vec<Case>) {
    // junit-parser keeps cases and nested suites apart; runners that nest (PHPUnit, node)
    // put cases before or after child suites, and matching never depends on that order.
    for case in &suite.cases {
        // pytest writes a nameless testcase for the test interrupted by SIGINT.
        if case.original_name.is_empty() && case.classname.is_none() {
            continue;
        }
        out.push(Case {
            classname: case.classname.clone().unwrap_or_default(),
            name: case.original_name.clone(),
            file: case.file.clone(),
            observation: observe(&case.status),
        });
    }
    for child in &suite.suites {
        flatten(child, out);
    }
}

fn observe(status: &junit_parser::TestStatus) -> Observation {
    use junit_parser::TestStatus as S;
    match status {
        S::Success => Observation::bare(TestStatus::Passed),
        S::Failure(f) => with_text(TestStatus::Failed, &f.message, &f.text),
        S::Error(e) => with_text(TestStatus::Error, &e.message, &e.text),
        S::Skipped(s) => {
            let mut o = with_text(TestStatus::Skipped, &s.message, &s.text);
            if s.skipped_type == "pytest.xfail" {
                o.message = Some(match o.message {
                    Some(m) => format!("xfail: {m}"),
                    None => "xfail".to_string(),
                });
            }
            o
        }
    }
}

fn with_text(status: TestStatus, message: &str, text: &str) -> Observation {
    let first_line = |s: &str| {
        s.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| truncate(l, MESSAGE_BYTES))
    };
    let details = {
        let kept: Vec<&str> = text.trim_matches('\n').lines().take(DETAIL_LINES).collect();
        let joined = truncate(&kept.join("\n"), DETAIL_BYTES);
        (!joined.trim().is_empty()).then_some(joined)
    };
    Observation {
        status,
        message: first_line(message).or_else(|| first_line(text)),
        details,
    }
}

/// Cut `s` to at most `max` bytes on a character boundary, marking the cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("abcd", 3), "abc…");
        assert_eq!(truncate("café", 4), "caf…");
    }

    #[test]
    fn message_falls_back_to_first_text_line() {
        let o = with_text(TestStatus::Failed, "", "\n\n  first\nsecond");
        assert_eq!(o.message.as_deref(), Some("first"));
        assert_eq!(o.details.as_deref(), Some("  first\nsecond"));
        let o = with_text(TestStatus::Failed, "boom", "");
        assert_eq!(o.message.as_deref(), Some("boom"));
        assert_eq!(o.details, None);
    }

    #[test]
    fn details_are_bounded() {
        let text: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let o = with_text(TestStatus::Failed, "m", &text);
        assert_eq!(o.details.unwrap().lines().count(), DETAIL_LINES);
    }
}
