//! Lists the user wrote (ids, run forms): repeats dropped, order kept.

use std::collections::HashSet;
use std::hash::Hash;

/// The items without repeats, each where it first appeared.
pub fn dedup<T: Eq + Hash + Clone>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen = HashSet::new();
    items
        .into_iter()
        .filter(|i| seen.insert(i.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn first_occurrence_wins() {
        assert_eq!(super::dedup(["b", "a", "b", "c", "a"]), ["b", "a", "c"]);
    }
}
