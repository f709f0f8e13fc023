//! The eight figures of `docs/benchmarks.md`, each a ratio measured side by side in one run so
//! that it holds on a noisy machine. Run with
//! `scripts/bench [overhead|checkout|junit|loop|batch|sandbox|compiled|downstream]`
//! (which puts pytest on PATH), or `cargo bench --bench figures -- NAME...`.
//!
//! Every figure is the median of several alternating rounds; nothing here asserts a time.

use patchgrade::internals::{Checkout, Fit, Patch, Report, Source};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_patchgrade");
const ROUNDS: usize = 5;

fn main() {
    if let Ok(path) = std::env::var("PATCHGRADE_BENCH_READ") {
        return read_child(Path::new(&path));
    }
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it,
    // and a test run must not spend minutes measuring.
    if !std::env::args().any(|a| a == "--bench") {
        println!("figures: run with `scripts/bench` or `cargo bench --bench figures`");
        return;
    }
    let names: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let all = [
        "overhead",
        "checkout",
        "junit",
        "loop",
        "batch",
        "sandbox",
        "compiled",
        "downstream",
    ];
    let chosen: Vec<&str> = if names.is_empty() {
        all.to_vec()
    } else {
        all.iter()
            .copied()
            .filter(|n| names.iter().any(|a| a == n))
            .collect()
    };
    println!("# patchgrade benchmarks, {}", machine());
    for name in chosen {
        match name {
            "overhead" => overhead(),
            "checkout" => checkout(),
            "junit" => junit(),
            "loop" => agent_loop(),
            "batch" => batch(),
            "sandbox" => sandbox(),
            "compiled" => compiled(),
            "downstream" => downstream(),
            _ => unreachable!("filtered above"),
        }
    }
}

fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown cpu".into());
    format!("{cores} cores ({cpu})")
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

fn sh(dir: &Path, script: &str) {
    let status = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .stdout(Stdio::null())
        .status()
        .expect("sh runs");
    assert!(status.success(), "`{script}` failed in {}", dir.display());
}

fn git_commit_all(dir: &Path) {
    sh(
        dir,
        "git init -q 2>/dev/null; git add -A && git -c user.name=bench -c user.email=bench@example.invalid commit -qm base",
    );
}

fn time(f: impl FnOnce()) -> Duration {
    let started = Instant::now();
    f();
    started.elapsed()
}

/// The processor time (user and system) the children waited for since the last call took:
/// what a noisy neighbour's steal does not add to, unlike the wall clock.
fn children_cpu() -> Duration {
    use nix::sys::resource::{UsageWho, getrusage};
    let Ok(usage) = getrusage(UsageWho::RUSAGE_CHILDREN) else {
        return Duration::ZERO;
    };
    let total = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec() as u64) + Duration::from_micros(t.tv_usec() as u64)
    };
    total(usage.user_time()) + total(usage.system_time())
}

/// [`time`], and the processor time its children took. bwrap's process inside its pid
/// namespace outlives the one patchgrade waits for: made this process's own orphan
/// (`PR_SET_CHILD_SUBREAPER`, set once), it is reaped here, and its time counted.
fn time_and_cpu(f: impl FnOnce()) -> (Duration, Duration) {
    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let reap = || {
        while let Ok(status) = waitpid(None, Some(WaitPidFlag::WNOHANG)) {
            if status == WaitStatus::StillAlive {
                break;
            }
        }
    };
    reap();
    let before = children_cpu();
    let wall = time(f);
    // Killed with the run, they are gone or going: a moment for the last to exit.
    std::thread::sleep(Duration::from_millis(20));
    reap();
    (wall, children_cpu().saturating_sub(before))
}

