//! Presets: the known test runners, one file each, each answering every question patchgrade
//! asks of a runner in one [`Spec`](spec::Spec) (its command, its id syntax, how ids become
//! its arguments, its report, its protected files, its build output, its environment, its
//! download step, how its downstream tests are found).
//!
//! A runner is added by writing its file and one line in [`presets!`]'s list below.

mod common;
mod spec;

pub use spec::{Fetch, FetchStep, Reach};

use crate::observe::IdSyntax;
use crate::util::names::Named;
use crate::workspace::BuildDir;
use serde::{Deserialize, Serialize};
use spec::Spec;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The registry: each preset's variant (with its doc) and the file that holds its [`Spec`].
macro_rules! presets {
    ($($(#[doc = $doc:literal])* $variant:ident => $module:ident,)*) => {
        $(mod $module;)*

        /// A known test runner: its command template, its id syntax and how ids become
        /// arguments (see each one's file under `src/run/preset/`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum Preset {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Preset {
            /// What the runner is and does.
            fn spec(self) -> &'static Spec {
                match self {
                    $(Preset::$variant => &$module::SPEC,)*
                }
            }
        }

        impl Named for Preset {
            const NAMES: &'static [(&'static str, Preset)] =
                &[$(($module::SPEC.name, Preset::$variant),)*];
        }
    };
}

presets! {
    /// pytest; ids are node ids relative to the repository root.
    Pytest => pytest,
    /// unittest suites run through pytest; dotted ids or node ids.
    Unittest => unittest,
    /// cargo-nextest with a JUnit profile given as a tool config.
    Nextest => nextest,
    /// `go test` through gotestsum.
    Go => go,
    /// jest with jest-junit, configured to write files and titles apart.
    Jest => jest,
    /// vitest's junit reporter.
    Vitest => vitest,
    /// mocha with mocha-junit-reporter.
    Mocha => mocha,
    /// node's test runner with its junit reporter.
    Node => node,
    /// CTest after a CMake build in `build/`.
    Ctest => ctest,
    /// PHPUnit `--log-junit`.
    Phpunit => phpunit,
    /// Maven Surefire; `{junit}` is the reports directory.
    Maven => maven,
    /// Gradle; `{junit}` is a copy of `build/test-results/test`.
    Gradle => gradle,
    /// Django's own `tests/runtests.py`, with a test runner that writes JUnit.
    Django => django,
    /// sympy's own test runner (what `bin/test` runs), writing JUnit.
    Sympy => sympy,
    /// bats-core's shell tests, through its JUnit formatter.
    Bats => bats,
}

/// Files a preset's command runs, written into the scripts directory (read-only to the
/// commands, so code under test cannot rewrite them for a later attempt), which the command
/// finds as `$PATCHGRADE_SUPPORT`.
pub const SUPPORT_DIR_VAR: &str = "PATCHGRADE_SUPPORT";

impl Preset {
    /// Every preset.
    pub fn all() -> impl Iterator<Item = Preset> {
        Self::NAMES.iter().map(|(_, p)| *p)
    }

    /// The preset's name on the command line.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Every preset's name, comma-separated, for help texts.
    pub fn names() -> String {
        Self::known()
    }

    /// The command template.
    pub fn template(self) -> &'static str {
        self.spec().template
    }

    /// How the preset's ids map to testcases.
    pub fn id_syntax(self) -> IdSyntax {
        self.spec().id_syntax
    }

    /// The files the preset's command runs besides the project's (see `SUPPORT_DIR_VAR`).
    pub fn support_files(self) -> &'static [(&'static str, &'static str)] {
        self.spec().support_files
    }

    /// Whether the preset finds its tests by the files the test patch touches, as SWE-bench
    /// runs them.
    pub fn runs_test_files(self) -> bool {
        self.spec().runs_test_files
    }

    /// The build output the preset's command keeps in the checkout, which a fresh checkout
    /// may start from (see `crate::workspace::seed`), and the lock files whose content
    /// decides which dependencies it holds.
    pub fn build_dirs(self) -> (&'static [BuildDir], &'static [&'static str]) {
        (self.spec().build_dirs, self.spec().lock_files)
    }

    /// A command printing the versions of the toolchain the preset runs, for the baseline
    /// cache's key.
    pub fn version_probe(self) -> &'static str {
        self.spec().version_probe
    }

    /// The step that downloads what the preset's runner would otherwise download on first
    /// use, in the tests, which have no network (see `Fetch`).
    pub fn fetch(self) -> Option<Fetch> {
        (self.spec().fetch)()
    }

    /// The variables of the user's environment the preset's tools need, beyond
    /// `BASE_ENV`. Nothing else is passed unless the user names it (`--pass-env`, `--env`).
    pub fn pass_env(self) -> &'static [&'static str] {
        self.spec().pass_env
    }

    /// Whether the runner's exit status says whether tests failed.
    pub fn exit_reflects_failures(self) -> bool {
        self.spec().exit_reflects_failures
    }

    /// Whether `{junit}` names a directory of reports rather than a file.
    pub fn junit_is_dir(self) -> bool {
        self.spec().junit_is_dir
    }

    /// Variables removed from the environment of the test command.
    pub fn env_remove(self) -> &'static [&'static str] {
        self.spec().env_remove
    }

    /// How the tests that reach a changed file are found.
    pub fn downstream(self) -> Reach {
        self.spec().downstream
    }

    /// The `{tests}` arguments that select these ids (already in their run form), and the
    /// groups `files` run whole (see `Spec::select`).
    pub fn select(self, ids: &[String], workdir: &Path, files: &[String]) -> String {
        (self.spec().select)(ids, workdir, files)
    }

    /// The first preset whose ids are of this syntax: what a custom command taking them
    /// runs like.
    pub fn of_syntax(syntax: IdSyntax) -> Option<Preset> {
        Preset::all().find(|p| p.id_syntax() == syntax)
    }
}

