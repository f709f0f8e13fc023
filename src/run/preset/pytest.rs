//! pytest: node ids relative to the repository root.

use super::common::{
    PYTEST_SECTIONS, PYTHON_BYTECODE, PYTHON_ENV, PYTHON_ENV_REMOVE, PYTHON_PROTECTED, in_checkout,
};
use super::spec::{Reach, Spec, no_fetch};
use crate::observe::IdSyntax;
use std::path::Path;

/// `--rootdir` pins node ids (and so JUnit classnames) to the repository root, whatever
/// config files the project has and wherever the requested tests live.
const TEMPLATE: &str =
    "python -m pytest -p no:cacheprovider --rootdir={workdir} --junitxml={junit} {tests}";

pub(super) const SPEC: Spec = Spec {
    name: "pytest",
    template: TEMPLATE,
    version_probe: "python -c 'import sys, pytest; print(sys.executable, sys.version, pytest.__version__)'",
    id_syntax: IdSyntax::Pytest,
    select,
    junit_is_dir: false,
    exit_reflects_failures: true,
    protected: PYTHON_PROTECTED,
    sections: PYTEST_SECTIONS,
    build_dirs: PYTHON_BYTECODE,
    lock_files: &[],
    fetch: no_fetch,
    pass_env: PYTHON_ENV,
    env_remove: PYTHON_ENV_REMOVE,
    downstream: Reach::Python,
    support_files: &[],
    runs_test_files: false,
};

/// The node ids, and the test files to run whole; a node inside a file that runs whole would
/// run, and be reported, twice.
pub(super) fn select(ids: &[String], workdir: &Path, files: &[String]) -> String {
    let files = in_checkout(workdir, files);
    if files.is_empty() {
        return shell_words::join(ids);
    }
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