/// Run patchgrade; the verdict's JSON.
fn patchgrade(args: &[&str], cwd: &Path) -> serde_json::Value {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("patchgrade runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "patchgrade {args:?}: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A pytest project of about three seconds: 400 tests, each a little CPU and a little wait,
/// importing `app.py`. Returns the repository and the test ids.
fn pytest_project(dir: &Path) -> Vec<String> {
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(
        dir.join("app.py"),
        "FACTOR = 1\n\ndef work(n):\n    return sum(i * i for i in range(n)) * FACTOR\n",
    )
    .unwrap();
    std::fs::write(dir.join(".gitignore"), "__pycache__/\n").unwrap();
    let mut ids = Vec::new();
    for f in 0..10 {
        let mut text = String::from("import time\nfrom app import work\n\n");
        for t in 0..40 {
            text.push_str(&format!(
                "def test_{t}():\n    assert work(20000) >= 0\n    time.sleep(0.004)\n\n"
            ));
            ids.push(format!("tests/test_{f}.py::test_{t}"));
        }
        std::fs::write(dir.join(format!("tests/test_{f}.py")), text).unwrap();
    }
    git_commit_all(dir);
    ids
}

fn app_patch(factor: usize) -> String {
    format!(
        "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1,4 +1,4 @@\n-FACTOR = 1\n+FACTOR = {factor}\n \n def work(n):\n     return sum(i * i for i in range(n)) * FACTOR\n"
    )
}

/// Pairs of figure 1: at least 10, interleaved, on a sub-second suite.
const OVERHEAD_PAIRS: usize = 11;

/// The load average, as `/proc/loadavg` says it (1, 5 and 15 minutes).
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// more-itertools 11.2.1's source distribution, from `scripts/projects-env` (which
/// `scripts/bench` runs): a real suite whose test file is large, so that compiling it shows.
fn more_itertools() -> PathBuf {
    let dir = std::env::var_os("PATCHGRADE_PROJECTS")
        .map(PathBuf::from)
        .expect("PATCHGRADE_PROJECTS: run the figures with scripts/bench")
        .join("more-itertools-11.2.1");
    assert!(
        dir.is_dir(),
        "{} is missing (scripts/projects-env)",
        dir.display()
    );
    dir
}

/// Figure 1: `check --baseline skip`, in the default sandbox with its cache, against the bare
/// test command in a warm working tree (bytecode cached, as a user's own tree has it), on a
/// real sub-second suite: 24 tests of more-itertools. The check's own split (checkout, apply,
/// sandbox, the command, reading the report, judging) is printed beside the ratio.
fn overhead() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    copy_tree(&more_itertools(), &repo);
    git_commit_all(&repo);
    // 24 tests spread over both files, as pytest collects them.
    let listed = Command::new("python")
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--collect-only",
            "tests",
        ])
        .current_dir(&repo)
        .output()
        .expect("pytest runs");
    let all: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter(|l| l.contains("::"))
        .map(str::to_string)
        .collect();
    let step = (all.len() / 24).max(1);
    let ids: Vec<String> = all.iter().step_by(step).take(24).cloned().collect();
    let ids_file = tmp.path().join("ids.txt");
    std::fs::write(&ids_file, ids.join("\n")).unwrap();
    // An edit of a recipe the tests import: the check compiles it in its fresh checkout; the
    // bare tree has it compiled after its first run (below, a third side runs it as just
    // edited again, as an agent's loop does after each edit).
    let recipes = repo.join("more_itertools/recipes.py");
    let text = std::fs::read_to_string(&recipes).unwrap();
    let edited = text.replacen(
        "def take(n, iterable):\n",
        "def take(n, iterable):\n    # islice stops at the shorter of n and the iterable\n",
        1,
    );
    std::fs::write(&recipes, edited).unwrap();
    let diff = Command::new("git")
        .args(["diff"])
        .current_dir(&repo)
        .output()
        .unwrap();
    sh(&repo, "git checkout -q .");
    let patch = tmp.path().join("p.diff");
    std::fs::write(&patch, &diff.stdout).unwrap();
    // The bare run: a working tree with the patch applied, warm after its first run.
    let prepared = tmp.path().join("prepared");
    sh(
        &repo,
        &format!(
            "git worktree add -q --detach {} && git -C {0} apply {}",
            prepared.display(),
            patch.display()
        ),
    );
    let junit = tmp.path().join("bare.xml");
    let bare_cmd = format!(
        "python -m pytest -p no:cacheprovider --rootdir={} --junitxml={} {}",
        prepared.display(),
        junit.display(),
        ids.join(" ")
    );
    let bare_run = || {
        // pytest's status is not the point. Bytecode is written, as in a user's own tree
        // (the check removes the variable for its runs too).
        let _ = Command::new("sh")
            .args(["-c", &bare_cmd])
            .current_dir(&prepared)
            .env_remove("PYTHONDONTWRITEBYTECODE")
            .stdout(Stdio::null())
            .status();
    };
    // The bare run right after the edit: the module is newer than its bytecode, which Python
    // compiles again.
    let edited = prepared.join("more_itertools/recipes.py");
    let bare_edited_run = || {
        std::fs::File::options()
            .append(true)
            .open(&edited)
            .and_then(|f| f.set_modified(std::time::SystemTime::now()))
            .unwrap();
        bare_run();
    };
    let cache = tmp.path().join("cache");
    let check_with = |baseline: &str, cache: &Path, how: &[&str]| {
        let how = [&["--baseline", baseline][..], how].concat();
        check_json(&repo, &patch, &ids_file, cache, &how)
    };
    let check = |baseline: &str| {
        let cache = if baseline == "cold" {
            tmp.path()
                .join(format!("cold-{}", Instant::now().elapsed().as_nanos()))
        } else {
            cache.clone()
        };
        let baseline = if baseline == "cold" { "skip" } else { baseline };
        check_with(baseline, &cache, &["--runner", "pytest"])
    };
    // Warm both: the bare tree's bytecode, and the cache (a baseline and its build seed), as
    // an agent loop's first check leaves it.
    bare_run();
    let first = check("run");
    assert_eq!(first["outcome"], "no-breakage", "{first:#}");
    // A check's own cost, alone: the same check whose test command copies the bare run's
    // report, so that what is left is the process, the checkout, the patch, the sandbox's
    // start, the report's reading and the cleanup.
    let saved = tmp.path().join("saved.xml");
    std::fs::copy(&junit, &saved).unwrap();
    let copy_cmd = format!("cp {} {{junit}}", saved.display());
    let fixed_cache = tmp.path().join("fixed-cache");
    let fixed = || {
        let how = ["--test-cmd", copy_cmd.as_str(), "--ids", "pytest"];
        check_with("skip", &fixed_cache, &how)
    };
    let load_before = load();
    let (mut bare, mut checked, mut cold, mut steps) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut bare_edited, mut fixed_times, mut fixed_steps) = (Vec::new(), Vec::new(), Vec::new());
    let (mut bare_cpu, mut checked_cpu) = (Vec::new(), Vec::new());
    for _ in 0..OVERHEAD_PAIRS {
        let mut v = serde_json::Value::Null;
        fixed_times.push(time(|| v = fixed()));
        assert_eq!(v["outcome"], "no-breakage", "{v:#}");
        fixed_steps.push(v);
        let (wall, cpu) = time_and_cpu(bare_run);
        bare.push(wall);
        bare_cpu.push(cpu);
        bare_edited.push(time(bare_edited_run));
        let mut v = serde_json::Value::Null;
        let (wall, cpu) = time_and_cpu(|| v = check("skip"));
        checked.push(wall);
        checked_cpu.push(cpu);
        assert_eq!(v["outcome"], "no-breakage", "{v:#}");
        steps.push(v);
        // The same check with an empty cache: no build seed, every module compiled.
        cold.push(time(|| {
            let v = check("cold");
            assert_eq!(v["outcome"], "no-breakage", "{v:#}");
        }));
    }
    let load_after = load();
    // Each pair's own ratio: what the machine's drift between pairs does not move.
    let mut pairs: Vec<f64> = checked
        .iter()
        .zip(&bare)
        .map(|(c, b)| c.as_secs_f64() / b.as_secs_f64())
        .collect();
    pairs.sort_by(f64::total_cmp);
    let quartile = |q: usize| pairs[(pairs.len() - 1) * q / 4];
    let (bare, check_time, cold) = (median(bare), median(checked), median(cold));
    let bare_edited = median(bare_edited);
    let step = |name: &str| median_step(&steps, name);
    let judge = {
        let mut xs: Vec<u64> = steps
            .iter()
            .map(|v| v["timings"]["judge_ms"].as_u64().unwrap_or(0))
            .collect();
        xs.sort_unstable();
        xs[xs.len() / 2]
    };
    let fixed_step = |name: &str| median_step(&fixed_steps, name);
    let seeded = steps
        .iter()
        .filter(|v| v["runs"]["candidate"]["seeded"] == true)
        .count();
    println!(
        "\n## 1. Overhead: check --baseline skip vs the bare test command (24 more-itertools tests)"
    );
    println!("load average before: {load_before}; after: {load_after}");
    println!("sandbox: {}", steps[0]["isolation"]["sandbox"]);
    println!("bare command in a warm working tree: {}", secs(bare));
    println!("patchgrade check --baseline skip:    {}", secs(check_time));
    println!(
        "the same from an empty cache (no seed): {} ({:.3}x)",
        secs(cold),
        cold.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "its split (median ms): checkout {}, apply {}, sandbox {}, setup {}, command {}, report {}, judge {}; seeded {seeded}/{OVERHEAD_PAIRS}",
        step("checkout_ms"),
        step("apply_ms"),
        step("sandbox_ms"),
        step("setup_ms"),
        step("command_ms"),
        step("report_ms"),
        judge
    );
    println!(
        "a check's own fixed cost (its command copies a saved report): {:.1} ms; checkout {}, apply {}, command {} (the sandbox's start with it)",
        median(fixed_times).as_secs_f64() * 1000.0,
        fixed_step("checkout_ms"),
        fixed_step("apply_ms"),
        fixed_step("command_ms"),
    );
    println!(
        "ratio: {:.3}x, the median of {OVERHEAD_PAIRS} interleaved pairs (target <= 1.03x)",
        check_time.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "pair by pair: median {:.3}x, the middle half {:.3}x to {:.3}x (the spread is the machine's)",
        quartile(2),
        quartile(1),
        quartile(3)
    );
    let (bare_cpu, checked_cpu) = (median(bare_cpu), median(checked_cpu));
    println!(
        "processor time, all processes (median): bare {:.3} s, check {:.3} s: {:.3}x",
        bare_cpu.as_secs_f64(),
        checked_cpu.as_secs_f64(),
        checked_cpu.as_secs_f64() / bare_cpu.as_secs_f64()
    );
    println!(
        "against the bare command run right after the edit ({}): {:.3}x",
        secs(bare_edited),
        check_time.as_secs_f64() / bare_edited.as_secs_f64()
    );
}

