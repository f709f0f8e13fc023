//! `patchgrade check` end to end: real repositories, real patches, real pytest.

use crate::setup::*;
use serde_json::Value;

/// Grade one of the bundled example's patches against a fresh copy of its repository,
/// checking that the repository is untouched and nothing is left in TMPDIR.
fn grade_example(patch: &str, extra: &[&str]) -> (Run, Value) {
    let f = Fixture::calc();
    let before = f.snapshot();
    let task = example("task.toml");
    let patch = example(&format!("patches/{patch}.diff"));
    let mut args = CheckArgs::new()
        .task(&task)
        .repo(f.repo.to_str().unwrap())
        .patch(&patch)
        .json();
    args.extend_from_slice(extra);
    let run = f.run(&args);
    f.assert_untouched(&before);
    let json = run.json();
    (run, json)
}

fn test<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["tests"]
        .as_array()
        .and_then(|t| {
            t.iter()
                .find(|t| t["id"].as_str().is_some_and(|i| i.ends_with(id)))
        })
        .unwrap_or_else(|| panic!("no test {id} in {v:#}"))
}

fn axis(v: &Value, name: &str) -> (u64, u64) {
    (
        v[name]["passing"].as_u64().unwrap(),
        v[name]["total"].as_u64().unwrap(),
    )
}

#[test]
fn resolved() {
    let (run, v) = grade_example("resolved", &[]);
    assert_eq!(v["outcome"], "resolved", "{}", run.stderr);
    assert_eq!(run.code, 0);
    assert_eq!(axis(&v, "f2p"), (2, 2));
    assert_eq!(axis(&v, "p2p"), (5, 5));
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["patch"]["files"], serde_json::json!(["calc.py"]));
    assert_eq!(
        v["patch"]["test_patch_files"],
        serde_json::json!(["tests/test_errors.py"])
    );
}

#[test]
fn p2p_failing_at_base_is_not_blamed() {
    let (_, v) = grade_example("resolved", &[]);
    let quirk = test(&v, "test_platform_quirk");
    assert_eq!(quirk["effect"], "broken-at-base");
    assert_eq!(quirk["status"], "failed");
    assert_eq!(quirk["base_status"], "failed");
    assert_eq!(v["p2p"]["excluded"], 1);
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "p2p-broken-at-base")
    );
}

#[test]
fn without_baseline_the_same_failure_is_blamed() {
    let (run, v) = grade_example("resolved", &["--baseline", "skip"]);
    assert_eq!(v["outcome"], "breaking-resolved");
    assert_eq!(run.code, 1);
    assert_eq!(test(&v, "test_platform_quirk")["effect"], "broken");
    assert!(v["runs"].get("baseline").is_none());
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "baseline-skipped")
    );
}

#[test]
fn breaking_resolved() {
    let (run, v) = grade_example("breaking-resolved", &[]);
    assert_eq!(v["outcome"], "breaking-resolved");
    assert_eq!(run.code, 1);
    assert_eq!(axis(&v, "f2p"), (2, 2));
    assert_eq!(axis(&v, "p2p"), (4, 5));
    let divide = test(&v, "test_calc.py::test_divide");
    assert_eq!(divide["effect"], "broken");
    assert!(
        divide["message"].as_str().unwrap().contains("assert 3"),
        "{divide}"
    );
}

#[test]
fn partially_resolved() {
    let (run, v) = grade_example("partially-resolved", &[]);
    assert_eq!(v["outcome"], "partially-resolved");
    assert_eq!(run.code, 1);
    assert_eq!(axis(&v, "f2p"), (1, 2));
    assert_eq!(axis(&v, "p2p"), (5, 5));
    assert_eq!(
        test(&v, "test_mean_of_nothing_raises")["effect"],
        "not-fixed"
    );
}

#[test]
fn work_in_progress() {
    let (run, v) = grade_example("work-in-progress", &[]);
    assert_eq!(v["outcome"], "work-in-progress");
    assert_eq!(run.code, 1);
    assert_eq!(axis(&v, "f2p"), (1, 2));
    assert_eq!(axis(&v, "p2p"), (4, 5));
}

