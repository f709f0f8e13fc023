//! SWE-bench parity: the same runs graded by patchgrade and by SWE-bench's own harness (the
//! `swebench` package from PyPI, driven by `tests/swebench/harness.py`), and compared:
//! `--scoring swebench`, `report --format swebench` and `import swebench`.

use crate::setup::*;
use patchgrade::{FromReports, IdSyntax, Outcome, Scoring};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A test file whose tests cover every rule the two scorings differ by: an xfail, a skip, a
/// test that fails at base and after, and parameters that SWE-bench's ids cut at a space.
const TESTS: &str = r#"import pytest
from calc import f


def test_fixed():
    assert f() == 1


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert f() == 2


@pytest.mark.skip(reason="later")
def test_skipped():
    pass


def test_broken_at_base():
    assert False, "always"


@pytest.mark.parametrize("v", ["a b", "a c", "z"])
def test_param(v):
    assert v != "a c" or f() == 1


def test_kept():
    assert f() < 3
"#;

const IDS: [&str; 6] = [
    "tests/test_calc.py::test_fixed",
    "tests/test_calc.py::test_xfail",
    "tests/test_calc.py::test_skipped",
    "tests/test_calc.py::test_broken_at_base",
    // As SWE-bench's datasets write `test_param[a b]` and `test_param[a c]`: cut at the space.
    "tests/test_calc.py::test_param[a",
    "tests/test_calc.py::test_kept",
];

/// pytest as SWE-bench runs it (`-rA`), writing JUnit as well: one run, both graders' input.
const RA: &str =
    "python -m pytest -rA -p no:cacheprovider --rootdir={workdir} --junitxml={junit} {tests}";

/// SWE-bench's repository and version whose log parser reads these runs (pytest's `-rA`).
const REPO: &str = "pytest-dev/pytest";
const VERSION: &str = "5.4";

/// The candidates: `calc.f` returning each value (0 is the base). Not 2, which makes the
/// xfail pass: pytest's JUnit writes an unexpected pass as a pass, and SWE-bench's log parser
/// does not read `XPASS` (the one difference the guide lists as not reproduced).
const PATCHES: [(&str, &str); 3] = [("fix", "1"), ("worse", "7"), ("none", "0")];

fn project() -> Fixture {
    require_pytest();
    Fixture::with_files(&[
        ("calc.py", "def f():\n    return 0\n"),
        ("tests/test_calc.py", TESTS),
    ])
}

