//! Patches that arrive wrapped, as language models write them: in a Markdown fence or an
//! HTML `<pre>` block. The wrapper is taken off and reported; HTML's escapes are decoded, since
//! the patch inside `<pre>` is what a browser shows, not its source.

use serde::{Deserialize, Serialize};

/// What a patch was wrapped in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Wrapper {
    /// A Markdown code fence: ```` ```diff ```` … ```` ``` ````.
    MarkdownFence,
    /// `<pre>` (with or without `<code>`) … `</pre>`; `decoded` when HTML escapes such as
    /// `&lt;` were turned back into characters.
    HtmlPre {
        /// Escapes were decoded.
        decoded: bool,
    },
}

/// The patch inside its wrapper, and the wrapper; the bytes as they are when there is none.
/// Only whole lines before the first and after the last line of the diff count as a wrapper;
/// a fence may have prose around it ("Here is the fix:"), which goes with it.
pub(crate) fn unwrap(bytes: &[u8]) -> (Vec<u8>, Option<Wrapper>) {
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
    // Markers are whole lines from their first byte: ` ``` ` is a context line of a diff.
    let text = |i: usize| {
        String::from_utf8_lossy(lines[i])
            .trim_end()
            .to_ascii_lowercase()
    };
    let diffish = |i: usize| {
        ["diff --git ", "--- ", "+++ ", "@@ "]
            .iter()
            .any(|p| lines[i].starts_with(p.as_bytes()))
    };
    let Some(first_diff) = (0..lines.len()).find(|&i| diffish(i)) else {
        return (bytes.to_vec(), None);
    };
    let last_diff = (0..lines.len())
        .rev()
        .find(|&i| diffish(i))
        .unwrap_or(first_diff);
    let open = (0..first_diff).rev().find(|&i| {
        let t = text(i);
        is_fence(&t) || is_pre_open(&t)
    });
    let Some(open) = open else {
        return (bytes.to_vec(), None);
    };
    let opening = text(open);
    let close = (last_diff + 1..lines.len()).find(|&i| {
        let t = text(i);
        if is_fence(&opening) {
            t == "```" || t == "~~~"
        } else {
            t == "</pre>" || t == "</code></pre>"
        }
    });
    let Some(close) = close else {
        return (bytes.to_vec(), None);
    };
    let inner = lines[open + 1..close].concat();
    if is_fence(&opening) {
        return (inner, Some(Wrapper::MarkdownFence));
    }
    // `<pre>` comes from HTML, where nothing but the block itself may surround the patch.
    let blank = |l: &[u8]| l.iter().all(u8::is_ascii_whitespace);
    if !lines[..open].iter().all(|l| blank(l)) || !lines[close + 1..].iter().all(|l| blank(l)) {
        return (bytes.to_vec(), None);
    }
    let decoded = decode_entities(&inner);
    let changed = decoded != inner;
    (decoded, Some(Wrapper::HtmlPre { decoded: changed }))
}

/// ```` ``` ````, ```` ```diff ````, ```` ~~~patch ````: a fence with an info string of one word.
fn is_fence(line: &str) -> bool {
    let info = line
        .strip_prefix("```")
        .or_else(|| line.strip_prefix("~~~"));
    info.is_some_and(|i| !i.contains(char::is_whitespace) && !i.contains('`'))
}

/// `<pre>`, `<pre class="x">`, `<pre><code>`, `<pre><code class="language-diff">`.
fn is_pre_open(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("<pre") else {
        return false;
    };
    let Some((attrs, after)) = rest.split_once('>') else {
        return false;
    };
    if !(attrs.is_empty() || attrs.starts_with(' ')) {
        return false;
    }
    after.is_empty()
        || after
            .strip_prefix("<code")
            .is_some_and(|c| c.ends_with('>') && !c[..c.len() - 1].contains('>'))
}

