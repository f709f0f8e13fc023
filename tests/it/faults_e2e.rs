//! Faults around a check: signals, test commands that leave processes behind or flood their
//! output, outputs that cannot be written, and many checks at once. Real git, real pytest.

use crate::setup::{CheckArgs, Fixture, hanging, processes_with};
use serde_json::Value;
use std::process::Stdio;

/// A one-line edit of a `README` holding `x`.
const README_EDIT: &str =
    "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\n-x\n+y\n";

/// Stop a check with `signal` while both runs' tests hang: the exit code says so, no test
/// process survives, the checkouts are gone and the repository is as it was.
fn stop_check(signal: &str, code: i32) {
    let (f, patch, marker, cmd) = hanging(signal);
    let before = f.snapshot();
    let child = f
        .command(&CheckArgs::new().patch(&patch).p2p("t").test_cmd(&cmd))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until both runs' grandchildren are up.
    crate::setup::wait_for_processes(&marker, "time.sleep", 2);
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = processes_with(&marker);
    assert!(left.is_empty(), "processes survived SIG{signal}: {left:?}");
    f.assert_untouched(&before);
}

#[test]
fn ctrl_c_kills_the_tests_and_removes_the_checkouts() {
    stop_check("INT", 130);
}

#[test]
fn sigterm_kills_the_tests_and_removes_the_checkouts() {
    stop_check("TERM", 143);
}

#[test]
fn background_processes_of_the_test_command_are_killed_with_it() {
    crate::setup::require_pytest();
    let marker = format!("patchgrade-background-{}", std::process::id());
    let f = Fixture::with_files(&[("README", "x\n")]);
    let patch = f.scratch_file("p.diff", README_EDIT);
    let before = f.snapshot();
    // A daemon in the background (double fork, stdio closed), then a report and exit 0.
    let cmd = format!(
        "(python -c 'import time; time.sleep(600)' {marker} </dev/null >/dev/null 2>&1 &) ; \
         printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {{junit}}"
    );
    let run = f.run(&CheckArgs::single_test(&patch, &cmd));
    assert_eq!(run.outcome(), "no-breakage", "{}", run.stderr);
    let left = processes_with(&marker);
    assert!(left.is_empty(), "background processes survived: {left:?}");
    f.assert_untouched(&before);
}

#[test]
fn a_test_command_flooding_its_output_has_capped_logs_and_bounded_memory() {
    let f = Fixture::with_files(&[("README", "x\n")]);
    let patch = f.scratch_file("p.diff", README_EDIT);
    let before = f.snapshot();
    let keep = f.scratch.join("keep");
    // 2 GiB on stdout, then the peak memory of patchgrade (the shell's parent) so far.
    let cmd = "yes 'flooding the log with the same line again' | head -c 2G; \
               echo done flooding; \
               grep VmHWM /proc/$PPID/status > {junit}.hwm; \
               printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {junit}";
    let extra = ["--baseline", "skip", "--keep", keep.to_str().unwrap()];
    let run = f.run(&CheckArgs::single_test(&patch, cmd).args(&extra));
    assert_eq!(run.outcome(), "no-breakage", "{}", run.stderr);
    let log = keep.join("candidate/test.stdout.log");
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(size <= 8 * 1024 * 1024 + 100, "log is {size} bytes");
    let text = String::from_utf8(std::fs::read(&log).unwrap()).unwrap();
    assert!(text.starts_with("flooding the log with the same line again\n"));
    assert!(text.contains("bytes of output left out here]"), "no note");
    assert!(
        text.trim_end().ends_with("done flooding"),
        "the end is kept"
    );
    let hwm = std::fs::read_to_string(keep.join("candidate/out/junit.xml.hwm")).unwrap();
    let kib: u64 = hwm
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("VmHWM line: {hwm}"));
    assert!(
        kib < 200 * 1024,
        "patchgrade peaked at {kib} KiB for 2 GiB of output"
    );
    f.assert_untouched(&before);
}

/// A check of the example, for the output tests.
fn example_check(f: &Fixture, extra: &[&str]) -> std::process::Command {
    f.command(&CheckArgs::calc("no-op").args(extra))
}

#[test]
fn output_on_a_full_disk_is_an_error_not_a_panic() {
    let f = Fixture::calc();
    let before = f.snapshot();
    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = example_check(&f, &[])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("stdout: cannot write") && stderr.contains("No space left on device"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");

    let out = example_check(&f, &["--junit-out", "/dev/full"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("/dev/full: cannot write"), "{stderr}");
    f.assert_untouched(&before);
}

#[test]
fn an_unwritable_junit_out_is_an_error_naming_it_and_writes_nothing() {
    let f = Fixture::calc();
    let before = f.snapshot();
    // A path under a regular file cannot be created, even by root.
    let blocker = f.scratch_file("not-a-dir", "");
    let target = blocker.join("report.xml");
    let out = example_check(&f, &["--junit-out", target.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    // Refused before anything runs: the directory it would go in is a file.
    assert!(
        stderr.contains(&format!("--junit-out {}", target.display()))
            && stderr.contains("is not a directory"),
        "{stderr}"
    );
    let left: Vec<_> = std::fs::read_dir(&f.scratch)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with(".partial"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    f.assert_untouched(&before);
}

/// 50 checks of one repository at once grade exactly as the same checks one at a time.
#[test]
fn fifty_concurrent_checks_grade_as_serial_ones() {
    let f = Fixture::calc();
    let before = f.snapshot();
    let patches = crate::setup::CALC_PATCHES;
    let graded = |v: &Value| -> Value {
        let tests: Vec<Value> = v["tests"]
            .as_array()
            .map(|t| {
                t.iter()
                    .map(|t| {
                        serde_json::json!([t["id"], t["status"], t["base_status"], t["message"]])
                    })
                    .collect()
            })
            .unwrap_or_default();
        serde_json::json!([v["outcome"], tests, v["patch"]["apply_failure"]])
    };
    let serial: Vec<Value> = patches
        .iter()
        .map(|p| graded(&f.run(&CheckArgs::calc(p).args(&["--no-cache"])).json()))
        .collect();
    let children: Vec<_> = (0..50)
        .map(|i| {
            let args = CheckArgs::calc(patches[i % patches.len()]).args(&["--no-cache"]);
            f.command(&args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("check {i}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        assert_eq!(graded(&v), serial[i % patches.len()], "check {i}");
    }
    f.assert_untouched(&before);
}