/// A patch making `f` return `value` (or only adding a comment, for "0").
fn patch(f: &Fixture, name: &str, value: &str) -> PathBuf {
    let new = if value == "0" {
        "    # unchanged\n    return 0".to_string()
    } else {
        format!("    return {value}")
    };
    let lines = new.lines().count();
    f.scratch_file(
        &format!("{name}.diff"),
        &format!(
            "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,{} @@\n def f():\n-    return 0\n{}\n",
            lines + 1,
            new.lines()
                .map(|l| format!("+{l}"))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    )
}

/// Every test run once after the patch (and at base), the runs kept: their `-rA` logs and
/// JUnit reports.
fn run_kept(f: &Fixture, patch: &Path, keep: &Path, scoring: &str) -> Value {
    run_kept_with(f, patch, keep, scoring, &[])
}

/// [`run_kept`] with more flags.
fn run_kept_with(f: &Fixture, patch: &Path, keep: &Path, scoring: &str, more: &[&str]) -> Value {
    let run = f.run(
        &CheckArgs::new()
            .args(more)
            .runner("pytest")
            .test_cmd(RA)
            .patch(patch)
            .f2p_all(&IDS[..2])
            .p2p_all(&IDS[2..])
            .json()
            .flag("--keep", keep)
            .flag("--scoring", scoring)
            .arg("--no-cache"),
    );
    run.json()
}

/// The candidate's log as SWE-bench's eval script frames it.
fn test_output(keep: &Path) -> String {
    let log = std::fs::read_to_string(keep.join("candidate/test.stdout.log")).expect("log");
    format!(">>>>> Start Test Output\n{log}\n>>>>> End Test Output\n")
}

/// `tests/swebench/harness.py` (SWE-bench's own grading code) run with `args`: its JSON.
pub(crate) fn harness(python: &Path, args: &[&Path], cwd: &Path) -> Value {
    helper_json(
        Command::new(python)
            .arg(root().join("tests/swebench/harness.py"))
            .args(args)
            .current_dir(cwd),
    )
}

fn row(id: &str, f2p: &[&str], p2p: &[&str]) -> Value {
    json!({
        "instance_id": id,
        "repo": REPO,
        "version": VERSION,
        "FAIL_TO_PASS": f2p,
        "PASS_TO_PASS": p2p,
    })
}

/// Every task these tests can make: each test F2P, P2P or not listed, with at least one F2P.
fn variants() -> Vec<(Vec<&'static str>, Vec<&'static str>)> {
    let mut out = Vec::new();
    for code in 0..3usize.pow(IDS.len() as u32) {
        let (mut f2p, mut p2p) = (Vec::new(), Vec::new());
        let mut c = code;
        for id in IDS {
            match c % 3 {
                1 => f2p.push(id),
                2 => p2p.push(id),
                _ => {}
            }
            c /= 3;
        }
        if !f2p.is_empty() {
            out.push((f2p, p2p));
        }
    }
    out
}

fn set(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .expect("list")
        .iter()
        .map(|s| s.as_str().expect("id").to_string())
        .collect()
}

/// The tests of a verdict whose effect is one of `effects`, under the verdict's scoring.
fn with_effect(v: &patchgrade::Verdict, effects: &[&str]) -> BTreeSet<String> {
    v.tests
        .iter()
        .filter(|t| {
            let e = serde_json::to_value(t.effect).expect("effect");
            effects.iter().any(|want| e == *want)
        })
        .map(|t| t.id.clone())
        .collect()
}

#[test]
fn swebench_scoring_agrees_with_swebench_grading_on_every_task_of_these_runs() {
    let Some(python) = swebench_python() else {
        return;
    };
    let f = project();
    let variants = variants();
    let rows: Vec<Value> = variants
        .iter()
        .enumerate()
        .map(|(i, (f2p, p2p))| row(&format!("v{i}"), f2p, p2p))
        .collect();
    let rows_file = f.scratch_file("rows.json", &rows_json(&rows));
    let mut differing = 0;
    for (name, value) in PATCHES {
        let keep = f.scratch.join(format!("keep-{name}"));
        let checked = run_kept(&f, &patch(&f, name, value), &keep, "swebench");
        assert_eq!(checked["scoring"], "swebench", "{checked:#}");
        let log = f.scratch_file(&format!("{name}.log"), &test_output(&keep));
        let reports = harness(&python, &[Path::new("grade"), &rows_file, &log], &f.scratch);
        let junit = vec![keep.join("candidate/out/junit.xml")];
        let base = vec![keep.join("baseline/out/junit.xml")];
        for (i, (f2p, p2p)) in variants.iter().enumerate() {
            let theirs = &reports[i][format!("v{i}")];
            let grade = |scoring, base_junit: &[PathBuf]| {
                FromReports {
                    junit: junit.clone(),
                    base_junit: base_junit.to_vec(),
                    f2p: f2p.iter().map(|s| s.to_string()).collect(),
                    p2p: p2p.iter().map(|s| s.to_string()).collect(),
                    ids: IdSyntax::Pytest,
                    instance_id: None,
                    scoring,
                }
                .run()
                .expect("grades")
            };
            let at = format!("{name}, F2P {f2p:?}, P2P {p2p:?}");
            // SWE-bench's scoring: its flag and its lists, test for test.
            let ours = grade(Scoring::Swebench, &[]);
            assert_eq!(
                ours.outcome == Outcome::Resolved,
                theirs["resolved"],
                "{at}: {ours:#?}\n{theirs:#}"
            );
            let status = &theirs["tests_status"];
            for (axis, pass, fail) in [
                ("FAIL_TO_PASS", "fixed", "not-fixed"),
                ("PASS_TO_PASS", "kept", "broken"),
            ] {
                assert_eq!(
                    with_effect(&ours, &[pass]),
                    set(&status[axis]["success"]),
                    "{at}: {axis} success"
                );
                assert_eq!(
                    with_effect(&ours, &[fail]),
                    set(&status[axis]["failure"]),
                    "{at}: {axis} failure"
                );
            }
            // patchgrade's own scoring, with its baseline, records SWE-bench's flag where its
            // own differs, and says why.
            let own = grade(Scoring::Patchgrade, &base);
            let recorded = own
                .swebench_resolved
                .unwrap_or(own.outcome == Outcome::Resolved);
            assert_eq!(recorded, theirs["resolved"], "{at}: {own:#?}");
            if own.outcome != ours.outcome {
                differing += 1;
                let other = own.other_scoring.as_ref().expect("the other grade");
                assert_eq!(other.outcome, ours.outcome, "{at}");
                assert!(!other.rules.is_empty(), "{at}");
            } else {
                assert!(own.other_scoring.is_none(), "{at}");
            }
        }
    }
    // The runs exercise the differences, not only the agreements.
    assert!(differing > 100, "only {differing} tasks graded differently");
}

fn rows_json(rows: &[Value]) -> String {
    serde_json::to_string(rows).expect("JSON")
}

/// The rule behind each difference, on one task that has them all.
#[test]
fn each_difference_is_named_by_its_rule() {
    require_pytest();
    let f = project();
    let keep = f.scratch.join("keep");
    let v = run_kept(&f, &patch(&f, "fix", "1"), &keep, "patchgrade");
    assert_eq!(v["outcome"], "partially-resolved", "{v:#}");
    assert_eq!(v["scoring"], "patchgrade");
    assert_eq!(v["swebench_resolved"], Value::Null, "neither resolves");
    let other = &v["other_scoring"];
    assert_eq!(other["scoring"], "swebench");
    assert_eq!(other["outcome"], "breaking-resolved");
    let rules: Vec<(String, BTreeSet<String>)> = other["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| (r["rule"].as_str().unwrap().to_string(), set(&r["tests"])))
        .collect();
    let ids = |i: &[usize]| i.iter().map(|&i| IDS[i].to_string()).collect();
    assert_eq!(
        rules,
        [
            ("no-baseline-exclusion".to_string(), ids(&[3, 4])),
            ("skipped-is-absent".to_string(), ids(&[2])),
            ("xfail-passes".to_string(), ids(&[1])),
        ]
    );
    assert_eq!(graded(&v, IDS[1])["other_effect"], "fixed");
    assert_eq!(graded(&v, IDS[2])["other_effect"], "broken");
    assert_eq!(graded(&v, IDS[0]).get("other_effect"), None);
}

/// A dataset of five instances over the project: a fix, a half fix, one whose patch does not
/// apply, an empty prediction, and one without a prediction.
struct Run {
    dataset: PathBuf,
    predictions: PathBuf,
    config: PathBuf,
    spec: Value,
}

fn evaluation(f: &Fixture) -> Run {
    let tasks = [
        ("calc__calc-1", "fix", Some("1")),
        ("calc__calc-2", "half", Some("2")),
        ("calc__calc-3", "stale", None),
        ("calc__calc-4", "empty", Some("")),
        ("calc__calc-5", "absent", Some("")),
    ];
    let mut dataset = Vec::new();
    let mut predictions = Vec::new();
    let mut runs = serde_json::Map::new();
    for (id, name, value) in tasks {
        let mut r = row(id, &IDS[..1], &IDS[4..]);
        r["base_commit"] = json!("HEAD");
        dataset.push(r);
        if name == "absent" {
            continue;
        }
        let text = match value {
            Some("") => String::new(),
            Some(v) => std::fs::read_to_string(patch(f, name, v)).expect("patch"),
            // Written against another version of the file: does not apply.
            None => "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def g():\n-    return 5\n+    return 6\n"
                .to_string(),
        };
        predictions.push(json!({
            "instance_id": id,
            "model_name_or_path": "org/agent-7",
            "model_patch": text,
        }));
        if text.is_empty() {
            continue;
        }
        let run = match value {
            Some(v) => {
                let keep = f.scratch.join(format!("keep-{id}"));
                run_kept(f, &patch(f, name, v), &keep, "swebench");
                json!({ "test_output": test_output(&keep) })
            }
            None => {
                let p = f.scratch_file("stale.diff", &text);
                let out = Command::new("git")
                    .args(["apply", "--verbose", "--check"])
                    .arg(&p)
                    .current_dir(&f.repo)
                    .output()
                    .expect("git runs");
                assert!(!out.status.success());
                json!({ "apply_output": String::from_utf8_lossy(&out.stderr) })
            }
        };
        runs.insert(id.to_string(), run);
    }
    let config = f.scratch_file(
        "patchgrade.toml",
        &format!(
            "[repos.\"{REPO}\"]\npath = \"{}\"\nrunner = \"pytest\"\ntest_cmd = \"{RA}\"\n",
            f.repo.display()
        ),
    );
    let spec = json!({
        "run_id": "run1",
        "dataset": dataset,
        "predictions": predictions,
        "runs": runs,
    });
    Run {
        dataset: f.scratch_file("dataset.json", &rows_json(&dataset)),
        predictions: f.scratch_file("predictions.json", &rows_json(&predictions)),
        config,
        spec,
    }
}

fn pg(f: &Fixture, args: &[&std::ffi::OsStr]) -> crate::setup::Run {
    let run = f.run(args);
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    run
}

#[test]
fn an_evaluation_swebench_ran_is_imported_and_reported_as_swebench_reports_it() {
    let Some(python) = swebench_python() else {
        return;
    };
    let f = project();
    let run = evaluation(&f);
    let logs = f.scratch.join("swebench");
    std::fs::create_dir_all(&logs).expect("mkdir");
    let spec = f.scratch_file("spec.json", &run.spec.to_string());
    let theirs = harness(&python, &[Path::new("evaluate"), &spec], &logs);
    assert_eq!(
        theirs["resolved_ids"],
        json!(["calc__calc-1"]),
        "{theirs:#}"
    );

    // Imported: the nine outcomes of a run graded elsewhere.
    let run_dir = logs.join("logs/run_evaluation/run1");
    let imported = f.scratch.join("imported");
    let os = |s: &Path| s.as_os_str().to_owned();
    pg(
        &f,
        &[
            "import".as_ref(),
            "swebench".as_ref(),
            run_dir.as_os_str(),
            "--out".as_ref(),
            &os(&imported),
            "--tasks".as_ref(),
            &os(&run.dataset),
            "--predictions".as_ref(),
            &os(&run.predictions),
        ],
    );
    let summary = pg(
        &f,
        &[
            "report".as_ref(),
            imported.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
            "--tasks".as_ref(),
            &os(&run.dataset),
        ],
    )
    .json();
    let by = &summary["by_outcome"];
    assert_eq!(by["resolved"], json!(["calc__calc-1"]), "{summary:#}");
    assert_eq!(by["regression"], json!(["calc__calc-2"]));
    assert_eq!(by["patch-failed"], json!(["calc__calc-3"]));
    assert_eq!(by["empty-patch"], json!(["calc__calc-4"]));
    assert_eq!(summary["incomplete"], json!(["calc__calc-5"]));
    assert_eq!(summary["tasks"], 5);
    let half: Value = serde_json::from_slice(
        &std::fs::read(imported.join("results/calc__calc-2.json")).expect("result"),
    )
    .expect("JSON");
    assert_eq!(half["model_name_or_path"], "org/agent-7");
    assert_eq!(half["task"]["repo_name"], REPO);
    assert_eq!(half["scoring"], "swebench");
    assert!(warning(&half, "baseline-skipped").is_some(), "{half:#}");

    // Reported back: SWE-bench's run report and report.json files, field for field.
    let reports = f.scratch.join("reports");
    let ours = pg(
        &f,
        &[
            "report".as_ref(),
            imported.as_os_str(),
            "--format".as_ref(),
            "swebench".as_ref(),
            "--tasks".as_ref(),
            &os(&run.dataset),
            "--instance-reports".as_ref(),
            &os(&reports),
        ],
    )
    .json();
    assert_eq!(ours, theirs);
    for id in ["calc__calc-1", "calc__calc-2"] {
        let read = |p: PathBuf| -> Value {
            serde_json::from_slice(&std::fs::read(&p).expect("report.json")).expect("JSON")
        };
        let original = read(run_dir.join("org__agent-7").join(id).join("report.json"));
        let written = read(reports.join("org__agent-7").join(id).join("report.json"));
        assert_eq!(written, original, "{id}");
    }
    assert!(!reports.join("org__agent-7/calc__calc-3").exists());

    // Graded by patchgrade itself with SWE-bench's scoring: the same run report.
    let graded = f.scratch.join("graded");
    let batch = f.run(&[
        "batch".as_ref(),
        "--tasks".as_ref(),
        run.dataset.as_os_str(),
        "--predictions".as_ref(),
        run.predictions.as_os_str(),
        "--config".as_ref(),
        run.config.as_os_str(),
        "--out".as_ref(),
        graded.as_os_str(),
        "--scoring".as_ref(),
        "swebench".as_ref(),
    ]);
    assert_eq!(batch.code, 0, "{}", batch.stderr);
    let again = pg(
        &f,
        &[
            "report".as_ref(),
            graded.as_os_str(),
            "--format".as_ref(),
            "swebench".as_ref(),
            "--tasks".as_ref(),
            &os(&run.dataset),
        ],
    )
    .json();
    assert_eq!(again, theirs);
}

#[test]
fn an_import_names_what_it_cannot_read() {
    let f = project();
    let empty = f.scratch.join("nothing");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let out = f.scratch.join("out");
    let run = f.run(&[
        "import".as_ref(),
        "swebench".as_ref(),
        empty.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("no SWE-bench evaluation here"),
        "{}",
        run.stderr
    );
    assert!(!out.exists());
    // A report.json that is not one.
    let bad = f.scratch.join("logs/m/x__y-1");
    std::fs::create_dir_all(&bad).expect("mkdir");
    std::fs::write(bad.join("report.json"), "{\"x__y-1\": 3}").expect("write");
    let run = f.run(&[
        "import".as_ref(),
        "swebench".as_ref(),
        f.scratch.join("logs").as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("report.json: not a SWE-bench report.json"),
        "{}",
        run.stderr
    );
    assert!(!out.exists());
}

/// `--swebench` on a pytest repository: SWE-bench's directives (the test patch's test files,
/// not its data files) run whole, an id in another file runs too, and no test runs twice.
#[test]
fn swebench_runs_the_test_patchs_files_whole_with_pytest() {
    let f = project();
    f.commit(
        &[("tests/test_other.py", "def test_elsewhere():\n    pass\n")],
        "other",
    );
    let test_patch = f.scratch_file(
        "tests.diff",
        "--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1,6 @@\n+from calc import f\n+\n+\n+def test_new():\n+    assert f() == 1\n+\n--- /dev/null\n+++ b/tests/data.json\n@@ -0,0 +1 @@\n+{}\n",
    );
    let row = json!({
        "instance_id": "pytest-dev__pytest-1",
        "repo": REPO,
        "version": VERSION,
        "FAIL_TO_PASS": json!(["tests/test_new.py::test_new"]).to_string(),
        "PASS_TO_PASS": json!([IDS[0], "tests/test_other.py::test_elsewhere"]).to_string(),
    });
    let task = f.scratch_file("row.json", &row.to_string());
    let v = f
        .run(
            &CheckArgs::new()
                .task(&task)
                .arg("--swebench")
                .test_patch(&test_patch)
                .patch(patch(&f, "fix", "1"))
                .json(),
        )
        .json();
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    assert!(warning(&v, "ambiguous-id").is_none(), "{v:#}");
    let command = v["runs"]["candidate"]["command"].as_str().unwrap();
    assert!(
        command.ends_with(
            " tests/test_new.py tests/test_calc.py::test_fixed tests/test_other.py::test_elsewhere"
        ),
        "{command}"
    );
    assert!(!command.contains("data.json"), "{command}");
}

/// A candidate that crashes the test command, and one that makes it hang, each graded beside
/// SWE-bench's harness: it grades the crash from a log with no test status in it (every test
/// fails) and writes no report for the hang (its run raises on a timeout). patchgrade, whose
/// baseline ran, grades both against the patch (the attribution rule), and reports them as
/// SWE-bench does.
#[test]
fn a_crash_and_a_hang_are_graded_as_swebench_grades_them() {
    let Some(python) = swebench_python() else {
        return;
    };
    let f = project();
    let crash = f.diff_of(
        "crash.diff",
        &[(
            "calc.py",
            "import os\nos._exit(1)\n\n\ndef f():\n    return 0\n",
        )],
    );
    let hang = f.diff_of(
        "hang.diff",
        &[(
            "calc.py",
            "import time\nwhile True:\n    time.sleep(0.1)\n\n\ndef f():\n    return 0\n",
        )],
    );
    const TIMEOUT: u64 = 4;
    let timeout = format!("{TIMEOUT}s");
    let mut runs = serde_json::Map::new();
    for (name, diff, reason) in [("crash", &crash, "crashed"), ("hang", &hang, "timed-out")] {
        let keep = f.scratch.join(format!("keep-{name}"));
        let v = run_kept_with(&f, diff, &keep, "swebench", &["--timeout", &timeout]);
        assert_eq!(v["outcome"], "regression", "{v:#}");
        assert_eq!(v["aborted"]["reason"], reason, "{v:#}");
        let mut run = json!({ "test_output": test_output(&keep) });
        if name == "hang" {
            run["timed_out"] = json!(TIMEOUT);
        } else {
            // Test for test: SWE-bench's grading of the crashed run's log.
            let rows = f.scratch_file(
                "crash-rows.json",
                &rows_json(&[row("c", &IDS[..2], &IDS[2..])]),
            );
            let log = f.scratch_file("crash.log", &test_output(&keep));
            let theirs = &harness(&python, &[Path::new("grade"), &rows, &log], &f.scratch)[0]["c"];
            assert_eq!(theirs["resolved"], false, "{theirs:#}");
            let ours: patchgrade::Verdict = serde_json::from_value(v.clone()).expect("verdict");
            let status = &theirs["tests_status"];
            for (axis, fail) in [("FAIL_TO_PASS", "not-fixed"), ("PASS_TO_PASS", "broken")] {
                assert_eq!(
                    with_effect(&ours, &[fail]),
                    set(&status[axis]["failure"]),
                    "{axis}"
                );
                assert!(set(&status[axis]["success"]).is_empty(), "{axis}");
            }
            assert!(
                ours.tests
                    .iter()
                    .all(|t| t.status == patchgrade::TestStatus::NotRun),
                "{v:#}"
            );
        }
        runs.insert(format!("calc__{name}"), run);
    }

    // The run report SWE-bench makes of both, and patchgrade's of the same two predictions.
    let dataset: Vec<Value> = ["calc__crash", "calc__hang"]
        .iter()
        .map(|id| {
            let mut r = row(id, &IDS[..2], &IDS[2..]);
            r["base_commit"] = json!("HEAD");
            r
        })
        .collect();
    let predictions: Vec<Value> = [("calc__crash", &crash), ("calc__hang", &hang)]
        .iter()
        .map(|(id, diff)| {
            json!({
                "instance_id": id,
                "model_name_or_path": "org/agent-7",
                "model_patch": std::fs::read_to_string(diff).expect("patch"),
            })
        })
        .collect();
    let spec =
        json!({"run_id": "run1", "dataset": dataset, "predictions": predictions, "runs": runs});
    let logs = f.scratch.join("swebench");
    std::fs::create_dir_all(&logs).expect("mkdir");
    let spec = f.scratch_file("spec.json", &spec.to_string());
    let theirs = harness(&python, &[Path::new("evaluate"), &spec], &logs);
    assert_eq!(theirs["error_ids"], json!(["calc__hang"]), "{theirs:#}");
    assert_eq!(
        theirs["unresolved_ids"],
        json!(["calc__crash"]),
        "{theirs:#}"
    );

    let config = f.scratch_file(
        "patchgrade.toml",
        &format!(
            "[repos.\"{REPO}\"]\npath = \"{}\"\nrunner = \"pytest\"\ntest_cmd = \"{RA}\"\ntimeout = \"{timeout}\"\n",
            f.repo.display()
        ),
    );
    let dataset = f.scratch_file("dataset.json", &rows_json(&dataset));
    let predictions = f.scratch_file("predictions.json", &rows_json(&predictions));
    let graded = f.scratch.join("graded");
    let os = |s: &Path| s.as_os_str().to_owned();
    pg(
        &f,
        &[
            "batch".as_ref(),
            "--tasks".as_ref(),
            &os(&dataset),
            "--predictions".as_ref(),
            &os(&predictions),
            "--config".as_ref(),
            &os(&config),
            "--out".as_ref(),
            &os(&graded),
            "--scoring".as_ref(),
            "swebench".as_ref(),
            "--no-cache".as_ref(),
        ],
    );
    let ours = pg(
        &f,
        &[
            "report".as_ref(),
            graded.as_os_str(),
            "--format".as_ref(),
            "swebench".as_ref(),
            "--tasks".as_ref(),
            &os(&dataset),
        ],
    )
    .json();
    assert_eq!(ours, theirs);
}
