//! End to end on real projects (`fixtures/projects/`): a real upstream fix split into candidate
//! and hidden tests, graded with the real runner. httparse keeps its unit tests in
//! `src/lib.rs`, so the candidate and the test patch change the same file: the hidden tests
//! merge with the candidate hunk by hunk instead of replacing its file. sqlparse (pytest)
//! and ufo (vitest) are graded through tasks `derive` writes from their real fixes.

use crate::setup::{CheckArgs, Fixture, copy_dir, git, graded, require_bwrap, root, warning};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

const F2P: [&str; 2] = [
    "httparse tests::test_request_with_leading_space",
    "httparse tests::test_request_with_invalid_method",
];

const P2P: [&str; 6] = [
    "httparse tests::test_allow_request_with_multiple_space_delimiters",
    "httparse tests::test_forbid_request_with_multiple_space_delimiters",
    "httparse tests::test_request_with_multiple_spaces_and_bad_path",
    "httparse tests::test_method_within_buffer",
    "httparse tests::test_chunk_size",
    "httparse tests::test_no_space_after_colon",
];

fn httparse(name: &str) -> PathBuf {
    root().join("fixtures/projects/httparse-1.9.5").join(name)
}

/// httparse 1.9.5 committed as the base of a fresh repository.
fn repo() -> Fixture {
    project("httparse-1.9.5")
}

fn check(f: &Fixture, patch: &str, test_patch: &str) -> serde_json::Value {
    check_with(f, patch, test_patch, &[])
}

fn check_with(f: &Fixture, patch: &str, test_patch: &str, more: &[&str]) -> serde_json::Value {
    let run = f.run(
        &CheckArgs::new()
            .runner("nextest")
            .patch(httparse(patch))
            .test_patch(httparse(test_patch))
            .f2p_all(F2P)
            .p2p_all(P2P)
            .args(more)
            .json(),
    );
    let v = run.json();
    assert!(v["error"].is_null(), "{v:#}\n{}", run.stderr);
    v
}

