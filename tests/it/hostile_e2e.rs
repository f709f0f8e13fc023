//! Patches that try to write outside the checkout: each is refused (`patch-failed`, with the
//! reason), and nothing outside the checkout changes.

use crate::setup::{CheckArgs, Fixture, git, graded, require_pytest};
use std::path::Path;

const TEST: &str = "def test_ok():\n    assert True\n";

fn repo_with_link(outside: &Path) -> Fixture {
    let f = Fixture::with_files(&[("tests/test_ok.py", TEST)]);
    std::os::unix::fs::symlink(outside, f.repo.join("out")).expect("symlink");
    git(&f.repo, &["add", "--all"]);
    git(&f.repo, &["commit", "--quiet", "-m", "a link"]);
    f
}

fn check(f: &Fixture, patch: &str, extra: &[&str]) -> serde_json::Value {
    let patch = f.scratch_file("p.diff", patch);
    let args = CheckArgs::new()
        .runner("pytest")
        .p2p("tests/test_ok.py::test_ok")
        .json()
        .patch(&patch)
        .args(extra);
    f.run(&args).json()
}

fn new_file(path: &str) -> String {
    format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+pwned\n"
    )
}

fn link(path: &str, target: &Path) -> String {
    format!(
        "diff --git a/{path} b/{path}\nnew file mode 120000\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{}\n\\ No newline at end of file\n",
        target.display()
    )
}

fn empty_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_none())
}

#[test]
fn a_path_through_a_symlink_of_the_repository_is_refused() {
    require_pytest();
    let dir = tempfile::tempdir().unwrap();
    let f = repo_with_link(dir.path());
    let before = f.snapshot();
    let v = check(&f, &new_file("out/pwned.txt"), &[]);
    assert_eq!(v["outcome"], "patch-failed", "{v:#}");
    let failure = &v["patch"]["apply_failure"];
    assert_eq!(failure["file"], "out/pwned.txt");
    assert!(
        failure["message"]
            .as_str()
            .unwrap()
            .contains("symbolic link `out`"),
        "{v:#}"
    );
    assert!(empty_dir(dir.path()), "nothing written outside");
    f.assert_untouched(&before);
}

#[test]
fn a_path_through_a_symlink_the_patch_creates_is_refused() {
    require_pytest();
    let outside = tempfile::tempdir().unwrap();
    let f = Fixture::with_files(&[("tests/test_ok.py", TEST)]);
    let before = f.snapshot();
    let patch = format!(
        "{}{}",
        link("link", outside.path()),
        new_file("link/pwned.txt")
    );
    let v = check(&f, &patch, &[]);
    assert_eq!(v["outcome"], "patch-failed", "{v:#}");
    assert!(empty_dir(outside.path()));
    f.assert_untouched(&before);
}

#[test]
fn the_test_patch_is_never_written_through_a_symlink_the_candidate_made() {
    require_pytest();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("test_new.py"), "keep me\n").unwrap();
    let f = Fixture::with_files(&[("tests/test_ok.py", TEST)]);
    let before = f.snapshot();
    // The candidate only makes `hidden` a link; the hidden tests then add hidden/test_new.py.
    let candidate = link("hidden", outside.path());
    let test_patch = f.scratch_file(
        "tests.diff",
        "diff --git a/hidden/test_new.py b/hidden/test_new.py\nnew file mode 100644\n--- /dev/null\n\
         +++ b/hidden/test_new.py\n@@ -0,0 +1,2 @@\n+def test_new():\n+    assert True\n",
    );
    let v = check(
        &f,
        &candidate,
        &[
            "--test-patch",
            test_patch.to_str().unwrap(),
            "--f2p",
            "hidden/test_new.py::test_new",
        ],
    );
    // The link is undone before the hidden tests are written; they run in the checkout.
    assert_eq!(
        graded(&v, "hidden/test_new.py::test_new")["status"],
        "passed",
        "{v:#}"
    );
    assert_eq!(
        std::fs::read_to_string(outside.path().join("test_new.py")).unwrap(),
        "keep me\n",
        "the file outside is untouched"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
    // The undone link is reported as a candidate edit the hidden tests replaced.
    assert_eq!(
        v["patch"]["overridden_files"],
        serde_json::json!(["hidden"]),
        "{v:#}"
    );
    f.assert_untouched(&before);
}

