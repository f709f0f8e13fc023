//! Base trees kept whole, so that a later checkout of the same tree copies files instead of
//! inflating every blob again from the user's packs.
//!
//! ```text
//! DIR/<key>/        the tree's files as a fresh checkout wrote them (no `.git`)
//! DIR/<key>.seen    the run that first checked the tree out: a later run keeps it
//! DIR/<key>.lock    shared while a kept tree is copied out, exclusive while it is removed
//! ```
//!
//! Inflating blobs from packed deltas is most of a checkout: 40 files (more-itertools) take
//! libgit2 8 ms and a copy with its index 3 ms; 2,000 (sympy) 300–410 ms and 140–160. A tree is
//! kept at its use by a second run, not at its first, so that a batch checking each base once
//! does not fill the disk for nothing; at most [`KEEP`] are kept, the least recently used
//! removed first. A copy gets fresh file times, as a checkout's files have: build tools that
//! compare times see nothing older than it is. The caller keeps trees only where code under
//! test cannot write the store (a sandbox), as for the other stores of the cache.

use super::copy;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

/// How many trees are kept.
pub const KEEP: usize = 4;

/// How many notes of trees seen once are kept (a few bytes each).
pub const SEEN: usize = 1024;

/// Base trees kept in a directory of the cache.
#[derive(Debug, Clone)]
pub struct TreeStore {
    dir: PathBuf,
    /// The run using it: a tree first seen by this run is not kept by it.
    run: String,
}

/// Why a kept tree could not be copied out or kept. The checkout then goes on as if none
/// were kept.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
#[error("kept base tree {path}: {source}")]
pub struct TreeError {
    /// The file or directory.
    pub path: PathBuf,
    /// What failed.
    pub source: std::io::Error,
}

/// What a kept tree's copies keep: links and directory modes, as the checkout wrote them; not
/// times, so a copy's files are new, as a checkout's are.
const TREE: copy::Keep = copy::Keep {
    times: false,
    links: true,
    dir_modes: true,
};

fn failed((path, source): copy::Failed) -> TreeError {
    TreeError { path, source }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> TreeError + '_ {
    move |source| TreeError {
        path: path.to_path_buf(),
        source,
    }
}

impl TreeStore {
    /// The store in `dir`, used by the run named `run` (unique among runs).
    pub fn new(dir: PathBuf, run: &str) -> TreeStore {
        TreeStore {
            dir,
            run: run.to_string(),
        }
    }

    /// Copy the tree kept as `key` into `to` (an empty directory). `Ok(false)` where none is
    /// kept; on an error `to` may hold part of it.
    pub fn copy_out(&self, key: &str, to: &Path) -> Result<bool, TreeError> {
        let kept = self.dir.join(key);
        if !kept.is_dir() {
            return Ok(false);
        }
        let _lock = self.lock(key, false)?;
        // Removed while the lock was awaited.
        if !kept.is_dir() {
            return Ok(false);
        }
        copy::copy_tree(&kept, to, &[], TREE).map_err(failed)?;
        // Its last use, for which the least recently used go first.
        let _ = File::open(&kept).and_then(|d| d.set_modified(std::time::SystemTime::now()));
        Ok(true)
    }

    /// Keep `from`, a work tree just checked out (nothing run in it yet), as `key` where an
    /// earlier run checked the same tree out; else note that this run did.
    pub fn keep(&self, key: &str, from: &Path) -> Result<(), TreeError> {
        fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let seen = self.dir.join(format!("{key}.seen"));
        match fs::read_to_string(&seen) {
            Ok(by) if by != self.run => {}
            Ok(_) => return Ok(()),
            Err(_) => {
                self.forget_seen();
                return fs::write(&seen, &self.run).map_err(io(&seen));
            }
        }
        let kept = self.dir.join(key);
        if kept.is_dir() {
            return Ok(());
        }
        // Written aside and renamed: a kept tree is whole or absent.
        let tmp = tempfile::Builder::new()
            .prefix(".keeping-")
            .tempdir_in(&self.dir)
            .map_err(io(&self.dir))?;
        copy::copy_tree(from, tmp.path(), &[".git"], TREE).map_err(failed)?;
        match fs::rename(tmp.path(), &kept) {
            // Another run kept it meanwhile: the same tree.
            Err(_) if kept.is_dir() => {}
            Err(e) => return Err(io(&kept)(e)),
            Ok(()) => {
                // The directory is the kept tree now: nothing left to remove.
                let _ = tmp.keep();
            }
        }
        self.evict(key);
        Ok(())
    }

