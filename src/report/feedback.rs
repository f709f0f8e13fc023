//! Feedback for a language model: what to fix, most actionable first, in a bounded size.
//!
//! An agent reads this between edits. It gets the outcome in one sentence, then only what it
//! can act on: tests that could not even be collected (usually an import or syntax error the
//! patch introduced), tests the patch broke, target tests still failing, and edits the hidden
//! tests replaced. Each with its assertion or exception line and, when the failure text has
//! one, the location (marked when it is in a file the patch changed). Tests failing with the
//! same message are grouped. Everything else stays in the JSON.

use crate::judge::verdict::{
    Effect, GradedTest, Group, Outcome, OverriddenHunk, TestStatus, Verdict,
};
use crate::util::text::truncate;

/// The default size bound.
pub const DEFAULT_MAX_BYTES: usize = 4096;

/// Ids listed per group of tests that share one message.
const IDS_PER_GROUP: usize = 5;
/// Bytes of a run error's message (the end of the command's output).
const ERROR_BYTES: usize = 1500;

/// The feedback text, at most `max_bytes` long.
pub fn feedback(v: &Verdict, max_bytes: usize) -> String {
    let mut out = Budget::new(max_bytes);
    // The outcome line is there whatever the bound: cut, never dropped.
    out.first_line(&format!("{}.\n", v.summary), v.outcome.name());
    match v.outcome {
        Outcome::Error => {
            if let Some(e) = &v.error {
                let message = truncate(e.message.trim(), ERROR_BYTES);
                out.push(&format!("\n{message}\n"));
            }
        }
        Outcome::PatchFailed => {
            if let Some(f) = &v.patch.apply_failure {
                out.push(&format!(
                    "\n{f}\nRegenerate the diff against the base revision (the file as it is \
                     now, with correct context lines).\n"
                ));
            }
        }
        _ => {
            // What cut the run short comes first: every test it did not run fails by it.
            if let Some(a) = &v.aborted {
                let message = truncate(a.message.trim(), ERROR_BYTES);
                out.push(&format!(
                    "\nThe tests did not all run ({}), though they did without your patch: \
                     {message}\n",
                    a.reason
                ));
            }
            tests(&mut out, v)
        }
    }
    if !v.patch.protected_edits.is_empty() {
        let files = v.patch.protected_edits.join(", ");
        out.push(&if v.patch.protected_edits_reverted {
            format!(
                "\nYour edits to {files} were not graded: they are tests or their configuration, \
                 and were put back before the tests ran. Fix the code, not the tests.\n"
            )
        } else {
            format!(
                "\nYour patch edits {files}, which are tests or their configuration: graders \
                 expect the fix in the code, and may not accept edits there.\n"
            )
        });
    }
    if !v.patch.overridden_files.is_empty() {
        out.push(&format!(
            "\nYour edits to these files were replaced by the hidden tests (edit the code, not \
             the tests): {}\n",
            v.patch.overridden_files.join(", ")
        ));
    }
    if !v.patch.overridden_hunks.is_empty() {
        out.push(&format!(
            "\nThese edits of yours changed lines the hidden tests also change, and were \
             replaced by theirs: {}\n",
            hunk_list(&v.patch.overridden_hunks)
        ));
    }
    out.finish()
}

/// `file @@ -a,b +c,d @@`, comma-separated.
pub(super) fn hunk_list(hunks: &[OverriddenHunk]) -> String {
    let named: Vec<String> = hunks
        .iter()
        .map(|h| format!("{} {}", h.file, h.hunk))
        .collect();
    named.join(", ")
}

