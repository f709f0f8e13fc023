//! Reading patches: `git diff` and `git format-patch` output as is, and traditional unified
//! diffs (`diff -ruN`) rewritten into git's form, since libgit2 parses only the latter.

mod git_form;
mod lines;

use super::repair;
use super::wrapper::{Wrapper, unwrap};
use git_form::to_git_form;
use lines::FileLines;
use std::collections::{BTreeMap, BTreeSet};

/// A non-empty patch in git's diff format, ready to be applied with git2.
///
/// It holds text rather than a `git2::Diff` because a `Diff` cannot cross threads; what its
/// readers ask of its lines is read once, when it is parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    text: Vec<u8>,
    files: Vec<String>,
    /// Each file's hunks, line by line.
    lines: Vec<FileLines>,
    /// The first absolute path the headers name. libgit2 reads `b//etc/x` as `etc/x`, so this
    /// is seen here, in the text, and refused when the patch is applied.
    absolute: Option<String>,
    /// What the patch came wrapped in, taken off before parsing.
    wrapper: Option<Wrapper>,
    /// Files of `Binary files … differ` entries with no data, left out.
    binary_without_data: Vec<String>,
    /// Hunk headers whose counts did not match their lines were counted again.
    recounted: bool,
}

/// Why a patch could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PatchError {
    /// libgit2 does not read it as a diff.
    #[error("not a unified diff: {0}")]
    NotADiff(String),
    /// It parses, but changes no file.
    #[error("no file changes found in the patch")]
    NoFileChanges,
    /// Neither git's headers nor `---`/`+++` headers.
    #[error("no unified diff found (expected `diff --git` or `---`/`+++` headers)")]
    NoHeaders,
    /// A hunk header whose line counts cannot be read.
    #[error("bad hunk header `{0}`")]
    BadHunkHeader(String),
    /// A hunk with fewer lines than its header counts.
    #[error("hunk `{0}` is cut short")]
    HunkCutShort(String),
}

impl Patch {
    /// Parse a patch. `Ok(None)` means empty or whitespace only.
    pub fn parse(bytes: &[u8]) -> Result<Option<Patch>, PatchError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let (bytes, wrapper) = unwrap(bytes);
        let bytes = repair::headers(&bytes);
        let recounted = repair::recount(&bytes);
        let (bytes, recounted) = match recounted {
            Some(b) => (b, true),
            None => (bytes, false),
        };
        let is_git = bytes
            .split(|&b| b == b'\n')
            .any(|line| line.starts_with(b"diff --git "));
        let text = if is_git { bytes } else { to_git_form(&bytes)? };
        let (text, binary_without_data) = repair::binary_without_data(&text);
        let diff = git2::Diff::from_buffer(&text)
            .map_err(|e| PatchError::NotADiff(e.message().to_string()))?;
        let mut files = BTreeSet::new();
        for delta in diff.deltas() {
            for file in [delta.old_file(), delta.new_file()] {
                if let Some(path) = file.path() {
                    files.insert(path.to_string_lossy().into_owned());
                }
            }
        }
        if files.is_empty() {
            return Err(PatchError::NoFileChanges);
        }
        Ok(Some(Patch {
            lines: lines::read(&diff),
            absolute: absolute_path(&text),
            text,
            files: files.into_iter().collect(),
            wrapper,
            binary_without_data,
            recounted,
        }))
    }

    /// Files the patch changes without saying their mode (a traditional diff, or a hand-written
    /// git one with no `index … <mode>` line): they keep the mode they have.
    pub fn mode_unsaid(&self) -> Vec<String> {
        super::repair::mode_unsaid(&self.text)
    }

    /// Whether hunk headers whose line counts did not match their lines were counted again
    /// (`git apply --recount`).
    pub fn recounted(&self) -> bool {
        self.recounted
    }

    /// Files of `Binary files … differ` entries that carried no data and were left out.
    pub fn binary_without_data(&self) -> &[String] {
        &self.binary_without_data
    }

    /// The patch with each change to a file `exists` says is not there, from line 0 of an
    /// empty old side, made a creation (as `git apply` takes it); `None` when there is none.
    pub fn with_creations(&self, exists: impl Fn(&str) -> bool) -> Option<Patch> {
        let text = super::repair::creations(&self.text, exists)?;
        let mut made = Patch::parse(&text).ok().flatten()?;
        made.wrapper = self.wrapper;
        made.binary_without_data = self.binary_without_data.clone();
        made.recounted = self.recounted;
        Some(made)
    }

    /// The patch undone (as `patch -R` applies it), when it can be turned around.
    pub fn reversed(&self) -> Option<Patch> {
        let text = super::repair::reversed(&self.text)?;
        Patch::parse(&text).ok().flatten()
    }

    /// What the patch came wrapped in (a Markdown fence, `<pre>`), if anything.
    pub fn wrapper(&self) -> Option<Wrapper> {
        self.wrapper
    }

    /// An absolute path named in the patch's headers, if any.
    pub fn absolute_path(&self) -> Option<&str> {
        self.absolute.as_deref()
    }

    /// The patch as git2 sees it.
    pub fn diff(&self) -> Result<git2::Diff<'static>, git2::Error> {
        git2::Diff::from_buffer(&self.text)
    }

    /// Per file it changes: the 1-based lines it removes (old side) and adds (new side).
    pub fn changed_lines(&self) -> Vec<(String, Vec<usize>, Vec<usize>)> {
        lines::changed(&self.lines)
    }

    /// Per file of the base it changes, the base's lines it changes or removes, and around
    /// each insertion the base lines on either side of it: the lines whose tests the change
    /// concerns. Files the patch creates have none.
    pub fn touched_base_lines(&self) -> BTreeMap<String, BTreeSet<u32>> {
        lines::touched_base(&self.lines)
    }

    /// The part of the patch that touches only these paths (each file's section whole),
    /// or `None` when no section does.
    pub fn only(&self, paths: &[String]) -> Option<Patch> {
        let mut kept = Vec::new();
        for section in sections(&self.text) {
            let Ok(Some(part)) = Patch::parse(section) else {
                continue;
            };
            if part.files.iter().all(|f| paths.contains(f)) {
                kept.extend_from_slice(section);
            }
        }
        Patch::parse(&kept).ok().flatten()
    }

    /// Every path the patch touches (old and new names of renames), sorted.
    pub fn files(&self) -> &[String] {
        &self.files
    }
}

