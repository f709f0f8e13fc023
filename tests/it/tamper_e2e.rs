//! Tamper evidence: what a test command or the code under test leaves behind is evidence
//! only when it cannot have been forged or misread. A report path that is not a regular file,
//! a report that contradicts the runner's exit status, and reports that hold none of the
//! requested tests are each `error`, never a verdict; bad input is one line and exit 2.

use crate::setup::{CheckArgs, Fixture, require_pytest};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;

const EDIT: &str = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n";

fn fixture() -> (Fixture, std::path::PathBuf) {
    let f = Fixture::with_files(&[("a.txt", "a\n")]);
    let patch = f.scratch_file("p.diff", EDIT);
    (f, patch)
}

fn error_of(v: &Value) -> (&str, &str, &str) {
    (
        v["outcome"].as_str().unwrap_or_default(),
        v["error"]["cause"].as_str().unwrap_or_default(),
        v["error"]["message"].as_str().unwrap_or_default(),
    )
}

#[test]
fn a_report_path_that_is_not_a_regular_file_is_refused_not_followed() {
    let (f, patch) = fixture();
    let elsewhere = f.scratch_file(
        "forged.xml",
        "<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>",
    );
    let forged = elsewhere.display().to_string();
    for (cmd, what) in [
        // A reader that opened this blocking would wait for a writer forever.
        ("mkfifo {junit}".to_string(), "a FIFO"),
        ("ln -s /dev/zero {junit}".to_string(), "a symbolic link"),
        (format!("ln -s {forged} {{junit}}"), "a symbolic link"),
        ("mkdir {junit}".to_string(), "a directory"),
    ] {
        let run = f.run(&CheckArgs::single_test(&patch, &cmd).args(&["--timeout", "5m"]));
        let v = run.json();
        let (outcome, cause, message) = error_of(&v);
        assert_eq!(
            (outcome, cause),
            ("error", "unreadable-report"),
            "{cmd}: {v:#}"
        );
        assert!(
            message.contains(&format!("the report is {what}, not a regular file")),
            "{cmd}: {message}"
        );
    }
}

/// A repository whose one test fails at base, and a candidate that fixes nothing but adds a
/// `conftest.py` forging the run: `forge` is its body.
fn forged_run(forge: &str) -> Value {
    require_pytest();
    let f = Fixture::with_files(&[
        ("m.py", "def f():\n    return 0\n"),
        (
            "tests/test_m.py",
            "from m import f\n\ndef test_f():\n    assert f() == 1\n",
        ),
    ]);
    let patch = f.diff_of("forge.diff", &[("conftest.py", forge)]);
    let run = f.run(
        &CheckArgs::new()
            .runner("pytest")
            .json()
            .patch(&patch)
            .f2p("tests/test_m.py::test_f"),
    );
    run.json()
}

#[test]
fn a_report_rewritten_to_pass_while_the_tests_fail_is_an_error() {
    // The hook runs after pytest wrote its report and rewrites it to say the test passed;
    // pytest still exits 1, because the test failed.
    let v = forged_run(
        "import pytest\n\n\
         @pytest.hookimpl(trylast=True)\n\
         def pytest_sessionfinish(session):\n\
         \x20   path = session.config.option.xmlpath\n\
         \x20   open(path, 'w').write('<testsuite><testcase classname=\"tests.test_m\" name=\"test_f\"/></testsuite>')\n",
    );
    let (outcome, cause, message) = error_of(&v);
    assert_eq!(
        (outcome, cause),
        ("error", "report-contradicts-exit"),
        "{v:#}"
    );
    assert!(
        message.contains("exited with code 1 but its report has no failing test"),
        "{message}"
    );
    assert_eq!(v["error"]["stage"], "candidate");
}

#[test]
fn an_exit_status_forged_to_pass_while_the_report_fails_is_an_error() {
    let v =
        forged_run("def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n");
    let (outcome, cause, message) = error_of(&v);
    assert_eq!(
        (outcome, cause),
        ("error", "report-contradicts-exit"),
        "{v:#}"
    );
    assert!(
        message.contains("exited with code 0 but its report has failing tests"),
        "{message}"
    );
}

#[test]
fn an_honest_failing_run_is_still_graded() {
    // The same repository with a conftest.py that forges nothing: graded as usual.
    let v = forged_run("# nothing here\n");
    assert_eq!(v["outcome"], "no-op", "{v:#}");
}

