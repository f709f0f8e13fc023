//! Every preset against its real runner: a small project per runner, a fix graded `resolved`
//! and a regression graded `regression`, with the runner's own id forms (subtests, describe
//! paths, data sets, `Class#method`, bats' descriptions). pytest, nextest and node are in
//! `runners_e2e.rs`.
//!
//! Runners that are not installed are skipped on a developer's machine; CI installs them all
//! (`scripts/runners`, `scripts/jsenv`) and sets `PATCHGRADE_ALL_RUNNERS=1`, so there a
//! missing runner fails.

use crate::setup::CheckArgs;
use crate::setup::{Fixture, graded, have_offline_java_repo, have_runner};
use std::path::PathBuf;

/// One project, its two patches, and the ids to grade.
struct Case<'a> {
    runner: &'a str,
    files: &'a [(&'a str, &'a str)],
    fix: &'a [(&'a str, &'a str)],
    regression: &'a [(&'a str, &'a str)],
    f2p: &'a [&'a str],
    p2p: &'a [&'a str],
    extra: Vec<String>,
}

/// Grades the fix and the regression; checks the outcomes, that each F2P test failed at base
/// and passes with the fix, that the regression breaks a P2P test, and that the user's
/// repository is untouched.
fn grade(case: Case) {
    let f = Fixture::with_files(case.files);
    let fix = f.diff_of("fix.diff", case.fix);
    let regression = f.diff_of("regression.diff", case.regression);
    let before = f.snapshot();
    let check = |patch: &PathBuf| {
        let args = CheckArgs::new()
            .runner(case.runner)
            .json()
            .patch(patch)
            .f2p_all(case.f2p)
            .p2p_all(case.p2p)
            .args(&case.extra);
        let run = f.run(&args);
        let v = run.json();
        (v, run.code)
    };
    let (v, code) = check(&fix);
    assert_eq!(
        (v["outcome"].as_str(), code),
        (Some("resolved"), 0),
        "{}: {v:#}",
        case.runner
    );
    for id in case.f2p {
        let t = graded(&v, id);
        assert!(
            matches!(t["base_status"].as_str(), Some("failed" | "error"))
                && t["status"] == "passed",
            "{}: {id}: {v:#}",
            case.runner
        );
    }
    for id in case.p2p {
        assert_eq!(graded(&v, id)["effect"], "kept", "{}: {id}", case.runner);
    }
    let (v, code) = check(&regression);
    assert_eq!(
        (v["outcome"].as_str(), code),
        (Some("regression"), 1),
        "{}: {v:#}",
        case.runner
    );
    // The runners that keep build output start from the first check's sandboxed baseline's
    // build, and still see the regression.
    if ["go", "nextest", "gradle"].contains(&case.runner) && v["isolation"]["sandbox"] != "none" {
        assert_eq!(v["runs"]["candidate"]["seeded"], true, "{v:#}");
    }
    let broken: Vec<_> = v["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .filter(|t| t["effect"] == "broken")
        .collect();
    assert!(!broken.is_empty(), "{}: {v:#}", case.runner);
    assert!(
        broken.iter().all(|t| t["message"].is_string()),
        "{}: a broken test carries the runner's failure message: {v:#}",
        case.runner
    );
    // What the agent reads about the broken test: the runner's assertion, not a bare
    // "failed" or the test's name, and where it failed, outside the runner's own frames.
    let args = CheckArgs::new()
        .runner(case.runner)
        .format("feedback")
        .patch(&regression)
        .f2p_all(case.f2p)
        .p2p_all(case.p2p)
        .args(&case.extra);
    let feedback = f.run(&args).stdout;
    let mut lines = feedback
        .lines()
        .skip_while(|l| !l.starts_with("Your patch broke"))
        .skip(1);
    let id = lines
        .next()
        .and_then(|l| l.strip_prefix("  - "))
        .unwrap_or("");
    let message = lines.next().unwrap_or("").trim();
    assert!(
        !id.is_empty()
            && message.len() > 6
            && message != id
            && !message.eq_ignore_ascii_case("failed"),
        "{}: no assertion in the feedback:\n{feedback}",
        case.runner
    );
    // CTest's JUnit has the test's output but no place.
    if case.runner != "ctest" {
        let place = lines.next().unwrap_or("").trim();
        assert!(
            place.starts_with("at ")
                && !place.contains("node_modules")
                && !place.contains("Processor.java")
                && !place.contains("Accessor"),
            "{}: no place of the project's in the feedback:\n{feedback}",
            case.runner
        );
    }
    f.assert_untouched(&before);
}

const GO_MOD: &str = "module example.com/calc\n\ngo 1.19\n";
const GO_TEST: &str = "package calc\n\nimport \"testing\"\n\n\
func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"1+2 != 3\")\n\t}\n}\n\n\
func TestDiv(t *testing.T) {\n\
\tt.Run(\"exact\", func(t *testing.T) {\n\t\tif q, ok := Div(6, 3); !ok || q != 2 {\n\t\t\tt.Fatal(\"6/3\")\n\t\t}\n\t})\n\
\tt.Run(\"by zero\", func(t *testing.T) {\n\t\tif _, ok := Div(1, 0); ok {\n\t\t\tt.Fatal(\"1/0 succeeded\")\n\t\t}\n\t})\n}\n";

fn go_calc(add: &str, div: &str) -> String {
    format!(
        "package calc\n\nfunc Add(a, b int) int {{\n\treturn {add}\n}}\n\n\
         func Div(a, b int) (int, bool) {{\n\t{div}\n}}\n"
    )
}

#[test]
fn go_preset_grades_subtests_with_spaces() {
    if !have_runner("gotestsum") {
        return;
    }
    let base = go_calc("a + b", "return a / b, true");
    let fixed = go_calc(
        "a + b",
        "if b == 0 {\n\t\treturn 0, false\n\t}\n\treturn a / b, true",
    );
    let broken = go_calc("a - b", "return a / b, true");
    grade(Case {
        runner: "go",
        files: &[
            ("go.mod", GO_MOD),
            ("calc.go", &base),
            ("calc_test.go", GO_TEST),
        ],
        fix: &[("calc.go", &fixed)],
        regression: &[("calc.go", &broken)],
        // `go test` names the subtest `TestDiv/by_zero`; the id is the one the source reads.
        f2p: &["TestDiv/by zero"],
        p2p: &["example.com/calc.TestAdd", "TestDiv/exact"],
        extra: Vec::new(),
    });
}

const CMAKE: &str = "cmake_minimum_required(VERSION 3.19)\nproject(calc C)\nenable_testing()\n\
add_executable(calc_test calc_test.c calc.c)\n\
add_test(NAME adds COMMAND calc_test add)\n\
add_test(NAME \"divides by zero\" COMMAND calc_test div0)\n";
const CALC_TEST_C: &str = "#include <stdio.h>\n#include <string.h>\n\
int add(int a, int b);\nint safe_div(int a, int b, int *ok);\n\n\
int main(int argc, char **argv) {\n\
    if (argc > 1 && strcmp(argv[1], \"add\") == 0) {\n\
        int r = add(1, 2);\n\
        if (r == 3) return 0;\n\
        printf(\"add(1, 2) = %d, expected 3\\n\", r);\n\
        return 1;\n    }\n\
    int ok = 1;\n\
    volatile int zero = 0;\n\
    safe_div(1, zero, &ok);\n\
    return ok ? 1 : 0;\n}\n";

fn c_calc(add: &str, div: &str) -> String {
    format!(
        "int add(int a, int b) {{ return {add}; }}\n\n\
         int safe_div(int a, int b, int *ok) {{\n    {div}\n}}\n"
    )
}

#[test]
fn ctest_preset_builds_and_grades_names_with_spaces() {
    if !have_runner("cmake") || !have_runner("ctest") {
        return;
    }
    let crash = "*ok = 1;\n    return a / b;";
    let base = c_calc("a + b", crash);
    let fixed = c_calc(
        "a + b",
        "if (b == 0) { *ok = 0; return 0; }\n    *ok = 1;\n    return a / b;",
    );
    let broken = c_calc("a - b", crash);
    grade(Case {
        runner: "ctest",
        files: &[
            ("CMakeLists.txt", CMAKE),
            ("calc_test.c", CALC_TEST_C),
            ("calc.c", &base),
            (".gitignore", "/build\n"),
        ],
        fix: &[("calc.c", &fixed)],
        regression: &[("calc.c", &broken)],
        f2p: &["divides by zero"],
        p2p: &["adds"],
        extra: Vec::new(),
    });
}

const PHPUNIT_XML: &str = "<?xml version=\"1.0\"?>\n<phpunit bootstrap=\"src/Calc.php\">\n  \
<testsuites>\n    <testsuite name=\"all\">\n      <directory>tests</directory>\n    </testsuite>\n  \
</testsuites>\n</phpunit>\n";
const PHP_TEST: &str = "<?php\nnamespace App\\Tests;\n\nuse App\\Calc;\nuse PHPUnit\\Framework\\TestCase;\n\n\
final class CalcTest extends TestCase\n{\n\
    public function testAdd(): void\n    {\n        $this->assertSame(3, Calc::add(1, 2));\n    }\n\n\
    public static function divisions(): array\n    {\n        return ['exact' => [6, 3, 2], 'by zero' => [1, 0, null]];\n    }\n\n\
    /** @dataProvider divisions */\n\
    public function testDiv(int $a, int $b, ?int $q): void\n    {\n        $this->assertSame($q, Calc::div($a, $b));\n    }\n}\n";

fn php_calc(add: &str, div: &str) -> String {
    format!(
        "<?php\nnamespace App;\n\nfinal class Calc\n{{\n\
         public static function add(int $a, int $b): int\n    {{\n        return {add};\n    }}\n\n\
         public static function div(int $a, int $b): ?int\n    {{\n        {div}\n    }}\n}}\n"
    )
}

#[test]
fn phpunit_preset_grades_named_data_sets() {
    if !have_runner("phpunit") {
        return;
    }
    let base = php_calc("$a + $b", "return intdiv($a, $b);");
    let fixed = php_calc("$a + $b", "return $b === 0 ? null : intdiv($a, $b);");
    let broken = php_calc("$a - $b", "return intdiv($a, $b);");
    grade(Case {
        runner: "phpunit",
        files: &[
            ("phpunit.xml", PHPUNIT_XML),
            ("src/Calc.php", &base),
            ("tests/CalcTest.php", PHP_TEST),
        ],
        fix: &[("src/Calc.php", &fixed)],
        regression: &[("src/Calc.php", &broken)],
        f2p: &["App\\Tests\\CalcTest::testDiv with data set \"by zero\""],
        p2p: &[
            "App\\Tests\\CalcTest::testAdd",
            "App\\Tests\\CalcTest::testDiv with data set \"exact\"",
        ],
        extra: Vec::new(),
    });
}

const BATS_TEST: &str = "setup() {\n  source \"$BATS_TEST_DIRNAME/../calc.sh\"\n}\n\n\
@test \"adds two numbers\" {\n  [ \"$(add 1 2)\" -eq 3 ]\n}\n\n\
@test \"divides by zero: says so\" {\n  run div 1 0\n  [ \"$output\" = \"division by zero\" ]\n}\n\n\
@test \"divides exactly\" {\n  [ \"$(div 6 3)\" -eq 2 ]\n}\n";

fn sh_calc(add: &str, div: &str) -> String {
    format!("add() {{ echo $(( {add} )); }}\n\ndiv() {{\n  {div}\n}}\n")
}

#[test]
fn bats_preset_grades_descriptions_with_spaces_and_colons() {
    if !have_runner("bats") {
        return;
    }
    let crash = "echo $(( $1 / $2 ))";
    let base = sh_calc("$1 + $2", crash);
    let fixed = sh_calc(
        "$1 + $2",
        "if [ \"$2\" -eq 0 ]; then echo \"division by zero\"; else echo $(( $1 / $2 )); fi",
    );
    let broken = sh_calc("$1 - $2", crash);
    grade(Case {
        runner: "bats",
        files: &[
            ("calc.sh", &base),
            ("test/calc.bats", BATS_TEST),
            // A test of the same name in another file, failing, which the ids do not name.
            (
                "test/other.bats",
                "@test \"adds two numbers\" {\n  false\n}\n",
            ),
        ],
        fix: &[("calc.sh", &fixed)],
        regression: &[("calc.sh", &broken)],
        f2p: &["calc.bats.divides by zero: says so"],
        p2p: &["calc.bats.adds two numbers", "calc.bats.divides exactly"],
        extra: Vec::new(),
    });
}

const JAVA_TEST: &str = "package calc;\n\nimport static org.junit.Assert.*;\nimport org.junit.Test;\n\n\
public class CalcTest {\n\
    @Test public void adds() { assertEquals(3, Calc.add(1, 2)); }\n\
    @Test public void dividesByZero() { assertNull(Calc.div(1, 0)); }\n\
    @Test public void dividesExactly() { assertEquals(Integer.valueOf(2), Calc.div(6, 3)); }\n}\n";

fn java_calc(add: &str, div: &str) -> String {
    format!(
        "package calc;\n\npublic class Calc {{\n\
         public static int add(int a, int b) {{ return {add}; }}\n\
         public static Integer div(int a, int b) {{ {div} }}\n}}\n"
    )
}

/// Debian's Maven repository (`/usr/share/maven-repo`) holds the plugins pinned here, so the
/// build runs offline, as `.mvn/maven.config` tells Maven.
const POM: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n  <modelVersion>4.0.0</modelVersion>\n  \
<groupId>example</groupId>\n  <artifactId>calc</artifactId>\n  <version>1.0</version>\n  \
<properties>\n    <maven.compiler.source>17</maven.compiler.source>\n    \
<maven.compiler.target>17</maven.compiler.target>\n    \
<project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>\n  </properties>\n  \
<dependencies>\n    <dependency><groupId>junit</groupId><artifactId>junit</artifactId>\
<version>4.13.2</version><scope>test</scope></dependency>\n  </dependencies>\n  \
<build>\n    <plugins>\n      \
<plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.0</version></plugin>\n      \
<plugin><artifactId>maven-compiler-plugin</artifactId><version>3.10.1</version></plugin>\n      \
<plugin><artifactId>maven-surefire-plugin</artifactId><version>2.22.3</version></plugin>\n    \
</plugins>\n  </build>\n</project>\n";

/// The Java project for Maven or Gradle: `(build file, its content)` on top of the sources.
fn grade_java(runner: &str, build: (&str, &str)) {
    let crash = "return a / b;";
    let base = java_calc("a + b", crash);
    let fixed = java_calc("a + b", "return b == 0 ? null : a / b;");
    let broken = java_calc("a - b", crash);
    let mut files = vec![
        build,
        ("src/main/java/calc/Calc.java", base.as_str()),
        ("src/test/java/calc/CalcTest.java", JAVA_TEST),
        (".gitignore", "/target\n/build\n/.gradle\n"),
    ];
    if runner == "maven" {
        files.push((
            ".mvn/maven.config",
            "--offline\n-Dmaven.repo.local=/usr/share/maven-repo\n",
        ));
    }
    grade(Case {
        runner,
        files: &files,
        fix: &[("src/main/java/calc/Calc.java", &fixed)],
        regression: &[("src/main/java/calc/Calc.java", &broken)],
        // Both id forms: `Class#method` and `Class.method`.
        f2p: &["calc.CalcTest#dividesByZero"],
        p2p: &["calc.CalcTest.adds", "calc.CalcTest#dividesExactly"],
        extra: Vec::new(),
    });
}

#[test]
fn maven_preset_reads_surefire_reports() {
    if !have_runner("mvn") || !have_offline_java_repo("mvn") {
        return;
    }
    grade_java("maven", ("pom.xml", POM));
}

#[test]
fn gradle_preset_reads_test_results() {
    if !have_runner("gradle") || !have_offline_java_repo("gradle") {
        return;
    }
    grade_java(
        "gradle",
        (
            "build.gradle",
            "apply plugin: 'java'\n\
             repositories { maven { url 'file:///usr/share/maven-repo' } }\n\
             dependencies { testCompile 'junit:junit:4.13.2' }\n",
        ),
    );
}

/// The JavaScript runners from `scripts/jsenv`, linked into each checkout by `--setup-cmd` as
/// `npm ci` would install them.
fn js_modules() -> Option<String> {
    let modules = std::env::var("PATCHGRADE_JS_MODULES").ok();
    if modules.is_none() {
        crate::setup::skip(
            "the JavaScript runners are not installed (PATCHGRADE_JS_MODULES is not set; \
             scripts/test sets it from scripts/jsenv)",
        );
    }
    modules
}

fn js_mean(body: &str) -> String {
    format!("exports.mean = (xs) => {{\n  {body}\n}};\n")
}

/// A describe path three deep, graded with the runner's own id form.
fn grade_js(runner: &str, test_file: (&str, &str), sep: &str) {
    if !have_runner("node") {
        return;
    }
    let Some(modules) = js_modules() else {
        return;
    };
    let sum = "return xs.reduce((a, b) => a + b, 0) / xs.length;";
    let base = js_mean(sum);
    let fixed = js_mean(&format!(
        "if (xs.length === 0) throw new Error('empty');\n  {sum}"
    ));
    let broken = js_mean("return xs.reduce((a, b) => a + b, 0);");
    let (file, _) = test_file;
    let id = |path: &[&str]| format!("{file}{sep}{}", path.join(sep));
    grade(Case {
        runner,
        files: &[
            ("package.json", "{\"name\": \"calc\", \"private\": true}\n"),
            (".gitignore", "node_modules\n"),
            ("calc.js", &base),
            test_file,
        ],
        fix: &[("calc.js", &fixed)],
        regression: &[("calc.js", &broken)],
        f2p: &[&id(&["calc", "empty input", "throws"])],
        p2p: &[&id(&["calc", "means of two"])],
        extra: vec![
            "--setup-cmd".into(),
            format!(
                "ln -s {} node_modules",
                shell_words::quote(&modules).into_owned()
            ),
        ],
    });
}

const JEST_TEST: &str = "const { mean } = require('../calc.js');\n\n\
describe('calc', () => {\n  test('means of two', () => expect(mean([1, 3])).toBe(2));\n  \
describe('empty input', () => {\n    test('throws', () => expect(() => mean([])).toThrow());\n  });\n});\n";

#[test]
fn jest_preset_grades_describe_paths() {
    grade_js("jest", ("__tests__/calc.test.js", JEST_TEST), " › ");
}

const VITEST_TEST: &str = "import { describe, it, expect } from 'vitest';\nimport { mean } from '../calc.js';\n\n\
describe('calc', () => {\n  it('means of two', () => expect(mean([1, 3])).toBe(2));\n  \
describe('empty input', () => {\n    it('throws', () => expect(() => mean([])).toThrow());\n  });\n});\n";

#[test]
fn vitest_preset_grades_describe_paths() {
    grade_js("vitest", ("test/calc.test.js", VITEST_TEST), " > ");
}

const MOCHA_TEST: &str = "const assert = require('node:assert');\nconst { mean } = require('../calc.js');\n\n\
describe('calc', () => {\n  it('means of two', () => assert.strictEqual(mean([1, 3]), 2));\n  \
describe('empty input', () => {\n    it('throws', () => assert.throws(() => mean([])));\n  });\n});\n";

#[test]
fn mocha_preset_grades_describe_paths() {
    grade_js("mocha", ("test/calc.spec.js", MOCHA_TEST), " › ");
}
