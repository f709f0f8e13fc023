//! Check: one candidate patch graded end to end, from what is observed.
//!
//! Takes a [`Check`] (the task, the candidate, how to run) and hands on a
//! [`Verdict`](crate::Verdict); `Err` only for bad input ([`Error`]). The pipeline:
//! [`Check::run`] validates every input, [`race`] prepares the candidate's and the baseline's
//! checkouts ([`prepare`]) and runs their tests ([`execute`]) side by side, and [`conclude`]
//! turns what both sides produced into the verdict. Baselines are kept in a [`BaselineCache`]
//! ([`cache`]).
//!
//! - [`from_task`]: the one conversion from a stacked [`TaskFile`](crate::task::TaskFile).
//! - [`from_reports`]: [`FromReports`], judging reports that already exist.

mod cache;
mod conclude;
mod derive;
mod downstream;
mod error;
mod execute;
mod from_reports;
mod from_task;
mod prepare;
mod race;
mod seeding;

pub use cache::BaselineCache;
pub use derive::Derived;
pub use downstream::{DEFAULT_DOWNSTREAM_MAX, DownstreamMode};
pub use error::Error;
pub use execute::LOG_TAIL;
pub use from_reports::FromReports;
pub use from_task::CheckOptions;

use crate::judge::Draft;
use crate::judge::verdict::Scoring;
use crate::judge::verdict::{Outcome, PatchInfo, TaskInfo, Verdict, WarningKind};
use crate::observe::Requested;
use crate::run::preset::{self, is_test_file};
use crate::run::sandbox::SandboxChoice;
use crate::run::{Preset, Sandbox, TestCommand};
use crate::task::validate_ids;
use crate::workspace::{Patch, Protection, Source, WorkdirPool, Wrapper};
use prepare::RunRoot;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The default per-command timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// One candidate patch to grade against a task. Build it, then [`Check::run`].
///
/// ```no_run
/// # async fn demo() -> Result<(), patchgrade::Error> {
/// use patchgrade::{Check, Preset, Outcome};
/// let verdict = Check::new("path/to/repo")
///     .base("main")
///     .patch("fix.diff", std::fs::read("fix.diff").unwrap_or_default())
///     .f2p(["tests/test_calc.py::test_divide_by_zero"])
///     .p2p(["tests/test_calc.py::test_add"])
///     .runner(Preset::Pytest)
///     .run()
///     .await?;
/// if verdict.outcome == Outcome::Regression {
///     eprintln!("{}", verdict.summary);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Check {
    repo: PathBuf,
    base: String,
    patch: (String, Vec<u8>),
    test_patch: Option<(String, Vec<u8>)>,
    f2p: Vec<String>,
    p2p: Vec<String>,
    command: Option<TestCommand>,
    timeout: Duration,
    env: Vec<(String, String)>,
    setup_cmd: Option<String>,
    setup_once: bool,
    baseline: bool,
    keep: Option<PathBuf>,
    instance_id: Option<String>,
    retries: usize,
    cache: Option<Arc<BaselineCache>>,
    pool: Option<WorkdirPool>,
    strict_apply: bool,
    protection: Arc<Protection>,
    logs: Option<PathBuf>,
    sandbox: SandboxChoice,
    image: Option<String>,
    image_workdir: Option<PathBuf>,
    network: bool,
    /// Host paths the sandbox shows, each writable or not.
    sandbox_paths: Vec<(PathBuf, bool)>,
    /// Each command's memory and processes.
    limits: crate::run::Limits,
    /// Variables of the user's environment passed to the commands besides the default ones.
    pass_env: Vec<String>,
    scoring: Scoring,
    repo_name: Option<String>,
    python: Option<PathBuf>,
    downstream: DownstreamMode,
    downstream_max: usize,
    downstream_as_p2p: bool,
}

