//! A pool slot's ignored output as it was at its last trusted moment, kept beside the slot and
//! put back before every use, so that nothing a candidate's code left there (a module first on
//! the import path, a test library edited to pass, a poisoned build artefact) reaches a later
//! run.
//!
//! ```text
//! slot-<n>.snapshot/manifest.json   each ignored entry of the slot, as the slot holds it
//! slot-<n>.snapshot/marks.json      what the state holds (the caller's labels: its build seed)
//! slot-<n>.snapshot/files/          a copy of each entry
//! ```
//!
//! An entry is as it was when its kind, mode, size, inode, modification time and change time
//! all are. The change time is the kernel's, which no process can set back: an edit that
//! restores the content's size and modification time still shows. The copies are never
//! linked to the slot's files, so nothing written through the slot reaches them.

use super::checkout::{Checkout, CheckoutError, Tracked};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File, Metadata};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Bumped when the layout changes; a slot with an older snapshot is made again.
const VERSION: u32 = 1;

/// patchgrade's build caches inside the checkout's `.git` (Go's), which the tests write to as
/// they do to ignored output.
const IN_GIT: &str = ".git/patchgrade";

/// The labels of a snapshot's state ([`Snapshot::marks`]).
pub type Marks = BTreeMap<String, String>;

/// Why a snapshot could not be taken or put back. Either way the slot cannot be trusted, and
/// the pool makes it again.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// Reading or writing a file.
    #[error("slot snapshot, {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// No snapshot there, or one of another version or torn.
    #[error("slot snapshot {0}: missing or unreadable")]
    Missing(PathBuf),
    /// Reading the checkout's base tree.
    #[error("slot snapshot: {0}")]
    Checkout(#[from] CheckoutError),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SnapshotError + '_ {
    move |source| SnapshotError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Kind {
    Dir,
    File,
    Link,
}

/// An entry as the slot holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    kind: Kind,
    mode: u32,
    size: u64,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Entry {
    /// `None` for what is kept of no slot: a FIFO, a socket, a device.
    fn of(meta: &Metadata) -> Option<Entry> {
        let kind = meta.file_type();
        let kind = if kind.is_symlink() {
            Kind::Link
        } else if kind.is_dir() {
            Kind::Dir
        } else if kind.is_file() {
            Kind::File
        } else {
            return None;
        };
        Some(Entry {
            kind,
            mode: meta.mode() & 0o7777,
            size: meta.size(),
            ino: meta.ino(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        })
    }
}

#[derive(Debug, Deserialize)]
struct Manifest {
    version: u32,
    entries: BTreeMap<String, Entry>,
}

/// What a restore did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Restored {
    /// Entries removed: new since the snapshot, or changed.
    pub removed: usize,
    /// Entries copied back: changed, or gone.
    pub copied: usize,
    /// Directories whose mode was put back.
    pub modes: usize,
}

/// A slot's snapshot, in its own directory beside the slot.
#[derive(Debug, Clone)]
pub struct Snapshot {
    dir: PathBuf,
}

impl Snapshot {
    /// The snapshot kept in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Snapshot {
        Snapshot { dir: dir.into() }
    }

    /// Record a fresh checkout's state: no ignored output at all.
    pub fn empty(&self) -> Result<(), SnapshotError> {
        let fresh = self.fresh()?;
        fs::create_dir(fresh.path().join("files")).map_err(io(fresh.path()))?;
        write_manifest(fresh.path(), &BTreeMap::new())?;
        write_marks(fresh.path(), &Marks::new())?;
        self.swap_in(fresh)
    }

    /// Record the checkout's ignored output as it is now, labelled `marks`, as the state
    /// every later restore returns to. Only at a trusted moment: before any patch, with only
    /// trusted commands run since the last restore. An entry whose name is not UTF-8, and a
    /// special file, are not kept (the next restore removes them).
    pub fn take(&self, checkout: &Checkout, marks: &Marks) -> Result<(), SnapshotError> {
        let tracked = checkout.tracked()?;
        let fresh = self.fresh()?;
        let files = fresh.path().join("files");
        fs::create_dir(&files).map_err(io(&files))?;
        let mut entries = BTreeMap::new();
        walk(checkout.workdir(), &tracked, &mut |key, full, meta| {
            let (Some(key), Some(entry)) = (key, Entry::of(meta)) else {
                return Ok(false);
            };
            let to = files.join(key);
            // An ignored entry in a tracked directory: the copy's parents are made as needed.
            if let Some(parent) = to.parent() {
                fs::create_dir_all(parent).map_err(io(parent))?;
            }
            match entry.kind {
                Kind::Dir => fs::create_dir_all(&to).map_err(io(&to))?,
                Kind::File => copy_file(full, &to, entry.mtime)?,
                Kind::Link => {
                    let target = fs::read_link(full).map_err(io(full))?;
                    std::os::unix::fs::symlink(target, &to).map_err(io(&to))?;
                }
            }
            let descend = entry.kind == Kind::Dir;
            entries.insert(key.to_string(), entry);
            Ok(descend)
        })?;
        write_manifest(fresh.path(), &entries)?;
        write_marks(fresh.path(), marks)?;
        self.swap_in(fresh)
    }

    /// The labels the last [`Snapshot::take`] gave (none when there is no snapshot).
    pub fn marks(&self) -> Marks {
        fs::read(self.dir.join("marks.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Put the checkout's ignored output back as the snapshot holds it: remove every entry it
    /// does not hold or that changed, copy back every one it holds that is gone. Run after the
    /// tracked files are reset (so what is not tracked is ignored output), while nothing runs
    /// in the checkout.
    pub fn restore(&self, checkout: &Checkout) -> Result<Restored, SnapshotError> {
        let mut entries = read_manifest(&self.dir)?;
        let tracked = checkout.tracked()?;
        let workdir = checkout.workdir();
        let mut done = Restored::default();
        let mut kept: HashSet<String> = HashSet::new();
        walk(workdir, &tracked, &mut |key, full, meta| {
            let held = key.and_then(|k| entries.get(k).map(|e| (k, e)));
            let now = Entry::of(meta);
            let Some((key, (was, now))) = held.and_then(|(k, e)| Some((k, (e, now?)))) else {
                remove(full)?;
                done.removed += 1;
                return Ok(false);
            };
            if now.kind != was.kind {
                remove(full)?;
                done.removed += 1;
                return Ok(false);
            }
            if was.kind == Kind::Dir {
                // What a directory holds is looked at entry by entry; its own mode is all
                // that is left to put back.
                if now.mode != was.mode {
                    let mode = fs::Permissions::from_mode(was.mode);
                    fs::set_permissions(full, mode).map_err(io(full))?;
                    done.modes += 1;
                }
                kept.insert(key.to_string());
                return Ok(true);
            }
            if now == *was {
                kept.insert(key.to_string());
            } else {
                remove(full)?;
                done.removed += 1;
            }
            Ok(false)
        })?;
        let files = self.dir.join("files");
        let mut dirs = Vec::new();
        // Parents sort before what is in them.
        for (key, entry) in entries.iter_mut() {
            if kept.contains(key) {
                continue;
            }
            let (from, to) = (files.join(key), workdir.join(key));
            match entry.kind {
                Kind::Dir => {
                    fs::create_dir(&to).map_err(io(&to))?;
                    dirs.push((to.clone(), entry.mode));
                }
                Kind::File => copy_file(&from, &to, entry.mtime)?,
                Kind::Link => {
                    let target = fs::read_link(&from).map_err(io(&from))?;
                    std::os::unix::fs::symlink(target, &to).map_err(io(&to))?;
                }
            }
            let meta = fs::symlink_metadata(&to).map_err(io(&to))?;
            *entry = Entry::of(&meta).ok_or_else(|| SnapshotError::Missing(to.clone()))?;
            done.copied += 1;
        }
        // Modes last, children first: a directory without write permission is still filled.
        for (dir, mode) in dirs.into_iter().rev() {
            fs::set_permissions(&dir, fs::Permissions::from_mode(mode)).map_err(io(&dir))?;
        }
        if done.copied > 0 {
            write_manifest(&self.dir, &entries)?;
        }
        Ok(done)
    }

    /// Remove the snapshot (with its slot).
    pub fn remove(&self) -> Result<(), SnapshotError> {
        match fs::remove_dir_all(&self.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(&self.dir)(e)),
            _ => Ok(()),
        }
    }

    /// A new snapshot's directory, beside this one.
    fn fresh(&self) -> Result<tempfile::TempDir, SnapshotError> {
        let parent = self.dir.parent().unwrap_or(Path::new("."));
        tempfile::Builder::new()
            .prefix(".snapshot.new-")
            .tempdir_in(parent)
            .map_err(io(parent))
    }

    /// Replace the snapshot with `fresh`. Between the two renames there is none, which a
    /// restore reads as a slot to make again.
    fn swap_in(&self, fresh: tempfile::TempDir) -> Result<(), SnapshotError> {
        let parent = self.dir.parent().unwrap_or(Path::new("."));
        let old = tempfile::Builder::new()
            .prefix(".snapshot.old-")
            .tempdir_in(parent)
            .map_err(io(parent))?;
        if fs::symlink_metadata(&self.dir).is_ok() {
            let aside = old.path().join("old");
            fs::rename(&self.dir, &aside).map_err(io(&self.dir))?;
        }
        let fresh = fresh.keep();
        fs::rename(&fresh, &self.dir).map_err(io(&self.dir))?;
        // `old` and what was moved into it go when it is dropped.
        Ok(())
    }
}

/// What [`walk`] calls for each entry: its key, its path, its metadata; returns whether to
/// look inside.
type Visit<'a> = dyn FnMut(Option<&str>, &Path, &Metadata) -> Result<bool, SnapshotError> + 'a;

/// Call `visit(key, path, metadata)` for every ignored entry of the work tree (not following
/// links), parents before what is in them, and for what patchgrade keeps in `.git`; `key` is
/// the path relative to the work tree, `None` when it is not UTF-8. Returns from `visit`
/// whether to look inside (a directory).
fn walk(workdir: &Path, tracked: &Tracked, visit: &mut Visit<'_>) -> Result<(), SnapshotError> {
    walk_dir(workdir, "", tracked, false, visit)?;
    let in_git = workdir.join(IN_GIT);
    if let Ok(meta) = fs::symlink_metadata(&in_git)
        && visit(Some(IN_GIT), &in_git, &meta)?
    {
        walk_dir(workdir, IN_GIT, tracked, true, visit)?;
    }
    Ok(())
}

fn walk_dir(
    workdir: &Path,
    rel: &str,
    tracked: &Tracked,
    ignored: bool,
    visit: &mut Visit<'_>,
) -> Result<(), SnapshotError> {
    let dir = workdir.join(rel);
    let mut names: Vec<_> = fs::read_dir(&dir)
        .map_err(io(&dir))?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()
        .map_err(io(&dir))?;
    names.sort();
    for name in names {
        let full = dir.join(&name);
        let key = name.to_str().map(|n| match rel {
            "" => n.to_string(),
            _ => format!("{rel}/{n}"),
        });
        if !ignored && rel.is_empty() && name == ".git" {
            continue;
        }
        let meta = fs::symlink_metadata(&full).map_err(io(&full))?;
        if !ignored && let Some(key) = &key {
            if tracked.leaves.contains(key) {
                continue;
            }
            if tracked.dirs.contains(key) && meta.is_dir() {
                walk_dir(workdir, key, tracked, false, visit)?;
                continue;
            }
        }
        if visit(key.as_deref(), &full, &meta)?
            && let Some(key) = &key
        {
            walk_dir(workdir, key, tracked, true, visit)?;
        }
    }
    Ok(())
}

/// Copy a regular file with its mode and modification time.
fn copy_file(from: &Path, to: &Path, (secs, nanos): (i64, i64)) -> Result<(), SnapshotError> {
    fs::copy(from, to).map_err(io(from))?;
    let time = if secs >= 0 {
        SystemTime::UNIX_EPOCH
            + Duration::new(secs.unsigned_abs(), nanos.clamp(0, 999_999_999) as u32)
    } else {
        SystemTime::UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs())
    };
    // Opened for reading: setting a time needs ownership, not write permission, and a
    // read-only file (a package's data) is copied read-only.
    File::open(to)
        .and_then(|f| f.set_modified(time))
        .map_err(io(to))
}

/// Remove an entry, not following a link.
fn remove(path: &Path) -> Result<(), SnapshotError> {
    let meta = fs::symlink_metadata(path).map_err(io(path))?;
    if meta.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    }
    .map_err(io(path))
}

