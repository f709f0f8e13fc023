//! Rust source as the few tokens the dependents search reads: identifiers, `::`, brackets and
//! a little punctuation; comments, strings, characters, lifetimes and numbers are dropped, so
//! a path written inside one of them is not taken for code.

/// One token of Rust source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok<'a> {
    /// An identifier or keyword (`r#` taken off a raw one).
    Ident(&'a str),
    /// `::`
    Sep,
    /// `(`, `[` or `{`.
    Open(char),
    /// `)`, `]` or `}`.
    Close(char),
    /// `;`
    Semi,
    /// `,`
    Comma,
    /// `#`
    Hash,
    /// `!`
    Bang,
    /// `$`
    Dollar,
    /// `*`
    Star,
    /// Any other punctuation.
    Other,
}

/// The tokens of `src`. Malformed source (an unclosed string or comment) ends the tokens
/// where it starts; nothing here fails.
pub(super) fn tokens(src: &str) -> Vec<Tok<'_>> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            _ if c.is_ascii_whitespace() => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = find(b, i, b"\n").unwrap_or(b.len());
            }
            b'/' if b.get(i + 1) == Some(&b'*') => i = block_comment_end(b, i),
            b'"' => i = string_end(b, i + 1),
            b'\'' => i = quote_end(src, i),
            b'0'..=b'9' => i = number_end(b, i),
            _ if is_ident_start(src, i) => {
                // A raw string (`r"…"`, `br#"…"#`, `cr"…"`), a byte or C string (`b"…"`), a
                // byte (`b'x'`), or a raw identifier (`r#match`) start like identifiers.
                let rest = &b[i..];
                let prefix = if rest.starts_with(b"br") || rest.starts_with(b"cr") {
                    2
                } else if rest.starts_with(b"r") {
                    1
                } else {
                    0
                };
                let hashes = b[i + prefix..].iter().take_while(|c| **c == b'#').count();
                if prefix > 0 && b.get(i + prefix + hashes) == Some(&b'"') {
                    i = raw_string_end(b, i + prefix + hashes + 1, hashes);
                    continue;
                }
                if matches!(c, b'b' | b'c') && b.get(i + 1) == Some(&b'"') {
                    i = string_end(b, i + 2);
                    continue;
                }
                if c == b'b' && b.get(i + 1) == Some(&b'\'') {
                    i = quote_end(src, i + 1);
                    continue;
                }
                let start = if prefix == 1 && hashes == 1 && is_ident_start(src, i + 2) {
                    i + 2
                } else {
                    i
                };
                let end = ident_end(src, start);
                out.push(Tok::Ident(&src[start..end]));
                i = end;
            }
            b':' if b.get(i + 1) == Some(&b':') => {
                out.push(Tok::Sep);
                i += 2;
            }
            _ => {
                out.push(match c {
                    b'(' | b'[' | b'{' => Tok::Open(c as char),
                    b')' | b']' | b'}' => Tok::Close(c as char),
                    b';' => Tok::Semi,
                    b',' => Tok::Comma,
                    b'#' => Tok::Hash,
                    b'!' => Tok::Bang,
                    b'$' => Tok::Dollar,
                    b'*' => Tok::Star,
                    _ => Tok::Other,
                });
                // A multi-byte character is skipped whole.
                i += src[i..].chars().next().map_or(1, char::len_utf8);
            }
        }
    }
    out
}

fn find(b: &[u8], from: usize, what: &[u8]) -> Option<usize> {
    b[from..]
        .windows(what.len())
        .position(|w| w == what)
        .map(|p| from + p)
}

fn is_ident_start(src: &str, i: usize) -> bool {
    src.get(i..)
        .and_then(|s| s.chars().next())
        .is_some_and(|c| c == '_' || c.is_alphabetic())
}

fn ident_end(src: &str, i: usize) -> usize {
    src[i..]
        .char_indices()
        .find(|(_, c)| !(*c == '_' || c.is_alphanumeric()))
        .map_or(src.len(), |(at, _)| i + at)
}

