//! Report: every document patchgrade writes, rendered for whoever reads it.
//!
//! Takes a [`Document`] (one [`Verdict`](crate::Verdict), a [`Run`] of results with its
//! summary, two runs [`Compared`], a [`DerivedTask`], outcome counts as a [`Distribution`] of
//! [`Bar`]s, the [`Listed`](crate::Listed) ids of
//! reports) and a format, and hands on text: for people, for language models in a bounded
//! size, for CI dashboards, for programs. [`render`] is the one entry the command line, the
//! MCP server and library users share; [`table::Table`] is the one table model behind every
//! terminal and Markdown table.

mod bars;
mod compare;
mod derive;
mod document;
mod error;
mod feedback;
mod html;
mod human;
mod junit_out;
mod summary;
pub mod table;

pub use bars::Bar;
pub use document::{
    CompareFormat, Compared, DeriveFormat, DerivedTask, Distribution, DistributionFormat, Document,
    ListFormat, Run, RunFormat, VerdictFormat, render,
};
pub use error::{RenderError, UnknownFormat};
pub use feedback::DEFAULT_MAX_BYTES;
