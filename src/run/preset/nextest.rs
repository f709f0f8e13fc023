//! cargo-nextest, with a JUnit profile given as a tool config.

use super::common::{cargo_home, quote, regex_escape};
use super::spec::{Fetch, FetchStep, Reach, Spec};
use crate::observe::IdSyntax;
use crate::workspace::{BuildDir, BuildKind};
use std::path::Path;

/// nextest writes JUnit only for a profile that asks for it; the tool config adds one without
/// touching the project's own `.config/nextest.toml`.
///
/// The build goes to the checkout's own `target`, whatever the user's environment or the
/// project's `.cargo/config.toml` say: cargo names a path crate's artefacts by its path inside
/// the workspace, so baseline and candidate sharing one target directory run each other's
/// test binaries and read each other's reports (seen: a real fix graded `no-op`).
const TEMPLATE: &str = "CARGO_TARGET_DIR=\"$PWD/target\"; export CARGO_TARGET_DIR; unset CARGO_BUILD_TARGET_DIR; printf '[profile.patchgrade]\\nfail-fast = false\\n[profile.patchgrade.junit]\\npath = \"junit.xml\"\\n' > {junit}.toml && rm -f target/nextest/patchgrade/junit.xml; cargo nextest run --no-tests=pass --tool-config-file patchgrade:{junit}.toml --profile patchgrade {tests}; status=$?; cp target/nextest/patchgrade/junit.xml {junit}; exit $status";

/// cargo's build output, the crate's own artefacts judged fresh by file times.
const CARGO_TARGET: &[BuildDir] = &[BuildDir {
    path: "target",
    by_mtime: true,
    skip: &["nextest"],
    kind: BuildKind::Tree,
}];

pub(super) const SPEC: Spec = Spec {
    name: "nextest",
    template: TEMPLATE,
    version_probe: "rustc -vV && cargo nextest --version",
    id_syntax: IdSyntax::Nextest,
    select,
    junit_is_dir: false,
    exit_reflects_failures: true,
    protected: &[],
    sections: &[],
    build_dirs: CARGO_TARGET,
    lock_files: &["Cargo.lock"],
    fetch,
    pass_env: &["CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "CARGO_HTTP_CAINFO"],
    env_remove: &[],
    downstream: Reach::Rust,
    support_files: &[],
    runs_test_files: false,
};

/// `cargo fetch` runs no build script, and runs outside the checkout, so its
/// `.cargo/config.toml` is not read.
fn fetch() -> Option<Fetch> {
    Some(Fetch {
        step: FetchStep::Script("cd / && cargo fetch --manifest-path {workdir}/Cargo.toml"),
        caches: vec![cargo_home()],
        read: vec![cargo_home().join("registry"), cargo_home().join("git")],
    })
}

/// The groups are id prefixes, not files: they are given whole.
fn select(ids: &[String], _workdir: &Path, groups: &[String]) -> String {
    nextest_select(ids, groups)
}

/// nextest's filtersets (one `-E` each; nextest runs their union) for these ids
/// (`binary test`, or a bare test name) and these groups run whole: id prefixes, a test
/// binary and the start of its tests' names (`httparse tests::`; `mylib::api ` is the whole
/// binary).
fn nextest_select(ids: &[String], groups: &[String]) -> String {
    let tests = ids.iter().map(|id| match id.split_once(' ') {
        Some((bin, test)) => format!("binary_id(={bin}) & test(={test})"),
        None => format!("test(={id})"),
    });
    let groups = groups.iter().filter_map(|g| {
        let (bin, prefix) = g.split_once(' ')?;
        Some(if prefix.is_empty() {
            format!("binary_id(={bin})")
        } else {
            format!("binary_id(={bin}) & test(/^{}/)", regex_escape(prefix))
        })
    });
    tests
        .chain(groups)
        .map(|filter| format!("-E {}", quote(&filter)))
        .collect::<Vec<_>>()
        .join(" ")
}

