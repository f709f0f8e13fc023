//! Task: what a candidate patch is graded against, as the user wrote it.
//!
//! Takes task files (TOML or JSON, SWE-bench instances unchanged) and the values written by
//! hand on a command line; hands on a [`TaskFile`], one *layer* of what to do, which
//! [`TaskFile::over`] stacks with the others (flags over a task file, a dataset row over its
//! config). Turning the stacked task into a check is the check stage's
//! (`Check::from_task`).
//!
//! - [`file`](mod@file): [`TaskFile`], its loading and the precedence rule.
//! - [`command`]: the task's [`TestCommand`](crate::TestCommand), from `runner`/`test_cmd`/`ids`.
//! - [`request`]: the requested ids, checked.
//! - [`parse`]: durations, id files, `KEY=VALUE`.

pub mod command;
pub mod file;
pub mod parse;
pub mod request;

pub use command::CommandError;
pub use file::{TaskError, TaskFile, TaskProblem};
pub use parse::{ValueError, parse_duration, parse_env, parse_id_file};
pub use request::{RequestError, validate_ids};
