//! Bad or unusual input, end to end: malformed and huge JUnit reports, duplicate test names,
//! shallow and bare repositories, submodules and Git LFS pointers. Each gets a clear message
//! and a defined outcome, never a panic, and the repository stays as it was.

use crate::setup::{CheckArgs, Fixture, git};
use serde_json::Value;

const EDIT: &str = "diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n";

fn fixture() -> (Fixture, std::path::PathBuf) {
    let f = Fixture::with_files(&[("a.txt", "a\n")]);
    let patch = f.scratch_file("p.diff", EDIT);
    (f, patch)
}

/// The verdict of a check whose test command is `cmd`.
fn check(f: &Fixture, patch: &std::path::Path, cmd: &str, extra: &[&str]) -> (Value, String) {
    let run = f.run(&CheckArgs::single_test(patch, cmd).args(extra));
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    (run.json(), run.stderr)
}

#[test]
fn malformed_reports_are_errors_naming_the_report_and_the_problem() {
    let (f, patch) = fixture();
    let before = f.snapshot();
    for (xml, problem) in [
        (
            "<testsuite><testcase name=\"a\" classname=\"t\">",
            "truncated",
        ),
        ("this is not XML at all", "no root element"),
        ("<html><body>500</body></html>", "root element is <html>"),
        ("", "no root element"),
        (
            "<testsuite><testcase name=\"a\" classname=\"t\" name=\"b\"/></testsuite>",
            "attribute",
        ),
    ] {
        let cmd = format!("printf '%s' '{xml}' > {{junit}}");
        let (v, _) = check(&f, &patch, &cmd, &["--baseline", "skip"]);
        assert_eq!(v["outcome"], "error", "{xml}: {v:#}");
        assert_eq!(v["error"]["cause"], "unreadable-report", "{xml}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("junit.xml") && message.contains(problem),
            "{xml}: {message}"
        );
    }
    f.assert_untouched(&before);
}

#[test]
fn a_huge_report_is_read_with_bounded_messages() {
    let (f, patch) = fixture();
    // 20,000 passing cases, then the graded one failing with 20 MB of text; the writer is
    // in the repository, where a sandboxed command can read it.
    f.commit(&[(
        "huge.py",
        "import sys\n\
         with open(sys.argv[1], 'w') as out:\n    \
             out.write('<testsuite>')\n    \
             for i in range(20000):\n        \
                 out.write(f'<testcase classname=\"bulk\" name=\"case_{i}\"><system-out>{\"x\" * 200}</system-out></testcase>')\n    \
             out.write('<testcase classname=\"t\" name=\"a\"><failure message=\"boom\">')\n    \
             out.write('a long line of failure text\\n' * 700000)\n    \
             out.write('</failure></testcase></testsuite>')\n",
    )], "writer");
    let before = f.snapshot();
    let cmd = "python3 huge.py {junit}";
    let (v, _) = check(&f, &patch, cmd, &["--baseline", "skip"]);
    assert_eq!(v["outcome"], "breaking", "{v:#}");
    let graded = crate::setup::graded(&v, "t.a");
    assert_eq!(graded["message"], "boom");
    assert!(graded["details"].as_str().unwrap().len() <= 4100);
    f.assert_untouched(&before);
}

#[test]
fn duplicate_test_names_are_one_test_when_they_agree_and_ambiguous_otherwise() {
    let (f, patch) = fixture();
    let before = f.snapshot();
    // The same test reported twice (a runner that reruns), failing once: the failure counts.
    let twice = "printf '<testsuite><testcase classname=\"t\" name=\"a\"/><testcase classname=\"t\" name=\"a\"><failure message=\"second\"/></testcase></testsuite>' > {junit}";
    let (v, _) = check(&f, &patch, twice, &["--baseline", "skip"]);
    assert_eq!(crate::setup::graded(&v, "t.a")["status"], "failed", "{v:#}");
    // Two files holding the same name are two tests: the id is ambiguous.
    let files = "printf '<testsuite><testcase classname=\"t\" name=\"a\" file=\"x.py\"/><testcase classname=\"t\" name=\"a\" file=\"y.py\"><failure message=\"m\"/></testcase></testsuite>' > {junit}";
    let (v, _) = check(&f, &patch, files, &["--baseline", "skip"]);
    assert!(crate::setup::warning(&v, "ambiguous-id").is_some(), "{v:#}");
    f.assert_untouched(&before);
}