fn tests(out: &mut Budget, v: &Verdict) {
    let patched = &v.patch.files;
    let redacted = v.redacted;
    // First what the agent did not know to look at: callers its change broke.
    let downstream: Vec<&GradedTest> = v
        .downstream
        .as_ref()
        .map(|d| d.broken.iter().collect())
        .unwrap_or_default();
    if !downstream.is_empty() {
        out.push(&format!(
            "
Your patch broke {} test(s) outside the task's lists that exercise the code it \
             changes (callers of it, most likely):\n",
            downstream.len()
        ));
        groups(out, &downstream, patched);
    }
    let is_downstream = |t: &GradedTest| downstream.iter().any(|d| d.id == t.id);
    // Missing at base too: the task names a test this runner does not have, so the patch is
    // not to blame and the agent should not go looking for an import error.
    let (absent, uncollected): (Vec<&GradedTest>, Vec<&GradedTest>) = v
        .tests
        .iter()
        .filter(|t| t.status == TestStatus::Missing && t.effect != Effect::BrokenAtBase)
        .filter(|t| !(redacted && t.group == Group::F2p))
        .partition(|t| t.base_status == Some(TestStatus::Missing));
    if !absent.is_empty() {
        let ids: Vec<String> = absent.iter().map(|t| with_suggestions(t)).collect();
        out.push(&format!(
            "\n{} target test(s) are in no report, at base either: the task's id is wrong or the \
             test does not exist; not caused by your patch: {}\n",
            absent.len(),
            ids.join(", ")
        ));
    }
    let broken: Vec<&GradedTest> = v
        .tests
        .iter()
        .filter(|t| t.effect == Effect::Broken && t.status != TestStatus::Missing)
        .filter(|t| !is_downstream(t))
        .collect();
    let not_fixed: Vec<&GradedTest> = v
        .tests
        .iter()
        .filter(|t| t.effect == Effect::NotFixed && t.status != TestStatus::Missing)
        .collect();
    if !uncollected.is_empty() {
        out.push(&format!(
            "\n{} test(s) did not run (not collected: usually an import or syntax error, often \
             from the patch):\n",
            uncollected.len()
        ));
        groups(out, &uncollected, patched);
    }
    if !broken.is_empty() {
        out.push(&format!(
            "\nYour patch broke {} test(s) that passed before it:\n",
            broken.len()
        ));
        groups(out, &broken, patched);
    }
    let f2p_failing = v.f2p.total - v.f2p.passing;
    if redacted && f2p_failing > 0 {
        out.push(&format!(
            "\n{f2p_failing} of {} hidden target test(s) still fail (their names are withheld).\n",
            v.f2p.total
        ));
    } else if !not_fixed.is_empty() {
        out.push(&format!(
            "\nStill failing: {} of {} target test(s):\n",
            not_fixed.len(),
            v.f2p.total
        ));
        groups(out, &not_fixed, patched);
    }
}

/// The id, and the ids the report has that it may have meant. Only for ids in no report at
/// all: a test missing after the patch is usually one its file's import error hid, and what
/// the report does have then (the file) is no better name for it.
fn with_suggestions(t: &GradedTest) -> String {
    if t.did_you_mean.is_empty() {
        t.id.clone()
    } else {
        format!("{} (did you mean {}?)", t.id, t.did_you_mean.join(", "))
    }
}

/// Tests with the same message and location, listed once. When a group's message does not
/// fit the bound any more, its ids still do: the agent learns which tests, if not why.
fn groups(out: &mut Budget, tests: &[&GradedTest], patched: &[String]) {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for t in tests {
        let mut text = String::new();
        if let Some(m) = &t.message {
            text.push_str(&format!("    {m}\n"));
        } else {
            text.push_str(&format!("    {}\n", t.status));
        }
        if let Some((place, in_patch)) = t.details.as_deref().and_then(|d| location(d, patched)) {
            let mark = if in_patch {
                " (a file your patch changed)"
            } else {
                ""
            };
            text.push_str(&format!("    at {place}{mark}\n"));
        }
        match groups.iter_mut().find(|(m, _)| *m == text) {
            Some((_, ids)) => ids.push(&t.id),
            None => groups.push((text, vec![&t.id])),
        }
    }
    for (i, (text, ids)) in groups.iter().enumerate() {
        let mut head = ids
            .iter()
            .take(IDS_PER_GROUP)
            .copied()
            .collect::<Vec<_>>()
            .join(", ");
        if ids.len() > IDS_PER_GROUP {
            head.push_str(&format!(" and {} more", ids.len() - IDS_PER_GROUP));
        }
        if !out.push(&format!("  - {head}\n{text}")) && !out.push(&format!("  - {head}\n")) {
            out.push_note(&format!("  ({} more not shown)\n", groups.len() - i));
            return;
        }
    }
}