#[test]
fn no_op() {
    let (run, v) = grade_example("no-op", &[]);
    assert_eq!(v["outcome"], "no-op");
    assert_eq!(run.code, 1);
    assert_eq!(axis(&v, "f2p"), (0, 2));
    assert_eq!(axis(&v, "p2p"), (5, 5));
}

#[test]
fn regression() {
    let (run, v) = grade_example("regression", &[]);
    assert_eq!(v["outcome"], "regression");
    assert_eq!(run.code, 1);
    assert_eq!(axis(&v, "f2p"), (0, 2));
    assert_eq!(axis(&v, "p2p"), (4, 5));
    let sub = test(&v, "test_sub");
    assert_eq!(
        (sub["status"].as_str(), sub["base_status"].as_str()),
        (Some("failed"), Some("passed"))
    );
}

#[test]
fn accept_changes_the_exit_code_only() {
    let (run, v) = grade_example("regression", &["--accept", "resolved,regression"]);
    assert_eq!(v["outcome"], "regression");
    assert_eq!(run.code, 0);
}

#[test]
fn empty_patch() {
    let (run, v) = grade_example("empty", &[]);
    assert_eq!(v["outcome"], "empty-patch");
    assert_eq!(run.code, 1);
    assert!(
        v["runs"].get("candidate").is_none(),
        "an empty patch runs nothing"
    );
}

#[test]
fn whitespace_patch_from_stdin_is_empty() {
    let f = Fixture::calc();
    let task = example("task.toml");
    let run = f.run_with_stdin(
        &CheckArgs::new().task(&task).patch("-").json(),
        Some(b"  \n\n\t\n"),
    );
    assert_eq!(run.outcome(), "empty-patch", "{}", run.stderr);
}

#[test]
fn patch_that_does_not_apply_names_file_and_hunk() {
    let (run, v) = grade_example("patch-failed", &[]);
    assert_eq!(v["outcome"], "patch-failed");
    assert_eq!(run.code, 1);
    let failure = &v["patch"]["apply_failure"];
    assert_eq!(failure["file"], "calc.py");
    assert_eq!(failure["hunk"], "@@ -16,7 +16,7 @@");
}

#[test]
fn patch_failure_in_human_output() {
    let f = Fixture::calc();
    let task = example("task.toml");
    let patch = example("patches/patch-failed.diff");
    let run = f.run(&CheckArgs::new().task(&task).patch(&patch));
    assert_eq!(run.code, 1);
    assert!(run.stdout.starts_with("Patch Failed"), "{}", run.stdout);
    assert!(
        run.stdout.contains("calc.py, hunk @@ -16,7 +16,7 @@"),
        "{}",
        run.stdout
    );
}

#[test]
fn human_output_marks_the_cell_and_lists_what_broke() {
    let f = Fixture::calc();
    let before = f.snapshot();
    let task = example("task.toml");
    let patch = example("patches/regression.diff");
    let run = f.run(&CheckArgs::new().task(&task).patch(&patch));
    f.assert_untouched(&before);
    assert_eq!(run.code, 1);
    let out = &run.stdout;
    assert!(out.starts_with("Regression: "), "{out}");
    assert!(out.contains("[Regression]"), "{out}");
    assert!(out.contains("F2P  0/2 pass"), "{out}");
    assert!(
        out.contains("P2P  4/5 kept (1 broken at base, not counted)"),
        "{out}"
    );
    assert!(
        out.contains("FAILED   tests/test_calc.py::test_sub — assert -2 == 2"),
        "{out}"
    );
    assert!(
        out.contains(
            "Broken at base, not counted:\n  tests/test_calc.py::test_platform_quirk (failed"
        ),
        "{out}"
    );
}

