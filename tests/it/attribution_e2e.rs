//! The attribution rule: a candidate that cuts its own run short (a crash, a hang, a setup it
//! breaks) is graded for it when the baseline ran, and named; without a baseline it is an
//! error that says why it cannot be blamed.

use crate::setup::*;
use serde_json::Value;

/// The bundled example's `calc.py` with `prefix` put before everything.
fn calc_with(f: &Fixture, name: &str, prefix: &str) -> std::path::PathBuf {
    let calc = std::fs::read_to_string(f.repo.join("calc.py")).expect("calc.py");
    f.diff_of(name, &[("calc.py", &format!("{prefix}{calc}"))])
}

/// `check --format json` of the example task (its hidden tests and every id) with `patch`.
fn calc_args(patch: &std::path::Path) -> CheckArgs {
    CheckArgs::new()
        .runner("pytest")
        .json()
        .test_patch(example("patches/hidden-tests.diff"))
        .patch(patch)
        .f2p_all(CALC_F2P)
        .p2p_all(CALC_P2P)
}

/// Every requested test but those broken at base is `not-run` for `reason`.
fn assert_not_run(v: &Value, reason: &str) {
    for t in v["tests"].as_array().expect("tests") {
        if t["effect"] == "broken-at-base" {
            continue;
        }
        assert_eq!(
            (&t["status"], &t["not_run_reason"]),
            (&"not-run".into(), &reason.into()),
            "{t:#}"
        );
    }
}

#[test]
fn a_crash_at_import_is_a_regression_named_in_every_output() {
    let f = Fixture::calc();
    let crash = calc_with(&f, "crash.diff", "import os\nos._exit(1)\n");
    let before = f.snapshot();
    let args = |format: &str| {
        CheckArgs::new()
            .runner("pytest")
            .format(format)
            .test_patch(example("patches/hidden-tests.diff"))
            .patch(&crash)
            .f2p_all(CALC_F2P)
            .p2p_all(CALC_P2P)
    };
    let run = f.run(&args("json"));
    f.assert_untouched(&before);
    let v = run.json();
    assert_eq!(
        (v["outcome"].as_str(), run.code),
        (Some("regression"), 1),
        "{v:#}"
    );
    assert!(v.get("error").is_none(), "{v:#}");
    assert_eq!(v["aborted"]["reason"], "crashed");
    assert_eq!(v["aborted"]["cause"], "no-report");
    let message = v["aborted"]["message"].as_str().expect("message");
    assert!(
        message.contains("exited with code 1") && message.contains("wrote no JUnit report"),
        "{message}"
    );
    assert!(
        v["summary"].as_str().is_some_and(
            |s| s.contains("your patch makes the test command crash before it writes a report")
        ),
        "{v:#}"
    );
    assert_not_run(&v, "crashed");
    // The test broken at base stays out of it: the baseline still says so.
    assert_eq!(
        graded(&v, "tests/test_calc.py::test_platform_quirk")["effect"],
        "broken-at-base"
    );
    assert_eq!(
        (v["p2p"]["passing"].as_u64(), v["p2p"]["total"].as_u64()),
        (Some(0), Some(5))
    );

    let human = f.run(&args("human"));
    assert!(
        human
            .stdout
            .contains("candidate run (crashed, graded against the patch")
            && human.stdout.contains("Regression"),
        "{}",
        human.stdout
    );
    let feedback = f.run(&args("feedback"));
    assert!(
        feedback
            .stdout
            .contains("your patch makes the test command crash")
            && feedback
                .stdout
                .contains("though they did without your patch"),
        "{}",
        feedback.stdout
    );
}