/// Where a failure happened: `path:line` from the failure text, preferring a file the patch
/// changed, else the innermost location outside libraries and test frameworks. Understands
/// pytest's `path:12: Error`, Python's `File "path", line 12`, JavaScript's `(path:12:5)`,
/// Java's `at pkg.Class.m(File.java:12)`, Go's `file_test.go:12:`, Rust's `at src/x.rs:12:5`
/// and bats' `(in test file test/x.bats, line 9)`. Python writes the innermost frame last;
/// JavaScript, Java, Go and bats first.
fn location(details: &str, patched: &[String]) -> Option<(String, bool)> {
    // (path, line number, in a library or the test framework)
    let mut found: Vec<(String, String, bool)> = Vec::new();
    let mut python = false;
    for line in details.lines() {
        // pytest prefixes the exception's own lines with `E`.
        let line = line.trim();
        let line = line.strip_prefix("E ").map_or(line, str::trim);
        if line.starts_with("Traceback (most recent call last)") {
            python = true;
        }
        if let Some(rest) = line.strip_prefix("File \"")
            && let Some((path, after)) = rest.split_once("\", line ")
        {
            python = true;
            let number: String = after.chars().take_while(char::is_ascii_digit).collect();
            if !number.is_empty() {
                found.push((path.to_string(), number, library_path(path)));
            }
            continue;
        }
        if let Some((path, number)) = bats_place(line) {
            found.push((path.to_string(), number.to_string(), false));
            continue;
        }
        let java_library = java_framework_frame(line);
        for token in line.split([' ', '(', ')', '\t']) {
            let mut parts = token.split(':');
            let (Some(path), Some(number)) = (parts.next(), parts.next()) else {
                continue;
            };
            let plausible = path.contains('.')
                && !path.contains("://")
                && !number.is_empty()
                && number.chars().all(|c| c.is_ascii_digit());
            if plausible {
                // pytest's `path:12: Error` lines are Python's order too.
                python |= path.ends_with(".py");
                found.push((
                    path.to_string(),
                    number.to_string(),
                    java_library || library_path(path),
                ));
            }
        }
    }
    if !python {
        found.reverse();
    }
    // Innermost last from here on.
    let in_patch = |path: &str| {
        patched
            .iter()
            .find(|p| path == p.as_str() || path.ends_with(&format!("/{p}")))
    };
    let (path, number, _) = found
        .iter()
        .rev()
        .find(|(p, _, _)| in_patch(p).is_some())
        .or_else(|| found.iter().rev().find(|(_, _, library)| !library))
        .or_else(|| found.last())?;
    // Paths inside the temporary checkout mean nothing to the agent: show them relative.
    let shown = match in_patch(path) {
        Some(p) => p.as_str(),
        None => path
            .split_once("/candidate/work/")
            .map_or(path.as_str(), |(_, rel)| rel),
    };
    Some((format!("{shown}:{number}"), in_patch(path).is_some()))
}

/// bats' place of a failure, `(in test file test/x.bats, line 9)` or, for a function it
/// called, `(from function `f' in file test/helper.bash, line 3,`: (path, line number).
fn bats_place(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_start_matches('(');
    let rest = line.strip_prefix("in test file ").or_else(|| {
        line.strip_prefix("from function ")?
            .split_once("' in file ")
            .map(|(_, r)| r)
    })?;
    let (path, after) = rest.split_once(", line ")?;
    let end = after
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(after.len());
    (end > 0).then(|| (path, &after[..end]))
}

/// A file of a library or a runtime, not of the project: installed packages, the Rust and
/// Node runtimes.
fn library_path(path: &str) -> bool {
    path.contains("node_modules/")
        || path.contains("site-packages/")
        || path.contains("/lib/python")
        || path.starts_with("/rustc/")
        || path.starts_with("node:")
        || path.starts_with("internal/")
        || path.contains("/.cargo/registry/")
}

/// A Java stack frame of the JDK or a test framework (`at org.junit.Assert.fail(Assert.java:89)`).
fn java_framework_frame(line: &str) -> bool {
    const FRAMEWORKS: [&str; 10] = [
        "java.",
        "javax.",
        "jdk.",
        "sun.",
        "org.junit.",
        "junit.",
        "org.gradle.",
        "org.apache.maven.",
        "org.hamcrest.",
        "worker.org.gradle.",
    ];
    line.strip_prefix("at ")
        .is_some_and(|frame| FRAMEWORKS.iter().any(|f| frame.starts_with(f)))
}

/// Text with a size bound: a part is added whole or not at all, and a short note always fits.
struct Budget {
    text: String,
    max: usize,
    /// Room kept for the final "not shown" note.
    reserve: usize,
}

impl Budget {
    fn new(max: usize) -> Budget {
        Budget {
            text: String::new(),
            max,
            reserve: 40.min(max / 4),
        }
    }

    /// The first line, whatever the bound: cut to it, but never shorter than `keep` (the
    /// outcome's name), so the agent always learns the outcome.
    fn first_line(&mut self, line: &str, keep: &str) {
        let room = self.max.saturating_sub(self.reserve);
        if line.len() <= room {
            self.text.push_str(line);
        } else {
            // `truncate` adds an ellipsis of 3 bytes; the newline is one more.
            let cut = room.saturating_sub(4).max(keep.len() + 1);
            self.text.push_str(&truncate(line.trim_end(), cut));
            self.text.push('\n');
        }
        // What is pushed after must still fit the bound.
        self.max = self.max.max(self.text.len());
    }

