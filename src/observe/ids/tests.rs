use super::*;

fn case(classname: &str, name: &str, status: TestStatus, msg: Option<&str>) -> Case {
    Case {
        classname: classname.into(),
        name: name.into(),
        file: None,
        class: None,
        suite: 0,
        source: 0,
        index: 0,
        observation: Observation {
            status,
            message: msg.map(str::to_string),
            details: None,
        },
        xfail: false,
        description: None,
    }
}

/// sympy's log prints each file's result on the line of its last test, where SWE-bench's
/// parser cannot read it: that test is absent there, whatever it did.
#[test]
fn swebench_cannot_read_the_last_sympy_test_of_each_file() {
    let in_file = |name: &str, file: &str, status| Case {
        file: Some(file.into()),
        ..case("m", name, status, None)
    };
    let r = report(vec![
        in_file("test_a", "t/test_one.py", TestStatus::Passed),
        in_file("test_b", "t/test_one.py", TestStatus::Passed),
        in_file("test_c", "t/test_two.py", TestStatus::Passed),
    ]);
    let index = Index::new(&r, IdSyntax::Sympy);
    let view = |id: &str| index.resolve(id).swebench;
    assert_eq!(view("test_a"), SwebenchView::Pass);
    assert_eq!(view("test_b"), SwebenchView::Fail);
    assert_eq!(view("test_c"), SwebenchView::Fail);
    assert_eq!(
        index.resolve("test_b").observation.status,
        TestStatus::Passed
    );
    // Other runners' logs say every test.
    let index = Index::new(&r, IdSyntax::ClassnameName);
    assert_eq!(index.resolve("m.test_b").swebench, SwebenchView::Pass);
}

/// Django's ids in both of Python's forms, and by docstring, name one test.
#[test]
fn django_ids_name_a_test_by_either_form_or_its_docstring() {
    let documented = Case {
        description: Some("Allow html in output".into()),
        ..case("app.tests.T", "test_html", TestStatus::Passed, None)
    };
    let r = report(vec![
        case("app.tests.T", "test_a", TestStatus::Failed, Some("no")),
        documented,
        case("other.tests.T", "test_a", TestStatus::Passed, None),
    ]);
    let index = Index::new(&r, IdSyntax::Django);
    let status = |id: &str| index.resolve(id).observation.status;
    assert_eq!(status("test_a (app.tests.T)"), TestStatus::Failed);
    assert_eq!(status("test_a (app.tests.T.test_a)"), TestStatus::Failed);
    assert_eq!(status("test_a (other.tests.T)"), TestStatus::Passed);
    assert_eq!(status("Allow html in output"), TestStatus::Passed);
    assert_eq!(status("test_html (app.tests.T)"), TestStatus::Passed);
    assert_eq!(status("test_a (app.tests.U)"), TestStatus::Missing);
    assert_eq!(status("Allow html"), TestStatus::Missing);
    // Listed as SWE-bench's datasets hold them.
    let listed: Vec<String> = index.listing().into_iter().map(|l| l.id).collect();
    assert_eq!(
        listed,
        [
            "test_a (app.tests.T)",
            "Allow html in output",
            "test_a (other.tests.T)"
        ]
    );
}

fn report(mut cases: Vec<Case>) -> Report {
    for (i, c) in cases.iter_mut().enumerate() {
        c.index = i;
    }
    Report {
        cases,
        suites: vec![Default::default()],
        sources: vec![Default::default()],
    }
}

fn key(syntax: IdSyntax, id: &str) -> (String, Scope) {
    let q = syntax.parse(id);
    (q.key, q.scope)
}

fn pytest_target(id: &str) -> (String, String) {
    match IdSyntax::Pytest.parse(id) {
        Query {
            key,
            scope: Scope::Classname { classname, .. },
            ..
        } => (classname, key),
        other => panic!("{other:?}"),
    }
}

