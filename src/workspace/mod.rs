//! Workspace: the user's repository, read only, and checkouts of its base with the patches
//! applied.
//!
//! Takes the repository, a base revision and the patches; hands on a [`Checkout`] whose work
//! tree holds the base plus the candidate (and the hidden tests), and the [`Applied`] record
//! of how the candidate went on (or an [`ApplyFailure`] saying where it did not). Nothing here
//! runs a test.
//!
//! - [`patch`]: [`Patch`], diffs read and checked; [`wrapper`]: [`Wrapper`], a Markdown fence
//!   or `<pre>` around one, taken off.
//! - [`checkout`]: [`Source`] (repository and base) and [`Checkout`] (a fresh or reset tree).
//! - [`apply`]: the contract of applying: [`Applied`], [`ApplyStrategy`], [`ApplyFailure`],
//!   [`MovedHunk`].
//! - [`fuzzy`]: the offset and fuzz fallback; [`hunk`]: hunks as lines, and finding them.
//! - [`hidden`]: [`Hidden`], the hidden tests' patch on a candidate checkout; [`merge`]: over
//!   a file both change, hunk by hunk.
//! - [`guard`]: paths a patch may not write (outside the tree, beyond a symbolic link).
//! - [`imports`]: which tests reach a changed module, read from the source (Python,
//!   JavaScript and Rust).
//! - [`protect`]: [`Protection`], test and CI paths a candidate should not edit.
//! - [`pool`]: [`WorkdirPool`], checkouts kept and reset between runs.
//! - [`seed`]: [`SeedStore`], a trusted run's build output copied into fresh checkouts.
//! - [`trees`]: [`TreeStore`], base trees kept whole, copied into later checkouts of them.
//! - `copy`: trees copied and store entries locked, as both stores do it.
//! - [`snapshot`]: [`snapshot::Snapshot`], a pool slot's ignored output at its last trusted moment, put
//!   back before every use.

pub mod apply;
pub mod checkout;
mod copy;
pub mod fuzzy;
pub mod guard;
pub mod hidden;
pub mod hunk;
pub mod imports;
pub mod merge;
pub mod patch;
pub mod pool;
pub mod protect;
mod repair;
pub mod seed;
pub mod snapshot;
pub mod trees;
pub mod wrapper;

pub use apply::{Applied, ApplyFailure, ApplyStrategy, Fit, MovedHunk, OverriddenHunk};
pub use checkout::{Caveat, Checkout, Source, SourceError};
pub use hidden::{Hidden, HiddenError};
pub use patch::{Patch, PatchError};
pub use pool::WorkdirPool;
pub use protect::{OnProtectedEdit, Protection};
pub use seed::{BuildDir, BuildKind, SeedStore};
pub use trees::TreeStore;
pub use wrapper::Wrapper;
