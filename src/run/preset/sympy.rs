//! sympy's own test runner (what `bin/test` runs), writing JUnit.

use super::common::{
    PYTHON_BYTECODE, PYTHON_ENV, PYTHON_ENV_REMOVE, PYTHON_PROBE, PYTHON_PROTECTED, in_checkout,
    quote,
};
use super::spec::{Reach, Spec, no_fetch};
use crate::observe::IdSyntax;
use crate::util::list::dedup;
use std::path::Path;

/// sympy's runner as SWE-bench runs it (`bin/test -C --verbose`, warnings it silences
/// silenced), through `support/patchgrade_sympy.py`, which records each test for `{junit}`.
const TEMPLATE: &str = "PATCHGRADE_JUNIT={junit} PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' python \"$PATCHGRADE_SUPPORT/patchgrade_sympy.py\" {tests}";

/// The runner that records each test.
const SUPPORT: &[(&str, &str)] = &[(
    "patchgrade_sympy.py",
    include_str!("support/patchgrade_sympy.py"),
)];

pub(super) const SPEC: Spec = Spec {
    name: "sympy",
    template: TEMPLATE,
    version_probe: PYTHON_PROBE,
    id_syntax: IdSyntax::Sympy,
    select,
    junit_is_dir: false,
    exit_reflects_failures: true,
    protected: PYTHON_PROTECTED,
    sections: &[],
    build_dirs: PYTHON_BYTECODE,
    lock_files: &[],
    fetch: no_fetch,
    pass_env: PYTHON_ENV,
    env_remove: PYTHON_ENV_REMOVE,
    downstream: Reach::Unknown,
    support_files: SUPPORT,
    runs_test_files: true,
};

/// The test files whole, else each name as a `-k` keyword.
fn select(ids: &[String], workdir: &Path, files: &[String]) -> String {
    let files = in_checkout(workdir, files);
    if ids.is_empty() && files.is_empty() {
        return String::new();
    }
    if !files.is_empty() {
        return shell_words::join(files.iter().map(|f| f.as_str()));
    }
    let names: Vec<String> = dedup(ids.iter().cloned());
    names
        .iter()
        .map(|n| format!("-k {}", quote(n)))
        .collect::<Vec<_>>()
        .join(" ")
}