#[test]
fn pytest_ids_map_like_pytest_does() {
    let t = pytest_target;
    assert_eq!(
        t("tests/test_a.py::test_x"),
        ("tests.test_a".into(), "test_x".into())
    );
    assert_eq!(
        t("tests/test_classes.py::TestOuter::TestInner::test_inner_param[1]"),
        (
            "tests.test_classes.TestOuter.TestInner".into(),
            "test_inner_param[1]".into()
        )
    );
    // Brackets, slashes and `::` inside the parameter part stay verbatim.
    assert_eq!(
        t("t/test_p.py::test_ids[id/with/slash[and]brackets]"),
        (
            "t.test_p".into(),
            "test_ids[id/with/slash[and]brackets]".into()
        )
    );
    assert_eq!(
        t("t/test_p.py::test_p[a::b]"),
        ("t.test_p".into(), "test_p[a::b]".into())
    );
    assert_eq!(
        t("t/test_p.py::test_p[]"),
        ("t.test_p".into(), "test_p[]".into())
    );
    // Doctests and collection errors.
    assert_eq!(
        t("tests/helpers.py::tests.helpers.double"),
        ("tests.helpers".into(), "tests.helpers.double".into())
    );
    assert_eq!(
        t("broken/test_syntax_error.py"),
        ("".into(), "broken.test_syntax_error".into())
    );
    // Only a trailing `.py` is dropped.
    assert_eq!(
        t("a.py.d/test_b.py::t"),
        ("a.py.d.test_b".into(), "t".into())
    );
}

#[test]
fn truncated_pytest_ids_are_widened_to_their_function() {
    let q = IdSyntax::Pytest.parse("tests/test_v.py::TestX::test_valid[");
    assert!(q.widened);
    assert_eq!(
        IdSyntax::Pytest.run_form("tests/test_v.py::TestX::test_valid["),
        "tests/test_v.py::TestX::test_valid"
    );
    assert_eq!(
        IdSyntax::Pytest.run_form("t.py::test_x[a b]"),
        "t.py::test_x[a b]"
    );
    // Nothing before the `[` to widen to (ids of pytest-dev__pytest-5227): as it is.
    for junk in ["[", "[100%]------------------------------", "t.py::["] {
        assert_eq!(IdSyntax::Pytest.run_form(junk), junk);
    }
    assert!(!IdSyntax::Pytest.parse("t.py::test_x[a]").widened);
    let r = report(vec![
        case(
            "tests.test_v.TestX",
            "test_valid[    42]",
            TestStatus::Passed,
            None,
        ),
        case(
            "tests.test_v.TestX",
            "test_valid[ x y]",
            TestStatus::Failed,
            Some("no"),
        ),
        case(
            "tests.test_v.TestX",
            "test_valid[1]",
            TestStatus::Failed,
            Some("other test"),
        ),
        case(
            "tests.test_w.TestX",
            "test_valid[ 9]",
            TestStatus::Failed,
            Some("other file"),
        ),
    ]);
    let index = Index::new(&r, IdSyntax::Pytest);
    let res = index.resolve("tests/test_v.py::TestX::test_valid[");
    assert!(res.widened && !res.ambiguous);
    assert_eq!(res.matches, 2);
    assert_eq!(res.observation.message.as_deref(), Some("no"));
}

#[test]
fn first_non_passing_element_decides() {
    let r = report(vec![
        case("m", "t", TestStatus::Failed, Some("boom")),
        case(
            "m",
            "t",
            TestStatus::Error,
            Some("failed on teardown with x"),
        ),
    ]);
    let res = Index::new(&r, IdSyntax::Pytest).resolve("m.py::t");
    assert_eq!(res.matches, 2);
    assert!(!res.ambiguous, "a teardown error is the same test");
    assert_eq!(res.observation.status, TestStatus::Failed);
    assert_eq!(res.observation.message.as_deref(), Some("boom"));
}

#[test]
fn file_attribute_separates_colliding_names() {
    let mut a = case("p.v2.test_a", "test_c", TestStatus::Passed, None);
    a.file = Some("p/v2/test_a.py".into());
    let mut b = case("p.v2.test_a", "test_c", TestStatus::Failed, None);
    b.file = Some("p.v2/test_a.py".into());
    let r = report(vec![a, b]);
    let index = Index::new(&r, IdSyntax::Pytest);
    let res = index.resolve("p/v2/test_a.py::test_c");
    assert_eq!(
        (res.matches, res.observation.status),
        (1, TestStatus::Passed)
    );
    let res = index.resolve("p.v2/test_a.py::test_c");
    assert_eq!(
        (res.matches, res.observation.status),
        (1, TestStatus::Failed)
    );
}

