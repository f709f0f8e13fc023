//! What several runners share: the Python, JavaScript and JVM families' environments and
//! protected files, and the pieces of selection (quoting, escaping, the files in the checkout).

use crate::util::list::dedup;
use crate::workspace::{BuildDir, BuildKind};
use std::path::{Path, PathBuf};

/// The tests a command is to run, as a runner's selection sees them.
pub fn in_checkout<'a>(workdir: &Path, files: &'a [String]) -> Vec<&'a String> {
    files.iter().filter(|f| workdir.join(f).is_file()).collect()
}

/// Whether there is nothing to select: no id, and no file to run whole in the checkout (the
/// command then runs its default suite).
pub fn nothing(ids: &[String], workdir: &Path, files: &[String]) -> bool {
    ids.is_empty() && in_checkout(workdir, files).is_empty()
}

/// Each name once, regex-escaped, for a runner that selects by pattern.
pub fn escaped_names(ids: &[String]) -> Vec<String> {
    dedup(ids.iter().cloned())
        .iter()
        .map(|n| regex_escape(n))
        .collect()
}

/// One shell word.
pub fn quote(s: &str) -> String {
    shell_words::quote(s).into_owned()
}

/// Escape regex metacharacters (the subset shared by Go's RE2, CMake's, PCRE and bash's ERE).
pub fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$/#".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The Python runners' toolchain variables.
pub const PYTHON_ENV: &[&str] = &[
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    "PYENV_ROOT",
    "PYENV_VERSION",
];

/// The Python runners need bytecode in the checkout to tell whether the patched code ran.
pub const PYTHON_ENV_REMOVE: &[&str] = &["PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX"];

/// Python's bytecode, sealed hash-checked: a fresh checkout imports the unchanged modules
/// (and pytest's rewritten test files) without compiling them again.
pub const PYTHON_BYTECODE: &[BuildDir] = &[BuildDir {
    path: "__pycache__",
    by_mtime: false,
    skip: &[],
    kind: BuildKind::PythonBytecode,
}];

/// Python's test files and pytest's configuration (unittest and Django suites run through
/// the same files).
pub const PYTHON_PROTECTED: &[&str] = &[
    "**/conftest.py",
    "**/test_*.py",
    "**/*_test.py",
    "**/pytest.ini",
    "**/tox.ini",
    "**/noxfile.py",
];

/// pytest's sections in files a patch edits for its dependencies and metadata.
pub const PYTEST_SECTIONS: &[(&str, &str)] = &[
    ("pyproject.toml", "tool.pytest.ini_options"),
    ("pyproject.toml", "tool.pytest"),
    ("setup.cfg", "tool:pytest"),
];

/// The interpreter, for a Python runner's version probe.
pub const PYTHON_PROBE: &str = "python -c 'import sys; print(sys.executable, sys.version)'";

/// The JavaScript runners' toolchain variables.
pub const JS_ENV: &[&str] = &["NODE_PATH", "NODE_EXTRA_CA_CERTS"];

/// JavaScript's test files, whatever the runner.
pub const JS_PROTECTED: &[&str] = &["**/__tests__/**", "**/*.test.*", "**/*.spec.*"];

/// JavaScript ids' selection. Titles cannot be selected exactly (jest -t and mocha --grep
/// see joined names), so select by file when every id names one, else run everything.
pub fn js_select(ids: &[String], workdir: &Path, files: &[String]) -> String {
    if nothing(ids, workdir, files) {
        return String::new();
    }
    let files: Option<Vec<String>> = ids.iter().map(|id| js_file(id)).collect();
    files
        .map(|f| shell_words::join(dedup(f)))
        .unwrap_or_default()
}

/// The file of a JavaScript id (`tests/a.test.js › Outer › t`), if it names one.
fn js_file(id: &str) -> Option<String> {
    let first = id.split(" › ").next()?.split(" > ").next()?;
    [".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"]
        .iter()
        .any(|x| first.ends_with(x))
        .then(|| first.to_string())
}

/// The JVM runners' toolchain variables.
pub const JVM_ENV: &[&str] = &[
    "JAVA_HOME",
    "MAVEN_HOME",
    "M2_HOME",
    "GRADLE_USER_HOME",
    "GRADLE_HOME",
];

/// Java's test classes.
pub const JAVA_PROTECTED: &[&str] = &["**/*Test.java", "**/*Tests.java"];

/// The user's home (`/` without one).
pub fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

/// cargo's home (`CARGO_HOME`, else `~/.cargo`): the registry it downloads into, and the
/// package cache lock and usage database beside it.
pub fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home().join(".cargo"))
}

/// Maven's local repository and the Maven Wrapper's distributions, under `~/.m2` (Java's
/// `user.home`, which is `HOME` on a usual account).
pub fn maven_dirs() -> [PathBuf; 2] {
    let m2 = home().join(".m2");
    [m2.join("repository"), m2.join("wrapper/dists")]
}

/// Gradle's dependency caches and the Gradle Wrapper's distributions, under its user home
/// (`GRADLE_USER_HOME`, else `~/.gradle`).
pub fn gradle_dirs() -> [PathBuf; 2] {
    let user_home = std::env::var_os("GRADLE_USER_HOME")
        .filter(|h| !h.is_empty())
        .map_or_else(|| home().join(".gradle"), PathBuf::from);
    [user_home.join("caches"), user_home.join("wrapper/dists")]
}

/// Go's module cache (`GOMODCACHE`, else the first `GOPATH` entry's `pkg/mod`, else
/// `~/go/pkg/mod`).
pub fn go_mod_cache() -> PathBuf {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("GOMODCACHE") {
        return PathBuf::from(dir);
    }
    let gopath = var("GOPATH")
        .and_then(|p| std::env::split_paths(&p).next())
        .unwrap_or_else(|| home().join("go"));
    gopath.join("pkg/mod")
}
