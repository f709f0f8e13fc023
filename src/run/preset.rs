//! Presets: the known runners, each with its command, its id syntax, how ids become its
//! arguments, and how it says it refused an id.

use crate::observe::ids::{IdSyntax, JsFlavor};
use crate::util::list::dedup;
use crate::util::names::Named;
use crate::workspace::{BuildDir, BuildKind};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A known test runner: its command template, its id syntax and how ids become arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// pytest; ids are node ids relative to the repository root.
    Pytest,
    /// unittest suites run through pytest; dotted ids or node ids.
    Unittest,
    /// cargo-nextest with a JUnit profile given as a tool config.
    Nextest,
    /// `go test` through gotestsum.
    Go,
    /// jest with jest-junit, configured to write files and titles apart.
    Jest,
    /// vitest's junit reporter.
    Vitest,
    /// mocha with mocha-junit-reporter.
    Mocha,
    /// node's test runner with its junit reporter.
    Node,
    /// CTest after a CMake build in `build/`.
    Ctest,
    /// PHPUnit `--log-junit`.
    Phpunit,
    /// Maven Surefire; `{junit}` is the reports directory.
    Maven,
    /// Gradle; `{junit}` is a copy of `build/test-results/test`.
    Gradle,
    /// Django's own `tests/runtests.py`, with a test runner that writes JUnit.
    Django,
    /// sympy's own test runner (what `bin/test` runs), writing JUnit.
    Sympy,
}

/// Django's suite as SWE-bench runs it (`--verbosity 2 --settings=test_sqlite --parallel 1`),
/// through a settings module that is the task's (`PATCHGRADE_DJANGO_SETTINGS`, default
/// `test_sqlite`) with a test runner that also writes `{junit}` (`support/patchgrade_django.py`,
/// in the read-only scripts directory). The checkout comes first on the path, so an installed
/// Django (SWE-bench's images install theirs in editable mode) never stands in for it.
const DJANGO: &str = "PATCHGRADE_JUNIT={junit}; export PATCHGRADE_JUNIT; PYTHONPATH=\"$PATCHGRADE_SUPPORT:{workdir}${PYTHONPATH:+:$PYTHONPATH}\"; export PYTHONPATH; python ./tests/runtests.py --verbosity 2 --settings=patchgrade_django_settings --parallel 1 {tests}";

/// sympy's runner as SWE-bench runs it (`bin/test -C --verbose`, warnings it silences
/// silenced), through `support/patchgrade_sympy.py`, which records each test for `{junit}`.
const SYMPY: &str = "PATCHGRADE_JUNIT={junit} PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' python \"$PATCHGRADE_SUPPORT/patchgrade_sympy.py\" {tests}";

/// Files a preset's command runs, written into the scripts directory (read-only to the
/// commands, so code under test cannot rewrite them for a later attempt), which the command
/// finds as `$PATCHGRADE_SUPPORT`.
pub const SUPPORT_DIR_VAR: &str = "PATCHGRADE_SUPPORT";

const DJANGO_SUPPORT: &[(&str, &str)] = &[
    (
        "patchgrade_django.py",
        include_str!("support/patchgrade_django.py"),
    ),
    (
        "patchgrade_django_settings.py",
        include_str!("support/patchgrade_django_settings.py"),
    ),
];

const SYMPY_SUPPORT: &[(&str, &str)] = &[(
    "patchgrade_sympy.py",
    include_str!("support/patchgrade_sympy.py"),
)];

/// What SWE-bench takes for a test file among a test patch's files: any but data and docs
/// (`NON_TEST_EXTS` of its harness).
pub fn is_test_file(path: &str) -> bool {
    const NOT: [&str; 11] = [
        ".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml",
    ];
    !NOT.iter().any(|x| path.ends_with(x))
}

