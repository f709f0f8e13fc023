//! Reusable checkouts (`--workdir-pool DIR`): prepared checkouts kept between runs, so that an
//! agent loop's checks and a batch's tasks skip writing the whole tree, and start from the
//! ignored output (`target/`, `node_modules/`, `.venv`) of the slot's last trusted moment: a
//! setup run on the base, a build seed planted. What a run's own commands leave there is gone
//! at the next use: it was written by a candidate's code.
//!
//! ```text
//! DIR/<repository>/slot-<n>/          a checkout (its own `.git`, borrowing the repository's objects)
//! DIR/<repository>/slot-<n>.lock      held (flock) by the run using the slot
//! DIR/<repository>/slot-<n>.touched   the paths patches touched there, NUL-separated
//! DIR/<repository>/slot-<n>.index     its git index at its last trusted moment (its `.git` is
//!                                     made again at each use: the commands could write it)
//! DIR/<repository>/slot-<n>.setup     the setup that ran there once (`--setup-once`), by key
//! DIR/<repository>/slot-<n>.snapshot/ its ignored output at its last trusted moment ([`Snapshot`])
//! ```
//!
//! A run takes the first slot whose lock it can get, or makes a new one; the lock is released
//! when the run ends or its process dies. A slot that cannot be reset is made again.

use super::checkout::{Checkout, CheckoutError, Source};
use super::snapshot::{Marks, Snapshot, SnapshotError};
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
    /// The slot's ignored output at its last trusted moment.
    snapshot: Snapshot,
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

    /// Record that the setup `key` names ran in this slot on its base and succeeded, its
    /// output kept ([`Lease::keep`] first).
    pub fn setup_ran(&self, key: &str) -> std::io::Result<()> {
        crate::util::atomic::write(&self.setup, key.as_bytes())
    }

    /// Keep the slot's ignored output as it is now, labelled `marks`, as what every later use
    /// starts from. Only at a trusted moment: before any patch, with only trusted commands
    /// run in the slot since it was acquired (a setup on the base, a build seed planted).
    pub fn keep(&self, checkout: &Checkout, marks: &Marks) -> Result<(), SnapshotError> {
        self.snapshot.take(checkout, marks)
    }

    /// The labels of the state the slot started from.
    pub fn marks(&self) -> Marks {
        self.snapshot.marks()
    }
}

impl WorkdirPool {
    /// A pool in `dir` (created on first use), made absolute: the sandbox hides it by its
    /// path, and a relative one would name a directory of the sandbox's own.
    pub fn new(dir: impl Into<PathBuf>) -> WorkdirPool {
        let dir = dir.into();
        WorkdirPool {
            dir: std::path::absolute(&dir).unwrap_or(dir),
        }
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
                snapshot: Snapshot::new(repo_dir.join(format!("slot-{n}.snapshot"))),
            };
            if slot.join(".git").is_dir()
                && let Ok(checkout) = Checkout::reuse(source, &slot, &record)
            {
                match lease.snapshot.restore(&checkout) {
                    Ok(restored) => {
                        log::debug!(
                            "slot {}: {} ignored entries removed, {} put back",
                            slot.display(),
                            restored.removed,
                            restored.copied
                        );
                        return Ok((checkout, lease));
                    }
                    Err(e) => log::info!("slot {} is made again: {e}", slot.display()),
                }
            }
            // New, or past repair (a test that broke its `.git`, a half-made slot).
            if slot.exists() {
                fs::remove_dir_all(&slot).map_err(|e| fail(&slot, e))?;
            }
            // A new slot starts with no records: what an old one touched, and what its setup
            // installed, are gone with it.
            for old in [&record, &lease.setup, &record.with_extension("index")] {
                match fs::remove_file(old) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(fail(old, e)),
                    _ => {}
                }
            }
            let snapshot_failed = |e: SnapshotError| CheckoutError {
                dir: slot.clone(),
                reason: e.to_string(),
            };
            lease.snapshot.remove().map_err(snapshot_failed)?;
            let checkout = Checkout::create(source, &slot)?;
            lease.snapshot.empty().map_err(snapshot_failed)?;
            return Ok((checkout.recorded(record)?, lease));
        }
    }
}
