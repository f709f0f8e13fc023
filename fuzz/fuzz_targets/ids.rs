//! Test ids of every syntax, parsed, put in run form, and resolved against a small report,
//! from arbitrary text: never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use patchgrade::IdSyntax;
use patchgrade::internals::{Index, Report};

const REPORT: &str = r#"<testsuites><testsuite name="tests/a.test.js" file="tests/a.test.js">
<testcase classname="tests.test_a.TestA" name="test_x[1-2]" file="tests/test_a.py"/>
<testcase classname="Outer Inner" name="works" file="tests/a.test.js"/>
<testcase classname="pkg/mod" name="TestGo/sub_case"/>
<testcase classname="crate::mod" name="tests::t"/>
<testcase classname="com.x.CalcTest" name="adds[0]"/>
</testsuite></testsuites>"#;

fuzz_target!(|data: &[u8]| {
    let Ok(id) = std::str::from_utf8(data) else {
        return;
    };
    let report = Report::parse(REPORT.as_bytes(), std::path::Path::new("fixed.xml")).expect("the fixed report parses");
    for syntax in IdSyntax::every() {
        let _ = syntax.run_form(id);
        let _ = Index::new(&report, syntax).resolve(id);
    }
});
