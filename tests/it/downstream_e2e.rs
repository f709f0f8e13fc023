//! `--downstream`: the tests outside a task's lists that exercise what a patch changes, found
//! by coverage at base (cached per task) or by imports, run at base and after, and reported
//! beside the nine outcomes; on a real pytest suite with callers in other modules.

use crate::setup::*;
use serde_json::Value;

/// `pkg.util` and two callers of it that the task's tests never exercise: `pkg.report`
/// (tested by `tests/test_report.py`, which imports only `pkg.report`) and
/// `tests/test_caller.py` (which imports `pkg.util` itself). `tests/test_legacy.py` already
/// fails at base; `tests/test_other.py` touches none of it.
const FILES: &[(&str, &str)] = &[
    ("pkg/__init__.py", ""),
    (
        "pkg/util.py",
        "def normalize(s):\n    return \" \".join(s.split()).lower()\n\n\ndef words(s):\n    return normalize(s).split(\" \")\n",
    ),
    (
        "pkg/report.py",
        "from pkg.util import words\n\n\ndef with_end(s):\n    return words(s) + [\"<end>\"]\n",
    ),
    (
        "tests/test_util.py",
        "from pkg.util import normalize\n\n\ndef test_normalize():\n    assert normalize(\"  A  B \") == \"a b\"\n",
    ),
    (
        "tests/test_report.py",
        "from pkg.report import with_end\n\n\ndef test_with_end():\n    assert with_end(\"a b\") == [\"a\", \"b\", \"<end>\"]\n",
    ),
    (
        "tests/test_caller.py",
        "from pkg import util\n\n\ndef test_words():\n    assert util.words(\"Hello  World\") == [\"hello\", \"world\"]\n",
    ),
    (
        "tests/test_legacy.py",
        "from pkg.util import words\n\n\ndef test_legacy():\n    assert words(\"a\") == \"a\", \"an old expectation\"\n",
    ),
    (
        "tests/test_other.py",
        "def test_other():\n    assert True\n",
    ),
    // A coverage.py that is not there, for the checks told to use it (`PYTHONPATH=nocov`).
    (
        "nocov/coverage/__init__.py",
        "raise ImportError(\"No module named coverage\")\n",
    ),
];

/// The hidden test: `words("")` is `[]`.
const TEST_PATCH: &str = "--- a/tests/test_util.py\n+++ b/tests/test_util.py\n@@ -3,3 +3,7 @@ from pkg.util import normalize\n \n def test_normalize():\n     assert normalize(\"  A  B \") == \"a b\"\n+\n+\n+def test_words_of_nothing():\n+    assert __import__(\"pkg.util\").util.words(\"\") == []\n";

const F2P: &str = "tests/test_util.py::test_words_of_nothing";
const P2P: &str = "tests/test_util.py::test_normalize";

/// `words` returning a tuple: fixes nothing, keeps the task's P2P test, breaks both callers.
const BREAKS_CALLERS: &str = "--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -3,4 +3,4 @@ def normalize(s):\n \n \n def words(s):\n-    return normalize(s).split(\" \")\n+    return tuple(normalize(s).split(\" \"))\n";

/// The fix: splitting on whitespace gives `[]` for nothing, and breaks no caller.
const FIX: &str = "--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -3,4 +3,4 @@ def normalize(s):\n \n \n def words(s):\n-    return normalize(s).split(\" \")\n+    return normalize(s).split()\n";

fn project() -> Fixture {
    require_pytest();
    Fixture::with_files(FILES)
}

fn check(f: &Fixture, patch: &str, extra: &[&str]) -> Value {
    let patch = f.scratch_file("candidate.diff", patch);
    let test_patch = f.scratch_file("tests.diff", TEST_PATCH);
    f.run(
        &CheckArgs::new()
            .runner("pytest")
            .patch(&patch)
            .test_patch(&test_patch)
            .f2p(F2P)
            .p2p(P2P)
            .json()
            .args(extra),
    )
    .json()
}

