//! Build seeds: a trusted run's build output (cargo's `target/`, Go's build cache), kept and
//! copied into later fresh checkouts, so that their builds start warm instead of cold.
//!
//! ```text
//! DIR/<name>/manifest.json   what the seed was built from: base tree, paths patches changed
//! DIR/<name>/<build dir>/…   the build output, file times kept
//! DIR/<name>.lock            shared while a seed is copied out, exclusive while it is replaced
//! ```
//!
//! Only a trusted run may save one (a baseline, sandboxed, in a checkout nothing else used):
//! a seed is copied, never linked, so what a test writes in its copy stays in its checkout.
//!
//! Build tools that decide freshness by file times (cargo for the crate's own sources) would
//! see every file of a fresh checkout as newer than the seed and rebuild everything. So after
//! planting, the tracked files whose content is what the seed was built from get an old time
//! ([`SETTLED`]); every other file keeps its checkout time, later than any seed, and so does
//! every file a patch writes after: what differs is rebuilt, what is the same is not.

use super::checkout::Checkout;
use super::copy;
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Bumped when a seed's layout or meaning changes; older seeds are then ignored.
const VERSION: u32 = 1;

/// The time given to files that are as the seed saw them: 2000-01-01, before any seed.
pub const SETTLED: Duration = Duration::from_secs(946_684_800);

/// Build output a runner keeps under the checkout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildDir {
    /// Where, relative to the checkout's root (for bytecode, the directories' name).
    pub path: &'static str,
    /// Whether the tool compares file times (so unchanged sources must look old).
    pub by_mtime: bool,
    /// Entries directly under it that are never kept (reports, not build output).
    pub skip: &'static [&'static str],
    /// How it is laid out, and so kept.
    pub kind: BuildKind,
}

/// How a [`BuildDir`] is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildKind {
    /// One directory, copied whole.
    Tree,
    /// Python's bytecode: each `__pycache__` beside a tracked source, and in it only what is
    /// sealed hash-checked for the source it was compiled from ([`crate::util::pyc`]). A
    /// timestamp `.pyc` trusts a source of the same size and time, which a fresh checkout's
    /// files easily are; a sealed one is used only while its source is byte for byte the same,
    /// so a patched file compiles anew, and a planted `.pyc` never runs for another source.
    PythonBytecode,
}

/// Where a seed keeps its bytecode: the `__pycache__` directories by their parent's path.
const BYTECODE: &str = "bytecode";

/// What a seed was built from.
#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    version: u32,
    /// The base tree of the checkout it was built in.
    tree: String,
    /// Paths that patches changed there before the build (the test patch's files).
    touched: Vec<String>,
}

/// Why a seed could not be saved or planted. Neither is fatal to a check: a seed only saves
/// time, so the caller goes on cold.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeedError {
    /// Reading or writing a file.
    #[error("build seed {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// Reading the checkout's trees.
    #[error("build seed: {0}")]
    Checkout(#[from] super::checkout::CheckoutError),
}

/// What a seed's copies keep: file times (tools compare them), no links.
const BUILD: copy::Keep = copy::Keep {
    times: true,
    links: false,
    dir_modes: false,
};

