//! End to end per runner: real git repositories, real pytest, cargo-nextest and node, and
//! `grade` on real reports.

use crate::setup::{CheckArgs, Fixture, graded as test, require_pytest, root, warning};

#[test]
fn truncated_swe_bench_ids_are_widened_to_their_function() {
    require_pytest();
    let f = Fixture::with_files(&[
        ("v.py", "def valid(s):\n    return s.isdigit()\n"),
        (
            "tests/test_v.py",
            "import pytest\nfrom v import valid\n\n\n\
             @pytest.mark.parametrize(\"s\", [\"    42\", \" 7\", \"x\"])\n\
             def test_valid(s):\n    assert valid(s)\n\n\n\
             def test_other():\n    assert True\n",
        ),
    ]);
    let patch = f.diff_of(
        "fix.diff",
        &[("v.py", "def valid(s):\n    return s.strip().isdigit()\n")],
    );
    let before = f.snapshot();
    // SWE-bench cuts `test_valid[    42]` at its first space; pytest aborts on such an id.
    let run = f.run(
        &CheckArgs::new()
            .runner("pytest")
            .patch(&patch)
            .f2p("tests/test_v.py::test_valid[")
            .p2p("tests/test_v.py::test_other")
            .json(),
    );
    let v = run.json();
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    // Both parameters cut at a space pass; `test_valid[x]` (still failing) is another test.
    assert_eq!(v["f2p"]["passing"], 1);
    let widened = warning(&v, "widened-id").expect("widened-id warning");
    assert_eq!(widened["tests"][0], "tests/test_v.py::test_valid[");
    let command = v["runs"]["candidate"]["command"].as_str().unwrap();
    assert!(
        command.contains("tests/test_v.py::test_valid ")
            || command.ends_with("tests/test_v.py::test_valid"),
        "{command}"
    );
    f.assert_untouched(&before);
}

/// A test that fails on its first run in a checkout and passes after: flaky by construction.
const FLAKY_F2P: &str = r#"import os
from m import f


def test_fixed_but_flaky():
    marker = os.path.join(os.path.dirname(__file__), ".ran")
    first = not os.path.exists(marker)
    open(marker, "w").close()
    assert not first, "first attempt fails"
    assert f() == 1


def test_stable():
    assert True
"#;

#[test]
fn retries_turn_a_fail_then_pass_into_flaky() {
    require_pytest();
    let f = Fixture::with_files(&[
        ("m.py", "def f():\n    return 0\n"),
        ("tests/test_m.py", FLAKY_F2P),
    ]);
    let patch = f.diff_of("fix.diff", &[("m.py", "def f():\n    return 1\n")]);
    let args = |retries: &'static str| {
        CheckArgs::new()
            .runner("pytest")
            .patch(&patch)
            .f2p("tests/test_m.py::test_fixed_but_flaky")
            .p2p("tests/test_m.py::test_stable")
            .flag("--retries", retries)
            .json()
    };
    let run = |retries| f.run(&args(retries)).json();
    // Without retries the first failure stands.
    let v = run("0");
    assert_eq!(v["outcome"], "no-op", "{v:#}");
    // With a retry the test fails, then passes: flaky, counted as passing, and warned about.
    let v = run("2");
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    let t = test(&v, "tests/test_m.py::test_fixed_but_flaky");
    assert_eq!(t["status"], "flaky");
    assert!(
        t["message"]
            .as_str()
            .unwrap()
            .contains("then passed on retry 1"),
        "{t:#}"
    );
    assert_eq!(
        t["base_status"], "failed",
        "at base it fails on every attempt"
    );
    assert!(warning(&v, "unstable").is_some(), "{v:#}");
    assert_eq!(v["runs"]["candidate"]["attempts"], 2);
    // At base the test fails on every attempt: the first run and both retries.
    assert_eq!(v["runs"]["baseline"]["attempts"], 3);
}

#[test]
fn a_p2p_test_flaky_at_base_is_broken_at_base() {
    require_pytest();
    let flaky_p2p = r#"import os


def test_flaky():
    marker = os.path.join(os.path.dirname(__file__), ".ran")
    first = not os.path.exists(marker)
    open(marker, "w").close()
    assert not first


def test_target():
    from m import f
    assert f() == 1
"#;
    let f = Fixture::with_files(&[
        ("m.py", "def f():\n    return 0\n"),
        ("tests/test_p.py", flaky_p2p),
    ]);
    let patch = f.diff_of("fix.diff", &[("m.py", "def f():\n    return 1\n")]);
    let v = f
        .run(
            &CheckArgs::new()
                .runner("pytest")
                .patch(&patch)
                .f2p("tests/test_p.py::test_target")
                .p2p("tests/test_p.py::test_flaky")
                .flag("--retries", "1")
                .json(),
        )
        .json();
    let t = test(&v, "tests/test_p.py::test_flaky");
    assert_eq!(
        (&t["base_status"], &t["effect"]),
        (&"flaky".into(), &"broken-at-base".into()),
        "{v:#}"
    );
    assert_eq!(v["outcome"], "resolved");
    assert_eq!(v["p2p"]["excluded"], 1);
}

