//! Shapes of real patches that `git apply` takes and libgit2 does not, put in git's form
//! before parsing or applying: what SWE-bench applies, patchgrade applies the same way.
//!
//! - A new empty file (`new file mode` and `index 0000000..e69de29`, no `---`/`+++`, no hunk:
//!   agents create empty `__init__.py` files): the `---`/`+++` lines are added.
//! - A new file written as a change (`--- a/F`, `+++ b/F`, every hunk `@@ -0,0 …`) where the
//!   tree has no `F`: made a creation, as `git apply` does.
//! - `Binary files … differ` with no binary data beside text edits: left out, and named, so
//!   that the text applies and the verdict says what did not.
//! - No newline after the last line of the patch: one is added.
//! - Hunk headers whose line counts do not match their lines (models miscount): counted
//!   again, as `git apply --recount` does, but only where the counts given do not end the
//!   hunk at a boundary; counts that do are kept, so a content line that looks like a header
//!   is never taken for one, and a hunk cut short by the end of the patch stays an error. An
//!   empty line between a hunk whose counts are met and the next file is a separator.

/// Split a git-form patch into its file sections (from one `diff --git` line to the next);
/// what comes before the first is the first element's head, kept as it is.
pub(super) fn split(text: &[u8]) -> (&[u8], Vec<&[u8]>) {
    let mut starts: Vec<usize> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive(|&b| b == b'\n') {
        if line.starts_with(b"diff --git ") {
            starts.push(at);
        }
        at += line.len();
    }
    let head = &text[..starts.first().copied().unwrap_or(text.len())];
    starts.push(text.len());
    (head, starts.windows(2).map(|w| &text[w[0]..w[1]]).collect())
}

/// The lines of a section before its first hunk or binary data.
fn header_lines(section: &str) -> impl Iterator<Item = &str> {
    section
        .lines()
        .take_while(|l| !l.starts_with("@@") && !l.starts_with("GIT binary patch"))
}

/// `b/path` of a `diff --git a/x b/y` line (the new name; spaces in names are not split).
fn new_name(section: &str) -> Option<&str> {
    let first = section.lines().next()?;
    let rest = first.strip_prefix("diff --git ")?;
    rest.rfind(" b/").map(|i| &rest[i + 3..])
}

/// Add `---`/`+++` to sections that create or delete an empty file and have none, and a final
/// newline to a patch that lacks one.
pub(super) fn headers(text: &[u8]) -> Vec<u8> {
    let mut text = text.to_vec();
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    let (head, sections) = split(&text);
    let mut out = head.to_vec();
    for section in sections {
        let s = String::from_utf8_lossy(section);
        let has_paths = header_lines(&s).any(|l| l.starts_with("--- ") || l.starts_with("+++ "));
        let binary = s
            .lines()
            .any(|l| l.starts_with("Binary files ") || l == "GIT binary patch");
        let hunks = s.lines().any(|l| l.starts_with("@@"));
        let created = header_lines(&s).any(|l| l.starts_with("new file mode "));
        let deleted = header_lines(&s).any(|l| l.starts_with("deleted file mode "));
        match new_name(&s) {
            Some(name) if !has_paths && !binary && !hunks && (created || deleted) => {
                out.extend_from_slice(section);
                let lines = if created {
                    format!("--- /dev/null\n+++ b/{name}\n")
                } else {
                    format!("--- a/{name}\n+++ /dev/null\n")
                };
                out.extend_from_slice(lines.as_bytes());
            }
            _ => out.extend_from_slice(section),
        }
    }
    out
}

/// Leave out the sections that say `Binary files … differ` and carry no data: their paths, and
/// the patch without them. A patch that has nothing else is left whole (it does not apply,
/// and says so).
pub(super) fn binary_without_data(text: &[u8]) -> (Vec<u8>, Vec<String>) {
    let (head, sections) = split(text);
    let mut out = head.to_vec();
    let mut dropped = Vec::new();
    for section in &sections {
        let s = String::from_utf8_lossy(section);
        let no_data = s.lines().any(|l| l.starts_with("Binary files "))
            && !s.lines().any(|l| l == "GIT binary patch");
        match new_name(&s) {
            Some(name) if no_data => dropped.push(name.to_string()),
            _ => out.extend_from_slice(section),
        }
    }
    if dropped.len() == sections.len() {
        return (text.to_vec(), Vec::new());
    }
    (out, dropped)
}

