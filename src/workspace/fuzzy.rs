//! The fallback when a patch does not apply exactly: each hunk is looked for near its line
//! number, then further away, then with up to [`MAX_FUZZ`] lines of leading and trailing
//! context ignored, as `patch --fuzz=2` does. Used only after libgit2's exact apply failed,
//! and never with `--strict-apply`.
//!
//! All files' new contents are computed before any is written, so a patch still applies whole
//! or not at all. Binary patches and symbolic links are never applied this way.

use super::apply::{ApplyFailure, MovedHunk, header_of};
use super::guard::symlink_in;
use std::path::Path;

/// The most context lines ignored at each end of a hunk.
pub const MAX_FUZZ: usize = 2;

/// One file's change, computed and not yet written.
enum Write {
    Content {
        path: String,
        bytes: Vec<u8>,
        executable: bool,
    },
    Remove(String),
}

/// Apply `diff` to the work tree by context search. `Ok` lists the hunks that moved or
/// needed fuzz.
// Long because computing every file before writing any is what keeps the fallback whole
// or nothing: the loop over files, their hunks and the writes stay in one place.
pub fn apply(workdir: &Path, diff: &git2::Diff<'_>) -> Result<Vec<MovedHunk>, ApplyFailure> {
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
        let mut lines: Vec<Vec<u8>> = match status {
            git2::Delta::Added => Vec::new(),
            _ => {
                let path = old.clone().unwrap_or_default();
                let bytes = std::fs::read(workdir.join(&path))
                    .map_err(|e| fail(None, format!("cannot read `{path}`: {e}")))?;
                bytes
                    .split_inclusive(|&b| b == b'\n')
                    .map(<[u8]>::to_vec)
                    .collect()
            }
        };
        if status == git2::Delta::Added && workdir.join(&name).exists() {
            return Err(fail(None, "already exists in the checkout".into()));
        }
        // Hunks apply in order; none may start before the end of the one before.
        let mut floor = 0usize;
        let mut shift = 0i64;
        for h in 0..patch.num_hunks() {
            let (hunk, n) = patch
                .hunk(h)
                .map_err(|e| fail(None, e.message().to_string()))?;
            let header = header_of(hunk.header());
            let (mut before, mut after, mut kinds) = (Vec::new(), Vec::new(), Vec::new());
            for l in 0..n {
                let line = patch
                    .line_in_hunk(h, l)
                    .map_err(|e| fail(Some(header.clone()), e.message().to_string()))?;
                match line.origin() {
                    ' ' => {
                        before.push(line.content().to_vec());
                        after.push(line.content().to_vec());
                        kinds.push(' ');
                    }
                    '-' => {
                        before.push(line.content().to_vec());
                        kinds.push('-');
                    }
                    '+' => after.push(line.content().to_vec()),
                    // End-of-file newline markers: the line contents already say it.
                    _ => {}
                }
            }
            // A hunk that removes nothing and has no context names the line it follows.
            let first = if hunk.old_lines() == 0 {
                hunk.old_start()
            } else {
                hunk.old_start().saturating_sub(1)
            };
            let expected = first as i64 + shift;
            let Some(place) = locate(&lines, &before, &kinds, expected, floor) else {
                return Err(fail(
                    Some(header),
                    "does not apply: its context is not in the file, even with offset and fuzz"
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
            let inner_before = before.len() - lead - trail;
            let inner_after: Vec<Vec<u8>> = after[lead..after.len() - trail].to_vec();
            if offset != 0 || fuzz > 0 {
                moved.push(MovedHunk {
                    file: name.clone(),
                    hunk: header,
                    offset,
                    fuzz,
                });
            }
            let added = inner_after.len();
            lines.splice(start..start + inner_before, inner_after);
            floor = start + added;
            shift += added as i64 - inner_before as i64 + offset;
        }
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

fn leading_context(kinds: &[char]) -> usize {
    kinds.iter().take_while(|&&k| k == ' ').count()
}

fn trailing_context(kinds: &[char]) -> usize {
    kinds.iter().rev().take_while(|&&k| k == ' ').count()
}

/// Where a hunk goes.
struct Place {
    /// First line of the hunk's old lines that are replaced (after ignored context).
    start: usize,
    /// Context lines ignored at the start and at the end.
    lead: usize,
    trail: usize,
    fuzz: usize,
    /// Lines from where the hunk said it starts.
    offset: i64,
}

/// Where `before` (the hunk's old lines) is in `lines`, at or after `floor`: the position
/// nearest `expected` with the least fuzz.
fn locate(
    lines: &[Vec<u8>],
    before: &[Vec<u8>],
    kinds: &[char],
    expected: i64,
    floor: usize,
) -> Option<Place> {
    for fuzz in 0..=MAX_FUZZ {
        let lead = leading_context(kinds).min(fuzz);
        let trail = trailing_context(kinds).min(fuzz);
        if fuzz > 0 && lead + trail == 0 {
            break;
        }
        let inner = &before[lead..before.len() - trail];
        if inner.is_empty() && fuzz > 0 {
            break;
        }
        let want = expected + lead as i64;
        let fits = |start: usize| {
            start >= floor
                && start + inner.len() <= lines.len()
                && lines[start..start + inner.len()] == *inner
        };
        let span = lines.len() as i64 + 1;
        for distance in 0..=span {
            let candidates = if distance == 0 {
                vec![want]
            } else {
                vec![want - distance, want + distance]
            };
            for at in candidates {
                if let Ok(start) = usize::try_from(at)
                    && fits(start)
                {
                    return Some(Place {
                        start,
                        lead,
                        trail,
                        fuzz,
                        offset: at - want,
                    });
                }
            }
        }
    }
    None
}
