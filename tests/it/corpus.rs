//! Every native id in the shared corpus (real reports from real runners, copied into
//! `fixtures/junit/<runner>/`) resolves to its testcase with the runner's own status.

use patchgrade::IdSyntax;
use patchgrade::TestStatus;
use patchgrade::internals::{Index, Report};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
struct Entry {
    native_id: String,
    status: String,
    junit_index: Vec<usize>,
    native_file: Option<String>,
    native_titles: Option<Vec<String>>,
    native_package: Option<String>,
    note: Option<String>,
}

fn fixtures(runner: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/junit")
        .join(runner)
}

fn expected(runner: &str) -> BTreeMap<String, Vec<Entry>> {
    let path = fixtures(runner).join("expected.json");
    let text = std::fs::read_to_string(&path).expect("expected.json");
    serde_json::from_str(&text).expect("expected.json parses")
}

/// The runner's verdict as patchgrade's status. Tests that never ran, or were running when the
/// session was interrupted, have no testcase: missing. Where the runner knows more than its
/// JUnit shows (CTest's `--repeat until-pass` writes only the last attempt), the JUnit is what
/// can be observed.
fn want(runner: &str, e: &Entry) -> TestStatus {
    let hidden_by_junit = e
        .note
        .as_deref()
        .is_some_and(|n| n.contains("the JUnit only shows"));
    if e.junit_index.is_empty() {
        // Nothing in the report: a Go package that did not build, a jest file that failed to
        // load (dropped by default), a test that never ran.
        return TestStatus::Missing;
    }
    // jest-junit writes `test.todo` with no <skipped/>: it looks passed.
    if runner == "jest" && e.native_id.ends_with("todo test") {
        return TestStatus::Passed;
    }
    match e.status.as_str() {
        "passed" => TestStatus::Passed,
        "flaky" if hidden_by_junit => TestStatus::Passed,
        "flaky" => TestStatus::Flaky,
        "failed" => TestStatus::Failed,
        "error" => TestStatus::Error,
        "skipped" => TestStatus::Skipped,
        "not_run" | "interrupted" => TestStatus::Missing,
        other => panic!("unexpected corpus status {other}"),
    }
}

/// The id a user writes for an entry: the native id, qualified by its file or package so that
/// tests with the same name in two places stay apart.
fn user_id(runner: &str, e: &Entry) -> String {
    match runner {
        "go" => match &e.native_package {
            Some(p) if *p != e.native_id => format!("{p}.{}", e.native_id),
            _ => e.native_id.clone(),
        },
        "jest" | "vitest" | "mocha" | "node-test" => {
            let titles = match &e.native_titles {
                // node names a file that failed to load by its absolute path.
                Some(t) if t.len() == 1 && t[0].starts_with('/') => Vec::new(),
                Some(t) => t.clone(),
                None => vec![e.native_id.clone()],
            };
            let mut parts: Vec<String> = e.native_file.iter().cloned().collect();
            parts.extend(titles.into_iter().filter(|t| !t.is_empty()));
            parts.join(" › ")
        }
        _ => e.native_id.clone(),
    }
}

fn syntax(runner: &str) -> IdSyntax {
    let name = match runner {
        "node-test" => "node",
        other => other,
    };
    name.parse().expect("a syntax per runner")
}

/// Ids that the report cannot tell apart, by design of the runner's JUnit (see the corpus
/// guide's "Known ambiguities" (docs/guide/src/runners.md)): they must be flagged ambiguous, never silently resolved.
fn known_ambiguous(runner: &str, file: &str, id: &str) -> bool {
    match runner {
        // xunit2 has no file attribute: `pkg/v2` and `pkg.v2` both become `pkg.v2`.
        "pytest" => id.contains("test_collide") && !file.contains("xunit1"),
        // Without the preset's configuration, jest-junit writes no file at all; mocha pools
        // the root-level tests of all files in one suite without a file; node writes no file.
        "jest" => !file.contains("configured"),
        "mocha" | "node-test" => true,
        // ` > ` is legal in a vitest title: `describe("Outer > Inner")` reads like nesting.
        "vitest" => id.contains("Inner › inner pass"),
        // CTest names are unique per directory only, and the JUnit has no directory.
        "ctest" => id == "passes",
        _ => false,
    }
}

