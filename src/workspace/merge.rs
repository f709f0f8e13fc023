//! The hidden tests' hunks over a file the candidate also edited, computed without I/O: where
//! the candidate left a test hunk's lines as they are at base, both stand; where it changed
//! one of them (context included), the hidden tests win that region, and the candidate's edit
//! there is lost and named.
//!
//! Both sides are placed on the base text: the candidate's edits as a line diff of base and
//! candidate (so a fuzzy apply or an agent's odd hunks do not matter), the test hunks where
//! their old lines are (at an offset if need be, never with fuzz). What does not overlap is
//! applied together in one pass over the base.

use super::apply::header_of;
use super::hunk::{self, Hunk, Line};
use std::ops::Range;

/// One edit the candidate made to a file: the base's lines `old` replaced by `new`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// 0-based base lines replaced; empty for an insertion before `old.start`.
    pub old: Range<usize>,
    /// What replaces them.
    pub new: Vec<Line>,
    /// `@@ -a,b +c,d @@` of the edit as a diff without context: how it is named when lost.
    pub header: String,
}

/// The merged file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// Its new content.
    pub text: Vec<u8>,
    /// Headers of the candidate's edits the hidden tests replaced.
    pub lost: Vec<String>,
    /// Each test hunk not where it said: its header and its offset in lines.
    pub moved: Vec<(String, i64)>,
}

/// The candidate's edits to a file, as a diff of `base` and `candidate` without context.
/// `None` when either side is binary to libgit2 (its diff then has no lines to merge).
pub fn edits(base: &[u8], candidate: &[u8]) -> Option<Vec<Edit>> {
    let mut opts = git2::DiffOptions::new();
    opts.context_lines(0).interhunk_lines(0);
    let patch = git2::Patch::from_buffers(base, None, candidate, None, Some(&mut opts)).ok()?;
    if patch.delta().flags().is_binary() {
        return None;
    }
    let mut edits = Vec::new();
    for h in 0..patch.num_hunks() {
        let (hunk, n) = patch.hunk(h).ok()?;
        let start = hunk.old_start() as usize;
        let count = hunk.old_lines() as usize;
        // Without context, an insertion's old start is the line it follows.
        let old = if count == 0 {
            start..start
        } else {
            start - 1..start - 1 + count
        };
        let mut new = Vec::new();
        for l in 0..n {
            let line = patch.line_in_hunk(h, l).ok()?;
            if line.origin() == '+' {
                new.push(line.content().to_vec());
            }
        }
        edits.push(Edit {
            old,
            new,
            header: header_of(hunk.header()),
        });
    }
    Some(edits)
}

/// `base` with the candidate's `edits` and the `test` hunks applied; `None` when a test hunk's
/// old lines are not in the base (the test patch does not apply, whatever the candidate did).
pub fn merge(base: &[Line], edits: &[Edit], test: &[Hunk]) -> Option<Merged> {
    let mut placed: Vec<(Range<usize>, &Hunk)> = Vec::new();
    let mut moved = Vec::new();
    // The offset of the hunks so far: the next is looked for as far off first.
    let (mut floor, mut drift) = (0usize, 0i64);
    for h in test {
        let place = hunk::locate(base, h, h.first as i64 + drift, floor, 0)?;
        let range = place.start..place.start + h.before.len();
        // Reported from where the hunk says it is, as `git apply` does.
        drift += place.offset;
        if drift != 0 {
            moved.push((h.header.clone(), drift));
        }
        floor = range.end;
        placed.push((range, h));
    }
    let (lost, kept): (Vec<&Edit>, Vec<&Edit>) = edits
        .iter()
        .partition(|e| placed.iter().any(|(r, _)| overlaps(&e.old, r)));
    // Ordered by where they start in the base, an insertion before what starts there too.
    let mut changes: Vec<(Range<usize>, &[Line])> = kept
        .iter()
        .map(|e| (e.old.clone(), e.new.as_slice()))
        .chain(placed.iter().map(|(r, h)| (r.clone(), h.after.as_slice())))
        .collect();
    changes.sort_by_key(|(r, _)| (r.start, r.end));
    let mut text = Vec::new();
    let mut cursor = 0;
    for (range, lines) in changes {
        if range.start < cursor || range.end > base.len() {
            return None;
        }
        base[cursor..range.start]
            .iter()
            .for_each(|l| text.extend(l));
        lines.iter().for_each(|l| text.extend(l));
        cursor = range.end;
    }
    base[cursor..].iter().for_each(|l| text.extend(l));
    Some(Merged {
        text,
        lost: lost.into_iter().map(|e| e.header.clone()).collect(),
        moved,
    })
}