/// Make a creation of each section that changes a file `exists` says is not there, when all
/// its hunks start at line 0 of an empty old side (`@@ -0,0 +1,N @@`). `None` when there is
/// none such.
pub(super) fn creations(text: &[u8], exists: impl Fn(&str) -> bool) -> Option<Vec<u8>> {
    let (head, sections) = split(text);
    let mut out = head.to_vec();
    let mut any = false;
    for section in sections {
        let s = String::from_utf8_lossy(section);
        let headers: Vec<&str> = header_lines(&s).collect();
        let old = headers
            .iter()
            .find_map(|l| l.strip_prefix("--- "))
            .map(|p| p.split('\t').next().unwrap_or(p).trim_end());
        let hunks: Vec<&str> = s.lines().filter(|l| l.starts_with("@@ ")).collect();
        let from_nothing = !hunks.is_empty() && hunks.iter().all(|h| h.starts_with("@@ -0,0 "));
        let plain_change = !headers.iter().any(|l| {
            l.starts_with("new file mode ")
                || l.starts_with("deleted file mode ")
                || l.starts_with("rename ")
                || l.starts_with("copy ")
        });
        let missing = old
            .and_then(|p| p.strip_prefix("a/"))
            .is_some_and(|p| !exists(p));
        if !(from_nothing && plain_change && missing) {
            out.extend_from_slice(section);
            continue;
        }
        any = true;
        let mut lines = s.lines();
        if let Some(first) = lines.next() {
            out.extend_from_slice(format!("{first}\nnew file mode 100644\n").as_bytes());
        }
        for line in lines {
            let line = match line.strip_prefix("--- ") {
                Some(_) if headers.contains(&line) => "--- /dev/null",
                _ => line,
            };
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
    }
    any.then_some(out)
}

/// The files of sections that change a file and say nothing of its mode: no `index a..b
/// <mode>`, `old mode`/`new mode` or `new file mode` line.
pub(super) fn mode_unsaid(text: &[u8]) -> Vec<String> {
    let (_, sections) = split(text);
    let mut unsaid = Vec::new();
    for section in sections {
        let s = String::from_utf8_lossy(section);
        let said = header_lines(&s).any(|l| {
            l.starts_with("old mode ")
                || l.starts_with("new mode ")
                || l.starts_with("new file mode ")
                || l.starts_with("deleted file mode ")
                || l.strip_prefix("index ").is_some_and(|i| i.contains(' '))
        });
        if let (false, Some(name)) = (said, new_name(&s)) {
            unsaid.push(name.to_string());
        }
    }
    unsaid
}

/// Whether this line ends a hunk: the next hunk, file or section, a `---`/`+++` pair, or
/// `git format-patch`'s signature (`-- ` then the version: it looks like a removed line).
fn boundary(lines: &[&str], i: usize) -> bool {
    match lines.get(i) {
        None => true,
        Some(l) => {
            l.starts_with("@@ ")
                || l.starts_with("diff ")
                || (l.starts_with("--- ")
                    && lines.get(i + 1).is_some_and(|n| n.starts_with("+++ ")))
                || (*l == "-- "
                    && lines
                        .get(i + 1)
                        .is_none_or(|n| !n.starts_with([' ', '+', '-', '\\'])))
        }
    }
}

/// Whether this line, after any empty lines, ends a hunk: an empty line between a hunk whose
/// counts are met and the next file is a separator (`git apply` and `patch` skip it), not a
/// blank context line its header forgot (models write such patches: counted again, a new
/// file's `@@ -0,0` would become a change of a file that is not there).
fn boundary_after_blanks(lines: &[&str], mut i: usize) -> bool {
    while lines.get(i).is_some_and(|l| l.is_empty()) {
        i += 1;
    }
    boundary(lines, i)
}

/// The patch undone: what `patch -R` applies. Only to ask whether a patch that does not
/// apply is already applied; `None` for a binary patch, which this cannot turn around.
pub(super) fn reversed(text: &[u8]) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(text);
    let mut out = String::with_capacity(text.len());
    let mut lines = text.lines().peekable();
    let swaps = [
        ("new file mode ", "deleted file mode "),
        ("old mode ", "new mode "),
        ("rename from ", "rename to "),
        ("copy from ", "copy to "),
    ];
    while let Some(line) = lines.next() {
        if line.starts_with("GIT binary patch") {
            return None;
        }
        let swapped = swaps.iter().find_map(|(a, b)| {
            line.strip_prefix(a)
                .map(|rest| format!("{b}{rest}"))
                .or_else(|| line.strip_prefix(b).map(|rest| format!("{a}{rest}")))
        });
        let turned = if let Some(s) = swapped {
            s
        } else if let (Some(old), Some(new)) = (
            line.strip_prefix("--- "),
            lines.peek().and_then(|n| n.strip_prefix("+++ ")),
        ) {
            // Each name moves to the other side, with that side's prefix.
            let relabel = |name: &str, prefix: &str| match name.split_once('/') {
                Some(("a" | "b", rest)) => format!("{prefix}{rest}"),
                _ => name.to_string(),
            };
            let pair = format!("--- {}\n+++ {}", relabel(new, "a/"), relabel(old, "b/"));
            lines.next();
            pair
        } else if let Some((a, b, c, d, tail)) = hunk_header(line) {
            format!("@@ -{c},{d} +{a},{b} @@{tail}")
        } else if let Some(range) = line.strip_prefix("index ") {
            let (ids, mode) = range.split_once(' ').unwrap_or((range, ""));
            let (a, b) = ids.split_once("..")?;
            format!(
                "index {b}..{a}{}{mode}",
                if mode.is_empty() { "" } else { " " }
            )
        } else if let Some(rest) = line.strip_prefix('-') {
            format!("+{rest}")
        } else if let Some(rest) = line.strip_prefix('+') {
            format!("-{rest}")
        } else {
            line.to_string()
        };
        out.push_str(&turned);
        out.push('\n');
    }
    Some(out.into_bytes())
}

