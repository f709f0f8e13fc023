//! Resource limits: a candidate whose tests allocate or fork past `--memory` or `--pids` is
//! graded for it, nothing it started is left running, and the same check with room to spare
//! passes: the limit, not the code, made the difference.

use crate::setup::*;
use serde_json::Value;

const TESTS: &str = "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n\n\n\
                     def test_other():\n    assert calc.sub(3, 2) == 1\n";

/// A project whose `add` the candidate rewrites to `body` (then returns `a + b`).
fn project(body: &str) -> (Fixture, std::path::PathBuf) {
    require_pytest();
    let base = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";
    let f = Fixture::with_files(&[("calc.py", base), ("tests/test_calc.py", TESTS)]);
    let patched = base.replace(
        "def add(a, b):\n    return a + b\n",
        &format!("def add(a, b):\n{body}    return a + b\n"),
    );
    let patch = f.diff_of("p.diff", &[("calc.py", &patched)]);
    (f, patch)
}

fn check(f: &Fixture, patch: &std::path::Path, limit: &[&str]) -> Value {
    let args = CheckArgs::new()
        .json()
        .runner("pytest")
        .patch(patch)
        .p2p("tests/test_calc.py::test_add")
        .p2p("tests/test_calc.py::test_other")
        .arg("--no-cache")
        .args(limit);
    f.run(&args).json()
}

#[test]
fn a_test_allocating_1_gib_under_256m_is_breaking() {
    let (f, patch) = project("    hog = b'x' * (1 << 30)\n    del hog\n");
    let before = f.snapshot();
    let v = check(&f, &patch, &["--memory", "256M"]);
    assert_eq!(v["outcome"], "breaking", "{v:#}");
    // In a control group the kernel kills the run (graded by the attribution rule); under
    // setrlimit, where no group can be made, the allocation fails in the test.
    match v.get("aborted") {
        Some(a) => {
            assert_eq!(a["reason"], "resource-limit", "{v:#}");
            assert!(
                a["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("memory limit of 256 MiB (--memory)")),
                "{v:#}"
            );
        }
        None => assert!(
            graded(&v, "tests/test_calc.py::test_add")["message"]
                .as_str()
                .is_some_and(|m| m.contains("MemoryError")),
            "{v:#}"
        ),
    }
    // With room for it, the same code passes.
    let roomy = check(&f, &patch, &["--memory", "4G"]);
    assert_eq!(roomy["outcome"], "no-breakage", "{roomy:#}");
    f.assert_untouched(&before);
}

#[test]
fn a_test_starting_200_processes_under_64_is_breaking_and_leaves_none() {
    let marker = format!("patchgrade-forks-{}", std::process::id());
    let (f, patch) = project(&format!(
        "    import subprocess, sys\n    \
         kids = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', '{marker}']) for _ in range(200)]\n    \
         assert len(kids) == 200\n"
    ));
    let v = check(&f, &patch, &["--pids", "64"]);
    assert_eq!(v["outcome"], "breaking", "{v:#}");
    let add = graded(&v, "tests/test_calc.py::test_add");
    assert_eq!(add["effect"], "broken", "{v:#}");
    assert!(processes_with(&marker).is_empty(), "processes left running");
    // With room for them, the same code passes, and its 200 processes die with the run.
    let roomy = check(&f, &patch, &["--pids", "4096"]);
    assert_eq!(roomy["outcome"], "no-breakage", "{roomy:#}");
    assert!(processes_with(&marker).is_empty(), "processes left running");
}

#[test]
fn a_limit_that_is_no_limit_is_bad_input() {
    let (f, patch) = project("");
    let before = f.snapshot();
    for (flag, value, said) in [
        (
            "--memory",
            "lots",
            "memory limit `lots` is not a size (256M, 2G, or bytes)",
        ),
        (
            "--memory",
            "0",
            "memory limit `0` is not a size (256M, 2G, or bytes)",
        ),
        (
            "--pids",
            "0",
            "the memory and process limits must be greater than zero",
        ),
    ] {
        let run = f.run(
            &CheckArgs::new()
                .runner("pytest")
                .patch(&patch)
                .p2p("t")
                .flag(flag, value),
        );
        assert_eq!(run.code, 2, "{flag} {value}: {}", run.stderr);
        assert_eq!(run.stderr.trim(), format!("patchgrade: error: {said}"));
    }
    f.assert_untouched(&before);
}