#[test]
fn colliding_names_without_file_are_ambiguous() {
    let r = report(vec![
        case("p.v2.test_a", "test_c", TestStatus::Passed, None),
        case("p.v2.test_a", "test_c", TestStatus::Failed, Some("f")),
    ]);
    let res = Index::new(&r, IdSyntax::Pytest).resolve("p/v2/test_a.py::test_c");
    assert!(res.ambiguous);
    assert_eq!(res.observation.status, TestStatus::Failed);
}

#[test]
fn missing_test_carries_its_modules_collection_error() {
    let r = report(vec![case(
        "",
        "tests.test_x",
        TestStatus::Error,
        Some("collection failure"),
    )]);
    let index = Index::new(&r, IdSyntax::Pytest);
    let res = index.resolve("tests/test_x.py::test_a");
    assert_eq!(res.matches, 0);
    assert_eq!(res.observation.status, TestStatus::Missing);
    assert_eq!(
        res.observation.message.as_deref(),
        Some("not collected: collection failure")
    );
    let res = index.resolve("tests/test_y.py::test_a");
    assert_eq!(res.observation, Observation::missing());
}

#[test]
fn missing_ids_get_the_closest_existing_ids() {
    let r = report(vec![
        case("tests.test_calc", "test_divide", TestStatus::Passed, None),
        case("tests.test_calc", "test_add", TestStatus::Passed, None),
        case("tests.test_other", "test_zzz", TestStatus::Passed, None),
    ]);
    let index = Index::new(&r, IdSyntax::Pytest);
    let res = index.resolve("tests/test_calc.py::test_divde");
    assert_eq!(res.observation.status, TestStatus::Missing);
    assert_eq!(res.suggestions[0], "tests/test_calc.py::test_divide");
    assert!(!res.suggestions.iter().any(|s| s.contains("zzz")));
    // Nothing close: no suggestion rather than a random one.
    assert!(
        index
            .resolve("x/y.py::completely_else_entirely")
            .suggestions
            .is_empty()
    );
}

#[test]
fn unittest_ids_dotted_and_xmlrunner_forms() {
    assert_eq!(
        key(IdSyntax::Unittest, "pkg.mod.TestX.test_a"),
        (
            "test_a".into(),
            Scope::Classname {
                classname: "pkg.mod.TestX".into(),
                file: None
            }
        )
    );
    assert_eq!(
        key(IdSyntax::Unittest, "setUpClass (pkg.mod.TestX)").0,
        "setUpClass (pkg.mod.TestX)"
    );
    // A failing subtest keys under its test.
    let c = case(
        "pkg.mod.TestX",
        "test_sub (value='a/b')",
        TestStatus::Failed,
        None,
    );
    assert_eq!(pytest::unittest_key(&c), "test_sub");
    let c = case("pkg.mod.TestX", "test_p[a (b)]", TestStatus::Failed, None);
    assert_eq!(pytest::unittest_key(&c), "test_p[a (b)]");
}

#[test]
fn nextest_ids_split_binary_and_test() {
    assert_eq!(
        key(IdSyntax::Nextest, "my_crate::integration group::t"),
        (
            "group::t".into(),
            Scope::Native(native::Qualifier::Binary("my_crate::integration".into()))
        )
    );
    assert_eq!(key(IdSyntax::Nextest, "tests::t").1, Scope::Any);
}

#[test]
fn go_ids_normalise_subtests_and_split_packages() {
    assert_eq!(
        key(IdSyntax::Go, "TestTable/with space").0,
        "TestTable/with_space"
    );
    assert_eq!(key(IdSyntax::Go, "TestTable/").0, "TestTable/#00");
    assert_eq!(key(IdSyntax::Go, "TestTable/a/b/c").0, "TestTable/a/b/c");
    assert_eq!(
        key(IdSyntax::Go, "example.com/x/calc.TestTable/a.b"),
        (
            "TestTable/a.b".into(),
            Scope::Native(native::Qualifier::Package("example.com/x/calc".into()))
        )
    );
    let mut short = case("calc", "TestA", TestStatus::Passed, None);
    let q = native::Qualifier::Package("example.com/x/calc".into());
    assert!(q.admits(&short));
    short.classname = "other".into();
    assert!(!q.admits(&short));
}

