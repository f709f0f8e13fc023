//! Python bytecode seeds: a sandboxed baseline's bytecode, sealed hash-checked, starts later
//! fresh checkouts warm; it never changes a verdict, and nothing but sealed bytecode is
//! planted.

use crate::setup::*;
use std::path::{Path, PathBuf};

/// Every `.pyc` under `dir`.
fn pycs(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "pyc") {
                found.push(path);
            }
        }
    }
    found
}

/// The flags word of a `.pyc`'s header (3: hash-based and checked).
fn flags(pyc: &Path) -> u32 {
    let bytes = std::fs::read(pyc).unwrap();
    u32::from_le_bytes(bytes[4..8].try_into().unwrap())
}

#[test]
fn a_baselines_sealed_bytecode_starts_the_next_checkout_and_never_changes_a_verdict() {
    if !require_bwrap() {
        return;
    }
    let f = Fixture::calc();
    // A module no test imports, to see what is planted and what is not.
    f.commit(&[("extra.py", "VALUE = 1\n")], "extra");
    let calc = |patch: &str| {
        CheckArgs::new()
            .runner("pytest")
            .json()
            .test_patch(example("patches/hidden-tests.diff"))
            .patch(example(&format!("patches/{patch}.diff")))
            .f2p_all(CALC_F2P)
            .p2p_all(CALC_P2P)
    };
    // The first check runs the baseline, sandboxed, and keeps its bytecode.
    let first = f.run(&calc("resolved")).json();
    assert_eq!(first["outcome"], "resolved", "{first:#}");
    let builds = f.cache_home().join("patchgrade/builds");
    let kept = pycs(&builds);
    let named = |prefix: &str| {
        kept.iter()
            .any(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
    };
    // The module the tests import, and pytest's rewritten test file.
    assert!(named("calc.") && named("test_calc."), "{kept:?}");
    assert!(kept.iter().all(|p| flags(p) == 3), "all sealed: {kept:?}");

    // The next candidates start from it; each patched module compiles anew, so the verdicts
    // are those of checks without any cache.
    for patch in ["regression", "partially-resolved", "resolved"] {
        let seeded = f.run(&calc(patch).flag("--baseline", "skip")).json();
        assert_eq!(seeded["runs"]["candidate"]["seeded"], true, "{seeded:#}");
        let cold = f
            .run(&calc(patch).flag("--baseline", "skip").arg("--no-cache"))
            .json();
        assert!(
            cold["runs"]["candidate"].get("seeded").is_none(),
            "{cold:#}"
        );
        assert_eq!(seeded["outcome"], cold["outcome"], "{patch}");
        // Test for test, but the tracebacks' object addresses.
        let graded = |v: &serde_json::Value| -> Vec<(String, String, String, String)> {
            v["tests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    let field = |k: &str| t[k].as_str().unwrap_or_default().to_string();
                    (
                        field("id"),
                        field("status"),
                        field("effect"),
                        field("message"),
                    )
                })
                .collect()
        };
        assert_eq!(graded(&seeded), graded(&cold), "{patch}");
    }

    // Only sealed bytecode is planted: a timestamp `.pyc` put into the seed (the kind that a
    // file of the same size and time fools) is not; a sealed one for the module as it is, is.
    let seed = kept
        .iter()
        .find(|p| p.to_string_lossy().contains("/bytecode/"))
        .and_then(|p| {
            let s = p.to_string_lossy();
            s.find("/bytecode/")
                .map(|i| PathBuf::from(&s[..i + "/bytecode".len()]))
        })
        .expect("the seed's bytecode directory");
    let sealed = kept
        .iter()
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("calc.")
        })
        .expect("calc's sealed bytecode");
    let tag = sealed
        .file_name()
        .unwrap()
        .to_string_lossy()
        .split('.')
        .nth(1)
        .unwrap()
        .to_string();
    std::fs::create_dir_all(seed.join("__pycache__")).unwrap();
    let planted = seed.join(format!("__pycache__/extra.{tag}.pyc"));
    let compile = |mode: &str, out: &Path| {
        let script = format!(
            "import py_compile; py_compile.compile('extra.py', cfile={:?}, invalidation_mode=py_compile.PycInvalidationMode.{mode})",
            out.display().to_string()
        );
        let ok = std::process::Command::new("python")
            .args(["-c", &script])
            .current_dir(&f.repo)
            .status()
            .unwrap()
            .success();
        assert!(ok, "py_compile");
    };
    let keep = |name: &str| {
        let keep = f.scratch.join(name);
        let v = f
            .run(
                &calc("regression")
                    .flag("--baseline", "skip")
                    .flag("--keep", &keep),
            )
            .json();
        assert_eq!(v["outcome"], "regression", "{v:#}");
        keep.join(format!("candidate/work/__pycache__/extra.{tag}.pyc"))
    };
    compile("TIMESTAMP", &planted);
    assert_eq!(flags(&planted), 0);
    assert!(!keep("timestamp").exists(), "a timestamp .pyc was planted");
    compile("CHECKED_HASH", &planted);
    let there = keep("checked");
    assert_eq!(
        std::fs::read(&there).ok(),
        std::fs::read(&planted).ok(),
        "the sealed .pyc is planted"
    );
}
