//! Sandboxes, end to end: what a test command can reach in bwrap, docker and podman (and, to
//! show each probe can tell, what it reaches with `--sandbox none`), processes that try to
//! outlive their run, and grading inside a container image. Real git, real pytest, real
//! sandboxes; CI installs them (`scripts/images` builds the image).

use crate::setup::{
    CheckArgs, Fixture, graded, processes_with, require_bwrap, wait_for_processes, warning,
};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The image the container tests grade in: Debian with python and pytest, built without a
/// registry by `scripts/images`.
pub(crate) const IMAGE: &str = "patchgrade-test/python:bookworm-v2";

/// Looks at everything a sandbox should hide, from inside a test command, and writes what it
/// saw to `seen.json` in the checkout (kept with `--keep`), then a passing report.
const PROBE: &str = r#"import json, os, socket, sys
port, outside, cache, junit = sys.argv[1:5]
seen = {}
try:
    socket.create_connection(("127.0.0.1", int(port)), timeout=2).close()
    seen["host_loopback"] = True
except OSError:
    seen["host_loopback"] = False
seen["interfaces"] = sorted(name for _, name in socket.if_nameindex())
try:
    with open(outside, "w") as f:
        f.write("escaped")
    seen["wrote_outside"] = True
except OSError:
    seen["wrote_outside"] = False
seen["cache"] = sorted(os.listdir(cache)) if os.path.isdir(cache) else None
# The checkout is RUN/candidate/work (or RUN/baseline/work): the other side is a sibling.
side = os.path.basename(os.path.dirname(os.getcwd()))
other = "baseline" if side == "candidate" else "candidate"
seen["other_side"] = os.path.exists(os.path.join(os.getcwd(), "..", "..", other))
tmp = os.environ.get("TMPDIR", "/tmp")
seen["tmpdir"] = sorted(os.listdir(tmp)) if os.path.isdir(tmp) else None
with open("seen.json", "w") as f:
    json.dump(seen, f)
with open(junit, "w") as f:
    f.write('<testsuite><testcase classname="t" name="a"/></testsuite>')
"#;

const README_EDIT: &str =
    "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\n-x\n+y\n";

/// Whether `engine` answers and holds the test image; a skip, unless CI says every runner
/// must be there.
pub(crate) fn require_image(engine: &str) -> bool {
    let ok = Command::new(engine)
        .args(["image", "inspect", "--format", "{{.Id}}", IMAGE])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        crate::setup::skip(&format!(
            "{engine} has no image {IMAGE} (scripts/sandboxes builds it)"
        ));
    }
    ok
}