const CRATE: &str =
    "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n";

fn lib_rs(div_body: &str, add_body: &str) -> String {
    format!(
        "pub fn add(a: i32, b: i32) -> i32 {{\n    {add_body}\n}}\n\n\
         pub fn div(a: i32, b: i32) -> Option<i32> {{\n    {div_body}\n}}\n\n\
         #[cfg(test)]\nmod tests {{\n    use super::*;\n\n    \
         #[test]\n    fn adds() {{\n        assert_eq!(add(1, 2), 3);\n    }}\n\n    \
         #[test]\n    fn divides_by_zero() {{\n        assert_eq!(div(1, 0), None);\n    }}\n}}\n"
    )
}

#[test]
fn nextest_preset_grades_a_rust_crate() {
    let f = Fixture::with_files(&[
        ("Cargo.toml", CRATE),
        (".gitignore", "/target\n"),
        ("src/lib.rs", &lib_rs("Some(a / b)", "a + b")),
    ]);
    let fix = f.diff_of(
        "fix.diff",
        &[(
            "src/lib.rs",
            &lib_rs("if b == 0 { None } else { Some(a / b) }", "a + b"),
        )],
    );
    let regression = f.diff_of(
        "regression.diff",
        &[("src/lib.rs", &lib_rs("Some(a / b)", "a - b"))],
    );
    let before = f.snapshot();
    let args = |patch: &std::path::Path| {
        CheckArgs::new()
            .runner("nextest")
            .patch(patch)
            .f2p("calc tests::divides_by_zero")
            .p2p("calc tests::adds")
            .json()
    };
    let check = |patch: &std::path::Path| f.run(&args(patch));
    let run = check(&fix);
    let v = run.json();
    assert_eq!(
        (v["outcome"].as_str(), run.code),
        (Some("resolved"), 0),
        "{v:#}\n{}",
        run.stderr
    );
    assert_eq!(
        test(&v, "calc tests::divides_by_zero")["base_status"],
        "failed"
    );
    // A target directory the user set for every build: cargo names a path crate's artefacts
    // by its path inside the workspace, so baseline and candidate, built at once into one
    // directory, would run each other's binaries and read each other's reports. Unsandboxed,
    // since bwrap's private /tmp would give each run a directory of its own by accident.
    let shared = f.scratch_file("shared-target", "");
    std::fs::remove_file(&shared).unwrap();
    let run = f.run_with_env(
        &args(&fix),
        &[
            ("CARGO_TARGET_DIR", shared.as_os_str()),
            ("PATCHGRADE_SANDBOX", "none".as_ref()),
        ],
    );
    let v = run.json();
    assert_eq!(v["outcome"], "resolved", "{v:#}\n{}", run.stderr);
    assert_eq!(
        test(&v, "calc tests::divides_by_zero")["base_status"],
        "failed",
        "{v:#}"
    );
    assert!(!shared.exists(), "the shared target directory was not used");
    let run = check(&regression);
    let v = run.json();
    assert_eq!(v["outcome"], "regression", "{v:#}");
    let broken = test(&v, "calc tests::adds");
    assert_eq!(broken["effect"], "broken");
    assert!(
        broken["message"].as_str().is_some(),
        "the panic message is carried: {broken:#}"
    );
    f.assert_untouched(&before);
}

const NODE_TEST: &str = "const { describe, it } = require('node:test');\n\
const assert = require('node:assert');\n\
const { mean } = require('../calc.js');\n\n\
describe('calc', () => {\n\
  it('means of two', () => assert.strictEqual(mean([1, 3]), 2));\n\
  describe('empty input', () => {\n\
    it('throws', () => assert.throws(() => mean([])));\n\
  });\n\
});\n";