/// The five escapes HTML writes for text, and numeric ones; anything else is left as it is.
fn decode_entities(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut rest: &str = &text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let entity = rest
            .find(';')
            .filter(|&end| end <= 10)
            .map(|end| &rest[1..end]);
        let decoded = entity.and_then(|e| match e {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => {
                let digits = e.strip_prefix('#')?;
                let code = match digits.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                    None => digits.parse().ok()?,
                };
                char::from_u32(code)
            }
        });
        match (decoded, entity) {
            (Some(c), Some(e)) => {
                out.push(c);
                rest = &rest[e.len() + 2..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n";

    #[test]
    fn fences_of_either_kind_come_off() {
        for (open, close) in [("```", "```"), ("```diff", "```"), ("~~~patch", "~~~")] {
            let wrapped = format!("\n{open}\n{DIFF}{close}\n\n");
            let (inner, wrapper) = unwrap(wrapped.as_bytes());
            assert_eq!(wrapper, Some(Wrapper::MarkdownFence), "{open}");
            assert_eq!(String::from_utf8(inner).unwrap(), DIFF);
        }
    }

    #[test]
    fn prose_around_a_fence_goes_with_it() {
        let wrapped = format!("Here is the fix:\n\n```diff\n{DIFF}```\n\nThis fixes it.\n");
        let (inner, wrapper) = unwrap(wrapped.as_bytes());
        assert_eq!(wrapper, Some(Wrapper::MarkdownFence));
        assert_eq!(String::from_utf8(inner).unwrap(), DIFF);
    }

    #[test]
    fn pre_comes_off_and_its_escapes_are_decoded() {
        let escaped = DIFF.replace(
            "+b",
            "+if a &lt; b &amp;&amp; c &gt; d: s = &quot;&#39;&#x41;&quot;",
        );
        for open in [
            "<pre>",
            "<PRE>",
            "<pre class=\"diff\">",
            "<pre><code class=\"language-diff\">",
        ] {
            let close = if open.contains("code") {
                "</code></pre>"
            } else {
                "</pre>"
            };
            let (inner, wrapper) = unwrap(format!("{open}\n{escaped}{close}\n").as_bytes());
            assert_eq!(wrapper, Some(Wrapper::HtmlPre { decoded: true }), "{open}");
            assert_eq!(
                String::from_utf8(inner).unwrap(),
                DIFF.replace("+b", "+if a < b && c > d: s = \"'A\"")
            );
        }
        let (inner, wrapper) = unwrap(format!("<pre>\n{DIFF}</pre>").as_bytes());
        assert_eq!(wrapper, Some(Wrapper::HtmlPre { decoded: false }));
        assert_eq!(inner, DIFF.as_bytes());
    }

    #[test]
    fn anything_else_is_left_as_it_is() {
        let cases = [
            DIFF.to_string(),
            // Added lines that look like a wrapper are the patch's.
            "diff --git a/r.md b/r.md\n--- a/r.md\n+++ b/r.md\n@@ -1 +1,2 @@\n a\n+```\n".into(),
            format!("```\n{DIFF}"),
            format!("```two words\n{DIFF}```\n"),
            // A fence line inside the diff (context of a Markdown file) is the diff's.
            "diff --git a/r.md b/r.md\n--- a/r.md\n+++ b/r.md\n@@ -1,2 +1,2 @@\n ```\n-a\n+b\n ```\n".into(),
            format!("Intro\n<pre>\n{DIFF}</pre>\n"),
            format!("<pretty>\n{DIFF}</pre>\n"),
            format!("{DIFF}&lt;\n"),
            "```".into(),
        ];
        for text in cases {
            assert_eq!(
                unwrap(text.as_bytes()),
                (text.as_bytes().to_vec(), None),
                "{text}"
            );
        }
        // An unknown or unterminated escape stays.
        assert_eq!(decode_entities(b"&nbsp; & &lt"), b"&nbsp; & &lt".to_vec());
    }
}
