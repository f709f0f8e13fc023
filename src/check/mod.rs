//! The `check` pipeline: one candidate patch, graded end to end from what is observed.

mod execute;
mod prepare;

pub use execute::LOG_TAIL;
pub(crate) use execute::ms;
use execute::{Execution, copy_logs};
use prepare::*;

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
