//! Running the tests in a prepared checkout: setup, attempts, retries, and what their logs
//! say when a run cannot be judged.

use super::early::Early;
use super::plan::Plan;
use super::prepare::Prepared;
use crate::judge::grade::retry_candidates;
use crate::judge::verdict::{ErrorCause, RunInfo};
use crate::observe::junit::JunitError;
use crate::observe::{Evidence, NotRunReason, Report, Requested, TestStatus};
use crate::run::TestCommand;
use crate::run::command::{with_workdir, with_workdir_raw};
use crate::run::limits::Hit;
use crate::run::preset::{FetchStep, SUPPORT_DIR_VAR, rejected_ids};
use crate::run::sandbox::Paths;
use crate::run::{Jail, Launcher, Limits, Termination, process};
use crate::util::time::ms;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A command's environment: variables to set, and names it must not inherit.
type CommandEnv = (Vec<(String, String)>, Vec<String>);

/// How many times the tests run again without the ids the runner refused: pytest before 6
/// names one missing file a run, and SWE-bench's data holds tasks with several ids that name
/// none (`[100%]`, read from a progress bar).
const REFUSAL_ROUNDS: usize = 4;

impl Plan {
    /// Setup, then the tests, in one prepared checkout, confined by the plan's sandbox: a
    /// first attempt (again without the ids the runner refused, if it refused some), then
    /// `--retries` rounds of the tests that did not pass.
    pub(super) async fn execute(
        &self,
        job: &Job<'_>,
        dir: &Path,
        prepared: &Prepared,
        hidden: &[PathBuf],
        keep: bool,
    ) -> Execution {
        let workdir = prepared.workdir.clone();
        let started = Instant::now();
        let fetch = job.command.fetch();
        for dir in fetch.iter().flat_map(|f| f.caches.iter().chain(&f.read)) {
            // Only a directory that exists can be shown, to the download step and then
            // read-only to the tests; one that cannot be made fails that step.
            let _ = std::fs::create_dir_all(dir);
        }
        let mut info = RunInfo {
            dir: keep.then(|| dir.to_path_buf()),
            seeded: prepared.seeded.as_ref().is_some_and(|s| s.planted),
            steps: prepared.steps,
            ..RunInfo::default()
        };
        let paths = self.paths(dir, &workdir, hidden);
        // With `--setup-once`, a pool slot runs the setup on its base once (before the
        // patches, for this run or an earlier one) and starts from its output.
        let once = self
            .settings
            .setup_cmd
            .as_ref()
            .filter(|_| self.settings.setup_once)
            .zip(prepared.lease.as_ref())
            .is_some_and(|(cmd, lease)| lease.setup_done(&self.setup_key(cmd)));
        info.setup_reused = once && !prepared.setup_on_base;
        let setup = self.settings.setup_cmd.as_ref().filter(|_| !once);
        // A step that runs the project's code ran once at the base, before either side.
        let download = fetch.as_ref().and_then(|f| match f.step {
            FetchStep::Script(script) => Some((script, &f.caches)),
            FetchStep::TestCommandAtBase => None,
        });
        let online = setup.is_some() || download.is_some();
        let opening = Instant::now();
        let opened = self.open_side(prepared, paths, online, job).await;
        info.steps.sandbox_ms = ms(opening.elapsed());
        let (jail, env, gated) = match opened {
            Ok(opened) => opened,
            Err(failure) => {
                info.duration_ms = ms(started.elapsed());
                return Execution {
                    info,
                    evidence: Err(failure),
                };
            }
        };
        let runner = Attempts {
            ahead: std::sync::Mutex::new(prepared.take_launcher()),
            gated: std::sync::Mutex::new(gated),
            plan: self,
            job,
            dir,
            env,
            pass_env: self.pass_env_for(),
            workdir,
            hold: prepared.lease.as_ref().map(|l| l.lock_fd()),
            jail: &jail,
            online: Vec::new(),
        };
        let evidence = async {
            if let Some((script, caches)) = download {
                let fetching = Instant::now();
                let fetched = runner.fetch(script, caches).await;
                info.steps.fetch_ms = ms(fetching.elapsed());
                fetched?;
            }
            if let Some(setup) = setup {
                let setting_up = Instant::now();
                let ran = runner.setup(setup, "setup").await;
                info.steps.setup_ms = ms(setting_up.elapsed());
                ran?;
            }
            if online && let Err(e) = jail.end_setup().await {
                let why = format!("the network could not be taken away after setup: {e}");
                return Err(Failure::new(ErrorCause::SandboxFailed, why));
            }
            runner.tests(&mut info).await
        }
        .await;
        // A path the sandbox hides fails the command as a missing file would: say so.
        let evidence = evidence.map_err(|mut failure| {
            failure.hint = jail.hidden_hint(&failure.message);
            failure
        });
        info.duration_ms = ms(started.elapsed());
        log::info!(
            "{} run: {} (setup and tests {} ms)",
            dir.file_name().unwrap_or_default().to_string_lossy(),
            info.steps.describe(),
            info.duration_ms
        );
        Execution { info, evidence }
    }

