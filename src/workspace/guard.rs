//! Paths a patch may not write: outside the checkout (absolute, `..`, `.git`) or beyond a
//! symbolic link, where writing would change files outside it. Checked before anything is
//! written, for the exact apply and the fuzzy fallback alike.

use super::apply::ApplyFailure;
use std::fs;
use std::path::Path;

/// A path of the patch that goes through a symbolic link, in the work tree or created by
/// the patch itself: libgit2 would write through it, outside the checkout. `git apply`
/// refuses the same ("beyond a symbolic link").
pub fn through_symlink(workdir: &Path, diff: &git2::Diff<'_>) -> Option<ApplyFailure> {
    let paths = |d: git2::DiffDelta<'_>| -> Vec<String> {
        [d.old_file(), d.new_file()]
            .iter()
            .filter_map(|f| f.path())
            .map(|p| p.to_string_lossy().into_owned())
            .collect()
    };
    let created: Vec<String> = diff
        .deltas()
        .filter(|d| d.new_file().mode() == git2::FileMode::Link)
        .filter_map(|d| {
            d.new_file()
                .path()
                .map(|p| p.to_string_lossy().into_owned())
        })
        .collect();
    for path in diff.deltas().flat_map(paths) {
        let link =
            parents(&path).find(|p| created.iter().any(|c| c == p) || symlink_in(workdir, p));
        if let Some(link) = link {
            return Some(ApplyFailure {
                file: Some(path.clone()),
                hunk: None,
                message: format!(
                    "refused: `{path}` is beyond the symbolic link `{link}`, so writing it \
                     could change files outside the checkout"
                ),
            });
        }
    }
    None
}

/// A path of the patch that names something outside the work tree: absolute, with a `..`
/// component, or inside a `.git` directory (hooks and config there would run code). libgit2
/// refuses some of these itself; refusing them all here gives one clear reason.
pub fn outside_the_tree(diff: &git2::Diff<'_>) -> Option<ApplyFailure> {
    for delta in diff.deltas() {
        for file in [delta.old_file(), delta.new_file()] {
            let Some(path) = file.path() else { continue };
            let text = path.to_string_lossy();
            let why = if text.starts_with('/') {
                "it is an absolute path"
            } else if text.split('/').any(|c| c == "..") {
                "it climbs out of the checkout with `..`"
            } else if text.split('/').any(|c| c.eq_ignore_ascii_case(".git")) {
                "it is inside a `.git` directory"
            } else {
                continue;
            };
            return Some(ApplyFailure {
                file: Some(text.to_string()),
                hunk: None,
                message: format!("refused: `{text}` is outside the work tree: {why}"),
            });
        }
    }
    None
}

/// The proper prefixes of a `/`-separated path, shortest first: `a/b/c` → `a`, `a/b`.
pub fn parents(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

/// Whether `rel` is a symbolic link in the work tree (not followed).
pub fn symlink_in(workdir: &Path, rel: &str) -> bool {
    fs::symlink_metadata(workdir.join(rel)).is_ok_and(|m| m.file_type().is_symlink())
}