#[test]
fn an_endless_loop_is_breaking_and_leaves_no_process() {
    let f = Fixture::calc();
    let marker = format!("patchgrade-endless-{}", std::process::id());
    // The loop runs when a test calls add(); the child it starts carries the marker, so
    // that what the timeout leaves can be looked for.
    let calc = std::fs::read_to_string(f.repo.join("calc.py")).expect("calc.py");
    let looping = calc.replace(
        "def add(a, b):\n    return a + b\n",
        &format!(
            "def add(a, b):\n    import subprocess, sys, time\n    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{marker}'])\n    while True:\n        time.sleep(0.1)\n"
        ),
    );
    assert_ne!(looping, calc);
    let patch = f.diff_of("loop.diff", &[("calc.py", &looping)]);
    let before = f.snapshot();
    // No F2P ids (hidden from an agent): the verdict is about breakage alone.
    let run = f.run(
        &CheckArgs::new()
            .runner("pytest")
            .json()
            .patch(&patch)
            .p2p_all(CALC_P2P)
            .flag("--timeout", "5s"),
    );
    f.assert_untouched(&before);
    let v = run.json();
    assert_eq!(
        (v["outcome"].as_str(), run.code),
        (Some("breaking"), 1),
        "{v:#}"
    );
    assert_eq!(v["aborted"]["reason"], "timed-out");
    assert_eq!(v["aborted"]["cause"], "timeout");
    assert!(
        v["aborted"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("timed out after 5s")),
        "{v:#}"
    );
    assert_not_run(&v, "timed-out");
    assert_eq!(v["runs"]["candidate"]["termination"]["kind"], "timed-out");
    assert!(
        v["summary"]
            .as_str()
            .is_some_and(|s| s.contains("hang past the timeout")),
        "{v:#}"
    );
    let left = processes_with(&marker);
    assert!(left.is_empty(), "processes survived the timeout: {left:?}");
}

/// A runner that reports, then hangs on its way out (the candidate leaves a thread running):
/// the failures its report holds stand, with their messages; its passes are not counted, since
/// no exit status vouches for a report whose run never finished (code under test could have
/// written it, then hung).
#[test]
fn a_hung_runs_report_keeps_its_failures_not_its_passes() {
    let f = Fixture::calc();
    let patch = calc_with(
        &f,
        "thread.diff",
        "import threading, time\nthreading.Thread(target=lambda: time.sleep(600)).start()\n",
    );
    let run = f.run(&calc_args(&patch).flag("--timeout", "8s"));
    let v = run.json();
    assert_eq!(v["aborted"]["reason"], "timed-out", "{v:#}");
    // pytest wrote its report before the interpreter waited for the thread.
    let fixed = graded(&v, CALC_F2P[0]);
    assert_eq!(fixed["status"], "failed", "{v:#}");
    assert!(
        fixed["message"]
            .as_str()
            .is_some_and(|m| m.contains("DID NOT RAISE"))
    );
    let add = graded(&v, "tests/test_calc.py::test_add");
    assert_eq!(
        (&add["status"], &add["effect"]),
        (&"not-run".into(), &"broken".into())
    );
    assert!(
        add["message"]
            .as_str()
            .is_some_and(|m| m.contains("reported passing by a run cut short")),
        "{v:#}"
    );
    assert_eq!(v["outcome"], "regression", "{v:#}");
}

/// A candidate that breaks pytest's own reporting (as a patch to pytest did in SWE-bench's
/// pytest-dev__pytest-7220, whose failures pytest could no longer format): pytest stops with
/// INTERNALERROR, and its JUnit report holds the failing test as a bare test case, which
/// reads as a pass. The runner failed inside: no pass of that run counts, and the candidate
/// is graded for the crash, named.
#[test]
fn a_runner_that_fails_inside_counts_none_of_its_passes() {
    let f = Fixture::calc();
    let patch = calc_with(
        &f,
        "reporter.diff",
        "import _pytest.junitxml\n\n\ndef _broken(self, report):\n    \
         raise RuntimeError('the reporter broke')\n\n\n\
         _pytest.junitxml._NodeReporter.append_failure = _broken\n\n\n",
    );
    let v = f.run(&calc_args(&patch)).json();
    assert_eq!(v["aborted"]["reason"], "crashed", "{v:#}");
    assert_eq!(v["aborted"]["cause"], "runner-crashed", "{v:#}");
    // SWE-bench's scoring agrees: its parser finds no status in such a log.
    assert_ne!(v["swebench_resolved"], true, "{v:#}");
    let message = v["aborted"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("INTERNALERROR") && message.contains("the reporter broke"),
        "{message}"
    );
    assert_eq!(v["f2p"]["passing"], 0, "{v:#}");
    for t in v["tests"].as_array().expect("tests") {
        assert_ne!(t["status"], "passed", "{t:#}");
    }
    assert_eq!(v["outcome"], "regression", "{v:#}");
}