impl Check {
    /// A check against the repository at `repo`, base `HEAD`, with an empty patch.
    pub fn new(repo: impl Into<PathBuf>) -> Check {
        Check {
            repo: repo.into(),
            base: "HEAD".into(),
            patch: ("patch".into(), Vec::new()),
            test_patch: None,
            f2p: Vec::new(),
            p2p: Vec::new(),
            command: None,
            timeout: DEFAULT_TIMEOUT,
            env: Vec::new(),
            setup_cmd: None,
            setup_once: false,
            baseline: true,
            keep: None,
            instance_id: None,
            retries: 0,
            cache: None,
            pool: None,
            strict_apply: false,
            protection: Arc::new(Protection::defaults()),
            logs: None,
            sandbox: SandboxChoice::Auto,
            image: None,
            image_workdir: None,
            network: false,
            sandbox_paths: Vec::new(),
            limits: crate::run::Limits::default_for_machine(),
            pass_env: Vec::new(),
            scoring: Scoring::Patchgrade,
            repo_name: None,
            python: None,
            downstream: DownstreamMode::Off,
            downstream_max: DEFAULT_DOWNSTREAM_MAX,
            downstream_as_p2p: false,
        }
    }

    /// The base revision (anything `git rev-parse` understands).
    pub fn base(mut self, rev: impl Into<String>) -> Check {
        self.base = rev.into();
        self
    }

    /// The candidate patch; `origin` names it in error messages.
    pub fn patch(mut self, origin: impl Into<String>, text: impl Into<Vec<u8>>) -> Check {
        self.patch = (origin.into(), text.into());
        self
    }

    /// The hidden test patch, applied after the candidate (and alone at baseline).
    pub fn test_patch(mut self, origin: impl Into<String>, text: impl Into<Vec<u8>>) -> Check {
        self.test_patch = Some((origin.into(), text.into()));
        self
    }

    /// Add fail-to-pass test ids.
    pub fn f2p<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Check {
        self.f2p.extend(ids.into_iter().map(Into::into));
        self
    }

    /// Add pass-to-pass test ids.
    pub fn p2p<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Check {
        self.p2p.extend(ids.into_iter().map(Into::into));
        self
    }

    /// Replace the fail-to-pass ids given so far.
    pub fn replace_f2p<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Check {
        self.f2p = ids.into_iter().map(Into::into).collect();
        self
    }

    /// Replace the pass-to-pass ids given so far.
    pub fn replace_p2p<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Check {
        self.p2p = ids.into_iter().map(Into::into).collect();
        self
    }

    /// Use a preset runner.
    pub fn runner(mut self, preset: Preset) -> Check {
        self.command = Some(TestCommand::preset(preset));
        self
    }

    /// Use a test command.
    pub fn command(mut self, command: TestCommand) -> Check {
        self.command = Some(command);
        self
    }

    /// Per-command timeout (setup and tests each).
    pub fn timeout(mut self, timeout: Duration) -> Check {
        self.timeout = timeout;
        self
    }