/// nextest writes JUnit only for a profile that asks for it; the tool config adds one without
/// touching the project's own `.config/nextest.toml`.
///
/// The build goes to the checkout's own `target`, whatever the user's environment or the
/// project's `.cargo/config.toml` say: cargo names a path crate's artefacts by its path inside
/// the workspace, so baseline and candidate sharing one target directory run each other's
/// test binaries and read each other's reports (seen: a real fix graded `no-op`).
const NEXTEST: &str = "CARGO_TARGET_DIR=\"$PWD/target\"; export CARGO_TARGET_DIR; unset CARGO_BUILD_TARGET_DIR; printf '[profile.patchgrade]\\nfail-fast = false\\n[profile.patchgrade.junit]\\npath = \"junit.xml\"\\n' > {junit}.toml && rm -f target/nextest/patchgrade/junit.xml; cargo nextest run --no-tests=pass --tool-config-file patchgrade:{junit}.toml --profile patchgrade {tests}; status=$?; cp target/nextest/patchgrade/junit.xml {junit}; exit $status";

/// Go's build cache goes with the checkout, inside its `.git` (so no test sees it in the tree):
/// the user's may be read only (it is in a sandbox, and go will not build without a writable
/// cache), and one cache written by every run would let a candidate's tests plant entries that
/// a later baseline's build takes as its own. A fresh checkout starts from a trusted
/// baseline's copy ([`Preset::build_dirs`]).
const GO: &str = "GOCACHE=\"$PWD/.git/patchgrade/go-build\"; export GOCACHE; gotestsum --junitfile {junit} -- -count=1 {tests} ./...";

/// cargo's build output, the crate's own artefacts judged fresh by file times.
/// The variables of the user's environment every command inherits: where programs are, who
/// and where the user is, language and time, the terminal, and which certificate authorities
/// to trust (a setup that installs needs them). Secrets (tokens, keys, proxies with passwords)
/// are none of these; a command gets another only by name (`--pass-env`).
pub const BASE_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "TMPDIR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "CURL_CA_BUNDLE",
    "REQUESTS_CA_BUNDLE",
    "PIP_CERT",
    "GIT_SSL_CAINFO",
];

/// A preset's download step ([`Preset::fetch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetch {
    /// The script, run at the checkout (`{workdir}` is filled in).
    pub script: &'static str,
    /// The host directories it downloads into: writable to it alone.
    pub caches: Vec<PathBuf>,
    /// What of them the tests read (read-only; among [`toolchain_dirs`]), made before the
    /// step so that a sandbox can show them: cargo's registry, not its credentials.
    pub read: Vec<PathBuf>,
}

/// cargo's home (`CARGO_HOME`, else `~/.cargo`): the registry it downloads into, and the
/// package cache lock and usage database beside it.
fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".cargo"))
}

/// Go's module cache (`GOMODCACHE`, else the first `GOPATH` entry's `pkg/mod`, else
/// `~/go/pkg/mod`).
fn go_mod_cache() -> PathBuf {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("GOMODCACHE") {
        return PathBuf::from(dir);
    }
    let gopath = var("GOPATH")
        .and_then(|p| std::env::split_paths(&p).next())
        .unwrap_or_else(|| home().join("go"));
    gopath.join("pkg/mod")
}

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

/// The directories the runners' toolchains keep under the user's home, which a sandbox that
/// covers the home shows read-only again: what the tools and their caches are, never where
/// credentials live. Cargo's registry and git checkouts but not its `credentials.toml` or
/// `config.toml`, rustup's toolchains, Go's module cache, pyenv's interpreters and the user
/// site-packages, nvm's and SDKMAN's installs, Maven's repository but not its
/// `settings.xml`, Gradle's caches and wrapper distributions but not its
/// `gradle.properties`. One list for every command, whatever its runner: none of it is
/// secret, and a custom command runs the same tools. (Tools on `PATH` and paths the user
/// names are shown by the sandbox itself.)
pub fn toolchain_dirs() -> Vec<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = home();
    let cargo = cargo_home();
    let gradle = var("GRADLE_USER_HOME").unwrap_or_else(|| home.join(".gradle"));
    let mut dirs = vec![
        cargo.join("bin"),
        cargo.join("registry"),
        cargo.join("git"),
        var("RUSTUP_HOME").unwrap_or_else(|| home.join(".rustup")),
        go_mod_cache(),
        var("PYENV_ROOT").unwrap_or_else(|| home.join(".pyenv")),
        home.join(".local/lib"),
        var("NVM_DIR").unwrap_or_else(|| home.join(".nvm")),
        var("SDKMAN_DIR").map_or_else(|| home.join(".sdkman/candidates"), |d| d.join("candidates")),
        home.join(".m2/repository"),
        gradle.join("caches"),
        gradle.join("wrapper/dists"),
    ];
    dirs.extend(["GOROOT", "JAVA_HOME"].into_iter().filter_map(var));
    dirs
}