    /// Past [`SEEN`] notes of trees seen once (a batch sees each base once), remove the
    /// older half: a tree whose note is gone is kept at its third run instead of its second.
    fn forget_seen(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        let mut seen: Vec<(std::time::SystemTime, PathBuf)> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".seen"))
            .filter_map(|e| Some((e.metadata().and_then(|m| m.modified()).ok()?, e.path())))
            .collect();
        if seen.len() < SEEN {
            return;
        }
        seen.sort();
        for (_, path) in seen.iter().take(seen.len() / 2) {
            let _ = fs::remove_file(path);
        }
    }

    /// Remove the least recently used trees beyond [`KEEP`], but `keep`'s and those being
    /// copied out.
    fn evict(&self, keep: &str) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        let mut kept: Vec<(std::time::SystemTime, String)> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let used = e.metadata().and_then(|m| m.modified()).ok()?;
                (!name.starts_with('.')).then_some((used, name))
            })
            .collect();
        kept.sort();
        let excess = kept.len().saturating_sub(KEEP);
        for (_, name) in kept.into_iter().take(excess) {
            if name == keep {
                continue;
            }
            let Ok(lock) = copy::lock_file(&self.lock_path(&name)) else {
                continue;
            };
            // In use by another run's copy: left for a later eviction.
            if lock.try_lock().is_err() {
                continue;
            }
            let _ = fs::remove_dir_all(self.dir.join(&name));
            let _ = fs::remove_file(self.dir.join(format!("{name}.seen")));
        }
    }

    fn lock_path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.lock"))
    }

    fn lock(&self, key: &str, exclusive: bool) -> Result<File, TreeError> {
        copy::lock(&self.lock_path(key), exclusive).map_err(failed)
    }
}

/// The key a checkout's base tree is kept under: the tree, and the settings that change how
/// a checkout writes its files (line endings), read from the checkout's configuration (the
/// user's global one included).
pub(super) fn key(repo: &git2::Repository, tree: git2::Oid) -> String {
    let config = repo.config().and_then(|mut c| c.snapshot()).ok();
    let get = |name: &str| {
        config
            .as_ref()
            .and_then(|c| c.get_string(name).ok())
            .unwrap_or_default()
    };
    let settings = format!("autocrlf={} eol={}", get("core.autocrlf"), get("core.eol"));
    let digest = crate::util::digest::hash(settings.as_bytes());
    format!("{tree}-{}", &digest[..digest.len().min(12)])
}

/// Fill the fresh checkout `repo` (nothing in its work tree but `.git`) from the tree `store`
/// keeps as `key`, with an index of the base tree `tree` that records the copies as written
/// (so that nothing reads them back to learn they are unchanged). False where none is kept or
/// it could not be copied: the work tree is emptied again for a checkout.
pub(super) fn copy_into(
    store: &TreeStore,
    key: &str,
    repo: &git2::Repository,
    tree: git2::Oid,
) -> bool {
    let Some(workdir) = repo.workdir() else {
        return false;
    };
    let copied = store
        .copy_out(key, workdir)
        .map_err(|e| e.to_string())
        .and_then(|copied| {
            if copied {
                index_copies(repo, tree, workdir)?;
            }
            Ok(copied)
        });
    match copied {
        Ok(copied) => copied,
        Err(e) => {
            log::info!("{e}; checked out instead");
            clear_but_git(workdir);
            false
        }
    }
}

/// Write the index of `tree`, each entry with the stat data of its file in `workdir`.
fn index_copies(repo: &git2::Repository, tree: git2::Oid, workdir: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    let git = |e: git2::Error| e.message().to_string();
    let tree = repo.find_tree(tree).map_err(git)?;
    let mut index = repo.index().map_err(git)?;
    index.read_tree(&tree).map_err(git)?;
    let entries: Vec<git2::IndexEntry> = index.iter().collect();
    for mut entry in entries {
        // A submodule is an empty directory, with no stat data in a checkout's index either.
        if entry.mode == 0o160000 {
            continue;
        }
        let path = workdir.join(std::ffi::OsStr::from_bytes(&entry.path));
        let meta = fs::symlink_metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        // The index's fields are 32 bits wide, as git truncates them.
        entry.ctime = git2::IndexTime::new(meta.ctime() as i32, meta.ctime_nsec() as u32);
        entry.mtime = git2::IndexTime::new(meta.mtime() as i32, meta.mtime_nsec() as u32);
        entry.dev = meta.dev() as u32;
        entry.ino = meta.ino() as u32;
        entry.uid = meta.uid();
        entry.gid = meta.gid();
        entry.file_size = meta.size() as u32;
        index.add(&entry).map_err(git)?;
    }
    index.write().map_err(git)
}