    /// Add an environment variable; `{workdir}` in the value becomes the checkout's path.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Check {
        self.env.push((key.into(), value.into()));
        self
    }

    /// A command run before the tests of every run: in each fresh checkout, and in a pool slot
    /// before every use.
    pub fn setup_cmd(mut self, cmd: impl Into<String>) -> Check {
        self.setup_cmd = Some(cmd.into());
        self
    }

    /// Run the setup command once per pool slot and base tree instead ([`Check::workdir_pool`]):
    /// for a setup that depends on the base alone (`npm ci` from the base's lock file), whose
    /// output the slot keeps. Without a pool every checkout is fresh, so it runs every time.
    pub fn setup_once(mut self, once: bool) -> Check {
        self.setup_once = once;
        self
    }

    /// Run the baseline (default) or not.
    pub fn baseline(mut self, run: bool) -> Check {
        self.baseline = run;
        self
    }

    /// Keep checkouts and logs under this directory instead of removing them.
    pub fn keep(mut self, dir: impl Into<PathBuf>) -> Check {
        self.keep = Some(dir.into());
        self
    }

    /// Run the tests that did not pass again, up to `n` times, with just their ids; a test that
    /// fails and then passes is flaky.
    pub fn retries(mut self, n: usize) -> Check {
        self.retries = n;
        self
    }

    /// Read the baseline from this cache when it holds it, and store it there when not.
    pub fn baseline_cache(mut self, cache: Arc<BaselineCache>) -> Check {
        self.cache = Some(cache);
        self
    }

    /// Apply the candidate exactly or not at all: no offset or fuzz fallback.
    pub fn strict_apply(mut self, strict: bool) -> Check {
        self.strict_apply = strict;
        self
    }

    /// Which paths are protected and what a candidate edit to them does (default: the
    /// default globs, warn).
    pub fn protection(mut self, protection: Protection) -> Check {
        self.protection = Arc::new(protection);
        self
    }

    /// Take the checkouts from this pool, and leave them there for the next run, instead of
    /// making fresh ones and removing them.
    pub fn workdir_pool(mut self, pool: WorkdirPool) -> Check {
        self.pool = Some(pool);
        self
    }

    /// Copy the runs' logs (the last [`LOG_TAIL`] bytes of each) into this directory, as
    /// `candidate-test.stdout.log` and so on, before the checkouts are removed.
    pub fn logs(mut self, dir: impl Into<PathBuf>) -> Check {
        self.logs = Some(dir.into());
        self
    }

    /// Where the commands run (default: `auto`, see [`SandboxChoice`]).
    pub fn sandbox(mut self, choice: SandboxChoice) -> Check {
        self.sandbox = choice;
        self
    }

    /// Run the commands in a container of this local image, the checkout mounted at the
    /// image's workdir.
    pub fn image(mut self, image: impl Into<String>) -> Check {
        self.image = Some(image.into());
        self
    }

    /// Where the checkout is mounted in the image (default `/testbed`).
    pub fn image_workdir(mut self, dir: impl Into<PathBuf>) -> Check {
        self.image_workdir = Some(dir.into());
        self
    }

    /// Let the tests use the network (the setup command always may).
    pub fn network(mut self, allow: bool) -> Check {
        self.network = allow;
        self
    }

    /// Show this host path to the commands in the sandbox, read-only or `writable`, where the
    /// sandbox would hide it (bwrap's private `/tmp`) or lacks it (a container). It must exist.
    /// A path the user names in the test or setup command, `--python`, an `--env` value or
    /// a symbolic link of the base tree is shown read-only without this.
    pub fn sandbox_path(mut self, path: impl Into<PathBuf>, writable: bool) -> Check {
        self.sandbox_paths.push((path.into(), writable));
        self
    }

    /// Pass this variable of patchgrade's environment to the commands (`LC_*`: a prefix).
    /// Only `PATH`, the user, language, time, the terminal, certificate authorities and what
    /// the runner needs pass by default: a key or token in the environment stays out of the
    /// tests, and so out of every output they write into.
    pub fn pass_env(mut self, name: impl Into<String>) -> Check {
        self.pass_env.push(name.into());
        self
    }

    /// Bound each command's memory to this many bytes (default: a quarter of the machine's,
    /// at least 1 GiB, at most 8 GiB): in a control group of its own on the host and in
    /// bwrap, by the engine in a container. A candidate whose tests run into it is graded for
    /// it (`resource-limit`).
    pub fn memory(mut self, bytes: u64) -> Check {
        self.limits.memory = bytes;
        self
    }

    /// Bound each command to this many processes and threads (default 4096).
    pub fn pids(mut self, n: u64) -> Check {
        self.limits.pids = n;
        self
    }

    /// Whose rules grade the observations (default: patchgrade's own). The verdict records
    /// the other scoring's outcome where it differs, either way.
    pub fn scoring(mut self, scoring: Scoring) -> Check {
        self.scoring = scoring;
        self
    }

    /// The Python interpreter the commands run (`python` on their `PATH`): its directory goes
    /// first on `PATH` (a virtualenv's `bin/python`, or, in a container, the image's, as SWE-bench's
    /// images keep it in `/opt/miniconda3/envs/testbed/bin`). A path as the commands see it.
    pub fn python(mut self, interpreter: impl Into<PathBuf>) -> Check {
        self.python = Some(interpreter.into());
        self
    }

    /// A script with [`Check::python`]'s directory first on `PATH`.
    fn with_python(&self, script: String) -> String {
        let Some(dir) = self.python.as_deref().and_then(std::path::Path::parent) else {
            return script;
        };
        let dir = shell_words::quote(&dir.to_string_lossy()).into_owned();
        format!("PATH={dir}:\"$PATH\"; export PATH\n{script}")
    }

    /// Also find, run and grade the tests outside the task's lists that exercise what the
    /// candidate changes (see [`DownstreamMode`]); they are reported beside the outcome.
    pub fn downstream(mut self, mode: DownstreamMode) -> Check {
        self.downstream = mode;
        self
    }

    /// Run at most this many downstream tests (found by imports: test files, or Rust tests
    /// and test modules), the most concerned first (default [`DEFAULT_DOWNSTREAM_MAX`]).
    pub fn downstream_max(mut self, n: usize) -> Check {
        self.downstream_max = n;
        self
    }

    /// Count the downstream tests as P2P tests too: a patch that breaks a caller nothing in
    /// the task's lists covers is then graded as breaking (`no-op` becomes `regression`).
    pub fn downstream_counts_as_p2p(mut self, yes: bool) -> Check {
        self.downstream_as_p2p = yes;
        self
    }

    /// Label the verdict with the project's `owner/name` (a SWE-bench instance's `repo`).
    pub fn repo_name(mut self, name: impl Into<String>) -> Check {
        self.repo_name = Some(name.into());
        self
    }

    /// Label the verdict with a task id.
    pub fn instance_id(mut self, id: impl Into<String>) -> Check {
        self.instance_id = Some(id.into());
        self
    }

    /// Grade the patch. `Err` only for bad input; everything observed is in the verdict.
    pub async fn run(&self) -> Result<Verdict, Error> {
        let started = Instant::now();
        let plan = self.validate()?;
        let mut draft = Draft::new(self.task_info(&plan), plan.patch_info());
        draft.scoring = self.scoring;
        let Some(candidate) = plan.candidate.clone() else {
            return Ok(draft.finish(Outcome::EmptyPatch, None, None, started));
        };
        draft.patch.files = candidate.files().to_vec();
        if let Some(wrapper) = candidate.wrapper() {
            draft.warn(WarningKind::WrappedPatch, wrapped(wrapper), Vec::new());
        }
        if candidate.recounted() {
            draft.warn(
                WarningKind::RecountedHunks,
                "hunk headers whose line counts did not match their lines were counted again \
                 (`git apply --recount`); a plain `git apply` refuses such a patch"
                    .to_string(),
                Vec::new(),
            );
        }
        if !candidate.binary_without_data().is_empty() {
            let files = candidate.binary_without_data().join(", ");
            draft.warn(
                WarningKind::BinaryNotApplied,
                format!(
                    "not applied, the patch says only that they differ (`Binary files … \
                     differ`, no data; `git diff --binary` writes it): {files}"
                ),
                Vec::new(),
            );
        }
        draft.isolation = plan.sandbox.isolation(self.network);
        draft.isolation.env = self.env_names(&plan);
        if plan.sandbox == Sandbox::None {
            let why = match Sandbox::why_bwrap_is_unavailable() {
                Some(why) if self.sandbox == SandboxChoice::Auto => {
                    format!("no sandbox works here ({why})")
                }
                _ => "--sandbox none".to_string(),
            };
            draft.warn(
                WarningKind::Unsandboxed,
                format!(
                    "the tests ran on the host as you, unsandboxed ({why}): code under test \
                     could reach the network, your files and the other side's run, so the \
                     baseline was not stored in the cache"
                ),
                Vec::new(),
            );
        }

        let root = Arc::new(RunRoot::new(self.keep.as_deref())?);
        let mut plan = plan;
        plan.downstream = self.select_downstream(&plan, &candidate, &root).await;
        let verdict = self.run_in(&root, plan, draft, candidate, started).await;
        if let Some(dir) = &self.logs {
            execute::copy_logs(root.path(), dir);
        }
        Ok(verdict)
    }

    /// Prepare, run and judge both sides (see the module's doc).
    async fn run_in(
        &self,
        root: &Arc<RunRoot>,
        plan: Plan,
        draft: Draft,
        candidate: Patch,
        started: Instant,
    ) -> Verdict {
        let raced = self.race(root, &plan, candidate).await;
        self.conclude(&plan, draft, raced, started)
    }

    /// Withhold from a verdict of this check what would show an agent the hidden tests: the
    /// F2P ids and messages ([`Verdict::redact_f2p`]), and every text that quotes the test
    /// patch ([`Verdict::withhold_quotes`]). What `--redact-f2p` does.
    pub fn redact(&self, verdict: &mut Verdict) {
        verdict.redact_f2p();
        if let Some((_, text)) = &self.test_patch {
            verdict.withhold_quotes(text);
        }
    }

    /// Check the task's inputs (repository, base, test patch, ids, command, sandbox) and run
    /// nothing: what a server does when it starts, so that a bad task is said once, at start,
    /// and not at every call.
    pub fn validate_task(&self) -> Result<(), Error> {
        self.validate().map(|_| ())
    }

    /// Check every input before anything is created.
    fn validate(&self) -> Result<Plan, Error> {
        let (f2p, p2p) = validate_ids(&self.f2p, &self.p2p)?;
        self.validate_inputs(f2p, p2p)
    }

    /// Check every input but the ids, which are given checked.
    fn validate_inputs(&self, f2p: Vec<String>, p2p: Vec<String>) -> Result<Plan, Error> {
        let command = self.command.clone().ok_or(Error::NoCommand)?;
        if self.timeout.is_zero() {
            return Err(Error::ZeroTimeout);
        }
        if self.limits.memory == 0 || self.limits.pids == 0 {
            return Err(Error::ZeroLimit);
        }
        for (path, writable) in &self.sandbox_paths {
            if std::fs::symlink_metadata(path).is_err() {
                let flag = if *writable {
                    "--sandbox-rw"
                } else {
                    "--sandbox-ro"
                };
                return Err(Error::SandboxPath {
                    path: path.clone(),
                    flag,
                });
            }
        }
        let parse = |(origin, text): &(String, Vec<u8>)| {
            Patch::parse(text).map_err(|reason| Error::Patch {
                origin: origin.clone(),
                reason,
            })
        };
        let candidate = parse(&self.patch)?;
        let test_patch = match &self.test_patch {
            Some(tp) => parse(tp)?,
            None => None,
        };
        if self.repo.to_str().is_none() {
            return Err(Error::NotUtf8(self.repo.clone()));
        }
        let source = Source::resolve(&self.repo, &self.base)?;
        // The test patch's test files, which some runners run whole (SWE-bench's directives).
        let test_files = match (&test_patch, command.runs_test_files()) {
            (Some(tp), true) => tp
                .files()
                .iter()
                .filter(|f| is_test_file(f))
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        let sandbox = Sandbox::resolve(
            self.sandbox,
            self.image.as_deref(),
            self.image_workdir.as_deref(),
        )?;
        let shown = self
            .sandbox_paths
            .iter()
            .map(|(p, w)| (std::path::absolute(p).unwrap_or_else(|_| p.clone()), *w))
            .collect();
        // Every runner's test files and configuration are protected, whichever runs: a
        // candidate has no reason to edit another runner's either.
        let protection = self
            .protection
            .with(&preset::protected_globs(), &preset::runner_sections())?;
        Ok(Plan {
            protection: Arc::new(protection),
            host_paths: self.host_paths(&command, &source),
            shown,
            sandbox,
            source,
            candidate,
            test_patch,
            command,
            test_files,
            downstream: None,
            f2p,
            p2p,
        })
    }

    /// The names of the variables the commands get from the user: those of the environment
    /// that pass, and `--env`'s; never their values.
    fn env_names(&self, plan: &Plan) -> Vec<String> {
        let names = self.pass_env_for(plan);
        let mut passed: Vec<String> = std::env::vars_os()
            .filter_map(|(k, _)| k.into_string().ok())
            .filter(|k| crate::run::process::passes(&names, k))
            .chain(self.env.iter().map(|(k, _)| k.clone()))
            .collect();
        passed.sort();
        passed.dedup();
        passed
    }

    /// The host paths the user named: in the test and setup commands, `--python`, the
    /// `--env` values, and where the base tree's links point.
    fn host_paths(&self, command: &TestCommand, source: &Source) -> Vec<PathBuf> {
        let python = self.python.as_deref().and_then(|p| p.to_str());
        let texts = [command.template().as_str()]
            .into_iter()
            .chain(self.setup_cmd.as_deref())
            .chain(python)
            .chain(self.env.iter().map(|(_, v)| v.as_str()));
        let mut paths = crate::run::sandbox::named_in(texts);
        paths.extend(source.absolute_link_targets());
        paths
    }

    fn task_info(&self, plan: &Plan) -> TaskInfo {
        TaskInfo {
            instance_id: self.instance_id.clone(),
            repo: Some(plan.source.repo_dir.clone()),
            repo_name: self.repo_name.clone(),
            base: Some(self.base.clone()),
            base_commit: Some(plan.source.commit.to_string()),
            test_cmd: Some(plan.command.template().as_str().to_string()),
            ids: plan.command.ids(),
        }
    }
}

