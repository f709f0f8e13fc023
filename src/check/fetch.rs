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
/// that resolving got as far as the tests; and what its caches held then.
#[derive(Serialize, Deserialize)]
struct Fetched {
    cases: usize,
    /// Each cache directory's census after the download. A marker without one (older) is
    /// not trusted.
    #[serde(default)]
    held: Vec<Held>,
}

/// How many regular files a cache directory held, and their bytes.
#[derive(Serialize, Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
struct Held {
    files: u64,
    bytes: u64,
}

impl Fetched {
    /// Whether the caches still hold at least what they held after the download. The cache
    /// keeps the marker, the user keeps the caches: emptied since (`rm -rf ~/.m2/repository`),
    /// the tests would fail to resolve offline, and that would be blamed on the candidate, so
    /// the download runs again. More files is fine (other projects download there too); files
    /// deleted while as many others were added is not seen.
    fn still_held(&self, caches: &[PathBuf]) -> bool {
        self.held.len() == caches.len()
            && self.held.iter().zip(caches).all(|(then, dir)| {
                let now = census(dir);
                now.files >= then.files && now.bytes >= then.bytes
            })
    }
}

/// The regular files under `dir` (links not followed), and their bytes.
fn census(dir: &Path) -> Held {
    let mut held = Held { files: 0, bytes: 0 };
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(entry.path()),
                Ok(t) if t.is_file() => {
                    held.files += 1;
                    held.bytes += entry.metadata().map_or(0, |m| m.len());
                }
                _ => {}
            }
        }
    }
    held
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
        // Where the cache is not trusted (no sandbox), every check downloads again; and where
        // the caches lost what the last download put there.
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
            let fetched = cache.load::<Fetched>(&name);
            if fetched.is_some_and(|f| f.still_held(&fetch.caches)) {
                return 0;
            }
            marker = Some((cache, name, guard));
        }
        let dir = root.path().join("fetch");
        let (source, at) = (self.source.clone(), dir.clone());
        let trees = self.trees(root);
        let made = blocking(root.clone(), move || {
            let site = Site {
                dir: &at,
                pool: None,
                seeding: None,
                trees: trees.as_ref(),
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
            let cases = self
                .download(&dir, &prepared, hidden, fetch.caches.clone())
                .await;
            log::info!("dependencies downloaded at the base: its report holds {cases} test(s)");
            if let Some((cache, name, _guard)) = marker.filter(|_| cases > 0) {
                let held = fetch.caches.iter().map(|d| census(d)).collect();
                let _ = cache.store(&name, &Fetched { cases, held });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_download_is_trusted_while_its_caches_hold_as_much_and_not_once_they_lost_some() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        std::fs::create_dir_all(a.join("junit/junit/4.13.2")).unwrap();
        std::fs::write(a.join("junit/junit/4.13.2/junit-4.13.2.jar"), "jar").unwrap();
        std::fs::write(a.join("junit/junit/4.13.2/junit-4.13.2.pom"), "pom").unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", b.join("link")).unwrap();
        let caches = vec![a.clone(), b.clone()];
        let held = caches.iter().map(|d| census(d)).collect();
        let fetched = Fetched { cases: 2, held };
        assert_eq!(fetched.held[0], Held { files: 2, bytes: 6 });
        // A link is not a file of the cache.
        assert_eq!(fetched.held[1], Held { files: 0, bytes: 0 });
        assert!(fetched.still_held(&caches));
        // Another project's download adds files: still trusted.
        std::fs::write(a.join("other.jar"), "other").unwrap();
        assert!(fetched.still_held(&caches));
        // The user empties the repository: the download runs again.
        std::fs::remove_dir_all(a.join("junit")).unwrap();
        assert!(!fetched.still_held(&caches));
        // A marker written before the census, or for other caches, is not trusted.
        let old: Fetched = serde_json::from_str(r#"{"cases": 2}"#).unwrap();
        assert!(!old.still_held(&caches));
        assert!(!fetched.still_held(&caches[..1]));
    }
}