#[test]
fn candidate_edits_to_hidden_tests_are_overridden_and_reported() {
    // The candidate fixes nothing but writes its own, trivially passing tests/test_errors.py.
    let f = Fixture::calc();
    let before = f.snapshot();
    let fake = "diff --git a/tests/test_errors.py b/tests/test_errors.py\nnew file mode 100644\n\
                --- /dev/null\n+++ b/tests/test_errors.py\n@@ -0,0 +1,6 @@\n\
                +def test_divide_by_zero_raises():\n+    pass\n+\n+\n\
                +def test_mean_of_nothing_raises():\n+    pass\n";
    let patch = f.scratch_file("fake.diff", fake);
    let task = example("task.toml");
    let run = f.run(&CheckArgs::new().task(&task).patch(&patch).json());
    f.assert_untouched(&before);
    let v = run.json();
    assert_eq!(
        v["outcome"], "no-op",
        "the hidden tests, not the candidate's, were run"
    );
    assert_eq!(
        v["patch"]["overridden_files"],
        serde_json::json!(["tests/test_errors.py"])
    );
}

#[test]
fn timeout_is_error_and_leaves_no_process() {
    let (f, patch, marker, cmd) = hanging("hang");
    let before = f.snapshot();
    let run = f.run(
        &CheckArgs::new()
            .patch(&patch)
            .p2p("t")
            .test_cmd(&cmd)
            .flag("--timeout", "2s")
            .json(),
    );
    f.assert_untouched(&before);
    let v = run.json();
    assert_eq!(v["outcome"], "error");
    assert_eq!(run.code, 3);
    assert_eq!(v["error"]["cause"], "timeout");
    assert_eq!(v["runs"]["candidate"]["termination"]["kind"], "timed-out");
    let left = processes_with(&marker);
    assert!(left.is_empty(), "processes survived the timeout: {left:?}");
}

#[test]
fn no_report_is_error_with_the_commands_output() {
    let f = Fixture::with_files(&[("a.txt", "a\n")]);
    let before = f.snapshot();
    let patch = f.scratch_file("p.diff", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n");
    let run = f.run(
        &CheckArgs::new()
            .patch(&patch)
            .f2p("t")
            .test_cmd("echo no report for {tests} >&2; exit 4 # {junit}")
            .json(),
    );
    f.assert_untouched(&before);
    let v = run.json();
    assert_eq!((v["outcome"].as_str(), run.code), (Some("error"), 3));
    assert_eq!(v["error"]["cause"], "no-report");
    // Both runs write no report; the baseline is named, since the task itself is in question.
    assert_eq!(v["error"]["stage"], "baseline");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("exited with code 4") && message.contains("no report for t"),
        "{message}"
    );
}

#[test]
fn unreadable_report_is_error() {
    let f = Fixture::with_files(&[("a.txt", "a\n")]);
    let patch = f.scratch_file("p.diff", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n");
    let run = f.run(
        &CheckArgs::new()
            .patch(&patch)
            .f2p("t")
            .flag("--baseline", "skip")
            .test_cmd("echo '<testsuite><testcase' > {junit}")
            .json(),
    );
    let v = run.json();
    assert_eq!((v["outcome"].as_str(), run.code), (Some("error"), 3));
    assert_eq!(v["error"]["cause"], "unreadable-report");
    assert_eq!(v["error"]["stage"], "candidate");
}

#[test]
fn failing_setup_is_error_with_its_log() {
    let f = Fixture::with_files(&[("a.txt", "a\n")]);
    let patch = f.scratch_file("p.diff", "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n");
    let run = f.run(
        &CheckArgs::new()
            .patch(&patch)
            .f2p("t")
            .flag("--baseline", "skip")
            .flag("--setup-cmd", "echo cannot install >&2; exit 1")
            .test_cmd("touch {junit}")
            .json(),
    );
    let v = run.json();
    assert_eq!(v["error"]["cause"], "setup-failed");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot install")
    );
}

#[test]
fn test_patch_that_does_not_apply_to_base_is_a_broken_task() {
    let f = Fixture::calc();
    let task = example("task.toml");
    let patch = example("patches/resolved.diff");
    let bad = f.scratch_file(
        "tp.diff",
        "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# not calc\n+# calc\n",
    );
    let run = f.run(
        &CheckArgs::new()
            .task(&task)
            .patch(&patch)
            .test_patch(&bad)
            .json(),
    );
    let v = run.json();
    assert_eq!((v["outcome"].as_str(), run.code), (Some("error"), 3));
    assert_eq!(v["error"]["cause"], "test-patch-does-not-apply");
    assert_eq!(v["error"]["stage"], "baseline");
}

