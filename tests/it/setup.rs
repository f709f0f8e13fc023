//! Helpers for end-to-end tests: real git repositories in temp dirs, the real binary, real
//! pytest, and a byte-for-byte snapshot of the user's repository.

#![allow(dead_code)]

use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Once;

pub const BIN: &str = env!("CARGO_BIN_EXE_patchgrade");

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn example(path: &str) -> PathBuf {
    root().join("examples/calc").join(path)
}

/// The tests need `python -m pytest`; fail loudly instead of skipping when it is absent.
pub fn require_pytest() {
    static CHECK: Once = Once::new();
    CHECK.call_once(|| {
        let ok = Command::new("python")
            .args(["-m", "pytest", "--version"])
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            ok,
            "`python -m pytest` does not work: run the tests through scripts/test, which puts a \
             virtualenv with pytest on PATH"
        );
    });
}

/// A user's repository in a temp dir, plus a private TMPDIR for the patchgrade it runs.
pub struct Fixture {
    _dir: tempfile::TempDir,
    pub repo: PathBuf,
    pub tmp: PathBuf,
    pub scratch: PathBuf,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout as JSON; a verdict, a report or a comparison is checked against the schema the
    /// repository ships for it (`schemas/`), so that every JSON the tests produce is.
    pub fn json(&self) -> Value {
        let v: Value = serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        });
        conforms(&v);
        v
    }

    pub fn outcome(&self) -> String {
        self.json()["outcome"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=test",
            "-c",
            "user.email=test@example.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Fixture {
    /// An empty fixture with no repository yet.
    pub fn empty() -> Fixture {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = dir.path().join("repo");
        let tmp = dir.path().join("tmp");
        let scratch = dir.path().join("scratch");
        for d in [&repo, &tmp, &scratch] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        Fixture {
            _dir: dir,
            repo,
            tmp,
            scratch,
        }
    }

    /// A repository with these files in one commit.
    pub fn with_files(files: &[(&str, &str)]) -> Fixture {
        let f = Fixture::empty();
        git(&f.repo, &["init", "--quiet"]);
        f.commit(files, "base");
        f
    }

    /// The bundled example project as a repository.
    pub fn calc() -> Fixture {
        require_pytest();
        let f = Fixture::empty();
        copy_dir(&example("project"), &f.repo);
        git(&f.repo, &["init", "--quiet"]);
        git(&f.repo, &["add", "--all"]);
        git(&f.repo, &["commit", "--quiet", "-m", "base"]);
        f
    }

    pub fn commit(&self, files: &[(&str, &str)], message: &str) {
        for (path, content) in files {
            self.write(path, content);
        }
        git(&self.repo, &["add", "--all"]);
        git(&self.repo, &["commit", "--quiet", "-m", message]);
    }

    pub fn write(&self, path: &str, content: &str) {
        let p = self.repo.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, content).expect("write");
    }

    /// The user's cache directory of the patchgrade this fixture runs: `check` caches
    /// baselines there by default.
    pub fn cache_home(&self) -> PathBuf {
        self.scratch.join("xdg-cache")
    }

    /// A file outside the repository (patches, task files).
    pub fn scratch_file(&self, name: &str, content: &str) -> PathBuf {
        let p = self.scratch.join(name);
        std::fs::write(&p, content).expect("write");
        p
    }

    pub fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut c = Command::new(BIN);
        c.args(args)
            .env("TMPDIR", &self.tmp)
            .env("XDG_CACHE_HOME", self.cache_home())
            .current_dir(&self.repo);
        c
    }

    pub fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Run {
        self.run_with_stdin(args, None)
    }

    /// Run patchgrade to its end. Every run is checked: the user's repository is byte for
    /// byte as before it, and nothing is left in TMPDIR.
    pub fn run_with_stdin<S: AsRef<OsStr>>(&self, args: &[S], stdin: Option<&[u8]>) -> Run {
        self.run_command(self.command(args), stdin)
    }

    /// [`Fixture::run`] with these variables added to patchgrade's environment.
    pub fn run_with_env<S: AsRef<OsStr>>(&self, args: &[S], env: &[(&str, &OsStr)]) -> Run {
        let mut c = self.command(args);
        c.envs(env.iter().copied());
        self.run_command(c, None)
    }

    fn run_command(&self, c: Command, stdin: Option<&[u8]>) -> Run {
        let before = self.repo.exists().then(|| self.snapshot());
        let run = self.run_unchecked(c, stdin);
        if let Some(before) = before {
            self.assert_untouched(&before);
        }
        run
    }

    fn run_unchecked(&self, mut c: Command, stdin: Option<&[u8]>) -> Run {
        c.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = c.spawn().expect("patchgrade starts");
        if let Some(bytes) = stdin {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(bytes)
                .expect("write stdin");
        }
        let out: Output = child.wait_with_output().expect("patchgrade finishes");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Every file under the repository, `.git` included, with its bytes and mode.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, (Vec<u8>, u32)> {
        let mut out = BTreeMap::new();
        walk(&self.repo, &self.repo, &mut out);
        out
    }

    /// The repository is byte for byte as before and nothing is left in TMPDIR. [`Fixture::run`]
    /// checks this after every run; tests that spawn patchgrade themselves call it.
    pub fn assert_untouched(&self, before: &BTreeMap<PathBuf, (Vec<u8>, u32)>) {
        let after = self.snapshot();
        let changed: Vec<_> = before
            .keys()
            .chain(after.keys())
            .filter(|k| before.get(*k) != after.get(*k))
            .collect();
        assert!(
            changed.is_empty(),
            "the user's repository changed: {changed:?}"
        );
        let left: Vec<_> = std::fs::read_dir(&self.tmp)
            .expect("tmp")
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(left.is_empty(), "left behind in TMPDIR: {left:?}");
    }
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, (Vec<u8>, u32)>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("read_dir")
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let path = e.path();
        let meta = std::fs::symlink_metadata(&path).expect("metadata");
        let rel = path.strip_prefix(root).expect("under root").to_path_buf();
        let mode = meta.permissions().mode();
        if meta.is_dir() {
            out.insert(rel, (Vec::new(), mode));
            walk(root, &path, out);
        } else if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).expect("readlink");
            out.insert(rel, (target.to_string_lossy().as_bytes().to_vec(), mode));
        } else {
            out.insert(rel, (std::fs::read(&path).expect("read"), mode));
        }
    }
}

