//! Judge: the evidence of the runs, graded into one [`Verdict`].
//!
//! Takes the candidate's and the baseline's [`Evidence`](crate::observe::Evidence) and the
//! requested ids; hands on a [`Verdict`], the one document every front end reports. Pure: no
//! I/O, so every cell of the grid and every edge of a test's effect is unit-tested.
//!
//! - [`outcome`]: [`Outcome`] and [`Level`], the nine outcomes and the grid.
//! - [`classify`]: per-test [`Effect`](scoring::Effect)s and the axes.
//! - [`grade`]: [`grade()`](grade::grade), ids resolved in both runs and classified.
//! - [`verdict`]: [`Verdict`] and everything in it.
//! - [`scoring`]: [`Scoring`](scoring::Scoring), patchgrade's rules or SWE-bench's.
//! - [`differences`]: the rule behind each test the two scorings count differently.
//! - [`downstream`]: [`Downstream`](downstream::Downstream), the tests outside the task's
//!   lists that exercise what the patch changed, graded beside the outcome.
//! - [`draft`]: a verdict under construction (warnings, timings, runs).

pub mod classify;
pub mod differences;
pub mod downstream;
pub mod draft;
pub mod grade;
pub mod outcome;
pub mod scoring;
pub mod verdict;

pub(crate) use draft::Draft;
pub use outcome::{Level, Outcome};
pub use verdict::Verdict;
