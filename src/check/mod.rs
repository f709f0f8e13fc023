//! Check: one candidate patch graded end to end, from what is observed.
//!
//! Takes a [`Check`] (the task, the candidate, how to run) and hands on a
//! [`Verdict`](crate::Verdict); `Err` only for bad input ([`Error`]). The pipeline, each step
//! in its own file, each reading the one `Plan` validation makes:
//!
//! - `builder`: [`Check`], what the user sets, one method each;
//! - `validate`: every input checked and resolved into the `Plan` (`plan`: the contract
//!   between building and grading, with the settings it came from);
//! - `run`: [`Check::run`], the steps in order;
//! - `downstream`: the tests outside the task's lists to run too;
//! - `graded`: which tests both sides run, grading reads and a stored baseline keeps;
//! - `race`: both sides side by side, each `prepare`d (checkout, patches) and `execute`d
//!   (setup, the command, retries), their build output seeded (`seeding`), the candidate's
//!   sandbox started while its checkout is written (`early`);
//! - `conclude`: what both sides produced, judged into the verdict.
//!
//! Beside them: [`BaselineCache`] (`cache`), [`Check::derive`] (`derive`: a task's lists
//! from its gold patch), [`Check::from_task`] (`from_task`) and [`FromReports`]
//! (`from_reports`: judging reports that already exist).

mod builder;
mod cache;
mod conclude;
mod derive;
mod downstream;
mod early;
mod error;
mod execute;
mod fetch;
mod from_reports;
mod from_task;
mod graded;
mod plan;
mod prepare;
mod race;
mod run;
mod seeding;
mod validate;

pub use builder::{Check, DEFAULT_TIMEOUT};
pub use cache::BaselineCache;
pub use derive::Derived;
pub use error::Error;
pub use execute::LOG_TAIL;
pub use from_reports::FromReports;
pub use from_task::CheckOptions;
pub use plan::{DEFAULT_DOWNSTREAM_MAX, DownstreamMode};
