//! Build seeds for a check's fresh checkouts: which seed (its key), planted into the
//! candidate's and the baseline's checkouts, and saved from a baseline whose build is trusted.
//!
//! The key is the repository, the command, the environment given, where it runs (a container's
//! image, or the host) and the content of the runner's lock files (`Cargo.lock`, `go.sum`).
//! The toolchain is not probed for it: cargo and go record their compiler's version in what
//! they build and rebuild under another, so a seed from an older toolchain costs a build, never
//! a wrong one. A pool's slot gets its seed once, kept in the slot's snapshot (the state every
//! use of the slot starts from), and again when its key's seed is another.

use super::plan::Plan;
use crate::util::digest::hash;
use crate::workspace::pool::Lease;
use crate::workspace::{BuildDir, BuildKind, Checkout, SeedStore};
use serde::Serialize;
use std::path::Path;

/// Bumped when what the key covers changes.
const VERSION: u32 = 1;

/// The label of a pool slot's snapshot naming the seed it holds.
const SEED_MARK: &str = "seed";

/// How a check's fresh checkouts use build seeds.
#[derive(Debug, Clone)]
pub(super) struct Seeding {
    store: SeedStore,
    /// Everything in the key but the lock files, which are read from each checkout's base.
    key: String,
    dirs: &'static [BuildDir],
    locks: &'static [&'static str],
    /// Whether a baseline's build may be saved: only in a sandbox, where the candidate's code
    /// could not reach the baseline's checkout.
    save: bool,
}

/// A checkout's seed: which one, and whether it was planted.
#[derive(Debug, Clone)]
pub(super) struct Seeded {
    name: String,
    tree: Option<git2::Oid>,
    pub(super) planted: bool,
}

#[derive(Serialize)]
struct Key<'a> {
    version: u32,
    objects: String,
    template: &'a str,
    env: &'a [(String, String)],
    /// `host`, or the container image's id.
    place: String,
}

impl Plan {
    /// The build seeds this plan's checkouts use, if any: with a cache, for a preset's own
    /// command that keeps build output.
    pub(super) fn seeding(&self) -> Option<Seeding> {
        let cache = self.settings.cache.as_ref()?;
        let (dirs, locks) = self.command.build_dirs();
        if dirs.is_empty() {
            return None;
        }
        let objects = std::fs::canonicalize(self.source.objects_dir())
            .unwrap_or_else(|_| self.source.objects_dir().to_path_buf());
        let key = Key {
            version: VERSION,
            objects: objects.to_string_lossy().into_owned(),
            template: self.command.template().as_str(),
            env: &self.settings.env,
            place: self.sandbox.seed_place(),
        };
        Some(Seeding {
            store: SeedStore::new(cache.dir().join("builds")),
            key: serde_json::to_string(&key).unwrap_or_default(),
            dirs,
            locks,
            save: self.sandbox.may_keep(),
        })
    }
}

impl Seeding {
    /// Plant the seed for `checkout` (fresh, nothing run in it yet). A seed that cannot be
    /// planted is no seed: the build starts cold.
    pub(super) fn plant(&self, checkout: &Checkout) -> Seeded {
        let name = self.name(checkout);
        let planted = self
            .store
            .plant(&name, checkout, self.dirs)
            .unwrap_or(false);
        Seeded {
            name,
            tree: checkout.base_tree().ok(),
            planted,
        }
    }

    /// Plant the seed in a pool slot, just reset, where its snapshot does not hold it yet,
    /// and keep the slot so as its state to start from. The build directories a slot has are
    /// another seed's, or ones its snapshot started without: they go first. A slot whose
    /// snapshot already holds the seed has started from it.
    pub(super) fn plant_in_slot(&self, checkout: &Checkout, lease: &Lease) -> Seeded {
        let name = self.name(checkout);
        let tree = checkout.base_tree().ok();
        let mut marks = lease.marks();
        if marks.get(SEED_MARK) == Some(&name) {
            return Seeded {
                name,
                tree,
                planted: true,
            };
        }
        if !self.store.has(&name) {
            return Seeded {
                name,
                tree,
                planted: false,
            };
        }
        for dir in self.dirs.iter().filter(|d| d.kind == BuildKind::Tree) {
            let _ = std::fs::remove_dir_all(checkout.workdir().join(dir.path));
        }
        let planted = self
            .store
            .plant(&name, checkout, self.dirs)
            .unwrap_or(false);
        if planted {
            marks.insert(SEED_MARK.to_string(), name.clone());
            // Not kept, the slot's next use puts back the state it started from.
            if lease.keep(checkout, &marks).is_err() {
                log::info!("a pool slot could not keep its build seed");
            }
        }
        Seeded {
            name,
            tree,
            planted,
        }
    }

    /// The name of the seed for `checkout`'s base: the key and the base's lock files.
    fn name(&self, checkout: &Checkout) -> String {
        let mut key = self.key.clone().into_bytes();
        for lock in self.locks {
            key.push(0);
            key.extend(checkout.base_bytes(lock).unwrap_or_default());
        }
        hash(&key)
    }

    /// Keep a baseline's build output as its key's seed, once its tests have run in
    /// `workdir`; `touched` are the test patch's files. Saving is best effort: a seed only
    /// saves time.
    pub(super) fn save(&self, seeded: &Seeded, workdir: &Path, touched: &[String]) {
        if let (true, Some(tree)) = (self.save, seeded.tree) {
            let _ = self
                .store
                .save(&seeded.name, workdir, tree, touched, self.dirs);
        }
    }
}
