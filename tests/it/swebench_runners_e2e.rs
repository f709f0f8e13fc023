//! Django's and sympy's own runners on their real suites (the source distributions on PyPI,
//! `scripts/projects-env`), graded from the ids as SWE-bench's datasets write them, with real
//! upstream fixes (`fixtures/projects/django-4.2.10`, `sympy-1.7`); and what SWE-bench's own
//! harness (the `swebench` package) makes of the same runs' logs.

use crate::setup::*;
use patchgrade::{FromReports, IdSyntax, Outcome, Scoring};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The projects and the interpreter with their test dependencies (`scripts/projects-env`), or
/// a skip.
fn projects() -> Option<(PathBuf, PathBuf)> {
    let dir = std::env::var_os("PATCHGRADE_PROJECTS").map(PathBuf::from);
    match dir {
        Some(d) if d.join("venv/bin/python").is_file() => {
            let python = d.join("venv/bin/python");
            Some((d, python))
        }
        _ => {
            skip("Django's and sympy's sources are not here (scripts/projects-env)");
            None
        }
    }
}

fn fixture(project: &str, file: &str) -> PathBuf {
    root().join("fixtures/projects").join(project).join(file)
}

/// Django 4.2.10's package with the part of its suite these tests run: `runtests.py`, the
/// SQLite settings SWE-bench runs with, the root URLconf, and `humanize_tests`.
fn django(projects: &Path) -> Fixture {
    let src = projects.join("Django-4.2.10");
    let f = Fixture::empty();
    for dir in ["django", "tests/humanize_tests"] {
        std::fs::create_dir_all(f.repo.join(dir)).expect("mkdir");
    }
    copy_dir(&src.join("django"), &f.repo.join("django"));
    for file in ["runtests.py", "test_sqlite.py", "urls.py"] {
        std::fs::copy(
            src.join("tests").join(file),
            f.repo.join("tests").join(file),
        )
        .expect("copy");
    }
    copy_dir(
        &src.join("tests/humanize_tests"),
        &f.repo.join("tests/humanize_tests"),
    );
    std::fs::copy(src.join("LICENSE"), f.repo.join("LICENSE")).expect("copy");
    commit_all(&f);
    f
}

/// sympy 1.7's package, whole.
fn sympy(projects: &Path) -> Fixture {
    let src = projects.join("sympy-1.7");
    let f = Fixture::empty();
    std::fs::create_dir_all(f.repo.join("sympy")).expect("mkdir");
    copy_dir(&src.join("sympy"), &f.repo.join("sympy"));
    std::fs::copy(src.join("LICENSE"), f.repo.join("LICENSE")).expect("copy");
    commit_all(&f);
    f
}

fn commit_all(f: &Fixture) {
    git(&f.repo, &["init", "--quiet"]);
    git(&f.repo, &["add", "--all"]);
    git(&f.repo, &["commit", "--quiet", "-m", "base"]);
}

/// Django's fix of ticket #35172 (4.2.11: `intcomma` gave a leading comma), as a SWE-bench
/// row would hold it for version 4.2 (Python 3.9: `test_x (module.Class)`; a test with a
/// docstring by its first line), one id in Python 3.11's form.
fn django_row(f: &Fixture) -> Value {
    let p2p = [
        "test_apnumber (humanize_tests.tests.HumanizeTests)",
        "Allow html in output on i18n strings",
        "test_i18n_intcomma (humanize_tests.tests.HumanizeTests)",
        "test_i18n_intword (humanize_tests.tests.HumanizeTests)",
        "Translation of '%d day'/'%d month'/… may differ depending on the context",
        "test_intcomma_without_number_grouping (humanize_tests.tests.HumanizeTests)",
        "test_intword (humanize_tests.tests.HumanizeTests)",
        "test_l10n_intcomma (humanize_tests.tests.HumanizeTests)",
        "test_naturalday (humanize_tests.tests.HumanizeTests)",
        "test_naturalday_tz (humanize_tests.tests.HumanizeTests)",
        "test_naturalday_uses_localtime (humanize_tests.tests.HumanizeTests)",
        "test_naturaltime (humanize_tests.tests.HumanizeTests.test_naturaltime)",
        "#23340 -- Verify the documented behavior of humanize.naturaltime.",
        "test_ordinal (humanize_tests.tests.HumanizeTests)",
    ];
    json!({
        "instance_id": "django__django-35172",
        "repo": "django/django",
        "version": "4.2",
        "base_commit": head(f),
        "test_patch": read(&fixture("django-4.2.10", "test.patch")),
        "FAIL_TO_PASS": json!(["test_intcomma (humanize_tests.tests.HumanizeTests)"]).to_string(),
        "PASS_TO_PASS": json!(p2p).to_string(),
    })
}

