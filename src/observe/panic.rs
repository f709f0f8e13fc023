//! Rust panics as an agent can act on them: the panic's own text (the assertion, its `left:`
//! and `right:` values, the test's message) and the place it names, without the thread line
//! (whose thread id would keep equal failures apart) and without the backtrace, whose frames
//! are std's and the test harness's more often than the code's.

/// A panic read from a failure: its message on one line, and its text with the place last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Panic {
    /// The panic's text, its lines joined with `; `.
    pub(crate) message: String,
    /// The panic's text as written, then `at FILE:LINE:COL`.
    pub(crate) details: String,
}

/// The panic in a failure's message or text, if the failure is a Rust panic: `thread 'x'
/// panicked at src/lib.rs:43:9:` (with a thread id since Rust 1.88, `thread 'x' (1234)`) and
/// the text on the following lines, or before Rust 1.73, `thread 'x' panicked at 'text',
/// src/lib.rs:43:9`.
pub(crate) fn rust_panic(message: &str, text: &str) -> Option<Panic> {
    let source = if text.contains(" panicked at ") {
        text
    } else {
        message
    };
    let mut lines = source.lines().skip_while(|l| !is_panic_line(l));
    let head = lines.next()?;
    let (_, after) = head.split_once(" panicked at ")?;
    let (payload, place) = match after.strip_suffix(':') {
        // Rust 1.73 and later: the place, then the text on its own lines.
        Some(place) if !place.starts_with('\'') => {
            let body: Vec<&str> = lines
                .take_while(|l| !is_trailer(l))
                .map(str::trim_end)
                .filter(|l| !l.trim().is_empty())
                .collect();
            (body, place.to_string())
        }
        // Before 1.73: `'text', place`.
        _ => {
            let (quoted, place) = after.rsplit_once("', ")?;
            let quoted = quoted.strip_prefix('\'')?;
            (vec![quoted], place.trim_end_matches(':').to_string())
        }
    };
    let message = payload
        .iter()
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join("; ");
    let message = if message.is_empty() {
        "panicked".to_string()
    } else {
        message
    };
    let mut details = payload.join("\n");
    if !details.is_empty() {
        details.push('\n');
    }
    details.push_str(&format!("at {place}"));
    Some(Panic { message, details })
}

/// `thread 'name' panicked at …` or `thread 'name' (1234) panicked at …`.
fn is_panic_line(line: &str) -> bool {
    line.starts_with("thread '") && line.contains(" panicked at ")
}

/// Where the panic's text ends: the backtrace note, the backtrace itself, or the test
/// harness's own lines after it.
fn is_trailer(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("note: run with `RUST_BACKTRACE")
        || line.starts_with("stack backtrace:")
        || line.starts_with("note: Some details are omitted")
        || line.starts_with("failures:")
        || is_panic_line(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The head of each case is as nextest 0.9 wrote it in the corpus (Rust 1.92).
    #[test]
    fn the_panics_text_and_place_without_the_thread_line() {
        let text = "thread 'tests::fails_assert' (10224) panicked at src/lib.rs:43:9:\n\
                    assertion `left == right` failed: math is broken\n  left: 2\n right: 3\n\
                    note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace";
        let head = "thread 'tests::fails_assert' (10224) panicked at src/lib.rs:43:9";
        let p = rust_panic(head, text).unwrap();
        assert_eq!(
            p.message,
            "assertion `left == right` failed: math is broken; left: 2; right: 3"
        );
        assert_eq!(
            p.details,
            "assertion `left == right` failed: math is broken\n  left: 2\n right: 3\nat src/lib.rs:43:9"
        );
        // Another thread id, the same failure: the same message, so they group.
        let other = text.replace("(10224)", "(31969)");
        assert_eq!(rust_panic(head, &other).unwrap(), p);
    }

    #[test]
    fn a_backtrace_is_left_out_and_the_place_is_the_panics() {
        let text = "thread 'tests::t' panicked at src/parse.rs:7:5:\n\
                    called `Option::unwrap()` on a `None` value\n\
                    stack backtrace:\n   0: rust_begin_unwind\n             at /rustc/abc/library/std/src/panicking.rs:665:5\n\
                       1: mylib::parse\n             at ./src/parse.rs:7:5\n\
                    note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.";
        let p = rust_panic("", text).unwrap();
        assert_eq!(p.message, "called `Option::unwrap()` on a `None` value");
        assert_eq!(
            p.details,
            "called `Option::unwrap()` on a `None` value\nat src/parse.rs:7:5"
        );
    }

    #[test]
    fn before_rust_1_73_the_text_was_quoted_on_the_same_line() {
        let text = "thread 'tests::t' panicked at 'assertion failed: `(left == right)`', src/lib.rs:3:5\n\
                    note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace";
        let p = rust_panic("", text).unwrap();
        assert_eq!(p.message, "assertion failed: `(left == right)`");
        assert_eq!(
            p.details,
            "assertion failed: `(left == right)`\nat src/lib.rs:3:5"
        );
    }

    #[test]
    fn other_failures_are_not_panics() {
        for (message, text) in [
            (
                "Error: \"test returned Err\"",
                "Error: \"test returned Err\"",
            ),
            (
                "note: test did not panic as expected at src/lib.rs:66:8",
                "note: test did not panic as expected at src/lib.rs:66:8",
            ),
            (
                "assert 1 == 2",
                "def test_x():\n>   assert 1 == 2\nE   assert 1 == 2",
            ),
            ("process aborted with signal 6 (SIGABRT)", ""),
        ] {
            assert_eq!(rust_panic(message, text), None, "{message}");
        }
    }
}
