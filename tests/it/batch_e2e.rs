//! The offline harness end to end: `batch` over real tasks (the bundled example's repository,
//! real git, real pytest) with predictions covering every outcome, then `report`, `compare`
//! and `merge` checked against numbers computed by hand.

use crate::setup::{CheckArgs, Fixture, example, helper_json, processes_with, require_bwrap, skip};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::setup::{CALC_F2P as F2P, CALC_P2P as P2P, CALC_PATCHES as PATCHES};

fn patch(name: &str) -> String {
    std::fs::read_to_string(example(&format!("patches/{name}.diff"))).expect("example patch")
}

/// A SWE-bench instance on the example repository, with its lists JSON-encoded as in the
/// dataset.
fn task(id: &str, repo: &Path, extra: Value) -> Value {
    let mut t = json!({
        "instance_id": id,
        "repo": "example/calc",
        "base_commit": "HEAD",
        "test_patch": patch("hidden-tests"),
        "FAIL_TO_PASS": serde_json::to_string(&F2P).unwrap(),
        "PASS_TO_PASS": serde_json::to_string(&P2P).unwrap(),
        "repo_path": repo,
    });
    if let (Value::Object(t), Value::Object(extra)) = (&mut t, extra) {
        t.extend(extra);
    }
    t
}

fn prediction(id: &str, patch_name: &str) -> Value {
    json!({"instance_id": id, "model_name_or_path": "demo", "model_patch": patch(patch_name)})
}

pub(crate) fn jsonl(path: &Path, records: &[Value]) -> PathBuf {
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(path, text).expect("write jsonl");
    path.to_path_buf()
}

/// Tasks for all nine outcomes: the eight example patches under the example task (the runner
/// comes from `--runner`), and a task on another repository whose test command writes no
/// report (`error`).
pub(crate) fn nine_tasks(f: &Fixture) -> (Vec<Value>, Vec<Value>) {
    let mut tasks = Vec::new();
    let mut preds = Vec::new();
    for name in PATCHES {
        let id = format!("calc-{name}");
        tasks.push(task(&id, &f.repo, json!({})));
        preds.push(prediction(&id, name));
    }
    // On a second repository, whose test command writes no report.
    let other = f.scratch.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("README"), "another project\n").unwrap();
    crate::setup::git(&other, &["init", "--quiet"]);
    crate::setup::git(&other, &["add", "--all"]);
    crate::setup::git(&other, &["commit", "--quiet", "-m", "base"]);
    tasks.push(json!({
        "instance_id": "calc-error",
        "repo": "example/other",
        "base_commit": "HEAD",
        "FAIL_TO_PASS": "[\"t.py::test_x\"]",
        "repo_path": other,
        "test_cmd": "echo no report {junit} {tests}",
    }));
    preds.push(json!({"instance_id": "calc-error", "model_patch":
        "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\n-another project\n+a project\n"}));
    (tasks, preds)
}

