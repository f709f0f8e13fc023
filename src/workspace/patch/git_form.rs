//! Traditional unified diffs (`diff -ruN`) rewritten into git's form, which libgit2 parses.

use super::PatchError;

/// Rewrite a traditional unified diff (`--- old\t<time>` / `+++ new\t<time>` / hunks) into
/// git's form: `diff --git` headers, `a/`/`b/` prefixes, `/dev/null` for created and deleted
/// files. Junk between file sections (`diff -ruN …`, `Only in …`, `Index:`) is dropped.
// Long because it is one line-by-line state machine over file headers and hunks.
pub(super) fn to_git_form(bytes: &[u8]) -> Result<Vec<u8>, PatchError> {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let (Some(old), Some(new)) = (
            lines[i].strip_prefix("--- "),
            lines.get(i + 1).and_then(|l| l.strip_prefix("+++ ")),
        ) else {
            i += 1;
            continue;
        };
        let old = HeaderPath::parse(old);
        let new = HeaderPath::parse(new);
        i += 2;
        let mut hunks = String::new();
        let (mut all_old_empty, mut all_new_empty, mut any) = (true, true, false);
        while let Some(header) = lines.get(i).filter(|l| l.starts_with("@@ ")) {
            let (old_len, new_len) = hunk_lengths(header)
                .ok_or_else(|| PatchError::BadHunkHeader(header.to_string()))?;
            any = true;
            all_old_empty &= old_len == 0;
            all_new_empty &= new_len == 0;
            hunks.push_str(header);
            hunks.push('\n');
            i += 1;
            let (mut left_old, mut left_new) = (old_len, new_len);
            while left_old > 0 || left_new > 0 {
                let Some(line) = lines.get(i) else {
                    return Err(PatchError::HunkCutShort(header.to_string()));
                };
                match line.as_bytes().first() {
                    // Editors strip the space of blank context lines; put it back.
                    None => {
                        hunks.push(' ');
                        left_old = left_old.saturating_sub(1);
                        left_new = left_new.saturating_sub(1);
                    }
                    Some(b' ') => {
                        left_old = left_old.saturating_sub(1);
                        left_new = left_new.saturating_sub(1);
                    }
                    Some(b'-') => left_old = left_old.saturating_sub(1),
                    Some(b'+') => left_new = left_new.saturating_sub(1),
                    Some(b'\\') => {}
                    _ => return Err(PatchError::HunkCutShort(header.to_string())),
                }
                hunks.push_str(line);
                hunks.push('\n');
                i += 1;
            }
            if let Some(marker) = lines.get(i).filter(|l| l.starts_with('\\')) {
                hunks.push_str(marker);
                hunks.push('\n');
                i += 1;
            }
        }
        if !any {
            continue;
        }
        let created = old.is_null() || (old.epoch && all_old_empty);
        let deleted = new.is_null() || (new.epoch && all_new_empty);
        let path = if deleted {
            old.stripped()
        } else {
            new.stripped()
        };
        out.push_str(&format!("diff --git a/{path} b/{path}\n"));
        if created {
            out.push_str(&format!(
                "new file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            ));
        } else if deleted {
            out.push_str(&format!(
                "deleted file mode 100644\n--- a/{path}\n+++ /dev/null\n"
            ));
        } else {
            out.push_str(&format!("--- a/{path}\n+++ b/{path}\n"));
        }
        out.push_str(&hunks);
    }
    if out.is_empty() {
        return Err(PatchError::NoHeaders);
    }
    Ok(out.into_bytes())
}

/// The path of a `---`/`+++` header line, and whether its timestamp is the epoch that
/// `diff -N` writes for a file that does not exist on that side.
struct HeaderPath<'a> {
    path: &'a str,
    epoch: bool,
}

impl<'a> HeaderPath<'a> {
    fn parse(rest: &'a str) -> HeaderPath<'a> {
        let (path, stamp) = rest.split_once('\t').unwrap_or((rest, ""));
        let stamp = stamp.trim_start();
        HeaderPath {
            path: path.trim_end(),
            // The epoch printed in the local zone: 1970-01-01, or 1969-12-31 west of UTC.
            epoch: stamp.starts_with("1970-01-01") || stamp.starts_with("1969-12-31"),
        }
    }

    fn is_null(&self) -> bool {
        self.path == "/dev/null"
    }

    /// The path with its first component removed (`patch -p1`), as `diff -ruN a b` names it.
    /// An absolute path stays absolute, so that applying refuses it rather than quietly
    /// writing it somewhere inside the checkout.
    fn stripped(&self) -> &'a str {
        if self.path.starts_with('/') {
            return self.path;
        }
        self.path
            .split_once('/')
            .map_or(self.path, |(_, rest)| rest)
    }
}

/// Old and new line counts of a hunk header `@@ -a[,b] +c[,d] @@`.
pub(super) fn hunk_lengths(header: &str) -> Option<(usize, usize)> {
    let mut parts = header.split_whitespace().skip(1);
    let len = |range: &str, sign: char| -> Option<usize> {
        let range = range.strip_prefix(sign)?;
        match range.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => range.parse::<usize>().ok().map(|_| 1),
        }
    };
    Some((len(parts.next()?, '-')?, len(parts.next()?, '+')?))
}
