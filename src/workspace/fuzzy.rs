//! The fallback when a patch does not apply exactly: each hunk is looked for near its line
//! number, then further away, then with up to [`MAX_FUZZ`](super::apply::MAX_FUZZ) lines of leading and trailing
//! context ignored, as `patch --fuzz=2` does. Used only after libgit2's exact apply failed,
//! and never with `--strict-apply`.
//!
//! All files' new contents are computed before any is written, so a patch still applies whole
//! or not at all. Binary patches and symbolic links are never applied this way.

use super::apply::{ApplyFailure, MovedHunk};
use super::guard::symlink_in;
use super::hunk::{self, Line, Place};
use std::path::Path;

/// One file's change, computed and not yet written.
enum Write {
    Content {
        path: String,
        bytes: Vec<u8>,
        executable: bool,
    },
    Remove(String),
}

/// Apply `diff` to the work tree by context search, ignoring at most `max_fuzz` context
/// lines at each end of a hunk (0: an offset only, as `git apply` allows). `Ok` lists the
/// hunks that moved or needed fuzz.
// Every file is computed before any is written, which keeps the fallback whole or nothing.
pub fn apply(
    workdir: &Path,
    diff: &git2::Diff<'_>,
    max_fuzz: usize,
) -> Result<Vec<MovedHunk>, ApplyFailure> {
    let mut writes = Vec::new();
    let mut moved = Vec::new();
    for (i, delta) in diff.deltas().enumerate() {
        let old = delta
            .old_file()
            .path()
            .map(|p| p.to_string_lossy().into_owned());
        let new = delta
            .new_file()
            .path()
            .map(|p| p.to_string_lossy().into_owned());
        let name = new.clone().or_else(|| old.clone()).unwrap_or_default();
        let fail = |hunk: Option<String>, message: String| ApplyFailure {
            file: Some(name.clone()),
            hunk,
            message,
        };
        if delta.flags().is_binary()
            || [delta.old_file().mode(), delta.new_file().mode()].contains(&git2::FileMode::Link)
        {
            return Err(fail(
                None,
                "does not apply exactly, and a binary file or symbolic link is never applied \
                 with fuzz"
                    .into(),
            ));
        }
        // A link at the path itself: reading would follow it and writing would change the
        // file it points to, outside the checkout (its parents are checked by the guard).
        if let Some(link) = [&old, &new]
            .into_iter()
            .flatten()
            .find(|p| symlink_in(workdir, p))
        {
            return Err(fail(
                None,
                format!(
                    "does not apply exactly, and `{link}` is a symbolic link in the checkout: \
                     the fallback never reads or writes through one"
                ),
            ));
        }
        let patch = git2::Patch::from_diff(diff, i)
            .ok()
            .flatten()
            .ok_or_else(|| fail(None, "cannot read the file's hunks".into()))?;
        let status = delta.status();
        let mut lines: Vec<Line> = match status {
            git2::Delta::Added => Vec::new(),
            _ => {
                let path = old.clone().unwrap_or_default();
                let bytes = std::fs::read(workdir.join(&path))
                    .map_err(|e| fail(None, format!("cannot read `{path}`: {e}")))?;
                hunk::lines(&bytes)
            }
        };
        if status == git2::Delta::Added && workdir.join(&name).exists() {
            return Err(fail(None, "already exists in the checkout".into()));
        }
        moved.extend(place_hunks(&mut lines, &patch, &name, max_fuzz, &fail)?);
        if status == git2::Delta::Deleted {
            writes.push(Write::Remove(name.clone()));
            continue;
        }
        writes.push(Write::Content {
            path: name.clone(),
            bytes: lines.concat(),
            executable: delta.new_file().mode() == git2::FileMode::BlobExecutable,
        });
        if status == git2::Delta::Renamed
            && let Some(old) = old
        {
            writes.push(Write::Remove(old));
        }
    }
    for write in writes {
        perform(workdir, write)?;
    }
    Ok(moved)
}

/// Each hunk of one file's patch located in `lines` (by offset, then fuzz up to `max_fuzz`)
/// and applied there, in order; the hunks that moved or needed fuzz.
fn place_hunks(
    lines: &mut Vec<Line>,
    patch: &git2::Patch<'_>,
    name: &str,
    max_fuzz: usize,
    fail: &dyn Fn(Option<String>, String) -> ApplyFailure,
) -> Result<Vec<MovedHunk>, ApplyFailure> {
    let mut moved = Vec::new();
    // Hunks apply in order; none may start before the end of the one before.
    let mut floor = 0usize;
    // Lines added less removed by the hunks so far, and how far off they were found: the
    // next is looked for as far off first, and reported from where it says it is.
    let (mut shift, mut drift) = (0i64, 0i64);
    for h in hunk::read(patch).map_err(|(header, m)| fail(header, m))? {
        let expected = h.first as i64 + shift + drift;
        let Some(place) = hunk::locate(lines, &h, expected, floor, max_fuzz) else {
            return Err(fail(
                Some(h.header),
                if max_fuzz == 0 {
                    "does not apply: its context is not in the file, even with an offset"
                } else {
                    "does not apply: its context is not in the file, even with offset and fuzz"
                }
                .into(),
            ));
        };
        // Ignored context lines stay as the file has them.
        let Place {
            start,
            lead,
            trail,
            fuzz,
            offset,
        } = place;
        let inner_before = h.before.len() - lead - trail;
        let inner_after: Vec<Line> = h.after[lead..h.after.len() - trail].to_vec();
        drift += offset;
        if drift != 0 || fuzz > 0 {
            moved.push(MovedHunk {
                file: name.to_string(),
                hunk: h.header,
                offset: drift,
                fuzz,
            });
        }
        let added = inner_after.len();
        lines.splice(start..start + inner_before, inner_after);
        floor = start + added;
        shift += added as i64 - inner_before as i64;
    }
    Ok(moved)
}

fn perform(workdir: &Path, write: Write) -> Result<(), ApplyFailure> {
    use std::os::unix::fs::PermissionsExt;
    let (path, result) = match write {
        Write::Remove(path) => {
            let r = std::fs::remove_file(workdir.join(&path));
            (path, r)
        }
        Write::Content {
            path,
            bytes,
            executable,
        } => {
            let target = workdir.join(&path);
            let r = target
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(&target, bytes))
                .and_then(|()| {
                    let mode = if executable { 0o755 } else { 0o644 };
                    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode))
                });
            (path, r)
        }
    };
    result.map_err(|e| ApplyFailure {
        file: Some(path),
        hunk: None,
        message: format!("cannot write: {e}"),
    })
}