/// The same runner failure at base (a task whose bug is such a failure, as SWE-bench's
/// pytest-dev__pytest-7168) is not the patch's doing, whether the patch fixes the bug or not:
/// nothing is blamed on it, the reports are taken as written, and a warning says that a
/// failure the runner could not write may read as a pass there.
#[test]
fn a_runner_that_fails_inside_at_base_too_blames_no_one() {
    let reporter = "import _pytest.junitxml\n\n\ndef _broken(self, report):\n    \
                    raise RuntimeError('the reporter broke')\n\n\n\
                    _pytest.junitxml._NodeReporter.append_failure = _broken\n\n\n";
    let calc = |body: &str| format!("{reporter}def twice(x):\n    return {body}\n");
    let tests = "from calc import twice\n\n\ndef test_zero():\n    assert twice(0) == 0\n\n\n\
                 def test_two():\n    assert twice(2) == 4\n";
    let f = Fixture::with_files(&[("calc.py", &calc("x * 3")), ("test_calc.py", tests)]);
    let fix = f.diff_of("fix.diff", &[("calc.py", &calc("x * 2"))]);
    let still = f.diff_of("still.diff", &[("calc.py", &calc("x * 4"))]);
    let args = |patch: &std::path::Path| {
        CheckArgs::new()
            .runner("pytest")
            .json()
            .patch(patch)
            .f2p("test_calc.py::test_two")
            .p2p("test_calc.py::test_zero")
    };
    for patch in [&fix, &still] {
        let v = f.run(&args(patch)).json();
        assert!(v.get("aborted").is_none(), "{v:#}");
        let warned = warning(&v, "runner-failed").expect("the runner's failure at base is said");
        assert!(
            warned["message"]
                .as_str()
                .is_some_and(|m| m.contains("INTERNALERROR")),
            "{v:#}"
        );
    }
}

/// A `conftest.py` that rewrites the report to pass, then hangs so that no exit status can
/// contradict it: nothing it forged counts.
#[test]
fn a_report_forged_to_pass_before_a_hang_counts_for_nothing() {
    let f = Fixture::calc();
    let forge = "import os, pathlib, time\n\n\ndef pytest_sessionfinish(session):\n    \
                 xml = session.config.option.xmlpath\n    \
                 cases = ''.join('<testcase classname=\"tests.test_errors\" name=\"%s\"/>' % n \
                 for n in ('test_divide_by_zero_raises', 'test_mean_of_nothing_raises'))\n    \
                 pathlib.Path(xml).write_text('<testsuite>%s</testsuite>' % cases)\n    \
                 time.sleep(600)\n";
    let patch = f.diff_of("forge.diff", &[("conftest.py", forge)]);
    let v = f.run(&calc_args(&patch).flag("--timeout", "8s")).json();
    assert_eq!(v["aborted"]["reason"], "timed-out", "{v:#}");
    assert_eq!(v["f2p"]["passing"], 0, "{v:#}");
    // The forged passes were read, and set aside.
    for id in CALC_F2P {
        assert!(
            graded(&v, id)["message"]
                .as_str()
                .is_some_and(|m| m.contains("reported passing by a run cut short")),
            "{v:#}"
        );
    }
    assert_eq!(v["outcome"], "regression", "{v:#}");
}

