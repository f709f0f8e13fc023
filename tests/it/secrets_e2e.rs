//! A clean environment for every command: a key in patchgrade's environment, or a token in the
//! user's home, never reaches the tests, so no output they write into (the verdict, the human
//! output, the feedback, a batch's results) can carry it, unless the user passes it on purpose.

use crate::setup::*;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

const SECRET: &str = "sk-patchgrade-test-7f3a9c";

/// A candidate whose `add` first runs `probe` (Python lines, indented), which raises what it
/// finds.
fn probing(f: &Fixture, probe: &str) -> PathBuf {
    let calc = std::fs::read_to_string(f.repo.join("calc.py")).unwrap();
    let probing = calc.replace(
        "def add(a, b):\n    return a + b\n",
        &format!("def add(a, b):\n    import os\n{probe}    return a + b\n"),
    );
    assert_ne!(probing, calc);
    f.diff_of("probe.diff", &[("calc.py", &probing)])
}

/// A candidate whose code raises whatever `MY_API_KEY` it can see.
fn leaking(f: &Fixture) -> PathBuf {
    probing(
        f,
        "    key = os.environ.get('MY_API_KEY')\n    assert key is None, 'found ' + str(key)\n",
    )
}

#[test]
fn a_key_in_the_environment_reaches_no_output_unless_passed() {
    let f = Fixture::calc();
    let patch = leaking(&f);
    let env = [("MY_API_KEY", OsStr::new(SECRET))];
    let args = |format: &str| calc_args(&patch, format);
    for format in ["json", "human", "feedback"] {
        let run = f.run_with_env(&args(format), &env);
        assert!(!run.stdout.contains(SECRET), "{format}:\n{}", run.stdout);
        assert!(!run.stderr.contains(SECRET), "{format}:\n{}", run.stderr);
        if format == "json" {
            let v = run.json();
            assert_eq!(v["outcome"], "no-op", "{v:#}");
            let names = v["isolation"]["env"].as_array().unwrap();
            assert!(names.iter().any(|n| n == "PATH"), "{names:?}");
            assert!(!names.iter().any(|n| n == "MY_API_KEY"), "{names:?}");
        }
    }
    // Passed on purpose, the key reaches the tests (the attack the default stops), and the
    // verdict names it, never its value but where the tests wrote it.
    let passed = f
        .run_with_env(&args("json").flag("--pass-env", "MY_API_KEY"), &env)
        .json();
    assert_eq!(passed["outcome"], "regression", "{passed:#}");
    assert!(passed.to_string().contains(SECRET), "{passed:#}");
    let names = passed["isolation"]["env"].as_array().unwrap();
    assert!(names.iter().any(|n| n == "MY_API_KEY"), "{names:?}");

    assert_no_batch_output_holds(&f, &patch, &env, SECRET);
}

/// The calc task with the hidden tests and this candidate, in this output format.
fn calc_args(patch: &Path, format: &str) -> CheckArgs {
    CheckArgs::new()
        .runner("pytest")
        .format(format)
        .test_patch(example("patches/hidden-tests.diff"))
        .patch(patch)
        .f2p_all(CALC_F2P)
        .p2p_all(CALC_P2P)
}

/// A batch of the one task with this candidate: nothing under its output directory, nor its
/// report, holds `secret`.
fn assert_no_batch_output_holds(f: &Fixture, patch: &Path, env: &[(&str, &OsStr)], secret: &str) {
    let task = serde_json::json!({
        "instance_id": "calc-leak",
        "repo": "example/calc",
        "repo_path": f.repo,
        "base_commit": "HEAD",
        "test_patch": std::fs::read_to_string(example("patches/hidden-tests.diff")).unwrap(),
        "FAIL_TO_PASS": serde_json::to_string(&CALC_F2P).unwrap(),
        "PASS_TO_PASS": serde_json::to_string(&CALC_P2P).unwrap(),
    });
    let pred = serde_json::json!({
        "instance_id": "calc-leak",
        "model_name_or_path": "m",
        "model_patch": std::fs::read_to_string(patch).unwrap(),
    });
    let tasks = f.scratch_file("tasks.jsonl", &format!("{task}\n"));
    let preds = f.scratch_file("preds.jsonl", &format!("{pred}\n"));
    let out = f.scratch.join("run");
    let batch = f.run_with_env(
        &[
            "batch".as_ref(),
            "--tasks".as_ref(),
            tasks.as_os_str(),
            "--predictions".as_ref(),
            preds.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
            "--runner".as_ref(),
            "pytest".as_ref(),
        ],
        env,
    );
    assert_eq!(batch.code, 0, "{}", batch.stderr);
    assert!(!batch.stdout.contains(secret) && !batch.stderr.contains(secret));
    let mut stack = vec![out.clone()];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files += 1;
                let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                assert!(!text.contains(secret), "{}", path.display());
            }
        }
    }
    assert!(files > 0);
    let report = f.run_with_env(&["report".as_ref(), out.as_os_str()], env);
    assert!(!report.stdout.contains(secret), "{}", report.stdout);
}

const TOKEN: &str = "npm_patchgradeHomeToken4e1d";

/// A candidate whose code raises what the user's `~/.npmrc` holds, if it can read it.
fn reading_the_home(f: &Fixture) -> PathBuf {
    probing(
        f,
        "    p = os.path.expanduser('~/.npmrc')\n    assert not os.path.exists(p), open(p).read()\n",
    )
}

#[test]
fn a_token_in_the_home_reaches_no_output_unless_shown() {
    if !require_bwrap() {
        return skip("bwrap is not installed");
    }
    let f = Fixture::calc();
    let patch = reading_the_home(&f);
    // A home outside the host's /tmp, which the sandbox makes private anyway: only the empty
    // home hides it.
    let home = tempfile::Builder::new()
        .prefix("home-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let npmrc = home.path().join(".npmrc");
    std::fs::write(
        &npmrc,
        format!("//registry.npmjs.org/:_authToken={TOKEN}\n"),
    )
    .unwrap();
    let env = [("HOME", home.path().as_os_str())];
    let args = |format: &str| calc_args(&patch, format);
    for format in ["json", "human", "feedback"] {
        let run = f.run_with_env(&args(format), &env);
        assert!(!run.stdout.contains(TOKEN), "{format}:\n{}", run.stdout);
        assert!(!run.stderr.contains(TOKEN), "{format}:\n{}", run.stderr);
        if format == "json" {
            assert_eq!(run.json()["outcome"], "no-op", "{}", run.stdout);
        }
    }
    assert_no_batch_output_holds(&f, &patch, &env, TOKEN);
    // Without the sandbox the same candidate reads the token and puts it in the verdict: the
    // attack is real, and the empty home is what stops it.
    let bare = f.run_with_env(&args("json").flag("--sandbox", "none"), &env);
    assert_eq!(bare.json()["outcome"], "regression", "{}", bare.stdout);
    assert!(bare.stdout.contains(TOKEN), "{}", bare.stdout);
    // Shown on purpose, the file is read.
    let shown = f.run_with_env(&args("json").flag("--sandbox-ro", &npmrc), &env);
    assert_eq!(shown.json()["outcome"], "regression", "{}", shown.stdout);
    assert!(shown.stdout.contains(TOKEN), "{}", shown.stdout);
}
