//! A patch's lines, read once when it is parsed: per file, each hunk's lines with their
//! numbers on either side. What a patch's readers ask of its lines (the runner sections it
//! edits, the base lines whose tests it concerns) is answered from here, not by parsing the
//! text again.

use std::collections::{BTreeMap, BTreeSet};

/// One file's change, as libgit2 read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FileLines {
    /// Its path at base (also set for a file the patch creates).
    old: Option<String>,
    /// Its path after the patch.
    new: Option<String>,
    /// Each hunk's lines, in order.
    hunks: Vec<Vec<Line>>,
}

/// One line of a hunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Line {
    /// `' '` context, `'-'` removed, `'+'` added (libgit2's origin; others are markers).
    origin: char,
    /// Its 1-based number at base, if it is there.
    old: Option<u32>,
    /// Its 1-based number after the patch, if it is there.
    new: Option<u32>,
}

/// Every file's lines of a parsed diff. A file libgit2 cannot give hunks for (binary) has none.
pub(super) fn read(diff: &git2::Diff<'_>) -> Vec<FileLines> {
    let path = |f: git2::DiffFile<'_>| f.path().map(|p| p.to_string_lossy().into_owned());
    let mut files = Vec::new();
    for i in 0..diff.deltas().len() {
        let Ok(Some(patch)) = git2::Patch::from_diff(diff, i) else {
            continue;
        };
        let delta = patch.delta();
        let hunks = (0..patch.num_hunks())
            .map(|h| {
                (0..patch.num_lines_in_hunk(h).unwrap_or(0))
                    .filter_map(|l| patch.line_in_hunk(h, l).ok())
                    .map(|line| Line {
                        origin: line.origin(),
                        old: line.old_lineno(),
                        new: line.new_lineno(),
                    })
                    .collect()
            })
            .collect();
        files.push(FileLines {
            old: path(delta.old_file()),
            new: path(delta.new_file()),
            hunks,
        });
    }
    files
}

/// Per file: the 1-based lines it removes (old side) and adds (new side).
pub(super) fn changed(files: &[FileLines]) -> Vec<(String, Vec<usize>, Vec<usize>)> {
    let mut out = Vec::new();
    for file in files {
        let Some(path) = file.new.as_ref().or(file.old.as_ref()) else {
            continue;
        };
        let (mut removed, mut added) = (Vec::new(), Vec::new());
        for line in file.hunks.iter().flatten() {
            match line.origin {
                '-' => removed.extend(line.old.map(|n| n as usize)),
                '+' => added.extend(line.new.map(|n| n as usize)),
                _ => {}
            }
        }
        out.push((path.clone(), removed, added));
    }
    out
}

/// Per file of the base: the lines changed or removed, and around each insertion the base
/// lines on either side of it. Files created have none.
pub(super) fn touched_base(files: &[FileLines]) -> BTreeMap<String, BTreeSet<u32>> {
    let mut out: BTreeMap<String, BTreeSet<u32>> = BTreeMap::new();
    for file in files {
        let Some(path) = &file.old else {
            continue;
        };
        let lines = out.entry(path.clone()).or_default();
        for hunk in &file.hunks {
            // The last base line seen; whether added lines replace removed ones (their
            // lines are marked already), or insert, which marks the next base line too.
            let mut last: Option<u32> = None;
            let (mut replacing, mut inserted) = (false, false);
            for line in hunk {
                match (line.origin, line.old) {
                    ('+', _) if !replacing => {
                        lines.extend(last);
                        inserted = true;
                    }
                    ('+', _) => {}
                    (origin, Some(n)) => {
                        replacing = origin == '-';
                        if replacing || std::mem::take(&mut inserted) {
                            lines.insert(n);
                        }
                        last = Some(n);
                    }
                    _ => {}
                }
            }
        }
    }
    out.retain(|_, lines| !lines.is_empty());
    out
}
