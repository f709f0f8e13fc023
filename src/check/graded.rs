//! Which tests a check runs, grades and keeps: the one rule every step reads.
//!
//! - Graded into the outcome: the task's F2P and P2P ids, and with `--downstream-as-p2p` the
//!   downstream tests as P2P too.
//! - Graded as the downstream group: the tests chosen by id, and every test of the files (or
//!   nextest prefixes) run whole that either side reported, the task's own ids left out.
//! - Run on both sides: all of them, and the test patch's files a runner runs whole.
//! - Kept in a stored baseline: what grading reads, which for files run whole is their whole
//!   report (which of their tests grading reads is known only once both sides reported).

use super::execute::Job;
use super::plan::Plan;
use crate::observe::{Evidence, Indexed, Requested};
use std::collections::HashSet;

/// The ids a check grades, once both sides reported.
pub(super) struct GradedIds<'a> {
    plan: &'a Plan,
    /// The downstream tests: empty without `--downstream`.
    downstream: Vec<String>,
    /// P2P, with the downstream tests when they count as P2P.
    p2p: Vec<String>,
}

impl GradedIds<'_> {
    /// What the outcome is graded from.
    pub(super) fn outcome(&self) -> Requested<'_> {
        Requested {
            f2p: &self.plan.f2p,
            p2p: &self.p2p,
        }
    }

    /// The downstream group, graded as P2P tests are.
    pub(super) fn downstream(&self) -> Requested<'_> {
        Requested {
            f2p: &[],
            p2p: &self.downstream,
        }
    }

    /// Whether the downstream tests count in the outcome (`--downstream-as-p2p`, and some
    /// were found).
    pub(super) fn downstream_in_outcome(&self) -> bool {
        self.plan.settings.downstream_as_p2p && !self.downstream.is_empty()
    }
}

impl Plan {
    /// The task's own groups, as requested.
    pub(super) fn requested(&self) -> Requested<'_> {
        Requested {
            f2p: &self.f2p,
            p2p: &self.p2p,
        }
    }

    /// What both sides run: the requested tests, the downstream ones, and the test files
    /// the command runs whole.
    pub(super) fn tests_job(&self) -> Job<'_> {
        let mut ids = self.requested().ids();
        let mut files = self.test_files.clone();
        if let Some(d) = &self.downstream {
            ids.extend(d.ids.iter().cloned());
            files.extend(d.files.iter().cloned());
        }
        Job {
            command: &self.command,
            ids: crate::util::list::dedup(ids),
            files: crate::util::list::dedup(files),
            requested: self.requested(),
        }
    }

    /// The ids graded from these reports.
    pub(super) fn graded_ids(
        &self,
        candidate: &Indexed<'_>,
        baseline: Option<&Indexed<'_>>,
    ) -> GradedIds<'_> {
        let downstream = self.downstream_ids(candidate, baseline);
        let mut p2p = self.p2p.clone();
        if self.settings.downstream_as_p2p {
            p2p.extend(downstream.iter().cloned());
        }
        GradedIds {
            plan: self,
            downstream,
            p2p,
        }
    }

    /// The downstream tests to grade: those chosen by id, and every test of the groups run
    /// whole (files, nextest prefixes) that either run reports, the task's own left out.
    fn downstream_ids(
        &self,
        candidate: &Indexed<'_>,
        baseline: Option<&Indexed<'_>>,
    ) -> Vec<String> {
        let Some(selection) = &self.downstream else {
            return Vec::new();
        };
        let requested: HashSet<String> = self.requested().ids().into_iter().collect();
        let mut ids = selection.ids.clone();
        if !selection.files.is_empty() {
            // A file's tests (`f::t`, `f › t`, `f > t`), or those under a nextest prefix.
            let in_files = |id: &str| {
                selection.files.iter().any(|f| {
                    id.strip_prefix(f.as_str()).is_some_and(|rest| {
                        f.ends_with("::")
                            || f.ends_with(' ')
                            || rest.starts_with("::")
                            || rest.starts_with(" ›")
                            || rest.starts_with(" >")
                    })
                })
            };
            for indexed in std::iter::once(candidate).chain(baseline) {
                if let Some(first) = indexed.attempts().first() {
                    let listed = first.listing();
                    ids.extend(listed.into_iter().map(|l| l.id).filter(|id| in_files(id)));
                }
            }
        }
        crate::util::list::dedup(ids)
            .into_iter()
            .filter(|id| !requested.contains(id))
            .collect()
    }

    /// What a stored baseline keeps of its evidence: what grading these ids reads, not the
    /// whole suite's report; whole when files ran whole.
    pub(super) fn baseline_to_keep(&self, evidence: &Evidence) -> Evidence {
        let indexed = || evidence.index(self.command.ids());
        match &self.downstream {
            Some(d) if !d.files.is_empty() => evidence.clone(),
            Some(d) => {
                let p2p: Vec<String> = self.p2p.iter().chain(&d.ids).cloned().collect();
                let requested = Requested {
                    f2p: &self.f2p,
                    p2p: &p2p,
                };
                indexed().for_ids(requested)
            }
            None => indexed().for_ids(self.requested()),
        }
    }
}