/// Whether two changes of the base conflict: they share a line, or one inserts strictly
/// inside the lines the other replaces. Touching at an end is no conflict.
fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => false,
        (true, false) => b.start < a.start && a.start < b.end,
        (false, true) => a.start < b.start && b.start < a.end,
        (false, false) => a.start < b.end && b.start < a.end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[&str]) -> Vec<u8> {
        lines
            .iter()
            .flat_map(|l| format!("{l}\n").into_bytes())
            .collect()
    }

    /// The test hunks of a unified diff of one file, as libgit2 reads them.
    fn test_hunks(before: &[u8], after: &[u8]) -> Vec<Hunk> {
        let patch = git2::Patch::from_buffers(before, None, after, None, None).unwrap();
        hunk::read(&patch).unwrap()
    }

    fn merged(base: &[u8], candidate: &[u8], tests_after: &[u8]) -> Merged {
        let edits = edits(base, candidate).unwrap();
        merge(&hunk::lines(base), &edits, &test_hunks(base, tests_after)).unwrap()
    }

    #[test]
    fn edits_rebuild_the_candidate_whatever_the_line_ends() {
        let cases: [(&[u8], &[u8]); 7] = [
            (b"a\nb\nc\n", b"a\nB\nc\n"),
            (b"a\nb\nc", b"a\nb\nc\nd\n"),
            (b"a\nb\nc\n", b"a\nb\nc"),
            (b"", b"x\ny\n"),
            (b"x\ny\n", b""),
            (b"a\nb\nc\nd\ne\n", b"z\na\nc\nd\nE\ne\nf"),
            (b"same\n", b"same\n"),
        ];
        for (base, candidate) in cases {
            let e = edits(base, candidate).unwrap();
            let rebuilt = merge(&hunk::lines(base), &e, &[]).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&rebuilt.text),
                String::from_utf8_lossy(candidate)
            );
            assert!(rebuilt.lost.is_empty());
        }
    }

    #[test]
    fn code_and_tests_in_one_file_both_stand() {
        let base = text(&["fn f() -> i32 {", "    1", "}", "", "mod tests {", "}"]);
        let candidate = text(&["fn f() -> i32 {", "    2", "}", "", "mod tests {", "}"]);
        let tests = text(&[
            "fn f() -> i32 {",
            "    1",
            "}",
            "",
            "mod tests {",
            "    #[test] fn two() { assert_eq!(super::f(), 2) }",
            "}",
        ]);
        let m = merged(&base, &candidate, &tests);
        assert_eq!(
            String::from_utf8(m.text).unwrap(),
            "fn f() -> i32 {\n    2\n}\n\nmod tests {\n    #[test] fn two() { assert_eq!(super::f(), 2) }\n}\n"
        );
        assert!(m.lost.is_empty() && m.moved.is_empty());
    }

    #[test]
    fn an_edit_in_a_test_hunks_lines_is_lost_and_named_the_rest_stands() {
        let base = text(&["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"]);
        // The candidate edits line 2 (far from the tests) and line 10 (inside their context).
        let candidate = text(&["a", "B", "c", "d", "e", "f", "g", "h", "i", "J", "k", "l"]);
        let tests = text(&[
            "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "T", "l",
        ]);
        let m = merged(&base, &candidate, &tests);
        assert_eq!(
            String::from_utf8(m.text).unwrap(),
            "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nT\nl\n"
        );
        assert_eq!(m.lost, ["@@ -10 +10 @@"]);
    }

    #[test]
    fn an_insertion_touching_a_test_hunk_stands_one_inside_it_is_lost() {
        let base = text(&["1", "2", "3", "4", "5", "6", "7", "8", "9"]);
        let tests = text(&["1", "2", "3", "4", "5", "T", "6", "7", "8", "9"]);
        // The test hunk's old lines are 2..=8 (3 of context each side of its insertion).
        let before_it = text(&["X", "1", "2", "3", "4", "5", "6", "7", "8", "9"]);
        let m = merged(&base, &before_it, &tests);
        assert!(m.lost.is_empty(), "{:?}", m.lost);
        assert_eq!(
            String::from_utf8(m.text).unwrap(),
            "X\n1\n2\n3\n4\n5\nT\n6\n7\n8\n9\n"
        );
        let inside = text(&["1", "2", "3", "X", "4", "5", "6", "7", "8", "9"]);
        let m = merged(&base, &inside, &tests);
        assert_eq!(m.lost.len(), 1);
        assert_eq!(
            String::from_utf8(m.text).unwrap(),
            String::from_utf8(tests).unwrap()
        );
    }

    #[test]
    fn test_hunks_at_an_offset_are_placed_and_reported() {
        let base = text(&["x", "a", "b", "c", "d", "e", "f", "g"]);
        // Hunks written against a file with the first line missing: one line off.
        let hunks = test_hunks(
            &text(&["a", "b", "c", "d", "e", "f", "g"]),
            &text(&["a", "b", "c", "d", "T", "e", "f", "g"]),
        );
        let m = merge(&hunk::lines(&base), &[], &hunks).unwrap();
        assert_eq!(
            String::from_utf8(m.text).unwrap(),
            "x\na\nb\nc\nd\nT\ne\nf\ng\n"
        );
        assert_eq!(m.moved.len(), 1);
        assert_eq!(m.moved[0].1, 1);
    }

    #[test]
    fn a_test_hunk_not_in_the_base_is_none() {
        let base = text(&["a", "b", "c"]);
        let hunks = test_hunks(&text(&["p", "q", "r"]), &text(&["p", "Q", "r"]));
        assert_eq!(merge(&hunk::lines(&base), &[], &hunks), None);
    }

    #[test]
    fn binary_content_is_not_merged() {
        assert_eq!(edits(b"a\0b\n", b"a\0c\n"), None);
    }

    #[test]
    fn overlap_rules() {
        // (a, b, conflict)
        let cases = [
            (2..4, 3..5, true),
            (2..4, 4..6, false),
            (3..3, 2..5, true),
            (2..2, 2..5, false),
            (5..5, 2..5, false),
            (3..3, 3..3, false),
            (0..9, 4..4, true),
        ];
        for (a, b, want) in cases {
            assert_eq!(overlaps(&a, &b), want, "{a:?} {b:?}");
            assert_eq!(overlaps(&b, &a), want, "{b:?} {a:?}");
        }
    }
}