fn outcomes(out: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(out.join("results"))
        .expect("results dir")
        .flatten()
        .map(|e| {
            let v: Value = serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
            (
                v["task"]["instance_id"].as_str().unwrap().to_string(),
                v["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn expected_nine() -> BTreeMap<String, String> {
    let mut want: BTreeMap<String, String> = PATCHES
        .iter()
        .map(|n| {
            let outcome = if *n == "empty" { "empty-patch" } else { n };
            (format!("calc-{n}"), outcome.to_string())
        })
        .collect();
    want.insert("calc-error".into(), "error".into());
    want
}

fn batch_args(tasks: &Path, preds: &Path, out: &Path, more: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["batch", "--tasks"].map(String::from).to_vec();
    args.push(tasks.display().to_string());
    args.push("--predictions".into());
    args.push(preds.display().to_string());
    args.push("--out".into());
    args.push(out.display().to_string());
    args.extend(["--runner", "pytest"].map(String::from));
    args.extend(more.iter().map(|s| s.to_string()));
    args
}

/// [`nine_tasks`] written as `tasks.jsonl` and `preds.jsonl` in the scratch directory.
pub(crate) fn nine_task_files(f: &Fixture) -> (PathBuf, PathBuf) {
    let (tasks, preds) = nine_tasks(f);
    (
        jsonl(&f.scratch.join("tasks.jsonl"), &tasks),
        jsonl(&f.scratch.join("preds.jsonl"), &preds),
    )
}

pub(crate) fn batch(
    f: &Fixture,
    tasks: &Path,
    preds: &Path,
    out: &Path,
    more: &[&str],
) -> crate::setup::Run {
    let args = batch_args(tasks, preds, out, more);
    f.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn json_of(f: &Fixture, args: &[&str]) -> Value {
    let run = f.run(args);
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    run.json()
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 5e-4)
}

#[test]
fn batch_grades_every_outcome_and_report_counts_them() {
    let f = Fixture::calc();
    let before = f.snapshot();
    let (tasks, preds) = nine_task_files(&f);
    let out = f.scratch.join("run");
    let run = batch(&f, &tasks, &preds, &out, &["--jobs", "2"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(outcomes(&out), expected_nine());
    // Six predictions share one baseline (same repository, base, test patch, command, ids):
    // it ran once, and the other five read it from the cache, though two ran at a time.
    let cached: Vec<bool> = PATCHES[..6]
        .iter()
        .map(|n| {
            let v: Value = serde_json::from_slice(
                &std::fs::read(out.join(format!("results/calc-{n}.json"))).unwrap(),
            )
            .unwrap();
            v["runs"]["baseline"]["cached"].as_bool().unwrap_or(false)
        })
        .collect();
    assert_eq!(cached.iter().filter(|c| !**c).count(), 1, "{cached:?}");
    assert!(
        out.join("logs/calc-regression/candidate-test.stdout.log")
            .is_file()
    );

    // Hand-computed: 9 tasks, 1 resolved; Wilson 95% for 1/9 is 1.99%–43.50%.
    let r = json_of(&f, &["report", out.to_str().unwrap(), "--format", "json"]);
    assert_eq!(r["tasks"], 9);
    assert_eq!(r["resolve_rate"]["count"], 1);
    assert!(close(&r["resolve_rate"]["low"], 0.0199), "{r:#}");
    assert!(close(&r["resolve_rate"]["high"], 0.4350), "{r:#}");
    // Applied, unresolved: breaking-resolved, partially, wip, no-op, regression = 5; 1 of them
    // a regression (Wilson 3.62%–62.45%).
    assert_eq!(
        (
            &r["regression_share"]["count"],
            &r["regression_share"]["of"]
        ),
        (&json!(1), &json!(5))
    );
    assert!(close(&r["regression_share"]["low"], 0.0362), "{r:#}");
    assert!(close(&r["regression_share"]["high"], 0.6245), "{r:#}");
    for c in r["counts"].as_array().unwrap() {
        assert_eq!(c["count"], 1, "{c}");
    }
    // test_platform_quirk fails at base: broken at base in each of the six graded tasks.
    assert_eq!(r["broken_at_base_tasks"], 6);
    assert_eq!(r["broken_at_base_tests"], 6);
    assert_eq!(r["broken_tasks"], json!(["calc-error"]));
    // breaking-resolved and work-in-progress break some of the P2P tests (of five counted).
    assert_eq!(r["grid"], json!([[1, 1, 0], [1, 1, 0], [1, 1, 0]]));
    let md = f.run(&["report", out.to_str().unwrap(), "--format", "markdown"]);
    assert!(
        md.stdout.contains("| Regression | 1 | 11.1% |"),
        "{}",
        md.stdout
    );
    // The picture: one bar of nine segments, each one task of nine, and its legend.
    let svg = f.run(&["report", out.to_str().unwrap(), "--format", "svg"]);
    assert!(svg.stdout.starts_with("<svg "), "{}", svg.stdout);
    for outcome in ["Resolved", "No-Op", "Regression", "Patch Failed", "Error"] {
        assert!(
            svg.stdout
                .contains(&format!("<title>{outcome}: 1 of 9</title>")),
            "{outcome}: {}",
            svg.stdout
        );
    }
    assert_eq!(svg.stdout.matches("<rect x=\"").count(), 9 + 9);
    f.assert_untouched(&before);
}

#[test]
fn compare_shows_transitions_and_paired_tests() {
    let f = Fixture::calc();
    let (tasks, preds_a) = nine_tasks(&f);
    let error_prediction = preds_a.last().cloned().unwrap();
    let tasks = jsonl(&f.scratch.join("tasks.jsonl"), &tasks);
    let a = f.scratch.join("a");
    let b = f.scratch.join("b");
    let preds_a = jsonl(&f.scratch.join("a.jsonl"), &preds_a);
    assert_eq!(batch(&f, &tasks, &preds_a, &a, &[]).code, 0);
    // Run B: the regression becomes a no-op (safer), the no-op resolves, the rest stay.
    let preds_b: Vec<Value> = PATCHES
        .iter()
        .map(|n| {
            let id = format!("calc-{n}");
            match *n {
                "regression" => prediction(&id, "no-op"),
                "no-op" => prediction(&id, "resolved"),
                other => prediction(&id, other),
            }
        })
        .chain([error_prediction])
        .collect();
    let preds_b = jsonl(&f.scratch.join("b.jsonl"), &preds_b);
    assert_eq!(batch(&f, &tasks, &preds_b, &b, &[]).code, 0);
    let c = json_of(
        &f,
        &[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(c["tasks"], 9);
    assert_eq!(c["safer"], json!(["calc-regression"]));
    assert_eq!(c["worse"], json!([]));
    assert_eq!(c["resolved"]["gained"], json!(["calc-no-op"]));
    assert_eq!(
        (&c["resolved"]["a"], &c["resolved"]["b"]),
        (&json!(1), &json!(2))
    );
    // One change each way at most: p = 1 (exact McNemar with b + c = 1).
    assert_eq!(c["resolved"]["p_value"], 1.0);
    assert_eq!(c["regression"]["lost"], json!(["calc-regression"]));
    let net: BTreeMap<String, i64> = c["net"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["outcome"].as_str().unwrap().to_string(),
                n["change"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(net["resolved"], 1);
    assert_eq!(net["regression"], -1);
    assert_eq!(net["no-op"], 0, "one no-op left, one arrived");
    let outcomes: Vec<&str> = c["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    let at = |o: &str| outcomes.iter().position(|x| *x == o).unwrap();
    assert_eq!(c["matrix"][at("regression")][at("no-op")], 1);
    assert_eq!(c["matrix"][at("no-op")][at("resolved")], 1);
    assert_eq!(c["matrix"][at("resolved")][at("resolved")], 1);
    let human = f.run(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert!(
        human
            .stdout
            .contains("SAFER  Regression → No-Op: 1 (calc-regression)"),
        "{}",
        human.stdout
    );
    // The runs are named by their directories, symbols are plain, and Error has its row.
    let md = f.run(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "markdown",
    ]);
    for want in [
        "## patchgrade compare: a → b, 9 tasks in both runs",
        "- ✓ **Safer** (Regression → No-Op): 1",
        "| outcome | a | b | change |",
        "| Error | 1 | 1 | +0 |",
    ] {
        assert!(md.stdout.contains(want), "{want}\n{}", md.stdout);
    }
    assert!(!md.stdout.contains(":white_check_mark:"), "{}", md.stdout);
    gates(&f, &a, &b);
}

/// CI gates: `report --fail-if`/`--min-resolve-rate` and `compare --fail-on-worse` exit 1,
/// with one line saying why, after the report; bad conditions are bad input.
fn gates(f: &Fixture, a: &Path, b: &Path) {
    let report = |dir: &Path, extra: &[&str]| {
        let mut args = vec!["report", dir.to_str().unwrap(), "--format", "json"];
        args.extend(extra);
        f.run(&args)
    };
    let failed = report(a, &["--fail-if", "regression>0"]);
    assert_eq!(failed.code, 1, "{}", failed.stderr);
    assert!(!failed.stdout.is_empty(), "the report is still written");
    assert_eq!(
        failed.stderr.trim(),
        "patchgrade: gate failed: regression>0 (it is 1)"
    );
    assert_eq!(report(b, &["--fail-if", "regression>0"]).code, 0);
    let rate = report(b, &["--min-resolve-rate", "50%", "--fail-if", "error>=1"]);
    assert_eq!(rate.code, 1);
    assert_eq!(rate.stderr.lines().count(), 2, "{}", rate.stderr);
    assert_eq!(report(b, &["--min-resolve-rate", "0.2"]).code, 0);
    let bad = report(b, &["--fail-if", "regresion>0"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("invalid condition `regresion>0`"),
        "{}",
        bad.stderr
    );
    let compare = |x: &Path, y: &Path| {
        f.run(&[
            "compare",
            x.to_str().unwrap(),
            y.to_str().unwrap(),
            "--fail-on-worse",
        ])
    };
    assert_eq!(compare(a, b).code, 0);
    // One task worse is no evidence (p = 1): not a failed gate.
    assert_eq!(compare(b, a).code, 0);
    // Ten tasks, each No-Op in one run and Regression in the other: p < 0.05.
    let results = |dir: &Path, outcome: &str| {
        let src = std::fs::read_to_string(a.join("results/calc-no-op.json")).unwrap();
        std::fs::create_dir_all(dir.join("results")).unwrap();
        for i in 0..10 {
            let mut v: Value = serde_json::from_str(&src).unwrap();
            v["task"]["instance_id"] = json!(format!("t{i}"));
            v["outcome"] = json!(outcome);
            std::fs::write(dir.join(format!("results/t{i}.json")), v.to_string()).unwrap();
        }
    };
    let (before, after) = (f.scratch.join("before"), f.scratch.join("after"));
    results(&before, "no-op");
    results(&after, "regression");
    let worse = compare(&before, &after);
    assert_eq!(worse.code, 1, "{}", worse.stderr);
    assert!(
        worse
            .stderr
            .contains("gate failed: Regression rose from 0 to 10 of 10 tasks"),
        "{}",
        worse.stderr
    );
    assert_eq!(compare(&after, &before).code, 0);
}

#[test]
fn a_batch_stopped_with_ctrl_c_resumes_where_it_stopped() {
    stop_and_resume(nix::sys::signal::Signal::SIGINT, 130);
}

#[test]
fn a_batch_stopped_with_sigterm_resumes_where_it_stopped() {
    stop_and_resume(nix::sys::signal::Signal::SIGTERM, 143);
}

/// Stop a batch with `signal` while a task's test hangs, then resume it.
fn stop_and_resume(signal: nix::sys::signal::Signal, code: i32) {
    let f = Fixture::calc();
    let before = f.snapshot();
    let (mut tasks, mut preds) = nine_tasks(&f);
    // Graded fourth (ids in order, one at a time: breaking-resolved, empty, error, f-hang): a test command that hangs.
    let marker = format!("patchgrade-batch-hang-{signal}-{}", std::process::id());
    // The marker is on the hanging process's own command line (the shell reads its script
    // from a file).
    let hang = json!({"test_cmd": format!("python -c 'import time; time.sleep(600)' {marker}; : {{junit}} {{tests}}")});
    let mut resumed_tasks = tasks.clone();
    tasks.push(task("calc-f-hang", &f.repo, hang.clone()));
    // Resumed, the hanging task alone gets a short timeout: a flag would give it to every
    // task, and a real run can take longer than that on a loaded machine.
    let mut hang_resumed = hang;
    hang_resumed["timeout"] = json!(2);
    resumed_tasks.push(task("calc-f-hang", &f.repo, hang_resumed));
    preds.push(prediction("calc-f-hang", "resolved"));
    let resumed_tasks = jsonl(&f.scratch.join("tasks-resumed.jsonl"), &resumed_tasks);
    let tasks = jsonl(&f.scratch.join("tasks.jsonl"), &tasks);
    let preds = jsonl(&f.scratch.join("preds.jsonl"), &preds);
    let out = f.scratch.join("run");
    let args = batch_args(&tasks, &preds, &out, &["--jobs", "1"]);
    let mut child = f
        .command(&args.iter().map(String::as_str).collect::<Vec<_>>())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("batch starts");
    // Wait until the three tasks before the hanging one are written and it is running.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while outcomes_or_empty(&out).len() < 3 || processes_with(&marker).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "batch did not get to the hang"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let written: BTreeMap<PathBuf, Vec<u8>> = files(&out.join("results"));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).expect("signal");
    let status = child.wait().expect("batch exits");
    assert_eq!(status.code(), Some(code));
    f.assert_untouched(&before);
    assert!(
        processes_with(&marker).is_empty(),
        "the hanging test was killed"
    );
    let left: Vec<_> = std::fs::read_dir(&f.tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "checkouts removed: {left:?}");
    assert_eq!(files(&out.join("results")), written, "no partial result");

    // Resumed (with a timeout for the task that hangs): the three are skipped, unchanged.
    let args = batch_args(&resumed_tasks, &preds, &out, &["--jobs", "1", "--resume"]);
    let run = f.run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("3 task(s) already graded"),
        "{}",
        run.stderr
    );
    let after = files(&out.join("results"));
    for (path, bytes) in &written {
        assert_eq!(after.get(path), Some(bytes), "{} rewritten", path.display());
    }
    let mut want = expected_nine();
    want.insert("calc-f-hang".into(), "error".into());
    assert_eq!(outcomes(&out), want);
}

fn outcomes_or_empty(out: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    files(&out.join("results"))
}

fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.path(), std::fs::read(e.path()).unwrap_or_default()))
        .collect()
}

#[test]
fn two_shards_merged_equal_one_run() {
    let f = Fixture::calc();
    let (tasks, preds) = nine_task_files(&f);
    let (one, two, merged) = (
        f.scratch.join("shard1"),
        f.scratch.join("shard2"),
        f.scratch.join("merged"),
    );
    assert_eq!(batch(&f, &tasks, &preds, &one, &["--shard", "1/2"]).code, 0);
    assert_eq!(batch(&f, &tasks, &preds, &two, &["--shard", "2/2"]).code, 0);
    let (a, b) = (outcomes(&one), outcomes(&two));
    assert_eq!((a.len(), b.len()), (5, 4), "round robin over 9 sorted ids");
    assert!(a.keys().all(|k| !b.contains_key(k)), "disjoint shards");
    let run = f.run(&[
        "merge",
        "--out",
        merged.to_str().unwrap(),
        one.to_str().unwrap(),
        two.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(outcomes(&merged), expected_nine());
    assert!(merged.join("logs/calc-regression").is_dir());
    // The merged report is the report of one whole run.
    let r = json_of(
        &f,
        &["report", merged.to_str().unwrap(), "--format", "json"],
    );
    assert_eq!(
        (&r["tasks"], &r["resolve_rate"]["count"]),
        (&json!(9), &json!(1))
    );
    // A shard merged with itself is fine; with a different result for a task, refused.
    let again = f.run(&[
        "merge",
        "--out",
        merged.to_str().unwrap(),
        one.to_str().unwrap(),
        one.to_str().unwrap(),
    ]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    let forged = f.scratch.join("forged");
    std::fs::create_dir_all(forged.join("results")).unwrap();
    let mut v: Value =
        serde_json::from_slice(&std::fs::read(merged.join("results/calc-no-op.json")).unwrap())
            .unwrap();
    v["outcome"] = json!("resolved");
    std::fs::write(forged.join("results/calc-no-op.json"), v.to_string()).unwrap();
    let conflict = f.run(&[
        "merge",
        "--out",
        f.scratch.join("m2").to_str().unwrap(),
        merged.to_str().unwrap(),
        forged.to_str().unwrap(),
    ]);
    assert_eq!(conflict.code, 2);
    assert!(
        conflict
            .stderr
            .contains("`calc-no-op` has different results"),
        "{}",
        conflict.stderr
    );
}

#[test]
fn bad_batch_input_is_one_line_naming_the_file() {
    let f = Fixture::calc();
    let tasks = f.scratch_file("tasks.jsonl", "{\"instance_id\": \"a\"}\n{oops\n");
    let preds = f.scratch_file("preds.jsonl", "");
    let out = f.scratch.join("out");
    let run = batch(&f, &tasks, &preds, &out, &[]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("tasks.jsonl:2: invalid JSON"),
        "{}",
        run.stderr
    );
    // A task without a repository is graded `error` (invalid-task); the others go on.
    let tasks = jsonl(
        &f.scratch.join("t2.jsonl"),
        &[
            json!({"instance_id": "lost", "repo": "nobody/nothing", "FAIL_TO_PASS": "[\"t.py::x\"]"}),
            task("calc-resolved", &f.repo, json!({})),
            task("calc-not-a-diff", &f.repo, json!({})),
        ],
    );
    let preds = jsonl(
        &f.scratch.join("p2.jsonl"),
        &[
            prediction("lost", "resolved"),
            prediction("calc-resolved", "resolved"),
            json!({"instance_id": "calc-not-a-diff", "model_patch": "I could not fix it.\n--- a\n"}),
            prediction("ghost", "resolved"),
        ],
    );
    let run = batch(&f, &tasks, &preds, &out, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("no task `ghost`"), "{}", run.stderr);
    let got = outcomes(&out);
    assert_eq!(got["calc-resolved"], "resolved");
    assert_eq!(got["calc-not-a-diff"], "patch-failed", "{got:?}");
    assert_eq!(got["lost"], "error");
    let lost: Value =
        serde_json::from_slice(&std::fs::read(out.join("results/lost.json")).unwrap()).unwrap();
    assert_eq!(lost["error"]["cause"], "invalid-task");
    assert!(
        lost["error"]["message"]
            .as_str()
            .unwrap()
            .contains("repositories directory (DIR/owner__name)"),
        "{lost:#}"
    );
    let report = f.run(&["report", f.scratch.join("nowhere").to_str().unwrap()]);
    assert_eq!(report.code, 2);
    assert!(
        report.stderr.contains("not a batch output directory"),
        "{}",
        report.stderr
    );
}

#[test]
fn check_reads_the_baseline_from_the_cache_when_the_task_is_the_same() {
    let f = Fixture::calc();
    let cache = f.scratch.join("cache");
    let tp = example("patches/hidden-tests.diff");
    let check = |patch: &str, p2p: &[&str]| {
        let patch = example(&format!("patches/{patch}.diff"));
        let args = CheckArgs::new()
            .runner("pytest")
            .json()
            .flag("--cache-dir", &cache)
            .test_patch(&tp)
            .patch(&patch)
            .f2p_all(F2P)
            .p2p_all(p2p);
        let run = f.run(&args);
        run.json()
    };
    let first = check("regression", &P2P);
    assert_eq!(first["runs"]["baseline"].get("cached"), None);
    // Another patch on the same task: the baseline is read, and grades the same way.
    let second = check("regression", &P2P);
    assert_eq!(second["runs"]["baseline"]["cached"], true);
    assert_eq!(second["outcome"], first["outcome"]);
    let graded = |v: &Value| -> Vec<(Value, Value, Value)> {
        v["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["id"].clone(),
                    t["base_status"].clone(),
                    t["effect"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(graded(&second), graded(&first));
    let third = check("resolved", &P2P);
    assert_eq!(
        (&third["outcome"], &third["runs"]["baseline"]["cached"]),
        (&json!("resolved"), &json!(true))
    );
    // Other ids are another baseline.
    let fourth = check("resolved", &P2P[..2]);
    assert_eq!(fourth["runs"]["baseline"].get("cached"), None);
}

/// A cache and a pool named relative to the working directory work in the sandbox and are
/// hidden from it as any other: bwrap was once handed `--tmpfs cache`, a directory of its own
/// read-only root, and every baseline ended `error` (seen grading SWE-bench with
/// `--cache-dir cache`).
#[test]
fn a_relative_cache_and_pool_are_hidden_and_work() {
    if !require_bwrap() {
        return skip("bwrap is not installed");
    }
    let f = Fixture::calc();
    let check = || {
        let args = CheckArgs::calc("regression")
            .flag("--sandbox", "bwrap")
            .flag("--cache-dir", "../scratch/rel-cache")
            .flag("--workdir-pool", "../scratch/rel-pool");
        f.run(&args).json()
    };
    let first = check();
    assert_eq!(first["outcome"], "regression", "{first:#}");
    assert!(f.scratch.join("rel-cache").is_dir() && f.scratch.join("rel-pool").is_dir());
    let second = check();
    assert_eq!(
        (&second["outcome"], &second["runs"]["baseline"]["cached"]),
        (&json!("regression"), &json!(true))
    );
}

/// `check` caches by default in the user's cache directory; `--no-cache` runs the baseline
/// and stores nothing; a toolchain that reports another version is another baseline.
#[test]
fn check_caches_by_default_and_sees_a_changed_toolchain() {
    let f = Fixture::calc();
    let before = f.snapshot();
    let check = |extra: &[&str], path: Option<&std::ffi::OsStr>| -> Value {
        let args = CheckArgs::calc("regression").args(extra);
        let mut c = f.command(&args);
        if let Some(path) = path {
            c.env("PATH", path);
        }
        let out = c.output().unwrap();
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
        })
    };
    let cached = |v: &Value| v["runs"]["baseline"]["cached"].as_bool().unwrap_or(false);
    let first = check(&[], None);
    assert_eq!(first["outcome"], "regression");
    assert!(!cached(&first));
    let entries = f.cache_home().join("patchgrade/baseline-v4");
    assert_eq!(std::fs::read_dir(&entries).unwrap().count(), 1);
    let second = check(&[], None);
    assert!(cached(&second));
    assert_eq!(second["outcome"], first["outcome"]);
    let skipped = check(&["--no-cache"], None);
    assert!(!cached(&skipped));
    assert_eq!(skipped["outcome"], first["outcome"]);
    assert_eq!(std::fs::read_dir(&entries).unwrap().count(), 1);

    // A `python` that reports something else first on PATH: the same task, another toolchain.
    let bin = f.scratch.join("other-toolchain");
    std::fs::create_dir_all(&bin).unwrap();
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v python"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let wrapper = bin.join("python");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n[ \"$1\" = -c ] && echo 'python 9.9 from another toolchain'\nexec {} \"$@\"\n",
            real.trim()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(
        std::iter::once(bin.clone())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let other = check(&[], Some(&path));
    assert!(!cached(&other), "{other:#}");
    assert_eq!(other["outcome"], first["outcome"]);
    assert_eq!(std::fs::read_dir(&entries).unwrap().count(), 2);
    assert!(cached(&check(&[], Some(&path))));
    f.assert_untouched(&before);
}

/// What a result says about its task, without timings and paths.
fn graded_results(out: &Path) -> BTreeMap<String, Value> {
    std::fs::read_dir(out.join("results"))
        .expect("results dir")
        .flatten()
        .map(|e| {
            let v: Value = serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
            let tests: Vec<Value> = v["tests"]
                .as_array()
                .map(|t| {
                    t.iter()
                        .map(|t| json!([t["id"], t["status"], t["base_status"], t["message"]]))
                        .collect()
                })
                .unwrap_or_default();
            (
                v["task"]["instance_id"].as_str().unwrap().to_string(),
                json!([v["outcome"], tests, v["error"]["cause"]]),
            )
        })
        .collect()
}

/// `--jobs 16` on two cores over 27 tasks grades exactly as `--jobs 1`.
#[test]
fn sixteen_jobs_on_two_cores_grade_as_one() {
    let f = Fixture::calc();
    let before = f.snapshot();
    let (mut tasks, mut preds) = (Vec::new(), Vec::new());
    let (nine, nine_preds) = nine_tasks(&f);
    for copy in 0..3 {
        for (mut t, mut p) in nine.clone().into_iter().zip(nine_preds.clone()) {
            let id = format!("{}-{copy}", t["instance_id"].as_str().unwrap());
            t["instance_id"] = json!(id);
            p["instance_id"] = json!(id);
            tasks.push(t);
            preds.push(p);
        }
    }
    let tasks = jsonl(&f.scratch.join("tasks.jsonl"), &tasks);
    let preds = jsonl(&f.scratch.join("preds.jsonl"), &preds);
    let serial = f.scratch.join("serial");
    let wide = f.scratch.join("wide");
    assert_eq!(
        batch(&f, &tasks, &preds, &serial, &["--jobs", "1", "--no-cache"]).code,
        0
    );
    let run = batch(&f, &tasks, &preds, &wide, &["--jobs", "16", "--no-cache"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (a, b) = (graded_results(&serial), graded_results(&wide));
    assert_eq!(a.len(), 27);
    assert_eq!(a, b);
    f.assert_untouched(&before);
}

/// Results that cannot be written (a full disk) stop the run with the file and the reason,
/// and leave no partial result. Needs a small tmpfs, mounted in a user namespace.
#[test]
fn a_full_disk_stops_the_batch_with_no_partial_result() {
    let unshare = std::process::Command::new("unshare")
        .args(["-rm", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !unshare {
        crate::setup::skip("`unshare -rm` does not work here");
        return;
    }
    let f = Fixture::calc();
    let before = f.snapshot();
    let (tasks, preds) = nine_tasks(&f);
    let tasks = jsonl(&f.scratch.join("tasks.jsonl"), &tasks[..2]);
    let preds = jsonl(&f.scratch.join("preds.jsonl"), &preds[..2]);
    let out = f.scratch.join("small-disk");
    std::fs::create_dir_all(&out).unwrap();
    let args = batch_args(&tasks, &preds, &out, &["--jobs", "1", "--no-cache"]);
    let script = format!(
        "mount -t tmpfs -o size=12k tmpfs {out} && {bin} \"$@\"; status=$?; \
         find {out} -type f -printf '%P %s\\n' > {listing}; exit $status",
        out = out.display(),
        bin = crate::setup::BIN,
        listing = f.scratch.join("listing").display(),
    );
    let run = std::process::Command::new("unshare")
        .args(["-rm", "sh", "-c", &script, "sh"])
        .args(&args)
        .env("TMPDIR", &f.tmp)
        .env("XDG_CACHE_HOME", f.cache_home())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot write") && stderr.contains("No space left on device"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Whatever was written is whole: every result parses, no temporary is left.
    let listing = std::fs::read_to_string(f.scratch.join("listing")).unwrap();
    assert!(!listing.contains(".partial"), "{listing}");
    assert!(
        !listing.contains("results/calc"),
        "a result was written to a full disk: {listing}"
    );
    f.assert_untouched(&before);
}

/// `report` names the tasks whose lists disagree with their base: an F2P id that is in no
/// report, a P2P id missing at base, an F2P test that already passes at base.
#[test]
fn report_lists_suspect_tasks() {
    let f = Fixture::calc();
    let mut f2p_typo: Vec<&str> = F2P.to_vec();
    f2p_typo.push("tests/test_errors.py::test_no_such_test");
    let mut p2p_typo: Vec<&str> = P2P.to_vec();
    p2p_typo.push("tests/test_calc.py::test_ad");
    let tasks = [
        task("calc-sound", &f.repo, json!({})),
        task(
            "calc-f2p-typo",
            &f.repo,
            json!({"FAIL_TO_PASS": serde_json::to_string(&f2p_typo).unwrap()}),
        ),
        task(
            "calc-p2p-typo",
            &f.repo,
            json!({"PASS_TO_PASS": serde_json::to_string(&p2p_typo).unwrap()}),
        ),
        task(
            "calc-f2p-at-base",
            &f.repo,
            json!({
                "FAIL_TO_PASS": "[\"tests/test_calc.py::test_add\"]",
                "PASS_TO_PASS": "[\"tests/test_calc.py::test_mul\"]",
            }),
        ),
    ];
    let preds: Vec<Value> = tasks
        .iter()
        .map(|t| prediction(t["instance_id"].as_str().unwrap(), "resolved"))
        .collect();
    let tasks = jsonl(&f.scratch.join("tasks.jsonl"), &tasks);
    let preds = jsonl(&f.scratch.join("preds.jsonl"), &preds);
    let out = f.scratch.join("run");
    let run = batch(&f, &tasks, &preds, &out, &[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = json_of(&f, &["report", out.to_str().unwrap(), "--format", "json"]);
    let mut suspect: Vec<&str> = r["suspect_tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    suspect.sort();
    assert_eq!(
        suspect,
        ["calc-f2p-at-base", "calc-f2p-typo", "calc-p2p-typo"],
        "{r:#}"
    );
    let text = f.run(&["report", out.to_str().unwrap()]);
    assert!(
        text.stdout.contains("Suspect tasks (") && text.stdout.contains("calc-p2p-typo"),
        "{}",
        text.stdout
    );
}

/// The HTML report and comparison, looked at in headless Chromium: no console error and no
/// request leaves the page, the grid's cells hold the counts, the task table sorts and
/// filters, a task's link opens its verdict, a comparison marks its safer and worse cells; a
/// screenshot of each goes to `target/screenshots/`.
#[test]
fn the_html_pages_work_in_a_browser() {
    let Some(modules) = std::env::var_os("PATCHGRADE_JS_MODULES") else {
        crate::setup::skip("playwright-core is not installed (scripts/jsenv)");
        return;
    };
    if !crate::setup::have_runner("chromium") || !crate::setup::have_runner("node") {
        return;
    }
    let f = Fixture::calc();
    let (tasks, preds_a) = nine_tasks(&f);
    let tasks = jsonl(&f.scratch.join("tasks.jsonl"), &tasks);
    let a = f.scratch.join("before");
    let b = f.scratch.join("after");
    let preds = jsonl(&f.scratch.join("a.jsonl"), &preds_a);
    assert_eq!(batch(&f, &tasks, &preds, &a, &[]).code, 0);
    // B: the no-op regresses (worse), the regression stops (safer).
    let preds_b: Vec<Value> = preds_a
        .iter()
        .map(|p| {
            let id = p["instance_id"].as_str().unwrap();
            match id {
                "calc-regression" => prediction(id, "no-op"),
                "calc-no-op" => prediction(id, "regression"),
                _ => p.clone(),
            }
        })
        .collect();
    let preds_b = jsonl(&f.scratch.join("b.jsonl"), &preds_b);
    assert_eq!(batch(&f, &tasks, &preds_b, &b, &[]).code, 0);
    let shots = crate::setup::root().join("target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let look = |args: &[&str], name: &str, filter: &str| -> Value {
        let page = f.scratch.join(format!("{name}.html"));
        let run = f.run(args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        std::fs::write(&page, &run.stdout).unwrap();
        helper_json(
            Command::new("node")
                .arg(crate::setup::root().join("tests/html/check.cjs"))
                .arg(&page)
                .arg(shots.join(format!("{name}.png")))
                .env("PATCHGRADE_JS_MODULES", &modules)
                .env("FILTER", filter),
        )
    };
    let r = look(
        &["report", a.to_str().unwrap(), "--format", "html"],
        "report",
        "calc-re",
    );
    assert_eq!(r["errors"], json!([]), "{r:#}");
    assert_eq!(r["requests"], json!([]), "{r:#}");
    assert_eq!(r["title"], "patchgrade: before");
    // One task in each grid cell the patches reach; the report's own counts.
    let grid = json_of(&f, &["report", a.to_str().unwrap(), "--format", "json"])["grid"].clone();
    let levels = ["all", "some", "none"];
    for (i, f2p) in levels.iter().enumerate() {
        for (j, p2p) in levels.iter().enumerate() {
            assert_eq!(
                r["cells"][format!("{f2p}-{p2p}")],
                grid[i][j],
                "{f2p}-{p2p}: {r:#}"
            );
        }
    }
    let mut sorted: Vec<String> = PATCHES.iter().map(|p| format!("calc-{p}")).collect();
    sorted.push("calc-error".into());
    sorted.sort();
    assert_eq!(r["by_task_asc"], json!(sorted));
    sorted.reverse();
    assert_eq!(r["by_task_desc"], json!(sorted));
    let p2p_first = r["by_p2p_asc"][0].as_str().unwrap();
    assert_ne!(r["by_p2p_asc"], r["by_p2p_desc"]);
    assert!(
        [
            "calc-regression",
            "calc-work-in-progress",
            "calc-breaking-resolved",
            "calc-empty",
            "calc-patch-failed",
            "calc-error"
        ]
        .contains(&p2p_first),
        "{r:#}"
    );
    // In the order the last sort left them.
    let mut filtered: Vec<&str> = r["filtered"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    filtered.sort();
    assert_eq!(filtered, ["calc-regression", "calc-resolved"]);
    assert_eq!(r["shown"], "2 of 9 shown");
    assert_eq!(r["by_outcome"], json!(["calc-regression"]));
    assert_eq!(r["opened"], true, "{r:#}");
    let c = look(
        &[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--format",
            "html",
        ],
        "compare",
        "",
    );
    assert_eq!(c["errors"], json!([]), "{c:#}");
    assert_eq!(c["title"], "patchgrade: before → after");
    assert_eq!(
        c["matrix"],
        json!([
            ["worse", "no-op", "regression", 1],
            ["safer", "regression", "no-op", 1]
        ]),
        "{c:#}"
    );
}

/// The JUnit patchgrade writes (`check`, `grade`, `batch --junit-out`) is valid against the
/// Jenkins JUnit schema (`junit-10.xsd`, from pytest's source distribution, checked with
/// xmllint), with times, timestamps, the task's properties, and `<error>` for `error`.
#[test]
fn junit_output_is_valid_against_the_jenkins_schema() {
    let Some(projects) = std::env::var_os("PATCHGRADE_PROJECTS").map(PathBuf::from) else {
        crate::setup::skip("the JUnit schema is not here (scripts/projects-env)");
        return;
    };
    if !crate::setup::have_runner("xmllint") {
        return;
    }
    let xsd = projects.join("pytest-9.2.0/testing/example_scripts/junit-10.xsd");
    let valid = |file: &Path| {
        let out = Command::new("xmllint")
            .args(["--noout", "--schema"])
            .arg(&xsd)
            .arg(file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}\n{}",
            file.display(),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(file).unwrap_or_default()
        );
        std::fs::read_to_string(file).unwrap()
    };
    let f = Fixture::calc();
    let (tasks, preds) = nine_task_files(&f);
    let out = f.scratch.join("run");
    let junit = f.scratch.join("batch.xml");
    let run = batch(
        &f,
        &tasks,
        &preds,
        &out,
        &["--junit-out", junit.to_str().unwrap()],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let xml = valid(&junit);
    let report = patchgrade::internals::Report::read(&junit).expect("readable JUnit");
    assert_eq!(report.cases.len(), 9);
    let status = |id: &str| {
        report
            .cases
            .iter()
            .find(|c| c.name == id)
            .map(|c| c.observation.status)
            .unwrap()
    };
    use patchgrade::TestStatus::*;
    assert_eq!(status("calc-resolved"), Passed);
    assert_eq!(status("calc-regression"), Failed);
    assert_eq!(status("calc-error"), Error);
    for want in [
        "<property name=\"instance_id\" value=\"calc-regression\"/>",
        "<property name=\"outcome\" value=\"regression\"/>",
        "<property name=\"model\" value=\"demo\"/>",
        "timestamp=\"",
        "message=\"Regression: the patch makes no fail-to-pass test pass and breaks",
    ] {
        assert!(xml.contains(want), "{want}\n{xml}");
    }
    // `report --format junit` renders the same document from the results directory.
    let again = f.run(&["report", out.to_str().unwrap(), "--format", "junit"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout, xml);
    // One check's, and grade's.
    let single = f.scratch.join("check.xml");
    let run = f.run(&CheckArgs::calc("regression").flag("--junit-out", &single));
    assert_eq!(run.outcome(), "regression");
    let xml = valid(&single);
    assert!(
        xml.contains("<property name=\"outcome\" value=\"regression\"/>"),
        "{xml}"
    );
    let graded = f.scratch.join("grade.xml");
    let run = f.run(&[
        "grade",
        "--junit",
        single.to_str().unwrap(),
        "--ids",
        "classname.name",
        "--p2p",
        "patchgrade.outcome",
        "--junit-out",
        graded.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    valid(&graded);
}
