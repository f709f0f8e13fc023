//! A failure's one-line message when the runner's own says nothing: gotestsum writes `Failed`,
//! PHPUnit the test's name; the assertion is further down the failure text.

/// A better message than `said` from the failure `text`, when `said` carries nothing of the
/// failure: the first line of the text that is not the runner's framing, with Go's
/// `file_test.go:12: ` prefix taken off (the place stays in the details).
pub(crate) fn better(said: &str, text: &str) -> Option<String> {
    if !uninformative(said) {
        return None;
    }
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != said && !framing(l))
        .map(|l| strip_go_place(l).to_string())
        .find(|l| !l.is_empty())
}

/// A word that says only that the test failed, or a test's own name as PHPUnit writes it
/// (`App\Tests\CalcTest::testAdd`, perhaps `with data set "x" (1, 0)`).
fn uninformative(said: &str) -> bool {
    let word = said.trim().trim_end_matches(['.', ':']);
    if matches!(
        word.to_ascii_lowercase().as_str(),
        "" | "failed" | "failure" | "error" | "test failed"
    ) {
        return true;
    }
    match said.split_once("::") {
        Some((class, rest)) => {
            !class.is_empty()
                && !class.contains(char::is_whitespace)
                && rest.split(' ').next().is_some_and(|m| {
                    !m.is_empty() && m.chars().all(|c| c.is_alphanumeric() || c == '_')
                })
                && (rest.split_once(' ').is_none() || rest.contains(" with data set "))
        }
        None => false,
    }
}

/// Lines the runner adds around a failure: Go's `=== RUN` and `--- FAIL`, bats' places
/// (`(in test file test/x.bats, line 9)`, `(from function `f' in file …, line 3,`).
fn framing(line: &str) -> bool {
    [
        "=== RUN",
        "=== PAUSE",
        "=== CONT",
        "=== NAME",
        "--- FAIL",
        "--- PASS",
        "(in test file ",
        "(from function ",
        "in test file ",
    ]
    .iter()
    .any(|p| line.starts_with(p))
}

/// `calc_test.go:7: 1+2 != 3` → `1+2 != 3`.
fn strip_go_place(line: &str) -> &str {
    let Some((place, rest)) = line.split_once(": ") else {
        return line;
    };
    let is_place = place
        .rsplit_once(':')
        .is_some_and(|(file, n)| file.ends_with(".go") && n.chars().all(|c| c.is_ascii_digit()));
    if is_place { rest } else { line }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts are real failures' (`tests/it/presets_e2e.rs`: gotestsum, PHPUnit 9; bats
    /// 1.8, `fixtures/junit/bats`).
    #[test]
    fn the_assertion_replaces_a_message_that_says_nothing() {
        let go = "=== RUN   TestAdd\n    calc_test.go:7: 1+2 != 3\n--- FAIL: TestAdd (0.00s)\n";
        assert_eq!(better("Failed", go).as_deref(), Some("1+2 != 3"));
        let php = "App\\Tests\\CalcTest::testAdd\nFailed asserting that -1 is identical to 3.\n\n\
                   /w/tests/CalcTest.php:11";
        assert_eq!(
            better("App\\Tests\\CalcTest::testAdd", php).as_deref(),
            Some("Failed asserting that -1 is identical to 3.")
        );
        let data_set = "App\\Tests\\CalcTest::testDiv with data set \"by zero\" (1, 0, null)\n\
                        DivisionByZeroError: Division by zero";
        assert_eq!(
            better(
                "App\\Tests\\CalcTest::testDiv with data set \"by zero\" (1, 0, null)",
                data_set
            )
            .as_deref(),
            Some("DivisionByZeroError: Division by zero")
        );
        let bats = "(in test file test/calc.bats, line 11)\n  `[ \"$(add 1 2)\" -eq 4 ]' failed";
        assert_eq!(
            better("", bats).as_deref(),
            Some("`[ \"$(add 1 2)\" -eq 4 ]' failed")
        );
        let helper = "(from function `assert_equal' in file test/helper.bash, line 3,\n \
                      in test file test/calc.bats, line 15)\n  `assert_equal \"$(add 2 2)\" 5' failed";
        assert_eq!(
            better("", helper).as_deref(),
            Some("`assert_equal \"$(add 2 2)\" 5' failed")
        );
    }

    #[test]
    fn a_message_that_says_something_stays() {
        for said in [
            "assert -2 == 2",
            "expected:<3> but was:<-1>",
            "AssertionError: 1 != 2",
            "see tests::x for why",
        ] {
            assert_eq!(better(said, "other\ntext"), None, "{said}");
        }
        // Nothing better in the text: the caller keeps what it has.
        assert_eq!(better("Failed", "=== RUN   TestX\n--- FAIL: TestX"), None);
    }
}
