//! Name tables: an enum whose values have command-line names (`--runner pytest`, `--ids go`,
//! `--accept resolved`) lists them once, in `ALL`, and parsing, printing and the "known: …"
//! list of an error all come from that list, so they cannot disagree.

/// An enum with a fixed table of names.
pub trait Named: Copy + PartialEq + 'static {
    /// Every value with its name, in the order they are listed to users. A value may appear
    /// under several names (aliases); the first is the one it prints as.
    const NAMES: &'static [(&'static str, Self)];

    /// The name it prints as.
    fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, v)| *v == self)
            .map_or("?", |(n, _)| n)
    }

    /// The value with this name.
    fn from_name(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }

    /// Every name, comma-separated, for "known: …" in error messages.
    fn known() -> String {
        let names: Vec<&str> = Self::NAMES.iter().map(|(n, _)| *n).collect();
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Colour {
        Red,
        Blue,
    }

    impl Named for Colour {
        const NAMES: &'static [(&'static str, Colour)] = &[
            ("red", Colour::Red),
            ("blue", Colour::Blue),
            ("navy", Colour::Blue),
        ];
    }

    #[test]
    fn names_parse_print_and_list_from_one_table() {
        assert_eq!(Colour::from_name("navy"), Some(Colour::Blue));
        assert_eq!(Colour::Blue.name(), "blue");
        assert_eq!(Colour::Red.name(), "red");
        assert_eq!(Colour::from_name("green"), None);
        assert_eq!(Colour::known(), "red, blue, navy");
    }
}
