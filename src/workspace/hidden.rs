//! The hidden tests' patch on a checkout that holds the candidate. The hidden tests always
//! win; how much of the candidate they take with them depends on the file:
//!
//! - a file the test patch creates, deletes or renames, a test file by the protected-path
//!   rules, a binary file or a link: put back to base whole, then patched (SWE-bench resets
//!   every file the test patch touches, which is right for files that hold only tests);
//! - any other file both patches change (code with its tests inside, as Rust's `mod tests`
//!   or a Python doctest): merged hunk by hunk ([`super::merge`]), so that only a candidate
//!   edit where a test hunk changes lines is lost, and named.

use super::apply::{Applied, ApplyFailure, ApplyStrategy, Fit, MovedHunk, OverriddenHunk};
use super::checkout::{Checkout, CheckoutError};
use super::guard::{parents, symlink_in};
use super::hunk;
use super::merge;
use super::patch::Patch;
use super::protect::Protection;
use std::fs;

/// How the hidden tests went on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hidden {
    /// How the test patch applied: `exact`, or with hunks at an offset (`moved`).
    pub applied: Applied,
    /// Files the candidate changed that went back to base whole (and links it put on the
    /// test patch's way, removed).
    pub reset: Vec<String>,
    /// Files both changed, merged hunk by hunk.
    pub merged: Vec<String>,
    /// The candidate's edits lost in those merges.
    pub lost: Vec<OverriddenHunk>,
}

/// Why the hidden tests could not go on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HiddenError {
    /// The test patch does not apply (to the base, where it must): the task is broken.
    #[error("{0}")]
    DoesNotApply(ApplyFailure),
    /// Putting files back to base, or writing a merged file, failed.
    #[error("{0}")]
    Checkout(#[from] CheckoutError),
}

/// Apply `tests` to `checkout`, which holds a candidate that changed `candidate_files`.
pub fn apply(
    checkout: &Checkout,
    tests: &Patch,
    candidate_files: &[String],
    protection: &Protection,
) -> Result<Hidden, HiddenError> {
    let not_applied = |message: String| {
        HiddenError::DoesNotApply(ApplyFailure {
            file: None,
            hunk: None,
            message,
        })
    };
    let diff = tests
        .diff()
        .map_err(|e| not_applied(e.message().to_string()))?;
    // Every merge is computed before anything is written: the patch applies whole or not.
    let mut merges = Vec::new();
    for (i, delta) in diff.deltas().enumerate() {
        let Some(file) = mergeable(checkout, &delta, candidate_files, protection) else {
            continue;
        };
        let Some(merged) = merge_file(checkout, &diff, i, &file) else {
            continue;
        };
        merges.push((file, merged));
    }
    let merged: Vec<String> = merges.iter().map(|(f, _)| f.clone()).collect();
    let rest: Vec<String> = tests
        .files()
        .iter()
        .filter(|f| !merged.contains(f))
        .cloned()
        .collect();
    let mut reset: Vec<String> = candidate_files
        .iter()
        .filter(|f| rest.contains(f))
        .cloned()
        .collect();
    for link in checkout.restore(&rest)? {
        if !reset.contains(&link) {
            reset.push(link);
        }
    }
    let mut applied = match tests.only(&rest) {
        Some(part) => checkout
            .apply(&part, Fit::Offset)
            .map_err(HiddenError::DoesNotApply)?,
        None => Applied {
            strategy: ApplyStrategy::Exact,
            moved: Vec::new(),
        },
    };
    let mut lost = Vec::new();
    for (file, m) in merges {
        let path = checkout.workdir().join(&file);
        fs::write(&path, &m.text).map_err(|e| CheckoutError {
            dir: checkout.workdir().to_path_buf(),
            reason: format!("writing {file}, merged with the test patch: {e}"),
        })?;
        lost.extend(m.lost.into_iter().map(|hunk| OverriddenHunk {
            file: file.clone(),
            hunk,
        }));
        applied
            .moved
            .extend(m.moved.into_iter().map(|(hunk, offset)| MovedHunk {
                file: file.clone(),
                hunk,
                offset,
                fuzz: 0,
            }));
    }
    if !applied.moved.is_empty() {
        applied.strategy = ApplyStrategy::Fuzzy;
    }
    Ok(Hidden {
        applied,
        reset,
        merged,
        lost,
    })
}

/// The file of a test-patch entry that merges by hunk, if it does: a text file both patches
/// modify in place, that is no test file, and that is a regular file in the checkout and at
/// base.
fn mergeable(
    checkout: &Checkout,
    delta: &git2::DiffDelta<'_>,
    candidate_files: &[String],
    protection: &Protection,
) -> Option<String> {
    let (old, new) = (delta.old_file(), delta.new_file());
    let file = new.path()?.to_str()?.to_string();
    let regular = [git2::FileMode::Blob, git2::FileMode::BlobExecutable];
    let in_place = delta.status() == git2::Delta::Modified
        && old.path() == new.path()
        && old.mode() == new.mode()
        && regular.contains(&new.mode())
        && !delta.flags().is_binary();
    let candidate_changed = candidate_files.contains(&file);
    if !in_place || !candidate_changed || !protection.edits(std::slice::from_ref(&file)).is_empty()
    {
        return None;
    }
    // What the candidate left there must be a plain file reached without a link.
    let workdir = checkout.workdir();
    let plain = fs::symlink_metadata(workdir.join(&file)).is_ok_and(|m| m.is_file())
        && !parents(&file).any(|p| symlink_in(workdir, p));
    plain.then_some(file)
}

/// The merge of one file, or `None` when it cannot be merged (binary to libgit2, or test hunks
/// that are not in the base: then the file goes back whole and the patch's failure is libgit2's
/// to name).
fn merge_file(
    checkout: &Checkout,
    diff: &git2::Diff<'_>,
    index: usize,
    file: &str,
) -> Option<merge::Merged> {
    let base = checkout.base_bytes(file)?;
    let candidate = fs::read(checkout.workdir().join(file)).ok()?;
    let patch = git2::Patch::from_diff(diff, index).ok().flatten()?;
    let hunks = hunk::read(&patch).ok()?;
    let edits = merge::edits(&base, &candidate)?;
    merge::merge(&hunk::lines(&base), &edits, &hunks)
}