    /// A launcher for a side's first command, to make while its checkout is written: where
    /// the commands are host processes (a container's engine bounds its own).
    pub(super) fn launcher(&self) -> Option<Launcher> {
        self.sandbox
            .tools_on_host()
            .then(|| Launcher::ahead(self.settings.limits))
            .flatten()
    }

    /// The side's sandbox, open, and the environment its commands get there (with the
    /// runner's own files, written where code under test cannot rewrite them).
    pub(super) async fn open_jail(
        &self,
        paths: Paths,
        online: bool,
        job: &Job<'_>,
    ) -> Result<(Jail, (Vec<(String, String)>, Vec<String>)), Failure> {
        let jail = Jail::open(
            &self.sandbox,
            paths,
            self.settings.network,
            online,
            self.settings.limits,
        )
        .await
        .map_err(|e| {
            let why = format!("the {} sandbox could not start: {e}", self.sandbox.name());
            Failure::new(ErrorCause::SandboxFailed, why)
        })?;
        let mut env = self.env_for(&jail.workdir());
        let support = job.command.support_files();
        if !support.is_empty() {
            let seen = jail.support(support).map_err(|e| {
                let why = format!("the runner's files could not be written: {e}");
                Failure::new(ErrorCause::SandboxFailed, why)
            })?;
            env.0.push((SUPPORT_DIR_VAR.to_string(), seen));
        }
        Ok((jail, env))
    }

    /// The side's sandbox and its commands' environment: opened while its checkout was
    /// written, its first command held at the gate (see `early`), or opened now.
    async fn open_side(
        &self,
        prepared: &Prepared,
        paths: Paths,
        online: bool,
        job: &Job<'_>,
    ) -> Result<(Jail, CommandEnv, Option<process::Gated>), Failure> {
        match prepared.take_early() {
            Some(early) => {
                let Early { gated, jail, env } = *early;
                Ok((jail, env, Some(gated)))
            }
            None => {
                let (jail, env) = self.open_jail(paths, online, job).await?;
                Ok((jail, env, None))
            }
        }
    }

    /// Run the `--setup-once` setup in a pool slot's checkout of the base, before any patch,
    /// in the plan's sandbox with the network: its output becomes the slot's to start from.
    pub(super) async fn setup_on_base(
        &self,
        dir: &Path,
        prepared: &Prepared,
        hidden: &[PathBuf],
        cmd: &str,
    ) -> Result<(), Failure> {
        let paths = self.paths(dir, &prepared.workdir, hidden);
        let jail = Jail::open(
            &self.sandbox,
            paths,
            self.settings.network,
            true,
            self.settings.limits,
        )
        .await
        .map_err(|e| {
            let why = format!("the {} sandbox could not start: {e}", self.sandbox.name());
            Failure::new(ErrorCause::SandboxFailed, why)
        })?;
        let job = self.tests_job();
        let runner = Attempts {
            ahead: std::sync::Mutex::new(prepared.take_launcher()),
            gated: std::sync::Mutex::new(None),
            plan: self,
            job: &job,
            dir,
            env: self.env_for(&jail.workdir()),
            pass_env: self.pass_env_for(),
            workdir: prepared.workdir.clone(),
            hold: prepared.lease.as_ref().map(|l| l.lock_fd()),
            jail: &jail,
            online: Vec::new(),
        };
        // A path the sandbox hides fails the setup as a missing file would: say so.
        runner
            .setup(cmd, "setup-base")
            .await
            .map_err(|mut failure| {
                failure.hint = jail.hidden_hint(&failure.message);
                failure
            })
    }

