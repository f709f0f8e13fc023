//! The requested tests: both lists checked and without repeats.

use crate::util::list::dedup;

/// Requested ids that cannot be graded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// Neither list has an id.
    #[error("no test ids: the task lists no fail-to-pass and no pass-to-pass test")]
    NoIds,
    /// An id in both lists: it cannot both have to start passing and keep passing.
    #[error("test id `{0}` is listed as both fail-to-pass and pass-to-pass")]
    InBothGroups(String),
}

/// Both lists, without repeats; an id in both is a contradiction.
pub fn validate_ids(
    f2p: &[String],
    p2p: &[String],
) -> Result<(Vec<String>, Vec<String>), RequestError> {
    if f2p.is_empty() && p2p.is_empty() {
        return Err(RequestError::NoIds);
    }
    if let Some(id) = f2p.iter().find(|id| p2p.contains(id)) {
        return Err(RequestError::InBothGroups(id.clone()));
    }
    Ok((dedup(f2p.iter().cloned()), dedup(p2p.iter().cloned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_checked_and_deduplicated() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(validate_ids(&[], &[]), Err(RequestError::NoIds));
        assert_eq!(
            validate_ids(&s(&["a"]), &s(&["b", "a"])),
            Err(RequestError::InBothGroups("a".into()))
        );
        assert_eq!(
            validate_ids(&s(&["a", "a"]), &s(&["b"])).unwrap(),
            (s(&["a"]), s(&["b"]))
        );
    }
}
