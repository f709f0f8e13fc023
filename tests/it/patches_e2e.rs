//! Odd patches, each made by real `git diff` and applied by `check`: binary files, renames and
//! copies, mode changes, created and deleted files, CRLF, no trailing newline, non-UTF-8
//! content, hunks that moved (offset) or lost context (fuzz), and patches that half apply.
//! Each either applies exactly as git would, or is refused whole with a reason.

use crate::setup::{CheckArgs, Fixture, git, require_pytest};
use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A test command that passes one test, whatever the tree: the point is the checkout.
const PASS: &str =
    "printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {junit}";

/// Every file under `dir` but `.git`, with its bytes and executable bit.
fn tree(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, bool)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            if e.file_name() == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().to_path_buf();
                let exec = meta.permissions().mode() & 0o111 != 0;
                out.insert(rel, (std::fs::read(&path).unwrap(), exec));
            }
        }
    }
    out
}

/// Commit `base`, make `change` in the work tree, and take `git diff --binary` with rename and
/// copy detection; the repository is put back. Returns the patch and the tree git made.
fn git_patch(
    f: &Fixture,
    base: &[(&str, &[u8])],
    change: impl FnOnce(&Path),
) -> (PathBuf, BTreeMap<PathBuf, (Vec<u8>, bool)>) {
    git(&f.repo, &["init", "--quiet"]);
    for (path, bytes) in base {
        std::fs::write(f.repo.join(path), bytes).unwrap();
    }
    git(&f.repo, &["add", "--all"]);
    git(&f.repo, &["commit", "--quiet", "-m", "base"]);
    change(&f.repo);
    let expected = tree(&f.repo);
    git(&f.repo, &["add", "--all"]);
    let out = std::process::Command::new("git")
        .args([
            "diff",
            "--cached",
            "--binary",
            "-M",
            "-C",
            "--find-copies-harder",
        ])
        .current_dir(&f.repo)
        .output()
        .unwrap();
    git(&f.repo, &["reset", "--quiet", "--hard"]);
    git(&f.repo, &["clean", "-fdq"]);
    let patch = f.scratch.join("candidate.diff");
    std::fs::write(&patch, out.stdout).unwrap();
    (patch, expected)
}

/// `check` the patch with `--keep`; the verdict and the candidate's work tree.
fn check(f: &Fixture, patch: &Path, extra: &[&str]) -> (Value, BTreeMap<PathBuf, (Vec<u8>, bool)>) {
    let keep = f.scratch.join(format!("keep-{}", rand_suffix()));
    let mut more = vec!["--baseline", "skip", "--keep", keep.to_str().unwrap()];
    more.extend(extra);
    let args = CheckArgs::single_test(patch, PASS).args(&more);
    let v = f.run(&args).json();
    let work = keep.join("candidate/work");
    let t = if work.exists() {
        tree(&work)
    } else {
        BTreeMap::new()
    };
    (v, t)
}

fn rand_suffix() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    N.fetch_add(1, Ordering::Relaxed).to_string()
}

/// The patch applies exactly and leaves the tree git made.
fn applies_like_git(base: &[(&str, &[u8])], change: impl FnOnce(&Path)) -> Value {
    let f = Fixture::empty();
    let (patch, expected) = git_patch(&f, base, change);
    let before = f.snapshot();
    let (v, work) = check(&f, &patch, &[]);
    assert_eq!(v["outcome"], "no-breakage", "{v:#}");
    assert_eq!(v["patch"]["apply_strategy"], "exact", "{v:#}");
    assert_eq!(work, expected);
    f.assert_untouched(&before);
    v
}

const TEXT: &[u8] = b"one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

#[test]
fn binary_files_change_and_are_created() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    applies_like_git(&[("blob.bin", &bytes)], |repo| {
        let mut changed = bytes.clone();
        changed[100] ^= 0xff;
        changed.extend([0u8, 1, 2, 0xfe]);
        std::fs::write(repo.join("blob.bin"), changed).unwrap();
        std::fs::write(repo.join("new.bin"), [0u8, 0xff, 0x10, 0]).unwrap();
    });
}