#[test]
fn rust_inline_tests_merge_with_the_candidate_by_hunk() {
    let f = repo();
    let before = f.snapshot();

    // The real fix: its code stands beside the hidden tests in the same file.
    let v = check(&f, "fix.patch", "test.patch");
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    for id in F2P {
        assert_eq!(graded(&v, id)["base_status"], "failed", "{v:#}");
    }
    assert_eq!(
        v["patch"]["merged_files"],
        serde_json::json!(["src/lib.rs"])
    );
    assert!(
        v["patch"]["overridden_files"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(v["patch"].get("overridden_hunks").is_none(), "{v:#}");
    assert_eq!(v["patch"]["test_patch_strategy"], "exact");

    // Half a fix, and a regression: neither is mistaken for `no-op` any more.
    let v = check(&f, "half.patch", "test.patch");
    assert_eq!(v["outcome"], "partially-resolved", "{v:#}");
    assert_eq!(graded(&v, F2P[0])["status"], "passed");
    assert_eq!(graded(&v, F2P[1])["status"], "failed");
    let v = check(&f, "regression.patch", "test.patch");
    assert_eq!(v["outcome"], "regression", "{v:#}");
    assert_eq!(graded(&v, P2P[0])["effect"], "broken", "{v:#}");
    f.assert_untouched(&before);
}

/// `--downstream` on a Rust crate: the tests of the modules whose paths name what the patch
/// changed, found statically. httparse's SSE4.2 and AVX2 matchers are checked against the
/// lookup tables of `src/lib.rs` by their own tests in `src/simd/`, which name them as
/// `crate::URI_MAP`; no listed test does.
#[test]
fn rust_downstream_finds_the_simd_tests_a_table_edit_breaks() {
    let f = repo();
    let before = f.snapshot();
    const BROKEN: [&str; 2] = [
        "httparse simd::avx2::avx2_code_matches_uri_chars_table",
        "httparse simd::sse42::sse_code_matches_uri_chars_table",
    ];
    // The URI table loses `(` and `)`: the method still takes them, so nothing is fixed, and
    // the vector code no longer agrees with the table.
    let v = check_with(
        &f,
        "uri-table.patch",
        "test.patch",
        &["--downstream", "auto"],
    );
    assert_eq!(v["outcome"], "no-op", "{v:#}");
    let d = &v["downstream"];
    assert_eq!(d["method"], "imports", "{v:#}");
    let broken: Vec<&str> = d["broken"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(broken, BROKEN, "{v:#}");
    assert!(
        d["broken"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("byte_is_allowed")),
        "{v:#}"
    );
    // The crate's own tests (`src/lib.rs`'s `mod tests`, but the listed ones) ran beside them.
    assert!(d["run"].as_u64().unwrap() > 80, "{v:#}");
    assert_eq!(d["kept"].as_u64().unwrap() + 2, d["run"].as_u64().unwrap());
    assert!(warning(&v, "downstream-breakage").is_some(), "{v:#}");

    // Counted as P2P tests, the same patch is a regression.
    let strict = check_with(
        &f,
        "uri-table.patch",
        "test.patch",
        &["--downstream", "imports", "--downstream-counts-as-p2p"],
    );
    assert_eq!(strict["outcome"], "regression", "{strict:#}");

    // The real fix breaks nothing outside the lists.
    let v = check_with(&f, "fix.patch", "test.patch", &["--downstream", "auto"]);
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    assert_eq!(v["downstream"]["broken"], serde_json::json!([]), "{v:#}");
    assert!(warning(&v, "downstream-breakage").is_none(), "{v:#}");
    f.assert_untouched(&before);
}

#[test]
fn candidate_edits_where_the_hidden_tests_change_lines_are_lost_and_named() {
    let f = repo();
    // The fix, plus the agent's own edit of the import line the first test hunk changes.
    let v = check(&f, "fix-with-own-test.patch", "test.patch");
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    // The import line is lost to the hidden tests' version of it; the agent's own test, just
    // past the lines their hunk holds, stands.
    assert_eq!(
        v["patch"]["overridden_hunks"],
        serde_json::json!([{"file": "src/lib.rs", "hunk": "@@ -1386 +1390 @@"}]),
        "{v:#}"
    );
    let feedback = f.run(
        &CheckArgs::new()
            .runner("nextest")
            .patch(httparse("fix-with-own-test.patch"))
            .test_patch(httparse("test.patch"))
            .f2p_all(F2P)
            .p2p_all(P2P)
            .format("feedback"),
    );
    assert!(
        feedback
            .stdout
            .contains("changed lines the hidden tests also change"),
        "{}",
        feedback.stdout
    );
    assert!(
        !feedback.stdout.contains("edit the code, not the tests"),
        "{}",
        feedback.stdout
    );
}

#[test]
fn a_test_patch_at_a_line_offset_applies_and_says_so() {
    let f = repo();
    // Written against the fixed file: every hunk 4 lines below where the base has it.
    let v = check(&f, "fix.patch", "test-offset.patch");
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    assert_eq!(v["patch"]["test_patch_strategy"], "fuzzy");
    let moved = v["patch"]["test_patch_moved_hunks"].as_array().unwrap();
    assert_eq!(moved.len(), 2, "{v:#}");
    assert!(
        moved.iter().all(|m| m["offset"] == -4 && m["fuzz"] == 0),
        "{v:#}"
    );
    // The baseline took the same patch at the same offset: the new tests failed there.
    for id in F2P {
        assert_eq!(graded(&v, id)["base_status"], "failed", "{v:#}");
    }
}

/// A Rust test's failure as the agent reads it: the panic's own text and place, whatever
/// `RUST_BACKTRACE` says, never the thread line or a frame inside std.
#[test]
fn a_rust_panic_is_shown_as_its_assertion_and_place() {
    let f = repo();
    for backtrace in ["0", "1", "full"] {
        let keep = f.scratch.join(format!("keep-{backtrace}"));
        let run = f.run_with_env(
            &CheckArgs::new()
                .runner("nextest")
                .patch(httparse("half.patch"))
                .test_patch(httparse("test.patch"))
                .f2p_all(F2P)
                .p2p_all(P2P)
                .flag("--keep", &keep)
                .format("feedback"),
            &[("RUST_BACKTRACE", backtrace.as_ref())],
        );
        let out = &run.stdout;
        assert!(
            out.contains("    assertion `left == right` failed; left: Ok(Complete(")
                && out.contains("; right: Err(Token)"),
            "RUST_BACKTRACE={backtrace}: {out}"
        );
        assert!(
            !out.contains("thread '") && !out.contains("/rustc/"),
            "{out}"
        );
        // The place is the assertion's own line in the patched file, not the test's closure
        // or a frame in std.
        let place = out
            .lines()
            .find_map(|l| l.trim().strip_prefix("at src/lib.rs:"))
            .unwrap_or_else(|| panic!("no place: {out}"));
        let number: usize = place.split(' ').next().unwrap().parse().unwrap();
        let patched = std::fs::read_to_string(keep.join("candidate/work/src/lib.rs")).unwrap();
        let line = patched.lines().nth(number - 1).unwrap();
        assert!(
            line.trim_start().starts_with("assert_eq!"),
            "line {number}: {line}"
        );
    }
}

/// A project of `fixtures/projects/` committed as the base of a fresh repository.
fn project(dir: &str) -> Fixture {
    let f = Fixture::empty();
    copy_dir(
        &root().join("fixtures/projects").join(dir).join("tree"),
        &f.repo,
    );
    git(&f.repo, &["init", "--quiet"]);
    git(&f.repo, &["add", "--all"]);
    git(&f.repo, &["commit", "--quiet", "-m", dir]);
    f
}

/// `derive` from the project's `fix.patch` and `test.patch`: the task file and its F2P ids.
fn derive_task(f: &Fixture, dir: &Path, runner: &str, more: &[&str]) -> (PathBuf, toml::Table) {
    let task = f.scratch.join("task.toml");
    let mut args: Vec<OsString> = vec!["derive".into(), "--runner".into(), runner.into()];
    args.extend(more.iter().map(OsString::from));
    for (flag, file) in [("--gold", "fix.patch"), ("--test-patch", "test.patch")] {
        args.push(flag.into());
        args.push(dir.join(file).into());
    }
    args.extend(["--out".into(), task.clone().into()]);
    let run = f.run(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let parsed = toml::from_str(&std::fs::read_to_string(&task).unwrap()).unwrap();
    (task, parsed)
}

/// Grade each patch of `dir` with the task: its outcome, and the one test it breaks, if any.
fn grade_attempts(f: &Fixture, task: &Path, dir: &Path, attempts: &[(&str, &str, Option<&str>)]) {
    for (patch, outcome, broken) in attempts {
        let run = f.run(&CheckArgs::new().task(task).patch(dir.join(patch)).json());
        let v = run.json();
        assert_eq!(v["outcome"], *outcome, "{patch}: {v:#}");
        let got: Vec<&str> = v["tests"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["effect"] == "broken")
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        assert_eq!(got, broken.iter().copied().collect::<Vec<_>>(), "{patch}");
    }
}

fn strings(value: &toml::Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

/// sqlparse's real fix for `BEGIN TRANSACTION` (pytest): `derive` finds exactly the two tests
/// upstream added, and the task it writes grades the real fix and three agent-like attempts
/// into four different cells.
#[test]
fn sqlparse_task_derived_from_its_fix_grades_every_attempt() {
    crate::setup::require_pytest();
    let dir = root().join("fixtures/projects/sqlparse-5ca50a2");
    let f = project("sqlparse-5ca50a2");
    let before = f.snapshot();
    let (task, parsed) = derive_task(&f, &dir, "pytest", &[]);
    assert_eq!(
        strings(&parsed["f2p"]),
        [
            "tests/test_split.py::test_split_begin_transaction",
            "tests/test_split.py::test_split_begin_transaction_formatted",
        ]
    );
    let p2p = strings(&parsed["p2p"]);
    assert!(p2p.len() > 400, "{} P2P", p2p.len());
    grade_attempts(
        &f,
        &task,
        &dir,
        &[
            ("fix.patch", "resolved", None),
            ("half.patch", "partially-resolved", None),
            (
                "breaking.patch",
                "breaking-resolved",
                Some("tests/test_split.py::test_split_begin_end_semicolons"),
            ),
            (
                "regression.patch",
                "regression",
                Some("tests/test_split.py::test_split_begintag"),
            ),
        ],
    );
    f.assert_untouched(&before);
}

/// ufo's real fix for false base-prefix matches (vitest, TypeScript tests): `derive` keeps
/// the four new cases that fail at base as F2P (the other four already pass), and its task
/// grades the fix, half of it and a regression.
#[test]
fn ufo_task_derived_from_its_fix_grades_every_attempt() {
    if !crate::setup::have_runner("node") {
        return;
    }
    let Ok(modules) = std::env::var("PATCHGRADE_JS_MODULES") else {
        crate::setup::skip("the JavaScript runners are not installed (scripts/jsenv)");
        return;
    };
    let dir = root().join("fixtures/projects/ufo-1.6.2");
    let f = project("ufo-1.6.2");
    let before = f.snapshot();
    let setup = format!("ln -s {} node_modules", shell_words::quote(&modules));
    let (task, parsed) = derive_task(&f, &dir, "vitest", &["--setup-cmd", &setup]);
    assert_eq!(
        strings(&parsed["f2p"]),
        [
            "test/base.test.ts › withBase › \"/admin\" + \"/admin-dashboard\"",
            "test/base.test.ts › withBase › \"/admin/\" + \"/admin-dashboard\"",
            "test/base.test.ts › withoutBase › \"/admin-dashboard\"-\"/admin\"",
            "test/base.test.ts › withoutBase › \"/admin-dashboard\"-\"/admin/\"",
        ]
    );
    // The setup command went into the task with the lists.
    assert_eq!(parsed["setup_cmd"].as_str(), Some(setup.as_str()));
    grade_attempts(
        &f,
        &task,
        &dir,
        &[
            ("fix.patch", "resolved", None),
            ("half.patch", "partially-resolved", None),
            (
                "regression.patch",
                "regression",
                Some("test/base.test.ts › withBase › \"/base/\" + \"https://test.com\""),
            ),
        ],
    );
    f.assert_untouched(&before);
}

/// The build seeds of the fixture's cache: name → every file's bytes.
fn seeds(f: &Fixture) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let dir = f.cache_home().join("patchgrade/builds");
    let mut files = std::collections::BTreeMap::new();
    let mut todo = vec![dir.clone()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_none_or(|e| e != "lock") {
                let bytes = std::fs::read(&path).unwrap();
                files.insert(path.strip_prefix(&dir).unwrap().to_path_buf(), bytes);
            }
        }
    }
    files
}

fn seeded(v: &serde_json::Value, side: &str) -> bool {
    v["runs"][side]["seeded"] == true
}

/// A fresh checkout starts from a trusted baseline's build (a build seed), and builds what
/// differs from it: the candidate's code, and a base that changed since the seed was built,
/// even in files the candidate does not touch.
#[test]
fn fresh_checkouts_start_from_a_baselines_build_and_rebuild_what_differs() {
    if !require_bwrap() {
        return;
    }
    let f = repo();
    // The first check has no seed; its baseline, run in the sandbox, leaves one.
    let v = check(&f, "fix.patch", "test.patch");
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    assert!(!seeded(&v, "candidate") && !seeded(&v, "baseline"), "{v:#}");
    let saved = seeds(&f);
    assert!(
        saved.keys().any(|p| p.ends_with("manifest.json")),
        "{saved:?}"
    );
    // The next candidates start from it, and their own code is what runs.
    let v = check(&f, "regression.patch", "test.patch");
    assert!(seeded(&v, "candidate"), "{v:#}");
    assert_eq!(v["outcome"], "regression", "{v:#}");
    assert_eq!(graded(&v, P2P[0])["effect"], "broken", "{v:#}");
    let v = check(&f, "fix.patch", "test.patch");
    assert!(seeded(&v, "candidate"), "{v:#}");
    assert_eq!(v["outcome"], "resolved", "{v:#}");
}

/// A crate whose library and its test live apart: a change to the library at a new base
/// commit must be rebuilt even though the candidate touches neither file and a seed holds
/// the old library, fresh by cargo's rules were its source's time taken as the seed saw it.
#[test]
fn a_seed_never_stands_for_a_file_that_changed_since_it_was_built() {
    if !require_bwrap() {
        return;
    }
    let f = Fixture::with_files(&[
        (
            "Cargo.toml",
            "[package]\nname = \"seeded\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        (
            "Cargo.lock",
            "version = 3\n\n[[package]]\nname = \"seeded\"\nversion = \"0.1.0\"\n",
        ),
        ("src/lib.rs", "pub fn value() -> u32 {\n    1\n}\n"),
        (
            "tests/value.rs",
            "#[test]\nfn value_is_one() {\n    assert_eq!(seeded::value(), 1);\n}\n",
        ),
        ("NOTES", "notes\n"),
    ]);
    let notes = edit_patch(&f, "NOTES", |t| format!("{t}more\n"));
    let grade = |more: &[&str]| {
        let run = f.run(
            &CheckArgs::new()
                .runner("nextest")
                .patch(&notes)
                .p2p_all(["seeded::value value_is_one"])
                .args(more)
                .json(),
        );
        let v = run.json();
        assert!(v["error"].is_null(), "{v:#}\n{}", run.stderr);
        v
    };
    let v = grade(&[]);
    assert_eq!(
        graded(&v, "seeded::value value_is_one")["status"],
        "passed",
        "{v:#}"
    );
    f.commit(
        &[("src/lib.rs", "pub fn value() -> u32 {\n    2\n}\n")],
        "two",
    );
    let v = grade(&["--baseline", "skip"]);
    assert!(seeded(&v, "candidate"), "{v:#}");
    assert_eq!(
        graded(&v, "seeded::value value_is_one")["status"],
        "failed",
        "{v:#}"
    );
}

/// A patch of `file` made with git itself against the current base: `edit` of its text.
fn edit_patch(f: &Fixture, file: &str, edit: impl FnOnce(&str) -> String) -> PathBuf {
    let path = f.repo.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, edit(&text)).unwrap();
    let out = std::process::Command::new("git")
        .args(["diff"])
        .current_dir(&f.repo)
        .output()
        .unwrap();
    std::fs::write(&path, text).unwrap();
    let patch = f.scratch.join(format!("{}.diff", file.replace('/', "_")));
    std::fs::write(&patch, out.stdout).unwrap();
    patch
}

/// What a candidate's tests write into their build directory stays in their checkout: the
/// seed a later check starts from is byte for byte the baseline's.
#[test]
fn a_candidate_cannot_write_into_the_build_seed() {
    if !require_bwrap() {
        return;
    }
    let f = repo();
    let v = check(&f, "fix.patch", "test.patch");
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    let saved = seeds(&f);
    assert!(!saved.is_empty());
    // A test that overwrites every file of the target directory it was built in.
    let poison = "\n#[test]\nfn poison() {\n    fn walk(d: &std::path::Path) {\n        for e in std::fs::read_dir(d).unwrap().flatten() {\n            let p = e.path();\n            if p.is_dir() { walk(&p) } else { let _ = std::fs::write(&p, b\"poison\"); }\n        }\n    }\n    walk(std::path::Path::new(env!(\"CARGO_TARGET_DIR\")));\n}\n";
    let patch = edit_patch(&f, "src/lib.rs", |t| format!("{t}{poison}"));
    let run = f.run(
        &CheckArgs::new()
            .runner("nextest")
            .patch(&patch)
            .p2p_all(["httparse poison"])
            .args(&["--baseline", "skip"])
            .json(),
    );
    let v = run.json();
    assert!(seeded(&v, "candidate"), "{v:#}\n{}", run.stderr);
    assert_eq!(graded(&v, "httparse poison")["status"], "passed", "{v:#}");
    assert_eq!(seeds(&f), saved, "the seed changed");
    // And the next check still starts from it and grades right.
    let v = check(&f, "regression.patch", "test.patch");
    assert!(seeded(&v, "candidate"), "{v:#}");
    assert_eq!(v["outcome"], "regression", "{v:#}");
}

/// sqlparse as SWE-bench would set its task: P2P only the tests of the file the test patch
/// touches. The real fix plus a tidy-up that drops the splitter's `END IF` rule passes every
/// listed test, and breaks a test in another file: `--downstream auto` finds it by coverage.
#[test]
fn sqlparse_downstream_finds_the_test_a_tidy_up_breaks_in_another_file() {
    crate::setup::require_pytest();
    let dir = root().join("fixtures/projects/sqlparse-5ca50a2");
    let f = project("sqlparse-5ca50a2");
    let (_, parsed) = derive_task(&f, &dir, "pytest", &[]);
    let split: Vec<&str> = strings(&parsed["p2p"])
        .into_iter()
        .filter(|id| id.starts_with("tests/test_split.py::"))
        .collect();
    let mut args = CheckArgs::new()
        .runner("pytest")
        .test_patch(dir.join("test.patch"))
        .patch(dir.join("tidy.patch"))
        .f2p_all(strings(&parsed["f2p"]))
        .p2p_all(&split)
        .json();
    let by_lists = f.run(&args).json();
    assert_eq!(by_lists["outcome"], "resolved", "{by_lists:#}");
    args = args.args(&["--downstream", "auto"]);
    let v = f.run(&args).json();
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    assert_eq!(v["downstream"]["method"], "coverage", "{v:#}");
    let broken: Vec<&str> = v["downstream"]["broken"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        broken,
        ["tests/test_regressions.py::test_issue194_splitting_function"]
    );
    let strict = f.run(&args.args(&["--downstream-counts-as-p2p"])).json();
    assert_eq!(strict["outcome"], "breaking-resolved", "{strict:#}");
    // The real fix alone breaks nothing downstream.
    let fix = f
        .run(
            &CheckArgs::new()
                .runner("pytest")
                .test_patch(dir.join("test.patch"))
                .patch(dir.join("fix.patch"))
                .f2p_all(strings(&parsed["f2p"]))
                .p2p_all(&split)
                .json()
                .args(&["--downstream", "auto"]),
        )
        .json();
    assert_eq!(fix["outcome"], "resolved");
    assert_eq!(
        fix["downstream"]["broken"],
        serde_json::json!([]),
        "{fix:#}"
    );
}
