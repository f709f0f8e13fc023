//! The contract between building a check and grading it: the user's [`Settings`], and the
//! [`Plan`] validation resolves them into (the patches parsed, the base resolved, the command,
//! the sandbox, the protection with every runner's files). Every stage reads the plan.

use super::BaselineCache;
use crate::judge::downstream::{Downstream, Method};
use crate::judge::verdict::{PatchInfo, Scoring};
use crate::run::sandbox::SandboxChoice;
use crate::run::{Sandbox, TestCommand};
use crate::workspace::{Patch, Protection, Source, WorkdirPool};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What the user set, as given (see the setters of `Check`).
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(super) repo: PathBuf,
    pub(super) base: String,
    pub(super) patch: (String, Vec<u8>),
    pub(super) test_patch: Option<(String, Vec<u8>)>,
    pub(super) f2p: Vec<String>,
    pub(super) p2p: Vec<String>,
    pub(super) command: Option<TestCommand>,
    pub(super) timeout: Duration,
    pub(super) env: Vec<(String, String)>,
    pub(super) setup_cmd: Option<String>,
    pub(super) setup_once: bool,
    pub(super) baseline: bool,
    pub(super) keep: Option<PathBuf>,
    pub(super) instance_id: Option<String>,
    pub(super) retries: usize,
    pub(super) cache: Option<Arc<BaselineCache>>,
    pub(super) pool: Option<WorkdirPool>,
    pub(super) strict_apply: bool,
    pub(super) protection: Arc<Protection>,
    pub(super) logs: Option<PathBuf>,
    pub(super) sandbox: SandboxChoice,
    pub(super) image: Option<String>,
    pub(super) image_workdir: Option<PathBuf>,
    pub(super) network: bool,
    /// Host paths the sandbox shows, each writable or not.
    pub(super) sandbox_paths: Vec<(PathBuf, bool)>,
    /// Each command's memory and processes.
    pub(super) limits: crate::run::Limits,
    /// Variables of the user's environment passed to the commands besides the default ones.
    pub(super) pass_env: Vec<String>,
    pub(super) scoring: Scoring,
    pub(super) repo_name: Option<String>,
    pub(super) python: Option<PathBuf>,
    pub(super) downstream: DownstreamMode,
    pub(super) downstream_max: usize,
    pub(super) downstream_as_p2p: bool,
}

/// Validated inputs, and the settings they came from.
pub(crate) struct Plan {
    /// What the user set.
    pub(super) settings: Settings,
    pub(super) source: Source,
    /// The user's protection with every runner's test files and configuration added.
    pub(super) protection: Arc<Protection>,
    /// Host paths the user named, shown read-only where the sandbox would hide them.
    pub(super) host_paths: Vec<PathBuf>,
    /// Host paths the user asked the sandbox to show, writable or not.
    pub(super) shown: Vec<(PathBuf, bool)>,
    pub(super) sandbox: Sandbox,
    pub(super) candidate: Option<Patch>,
    pub(super) test_patch: Option<Patch>,
    pub(super) command: TestCommand,
    /// The test patch's files the command runs whole (see [`TestCommand::runs_test_files`]).
    pub(super) test_files: Vec<String>,
    /// The tests outside the task's lists to run and grade too (`--downstream`).
    pub(super) downstream: Option<Selection>,
    pub(super) f2p: Vec<String>,
    pub(super) p2p: Vec<String>,
}

impl Plan {
    /// A script with the `--python` interpreter's directory first on `PATH`.
    pub(super) fn with_python(&self, script: String) -> String {
        let Some(dir) = self
            .settings
            .python
            .as_deref()
            .and_then(std::path::Path::parent)
        else {
            return script;
        };
        let dir = shell_words::quote(&dir.to_string_lossy()).into_owned();
        format!("PATH={dir}:\"$PATH\"; export PATH\n{script}")
    }

    pub(super) fn patch_info(&self) -> PatchInfo {
        PatchInfo {
            test_patch_files: self
                .test_patch
                .as_ref()
                .map(|p| p.files().to_vec())
                .unwrap_or_default(),
            ..PatchInfo::default()
        }
    }
}

/// Which downstream tests a check runs besides the task's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DownstreamMode {
    /// None (the default).
    #[default]
    Off,
    /// By coverage at base where the runner is Python's, else by imports.
    Auto,
    /// By coverage at base only.
    Coverage,
    /// By the imports of the changed modules only.
    Imports,
    /// These tests, in the runner's ids.
    List(Vec<String>),
}

/// How many downstream tests a check runs unless told (`--downstream-max`).
pub const DEFAULT_DOWNSTREAM_MAX: usize = 100;

/// The downstream tests chosen for a check, and what the verdict says of how.
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    /// Tests to run, by id.
    pub(super) ids: Vec<String>,
    /// Groups to run whole (found by imports): test files, or for nextest the prefixes of
    /// test ids (`binary module::`, see [`Dependent::Module`]).
    pub(super) files: Vec<String>,
    /// The verdict's downstream group so far: method, counts, note.
    pub(super) report: Downstream,
}

impl Selection {
    pub(super) fn unavailable(note: String) -> Selection {
        Selection {
            ids: Vec::new(),
            files: Vec::new(),
            report: Downstream::found(Method::Unavailable, 0, 0, Some(note)),
        }
    }
}