fn write_manifest(dir: &Path, entries: &BTreeMap<String, Entry>) -> Result<(), SnapshotError> {
    #[derive(Serialize)]
    struct Written<'a> {
        version: u32,
        entries: &'a BTreeMap<String, Entry>,
    }
    let manifest = Written {
        version: VERSION,
        entries,
    };
    let path = dir.join("manifest.json");
    let json = serde_json::to_vec(&manifest).map_err(|e| io(&path)(e.into()))?;
    crate::util::atomic::write(&path, &json).map_err(io(&path))
}

fn write_marks(dir: &Path, marks: &Marks) -> Result<(), SnapshotError> {
    let path = dir.join("marks.json");
    let json = serde_json::to_vec(marks).map_err(|e| io(&path)(e.into()))?;
    fs::write(&path, json).map_err(io(&path))
}

fn read_manifest(dir: &Path) -> Result<BTreeMap<String, Entry>, SnapshotError> {
    let missing = || SnapshotError::Missing(dir.to_path_buf());
    let bytes = fs::read(dir.join("manifest.json")).map_err(|_| missing())?;
    let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|_| missing())?;
    if manifest.version != VERSION {
        return Err(missing());
    }
    Ok(manifest.entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::checkout::Source;
    use std::process::Command;

    /// A repository with a tracked file, a tracked directory and a tracked link, its ignored
    /// output in `node_modules/`, `build/` and `pkg/__pycache__/`, and a checkout of it.
    struct Slot {
        _tmp: tempfile::TempDir,
        checkout: Checkout,
        snapshot: Snapshot,
    }

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    fn slot() -> Slot {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        fs::create_dir_all(repo.join("pkg")).unwrap();
        fs::write(
            repo.join(".gitignore"),
            "node_modules/\nbuild/\n__pycache__/\n",
        )
        .unwrap();
        fs::write(repo.join("pkg/mod.py"), "x = 1\n").unwrap();
        std::os::unix::fs::symlink("pkg/mod.py", repo.join("link.py")).unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", "base"]);
        let source = Source::resolve(&repo, "HEAD").unwrap();
        let checkout = Checkout::create(&source, &tmp.path().join("slot-0")).unwrap();
        let work = checkout.workdir().to_path_buf();
        fs::create_dir_all(work.join("node_modules/lib/bin")).unwrap();
        fs::write(
            work.join("node_modules/lib/index.js"),
            "module.exports = 1\n",
        )
        .unwrap();
        std::os::unix::fs::symlink("../index.js", work.join("node_modules/lib/bin/run")).unwrap();
        // Read-only, as some packages ship their files: copied, and copied back, all the same.
        let data = work.join("node_modules/lib/data.json");
        fs::write(&data, "{}").unwrap();
        fs::set_permissions(&data, fs::Permissions::from_mode(0o444)).unwrap();
        fs::create_dir_all(work.join("pkg/__pycache__")).unwrap();
        fs::write(work.join("pkg/__pycache__/mod.pyc"), "sealed").unwrap();
        fs::create_dir_all(work.join(IN_GIT).join("go-build")).unwrap();
        fs::write(work.join(IN_GIT).join("go-build/ab-d"), "object").unwrap();
        let snapshot = Snapshot::new(tmp.path().join("slot-0.snapshot"));
        let marks = Marks::from([("seed".to_string(), "s1".to_string())]);
        snapshot.take(&checkout, &marks).unwrap();
        Slot {
            _tmp: tmp,
            checkout,
            snapshot,
        }
    }

    /// Every entry under the work tree but `.git` (and `.git/patchgrade`), with its bytes
    /// (a link's target) and mode.
    fn state(slot: &Slot) -> BTreeMap<String, (Vec<u8>, u32, u64)> {
        let mut all = BTreeMap::new();
        let root = slot.checkout.workdir();
        let mut stack = vec![root.to_path_buf(), root.join(IN_GIT)];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                if rel == ".git" {
                    continue;
                }
                let meta = fs::symlink_metadata(&path).unwrap();
                let bytes = if meta.file_type().is_symlink() {
                    fs::read_link(&path)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes()
                } else if meta.is_file() {
                    fs::read(&path).unwrap()
                } else {
                    stack.push(path.clone());
                    Vec::new()
                };
                let mtime = if meta.is_file() {
                    meta.mtime() as u64
                } else {
                    0
                };
                all.insert(rel, (bytes, meta.mode() & 0o7777, mtime));
            }
        }
        all
    }

    #[test]
    fn an_untouched_slot_is_left_as_it_is() {
        let slot = slot();
        let before = state(&slot);
        let done = slot.snapshot.restore(&slot.checkout).unwrap();
        assert_eq!(done, Restored::default());
        assert_eq!(state(&slot), before);
        assert_eq!(slot.snapshot.marks()["seed"], "s1");
    }

    #[test]
    fn every_change_to_ignored_output_is_put_back() {
        use std::os::unix::fs::symlink;
        type Edit = (&'static str, fn(&Path));
        let edits: &[Edit] = &[
            ("a new file", |w| {
                fs::write(w.join("node_modules/planted.js"), "x").unwrap()
            }),
            ("a new directory", |w| {
                fs::create_dir_all(w.join("build/deep/er")).unwrap()
            }),
            ("a new file in a tracked directory", |w| {
                fs::write(w.join("pkg/calc.py"), "planted").unwrap()
            }),
            ("an edit", |w| {
                fs::write(w.join("node_modules/lib/index.js"), "forged!\n").unwrap()
            }),
            ("an edit of the same size and time", |w| {
                let p = w.join("node_modules/lib/index.js");
                let mtime = fs::metadata(&p).unwrap().modified().unwrap();
                fs::write(&p, "module.exports = 2\n").unwrap();
                File::options()
                    .write(true)
                    .open(&p)
                    .unwrap()
                    .set_modified(mtime)
                    .unwrap();
            }),
            ("a file replaced by rename", |w| {
                fs::write(w.join("node_modules/x"), "module.exports = 9\n").unwrap();
                fs::rename(
                    w.join("node_modules/x"),
                    w.join("node_modules/lib/index.js"),
                )
                .unwrap();
            }),
            ("a removal", |w| {
                fs::remove_file(w.join("pkg/__pycache__/mod.pyc")).unwrap()
            }),
            ("a read-only file removed", |w| {
                fs::remove_file(w.join("node_modules/lib/data.json")).unwrap()
            }),
            ("a directory removed", |w| {
                fs::remove_dir_all(w.join("node_modules")).unwrap()
            }),
            ("a directory replaced by a link", |w| {
                fs::remove_dir_all(w.join("node_modules/lib")).unwrap();
                symlink("/etc", w.join("node_modules/lib")).unwrap();
            }),
            ("a link retargeted", |w| {
                fs::remove_file(w.join("node_modules/lib/bin/run")).unwrap();
                symlink("/etc/passwd", w.join("node_modules/lib/bin/run")).unwrap();
            }),
            ("a mode changed", |w| {
                let p = w.join("node_modules/lib/index.js");
                fs::set_permissions(&p, fs::Permissions::from_mode(0o777)).unwrap();
            }),
            ("a directory's mode changed", |w| {
                let p = w.join("node_modules/lib");
                fs::set_permissions(&p, fs::Permissions::from_mode(0o700)).unwrap();
            }),
            ("a file replaced by a directory", |w| {
                fs::remove_file(w.join("pkg/__pycache__/mod.pyc")).unwrap();
                fs::create_dir(w.join("pkg/__pycache__/mod.pyc")).unwrap();
            }),
            ("a build cache entry in .git", |w| {
                fs::write(w.join(IN_GIT).join("go-build/ab-d"), "poisoned").unwrap()
            }),
            ("a build cache entry added in .git", |w| {
                fs::write(w.join(IN_GIT).join("go-build/cd-d"), "poisoned").unwrap()
            }),
        ];
        for (what, edit) in edits {
            let slot = slot();
            let before = state(&slot);
            edit(slot.checkout.workdir());
            assert_ne!(state(&slot), before, "{what}: the edit changed nothing");
            let done = slot.snapshot.restore(&slot.checkout).unwrap();
            assert!(done.removed + done.copied + done.modes > 0, "{what}");
            assert_eq!(state(&slot), before, "{what}");
            // And a second restore finds nothing to do: the manifest follows the copies.
            let again = slot.snapshot.restore(&slot.checkout).unwrap();
            assert_eq!(again, Restored::default(), "{what}");
        }
    }

    #[test]
    fn tracked_files_and_links_are_not_its_business() {
        let slot = slot();
        let w = slot.checkout.workdir();
        fs::write(w.join("pkg/mod.py"), "x = 2\n").unwrap();
        let done = slot.snapshot.restore(&slot.checkout).unwrap();
        assert_eq!(done, Restored::default());
        assert_eq!(fs::read_to_string(w.join("pkg/mod.py")).unwrap(), "x = 2\n");
        assert!(
            fs::symlink_metadata(w.join("link.py"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn an_empty_snapshot_removes_all_ignored_output() {
        let slot = slot();
        slot.snapshot.empty().unwrap();
        let done = slot.snapshot.restore(&slot.checkout).unwrap();
        // node_modules, pkg/__pycache__, .git/patchgrade.
        assert_eq!(done.removed, 3);
        let left: Vec<String> = state(&slot).into_keys().collect();
        assert_eq!(left, [".gitignore", "link.py", "pkg", "pkg/mod.py"]);
        assert!(slot.snapshot.marks().is_empty());
    }

    #[test]
    fn no_snapshot_or_a_torn_one_is_an_error() {
        let slot = slot();
        fs::write(slot.snapshot.dir.join("manifest.json"), "{").unwrap();
        assert!(matches!(
            slot.snapshot.restore(&slot.checkout),
            Err(SnapshotError::Missing(_))
        ));
        slot.snapshot.remove().unwrap();
        assert!(matches!(
            slot.snapshot.restore(&slot.checkout),
            Err(SnapshotError::Missing(_))
        ));
        assert!(slot.snapshot.marks().is_empty());
    }
}
