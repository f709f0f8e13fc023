//! Preparing the checkouts of a check: the candidate (patch, protection, hidden tests) and the
//! baseline, in a temporary run directory or a pool's slot.

use super::Error;
use super::early::Early;
use super::seeding::{Seeded, Seeding};
use crate::judge::verdict::{ErrorCause, Steps};
use crate::run::Launcher;
use crate::util::time::ms;
use crate::workspace::pool::Lease;
use crate::workspace::{
    Applied, ApplyFailure, Caveat, Checkout, Fit, Hidden, HiddenError, OnProtectedEdit, Patch,
    Protection, Source, TreeStore, WorkdirPool, hidden,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The candidate checkout, prepared. A candidate that does not apply is an outcome
/// (`patch-failed`), not a failure to prepare.
pub(super) enum Candidate {
    /// Applied, and ready for its tests.
    Applied(Box<AppliedCandidate>),
    /// Did not apply.
    Rejected(ApplyFailure),
}

/// A candidate checkout with the patch (and the test patch) applied.
pub(super) struct AppliedCandidate {
    /// How the patch applied.
    pub(super) applied: Applied,
    /// Its edits to protected paths (reverted with `--on-protected-edit revert`).
    pub(super) protected: Vec<String>,
    /// Files whose edits were replaced whole by the test patch's.
    pub(super) overridden: Vec<String>,
    /// What the checkout lacks (submodules, LFS content).
    pub(super) caveats: Vec<Caveat>,
    /// How the test patch went on, when there is one.
    pub(super) hidden: Option<Hidden>,
    pub(super) prepared: Prepared,
}

/// Why a checkout could not be prepared.
pub(super) enum Prep {
    /// The test patch does not apply: the task is broken.
    TestPatch(ApplyFailure),
    /// A `--setup-once` setup failed on the base, in a pool slot, before any patch.
    Setup(String),
    /// I/O or git trouble.
    Checkout(String),
}

impl Prep {
    pub(super) fn describe(&self) -> (ErrorCause, String) {
        match self {
            Prep::TestPatch(f) => (
                ErrorCause::TestPatchDoesNotApply,
                format!("test patch does not apply: {f}"),
            ),
            Prep::Setup(m) => (
                ErrorCause::SetupFailed,
                format!("the setup fails on the base, before any patch (in a pool slot): {m}"),
            ),
            Prep::Checkout(m) => (ErrorCause::CheckoutFailed, m.clone()),
        }
    }
}

/// Where a side's checkout is made: its run directory, and the pool or the build seed it
/// uses.
pub(super) struct Site<'a> {
    pub(super) dir: &'a Path,
    pub(super) pool: Option<&'a WorkdirPool>,
    pub(super) seeding: Option<&'a Seeding>,
    /// Where base trees are kept whole, for a fresh checkout to copy.
    pub(super) trees: Option<&'a TreeStore>,
}

/// A candidate refused before any checkout: it edits protected paths, and protected edits
/// are rejected.
pub(super) fn refused(candidate: &Patch, protection: &Protection) -> Option<Candidate> {
    let protected = protection.edits(candidate.files());
    (protection.action == OnProtectedEdit::Reject && !protected.is_empty())
        .then(|| refuse(&protected))
}

fn refuse(protected: &[String]) -> Candidate {
    Candidate::Rejected(ApplyFailure {
        file: protected.first().cloned(),
        hunk: None,
        message: format!(
            "refused: the patch edits protected paths ({}), and protected edits are rejected",
            protected.join(", ")
        ),
    })
}