/// Every preset's protected globs: their test files and configuration.
pub fn protected_globs() -> Vec<&'static str> {
    Preset::all()
        .flat_map(|p| p.spec().protected.iter().copied())
        .collect()
}

/// Every preset's configuration sections in shared files, as (file name, section).
pub fn runner_sections() -> Vec<(&'static str, &'static str)> {
    Preset::all()
        .flat_map(|p| p.spec().sections.iter().copied())
        .collect()
}

/// What SWE-bench takes for a test file among a test patch's files: any but data and docs
/// (`NON_TEST_EXTS` of its harness).
pub fn is_test_file(path: &str) -> bool {
    const NOT: [&str; 11] = [
        ".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml",
    ];
    !NOT.iter().any(|x| path.ends_with(x))
}

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

/// The directories the runners' toolchains keep under the user's home, which a sandbox that
/// covers the home shows read-only again: what the tools and their caches are, never where
/// credentials live. Cargo's registry and git checkouts but not its `credentials.toml` or
/// `config.toml`, rustup's toolchains, Go's module cache, pyenv's interpreters and the user
/// site-packages, nvm's and SDKMAN's installs, Maven's repository and wrapper
/// distributions but not its `settings.xml`, Gradle's caches and wrapper distributions but not its
/// `gradle.properties`. One list for every command, whatever its runner: none of it is
/// secret, and a custom command runs the same tools. (Tools on `PATH` and paths the user
/// names are shown by the sandbox itself.)
pub fn toolchain_dirs() -> Vec<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = common::home();
    let cargo = common::cargo_home();
    let mut dirs = vec![
        cargo.join("bin"),
        cargo.join("registry"),
        cargo.join("git"),
        var("RUSTUP_HOME").unwrap_or_else(|| home.join(".rustup")),
        common::go_mod_cache(),
        var("PYENV_ROOT").unwrap_or_else(|| home.join(".pyenv")),
        home.join(".local/lib"),
        var("NVM_DIR").unwrap_or_else(|| home.join(".nvm")),
        var("SDKMAN_DIR").map_or_else(|| home.join(".sdkman/candidates"), |d| d.join("candidates")),
    ];
    dirs.extend(common::maven_dirs());
    dirs.extend(common::gradle_dirs());
    dirs.extend(["GOROOT", "JAVA_HOME"].into_iter().filter_map(var));
    dirs
}

