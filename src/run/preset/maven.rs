//! Maven Surefire; `{junit}` is the reports directory.

use super::common::{JAVA_PROTECTED, JVM_ENV, maven_dirs, nothing, quote};
use super::spec::{Fetch, FetchStep, Reach, Spec};
use crate::observe::IdSyntax;
use crate::util::list::dedup;
use std::path::Path;

/// Surefire writes one file per class into each module's `target/surefire-reports` and never
/// clears it, so stale reports are removed first and every module's are gathered under
/// `{junit}` after. The wrapper, when the project has one, pins the Maven the project expects.
const TEMPLATE: &str = "find . -path '*/target/surefire-reports' -prune -type d -exec rm -rf {} +; if [ -x ./mvnw ]; then mvn=./mvnw; else mvn=mvn; fi; \"$mvn\" -B test -Dmaven.test.failure.ignore=true -DfailIfNoTests=false -Dsurefire.failIfNoSpecifiedTests=false {tests}; status=$?; mkdir -p {junit}; find . -path '*/target/surefire-reports' -prune -type d | while read -r d; do mkdir -p {junit}/\"$d\" && cp \"$d\"/*.xml {junit}/\"$d\"/ 2>/dev/null; done; exit $status";

/// No build output is kept: a seeded `target/` was measured no faster, its time being
/// Maven's own start and plugins. Its dependencies are downloaded by the test command at the
/// base ([`FetchStep::TestCommandAtBase`]), not by `dependency:go-offline`: that goal loads
/// the build's extensions all the same, wants every lifecycle plugin (deploy, site) the tests
/// never use, and still leaves out Surefire's provider, which Surefire resolves only when it
/// runs a test.
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
    fetch,
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

/// The test command at the base, with the network ([`FetchStep::TestCommandAtBase`]).
fn fetch() -> Option<Fetch> {
    Some(Fetch {
        step: FetchStep::TestCommandAtBase,
        caches: maven_dirs().to_vec(),
        read: maven_dirs().to_vec(),
    })
}