pub fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let name = e.file_name();
        if name == "__pycache__" || name == ".pytest_cache" {
            continue;
        }
        let target = to.join(&name);
        if e.path().is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

/// Processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        if let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(marker) {
                found.push(format!("{}: {cmdline}", e.file_name().to_string_lossy()));
            }
        }
    }
    found
}

/// Wait (at most a minute) until `n` processes whose command line holds `marker` and `also`
/// are running.
pub fn wait_for_processes(marker: &str, also: &str, n: usize) {
    let started = std::time::Instant::now();
    while processes_with(marker)
        .iter()
        .filter(|p| p.contains(also))
        .count()
        < n
    {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "{n} processes `{marker}` never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A repository whose test command hangs, with a grandchild that would outlive a careless
/// kill. Returns the fixture, a patch file, the marker on the hanging processes' command lines,
/// and the `--test-cmd` template.
pub fn hanging(tag: &str) -> (Fixture, PathBuf, String, String) {
    require_pytest();
    let marker = format!("patchgrade-{tag}-{}", std::process::id());
    let f = Fixture::with_files(&[(
        "hang.py",
        "import subprocess, sys, time\n\
         subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', sys.argv[1]])\n\
         time.sleep(600)\n",
    )]);
    let patch = f.scratch_file(
        "p.diff",
        "diff --git a/x.txt b/x.txt\nnew file mode 100644\n--- /dev/null\n+++ b/x.txt\n@@ -0,0 +1 @@\n+x\n",
    );
    let cmd = format!("python hang.py {marker} {{junit}} {{tests}}");
    (f, patch, marker, cmd)
}

impl Fixture {
    /// A patch (as `git diff` writes it) that makes these changes to the committed tree; the
    /// repository is left as it was.
    pub fn diff_of(&self, name: &str, files: &[(&str, &str)]) -> PathBuf {
        for (path, content) in files {
            self.write(path, content);
        }
        git(&self.repo, &["add", "--all"]);
        let out = Command::new("git")
            .args(["diff", "--cached"])
            .current_dir(&self.repo)
            .output()
            .expect("git diff");
        git(&self.repo, &["reset", "--quiet", "--hard"]);
        let path = self.scratch.join(name);
        std::fs::write(&path, out.stdout).expect("write patch");
        path
    }
}

/// Whether an optional runner is installed. pytest and cargo-nextest are required (scripts/test
/// installs them); others (node) are optional on a developer's machine, but CI sets
/// `PATCHGRADE_ALL_RUNNERS=1`, and then a missing one fails the test instead of skipping it.
pub fn have_runner(program: &str) -> bool {
    let found = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        skip(&format!("`{program}` is not installed"));
    }
    found
}

/// Whether Debian's offline Maven repository holds what the Java projects here pin (Maven
/// and Gradle without it would go to the network, which the tests do not have).
pub fn have_offline_java_repo(runner: &str) -> bool {
    let repo = Path::new("/usr/share/maven-repo");
    let needed = [
        "junit/junit/4.13.2",
        "org/apache/maven/plugins/maven-surefire-plugin/2.22.3",
        "org/apache/maven/plugins/maven-compiler-plugin",
        "org/apache/maven/plugins/maven-resources-plugin",
    ];
    let missing: Vec<&str> = needed
        .iter()
        .copied()
        .filter(|p| !repo.join(p).is_dir())
        .collect();
    if !missing.is_empty() {
        skip(&format!(
            "{runner} is installed, but Debian's offline Maven repository lacks {} \
             (scripts/runners installs it)",
            missing.join(", ")
        ));
    }
    missing.is_empty()
}

/// SWE-bench's harness (the `swebench` package from PyPI) in the python `scripts/test`
/// names in `PATCHGRADE_CLIENTS_PYTHON` (`scripts/clients-env`), or a skip.
pub fn swebench_python() -> Option<PathBuf> {
    clients_python("swebench.harness.grading", "SWE-bench's harness")
}

/// The official MCP Python SDK (the `mcp` package from PyPI), likewise.
pub fn mcp_python() -> Option<PathBuf> {
    clients_python("mcp.client.stdio", "the MCP Python SDK")
}

/// What a helper program (a Python client, a Node checker) printed as JSON, after it exited
/// with success; its stderr, or its stdout when that is not JSON, in the failure.
pub fn helper_json(command: &mut Command) -> Value {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?} does not start: {e}"));
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{command:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// A python of `scripts/clients-env` that imports `module`, or a skip naming `what`.
pub fn clients_python(module: &str, what: &str) -> Option<PathBuf> {
    let python = std::env::var_os("PATCHGRADE_CLIENTS_PYTHON").map(PathBuf::from);
    let works = python.as_ref().is_some_and(|p| {
        Command::new(p)
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !works {
        skip(&format!("{what} is not installed (scripts/clients-env)"));
        return None;
    }
    python
}

/// Whether bubblewrap is here, for the tests of what only a sandboxed run does.
pub fn require_bwrap() -> bool {
    have_runner("bwrap")
}

/// Skip the running test because something it needs is absent: a failure when CI says every
/// runner must be there (`PATCHGRADE_ALL_RUNNERS`); otherwise said on stderr and recorded in
/// `PATCHGRADE_SKIP_LOG`, which `scripts/test` lists at the end, so a skip never passes for a
/// pass unseen.
pub fn skip(why: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    assert!(
        std::env::var_os("PATCHGRADE_ALL_RUNNERS").is_none(),
        "{test}: {why}, and PATCHGRADE_ALL_RUNNERS is set"
    );
    eprintln!("SKIPPED: {why}");
    if let Some(log) = std::env::var_os("PATCHGRADE_SKIP_LOG") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(log)
        {
            let _ = writeln!(f, "{test}: {why}");
        }
    }
}

/// The graded test with exactly this id in a verdict's JSON.
pub fn graded<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["tests"]
        .as_array()
        .expect("tests")
        .iter()
        .find(|t| t["id"] == id)
        .unwrap_or_else(|| panic!("no test {id} in {v:#}"))
}

/// The warning of this kind in a verdict's JSON.
pub fn warning<'a>(v: &'a Value, kind: &str) -> Option<&'a Value> {
    v["warnings"].as_array()?.iter().find(|w| w["kind"] == kind)
}

