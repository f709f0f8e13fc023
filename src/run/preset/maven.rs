//! Maven Surefire; `{junit}` is the reports directory.

use super::common::{JAVA_PROTECTED, JVM_ENV, nothing, quote};
use super::spec::{Reach, Spec, no_fetch};
use crate::observe::IdSyntax;
use crate::util::list::dedup;
use std::path::Path;

/// Surefire writes one file per class into each module's `target/surefire-reports` and never
/// clears it, so stale reports are removed first and every module's are gathered under
/// `{junit}` after. The wrapper, when the project has one, pins the Maven the project expects.
const TEMPLATE: &str = "find . -path '*/target/surefire-reports' -prune -type d -exec rm -rf {} +; if [ -x ./mvnw ]; then mvn=./mvnw; else mvn=mvn; fi; \"$mvn\" -B test -Dmaven.test.failure.ignore=true -DfailIfNoTests=false -Dsurefire.failIfNoSpecifiedTests=false {tests}; status=$?; mkdir -p {junit}; find . -path '*/target/surefire-reports' -prune -type d | while read -r d; do mkdir -p {junit}/\"$d\" && cp \"$d\"/*.xml {junit}/\"$d\"/ 2>/dev/null; done; exit $status";

/// No build output is kept: a seeded `target/` was measured no faster, its time being
/// Maven's own start and plugins. Maven resolves its dependencies on first use and has no
/// download step yet (its offline-resolve goals need plugins of their own, and load the
/// project's build extensions).
pub(super) const SPEC: Spec = Spec {
    name: "maven",
    template: TEMPLATE,
    version_probe: "mvn --version",
    id_syntax: IdSyntax::Java,
    select,
    junit_is_dir: true,
    // It keeps going past failures (`-Dmaven.test.failure.ignore`): its status says nothing
    // about them.
    exit_reflects_failures: false,
    protected: JAVA_PROTECTED,
    sections: &[],
    build_dirs: &[],
    lock_files: &[],
    fetch: no_fetch,
    pass_env: JVM_ENV,
    env_remove: &[],
    downstream: Reach::Unknown,
    support_files: &[],
    runs_test_files: false,
};

/// Surefire's `-Dtest`, which selects whole methods.
fn select(ids: &[String], workdir: &Path, files: &[String]) -> String {
    if nothing(ids, workdir, files) {
        return String::new();
    }
    format!("-Dtest={}", quote(&dedup(ids.iter().cloned()).join(",")))
}