#[test]
fn renames_and_copies_with_edits() {
    let v = applies_like_git(&[("old.txt", TEXT), ("src.txt", TEXT)], |repo| {
        let edited = String::from_utf8_lossy(TEXT).replace("five", "FIVE");
        std::fs::remove_file(repo.join("old.txt")).unwrap();
        std::fs::write(repo.join("renamed.txt"), &edited).unwrap();
        std::fs::write(repo.join("copied.txt"), edited).unwrap();
    });
    let files = v["patch"]["files"].as_array().unwrap();
    assert!(files.iter().any(|f| f == "renamed.txt") && files.iter().any(|f| f == "old.txt"));
}

#[test]
fn mode_changes_set_the_executable_bit() {
    applies_like_git(&[("run.sh", b"#!/bin/sh\necho hi\n")], |repo| {
        std::fs::set_permissions(repo.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    });
}

#[test]
fn created_and_deleted_files() {
    applies_like_git(&[("gone.txt", TEXT), ("kept.txt", TEXT)], |repo| {
        std::fs::remove_file(repo.join("gone.txt")).unwrap();
        std::fs::create_dir_all(repo.join("deep/er")).unwrap();
        std::fs::write(repo.join("deep/er/fresh.txt"), "fresh\n").unwrap();
    });
}

#[test]
fn crlf_files_keep_their_line_ends() {
    applies_like_git(&[("dos.txt", b"one\r\ntwo\r\nthree\r\n")], |repo| {
        std::fs::write(repo.join("dos.txt"), b"one\r\nTWO\r\nthree\r\nfour\r\n").unwrap();
    });
}

#[test]
fn files_without_a_trailing_newline() {
    applies_like_git(
        &[("a.txt", b"one\ntwo"), ("b.txt", b"one\ntwo\n")],
        |repo| {
            std::fs::write(repo.join("a.txt"), b"one\nTWO\n").unwrap();
            std::fs::write(repo.join("b.txt"), b"one\nTWO").unwrap();
        },
    );
}

#[test]
fn non_utf8_content() {
    applies_like_git(&[("latin1.txt", b"caf\xe9\nna\xefve\n")], |repo| {
        std::fs::write(
            repo.join("latin1.txt"),
            b"caf\xe9 cr\xe8me\nna\xefve\n\xff\xfe\n",
        )
        .unwrap();
    });
}

/// A patch made against an older version of the file, whose lines have since moved.
fn moved_file(f: &Fixture) -> PathBuf {
    let body: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let (patch, _) = git_patch(f, &[("m.txt", body.as_bytes())], |repo| {
        std::fs::write(
            repo.join("m.txt"),
            body.replace("line 20\n", "line twenty\n"),
        )
        .unwrap();
    });
    // Since then, five lines were added at the top, and a line near the hunk changed.
    let header: String = (1..=5).map(|i| format!("header {i}\n")).collect();
    let now = format!("{header}{}", body.replace("line 17\n", "line seventeen\n"));
    f.commit(&[("m.txt", &now)], "moved");
    patch
}

#[test]
fn a_moved_hunk_applies_with_offset_and_fuzz_unless_strict() {
    let f = Fixture::empty();
    let patch = moved_file(&f);
    let before = f.snapshot();
    let (v, work) = check(&f, &patch, &[]);
    assert_eq!(v["outcome"], "no-breakage", "{v:#}");
    assert_eq!(v["patch"]["apply_strategy"], "fuzzy");
    let moved = &v["patch"]["moved_hunks"][0];
    assert_eq!(
        (&moved["file"], &moved["offset"], &moved["fuzz"]),
        (&"m.txt".into(), &5.into(), &1.into()),
        "{v:#}"
    );
    let text = String::from_utf8(work[Path::new("m.txt")].0.clone()).unwrap();
    assert!(
        text.contains("line seventeen\n") && text.contains("line twenty\n"),
        "{text}"
    );
    assert!(!text.contains("line 20\n"));

    let (strict, _) = check(&f, &patch, &["--strict-apply"]);
    assert_eq!(strict["outcome"], "patch-failed", "{strict:#}");
    assert_eq!(strict["patch"]["apply_failure"]["file"], "m.txt");
    f.assert_untouched(&before);
}

#[test]
fn a_patch_that_half_applies_changes_nothing() {
    let f = Fixture::empty();
    let (patch, _) = git_patch(&f, &[("a.txt", TEXT), ("b.txt", TEXT)], |repo| {
        std::fs::write(
            repo.join("a.txt"),
            String::from_utf8_lossy(TEXT).replace("two", "TWO"),
        )
        .unwrap();
        std::fs::write(
            repo.join("b.txt"),
            String::from_utf8_lossy(TEXT).replace("nine", "NINE"),
        )
        .unwrap();
    });
    // b.txt has since changed beyond recognition; a.txt's hunk alone would still apply.
    f.commit(&[("b.txt", "something else entirely\n")], "rewrite b");
    let before = f.snapshot();
    let (v, work) = check(&f, &patch, &[]);
    assert_eq!(v["outcome"], "patch-failed", "{v:#}");
    assert_eq!(v["patch"]["apply_failure"]["file"], "b.txt", "{v:#}");
    let message = v["patch"]["apply_failure"]["message"].as_str().unwrap();
    assert!(message.contains("with offset and fuzz"), "{message}");
    // Nothing of the patch is in the checkout, a.txt included.
    assert_eq!(work[Path::new("a.txt")].0, TEXT);
    f.assert_untouched(&before);
}

/// A candidate that "fixes" a failing test by editing the test (and conftest.py).
#[test]
fn edits_to_protected_paths_warn_revert_or_reject() {
    crate::setup::require_pytest();
    let f = Fixture::with_files(&[
        ("app.py", "def value():\n    return 1\n"),
        (
            "tests/test_app.py",
            "from app import value\n\ndef test_value():\n    assert value() == 2\n",
        ),
        ("tests/conftest.py", "\n"),
    ]);
    let cheat = f.diff_of(
        "cheat.diff",
        &[
            (
                "tests/test_app.py",
                "from app import value\n\ndef test_value():\n    assert value() == 1\n",
            ),
            ("tests/conftest.py", "# collect_ignore = []\n"),
            ("app.py", "def value():\n    return 1  # touched\n"),
        ],
    );
    let before = f.snapshot();
    let run = |extra: &[&str]| -> Value {
        let args = CheckArgs::new()
            .runner("pytest")
            .json()
            .patch(&cheat)
            .f2p("tests/test_app.py::test_value")
            .args(extra);
        f.run(&args).json()
    };
    let protected = serde_json::json!(["tests/conftest.py", "tests/test_app.py"]);
    let warned = run(&[]);
    assert_eq!(warned["outcome"], "resolved", "{warned:#}");
    assert_eq!(warned["patch"]["protected_edits"], protected);
    assert!(
        crate::setup::warning(&warned, "protected-edit").is_some(),
        "{warned:#}"
    );

    let reverted = run(&["--on-protected-edit", "revert"]);
    assert_eq!(
        reverted["outcome"], "no-op",
        "the test is the base's again: {reverted:#}"
    );
    assert_eq!(reverted["patch"]["protected_edits"], protected);

    let rejected = run(&["--on-protected-edit", "reject"]);
    assert_eq!(rejected["outcome"], "patch-failed", "{rejected:#}");
    let message = rejected["patch"]["apply_failure"]["message"]
        .as_str()
        .unwrap();
    assert!(
        message.contains("protected paths (tests/conftest.py, tests/test_app.py)"),
        "{message}"
    );

    // An added glob protects the code too; a bad one is bad input.
    let more = run(&["--protect", "app.py", "--on-protected-edit", "reject"]);
    assert!(
        more["patch"]["apply_failure"]["message"]
            .as_str()
            .unwrap()
            .contains("app.py")
    );
    let bad = f.run(
        &CheckArgs::new()
            .runner("pytest")
            .patch(&cheat)
            .f2p("x")
            .flag("--protect", "a["),
    );
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("--protect `a[`"), "{}", bad.stderr);
    f.assert_untouched(&before);
}