/// SWE-bench's sympy__sympy-20590 (Symbol instances had a `__dict__` since 1.7), its fix from
/// 1.7.1, its lists as SWE-bench's parser reads sympy's log: bare names, and not the file's
/// last test, whose line ends with `[OK]`.
fn sympy_row(f: &Fixture) -> Value {
    let p2p = [
        "test__aresame",
        "test_structure",
        "test_equality",
        "test_matches_basic",
        "test_has",
        "test_subs",
        "test_subs_with_unicode_symbols",
        "test_atoms",
        "test_free_symbols_empty",
        "test_doit",
        "test_S",
        "test_xreplace",
        "test_preorder_traversal",
        "test_sorted_args",
        "test_call",
        "test_rewrite",
        "test_literal_evalf_is_number_is_zero_is_comparable",
        "test_as_Basic",
        "test_atomic",
        "test_as_dummy",
        "test_canonical_variables",
    ];
    json!({
        "instance_id": "sympy__sympy-20590",
        "repo": "sympy/sympy",
        "version": "1.7",
        "base_commit": head(f),
        "test_patch": read(&fixture("sympy-1.7", "test.patch")),
        "FAIL_TO_PASS": json!(["test_immutable"]).to_string(),
        "PASS_TO_PASS": json!(p2p).to_string(),
    })
}