#[test]
fn f2p_passing_at_base_makes_the_task_suspect() {
    let f = Fixture::calc();
    let patch = example("patches/no-op.diff");
    let run = f.run(
        &CheckArgs::new()
            .runner("pytest")
            .patch(&patch)
            .f2p("tests/test_calc.py::test_add")
            .p2p("tests/test_calc.py::test_mul")
            .json(),
    );
    let v = run.json();
    assert_eq!(v["outcome"], "resolved");
    let w = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "f2p-passes-at-base")
        .expect("warning");
    assert_eq!(
        w["tests"],
        serde_json::json!(["tests/test_calc.py::test_add"])
    );
}

/// Ids the task gets wrong: an F2P id in neither run's report and a P2P id missing at base.
/// The grade stays SWE-bench's (a missing F2P test is not fixed), and the verdict says the
/// task is suspect, names the ids, and tells the agent it is not to blame.
#[test]
fn ids_missing_at_base_make_the_task_suspect() {
    let f = Fixture::calc();
    let f2p_typo = "tests/test_errors.py::test_divide_by_zero_raise";
    let p2p_typo = "tests/test_calc.py::test_ad";
    let args = CheckArgs::calc("resolved").f2p(f2p_typo).p2p(p2p_typo);
    let run = f.run(&args);
    let v = run.json();
    assert_eq!(
        (v["outcome"].as_str(), run.code),
        (Some("partially-resolved"), 1),
        "{v:#}"
    );
    let warning = |kind| crate::setup::warning(&v, kind).unwrap_or_else(|| panic!("{kind}: {v:#}"));
    assert_eq!(
        warning("f2p-missing")["tests"],
        serde_json::json!([f2p_typo])
    );
    assert_eq!(
        warning("p2p-missing-at-base")["tests"],
        serde_json::json!([p2p_typo])
    );
    // The test that really fails at base is the only one said to be broken there.
    assert_eq!(
        warning("p2p-broken-at-base")["tests"],
        serde_json::json!(["tests/test_calc.py::test_platform_quirk"])
    );

    let human = f.run(
        &CheckArgs::calc_as("resolved", "human")
            .f2p(f2p_typo)
            .p2p(p2p_typo),
    );
    assert!(
        human
            .stdout
            .contains("  - task: 1 fail-to-pass test(s) are in neither run's report"),
        "{}",
        human.stdout
    );
    // Listed once, with its base status, not again under the warnings.
    assert_eq!(
        human.stdout.matches("test_platform_quirk").count(),
        1,
        "{}",
        human.stdout
    );

    let feedback = f.run(&CheckArgs::calc_as("resolved", "feedback").f2p(f2p_typo));
    assert!(
        feedback.stdout.contains("not caused by your patch") && feedback.stdout.contains(f2p_typo),
        "{}",
        feedback.stdout
    );
    assert!(
        !feedback.stdout.contains("import or syntax error"),
        "{}",
        feedback.stdout
    );
}

#[test]
fn an_id_the_runner_rejects_is_missing_and_the_rest_are_graded() {
    let f = Fixture::calc();
    let patch = example("patches/regression.diff");
    let run = f.run(
        &CheckArgs::new()
            .runner("pytest")
            .patch(&patch)
            .f2p("tests/test_calc.py::test_mean")
            .p2p("tests/test_calc.py::test_nope")
            .p2p("tests/test_calc.py::test_add")
            .p2p("tests/test_calc.py::test_divde")
            .json(),
    );
    let v = run.json();
    // pytest aborts the whole run (exit 4, empty report) for one unknown node id: the unknown
    // ids are left out, the others graded.
    let test = |id: &str| crate::setup::graded(&v, id).clone();
    let nope = test("tests/test_calc.py::test_nope");
    assert_eq!(nope["status"], "missing", "{v:#}");
    assert_eq!(nope["effect"], "broken-at-base", "{v:#}");
    assert!(
        nope["message"]
            .as_str()
            .unwrap()
            .contains("rejected by the runner")
    );
    let typo = test("tests/test_calc.py::test_divde");
    assert_eq!(
        typo["did_you_mean"][0], "tests/test_calc.py::test_divide",
        "{v:#}"
    );
    assert_eq!(test("tests/test_calc.py::test_add")["status"], "passed");
    let rejected = crate::setup::warning(&v, "rejected-id").expect("a rejected-id warning");
    assert_eq!(rejected["tests"].as_array().unwrap().len(), 2, "{v:#}");
    assert_eq!(v["runs"]["candidate"]["attempts"], 2);
    // Unknown at base too, so not blamed: the graded tests decide (test_mean passes, test_add
    // is kept).
    assert_eq!(v["outcome"], "resolved", "{v:#}");
}

