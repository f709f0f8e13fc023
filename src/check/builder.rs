//! The check as the user builds it: the task, the candidate, and how to run them, each set by
//! one method; [`Check::run`](super::Check::run) turns it into a [`Plan`](super::plan::Plan)
//! and grades it.

use super::BaselineCache;
use super::plan::{DEFAULT_DOWNSTREAM_MAX, DownstreamMode, Settings};
use crate::judge::verdict::{Scoring, Verdict};
use crate::run::sandbox::SandboxChoice;
use crate::run::{Preset, TestCommand};
use crate::workspace::{Protection, WorkdirPool};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

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
    pub(super) settings: Settings,
}

impl Check {
    /// A check against the repository at `repo`, base `HEAD`, with an empty patch.
    pub fn new(repo: impl Into<PathBuf>) -> Check {
        Check {
            settings: Settings {
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
            },
        }
    }

    /// The base revision (anything `git rev-parse` understands).
    pub fn base(mut self, rev: impl Into<String>) -> Check {
        self.settings.base = rev.into();
        self
    }

    /// The candidate patch; `origin` names it in error messages.
    pub fn patch(mut self, origin: impl Into<String>, text: impl Into<Vec<u8>>) -> Check {
        self.settings.patch = (origin.into(), text.into());
        self
    }

    /// The hidden test patch, applied after the candidate (and alone at baseline).
    pub fn test_patch(mut self, origin: impl Into<String>, text: impl Into<Vec<u8>>) -> Check {
        self.settings.test_patch = Some((origin.into(), text.into()));
        self
    }

    /// Add fail-to-pass test ids.
    pub fn f2p<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Check {
        self.settings.f2p.extend(ids.into_iter().map(Into::into));
        self
    }

    /// Add pass-to-pass test ids.
    pub fn p2p<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Check {
        self.settings.p2p.extend(ids.into_iter().map(Into::into));
        self
    }

    /// Replace the fail-to-pass ids given so far.
    pub fn replace_f2p<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Check {
        self.settings.f2p = ids.into_iter().map(Into::into).collect();
        self
    }

    /// Replace the pass-to-pass ids given so far.
    pub fn replace_p2p<S: Into<String>>(mut self, ids: impl IntoIterator<Item = S>) -> Check {
        self.settings.p2p = ids.into_iter().map(Into::into).collect();
        self
    }

    /// Use a preset runner.
    pub fn runner(mut self, preset: Preset) -> Check {
        self.settings.command = Some(TestCommand::preset(preset));
        self
    }

    /// Use a test command.
    pub fn command(mut self, command: TestCommand) -> Check {
        self.settings.command = Some(command);
        self
    }

    /// Per-command timeout (setup and tests each).
    pub fn timeout(mut self, timeout: Duration) -> Check {
        self.settings.timeout = timeout;
        self
    }