/// The bundled example's fail-to-pass tests (added by its hidden test patch).
pub const CALC_F2P: [&str; 2] = [
    "tests/test_errors.py::test_divide_by_zero_raises",
    "tests/test_errors.py::test_mean_of_nothing_raises",
];
/// The bundled example's pass-to-pass tests.
pub const CALC_P2P: [&str; 6] = [
    "tests/test_calc.py::test_add",
    "tests/test_calc.py::test_sub",
    "tests/test_calc.py::test_mul",
    "tests/test_calc.py::test_divide",
    "tests/test_calc.py::test_mean",
    "tests/test_calc.py::test_platform_quirk",
];

/// The example's patches, each named after the outcome it is built to reach.
pub const CALC_PATCHES: [&str; 8] = [
    "resolved",
    "breaking-resolved",
    "partially-resolved",
    "work-in-progress",
    "no-op",
    "regression",
    "empty",
    "patch-failed",
];

/// A `patchgrade check` command line, built flag by flag instead of by hand.
#[derive(Debug, Clone)]
pub struct CheckArgs(Vec<OsString>);

impl Default for CheckArgs {
    fn default() -> Self {
        CheckArgs::new()
    }
}

impl std::ops::Deref for CheckArgs {
    type Target = [OsString];
    fn deref(&self) -> &[OsString] {
        &self.0
    }
}

