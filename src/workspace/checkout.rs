//! Checkouts of the base revision, and applying patches to them.
//!
//! A checkout is a fresh repository whose object store borrows the user's through
//! `objects/info/alternates`: history is shared, not copied, and nothing is ever written to the
//! user's repository (no worktree entry, no ref, no index or config change).

use super::apply::{Applied, ApplyFailure, ApplyStrategy, Fit, header_of};
use super::guard::{outside_the_tree, parents, symlink_in, through_symlink};
use super::patch::Patch;
use super::trees::{self, TreeStore};
use git2::{ApplyLocation, ApplyOptions, Oid, Repository};
use std::cell::RefCell;
use std::fs;
use std::path::{Path, PathBuf};

/// The user's repository and the base commit, resolved once and read only.
#[derive(Debug, Clone)]
pub struct Source {
    /// The repository's work tree (or git dir, for a bare repository).
    pub repo_dir: PathBuf,
    /// Its object directory, which checkouts borrow.
    objects_dir: PathBuf,
    /// The base commit.
    pub commit: Oid,
    /// Its tree: what a baseline depends on (two commits with one tree test the same).
    pub tree: Oid,
}

/// Why the source could not be resolved: bad input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SourceError {
    /// Not a git repository.
    #[error("{path}: not a git repository ({reason})")]
    NotARepository {
        /// The path given.
        path: PathBuf,
        /// libgit2's message.
        reason: String,
    },
    /// The revision does not name a commit.
    #[error("{path}: unknown base revision `{rev}` ({reason})")]
    UnknownRevision {
        /// The repository.
        path: PathBuf,
        /// The revision given.
        rev: String,
        /// libgit2's message.
        reason: String,
    },
}

impl Source {
    /// The object directory checkouts borrow.
    pub fn objects_dir(&self) -> &Path {
        &self.objects_dir
    }

    /// Open the repository at (or above) `path` and resolve `rev` to a commit.
    ///
    /// It turns off libgit2's re-hashing of each object read, for the whole process (a
    /// third of a checkout's time): objects are read as git reads them, unverified.
    pub fn resolve(path: &Path, rev: &str) -> Result<Source, SourceError> {
        quick_reads();
        let repo = Repository::discover(path).map_err(|e| SourceError::NotARepository {
            path: path.to_path_buf(),
            reason: e.message().to_string(),
        })?;
        let commit = repo
            .revparse_single(rev)
            .and_then(|o| o.peel_to_commit())
            .map_err(|e| SourceError::UnknownRevision {
                path: path.to_path_buf(),
                rev: rev.to_string(),
                reason: e.message().to_string(),
            })?;
        let repo_dir = repo.workdir().unwrap_or(repo.path()).to_path_buf();
        Ok(Source {
            repo_dir,
            objects_dir: repo.commondir().join("objects"),
            commit: commit.id(),
            tree: commit.tree_id(),
        })
    }
}

impl Source {
    /// Where the base tree's symbolic links point, those that name an absolute path (a
    /// `node_modules` kept elsewhere): paths the user's project names on the host.
    pub fn absolute_link_targets(&self) -> Vec<PathBuf> {
        self.blobs(|_, entry| entry.filemode() == i32::from(git2::FileMode::Link))
            .into_iter()
            .filter_map(|(_, target)| String::from_utf8(target).ok())
            .filter(|target| target.starts_with('/'))
            .map(PathBuf::from)
            .collect()
    }

    /// The base tree's text files whose paths `wanted` accepts (files of 1 MiB and more are
    /// left out: no source a test imports from is that large), read from the object store.
    pub fn text_files(&self, wanted: impl Fn(&str) -> bool) -> Vec<(String, String)> {
        const MAX: usize = 1 << 20;
        self.blobs(|path, entry| entry.kind() == Some(git2::ObjectType::Blob) && wanted(path))
            .into_iter()
            .filter(|(_, content)| content.len() < MAX)
            .map(|(path, content)| (path, String::from_utf8_lossy(&content).into_owned()))
            .collect()
    }

    /// The base tree's entries that `wanted` accepts (by path and entry), with their content;
    /// none when the tree cannot be read.
    fn blobs(&self, wanted: impl Fn(&str, &git2::TreeEntry<'_>) -> bool) -> Vec<(String, Vec<u8>)> {
        let Ok(repo) = Repository::open(&self.repo_dir) else {
            return Vec::new();
        };
        let Ok(tree) = repo.find_tree(self.tree) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let _ = tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            let path = format!("{dir}{}", entry.name().unwrap_or(""));
            if wanted(&path, entry)
                && let Ok(blob) = repo.find_blob(entry.id())
            {
                out.push((path, blob.content().to_vec()));
            }
            git2::TreeWalkResult::Ok
        });
        out
    }
}