#[test]
fn parent_directories_and_the_git_dir_are_refused() {
    require_pytest();
    let f = Fixture::with_files(&[("tests/test_ok.py", TEST)]);
    let before = f.snapshot();
    for (path, why) in [
        ("../escape.txt", "`..`"),
        (".git/hooks/pre-commit", "`.git`"),
        ("sub/.GIT/config", "`.git`"),
        ("a/../../escape.txt", "`..`"),
    ] {
        let v = check(&f, &new_file(path), &[]);
        assert_eq!(v["outcome"], "patch-failed", "{path}: {v:#}");
        let message = v["patch"]["apply_failure"]["message"]
            .as_str()
            .unwrap_or("");
        assert!(
            message.contains("outside the work tree") && message.contains(why),
            "{path}: {message}"
        );
    }
    assert!(!f.repo.parent().unwrap().join("escape.txt").exists());
    f.assert_untouched(&before);
}

#[test]
fn absolute_paths_are_refused_in_git_and_traditional_diffs() {
    require_pytest();
    let f = Fixture::with_files(&[("tests/test_ok.py", TEST)]);
    let before = f.snapshot();
    let target = f.scratch.join("absolute-target.txt");
    let t = target.display();
    let patches = [
        format!("--- /dev/null\n+++ {t}\n@@ -0,0 +1 @@\n+pwned\n"),
        format!(
            "diff --git a/{t} b/{t}\nnew file mode 100644\n--- /dev/null\n+++ b/{t}\n@@ -0,0 +1 @@\n+pwned\n"
        ),
    ];
    for patch in patches {
        let v = check(&f, &patch, &[]);
        assert_eq!(v["outcome"], "patch-failed", "{patch}: {v:#}");
        let message = v["patch"]["apply_failure"]["message"]
            .as_str()
            .unwrap_or("");
        assert!(message.contains("absolute path"), "{message}");
        assert!(!target.exists());
    }
    f.assert_untouched(&before);
}

#[test]
fn the_fuzzy_fallback_never_writes_through_a_link_at_the_patched_path() {
    require_pytest();
    // The base tree has `notes.txt`, a link to a file outside the checkout. A patch that
    // treats it as a text file does not apply exactly (the link's text is its target), and
    // the fallback must not read and rewrite the file the link points to.
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "line1\nline2\n").unwrap();
    let f = Fixture::with_files(&[("tests/test_ok.py", "def test_ok():\n    pass\n")]);
    std::os::unix::fs::symlink(&victim, f.repo.join("notes.txt")).unwrap();
    crate::setup::git(&f.repo, &["add", "--all"]);
    crate::setup::git(&f.repo, &["commit", "--quiet", "-m", "link"]);
    let patch = "diff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n\
                 @@ -1,2 +1,2 @@\n line1\n-line2\n+pwned\n";
    let v = check(&f, patch, &[]);
    assert_eq!(v["outcome"], "patch-failed", "{v:#}");
    let message = v["patch"]["apply_failure"]["message"].as_str().unwrap();
    assert!(message.contains("symbolic link"), "{message}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "line1\nline2\n");
}

#[test]
fn a_candidate_file_where_the_hidden_tests_go_is_overridden_and_the_patch_graded() {
    require_pytest();
    let f = Fixture::with_files(&[
        ("app.py", "def value():\n    return 0\n"),
        (
            "tests/test_app.py",
            "from app import value\n\ndef test_old():\n    assert value() == 0 or True\n",
        ),
    ]);
    // The hidden tests add tests/unit/test_new.py; the candidate puts a plain file at
    // tests/unit, where their directory must go.
    let tp = f.diff_of(
        "tp.diff",
        &[(
            "tests/unit/test_new.py",
            "from app import value\n\ndef test_new():\n    assert value() == 1\n",
        )],
    );
    let patch = f.diff_of(
        "p.diff",
        &[
            ("app.py", "def value():\n    return 1\n"),
            ("tests/unit", "in the way\n"),
        ],
    );
    let v = f
        .run(
            &CheckArgs::new()
                .runner("pytest")
                .json()
                .patch(&patch)
                .test_patch(&tp)
                .f2p("tests/unit/test_new.py::test_new")
                .p2p("tests/test_app.py::test_old"),
        )
        .json();
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    assert_eq!(
        v["patch"]["overridden_files"],
        serde_json::json!(["tests/unit"]),
        "{v:#}"
    );
}
