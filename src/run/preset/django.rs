//! Django's own `tests/runtests.py`, with a test runner that writes JUnit.

use super::common::{
    PYTHON_BYTECODE, PYTHON_ENV, PYTHON_ENV_REMOVE, PYTHON_PROBE, PYTHON_PROTECTED, in_checkout,
};
use super::spec::{Reach, Spec, no_fetch};
use crate::observe::IdSyntax;
use crate::util::list::dedup;
use std::path::Path;

/// Django's suite as SWE-bench runs it (`--verbosity 2 --settings=test_sqlite --parallel 1`),
/// through a settings module that is the task's (`PATCHGRADE_DJANGO_SETTINGS`, default
/// `test_sqlite`) with a test runner that also writes `{junit}` (`support/patchgrade_django.py`,
/// in the read-only scripts directory). The checkout comes first on the path, so an installed
/// Django (SWE-bench's images install theirs in editable mode) never stands in for it.
const TEMPLATE: &str = "PATCHGRADE_JUNIT={junit}; export PATCHGRADE_JUNIT; PYTHONPATH=\"$PATCHGRADE_SUPPORT:{workdir}${PYTHONPATH:+:$PYTHONPATH}\"; export PYTHONPATH; python ./tests/runtests.py --verbosity 2 --settings=patchgrade_django_settings --parallel 1 {tests}";

/// The test runner and the settings module it runs with.
const SUPPORT: &[(&str, &str)] = &[
    (
        "patchgrade_django.py",
        include_str!("support/patchgrade_django.py"),
    ),
    (
        "patchgrade_django_settings.py",
        include_str!("support/patchgrade_django_settings.py"),
    ),
];

pub(super) const SPEC: Spec = Spec {
    name: "django",
    template: TEMPLATE,
    version_probe: PYTHON_PROBE,
    id_syntax: IdSyntax::Django,
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

/// Django's labels: modules and test files (no label runs the whole suite).
fn select(ids: &[String], workdir: &Path, files: &[String]) -> String {
    let files = in_checkout(workdir, files);
    if ids.is_empty() && files.is_empty() {
        return String::new();
    }
    shell_words::join(django_labels(ids, &files))
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

