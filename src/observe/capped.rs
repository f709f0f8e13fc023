//! A reader that cuts every long run of character data in an XML stream (text, attribute
//! values, CDATA, comments) to its first [`RUN_LIMIT`] bytes, so that a `<system-out>` of
//! hundreds of MB costs the XML reader a bounded buffer, not its size: the parser keeps only
//! the start of any text anyway.
//!
//! Markup is never cut: a run ends where its terminator starts (`<`, the closing quote, `]]>`,
//! `-->`), and a cut falls after a whole character and a whole entity reference, so a report
//! that parsed before still parses, with the same elements and attributes.

use std::io::Read;

/// Bytes of one run of character data kept; the rest of the run is dropped.
pub const RUN_LIMIT: usize = 1 << 20;
/// How far past the limit a cut may move to finish a character or an entity reference.
const SLACK: usize = 64;

/// Where the scanner is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Character data between elements.
    Text,
    /// Just after `<`: `prefix` bytes of a possible `!--`, `![CDATA[` or `?`.
    Open { prefix: usize },
    /// Inside a tag; in a quoted value when `quote` is set.
    Tag { quote: Option<u8> },
    /// A comment, CDATA section or processing instruction, until `end`; `matched` bytes of
    /// `end` seen.
    Special { end: &'static [u8], matched: usize },
}

const SPECIALS: [(&[u8], &[u8]); 3] = [(b"!--", b"-->"), (b"![CDATA[", b"]]>"), (b"?", b"?>")];

/// See the module's doc.
pub struct Capped<R> {
    inner: R,
    state: State,
    /// Bytes of the current run so far.
    run: usize,
    /// The run is past its cut: its bytes are dropped.
    dropping: bool,
    /// Inside an entity reference (`&…;`), which a cut must not split.
    entity: bool,
    /// Processed bytes not yet handed out.
    out: Vec<u8>,
    at: usize,
    chunk: Vec<u8>,
}

impl<R: Read> Capped<R> {
    /// Wrap a reader.
    pub fn new(inner: R) -> Capped<R> {
        Capped {
            inner,
            state: State::Text,
            run: 0,
            dropping: false,
            entity: false,
            out: Vec::new(),
            at: 0,
            chunk: vec![0; 64 * 1024],
        }
    }

    fn start_run(&mut self) {
        self.run = 0;
        self.dropping = false;
        self.entity = false;
    }

    /// A byte of character data: kept up to the limit, and past it only to finish a
    /// character or an entity reference.
    fn data(&mut self, b: u8) {
        self.run += 1;
        let finishing = self.entity || (b & 0xC0) == 0x80;
        let keep = !self.dropping
            && (self.run <= RUN_LIMIT || (finishing && self.run <= RUN_LIMIT + SLACK));
        if !keep {
            self.dropping = true;
            return;
        }
        match b {
            b'&' => self.entity = true,
            b';' => self.entity = false,
            _ => {}
        }
        self.out.push(b);
    }

    /// The fast path: in text or a quoted value, the bytes before the run's terminator that
    /// are far from the limit (or all dropped) go at once; returns how many. The rest goes
    /// byte by byte through [`Capped::step`].
    fn bulk(&mut self, bytes: &[u8]) -> usize {
        let end = match self.state {
            State::Text => b'<',
            State::Tag { quote: Some(q) } => q,
            _ => return 0,
        };
        let until = bytes.iter().position(|&b| b == end).unwrap_or(bytes.len());
        if self.dropping {
            self.run += until;
            return until;
        }
        let take = until.min(RUN_LIMIT.saturating_sub(self.run));
        let seg = &bytes[..take];
        // Only the last `&` or `;` says whether the run ends inside an entity reference.
        if let Some(at) = seg.iter().rposition(|&b| b == b'&' || b == b';') {
            self.entity = seg[at] == b'&';
        }
        self.out.extend_from_slice(seg);
        self.run += take;
        take
    }