    /// A side's sandbox paths: its checkout, reports and scripts; the repository's objects
    /// and `--python`'s directory, read-only; what must stay hidden; the host paths the user
    /// named and the toolchains in the home, shown read-only; what the user asked to show.
    pub(super) fn paths(&self, dir: &Path, workdir: &Path, hidden: &[PathBuf]) -> Paths {
        Paths {
            workdir: workdir.to_path_buf(),
            out: dir.join("out"),
            scripts: dir.join("scripts"),
            readonly: vec![self.source.objects_dir().to_path_buf()],
            tools: self
                .settings
                .python
                .as_deref()
                .and_then(Path::parent)
                .map(Path::to_path_buf)
                .into_iter()
                .collect(),
            hidden: hidden.to_vec(),
            // The toolchains in the home, and what the download step wrote there, read-only.
            named: self
                .host_paths
                .iter()
                .cloned()
                .chain(crate::run::preset::toolchain_dirs())
                .collect(),
            shown: self.shown.clone(),
        }
    }

    /// What a `--setup-once` setup depends on: the command, the base tree, the environment.
    pub(super) fn setup_key(&self, cmd: &str) -> String {
        let key = serde_json::to_vec(&(cmd, self.source.tree.to_string(), &self.settings.env));
        crate::util::digest::hash(&key.unwrap_or_default())
    }

    /// The variables of the user's environment the commands inherit: the command's own list
    /// ([`TestCommand::pass_env`]) and the names the user passes (`--pass-env`).
    pub(super) fn pass_env_for(&self) -> Vec<String> {
        let mut names = self.command.pass_env();
        names.extend(self.settings.pass_env.iter().cloned());
        names
    }

    /// The environment of the commands: `{workdir}` filled in (as the commands see it), and
    /// the preset's removals unless the user set the variable.
    pub(super) fn env_for(&self, workdir: &Path) -> (Vec<(String, String)>, Vec<String>) {
        let env: Vec<(String, String)> = self
            .settings
            .env
            .iter()
            .map(|(k, v)| (k.clone(), with_workdir_raw(v, workdir)))
            .collect();
        let remove: Vec<String> = self
            .command
            .env_remove()
            .iter()
            .filter(|k| !env.iter().any(|(e, _)| e == *k))
            .map(|k| k.to_string())
            .collect();
        (env, remove)
    }
}

/// Runs the test command in one checkout.
pub(super) struct Attempts<'a> {
    pub(super) plan: &'a Plan,
    pub(super) job: &'a Job<'a>,
    /// The side's directory: its logs here, its reports and scripts in the jail's.
    pub(super) dir: &'a Path,
    /// The checkout on the host (the ids are selected by reading it).
    pub(super) workdir: PathBuf,
    pub(super) env: (Vec<(String, String)>, Vec<String>),
    /// The variables of the user's environment the commands inherit, by name.
    pub(super) pass_env: Vec<String>,
    /// A pool slot's lock, held by the commands too (see [`process::Spec::hold_open`]).
    pub(super) hold: Option<std::os::fd::RawFd>,
    pub(super) jail: &'a Jail,
    /// The first command's launcher, its groups joined while the checkout was made.
    pub(super) ahead: std::sync::Mutex<Option<Launcher>>,
    /// The first command, started while the checkout was made and held at the sandbox's gate
    /// (see `early`).
    pub(super) gated: std::sync::Mutex<Option<process::Gated>>,
    /// Host directories the test command may write, with the network: the caches of the
    /// download at the base ([`FetchStep::TestCommandAtBase`]). Empty for a side's tests,
    /// which are offline.
    pub(super) online: Vec<PathBuf>,
}