#[test]
fn node_preset_matches_describe_paths() {
    if !crate::setup::have_runner("node") {
        return;
    }
    let f = Fixture::with_files(&[
        (
            "calc.js",
            "exports.mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;\n",
        ),
        ("test/calc.test.js", NODE_TEST),
    ]);
    let fix = f.diff_of(
        "fix.diff",
        &[(
            "calc.js",
            "exports.mean = (xs) => {\n  if (xs.length === 0) throw new Error('empty');\n  \
             return xs.reduce((a, b) => a + b, 0) / xs.length;\n};\n",
        )],
    );
    let run = f.run(
        &CheckArgs::new()
            .runner("node")
            .patch(&fix)
            .f2p("test/calc.test.js › calc › empty input › throws")
            .p2p("test/calc.test.js › calc › means of two")
            .p2p("test/calc.test.js › calc › mean of three")
            .json(),
    );
    let v = run.json();
    assert_eq!(
        test(&v, "test/calc.test.js › calc › empty input › throws")["effect"],
        "fixed",
        "{v:#}"
    );
    assert_eq!(
        test(&v, "test/calc.test.js › calc › means of two")["effect"],
        "kept"
    );
    let typo = test(&v, "test/calc.test.js › calc › mean of three");
    assert_eq!(typo["status"], "missing");
    assert_eq!(typo["did_you_mean"][0], "calc › means of two", "{v:#}");
}

fn corpus(path: &str) -> String {
    root()
        .join("fixtures/junit")
        .join(path)
        .display()
        .to_string()
}

#[test]
fn grade_classifies_existing_reports() {
    let f = Fixture::empty();
    let junit = corpus("pytest/junit.xml");
    let base = [
        "--f2p",
        "tests/test_basic.py::test_pass",
        "--p2p",
        "tests/test_basic.py::test_fail_assert",
    ];
    let mut args = vec!["grade", "--junit", junit.as_str(), "--format", "json"];
    args.extend(base);
    let run = f.run(&args);
    // Without a baseline, the failing P2P test is blamed.
    assert_eq!(
        (run.outcome(), run.code),
        ("breaking-resolved".into(), 1),
        "{}",
        run.stderr
    );
    // With the same report as baseline, it was already failing there.
    args.extend(["--base-junit", junit.as_str()]);
    let run = f.run(&args);
    assert_eq!((run.outcome(), run.code), ("resolved".into(), 0));
    let v = run.json();
    assert_eq!(v["runs"]["candidate"]["reports"][0], junit.as_str());
    assert!(v["task"].get("repo").is_none());
    assert_eq!(v["task"]["ids"], "pytest");
}

#[test]
fn grade_reads_a_directory_and_repeated_reports() {
    let f = Fixture::empty();
    let dir = corpus("unittest/xmlrunner-dir");
    let run = f.run(&[
        "grade",
        "--runner",
        "unittest",
        "--junit",
        &dir,
        "--f2p",
        "ut_tests.test_mod.TestX.test_fail",
        "--p2p",
        "ut_tests.test_mod.TestX.test_pass",
        "--format",
        "json",
    ]);
    let v = run.json();
    assert_eq!(v["outcome"], "no-op", "{v:#}");
    assert!(v["runs"]["candidate"]["reports"].as_array().unwrap().len() > 3);
    // Go reruns in one report, nextest retries in another: both read, each test once.
    let run = f.run(&[
        "grade",
        "--ids",
        "go",
        "--junit",
        &corpus("go/junit-rerun.xml"),
        "--f2p",
        "example.com/corpus/flaky.TestFlaky",
        "--format",
        "json",
    ]);
    let v = run.json();
    assert_eq!(
        test(&v, "example.com/corpus/flaky.TestFlaky")["status"],
        "flaky",
        "{v:#}"
    );
    assert!(warning(&v, "unstable").is_some());
}

#[test]
fn grade_rejects_bad_reports_with_one_line() {
    let f = Fixture::empty();
    let missing = f.scratch.join("nope.xml");
    let run = f.run(&[
        "grade",
        "--junit",
        missing.to_str().unwrap(),
        "--f2p",
        "t.py::x",
    ]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("nope.xml"), "{}", run.stderr);
    let html = f.scratch_file("page.xml", "<html><body/></html>");
    let run = f.run(&[
        "grade",
        "--junit",
        html.to_str().unwrap(),
        "--f2p",
        "t.py::x",
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("page.xml") && run.stderr.contains("<html>"),
        "{}",
        run.stderr
    );
    let cut = f.scratch_file(
        "cut.xml",
        "<testsuites><testsuite name=\"a\"><testcase name=\"x\"",
    );
    let run = f.run(&[
        "grade",
        "--junit",
        cut.to_str().unwrap(),
        "--f2p",
        "t.py::x",
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("cut.xml"), "{}", run.stderr);
    // A well-formed report without any test case cannot be judged: outcome error.
    let empty = f.scratch_file(
        "empty.xml",
        "<testsuites><testsuite name=\"a\" tests=\"0\"/></testsuites>",
    );
    let run = f.run(&[
        "grade",
        "--junit",
        empty.to_str().unwrap(),
        "--f2p",
        "t.py::x",
        "--format",
        "json",
    ]);
    assert_eq!((run.outcome(), run.code), ("error".into(), 3));
}
