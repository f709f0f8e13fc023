//! The contract every runner fills in: one [`Spec`] answers every question patchgrade asks
//! of a runner, with no default, so a runner that leaves one out does not compile.

use crate::observe::IdSyntax;
use crate::workspace::BuildDir;
use std::path::{Path, PathBuf};

/// What patchgrade knows of one test runner.
pub(crate) struct Spec {
    /// Its name on the command line, in task files and in serialized presets.
    pub name: &'static str,
    /// The command template (`{tests}`, `{junit}`, `{workdir}`).
    pub template: &'static str,
    /// A command printing the versions of the toolchain it runs, for the baseline cache's
    /// key. The project's own pins (a lock file, `./mvnw`) are in the base tree, which the
    /// key holds already; this sees the tools the machine provides.
    pub version_probe: &'static str,
    /// How its ids map to testcases.
    pub id_syntax: IdSyntax,
    /// The `{tests}` arguments that select these ids (already in their run form) and run
    /// these files whole (the test patch's, downstream ones; for nextest, id prefixes).
    /// Where it cannot select exactly it selects more, never less: matching picks the
    /// requested tests out.
    pub select: fn(ids: &[String], workdir: &Path, files: &[String]) -> String,
    /// Whether `{junit}` names a directory of reports rather than a file.
    pub junit_is_dir: bool,
    /// Whether its exit status says whether tests failed: non-zero when one did, zero when
    /// none did.
    pub exit_reflects_failures: bool,
    /// Globs of its test files and configuration, protected from a candidate's edits
    /// besides the test directories and CI that every runner shares.
    pub protected: &'static [&'static str],
    /// Sections of files a patch edits for other reasons that hold its configuration, as
    /// (file name, section): an edit inside one is a protected edit.
    pub sections: &'static [(&'static str, &'static str)],
    /// The build output its command keeps in the checkout, which a fresh checkout may start
    /// from (see [`crate::workspace::seed`]).
    pub build_dirs: &'static [BuildDir],
    /// The lock files whose content decides which dependencies that build output holds.
    pub lock_files: &'static [&'static str],
    /// The step that downloads what the runner would otherwise download on first use, in the
    /// tests, which have no network: run before the setup command, with the network, running
    /// none of the project's code.
    pub fetch: fn() -> Option<Fetch>,
    /// The variables of the user's environment its tools need beyond the base set: where
    /// they find their toolchain and caches.
    pub pass_env: &'static [&'static str],
    /// Variables removed from the environment of the test command.
    pub env_remove: &'static [&'static str],
    /// How the tests that reach a changed file are found (`--downstream auto`).
    pub downstream: Reach,
    /// Files its command runs besides the project's, written into the read-only scripts
    /// directory (`$PATCHGRADE_SUPPORT`), as (name, text).
    pub support_files: &'static [(&'static str, &'static str)],
    /// Whether it finds its tests by the files the test patch touches, as SWE-bench runs
    /// them: its ids alone may not say where a test is (a Django docstring, a sympy
    /// function's bare name).
    pub runs_test_files: bool,
}

/// How the tests that reach the files a patch changed are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Python: a coverage map of the suite at base, else the test files importing a
    /// changed module.
    Python,
    /// Rust: the tests of the crates and modules that depend on a changed file.
    Rust,
    /// JavaScript: the test files importing a changed module.
    JavaScript,
    /// No way known: the user gives a list.
    Unknown,
}

/// A preset's download step ([`Spec::fetch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetch {
    /// What runs, and where.
    pub step: FetchStep,
    /// The host directories it downloads into: writable to it alone.
    pub caches: Vec<PathBuf>,
    /// What of them the tests read (read-only; among
    /// [`toolchain_dirs`](super::toolchain_dirs)), made before the step so that a sandbox
    /// can show them: cargo's registry, not its credentials.
    pub read: Vec<PathBuf>,
}

/// How a preset's dependencies are downloaded, and in whose checkout: that depends on whether
/// resolving them runs the project's own code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchStep {
    /// A download step that runs none of the project's code (`cargo fetch`, `go mod
    /// download`), run at each side's checkout (`{workdir}` is filled in): a candidate's new
    /// dependency is downloaded too.
    Script(&'static str),
    /// The build is code (Maven's plugins and extensions, Gradle's scripts), and resolving
    /// it is not finished before its tests run (Surefire picks its provider then). So the
    /// test command itself runs, with the network, once per base: in a checkout of the base
    /// and the test patch that no candidate touched, the only code trusted with the network
    /// and a shared cache. Both sides then run offline from what it downloaded; a
    /// candidate's new dependency is not downloaded, and its tests fail to resolve it.
    TestCommandAtBase,
}

/// No download step: the dependencies come from the setup command (`npm ci`, `pip
/// install`) or the machine.
pub fn no_fetch() -> Option<Fetch> {
    None
}