fn check_runner(runner: &str) -> usize {
    let syntax = syntax(runner);
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (file, entries) in expected(runner) {
        let path = fixtures(runner).join(&file);
        let report = Report::read(&path).unwrap_or_else(|e| panic!("{e}"));
        let index = Index::new(&report, syntax);
        for e in &entries {
            let id = user_id(runner, e);
            let r = index.resolve(&id);
            let positions: Vec<usize> = index.matches(&id).iter().map(|c| c.index).collect();
            let what = format!("{runner}/{file}: `{id}`");
            if known_ambiguous(runner, &file, &id) && positions.len() > e.junit_index.len() {
                if !r.ambiguous || !e.junit_index.iter().all(|i| positions.contains(i)) {
                    wrong.push(format!("{what}: collision not flagged: {positions:?}"));
                }
                continue;
            }
            // pytest's interrupted test is a nameless testcase, which names nothing.
            let want_positions = if e.status == "interrupted" {
                Vec::new()
            } else {
                e.junit_index.clone()
            };
            if positions != want_positions {
                wrong.push(format!(
                    "{what}: matched {positions:?}, want {want_positions:?}"
                ));
            } else if r.observation.status != want(runner, e) {
                wrong.push(format!(
                    "{what}: {:?}, want {:?}",
                    r.observation.status,
                    want(runner, e)
                ));
            } else if r.ambiguous {
                wrong.push(format!("{what}: flagged ambiguous"));
            } else {
                checked += 1;
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    checked
}

macro_rules! corpus_tests {
    ($($name:ident => $runner:literal, $min:literal;)*) => {$(
        #[test]
        fn $name() {
            let checked = check_runner($runner);
            assert!(checked >= $min, "only {checked} ids checked");
        }
    )*};
}

corpus_tests! {
    pytest_ids => "pytest", 240;
    unittest_ids => "unittest", 40;
    nextest_ids => "nextest", 45;
    go_ids => "go", 90;
    jest_ids => "jest", 50;
    vitest_ids => "vitest", 60;
    mocha_ids => "mocha", 60;
    node_ids => "node-test", 25;
    ctest_ids => "ctest", 38;
    phpunit_ids => "phpunit", 18;
}

#[test]
fn xunit1_file_attribute_separates_the_dotted_collision() {
    let report = Report::read(&fixtures("pytest").join("junit-xunit1.xml")).unwrap();
    let index = Index::new(&report, IdSyntax::Pytest);
    let a = index.resolve("tests/pkg/v2/test_a.py::test_collide");
    let b = index.resolve("tests/pkg.v2/test_a.py::test_collide");
    assert_eq!((a.matches, a.observation.status), (1, TestStatus::Passed));
    assert_eq!((b.matches, b.observation.status), (1, TestStatus::Failed));
}

#[test]
fn xfail_is_skipped_with_its_reason_and_messages_are_kept() {
    let report = Report::read(&fixtures("pytest").join("junit.xml")).unwrap();
    let index = Index::new(&report, IdSyntax::Pytest);
    let r = index.resolve("tests/test_basic.py::test_xfail");
    assert_eq!(r.observation.status, TestStatus::Skipped);
    assert!(
        r.observation
            .message
            .as_deref()
            .unwrap_or("")
            .starts_with("xfail")
    );
    let r = index.resolve("tests/test_basic.py::test_fail_assert");
    assert_eq!(r.observation.status, TestStatus::Failed);
    assert!(r.observation.message.is_some() && r.observation.details.is_some());
}

#[test]
fn tests_of_an_uncollectable_module_are_missing_with_the_collection_error() {
    let report = Report::read(&fixtures("pytest").join("junit-collection-error.xml")).unwrap();
    let errors: Vec<_> = report
        .cases
        .iter()
        .filter(|c| c.classname.is_empty())
        .map(|c| c.name.clone())
        .collect();
    assert!(!errors.is_empty());
    let index = Index::new(&report, IdSyntax::Pytest);
    let module = errors[0].replace('.', "/");
    let r = index.resolve(&format!("{module}.py::test_anything"));
    assert_eq!(r.observation.status, TestStatus::Missing);
    assert!(r.observation.message.unwrap().starts_with("not collected"));
}

#[test]
fn a_report_directory_is_read_whole_and_files_stay_apart() {
    // unittest-xml-reporting writes one file per class, as Surefire and Gradle do.
    let dir = fixtures("unittest").join("xmlrunner-dir");
    let report = Report::read(&dir).unwrap();
    assert!(report.sources.len() > 3);
    let index = Index::new(&report, IdSyntax::Unittest);
    let r = index.resolve("ut_tests.test_mod.TestX.test_fail");
    assert_eq!((r.matches, r.observation.status), (1, TestStatus::Failed));
    let r = index.resolve("ut_tests.sub.test_mod.TestX.test_same_name");
    assert_eq!((r.matches, r.observation.status), (1, TestStatus::Failed));
    // The same report twice is two sources: a test found in both is ambiguous, not merged.
    let file = fixtures("pytest").join("junit.xml");
    let twice = Report::read_all(&[file.clone(), file]).unwrap();
    let index = Index::new(&twice, IdSyntax::Pytest);
    let r = index.resolve("tests/test_basic.py::test_pass");
    assert_eq!(r.matches, 2);
    assert!(r.ambiguous);
}

#[test]
fn a_simple_java_class_name_in_two_packages_is_ambiguous() {
    let report = Report::read(&fixtures("maven").join("surefire-reports")).unwrap();
    let index = Index::new(&report, IdSyntax::Java);
    let r = index.resolve("SameTest#same");
    assert_eq!((r.matches, r.ambiguous), (2, true));
    // The package tells them apart.
    let r = index.resolve("calc.a.SameTest#same");
    assert_eq!(
        (r.matches, r.ambiguous, r.observation.status),
        (1, false, TestStatus::Passed)
    );
}

#[test]
fn nextest_retries_are_read() {
    let report = Report::read(&fixtures("nextest").join("junit-retries.xml")).unwrap();
    let index = Index::new(&report, IdSyntax::Nextest);
    let r = index.resolve("corpus_crate tests::flaky_first_attempt_fails");
    assert_eq!(r.observation.status, TestStatus::Flaky);
    let r = index.resolve("corpus_crate tests::always_fails_even_with_retries");
    assert_eq!(r.observation.status, TestStatus::Failed);
    assert!(
        r.observation
            .message
            .unwrap()
            .starts_with("failed all 3 attempts")
    );
}

/// One row per quirk in the guide's table (docs/guide/src/runners.md): (runner fixture dir, report, syntax, id as a user
/// writes it, expected status, expected number of testcases).
const QUIRKS: &[(&str, &str, &str, &str, TestStatus, usize)] = &[
    // Go rewrites subtest names; users write them as in the source.
    (
        "go",
        "junit.xml",
        "go",
        "example.com/corpus/calc.TestTable/with space",
        TestStatus::Passed,
        1,
    ),
    (
        "go",
        "junit.xml",
        "go",
        "calc.TestTable/",
        TestStatus::Passed,
        1,
    ),
    (
        "go",
        "junit-short-relative.xml",
        "go",
        "example.com/corpus/calc.TestTable/a/b/c",
        TestStatus::Failed,
        1,
    ),
    // gotestsum --rerun-fails: one testcase per attempt.
    (
        "go",
        "junit-rerun.xml",
        "go",
        "example.com/corpus/flaky.TestFlaky",
        TestStatus::Flaky,
        2,
    ),
    // nextest binary ids, and `#[ignore]` tests that the JUnit leaves out.
    (
        "nextest",
        "junit.xml",
        "nextest",
        "corpus_crate::integration group::same_name",
        TestStatus::Passed,
        1,
    ),
    (
        "nextest",
        "junit.xml",
        "nextest",
        "corpus_crate tests::ignored_test",
        TestStatus::Missing,
        0,
    ),
    // jest-junit defaults: full name only, leading space for top-level tests.
    (
        "jest",
        "junit.xml",
        "jest",
        "Outer Inner inner fail",
        TestStatus::Failed,
        1,
    ),
    (
        "jest",
        "junit-configured.xml",
        "jest",
        "__tests__/math.test.js › Outer › Inner › inner fail",
        TestStatus::Failed,
        1,
    ),
    (
        "jest",
        "junit-configured.xml",
        "jest",
        "__tests__/math.test.js › todo test",
        TestStatus::Passed,
        1,
    ),
    (
        "jest",
        "junit-suite-error-reported.xml",
        "jest",
        "broken/syntax.test.js",
        TestStatus::Error,
        2,
    ),
    // vitest's ` > ` and its load failures.
    (
        "vitest",
        "junit.xml",
        "vitest",
        "tests/math.test.js > table > param a > b",
        TestStatus::Passed,
        1,
    ),
    (
        "vitest",
        "junit-suite-error.xml",
        "vitest",
        "broken/syntax.test.js",
        TestStatus::Failed,
        1,
    ),
    // mocha hooks are testcases of their own; jenkinsMode splits titles with `.`.
    (
        "mocha",
        "junit.xml",
        "mocha",
        "hook failure \"before all\" hook for \"test under failing before hook\"",
        TestStatus::Failed,
        1,
    ),
    (
        "mocha",
        "junit-jenkins.xml",
        "mocha",
        "test/math.spec.js › Outer › Inner › inner fail",
        TestStatus::Failed,
        1,
    ),
    // node: titles from nested suites, `"` escaped twice, todo and cancelled tests.
    (
        "node-test",
        "junit.xml",
        "node",
        "test/math.test.js › table › param quote\"s <&>",
        TestStatus::Passed,
        1,
    ),
    (
        "node-test",
        "junit.xml",
        "node",
        "todo test that fails",
        TestStatus::Skipped,
        1,
    ),
    (
        "node-test",
        "junit-file-error.xml",
        "node",
        "broken/syntax.test.js",
        TestStatus::Failed,
        1,
    ),
    // CTest: DISABLED has no <skipped/>; a missing executable is written as skipped.
    (
        "ctest",
        "junit.xml",
        "ctest",
        "disabled_test",
        TestStatus::Skipped,
        1,
    ),
    (
        "ctest",
        "junit.xml",
        "ctest",
        "missing_executable",
        TestStatus::Error,
        1,
    ),
    // PHPUnit: namespaces, data sets, risky tests.
    (
        "phpunit",
        "junit.xml",
        "phpunit",
        "Corpus\\Sub\\CalcTest::testSameName",
        TestStatus::Failed,
        1,
    ),
    (
        "phpunit",
        "junit.xml",
        "phpunit",
        "CalcTest::testSameName",
        TestStatus::Passed,
        1,
    ),
    (
        "phpunit",
        "junit.xml",
        "phpunit",
        "CalcTest::testRiskyNoAssertions",
        TestStatus::Passed,
        1,
    ),
    // unittest: only failing subtests are written; unexpected success is a failure.
    (
        "unittest",
        "junit-xmlrunner.xml",
        "unittest",
        "ut_tests.test_mod.TestX.test_subtests",
        TestStatus::Failed,
        1,
    ),
    (
        "unittest",
        "junit-xmlrunner.xml",
        "unittest",
        "ut_tests.test_mod.TestX.test_unexpected_success",
        TestStatus::Failed,
        1,
    ),
    (
        "unittest",
        "junit-pytest.xml",
        "unittest",
        "ut_tests.test_mod.TestX.test_fail",
        TestStatus::Failed,
        1,
    ),
    // pytest: xfail, teardown error written twice.
    (
        "pytest",
        "junit.xml",
        "pytest",
        "tests/test_basic.py::test_fail_and_teardown_error",
        TestStatus::Failed,
        2,
    ),
    // Surefire (a directory, one file per class): both id forms; an exception is an <error>.
    (
        "maven",
        "surefire-reports",
        "java",
        "calc.CalcTest#failsAssertion",
        TestStatus::Failed,
        1,
    ),
    (
        "maven",
        "surefire-reports",
        "java",
        "calc.CalcTest.throwsError",
        TestStatus::Error,
        1,
    ),
    (
        "maven",
        "surefire-reports",
        "java",
        "calc.CalcTest#ignored",
        TestStatus::Skipped,
        1,
    ),
    (
        "maven",
        "surefire-reports",
        "java",
        "CalcTest#passes",
        TestStatus::Passed,
        1,
    ),
    // JUnit 4 parameters: one set by its name, or the method with all of them.
    (
        "maven",
        "surefire-reports",
        "java",
        "calc.ParamTest#adds[0: 1+1]",
        TestStatus::Passed,
        1,
    ),
    (
        "maven",
        "surefire-reports",
        "java",
        "calc.ParamTest#adds[1: 2+2]",
        TestStatus::Failed,
        1,
    ),
    (
        "maven",
        "surefire-reports",
        "java",
        "calc.ParamTest#adds",
        TestStatus::Failed,
        2,
    ),
    // Nested classes keep `$`; the simple name of the nested class works too.
    (
        "maven",
        "surefire-reports",
        "java",
        "calc.OuterTest$InnerTest#nested",
        TestStatus::Passed,
        1,
    ),
    (
        "maven",
        "surefire-reports",
        "java",
        "InnerTest#nested",
        TestStatus::Passed,
        1,
    ),
    (
        "maven",
        "surefire-reports",
        "java",
        "calc.b.SameTest#same",
        TestStatus::Failed,
        1,
    ),
    // Gradle writes an exception as a <failure>, and runs an Enclosed class's nested class twice.
    (
        "gradle",
        "test-results",
        "java",
        "calc.CalcTest#throwsError",
        TestStatus::Failed,
        1,
    ),
    (
        "gradle",
        "test-results",
        "java",
        "calc.CalcTest#ignored",
        TestStatus::Skipped,
        1,
    ),
    (
        "gradle",
        "test-results",
        "java",
        "calc.OuterTest$InnerTest#nested",
        TestStatus::Passed,
        2,
    ),
    (
        "gradle",
        "test-results",
        "java",
        "calc.ParamTest.adds[1: 2+2]",
        TestStatus::Failed,
        1,
    ),
    // bats names a class by its file's name alone, and a test by its description.
    (
        "bats",
        "junit.xml",
        "classname.name",
        "calc.bats.fails: with a colon",
        TestStatus::Failed,
        1,
    ),
    (
        "bats",
        "junit.xml",
        "classname.name",
        "other.bats.adds two numbers",
        TestStatus::Passed,
        1,
    ),
    (
        "bats",
        "junit.xml",
        "classname.name",
        "calc.bats.skipped for now",
        TestStatus::Skipped,
        1,
    ),
];

#[test]
fn each_documented_quirk_holds() {
    let mut wrong = Vec::new();
    for (dir, file, syntax, id, status, matches) in QUIRKS {
        let report = Report::read(&fixtures(dir).join(file)).unwrap_or_else(|e| panic!("{e}"));
        let syntax: IdSyntax = syntax.parse().unwrap();
        let r = Index::new(&report, syntax).resolve(id);
        if (r.observation.status, r.matches) != (*status, *matches) || r.ambiguous {
            wrong.push(format!(
                "{dir}/{file} `{id}`: {:?} x{} (ambiguous {}), want {status:?} x{matches}",
                r.observation.status, r.matches, r.ambiguous
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `list`'s ids: every test the corpus's runners wrote that an id can name alone gets an
/// exact id in the listing, and that id names the same testcases as the runner's own.
fn check_listing(runner: &str) -> (usize, usize) {
    let syntax = syntax(runner);
    let (mut covered, mut same) = (0, 0);
    let mut wrong = Vec::new();
    for (file, entries) in expected(runner) {
        let report = Report::read(&fixtures(runner).join(&file)).unwrap_or_else(|e| panic!("{e}"));
        let index = Index::new(&report, syntax);
        let listing = index.listing();
        let positions =
            |id: &str| -> Vec<usize> { index.matches(id).iter().map(|c| c.index).collect() };
        for e in &entries {
            let id = user_id(runner, e);
            let r = index.resolve(&id);
            let want = positions(&id);
            // Skipped: tests the report cannot tell apart (flagged ambiguous), and pytest's
            // interrupted test, a nameless testcase that names nothing.
            if r.ambiguous || want.is_empty() || want != e.junit_index {
                continue;
            }
            match listing.iter().find(|l| l.exact && positions(&l.id) == want) {
                Some(l) => {
                    covered += 1;
                    same += usize::from(l.id == id);
                    if l.status != r.observation.status {
                        wrong.push(format!("{runner}/{file}: `{}` listed {:?}", l.id, l.status));
                    }
                }
                None => wrong.push(format!("{runner}/{file}: no exact listed id for `{id}`")),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    (covered, same)
}

#[test]
fn listing_names_every_test_the_runner_names() {
    for runner in [
        "pytest",
        "unittest",
        "nextest",
        "go",
        "jest",
        "vitest",
        "mocha",
        "node-test",
        "ctest",
        "phpunit",
    ] {
        let (covered, same) = check_listing(runner);
        assert!(covered > 10, "{runner}: only {covered} covered");
        eprintln!("{runner}: {covered} tests listed exactly, {same} as the runner's own id");
    }
}
