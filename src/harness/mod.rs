//! Harness: many tasks graded offline, and what their results say together.
//!
//! Takes SWE-bench's task and prediction files and a config ([`dataset`]); hands on a results
//! directory with one verdict per task ([`batch`], [`results`]), its outcome distribution
//! ([`summary`]), the comparison of two runs ([`compare`]) and the union of shards
//! ([`merge`]), gates on them for CI ([`gate`]), and the JSON Schemas of every document ([`schema`]). [`stats`] has the intervals and the paired test they use. [`swebench`] writes
//! SWE-bench's own reports from results and reads an evaluation SWE-bench ran into results.

pub mod batch;
pub mod compare;
pub mod dataset;
pub mod gate;
pub mod merge;
pub mod results;
pub mod schema;
pub mod stats;
pub mod summary;
pub mod swebench;

pub use batch::{Event, Options, Plan, Ran, Shard};
pub use compare::Comparison;
pub use dataset::{Config, InputError, Prediction, read_predictions, read_tasks};
pub use results::{WriteError, load};
pub use summary::Summary;

/// The version of the run-level documents' JSON shape (the summary and the comparison).
pub const SCHEMA_VERSION: u32 = 1;
