//! The test environment (installed copies, `{workdir}`).

use crate::setup::*;

const CORE: &str = "def div(a, b):\n    return a / b\n";
const FIXED: &str = "--- a/src/pkg/core.py\n+++ b/src/pkg/core.py\n@@ -1,2 +1,4 @@\n def div(a, b):\n+    if b == 0:\n+        raise ValueError('zero')\n     return a / b\n";
const TESTS: &str = "import pytest\n\nfrom pkg.core import div\n\n\ndef test_div():\n    assert div(4, 2) == 2\n\n\ndef test_div_zero():\n    with pytest.raises(ValueError):\n        div(1, 0)\n";

/// A src-layout project whose package is also "installed" elsewhere, as an editable or
/// site-packages install would be.
fn src_layout() -> (Fixture, std::path::PathBuf) {
    require_pytest();
    let f = Fixture::with_files(&[
        ("src/pkg/__init__.py", ""),
        ("src/pkg/core.py", CORE),
        ("tests/test_core.py", TESTS),
        (
            "pyproject.toml",
            "[project]\nname = \"pkg\"\nversion = \"0\"\n",
        ),
    ]);
    let site = f.scratch.join("site");
    std::fs::create_dir_all(site.join("pkg")).unwrap();
    std::fs::write(site.join("pkg/__init__.py"), "").unwrap();
    std::fs::write(site.join("pkg/core.py"), CORE).unwrap();
    (f, site)
}

/// The installed copy lives in the fixture's scratch directory, under `/tmp`, which a
/// sandbox's private `/tmp` hides: these runs are on the host, as a user's installed
/// site-packages would be visible in a sandbox too.
fn check(f: &Fixture, pythonpath: &str) -> serde_json::Value {
    let patch = f.scratch_file("fix.diff", FIXED);
    let env = format!("PYTHONPATH={pythonpath}");
    let before = f.snapshot();
    let run = f.run(
        &CheckArgs::new()
            .runner("pytest")
            .patch(&patch)
            .f2p("tests/test_core.py::test_div_zero")
            .p2p("tests/test_core.py::test_div")
            .flag("--env", &env)
            .flag("--sandbox", "none")
            .json(),
    );
    f.assert_untouched(&before);
    run.json()
}

fn warned_not_imported(v: &serde_json::Value) -> bool {
    v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "patched-code-not-imported")
}

#[test]
fn installed_copy_shadowing_the_checkout_is_warned_about() {
    let (f, site) = src_layout();
    let v = check(&f, site.to_str().unwrap());
    // The tests ran against the installed copy: the fix never ran.
    assert_eq!(v["outcome"], "no-op");
    assert!(warned_not_imported(&v), "{v:#}");
}

#[test]
fn workdir_placeholder_points_tests_at_the_patched_code() {
    let (f, _) = src_layout();
    let v = check(&f, "{workdir}/src");
    assert_eq!(v["outcome"], "resolved", "{v:#}");
    assert!(!warned_not_imported(&v), "{v:#}");
}