/// After a block comment starting at `i`; they nest.
fn block_comment_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0;
    while i < b.len() {
        if b[i..].starts_with(b"/*") {
            depth += 1;
            i += 2;
        } else if b[i..].starts_with(b"*/") {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// After the closing quote of a string whose contents start at `i`.
fn string_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// After a raw string whose contents start at `i`, closed by `"` and `hashes` `#`s.
fn raw_string_end(b: &[u8], i: usize, hashes: usize) -> usize {
    let mut close = vec![b'"'];
    close.extend(std::iter::repeat_n(b'#', hashes));
    find(b, i, &close).map_or(b.len(), |at| at + close.len())
}

/// After a character literal (`'x'`, `'\n'`, `'é'`) or a lifetime (`'a`) starting at `i`.
fn quote_end(src: &str, i: usize) -> usize {
    let b = src.as_bytes();
    if b.get(i + 1) == Some(&b'\\') {
        // An escape: up to the closing quote (`'\u{1F600}'` is the longest).
        return find(b, i + 2, b"'").map_or(b.len(), |at| at + 1);
    }
    // One character, then a quote: a character literal; otherwise a lifetime or label.
    let Some(c) = src.get(i + 1..).and_then(|s| s.chars().next()) else {
        return b.len();
    };
    let after = i + 1 + c.len_utf8();
    if b.get(after) == Some(&b'\'') {
        return after + 1;
    }
    if is_ident_start(src, i + 1) {
        ident_end(src, i + 1)
    } else {
        i + 1
    }
}

/// After a number (`1`, `0x1F`, `1.5e3`, `2u8`); `1..2` is two numbers.
fn number_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        let c = b[i];
        let fraction = c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        if c == b'_' || c.is_ascii_alphanumeric() || fraction {
            i += 1;
        } else {
            break;
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::Tok::*;
    use super::*;

    fn idents(src: &str) -> Vec<&str> {
        tokens(src)
            .into_iter()
            .filter_map(|t| match t {
                Ident(i) => Some(i),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn paths_and_brackets_are_tokens() {
        assert_eq!(
            tokens("use crate::{a, b::*};"),
            [
                Ident("use"),
                Ident("crate"),
                Sep,
                Open('{'),
                Ident("a"),
                Comma,
                Ident("b"),
                Sep,
                Star,
                Close('}'),
                Semi
            ]
        );
        assert_eq!(
            tokens("#![cfg(test)] $crate::x"),
            [
                Hash,
                Bang,
                Open('['),
                Ident("cfg"),
                Open('('),
                Ident("test"),
                Close(')'),
                Close(']'),
                Dollar,
                Ident("crate"),
                Sep,
                Ident("x")
            ]
        );
    }

    #[test]
    fn comments_strings_chars_and_lifetimes_hide_nothing_else() {
        let src = r####"
            // crate::line
            /* crate::block /* nested */ still */
            let s = "crate::string \" escaped";
            let r = r#"crate::raw "quoted""#;
            let b = b"crate::bytes"; let c = b'\''; let d = '"'; let e = 'é';
            fn f<'a>(x: &'a str) -> &'a str { 'outer: loop { break 'outer; } x }
            let n = 1..2; let m = 0x1Fu8; let k = 1.5e3;
            let r#match = after;
        "####;
        assert_eq!(
            idents(src),
            [
                "let", "s", "let", "r", "let", "b", "let", "c", "let", "d", "let", "e", "fn", "f",
                "x", "str", "str", "loop", "break", "x", "let", "n", "let", "m", "let", "k", "let",
                "match", "after"
            ]
        );
    }

    #[test]
    fn unclosed_literals_end_the_tokens() {
        assert_eq!(idents("a \"unclosed"), ["a"]);
        assert_eq!(idents("a /* unclosed"), ["a"]);
        assert_eq!(idents("a r#\"unclosed"), ["a"]);
        assert_eq!(idents("a '\\"), ["a"]);
        assert_eq!(idents("x '"), ["x"]);
    }
}