/// `check --format json --cache-dir CACHE --patch PATCH --p2p-file IDS` in `repo`, with
/// `how` (the runner or command, the baseline) after.
fn check_json(
    repo: &Path,
    patch: &Path,
    ids: &Path,
    cache: &Path,
    how: &[&str],
) -> serde_json::Value {
    let mut args = vec![
        "check",
        "--format",
        "json",
        "--cache-dir",
        cache.to_str().unwrap(),
        "--patch",
        patch.to_str().unwrap(),
        "--p2p-file",
        ids.to_str().unwrap(),
    ];
    args.extend_from_slice(how);
    patchgrade(&args, repo)
}

/// The median of one step of the candidate's runs (`runs.candidate.steps.NAME`, ms).
fn median_step(verdicts: &[serde_json::Value], name: &str) -> u64 {
    let mut xs: Vec<u64> = verdicts
        .iter()
        .map(|v| v["runs"]["candidate"]["steps"][name].as_u64().unwrap_or(0))
        .collect();
    xs.sort_unstable();
    xs[xs.len() / 2]
}

/// Copy a directory tree (regular files and directories).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            copy_tree(&src, &dst);
        } else if kind.is_file() {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Figure 2: A checkout of 10,000 files (about 80 MB) plus a patch, against `git worktree add
/// --detach` and `git apply`; and a pooled checkout's reset.
fn checkout() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let mut seed = 0x2545f4914f6cdd1du64;
    let mut line = |i: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        format!(
            "{i:06} {seed:016x} {:016x} {:016x}\n",
            seed.rotate_left(21),
            seed.rotate_left(42)
        )
    };
    for d in 0..100 {
        let dir = repo.join(format!("pkg{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            let text: String = (0..138).map(&mut line).collect();
            std::fs::write(dir.join(format!("mod{f:03}.txt")), text).unwrap();
        }
    }
    git_commit_all(&repo);
    let size: u64 = walk_size(&repo.join("pkg000")) * 100;
    // Ten files edited, one line each.
    let mut patch = String::new();
    for d in 0..10 {
        let path = format!("pkg{d:03}/mod000.txt");
        let old = std::fs::read_to_string(repo.join(&path)).unwrap();
        let lines: Vec<&str> = old.lines().take(4).collect();
        patch.push_str(&format!(
            "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,4 +1,4 @@\n-{}\n+edited by the benchmark\n {}\n {}\n {}\n",
            lines[0], lines[1], lines[2], lines[3]
        ));
    }
    let patch_file = tmp.path().join("p.diff");
    std::fs::write(&patch_file, &patch).unwrap();
    let parsed = Patch::parse(patch.as_bytes()).unwrap().unwrap();
    let (mut git, mut ours, mut reset) = (Vec::new(), Vec::new(), Vec::new());
    // A pool's slot, used once: each round resets it (tracked files, then its ignored output
    // put back to its snapshot) and applies the patch again.
    let pool = patchgrade::WorkdirPool::new(tmp.path().join("pool"));
    {
        let source = Source::resolve(&repo, "HEAD").unwrap();
        let (slot, _lease) = pool.acquire(&source).unwrap();
        slot.apply(&parsed, Fit::Exact).unwrap();
    }
    for round in 0..ROUNDS {
        let wt = tmp.path().join(format!("wt{round}"));
        git.push(time(|| {
            sh(
                &repo,
                &format!(
                    "git worktree add -q --detach {} && git -C {0} apply {}",
                    wt.display(),
                    patch_file.display()
                ),
            );
        }));
        let co = tmp.path().join(format!("co{round}"));
        ours.push(time(|| {
            let source = Source::resolve(&repo, "HEAD").unwrap();
            Checkout::create(&source, &co)
                .unwrap()
                .apply(&parsed, Fit::Exact)
                .unwrap();
        }));
        reset.push(time(|| {
            let source = Source::resolve(&repo, "HEAD").unwrap();
            let (slot, _lease) = pool.acquire(&source).unwrap();
            slot.apply(&parsed, Fit::Exact).unwrap();
        }));
        sh(
            &repo,
            &format!(
                "rm -rf {} {} && git worktree prune",
                wt.display(),
                co.display()
            ),
        );
    }
    let (git, ours, reset) = (median(git), median(ours), median(reset));
    println!(
        "\n## 2. Checkout: 10,000 files ({} MB) and a 10-file patch",
        size / 1_000_000
    );
    println!("git worktree add --detach + git apply: {}", secs(git));
    println!("patchgrade checkout + apply:           {}", secs(ours));
    println!("patchgrade pooled reset + apply:       {}", secs(reset));
    println!(
        "ratio: {:.3}x fresh (target <= 1.0x), {:.3}x pooled",
        ours.as_secs_f64() / git.as_secs_f64(),
        reset.as_secs_f64() / git.as_secs_f64()
    );
}