fn failed((path, source): copy::Failed) -> SeedError {
    SeedError::Io { path, source }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SeedError + '_ {
    move |source| SeedError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A directory of build seeds, by name (the caller's key).
#[derive(Debug, Clone)]
pub struct SeedStore {
    dir: PathBuf,
}

impl SeedStore {
    /// Seeds in `dir` (created on first save).
    pub fn new(dir: impl Into<PathBuf>) -> SeedStore {
        SeedStore { dir: dir.into() }
    }

    /// Keep `dirs` of the checkout in `workdir`, of base tree `tree`, as the seed `name`,
    /// replacing an older one. `touched` are the paths patches changed there before its
    /// build. Returns whether there was anything to keep.
    pub fn save(
        &self,
        name: &str,
        workdir: &Path,
        tree: git2::Oid,
        touched: &[String],
        dirs: &[BuildDir],
    ) -> Result<bool, SeedError> {
        let present: Vec<&BuildDir> = dirs
            .iter()
            .filter(|d| d.kind == BuildKind::PythonBytecode || workdir.join(d.path).is_dir())
            .collect();
        if present.is_empty() {
            return Ok(false);
        }
        fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let fresh = tempfile::Builder::new()
            .prefix(&format!(".{name}.new-"))
            .tempdir_in(&self.dir)
            .map_err(io(&self.dir))?;
        let mut kept = 0;
        for d in present {
            match d.kind {
                BuildKind::Tree => {
                    copy::copy_tree(
                        &workdir.join(d.path),
                        &fresh.path().join(d.path),
                        d.skip,
                        BUILD,
                    )
                    .map_err(failed)?;
                    kept += 1;
                }
                BuildKind::PythonBytecode => {
                    let to = fresh.path().join(BYTECODE);
                    kept += save_bytecode(workdir, tree, d.path, &to)?;
                }
            }
        }
        if kept == 0 {
            return Ok(false);
        }
        let manifest = Manifest {
            version: VERSION,
            tree: tree.to_string(),
            touched: touched.to_vec(),
        };
        let path = fresh.path().join("manifest.json");
        let json = serde_json::to_vec(&manifest).map_err(|e| io(&path)(e.into()))?;
        fs::write(&path, json).map_err(io(&path))?;
        // Swapped in under the exclusive lock, so no plant copies from a half-removed seed.
        let _lock = self.lock(name, true)?;
        let target = self.dir.join(name);
        if target.exists() {
            fs::remove_dir_all(&target).map_err(io(&target))?;
        }
        let kept = fresh.keep();
        fs::rename(&kept, &target).map_err(io(&target))?;
        Ok(true)
    }

    /// Whether the seed `name` is here.
    pub fn has(&self, name: &str) -> bool {
        self.dir.join(name).join("manifest.json").is_file()
    }

    /// Copy the seed `name` into `checkout`, a fresh one nothing has run in yet, and settle
    /// the times of the files it saw as they are. Build dirs the checkout already has are
    /// left alone. Returns whether a seed was planted. On an error the planted copies are
    /// removed again, so the checkout is as fresh as before.
    pub fn plant(
        &self,
        name: &str,
        checkout: &Checkout,
        dirs: &[BuildDir],
    ) -> Result<bool, SeedError> {
        let seed = self.dir.join(name);
        if !seed.join("manifest.json").is_file() {
            return Ok(false);
        }
        let _lock = self.lock(name, false)?;
        let path = seed.join("manifest.json");
        // A seed that cannot be read (an older layout, a torn write) is no seed.
        let manifest: Option<Manifest> = fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let Some((manifest, tree)) = manifest
            .filter(|m| m.version == VERSION)
            .and_then(|m| git2::Oid::from_str(&m.tree).ok().map(|t| (m, t)))
        else {
            return Ok(false);
        };
        let mut planted = Vec::new();
        let result = (|| {
            let mut any = false;
            for d in dirs {
                if d.kind == BuildKind::PythonBytecode {
                    any |= plant_bytecode(&seed.join(BYTECODE), checkout.workdir(), d.path)?;
                    continue;
                }
                let (from, to) = (seed.join(d.path), checkout.workdir().join(d.path));
                if from.is_dir() && fs::symlink_metadata(&to).is_err() {
                    planted.push(to.clone());
                    copy::copy_tree(&from, &to, &[], BUILD).map_err(failed)?;
                }
            }
            if planted.is_empty() && !any {
                return Ok(false);
            }
            if dirs.iter().any(|d| d.by_mtime) {
                settle(checkout, tree, &manifest.touched)?;
            }
            Ok(true)
        })();
        if result.is_err() {
            for dir in planted {
                let _ = fs::remove_dir_all(dir);
            }
        }
        result
    }

    fn lock(&self, name: &str, exclusive: bool) -> Result<File, SeedError> {
        copy::lock(&self.dir.join(format!("{name}.lock")), exclusive).map_err(failed)
    }
}

/// Keep the bytecode of the checkout in `workdir` (base tree `tree`) under `to`: for each
/// directory of a tracked `.py` file, its `name` directory's `.pyc` files compiled from that
/// directory's sources as they are now, sealed hash-checked. Returns how many were kept.
fn save_bytecode(
    workdir: &Path,
    tree: git2::Oid,
    name: &str,
    to: &Path,
) -> Result<usize, SeedError> {
    let dirs = source_dirs(workdir, tree)?;
    let mut kept = 0;
    for dir in dirs {
        let cache = workdir.join(&dir).join(name);
        let Ok(entries) = fs::read_dir(&cache) else {
            continue;
        };
        for entry in entries.flatten() {
            let file = entry.file_name();
            let file = file.to_string_lossy();
            // `mod.cpython-311.pyc`, `mod.cpython-311.opt-1.pyc`, pytest's rewritten
            // `test_x.cpython-311-pytest-9.2.0.pyc`: the source is `mod.py` beside the cache.
            let (Some(stem), true) = (file.split('.').next(), file.ends_with(".pyc")) else {
                continue;
            };
            let source_path = workdir.join(&dir).join(format!("{stem}.py"));
            let (Ok(source), Ok(meta), Ok(pyc)) = (
                fs::read(&source_path),
                fs::symlink_metadata(&source_path),
                fs::read(entry.path()),
            ) else {
                continue;
            };
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs());
            if let Some(sealed) = crate::util::pyc::seal(&pyc, &source, mtime) {
                let target = to.join(&dir).join(name);
                fs::create_dir_all(&target).map_err(io(&target))?;
                let path = target.join(&*file);
                fs::write(&path, sealed).map_err(io(&path))?;
                kept += 1;
            }
        }
    }
    Ok(kept)
}

/// Put the kept bytecode into a fresh checkout: each `.pyc` that is sealed hash-checked
/// (anything else in the seed is never planted), where the checkout has its directory and
/// no such file yet. Returns whether any was planted.
fn plant_bytecode(from: &Path, workdir: &Path, name: &str) -> Result<bool, SeedError> {
    let mut any = false;
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = fs::read_dir(from.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            let kind = entry.file_type().map_err(io(&entry.path()))?;
            let rel_entry = rel.join(entry.file_name());
            if kind.is_dir() {
                stack.push(rel_entry);
                continue;
            }
            let in_cache = rel.file_name().is_some_and(|n| n == name);
            let Some(parent) = rel.parent().filter(|_| in_cache && kind.is_file()) else {
                continue;
            };
            let target = workdir.join(&rel_entry);
            if !workdir.join(parent).is_dir() || fs::symlink_metadata(&target).is_ok() {
                continue;
            }
            let pyc = fs::read(entry.path()).map_err(io(&entry.path()))?;
            let sealed = matches!(
                crate::util::pyc::header(&pyc),
                Some((_, crate::util::pyc::Header::Hash { checked: true, .. }))
            );
            if sealed {
                let dir = workdir.join(&rel);
                fs::create_dir_all(&dir).map_err(io(&dir))?;
                fs::write(&target, pyc).map_err(io(&target))?;
                any = true;
            }
        }
    }
    Ok(any)
}

