//! The candidate and the baseline, prepared and run side by side: the candidate's tests start
//! as soon as its own checkout is ready, while the baseline is looked up in the cache, or
//! prepared and run.

use super::cache::{self, BaselineCache};
use super::execute::Execution;
use super::plan::Plan;
use super::prepare::{
    AppliedCandidate, Candidate, Prep, Prepared, RunRoot, Site, blocking, create_checkout,
    prepare_baseline, prepare_candidate, refused,
};
use super::seeding::Seeding;
use crate::judge::verdict::ErrorCause;
use crate::run::process;
use crate::util::time::ms;
use crate::workspace::{ApplyFailure, Checkout, Patch, TreeStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a runner's version probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// What both sides came to.
pub(super) struct Raced {
    pub(super) candidate: CandidateSide,
    pub(super) baseline: BaselineSide,
    /// Preparing, until the candidate's tests could start.
    pub(super) prepare_ms: u64,
    /// When the candidate's tests started (or would have).
    pub(super) test_started: Option<Instant>,
}

/// The candidate's side of a check, done.
pub(super) enum CandidateSide {
    Ran(Box<(AppliedCandidate, Execution)>),
    Rejected(ApplyFailure),
    Failed((ErrorCause, String)),
}

/// The baseline's side of a check, done.
pub(super) enum BaselineSide {
    Skipped,
    Cached(cache::Entry),
    Failed((ErrorCause, String)),
    Ran {
        run: Box<Execution>,
        store: Option<Store>,
        /// Held until the run is graded: a pooled checkout stays locked.
        _prepared: Prepared,
    },
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

/// A cache entry to fill, locked until it is.
pub(super) struct Store {
    pub(super) cache: Arc<BaselineCache>,
    pub(super) name: String,
    _guard: tokio::sync::OwnedMutexGuard<()>,
}

impl Plan {
    /// Prepare and run both sides. A broken task (test patch or checkout failing at base)
    /// outranks anything the candidate did, so a candidate that was not run still waits for
    /// the baseline's checkout, though not for its tests.
    // Both sides are futures borrowing this frame: the select loop needs them pinned here.
    pub(super) async fn race(&self, root: &Arc<RunRoot>, candidate: Patch) -> Raced {
        let prepare_started = Instant::now();
        let cand_dir = root.path().join("candidate");
        let base_dir = root.path().join("baseline");
        let seeding = self.seeding();
        let keep = self.settings.keep.is_some();
        let hidden = self.hidden(root);
        let hidden = &hidden;
        // Before both sides: a build that is code downloads at the base alone (see
        // `FetchStep::TestCommandAtBase`).
        let fetch_ms = self.fetch_at_base(root, hidden).await;
        let cand = self.candidate_checkout(root, &cand_dir, candidate, seeding.as_ref(), hidden);
        let test_started = std::sync::OnceLock::new();
        let cand_side = async {
            // Its first command's control groups, joined while the checkout is made: the
            // kernel makes the first join wait (see `Launcher`).
            // Or more: its sandbox built, and the tests started at its gate (see `early`).
            let launcher = if self.starts_early() {
                None
            } else {
                self.launcher()
            };
            let early = self.early_start(&cand_dir, hidden);
            let (prepared, early) = tokio::join!(cand, early);
            let _ = test_started.set(Instant::now());
            match prepared {
                Ok(Candidate::Applied(mut applied)) => {
                    applied.prepared.launcher = std::sync::Mutex::new(launcher);
                    applied.prepared.early = std::sync::Mutex::new(early);
                    applied.prepared.steps.fetch_ms += fetch_ms;
                    let job = self.tests_job();
                    let run = self.execute(&job, &cand_dir, &applied.prepared, hidden, keep);
                    let run = run.await;
                    CandidateSide::Ran(Box::new((*applied, run)))
                }
                Ok(Candidate::Rejected(failure)) => CandidateSide::Rejected(failure),
                Err(other) => CandidateSide::Failed(other.describe()),
            }
        };
        let (prepared_tx, prepared_rx) = tokio::sync::oneshot::channel();
        let base_side = async {
            let source = self.baseline_source(root, seeding.as_ref(), hidden).await;
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
                } => {
                    let job = self.tests_job();
                    let run = self.execute(&job, &base_dir, &prepared, hidden, keep).await;
                    self.save_seed(root, seeding.as_ref(), &prepared).await;
                    BaselineSide::Ran {
                        run: Box::new(run),
                        store,
                        _prepared: prepared,
                    }
                }
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
        let prepare_ms = ms(test_started.get().map_or(prepare_started.elapsed(), |t| {
            t.duration_since(prepare_started)
        }));
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
        Raced {
            candidate: cand_done,
            baseline: base_done,
            prepare_ms,
            test_started: test_started.get().copied(),
        }
    }

    /// The candidate's checkout with the candidate and the hidden tests applied, unless its
    /// protected edits refuse it first.
    async fn candidate_checkout(
        &self,
        root: &Arc<RunRoot>,
        dir: &Path,
        candidate: Patch,
        seeding: Option<&Seeding>,
        hidden: &[PathBuf],
    ) -> Result<Candidate, Prep> {
        if let Some(refused) = refused(&candidate, &self.protection) {
            return Ok(refused);
        }
        let made = self.checkout(root, dir, seeding, hidden).await?;
        let (tp, strict, protection) = (
            self.test_patch.clone(),
            self.settings.strict_apply,
            self.protection.clone(),
        );
        blocking(root.clone(), move || {
            prepare_candidate(made, &candidate, tp.as_ref(), strict, &protection)
        })
        .await
    }

    /// Keep what the sandboxed baseline built as the seed of later checkouts, the files the
    /// test patch touched left out.
    async fn save_seed(&self, root: &Arc<RunRoot>, seeding: Option<&Seeding>, prepared: &Prepared) {
        if let (Some(seeding), Some(seeded)) = (seeding, &prepared.seeded) {
            let touched = self.test_patch.as_ref().map(|p| p.files().to_vec());
            let (seeding, workdir) = (seeding.clone(), prepared.workdir.clone());
            let seeded = seeded.clone();
            let _ = blocking(root.clone(), move || {
                seeding.save(&seeded, &workdir, &touched.unwrap_or_default());
                Ok(())
            })
            .await;
        }
    }

    /// What a sandboxed command must not see: other runs (the temporary directory, this run's
    /// root, whose sides are brought back one each), the baseline caches and the pool's
    /// bookkeeping.
    pub(super) fn hidden(&self, root: &RunRoot) -> Vec<PathBuf> {
        let mut hidden = vec![std::env::temp_dir(), root.path().to_path_buf()];
        hidden.extend(self.settings.cache.as_ref().map(|c| c.dir().to_path_buf()));
        hidden.extend(BaselineCache::default_dir());
        hidden.extend(self.settings.pool.as_ref().map(|p| p.dir().to_path_buf()));
        hidden
    }

    /// The cache entry's name for this plan's baseline.
    pub(super) fn cache_name(&self, runner_version: Option<&str>) -> String {
        let downstream: Vec<String> = self
            .downstream
            .iter()
            .flat_map(|d| d.ids.iter().chain(&d.files))
            .cloned()
            .collect();
        let command = (self.command.template().as_str(), self.command.ids());
        let lists = [&self.f2p[..], &self.p2p, &downstream];
        self.key_name(command, lists, self.settings.retries, runner_version)
    }

    /// A cache entry's name: what a run at base depends on, for this command (template and
    /// id syntax) and these lists of tests (F2P, P2P, downstream).
    pub(super) fn key_name(
        &self,
        (template, ids): (&str, crate::observe::IdSyntax),
        [f2p, p2p, downstream]: [&[String]; 3],
        retries: usize,
        runner_version: Option<&str>,
    ) -> String {
        BaselineCache::name(&cache::Key {
            tree: self.source.tree.to_string(),
            test_patch: self
                .settings
                .test_patch
                .as_ref()
                .map(|(_, t)| crate::util::digest::hash(t)),
            template,
            ids,
            f2p,
            p2p,
            downstream,
            env: &self.settings.env,
            setup_cmd: self.settings.setup_cmd.as_deref(),
            python: self.settings.python.as_deref(),
            retries,
            runner_version,
            sandbox: self.sandbox_key(),
            network: self.settings.network,
        })
    }

    /// Where the runs happen, as a cache key says it: the sandbox, or a container's engine and
    /// image id.
    pub(super) fn sandbox_key(&self) -> String {
        self.sandbox.cache_key()
    }

    /// The version of the runner's toolchain, for a cache key: `None` in a container, whose
    /// image id keys its toolchain already, or for a command with no probe.
    /// The probe runs in `dir`, the run's directory.
    pub(super) async fn runner_version(
        &self,
        cache: &BaselineCache,
        dir: &std::path::Path,
    ) -> Option<String> {
        if !self.sandbox.tools_on_host() {
            return None;
        }
        let script = self.command.version_probe()?;
        let probe = process::Spec {
            env: self.env_for(dir).0,
            // The tests' environment, whose toolchain the key is about.
            pass_env: Some(self.pass_env_for()),
            ..process::Spec::on_host(
                self.with_python(script.to_string()),
                dir,
                dir,
                "version",
                PROBE_TIMEOUT,
            )
        };
        Some(cache.runner_version(&probe).await)
    }

    /// The baseline: skipped, read from the cache, or a prepared checkout to run (and to store,
    /// holding the entry's lock so that one task's concurrent checks run it once).
    async fn baseline_source(
        &self,
        root: &Arc<RunRoot>,
        seeding: Option<&Seeding>,
        hidden: &[PathBuf],
    ) -> BaselineSource {
        if !self.settings.baseline {
            return BaselineSource::Skipped;
        }
        let mut store = None;
        if let Some(cache) = &self.settings.cache {
            let version = self.runner_version(cache, root.path()).await;
            let name = self.cache_name(version.as_deref());
            let guard = cache.lock(&name).await;
            if let Some(entry) = cache.load(&name) {
                log::info!("baseline from the cache ({})", cache.dir().display());
                return BaselineSource::Cached(entry);
            }
            // A baseline run on the host could have been disturbed by the candidate's code,
            // which ran beside it as the same user: it is used, never stored.
            if self.sandbox.may_keep() {
                store = Some(Store {
                    cache: cache.clone(),
                    name,
                    _guard: guard,
                });
            }
        }
        let dir = root.path().join("baseline");
        let prepared = match self.checkout(root, &dir, seeding, hidden).await {
            Ok(made) => {
                let tp = self.test_patch.clone();
                blocking(root.clone(), move || prepare_baseline(made, tp.as_ref())).await
            }
            Err(e) => Err(e),
        };
        BaselineSource::Run { prepared, store }
    }

    /// Where this check's fresh checkouts find base trees kept whole, and keep them: in the
    /// cache, where only a sandbox keeps code under test from writing it (as for the stores of
    /// baselines and build seeds).
    pub(super) fn trees(&self, root: &RunRoot) -> Option<TreeStore> {
        let cache = self.settings.cache.as_ref()?;
        let run = root.path().file_name()?.to_string_lossy();
        self.sandbox
            .may_keep()
            .then(|| TreeStore::new(cache.dir().join("trees"), &run))
    }

    /// A side's checkout in `dir`, or in a pool's slot: made (or reset, and put back to the
    /// slot's trusted state), with its build seed, and with a `--setup-once` setup run on its
    /// base where the slot has not run it yet (then kept as the slot's state to start from).
    pub(super) async fn checkout(
        &self,
        root: &Arc<RunRoot>,
        dir: &Path,
        seeding: Option<&Seeding>,
        hidden: &[PathBuf],
    ) -> Result<(Checkout, Prepared), Prep> {
        let (source, at, pool, seeding) = (
            self.source.clone(),
            dir.to_path_buf(),
            self.settings.pool.clone(),
            seeding.cloned(),
        );
        let trees = self.trees(root);
        let (checkout, mut prepared) = blocking(root.clone(), move || {
            let site = Site {
                dir: &at,
                pool: pool.as_ref(),
                seeding: seeding.as_ref(),
                trees: trees.as_ref(),
            };
            create_checkout(&source, site)
        })
        .await?;
        let once = (self.settings.setup_cmd.as_deref())
            .filter(|_| self.settings.setup_once)
            .zip(prepared.lease.as_ref())
            .map(|(cmd, lease)| (cmd, lease, self.setup_key(cmd)))
            .filter(|(_, lease, key)| !lease.setup_done(key));
        let Some((cmd, _, key)) = once else {
            return Ok((checkout, prepared));
        };
        let started = Instant::now();
        self.setup_on_base(dir, &prepared, hidden, cmd)
            .await
            .map_err(|failure| Prep::Setup(failure.message + &failure.hint))?;
        prepared.steps.setup_ms = ms(started.elapsed());
        prepared.setup_on_base = true;
        blocking(root.clone(), move || {
            // The setup ran on the base alone: its output is the slot's to start from. Where
            // it cannot be kept, this run goes on with it, and the next runs the setup again.
            // Timestamp bytecode of the base's sources would run for a patched source of the
            // same size written in the same second: gone before the patch, and not kept.
            checkout
                .remove_unsealed_bytecode()
                .map_err(|e| Prep::Checkout(e.to_string()))?;
            if let Some(lease) = &prepared.lease {
                let kept = lease
                    .keep(&checkout, &lease.marks())
                    .map_err(|e| e.to_string());
                if let Err(e) = kept.and_then(|()| lease.setup_ran(&key).map_err(|e| e.to_string()))
                {
                    log::info!("a pool slot could not keep its setup's output: {e}");
                }
            }
            Ok((checkout, prepared))
        })
        .await
    }
}
