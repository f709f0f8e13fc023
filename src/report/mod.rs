//! Report: a [`Verdict`] rendered for whoever reads it.
//!
//! Takes the verdict (the judge stage's contract) and nothing else; hands on text. For people
//! ([`human`]), for language models in a bounded size ([`feedback`]), for CI dashboards
//! ([`junit`]), for programs ([`json`]). [`table::Table`] is the one table model behind every
//! terminal and Markdown table, the harness's reports included.

mod feedback;
mod human;
mod junit_out;
pub mod table;

pub use feedback::{DEFAULT_MAX_BYTES, feedback};
pub use human::human;
pub use junit_out::{junit, junit_batch};

use crate::judge::verdict::Verdict;

/// The verdict as the JSON document documented in the README.
pub fn json(verdict: &Verdict) -> String {
    // A Verdict holds only strings, numbers, enums and maps with string keys.
    serde_json::to_string_pretty(verdict).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}