#[test]
fn ids_of_missing_files_are_refused_round_by_round_and_the_rest_graded() {
    let f = Fixture::calc();
    let patch = example("patches/regression.diff");
    let run = f.run(
        &CheckArgs::new()
            .runner("pytest")
            .patch(&patch)
            .f2p("tests/test_calc.py::test_mean")
            .p2p("tests/gone.py::test_a")
            .p2p("tests/gone.py::test_b")
            .p2p("[100%]")
            .p2p("[")
            .p2p("tests/test_calc.py::test_add")
            .json(),
    );
    let v = run.json();
    // pytest names only the first missing file of a run: one round for tests/gone.py (both
    // of its ids), one each for `[100%]` and `[` (ids SWE-bench's data holds; the second, run
    // widened to its empty function, would have run the whole suite), then the tests run.
    for id in [
        "tests/gone.py::test_a",
        "tests/gone.py::test_b",
        "[100%]",
        "[",
    ] {
        let t = crate::setup::graded(&v, id);
        assert_eq!(t["status"], "missing", "{id}: {v:#}");
    }
    assert_eq!(v["runs"]["candidate"]["attempts"], 4, "{v:#}");
    let rejected = crate::setup::warning(&v, "rejected-id").expect("a rejected-id warning");
    assert_eq!(rejected["tests"].as_array().unwrap().len(), 4, "{v:#}");
    assert_eq!(
        crate::setup::graded(&v, "tests/test_calc.py::test_add")["status"],
        "passed"
    );
    assert_eq!(v["outcome"], "resolved", "{v:#}");
}

#[test]
fn a_patch_that_breaks_imports_is_a_regression_with_the_import_error() {
    let f = Fixture::calc();
    let patch = f.scratch_file(
        "broken.diff",
        "--- a/calc.py\n+++ b/calc.py\n@@ -1,3 +1,3 @@\n \"\"\"A tiny calculator, the bundled example project for patchgrade.\"\"\"\n \n-\n+import numpy_that_does_not_exist\n",
    );
    let task = example("task.toml");
    let run = f.run(&CheckArgs::new().task(&task).patch(&patch).json());
    let v = run.json();
    assert_eq!(v["outcome"], "regression", "{v:#}");
    let add = test(&v, "test_add");
    assert_eq!(add["status"], "missing");
    assert!(
        add["message"]
            .as_str()
            .unwrap()
            .starts_with("not collected"),
        "{add}"
    );
    assert!(
        add["details"]
            .as_str()
            .unwrap()
            .contains("numpy_that_does_not_exist"),
        "{add}"
    );
}

#[test]
fn dirty_working_tree_does_not_matter_and_is_not_touched() {
    let f = Fixture::calc();
    f.write("calc.py", "raise SystemExit('uncommitted garbage')\n");
    f.write("untracked.txt", "mine\n");
    let before = f.snapshot();
    let task = example("task.toml");
    let patch = example("patches/resolved.diff");
    let run = f.run(&CheckArgs::new().task(&task).patch(&patch).json());
    f.assert_untouched(&before);
    assert_eq!(
        run.outcome(),
        "resolved",
        "graded against the committed base, not the work tree"
    );
}

