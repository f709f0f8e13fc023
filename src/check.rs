//! The `check` pipeline: one candidate patch, graded end to end from what is observed.

use crate::classify::{Axis, Classification, Effect, Group, Observed, classify};
use crate::ids::{IdSyntax, Index};
use crate::junit::{JunitError, Report};
use crate::outcome::{Level, Outcome};
use crate::patch::{Patch, PatchError};
use crate::process::{self, Termination};
use crate::runner::{self, MissingJunit, Preset, Template};
use crate::status::TestStatus;
use crate::verdict::*;
use crate::workspace::{ApplyFailure, Checkout, Source, SourceError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The default per-command timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How the tests are run: a template and the syntax of the ids it takes.
#[derive(Debug, Clone)]
pub struct TestCommand {
    template: Template,
    ids: IdSyntax,
    preset: Option<Preset>,
}

impl TestCommand {
    /// A preset's command.
    pub fn preset(preset: Preset) -> TestCommand {
        TestCommand {
            template: Template::new(preset.template()).expect("presets write {junit}"),
            ids: preset.id_syntax(),
            preset: Some(preset),
        }
    }

    /// A custom template with the given id syntax.
    pub fn custom(template: &str, ids: IdSyntax) -> Result<TestCommand, MissingJunit> {
        Ok(TestCommand {
            template: Template::new(template)?,
            ids,
            preset: None,
        })
    }

    /// A custom template that keeps a preset's id syntax and environment handling.
    pub fn custom_for(template: &str, preset: Preset) -> Result<TestCommand, MissingJunit> {
        Ok(TestCommand {
            template: Template::new(template)?,
            ids: preset.id_syntax(),
            preset: Some(preset),
        })
    }
}

/// Bad input: nothing was run, nothing is left behind.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The repository or base revision.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// A patch that is not a diff.
    #[error("{origin}: {source}")]
    Patch {
        /// Where the patch came from (a file name, `stdin`, `task file`).
        origin: String,
        /// What is wrong.
        source: PatchError,
    },
    /// The test command.
    #[error(transparent)]
    Template(#[from] MissingJunit),
    /// No test ids at all.
    #[error("no test ids: give --f2p and/or --p2p (or FAIL_TO_PASS/PASS_TO_PASS in the task file)")]
    NoIds,
    /// An id in both lists.
    #[error("test id `{0}` is listed as both fail-to-pass and pass-to-pass")]
    IdInBothGroups(String),
    /// No test command.
    #[error("no test command: give --runner or --test-cmd")]
    NoCommand,
    /// The `--keep` directory.
    #[error("{path}: {reason}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// One candidate patch to grade against a task. Build it, then [`Check::run`].
///
/// ```no_run
/// # async fn demo() -> Result<(), patchgrade::CheckError> {
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
    baseline: bool,
    keep: Option<PathBuf>,
    instance_id: Option<String>,
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
            baseline: true,
            keep: None,
            instance_id: None,
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

    /// A command run once in each fresh checkout before its tests.
    pub fn setup_cmd(mut self, cmd: impl Into<String>) -> Check {
        self.setup_cmd = Some(cmd.into());
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

    /// Label the verdict with a task id.
    pub fn instance_id(mut self, id: impl Into<String>) -> Check {
        self.instance_id = Some(id.into());
        self
    }

    /// Grade the patch. `Err` only for bad input; everything observed is in the verdict.
    pub async fn run(&self) -> Result<Verdict, CheckError> {
        let started = Instant::now();
        let plan = self.validate()?;
        let mut draft = Draft::new(self, &plan);
        let Some(candidate) = plan.candidate.clone() else {
            return Ok(draft.finish(Outcome::EmptyPatch, None, None, started));
        };
        draft.patch.files = candidate.files().to_vec();

        let root = Arc::new(RunRoot::new(self.keep.as_deref())?);
        let prepare_started = Instant::now();
        let cand_dir = root.path().join("candidate");
        let base_dir = root.path().join("baseline");
        let cand = blocking(root.clone(), {
            let (source, tp, dir) = (
                plan.source.clone(),
                plan.test_patch.clone(),
                cand_dir.clone(),
            );
            move || prepare_candidate(&source, &candidate, tp.as_ref(), &dir)
        });
        let base = async {
            if !self.baseline {
                return None;
            }
            let (source, tp, dir) = (
                plan.source.clone(),
                plan.test_patch.clone(),
                base_dir.clone(),
            );
            Some(
                blocking(root.clone(), move || {
                    prepare_baseline(&source, tp.as_ref(), &dir)
                })
                .await,
            )
        };
        let (cand, base) = tokio::join!(cand, base);
        draft.timings.prepare_ms = ms(prepare_started.elapsed());

        // A broken task (test patch or checkout failing at base) outranks anything the
        // candidate did: no verdict about the candidate means anything then.
        let run_baseline = match base {
            None => false,
            Some(Ok(())) => true,
            Some(Err(other)) => {
                return Ok(draft.fail(Stage::Baseline, other.into_error(), started));
            }
        };
        match cand {
            Ok(Candidate::Applied { overridden }) => draft.patch.overridden_files = overridden,
            Ok(Candidate::Rejected(failure)) => {
                draft.patch.apply_failure = Some(failure);
                return Ok(draft.finish(Outcome::PatchFailed, None, None, started));
            }
            Err(other) => return Ok(draft.fail(Stage::Candidate, other.into_error(), started)),
        }

        let test_started = Instant::now();
        let keep = self.keep.is_some();
        let (cand_run, base_run) = tokio::join!(self.execute(&plan, &cand_dir, keep), async {
            if run_baseline {
                Some(self.execute(&plan, &base_dir, keep).await)
            } else {
                None
            }
        });
        draft.timings.test_ms = ms(test_started.elapsed());
        draft.runs.candidate = Some(cand_run.info);
        draft.runs.baseline = base_run.as_ref().map(|r| r.info.clone());

        // A baseline that cannot be judged means the task, not the candidate, is in question.
        let base_report = match base_run.map(|r| r.report) {
            None => None,
            Some(Ok(report)) => Some(report),
            Some(Err(e)) => return Ok(draft.fail(Stage::Baseline, e, started)),
        };
        let cand_report = match cand_run.report {
            Ok(report) => report,
            Err(e) => return Ok(draft.fail(Stage::Candidate, e, started)),
        };

        let syntax = plan.command.ids;
        let cand_index = Index::new(&cand_report);
        let base_index = base_report.as_ref().map(Index::new);
        let mut ambiguous = Vec::new();
        let observed: Vec<Observed<'_>> = plan
            .groups()
            .map(|(id, group)| {
                let after = cand_index.resolve(syntax, id);
                if after.matches > 1 {
                    ambiguous.push(id.to_string());
                }
                Observed {
                    id,
                    group,
                    after: after.observation,
                    base: base_index
                        .as_ref()
                        .map(|i| i.resolve(syntax, id).observation),
                }
            })
            .collect();
        let classification = classify(observed);
        draft.warn_about(&classification, self.baseline, ambiguous);
        // Bytecode is the evidence; a user who switched it off explicitly gets no guess.
        let bytecode_off = self
            .env
            .iter()
            .any(|(k, _)| Preset::Pytest.env_remove().contains(&k.as_str()));
        if plan.command.preset == Some(Preset::Pytest) && !bytecode_off {
            let files: Vec<String> = draft
                .patch
                .files
                .iter()
                .filter(|f| !draft.patch.overridden_files.contains(f))
                .cloned()
                .collect();
            if runner::patched_python_imported(&cand_dir.join("work"), &files) == Some(false) {
                draft.warnings.push(Warning {
                    kind: WarningKind::PatchedCodeNotImported,
                    message: "none of the patched Python files was imported from the checkout \
                              (no bytecode in its __pycache__): the tests probably imported an \
                              installed copy; see --env PYTHONPATH={workdir}/src in the README"
                        .into(),
                    tests: Vec::new(),
                });
            }
        }
        let outcome = classification.outcome;
        Ok(draft.finish(outcome, Some(classification), None, started))
    }

    /// Check every input before anything is created.
    fn validate(&self) -> Result<Plan, CheckError> {
        let command = self.command.clone().ok_or(CheckError::NoCommand)?;
        if self.f2p.is_empty() && self.p2p.is_empty() {
            return Err(CheckError::NoIds);
        }
        if let Some(id) = self.f2p.iter().find(|id| self.p2p.contains(id)) {
            return Err(CheckError::IdInBothGroups(id.clone()));
        }
        let parse = |(origin, text): &(String, Vec<u8>)| {
            Patch::parse(text).map_err(|source| CheckError::Patch {
                origin: origin.clone(),
                source,
            })
        };
        let candidate = parse(&self.patch)?;
        let test_patch = match &self.test_patch {
            Some(tp) => parse(tp)?,
            None => None,
        };
        let source = Source::resolve(&self.repo, &self.base)?;
        Ok(Plan {
            source,
            candidate,
            test_patch,
            command,
            f2p: dedup(&self.f2p),
            p2p: dedup(&self.p2p),
        })
    }

    /// Setup and tests in one prepared checkout.
    async fn execute(&self, plan: &Plan, dir: &Path, keep: bool) -> Execution {
        let workdir = dir.join("work");
        let junit = dir.join("junit.xml");
        let ids: Vec<&str> = plan.groups().map(|(id, _)| id).collect();
        let command = plan.command.template.render(&ids, &junit, &workdir);
        let env: Vec<(String, String)> = self
            .env
            .iter()
            .map(|(k, v)| (k.clone(), runner::with_workdir_raw(v, &workdir)))
            .collect();
        let env_remove: Vec<String> = plan
            .command
            .preset
            .map(|p| p.env_remove())
            .unwrap_or_default()
            .iter()
            .filter(|k| !env.iter().any(|(e, _)| e == *k))
            .map(|k| k.to_string())
            .collect();
        let spec = |script: String, log: &str| process::Spec {
            script,
            cwd: workdir.clone(),
            env: env.clone(),
            env_remove: env_remove.clone(),
            timeout: self.timeout,
            stdout: dir.join(format!("{log}.stdout.log")),
            stderr: dir.join(format!("{log}.stderr.log")),
        };
        let started = Instant::now();
        let mut info = RunInfo {
            command: command.clone(),
            termination: None,
            duration_ms: 0,
            dir: keep.then(|| dir.to_path_buf()),
        };
        let report = async {
            if let Some(setup) = &self.setup_cmd {
                let setup = spec(runner::with_workdir(setup, &workdir), "setup");
                match process::run(&setup).await {
                    Ok(f) if f.termination == Termination::Exited(0) => {}
                    Ok(f) => {
                        return Err((
                            ErrorCause::SetupFailed,
                            explain("setup command", f.termination, self.timeout, "", &setup),
                        ));
                    }
                    Err(e) => {
                        return Err((
                            ErrorCause::SetupFailed,
                            format!("setup command could not start: {e}"),
                        ));
                    }
                }
            }
            let test = spec(command.clone(), "test");
            let finished = process::run(&test).await.map_err(|e| {
                (
                    ErrorCause::CommandFailedToStart,
                    format!("test command could not start: {e}"),
                )
            })?;
            info.termination = Some(finished.termination);
            if finished.termination == Termination::TimedOut {
                return Err((
                    ErrorCause::Timeout,
                    format!(
                        "test command {}",
                        describe(finished.termination, self.timeout)
                    ),
                ));
            }
            let report = Report::read(&junit).map_err(|e| match e {
                JunitError::Missing(_) => (
                    ErrorCause::NoReport,
                    explain(
                        "test command",
                        finished.termination,
                        self.timeout,
                        " and wrote no JUnit report",
                        &test,
                    ),
                ),
                other => (ErrorCause::UnreadableReport, other.to_string()),
            })?;
            // No test case at all is not an observation of the requested tests: pytest, for
            // one, writes such a report when it rejects an id. (A module that fails to import
            // still leaves an error test case, and is graded.)
            if report.cases.is_empty() {
                return Err((
                    ErrorCause::EmptyReport,
                    explain(
                        "test command",
                        finished.termination,
                        self.timeout,
                        " and its JUnit report holds no test case",
                        &test,
                    ),
                ));
            }
            Ok(report)
        }
        .await;
        info.duration_ms = ms(started.elapsed());
        Execution { info, report }
    }
}

/// Validated inputs.
struct Plan {
    source: Source,
    candidate: Option<Patch>,
    test_patch: Option<Patch>,
    command: TestCommand,
    f2p: Vec<String>,
    p2p: Vec<String>,
}

impl Plan {
    fn groups(&self) -> impl Iterator<Item = (&str, Group)> {
        let f = self.f2p.iter().map(|id| (id.as_str(), Group::F2p));
        f.chain(self.p2p.iter().map(|id| (id.as_str(), Group::P2p)))
    }
}

fn dedup(ids: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    ids.iter()
        .filter(|id| seen.insert(id.as_str()))
        .cloned()
        .collect()
}

struct Execution {
    info: RunInfo,
    report: Result<Report, (ErrorCause, String)>,
}

/// The candidate checkout, prepared. A candidate that does not apply is an outcome
/// (`patch-failed`), not a failure to prepare.
enum Candidate {
    /// Applied; these candidate edits were replaced by the test patch's files.
    Applied { overridden: Vec<String> },
    /// Did not apply.
    Rejected(ApplyFailure),
}

/// Why a checkout could not be prepared.
enum Prep {
    /// The test patch does not apply: the task is broken.
    TestPatch(ApplyFailure),
    /// I/O or git trouble.
    Checkout(String),
}

impl Prep {
    fn into_error(self) -> (ErrorCause, String) {
        match self {
            Prep::TestPatch(f) => (
                ErrorCause::TestPatchDoesNotApply,
                format!("test patch does not apply: {f}"),
            ),
            Prep::Checkout(m) => (ErrorCause::CheckoutFailed, m),
        }
    }
}

fn prepare_candidate(
    source: &Source,
    candidate: &Patch,
    test_patch: Option<&Patch>,
    dir: &Path,
) -> Result<Candidate, Prep> {
    let checkout = create_checkout(source, dir)?;
    if let Err(failure) = checkout.apply(candidate) {
        return Ok(Candidate::Rejected(failure));
    }
    let Some(tp) = test_patch else {
        return Ok(Candidate::Applied {
            overridden: Vec::new(),
        });
    };
    // The hidden tests win: every file they touch goes back to base before they apply.
    let overridden = candidate
        .files()
        .iter()
        .filter(|f| tp.files().contains(f))
        .cloned()
        .collect();
    checkout
        .restore(tp.files())
        .map_err(|e| Prep::Checkout(e.to_string()))?;
    checkout.apply(tp).map_err(Prep::TestPatch)?;
    Ok(Candidate::Applied { overridden })
}

fn prepare_baseline(source: &Source, test_patch: Option<&Patch>, dir: &Path) -> Result<(), Prep> {
    let checkout = create_checkout(source, dir)?;
    if let Some(tp) = test_patch {
        checkout.apply(tp).map_err(Prep::TestPatch)?;
    }
    Ok(())
}

fn create_checkout(source: &Source, dir: &Path) -> Result<Checkout, Prep> {
    std::fs::create_dir_all(dir).map_err(|e| Prep::Checkout(format!("{}: {e}", dir.display())))?;
    Checkout::create(source, &dir.join("work")).map_err(|e| Prep::Checkout(e.to_string()))
}

/// Run blocking checkout work off the async threads. The closure holds the run root alive, so
/// a cancelled check still removes its directory only after the work has stopped writing to it.
async fn blocking<T: Send + 'static>(
    root: Arc<RunRoot>,
    work: impl FnOnce() -> Result<T, Prep> + Send + 'static,
) -> Result<T, Prep> {
    tokio::task::spawn_blocking(move || {
        let result = work();
        drop(root);
        result
    })
    .await
    .unwrap_or_else(|e| Err(Prep::Checkout(format!("checkout task failed: {e}"))))
}

/// The directory holding both runs: temporary (removed on drop) or kept.
enum RunRoot {
    Temp(tempfile::TempDir),
    Kept(PathBuf),
}

impl RunRoot {
    fn new(keep: Option<&Path>) -> Result<RunRoot, CheckError> {
        let dir_error = |path: &Path, reason: String| CheckError::Dir {
            path: path.to_path_buf(),
            reason,
        };
        match keep {
            None => tempfile::Builder::new()
                .prefix("patchgrade-")
                .tempdir()
                .map(RunRoot::Temp)
                .map_err(|e| dir_error(&std::env::temp_dir(), e.to_string())),
            Some(dir) => {
                for run in ["candidate", "baseline"] {
                    if dir.join(run).exists() {
                        return Err(dir_error(
                            &dir.join(run),
                            "already exists (--keep needs a fresh directory)".into(),
                        ));
                    }
                }
                std::fs::create_dir_all(dir).map_err(|e| dir_error(dir, e.to_string()))?;
                let dir = std::fs::canonicalize(dir).map_err(|e| dir_error(dir, e.to_string()))?;
                Ok(RunRoot::Kept(dir))
            }
        }
    }

    fn path(&self) -> &Path {
        match self {
            RunRoot::Temp(t) => t.path(),
            RunRoot::Kept(p) => p,
        }
    }
}

/// The verdict under construction.
struct Draft {
    task: TaskInfo,
    patch: PatchInfo,
    runs: Runs,
    warnings: Vec<Warning>,
    timings: Timings,
    f2p_total: usize,
}

impl Draft {
    fn new(check: &Check, plan: &Plan) -> Draft {
        Draft {
            task: TaskInfo {
                instance_id: check.instance_id.clone(),
                repo: plan.source.repo_dir.clone(),
                base: check.base.clone(),
                base_commit: plan.source.commit.to_string(),
                test_cmd: plan.command.template.as_str().to_string(),
            },
            patch: PatchInfo {
                test_patch_files: plan
                    .test_patch
                    .as_ref()
                    .map(|p| p.files().to_vec())
                    .unwrap_or_default(),
                ..PatchInfo::default()
            },
            runs: Runs::default(),
            warnings: Vec::new(),
            timings: Timings::default(),
            f2p_total: plan.f2p.len(),
        }
    }

    fn warn(&mut self, kind: WarningKind, message: String, tests: Vec<String>) {
        self.warnings.push(Warning {
            kind,
            message,
            tests,
        });
    }

    fn warn_about(&mut self, c: &Classification, baseline: bool, ambiguous: Vec<String>) {
        let ids = |pred: &dyn Fn(&crate::classify::GradedTest) -> bool| -> Vec<String> {
            c.tests
                .iter()
                .filter(|t| pred(t))
                .map(|t| t.id.clone())
                .collect()
        };
        if self.f2p_total == 0 {
            self.warn(
                WarningKind::EmptyF2p,
                "no fail-to-pass tests: the F2P axis is vacuously all-passing".into(),
                Vec::new(),
            );
        }
        let suspect = ids(&|t| t.group == Group::F2p && t.base_status == Some(TestStatus::Passed));
        if !suspect.is_empty() {
            self.warn(
                WarningKind::F2pPassesAtBase,
                format!(
                    "{} fail-to-pass test(s) already pass at base: the task is suspect",
                    suspect.len()
                ),
                suspect,
            );
        }
        let broken = ids(&|t| t.effect == Effect::BrokenAtBase);
        if !broken.is_empty() {
            self.warn(
                WarningKind::P2pBrokenAtBase,
                format!(
                    "{} pass-to-pass test(s) already fail at base and were not counted",
                    broken.len()
                ),
                broken,
            );
        }
        if c.p2p.total == 0 {
            self.warn(
                WarningKind::EmptyP2p,
                "no pass-to-pass test is counted: the P2P axis is vacuously all-kept".into(),
                Vec::new(),
            );
        }
        if !baseline {
            self.warn(
                WarningKind::BaselineSkipped,
                "baseline skipped: P2P tests that already failed at base are blamed on the patch"
                    .into(),
                Vec::new(),
            );
        }
        if !ambiguous.is_empty() {
            self.warn(
                WarningKind::AmbiguousId,
                "these ids matched more than one testcase; the first that did not pass decided"
                    .into(),
                ambiguous,
            );
        }
    }

    fn fail(
        self,
        stage: Stage,
        (cause, message): (ErrorCause, String),
        started: Instant,
    ) -> Verdict {
        let error = RunError {
            stage,
            cause,
            message,
        };
        self.finish(Outcome::Error, None, Some(error), started)
    }

    fn finish(
        mut self,
        outcome: Outcome,
        classification: Option<Classification>,
        error: Option<RunError>,
        started: Instant,
    ) -> Verdict {
        self.timings.total_ms = ms(started.elapsed());
        let empty = Axis {
            total: 0,
            passing: 0,
            level: Level::All,
            excluded: 0,
        };
        let (f2p, p2p, tests) = match classification {
            Some(c) => (c.f2p, c.p2p, c.tests),
            None => (empty, empty, Vec::new()),
        };
        let summary = match &error {
            Some(e) => format!(
                "{}: the {} run could not be judged ({})",
                outcome.title(),
                match e.stage {
                    Stage::Candidate => "candidate",
                    Stage::Baseline => "baseline",
                },
                serde_plain(&e.cause)
            ),
            None => format!("{}: {}", outcome.title(), outcome.meaning()),
        };
        Verdict {
            schema_version: SCHEMA_VERSION,
            outcome,
            summary,
            task: self.task,
            patch: self.patch,
            f2p,
            p2p,
            tests,
            error,
            warnings: self.warnings,
            runs: self.runs,
            timings: self.timings,
        }
    }
}

/// A kebab-case enum's serialised name.
fn serde_plain<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn describe(t: Termination, timeout: Duration) -> String {
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
fn explain(
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

/// The last lines of a command's stderr (or stdout when stderr is empty), for error messages.
fn log_tail(spec: &process::Spec) -> String {
    const MAX: u64 = 2000;
    let read = |path: &Path| -> String {
        use std::io::{Read, Seek, SeekFrom};
        let Ok(mut f) = std::fs::File::open(path) else {
            return String::new();
        };
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = f.seek(SeekFrom::Start(len.saturating_sub(MAX)));
        let mut buf = Vec::new();
        let _ = f.take(MAX).read_to_end(&mut buf);
        String::from_utf8_lossy(&buf).trim().to_string()
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

fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}