/// Validated inputs.
struct Plan {
    source: Source,
    /// The user's protection with every runner's test files and configuration added.
    protection: Arc<Protection>,
    /// Host paths the user named, shown read-only where the sandbox would hide them.
    host_paths: Vec<PathBuf>,
    /// Host paths the user asked the sandbox to show, writable or not.
    shown: Vec<(PathBuf, bool)>,
    sandbox: Sandbox,
    candidate: Option<Patch>,
    test_patch: Option<Patch>,
    command: TestCommand,
    /// The test patch's files the command runs whole (see [`TestCommand::runs_test_files`]).
    test_files: Vec<String>,
    /// The tests outside the task's lists to run and grade too (`--downstream`).
    downstream: Option<downstream::Selection>,
    f2p: Vec<String>,
    p2p: Vec<String>,
}

impl Plan {
    fn requested(&self) -> Requested<'_> {
        Requested {
            f2p: &self.f2p,
            p2p: &self.p2p,
        }
    }

    /// What both sides run: the requested tests, the downstream ones, and the test files
    /// the command runs whole.
    fn tests_job(&self) -> execute::Job<'_> {
        let mut ids = self.requested().ids();
        let mut files = self.test_files.clone();
        if let Some(d) = &self.downstream {
            ids.extend(d.ids.iter().cloned());
            files.extend(d.files.iter().cloned());
        }
        execute::Job {
            command: &self.command,
            ids: crate::util::list::dedup(ids),
            files: crate::util::list::dedup(files),
            requested: self.requested(),
        }
    }

    fn patch_info(&self) -> PatchInfo {
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

/// The warning for a wrapped candidate.
fn wrapped(wrapper: Wrapper) -> String {
    let what = match wrapper {
        Wrapper::MarkdownFence => "a Markdown code fence",
        Wrapper::HtmlPre { decoded: false } => "an HTML <pre> block",
        Wrapper::HtmlPre { decoded: true } => {
            "an HTML <pre> block, with HTML escapes (&lt; and the like) in it"
        }
    };
    let decoded = if matches!(wrapper, Wrapper::HtmlPre { decoded: true }) {
        " and the escapes decoded"
    } else {
        ""
    };
    format!(
        "the patch came wrapped in {what}: the wrapper was taken off{decoded} before it was applied"
    )
}