#[test]
fn base_revision_is_honoured() {
    let f = Fixture::calc();
    // A later commit that the patch cannot apply to; grading against HEAD~1 still works.
    let calc = std::fs::read_to_string(f.repo.join("calc.py")).unwrap();
    f.commit(
        &[("calc.py", &calc.replace("return None", "return 0"))],
        "later",
    );
    let task = example("task.toml");
    let patch = example("patches/resolved.diff");
    let args = |base: &'static str| {
        CheckArgs::new()
            .task(&task)
            .patch(&patch)
            .json()
            .flag("--base", base)
    };
    let head = f.run(&args("HEAD"));
    assert_eq!(head.outcome(), "patch-failed");
    let prev = f.run(&args("HEAD~1"));
    assert_eq!(prev.outcome(), "resolved");
}

#[test]
fn traditional_and_format_patch_diffs_apply() {
    let f = Fixture::calc();
    let task = example("task.toml");
    // diff -ruN of two trees, as `diff` writes it.
    let old = f.scratch.join("old");
    let new = f.scratch.join("new");
    copy_dir(&example("project"), &{
        std::fs::create_dir_all(&old).unwrap();
        old.clone()
    });
    copy_dir(&example("project"), &{
        std::fs::create_dir_all(&new).unwrap();
        new.clone()
    });
    let calc = std::fs::read_to_string(new.join("calc.py")).unwrap();
    let fixed = calc
        .replace(
            "        return None\n",
            "        raise ValueError('zero')\n",
        )
        .replace(
            "    return sum(values)",
            "    if not values:\n        raise ValueError('empty')\n    return sum(values)",
        );
    std::fs::write(new.join("calc.py"), fixed).unwrap();
    std::fs::write(new.join("NOTES.txt"), "new file\n").unwrap();
    let out = std::process::Command::new("diff")
        .args(["-ruN", "old", "new"])
        .current_dir(&f.scratch)
        .output()
        .unwrap();
    let ruin = f.scratch_file("ruin.diff", &String::from_utf8_lossy(&out.stdout));
    let run = f.run(&CheckArgs::new().task(&task).patch(&ruin).json());
    let v = run.json();
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    assert_eq!(
        v["patch"]["files"],
        serde_json::json!(["NOTES.txt", "calc.py"])
    );

    // git format-patch of a commit with the fix.
    let work = f.scratch.join("clone");
    git(
        &f.scratch,
        &[
            "clone",
            "--quiet",
            f.repo.to_str().unwrap(),
            work.to_str().unwrap(),
        ],
    );
    git(
        &work,
        &["apply", example("patches/resolved.diff").to_str().unwrap()],
    );
    git(&work, &["commit", "--quiet", "-am", "fix"]);
    let out = std::process::Command::new("git")
        .args(["format-patch", "-1", "--stdout"])
        .current_dir(&work)
        .output()
        .unwrap();
    let mail = f.scratch_file("fix.patch", &String::from_utf8_lossy(&out.stdout));
    let run = f.run(&CheckArgs::new().task(&task).patch(&mail).json());
    assert_eq!(run.outcome(), "resolved");
}

