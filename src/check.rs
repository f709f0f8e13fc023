//! The `check` pipeline: one candidate patch, graded end to end from what is observed.

use crate::cache::{self, BaselineCache};
use crate::draft::Draft;
use crate::grade::{Evidence, Requested, grade, retry_candidates};
use crate::ids::IdSyntax;
use crate::junit::{JunitError, Report};
use crate::outcome::Outcome;
use crate::patch::{Patch, PatchError};
use crate::pool::{self, WorkdirPool};
use crate::process::{self, Termination};
use crate::protect::{OnProtectedEdit, Protection};
use crate::runner::{self, MissingJunit, Preset, Template};
use crate::verdict::*;
use crate::workspace::{Applied, ApplyFailure, Caveat, Checkout, Source, SourceError};
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

impl TestCommand {
    /// The preset's version probe, when the command is the preset's own: a custom command may
    /// run other tools, whose versions nothing here knows.
    fn version_probe(&self) -> Option<&'static str> {
        self.preset
            .filter(|p| p.template() == self.template.as_str())
            .map(Preset::version_probe)
    }
}

/// Bad input: nothing was run, nothing is left behind.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
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
    /// A JUnit report given to `grade`.
    #[error(transparent)]
    Report(#[from] JunitError),
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
    retries: usize,
    cache: Option<Arc<BaselineCache>>,
    pool: Option<WorkdirPool>,
    strict_apply: bool,
    protection: Arc<Protection>,
    logs: Option<PathBuf>,
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
            retries: 0,
            cache: None,
            pool: None,
            strict_apply: false,
            protection: Arc::new(Protection::defaults()),
            logs: None,
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

    /// Forget the test ids given so far (to give a task's check other ids).
    pub fn clear_tests(mut self) -> Check {
        self.f2p.clear();
        self.p2p.clear();
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

    /// Label the verdict with a task id.
    pub fn instance_id(mut self, id: impl Into<String>) -> Check {
        self.instance_id = Some(id.into());
        self
    }

    /// Grade the patch. `Err` only for bad input; everything observed is in the verdict.
    pub async fn run(&self) -> Result<Verdict, CheckError> {
        let started = Instant::now();
        let plan = self.validate()?;
        let mut draft = Draft::new(self.task_info(&plan), plan.patch_info());
        let Some(candidate) = plan.candidate.clone() else {
            return Ok(draft.finish(Outcome::EmptyPatch, None, None, started));
        };
        draft.patch.files = candidate.files().to_vec();

        let root = Arc::new(RunRoot::new(self.keep.as_deref())?);
        let verdict = self.run_in(&root, plan, draft, candidate, started).await;
        if let Some(dir) = &self.logs {
            copy_logs(root.path(), dir);
        }
        Ok(verdict)
    }

    /// The cache entry's name for this plan's baseline.
    fn cache_name(&self, plan: &Plan, runner_version: Option<&str>) -> String {
        BaselineCache::name(&cache::Key {
            tree: plan.source.tree.to_string(),
            test_patch: self.test_patch.as_ref().map(|(_, t)| cache::hash(t)),
            template: plan.command.template.as_str(),
            ids: plan.command.ids,
            f2p: &plan.f2p,
            p2p: &plan.p2p,
            env: &self.env,
            setup_cmd: self.setup_cmd.as_deref(),
            retries: self.retries,
            runner_version,
        })
    }

    /// The baseline: skipped, read from the cache, or a prepared checkout to run (and to store,
    /// holding the entry's lock so that one task's concurrent checks run it once).
    async fn baseline_source(&self, plan: &Plan, root: &Arc<RunRoot>) -> BaselineSource {
        if !self.baseline {
            return BaselineSource::Skipped;
        }
        let mut store = None;
        if let Some(cache) = &self.cache {
            let version = match plan.command.version_probe() {
                Some(script) => {
                    let probe = process::Spec {
                        script: script.to_string(),
                        cwd: root.path().to_path_buf(),
                        env: self.env_for(plan, root.path()).0,
                        env_remove: Vec::new(),
                        timeout: PROBE_TIMEOUT,
                        stdout: root.path().join("version.stdout.log"),
                        stderr: root.path().join("version.stderr.log"),
                    };
                    Some(cache.runner_version(&probe).await)
                }
                None => None,
            };
            let name = self.cache_name(plan, version.as_deref());
            let guard = cache.lock(&name).await;
            if let Some(entry) = cache.load(&name) {
                return BaselineSource::Cached(entry);
            }
            store = Some(Store {
                cache: cache.clone(),
                name,
                _guard: guard,
            });
        }
        let (source, tp, dir, pool) = (
            plan.source.clone(),
            plan.test_patch.clone(),
            root.path().join("baseline"),
            self.pool.clone(),
        );
        let prepared = blocking(root.clone(), move || {
            prepare_baseline(&source, tp.as_ref(), &dir, pool.as_ref())
        })
        .await;
        BaselineSource::Run { prepared, store }
    }

    async fn run_in(
        &self,
        root: &Arc<RunRoot>,
        plan: Plan,
        mut draft: Draft,
        candidate: Patch,
        started: Instant,
    ) -> Verdict {
        let prepare_started = Instant::now();
        let cand_dir = root.path().join("candidate");
        let base_dir = root.path().join("baseline");
        let cand = blocking(root.clone(), {
            let (source, tp, dir, pool, strict, protection) = (
                plan.source.clone(),
                plan.test_patch.clone(),
                cand_dir.clone(),
                self.pool.clone(),
                self.strict_apply,
                self.protection.clone(),
            );
            move || {
                let tp = tp.as_ref();
                prepare_candidate(
                    &source,
                    &candidate,
                    tp,
                    &dir,
                    pool.as_ref(),
                    strict,
                    &protection,
                )
            }
        });
        let keep = self.keep.is_some();
        // The candidate's tests start as soon as its checkout is ready; the baseline is looked
        // up, prepared and run alongside.
        let test_started = std::sync::OnceLock::new();
        let cand_side = async {
            let prepared = cand.await;
            let _ = test_started.set(Instant::now());
            match prepared {
                Ok(Candidate::Applied(applied)) => {
                    let workdir = &applied.prepared.workdir;
                    let run = self.execute(&plan, &cand_dir, workdir, keep).await;
                    CandidateSide::Ran(Box::new((applied, run)))
                }
                Ok(Candidate::Rejected(failure)) => CandidateSide::Rejected(failure),
                Err(other) => CandidateSide::Failed(other.describe()),
            }
        };
        let (prepared_tx, prepared_rx) = tokio::sync::oneshot::channel();
        let base_side = async {
            let source = self.baseline_source(&plan, root).await;
            let _ = prepared_tx.send(match &source {
                BaselineSource::Run {
                    prepared: Err(e), ..
                } => Err(e.describe()),
                _ => Ok(()),
            });
            match source {
                BaselineSource::Skipped => BaselineSide::Skipped,
                BaselineSource::Cached(entry) => BaselineSide::Cached(entry),
                BaselineSource::Run {
                    prepared: Err(e), ..
                } => BaselineSide::Failed(e.describe()),
                BaselineSource::Run {
                    prepared: Ok(prepared),
                    store,
                } => BaselineSide::Ran {
                    run: self
                        .execute(&plan, &base_dir, &prepared.workdir, keep)
                        .await,
                    store,
                    _prepared: prepared,
                },
            }
        };
        tokio::pin!(cand_side, base_side);
        let mut base_done = None;
        let cand_done = loop {
            tokio::select! {
                c = &mut cand_side => break c,
                b = &mut base_side, if base_done.is_none() => base_done = Some(b),
            }
        };
        draft.timings.prepare_ms = ms(test_started.get().map_or(prepare_started.elapsed(), |t| {
            t.duration_since(prepare_started)
        }));
        // A broken task (test patch or checkout failing at base) outranks anything the
        // candidate did: no verdict about the candidate means anything then. A candidate that
        // was not run waits only for the baseline's checkout, not for its tests.
        let base_done = match (&cand_done, base_done) {
            (_, Some(done)) => done,
            (CandidateSide::Ran(..), None) => base_side.await,
            // The baseline side must be polled for its checkout to finish.
            (_, None) => tokio::select! {
                prepared = prepared_rx => match prepared {
                    Err(_) | Ok(Ok(())) => BaselineSide::Skipped,
                    Ok(Err(e)) => BaselineSide::Failed(e),
                },
                done = &mut base_side => done,
            },
        };
        let (base_run, store) = match base_done {
            BaselineSide::Failed(e) => return draft.fail(Stage::Baseline, e, started),
            BaselineSide::Skipped => (None, None),
            BaselineSide::Cached(entry) => (
                Some(Execution {
                    info: RunInfo {
                        cached: true,
                        ..entry.info
                    },
                    evidence: Ok(entry.evidence),
                }),
                None,
            ),
            BaselineSide::Ran { run, store, .. } => (Some(run), store),
        };
        let (cand_run, cand_checkout) = match cand_done {
            CandidateSide::Ran(ran) => {
                let (
                    AppliedCandidate {
                        applied,
                        protected,
                        overridden,
                        caveats,
                        prepared,
                    },
                    run,
                ) = *ran;
                for caveat in caveats {
                    draft.warnings.push(caveat_warning(caveat));
                }
                if !protected.is_empty() {
                    let reverted = self.protection.action == OnProtectedEdit::Revert;
                    draft.warnings.push(Warning {
                        kind: WarningKind::ProtectedEdit,
                        message: format!(
                            "the patch edits protected paths (tests, test or CI configuration){}",
                            if reverted {
                                "; they were put back to base before the tests ran"
                            } else {
                                ""
                            }
                        ),
                        tests: Vec::new(),
                    });
                }
                draft.patch.protected_edits = protected;
                draft.patch.overridden_files = overridden;
                draft.patch.apply_strategy = Some(applied.strategy);
                draft.patch.moved_hunks = applied.moved;
                (run, prepared)
            }
            CandidateSide::Rejected(failure) => {
                draft.patch.apply_failure = Some(failure);
                return draft.finish(Outcome::PatchFailed, None, None, started);
            }
            CandidateSide::Failed(e) => return draft.fail(Stage::Candidate, e, started),
        };
        let cand_work = &cand_checkout.workdir;
        draft.timings.test_ms = ms(test_started.get().map_or(Duration::ZERO, |t| t.elapsed()));
        draft.runs.candidate = Some(cand_run.info);
        if let (
            Some(store),
            Some(Execution {
                info,
                evidence: Ok(evidence),
            }),
        ) = (store, &base_run)
        {
            let entry = cache::Entry {
                // What grading these ids reads, not the whole suite's report.
                evidence: evidence.for_ids(plan.command.ids, plan.requested()),
                // Paths into this run's directory mean nothing to a later run.
                info: RunInfo {
                    dir: None,
                    reports: Vec::new(),
                    ..info.clone()
                },
            };
            // A cache that cannot be written costs a rerun next time, nothing more.
            let _ = store.cache.store(&store.name, &entry);
        }
        draft.runs.baseline = base_run.as_ref().map(|r| r.info.clone());

        // A baseline that cannot be judged means the task, not the candidate, is in question.
        let base_evidence = match base_run.map(|r| r.evidence) {
            None => None,
            Some(Ok(evidence)) => Some(evidence),
            Some(Err(e)) => return draft.fail(Stage::Baseline, e, started),
        };
        let cand_evidence = match cand_run.evidence {
            Ok(evidence) => evidence,
            Err(e) => return draft.fail(Stage::Candidate, e, started),
        };
        let graded = grade(
            plan.command.ids,
            plan.requested(),
            &cand_evidence,
            base_evidence.as_ref(),
        );
        draft.warn_about(&graded, base_evidence.is_some());
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
            if runner::patched_python_imported(cand_work, &files) == Some(false) {
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
        let outcome = graded.classification.outcome;
        draft.finish(outcome, Some(graded.classification), None, started)
    }

    /// Check every input before anything is created.
    fn validate(&self) -> Result<Plan, CheckError> {
        let command = self.command.clone().ok_or(CheckError::NoCommand)?;
        let (f2p, p2p) = validate_ids(&self.f2p, &self.p2p)?;
        let parse = |(origin, text): &(String, Vec<u8>)| {
            Patch::parse(text).map_err(|reason| CheckError::Patch {
                origin: origin.clone(),
                reason,
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
            f2p,
            p2p,
        })
    }

    fn task_info(&self, plan: &Plan) -> TaskInfo {
        TaskInfo {
            instance_id: self.instance_id.clone(),
            repo: Some(plan.source.repo_dir.clone()),
            base: Some(self.base.clone()),
            base_commit: Some(plan.source.commit.to_string()),
            test_cmd: Some(plan.command.template.as_str().to_string()),
            ids: plan.command.ids,
        }
    }

    /// Setup, then the tests, in one prepared checkout: a first attempt (again without the ids
    /// the runner refused, if it refused some), then `--retries` rounds of the tests that did
    /// not pass.
    async fn execute(&self, plan: &Plan, dir: &Path, workdir: &Path, keep: bool) -> Execution {
        let workdir = workdir.to_path_buf();
        let started = Instant::now();
        let mut info = RunInfo {
            dir: keep.then(|| dir.to_path_buf()),
            ..RunInfo::default()
        };
        let runner = Attempts {
            check: self,
            plan,
            dir,
            env: self.env_for(plan, &workdir),
            workdir: workdir.clone(),
        };
        let evidence = async {
            if let Some(setup) = &self.setup_cmd {
                let setup = runner.spec(runner::with_workdir(setup, &workdir), "setup");
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
            let syntax = plan.command.ids;
            let requested = plan.requested();
            let all: Vec<String> = requested.iter().map(|(id, _)| id.to_string()).collect();
            let mut evidence = Evidence::default();
            let first = runner.attempt(&all, 0, &mut info).await?;
            let report = if first.report.cases.is_empty() {
                // pytest refuses the whole run for one unknown id: leave the refused ids out
                // and run the others again.
                let rejected = runner::rejected_ids(syntax, &first.output(), &all);
                let mut rest: Vec<String> = all
                    .iter()
                    .filter(|id| !rejected.iter().any(|(r, _)| r == *id))
                    .cloned()
                    .collect();
                if rejected.is_empty() || rest.is_empty() {
                    return Err(first.empty_report_error(self.timeout));
                }
                // The files of ids that exist but name no test are run whole, so the report
                // holds the ids the user might have meant.
                for (id, why) in &rejected {
                    let file = id.split("::").next().unwrap_or_default();
                    if why == "not found" && !rest.iter().any(|r| r == file) {
                        rest.push(file.to_string());
                    }
                }
                evidence.rejected = rejected;
                let again = runner.attempt(&rest, 1, &mut info).await?;
                if again.report.cases.is_empty() {
                    return Err(again.empty_report_error(self.timeout));
                }
                again.report
            } else {
                first.report
            };
            evidence.attempts.push(report);
            for _ in 0..self.retries {
                let again = retry_candidates(syntax, requested, &evidence);
                if again.is_empty() {
                    break;
                }
                let n = info.attempts;
                // A retry that cannot be read adds nothing; the attempts so far stand.
                match runner.attempt(&again, n, &mut info).await {
                    Ok(retry) => evidence.attempts.push(retry.report),
                    Err(_) => break,
                }
            }
            Ok(evidence)
        }
        .await;
        info.duration_ms = ms(started.elapsed());
        Execution { info, evidence }
    }

    /// The environment of the commands: `{workdir}` filled in, and the preset's removals unless
    /// the user set the variable.
    fn env_for(&self, plan: &Plan, workdir: &Path) -> (Vec<(String, String)>, Vec<String>) {
        let env: Vec<(String, String)> = self
            .env
            .iter()
            .map(|(k, v)| (k.clone(), runner::with_workdir_raw(v, workdir)))
            .collect();
        let remove: Vec<String> = plan
            .command
            .preset
            .map(|p| p.env_remove())
            .unwrap_or_default()
            .iter()
            .filter(|k| !env.iter().any(|(e, _)| e == *k))
            .map(|k| k.to_string())
            .collect();
        (env, remove)
    }
}

/// Runs the test command in one checkout.
struct Attempts<'a> {
    check: &'a Check,
    plan: &'a Plan,
    dir: &'a Path,
    workdir: PathBuf,
    env: (Vec<(String, String)>, Vec<String>),
}

/// One finished attempt whose report could be read.
struct Attempt {
    report: Report,
    termination: Termination,
    spec: process::Spec,
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
    fn empty_report_error(&self, timeout: Duration) -> (ErrorCause, String) {
        (
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
    fn spec(&self, script: String, log: &str) -> process::Spec {
        process::Spec {
            script,
            cwd: self.workdir.clone(),
            env: self.env.0.clone(),
            env_remove: self.env.1.clone(),
            timeout: self.check.timeout,
            stdout: self.dir.join(format!("{log}.stdout.log")),
            stderr: self.dir.join(format!("{log}.stderr.log")),
        }
    }

    /// Run the tests for these ids once; attempt `n` writes `junit-n` (the first, `junit`).
    async fn attempt(
        &self,
        ids: &[String],
        n: usize,
        info: &mut RunInfo,
    ) -> Result<Attempt, (ErrorCause, String)> {
        let command = &self.plan.command;
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let dir_report = command.preset.is_some_and(|p| p.junit_is_dir());
        let junit = self.dir.join(if dir_report {
            format!("junit{suffix}")
        } else {
            format!("junit{suffix}.xml")
        });
        let run_forms = dedup(
            &ids.iter()
                .map(|id| command.ids.run_form(id))
                .collect::<Vec<_>>(),
        );
        let tests = match command.preset {
            Some(preset) => preset.select(&run_forms, &self.workdir),
            None => shell_words::join(&run_forms),
        };
        let script = command.template.render(&tests, &junit, &self.workdir);
        let spec = self.spec(script.clone(), &format!("test{suffix}"));
        info.attempts += 1;
        if n == 0 {
            info.command = Some(script);
        }
        let finished = process::run(&spec).await.map_err(|e| {
            (
                ErrorCause::CommandFailedToStart,
                format!("test command could not start: {e}"),
            )
        })?;
        if n == 0 {
            info.termination = Some(finished.termination);
        }
        if finished.termination == Termination::TimedOut {
            return Err((
                ErrorCause::Timeout,
                format!(
                    "test command {}",
                    describe(finished.termination, self.check.timeout)
                ),
            ));
        }
        let report = Report::read(&junit).map_err(|e| match e {
            JunitError::Missing(_) | JunitError::EmptyDir(_) => (
                ErrorCause::NoReport,
                explain(
                    "test command",
                    finished.termination,
                    self.check.timeout,
                    " and wrote no JUnit report",
                    &spec,
                ),
            ),
            other => (ErrorCause::UnreadableReport, other.to_string()),
        })?;
        if info.dir.is_some() {
            info.reports.push(junit);
        }
        Ok(Attempt {
            report,
            termination: finished.termination,
            spec,
        })
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
    fn requested(&self) -> Requested<'_> {
        Requested {
            f2p: &self.f2p,
            p2p: &self.p2p,
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

/// Both lists, without repeats; an id in both is a contradiction.
pub(crate) fn validate_ids(
    f2p: &[String],
    p2p: &[String],
) -> Result<(Vec<String>, Vec<String>), CheckError> {
    if f2p.is_empty() && p2p.is_empty() {
        return Err(CheckError::NoIds);
    }
    if let Some(id) = f2p.iter().find(|id| p2p.contains(id)) {
        return Err(CheckError::IdInBothGroups(id.clone()));
    }
    Ok((dedup(f2p), dedup(p2p)))
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
    evidence: Result<Evidence, (ErrorCause, String)>,
}

/// Where the baseline's evidence comes from.
enum BaselineSource {
    /// `--baseline skip`.
    Skipped,
    /// A stored run of the same task.
    Cached(cache::Entry),
    /// A checkout to run the tests in, and the cache entry to store the result as.
    Run {
        prepared: Result<Prepared, Prep>,
        store: Option<Store>,
    },
}

/// The candidate's side of a check, done.
enum CandidateSide {
    Ran(Box<(AppliedCandidate, Execution)>),
    Rejected(ApplyFailure),
    Failed((ErrorCause, String)),
}

/// The baseline's side of a check, done.
enum BaselineSide {
    Skipped,
    Cached(cache::Entry),
    Failed((ErrorCause, String)),
    Ran {
        run: Execution,
        store: Option<Store>,
        /// Held until the run is graded: a pooled checkout stays locked.
        _prepared: Prepared,
    },
}

/// A cache entry to fill, locked until it is.
struct Store {
    cache: Arc<BaselineCache>,
    name: String,
    _guard: tokio::sync::OwnedMutexGuard<()>,
}

/// How long a runner's version probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// The candidate checkout, prepared. A candidate that does not apply is an outcome
/// (`patch-failed`), not a failure to prepare.
enum Candidate {
    /// Applied, and ready for its tests.
    Applied(AppliedCandidate),
    /// Did not apply.
    Rejected(ApplyFailure),
}

fn caveat_warning(caveat: Caveat) -> Warning {
    let (kind, message) = match caveat {
        Caveat::Submodules(paths) => (
            WarningKind::SubmodulesNotCheckedOut,
            format!(
                "the repository has submodules, which the checkout leaves empty: {}; tests \
                 that need them fail at base and after alike",
                paths.join(", ")
            ),
        ),
        Caveat::LfsPointers(patterns) => (
            WarningKind::LfsPointers,
            format!(
                "the repository keeps files in Git LFS ({}); the checkout holds their pointer \
                 text, not their content",
                patterns.join(", ")
            ),
        ),
    };
    Warning {
        kind,
        message,
        tests: Vec::new(),
    }
}

/// A candidate checkout with the patch (and the test patch) applied.
struct AppliedCandidate {
    /// How the patch applied.
    applied: Applied,
    /// Its edits to protected paths (reverted with `--on-protected-edit revert`).
    protected: Vec<String>,
    /// Its edits replaced by the test patch's files.
    overridden: Vec<String>,
    /// What the checkout lacks (submodules, LFS content).
    caveats: Vec<Caveat>,
    prepared: Prepared,
}

/// Why a checkout could not be prepared.
enum Prep {
    /// The test patch does not apply: the task is broken.
    TestPatch(ApplyFailure),
    /// I/O or git trouble.
    Checkout(String),
}

impl Prep {
    fn describe(&self) -> (ErrorCause, String) {
        match self {
            Prep::TestPatch(f) => (
                ErrorCause::TestPatchDoesNotApply,
                format!("test patch does not apply: {f}"),
            ),
            Prep::Checkout(m) => (ErrorCause::CheckoutFailed, m.clone()),
        }
    }
}

fn prepare_candidate(
    source: &Source,
    candidate: &Patch,
    test_patch: Option<&Patch>,
    dir: &Path,
    pool: Option<&WorkdirPool>,
    strict: bool,
    protection: &Protection,
) -> Result<Candidate, Prep> {
    let protected = protection.edits(candidate.files());
    if protection.action == OnProtectedEdit::Reject && !protected.is_empty() {
        return Ok(Candidate::Rejected(ApplyFailure {
            file: protected.first().cloned(),
            hunk: None,
            message: format!(
                "refused: the patch edits protected paths ({}); --on-protected-edit reject",
                protected.join(", ")
            ),
        }));
    }
    let (checkout, prepared) = create_checkout(source, dir, pool)?;
    let applied = match checkout.apply(candidate, strict) {
        Ok(applied) => applied,
        Err(failure) => return Ok(Candidate::Rejected(failure)),
    };
    if protection.action == OnProtectedEdit::Revert {
        checkout
            .restore(&protected)
            .map_err(|e| Prep::Checkout(e.to_string()))?;
    }
    let Some(tp) = test_patch else {
        return Ok(Candidate::Applied(AppliedCandidate {
            applied,
            protected,
            overridden: Vec::new(),
            caveats: checkout.caveats(),
            prepared,
        }));
    };
    // The hidden tests win: every file they touch goes back to base before they apply, and
    // a link the candidate put on their way is removed.
    let mut overridden: Vec<String> = candidate
        .files()
        .iter()
        .filter(|f| tp.files().contains(f))
        .cloned()
        .collect();
    let links = checkout
        .restore(tp.files())
        .map_err(|e| Prep::Checkout(e.to_string()))?;
    for link in links {
        if !overridden.contains(&link) {
            overridden.push(link);
        }
    }
    // The task's own tests apply exactly or the task is broken: fuzz would hide that.
    checkout.apply(tp, true).map_err(Prep::TestPatch)?;
    Ok(Candidate::Applied(AppliedCandidate {
        applied,
        protected,
        overridden,
        caveats: checkout.caveats(),
        prepared,
    }))
}

fn prepare_baseline(
    source: &Source,
    test_patch: Option<&Patch>,
    dir: &Path,
    pool: Option<&WorkdirPool>,
) -> Result<Prepared, Prep> {
    let (checkout, prepared) = create_checkout(source, dir, pool)?;
    if let Some(tp) = test_patch {
        checkout.apply(tp, true).map_err(Prep::TestPatch)?;
    }
    Ok(prepared)
}

/// A checkout ready for its tests: where it is, and the pool slot it holds, if any.
struct Prepared {
    workdir: PathBuf,
    _lease: Option<pool::Lease>,
}

/// The run's directory (for logs and reports), and its checkout: `dir/work`, or a slot of the
/// pool.
fn create_checkout(
    source: &Source,
    dir: &Path,
    pool: Option<&WorkdirPool>,
) -> Result<(Checkout, Prepared), Prep> {
    std::fs::create_dir_all(dir).map_err(|e| Prep::Checkout(format!("{}: {e}", dir.display())))?;
    let (checkout, lease) = match pool {
        Some(pool) => pool
            .acquire(source)
            .map(|(c, lease)| (c, Some(lease)))
            .map_err(|e| Prep::Checkout(e.to_string()))?,
        None => Checkout::create(source, &dir.join("work"))
            .map(|c| (c, None))
            .map_err(|e| Prep::Checkout(e.to_string()))?,
    };
    let prepared = Prepared {
        workdir: checkout.workdir().to_path_buf(),
        _lease: lease,
    };
    Ok((checkout, prepared))
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

/// How much of each log [`Check::logs`] keeps: the end, where runners write their errors.
pub const LOG_TAIL: u64 = 1024 * 1024;

/// Copy each run's logs (their tails) out of the run directory; best effort, as logs are an
/// aid and never part of the verdict.
fn copy_logs(root: &Path, to: &Path) {
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
    let read = |path: &Path| {
        String::from_utf8_lossy(&process::tail(path, MAX))
            .trim()
            .to_string()
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

pub(crate) fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}