/// Something a checkout lacks compared with a full clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caveat {
    /// Submodules, by path: empty directories in the checkout.
    Submodules(Vec<String>),
    /// Git LFS patterns: matching files hold their pointer text, not their content.
    LfsPointers(Vec<String>),
}

/// Failure to build a checkout (I/O or git trouble, not the patch).
#[derive(Debug, thiserror::Error)]
#[error("cannot prepare checkout in {dir}: {reason}")]
pub struct CheckoutError {
    /// The checkout directory.
    pub dir: PathBuf,
    /// What went wrong.
    pub reason: String,
}

/// The base tree's paths, relative to the work tree's root ([`Checkout::tracked`]).
#[derive(Debug, Default, Clone)]
pub struct Tracked {
    /// Directories and submodules.
    pub dirs: std::collections::HashSet<String>,
    /// Files and links.
    pub leaves: std::collections::HashSet<String>,
}

/// A checkout of the base tree in a directory the caller owns.
pub struct Checkout {
    repo: Repository,
    workdir: PathBuf,
    commit: Oid,
    /// Where the paths patches touch are recorded, for a later [`Checkout::reuse`]: outside
    /// the checkout, so that nothing run in it can edit what the next reset restores.
    record: Option<PathBuf>,
    /// Whether its files were copied from a kept base tree.
    copied: bool,
}

impl Checkout {
    /// Check out the base commit into `workdir` (created; must not exist).
    pub fn create(source: &Source, workdir: &Path) -> Result<Checkout, CheckoutError> {
        Checkout::create_with(source, workdir, None)
    }

    /// [`Checkout::create`], its files copied from `store` where it keeps the base tree (see
    /// [`TreeStore`]), and kept there for later checkouts where it should.
    pub fn create_with(
        source: &Source,
        workdir: &Path,
        store: Option<&TreeStore>,
    ) -> Result<Checkout, CheckoutError> {
        let fail = |reason: String| CheckoutError {
            dir: workdir.to_path_buf(),
            reason,
        };
        let repo = init(source, workdir, None)?;
        let kept = store.map(|store| (store, trees::key(&repo, source.tree)));
        let copied = kept
            .as_ref()
            .is_some_and(|(store, key)| trees::copy_into(store, key, &repo, source.tree));
        {
            let commit = repo
                .find_commit(source.commit)
                .map_err(|e| fail(e.message().to_string()))?;
            if !copied {
                let mut checkout = git2::build::CheckoutBuilder::new();
                checkout.force();
                repo.checkout_tree(commit.as_object(), Some(&mut checkout))
                    .map_err(|e| fail(e.message().to_string()))?;
            }
            repo.set_head_detached(commit.id())
                .map_err(|e| fail(e.message().to_string()))?;
        }
        if let (Some((store, key)), false) = (kept, copied) {
            // A tree that cannot be kept costs the next checkout its speed, nothing else.
            if let Err(e) = store.keep(&key, workdir) {
                log::info!("{e}");
            }
        }
        Ok(Checkout {
            repo,
            workdir: workdir.to_path_buf(),
            commit: source.commit,
            record: None,
            copied,
        })
    }

    /// Whether its files were copied from a kept base tree ([`Checkout::create_with`]).
    pub fn copied(&self) -> bool {
        self.copied
    }

    /// Record the paths patches touch in `record` (a file outside the work tree), so that
    /// [`Checkout::reuse`] can put them back; and keep the index, now that only patchgrade
    /// has written it, beside it ([`trusted_index`]).
    pub fn recorded(mut self, record: PathBuf) -> Result<Checkout, CheckoutError> {
        self.keep_index(&record)?;
        self.record = Some(record);
        Ok(self)
    }

    /// Copy the index, at a trusted moment (right after a checkout, before any command), to
    /// where [`Checkout::reuse`] takes it from.
    fn keep_index(&self, record: &Path) -> Result<(), CheckoutError> {
        let kept = trusted_index(record);
        fs::copy(self.repo.path().join("index"), &kept)
            .map(|_| ())
            .map_err(|e| CheckoutError {
                dir: self.workdir.clone(),
                reason: format!("keeping the index at {}: {e}", kept.display()),
            })
    }