#[test]
fn swe_bench_instance_is_a_task_file() {
    let f = Fixture::calc();
    let base = String::from_utf8(
        std::process::Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(&f.repo)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let instance = serde_json::json!({
        "instance_id": "calc__calc-1",
        "repo": "calc/calc",
        "base_commit": base.trim(),
        "patch": "the reference solution, ignored",
        "test_patch": std::fs::read_to_string(example("patches/hidden-tests.diff")).unwrap(),
        "FAIL_TO_PASS": "[\"tests/test_errors.py::test_divide_by_zero_raises\", \"tests/test_errors.py::test_mean_of_nothing_raises\"]",
        "PASS_TO_PASS": "[\"tests/test_calc.py::test_add\"]",
        "version": "1.0",
    });
    let task = f.scratch_file("instance.json", &instance.to_string());
    let patch = example("patches/partially-resolved.diff");
    let run = f.run(
        &CheckArgs::new()
            .task(&task)
            .repo(f.repo.to_str().unwrap())
            .runner("pytest")
            .patch(&patch)
            .json(),
    );
    let v = run.json();
    assert_eq!(v["outcome"], "partially-resolved", "{}", run.stderr);
    assert_eq!(v["task"]["instance_id"], "calc__calc-1");
    assert_eq!(v["task"]["base_commit"], base.trim());
}

#[test]
fn id_files_and_flags() {
    let f = Fixture::calc();
    let f2p = f.scratch_file(
        "f2p.json",
        "[\"tests/test_errors.py::test_divide_by_zero_raises\"]",
    );
    let p2p = f.scratch_file(
        "p2p.txt",
        "# kept\ntests/test_calc.py::test_add\n\ntests/test_calc.py::test_sub\n",
    );
    let tp = example("patches/hidden-tests.diff");
    let patch = example("patches/partially-resolved.diff");
    let run = f.run(
        &CheckArgs::new()
            .runner("pytest")
            .patch(&patch)
            .test_patch(&tp)
            .flag("--f2p-file", &f2p)
            .flag("--p2p-file", &p2p)
            .json(),
    );
    let v = run.json();
    assert_eq!(v["outcome"], "resolved", "only divide-by-zero is asked for");
    assert_eq!(axis(&v, "p2p"), (2, 2));
}

#[test]
fn junit_out_is_a_readable_report() {
    let f = Fixture::calc();
    let out = f.scratch.join("graded.xml");
    let (task, patch) = (example("task.toml"), example("patches/regression.diff"));
    let run = f.run(
        &CheckArgs::new()
            .task(&task)
            .patch(&patch)
            .flag("--junit-out", &out),
    );
    assert_eq!(run.code, 1);
    let report = patchgrade::internals::Report::read(&out).expect("valid JUnit");
    let status = |name: &str| {
        report
            .cases
            .iter()
            .find(|c| c.name.ends_with(name))
            .map(|c| c.observation.status)
            .expect(name)
    };
    use patchgrade::TestStatus::*;
    assert_eq!(status("outcome"), Failed);
    assert_eq!(status("test_sub"), Failed);
    assert_eq!(status("test_add"), Passed);
    assert_eq!(status("test_platform_quirk"), Skipped);
    assert_eq!(report.cases.len(), 1 + 2 + 6);
}

#[test]
fn keep_dir_holds_checkouts_and_logs() {
    let f = Fixture::calc();
    let keep = f.scratch.join("kept");
    let (task, patch) = (example("task.toml"), example("patches/resolved.diff"));
    let run = f.run(
        &CheckArgs::new()
            .task(&task)
            .patch(&patch)
            .flag("--keep", &keep)
            .json(),
    );
    assert_eq!(run.outcome(), "resolved");
    for run in ["candidate", "baseline"] {
        for file in [
            "out/junit.xml",
            "scripts/test.sh",
            "test.stdout.log",
            "test.stderr.log",
            "work/calc.py",
        ] {
            assert!(keep.join(run).join(file).exists(), "{run}/{file}");
        }
    }
    let patched = std::fs::read_to_string(keep.join("candidate/work/calc.py")).unwrap();
    assert!(patched.contains("raise ValueError"));
    let base = std::fs::read_to_string(keep.join("baseline/work/calc.py")).unwrap();
    assert!(!base.contains("raise ValueError("));
    assert!(
        keep.join("baseline/work/tests/test_errors.py").exists(),
        "baseline has the test patch"
    );
    // A second run refuses to mix into the same directory.
    let again = f.run(
        &CheckArgs::new()
            .task(&task)
            .patch(&patch)
            .flag("--keep", &keep),
    );
    assert_eq!(again.code, 2);
}

#[test]
fn checkout_shares_history_through_alternates() {
    let f = Fixture::calc();
    let keep = f.scratch.join("kept");
    let (task, patch) = (example("task.toml"), example("patches/resolved.diff"));
    f.run(
        &CheckArgs::new()
            .task(&task)
            .patch(&patch)
            .flag("--keep", &keep),
    );
    let alternates =
        std::fs::read_to_string(keep.join("candidate/work/.git/objects/info/alternates")).unwrap();
    assert_eq!(
        alternates.trim(),
        std::fs::canonicalize(f.repo.join(".git/objects"))
            .unwrap()
            .to_str()
            .unwrap()
    );
    // The checkout is a working repository: git sees the patch as a change against base.
    let out = std::process::Command::new("git")
        .args(["diff", "--stat"])
        .current_dir(keep.join("candidate/work"))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("calc.py"),
        "{out:?}"
    );
}
