//! patchgrade grades a candidate patch against fail-to-pass and pass-to-pass tests, from what
//! it actually observes: it applies the patch in a temporary checkout, runs the tests (and a
//! baseline on the unpatched base), reads their JUnit XML and classifies the outcome into
//! one of nine [`Outcome`]s.
//!
//! The crate is laid out by pipeline stage, and each stage imports only from the stages
//! listed before it:
//!
//! | stage | takes | hands on |
//! |---|---|---|
//! | `util` | bytes, durations, names | hashes, atomic files, name tables |
//! | `observe` | JUnit reports | [`Evidence`](internals::Evidence): testcases and statuses |
//! | `workspace` | repository, base, patches | a checkout, how the patch applied |
//! | `run` | a [`TestCommand`] and a checkout | how the command ended, its logs |
//! | `judge` | the evidence of both runs | a [`Verdict`] |
//! | [`task`] | task files, values written by hand | a [`TaskFile`](task::TaskFile) layer |
//! | `check` | a [`Check`] | a verdict, from the stages above |
//! | [`harness`] | datasets, predictions, results | results, summaries, comparisons |
//! | [`report`] | a verdict, a run, a comparison, a derived task | text: human, feedback, Markdown, HTML, JUnit, JSON |
//! | [`mcp`] | an agent's tool calls | feedback and verdicts |
//!
//! [`Evidence`](internals::Evidence) (what was observed) and [`Verdict`] (what was judged)
//! are the contracts between stages; the binary is a thin layer over [`Check`],
//! [`FromReports`] and the harness.

#![warn(missing_docs)]

mod check;
pub mod harness;
mod judge;
#[cfg(feature = "mcp")]
pub mod mcp;
mod observe;
pub mod report;
mod run;
pub mod task;
mod util;
mod workspace;

pub use check::{
    BaselineCache, Check, CheckOptions, DEFAULT_DOWNSTREAM_MAX, DEFAULT_TIMEOUT, Derived,
    DownstreamMode, Error, FromReports, LOG_TAIL,
};
pub use judge::scoring::Scoring;
pub use judge::verdict;
pub use judge::{Level, Outcome, Verdict};
pub use observe::ids::Listed;
pub use observe::{IdSyntax, TestStatus, list_ids};
pub use run::sandbox::{Isolation, SandboxChoice};
pub use run::{MissingJunit, Preset, TestCommand, UnknownPreset};
pub use workspace::{OnProtectedEdit, Protection, WorkdirPool};

/// Error types of the inputs, for matching on what went wrong.
pub mod errors {
    pub use crate::judge::outcome::UnknownOutcome;
    pub use crate::judge::scoring::UnknownScoring;
    pub use crate::observe::ids::UnknownSyntax;
    pub use crate::observe::junit::JunitError;
    pub use crate::run::sandbox::SandboxError;
    pub use crate::workspace::protect::{BadGlob, UnknownAction};
    pub use crate::workspace::{PatchError, SourceError};
}

/// Writing output files whole or not at all (for front ends that write reports).
pub use util::atomic::write as write_atomically;

/// Internals for the benchmarks and fuzz targets: not part of the API, may change any time.
#[doc(hidden)]
pub mod internals {
    pub use crate::observe::ids::{Index, JsFlavor};
    pub use crate::observe::{Evidence, Report};
    pub use crate::workspace::imports::{importers, rust_dependents};
    pub use crate::workspace::{Checkout, Fit, Patch, Source};
}

/// The README's Rust examples compile.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The guide's library chapter's Rust examples compile.
#[doc = include_str!("../docs/guide/src/library.md")]
#[cfg(doctest)]
pub struct GuideDoctests;