    fn push(&mut self, part: &str) -> bool {
        if self.text.len() + part.len() + self.reserve > self.max {
            return false;
        }
        self.text.push_str(part);
        true
    }

    fn push_note(&mut self, note: &str) {
        if self.text.len() + note.len() <= self.max {
            self.text.push_str(note);
        }
    }

    fn finish(self) -> String {
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_prefer_patched_files() {
        let pytest = "def test_sub():\n>   assert sub(5, 3) == 2\ncalc.py:9: in sub\n    \
                      return b - a\ntests/test_calc.py:11: AssertionError";
        assert_eq!(
            location(pytest, &["calc.py".into()]),
            Some(("calc.py:9".into(), true))
        );
        assert_eq!(
            location(pytest, &["other.py".into()]),
            Some(("tests/test_calc.py:11".into(), false))
        );
        let python = "Traceback:\n  File \"/w/src/pkg/m.py\", line 3, in f\nValueError";
        assert_eq!(
            location(python, &["src/pkg/m.py".into()]),
            Some(("src/pkg/m.py:3".into(), true))
        );
        let js =
            "Error: boom\n    at mean (/w/calc.js:2:31)\n    at Test.run (node:internal/x:1:1)";
        assert_eq!(
            location(js, &["calc.js".into()]),
            Some(("calc.js:2".into(), true))
        );
        let elsewhere = "E   File \"/tmp/patchgrade-x/candidate/work/lib/u.py\", line 4";
        assert_eq!(
            location(elsewhere, &["calc.py".into()]),
            Some(("lib/u.py:4".into(), false))
        );
        assert_eq!(location("no location here: at all", &[]), None);
    }

    /// The traces are the first lines of real failures of each runner (`tests/it/presets_e2e.rs`).
    #[test]
    fn locations_are_the_innermost_frame_outside_frameworks() {
        let jest = "Error: expect(received).toBe(expected) // Object.is equality\n\n\
                    Expected: 2\nReceived: 4\n    at Object.toBe (/w/candidate/work/__tests__/calc.test.js:5:28)\n\
                    at Promise.then.completed (/w/.jsenv/node_modules/jest-circus/build/utils.js:298:28)\n\
                    at runNextTicks (node:internal/process/task_queues:65:5)\n\
                    at /w/.jsenv/node_modules/jest-runner/build/index.js:315:7";
        assert_eq!(
            location(jest, &["calc.js".into()]),
            Some(("__tests__/calc.test.js:5".into(), false))
        );
        let junit = "java.lang.AssertionError: expected:<3> but was:<-1>\n\
                     at org.junit.Assert.fail(Assert.java:89)\n\
                     at org.junit.Assert.assertEquals(Assert.java:647)\n\
                     at calc.CalcTest.adds(CalcTest.java:7)\n\
                     at java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)\n\
                     at org.gradle.api.internal.tasks.testing.SuiteTestClassProcessor.processTestClass(SuiteTestClassProcessor.java:51)";
        assert_eq!(
            location(junit, &["src/main/java/calc/Calc.java".into()]),
            Some(("CalcTest.java:7".into(), false))
        );
        let go = "=== RUN   TestAdd\n    calc_test.go:7: 1+2 != 3\n--- FAIL: TestAdd (0.00s)";
        assert_eq!(location(go, &[]), Some(("calc_test.go:7".into(), false)));
        let rust = "assertion `left == right` failed\n  left: 1\n right: 2\nat src/lib.rs:43:9";
        assert_eq!(location(rust, &[]), Some(("src/lib.rs:43".into(), false)));
        assert_eq!(location("see http://example.com:80/x", &[]), None);
        let bats = "(in test file test/calc.bats, line 11)\n  `[ \"$(add 1 2)\" -eq 4 ]' failed";
        assert_eq!(
            location(bats, &[]),
            Some(("test/calc.bats:11".into(), false))
        );
        let helper = "(from function `assert_equal' in file test/helper.bash, line 3,\n \
                      in test file test/calc.bats, line 15)\n  `assert_equal \"$(add 2 2)\" 5' failed";
        assert_eq!(
            location(helper, &[]),
            Some(("test/helper.bash:3".into(), false))
        );
    }

    #[test]
    fn budget_adds_parts_whole() {
        let mut b = Budget::new(100);
        assert!(b.push(&"a".repeat(50)));
        assert!(
            !b.push(&"b".repeat(30)),
            "would eat into the note's reserve"
        );
        b.push_note("(more)");
        let text = b.finish();
        assert!(text.ends_with("(more)") && text.len() <= 100);
    }
}