fn walk_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

/// Figure 3: Reading a report of 100,000 test cases: MB/s, and peak memory with and without output
/// text (a child process reads, so its peak is the reader's alone).
fn junit() {
    let tmp = tempfile::tempdir().unwrap();
    let lean = tmp.path().join("lean.xml");
    let heavy = tmp.path().join("heavy.xml");
    write_report(&lean, false);
    write_report(&heavy, true);
    println!("\n## 3. JUnit reading: 100,000 test cases");
    let mut figures = Vec::new();
    for (name, path) in [
        ("no output text", &lean),
        ("failure text + system-out", &heavy),
    ] {
        let size = std::fs::metadata(path).unwrap().len();
        let mut runs = Vec::new();
        let mut peak = 0;
        for _ in 0..ROUNDS {
            let (elapsed, hwm) = read_in_child(path);
            runs.push(elapsed);
            peak = hwm;
        }
        let t = median(runs);
        let mb = size as f64 / 1e6;
        println!(
            "{name}: {mb:.1} MB in {} = {:.0} MB/s, peak memory {:.1} MiB",
            secs(t),
            mb / t.as_secs_f64(),
            peak as f64 / 1024.0
        );
        figures.push((mb / t.as_secs_f64(), peak));
    }
    println!(
        "peak memory, output text / none: {:.2}x for {:.1}x the bytes (target: MB/s >= 200, memory not following output text)",
        figures[1].1 as f64 / figures[0].1 as f64,
        std::fs::metadata(&heavy).unwrap().len() as f64
            / std::fs::metadata(&lean).unwrap().len() as f64
    );
    // One test that printed 300 MB: the reader cuts the text before the XML reader buffers it.
    let flood = tmp.path().join("flood.xml");
    {
        use std::io::Write;
        let mut out = std::io::BufWriter::new(std::fs::File::create(&flood).unwrap());
        write!(
            out,
            "<testsuite><testcase classname=\"t\" name=\"a\"><system-out>"
        )
        .unwrap();
        let line = "a chatty test printing the same line again and again\n".repeat(1000);
        while out.get_ref().metadata().unwrap().len() < 300_000_000 {
            out.write_all(line.as_bytes()).unwrap();
        }
        write!(out, "</system-out></testcase></testsuite>").unwrap();
    }
    let size = std::fs::metadata(&flood).unwrap().len();
    let (t, peak) = read_in_child(&flood);
    println!(
        "one test with a {:.0} MB <system-out>: read in {}, peak memory {:.1} MiB ({:.3}x the bytes)",
        size as f64 / 1e6,
        secs(t),
        peak as f64 / 1024.0,
        peak as f64 * 1024.0 / size as f64
    );
}

fn write_report(path: &Path, text: bool) {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(out, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<testsuites><testsuite name=\"pytest\" tests=\"100000\">").unwrap();
    let output = "captured output line that a chatty test printed while it ran\n".repeat(16);
    for i in 0..100_000 {
        let (file, case) = (i / 100, i % 100);
        write!(out, "<testcase classname=\"tests.test_mod{file}\" name=\"test_case_{case}\" file=\"tests/test_mod{file}.py\" line=\"{case}\" time=\"0.001\">").unwrap();
        if text && i % 10 == 0 {
            write!(
                out,
                "<failure message=\"AssertionError: assert {i} == {}\">",
                i + 1
            )
            .unwrap();
            for frame in 0..20 {
                write!(out, "tests/test_mod{file}.py:{frame}: in test_case_{case}\n    assert value == expected\n").unwrap();
            }
            write!(out, "E   AssertionError: assert {i} == {}</failure>", i + 1).unwrap();
        }
        if text {
            write!(
                out,
                "<system-out>{output}</system-out><system-err>{output}</system-err>"
            )
            .unwrap();
        }
        writeln!(out, "</testcase>").unwrap();
    }
    writeln!(out, "</testsuite></testsuites>").unwrap();
}