#[test]
fn go_reruns_are_attempts_of_one_test() {
    let r = report(vec![
        case("p", "TestF", TestStatus::Failed, Some("Failed")),
        case("p", "TestF", TestStatus::Passed, None),
        case("p", "TestS", TestStatus::Failed, None),
        case("p", "TestS", TestStatus::Failed, None),
        case("q", "TestS", TestStatus::Passed, None),
    ]);
    let index = Index::new(&r, IdSyntax::Go);
    let res = index.resolve("TestF");
    assert_eq!(
        (res.observation.status, res.ambiguous),
        (TestStatus::Flaky, false)
    );
    let res = index.resolve("p.TestS");
    assert_eq!(
        (res.observation.status, res.ambiguous),
        (TestStatus::Failed, false)
    );
    let res = index.resolve("TestS");
    assert!(res.ambiguous, "two packages are two tests");
}

#[test]
fn phpunit_and_java_classes() {
    let mut c = case("Corpus.Sub.CalcTest", "testX", TestStatus::Passed, None);
    c.class = Some("Corpus\\Sub\\CalcTest".into());
    let r = report(vec![c]);
    let index = Index::new(&r, IdSyntax::Phpunit);
    assert_eq!(index.resolve("Corpus\\Sub\\CalcTest::testX").matches, 1);
    // A short name is another class (PHPUnit classes with the same short name coexist); the
    // hint shows the fully qualified one.
    let short = index.resolve("CalcTest::testX");
    assert_eq!(short.matches, 0);
    assert_eq!(
        short.suggestions,
        vec!["Corpus\\Sub\\CalcTest::testX".to_string()]
    );
    assert_eq!(index.resolve("Other\\CalcTest::testX").matches, 0);

    let r = report(vec![
        case("com.x.FooTest", "testBar", TestStatus::Passed, None),
        case("com.x.FooTest", "testP(int)[1]", TestStatus::Failed, None),
        case("com.x.FooTest", "testP(int)[2]", TestStatus::Passed, None),
    ]);
    let index = Index::new(&r, IdSyntax::Java);
    assert_eq!(index.resolve("com.x.FooTest#testBar").matches, 1);
    assert_eq!(index.resolve("FooTest.testBar").matches, 1);
    assert_eq!(index.resolve("com.x.FooTest#testP").matches, 2);
    assert_eq!(
        index
            .resolve("com.x.FooTest#testP(int)[2]")
            .observation
            .status,
        TestStatus::Passed
    );
}

#[test]
fn js_ids_take_a_file_and_titles() {
    let q = IdSyntax::Js(JsFlavor::Jest).parse("__tests__/a.test.js › Outer › inner fail");
    assert_eq!(q.key, "Outer inner fail");
    let q2 = IdSyntax::Js(JsFlavor::Vitest).parse("tests/a.test.ts > Outer > inner fail");
    assert_eq!(q2.key, "Outer inner fail");
    let q3 = IdSyntax::Js(JsFlavor::Jest).parse("Outer inner fail");
    assert_eq!(q3.key, "Outer inner fail");
    assert_eq!(q3.scope, q.scope.clone().into_titleless());
}

impl Scope {
    fn into_titleless(self) -> Scope {
        match self {
            Scope::Js(_) => js_scope_none(),
            other => other,
        }
    }
}

fn js_scope_none() -> Scope {
    IdSyntax::Js(JsFlavor::Jest).parse("x").scope
}

#[test]
fn classname_name_is_exact() {
    let r = report(vec![
        case("a.b", "c", TestStatus::Failed, None),
        case("", "solo", TestStatus::Passed, None),
    ]);
    let index = Index::new(&r, IdSyntax::ClassnameName);
    assert_eq!(
        index.resolve("a.b.c").observation.status,
        TestStatus::Failed
    );
    assert_eq!(index.resolve("solo").observation.status, TestStatus::Passed);
    assert_eq!(index.resolve("b.c").matches, 0);
}

#[test]
fn syntax_names_round_trip() {
    for &(name, syntax) in IdSyntax::NAMES {
        assert_eq!(name.parse::<IdSyntax>().unwrap(), syntax);
    }
    assert!("rspec".parse::<IdSyntax>().is_err());
}