/// A git-form patch's file sections, each from its `diff --git` line to the next (a content
/// line never starts with it: it has a ` `, `+` or `-` first). What comes before the first is
/// left out.
fn sections(text: &[u8]) -> Vec<&[u8]> {
    repair::split(text).1
}

/// The first absolute path in the file headers of a git-form patch (`diff --git`, `---`/`+++`,
/// `rename`/`copy` lines before a file's first hunk; hunk lines are content and not looked at).
fn absolute_path(text: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(text);
    let mut in_header = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            in_header = true;
            let first = rest.split(' ').next().unwrap_or("");
            if first.starts_with('/') || first.starts_with("a//") {
                return Some(first.trim_start_matches("a/").to_string());
            }
            continue;
        }
        if line.starts_with("@@") {
            in_header = false;
        }
        if !in_header {
            continue;
        }
        let path = [
            "--- ",
            "+++ ",
            "rename from ",
            "rename to ",
            "copy from ",
            "copy to ",
        ]
        .iter()
        .find_map(|p| line.strip_prefix(p))
        .map(|p| p.split('\t').next().unwrap_or(p).trim_end());
        let Some(path) = path.filter(|p| *p != "/dev/null") else {
            continue;
        };
        let bare = path
            .strip_prefix("a/")
            .or_else(|| path.strip_prefix("b/"))
            .unwrap_or(path);
        if path.starts_with('/') || bare.starts_with('/') {
            return Some(bare.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::git_form::hunk_lengths;
    use super::*;

    #[test]
    fn whitespace_is_empty() {
        assert_eq!(Patch::parse(b"").unwrap(), None);
        assert_eq!(Patch::parse(b"  \n\t\n").unwrap(), None);
    }

    #[test]
    fn prose_is_rejected() {
        assert!(Patch::parse(b"I fixed the bug.\n").is_err());
    }

    #[test]
    fn hunk_header_lengths() {
        assert_eq!(hunk_lengths("@@ -1,3 +1,4 @@"), Some((3, 4)));
        assert_eq!(hunk_lengths("@@ -0,0 +1 @@"), Some((0, 1)));
        assert_eq!(hunk_lengths("@@ -5 +5 @@ fn x()"), Some((1, 1)));
        assert_eq!(hunk_lengths("@@ nonsense @@"), None);
    }

    #[test]
    fn traditional_diff_becomes_git_form() {
        let ruin = [
            "diff -ruN old/d/h.txt new/d/h.txt",
            "--- old/d/h.txt\t1970-01-01 00:00:00.000000000 +0000",
            "+++ new/d/h.txt\t2026-12-02 18:33:25.492673383 +0000",
            "@@ -0,0 +1 @@",
            "+new",
            "diff -ruN old/f.txt new/f.txt",
            "--- old/f.txt\t2026-12-02 18:33:25.000000000 +0000",
            "+++ new/f.txt\t2026-12-02 18:33:25.492673383 +0000",
            "@@ -1,3 +1,3 @@",
            " a",
            "-b",
            "+B",
            " c",
            "diff -ruN old/gone.txt new/gone.txt",
            "--- old/gone.txt\t2026-12-02 18:33:25.000000000 +0000",
            "+++ new/gone.txt\t1969-12-31 19:00:00.000000000 -0500",
            "@@ -1 +0,0 @@",
            "-bye",
            "",
        ]
        .join("\n");
        let p = Patch::parse(ruin.as_bytes()).unwrap().unwrap();
        assert_eq!(p.files(), ["d/h.txt", "f.txt", "gone.txt"]);
        let diff = p.diff().unwrap();
        let statuses: Vec<git2::Delta> = diff.deltas().map(|d| d.status()).collect();
        assert_eq!(
            statuses,
            [
                git2::Delta::Added,
                git2::Delta::Modified,
                git2::Delta::Deleted
            ]
        );
    }

    /// A real prediction (moatless-tools' 2024-11-17 run on sympy__sympy-13915): a new test
    /// file written as a change from line 0, then an empty line before the next file. It
    /// stays a file made from nothing, which becomes a creation where the tree lacks it.
    #[test]
    fn a_new_file_before_an_empty_separator_line_stays_a_creation() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/predictions/moatless-20241117");
        let text = std::fs::read(dir.join("sympy__sympy-13915.diff")).unwrap();
        let patch = Patch::parse(&text).unwrap().unwrap();
        assert!(!patch.recounted());
        let new = "sympy/core/tests/test_undefined_substitution.py";
        assert_eq!(patch.files(), ["sympy/core/basic.py", new]);
        let created = patch.with_creations(|p| p != new).unwrap();
        let diff = created.diff().unwrap();
        let delta = diff
            .deltas()
            .find(|d| d.new_file().path() == Some(new.as_ref()));
        assert_eq!(delta.map(|d| d.status()), Some(git2::Delta::Added));
    }

    #[test]
    fn blank_context_lines_without_space_are_repaired() {
        let p = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n";
        let parsed = Patch::parse(p.as_bytes()).unwrap().unwrap();
        assert_eq!(parsed.files(), ["f.txt"]);
    }

    #[test]
    fn truncated_hunk_is_an_error() {
        let p = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n";
        assert!(matches!(
            Patch::parse(p.as_bytes()).unwrap_err(),
            PatchError::HunkCutShort(_)
        ));
    }

    #[test]
    fn touched_base_lines_are_the_changed_ones_and_those_around_insertions() {
        let text = b"--- a/m.py\n+++ b/m.py\n@@ -1,6 +1,6 @@\n a\n-b\n+B\n c\n d\n e\n f\n@@ -10,3 +10,4 @@\n j\n+inserted\n k\n l\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n";
        let p = Patch::parse(text).unwrap().unwrap();
        let touched = p.touched_base_lines();
        assert_eq!(
            touched,
            BTreeMap::from([("m.py".to_string(), BTreeSet::from([2, 10, 11]))])
        );
    }

    #[test]
    fn absolute_paths_are_found_in_headers_only() {
        let abs = |p: &str| Patch::parse(p.as_bytes()).unwrap().unwrap().absolute;
        let git = "diff --git a//etc/x b//etc/x\nnew file mode 100644\n--- /dev/null\n+++ b//etc/x\n@@ -0,0 +1 @@\n+x\n";
        assert_eq!(abs(git).as_deref(), Some("/etc/x"));
        let plain = "--- /dev/null\n+++ /etc/y\t2026-01-01\n@@ -0,0 +1 @@\n+y\n";
        assert_eq!(abs(plain).as_deref(), Some("/etc/y"));
        // A removed line that reads `-- /etc/z` is content, not a header.
        let content = "diff --git a/q.sql b/q.sql\n--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1 @@\n--- /etc/z\n keep\n";
        assert_eq!(abs(content), None);
    }

    #[test]
    fn only_keeps_the_sections_of_the_paths_named() {
        let text = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n\
                    diff --git a/t/y.py b/t/y.py\n--- a/t/y.py\n+++ b/t/y.py\n@@ -1 +1 @@\n-diff --git a/z b/z\n+c\n";
        let patch = Patch::parse(text.as_bytes()).unwrap().unwrap();
        let y = patch.only(&["t/y.py".to_string()]).unwrap();
        assert_eq!(y.files(), ["t/y.py"]);
        assert!(String::from_utf8_lossy(&y.text).ends_with("+c\n"));
        assert_eq!(patch.only(&["x.py".to_string()]).unwrap().files(), ["x.py"]);
        assert_eq!(patch.only(&["other".to_string()]), None);
    }

    #[test]
    fn git_diff_passes_through() {
        let p = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n";
        let parsed = Patch::parse(p.as_bytes()).unwrap().unwrap();
        assert_eq!(parsed.files(), ["x.py"]);
    }
}