    /// Reset an earlier checkout of the same repository in `workdir` to the base commit, for
    /// reuse: the paths earlier patches touched are put back first (so an ignored path a patch
    /// wrote does not survive, and `.gitignore` is the base's when the rest is judged), then a
    /// forced checkout rewrites the files that differ and removes untracked files. Ignored
    /// ones (build output, `node_modules`, `__pycache__`) are left for the caller, which puts
    /// them back as they were at a trusted moment ([`super::snapshot::Snapshot::restore`]).
    ///
    /// Nothing of the slot's `.git` is trusted, as the last run's commands could write it:
    /// its config's `core.worktree` would send the checkout below into any directory (the
    /// user's repository), a `.git` link would open another repository, its index could hide
    /// a file they changed, its `info/` change how files are written. It is made again as
    /// [`Checkout::create`] makes it, with the index kept at the last trusted moment.
    pub fn reuse(
        source: &Source,
        workdir: &Path,
        record: &Path,
    ) -> Result<Checkout, CheckoutError> {
        let fail = |reason: String| CheckoutError {
            dir: workdir.to_path_buf(),
            reason,
        };
        let git = workdir.join(".git");
        // patchgrade's own build output in `.git` (Go's cache) is ignored output, which the
        // caller's snapshot checks as the rest: moved aside (a real directory only, never
        // a link) and back into the new `.git`, not rebuilt.
        let own = git.join("patchgrade");
        let aside = record.with_extension("own");
        remove(&aside).map_err(|e| fail(format!("{}: {e}", aside.display())))?;
        let keep_own = fs::symlink_metadata(&git).is_ok_and(|m| m.is_dir())
            && fs::symlink_metadata(&own).is_ok_and(|m| m.is_dir())
            && fs::rename(&own, &aside).is_ok();
        remove(&git).map_err(|e| fail(format!("{}: {e}", git.display())))?;
        let repo = init(source, workdir, Some(&trusted_index(record)))?;
        if keep_own {
            fs::rename(&aside, &own).map_err(|e| fail(format!("{}: {e}", own.display())))?;
        }
        let checkout = Checkout {
            repo,
            workdir: workdir.to_path_buf(),
            commit: source.commit,
            record: Some(record.to_path_buf()),
            copied: false,
        };
        // Before anything is written: a link a test put where the base has a directory or a
        // file would be written through by the checkout below.
        checkout.clear_the_way().map_err(fail)?;
        let touched = record.to_path_buf();
        let paths: Vec<String> = match fs::read_to_string(&touched) {
            Ok(text) => text
                .split('\0')
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(fail(format!("{}: {e}", touched.display()))),
        };
        checkout.restore(&paths)?;
        {
            let commit = checkout
                .repo
                .find_commit(source.commit)
                .map_err(|e| fail(e.message().to_string()))?;
            let mut opts = git2::build::CheckoutBuilder::new();
            opts.force().remove_untracked(true);
            checkout
                .repo
                .checkout_tree(commit.as_object(), Some(&mut opts))
                .and_then(|()| checkout.repo.set_head_detached(commit.id()))
                .map_err(|e| fail(e.message().to_string()))?;
        }
        checkout.keep_index(record)?;
        match fs::remove_file(&touched) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(fail(format!("{}: {e}", touched.display())))
            }
            _ => Ok(checkout),
        }
    }

    /// What the checkout does not hold that the repository's users may expect: submodules
    /// (left as empty directories: libgit2 does not fetch them) and Git LFS files (left as
    /// their pointer text: no smudge filter runs). Read from `.gitmodules` and
    /// `.gitattributes` at the root of the base tree, so no tree walk.
    pub fn caveats(&self) -> Vec<Caveat> {
        let Ok(tree) = self.repo.find_commit(self.commit).and_then(|c| c.tree()) else {
            return Vec::new();
        };
        let text = |name: &str| -> Option<String> {
            let entry = tree.get_path(Path::new(name)).ok()?;
            let blob = entry.to_object(&self.repo).ok()?.peel_to_blob().ok()?;
            Some(String::from_utf8_lossy(blob.content()).into_owned())
        };
        let mut caveats = Vec::new();
        if let Some(modules) = text(".gitmodules") {
            let paths: Vec<String> = modules
                .lines()
                .filter_map(|l| l.trim().strip_prefix("path"))
                .filter_map(|l| l.trim_start().strip_prefix('='))
                .map(|p| p.trim().to_string())
                .collect();
            if !paths.is_empty() {
                caveats.push(Caveat::Submodules(paths));
            }
        }
        if let Some(attributes) = text(".gitattributes") {
            let patterns: Vec<String> = attributes
                .lines()
                .filter(|l| l.split_whitespace().any(|a| a == "filter=lfs"))
                .filter_map(|l| l.split_whitespace().next().map(str::to_string))
                .collect();
            if !patterns.is_empty() {
                caveats.push(Caveat::LfsPointers(patterns));
            }
        }
        caveats
    }

    /// A file's text in the base tree (`None` when the base has no such file).
    pub fn base_text(&self, path: &str) -> Option<String> {
        self.base_bytes(path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// A regular file's bytes in the base tree (`None` when the base has no such file, or a
    /// link or directory there).
    pub fn base_bytes(&self, path: &str) -> Option<Vec<u8>> {
        let entry = self.base_entry(path)?;
        if ![0o100644, 0o100755].contains(&entry.filemode()) {
            return None;
        }
        let blob = entry.to_object(&self.repo).ok()?.peel_to_blob().ok()?;
        Some(blob.content().to_vec())
    }

    /// The base tree's id.
    pub fn base_tree(&self) -> Result<Oid, CheckoutError> {
        self.repo
            .find_commit(self.commit)
            .map(|c| c.tree_id())
            .map_err(|e| self.error(e.message().to_string()))
    }

    /// The base tree's regular files whose content is the same in `other` (a tree of the same
    /// repository): what a build made from `other` saw as it is here.
    pub fn unchanged_since(&self, other: Oid) -> Result<Vec<String>, CheckoutError> {
        let fail = |e: git2::Error| self.error(e.message().to_string());
        let base = self
            .repo
            .find_commit(self.commit)
            .and_then(|c| c.tree())
            .map_err(fail)?;
        let other = self.repo.find_tree(other).map_err(fail)?;
        let mut same = Vec::new();
        base.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if [0o100644, 0o100755].contains(&entry.filemode())
                && let Ok(name) = entry.name()
            {
                let path = format!("{dir}{name}");
                let there = other.get_path(Path::new(&path));
                if there.is_ok_and(|t| t.id() == entry.id() && t.filemode() == entry.filemode()) {
                    same.push(path);
                }
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(fail)?;
        Ok(same)
    }

    fn error(&self, reason: String) -> CheckoutError {
        CheckoutError {
            dir: self.workdir.clone(),
            reason,
        }
    }

    /// The checkout's root.
    pub fn workdir(&self) -> &Path {
        &self.workdir
    }

    /// Apply a patch to the work tree, whole or not at all: exactly (libgit2, which computes
    /// every file's new content before writing any), then, as far as `fit` allows, by context
    /// search ([`super::fuzzy`]).
    pub fn apply(&self, patch: &Patch, fit: Fit) -> Result<Applied, ApplyFailure> {
        // A new file written as a change from nothing (`--- a/F`, `@@ -0,0 …`): git makes it.
        let created = patch.with_creations(|p| fs::symlink_metadata(self.workdir.join(p)).is_ok());
        let patch = created.as_ref().unwrap_or(patch);
        let diff = patch.diff().map_err(|e| ApplyFailure {
            file: None,
            hunk: None,
            message: e.message().to_string(),
        })?;
        if let Some(path) = patch.absolute_path() {
            return Err(ApplyFailure {
                file: Some(path.to_string()),
                hunk: None,
                message: format!(
                    "refused: `{path}` is outside the work tree: it is an absolute path"
                ),
            });
        }
        if let Some(refused) =
            outside_the_tree(&diff).or_else(|| through_symlink(&self.workdir, &diff))
        {
            return Err(refused);
        }
        self.record_touched(patch).map_err(|e| ApplyFailure {
            file: None,
            hunk: None,
            message: format!("cannot record the patch's paths in the checkout: {e}"),
        })?;
        let applied = match self.apply_exact(&diff) {
            Ok(()) => Ok(Applied {
                strategy: ApplyStrategy::Exact,
                moved: Vec::new(),
            }),
            Err(exact) if fit == Fit::Exact => Err(exact),
            Err(exact) => match super::fuzzy::apply(&self.workdir, &diff, fit.max_fuzz()) {
                Ok(moved) => Ok(Applied {
                    strategy: ApplyStrategy::Fuzzy,
                    moved,
                }),
                // The exact failure names the first hunk that is off; the fuzzy one, the
                // first that cannot be placed at all.
                Err(fuzzy) => Err(ApplyFailure {
                    message: format!("{}; by context search: {fuzzy}", exact.message),
                    ..exact
                }),
            },
        }
        .map_err(|mut failure| {
            if self.applies_reversed(patch) {
                failure.message.push_str(
                    "; the patch is already applied: its reverse applies here (`patch \
                     --batch`, SWE-bench's last resort, would assume -R and undo it)",
                );
            }
            failure
        })?;
        self.keep_modes(patch);
        Ok(applied)
    }

    /// A file the patch changes without saying its mode keeps the base's: libgit2 writes such
    /// a file 0644, where `git apply` and `patch` leave an executable executable.
    fn keep_modes(&self, patch: &Patch) {
        use std::os::unix::fs::PermissionsExt;
        for file in patch.mode_unsaid() {
            let executable = self.base_mode(&file) == Some(0o100755);
            let path = self.workdir.join(&file);
            let is_file = fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
            if executable && is_file {
                let _ = fs::set_permissions(&path, fs::Permissions::from_mode(0o755));
            }
        }
    }

    /// A path's mode in the base tree.
    fn base_mode(&self, path: &str) -> Option<i32> {
        self.base_entry(path).map(|e| e.filemode())
    }

    /// A path's entry in the base tree.
    fn base_entry(&self, path: &str) -> Option<git2::TreeEntry<'static>> {
        let tree = self
            .repo
            .find_commit(self.commit)
            .and_then(|c| c.tree())
            .ok()?;
        tree.get_path(Path::new(path)).ok()
    }

    /// Whether the patch undone applies exactly here, checked without writing anything.
    fn applies_reversed(&self, patch: &Patch) -> bool {
        let Some(diff) = patch.reversed().and_then(|p| p.diff().ok()) else {
            return false;
        };
        let mut opts = ApplyOptions::new();
        opts.check(true);
        self.repo
            .apply(&diff, ApplyLocation::WorkDir, Some(&mut opts))
            .is_ok()
    }

    fn apply_exact(&self, diff: &git2::Diff<'_>) -> Result<(), ApplyFailure> {
        let file = RefCell::new(None::<String>);
        let hunk = RefCell::new(None::<String>);
        let mut opts = ApplyOptions::new();
        opts.delta_callback(|delta| {
            *file.borrow_mut() = delta.and_then(|d| {
                d.new_file()
                    .path()
                    .or_else(|| d.old_file().path())
                    .map(|p| p.to_string_lossy().into_owned())
            });
            *hunk.borrow_mut() = None;
            true
        });
        opts.hunk_callback(|h| {
            // Keep `@@ -a,b +c,d @@` without the function context git appends.
            *hunk.borrow_mut() = h.map(|h| header_of(h.header()));
            true
        });
        let result = self
            .repo
            .apply(diff, ApplyLocation::WorkDir, Some(&mut opts));
        drop(opts);
        // libgit2 names files by their path in the checkout, which is nobody's business.
        let root = format!("{}/", self.workdir.display());
        result.map_err(|e| ApplyFailure {
            file: file.into_inner(),
            hunk: hunk.into_inner(),
            message: e.message().replace(&root, ""),
        })
    }

    /// Every directory and non-link file of the base tree, directories before what is in them.
    fn base_entries(&self) -> Result<Vec<(String, bool)>, String> {
        let entries = self.tracked_entries()?;
        Ok(entries
            .into_iter()
            .filter(|(_, mode)| *mode != 0o120000 && *mode != 0o160000)
            .map(|(path, mode)| (path, mode == 0o040000))
            .collect())
    }

    /// Every entry of the base tree with its mode (a directory `0o040000`, a link `0o120000`,
    /// a submodule `0o160000`), directories before what is in them.
    fn tracked_entries(&self) -> Result<Vec<(String, i32)>, String> {
        let tree = self
            .repo
            .find_commit(self.commit)
            .and_then(|c| c.tree())
            .map_err(|e| e.message().to_string())?;
        let mut entries = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |root, entry| {
            if let Ok(name) = entry.name() {
                entries.push((format!("{root}{name}"), entry.filemode()));
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(|e| e.message().to_string())?;
        Ok(entries)
    }

    /// The base tree's paths: its directories (and submodules, which the work tree holds as
    /// empty directories), and its files and links. Whatever else a reset work tree holds is
    /// ignored output.
    pub fn tracked(&self) -> Result<Tracked, CheckoutError> {
        let mut tracked = Tracked::default();
        for (path, mode) in self.tracked_entries().map_err(|e| self.error(e))? {
            if mode == 0o040000 || mode == 0o160000 {
                tracked.dirs.insert(path);
            } else {
                tracked.leaves.insert(path);
            }
        }
        Ok(tracked)
    }

    /// Remove what a test left where the base tree has a directory or a regular file and the
    /// work tree has a symbolic link (or, for a directory, any non-directory): resetting
    /// through it would write the base's content outside the checkout. Parents come first,
    /// so nothing below a removed link is looked at through it.
    fn clear_the_way(&self) -> Result<(), String> {
        for (path, dir) in self.base_entries()? {
            let full = self.workdir.join(&path);
            let Ok(meta) = fs::symlink_metadata(&full) else {
                continue;
            };
            let in_the_way = meta.file_type().is_symlink() || (dir && !meta.is_dir());
            if in_the_way {
                fs::remove_file(&full).map_err(|e| format!("{}: {e}", full.display()))?;
            }
        }
        Ok(())
    }

    /// Remove every `.pyc` beside the base tree's sources (in each directory's `__pycache__`)
    /// that is not sealed hash-checked. Python trusts a timestamp `.pyc` for any source of the
    /// same size and mtime in seconds, and a patch applied within the second a setup compiled
    /// the base's source can leave just such a source: the base's code would run for the
    /// candidate's. Run after a setup on the base, before its output is kept.
    pub fn remove_unsealed_bytecode(&self) -> Result<(), CheckoutError> {
        let fail = |path: &Path, e: std::io::Error| self.error(format!("{}: {e}", path.display()));
        let mut dirs = vec![String::new()];
        dirs.extend(
            self.base_entries()
                .map_err(|e| self.error(e))?
                .into_iter()
                .filter(|(_, dir)| *dir)
                .map(|(path, _)| path),
        );
        for dir in dirs {
            let cache = self.workdir.join(&dir).join("__pycache__");
            let Ok(meta) = fs::symlink_metadata(&cache) else {
                continue;
            };
            // Not followed: a link there is removed, never what it points to.
            if !meta.is_dir() {
                remove_path(&cache).map_err(|e| fail(&cache, e))?;
                continue;
            }
            for entry in fs::read_dir(&cache).map_err(|e| fail(&cache, e))?.flatten() {
                let path = entry.path();
                let sealed = entry.file_type().is_ok_and(|t| t.is_file())
                    && fs::read(&path).is_ok_and(|pyc| {
                        matches!(
                            crate::util::pyc::header(&pyc),
                            Some((_, crate::util::pyc::Header::Hash { checked: true, .. }))
                        )
                    });
                if !sealed {
                    remove_path(&path).map_err(|e| fail(&path, e))?;
                }
            }
        }
        Ok(())
    }

    /// Written before a patch applies, so a run killed halfway is still reset whole.
    fn record_touched(&self, patch: &Patch) -> std::io::Result<()> {
        use std::io::Write;
        let Some(record) = &self.record else {
            return Ok(());
        };
        let mut file = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(record)?;
        // NUL-separated: a path may hold a newline, never a NUL.
        let mut record = Vec::new();
        for path in patch.files() {
            record.extend_from_slice(path.as_bytes());
            record.push(0);
        }
        file.write_all(&record)
    }

    /// Put each path back to its content in the base tree, or remove it if the base has none.
    /// A symbolic link or a plain file the candidate put on the way is removed first
    /// (restoring through a link would write outside the checkout, and a file blocks the
    /// directory); one the base tree itself has there is an error. Returns what was removed.
    pub fn restore(&self, paths: &[String]) -> Result<Vec<String>, CheckoutError> {
        let fail = |path: &str, reason: String| CheckoutError {
            dir: self.workdir.clone(),
            reason: format!("restoring {path}: {reason}"),
        };
        let tree = self
            .repo
            .find_commit(self.commit)
            .and_then(|c| c.tree())
            .map_err(|e| fail("base tree", e.message().to_string()))?;
        let mut removed = Vec::new();
        for path in paths {
            for parent in parents(path) {
                // A link, or a plain file where a directory must be: the candidate's, put on
                // the way (restoring through a link would write outside the checkout).
                if !in_the_way(&self.workdir, parent) {
                    continue;
                }
                let in_base = tree
                    .get_path(Path::new(parent))
                    .is_ok_and(|e| e.kind() != Some(git2::ObjectType::Tree));
                if in_base {
                    return Err(fail(
                        path,
                        format!("it is beyond `{parent}` of the base tree, which is no directory"),
                    ));
                }
                fs::remove_file(self.workdir.join(parent))
                    .map_err(|e| fail(path, e.to_string()))?;
                removed.push(parent.to_string());
            }
            let target = self.workdir.join(path);
            remove_path(&target).map_err(|e| fail(path, e.to_string()))?;
            let Ok(entry) = tree.get_path(Path::new(path)) else {
                continue;
            };
            let blob = entry
                .to_object(&self.repo)
                .and_then(|o| o.peel_to_blob())
                .map_err(|e| fail(path, e.message().to_string()))?;
            write_entry(&target, blob.content(), entry.filemode())
                .map_err(|e| fail(path, e.to_string()))?;
        }
        Ok(removed)
    }
}

/// Whether `rel` exists in the work tree as something other than a directory (not followed).
fn in_the_way(workdir: &Path, rel: &str) -> bool {
    symlink_in(workdir, rel) || fs::symlink_metadata(workdir.join(rel)).is_ok_and(|m| !m.is_dir())
}

fn remove_path(path: &Path) -> std::io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn write_entry(path: &Path, content: &[u8], mode: i32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)?;
    }
    if mode == 0o120000 {
        let target = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(content);
        return std::os::unix::fs::symlink(target, path);
    }
    fs::write(path, content)?;
    let perm = if mode == 0o100755 { 0o755 } else { 0o644 };
    fs::set_permissions(path, fs::Permissions::from_mode(perm))
}
/// Remove a path whatever it is, never following a link (`remove_dir_all` does not follow
/// those inside it either); nothing there is fine.
fn remove(path: &Path) -> std::io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Where a pooled checkout's index is kept between uses, beside its record of touched paths
/// (out of its commands' reach).
fn trusted_index(record: &Path) -> PathBuf {
    record.with_extension("index")
}

/// Read objects without hashing each again (libgit2's strict verification, on by default,
/// process-wide): a checkout reads every blob of its tree, and hashing them all with SHA-1's
/// collision detection was a third of a fresh checkout's time (about 4 of 10 ms for 40 files).
/// What is read unverified is the user's own object store, read-only to every command, as git
/// itself reads it; and no object is read from a checkout's own store once a candidate's
/// command has run in it (a [`Checkout`] is done with before its commands, a pool slot's
/// `.git` is made anew; only the trusted baseline's is read after, for its build seed).
fn quick_reads() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| git2::opts::strict_hash_verification(false));
}