impl CheckArgs {
    /// `patchgrade check`.
    pub fn new() -> CheckArgs {
        CheckArgs(vec!["check".into()])
    }

    /// `check --format json` of one of the example's patches with its hidden tests and every
    /// id.
    pub fn calc(patch: &str) -> CheckArgs {
        CheckArgs::calc_as(patch, "json")
    }

    /// [`CheckArgs::calc`] in another `--format`.
    pub fn calc_as(patch: &str, format: &str) -> CheckArgs {
        CheckArgs::new()
            .runner("pytest")
            .format(format)
            .test_patch(example("patches/hidden-tests.diff"))
            .patch(example(&format!("patches/{patch}.diff")))
            .f2p_all(CALC_F2P)
            .p2p_all(CALC_P2P)
    }

    /// `check --format json` of `patch` with a custom test command graded as the single test
    /// `t.a` (`--ids classname.name`).
    pub fn single_test(patch: impl AsRef<OsStr>, test_cmd: &str) -> CheckArgs {
        CheckArgs::new()
            .json()
            .patch(patch)
            .ids("classname.name")
            .p2p("t.a")
            .test_cmd(test_cmd)
    }

    /// A flag and its value.
    pub fn flag(mut self, name: &str, value: impl AsRef<OsStr>) -> CheckArgs {
        self.0.push(name.into());
        self.0.push(value.as_ref().to_owned());
        self
    }

