//! Gradle; `{junit}` is a copy of `build/test-results/test`.

use super::common::{JAVA_PROTECTED, JVM_ENV, gradle_dirs, nothing, quote};
use super::spec::{Fetch, FetchStep, Reach, Spec};
use crate::observe::IdSyntax;
use crate::util::list::dedup;
use crate::workspace::{BuildDir, BuildKind};
use std::path::Path;

/// As Maven, with Gradle's `build/test-results/test`. Without `--no-daemon` the daemon would
/// outlive the run, outside its process group; stale results would also make the task look
/// up to date and run nothing. Gradle's user home, and its caches, must be writable: where the
/// user's are not (in a sandbox, which shows the caches read-only in an empty home), the
/// checkout gets its own, which reads the user's dependency cache as Gradle's read-only
/// cache (`GRADLE_RO_DEP_CACHE`, Gradle 6.2 and later): what the download step fetched.
const TEMPLATE: &str = "g=\"${GRADLE_USER_HOME:-$HOME/.gradle}\"; { [ -w \"$g\" ] && { [ ! -e \"$g/caches\" ] || [ -w \"$g/caches\" ]; }; } || export GRADLE_RO_DEP_CACHE=\"$g/caches\" GRADLE_USER_HOME={workdir}/.gradle/user-home; find . -path '*/build/test-results/test' -prune -type d -exec rm -rf {} +; if [ -x ./gradlew ]; then gradle=./gradlew; else gradle=gradle; fi; \"$gradle\" test --no-daemon --continue {tests}; status=$?; mkdir -p {junit}; find . -path '*/build/test-results/test' -prune -type d | while read -r d; do mkdir -p {junit}/\"$d\" && cp \"$d\"/*.xml {junit}/\"$d\"/ 2>/dev/null; done; exit $status";

/// Gradle's build output and its project cache (which holds the checkout's own user home
/// in a sandbox, with its compiled build scripts): Gradle hashes its inputs.
const GRADLE_BUILD: &[BuildDir] = &[
    BuildDir {
        path: "build",
        by_mtime: false,
        skip: &["test-results"],
        kind: BuildKind::Tree,
    },
    BuildDir {
        path: ".gradle",
        by_mtime: false,
        skip: &[],
        kind: BuildKind::Tree,
    },
];

pub(super) const SPEC: Spec = Spec {
    name: "gradle",
    template: TEMPLATE,
    version_probe: "gradle --version --no-daemon",
    id_syntax: IdSyntax::Java,
    select,
    junit_is_dir: true,
    exit_reflects_failures: true,
    protected: JAVA_PROTECTED,
    sections: &[],
    build_dirs: GRADLE_BUILD,
    lock_files: &["build.gradle", "build.gradle.kts"],
    fetch,
    pass_env: JVM_ENV,
    env_remove: &[],
    downstream: Reach::Unknown,
    support_files: &[],
    runs_test_files: false,
};

/// One `--tests` per id, `Class.method` (Gradle selects whole methods).
fn select(ids: &[String], workdir: &Path, files: &[String]) -> String {
    if nothing(ids, workdir, files) {
        return String::new();
    }
    dedup(ids.iter().cloned())
        .iter()
        .map(|id| format!("--tests {}", quote(&id.replace('#', "."))))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The test command at the base, with the network ([`FetchStep::TestCommandAtBase`]).
fn fetch() -> Option<Fetch> {
    Some(Fetch {
        step: FetchStep::TestCommandAtBase,
        caches: gradle_dirs().to_vec(),
        read: gradle_dirs().to_vec(),
    })
}
