//! `derive` and `list` end to end: a task built from a real gold patch with real runners
//! (pytest on the bundled example, nextest on httparse's real upstream fix), then graded with
//! `check`; `list`'s ids fed back to `grade`.

use crate::setup::{
    CALC_F2P, CALC_P2P, CheckArgs, Fixture, copy_dir, example, git, require_pytest, root,
};
use serde_json::Value;
use std::path::PathBuf;

fn derive(f: &Fixture, gold: &str, more: &[&str]) -> crate::setup::Run {
    derive_env(f, gold, more, &[])
}

fn derive_env(
    f: &Fixture,
    gold: &str,
    more: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
) -> crate::setup::Run {
    let mut args: Vec<String> = ["derive", "--runner", "pytest", "--test-patch"]
        .map(String::from)
        .to_vec();
    args.push(example("patches/hidden-tests.diff").display().to_string());
    args.push("--gold".into());
    args.push(
        example(&format!("patches/{gold}.diff"))
            .display()
            .to_string(),
    );
    args.extend(more.iter().map(|s| s.to_string()));
    f.run_with_env(&args, env)
}

#[test]
fn derive_writes_the_example_task_and_check_grades_with_it() {
    require_pytest();
    let f = Fixture::calc();
    let before = f.snapshot();
    let task = f.scratch.join("derived.toml");
    let run = derive(&f, "resolved", &["--out", task.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    f.assert_untouched(&before);
    let text = std::fs::read_to_string(&task).unwrap();
    let parsed: toml::Table = toml::from_str(&text).expect("the task is TOML");
    let list = |key: &str| -> Vec<String> {
        parsed[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    // The hand-written example task's lists, less the test that fails at base and with the fix
    // (the example keeps it to show broken-at-base): what the tests do, in the runner's ids.
    let mut want_p2p: Vec<String> = CALC_P2P
        .iter()
        .filter(|id| !id.contains("platform_quirk"))
        .map(|s| s.to_string())
        .collect();
    want_p2p.sort();
    assert_eq!(list("f2p"), CALC_F2P);
    assert_eq!(list("p2p"), want_p2p);
    assert!(
        run.stderr
            .contains("2 fail-to-pass, 5 pass-to-pass from 1 run(s)"),
        "{}",
        run.stderr
    );

    // The derived task grades like the hand-written one.
    for (patch, outcome) in [("resolved", "resolved"), ("regression", "regression")] {
        let run = f.run(
            &CheckArgs::new()
                .task(&task)
                .patch(example(&format!("patches/{patch}.diff")))
                .json(),
        );
        assert_eq!(run.json()["outcome"], outcome, "{}", run.stdout);
    }

    // As a SWE-bench row: the lists JSON-encoded, the gold patch as `patch`.
    let run = derive(&f, "resolved", &["--format", "swebench"]);
    let row: Value = serde_json::from_str(&run.stdout).expect("one JSON row");
    let f2p: Vec<String> = serde_json::from_str(row["FAIL_TO_PASS"].as_str().unwrap()).unwrap();
    assert_eq!(f2p, CALC_F2P);
    assert!(row["patch"].as_str().unwrap().contains("def divide"));
    assert!(
        row["test_patch"]
            .as_str()
            .unwrap()
            .contains("test_errors.py")
    );
}

/// With `--retries 1` each side runs twice; a test that passes its first two runs and fails
/// after is unstable at base and with the fix, and left out of both lists.
#[test]
fn derive_drops_a_test_whose_status_changes_between_runs() {
    require_pytest();
    let f = Fixture::calc();
    let counter = f.scratch.join("runs");
    std::fs::write(&counter, "").unwrap();
    let flaky = "import os\n\n\ndef test_flaky():\n    path = os.environ['COUNTER']\n    with open(path, 'a') as f:\n        f.write('x')\n    assert os.path.getsize(path) <= 2\n";
    f.commit(&[("tests/test_flaky.py", flaky)], "a flaky test");
    let env = format!("COUNTER={}", counter.display());
    // On the host: the counter lives outside the checkout, where a sandbox lets no test write.
    let run = derive_env(
        &f,
        "resolved",
        &["--retries", "1", "--env", &env, "--format", "json"],
        &[("PATCHGRADE_SANDBOX", "none".as_ref())],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let d = run.json();
    assert_eq!(d["runs"], 2);
    assert_eq!(
        d["unstable"],
        serde_json::json!(["tests/test_flaky.py::test_flaky"])
    );
    assert_eq!(d["f2p"].as_array().unwrap().len(), 2, "{d:#}");
    assert_eq!(std::fs::read(&counter).unwrap().len(), 4);
}

#[test]
fn derive_refuses_an_empty_gold_patch_and_reports_one_that_does_not_apply() {
    require_pytest();
    let f = Fixture::calc();
    let run = derive(&f, "empty", &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("gold patch is empty"), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    let run = derive(&f, "patch-failed", &[]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("gold patch does not apply"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
}

/// httparse's real upstream fix with its tests inline in `src/lib.rs`: derive finds exactly
/// the two tests the fix makes pass, in nextest's ids.
#[test]
fn derive_reproduces_the_fail_to_pass_tests_of_a_real_rust_fix() {
    if !crate::setup::have_runner("cargo-nextest") {
        return;
    }
    let dir = root().join("fixtures/projects/httparse-1.9.5");
    let f = Fixture::empty();
    copy_dir(&dir.join("tree"), &f.repo);
    git(&f.repo, &["init", "--quiet"]);
    git(&f.repo, &["add", "--all"]);
    git(&f.repo, &["commit", "--quiet", "-m", "httparse 1.9.5"]);
    let path = |name: &str| -> PathBuf { dir.join(name) };
    let run = f.run(&[
        "derive".as_ref(),
        "--runner".as_ref(),
        "nextest".as_ref(),
        "--gold".as_ref(),
        path("fix.patch").as_os_str(),
        "--test-patch".as_ref(),
        path("test.patch").as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let d = run.json();
    assert_eq!(
        d["f2p"],
        serde_json::json!([
            "httparse tests::test_request_with_invalid_method",
            "httparse tests::test_request_with_leading_space",
        ]),
        "{d:#}"
    );
    let p2p = d["p2p"].as_array().unwrap();
    assert!(p2p.len() > 50, "{d:#}");
    assert!(p2p.contains(&Value::from("httparse tests::test_chunk_size")));
    assert!(d["broken_by_gold"].as_array().unwrap().is_empty());
}

/// Every id `list` prints names its test: `grade` finds each one, with the status `list`
/// showed.
#[test]
fn listed_ids_grade_as_the_tests_they_name() {
    let f = Fixture::empty();
    let report = root().join("fixtures/junit/pytest/junit.xml");
    let run = f.run(&["list".as_ref(), report.as_os_str()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ids: Vec<&str> = run.stdout.lines().collect();
    assert!(ids.len() > 20, "{}", run.stdout);
    let file = f.scratch_file("ids.txt", &run.stdout);
    let grade = f.run(&[
        "grade".as_ref(),
        "--junit".as_ref(),
        report.as_os_str(),
        "--p2p-file".as_ref(),
        file.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    let v = grade.json();
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(tests.len(), ids.len());
    let missing: Vec<&Value> = tests.iter().filter(|t| t["status"] == "missing").collect();
    assert!(missing.is_empty(), "{missing:#?}");

    let failed = f.run(&[
        "list".as_ref(),
        report.as_os_str(),
        "--status".as_ref(),
        "failed".as_ref(),
    ]);
    for id in failed.stdout.lines() {
        let t = tests.iter().find(|t| t["id"] == id).unwrap();
        assert_eq!(t["status"], "failed", "{t}");
    }
    assert!(failed.stdout.lines().count() >= 1);
    let bad = f.run(&[
        "list".as_ref(),
        report.as_os_str(),
        "--status".as_ref(),
        "nope".as_ref(),
    ]);
    assert_eq!(bad.code, 2);
}
