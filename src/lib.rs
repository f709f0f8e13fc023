//! patchgrade grades a candidate patch against fail-to-pass and pass-to-pass tests, from what
//! it actually observes: it applies the patch in a temporary checkout, runs the tests (and a
//! baseline on the unpatched base), reads their JUnit XML and classifies the outcome into
//! one of nine [`Outcome`]s.
//!
//! The pipeline is [`Check`] → [`Verdict`]; the binary is a thin layer over it.

pub mod atomic;
pub mod batch;
pub mod cache;
pub mod check;
pub mod classify;
pub mod compare;
pub mod dataset;
mod draft;
pub mod fuzzy;
pub mod grade;
pub mod ids;
pub mod junit;
pub mod mcp;
pub mod merge;
pub mod outcome;
pub mod patch;
pub mod pool;
pub mod process;
pub mod protect;
pub mod report;
pub mod runner;
pub mod stats;
pub mod status;
pub mod summary;
pub mod task;
pub mod verdict;
pub mod workspace;

pub use cache::BaselineCache;
pub use check::{Check, CheckError, TestCommand};
pub use ids::IdSyntax;
pub use outcome::{Level, Outcome};
pub use pool::WorkdirPool;
pub use runner::Preset;
pub use status::TestStatus;
pub use verdict::Verdict;

/// The README's Rust examples compile.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