/// The candidate (and the test patch) applied to a checkout made by [`create_checkout`], for
/// a candidate that was not [`refused`] already.
pub(super) fn prepare_candidate(
    (checkout, mut prepared): (Checkout, Prepared),
    candidate: &Patch,
    test_patch: Option<&Patch>,
    strict: bool,
    protection: &Protection,
) -> Result<Candidate, Prep> {
    let mut protected = protection.edits(candidate.files());
    let started = Instant::now();
    let applied = match checkout.apply(candidate, if strict { Fit::Exact } else { Fit::Fuzz }) {
        Ok(applied) => applied,
        Err(failure) => return Ok(Candidate::Rejected(failure)),
    };
    prepared.steps.apply_ms = ms(started.elapsed());
    // Runner sections are judged on the text before and after, so only once it applied.
    let sections = runner_sections(&checkout, candidate, protection);
    if protection.action == OnProtectedEdit::Reject && !sections.is_empty() {
        let labels: Vec<String> = sections.iter().map(|(_, l)| l.clone()).collect();
        return Ok(refuse(&labels));
    }
    let mut revert = protected.clone();
    for (file, label) in sections {
        revert.push(file);
        protected.push(label);
    }
    if protection.action == OnProtectedEdit::Revert {
        checkout
            .restore(&revert)
            .map_err(|e| Prep::Checkout(e.to_string()))?;
    }
    let Some(tp) = test_patch else {
        return Ok(Candidate::Applied(Box::new(AppliedCandidate {
            applied,
            protected,
            overridden: Vec::new(),
            caveats: checkout.caveats(),
            hidden: None,
            prepared,
        })));
    };
    // The hidden tests win: test files go back to base whole, code files merge by hunk.
    let started = Instant::now();
    let hidden =
        hidden::apply(&checkout, tp, candidate.files(), protection).map_err(|e| match e {
            HiddenError::DoesNotApply(f) => Prep::TestPatch(f),
            other => Prep::Checkout(other.to_string()),
        })?;
    prepared.steps.hidden_tests_ms = ms(started.elapsed());
    Ok(Candidate::Applied(Box::new(AppliedCandidate {
        applied,
        protected,
        overridden: hidden.reset.clone(),
        caveats: checkout.caveats(),
        hidden: Some(hidden),
        prepared,
    })))
}

/// The candidate's edits inside a runner's section of a file that is not protected as a
/// whole, as (file, `file [section]`).
fn runner_sections(
    checkout: &Checkout,
    candidate: &Patch,
    protection: &Protection,
) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (file, removed, added) in candidate.changed_lines() {
        if !protection.has_sections(&file) {
            continue;
        }
        let before = checkout.base_text(&file).unwrap_or_default();
        let after = std::fs::read_to_string(checkout.workdir().join(&file)).unwrap_or_default();
        let section = removed
            .iter()
            .find_map(|&l| protection.section(&file, &before, l))
            .or_else(|| {
                added
                    .iter()
                    .find_map(|&l| protection.section(&file, &after, l))
            });
        if let Some(section) = section {
            found.push((file.clone(), format!("{file} [{section}]")));
        }
    }
    found
}

/// The test patch applied to a checkout made by [`create_checkout`].
pub(super) fn prepare_baseline(
    (checkout, mut prepared): (Checkout, Prepared),
    test_patch: Option<&Patch>,
) -> Result<Prepared, Prep> {
    if let Some(tp) = test_patch {
        let started = Instant::now();
        checkout.apply(tp, Fit::Offset).map_err(Prep::TestPatch)?;
        prepared.steps.hidden_tests_ms = ms(started.elapsed());
    }
    Ok(prepared)
}

/// A checkout ready for its tests: where it is, the pool slot it holds, if any, and the build
/// seed it started from.
pub(super) struct Prepared {
    pub(super) workdir: PathBuf,
    pub(super) lease: Option<Lease>,
    pub(super) seeded: Option<Seeded>,
    /// How long the checkout, its patches and a setup on its base took.
    pub(super) steps: Steps,
    /// Whether a `--setup-once` setup ran on the base of this pool slot, for this run.
    pub(super) setup_on_base: bool,
    /// The first command's control groups, joined while this checkout was made
    /// ([`Launcher`]); taken by that command.
    pub(super) launcher: std::sync::Mutex<Option<Launcher>>,
    /// The sandbox opened, and the first command started at its gate, while this checkout
    /// was made ([`Early`]); taken by the run.
    pub(super) early: std::sync::Mutex<Option<Box<Early>>>,
}

impl Prepared {
    /// The first command's launcher, once: later commands join their groups themselves.
    pub(super) fn take_launcher(&self) -> Option<Launcher> {
        self.launcher.lock().ok().and_then(|mut l| l.take())
    }