/// `@@ -a,b +c,d @@ tail` as its numbers and tail.
fn hunk_header(line: &str) -> Option<(usize, usize, usize, usize, &str)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, tail) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (c, d) = range(new)?;
    Some((a, b, c, d, tail))
}

/// The lines a hunk's counts take from `lines[i..]`, or `None` if they run out or a line is
/// not a hunk line.
fn consumed(lines: &[&str], mut i: usize, old: usize, new: usize) -> Option<usize> {
    let (mut old, mut new) = (old, new);
    while old > 0 || new > 0 {
        match lines.get(i)?.as_bytes().first() {
            None | Some(b' ') => {
                old = old.checked_sub(1)?;
                new = new.checked_sub(1)?;
            }
            Some(b'-') => old = old.checked_sub(1)?,
            Some(b'+') => new = new.checked_sub(1)?,
            Some(b'\\') => {}
            _ => return None,
        }
        i += 1;
    }
    while lines.get(i).is_some_and(|l| l.starts_with('\\')) {
        i += 1;
    }
    Some(i)
}

/// The patch with every hunk whose counts do not end it at a boundary counted again; `None`
/// when no hunk needed it.
pub(super) fn recount(text: &[u8]) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(text);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut changed = false;
    let mut i = 0;
    while i < lines.len() {
        let Some((a, b, c, d, tail)) = hunk_header(lines[i]) else {
            out.push_str(lines[i]);
            out.push('\n');
            i += 1;
            continue;
        };
        if consumed(&lines, i + 1, b, d).is_some_and(|end| boundary_after_blanks(&lines, end)) {
            out.push_str(lines[i]);
            out.push('\n');
            i += 1;
            continue;
        }
        // Count up to the next boundary, as git does.
        let (mut old, mut new, mut j) = (0, 0, i + 1);
        while !boundary(&lines, j) {
            match lines[j].as_bytes().first() {
                None | Some(b' ') => {
                    old += 1;
                    new += 1;
                }
                Some(b'-') => old += 1,
                Some(b'+') => new += 1,
                Some(b'\\') => {}
                _ => break,
            }
            j += 1;
        }
        // Fewer lines than counted before the patch ends: cut short, not miscounted. Left
        // for the parser to refuse; what was cut off is unknown.
        if j == lines.len() && (old < b || new < d) {
            out.push_str(lines[i]);
            out.push('\n');
            i += 1;
            continue;
        }
        changed = true;
        out.push_str(&format!("@@ -{a},{old} +{c},{new} @@{tail}\n"));
        i += 1;
    }
    changed.then(|| out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_new_file_gets_its_headers() {
        let text = b"diff --git a/pkg/__init__.py b/pkg/__init__.py\nnew file mode 100644\nindex 0000000..e69de29\n";
        let fixed = String::from_utf8(headers(text)).unwrap();
        assert!(
            fixed.ends_with("e69de29\n--- /dev/null\n+++ b/pkg/__init__.py\n"),
            "{fixed}"
        );
        assert!(git2::Diff::from_buffer(fixed.as_bytes()).is_ok());
        // A section with its headers, or a binary one, is left alone.
        let full = b"diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+x\n";
        assert_eq!(headers(full), full.to_vec());
    }

    #[test]
    fn modes_are_said_by_index_or_mode_lines() {
        let text = b"diff --git a/run.sh b/run.sh\n--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/x b/x\nindex 1234567..89abcde 100755\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(mode_unsaid(text), ["run.sh"]);
    }

    #[test]
    fn miscounted_hunks_are_counted_again_and_right_ones_kept() {
        // Two added lines, counted as one (a model's arithmetic).
        let text = b"--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@ fn\n a\n+b\n+c\n d\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n";
        let fixed = String::from_utf8(recount(text).unwrap()).unwrap();
        assert!(fixed.contains("@@ -1,2 +1,4 @@ fn\n"), "{fixed}");
        assert!(fixed.contains("@@ -1 +1 @@\n"), "{fixed}");
        // Right counts whose removed line looks like a header stay as they are.
        let right = b"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n--- a\n+++ b\n c\n";
        assert!(recount(right).is_none());
        // git format-patch's signature after the last hunk is not one of its lines.
        let mail = b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n-- \n2.47.3\n\n";
        assert!(recount(mail).is_none());
        // A miscounted hunk before the signature is counted up to it.
        let short = b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n-- \n2.47.3\n";
        let fixed = String::from_utf8(recount(short).unwrap()).unwrap();
        assert!(fixed.contains("@@ -1,1 +1,2 @@\n"), "{fixed}");
    }

    #[test]
    fn an_empty_line_between_a_full_hunk_and_the_next_file_is_a_separator() {
        // A new file's hunk whose counts are met, an empty line, the next file: counts kept
        // (counted again, the empty line would be context and `-0,0` would become `-0,1`).
        let text = b"--- a/d/new.md\n+++ b/d/new.md\n@@ -0,0 +1,2 @@\n+a\n+b\n\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n\n\n";
        assert!(recount(text).is_none());
        let git = b"diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+n\n\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
        assert!(recount(git).is_none());
        // An empty line followed by more of the hunk is one of its lines: counted again.
        let inside = b"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n\n c\n";
        let fixed = String::from_utf8(recount(inside).unwrap()).unwrap();
        assert!(fixed.contains("@@ -1,4 +1,4 @@\n"), "{fixed}");
    }

    #[test]
    fn a_patch_reversed_undoes_it() {
        let text = b"diff --git a/x b/x\nindex 1111111..2222222 100644\n--- a/x\n+++ b/x\n@@ -1,2 +1,3 @@ fn\n a\n-b\n+c\n+d\ndiff --git a/n b/n\nnew file mode 100644\nindex 0000000..3333333\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+n\n";
        let back = String::from_utf8(reversed(text).unwrap()).unwrap();
        assert_eq!(
            back,
            "diff --git a/x b/x\nindex 2222222..1111111 100644\n--- a/x\n+++ b/x\n@@ -1,3 +1,2 @@ fn\n a\n+b\n-c\n-d\ndiff --git a/n b/n\ndeleted file mode 100644\nindex 3333333..0000000\n--- a/n\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-n\n"
        );
        assert!(git2::Diff::from_buffer(back.as_bytes()).is_ok());
        assert!(reversed(b"diff --git a/p b/p\nGIT binary patch\nliteral 1\n").is_none());
    }

    #[test]
    fn a_missing_final_newline_is_added() {
        let text = b"--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b";
        assert_eq!(headers(text).last(), Some(&b'\n'));
    }

    #[test]
    fn binary_entries_without_data_are_named_and_left_out() {
        let text = b"diff --git a/img.png b/img.png\nnew file mode 100644\nindex 0000000..1234567\nBinary files /dev/null and b/img.png differ\ndiff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";
        let (kept, dropped) = binary_without_data(text);
        assert_eq!(dropped, ["img.png"]);
        assert!(
            String::from_utf8(kept)
                .unwrap()
                .starts_with("diff --git a/x b/x\n")
        );
        // Alone, it stays: it does not apply, and says why.
        let only = &text[..text.iter().position(|&b| b == b'\n').unwrap() + 90];
        let (kept, dropped) = binary_without_data(only);
        assert!(dropped.is_empty() && kept == only);
    }

    #[test]
    fn a_change_to_a_file_that_is_not_there_from_line_zero_is_a_creation() {
        let text =
            b"diff --git a/new.py b/new.py\n--- a/new.py\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n";
        let made = String::from_utf8(creations(text, |_| false).unwrap()).unwrap();
        assert_eq!(
            made,
            "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n"
        );
        // The file is there (an empty file gets its first lines), or a hunk starts elsewhere.
        assert!(creations(text, |_| true).is_none());
        let later =
            b"diff --git a/new.py b/new.py\n--- a/new.py\n+++ b/new.py\n@@ -1,0 +2 @@\n+b\n";
        assert!(creations(later, |_| false).is_none());
    }
}