fn read_in_child(path: &Path) -> (Duration, u64) {
    let out = Command::new(std::env::current_exe().unwrap())
        .env("PATCHGRADE_BENCH_READ", path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.split_whitespace();
    let nanos: u64 = parts
        .next()
        .and_then(|p| p.parse().ok())
        .expect("child prints its time");
    let hwm: u64 = parts
        .next()
        .and_then(|p| p.parse().ok())
        .expect("child prints its peak");
    (Duration::from_nanos(nanos), hwm)
}

/// In the child: read the report, print nanoseconds and peak memory (KiB).
fn read_child(path: &Path) {
    let started = Instant::now();
    let report = Report::read(path).expect("the generated report reads");
    let elapsed = started.elapsed();
    let cases = if path.ends_with("flood.xml") {
        1
    } else {
        100_000
    };
    assert_eq!(report.cases.len(), cases);
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("0");
    println!("{} {hwm}", elapsed.as_nanos());
}

/// Figure 4: Five checks of different patches on one task (the cache on) against five times the
/// candidate run alone.
fn agent_loop() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let ids = pytest_project(&repo);
    let ids_file = tmp.path().join("ids.txt");
    std::fs::write(&ids_file, ids.join("\n")).unwrap();
    let patches: Vec<PathBuf> = (2..7)
        .map(|k| {
            let p = tmp.path().join(format!("p{k}.diff"));
            std::fs::write(&p, app_patch(k)).unwrap();
            p
        })
        .collect();
    let run = |patch: &Path, extra: &[&str], cache: &Path| -> serde_json::Value {
        let how = [&["--runner", "pytest"][..], extra].concat();
        check_json(&repo, patch, &ids_file, cache, &how)
    };
    let (mut loops, mut singles, mut baselines) = (Vec::new(), Vec::new(), Vec::new());
    let mut pooled = Vec::new();
    for round in 0..ROUNDS {
        let cache = tmp.path().join(format!("cache{round}"));
        let mut ran = 0;
        loops.push(time(|| {
            for p in &patches {
                let v = run(p, &[], &cache);
                if v["runs"]["baseline"]["cached"] != true {
                    ran += 1;
                }
            }
        }));
        baselines.push(ran);
        singles.push(time(|| {
            run(&patches[0], &["--baseline", "skip"], &cache);
        }));
        // The same loop with a workdir pool (a fresh one, and a fresh cache, each round):
        // each check's slot is reset to its trusted state first.
        let (cache, pool) = (
            tmp.path().join(format!("pooled-cache{round}")),
            tmp.path().join(format!("pool{round}")),
        );
        let pool = ["--workdir-pool", pool.to_str().unwrap()];
        pooled.push(time(|| {
            for p in &patches {
                run(p, &pool, &cache);
            }
        }));
    }
    let (lp, single, pooled) = (median(loops), median(singles), median(pooled));
    println!("\n## 4. Agent loop: five checks of different patches on one task");
    println!("baselines run per loop: {baselines:?} (target: 1)");
    println!("five checks, cache on:            {}", secs(lp));
    println!("five checks, cache on, pooled:    {}", secs(pooled));
    println!("one candidate run alone (x5):     {}", secs(single * 5));
    println!(
        "ratio: {:.3}x, pooled {:.3}x (target <= 1.05x)",
        lp.as_secs_f64() / (5.0 * single.as_secs_f64()),
        pooled.as_secs_f64() / (5.0 * single.as_secs_f64())
    );
}

/// Figure 5: `batch --jobs 1` against `--jobs 2` over 20 small tasks.
fn batch() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join("tests")).unwrap();
    let mut tasks = String::new();
    let mut preds = String::new();
    // Twenty commits, so twenty base trees and twenty baselines.
    for k in 0..20 {
        std::fs::write(
            repo.join("app.py"),
            format!("K = {k}\n\ndef value():\n    return K\n"),
        )
        .unwrap();
        let mut text = String::from("import time\nfrom app import value, K\n\n");
        for t in 0..20 {
            text.push_str(&format!("def test_{t}():\n    time.sleep(0.01)\n    assert sum(range(20000)) > 0\n    assert value() == K\n\n"));
        }
        text.push_str("def test_fixed():\n    assert value() == K + 1\n");
        std::fs::write(repo.join("tests/test_app.py"), text).unwrap();
        git_commit_all(&repo);
        let head = String::from_utf8(
            Command::new("git")
                .args(["rev-parse", "HEAD"])
                .current_dir(&repo)
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        let p2p: Vec<String> = (0..20)
            .map(|t| format!("tests/test_app.py::test_{t}"))
            .collect();
        let task = serde_json::json!({
            "instance_id": format!("task-{k:02}"),
            "repo": "bench/app",
            "repo_path": repo,
            "base_commit": head.trim(),
            "FAIL_TO_PASS": ["tests/test_app.py::test_fixed"],
            "PASS_TO_PASS": p2p,
        });
        tasks.push_str(&format!("{task}\n"));
        let fix = format!(
            "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1,4 +1,4 @@\n K = {k}\n \n def value():\n-    return K\n+    return K + 1\n"
        );
        preds.push_str(&format!(
            "{}\n",
            serde_json::json!({"instance_id": format!("task-{k:02}"), "model_patch": fix})
        ));
    }
    let tasks_file = tmp.path().join("tasks.jsonl");
    let preds_file = tmp.path().join("preds.jsonl");
    std::fs::write(&tasks_file, tasks).unwrap();
    std::fs::write(&preds_file, preds).unwrap();
    let run = |jobs: &str, out: &Path, cache: Option<&Path>| {
        let mut args = vec![
            "batch".to_string(),
            "--tasks".into(),
            tasks_file.display().to_string(),
            "--predictions".into(),
            preds_file.display().to_string(),
            "--out".into(),
            out.display().to_string(),
            "--runner".into(),
            "pytest".into(),
            "--jobs".into(),
            jobs.into(),
        ];
        if let Some(c) = cache {
            args.extend(["--cache-dir".into(), c.display().to_string()]);
        }
        let status = Command::new(BIN)
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "batch --jobs {jobs} failed");
    };
    let warm = tmp.path().join("warm-cache");
    run("2", &tmp.path().join("warm-up"), Some(&warm));
    let (mut cold1, mut cold2, mut warm1, mut warm2) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..3 {
        let out = |name: &str| tmp.path().join(format!("{name}-{round}"));
        cold1.push(time(|| run("1", &out("c1"), None)));
        cold2.push(time(|| run("2", &out("c2"), None)));
        warm1.push(time(|| run("1", &out("w1"), Some(&warm))));
        warm2.push(time(|| run("2", &out("w2"), Some(&warm))));
    }
    let (c1, c2, w1, w2) = (median(cold1), median(cold2), median(warm1), median(warm2));
    println!("\n## 5. Batch: 20 small tasks, --jobs 1 against --jobs 2");
    println!(
        "baselines run (cold cache): --jobs 1 {}, --jobs 2 {} = {:.2}x throughput",
        secs(c1),
        secs(c2),
        c1.as_secs_f64() / c2.as_secs_f64()
    );
    println!(
        "baselines cached (warm):    --jobs 1 {}, --jobs 2 {} = {:.2}x throughput",
        secs(w1),
        secs(w2),
        w1.as_secs_f64() / w2.as_secs_f64()
    );
    println!("(target >= 1.8x)");
}