fn broken(v: &Value) -> Vec<String> {
    v["downstream"]["broken"]
        .as_array()
        .unwrap_or_else(|| panic!("{v:#}"))
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn coverage_finds_the_callers_a_patch_breaks_and_the_outcome_stays_the_tasks() {
    let f = project();
    let v = check(&f, BREAKS_CALLERS, &["--downstream", "auto"]);
    assert_eq!(v["outcome"], "no-op", "{v:#}");
    let d = &v["downstream"];
    assert_eq!(d["method"], "coverage", "{d:#}");
    assert_eq!(
        broken(&v),
        [
            "tests/test_caller.py::test_words",
            "tests/test_report.py::test_with_end"
        ]
    );
    let report = v["downstream"]["broken"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "tests/test_report.py::test_with_end")
        .unwrap();
    assert_eq!(report["base_status"], "passed");
    assert!(
        report["message"]
            .as_str()
            .unwrap()
            .contains("can only concatenate tuple"),
        "{report:#}"
    );
    // Not blamed: already failing at base. Not run: exercises nothing the patch changed.
    assert_eq!(d["broken_at_base"], 1, "{d:#}");
    assert_eq!(d["run"], 3, "{d:#}");
    assert!(warning(&v, "downstream-breakage").is_some(), "{v:#}");
    assert!(
        !v.to_string().contains("test_other"),
        "a test of nothing the patch changed ran: {v:#}"
    );
    // The agent reads the callers first.
    let feedback = f
        .run(
            &CheckArgs::new()
                .runner("pytest")
                .patch(f.scratch.join("candidate.diff"))
                .test_patch(f.scratch.join("tests.diff"))
                .f2p(F2P)
                .p2p(P2P)
                .format("feedback")
                .args(&["--downstream", "auto"]),
        )
        .stdout;
    let callers = feedback.find("outside the task's lists").expect(&feedback);
    let target = feedback.find("Still failing").expect(&feedback);
    assert!(callers < target, "{feedback}");
}

/// Kept as baselines are: only from a sandboxed run.
#[test]
fn the_coverage_map_is_built_once_per_task() {
    if !require_bwrap() {
        return;
    }
    let f = project();
    let first = check(
        &f,
        BREAKS_CALLERS,
        &["--downstream", "coverage", "--sandbox", "bwrap"],
    );
    assert_eq!(first["downstream"].get("map_cached"), None, "{first:#}");
    let again = check(&f, FIX, &["--downstream", "coverage", "--sandbox", "bwrap"]);
    assert_eq!(again["downstream"]["map_cached"], true, "{again:#}");
    assert_eq!(again["outcome"], "resolved", "{again:#}");
    assert_eq!(broken(&again), Vec::<String>::new(), "{again:#}");
}

#[test]
fn counted_as_p2p_a_no_op_that_breaks_callers_is_a_regression() {
    let f = project();
    let v = check(
        &f,
        BREAKS_CALLERS,
        &["--downstream", "auto", "--downstream-counts-as-p2p"],
    );
    assert_eq!(v["outcome"], "regression", "{v:#}");
    assert_eq!(v["downstream"]["counted_as_p2p"], true);
    assert_eq!(
        graded(&v, "tests/test_report.py::test_with_end")["effect"],
        "broken"
    );
    // The caller failing at base is left out of P2P as any test broken at base is.
    assert_eq!(
        graded(&v, "tests/test_legacy.py::test_legacy")["effect"],
        "broken-at-base"
    );
}

#[test]
fn without_coverage_the_importers_are_found_instead() {
    let f = project();
    let v = check(
        &f,
        BREAKS_CALLERS,
        &[
            "--downstream",
            "auto",
            "--env",
            "PYTHONPATH={workdir}/nocov:{workdir}",
        ],
    );
    assert_eq!(v["outcome"], "no-op", "{v:#}");
    let d = &v["downstream"];
    assert_eq!(d["method"], "imports", "{d:#}");
    assert!(
        d["note"]
            .as_str()
            .unwrap()
            .contains("coverage at base could not be built"),
        "{d:#}"
    );
    // The files that import pkg.util itself; not test_report.py, which imports pkg.report.
    assert_eq!(broken(&v), ["tests/test_caller.py::test_words"]);
    assert_eq!(d["broken_at_base"], 1);
    let explicit = check(&f, BREAKS_CALLERS, &["--downstream", "imports"]);
    assert_eq!(explicit["downstream"]["method"], "imports");
    assert_eq!(broken(&explicit), ["tests/test_caller.py::test_words"]);
}

#[test]
fn a_list_of_downstream_tests_and_a_budget() {
    let f = project();
    let list = f.scratch_file(
        "downstream.txt",
        "tests/test_report.py::test_with_end\ntests/test_other.py::test_other\n",
    );
    let v = check(
        &f,
        BREAKS_CALLERS,
        &["--downstream", list.to_str().unwrap()],
    );
    assert_eq!(v["downstream"]["method"], "list");
    assert_eq!(broken(&v), ["tests/test_report.py::test_with_end"]);
    assert_eq!(v["downstream"]["kept"], 1);
    let capped = check(
        &f,
        BREAKS_CALLERS,
        &["--downstream", "coverage", "--downstream-max", "1"],
    );
    let d = &capped["downstream"];
    assert_eq!(
        (d["found"].as_u64(), d["skipped"].as_u64()),
        (Some(3), Some(2)),
        "{d:#}"
    );
    assert_eq!(d["run"], 1);
    // Off is the default: nothing but the task's tests.
    let off = check(&f, BREAKS_CALLERS, &[]);
    assert!(off.get("downstream").is_none(), "{off:#}");
}

/// `report` counts the tasks whose patch broke downstream tests, per outcome: the `no-op`s that
/// were really regressions; `compare` shows it for both runs. `downstream` is a config key.
#[test]
fn report_and_compare_count_downstream_breakage_per_outcome() {
    let f = project();
    let row = serde_json::json!({
        "instance_id": "util-1",
        "repo": "o/util",
        "repo_path": f.repo,
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": [F2P],
        "PASS_TO_PASS": [P2P],
    });
    let tasks = f.scratch_file("tasks.jsonl", &row.to_string());
    let config = f.scratch_file(
        "patchgrade.toml",
        "[defaults]\nrunner = \"pytest\"\ndownstream = \"auto\"\n",
    );
    let mut outs = Vec::new();
    for (name, patch) in [("fixed", FIX), ("broke", BREAKS_CALLERS)] {
        let predictions = f.scratch_file(
            &format!("{name}.jsonl"),
            &serde_json::json!({"instance_id": "util-1", "model_patch": patch}).to_string(),
        );
        let out = f.scratch.join(name);
        let run = f.run(&[
            "batch".as_ref(),
            "--tasks".as_ref(),
            tasks.as_os_str(),
            "--predictions".as_ref(),
            predictions.as_os_str(),
            "--config".as_ref(),
            config.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        outs.push(out);
    }
    let report = |dir: &std::path::Path, format: &str| {
        f.run(&[
            "report".as_ref(),
            dir.as_os_str(),
            "--format".as_ref(),
            format.as_ref(),
        ])
    };
    let s = report(&outs[1], "json").json();
    assert_eq!(
        s["downstream_breakage"],
        serde_json::json!({"no-op": ["util-1"]}),
        "{s:#}"
    );
    assert!(report(&outs[1], "human").stdout.contains(
        "Downstream breakage (tests outside the task's lists broken): 1 task(s) (No-Op 1)"
    ));
    assert_eq!(
        report(&outs[0], "json").json()["downstream_breakage"],
        serde_json::json!({})
    );
    let compare = f.run(&["compare".as_ref(), outs[0].as_os_str(), outs[1].as_os_str()]);
    assert!(
        compare
            .stdout
            .contains("Downstream breakage (tests outside the task's lists): fixed 0, broke 1"),
        "{}",
        compare.stdout
    );
}

/// SWE-bench's `pydicom__pydicom-1413` in shape (`fixtures/projects/pydicom-2.2.0`): a task
/// file as SWE-bench's dataset writes a row, its pytest command, and a Python without
/// coverage.py. A candidate that tidies up `pydicom/util/codify.py` breaks
/// `test_util.py::TestCodify::test_code_imports`, which no listed test covers: found by
/// imports, run, and reported broken; the outcome stays the lists' (`no-op`) unless it is
/// counted as P2P (`regression`). The real fix breaks nothing downstream.
#[test]
fn a_swebench_task_runs_the_dependent_tests_its_imports_find() {
    let Some(projects) = std::env::var_os("PATCHGRADE_PROJECTS").map(std::path::PathBuf::from)
    else {
        skip("pydicom's source is not here (scripts/projects-env)");
        return;
    };
    require_pytest();
    let here = root().join("fixtures/projects/pydicom-2.2.0");
    let f = Fixture::empty();
    copy_dir(&projects.join("pydicom-2.2.0"), &f.repo);
    git(&f.repo, &["init", "--quiet"]);
    git(&f.repo, &["add", "--all"]);
    git(&f.repo, &["commit", "--quiet", "-m", "pydicom 2.2.0"]);
    git(
        &f.repo,
        &["apply", here.join("unfix.patch").to_str().unwrap()],
    );
    git(
        &f.repo,
        &["commit", "--quiet", "-am", "base: before the fix"],
    );
    // The fix: 2.2.0's own code, the reverse of the base's change to dataelem.py.
    let unfix = std::fs::read_to_string(here.join("unfix.patch")).unwrap();
    let dataelem = unfix
        .split("diff --git")
        .find(|d| d.contains("pydicom/dataelem.py"))
        .map(|d| format!("diff --git{d}"))
        .unwrap();
    let reversed = f.scratch_file("unfix-dataelem.patch", &dataelem);
    git(&f.repo, &["apply", "-R", reversed.to_str().unwrap()]);
    let out = std::process::Command::new("git")
        .args(["diff"])
        .current_dir(&f.repo)
        .output()
        .unwrap();
    git(&f.repo, &["checkout", "--quiet", "."]);
    let gold = f.scratch_file("gold.diff", &String::from_utf8_lossy(&out.stdout));

    let valuerep = "pydicom/tests/test_valuerep.py";
    let f2p: Vec<String> = [
        "OD-bytes-vm017-vmN17-DoubleFloatPixelData",
        "OL-bytes-vm019-vmN19-TrackPointIndexList",
        "OV-bytes-vm020-vmN20-SelectorOVValue",
    ]
    .iter()
    .map(|p| format!("{valuerep}::test_assigning_bytes[{p}]"))
    .collect();
    let p2p: Vec<String> = [
        "OB-bytes-vm016-vmN16-FillPattern",
        "OF-bytes-vm018-vmN18-UValueData",
        "OW-bytes-vm021-vmN21-TrianglePointIndexList",
        "UN-bytes-vm033-vmN33-SelectorUNValue",
    ]
    .iter()
    .map(|p| format!("{valuerep}::test_assigning_bytes[{p}]"))
    .collect();
    let row = serde_json::json!({
        "instance_id": "pydicom__pydicom-1413",
        "repo": "pydicom/pydicom",
        "version": "2.2",
        "base_commit": "HEAD",
        "FAIL_TO_PASS": serde_json::to_string(&f2p).unwrap(),
        "PASS_TO_PASS": serde_json::to_string(&p2p).unwrap(),
        "test_patch": std::fs::read_to_string(here.join("test.patch")).unwrap(),
        // SWE-bench's command for pydicom, writing JUnit as well.
        "test_cmd": "pytest -rA --junitxml={junit} {tests}",
    });
    let task = f.scratch_file("pydicom__pydicom-1413.json", &row.to_string());
    // A coverage.py that is not there: the imports are read instead.
    std::fs::create_dir_all(f.scratch.join("nocov/coverage")).unwrap();
    f.scratch_file(
        "nocov/coverage/__init__.py",
        "raise ImportError(\"No module named coverage\")\n",
    );
    let nocov = format!("PYTHONPATH={}", f.scratch.join("nocov").display());
    let before = f.snapshot();
    let grade = |patch: &std::path::Path, more: &[&str]| {
        let args = CheckArgs::new()
            .json()
            .task(&task)
            .patch(patch)
            .flag("--downstream", "auto")
            .flag("--env", &nocov)
            .arg("--no-cache")
            .args(more);
        f.run(&args).json()
    };
    let breaks = here.join("break-codify.patch");
    let v = grade(&breaks, &[]);
    assert_eq!(v["outcome"], "no-op", "{v:#}");
    let d = &v["downstream"];
    assert_eq!(d["method"], "imports", "{d:#}");
    assert!(
        d["note"]
            .as_str()
            .is_some_and(|n| n.contains("coverage at base could not be built")),
        "{d:#}"
    );
    assert!(d["run"].as_u64().unwrap_or(0) > 1, "{d:#}");
    assert_eq!(
        broken(&v),
        ["pydicom/tests/test_util.py::TestCodify::test_code_imports"]
    );
    let counted = grade(&breaks, &["--downstream-counts-as-p2p"]);
    assert_eq!(counted["outcome"], "regression", "{counted:#}");

    let fixed = grade(&gold, &[]);
    assert_eq!(fixed["outcome"], "resolved", "{fixed:#}");
    assert!(
        fixed["downstream"]["run"].as_u64().unwrap_or(0) > 1,
        "{fixed:#}"
    );
    assert!(broken(&fixed).is_empty(), "{fixed:#}");
    f.assert_untouched(&before);
}