#[test]
fn an_edit_to_a_runner_section_of_pyproject_is_a_protected_edit() {
    require_pytest();
    let pyproject = "[project]\nname = \"m\"\nversion = \"1.0\"\n\n[tool.pytest.ini_options]\nxfail_strict = true\n";
    let f = Fixture::with_files(&[
        ("pyproject.toml", pyproject),
        ("m.py", "def f():\n    return 0\n"),
        (
            "tests/test_m.py",
            "from m import f\n\ndef test_f():\n    assert f() == 1\n",
        ),
    ]);
    let fix = "def f():\n    return 1\n";
    // Turning the failing test into an expected failure, from the runner's section.
    let cheat = f.diff_of(
        "cheat.diff",
        &[
            ("m.py", fix),
            (
                "pyproject.toml",
                &pyproject.replace(
                    "xfail_strict = true\n",
                    "xfail_strict = true\naddopts = \"-p no:cacheprovider\"\n",
                ),
            ),
        ],
    );
    // A version bump is an edit to the file, not to the runner's configuration.
    let bump = f.diff_of(
        "bump.diff",
        &[
            ("m.py", fix),
            ("pyproject.toml", &pyproject.replace("1.0", "1.1")),
        ],
    );
    let run = |patch: &std::path::Path, extra: &[&str]| -> Value {
        f.run(
            &CheckArgs::new()
                .runner("pytest")
                .json()
                .patch(patch)
                .f2p("tests/test_m.py::test_f")
                .args(extra),
        )
        .json()
    };
    let warned = run(&cheat, &[]);
    assert_eq!(
        warned["patch"]["protected_edits"],
        serde_json::json!(["pyproject.toml [tool.pytest.ini_options]"]),
        "{warned:#}"
    );
    assert!(crate::setup::warning(&warned, "protected-edit").is_some());
    let bumped = run(&bump, &[]);
    assert_eq!(bumped["outcome"], "resolved", "{bumped:#}");
    assert!(
        bumped["patch"].get("protected_edits").is_none(),
        "{bumped:#}"
    );
    let rejected = run(&cheat, &["--on-protected-edit", "reject"]);
    assert_eq!(rejected["outcome"], "patch-failed", "{rejected:#}");
    let reverted = run(&cheat, &["--on-protected-edit", "revert"]);
    // The whole file goes back to base; the fix in m.py stays.
    assert_eq!(reverted["outcome"], "resolved", "{reverted:#}");
}

