//! Reusable checkouts (`--workdir-pool DIR`): prepared checkouts kept between runs, so that an
//! agent loop's checks and a batch's tasks skip writing the whole tree and keep their ignored
//! build output (`target/`, `node_modules/`, `.venv`), which keeps incremental builds
//! incremental.
//!
//! ```text
//! DIR/<repository>/slot-<n>/        a checkout (its own `.git`, borrowing the repository's objects)
//! DIR/<repository>/slot-<n>.lock    held (flock) by the run using the slot
//! DIR/<repository>/slot-<n>.touched the paths patches touched there, NUL-separated
//! DIR/<repository>/slot-<n>.setup   the setup that ran there once (`--setup-once`), by key
//! ```
//!
//! A run takes the first slot whose lock it can get, or makes a new one; the lock is released
//! when the run ends or its process dies. A slot that cannot be reset is made again.

use super::checkout::{Checkout, CheckoutError, Source};
use std::fs::{self, File};
use std::path::{Path, PathBuf};

/// A directory of reusable checkouts.
#[derive(Debug, Clone)]
pub struct WorkdirPool {
    dir: PathBuf,
}

/// A slot in use: the checkout is this run's until the lease is dropped.
#[derive(Debug)]
pub struct Lease {
    _lock: File,
    /// Where the slot records the setup that ran in it (beside it, out of its tests' reach).
    setup: PathBuf,
}

impl Lease {
    /// The lock's file descriptor. A run's commands inherit it, so the lock is held until
    /// the last process that could still write in the slot is gone, even when patchgrade
    /// itself was killed (SIGKILL) and never reaped them.
    pub fn lock_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self._lock.as_raw_fd()
    }

    /// Whether the setup `key` names has run in this slot since it was made.
    pub fn setup_done(&self, key: &str) -> bool {
        fs::read_to_string(&self.setup).is_ok_and(|done| done == key)
    }

    /// Record that the setup `key` names ran in this slot and succeeded.
    pub fn setup_ran(&self, key: &str) -> std::io::Result<()> {
        crate::util::atomic::write(&self.setup, key.as_bytes())
    }
}

impl WorkdirPool {
    /// A pool in `dir` (created on first use).
    pub fn new(dir: impl Into<PathBuf>) -> WorkdirPool {
        WorkdirPool { dir: dir.into() }
    }

    /// Where the slots live.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A checkout of `source`'s base commit: a free slot reset, or a new one.
    pub fn acquire(&self, source: &Source) -> Result<(Checkout, Lease), CheckoutError> {
        let fail = |path: &Path, e: std::io::Error| CheckoutError {
            dir: path.to_path_buf(),
            reason: e.to_string(),
        };
        // Slots are per repository: a slot borrows one object store.
        let objects = fs::canonicalize(source.objects_dir())
            .unwrap_or_else(|_| source.objects_dir().to_path_buf());
        let key = crate::util::digest::hash(objects.as_os_str().as_encoded_bytes());
        let repo_dir = self.dir.join(&key[..16]);
        fs::create_dir_all(&repo_dir).map_err(|e| fail(&repo_dir, e))?;
        let mut n = 0;
        loop {
            let lock_path = repo_dir.join(format!("slot-{n}.lock"));
            let lock = File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock_path)
                .map_err(|e| fail(&lock_path, e))?;
            match lock.try_lock() {
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => {
                    n += 1;
                    continue;
                }
                Err(fs::TryLockError::Error(e)) => return Err(fail(&lock_path, e)),
            }
            let slot = repo_dir.join(format!("slot-{n}"));
            // Beside the slot, not in it: nothing a test runs in the slot reaches it there
            // by the slot's own paths.
            let record = repo_dir.join(format!("slot-{n}.touched"));
            let lease = Lease {
                _lock: lock,
                setup: repo_dir.join(format!("slot-{n}.setup")),
            };
            if slot.join(".git").is_dir()
                && let Ok(checkout) = Checkout::reuse(source, &slot, &record)
            {
                return Ok((checkout, lease));
            }
            // New, or past repair (a test that broke its `.git`, a half-made slot).
            if slot.exists() {
                fs::remove_dir_all(&slot).map_err(|e| fail(&slot, e))?;
            }
            // A new slot starts with no records: what an old one touched, and what its setup
            // installed, are gone with it.
            for old in [&record, &lease.setup] {
                match fs::remove_file(old) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(fail(old, e)),
                    _ => {}
                }
            }
            return Checkout::create(source, &slot).map(|c| (c.recorded(record), lease));
        }
    }
}
