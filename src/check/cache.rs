//! The baseline cache: what the tests did on the unpatched base, kept so that a task's
//! baseline runs once across its predictions, batch runs and an agent loop's checks.
//!
//! An entry is keyed by everything that can change what the baseline observes: the base tree,
//! the test patch, the test command, the id syntax, the ids, the environment given, the setup
//! command, the retries, and for a preset the runner's version as its toolchain reports it
//! (`python` and `pytest`, `rustc` and `cargo nextest`, `go`, `node`, `cmake`, `php`, `mvn`,
//! `gradle`), the sandbox (for a container, the image's id instead of the runner's version)
//! and the network. The rest of the inherited environment (installed libraries, a custom command's
//! tools) is not part of the key: `--no-cache` (or a fresh `--cache-dir`) is how to see a change
//! there. Only baselines that could be judged are stored; an error is run again; and only sandboxed
//! ones: on the host the candidate's code ran beside the baseline as the same user.

use crate::judge::verdict::RunInfo;
use crate::observe::{Evidence, IdSyntax};
use crate::run::process;
use crate::util::digest::hash;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Bumped when the stored shape or what it means changes; older entries are then ignored.
const VERSION: u32 = 4;

/// A directory of stored baselines, shared by the checks of one process.
#[derive(Debug)]
pub struct BaselineCache {
    dir: PathBuf,
    /// One lock per key: two checks of one task in one process run its baseline once.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Runner versions probed by this process, by probe and environment: a batch or an MCP
    /// server asks its toolchain once.
    versions: Mutex<HashMap<String, Arc<tokio::sync::OnceCell<String>>>>,
}

/// What a baseline depends on.
#[derive(Serialize)]
pub(crate) struct Key<'a> {
    pub(crate) tree: String,
    pub(crate) test_patch: Option<String>,
    pub(crate) template: &'a str,
    pub(crate) ids: IdSyntax,
    pub(crate) f2p: &'a [String],
    pub(crate) p2p: &'a [String],
    pub(crate) env: &'a [(String, String)],
    /// The downstream tests run with the requested ones (ids and whole files).
    pub(crate) downstream: &'a [String],
    pub(crate) setup_cmd: Option<&'a str>,
    pub(crate) python: Option<&'a Path>,
    pub(crate) retries: usize,
    pub(crate) runner_version: Option<&'a str>,
    /// Where it ran (`bwrap`; `docker:<image id>`), and with the network or not.
    pub(crate) sandbox: String,
    pub(crate) network: bool,
}

/// A stored baseline.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub(crate) evidence: Evidence,
    pub(crate) info: RunInfo,
}

impl BaselineCache {
    /// A cache in `dir` (created on first store), made absolute: the sandbox hides it by its
    /// path, and a relative one would name a directory of the sandbox's own.
    pub fn new(dir: impl Into<PathBuf>) -> BaselineCache {
        BaselineCache {
            dir: absolute(dir.into()),
            locks: Mutex::new(HashMap::new()),
            versions: Mutex::new(HashMap::new()),
        }
    }

    /// The user's cache directory: `$XDG_CACHE_HOME/patchgrade`, else `~/.cache/patchgrade`.
    pub fn default_dir() -> Option<PathBuf> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))?;
        Some(absolute(base.join("patchgrade")))
    }

    /// Where the entries live.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The key's name: git's object hash of its canonical JSON.
    pub(crate) fn name(key: &Key<'_>) -> String {
        let json = serde_json::to_vec(&(VERSION, key)).unwrap_or_default();
        hash(&json)
    }

    /// Hold this while looking up, computing and storing the entry.
    pub(crate) async fn lock(&self, name: &str) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = {
            let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
            locks.entry(name.to_string()).or_default().clone()
        };
        lock.lock_owned().await
    }

    /// What `probe` prints (its output and exit status), run once per process and environment.
    /// A probe that cannot run yields its error: still a stable part of the key.
    pub(crate) async fn runner_version(&self, probe: &process::Spec) -> String {
        let memo = format!("{}\0{:?}\0{:?}", probe.script, probe.env, probe.env_remove);
        let cell = {
            let mut versions = self.versions.lock().unwrap_or_else(|e| e.into_inner());
            versions.entry(memo).or_default().clone()
        };
        cell.get_or_init(|| async {
            match process::run(probe).await {
                Ok(finished) => {
                    let read = |p: &Path| std::fs::read(p).unwrap_or_default();
                    let mut out = read(&probe.stdout);
                    out.extend(read(&probe.stderr));
                    format!(
                        "{}\n{:?}",
                        String::from_utf8_lossy(&out).trim(),
                        finished.termination
                    )
                }
                Err(e) => format!("probe failed to start: {e}"),
            }
        })
        .await
        .clone()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir
            .join(format!("baseline-v{VERSION}"))
            .join(format!("{name}.json"))
    }

    /// The stored entry; an unreadable or foreign file is a miss, never an error.
    ///
    /// A file is its content's digest on the first line, then the entry: one whose digest does
    /// not match (cut short, or edited by hand or by a test that found it) is a miss, so it is
    /// run again rather than trusted. The digest is no secret: what keeps code under test from
    /// writing a matching entry is a sandbox in which the cache is not visible.
    pub(crate) fn load<T: serde::de::DeserializeOwned>(&self, name: &str) -> Option<T> {
        let bytes = std::fs::read(self.path(name)).ok()?;
        let newline = bytes.iter().position(|&b| b == b'\n')?;
        let (digest, json) = (&bytes[..newline], &bytes[newline + 1..]);
        if digest != hash(json).as_bytes() {
            return None;
        }
        serde_json::from_slice(json).ok()
    }

    /// Store atomically: a reader sees the whole entry or none. A cache that cannot be
    /// written only costs a rerun, so the error is the caller's to ignore.
    pub(crate) fn store<T: Serialize>(&self, name: &str, entry: &T) -> std::io::Result<()> {
        let path = self.path(name);
        let dir = path.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(dir)?;
        let json = serde_json::to_vec(entry)?;
        let mut bytes = hash(&json).into_bytes();
        bytes.push(b'\n');
        bytes.extend(json);
        crate::util::atomic::write(&path, &bytes)
    }
}

