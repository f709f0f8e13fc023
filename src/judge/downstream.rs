//! Downstream: the tests outside the task's lists that exercise what the candidate changed,
//! graded as P2P tests are (kept, broken, or broken at base) and reported beside the nine
//! outcomes, which stay the task's: a test that passed at base and fails after is breakage the
//! task's lists missed.

use super::classify::{Classification, GradedTest};
use super::scoring::Effect;
use serde::{Deserialize, Serialize};

/// How the downstream tests were found, most precise first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Coverage at base: the tests whose per-test coverage holds a line the patch changes.
    Coverage,
    /// The tests in files that import a module the patch changes (Python, JavaScript), or in
    /// Rust the tests of the modules whose paths name it.
    Imports,
    /// The user's own list.
    List,
    /// None could be found here (the note says why).
    Unavailable,
}

/// The downstream group of a verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Downstream {
    /// How the tests were found.
    pub method: Method,
    /// Tests found (by imports: test files, or Rust tests and test modules).
    pub found: usize,
    /// Tests found beyond `--downstream-max`, not run.
    pub skipped: usize,
    /// Tests graded (in the reports after the patch, listed tests left out).
    pub run: usize,
    /// Of those, passing after the patch (or skipped at base and after).
    pub kept: usize,
    /// Of those, already failing at base: not blamed on the patch.
    pub broken_at_base: usize,
    /// Tests that passed at base and do not after the patch, with their messages.
    pub broken: Vec<GradedTest>,
    /// The coverage map was read from the cache, not built.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub map_cached: bool,
    /// The downstream tests were counted as P2P tests too (`--downstream-counts-as-p2p`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counted_as_p2p: bool,
    /// Why the method is not the most precise one, or why none could be used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Downstream {
    /// A group with nothing graded (yet): how the tests were found and how many.
    pub fn found(method: Method, found: usize, skipped: usize, note: Option<String>) -> Downstream {
        Downstream {
            method,
            found,
            skipped,
            run: 0,
            kept: 0,
            broken_at_base: 0,
            broken: Vec::new(),
            map_cached: false,
            counted_as_p2p: false,
            note,
        }
    }

    /// The graded tests' counts and breakage, from their classification as P2P tests. A test
    /// in neither run's report did not run (a test the patch stops being collected is in the
    /// base's, and broken).
    pub fn grade(&mut self, graded: &Classification) {
        use crate::observe::TestStatus::Missing;
        let ran: Vec<&GradedTest> = graded
            .tests
            .iter()
            .filter(|t| t.status != Missing || t.base_status.is_some_and(|b| b != Missing))
            .collect();
        self.run = ran.len();
        self.kept = ran.iter().filter(|t| t.effect == Effect::Kept).count();
        self.broken_at_base = ran
            .iter()
            .filter(|t| t.effect == Effect::BrokenAtBase)
            .count();
        self.broken = ran
            .into_iter()
            .filter(|t| t.effect == Effect::Broken)
            .cloned()
            .collect();
    }
}