    fn step(&mut self, b: u8) {
        match self.state {
            State::Text => {
                if b == b'<' {
                    self.out.push(b);
                    self.state = State::Open { prefix: 0 };
                } else {
                    self.data(b);
                }
            }
            State::Open { prefix } => {
                let n = prefix + 1;
                let candidates = SPECIALS
                    .iter()
                    .filter(|(open, _)| open.len() >= n && open[prefix] == b);
                let mut matched = false;
                for (open, end) in candidates {
                    matched = true;
                    if open.len() == n {
                        self.out.push(b);
                        self.state = State::Special { end, matched: 0 };
                        self.start_run();
                        return;
                    }
                }
                if matched {
                    self.out.push(b);
                    self.state = State::Open { prefix: n };
                } else {
                    self.state = State::Tag { quote: None };
                    self.step(b);
                }
            }
            State::Tag { quote: None } => {
                self.out.push(b);
                match b {
                    b'"' | b'\'' => {
                        self.state = State::Tag { quote: Some(b) };
                        self.start_run();
                    }
                    b'>' => {
                        self.state = State::Text;
                        self.start_run();
                    }
                    _ => {}
                }
            }
            State::Tag { quote: Some(q) } => {
                if b == q {
                    self.out.push(b);
                    self.state = State::Tag { quote: None };
                } else {
                    self.data(b);
                }
            }
            State::Special { end, matched } => {
                let matched = if b == end[matched] {
                    matched + 1
                } else if b == end[0] {
                    // `--->` and `]]]>`: the repeated first byte still starts the end.
                    if matched == 2 && end[1] == end[0] {
                        2
                    } else {
                        1
                    }
                } else {
                    0
                };
                if matched == end.len() {
                    if self.dropping {
                        // Its first bytes were dropped with the run: the end goes out whole.
                        self.out.extend_from_slice(end);
                    } else {
                        self.out.push(b);
                    }
                    self.state = State::Text;
                    self.start_run();
                } else {
                    self.state = State::Special { end, matched };
                    self.data(b);
                }
            }
        }
    }
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.out.len() {
            self.out.clear();
            self.at = 0;
            let n = self.inner.read(&mut self.chunk)?;
            if n == 0 {
                return Ok(0);
            }
            // Taken out so that `step` can borrow `self` mutably.
            let chunk = std::mem::take(&mut self.chunk);
            let mut i = 0;
            while i < n {
                i += self.bulk(&chunk[i..n]);
                if i < n {
                    self.step(chunk[i]);
                    i += 1;
                }
            }
            self.chunk = chunk;
        }
        let n = buf.len().min(self.out.len() - self.at);
        buf[..n].copy_from_slice(&self.out[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capped(input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        // One byte at a time from the inner reader: state crosses every boundary.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let Some((&b, rest)) = self.0.split_first() else {
                    return Ok(0);
                };
                if buf.is_empty() {
                    return Ok(0);
                }
                buf[0] = b;
                self.0 = rest;
                Ok(1)
            }
        }
        Capped::new(Trickle(input)).read_to_end(&mut out).unwrap();
        // And in whole chunks, through the fast path: the same bytes.
        let mut whole = Vec::new();
        Capped::new(input).read_to_end(&mut whole).unwrap();
        assert!(whole == out, "the fast path and the byte path disagree");
        out
    }

    /// Every real report of the fixtures, each run shorter than the limit, comes out as it went
    /// in.
    #[test]
    fn real_reports_pass_through_byte_for_byte() {
        fn walk(dir: &std::path::Path, n: &mut usize) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, n);
                } else if path.extension().is_some_and(|e| e == "xml") {
                    let bytes = std::fs::read(&path).unwrap();
                    let mut out = Vec::new();
                    Capped::new(&bytes[..]).read_to_end(&mut out).unwrap();
                    assert!(out == bytes, "{}", path.display());
                    *n += 1;
                }
            }
        }
        let mut n = 0;
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
            &mut n,
        );
        assert!(n > 20, "{n} reports");
    }

    #[test]
    fn short_runs_pass_through_byte_for_byte() {
        let xml = b"<?xml version=\"1.0\"?><!-- a > b --><testsuite name='s &amp; t'>\
            <testcase name=\"a>b\"><failure message=\"x\"><![CDATA[ <not a tag> ]]]></failure>\
            <system-out>\xc3\xa9 &lt;out&gt;</system-out></testcase></testsuite>";
        assert_eq!(capped(xml), xml);
    }

    #[test]
    fn a_long_text_keeps_its_start_and_all_markup() {
        let mut xml = b"<a><system-out>".to_vec();
        xml.extend(std::iter::repeat_n(b'x', RUN_LIMIT * 3));
        xml.extend(b"</system-out><b c=\"d\"/></a>");
        let out = capped(&xml);
        assert_eq!(
            out.len(),
            b"<a><system-out></system-out><b c=\"d\"/></a>".len() + RUN_LIMIT
        );
        assert!(out.ends_with(b"</system-out><b c=\"d\"/></a>"));
    }

    #[test]
    fn a_cut_finishes_its_entity_and_its_character() {
        // The limit falls inside `&amp;`, then inside a two-byte character.
        for (pad, tail) in [
            (RUN_LIMIT - 2, &b"&amp;zzzz"[..]),
            (RUN_LIMIT - 1, "\u{e9}zz".as_bytes()),
        ] {
            let mut xml = b"<a>".to_vec();
            xml.extend(std::iter::repeat_n(b'x', pad));
            xml.extend(tail);
            xml.extend(std::iter::repeat_n(b'y', 100));
            xml.extend(b"</a>");
            let out = capped(&xml);
            let text = &out[3..out.len() - 4];
            let whole = if tail[0] == b'&' { 5 } else { 2 };
            assert_eq!(text.len(), pad + whole, "{:?}", &text[pad..]);
            assert!(std::str::from_utf8(text).is_ok());
        }
    }

    #[test]
    fn long_cdata_comments_and_attribute_values_are_cut_inside_their_delimiters() {
        let big = "x".repeat(RUN_LIMIT + 10);
        let xml = format!("<a m=\"{big}\"><![CDATA[{big}]]]><!--{big}--->t</a>");
        let out = String::from_utf8(capped(xml.as_bytes())).unwrap();
        let kept = "x".repeat(RUN_LIMIT);
        assert_eq!(
            out,
            format!("<a m=\"{kept}\"><![CDATA[{kept}]]><!--{kept}-->t</a>")
        );
    }
}