/// The image the container figures run in (`scripts/sandboxes` builds it).
const IMAGE: &str = "patchgrade-test/python:bookworm-v2";

fn engine_has_image(engine: &str) -> bool {
    Command::new(engine)
        .args(["image", "inspect", IMAGE])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Figure 6: what each sandbox adds to a check whose test command does nothing but write its
/// report (so the figure is the sandbox's cost, not the tests'), against `--sandbox none`;
/// one command's start in each, against `sh`; and a container reused with `exec` against a
/// container started per command.
fn sandbox() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("README"), "x\n").unwrap();
    git_commit_all(&repo);
    let patch = tmp.path().join("p.diff");
    std::fs::write(
        &patch,
        "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\n-x\n+y\n",
    )
    .unwrap();
    let report = "printf '<testsuite><testcase classname=\"t\" name=\"a\"/></testsuite>' > {junit}";
    let mut variants: Vec<(&str, Vec<&str>)> = vec![("none", vec![]), ("bwrap", vec![])];
    for engine in ["docker", "podman"] {
        if engine_has_image(engine) {
            variants.push((engine, vec!["--image", IMAGE]));
        } else {
            println!("(no {engine} image {IMAGE}: scripts/sandboxes builds it)");
        }
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); variants.len()];
    for _ in 0..ROUNDS {
        for (i, (name, extra)) in variants.iter().enumerate() {
            let mut args = vec![
                "check",
                "--format",
                "json",
                "--no-cache",
                "--ids",
                "classname.name",
                "--p2p",
                "t.a",
                "--test-cmd",
                report,
                "--sandbox",
                name,
                "--patch",
            ];
            args.push(patch.to_str().unwrap());
            args.extend(extra.iter().copied());
            times[i].push(time(|| {
                let v = patchgrade(&args, &repo);
                assert_eq!(v["outcome"], "no-breakage", "{name}: {v:#}");
                assert_eq!(v["isolation"]["sandbox"], *name);
            }));
        }
    }
    let none = median(times[0].clone());
    println!("\n## 6. Sandboxes: a check (baseline and candidate) whose tests only write a report");
    for ((name, _), t) in variants.iter().zip(times) {
        let t = median(t);
        println!(
            "--sandbox {name:<7} {}  {:.2}x none, +{:.0} ms",
            secs(t),
            t.as_secs_f64() / none.as_secs_f64(),
            (t.as_secs_f64() - none.as_secs_f64()) * 1000.0
        );
    }

    // One command's start: `sh -c true` against the same in bwrap, as the jail runs it.
    let bwrap = [
        "--die-with-parent",
        "--unshare-pid",
        "--new-session",
        "--unshare-net",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        "--",
        "sh",
        "-c",
        "true",
    ];
    let run = |program: &str, args: &[&str]| {
        let ok = Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "{program} {args:?}");
    };
    let (mut bare, mut boxed) = (Vec::new(), Vec::new());
    for _ in 0..50 {
        bare.push(time(|| run("sh", &["-c", "true"])));
        boxed.push(time(|| run("bwrap", &bwrap)));
    }
    let (bare, boxed) = (median(bare), median(boxed));
    println!(
        "one command: sh {:.1} ms, bwrap {:.1} ms (+{:.1} ms)",
        bare.as_secs_f64() * 1000.0,
        boxed.as_secs_f64() * 1000.0,
        (boxed.as_secs_f64() - bare.as_secs_f64()) * 1000.0
    );

    // Five commands (setup, a first attempt, three retries at most): a container per command
    // against one container and `exec`, each command ending with the kill that reuse needs.
    for engine in ["docker", "podman"] {
        if !engine_has_image(engine) {
            continue;
        }
        let (mut per, mut reuse) = (Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            per.push(time(|| {
                for _ in 0..5 {
                    run(
                        engine,
                        &[
                            "run",
                            "--rm",
                            "--network",
                            "none",
                            IMAGE,
                            "sh",
                            "-c",
                            "true",
                        ],
                    );
                }
            }));
            let name = format!("patchgrade-bench-{}-{round}", std::process::id());
            reuse.push(time(|| {
                run(
                    engine,
                    &[
                        "run",
                        "-d",
                        "--name",
                        &name,
                        "--network",
                        "none",
                        "--entrypoint",
                        "sleep",
                        IMAGE,
                        "2147483647",
                    ],
                );
                for _ in 0..5 {
                    run(engine, &["exec", &name, "sh", "-c", "true"]);
                    run(
                        engine,
                        &["exec", &name, "sh", "-c", "kill -9 -1 2>/dev/null; true"],
                    );
                }
                let rm: &[&str] = if engine == "podman" {
                    &["rm", "-f", "-t", "0", &name]
                } else {
                    &["rm", "-f", &name]
                };
                run(engine, rm);
            }));
        }
        let (per, reuse) = (median(per), median(reuse));
        println!(
            "{engine}, 5 commands: a container each {}, one container reused {} = {:.2}x faster",
            secs(per),
            secs(reuse),
            per.as_secs_f64() / reuse.as_secs_f64()
        );
    }
}