/// Remove everything in `workdir` but its `.git`.
fn clear_but_git(workdir: &Path) {
    for entry in fs::read_dir(workdir).into_iter().flatten().flatten() {
        if entry.file_name() == ".git" {
            continue;
        }
        let path = entry.path();
        let _ = match entry.file_type() {
            Ok(t) if t.is_dir() => fs::remove_dir_all(&path),
            _ => fs::remove_file(&path),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tree(dir: &Path) {
        fs::create_dir_all(dir.join("a/b")).unwrap();
        fs::write(dir.join("a/b/file.txt"), "text\n").unwrap();
        fs::write(dir.join("run.sh"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(dir.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("a/b/file.txt", dir.join("link")).unwrap();
        fs::create_dir_all(dir.join("empty")).unwrap();
        fs::create_dir_all(dir.join(".git")).unwrap();
        fs::write(dir.join(".git/HEAD"), "x").unwrap();
    }

    #[test]
    fn a_tree_is_kept_at_its_use_by_a_second_run_and_copied_out_as_written() {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        tree(&work);
        let store = tmp.path().join("store");
        let first = TreeStore::new(store.clone(), "run-1");
        assert!(!first.copy_out("k", &tmp.path().join("none")).unwrap());
        first.keep("k", &work).unwrap();
        // Seen twice by one run (its baseline and its candidate): not kept.
        first.keep("k", &work).unwrap();
        assert!(!store.join("k").exists());
        let second = TreeStore::new(store.clone(), "run-2");
        second.keep("k", &work).unwrap();
        assert!(store.join("k").is_dir());
        assert!(
            !store.join("k/.git").exists(),
            "the checkout's .git is not kept"
        );
        let out = tmp.path().join("out");
        assert!(second.copy_out("k", &out).unwrap());
        assert_eq!(
            fs::read_to_string(out.join("a/b/file.txt")).unwrap(),
            "text\n"
        );
        let mode = fs::metadata(out.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "the executable bit is kept");
        assert_eq!(
            fs::read_link(out.join("link")).unwrap(),
            Path::new("a/b/file.txt")
        );
        assert!(out.join("empty").is_dir());
        assert!(!out.join(".git").exists());
        // New files: their times are the copy's, not the kept tree's.
        let kept_time = fs::metadata(store.join("k/a/b/file.txt"))
            .unwrap()
            .modified()
            .unwrap();
        let copy_time = fs::metadata(out.join("a/b/file.txt"))
            .unwrap()
            .modified()
            .unwrap();
        assert!(copy_time >= kept_time);
    }

    #[test]
    fn notes_of_trees_seen_once_are_bounded_the_oldest_go() {
        let tmp = tempfile::tempdir().unwrap();
        let store = tmp.path().join("store");
        fs::create_dir_all(&store).unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000);
        for i in 0..SEEN {
            let note = store.join(format!("t{i}.seen"));
            fs::write(&note, "a run").unwrap();
            let when = old + std::time::Duration::from_secs(i as u64);
            File::options()
                .write(true)
                .open(&note)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        let work = tmp.path().join("work");
        tree(&work);
        TreeStore::new(store.clone(), "b")
            .keep("new", &work)
            .unwrap();
        let notes = fs::read_dir(&store)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".seen"))
            .count();
        assert_eq!(notes, SEEN - SEEN / 2 + 1);
        assert!(!store.join("t0.seen").exists());
        assert!(store.join(format!("t{}.seen", SEEN - 1)).exists());
        assert!(store.join("new.seen").exists());
    }

    #[test]
    fn at_most_keep_trees_are_kept_the_least_recently_used_go() {
        let tmp = tempfile::tempdir().unwrap();
        let work = tmp.path().join("work");
        tree(&work);
        let store = tmp.path().join("store");
        let (a, b) = (
            TreeStore::new(store.clone(), "a"),
            TreeStore::new(store.clone(), "b"),
        );
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000);
        for i in 0..KEEP + 2 {
            let key = format!("k{i}");
            a.keep(&key, &work).unwrap();
            b.keep(&key, &work).unwrap();
            // Each older than the next, the first the oldest.
            let when = old + std::time::Duration::from_secs(i as u64);
            File::open(store.join(&key))
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        // The last eviction ran before the last time was set: once more.
        b.evict("none");
        let left: Vec<bool> = (0..KEEP + 2)
            .map(|i| store.join(format!("k{i}")).is_dir())
            .collect();
        assert_eq!(left.iter().filter(|k| **k).count(), KEEP, "{left:?}");
        assert!(!left[0] && !left[1], "{left:?}");
        // A tree being copied out (its lock held shared) is not removed.
        let lock = b.lock("k2", false).unwrap();
        File::open(store.join("k2"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        a.keep("k9", &work).unwrap();
        b.keep("k9", &work).unwrap();
        assert!(store.join("k2").is_dir());
        drop(lock);
    }
}