    /// Add an environment variable; `{workdir}` in the value becomes the checkout's path.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Check {
        self.settings.env.push((key.into(), value.into()));
        self
    }

    /// A command run before the tests of every run: in each fresh checkout, and in a pool slot
    /// before every use.
    pub fn setup_cmd(mut self, cmd: impl Into<String>) -> Check {
        self.settings.setup_cmd = Some(cmd.into());
        self
    }

    /// Run the setup command once per pool slot and base tree instead ([`Check::workdir_pool`]):
    /// for a setup that depends on the base alone (`npm ci` from the base's lock file), whose
    /// output the slot keeps. Without a pool every checkout is fresh, so it runs every time.
    pub fn setup_once(mut self, once: bool) -> Check {
        self.settings.setup_once = once;
        self
    }

    /// Run the baseline (default) or not.
    pub fn baseline(mut self, run: bool) -> Check {
        self.settings.baseline = run;
        self
    }

    /// Keep checkouts and logs under this directory instead of removing them.
    pub fn keep(mut self, dir: impl Into<PathBuf>) -> Check {
        self.settings.keep = Some(dir.into());
        self
    }

    /// Run the tests that did not pass again, up to `n` times, with just their ids; a test that
    /// fails and then passes is flaky.
    pub fn retries(mut self, n: usize) -> Check {
        self.settings.retries = n;
        self
    }

    /// Read the baseline from this cache when it holds it, and store it there when not.
    pub fn baseline_cache(mut self, cache: Arc<BaselineCache>) -> Check {
        self.settings.cache = Some(cache);
        self
    }

    /// Apply the candidate exactly or not at all: no offset or fuzz fallback.
    pub fn strict_apply(mut self, strict: bool) -> Check {
        self.settings.strict_apply = strict;
        self
    }

    /// Which paths are protected and what a candidate edit to them does (default: the
    /// default globs, warn).
    pub fn protection(mut self, protection: Protection) -> Check {
        self.settings.protection = Arc::new(protection);
        self
    }

    /// Take the checkouts from this pool, and leave them there for the next run, instead of
    /// making fresh ones and removing them.
    pub fn workdir_pool(mut self, pool: WorkdirPool) -> Check {
        self.settings.pool = Some(pool);
        self
    }

    /// Copy the runs' logs (the last [`LOG_TAIL`](crate::LOG_TAIL) bytes of each) into this directory, as
    /// `candidate-test.stdout.log` and so on, before the checkouts are removed.
    pub fn logs(mut self, dir: impl Into<PathBuf>) -> Check {
        self.settings.logs = Some(dir.into());
        self
    }

    /// Where the commands run (default: `auto`, see [`SandboxChoice`]).
    pub fn sandbox(mut self, choice: SandboxChoice) -> Check {
        self.settings.sandbox = choice;
        self
    }

    /// Run the commands in a container of this local image, the checkout mounted at the
    /// image's workdir.
    pub fn image(mut self, image: impl Into<String>) -> Check {
        self.settings.image = Some(image.into());
        self
    }

    /// Where the checkout is mounted in the image (default `/testbed`).
    pub fn image_workdir(mut self, dir: impl Into<PathBuf>) -> Check {
        self.settings.image_workdir = Some(dir.into());
        self
    }

    /// Let the tests use the network (the setup command always may).
    pub fn network(mut self, allow: bool) -> Check {
        self.settings.network = allow;
        self
    }

    /// Show this host path to the commands in the sandbox, read-only or `writable`, where the
    /// sandbox would hide it (bwrap's private `/tmp`) or lacks it (a container). It must exist.
    /// A path the user names in the test or setup command, `--python`, an `--env` value or
    /// a symbolic link of the base tree is shown read-only without this.
    pub fn sandbox_path(mut self, path: impl Into<PathBuf>, writable: bool) -> Check {
        self.settings.sandbox_paths.push((path.into(), writable));
        self
    }

    /// Pass this variable of patchgrade's environment to the commands (`LC_*`: a prefix).
    /// Only `PATH`, the user, language, time, the terminal, certificate authorities and what
    /// the runner needs pass by default: a key or token in the environment stays out of the
    /// tests, and so out of every output they write into.
    pub fn pass_env(mut self, name: impl Into<String>) -> Check {
        self.settings.pass_env.push(name.into());
        self
    }

    /// Bound each command's memory to this many bytes (default: a quarter of the machine's,
    /// at least 1 GiB, at most 8 GiB): in a control group of its own on the host and in
    /// bwrap, by the engine in a container. A candidate whose tests run into it is graded for
    /// it (`resource-limit`).
    pub fn memory(mut self, bytes: u64) -> Check {
        self.settings.limits.memory = bytes;
        self
    }

    /// Bound each command to this many processes and threads (default 4096).
    pub fn pids(mut self, n: u64) -> Check {
        self.settings.limits.pids = n;
        self
    }

    /// Whose rules grade the observations (default: patchgrade's own). The verdict records
    /// the other scoring's outcome where it differs, either way.
    pub fn scoring(mut self, scoring: Scoring) -> Check {
        self.settings.scoring = scoring;
        self
    }

    /// The Python interpreter the commands run (`python` on their `PATH`): its directory goes
    /// first on `PATH` (a virtualenv's `bin/python`, or, in a container, the image's, as SWE-bench's
    /// images keep it in `/opt/miniconda3/envs/testbed/bin`). A path as the commands see it.
    pub fn python(mut self, interpreter: impl Into<PathBuf>) -> Check {
        self.settings.python = Some(interpreter.into());
        self
    }

    /// Also find, run and grade the tests outside the task's lists that exercise what the
    /// candidate changes (see [`DownstreamMode`]); they are reported beside the outcome.
    pub fn downstream(mut self, mode: DownstreamMode) -> Check {
        self.settings.downstream = mode;
        self
    }

    /// Run at most this many downstream tests (found by imports: test files, or Rust tests
    /// and test modules), the most concerned first (default [`DEFAULT_DOWNSTREAM_MAX`]).
    pub fn downstream_max(mut self, n: usize) -> Check {
        self.settings.downstream_max = n;
        self
    }

    /// Count the downstream tests as P2P tests too: a patch that breaks a caller nothing in
    /// the task's lists covers is then graded as breaking (`no-op` becomes `regression`).
    pub fn downstream_counts_as_p2p(mut self, yes: bool) -> Check {
        self.settings.downstream_as_p2p = yes;
        self
    }

    /// Label the verdict with the project's `owner/name` (a SWE-bench instance's `repo`).
    pub fn repo_name(mut self, name: impl Into<String>) -> Check {
        self.settings.repo_name = Some(name.into());
        self
    }

    /// Label the verdict with a task id.
    pub fn instance_id(mut self, id: impl Into<String>) -> Check {
        self.settings.instance_id = Some(id.into());
        self
    }

    /// Withhold from a verdict of this check what would show an agent the hidden tests: the
    /// F2P ids and messages ([`Verdict::redact_f2p`]), and every text that quotes the test
    /// patch ([`Verdict::withhold_quotes`]). What `--redact-f2p` does.
    pub fn redact(&self, verdict: &mut Verdict) {
        verdict.redact_f2p();
        if let Some((_, text)) = &self.settings.test_patch {
            verdict.withhold_quotes(text);
        }
    }
}
