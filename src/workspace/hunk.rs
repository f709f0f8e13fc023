//! A file's hunks as lines, and where a hunk's old lines are in a text: what the fuzzy
//! fallback and the hidden tests' merge both apply patches with.

use super::apply::header_of;

/// A line with its end (`\n`), as files are split and hunks are read; the last line of a file
/// without a final newline has none.
pub type Line = Vec<u8>;

/// Split a file's bytes into [`Line`]s.
pub fn lines(bytes: &[u8]) -> Vec<Line> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

/// One hunk of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// `@@ -a,b +c,d @@`, without the function context git appends.
    pub header: String,
    /// The 0-based index of the first old line it says it replaces (for a hunk that removes
    /// nothing and has no context, the line it goes before).
    pub first: usize,
    /// Its old lines (context and removed), in order.
    pub before: Vec<Line>,
    /// Its new lines (context and added), in order.
    pub after: Vec<Line>,
    /// For each old line, `' '` (context) or `'-'` (removed).
    pub kinds: Vec<char>,
}

/// The hunks of one file's patch, in order. `Err` holds the header of the hunk that could not
/// be read, if any, and libgit2's reason.
pub fn read(patch: &git2::Patch<'_>) -> Result<Vec<Hunk>, (Option<String>, String)> {
    let mut hunks = Vec::new();
    for h in 0..patch.num_hunks() {
        let (hunk, n) = patch.hunk(h).map_err(|e| (None, e.message().to_string()))?;
        let header = header_of(hunk.header());
        let (mut before, mut after, mut kinds) = (Vec::new(), Vec::new(), Vec::new());
        for l in 0..n {
            let line = patch
                .line_in_hunk(h, l)
                .map_err(|e| (Some(header.clone()), e.message().to_string()))?;
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
            hunk.old_start() as usize
        } else {
            (hunk.old_start() as usize).saturating_sub(1)
        };
        hunks.push(Hunk {
            header,
            first,
            before,
            after,
            kinds,
        });
    }
    Ok(hunks)
}

/// Where a hunk goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// First line of the hunk's old lines that are replaced (after ignored context).
    pub start: usize,
    /// Context lines ignored at the start and at the end.
    pub lead: usize,
    pub trail: usize,
    pub fuzz: usize,
    /// Lines from where the hunk said it starts.
    pub offset: i64,
}

/// Where `hunk`'s old lines are in `lines`, at or after `floor`: the position nearest
/// `expected` with the least fuzz, ignoring at most `max_fuzz` context lines at each end.
pub fn locate(
    lines: &[Line],
    hunk: &Hunk,
    expected: i64,
    floor: usize,
    max_fuzz: usize,
) -> Option<Place> {
    let (before, kinds) = (&hunk.before, &hunk.kinds);
    for fuzz in 0..=max_fuzz {
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

fn leading_context(kinds: &[char]) -> usize {
    kinds.iter().take_while(|&&k| k == ' ').count()
}

fn trailing_context(kinds: &[char]) -> usize {
    kinds.iter().rev().take_while(|&&k| k == ' ').count()
}