/// The directories (relative to the root) of the tracked `.py` files of `tree`.
fn source_dirs(workdir: &Path, tree: git2::Oid) -> Result<Vec<PathBuf>, SeedError> {
    let git = |e: git2::Error| SeedError::Io {
        path: workdir.to_path_buf(),
        source: std::io::Error::other(e.message().to_string()),
    };
    let repo = git2::Repository::open(workdir).map_err(git)?;
    let tree = repo.find_tree(tree).map_err(git)?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        let is_py = entry.name().is_ok_and(|n| n.ends_with(".py"));
        if is_py && entry.kind() == Some(git2::ObjectType::Blob) {
            let dir = PathBuf::from(dir);
            if dirs.last() != Some(&dir) && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(git)?;
    Ok(dirs)
}

/// Give the tracked files that are as the seed's build saw them the settled time.
fn settle(checkout: &Checkout, tree: git2::Oid, touched: &[String]) -> Result<(), SeedError> {
    let settled = File::options();
    let time = SystemTime::UNIX_EPOCH + SETTLED;
    for path in checkout.unchanged_since(tree)? {
        if touched.contains(&path) {
            continue;
        }
        let full = checkout.workdir().join(&path);
        // A tracked link is not in the list; a path through one cannot be in a fresh tree.
        let file = settled.clone().read(true).open(&full).map_err(io(&full))?;
        file.set_modified(time).map_err(io(&full))?;
    }
    Ok(())
}
