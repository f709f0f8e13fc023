//! PHPUnit, `--log-junit`.

use super::common::{escaped_names, nothing, quote};
use super::spec::{Reach, Spec, no_fetch};
use crate::observe::IdSyntax;
use std::path::Path;

pub(super) const SPEC: Spec = Spec {
    name: "phpunit",
    template: "phpunit --log-junit {junit} {tests}",
    version_probe: "php --version && phpunit --version",
    id_syntax: IdSyntax::Phpunit,
    select,
    junit_is_dir: false,
    exit_reflects_failures: true,
    protected: &["**/*Test.php", "**/phpunit.xml*"],
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

/// An alternation of the names (`--filter` matches anywhere).
fn select(ids: &[String], workdir: &Path, files: &[String]) -> String {
    if nothing(ids, workdir, files) {
        return String::new();
    }
    let names = escaped_names(ids);
    format!("--filter {}", quote(&names.join("|")))
}