/// Python's bytecode, sealed hash-checked: a fresh checkout imports the unchanged modules
/// (and pytest's rewritten test files) without compiling them again.
const PYTHON_BYTECODE: &[BuildDir] = &[BuildDir {
    path: "__pycache__",
    by_mtime: false,
    skip: &[],
    kind: BuildKind::PythonBytecode,
}];

const CARGO_TARGET: &[BuildDir] = &[BuildDir {
    path: "target",
    by_mtime: true,
    skip: &["nextest"],
    kind: BuildKind::Tree,
}];

/// Go's build cache, content-addressed.
const GO_CACHE: &[BuildDir] = &[BuildDir {
    path: ".git/patchgrade/go-build",
    by_mtime: false,
    skip: &[],
    kind: BuildKind::Tree,
}];

/// Gradle's build output and its project cache (which holds the checkout's own user home
/// in a sandbox, with its compiled build scripts): Gradle hashes its inputs.
const GRADLE_BUILD: &[BuildDir] = &[
    BuildDir {
        path: "build",
        by_mtime: false,
        skip: &["test-results"],
        kind: BuildKind::Tree,
    },
    BuildDir {
        path: ".gradle",
        by_mtime: false,
        skip: &[],
        kind: BuildKind::Tree,
    },
];

/// jest-junit's defaults join describe titles and test name with spaces and write no file:
/// this configuration keeps them apart, so ids match exactly. The files come first because
/// `--reporters` takes every argument after it as another reporter. The cache goes with the
/// run: keyed by path, it could never serve another checkout and would grow in `TMPDIR`.
const JEST: &str = "JEST_JUNIT_OUTPUT_FILE={junit} JEST_JUNIT_SUITE_NAME='{filepath}' JEST_JUNIT_CLASSNAME='{classname}' JEST_JUNIT_TITLE='{title}' JEST_JUNIT_ANCESTOR_SEPARATOR=' › ' JEST_JUNIT_ADD_FILE_ATTRIBUTE=true JEST_JUNIT_REPORT_TEST_SUITE_ERRORS=true npx jest {tests} --ci --cacheDirectory={junit}.cache --reporters=default --reporters=jest-junit";

/// Surefire writes one file per class into each module's `target/surefire-reports` and never
/// clears it, so stale reports are removed first and every module's are gathered under
/// `{junit}` after. The wrapper, when the project has one, pins the Maven the project expects.
const MAVEN: &str = "find . -path '*/target/surefire-reports' -prune -type d -exec rm -rf {} +; if [ -x ./mvnw ]; then mvn=./mvnw; else mvn=mvn; fi; \"$mvn\" -B test -Dmaven.test.failure.ignore=true -DfailIfNoTests=false -Dsurefire.failIfNoSpecifiedTests=false {tests}; status=$?; mkdir -p {junit}; find . -path '*/target/surefire-reports' -prune -type d | while read -r d; do mkdir -p {junit}/\"$d\" && cp \"$d\"/*.xml {junit}/\"$d\"/ 2>/dev/null; done; exit $status";