    /// A flag without a value, or any other argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> CheckArgs {
        self.0.push(arg.as_ref().to_owned());
        self
    }

    /// More arguments as they are.
    pub fn args<S: AsRef<OsStr>>(mut self, args: &[S]) -> CheckArgs {
        self.0.extend(args.iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Add an argument in place (for lists built in a loop).
    pub fn push(&mut self, arg: impl AsRef<OsStr>) {
        self.0.push(arg.as_ref().to_owned());
    }

    /// Add arguments in place.
    pub fn extend_from_slice<S: AsRef<OsStr>>(&mut self, args: &[S]) {
        self.0.extend(args.iter().map(|a| a.as_ref().to_owned()));
    }

    /// `--task FILE`.
    pub fn task(self, path: impl AsRef<OsStr>) -> CheckArgs {
        self.flag("--task", path)
    }

    /// `--repo DIR`.
    pub fn repo(self, path: impl AsRef<OsStr>) -> CheckArgs {
        self.flag("--repo", path)
    }

    /// `--patch FILE` (`-` for stdin).
    pub fn patch(self, path: impl AsRef<OsStr>) -> CheckArgs {
        self.flag("--patch", path)
    }

    /// `--test-patch FILE`.
    pub fn test_patch(self, path: impl AsRef<OsStr>) -> CheckArgs {
        self.flag("--test-patch", path)
    }

    /// `--runner NAME`.
    pub fn runner(self, name: &str) -> CheckArgs {
        self.flag("--runner", name)
    }

    /// `--test-cmd TEMPLATE`.
    pub fn test_cmd(self, template: impl AsRef<OsStr>) -> CheckArgs {
        self.flag("--test-cmd", template)
    }

    /// `--ids SYNTAX`.
    pub fn ids(self, syntax: &str) -> CheckArgs {
        self.flag("--ids", syntax)
    }

    /// `--f2p ID`.
    pub fn f2p(self, id: impl AsRef<OsStr>) -> CheckArgs {
        self.flag("--f2p", id)
    }

    /// `--p2p ID`.
    pub fn p2p(self, id: impl AsRef<OsStr>) -> CheckArgs {
        self.flag("--p2p", id)
    }

    /// `--f2p ID` for each id.
    pub fn f2p_all<S: AsRef<OsStr>>(self, ids: impl IntoIterator<Item = S>) -> CheckArgs {
        ids.into_iter().fold(self, |a, id| a.f2p(id))
    }

    /// `--p2p ID` for each id.
    pub fn p2p_all<S: AsRef<OsStr>>(self, ids: impl IntoIterator<Item = S>) -> CheckArgs {
        ids.into_iter().fold(self, |a, id| a.p2p(id))
    }

    /// `--format FORMAT`.
    pub fn format(self, format: &str) -> CheckArgs {
        self.flag("--format", format)
    }

    /// `--format json`.
    pub fn json(self) -> CheckArgs {
        self.format("json")
    }
}

/// Check a document patchgrade wrote against its shipped schema, known by its shape.
pub fn conforms(v: &Value) {
    static SCHEMAS: std::sync::OnceLock<Vec<(&str, jsonschema::Validator)>> =
        std::sync::OnceLock::new();
    let schemas = SCHEMAS.get_or_init(|| {
        ["verdict", "report", "compare"]
            .into_iter()
            .map(|name| {
                let path = root().join("schemas").join(format!("{name}.schema.json"));
                let schema: Value =
                    serde_json::from_slice(&std::fs::read(&path).expect("schema")).expect("JSON");
                (
                    name,
                    jsonschema::validator_for(&schema).expect("a valid schema"),
                )
            })
            .collect()
    });
    let kind = if v.get("matrix").is_some() {
        "compare"
    } else if v.get("grid").is_some() {
        "report"
    } else if v.get("outcome").is_some() && v.get("schema_version").is_some() {
        "verdict"
    } else {
        return;
    };
    let (_, validator) = schemas.iter().find(|(n, _)| *n == kind).expect("known");
    let errors: Vec<String> = validator
        .iter_errors(v)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "the {kind} does not conform to schemas/{kind}.schema.json:\n{}\n{v:#}",
        errors.join("\n")
    );
}