/// Figure 7: a compiled suite. `check --baseline skip` of httparse's real upstream fix
/// (`fixtures/projects/httparse-1.9.5`, nextest) in a fresh checkout, and with a workdir pool,
/// against the bare `cargo nextest run` of the same tests in a warm tree that has the fix
/// (its `src/lib.rs` touched each round, since a check's patch makes cargo rebuild the crate
/// too).
fn compiled() {
    let tmp = tempfile::tempdir().unwrap();
    let (fixture, repo) = httparse_repo(tmp.path());
    let patch = fixture.join("fix.patch");
    let ids = [
        "httparse tests::test_request_with_multiple_spaces_and_bad_path",
        "httparse tests::test_method_within_buffer",
        "httparse tests::test_chunk_size",
        "httparse tests::test_no_space_after_colon",
    ];
    let prepared = tmp.path().join("prepared");
    sh(
        &repo,
        &format!(
            "git worktree add -q --detach {} && git -C {0} apply {}",
            prepared.display(),
            patch.display()
        ),
    );
    let filters: Vec<String> = ids
        .iter()
        .map(|id| {
            let test = id.split_once(' ').map_or(*id, |(_, t)| t);
            format!("-E 'test(={test})'")
        })
        .collect();
    let bare_cmd = format!(
        "touch src/lib.rs && CARGO_TARGET_DIR=$PWD/target cargo nextest run --no-tests=pass {} \
         >/dev/null 2>&1",
        filters.join(" ")
    );
    // Warm: the bare side's tree is built once before the rounds.
    sh(&prepared, &bare_cmd);
    // The other bare side: a warm tree at base, to which each round applies the fix and
    // runs the tests (the fix's change itself is compiled, as in a seeded checkout); put
    // back and rebuilt at base after, untimed.
    let at_base = tmp.path().join("at-base");
    sh(
        &repo,
        &format!("git worktree add -q --detach {}", at_base.display()),
    );
    let nextest = format!(
        "CARGO_TARGET_DIR=$PWD/target cargo nextest run --no-tests=pass {} >/dev/null 2>&1",
        filters.join(" ")
    );
    let change_cmd = format!("git apply {} && {nextest}", patch.display());
    let back_cmd = format!("git apply -R {} && {nextest}", patch.display());
    sh(&at_base, &nextest);
    let mut args = vec![
        "check",
        "--format",
        "json",
        "--baseline",
        "skip",
        "--no-cache",
        "--sandbox",
        "none",
        "--runner",
        "nextest",
        "--patch",
        patch.to_str().unwrap(),
    ];
    for id in &ids {
        args.extend(["--p2p", id]);
    }
    // A build seed, saved by one check whose baseline ran in bwrap (only a sandboxed baseline
    // leaves one); the seeded side's fresh checkouts start from it.
    let seeds = tmp.path().join("seeds");
    let seeds_flag = ["--cache-dir", seeds.to_str().unwrap()];
    let mut seeding: Vec<&str> = args
        .iter()
        .copied()
        .filter(|a| !["--baseline", "skip", "--no-cache", "--sandbox", "none"].contains(a))
        .collect();
    seeding.extend(["--sandbox", "bwrap"]);
    seeding.extend(seeds_flag);
    patchgrade(&seeding, &repo);
    // In bwrap, as a check runs by default: the checkout is then at one path in every run,
    // which rustc's incremental cache of the crate itself needs (in `--sandbox none` each
    // fresh checkout's own path would make cargo rebuild the crate from scratch).
    let seeded_args: Vec<&str> = seeding
        .iter()
        .copied()
        .chain(["--baseline", "skip"])
        .collect();
    // A pool's slot starts every use from its trusted state: here the seed, planted in it by
    // its first use before the rounds (a run's own build output is never reused).
    let pool = tmp.path().join("pool");
    let pooled_args: Vec<&str> = seeded_args
        .iter()
        .copied()
        .chain(["--workdir-pool", pool.to_str().unwrap()])
        .collect();
    patchgrade(&pooled_args, &repo);
    let (mut bare, mut fresh, mut pooled) = (Vec::new(), Vec::new(), Vec::new());
    let (mut seeded, mut change) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        bare.push(time(|| sh(&prepared, &bare_cmd)));
        change.push(time(|| sh(&at_base, &change_cmd)));
        sh(&at_base, &back_cmd);
        fresh.push(time(|| {
            let v = patchgrade(&args, &repo);
            assert_eq!(v["outcome"], "no-breakage", "{v:#}");
        }));
        pooled.push(time(|| {
            let v = patchgrade(&pooled_args, &repo);
            assert_eq!(v["outcome"], "no-breakage", "{v:#}");
            assert_eq!(v["runs"]["candidate"]["seeded"], true, "{v:#}");
        }));
        seeded.push(time(|| {
            let v = patchgrade(&seeded_args, &repo);
            assert_eq!(v["outcome"], "no-breakage", "{v:#}");
            assert_eq!(v["runs"]["candidate"]["seeded"], true, "{v:#}");
        }));
    }
    let (bare, fresh, pooled) = (median(bare), median(fresh), median(pooled));
    let (seeded, change) = (median(seeded), median(change));
    println!("\n## 7. Compiled suite: httparse 1.9.5 with nextest, the real fix");
    println!("bare cargo nextest run, warm tree:    {}", secs(bare));
    println!("bare, the fix applied to a warm base: {}", secs(change));
    println!("check --baseline skip, fresh:         {}", secs(fresh));
    println!("check --baseline skip, pooled, seeded: {}", secs(pooled));
    println!("check --baseline skip, fresh, seeded: {}", secs(seeded));
    println!(
        "ratio: {:.2}x fresh checkout (a cold build), {:.2}x pooled, against the warm tree",
        fresh.as_secs_f64() / bare.as_secs_f64(),
        pooled.as_secs_f64() / bare.as_secs_f64()
    );
    println!(
        "ratio: {:.2}x pooled, {:.2}x fresh from a build seed, {:.2}x a cold build, against \
         the fix applied to a warm base (target <= 1.2x)",
        pooled.as_secs_f64() / change.as_secs_f64(),
        seeded.as_secs_f64() / change.as_secs_f64(),
        fresh.as_secs_f64() / change.as_secs_f64()
    );
}

/// httparse 1.9.5 (`fixtures/projects/httparse-1.9.5`) committed as a fresh repository in
/// `dir/repo`: the fixture's directory (its patches) and the repository.
fn httparse_repo(dir: &Path) -> (PathBuf, PathBuf) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/projects/httparse-1.9.5");
    let repo = dir.join("repo");
    sh(
        dir,
        &format!("cp -R {}/tree {}", fixture.display(), repo.display()),
    );
    git_commit_all(&repo);
    (fixture, repo)
}