/// As Maven, with Gradle's `build/test-results/test`. Without `--no-daemon` the daemon would
/// outlive the run, outside its process group; stale results would also make the task look
/// up to date and run nothing. Gradle's user home, and its caches, must be writable: where the
/// user's are not (in a sandbox, which shows the caches read-only in an empty home), the
/// checkout gets its own.
const GRADLE: &str = "g=\"${GRADLE_USER_HOME:-$HOME/.gradle}\"; { [ -w \"$g\" ] && { [ ! -e \"$g/caches\" ] || [ -w \"$g/caches\" ]; }; } || export GRADLE_USER_HOME={workdir}/.gradle/user-home; find . -path '*/build/test-results/test' -prune -type d -exec rm -rf {} +; if [ -x ./gradlew ]; then gradle=./gradlew; else gradle=gradle; fi; \"$gradle\" test --no-daemon --continue {tests}; status=$?; mkdir -p {junit}; find . -path '*/build/test-results/test' -prune -type d | while read -r d; do mkdir -p {junit}/\"$d\" && cp \"$d\"/*.xml {junit}/\"$d\"/ 2>/dev/null; done; exit $status";

impl Named for Preset {
    const NAMES: &'static [(&'static str, Preset)] = &[
        ("pytest", Preset::Pytest),
        ("unittest", Preset::Unittest),
        ("nextest", Preset::Nextest),
        ("go", Preset::Go),
        ("jest", Preset::Jest),
        ("vitest", Preset::Vitest),
        ("mocha", Preset::Mocha),
        ("node", Preset::Node),
        ("ctest", Preset::Ctest),
        ("phpunit", Preset::Phpunit),
        ("maven", Preset::Maven),
        ("gradle", Preset::Gradle),
        ("django", Preset::Django),
        ("sympy", Preset::Sympy),
    ];
}

impl Preset {
    /// Every preset.
    pub fn all() -> impl Iterator<Item = Preset> {
        Self::NAMES.iter().map(|(_, p)| *p)
    }