/// A patch as a language model writes it, in a Markdown fence or an HTML `<pre>` block with
/// its quotes escaped: the wrapper comes off (and the escapes are decoded), the patch is
/// graded as the plain one is, and a warning says so. Left escaped, `&quot;` would be a
/// syntax error in the patched code.
#[test]
fn a_wrapped_patch_is_unwrapped_graded_and_reported() {
    require_pytest();
    let f = Fixture::calc();
    let plain =
        std::fs::read_to_string(crate::setup::example("patches/breaking-resolved.diff")).unwrap();
    let escaped = plain
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;");
    for (name, text, says) in [
        (
            "fenced.diff",
            format!("Here is the fix:\n\n```diff\n{plain}```\n"),
            "Markdown",
        ),
        (
            "pre.diff",
            format!("<pre><code>\n{escaped}</code></pre>\n"),
            "escapes",
        ),
    ] {
        let patch = f.scratch_file(name, &text);
        let run = f.run(
            &CheckArgs::new()
                .runner("pytest")
                .json()
                .test_patch(crate::setup::example("patches/hidden-tests.diff"))
                .patch(&patch)
                .f2p_all(crate::setup::CALC_F2P)
                .p2p_all(crate::setup::CALC_P2P),
        );
        let v = run.json();
        assert_eq!(v["outcome"], "breaking-resolved", "{name}: {v:#}");
        let w = crate::setup::warning(&v, "wrapped-patch").unwrap_or_else(|| panic!("{v:#}"));
        assert!(w["message"].as_str().unwrap().contains(says), "{w}");
    }
}

/// The tree SWE-bench's chain makes of `patch` on a fresh clone of the fixture's base: `git
/// apply`, else GNU `patch --batch --fuzz=5 -p1` (which creates a file a change from line 0
/// names, where git refuses it).
fn git_apply_tree(f: &Fixture, patch: &Path) -> BTreeMap<PathBuf, (Vec<u8>, bool)> {
    let clone = f.scratch.join(format!("clone-{}", rand_suffix()));
    let ok = std::process::Command::new("git")
        .args(["clone", "--quiet"])
        .arg(&f.repo)
        .arg(&clone)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let git_applied = std::process::Command::new("git")
        .arg("apply")
        .arg(patch)
        .current_dir(&clone)
        .status()
        .unwrap()
        .success();
    if !git_applied {
        let applied = std::process::Command::new("patch")
            .args(["--batch", "--fuzz=5", "-p1", "-i"])
            .arg(patch)
            .current_dir(&clone)
            .output()
            .unwrap();
        assert!(
            applied.status.success(),
            "patch: {}",
            String::from_utf8_lossy(&applied.stdout)
        );
    }
    std::fs::remove_dir_all(clone.join(".git")).unwrap();
    tree(&clone)
}

