//! Content addresses: git's blob hash of some bytes, as hex, without another dependency.

/// git's blob hash of `bytes`, as 40 hex digits.
pub fn hash(bytes: &[u8]) -> String {
    git2::Oid::hash_object(git2::ObjectType::Blob, bytes)
        .map(|o| o.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn it_is_gits_blob_hash() {
        // `printf 'hello\n' | git hash-object --stdin`
        assert_eq!(
            super::hash(b"hello\n"),
            "ce013625030ba8dba906f756967f9e9ca394464a"
        );
    }
}