/// One finished attempt whose report could be read.
pub(super) struct Attempt {
    pub(super) report: Report,
    pub(super) termination: Termination,
    pub(super) spec: process::Spec,
}

impl Attempt {
    /// The end of both logs, where runners say which ids they refused.
    fn output(&self) -> String {
        const MAX: u64 = 256 * 1024;
        let read = |p: &Path| String::from_utf8_lossy(&process::tail(p, MAX)).into_owned();
        format!("{}\n{}", read(&self.spec.stdout), read(&self.spec.stderr))
    }

    /// No test case at all is not an observation of the requested tests: pytest, for one,
    /// writes such a report when it rejects an id. (A module that fails to import still leaves
    /// an error test case, and is graded.)
    fn empty_report_error(&self, timeout: Duration) -> Failure {
        Failure::new(
            ErrorCause::EmptyReport,
            explain(
                "test command",
                self.termination,
                timeout,
                " and its JUnit report holds no test case",
                &self.spec,
            ),
        )
    }
}

impl Attempts<'_> {
    /// A command of this side: `network` for the setup command, which may always have it;
    /// `writable`: host directories it alone may write (a download step's cache).
    fn spec(
        &self,
        script: String,
        log: &str,
        network: bool,
        writable: &[PathBuf],
    ) -> process::Spec {
        self.jail
            .launch(log, self.env.clone(), network, writable, &self.pass_env)
            .spec(
                script,
                &self.workdir,
                self.plan.settings.timeout,
                (self.dir, log),
                self.hold,
            )
    }

    /// The setup command, with the network; `log` names its script and logs.
    pub(super) async fn setup(&self, cmd: &str, log: &str) -> Result<(), Failure> {
        let script = self
            .plan
            .with_python(with_workdir(cmd, &self.jail.workdir()));
        let setup = self.spec(script, log, true, &[]);
        match self.run(&setup).await {
            Ok(f) if f.termination == Termination::Exited(0) => Ok(()),
            Ok(f) => Err(Failure::new(
                ErrorCause::SetupFailed,
                explain(
                    "setup command",
                    f.termination,
                    self.plan.settings.timeout,
                    "",
                    &setup,
                ),
            )),
            Err(e) => Err(Failure::new(
                ErrorCause::CommandFailedToStart,
                format!("setup command could not start: {e}"),
            )),
        }
    }

    /// The preset's download step, with the network and its cache writable: its failure is
    /// the setup's (the candidate's, when its manifest names what cannot be had).
    async fn fetch(&self, script: &str, caches: &[PathBuf]) -> Result<(), Failure> {
        let spec = with_workdir(script, &self.jail.workdir());
        let spec = self.spec(self.plan.with_python(spec), "fetch", true, caches);
        match self.run(&spec).await {
            Ok(f) if f.termination == Termination::Exited(0) => Ok(()),
            Ok(f) => Err(Failure::new(
                ErrorCause::SetupFailed,
                explain(
                    &format!("the dependency download (`{script}`)"),
                    f.termination,
                    self.plan.settings.timeout,
                    "",
                    &spec,
                ),
            )),
            Err(e) => Err(Failure::new(
                ErrorCause::CommandFailedToStart,
                format!("the dependency download could not start: {e}"),
            )),
        }
    }

    /// Run one command; nothing it started survives it, in the sandbox either.
    async fn run(&self, spec: &process::Spec) -> std::io::Result<process::Finished> {
        let gated = self.gated.lock().ok().and_then(|mut g| g.take());
        let finished = match gated {
            Some(gated) => process::release(gated, spec).await,
            None => {
                let ahead = self.ahead.lock().ok().and_then(|mut a| a.take());
                process::run_from(spec, ahead).await
            }
        };
        if !matches!(&finished, Ok(f) if matches!(f.termination, Termination::Exited(_))) {
            self.jail.settle().await;
        }
        finished
    }

    /// The tests: a first attempt (again without the ids the runner refused, if it refused
    /// some), then `--retries` rounds of the tests that did not pass.
    async fn tests(&self, info: &mut RunInfo) -> Result<Evidence, Failure> {
        let job = self.job;
        let syntax = job.command.ids();
        let requested = job.requested;
        let all = job.ids.clone();
        let mut evidence = Evidence::default();
        let mut ids = all;
        let mut attempt = self.attempt(&ids, 0, info).await?;
        // pytest refuses the whole run for unknown ids (and for the first missing file only):
        // leave the refused ids out and run the others again, as long as each round refuses
        // some, for at most REFUSAL_ROUNDS rounds.
        while attempt.report.cases.is_empty() {
            let rejected = rejected_ids(syntax, &attempt.output(), &ids);
            let mut rest: Vec<String> = ids
                .iter()
                .filter(|id| !rejected.iter().any(|(r, _)| r == *id))
                .cloned()
                .collect();
            if rejected.is_empty() || rest.is_empty() || info.attempts > REFUSAL_ROUNDS {
                return Err(attempt.empty_report_error(self.plan.settings.timeout));
            }
            // The files of ids that exist but name no test are run whole, so the report
            // holds the ids the user might have meant.
            for (id, why) in &rejected {
                let file = id.split("::").next().unwrap_or_default();
                if why == "not found" && !rest.iter().any(|r| r == file) {
                    rest.push(file.to_string());
                }
            }
            evidence.rejected.extend(rejected);
            ids = rest;
            attempt = self.attempt(&ids, info.attempts, info).await?;
        }
        // A runner that failed inside wrote what it could (its own failure is not a test):
        // whose doing that was, and what stands of the report, is the conclusion's to say.
        if let Some(which) = attempt.report.runner_failure() {
            let detail = format!(" after an internal error of the runner ({which})");
            let timeout = self.plan.settings.timeout;
            let spec = &attempt.spec;
            evidence.runner_failure = Some(explain(
                "test command",
                attempt.termination,
                timeout,
                &detail,
                spec,
            ));
            evidence
                .attempts
                .push(attempt.report.without_runner_failure());
            return Ok(evidence);
        }
        let report = attempt.report;
        evidence.attempts.push(report);
        for _ in 0..self.plan.settings.retries {
            let again = retry_candidates(requested, &evidence.index(syntax));
            if again.is_empty() {
                break;
            }
            let n = info.attempts;
            // A retry that cannot be read adds nothing; the attempts so far stand.
            match self.attempt(&again, n, info).await {
                Ok(retry) => evidence.attempts.push(retry.report),
                Err(_) => break,
            }
        }
        Ok(evidence)
    }

    /// A run killed at its timeout: what a runner that writes as it goes (a report per class
    /// or file) reported before it was killed stands, its failures at least (see
    /// `judge::grade`).
    fn timed_out(&self, junit: PathBuf, info: &mut RunInfo, spec: &process::Spec) -> Failure {
        let reading = Instant::now();
        let partial = Report::read_output(&junit, self.job.command.junit_is_dir())
            .ok()
            .filter(|r| !r.cases.is_empty())
            .map(Box::new);
        info.steps.report_ms += ms(reading.elapsed());
        if partial.is_some() && info.dir.is_some() {
            info.reports.push(junit);
        }
        Failure {
            partial,
            ..Failure::new(
                ErrorCause::Timeout,
                explain(
                    "test command",
                    Termination::TimedOut,
                    self.plan.settings.timeout,
                    "",
                    spec,
                ),
            )
        }
    }

    /// Run the tests for these ids once; attempt `n` writes `junit-n` (the first, `junit`).
    pub(super) async fn attempt(
        &self,
        ids: &[String],
        n: usize,
        info: &mut RunInfo,
    ) -> Result<Attempt, Failure> {
        let command = self.job.command;
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let (junit, seen) = self.jail.out(&if command.junit_is_dir() {
            format!("junit{suffix}")
        } else {
            format!("junit{suffix}.xml")
        });
        let tests = command.select(ids, &self.workdir, &self.job.files);
        let script = self.plan.with_python(command.template().render(
            &tests,
            &seen,
            &self.jail.workdir(),
        ));
        let online = !self.online.is_empty();
        let log = format!("test{suffix}");
        let spec = self.spec(script.clone(), &log, online, &self.online);
        info.attempts += 1;
        if n == 0 {
            info.command = Some(script);
        }
        let running = Instant::now();
        let finished = self.run(&spec).await;
        info.steps.command_ms += ms(running.elapsed());
        let finished = finished.map_err(|e| {
            Failure::new(
                ErrorCause::CommandFailedToStart,
                format!("test command could not start: {e}"),
            )
        })?;
        if n == 0 {
            info.termination = Some(finished.termination);
        }
        // A run that ran into its limits and left no usable report: the limit, not a crash.
        let limits = self.plan.settings.limits;
        let limited = move |failure: Failure| match finished.limit_hit {
            Some(hit) => Failure {
                message: format!("{}; {}", limit_text(hit, limits), failure.message),
                cause: ErrorCause::ResourceLimit,
                ..failure
            },
            None => failure,
        };
        if finished.termination == Termination::TimedOut {
            return Err(limited(self.timed_out(junit, info, &spec)));
        }
        let reading = Instant::now();
        let report = Report::read_output(&junit, command.junit_is_dir());
        info.steps.report_ms += ms(reading.elapsed());
        let report = report
            .map_err(|e| match e {
                JunitError::Missing(_) | JunitError::EmptyDir(_) => Failure::new(
                    ErrorCause::NoReport,
                    explain(
                        "test command",
                        finished.termination,
                        self.plan.settings.timeout,
                        " and wrote no JUnit report",
                        &spec,
                    ),
                ),
                other => Failure::new(ErrorCause::UnreadableReport, other.to_string()),
            })
            .map_err(limited)?;
        if command.exit_reflects_failures()
            && let Some(why) = contradiction(finished.termination, &report)
        {
            return Err(Failure::new(
                ErrorCause::ReportContradictsExit,
                format!(
                    "the test command {} but its report {why}: one of them is not what the \
                     tests did",
                    describe(finished.termination, self.plan.settings.timeout)
                ),
            ));
        }
        if info.dir.is_some() {
            info.reports.push(junit);
        }
        if report.cases.is_empty() && finished.limit_hit.is_some() {
            return Err(limited(Failure::new(
                ErrorCause::EmptyReport,
                "its JUnit report holds no test case".into(),
            )));
        }
        Ok(Attempt {
            report,
            termination: finished.termination,
            spec,
        })
    }
}

