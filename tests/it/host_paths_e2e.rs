//! Host paths the sandbox hides: those the user names are shown read-only, `--sandbox-ro`
//! and `--sandbox-rw` show any other, and a command that fails on a hidden path is told which
//! and how to show it.

use crate::setup::*;
use std::path::Path;

const TEST: &str = "import m\n\n\ndef test_f():\n    assert m.f() == 1\n";

/// A project whose test command runs `script` (committed), which runs pytest by way of
/// whatever it names.
fn project(script: &str) -> (Fixture, std::path::PathBuf) {
    require_pytest();
    let f = Fixture::with_files(&[
        ("m.py", "def f():\n    return 1\n"),
        ("test_m.py", TEST),
        ("t.sh", script),
    ]);
    let patch = f.diff_of("p.diff", &[("m.py", "def f():\n    return 2\n")]);
    (f, patch)
}

fn args(patch: &Path) -> CheckArgs {
    args_with(patch, "sh t.sh --junitxml={junit} {tests}")
}

fn args_with(patch: &Path, cmd: &str) -> CheckArgs {
    CheckArgs::new()
        .json()
        .patch(patch)
        .ids("pytest")
        .p2p("test_m.py::test_f")
        .test_cmd(cmd)
        .flag("--sandbox", "bwrap")
}

/// A tool in a directory of the host's `/tmp` (the fixture's scratch directory is there),
/// which the script names but the command line does not: hidden, and the error says which
/// path, why and which flag shows it; shown with `--sandbox-ro`, it runs.
#[test]
fn a_hidden_path_is_named_with_the_flag_that_shows_it() {
    if !require_bwrap() {
        return;
    }
    let probe = Fixture::empty();
    let tools = probe.scratch.join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    let tool = tools.join("say");
    std::fs::write(&tool, "#!/bin/sh\necho said\n").unwrap();
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    assert!(tool.starts_with("/tmp") || tool.starts_with(std::env::temp_dir()));
    let (f, patch) = project(&format!(
        "set -e\n{}\nexec python -m pytest \"$@\"\n",
        tool.display()
    ));
    let before = f.snapshot();
    let run = f.run(&args(&patch));
    f.assert_untouched(&before);
    let v = run.json();
    assert_eq!(
        (v["outcome"].as_str(), run.code),
        (Some("error"), 3),
        "{v:#}"
    );
    // Both sides fail alike: the environment's doing, not the patch's.
    assert_eq!(v["error"]["stage"], "baseline");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("the bwrap sandbox hides {}", tool.display()))
            && message.contains("private /tmp")
            && message.contains("--sandbox-ro PATH"),
        "{message}"
    );
    let shown = f.run(&args(&patch).flag("--sandbox-ro", &tools)).json();
    assert_eq!(shown["outcome"], "breaking", "{shown:#}");
    // Read-only: the tool cannot be changed from inside.
    let (g, patch) = project(&format!(
        "echo x > {}/planted || echo refused\nexec python -m pytest \"$@\"\n",
        tools.display()
    ));
    let v = g.run(&args(&patch).flag("--sandbox-ro", &tools)).json();
    assert_eq!(v["outcome"], "breaking", "{v:#}");
    assert!(!tools.join("planted").exists());
    let v = g.run(&args(&patch).flag("--sandbox-rw", &tools)).json();
    assert_eq!(v["outcome"], "breaking", "{v:#}");
    assert!(tools.join("planted").exists());
}