/// What the probe saw on both sides, run in `sandbox` (and `extra` flags).
fn probe(sandbox: &str, extra: &[&str]) -> (Value, Value, Fixture) {
    crate::setup::require_pytest();
    let f = Fixture::with_files(&[("README", "x\n"), ("probe.py", PROBE)]);
    let patch = f.scratch_file("p.diff", README_EDIT);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Outside the checkout, and outside the /tmp that bwrap makes private: the user's home.
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap();
    let cache = home.join(format!(
        ".patchgrade-cache-{sandbox}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(cache.join("baseline-v4")).unwrap();
    std::fs::create_dir_all(f.tmp.join("another-run")).unwrap();
    let outside = home.join(format!(
        ".patchgrade-escaped-{sandbox}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&outside);
    let keep = f.scratch.join("kept");
    let cmd = format!(
        "python probe.py {port} {} {} {{junit}}",
        outside.display(),
        cache.display()
    );
    let before = f.snapshot();
    let mut command = f.command(
        &CheckArgs::single_test(&patch, &cmd)
            .flag("--sandbox", sandbox)
            .flag("--cache-dir", &cache)
            .flag("--keep", &keep)
            .args(extra),
    );
    let out = command.output().unwrap();
    // The other run was planted, not left: the rest of TMPDIR and the repository are checked.
    std::fs::remove_dir(f.tmp.join("another-run")).unwrap();
    f.assert_untouched(&before);
    let run = crate::setup::Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    let v = run.json();
    assert_eq!(v["outcome"], "no-breakage", "{v:#}\n{}", run.stderr);
    let ran = if sandbox == "auto" { "bwrap" } else { sandbox };
    assert_eq!(v["isolation"]["sandbox"], ran, "{v:#}");
    let seen = |side: &str| -> Value {
        let text = std::fs::read_to_string(keep.join(side).join("work/seen.json"))
            .unwrap_or_else(|e| panic!("{side} wrote no seen.json ({e}): {v:#}"));
        serde_json::from_str(&text).unwrap()
    };
    let (mut cand, mut base) = (seen("candidate"), seen("baseline"));
    drop(listener);
    // What counts is the host's file: in a container the write may land in the image.
    let wrote = outside.exists();
    let _ = std::fs::remove_file(&outside);
    let _ = std::fs::remove_dir_all(&cache);
    for seen in [&mut cand, &mut base] {
        seen["wrote_outside"] = wrote.into();
    }
    (cand, base, f)
}

#[test]
fn in_bwrap_a_test_reaches_no_network_no_file_outside_no_cache_and_no_other_run() {
    if !require_bwrap() {
        return;
    }
    for extra in [&[][..], &["--sandbox", "bwrap"][..]] {
        // `auto` is bwrap where it works.
        let sandbox = if extra.is_empty() { "auto" } else { "bwrap" };
        let (cand, base, _f) = probe(sandbox, &[]);
        for seen in [&cand, &base] {
            assert_eq!(seen["host_loopback"], false, "{seen}");
            assert_eq!(seen["interfaces"], serde_json::json!(["lo"]), "{seen}");
            assert_eq!(seen["wrote_outside"], false, "{seen}");
            // Covered by an empty directory.
            assert_eq!(seen["cache"], serde_json::json!([]), "{seen}");
            assert_eq!(seen["other_side"], false, "{seen}");
            let tmp = seen["tmpdir"].as_array().cloned().unwrap_or_default();
            assert!(tmp.is_empty(), "{seen}");
        }
    }
}

/// `--python` names an interpreter whose environment the sandbox's private `/tmp` would cover
/// (a virtualenv beside a clone under `/tmp`): it comes back read-only, with what the
/// environment holds, and nothing else of the temporary directory does.
#[test]
fn in_bwrap_a_python_environment_under_tmp_is_seen_with_its_packages() {
    if !require_bwrap() {
        return;
    }
    let f = Fixture::with_files(&[("README", "x\n")]);
    let env = f.scratch.join("env");
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&env)
        .status()
        .expect("python3 runs");
    assert!(made.success());
    let python = env.join("bin/python");
    let site = Command::new(&python)
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .expect("the environment's python runs");
    let site = PathBuf::from(String::from_utf8_lossy(&site.stdout).trim());
    std::fs::write(
        site.join("envmark.py"),
        "REPORT = '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>'\n",
    )
    .expect("write the module");
    let patch = f.scratch_file("p.diff", README_EDIT);
    f.scratch_file("p.diff.unnamed", "x\n");
    // `python` is the environment's: only it can import `envmark`. The patch, named by the
    // command, is shown alone: its directory, beside the environment, holds the cache, so a
    // file there that the command does not name stays hidden.
    let cmd = format!(
        "python -c 'import envmark, os, sys; assert os.path.exists(sys.argv[2]); \
         assert not os.path.exists(sys.argv[2] + \".unnamed\"); \
         open(sys.argv[1], \"w\").write(envmark.REPORT)' {{junit}} {}",
        patch.display()
    );
    let run = f.run(
        &CheckArgs::single_test(&patch, &cmd)
            .args(&["--sandbox", "bwrap"])
            .flag("--python", &python),
    );
    let v = run.json();
    assert_eq!(v["outcome"], "no-breakage", "{v:#}\n{}", run.stderr);
    assert_eq!(v["isolation"]["sandbox"], "bwrap", "{v:#}");
    assert_eq!(graded(&v, "t.a")["status"], "passed", "{v:#}");
}

/// The probe can tell: on the host, the same test reaches all of it.
#[test]
fn with_sandbox_none_the_same_test_reaches_everything_and_is_warned_about() {
    let (cand, _, f) = probe("none", &[]);
    assert_eq!(cand["host_loopback"], true, "{cand}");
    assert_eq!(cand["wrote_outside"], true, "{cand}");
    assert_eq!(cand["cache"], serde_json::json!(["baseline-v4"]), "{cand}");
    assert_eq!(cand["other_side"], true, "{cand}");
    let tmp = cand["tmpdir"].as_array().cloned().unwrap_or_default();
    assert!(tmp.contains(&"another-run".into()), "{cand}");
    let patch = f.scratch_file("p2.diff", README_EDIT);
    let cmd = "printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {junit}";
    let v = f
        .run(&CheckArgs::single_test(&patch, cmd).flag("--sandbox", "none"))
        .json();
    let w = warning(&v, "unsandboxed").unwrap_or_else(|| panic!("{v:#}"));
    assert!(
        w["message"].as_str().unwrap().contains("--sandbox none"),
        "{w}"
    );
}

#[test]
fn with_network_a_bwrap_test_reaches_the_host_and_the_verdict_says_so() {
    if !require_bwrap() {
        return;
    }
    let (cand, _, _) = probe("bwrap", &["--network"]);
    assert_eq!(cand["host_loopback"], true, "{cand}");
    assert_eq!(cand["wrote_outside"], false, "{cand}");
}

/// A report-writing command that first starts a `setsid` child holding `marker` (and gives it
/// a second to leave the process group).
fn escaping_cmd(marker: &str, hang: bool) -> String {
    let tail = if hang { "; sleep 600" } else { "" };
    format!(
        "setsid python -c 'import time; time.sleep(600)' {marker} </dev/null >/dev/null 2>&1 & \
         sleep 1; printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {{junit}}{tail}"
    )
}

fn kill_all(marker: &str) {
    for p in processes_with(marker) {
        if let Some(pid) = p.split(':').next() {
            let _ = Command::new("kill").args(["-9", pid]).status();
        }
    }
}

fn wait_gone(marker: &str, within: Duration) -> Vec<String> {
    let started = Instant::now();
    loop {
        let left = processes_with(marker);
        if left.is_empty() || started.elapsed() > within {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_setsid_child_dies_with_its_run_in_bwrap_and_outlives_it_on_the_host() {
    crate::setup::require_pytest();
    if !require_bwrap() {
        return;
    }
    let f = Fixture::with_files(&[("README", "x\n")]);
    let patch = f.scratch_file("p.diff", README_EDIT);
    for sandbox in ["bwrap", "none"] {
        let marker = format!("patchgrade-setsid-{sandbox}-{}", std::process::id());
        let run = f.run(
            &CheckArgs::single_test(&patch, &escaping_cmd(&marker, false))
                .flag("--sandbox", sandbox),
        );
        assert_eq!(run.outcome(), "no-breakage", "{}", run.stderr);
        let left = wait_gone(&marker, Duration::from_secs(5));
        if sandbox == "bwrap" {
            assert!(
                left.is_empty(),
                "a setsid child outlived its bwrap run: {left:?}"
            );
        } else if control_groups() {
            // On the host a new session leaves the process group patchgrade kills, but not
            // the command's control group (`--pids`, `--memory`), whose processes all die.
            assert!(left.is_empty(), "a setsid child outlived its run: {left:?}");
        } else {
            // What the sandbox is for, where no control group can be made: a new session
            // leaves the process group patchgrade kills on the host.
            assert_eq!(left.len(), 2, "{left:?}");
            kill_all(&marker);
        }
    }
}

#[test]
fn a_setsid_child_in_bwrap_dies_when_patchgrade_is_sigkilled() {
    crate::setup::require_pytest();
    if !require_bwrap() {
        return;
    }
    let f = Fixture::with_files(&[("README", "x\n")]);
    let patch = f.scratch_file("p.diff", README_EDIT);
    let marker = format!("patchgrade-sigkill-{}", std::process::id());
    let mut child = f
        .command(
            &CheckArgs::single_test(&patch, &escaping_cmd(&marker, true))
                .flag("--sandbox", "bwrap"),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // patchgrade's own command line holds the marker too: three are patchgrade and both
    // sides' escaped children, so both sandboxes are up when the kill comes.
    wait_for_processes(&marker, "time.sleep", 3);
    child.kill().unwrap();
    child.wait().unwrap();
    let left = wait_gone(&marker, Duration::from_secs(10));
    kill_all(&marker);
    assert!(left.is_empty(), "survived patchgrade's SIGKILL: {left:?}");
}

#[test]
fn in_bwrap_the_baseline_and_the_candidate_both_bind_one_fixed_port() {
    crate::setup::require_pytest();
    if !require_bwrap() {
        return;
    }
    let f = Fixture::with_files(&[("README", "x\n")]);
    let patch = f.scratch_file("p.diff", README_EDIT);
    // Both sides hold the port for 3 s, so they overlap: on the host one of them would fail.
    let cmd = "python -c \"import socket, time; s = socket.socket(); \
               s.bind(('127.0.0.1', 18765)); s.listen(); time.sleep(3)\" && \
               printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {junit}";
    let v = f
        .run(&CheckArgs::single_test(&patch, cmd).flag("--sandbox", "bwrap"))
        .json();
    assert_eq!(v["outcome"], "no-breakage", "{v:#}");
    let t = graded(&v, "t.a");
    assert_eq!(
        (&t["status"], &t["base_status"]),
        (&"passed".into(), &"passed".into())
    );
}

#[test]
fn bad_sandbox_input_is_one_line_and_exit_2() {
    let f = Fixture::with_files(&[("README", "x\n")]);
    let patch = f.scratch_file("p.diff", README_EDIT);
    let cmd = "true {junit}";
    for (flags, says) in [
        (&["--sandbox", "jail"][..], "unknown sandbox `jail`"),
        (
            &["--sandbox", "bwrap", "--image", IMAGE][..],
            "needs a container",
        ),
        (&["--sandbox", "docker"][..], "no image is given"),
        (
            &["--image", IMAGE, "--image-workdir", "rel"][..],
            "not an absolute path",
        ),
    ] {
        let run = f.run(&CheckArgs::single_test(&patch, cmd).args(flags));
        assert_eq!(run.code, 2, "{flags:?}: {}", run.stderr);
        assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains(says), "{flags:?}: {}", run.stderr);
    }
    if require_image("docker") {
        let run = f.run(
            &CheckArgs::single_test(&patch, cmd).args(&["--image", "patchgrade-test/absent:1"]),
        );
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(
            run.stderr.contains("is not present in docker"),
            "{}",
            run.stderr
        );
    }
}

/// The example graded in `engine`'s container: resolved and regression, from what ran there.
fn grades_in_an_image(engine: &str) {
    crate::setup::require_pytest();
    let f = Fixture::calc();
    for (patch, outcome) in [("resolved", "resolved"), ("regression", "regression")] {
        let run = f.run(
            &CheckArgs::calc(patch)
                .flag("--sandbox", engine)
                .flag("--image", IMAGE),
        );
        let v = run.json();
        assert_eq!(v["outcome"], outcome, "{v:#}\n{}", run.stderr);
        assert_eq!(v["isolation"]["sandbox"], engine);
        assert_eq!(v["isolation"]["image"], IMAGE);
        // The command named the paths inside the image.
        let command = v["runs"]["candidate"]["command"].as_str().unwrap();
        assert!(command.contains("--rootdir=/testbed"), "{command}");
        assert!(command.contains("/patchgrade/out/junit.xml"), "{command}");
    }
}

/// The containers a patchgrade process left (named `patchgrade-<pid>-…`).
fn containers(engine: &str, pid: &str) -> Vec<String> {
    let out = Command::new(engine)
        .args(["ps", "-a", "--format", "{{.Names}}"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|n| n.starts_with(&format!("patchgrade-{pid}")))
        .map(str::to_string)
        .collect()
}

/// A hanging test in `engine`'s container: the timeout, and Ctrl-C, leave no container and no
/// process behind.
fn leaves_no_container(engine: &str) {
    crate::setup::require_pytest();
    let f = Fixture::with_files(&[("README", "x\n")]);
    let patch = f.scratch_file("p.diff", README_EDIT);
    let marker = format!("patchgrade-container-{engine}-{}", std::process::id());
    let cmd = escaping_cmd(&marker, true);
    let args = CheckArgs::single_test(&patch, &cmd)
        .flag("--sandbox", engine)
        .flag("--image", IMAGE);
    let v = f.run(&args.clone().flag("--timeout", "5s")).json();
    assert_eq!(
        (&v["outcome"], &v["error"]["cause"]),
        (&"error".into(), &"timeout".into()),
        "{v:#}"
    );
    assert!(wait_gone(&marker, Duration::from_secs(5)).is_empty());

    let child = f
        .command(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = format!("{}-", child.id());
    // patchgrade's own command line holds the marker too: wait for both containers, each
    // running its side's tests.
    let started = std::time::Instant::now();
    while containers(engine, &pid).len() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "both containers never started: {:?}",
            containers(engine, &pid)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    wait_for_processes(&marker, "", 3);
    assert_eq!(containers(engine, &pid).len(), 2);
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        containers(engine, &pid).is_empty(),
        "{:?}",
        containers(engine, &pid)
    );
    let left = wait_gone(&marker, Duration::from_secs(5));
    assert!(left.is_empty(), "{left:?}");
}

/// In a container: no network, the host's files, cache and other run out of reach.
fn confined_in_a_container(engine: &str) {
    let (cand, base, f) = probe(engine, &["--image", IMAGE, "--image-workdir", "/work"]);
    for seen in [&cand, &base] {
        assert_eq!(seen["interfaces"], serde_json::json!(["lo"]), "{seen}");
        assert_eq!(seen["host_loopback"], false, "{seen}");
        assert_eq!(seen["cache"], Value::Null, "{seen}");
        assert_eq!(seen["other_side"], false, "{seen}");
    }
    // A write to the host's path lands in the container, if anywhere.
    assert_eq!(cand["wrote_outside"], false, "{cand}");
    drop(f);
}

#[test]
fn docker_grades_inside_the_image() {
    if require_image("docker") {
        grades_in_an_image("docker");
    }
}

#[test]
fn docker_leaves_no_container_after_a_timeout_or_ctrl_c() {
    if require_image("docker") {
        leaves_no_container("docker");
    }
}

#[test]
fn docker_confines_the_test() {
    if require_image("docker") {
        confined_in_a_container("docker");
    }
}

#[test]
fn podman_grades_inside_the_image() {
    if require_image("podman") {
        grades_in_an_image("podman");
    }
}

#[test]
fn podman_leaves_no_container_after_a_timeout_or_ctrl_c() {
    if require_image("podman") {
        leaves_no_container("podman");
    }
}

#[test]
fn podman_confines_the_test() {
    if require_image("podman") {
        confined_in_a_container("podman");
    }
}

#[test]
fn the_setup_command_has_the_network_and_the_tests_do_not() {
    crate::setup::require_pytest();
    if !require_bwrap() {
        return;
    }
    let f = Fixture::with_files(&[("README", "x\n")]);
    let patch = f.scratch_file("p.diff", README_EDIT);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!(
        "python -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2)\""
    );
    // Setup reaches the host (it would fetch dependencies); the test writes its report only
    // if it cannot.
    let cmd = format!(
        "{connect} 2>/dev/null && exit 3; \
         printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {{junit}}"
    );
    let v = f
        .run(
            &CheckArgs::single_test(&patch, &cmd)
                .flag("--sandbox", "bwrap")
                .flag("--setup-cmd", &connect),
        )
        .json();
    assert_eq!(v["outcome"], "no-breakage", "{v:#}");
    drop(listener);
}

#[test]
fn a_baseline_run_on_the_host_is_never_stored_and_a_sandboxed_one_is() {
    crate::setup::require_pytest();
    if !require_bwrap() {
        return;
    }
    let f = Fixture::with_files(&[("README", "x\n")]);
    let patch = f.scratch_file("p.diff", README_EDIT);
    let cmd = "printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {junit}";
    for (sandbox, cached_second_time) in [("none", false), ("bwrap", true)] {
        let args = CheckArgs::single_test(&patch, cmd).flag("--sandbox", sandbox);
        let first = f.run(&args).json();
        let cached = |v: &Value| v["runs"]["baseline"]["cached"].as_bool().unwrap_or(false);
        assert!(first["runs"]["baseline"].is_object(), "{first:#}");
        assert!(!cached(&first), "{first:#}");
        let second = f.run(&args).json();
        assert_eq!(cached(&second), cached_second_time, "{sandbox}: {second:#}");
    }
}

#[test]
fn a_test_cannot_rewrite_the_cached_baseline_and_an_edited_entry_is_run_again() {
    if !require_bwrap() {
        return;
    }
    let f = Fixture::with_files(&[("README", "x\n")]);
    // The candidate makes `t.a` pass (it adds `fixed`); its test command also rewrites every
    // cache entry it can find to say `t.a` passed at base.
    let patch = f.diff_of("fix.diff", &[("fixed", "1\n")]);
    let cache = f.scratch.join("cache");
    let cmd = format!(
        "find {} -type f -exec sh -c 'echo {{}} > \"$1\"' _ {{}} \\; 2>/dev/null; \
         if [ -e fixed ]; then s='/>'; else s='><failure message=\"no\"/></testcase>'; fi; \
         printf '<testsuite><testcase classname=\"t\" name=\"a\"%s</testsuite>' \"$s\" > {{junit}}",
        cache.display()
    );
    let args = CheckArgs::new()
        .json()
        .patch(&patch)
        .ids("classname.name")
        .f2p("t.a")
        .test_cmd(&cmd)
        .flag("--sandbox", "bwrap")
        .flag("--cache-dir", &cache);
    let cached = |v: &Value| v["runs"]["baseline"]["cached"].as_bool().unwrap_or(false);
    let entries = || -> Vec<(PathBuf, Vec<u8>)> {
        let mut found = Vec::new();
        // The stored baselines (the cache also remembers that bwrap works here: `probes/`).
        let baselines = std::fs::read_dir(&cache).unwrap().flatten();
        for dir in baselines.filter(|d| d.file_name().to_string_lossy().starts_with("baseline")) {
            for e in std::fs::read_dir(dir.path()).unwrap().flatten() {
                found.push((e.path(), std::fs::read(e.path()).unwrap()));
            }
        }
        found
    };
    let first = f.run(&args).json();
    assert_eq!(
        (first["outcome"].as_str(), cached(&first)),
        (Some("resolved"), false),
        "{first:#}"
    );
    let stored = entries();
    assert_eq!(stored.len(), 1, "{stored:?}");
    let second = f.run(&args).json();
    assert_eq!(
        (second["outcome"].as_str(), cached(&second)),
        (Some("resolved"), true),
        "{second:#}"
    );
    assert_eq!(entries(), stored, "the candidate's test rewrote the cache");
    // Edited from outside (what an unsandboxed test could do): the digest no longer matches,
    // and the baseline runs again instead of deciding the verdict.
    let (path, bytes) = &stored[0];
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert!(text.contains("\"failed\""), "{text}");
    std::fs::write(path, text.replace("\"failed\"", "\"passed\"")).unwrap();
    let third = f.run(&args).json();
    assert_eq!(
        (third["outcome"].as_str(), cached(&third)),
        (Some("resolved"), false),
        "{third:#}"
    );
}

/// Whether this process may make a control group under its own, as patchgrade does for each
/// command (`src/run/limits.rs`): cgroup v1's `pids` here.
fn control_groups() -> bool {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let Some(path) = own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        names
            .split(',')
            .any(|n| n == "pids")
            .then(|| path.to_string())
    }) else {
        return false;
    };
    let probe = std::path::Path::new("/sys/fs/cgroup/pids")
        .join(path.trim_start_matches('/'))
        .join(format!("patchgrade-probe-{}", std::process::id()));
    let made = std::fs::create_dir(&probe).is_ok();
    let _ = std::fs::remove_dir(&probe);
    made
}

/// The names of the probes remembered in `cache`.
fn remembered_probes(cache: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(cache.join("probes"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A bwrap that worked is remembered in the cache, so a later process skips its probe; by
/// what its success depends on: another bwrap first on `PATH` (here one that cannot start) is
/// probed, not trusted, and its failure is said and never remembered.
#[test]
fn a_remembered_bwrap_probe_holds_for_that_bwrap_only() {
    if !require_bwrap() {
        return;
    }
    let f = Fixture::calc();
    let cache = f.scratch.join("cache");
    let args = CheckArgs::calc("resolved")
        .flag("--sandbox", "bwrap")
        .flag("--cache-dir", &cache);
    assert_eq!(f.run(&args).outcome(), "resolved");
    let remembered = remembered_probes(&cache);
    assert_eq!(remembered.len(), 1, "{remembered:?}");
    assert!(remembered[0].starts_with("bwrap-"), "{remembered:?}");
    // The same machine, the same bwrap: remembered, and still graded in bwrap.
    let again = f.run(&args).json();
    assert_eq!(again["isolation"]["sandbox"], "bwrap", "{again:#}");
    let bin = f.scratch.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fake = bin.join("bwrap");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'bwrap: no user namespaces here' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let broken = f.run_with_env(&args, &[("PATH", path.as_os_str())]);
    assert_ne!(broken.code, 0, "{}", broken.stdout);
    assert!(
        broken.stderr.contains("no user namespaces here"),
        "{}",
        broken.stderr
    );
    assert_eq!(remembered_probes(&cache), remembered);
}

/// In bwrap a side's test command starts while its checkout is written, held at the sandbox's
/// gate (`--block-fd`): it runs once the checkout is ready, and never when the patch turns out
/// not to apply. Each run of the command leaves a mark in a directory shown writable; the
/// mark is there after a check whose patch applies, and absent after one whose patch does not.
#[test]
fn in_bwrap_a_command_started_ahead_runs_only_once_its_patch_applied() {
    if !require_bwrap() {
        return;
    }
    let f = Fixture::with_files(&[("a.txt", "one\ntwo\nthree\n")]);
    let marks = f.scratch_file("p", "").with_file_name("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let cmd = format!(
        "touch {}/ran-$$ && echo '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {{junit}}",
        marks.display()
    );
    let applies = f.diff_of("good.diff", &[("a.txt", "one\n2\nthree\n")]);
    let refused = f.scratch_file(
        "bad.diff",
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-deux\n+2\n three\n",
    );
    let ran = || std::fs::read_dir(&marks).unwrap().count();
    let check = |patch: &std::path::Path| {
        let args = CheckArgs::single_test(patch, &cmd)
            .flag("--sandbox", "bwrap")
            .flag("--baseline", "skip")
            .flag("--sandbox-rw", &marks)
            .flag("--cache-dir", f.cache_home());
        f.run(&args).json()
    };
    let v = check(&refused);
    assert_eq!(v["outcome"], "patch-failed", "{v:#}");
    // Long enough for a command let through by mistake to have left its mark.
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(ran(), 0, "the command ran for a patch that did not apply");
    let v = check(&applies);
    assert_eq!(v["outcome"], "no-breakage", "{v:#}");
    assert_eq!(ran(), 1, "{v:#}");
}