/// `dir` from the root (relative to the working directory); as it is where it has no absolute
/// form (empty).
fn absolute(dir: PathBuf) -> PathBuf {
    std::path::absolute(&dir).unwrap_or(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key<'a>(f2p: &'a [String], env: &'a [(String, String)]) -> Key<'a> {
        Key {
            tree: "abc".into(),
            test_patch: Some(hash(b"diff")),
            template: "pytest {tests} --junitxml={junit}",
            ids: IdSyntax::Pytest,
            f2p,
            p2p: &[],
            env,
            downstream: &[],
            setup_cmd: None,
            python: None,
            retries: 0,
            runner_version: Some("pytest 8"),
            sandbox: "bwrap".into(),
            network: false,
        }
    }

    #[test]
    fn every_input_changes_the_key() {
        let ids = ["t.py::a".to_string()];
        let other = ["t.py::b".to_string()];
        let env = [("A".to_string(), "1".to_string())];
        let base = BaselineCache::name(&key(&ids, &[]));
        assert_eq!(base, BaselineCache::name(&key(&ids, &[])));
        assert_ne!(base, BaselineCache::name(&key(&other, &[])));
        assert_ne!(base, BaselineCache::name(&key(&ids, &env)));
        let mut k = key(&ids, &[]);
        k.retries = 1;
        assert_ne!(base, BaselineCache::name(&k));
        let mut k = key(&ids, &[]);
        k.python = Some(Path::new("/venvs/a/bin/python"));
        assert_ne!(base, BaselineCache::name(&k));
        let mut k = key(&ids, &[]);
        k.test_patch = None;
        assert_ne!(base, BaselineCache::name(&k));
        let mut k = key(&ids, &[]);
        k.runner_version = Some("pytest 9");
        assert_ne!(base, BaselineCache::name(&k));
        let mut k = key(&ids, &[]);
        k.sandbox = "docker:sha256:1".into();
        assert_ne!(base, BaselineCache::name(&k));
        let mut k = key(&ids, &[]);
        k.network = true;
        assert_ne!(base, BaselineCache::name(&k));
    }

    #[test]
    fn entries_round_trip_and_garbage_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = BaselineCache::new(dir.path());
        assert!(cache.load::<Entry>("k").is_none());
        let entry = Entry {
            evidence: Evidence::default(),
            info: RunInfo {
                attempts: 2,
                ..RunInfo::default()
            },
        };
        cache.store("k", &entry).unwrap();
        assert_eq!(cache.load::<Entry>("k").unwrap().info.attempts, 2);
        // An entry edited in place, however well-formed, no longer matches its digest.
        let stored = std::fs::read_to_string(cache.path("k")).unwrap();
        std::fs::write(
            cache.path("k"),
            stored.replace("\"attempts\":2", "\"attempts\":3"),
        )
        .unwrap();
        assert!(cache.load::<Entry>("k").is_none());
        std::fs::write(cache.path("k"), "{not json").unwrap();
        assert!(cache.load::<Entry>("k").is_none());
    }

    #[tokio::test]
    async fn a_runner_version_is_probed_once_per_environment() {
        let dir = tempfile::tempdir().unwrap();
        let cache = BaselineCache::new(dir.path());
        let probe = |env: Vec<(String, String)>| process::Spec {
            env,
            ..process::Spec::on_host(
                "echo \"$V\" >> count; wc -l < count".into(),
                dir.path(),
                dir.path(),
                "probe",
                std::time::Duration::from_secs(10),
            )
        };
        let one = vec![("V".to_string(), "1".to_string())];
        let first = cache.runner_version(&probe(one.clone())).await;
        assert_eq!(first, "1\nExited(0)");
        assert_eq!(cache.runner_version(&probe(one)).await, first);
        let two = vec![("V".to_string(), "2".to_string())];
        assert_eq!(cache.runner_version(&probe(two)).await, "2\nExited(0)");
    }
}