    /// The sandbox and first command started ahead, once.
    pub(super) fn take_early(&self) -> Option<Box<Early>> {
        self.early.lock().ok().and_then(|mut e| e.take())
    }
}

/// The run's directory (for logs and reports), and its checkout: `dir/work`, or a slot of the
/// pool. A fresh checkout gets its build seed before any patch, so that every file a patch
/// writes is newer than the seed's build.
pub(super) fn create_checkout(
    source: &Source,
    site: Site<'_>,
) -> Result<(Checkout, Prepared), Prep> {
    let Site {
        dir,
        pool,
        seeding,
        trees,
    } = site;
    let started = Instant::now();
    std::fs::create_dir_all(dir).map_err(|e| Prep::Checkout(format!("{}: {e}", dir.display())))?;
    let (checkout, lease) = match pool {
        Some(pool) => pool
            .acquire(source)
            .map(|(c, lease)| (c, Some(lease)))
            .map_err(|e| Prep::Checkout(e.to_string()))?,
        None => Checkout::create_with(source, &dir.join("work"), trees)
            .map(|c| (c, None))
            .map_err(|e| Prep::Checkout(e.to_string()))?,
    };
    let seeded = match (&lease, seeding) {
        (None, Some(seeding)) => Some(seeding.plant(&checkout)),
        (Some(lease), Some(seeding)) => Some(seeding.plant_in_slot(&checkout, lease)),
        (_, None) => None,
    };
    let prepared = Prepared {
        workdir: checkout.workdir().to_path_buf(),
        lease,
        seeded,
        steps: Steps {
            checkout_ms: ms(started.elapsed()),
            ..Steps::default()
        },
        setup_on_base: false,
        launcher: std::sync::Mutex::new(None),
        early: std::sync::Mutex::new(None),
    };
    log::info!(
        "checkout of {} in {}{}",
        source.commit,
        prepared.workdir.display(),
        if prepared.lease.is_some() {
            " (a pool slot, reset)"
        } else if checkout.copied() {
            " (a copy of the kept base tree)"
        } else {
            ""
        }
    );
    Ok((checkout, prepared))
}

/// Run blocking checkout work off the async threads. The closure holds the run root alive, so
/// a cancelled check still removes its directory only after the work has stopped writing to it.
pub(super) async fn blocking<T: Send + 'static>(
    root: Arc<RunRoot>,
    work: impl FnOnce() -> Result<T, Prep> + Send + 'static,
) -> Result<T, Prep> {
    tokio::task::spawn_blocking(move || {
        let result = work();
        drop(root);
        result
    })
    .await
    .unwrap_or_else(|e| Err(Prep::Checkout(format!("checkout task failed: {e}"))))
}

/// The directory holding both runs: temporary (removed on drop) or kept.
pub(super) enum RunRoot {
    Temp(tempfile::TempDir),
    Kept(PathBuf),
}

impl RunRoot {
    pub(super) fn new(keep: Option<&Path>) -> Result<RunRoot, Error> {
        let dir_error = |path: &Path, source| Error::Dir {
            path: path.to_path_buf(),
            source,
        };
        match keep {
            None => {
                let tmp = std::env::temp_dir();
                if tmp.to_str().is_none() {
                    return Err(Error::NotUtf8(tmp));
                }
                tempfile::Builder::new()
                    .prefix("patchgrade-")
                    .tempdir()
                    .map(RunRoot::Temp)
                    .map_err(|e| dir_error(&tmp, e))
            }
            Some(dir) => {
                for run in ["candidate", "baseline", "fetch"] {
                    if dir.join(run).exists() {
                        return Err(Error::KeepExists(dir.join(run)));
                    }
                }
                if dir.to_str().is_none() {
                    return Err(Error::NotUtf8(dir.to_path_buf()));
                }
                std::fs::create_dir_all(dir).map_err(|e| dir_error(dir, e))?;
                let dir = std::fs::canonicalize(dir).map_err(|e| dir_error(dir, e))?;
                Ok(RunRoot::Kept(dir))
            }
        }
    }

    pub(super) fn path(&self) -> &Path {
        match self {
            RunRoot::Temp(t) => t.path(),
            RunRoot::Kept(p) => p,
        }
    }
}
