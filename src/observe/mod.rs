//! Observe: what a run left behind, read into facts about the requested tests.
//!
//! Takes the JUnit reports a test command wrote (and the checkout it ran in) and hands on an
//! [`Evidence`] per run: the testcases, each with its [`TestStatus`] and message. Nothing here
//! judges; [`ids`] only says which testcases an id names, in each runner's own id syntax.
//!
//! - [`junit`]: [`Report`], a streaming JUnit reader, behind `capped`, which cuts long text
//!   before the XML reader buffers it.
//! - [`ids`]: [`IdSyntax`] and [`Index`](ids::Index), id → testcases; [`list_ids`], the
//!   other way.
//! - [`evidence`]: [`Evidence`] (what one run produced), [`Requested`] and [`Group`].
//! - [`status`]: [`TestStatus`] and [`Observation`], one test in one run.
//! - `panic`: a Rust panic's own text and place, from its failure; `message`: a better
//!   one-line message where the runner's says nothing (`Failed`, the test's name).
//! - [`bytecode`]: whether the patched Python code was imported from the checkout.
//! - [`coverage`]: [`CoverageMap`](coverage::CoverageMap), which tests ran which lines.

pub mod bytecode;
mod capped;
pub mod coverage;
pub mod evidence;
pub mod ids;
pub mod junit;
mod message;
mod panic;
pub mod status;

pub use evidence::{Evidence, Group, Indexed, Requested};
pub use ids::IdSyntax;
pub use junit::Report;
pub use status::{NotRunReason, Observation, SwebenchView, TestStatus};

/// Every test in these JUnit reports (files or directories, read as one) as an id of this
/// syntax, with its status and whether the id names it alone (see
/// [`Index::listing`](ids::Index::listing)).
pub fn list_ids(
    paths: &[std::path::PathBuf],
    syntax: IdSyntax,
) -> Result<Vec<ids::Listed>, junit::JunitError> {
    let report = Report::read_all(paths)?;
    Ok(ids::Index::new(&report, syntax).listing())
}
