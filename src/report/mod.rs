//! Rendering a verdict: for people, for language models (feedback), for CI dashboards
//! (JUnit), for programs (JSON).

mod feedback;
mod human;
mod junit_out;

pub use feedback::{DEFAULT_MAX_BYTES, feedback};
pub use human::human;
pub use junit_out::junit;

use crate::verdict::Verdict;

/// The verdict as the JSON document documented in the README.
pub fn json(verdict: &Verdict) -> String {
    // A Verdict holds only strings, numbers, enums and maps with string keys.
    serde_json::to_string_pretty(verdict).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}
