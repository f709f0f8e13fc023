//! `--workdir-pool`: reused checkouts grade exactly as fresh ones, are reset between runs (a
//! patch's files and untracked files gone, ignored build output kept), and are never shared by
//! two runs at once. Real git, real pytest.

use crate::setup::{CheckArgs, Fixture};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What a verdict says about the patch, without timings and paths.
fn graded(v: &Value) -> Value {
    let tests: Vec<Value> = v["tests"]
        .as_array()
        .map(|tests| {
            tests
                .iter()
                .map(|t| {
                    serde_json::json!([
                        t["id"],
                        t["status"],
                        t["base_status"],
                        t["effect"],
                        t["message"]
                    ])
                })
                .collect()
        })
        .unwrap_or_default();
    serde_json::json!({
        "outcome": v["outcome"],
        "counts": v["counts"],
        "tests": tests,
        "apply_failure": v["patch"]["apply_failure"],
        "overridden": v["patch"]["overridden_files"],
    })
}

fn check_calc(f: &Fixture, patch: &str, extra: &[&str]) -> Value {
    let mut args = vec!["--no-cache"];
    args.extend(extra);
    f.run(&CheckArgs::calc(patch).args(&args)).json()
}

/// The slots of a pool: `DIR/<repository>/slot-<n>` (beside each, its `.snapshot`).
fn slots(pool: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for repo in std::fs::read_dir(pool).unwrap().flatten() {
        for e in std::fs::read_dir(repo.path()).unwrap().flatten() {
            if e.path().is_dir() && e.path().extension().is_none() {
                found.push(e.path());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn verdicts_with_the_pool_are_those_without_it() {
    let f = Fixture::calc();
    let before = f.snapshot();
    let pool = f.scratch.join("pool");
    let pool_arg = ["--workdir-pool", pool.to_str().unwrap()];
    // Every outcome, then again in reverse, so each slot is reset after a different patch.
    let order = [
        "resolved",
        "regression",
        "breaking-resolved",
        "patch-failed",
        "partially-resolved",
        "work-in-progress",
        "no-op",
        "empty",
    ];
    for name in order.iter().chain(order.iter().rev()) {
        let fresh = check_calc(&f, name, &[]);
        let pooled = check_calc(&f, name, &pool_arg);
        assert_eq!(graded(&pooled), graded(&fresh), "{name}");
        assert_eq!(
            pooled["outcome"],
            name.replace("empty", "empty-patch"),
            "{name}"
        );
    }
    // One slot for the candidate, one for the baseline, reused by every run.
    assert_eq!(slots(&pool).len(), 2);
    f.assert_untouched(&before);
}

/// A slot starts every use from its trusted state: tracked files reset exactly, and ignored
/// output as its setup on the base left it. What a run's tests wrote there (its own build
/// output, a file in an ignored directory, one a patch added) is gone at the next use.
#[test]
fn a_slot_starts_every_use_from_its_trusted_state() {
    crate::setup::require_pytest();
    let f = Fixture::with_files(&[
        (".gitignore", "build/\n__pycache__/\n"),
        ("app.py", "def value():\n    return 1\n"),
        (
            "test_app.py",
            "import os, pathlib\n\
             from app import value\n\
             def test_value():\n    assert value() == 2\n\
             def test_clean_start():\n    \
                 assert not os.path.exists('junk.txt'), 'left by an earlier run'\n    \
                 assert not os.path.exists('build/from-patch.txt'), 'left by an earlier patch'\n    \
                 assert open('build/installed').read() == 'base\\n', 'the setup output'\n    \
                 pathlib.Path('junk.txt').write_text('x')\n\
             def test_build_output():\n    \
                 p = pathlib.Path('build/runs')\n    \
                 p.write_text(str(int(p.read_text()) + 1 if p.exists() else 1))\n    \
                 pathlib.Path('build/installed').write_text('changed by a run\\n')\n",
        ),
    ]);
    let fix = f.scratch_file(
        "fix.diff",
        "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def value():\n-    return 1\n+    return 2\n",
    );
    // Writes into an ignored directory: a reset must remove it all the same.
    let leaky = f.scratch_file(
        "leaky.diff",
        "diff --git a/build/from-patch.txt b/build/from-patch.txt\nnew file mode 100644\n--- /dev/null\n+++ b/build/from-patch.txt\n@@ -0,0 +1 @@\n+x\n",
    );
    let before = f.snapshot();
    let pool = f.scratch.join("pool");
    let run = |patch: &Path| -> Value {
        f.run(
            &CheckArgs::new()
                .runner("pytest")
                .json()
                .arg("--no-cache")
                .flag("--workdir-pool", &pool)
                .arg("--setup-once")
                .flag(
                    "--setup-cmd",
                    "mkdir -p build && echo base > build/installed",
                )
                .patch(patch)
                .f2p("test_app.py::test_value")
                .p2p("test_app.py::test_clean_start")
                .p2p("test_app.py::test_build_output"),
        )
        .json()
    };
    let leak = run(&leaky);
    // The patch's own file fails `test_clean_start` in the candidate: it is a real edit.
    assert_eq!(leak["outcome"], "regression", "{leak:#}");
    for _ in 0..2 {
        let v = run(&fix);
        assert_eq!(v["outcome"], "resolved", "{v:#}");
        assert_eq!(v["runs"]["candidate"]["setup_reused"], true, "{v:#}");
        // Passing on both sides: each run started from a clean slot, not one broken at base.
        let clean = crate::setup::graded(&v, "test_app.py::test_clean_start");
        assert_eq!(
            (&clean["status"], &clean["base_status"]),
            (&"passed".into(), &"passed".into()),
            "{v:#}"
        );
    }
    let slots = slots(&pool);
    assert_eq!(slots.len(), 2);
    for slot in &slots {
        // Three runs in each slot, each one the first to count: no run's output survived.
        let runs = std::fs::read_to_string(slot.join("build/runs")).unwrap();
        assert_eq!(runs, "1");
        assert!(slot.join("__pycache__").is_dir());
        // The last run's files stay until the next use.
        assert!(slot.join("junk.txt").exists());
        assert!(!slot.join("build/from-patch.txt").exists());
        assert!(!slot.join(".git/patchgrade-touched").exists());
    }
    // The record of what the last candidate touched lives beside its slot, not in it, where
    // a test running in the slot would find and edit it.
    let records: Vec<Vec<u8>> = slots
        .iter()
        .filter_map(|s| std::fs::read(s.with_extension("touched")).ok())
        .collect();
    assert_eq!(records, [b"app.py\0".to_vec()]);
    f.assert_untouched(&before);
}

/// Whether `command` passes in a copy of a pool slot as the last run left it, with `file`
/// then written as `content` (the next candidate's code): what the next run would have
/// started from without the reset.
fn passes_as_left(
    f: &Fixture,
    slot: &Path,
    (file, content): (&str, &str),
    command: &[&str],
) -> bool {
    let copy = f.scratch.join("slot-as-left");
    std::fs::create_dir_all(&copy).unwrap();
    crate::setup::copy_dir(slot, &copy);
    std::fs::write(copy.join(file), content).unwrap();
    let out = std::process::Command::new(command[0])
        .args(&command[1..])
        .current_dir(&copy)
        .output()
        .unwrap();
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));
    out.status.success()
}

/// Two runs of the next candidate, which breaks the code, in the slot the attack used: its
/// test fails each time, from the setup's output.
fn next_candidate_fails(run: impl Fn() -> Value, status: impl Fn(&Value) -> Value) {
    for _ in 0..2 {
        let v = run();
        assert_eq!(status(&v), "failed", "{v:#}");
        assert_eq!(v["runs"]["candidate"]["setup_reused"], true, "{v:#}");
    }
}

/// The attack of planted output, in Python: a candidate's code writes a module into an
/// ignored directory that is first on the import path (vendored `deps/`, before `src/`).
/// The next candidate in the slot breaks the code; the planted module would pass its tests
/// for it.
#[test]
fn a_module_a_candidate_plants_in_ignored_output_never_decides_a_later_run() {
    crate::setup::require_pytest();
    let calc = "def add(a, b):\n    return a + b\n";
    let f = Fixture::with_files(&[
        (".gitignore", "deps/\n__pycache__/\n"),
        (
            "conftest.py",
            "import os, sys\nhere = os.path.dirname(__file__)\n\
             sys.path[:0] = [os.path.join(here, 'deps'), os.path.join(here, 'src')]\n",
        ),
        ("src/calc.py", calc),
        (
            "test_calc.py",
            "from calc import add\ndef test_add():\n    assert add(2, 3) == 5\n",
        ),
    ]);
    let planting = f.diff_of(
        "plant.diff",
        &[(
            "src/calc.py",
            &format!(
                "import os\n_deps = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'deps')\n\
                 with open(os.path.join(_deps, 'calc.py'), 'w') as f:\n    f.write({calc:?})\n{calc}"
            ),
        )],
    );
    let broken = "def add(a, b):\n    return a - b\n";
    let breaking = f.diff_of("break.diff", &[("src/calc.py", broken)]);
    let pool = f.scratch.join("pool");
    let before = f.snapshot();
    let run = |patch: &Path| -> Value {
        f.run(
            &CheckArgs::new()
                .runner("pytest")
                .json()
                .args(&["--no-cache", "--baseline", "skip", "--setup-once"])
                .flag("--workdir-pool", &pool)
                .flag(
                    "--setup-cmd",
                    "mkdir -p deps && echo 'VERSION = 1' > deps/vendored.py",
                )
                .patch(patch)
                .p2p("test_calc.py::test_add"),
        )
        .json()
    };
    let status = |v: &Value| crate::setup::graded(v, "test_calc.py::test_add")["status"].clone();
    let planted = run(&planting);
    assert_eq!(status(&planted), "passed", "{planted:#}");
    let slot = &slots(&pool)[0];
    assert!(
        slot.join("deps/calc.py").exists(),
        "the candidate planted nothing"
    );
    // Without the reset the plant decides: the breaking candidate's code passes there.
    let pytest = [
        "python",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "test_calc.py",
    ];
    assert!(passes_as_left(&f, slot, ("src/calc.py", broken), &pytest));
    next_candidate_fails(|| run(&breaking), status);
    assert!(!slot.join("deps/calc.py").exists());
    assert_eq!(
        std::fs::read_to_string(slot.join("deps/vendored.py")).unwrap(),
        "VERSION = 1\n"
    );
    f.assert_untouched(&before);
}

/// The attack of planted output, in Node: a candidate's code rewrites the assertion library
/// its setup installed in `node_modules` to pass everything. The next candidate in the slot
/// breaks the code; the rewritten library would pass its tests for it.
#[test]
fn a_library_a_candidate_rewrites_in_node_modules_never_decides_a_later_run() {
    if !crate::setup::have_runner("node") {
        return crate::setup::skip("node is not installed");
    }
    let calc = "exports.add = (a, b) => a + b;\n";
    let f = Fixture::with_files(&[
        (".gitignore", "node_modules/\n"),
        ("calc.js", calc),
        (
            "test/calc.test.js",
            "const test = require('node:test');\nconst { equal } = require('tiny-assert');\n\
             const { add } = require('../calc.js');\ntest('add', () => equal(add(2, 3), 5));\n",
        ),
    ]);
    let library = "node_modules/tiny-assert/index.js";
    let forged = "exports.equal = () => {};\n";
    let rewriting = f.diff_of(
        "rewrite.diff",
        &[(
            "calc.js",
            &format!(
                "require('fs').writeFileSync(require('path').join(__dirname, {library:?}), {forged:?});\n{calc}"
            ),
        )],
    );
    let broken = "exports.add = (a, b) => a - b;\n";
    let breaking = f.diff_of("break.diff", &[("calc.js", broken)]);
    let pool = f.scratch.join("pool");
    let before = f.snapshot();
    let install = "mkdir -p node_modules/tiny-assert && printf '%s\\n' \
                   \"const assert = require('node:assert');\" \
                   'exports.equal = (a, b) => assert.strictEqual(a, b);' \
                   > node_modules/tiny-assert/index.js";
    let id = "test/calc.test.js › add";
    let run = |patch: &Path| -> Value {
        f.run(
            &CheckArgs::new()
                .runner("node")
                .json()
                .args(&["--no-cache", "--baseline", "skip", "--setup-once"])
                .flag("--workdir-pool", &pool)
                .flag("--setup-cmd", install)
                .patch(patch)
                .p2p(id),
        )
        .json()
    };
    let status = |v: &Value| crate::setup::graded(v, id)["status"].clone();
    let rewritten = run(&rewriting);
    assert_eq!(status(&rewritten), "passed", "{rewritten:#}");
    let slot = &slots(&pool)[0];
    assert_eq!(std::fs::read_to_string(slot.join(library)).unwrap(), forged);
    // Without the reset the rewritten library decides: the breaking code passes there.
    let node = ["node", "--test", "test/calc.test.js"];
    assert!(passes_as_left(&f, slot, ("calc.js", broken), &node));
    next_candidate_fails(|| run(&breaking), status);
    assert_ne!(std::fs::read_to_string(slot.join(library)).unwrap(), forged);
    f.assert_untouched(&before);
}

#[test]
fn concurrent_checks_take_different_slots() {
    let f = Fixture::calc();
    let before = f.snapshot();
    let pool = f.scratch.join("pool");
    let expected = check_calc(&f, "regression", &[]);
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let args = CheckArgs::calc("regression").args(&[
                "--no-cache",
                "--workdir-pool",
                pool.to_str().unwrap(),
            ]);
            f.command(&args)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for h in handles {
        let out = h.wait_with_output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(graded(&v), graded(&expected));
    }
    // Three checks at once, two checkouts each: at most six slots.
    let n = slots(&pool).len();
    assert!((2..=6).contains(&n), "{n} slots");

    // A slot whose lock another process holds is never used: with slots 0 and 1 held, the
    // check makes (or takes) others and grades the same.
    let repo_dir = std::fs::read_dir(&pool)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let held: Vec<std::fs::File> = (0..2)
        .map(|n| {
            let lock = std::fs::File::options()
                .write(true)
                .open(repo_dir.join(format!("slot-{n}.lock")))
                .unwrap();
            lock.lock().unwrap();
            lock
        })
        .collect();
    let marker = |n: usize| repo_dir.join(format!("slot-{n}/held-by-the-test"));
    for n in 0..2 {
        std::fs::write(marker(n), "x").unwrap();
    }
    let v = check_calc(
        &f,
        "regression",
        &["--workdir-pool", pool.to_str().unwrap()],
    );
    assert_eq!(graded(&v), graded(&expected));
    for n in 0..2 {
        assert!(
            marker(n).exists(),
            "slot {n} was reset while its lock was held"
        );
    }
    drop(held);
    f.assert_untouched(&before);
}

#[test]
fn bytecode_of_an_earlier_patch_never_decides_a_later_run() {
    crate::setup::require_pytest();
    // A same-size edit whose source ends with the same mtime (pinned here by the setup
    // command; within one second it happens by itself): Python would take the earlier
    // patch's bytecode for the restored source.
    let f = Fixture::with_files(&[
        (".gitignore", "__pycache__/\n"),
        ("m.py", "def f():\n    return 1\n"),
        (
            "test_m.py",
            "from m import f\n\ndef test_f():\n    assert f() == 1\n",
        ),
    ]);
    let breaking = f.diff_of("breaking.diff", &[("m.py", "def f():\n    return 2\n")]);
    let harmless = f.diff_of("harmless.diff", &[("notes.txt", "n\n")]);
    let pool = f.scratch.join("pool");
    let run = |patch: &Path| -> Value {
        f.run(
            &CheckArgs::new()
                .runner("pytest")
                .json()
                .arg("--no-cache")
                .flag("--workdir-pool", &pool)
                .flag("--setup-cmd", "touch -d @1700000000 m.py")
                .patch(patch)
                .p2p("test_m.py::test_f"),
        )
        .json()
    };
    assert_eq!(run(&breaking)["outcome"], "breaking");
    for _ in 0..2 {
        let v = run(&harmless);
        let t = crate::setup::graded(&v, "test_m.py::test_f");
        assert_eq!(
            (&t["base_status"], &t["status"]),
            (&"passed".into(), &"passed".into()),
            "{v:#}"
        );
    }
}

/// A `--setup-once` setup that compiles the base's sources leaves timestamp bytecode, which
/// Python trusts for any source of the same size and mtime (in seconds). The patch applied
/// right after it, in the same second (pinned here: the setup dates the source a second ahead
/// and waits for that second), leaves such a source: the base's code would run for the
/// candidate's, and a breaking patch pass.
#[test]
fn bytecode_a_setup_on_the_base_compiled_never_runs_for_the_patch() {
    crate::setup::require_pytest();
    let f = Fixture::with_files(&[
        (".gitignore", "__pycache__/\n"),
        ("m.py", "def f():\n    return 1\n"),
        (
            "test_m.py",
            "from m import f\n\ndef test_f():\n    assert f() == 1\n",
        ),
    ]);
    let breaking = f.diff_of("breaking.diff", &[("m.py", "def f():\n    return 2\n")]);
    let setup = "t=$(( $(date +%s) + 1 )); touch -d @$t m.py && python -m compileall -q m.py \
                 && while [ \"$(date +%s)\" -lt \"$t\" ]; do sleep 0.01; done";
    let v = f
        .run(
            &CheckArgs::new()
                .runner("pytest")
                .json()
                .args(&["--no-cache", "--baseline", "skip", "--setup-once"])
                .flag("--workdir-pool", f.scratch.join("pool"))
                .flag("--setup-cmd", setup)
                .patch(&breaking)
                .p2p("test_m.py::test_f"),
        )
        .json();
    let t = crate::setup::graded(&v, "test_m.py::test_f");
    assert_eq!(t["status"], "failed", "{v:#}");
}

#[test]
fn a_slot_is_not_reused_while_processes_of_a_killed_run_live() {
    use crate::setup::{hanging, processes_with};
    let (f, patch, marker, cmd) = hanging("pool-kill");
    let pool = f.scratch.join("pool");
    // On the host: in bwrap the processes die with patchgrade (sandbox_e2e), and the lock
    // is what protects the slot where they do not.
    let pooled = |test_cmd: &str| {
        CheckArgs::single_test(&patch, test_cmd)
            .arg("--no-cache")
            .flag("--workdir-pool", &pool)
            .flag("--sandbox", "none")
    };
    // patchgrade is SIGKILLed while both runs hang: nothing of it kills their processes.
    let mut child = f
        .command(&pooled(&cmd))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("check starts");
    crate::setup::wait_for_processes(&marker, "", 4);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !processes_with(&marker).is_empty(),
        "the runs' processes outlived it"
    );
    // The next check finds both slots still held by those processes and makes its own.
    let quick = "printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {junit}";
    let out = f.command(&pooled(quick)).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["outcome"], "no-breakage", "{v:#}");
    let used = slots(&pool).len();
    let left = processes_with(&marker);
    for p in &left {
        let pid: i32 = p.split(':').next().unwrap().parse().unwrap();
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    if left.is_empty() {
        // Where control groups can be made, the next run swept the killed run's, killing
        // what still ran in them (`src/run/limits.rs`); a slot's lock is free only once its
        // last holder is gone, so a slot reused then was free of them.
        assert!(used >= 2, "{used} slots");
    } else {
        assert_eq!(
            used, 4,
            "a slot of the killed run was reused while its processes lived"
        );
    }
}

/// A test command that reports one passing test.
const REPORT: &str =
    "printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {junit}";

/// The verdict of `check` of `patch` in the pool, with no cache and no baseline, and `cmd`
/// as the test command.
fn pooled(f: &Fixture, patch: &Path, pool: &Path, cmd: &str) -> Value {
    let out = f
        .command(
            &CheckArgs::single_test(patch, cmd)
                .args(&["--no-cache", "--baseline", "skip"])
                .flag("--workdir-pool", pool),
        )
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_reset_never_writes_through_a_link_a_test_put_in_place_of_the_tree() {
    // A test replaces the tracked directory `pkg` and the tracked file `b.txt` with links to
    // files outside the checkout; resetting the slot for the next run must remove the links,
    // not write the base's content through them.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("a.txt"), "outside\n").unwrap();
    std::fs::write(outside.path().join("b.txt"), "outside\n").unwrap();
    let f = Fixture::with_files(&[("pkg/a.txt", "base\n"), ("b.txt", "base\n")]);
    let patch = f.diff_of("p.diff", &[("c.txt", "c\n")]);
    let pool = f.scratch.join("pool");
    let run = |cmd: &str| pooled(&f, &patch, &pool, cmd);
    let o = outside.path().display();
    let vandal = format!("rm -rf pkg b.txt && ln -s {o} pkg && ln -s {o}/b.txt b.txt; {REPORT}");
    assert_eq!(run(&vandal)["outcome"], "no-breakage");
    let check = format!(
        "test -d pkg -a ! -L pkg -a ! -L b.txt && grep -q base pkg/a.txt b.txt && {REPORT}"
    );
    let v = run(&check);
    assert_eq!(
        v["outcome"], "no-breakage",
        "the slot was not reset whole: {v:#}"
    );
    for file in ["a.txt", "b.txt"] {
        assert_eq!(
            std::fs::read_to_string(outside.path().join(file)).unwrap(),
            "outside\n",
            "{file} outside the checkout was written"
        );
    }
}

/// A run's commands can write the slot's `.git`: a `core.worktree` there, or a `.git` link to
/// another repository, would send the next reset's forced checkout (which removes untracked
/// files) into that directory. The next use makes `.git` again: nothing outside the slot is
/// written, and the slot is the base's.
#[test]
fn a_slot_git_a_test_rewrote_never_sends_the_reset_elsewhere() {
    let f = Fixture::with_files(&[("b.txt", "base\n")]);
    let patch = f.diff_of("p.diff", &[("c.txt", "c\n")]);
    let victim = tempfile::tempdir().unwrap();
    std::fs::write(victim.path().join("precious.txt"), "mine\n").unwrap();
    let v = victim.path().display();
    let repo_git = f.repo.join(".git");
    let attacks = [
        format!("git config core.worktree {v}; {REPORT}"),
        format!(
            "rm -rf .git && printf 'gitdir: {}\\n' > .git; {REPORT}",
            repo_git.display()
        ),
    ];
    for attack in attacks {
        let pool = f.scratch.join(format!("pool-{}", attack.len()));
        let run = |cmd: &str| pooled(&f, &patch, &pool, cmd);
        let before = f.snapshot();
        assert_eq!(run(&attack)["outcome"], "no-breakage", "{attack}");
        let check = format!("grep -q base b.txt && {REPORT}");
        let v = run(&check);
        assert_eq!(v["outcome"], "no-breakage", "{attack}: {v:#}");
        let left: Vec<_> = std::fs::read_dir(victim.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["precious.txt"], "{attack}: the victim was written");
        assert_eq!(
            std::fs::read_to_string(victim.path().join("precious.txt")).unwrap(),
            "mine\n"
        );
        f.assert_untouched(&before);
        let slot = &slots(&pool)[0];
        assert!(slot.join(".git").is_dir() && !slot.join(".git").is_symlink());
    }
}

/// `--setup-once`: the setup runs in a slot once per base commit, and the slot keeps what it
/// installed; a new base runs it again. Without the flag it runs before every use.
#[test]
fn a_setup_once_runs_once_per_slot_and_base() {
    crate::setup::require_pytest();
    let f = Fixture::with_files(&[
        (".gitignore", "deps/\n"),
        ("m.py", "def f():\n    return 1\n"),
        (
            "test_m.py",
            "def test_installed_once():\n    assert open('deps/count').read() == 'x\\n'\n",
        ),
    ]);
    let harmless = f.diff_of("harmless.diff", &[("notes.txt", "n\n")]);
    let pool = f.scratch.join("pool");
    let run = |once: bool| -> Value {
        let mut args = CheckArgs::new()
            .runner("pytest")
            .json()
            .args(&["--no-cache", "--baseline", "skip"])
            .flag("--workdir-pool", &pool)
            .flag("--setup-cmd", "mkdir -p deps && echo x >> deps/count")
            .patch(&harmless)
            .p2p("test_m.py::test_installed_once");
        if once {
            args = args.arg("--setup-once");
        }
        f.run(&args).json()
    };
    let status =
        |v: &Value| crate::setup::graded(v, "test_m.py::test_installed_once")["status"].clone();
    let reused = |v: &Value| v["runs"]["candidate"]["setup_reused"] == true;
    for n in 0..3 {
        let v = run(true);
        assert_eq!(status(&v), "passed", "use {n}: {v:#}");
        assert_eq!(reused(&v), n > 0, "use {n}: {v:#}");
    }
    f.commit(&[("m.py", "def f():\n    return 2\n")], "new base");
    let v = run(true);
    assert!(!reused(&v), "{v:#}");
    assert_eq!(
        status(&v),
        "failed",
        "the setup ran again on the new base: {v:#}"
    );
    // Without the flag the setup runs again in the same slot.
    let v = run(false);
    assert!(!reused(&v), "{v:#}");
    assert_eq!(slots(&pool).len(), 1);
}
