//! Bad input to a check: nothing was run, nothing is left behind.

use crate::observe::junit::JunitError;
use crate::task::{CommandError, RequestError};
use crate::workspace::protect::BadGlob;
use crate::workspace::{PatchError, SourceError};
use std::path::PathBuf;

/// Input a check (or `FromReports`) cannot be run with. Each variant
/// names the input and the problem; front ends add how their users give that input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The repository or base revision.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// A patch that is not a diff.
    // Not `source`: thiserror would make it the error's cause, and `{:#}` would print the
    // reason twice.
    #[error("{origin}: {reason}")]
    Patch {
        /// Where the patch came from (a file name, `stdin`, `task file`).
        origin: String,
        /// What is wrong.
        reason: PatchError,
    },
    /// A file the task names (a test patch) cannot be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The test command the task names.
    #[error(transparent)]
    Command(#[from] CommandError),
    /// The protected-path globs.
    #[error(transparent)]
    Protection(#[from] BadGlob),
    /// No test command at all.
    #[error("no test command: the task names neither a runner nor a test command")]
    NoCommand,
    /// The requested ids.
    #[error(transparent)]
    Request(#[from] RequestError),
    /// A zero timeout would kill every command before it starts.
    #[error("the timeout must be greater than zero")]
    ZeroTimeout,
    /// A memory limit that is not a size.
    #[error("memory limit `{0}` is not a size (256M, 2G, or bytes)")]
    BadMemory(String),
    /// A zero memory or process limit would stop every command before it starts.
    #[error("the memory and process limits must be greater than zero")]
    ZeroLimit,
    /// `derive` was given an empty gold patch.
    #[error("the gold patch is empty: derive needs the patch that fixes the task")]
    EmptyGold,
    /// The task names no local repository.
    #[error("no repository for `{instance_id}` ({repo}): the task has no repo_path")]
    NoRepository {
        /// The task.
        instance_id: String,
        /// Its `owner/name`, or `no owner/name`.
        repo: String,
    },
    /// A task that cannot be used as it is.
    #[error(transparent)]
    Task(#[from] crate::task::TaskProblem),
    /// A path that is not UTF-8: commands and templates name paths as text, so the run would
    /// name another path than the one given.
    #[error("{0}: the path is not UTF-8")]
    NotUtf8(PathBuf),
    /// A JUnit report given to `FromReports`.
    #[error(transparent)]
    Report(#[from] JunitError),
    /// The directory to keep the runs in already holds runs.
    #[error("{0}: already exists (keeping runs needs a fresh directory)")]
    KeepExists(PathBuf),
    /// A path to show in the sandbox (`--sandbox-ro`, `--sandbox-rw`) that is not there.
    #[error("{}: no such file or directory (named by {flag})", path.display())]
    SandboxPath {
        /// As given.
        path: PathBuf,
        /// `--sandbox-ro` or `--sandbox-rw`.
        flag: &'static str,
    },
    /// A sandbox name that is not one.
    #[error("unknown sandbox `{name}` (known: {known})")]
    UnknownSandbox {
        /// As given.
        name: String,
        /// The names there are.
        known: String,
    },
    /// A downstream list that is not a list of ids.
    #[error("{path}: {reason}")]
    DownstreamList {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A scoring name that is not one.
    #[error(transparent)]
    Scoring(#[from] crate::judge::scoring::UnknownScoring),
    /// The sandbox (or image) asked for cannot be used here.
    #[error(transparent)]
    Sandbox(#[from] crate::run::sandbox::SandboxError),
    /// The run directory cannot be made.
    #[error("{path}: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}