/// A patch of `work`'s body, which every test of [`pytest_project`] runs.
fn work_patch(k: usize) -> String {
    format!(
        "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1,4 +1,4 @@\n FACTOR = 1\n \n def work(n):\n-    return sum(i * i for i in range(n)) * FACTOR\n+    return sum(i * i for i in range(n)) * FACTOR * {k}\n"
    )
}

/// Figure 8: what `--downstream auto` adds to a check of a task with ten P2P tests on a suite
/// of 400: the first check (coverage map of the whole suite at base, then the downstream
/// tests at base and after) and a later check of another patch (map and baseline cached),
/// against the same check without it, baseline cached.
fn downstream() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let ids = pytest_project(&repo);
    let p2p: Vec<&str> = ids.iter().take(10).map(String::as_str).collect();
    let patch = |k: usize| {
        let p = tmp.path().join(format!("w{k}.diff"));
        std::fs::write(&p, work_patch(k)).unwrap();
        p
    };
    let run = |k: usize, cache: &Path, extra: &[&str]| -> serde_json::Value {
        let patch = patch(k);
        let mut args = vec![
            "check",
            "--format",
            "json",
            "--runner",
            "pytest",
            "--cache-dir",
            cache.to_str().unwrap(),
            "--patch",
            patch.to_str().unwrap(),
        ];
        for id in &p2p {
            args.extend(["--p2p", id]);
        }
        args.extend(extra);
        patchgrade(&args, &repo)
    };
    let auto = ["--downstream", "auto"];
    let (mut plain, mut first, mut cached) = (Vec::new(), Vec::new(), Vec::new());
    let mut found = 0;
    for round in 0..3 {
        let warm = tmp.path().join(format!("plain{round}"));
        run(2, &warm, &[]);
        plain.push(time(|| {
            run(3, &warm, &[]);
        }));
        let cache = tmp.path().join(format!("ds{round}"));
        first.push(time(|| {
            let v = run(2, &cache, &auto);
            found = v["downstream"]["found"].as_u64().unwrap_or(0);
        }));
        cached.push(time(|| {
            let v = run(3, &cache, &auto);
            assert_eq!(v["downstream"]["map_cached"], true, "{v:#}");
        }));
    }
    let (plain, first, cached) = (median(plain), median(first), median(cached));
    println!("\n## 8. Downstream: --downstream auto on a suite of 400 tests, 10 P2P tests");
    println!("downstream tests found: {found} (run: at most 100, the default budget)");
    println!(
        "check, baseline cached, no downstream:        {}",
        secs(plain)
    );
    println!(
        "first check with --downstream auto:          {}",
        secs(first)
    );
    println!(
        "later check (map and baseline cached):       {}",
        secs(cached)
    );
    println!(
        "ratio: {:.2}x first, {:.2}x cached, against the check without it",
        first.as_secs_f64() / plain.as_secs_f64(),
        cached.as_secs_f64() / plain.as_secs_f64()
    );
    downstream_rust();
}

/// Figure 8, Rust: what `--downstream auto` (imports, for nextest) adds to a check of
/// httparse's task (2 F2P, 6 P2P tests) of a patch to `src/lib.rs`, whose own test module and
/// the `src/simd/` tests that name its items are found: the static search of the crate, and
/// the extra tests on the candidate's side. Both sides warm: a workdir pool each (the build
/// reused) and the baseline cached.
fn downstream_rust() {
    let tmp = tempfile::tempdir().unwrap();
    let (fixture, repo) = httparse_repo(tmp.path());
    let (patch, tests) = (fixture.join("uri-table.patch"), fixture.join("test.patch"));
    let p2p: Vec<String> = [
        "test_allow_request_with_multiple_space_delimiters",
        "test_forbid_request_with_multiple_space_delimiters",
        "test_request_with_multiple_spaces_and_bad_path",
        "test_method_within_buffer",
        "test_chunk_size",
        "test_no_space_after_colon",
    ]
    .iter()
    .map(|id| format!("httparse tests::{id}"))
    .collect();
    let run = |name: &str, extra: &[&str]| -> serde_json::Value {
        let (pool, cache) = (
            tmp.path().join(format!("{name}-pool")),
            tmp.path().join(name),
        );
        let mut args = vec![
            "check",
            "--format",
            "json",
            "--runner",
            "nextest",
            "--patch",
            patch.to_str().unwrap(),
            "--test-patch",
            tests.to_str().unwrap(),
            "--workdir-pool",
            pool.to_str().unwrap(),
            "--cache-dir",
            cache.to_str().unwrap(),
            "--f2p",
            "httparse tests::test_request_with_leading_space",
            "--f2p",
            "httparse tests::test_request_with_invalid_method",
        ];
        for id in &p2p {
            args.extend(["--p2p", id.as_str()]);
        }
        args.extend(extra);
        patchgrade(&args, &repo)
    };
    let auto = ["--downstream", "auto"];
    // Warm: each side's pool slot built, its baseline cached.
    run("plain", &[]);
    run("auto", &auto);
    let (mut plain, mut with) = (Vec::new(), Vec::new());
    let mut run_n = 0;
    for _ in 0..3 {
        plain.push(time(|| {
            let v = run("plain", &[]);
            assert_eq!(v["outcome"], "no-op", "{v:#}");
        }));
        with.push(time(|| {
            let v = run("auto", &auto);
            assert_eq!(v["downstream"]["broken"].as_array().map(Vec::len), Some(2));
            run_n = v["downstream"]["run"].as_u64().unwrap_or(0);
        }));
    }
    let (plain, with) = (median(plain), median(with));
    println!("\n## 8. Downstream, Rust: httparse with nextest, 2 F2P and 6 P2P tests");
    println!(
        "downstream tests run: {run_n} (found statically: the changed file's test module and src/simd/)"
    );
    println!(
        "check, pool and baseline warm, no downstream: {}",
        secs(plain)
    );
    println!(
        "the same with --downstream auto:              {}",
        secs(with)
    );
    println!(
        "ratio: {:.2}x, against the check without it",
        with.as_secs_f64() / plain.as_secs_f64()
    );
}