/// The ids a runner refused, from its output, with its words. pytest aborts the whole run for
/// unknown ids: every node id missing from a file that exists (`ERROR: not found:
/// /abs/tests/t.py::x`), or the first argument whose file is missing (`ERROR: file or directory
/// not found: tests/u.py::y`; before pytest 6, `ERROR: file not found: …`; a path with a
/// parameter part, `ERROR: path cannot contain [] parametrization: …`), which refuses every
/// id of that file. Other runners select by pattern and refuse nothing.
pub fn rejected_ids(syntax: IdSyntax, output: &str, ids: &[String]) -> Vec<(String, String)> {
    if !matches!(syntax, IdSyntax::Pytest | IdSyntax::Unittest) {
        return Vec::new();
    }
    // Each wording, and whether it names a missing file (every id of it refused).
    const WORDINGS: [(&str, bool); 4] = [
        ("not found: ", false),
        ("file or directory not found: ", true),
        ("file not found: ", true),
        // pytest 8 and later, for a path with a parameter part and no `::`.
        ("path cannot contain [] parametrization: ", true),
    ];
    let file_of = |form: &str| form.split("::").next().unwrap_or_default().to_string();
    let names = |target: &str, form: &str| target == form || target.ends_with(&format!("/{form}"));
    let mut rejected: Vec<(String, String)> = Vec::new();
    for line in output.lines() {
        let Some((why, target, whole_file)) = WORDINGS.iter().find_map(|(p, file)| {
            line.strip_prefix("ERROR: ")?
                .strip_prefix(p)
                .map(|t| (*p, t.trim(), *file))
        }) else {
            continue;
        };
        for id in ids {
            let form = syntax.run_form(id);
            let hit = if whole_file {
                names(&file_of(target), &file_of(&form))
            } else {
                names(target, &form)
            };
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
    use crate::workspace::{OnProtectedEdit, Protection};

    /// The protection a check grades with: the defaults, `extra`, and every runner's files.
    fn every_runner(extra: &[&str]) -> Protection {
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        Protection::new(&extra, OnProtectedEdit::Warn)
            .unwrap()
            .with(&protected_globs(), &runner_sections())
            .unwrap()
    }

    fn edits(extra: &[&str], files: &[&str]) -> Vec<String> {
        let files: Vec<String> = files.iter().map(|s| s.to_string()).collect();
        every_runner(extra).edits(&files)
    }

    #[test]
    fn defaults_cover_tests_config_and_ci_but_not_code() {
        let files = [
            "conftest.py",
            "src/pkg/conftest.py",
            "tests/test_calc.py",
            "pkg/tests/helpers.py",
            "test_root.py",
            "calc_test.py",
            "src/app.test.ts",
            "web/__tests__/a.js",
            "x/y_test.go",
            "src/test/java/a/CalcTest.java",
            "tests/CalcTest.php",
            "pytest.ini",
            "jest.config.js",
            ".github/workflows/ci.yml",
            ".gitlab-ci.yml",
        ];
        assert_eq!(edits(&[], &files), files);
        let code = [
            "src/calc.py",
            "src/testing_utils.py",
            "latest.py",
            "pkg/contest.py",
            "README.md",
            "pyproject.toml",
            "src/main/java/a/Calc.java",
        ];
        assert!(edits(&[], &code).is_empty(), "{:?}", edits(&[], &code));
    }

    #[test]
    fn runner_sections_of_files_that_are_not_protected() {
        let all = every_runner(&[]);
        let toml = "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n\n[tool.ruff]\nline = 1\n";
        let at = |line| all.section("pyproject.toml", toml, line);
        assert_eq!(
            (at(2), at(4), at(5), at(8)),
            (
                None,
                Some("tool.pytest.ini_options"),
                Some("tool.pytest.ini_options"),
                None
            )
        );
        let cfg = "[metadata]\nname = x\n[tool:pytest]\naddopts = -p no:x\n";
        assert_eq!(all.section("sub/setup.cfg", cfg, 4), Some("tool:pytest"));
        assert_eq!(all.section("setup.cfg", cfg, 2), None);
        let json = "{\n  \"name\": \"x\",\n  \"jest\": {\n    \"testMatch\": [\"x\"]\n  },\n  \"dependencies\": {\n    \"a\": \"1\"\n  }\n}\n";
        let at = |line| all.section("package.json", json, line);
        assert_eq!(
            (at(2), at(3), at(4), at(7)),
            (None, Some("jest"), Some("jest"), None)
        );
        assert_eq!(all.section("README.md", toml, 4), None);
    }

    #[test]
    fn the_ids_pytest_refuses_are_read_from_its_words() {
        let ids: Vec<String> = [
            "tests/t.py::a",
            "tests/t.py::b",
            "tests/gone.py::x",
            "tests/gone.py::y",
            "[100%]",
            "[",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let refused = |output: &str| -> Vec<(String, String)> {
            rejected_ids(IdSyntax::Pytest, output, &ids)
        };
        let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        // pytest 9: every unknown node id of files that exist, by absolute path.
        assert_eq!(
            refused("ERROR: not found: /w/tests/t.py::b\n(no match in any of [<Module t.py>])\n"),
            pairs(&[("tests/t.py::b", "not found")])
        );
        // A missing file refuses every id of it, in either wording.
        assert_eq!(
            refused("ERROR: file or directory not found: tests/gone.py::y\n"),
            pairs(&[
                ("tests/gone.py::x", "file or directory not found"),
                ("tests/gone.py::y", "file or directory not found"),
            ])
        );
        // pytest 4.4's own words for an id SWE-bench's dataset holds (pytest-dev__pytest-5227).
        assert_eq!(
            refused("\nERROR: file not found: [100%]\n\n"),
            pairs(&[("[100%]", "file not found")])
        );
        // pytest 9.2's, for the same id.
        assert_eq!(
            refused("ERROR: path cannot contain [] parametrization: [100%]\n"),
            pairs(&[("[100%]", "path cannot contain [] parametrization")])
        );
        assert!(refused("ERROR: file not found: [100%]-----").is_empty());
        assert!(refused("1 passed\nnot found: tests/t.py::a").is_empty());
        assert!(rejected_ids(IdSyntax::Go, "ERROR: not found: tests/t.py::a", &ids).is_empty());
    }

    #[test]
    fn preset_names_round_trip() {
        for p in Preset::all() {
            assert_eq!(p.name().parse::<Preset>().unwrap(), p);
            assert!(crate::run::command::Template::new(p.template()).is_ok());
        }
        assert!("nosetests".parse::<Preset>().is_err());
    }

    #[test]
    fn the_registry_names_each_preset_once_and_serde_agrees() {
        let names: Vec<&str> = Preset::all().map(Preset::name).collect();
        assert_eq!(names.len(), crate::util::list::dedup(names.clone()).len());
        for p in Preset::all() {
            let json = serde_json::to_value(p).unwrap();
            assert_eq!(json, serde_json::Value::String(p.name().to_string()));
        }
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