/// A base with these files (`true`: executable), committed.
fn base_repo(files: &[(&str, &str, bool)]) -> Fixture {
    let f = Fixture::empty();
    git(&f.repo, &["init", "--quiet"]);
    for (path, text, exec) in files {
        let full = f.repo.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(&full, text).unwrap();
        if *exec {
            std::fs::set_permissions(&full, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    git(&f.repo, &["add", "--all"]);
    git(&f.repo, &["commit", "--quiet", "-m", "base"]);
    f
}

/// Patches in shapes real model predictions have (SWE-bench Lite submissions) that SWE-bench's
/// chain applies: `check` makes the same tree.
#[test]
fn prediction_shapes_git_apply_takes_apply_the_same_way() {
    let base: &[(&str, &str, bool)] = &[
        ("pkg/core.py", "def f():\n    return 1\n", false),
        ("run.sh", "#!/bin/sh\necho one\n", true),
    ];
    let shapes: &[(&str, &str)] = &[
        // A new module written as a change of a file that is not there (27 of 1,024).
        (
            "new file as a change",
            "--- a/pkg/helpers.py\n+++ b/pkg/helpers.py\n@@ -0,0 +1,2 @@\n+def g():\n+    return 2\n",
        ),
        (
            "new file as a git change",
            "diff --git a/pkg/helpers.py b/pkg/helpers.py\n--- a/pkg/helpers.py\n+++ b/pkg/helpers.py\n@@ -0,0 +1,2 @@\n+def g():\n+    return 2\n",
        ),
        // An empty `__init__.py`, as `git diff` writes it: no hunk at all (4 of 1,024).
        (
            "empty new file",
            "diff --git a/pkg/sub/__init__.py b/pkg/sub/__init__.py\nnew file mode 100644\nindex 0000000..e69de29\ndiff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 3\n",
        ),
        // A plain diff of an executable file: it stays executable (3 of 1,024).
        (
            "plain diff of an executable",
            "--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-echo one\n+echo two\n",
        ),
        // The last line of the patch without its newline (cut, or an editor took it: `git
        // diff` would have said `\ No newline at end of file`). git and GNU patch refuse it;
        // patchgrade applies it as if the newline were there, a difference the guide lists.
        (
            "no final newline",
            "--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 4",
        ),
    ];
    for (shape, text) in shapes {
        let f = base_repo(base);
        let patch = f.scratch_file("prediction.diff", text);
        let whole = f.scratch_file("whole.diff", &format!("{}\n", text.trim_end_matches('\n')));
        let expected = git_apply_tree(&f, &whole);
        let before = f.snapshot();
        let (v, work) = check(&f, &patch, &[]);
        assert_eq!(v["outcome"], "no-breakage", "{shape}: {v:#}");
        assert_eq!(work, expected, "{shape}");
        f.assert_untouched(&before);
    }
}

/// Real predictions (moatless-tools' 2024-11-17 run, `fixtures/predictions/`) that add files
/// under directories the base lacks, each written as a change from line 0 and followed by an
/// empty line before the next file: SWE-bench's chain applies them, and `check` makes the
/// same tree (it once counted the empty line into the hunk and refused the file as missing).
#[test]
fn real_predictions_adding_files_under_new_directories_apply_as_swebench_applies_them() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/predictions/moatless-20241117");
    for name in ["mwaskom__seaborn-2848.diff", "pylint-dev__pylint-7228.diff"] {
        let f = base_repo(&[("pkg/core.py", "def f():\n    return 1\n", false)]);
        let patch = dir.join(name);
        let expected = git_apply_tree(&f, &patch);
        let before = f.snapshot();
        let (v, work) = check(&f, &patch, &[]);
        assert_eq!(v["outcome"], "no-breakage", "{name}: {v:#}");
        assert!(work.len() > 2, "{name}: {work:?}");
        assert_eq!(work, expected, "{name}");
        f.assert_untouched(&before);
    }
}

/// `Binary files … differ` beside text edits (4 of 1,024): the text applies, the binary
/// entry is named in a warning, and nothing is written for it.
#[test]
fn binary_entries_without_data_are_reported_and_the_text_applies() {
    let f = base_repo(&[("pkg/core.py", "def f():\n    return 1\n", false)]);
    let text = "diff --git a/docs/logo.png b/docs/logo.png\nnew file mode 100644\nindex 0000000..5d1a2b3\nBinary files /dev/null and b/docs/logo.png differ\ndiff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 5\n";
    let patch = f.scratch_file("prediction.diff", text);
    let before = f.snapshot();
    let (v, work) = check(&f, &patch, &[]);
    assert_eq!(v["outcome"], "no-breakage", "{v:#}");
    let warning = crate::setup::warning(&v, "binary-not-applied").expect("a warning");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("docs/logo.png"),
        "{v:#}"
    );
    assert_eq!(
        work.get(Path::new("pkg/core.py"))
            .map(|(b, _)| b.as_slice()),
        Some(&b"def f():\n    return 5\n"[..])
    );
    assert!(!work.contains_key(Path::new("docs/logo.png")));
    f.assert_untouched(&before);
}

/// A hunk whose header miscounts its lines (models do): counted again as `git apply
/// --recount` does, with a `recounted-hunks` warning, since a plain `git apply` refuses it.
#[test]
fn miscounted_hunks_are_counted_again_and_said() {
    let f = base_repo(&[(
        "pkg/core.py",
        "def f():\n    return 1\n\n\ndef g():\n    return 2\n",
        false,
    )]);
    // Two lines added, the header says one.
    let text = "--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,3 +1,4 @@\n def f():\n-    return 1\n+    x = 1\n+    y = 0\n+    return x + y\n \n@@ -5,2 +7,2 @@\n def g():\n-    return 2\n+    return 3\n";
    let patch = f.scratch_file("prediction.diff", text);
    let clone = f.scratch.join("recount");
    git(
        &f.scratch,
        &["clone", "--quiet", f.repo.to_str().unwrap(), "recount"],
    );
    let plain = std::process::Command::new("git")
        .args(["apply", "--check"])
        .arg(&patch)
        .current_dir(&clone)
        .status()
        .unwrap();
    assert!(!plain.success(), "git apply takes it without --recount");
    git(&clone, &["apply", "--recount", patch.to_str().unwrap()]);
    std::fs::remove_dir_all(clone.join(".git")).unwrap();
    let expected = tree(&clone);
    let before = f.snapshot();
    let (v, work) = check(&f, &patch, &[]);
    assert_eq!(v["outcome"], "no-breakage", "{v:#}");
    assert!(
        crate::setup::warning(&v, "recounted-hunks").is_some(),
        "{v:#}"
    );
    assert_eq!(work, expected);
    f.assert_untouched(&before);
}

/// Where SWE-bench's last resort, `patch --batch`, is not faithful, patchgrade refuses and
/// says why: a patch already in the tree (`patch` assumes -R and undoes it), and the deletion
/// of a file that is not there (`patch` assumes -R and creates it). The reason names the
/// file as the patch does, never the temporary checkout.
#[test]
fn what_patch_would_reverse_is_refused_and_said() {
    let f = base_repo(&[("pkg/core.py", "def f():\n    return 3\n", false)]);
    let cases = [
        (
            "already applied",
            "--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 3\n",
            "pkg/core.py",
        ),
        (
            "deletes a file that is not there",
            "diff --git a/pkg/gone.py b/pkg/gone.py\ndeleted file mode 100644\nindex 1234567..0000000\n--- a/pkg/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x = 1\n",
            "pkg/gone.py",
        ),
    ];
    for (case, text, file) in cases {
        let patch = f.scratch_file("prediction.diff", text);
        let before = f.snapshot();
        let (v, _) = check(&f, &patch, &[]);
        assert_eq!(v["outcome"], "patch-failed", "{case}: {v:#}");
        let failure = &v["patch"]["apply_failure"];
        assert_eq!(failure["file"], file, "{case}");
        let message = failure["message"].as_str().unwrap();
        assert!(
            message.contains("the patch is already applied: its reverse applies here"),
            "{case}: {message}"
        );
        assert!(
            !message.contains("/tmp") && !message.contains(f.tmp.to_str().unwrap()),
            "{case}: {message}"
        );
        f.assert_untouched(&before);
    }
    // A patch that does not apply for another reason says nothing of the kind.
    let patch = f.scratch_file(
        "stale.diff",
        "--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1,2 +1,2 @@\n def g():\n-    return 1\n+    return 2\n",
    );
    let (v, _) = check(&f, &patch, &[]);
    assert_eq!(v["outcome"], "patch-failed", "{v:#}");
    assert!(
        !v["patch"]["apply_failure"]["message"]
            .as_str()
            .unwrap()
            .contains("already applied")
    );
}
