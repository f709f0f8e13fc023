//! The command line's conventions: completions and a manual page, `-q`, `-v`, and colour that
//! honours `--color` and `NO_COLOR`.

use crate::setup::*;

#[test]
fn completions_and_the_manual_page_are_generated() {
    let f = Fixture::empty();
    let bash = f.run(&["completions", "bash"]);
    assert_eq!(bash.code, 0, "{}", bash.stderr);
    for sub in ["check", "batch", "report", "compare", "import"] {
        assert!(bash.stdout.contains(sub), "{sub}");
    }
    // Valid shell.
    let script = f.scratch_file("patchgrade.bash", &bash.stdout);
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .status()
        .unwrap();
    assert!(syntax.success());
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let run = f.run(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        assert!(run.stdout.contains("patchgrade"), "{shell}");
    }
    let bad = f.run(&["completions", "tcsh"]);
    assert_eq!(bad.code, 2);
    let man = f.run(&["man"]);
    assert_eq!(man.code, 0, "{}", man.stderr);
    assert!(man.stdout.contains(".TH patchgrade 1"), "{}", man.stdout);
    assert!(man.stdout.contains("patchgrade\\-check"), "{}", man.stdout);
}

#[test]
fn verbose_says_what_it_does_and_quiet_says_nothing() {
    let f = Fixture::calc();
    let plain = f.run(&CheckArgs::calc("resolved"));
    assert_eq!(plain.outcome(), "resolved");
    assert_eq!(
        plain.stderr, "",
        "a check that goes well says nothing on stderr"
    );
    let verbose = f.run(
        &CheckArgs::new()
            .arg("-v")
            .args(&CheckArgs::calc("resolved")[1..]),
    );
    assert_eq!(verbose.outcome(), "resolved");
    for said in ["patchgrade: checkout of ", "patchgrade: running "] {
        assert!(verbose.stderr.contains(said), "{said}\n{}", verbose.stderr);
    }
    // A second check of the same task reads its baseline from the cache, and says so.
    let again = f.run(
        &CheckArgs::new()
            .arg("-v")
            .args(&CheckArgs::calc("no-op")[1..]),
    );
    if require_bwrap() {
        assert!(
            again.stderr.contains("patchgrade: baseline from the cache"),
            "{}",
            again.stderr
        );
        // The base tree, seen by the first check and kept by the second, is copied by the
        // third, and graded the same (`no-op`, as without it).
        assert!(
            again.stderr.contains("(a copy of the kept base tree)"),
            "{}",
            again.stderr
        );
    }
    // `-vv` shows each command's script, a command started ahead at its gate (the baseline
    // cached, the candidate's tests are the only command) included, once it is written.
    let debug = f.run(
        &CheckArgs::new()
            .arg("-vv")
            .args(&CheckArgs::calc("no-op")[1..]),
    );
    assert_eq!(debug.outcome(), "no-op");
    assert!(
        debug.stderr.lines().any(|l| l.contains("-m pytest")),
        "{}",
        debug.stderr
    );
    let tasks = f.scratch_file(
        "tasks.jsonl",
        &format!(
            "{}\n",
            serde_json::json!({"instance_id": "calc-1", "repo_path": f.repo, "runner": "pytest",
                "test_patch": std::fs::read_to_string(example("patches/hidden-tests.diff")).unwrap(),
                "FAIL_TO_PASS": CALC_F2P, "PASS_TO_PASS": CALC_P2P})
        ),
    );
    let preds = f.scratch_file(
        "preds.jsonl",
        &format!(
            "{}\n",
            serde_json::json!({"instance_id": "calc-1", "model_patch":
                std::fs::read_to_string(example("patches/resolved.diff")).unwrap()})
        ),
    );
    let out = f.scratch.join("out");
    let args = |quiet: bool| {
        let mut a = vec![
            "batch".to_string(),
            "--tasks".into(),
            tasks.display().to_string(),
            "--predictions".into(),
            preds.display().to_string(),
            "--out".into(),
            out.display().to_string(),
        ];
        if quiet {
            a.insert(0, "-q".into());
        }
        a
    };
    let loud = f.run(&args(false));
    assert_eq!(loud.code, 0, "{}", loud.stderr);
    assert!(loud.stderr.contains("Resolve rate"), "{}", loud.stderr);
    std::fs::remove_dir_all(&out).unwrap();
    let quiet = f.run(&args(true));
    assert_eq!(quiet.code, 0);
    assert_eq!(quiet.stderr, "");
    assert!(out.join("results/calc-1.json").is_file());
}

#[test]
fn colour_follows_the_flag_and_no_color() {
    let f = Fixture::calc();
    let human = |color: &str, no_color: Option<&str>| {
        let mut c = f.command(
            &CheckArgs::calc_as("resolved", "human")
                .flag("--color", color)
                .iter()
                .collect::<Vec<_>>(),
        );
        if let Some(v) = no_color {
            c.env("NO_COLOR", v);
        }
        let out = c.output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let always = human("always", None);
    assert!(always.starts_with("\x1b[1;32mResolved: "), "{always:?}");
    // NO_COLOR does not override an explicit request; auto on a pipe is plain.
    assert!(human("always", Some("1")).starts_with("\x1b[1;32m"));
    assert!(human("auto", None).starts_with("Resolved: "));
    assert!(human("never", None).starts_with("Resolved: "));
    assert!(!human("auto", Some("1")).contains('\x1b'));
}
