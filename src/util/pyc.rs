//! Hash-checked Python bytecode (PEP 552): a `.pyc` whose header carries a hash of the source
//! it was compiled from, so that the interpreter uses it only while the source is byte for
//! byte the same. A timestamp `.pyc` is trusted by its source's mtime and size, which a file
//! of the same size and time fools; a sealed one cannot be.
//!
//! The header is 16 bytes: the magic number (2 bytes and `\r\n`), 32 flag bits (bit 0: hash
//! based, bit 1: check the source), then either the source's mtime and size or its 8-byte
//! hash. The hash is CPython's `importlib.util.source_hash`: SipHash keyed with the magic
//! number, SipHash-2-4 up to Python 3.10 and SipHash-1-3 from 3.11.

use std::hash::Hasher;

/// The first magic number with hash-based bytecode (Python 3.7).
const FIRST_HASHED: u16 = 3392;
/// The first magic number whose source hash is SipHash-1-3 (Python 3.11's first alpha).
const FIRST_SIPHASH13: u16 = 3450;
/// Flags of a hash-based `.pyc` whose source is checked on import.
const CHECKED: u32 = 0b11;

/// What a `.pyc`'s header says of its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Header {
    /// Compiled from a source of this mtime (seconds, cut to 32 bits) and size.
    Timestamp {
        /// The source's modification time.
        mtime: u32,
        /// The source's size, cut to 32 bits.
        size: u32,
    },
    /// Compiled from a source with this hash; `checked`: whether the interpreter compares it.
    Hash {
        /// The source's hash.
        hash: [u8; 8],
        /// Whether it is checked on import.
        checked: bool,
    },
}

/// The magic number and header of a `.pyc`; `None` for anything too short or unknown.
pub fn header(pyc: &[u8]) -> Option<(u16, Header)> {
    if pyc.len() < 16 || pyc[2..4] != *b"\r\n" {
        return None;
    }
    let magic = u16::from_le_bytes([pyc[0], pyc[1]]);
    let word = |i: usize| u32::from_le_bytes([pyc[i], pyc[i + 1], pyc[i + 2], pyc[i + 3]]);
    let header = match word(4) {
        0 => Header::Timestamp {
            mtime: word(8),
            size: word(12),
        },
        flags @ (1 | 3) => Header::Hash {
            hash: pyc[8..16].try_into().ok()?,
            checked: flags == CHECKED,
        },
        _ => return None,
    };
    Some((magic, header))
}

/// `importlib.util.source_hash(source)` of the Python that writes bytecode with this magic
/// number; `None` before Python 3.7, which has no hash-based bytecode.
pub fn source_hash(magic: u16, source: &[u8]) -> Option<[u8; 8]> {
    if magic < FIRST_HASHED {
        return None;
    }
    let [a, b] = magic.to_le_bytes();
    let key = u64::from(u32::from_le_bytes([a, b, b'\r', b'\n']));
    let hash = if magic >= FIRST_SIPHASH13 {
        let mut h = siphasher::sip::SipHasher13::new_with_keys(key, 0);
        h.write(source);
        h.finish()
    } else {
        let mut h = siphasher::sip::SipHasher24::new_with_keys(key, 0);
        h.write(source);
        h.finish()
    };
    Some(hash.to_le_bytes())
}

/// The `.pyc` made hash-checked for `source`, when it was compiled from it: a timestamp one
/// whose recorded size and mtime are the source's (`mtime`, seconds), or a hash-checked one
/// already for it. The code object is kept as it is; only the header changes. `None` for
/// bytecode of another source, an unchecked hash, or a Python before 3.7.
pub fn seal(pyc: &[u8], source: &[u8], mtime: u64) -> Option<Vec<u8>> {
    let (magic, header) = header(pyc)?;
    let hash = source_hash(magic, source)?;
    match header {
        // The size and mtime are kept modulo 2**32, as the interpreter writes them.
        Header::Timestamp { mtime: m, size }
            if size == source.len() as u32 && m == mtime as u32 =>
        {
            let mut sealed = pyc.to_vec();
            sealed[4..8].copy_from_slice(&CHECKED.to_le_bytes());
            sealed[8..16].copy_from_slice(&hash);
            Some(sealed)
        }
        Header::Hash {
            hash: h,
            checked: true,
        } if h == hash => Some(pyc.to_vec()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `importlib.util.source_hash(b"x = 1\n")` as each Python computed it (3.9.18, 3.10.13,
    /// 3.11.7, 3.12.1), with its magic number.
    const HASHES: [(u16, &str); 4] = [
        (3425, "f1d665a9e50fdffa"),
        (3439, "d94aade28c8cbebf"),
        (3495, "4c0372aa93f75252"),
        (3531, "1522561917f5df08"),
    ];

    /// Whether this `.pyc` is hash-checked and was compiled from exactly `source`: what the
    /// interpreter will use as it is.
    fn checked_for(pyc: &[u8], source: &[u8]) -> bool {
        match header(pyc) {
            Some((
                magic,
                Header::Hash {
                    hash,
                    checked: true,
                },
            )) => source_hash(magic, source) == Some(hash),
            _ => false,
        }
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn pyc(magic: u16, flags: u32, a: [u8; 4], b: [u8; 4]) -> Vec<u8> {
        let mut v = magic.to_le_bytes().to_vec();
        v.extend(b"\r\n");
        v.extend(flags.to_le_bytes());
        v.extend(a);
        v.extend(b);
        v.extend(b"code");
        v
    }

    #[test]
    fn source_hashes_are_cpythons() {
        for (magic, want) in HASHES {
            let got = source_hash(magic, b"x = 1\n").map(|h| hex(&h));
            assert_eq!(got.as_deref(), Some(want), "magic {magic}");
        }
        // Python 3.6 has no hash-based bytecode.
        assert_eq!(source_hash(3379, b"x = 1\n"), None);
    }

    #[test]
    fn a_timestamp_pyc_is_sealed_only_for_its_own_source() {
        let source = b"x = 1\n";
        let mtime: u64 = 946_684_800;
        let stamp = pyc(
            3495,
            0,
            (mtime as u32).to_le_bytes(),
            (source.len() as u32).to_le_bytes(),
        );
        let sealed = seal(&stamp, source, mtime).expect("sealed");
        assert_eq!(&sealed[16..], b"code");
        assert!(checked_for(&sealed, source));
        // The same size and time, another content: the trick a timestamp falls for.
        assert!(!checked_for(&sealed, b"x = 2\n"));
        // Bytecode of another version of the file is not sealed.
        assert_eq!(seal(&stamp, b"x = 10\n", mtime), None);
        assert_eq!(seal(&stamp, source, mtime + 1), None);
        // Sealed already: kept; for another source: not.
        assert_eq!(seal(&sealed, source, 0), Some(sealed.clone()));
        assert_eq!(seal(&sealed, b"x = 2\n", 0), None);
        // Unchecked hashes are never trusted, nor are headers of unknown flags.
        let unchecked = pyc(3495, 1, [0; 4], [0; 4]);
        assert_eq!(seal(&unchecked, source, 0), None);
        assert!(!checked_for(&unchecked, source));
        assert_eq!(header(&pyc(3495, 4, [0; 4], [0; 4])), None);
        assert_eq!(header(b"short"), None);
        assert!(!checked_for(&stamp, source));
    }
}