#[test]
fn reports_without_any_requested_test_are_an_error_not_a_verdict() {
    let (f, patch) = fixture();
    let cmd =
        "printf '<testsuite><testcase classname=\"x\" name=\"other\"/></testsuite>' > {junit}";
    let v = f.run(&CheckArgs::single_test(&patch, cmd)).json();
    let (outcome, cause, message) = error_of(&v);
    assert_eq!(
        (outcome, cause),
        ("error", "no-requested-test-ran"),
        "{v:#}"
    );
    assert_eq!(
        v["error"]["stage"], "baseline",
        "with a baseline the task is in question"
    );
    assert!(
        message.contains("none of the 1 requested tests"),
        "{message}"
    );
    let v = f
        .run(&CheckArgs::single_test(&patch, cmd).args(&["--baseline", "skip"]))
        .json();
    assert_eq!(error_of(&v).1, "no-requested-test-ran");
    assert_eq!(v["error"]["stage"], "candidate");
    // One requested test found in either run is enough to grade.
    let v = f
        .run(&CheckArgs::single_test(&patch, cmd).p2p("x.other"))
        .json();
    assert_eq!(v["outcome"], "no-breakage", "{v:#}");
}

#[test]
fn thousands_of_ids_fit_on_the_command_line() {
    require_pytest();
    // 4,000 node ids of about 40 bytes: more than one shell argument may hold (128 KiB).
    let f = Fixture::with_files(&[(
        "tests/test_many.py",
        "import pytest\n\n@pytest.mark.parametrize('n', range(4000))\ndef test_case_number(n):\n    pass\n",
    )]);
    let patch = f.diff_of("p.diff", &[("a.txt", "a\n")]);
    let ids: Vec<String> = (0..4000)
        .map(|n| format!("tests/test_many.py::test_case_number[{n}]"))
        .collect();
    assert!(ids.iter().map(|i| i.len() + 1).sum::<usize>() > 128 * 1024);
    let id_file = f.scratch_file("ids.txt", &ids.join("\n"));
    let run = f.run(
        &CheckArgs::new()
            .runner("pytest")
            .json()
            .patch(&patch)
            .flag("--p2p-file", &id_file)
            .args(&["--baseline", "skip"]),
    );
    let v = run.json();
    assert_eq!(v["outcome"], "no-breakage", "{}", run.stderr);
    assert_eq!(v["p2p"]["passing"], 4000);
}

/// One usage line on stderr naming the input, exit 2, no verdict, nothing left behind.
fn refused(f: &Fixture, args: &CheckArgs, needle: &str) {
    let run = f.run(args);
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", run.stderr);
    assert!(lines[0].contains(needle), "`{}` lacks `{needle}`", lines[0]);
}

#[test]
fn bad_input_keeps_its_contract() {
    let (f, patch) = fixture();
    let marker = f.scratch.join("ran");
    let cmd = format!("touch {}; exit 1 # {{junit}}", marker.display());
    let base = || CheckArgs::single_test(&patch, &cmd);
    refused(
        &f,
        &base().args(&["--timeout", "-5s"]),
        "invalid duration `-5s`",
    );
    refused(
        &f,
        &base().args(&["--timeout", "0s"]),
        "--timeout must be greater than zero",
    );
    refused(&f, &base().args(&["--retries", "-1"]), "--retries");
    let missing = f.scratch.join("no/such/dir/out.xml");
    refused(
        &f,
        &base().flag("--junit-out", &missing),
        "is not a directory",
    );
    let task = f.scratch_file("t.toml", "timeout = 0\n");
    refused(
        &f,
        &base().task(&task),
        "the timeout must be greater than zero",
    );
    let both = f.scratch_file(
        "both.toml",
        "test_patch = \"diff\"\ntest_patch_file = \"x.diff\"\n",
    );
    refused(
        &f,
        &base().task(&both),
        "both test_patch and test_patch_file",
    );
    let not_ids = f.scratch_file("ids.json", "[1, 2]");
    refused(
        &f,
        &base().flag("--f2p-file", &not_ids),
        "invalid JSON array of ids",
    );
    assert!(!marker.exists(), "a refused check ran its command");
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_id() {
    let (f, patch) = fixture();
    let cmd = "printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {junit}";
    let ids = f.scratch_file("ids.txt", "\u{feff}t.a\n");
    let run = f.run(
        &CheckArgs::new()
            .json()
            .patch(&patch)
            .ids("classname.name")
            .test_cmd(cmd)
            .flag("--p2p-file", &ids),
    );
    let v = run.json();
    assert_eq!(v["outcome"], "no-breakage", "{v:#}");
    assert_eq!(v["tests"][0]["id"], "t.a");
}

#[test]
fn a_repository_path_that_is_not_utf8_is_refused() {
    use std::os::unix::ffi::OsStrExt;
    let (f, patch) = fixture();
    let odd = f.scratch.join(std::ffi::OsStr::from_bytes(b"repo-\xff"));
    std::fs::create_dir_all(&odd).unwrap();
    refused(
        &f,
        &CheckArgs::single_test(&patch, "x {junit}").repo(&odd),
        "the path is not UTF-8",
    );
}

#[test]
fn output_files_get_the_mode_of_a_plain_write() {
    let (f, patch) = fixture();
    let out = f.scratch.join("verdict.xml");
    let cmd = "printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {junit}";
    let run = f.run(&CheckArgs::single_test(&patch, cmd).flag("--junit-out", &out));
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    // The tests run under the usual umask (022).
    assert_eq!(mode, 0o644);
}