#[test]
fn ids_that_do_not_exist_are_missing_with_suggestions() {
    let (f, patch) = fixture();
    let before = f.snapshot();
    let cmd = "printf '<testsuite><testcase classname=\"t\" name=\"a\"/><testcase classname=\"t\" name=\"alpha\"/></testsuite>' > {junit}";
    let (v, _) = check(&f, &patch, cmd, &["--baseline", "skip", "--f2p", "t.alpah"]);
    let missing = crate::setup::graded(&v, "t.alpah");
    assert_eq!(missing["status"], "missing", "{v:#}");
    assert_eq!(missing["did_you_mean"][0], "t.alpha", "{v:#}");
    f.assert_untouched(&before);
}

const PASS: &str =
    "printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {junit}";

#[test]
fn a_shallow_clone_works_and_a_revision_beyond_it_is_named() {
    let (origin, patch) = fixture();
    origin.commit(&[("a.txt", "a\n"), ("b.txt", "b\n")], "second");
    let shallow = Fixture::empty();
    let url = format!("file://{}", origin.repo.display());
    git(
        shallow.repo.parent().unwrap(),
        &[
            "clone",
            "--quiet",
            "--depth",
            "1",
            &url,
            shallow.repo.to_str().unwrap(),
        ],
    );
    let before = shallow.snapshot();
    let (v, _) = check(&shallow, &patch, PASS, &[]);
    assert_eq!(v["outcome"], "no-breakage", "{v:#}");
    let run = shallow.run(&CheckArgs::single_test(&patch, PASS).args(&["--base", "HEAD~1"]));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("unknown base revision `HEAD~1`"),
        "{}",
        run.stderr
    );
    shallow.assert_untouched(&before);
}

#[test]
fn a_bare_repository_works() {
    let (origin, patch) = fixture();
    let bare = Fixture::empty();
    std::fs::remove_dir(&bare.repo).unwrap();
    git(
        origin.repo.parent().unwrap(),
        &[
            "clone",
            "--quiet",
            "--bare",
            origin.repo.to_str().unwrap(),
            bare.repo.to_str().unwrap(),
        ],
    );
    let before = bare.snapshot();
    let (v, _) = check(
        &bare,
        &patch,
        PASS,
        &["--repo", bare.repo.to_str().unwrap()],
    );
    assert_eq!(v["outcome"], "no-breakage", "{v:#}");
    bare.assert_untouched(&before);
}

#[test]
fn submodules_and_lfs_pointers_are_graded_with_a_warning() {
    let (f, patch) = fixture();
    let lib = Fixture::with_files(&[("lib.txt", "lib\n")]);
    git(
        &f.repo,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "--quiet",
            "add",
            lib.repo.to_str().unwrap(),
            "vendor/lib",
        ],
    );
    f.commit(
        &[
            (
                ".gitattributes",
                "*.bin filter=lfs diff=lfs merge=lfs -text\n",
            ),
            (
                "model.bin",
                "version https://git-lfs.github.com/spec/v1\noid sha256:0000\nsize 12\n",
            ),
        ],
        "submodule and lfs",
    );
    let before = f.snapshot();
    let (v, _) = check(&f, &patch, PASS, &[]);
    assert_eq!(v["outcome"], "no-breakage", "{v:#}");
    let sub = crate::setup::warning(&v, "submodules-not-checked-out").expect("submodule warning");
    assert!(
        sub["message"].as_str().unwrap().contains("vendor/lib"),
        "{sub}"
    );
    let lfs = crate::setup::warning(&v, "lfs-pointers").expect("lfs warning");
    assert!(lfs["message"].as_str().unwrap().contains("*.bin"), "{lfs}");
    f.assert_untouched(&before);
}