/// What one side runs: a command, the ids handed to it, the test files it runs whole, and the
/// requested tests, those of which that did not pass are retried.
pub(super) struct Job<'a> {
    pub(super) command: &'a TestCommand,
    pub(super) ids: Vec<String>,
    pub(super) files: Vec<String>,
    pub(super) requested: Requested<'a>,
}

pub(super) struct Execution {
    pub(super) info: RunInfo,
    pub(super) evidence: Result<Evidence, Failure>,
}

/// A run that left nothing to grade: why, for people, and what its report held first.
#[derive(Debug)]
pub(super) struct Failure {
    pub(super) cause: ErrorCause,
    pub(super) message: String,
    /// The tests a runner that was killed had already reported.
    pub(super) partial: Option<Box<Report>>,
    /// Paths of the host the output names that the sandbox hides, and how to show them:
    /// said only where the failure is an error (the environment's to fix), never to a
    /// candidate graded for it, whose output could probe what the host has.
    pub(super) hint: String,
}

impl Failure {
    fn new(cause: ErrorCause, message: String) -> Failure {
        Failure {
            cause,
            message,
            partial: None,
            hint: String::new(),
        }
    }

    /// As an error: what a run that cannot be judged records.
    pub(super) fn into_error(self) -> (ErrorCause, String) {
        (self.cause, self.message + &self.hint)
    }

