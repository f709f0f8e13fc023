//! The download at the base, for a preset whose build is code: the test command once, with
//! the network, in a checkout of the base and the test patch ([`FetchStep::TestCommandAtBase`]).

use super::execute::Attempts;
use super::plan::Plan;
use super::prepare::{Prepared, RunRoot, Site, blocking, create_checkout, prepare_baseline};
use crate::judge::verdict::RunInfo;
use crate::run::preset::FetchStep;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// What the cache keeps of a download at the base: that its test command wrote a report, so
/// that resolving got as far as the tests.
#[derive(Serialize, Deserialize)]
struct Fetched {
    cases: usize,
}

impl Plan {
    /// Download what the tests of a preset whose build is code need, before either side
    /// runs, unless the cache holds a download of this base already (keyed as its baseline
    /// is). It takes as long as it takes, in milliseconds. Nothing of it is graded: a
    /// download that fails leaves each side to fail as it would have, and to say why.
    pub(super) async fn fetch_at_base(&self, root: &Arc<RunRoot>, hidden: &[PathBuf]) -> u64 {
        let Some(fetch) = (self.command.fetch()).filter(|f| f.step == FetchStep::TestCommandAtBase)
        else {
            return 0;
        };
        // Tests with the network (`--network`, or on the host unsandboxed) resolve as they go.
        if self.settings.network || !self.sandbox.may_keep() {
            return 0;
        }
        let started = Instant::now();
        for dir in fetch.caches.iter().chain(&fetch.read) {
            // Only a directory that exists can be shown, writable here, read-only to the tests.
            let _ = std::fs::create_dir_all(dir);
        }
        // Where the cache is not trusted (no sandbox), every check downloads again.
        let mut marker = None;
        if let Some(cache) = self
            .settings
            .cache
            .as_ref()
            .filter(|_| self.sandbox.may_keep())
        {
            let version = self.runner_version(cache, root.path()).await;
            let name = format!("{}.fetched", self.cache_name(version.as_deref()));
            // One task's concurrent checks download once.
            let guard = cache.lock(&name).await;
            if cache.load::<Fetched>(&name).is_some() {
                return 0;
            }
            marker = Some((cache, name, guard));
        }
        let dir = root.path().join("fetch");
        let (source, at) = (self.source.clone(), dir.clone());
        let made = blocking(root.clone(), move || {
            let site = Site {
                dir: &at,
                pool: None,
                seeding: None,
            };
            create_checkout(&source, site)
        })
        .await;
        let tp = self.test_patch.clone();
        let prepared = match made {
            Ok(made) => blocking(root.clone(), move || prepare_baseline(made, tp.as_ref())).await,
            Err(e) => Err(e),
        };
        // The baseline's own checkout fails the same way, and says so.
        if let Ok(prepared) = prepared {
            let cases = self.download(&dir, &prepared, hidden, fetch.caches).await;
            log::info!("dependencies downloaded at the base: its report holds {cases} test(s)");
            if let Some((cache, name, _guard)) = marker.filter(|_| cases > 0) {
                let _ = cache.store(&name, &Fetched { cases });
            }
            let _ = std::fs::remove_dir_all(&prepared.workdir);
        }
        crate::util::time::ms(started.elapsed())
    }

    /// The setup and the test command at the base, in the plan's sandbox with the network and
    /// `caches` writable: how many test cases its report holds (none where it failed).
    async fn download(
        &self,
        dir: &Path,
        prepared: &Prepared,
        hidden: &[PathBuf],
        caches: Vec<PathBuf>,
    ) -> usize {
        let job = self.tests_job();
        let paths = self.paths(dir, &prepared.workdir, hidden);
        let Ok((jail, env)) = self.open_jail(paths, true, &job).await else {
            return 0;
        };
        let runner = Attempts {
            ahead: std::sync::Mutex::new(None),
            gated: std::sync::Mutex::new(None),
            plan: self,
            job: &job,
            dir,
            env,
            pass_env: self.pass_env_for(),
            workdir: prepared.workdir.clone(),
            hold: None,
            jail: &jail,
            online: caches,
        };
        if let Some(setup) = &self.settings.setup_cmd
            && runner.setup(setup, "setup").await.is_err()
        {
            return 0;
        }
        let mut info = RunInfo::default();
        match runner.attempt(&job.ids, 0, &mut info).await {
            Ok(attempt) => attempt.report.cases.len(),
            Err(_) => 0,
        }
    }
}