fn head(f: &Fixture) -> String {
    let out = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .current_dir(&f.repo)
        .output()
        .expect("git runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// `check --swebench` of a patch against a row, its runs kept.
fn check(f: &Fixture, row: &Value, patch: &Path, keep: &Path, extra: &[&str]) -> Value {
    let task = f.scratch_file("row.json", &row.to_string());
    let run = f.run(
        &CheckArgs::new()
            .task(&task)
            .arg("--swebench")
            .patch(patch)
            .json()
            .flag("--keep", keep)
            .arg("--no-cache")
            .args(extra),
    );
    run.json()
}

fn ids(row: &Value, key: &str) -> Vec<String> {
    serde_json::from_str(row[key].as_str().expect("encoded list")).expect("ids")
}

fn effects(v: &patchgrade::Verdict, want: &[&str]) -> BTreeSet<String> {
    v.tests
        .iter()
        .filter(|t| {
            let e = serde_json::to_value(t.effect).expect("effect");
            want.iter().any(|w| e == *w)
        })
        .map(|t| t.id.clone())
        .collect()
}

/// SWE-bench's grading of a kept run's log (its runner's output, both streams) against the
/// row, beside patchgrade's grading of the run's JUnit with SWE-bench's scoring: the same flag
/// and the same lists.
fn agree_with_swebench(python: &Path, f: &Fixture, row: &Value, keep: &Path, syntax: IdSyntax) {
    let log =
        |name: &str| std::fs::read_to_string(keep.join("candidate").join(name)).unwrap_or_default();
    let output = format!(
        ">>>>> Start Test Output\n{}{}\n>>>>> End Test Output\n",
        log("test.stderr.log"),
        log("test.stdout.log")
    );
    let log_file = f.scratch_file("test_output.txt", &output);
    // SWE-bench matches ids as its log prints them: here Python 3.11's form, in which Django's
    // runner printed them (patchgrade takes either form).
    let row = &as_printed(row);
    let mut plain = row.clone();
    plain["FAIL_TO_PASS"] = json!(ids(row, "FAIL_TO_PASS"));
    plain["PASS_TO_PASS"] = json!(ids(row, "PASS_TO_PASS"));
    let rows = f.scratch_file("rows.json", &json!([plain]).to_string());
    let reports =
        crate::swebench_e2e::harness(python, &[Path::new("grade"), &rows, &log_file], &f.repo);
    let theirs = &reports[0][row["instance_id"].as_str().unwrap()];
    let ours = FromReports {
        junit: vec![keep.join("candidate/out/junit.xml")],
        base_junit: Vec::new(),
        f2p: ids(row, "FAIL_TO_PASS"),
        p2p: ids(row, "PASS_TO_PASS"),
        ids: syntax,
        instance_id: None,
        scoring: Scoring::Swebench,
    }
    .run()
    .expect("grades");
    assert_eq!(
        ours.outcome == Outcome::Resolved,
        theirs["resolved"],
        "{ours:#?}\n{theirs:#}"
    );
    let status = &theirs["tests_status"];
    let set = |v: &Value| -> BTreeSet<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        effects(&ours, &["fixed"]),
        set(&status["FAIL_TO_PASS"]["success"])
    );
    assert_eq!(
        effects(&ours, &["not-fixed"]),
        set(&status["FAIL_TO_PASS"]["failure"])
    );
    assert_eq!(
        effects(&ours, &["kept"]),
        set(&status["PASS_TO_PASS"]["success"])
    );
    assert_eq!(
        effects(&ours, &["broken"]),
        set(&status["PASS_TO_PASS"]["failure"])
    );
}

/// A row's Django ids in Python 3.11's form, `test_x (module.Class.test_x)`.
fn as_printed(row: &Value) -> Value {
    let mut row = row.clone();
    for key in ["FAIL_TO_PASS", "PASS_TO_PASS"] {
        let new: Vec<String> = ids(&row, key)
            .into_iter()
            .map(
                |id| match id.strip_suffix(')').and_then(|i| i.split_once(" (")) {
                    Some((name, class)) if !class.ends_with(&format!(".{name}")) => {
                        format!("{name} ({class}.{name})")
                    }
                    _ => id,
                },
            )
            .collect();
        row[key] = json!(json!(new).to_string());
    }
    row
}

fn graded_status(v: &Value, id: &str) -> (String, String) {
    let t = graded(v, id);
    (
        t["status"].as_str().unwrap_or_default().to_string(),
        t["effect"].as_str().unwrap_or_default().to_string(),
    )
}

/// Every listed id names a test that ran: none is missing, none ambiguous.
fn all_found(v: &Value) {
    for t in v["tests"].as_array().expect("tests") {
        assert_ne!(t["status"], "missing", "{t:#}");
    }
    assert!(warning(v, "ambiguous-id").is_none(), "{v:#}");
    assert!(warning(v, "f2p-missing").is_none(), "{v:#}");
}

/// A project's real fix and its regression patch checked against its row with `--swebench`;
/// where SWE-bench's harness is installed, its grading of the same runs' logs agrees.
fn fix_and_regression(
    f: &Fixture,
    row: &Value,
    project: &str,
    python: &Path,
    syntax: IdSyntax,
) -> (Value, Value) {
    let py = ["--python", python.to_str().unwrap()];
    let (fixed, broken) = (f.scratch.join("fixed"), f.scratch.join("broken"));
    let v = check(f, row, &fixture(project, "fix.patch"), &fixed, &py);
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    all_found(&v);
    assert_eq!(v["task"]["ids"], syntax.name());
    let r = check(f, row, &fixture(project, "regression.patch"), &broken, &py);
    assert_eq!(r["outcome"], "regression", "{r:#}");
    if let Some(swebench) = swebench_python() {
        agree_with_swebench(&swebench, f, row, &fixed, syntax);
        agree_with_swebench(&swebench, f, row, &broken, syntax);
    }
    (v, r)
}

#[test]
fn django_ids_as_swebench_writes_them_grade_a_real_fix_and_a_regression() {
    let Some((projects, python)) = projects() else {
        return;
    };
    let f = django(&projects);
    let row = django_row(&f);
    let (v, r) = fix_and_regression(&f, &row, "django-4.2.10", &python, IdSyntax::Django);
    assert_eq!(
        graded(&v, "test_intcomma (humanize_tests.tests.HumanizeTests)")["base_status"],
        "failed"
    );
    // The docstring's first line names its test, and both forms of a name name one.
    assert_eq!(
        graded_status(&v, "Allow html in output on i18n strings"),
        ("passed".into(), "kept".into())
    );
    assert_eq!(
        graded_status(
            &v,
            "test_naturaltime (humanize_tests.tests.HumanizeTests.test_naturaltime)"
        ),
        ("passed".into(), "kept".into())
    );
    // SWE-bench's command, through its runner and settings.
    let command = v["runs"]["candidate"]["command"].as_str().unwrap();
    assert!(
        command.contains("./tests/runtests.py --verbosity 2 --settings=patchgrade_django_settings --parallel 1 humanize_tests.tests"),
        "{command}"
    );
    assert_eq!(
        graded_status(&r, "test_apnumber (humanize_tests.tests.HumanizeTests)"),
        ("error".into(), "broken".into()),
        "{r:#}"
    );
}

#[test]
fn sympy_ids_as_swebench_writes_them_grade_a_real_fix_and_a_regression() {
    let Some((projects, python)) = projects() else {
        return;
    };
    let f = sympy(&projects);
    let row = sympy_row(&f);
    let (v, r) = fix_and_regression(&f, &row, "sympy-1.7", &python, IdSyntax::Sympy);
    assert_eq!(graded(&v, "test_immutable")["base_status"], "failed");
    let command = v["runs"]["candidate"]["command"].as_str().unwrap();
    assert!(
        command.contains("patchgrade_sympy.py\" sympy/core/tests/test_basic.py"),
        "{command}"
    );
    assert_eq!(
        graded_status(&r, "test_atomic"),
        ("failed".into(), "broken".into())
    );
}

/// A name two test files share is ambiguous, and said so, when both files ran.
#[test]
fn a_sympy_name_in_two_files_is_ambiguous() {
    let Some((projects, python)) = projects() else {
        return;
    };
    let f = sympy(&projects);
    let test = "from sympy import S\n\n\ndef test_same():\n    assert S(1) == 1\n\n\ndef test_other():\n    pass\n";
    f.commit(
        &[
            ("sympy/core/tests/test_twin_a.py", test),
            ("sympy/core/tests/test_twin_b.py", test),
        ],
        "twins",
    );
    let patch = f.scratch_file(
        "touch.diff",
        "--- a/sympy/core/tests/test_twin_a.py\n+++ b/sympy/core/tests/test_twin_a.py\n@@ -1,3 +1,4 @@\n from sympy import S\n+# touched\n \n \n",
    );
    let v = f
        .run(
            &CheckArgs::new()
                .runner("sympy")
                .flag("--python", &python)
                .patch(&patch)
                .test_patch(f.scratch_file(
                    "both.diff",
                    "--- a/sympy/core/tests/test_twin_a.py\n+++ b/sympy/core/tests/test_twin_a.py\n@@ -1,3 +1,4 @@\n from sympy import S\n+# a\n \n \n--- a/sympy/core/tests/test_twin_b.py\n+++ b/sympy/core/tests/test_twin_b.py\n@@ -1,3 +1,4 @@\n from sympy import S\n+# b\n \n \n",
                ))
                .p2p("test_same")
                .json()
                .arg("--no-cache"),
        )
        .json();
    let w = warning(&v, "ambiguous-id").unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(w["tests"], json!(["test_same"]));
}

/// In a container, as with SWE-bench's images: the runner's files are mounted read-only into
/// it, and the image's interpreter runs them.
#[test]
fn sympy_grades_inside_a_container() {
    let Some((projects, _)) = projects() else {
        return;
    };
    if !crate::sandbox_e2e::require_image("docker") {
        return;
    }
    let f = sympy(&projects);
    let row = sympy_row(&f);
    let extra = [
        "--sandbox",
        "docker",
        "--image",
        crate::sandbox_e2e::IMAGE,
        "--python",
        "/usr/bin/python3",
    ];
    let v = check(
        &f,
        &row,
        &fixture("sympy-1.7", "fix.patch"),
        &f.scratch.join("a"),
        &extra,
    );
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    assert_eq!(v["isolation"]["sandbox"], "docker");
    let r = check(
        &f,
        &row,
        &fixture("sympy-1.7", "regression.patch"),
        &f.scratch.join("b"),
        &extra,
    );
    assert_eq!(r["outcome"], "regression", "{r:#}");
}

/// The guide's walk-through (docs/guide/src/swebench.md): a dataset and a predictions file, each repository's clone and
/// each version's interpreter in the config, `batch --swebench`, then the nine outcomes.
#[test]
fn a_dataset_of_django_and_sympy_instances_is_graded_with_swebench_commands() {
    let Some((projects, python)) = projects() else {
        return;
    };
    let dj = django(&projects);
    let sy = sympy(&projects);
    let rows = [django_row(&dj), sympy_row(&sy)];
    let dataset = dj.scratch_file(
        "dataset.jsonl",
        &rows
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let predictions = dj.scratch_file(
        "predictions.jsonl",
        &[
            json!({"instance_id": "django__django-35172", "model_name_or_path": "agent",
                   "model_patch": read(&fixture("django-4.2.10", "fix.patch"))}),
            json!({"instance_id": "sympy__sympy-20590", "model_name_or_path": "agent",
                   "model_patch": read(&fixture("sympy-1.7", "regression.patch"))}),
        ]
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n"),
    );
    let config = dj.scratch_file(
        "patchgrade.toml",
        &format!(
            "[repos.\"django/django\"]\npath = \"{}\"\n[repos.\"django/django\".versions.\"4.2\"]\npython = \"{py}\"\n\
             [repos.\"sympy/sympy\"]\npath = \"{}\"\n[repos.\"sympy/sympy\".versions.\"1.7\"]\npython = \"{py}\"\n",
            dj.repo.display(),
            sy.repo.display(),
            py = python.display()
        ),
    );
    let out = dj.scratch.join("run");
    let before = sy.snapshot();
    let batch = dj.run(&[
        "batch".as_ref(),
        "--tasks".as_ref(),
        dataset.as_os_str(),
        "--predictions".as_ref(),
        predictions.as_os_str(),
        "--config".as_ref(),
        config.as_os_str(),
        "--swebench".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert_eq!(batch.code, 0, "{}", batch.stderr);
    let report = dj.run(&[
        "report".as_ref(),
        out.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]);
    let s = report.json();
    assert_eq!(
        s["by_outcome"]["resolved"],
        json!(["django__django-35172"]),
        "{s:#}"
    );
    assert_eq!(
        s["by_outcome"]["regression"],
        json!(["sympy__sympy-20590"]),
        "{s:#}"
    );
    sy.assert_untouched(&before);
}