    /// Why the tests did not run, when the command that ran them may be what cut the run
    /// short: a command that ended without a usable report, ran past the timeout, or whose
    /// setup failed. `None` for what a candidate's code cannot cause (a sandbox, or a command
    /// that would not start) and for a report that contradicts its runner's exit status, which
    /// says one of them is false rather than that the tests did not run. Whether the candidate
    /// is to blame is the caller's to decide: only when the baseline was judged.
    pub(super) fn not_run_reason(&self) -> Option<NotRunReason> {
        match self.cause {
            ErrorCause::NoReport
            | ErrorCause::EmptyReport
            | ErrorCause::UnreadableReport
            | ErrorCause::RunnerCrashed => Some(NotRunReason::Crashed),
            ErrorCause::Timeout => Some(NotRunReason::TimedOut),
            ErrorCause::SetupFailed => Some(NotRunReason::SetupFailed),
            ErrorCause::ResourceLimit => Some(NotRunReason::ResourceLimit),
            ErrorCause::CommandFailedToStart
            | ErrorCause::SandboxFailed
            | ErrorCause::ReportContradictsExit
            | ErrorCause::TestPatchDoesNotApply
            | ErrorCause::CheckoutFailed
            | ErrorCause::InvalidTask
            | ErrorCause::NoRequestedTestRan
            | ErrorCause::GoldDoesNotApply
            | ErrorCause::NotEvaluated => None,
        }
    }
}

