//! unittest suites run through pytest: dotted ids (`pkg.mod.Class.test`) or node ids.

use super::common::{
    PYTHON_BYTECODE, PYTHON_ENV, PYTHON_ENV_REMOVE, PYTHON_PROTECTED, nothing,
};
use super::spec::{Reach, Spec, no_fetch};
use crate::observe::IdSyntax;
use crate::util::list::dedup;
use std::path::Path;

pub(super) const SPEC: Spec = Spec {
    name: "unittest",
    template: super::pytest::SPEC.template,
    version_probe: super::pytest::SPEC.version_probe,
    id_syntax: IdSyntax::Unittest,
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
    downstream: Reach::Python,
    support_files: &[],
    runs_test_files: false,
};

/// Each id as the node id of its file.
fn select(ids: &[String], workdir: &Path, files: &[String]) -> String {
    if nothing(ids, workdir, files) {
        return String::new();
    }
    let nodes: Vec<String> = ids.iter().map(|id| unittest_node(id, workdir)).collect();
    shell_words::join(dedup(nodes))
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