/// A virtualenv's python named on the command line, under the host's `/tmp`: shown.
#[test]
fn a_python_the_command_names_under_tmp_runs() {
    if !require_bwrap() {
        return;
    }
    let (f, patch) = project("exec python -m pytest \"$@\"\n");
    let venv = f.scratch.join("venv");
    let made = std::process::Command::new("python")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .expect("python runs");
    assert!(made.success());
    let python = venv.join("bin/python");
    // Its site-packages reach the pytest the tests run with, as a `.pth` file adds a path.
    let site = |python: &Path| {
        let out = std::process::Command::new(python)
            .args([
                "-c",
                "import sysconfig; print(sysconfig.get_path('purelib'))",
            ])
            .output()
            .expect("python runs");
        std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    };
    let outer = site(Path::new("python"));
    std::fs::write(
        site(&python).join("outer.pth"),
        format!("{}\n", outer.display()),
    )
    .unwrap();
    let cmd = format!(
        "{} -m pytest --junitxml={{junit}} {{tests}}",
        python.display()
    );
    let v = f.run(&args_with(&patch, &cmd)).json();
    assert_eq!(v["outcome"], "breaking", "{v:#}");
}

#[test]
fn a_path_to_show_that_does_not_exist_is_bad_input() {
    let (f, patch) = project("exec python -m pytest \"$@\"\n");
    let before = f.snapshot();
    for flag in ["--sandbox-ro", "--sandbox-rw"] {
        let missing = f.scratch.join("nowhere");
        let run = f.run(&args(&patch).flag(flag, &missing));
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert_eq!(
            run.stderr.trim(),
            format!(
                "patchgrade: error: {}: no such file or directory (named by {flag})",
                missing.display()
            )
        );
        assert!(run.stdout.is_empty());
    }
    f.assert_untouched(&before);
    let left: Vec<_> = std::fs::read_dir(&f.tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
    // In a task file too, relative to it.
    let task = f.scratch_file("t.toml", "sandbox_ro = [\"nowhere\"]\n");
    let run = f.run(&args(&patch).task(&task));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("nowhere: no such file"),
        "{}",
        run.stderr
    );
}

/// vitest, its `node_modules` a symbolic link the project commits, to a directory of the
/// host's `/tmp`: shown, and the fix graded.
#[test]
fn vitest_with_node_modules_linked_to_tmp() {
    if !require_bwrap() || !have_runner("node") {
        return;
    }
    let Ok(modules) = std::env::var("PATCHGRADE_JS_MODULES") else {
        skip("the JavaScript runners are not installed (PATCHGRADE_JS_MODULES is not set)");
        return;
    };
    let f = Fixture::empty();
    let deps = f.scratch.join("deps");
    std::fs::create_dir_all(&deps).unwrap();
    std::os::unix::fs::symlink(&modules, deps.join("node_modules")).unwrap();
    let test = "import { it, expect } from 'vitest';\nimport { mean } from '../calc.js';\n\n\
                it('means', () => expect(mean([1, 3])).toBe(2));\n\
                it('throws', () => expect(() => mean([])).toThrow());\n";
    for (path, text) in [
        ("package.json", "{\"name\": \"calc\", \"private\": true}\n"),
        (
            "calc.js",
            "exports.mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;\n",
        ),
        ("test/calc.test.js", test),
    ] {
        f.write(path, text);
    }
    std::os::unix::fs::symlink(deps.join("node_modules"), f.repo.join("node_modules")).unwrap();
    git(&f.repo, &["init", "--quiet"]);
    git(&f.repo, &["add", "--all"]);
    git(&f.repo, &["commit", "--quiet", "-m", "base"]);
    let fix = f.diff_of(
        "fix.diff",
        &[(
            "calc.js",
            "exports.mean = (xs) => {\n  if (xs.length === 0) throw new Error('empty');\n  \
             return xs.reduce((a, b) => a + b, 0) / xs.length;\n};\n",
        )],
    );
    let before = f.snapshot();
    let run = f.run(
        &CheckArgs::new()
            .json()
            .runner("vitest")
            .patch(&fix)
            .f2p("test/calc.test.js > throws")
            .p2p("test/calc.test.js > means")
            .flag("--sandbox", "bwrap"),
    );
    f.assert_untouched(&before);
    let v = run.json();
    assert_eq!(v["outcome"], "resolved", "{v:#}");
}