#[test]
fn a_setup_only_the_candidate_breaks_is_graded() {
    let f = Fixture::calc();
    let patch = calc_with(&f, "syntax.diff", "def broken(:\n");
    let run = f.run(&calc_args(&patch).flag("--setup-cmd", "python -m compileall -q calc.py"));
    let v = run.json();
    assert_eq!(v["outcome"], "regression", "{v:#}");
    assert_eq!(v["aborted"]["reason"], "setup-failed");
    assert!(
        v["aborted"]["message"].as_str().is_some_and(|m| m
            .contains("setup command exited with code 1")
            && m.contains("SyntaxError")),
        "{v:#}"
    );
    assert_not_run(&v, "setup-failed");
}

/// Without a baseline nothing shows that the same run works without the patch: an error that
/// says so, and `batch --retry-errors` grades it again; with one, a graded outcome it leaves.
#[test]
fn without_a_baseline_a_crash_cannot_be_blamed_on_the_patch() {
    let f = Fixture::calc();
    let crash = calc_with(&f, "crash.diff", "import os\nos._exit(1)\n");
    let run = f.run(
        &calc_args(&crash)
            .flag("--baseline", "skip")
            .arg("--no-cache"),
    );
    let v = run.json();
    assert_eq!(
        (v["outcome"].as_str(), run.code),
        (Some("error"), 3),
        "{v:#}"
    );
    assert_eq!(v["error"]["cause"], "no-report");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("cannot tell whether the patch or the environment")),
        "{v:#}"
    );
    assert!(v.get("aborted").is_none());
}

#[test]
fn a_batch_counts_crashes_by_outcome_and_retry_errors_leaves_them() {
    let f = Fixture::calc();
    let crash = calc_with(&f, "crash.diff", "import os\nos._exit(1)\n");
    let task = |id: &str| {
        serde_json::json!({
            "instance_id": id,
            "repo": "example/calc",
            "repo_path": f.repo,
            "base_commit": "HEAD",
            "runner": "pytest",
            "test_patch": std::fs::read_to_string(example("patches/hidden-tests.diff")).unwrap(),
            "FAIL_TO_PASS": serde_json::to_string(&CALC_F2P).unwrap(),
            "PASS_TO_PASS": serde_json::to_string(&CALC_P2P).unwrap(),
        })
        .to_string()
    };
    let tasks = f.scratch_file(
        "tasks.jsonl",
        &format!("{}\n{}\n", task("calc-crash"), task("calc-ok")),
    );
    let pred = |id: &str, text: String| {
        serde_json::json!({"instance_id": id, "model_name_or_path": "m", "model_patch": text})
            .to_string()
    };
    let preds = f.scratch_file(
        "preds.jsonl",
        &format!(
            "{}\n{}\n",
            pred("calc-crash", std::fs::read_to_string(&crash).unwrap()),
            pred(
                "calc-ok",
                std::fs::read_to_string(example("patches/resolved.diff")).unwrap()
            )
        ),
    );
    let out = f.scratch.join("run");
    let batch = |more: &[&str]| {
        let mut args: Vec<std::ffi::OsString> = vec![
            "batch".into(),
            "--tasks".into(),
            tasks.clone().into(),
            "--predictions".into(),
            preds.clone().into(),
            "--out".into(),
            out.clone().into(),
            "--runner".into(),
            "pytest".into(),
        ];
        args.extend(more.iter().map(Into::into));
        let run = f.run(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
    };
    batch(&[]);
    let result = out.join("results/calc-crash.json");
    let first = std::fs::read(&result).expect("result");
    let report = f.run(&["report".as_ref(), out.as_os_str()]);
    assert!(
        report
            .stdout
            .contains("Runs the patch cut short (graded against it, counted by their outcome): crashed 1 (calc-crash)"),
        "{}",
        report.stdout
    );
    let json = f
        .run(&[
            "report".as_ref(),
            out.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ])
        .json();
    assert_eq!(
        json["by_outcome"]["regression"],
        serde_json::json!(["calc-crash"]),
        "{json:#}"
    );
    assert_eq!(
        json["cut_short"]["crashed"],
        serde_json::json!(["calc-crash"])
    );
    batch(&["--resume", "--retry-errors"]);
    assert_eq!(
        std::fs::read(&result).expect("result"),
        first,
        "graded again"
    );
}
