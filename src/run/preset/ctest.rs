//! CTest after a CMake build in `build/`.

use super::common::{escaped_names, nothing, quote};
use super::spec::{Reach, Spec, no_fetch};
use crate::observe::IdSyntax;
use std::path::Path;

const TEMPLATE: &str = "cmake -S . -B build && cmake --build build && ctest --test-dir build --output-junit {junit} {tests}";

pub(super) const SPEC: Spec = Spec {
    name: "ctest",
    template: TEMPLATE,
    version_probe: "cmake --version && c++ --version",
    id_syntax: IdSyntax::Ctest,
    select,
    junit_is_dir: false,
    exit_reflects_failures: true,
    protected: &[],
    sections: &[],
    build_dirs: &[],
    lock_files: &[],
    fetch: no_fetch,
    pass_env: &[],
    env_remove: &[],
    downstream: Reach::Unknown,
    support_files: &[],
    runs_test_files: false,
};

/// An anchored alternation of the names.
fn select(ids: &[String], workdir: &Path, files: &[String]) -> String {
    if nothing(ids, workdir, files) {
        return String::new();
    }
    let names = escaped_names(ids);
    format!("-R {}", quote(&format!("^({})$", names.join("|"))))
}