    /// The preset's name on the command line.
    pub fn name(self) -> &'static str {
        Named::name(self)
    }

    /// The command template.
    pub fn template(self) -> &'static str {
        match self {
            // `--rootdir` pins node ids (and so JUnit classnames) to the repository root,
            // whatever config files the project has and wherever the requested tests live.
            Preset::Pytest | Preset::Unittest => {
                "python -m pytest -p no:cacheprovider --rootdir={workdir} --junitxml={junit} {tests}"
            }
            Preset::Nextest => NEXTEST,
            Preset::Go => GO,
            Preset::Jest => JEST,
            Preset::Vitest => {
                "npx vitest run --reporter=default --reporter=junit --outputFile.junit={junit} {tests}"
            }
            Preset::Mocha => {
                "npx mocha --reporter mocha-junit-reporter --reporter-options mochaFile={junit} {tests}"
            }
            Preset::Node => {
                "node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination={junit} {tests}"
            }
            Preset::Ctest => {
                "cmake -S . -B build && cmake --build build && ctest --test-dir build --output-junit {junit} {tests}"
            }
            Preset::Phpunit => "phpunit --log-junit {junit} {tests}",
            Preset::Maven => MAVEN,
            Preset::Gradle => GRADLE,
            Preset::Django => DJANGO,
            Preset::Sympy => SYMPY,
        }
    }

    /// The files the preset's command runs besides the project's (see [`SUPPORT_DIR_VAR`]).
    pub fn support_files(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Preset::Django => DJANGO_SUPPORT,
            Preset::Sympy => SYMPY_SUPPORT,
            _ => &[],
        }
    }

    /// Whether the preset finds its tests by the files the test patch touches, as SWE-bench
    /// runs them: its ids alone may not say where a test is (a Django docstring, a sympy
    /// function's bare name).
    pub fn runs_test_files(self) -> bool {
        matches!(self, Preset::Django | Preset::Sympy)
    }

    /// The build output the preset's command keeps in the checkout, which a fresh checkout
    /// may start from (see [`crate::workspace::seed`]), and the lock files whose content
    /// decides which dependencies it holds. Python's is its bytecode, sealed hash-checked so
    /// that only a source byte for byte the same uses it. Presets whose build output is
    /// elsewhere or not reused (JavaScript, CMake's `build/`) have none, and so has Maven: a
    /// seeded `target/` was measured no faster, its time being Maven's own start and plugins.
    pub fn build_dirs(self) -> (&'static [BuildDir], &'static [&'static str]) {
        match self {
            Preset::Nextest => (CARGO_TARGET, &["Cargo.lock"]),
            Preset::Pytest | Preset::Unittest | Preset::Django | Preset::Sympy => {
                (PYTHON_BYTECODE, &[])
            }
            Preset::Go => (GO_CACHE, &["go.sum"]),
            Preset::Gradle => (GRADLE_BUILD, &["build.gradle", "build.gradle.kts"]),
            _ => (&[], &[]),
        }
    }

    /// A command printing the versions of the toolchain the preset runs, for the baseline
    /// cache's key. The project's own pins (a lock file, `rust-toolchain.toml`, `./mvnw`) are in
    /// the base tree, which the key holds already; this sees the tools the machine provides.
    pub fn version_probe(self) -> &'static str {
        match self {
            Preset::Pytest | Preset::Unittest => {
                "python -c 'import sys, pytest; print(sys.executable, sys.version, pytest.__version__)'"
            }
            Preset::Nextest => "rustc -vV && cargo nextest --version",
            Preset::Go => "GOTOOLCHAIN=local go version && gotestsum --version",
            Preset::Jest | Preset::Vitest | Preset::Mocha | Preset::Node => "node --version",
            Preset::Ctest => "cmake --version && c++ --version",
            Preset::Phpunit => "php --version && phpunit --version",
            Preset::Maven => "mvn --version",
            Preset::Gradle => "gradle --version --no-daemon",
            Preset::Django | Preset::Sympy => {
                "python -c 'import sys; print(sys.executable, sys.version)'"
            }
        }
    }

    /// The step that downloads what the preset's runner would otherwise download on first
    /// use, in the tests, which have no network. It runs before the setup command, with the
    /// network, and runs none of the project's code: `cargo fetch` runs no build script (and
    /// runs outside the checkout, so its `.cargo/config.toml` is not read), `go mod
    /// download` compiles nothing. `None` where the dependencies come from the setup command
    /// (`npm ci`, `pip install`) or the machine (Python, CMake, PHPUnit); Maven and Gradle
    /// resolve on first use too, and have no such step yet (their offline-resolve goals need
    /// plugins of their own, from their repositories).
    pub fn fetch(self) -> Option<Fetch> {
        match self {
            Preset::Nextest => Some(Fetch {
                script: "cd / && cargo fetch --manifest-path {workdir}/Cargo.toml",
                caches: vec![cargo_home()],
                read: vec![cargo_home().join("registry"), cargo_home().join("git")],
            }),
            Preset::Go => Some(Fetch {
                script: "[ ! -f go.mod ] || go mod download",
                caches: vec![go_mod_cache()],
                read: vec![go_mod_cache()],
            }),
            Preset::Pytest
            | Preset::Unittest
            | Preset::Jest
            | Preset::Vitest
            | Preset::Mocha
            | Preset::Node
            | Preset::Ctest
            | Preset::Phpunit
            | Preset::Maven
            | Preset::Gradle
            | Preset::Django
            | Preset::Sympy => None,
        }
    }

    /// The variables of the user's environment the preset's tools need, beyond
    /// [`BASE_ENV`]: where they find their toolchain and caches. Nothing else is passed
    /// unless the user names it (`--pass-env`, `--env`).
    pub fn pass_env(self) -> &'static [&'static str] {
        match self {
            Preset::Pytest | Preset::Unittest | Preset::Django | Preset::Sympy => &[
                "VIRTUAL_ENV",
                "CONDA_PREFIX",
                "CONDA_DEFAULT_ENV",
                "PYENV_ROOT",
                "PYENV_VERSION",
            ],
            Preset::Nextest => &[
                "CARGO_HOME",
                "RUSTUP_HOME",
                "RUSTUP_TOOLCHAIN",
                "CARGO_HTTP_CAINFO",
            ],
            Preset::Go => &[
                "GOROOT",
                "GOPATH",
                "GOMODCACHE",
                "GOFLAGS",
                "GOTOOLCHAIN",
                "GOPROXY",
                "GONOSUMDB",
                "GOPRIVATE",
            ],
            Preset::Jest | Preset::Vitest | Preset::Mocha | Preset::Node => {
                &["NODE_PATH", "NODE_EXTRA_CA_CERTS"]
            }
            Preset::Maven | Preset::Gradle => &[
                "JAVA_HOME",
                "MAVEN_HOME",
                "M2_HOME",
                "GRADLE_USER_HOME",
                "GRADLE_HOME",
            ],
            Preset::Ctest | Preset::Phpunit => &[],
        }
    }

    /// How the preset's ids map to testcases.
    pub fn id_syntax(self) -> IdSyntax {
        match self {
            Preset::Pytest => IdSyntax::Pytest,
            Preset::Unittest => IdSyntax::Unittest,
            Preset::Nextest => IdSyntax::Nextest,
            Preset::Go => IdSyntax::Go,
            Preset::Jest => IdSyntax::Js(JsFlavor::Jest),
            Preset::Vitest => IdSyntax::Js(JsFlavor::Vitest),
            Preset::Mocha => IdSyntax::Js(JsFlavor::Mocha),
            Preset::Node => IdSyntax::Js(JsFlavor::Node),
            Preset::Ctest => IdSyntax::Ctest,
            Preset::Phpunit => IdSyntax::Phpunit,
            Preset::Maven | Preset::Gradle => IdSyntax::Java,
            Preset::Django => IdSyntax::Django,
            Preset::Sympy => IdSyntax::Sympy,
        }
    }

    /// Whether the runner's exit status says whether tests failed: non-zero when one did,
    /// zero when none did. Maven's preset keeps going past failures
    /// (`-Dmaven.test.failure.ignore`), so its status says nothing about them.
    pub fn exit_reflects_failures(self) -> bool {
        !matches!(self, Preset::Maven)
    }

    /// Whether `{junit}` names a directory of reports rather than a file.
    pub fn junit_is_dir(self) -> bool {
        matches!(self, Preset::Maven | Preset::Gradle)
    }

    /// Variables removed from the environment of the test command.
    ///
    /// The Python presets need bytecode in the checkout to tell whether the patched code ran.
    pub fn env_remove(self) -> &'static [&'static str] {
        match self {
            Preset::Pytest | Preset::Unittest | Preset::Django | Preset::Sympy => {
                &["PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"]
            }
            _ => &[],
        }
    }

    /// The `{tests}` arguments that select these ids (already in their run form), and the
    /// groups `files` run whole: test files (the test patch's, as SWE-bench runs them, and
    /// downstream ones; only those in the checkout), or for nextest prefixes of ids. Runners that select by pattern get an anchored, escaped pattern; where a
    /// runner cannot select exactly, it selects more, never less, and matching picks the
    /// requested tests out.
    pub fn select(self, ids: &[String], workdir: &Path, files: &[String]) -> String {
        if self == Preset::Nextest {
            return nextest_select(ids, files);
        }
        let files: Vec<&String> = files.iter().filter(|f| workdir.join(f).is_file()).collect();
        if ids.is_empty() && files.is_empty() {
            return String::new();
        }
        let quote = |s: &str| shell_words::quote(s).into_owned();
        match self {
            // A node inside a file that runs whole would run, and be reported, twice.
            Preset::Pytest if !files.is_empty() => {
                let outside = ids.iter().filter(|id| {
                    let file = id.split("::").next().unwrap_or_default();
                    !files.iter().any(|f| *f == file)
                });
                shell_words::join(
                    files
                        .iter()
                        .map(|f| f.as_str())
                        .chain(outside.map(String::as_str)),
                )
            }
            Preset::Pytest => shell_words::join(ids),
            Preset::Django => shell_words::join(django_labels(ids, &files)),
            Preset::Sympy if files.is_empty() => {
                let names: Vec<String> = dedup(ids.iter().cloned());
                names
                    .iter()
                    .map(|n| format!("-k {}", quote(n)))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
            Preset::Sympy => shell_words::join(files.iter().map(|f| f.as_str())),
            Preset::Unittest => {
                let nodes: Vec<String> = ids.iter().map(|id| unittest_node(id, workdir)).collect();
                shell_words::join(dedup(nodes))
            }
            Preset::Nextest => nextest_select(ids, &[]),
            Preset::Go => {
                // `-run` matches per level; selecting the top-level tests runs their subtests.
                let tops = dedup(ids.iter().map(|id| go_top(id).to_string()));
                let tops: Vec<String> = tops.iter().map(|t| regex_escape(t)).collect();
                format!("-run {}", quote(&format!("^({})$", tops.join("|"))))
            }
            Preset::Jest | Preset::Vitest | Preset::Mocha | Preset::Node => {
                // Titles cannot be selected exactly (jest -t and mocha --grep see joined
                // names), so select by file when every id names one, else run everything.
                let files: Option<Vec<String>> = ids.iter().map(|id| js_file(id)).collect();
                files
                    .map(|f| shell_words::join(dedup(f)))
                    .unwrap_or_default()
            }
            Preset::Ctest => {
                let names: Vec<String> = dedup(ids.iter().cloned())
                    .iter()
                    .map(|n| regex_escape(n))
                    .collect();
                format!("-R {}", quote(&format!("^({})$", names.join("|"))))
            }
            Preset::Phpunit => {
                let names: Vec<String> = dedup(ids.iter().cloned())
                    .iter()
                    .map(|n| regex_escape(n))
                    .collect();
                format!("--filter {}", quote(&names.join("|")))
            }
            Preset::Maven => format!("-Dtest={}", quote(&dedup(ids.iter().cloned()).join(","))),
            Preset::Gradle => dedup(ids.iter().cloned())
                .iter()
                .map(|id| format!("--tests {}", quote(&id.replace('#', "."))))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// nextest's filtersets (one `-E` each; nextest runs their union) for these ids
/// (`binary test`, or a bare test name) and these groups run whole: id prefixes, a test
/// binary and the start of its tests' names (`httparse tests::`; `mylib::api ` is the whole
/// binary).
fn nextest_select(ids: &[String], groups: &[String]) -> String {
    let quote = |s: &str| shell_words::quote(s).into_owned();
    let tests = ids.iter().map(|id| match id.split_once(' ') {
        Some((bin, test)) => format!("binary_id(={bin}) & test(={test})"),
        None => format!("test(={id})"),
    });
    let groups = groups.iter().filter_map(|g| {
        let (bin, prefix) = g.split_once(' ')?;
        Some(if prefix.is_empty() {
            format!("binary_id(={bin})")
        } else {
            format!("binary_id(={bin}) & test(/^{}/)", regex_escape(prefix))
        })
    });
    tests
        .chain(groups)
        .map(|filter| format!("-E {}", quote(&filter)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `pkg.mod.TestX.test_a` → `pkg/mod.py::TestX::test_a`, using the checkout to find where the
/// module path ends; node ids and ids that match no file pass unchanged.
fn unittest_node(id: &str, workdir: &Path) -> String {
    if id.contains("::") || id.ends_with(".py") || id.contains(' ') {
        return id.to_string();
    }
    let parts: Vec<&str> = id.split('.').collect();
    for end in (1..parts.len()).rev() {
        let file = format!("{}.py", parts[..end].join("/"));
        if workdir.join(&file).is_file() {
            let mut node = file;
            for p in &parts[end..] {
                node.push_str("::");
                node.push_str(p);
            }
            return node;
        }
    }
    id.to_string()
}

/// Django's test labels: each test file as SWE-bench names it (`tests/` and `.py` off,
/// dotted), and the module of each id that names its class; a docstring id names neither, and
/// is found in the test files. No label at all runs the whole suite.
fn django_labels(ids: &[String], files: &[&String]) -> Vec<String> {
    let from_files = files.iter().map(|f| {
        let f = f.strip_suffix(".py").unwrap_or(f);
        f.strip_prefix("tests/").unwrap_or(f).replace('/', ".")
    });
    let from_ids = ids.iter().filter_map(|id| {
        let dotted = id.strip_suffix(')')?.rsplit_once(" (")?.1;
        let name = id.split(' ').next()?;
        let class = dotted
            .strip_suffix(name)
            .and_then(|c| c.strip_suffix('.'))
            .unwrap_or(dotted);
        Some(class.rsplit_once('.')?.0.to_string())
    });
    dedup(from_files.chain(from_ids))
}

/// The top-level test of a Go id (`pkg.TestX/sub` → `TestX`).
fn go_top(id: &str) -> &str {
    let start = ["Test", "Example", "Fuzz", "Benchmark"]
        .iter()
        .filter_map(|p| {
            if id.starts_with(p) {
                Some(0)
            } else {
                id.find(&format!(".{p}")).map(|i| i + 1)
            }
        })
        .min()
        .unwrap_or(0);
    let rest = &id[start..];
    &rest[..rest.find('/').unwrap_or(rest.len())]
}

/// The file of a JavaScript id (`tests/a.test.js › Outer › t`), if it names one.
fn js_file(id: &str) -> Option<String> {
    let first = id.split(" › ").next()?.split(" > ").next()?;
    [".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"]
        .iter()
        .any(|x| first.ends_with(x))
        .then(|| first.to_string())
}

/// Escape regex metacharacters (the subset shared by Go's RE2, CMake's and PCRE).
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$/#".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The ids a runner refused, from its output, with its words. pytest aborts the whole run for
/// one unknown id (`ERROR: not found: /abs/tests/t.py::x`, or `ERROR: file or directory not
/// found: tests/u.py::y` when the file is missing); other runners select by pattern and refuse
/// nothing.
pub fn rejected_ids(syntax: IdSyntax, output: &str, ids: &[String]) -> Vec<(String, String)> {
    if !matches!(syntax, IdSyntax::Pytest | IdSyntax::Unittest) {
        return Vec::new();
    }
    let mut rejected: Vec<(String, String)> = Vec::new();
    for line in output.lines() {
        let Some((why, target)) = ["not found: ", "file or directory not found: "]
            .iter()
            .find_map(|p| {
                line.strip_prefix("ERROR: ")?
                    .strip_prefix(p)
                    .map(|t| (*p, t))
            })
        else {
            continue;
        };
        let target = target.trim();
        for id in ids {
            let form = syntax.run_form(id);
            let hit = target == form || target.ends_with(&format!("/{form}"));
            if hit && !rejected.iter().any(|(r, _)| r == id) {
                rejected.push((id.clone(), why.trim_end_matches(": ").to_string()));
            }
        }
    }
    rejected
}

/// A runner name that is not a preset.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown runner `{0}` (known: {known})", known = Preset::known())]
pub struct UnknownPreset(pub String);

impl FromStr for Preset {
    type Err = UnknownPreset;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Preset::from_name(s).ok_or_else(|| UnknownPreset(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preset_names_round_trip() {
        for p in Preset::all() {
            assert_eq!(p.name().parse::<Preset>().unwrap(), p);
            assert!(crate::run::command::Template::new(p.template()).is_ok());
        }
        assert!("nosetests".parse::<Preset>().is_err());
    }

    #[test]
    fn java_ids_select_whole_methods() {
        // Neither Surefire nor Gradle selects one parameter set: the method runs whole.
        let ids = [
            "calc.CalcTest.adds",
            "calc.ParamTest#adds[0: 1+1]",
            "calc.ParamTest#adds[1: 2+2]",
            "calc.Outer$Inner#nested",
        ];
        let forms: Vec<String> = ids.iter().map(|i| IdSyntax::Java.run_form(i)).collect();
        assert_eq!(
            forms,
            [
                "calc.CalcTest#adds",
                "calc.ParamTest#adds",
                "calc.ParamTest#adds",
                "calc.Outer$Inner#nested"
            ]
        );
        let dir = Path::new("/");
        assert_eq!(
            Preset::Maven.select(&forms, dir, &[]),
            "-Dtest='calc.CalcTest#adds,calc.ParamTest#adds,calc.Outer$Inner#nested'"
        );
        assert_eq!(
            Preset::Gradle.select(&forms[..3], dir, &[]),
            "--tests calc.CalcTest.adds --tests calc.ParamTest.adds"
        );
    }
}