/// A new repository in `workdir` that borrows the source's objects, with `index` copied in
/// when given and present (a pooled checkout's, kept at its last trusted moment: the
/// checkout then rewrites only the files that differ from it).
fn init(
    source: &Source,
    workdir: &Path,
    index: Option<&Path>,
) -> Result<Repository, CheckoutError> {
    let fail = |reason: String| CheckoutError {
        dir: workdir.to_path_buf(),
        reason,
    };
    quick_reads();
    // No template directory: its sample hooks and `info/exclude` are a dozen files written
    // for nothing (hooks never run here), a millisecond or two of every check.
    let mut options = git2::RepositoryInitOptions::new();
    options.external_template(false);
    let repo =
        Repository::init_opts(workdir, &options).map_err(|e| fail(e.message().to_string()))?;
    let alternates = repo.path().join("objects").join("info").join("alternates");
    let objects = fs::canonicalize(&source.objects_dir)
        .map_err(|e| fail(format!("{}: {e}", source.objects_dir.display())))?;
    fs::create_dir_all(alternates.parent().unwrap_or(workdir))
        .and_then(|()| fs::write(&alternates, format!("{}\n", objects.display())))
        .map_err(|e| fail(format!("{}: {e}", alternates.display())))?;
    if let Some(index) = index {
        match fs::copy(index, repo.path().join("index")) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(fail(format!("{}: {e}", index.display())));
            }
            _ => {}
        }
    }
    // The open object database learns of the alternate directly (a reopen reads every
    // configuration file again).
    repo.odb()
        .and_then(|odb| odb.add_disk_alternate(&objects.to_string_lossy()))
        .map_err(|e| fail(e.message().to_string()))?;
    Ok(repo)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(["-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "git {args:?}");
    }

    /// Every path under `dir` but `.git`: its kind and mode, and a file's bytes or a link's
    /// target.
    fn listing(dir: &Path) -> Vec<(String, u32, Vec<u8>)> {
        use std::os::unix::fs::PermissionsExt;
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(at) = stack.pop() {
            for entry in fs::read_dir(&at).unwrap().flatten() {
                let path = entry.path();
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                if rel == ".git" {
                    continue;
                }
                let meta = fs::symlink_metadata(&path).unwrap();
                let content = if meta.file_type().is_symlink() {
                    fs::read_link(&path)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes()
                } else if meta.is_dir() {
                    stack.push(path.clone());
                    Vec::new()
                } else {
                    fs::read(&path).unwrap()
                };
                out.push((rel, meta.permissions().mode(), content));
            }
        }
        out.sort();
        out
    }

    /// A checkout copied from a kept base tree is the checkout it copies, byte for byte and
    /// mode for mode (line endings a `.gitattributes` asks for, links, the executable bit),
    /// and its index records the copies as they are: git finds nothing changed without
    /// reading a file.
    #[test]
    fn a_checkout_copied_from_a_kept_tree_is_the_checkout_it_copies() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        fs::create_dir_all(repo.join("pkg/deep")).unwrap();
        fs::write(repo.join("pkg/deep/mod.py"), "x = 1\n").unwrap();
        fs::write(repo.join("crlf.txt"), "one\ntwo\n").unwrap();
        fs::write(repo.join(".gitattributes"), "crlf.txt eol=crlf\n").unwrap();
        fs::write(repo.join("run.sh"), "#!/bin/sh\n").unwrap();
        std::os::unix::fs::symlink("pkg/deep/mod.py", repo.join("link")).unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "-A"]);
        git(&repo, &["update-index", "--chmod=+x", "run.sh"]);
        git(&repo, &["commit", "-qm", "base"]);
        let source = Source::resolve(&repo, "HEAD").unwrap();
        let store = tmp.path().join("store");
        let made = |run: &str| {
            let work = tmp.path().join(run);
            let checkout =
                Checkout::create_with(&source, &work, Some(&TreeStore::new(store.clone(), run)))
                    .unwrap();
            (work, checkout.copied())
        };
        // Seen by one run, kept by the next, copied by the third.
        let (first, copied) = made("run-1");
        assert!(!copied);
        assert!(!made("run-2").1);
        let (third, copied) = made("run-3");
        assert!(copied, "the third checkout is a copy");
        let plain = tmp.path().join("plain");
        let _ = Checkout::create(&source, &plain).unwrap();
        assert_eq!(listing(&third), listing(&plain));
        assert_eq!(listing(&first), listing(&plain));
        assert_eq!(fs::read(third.join("crlf.txt")).unwrap(), b"one\r\ntwo\r\n");
        // `diff-files` compares the index's stat data only: a copy it lists would be read
        // back by every later status.
        let stat_only = std::process::Command::new("git")
            .args(["diff-files", "--name-only"])
            .current_dir(&third)
            .output()
            .unwrap();
        assert!(stat_only.status.success());
        assert_eq!(String::from_utf8_lossy(&stat_only.stdout), "");
        let status = std::process::Command::new("git")
            .args(["status", "--porcelain"])
            .current_dir(&third)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&status.stdout), "");
        // The kept tree is not the copy: writing one leaves the other.
        fs::write(third.join("pkg/deep/mod.py"), "x = 2\n").unwrap();
        assert_eq!(listing(&made("run-4").0), listing(&plain));
    }

    /// What a run left in the slot's `.git` is gone at reuse (its config, its index), but
    /// patchgrade's own build output there is kept for the snapshot to check.
    #[test]
    fn reuse_makes_git_again_and_keeps_patchgrades_own_output() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        fs::create_dir_all(&repo).unwrap();
        fs::write(repo.join("a.txt"), "base\n").unwrap();
        git(&repo, &["init", "-q"]);
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-qm", "base"]);
        let source = Source::resolve(&repo, "HEAD").unwrap();
        let slot = tmp.path().join("slot-0");
        let record = tmp.path().join("slot-0.touched");
        let made = Checkout::create(&source, &slot).unwrap();
        let _ = made.recorded(record.clone()).unwrap();
        assert!(trusted_index(&record).is_file());
        // What a run's commands could do there.
        let elsewhere = tmp.path().join("elsewhere");
        fs::create_dir_all(&elsewhere).unwrap();
        git(
            &slot,
            &["config", "core.worktree", elsewhere.to_str().unwrap()],
        );
        fs::write(slot.join(".git/info/attributes"), "* ident\n").unwrap();
        let cache = slot.join(".git/patchgrade/go-build");
        fs::create_dir_all(&cache).unwrap();
        fs::write(cache.join("entry"), "built\n").unwrap();
        fs::write(slot.join("a.txt"), "changed\n").unwrap();
        let reused = Checkout::reuse(&source, &slot, &record).unwrap();
        assert_eq!(reused.repo.workdir(), Some(slot.join("").as_path()));
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
        assert_eq!(fs::read_to_string(slot.join("a.txt")).unwrap(), "base\n");
        let config = fs::read_to_string(slot.join(".git/config")).unwrap();
        assert!(!config.contains("worktree"), "{config}");
        assert!(!slot.join(".git/info/attributes").exists());
        assert_eq!(fs::read_to_string(cache.join("entry")).unwrap(), "built\n");
        assert!(!record.with_extension("own").exists());
    }
}
