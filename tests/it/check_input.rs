//! Bad input: one line naming the input and the problem, exit 2, nothing left behind.

use crate::setup::*;

/// Runs `check` with `args` after the standard flags and asserts a one-line usage error that
/// contains each of `needles`, with the repository and TMPDIR untouched.
fn bad(f: &Fixture, args: &CheckArgs, needles: &[&str]) {
    let before = f.snapshot();
    let run = f.run(args);
    assert_eq!(
        run.code, 2,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stdout.is_empty(),
        "no verdict on bad input: {}",
        run.stdout
    );
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {}", run.stderr);
    for n in needles {
        assert!(lines[0].contains(n), "`{}` lacks `{n}`", lines[0]);
    }
    f.assert_untouched(&before);
}

fn fixture() -> (Fixture, String) {
    let f = Fixture::with_files(&[("a.txt", "a\n")]);
    let patch = f.scratch_file("p.diff", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n");
    (f, patch.display().to_string())
}

#[test]
fn missing_repository() {
    let (f, patch) = fixture();
    let nowhere = f.scratch.join("nowhere");
    let nowhere = nowhere.to_str().unwrap();
    bad(
        &f,
        &CheckArgs::new()
            .repo(nowhere)
            .patch(&patch)
            .f2p("t")
            .test_cmd("x {junit}"),
        &[nowhere, "not a git repository"],
    );
}

#[test]
fn unknown_base_revision() {
    let (f, patch) = fixture();
    bad(
        &f,
        &CheckArgs::new()
            .flag("--base", "no-such-branch")
            .patch(&patch)
            .f2p("t")
            .test_cmd("x {junit}"),
        &["unknown base revision `no-such-branch`"],
    );
}

#[test]
fn unreadable_patch_file() {
    let (f, _) = fixture();
    bad(
        &f,
        &CheckArgs::new()
            .patch("/nonexistent/fix.diff")
            .f2p("t")
            .test_cmd("x {junit}"),
        &["/nonexistent/fix.diff", "cannot read"],
    );
}

#[test]
fn malformed_patch() {
    let (f, _) = fixture();
    let prose = f.scratch_file("prose.diff", "I fixed the bug by editing a.txt.\n");
    let prose = prose.to_str().unwrap();
    bad(
        &f,
        &CheckArgs::new().patch(prose).f2p("t").test_cmd("x {junit}"),
        &[prose, "no unified diff"],
    );
}

#[test]
fn malformed_test_patch() {
    let (f, patch) = fixture();
    let cut = f.scratch_file("tp.diff", "--- a/a.txt\n+++ b/a.txt\n@@ -1,5 +1,5 @@\n a\n");
    let cut = cut.to_str().unwrap();
    bad(
        &f,
        &CheckArgs::new()
            .patch(&patch)
            .test_patch(cut)
            .f2p("t")
            .test_cmd("x {junit}"),
        &[cut, "cut short"],
    );
}

#[test]
fn template_without_junit() {
    let (f, patch) = fixture();
    bad(
        &f,
        &CheckArgs::new()
            .patch(&patch)
            .f2p("t")
            .test_cmd("pytest {tests}"),
        &["pytest {tests}", "{junit}"],
    );
}

#[test]
fn no_ids() {
    let (f, patch) = fixture();
    bad(
        &f,
        &CheckArgs::new().patch(&patch).test_cmd("x {junit}"),
        &["no test ids"],
    );
}

#[test]
fn no_test_command() {
    let (f, patch) = fixture();
    bad(
        &f,
        &CheckArgs::new().patch(&patch).f2p("t"),
        &["--runner", "--test-cmd"],
    );
}

#[test]
fn unknown_runner() {
    let (f, patch) = fixture();
    bad(
        &f,
        &CheckArgs::new().patch(&patch).f2p("t").runner("nose"),
        &["unknown runner `nose`"],
    );
}

#[test]
fn id_in_both_groups() {
    let (f, patch) = fixture();
    bad(
        &f,
        &CheckArgs::new()
            .patch(&patch)
            .f2p("t")
            .p2p("t")
            .test_cmd("x {junit}"),
        &["`t`", "both"],
    );
}

#[test]
fn bad_task_file() {
    let (f, patch) = fixture();
    let task = f.scratch_file("task.json", "{\"FAIL_TO_PASS\": 3}");
    let task = task.to_str().unwrap();
    bad(
        &f,
        &CheckArgs::new()
            .task(task)
            .patch(&patch)
            .test_cmd("x {junit}"),
        &[task, "invalid JSON"],
    );
}

#[test]
fn bad_id_file() {
    let (f, patch) = fixture();
    let ids = f.scratch_file("ids.json", "[\"unterminated");
    let ids = ids.to_str().unwrap();
    bad(
        &f,
        &CheckArgs::new()
            .flag("--f2p-file", ids)
            .patch(&patch)
            .test_cmd("x {junit}"),
        &[ids, "JSON"],
    );
}

#[test]
fn bad_timeout_and_env() {
    let (f, patch) = fixture();
    bad(
        &f,
        &CheckArgs::new()
            .patch(&patch)
            .f2p("t")
            .test_cmd("x {junit}")
            .flag("--timeout", "soon"),
        &["invalid duration `soon`"],
    );
    bad(
        &f,
        &CheckArgs::new()
            .patch(&patch)
            .f2p("t")
            .test_cmd("x {junit}")
            .flag("--env", "NOVALUE"),
        &["NOVALUE", "KEY=VALUE"],
    );
}

#[test]
fn unknown_accept_outcome() {
    let (f, patch) = fixture();
    let run = f.run(
        &CheckArgs::new()
            .patch(&patch)
            .f2p("t")
            .test_cmd("x {junit}")
            .flag("--accept", "resolved,fixed"),
    );
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("unknown outcome `fixed`"),
        "{}",
        run.stderr
    );
}