/// Where an exit status and a report disagree, in words: a runner whose status reflects its
/// tests exits 0 exactly when no test in its report failed or errored. A report with no test
/// case is judged elsewhere.
fn contradiction(termination: Termination, report: &Report) -> Option<&'static str> {
    let Termination::Exited(code) = termination else {
        return None;
    };
    if report.cases.is_empty() {
        return None;
    }
    let failing = report
        .cases
        .iter()
        .any(|c| matches!(c.observation.status, TestStatus::Failed | TestStatus::Error));
    match (code == 0, failing) {
        (true, true) => Some("has failing tests"),
        (false, false) => Some("has no failing test"),
        _ => None,
    }
}

/// How much of each log `Check::logs` keeps: the end, where runners write their errors.
pub const LOG_TAIL: u64 = 1024 * 1024;

/// Copy each run's logs (their tails) out of the run directory; best effort, as logs are an
/// aid and never part of the verdict.
pub(super) fn copy_logs(root: &Path, to: &Path) {
    let _ = std::fs::create_dir_all(to);
    for run in ["candidate", "baseline"] {
        let Ok(entries) = std::fs::read_dir(root.join(run)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.ends_with(".log") {
                let tail = process::tail(&entry.path(), LOG_TAIL);
                let _ = std::fs::write(to.join(format!("{run}-{name}")), tail);
            }
        }
    }
}

/// Which limit a command ran into, in words.
fn limit_text(hit: Hit, limits: Limits) -> String {
    match hit {
        Hit::Memory => format!(
            "the test command ran into its memory limit of {} MiB (--memory), and the kernel \
             killed it",
            limits.memory >> 20
        ),
        Hit::Pids => format!(
            "the test command ran into its limit of {} processes (--pids)",
            limits.pids
        ),
    }
}

pub(super) fn describe(t: Termination, timeout: Duration) -> String {
    match t {
        Termination::Exited(code) => format!("exited with code {code}"),
        Termination::Signaled(sig) => format!("was killed by signal {sig}"),
        Termination::TimedOut => format!(
            "timed out after {} and its process group was killed",
            humantime::format_duration(timeout)
        ),
    }
}

/// `<what> exited with code 4<detail>; its output ends with: <tail>`.
pub(super) fn explain(
    what: &str,
    t: Termination,
    timeout: Duration,
    detail: &str,
    spec: &process::Spec,
) -> String {
    format!(
        "{what} {}{detail}; its output ends with:\n{}",
        describe(t, timeout),
        log_tail(spec)
    )
}

/// The last lines of a command's stderr (or stdout when stderr holds nothing to read), for
/// error messages. Terminal escapes are taken out: Maven, even in batch mode, ends its stderr
/// with colour resets and writes its errors to stdout.
pub(super) fn log_tail(spec: &process::Spec) -> String {
    const MAX: u64 = 2000;
    let read = |path: &Path| {
        let bytes = strip_ansi_escapes::strip(process::tail(path, MAX));
        String::from_utf8_lossy(&bytes).trim().to_string()
    };
    let err = read(&spec.stderr);
    let text = if err.is_empty() {
        read(&spec.stdout)
    } else {
        err
    };
    if text.is_empty() {
        "(no output)".into()
    } else {
        text.lines()
            .rev()
            .take(15)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    }
}
