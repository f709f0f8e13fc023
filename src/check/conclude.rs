//! What both sides of a check came to, made into the verdict: a broken task first, then a
//! candidate that did not apply or could not run, then the baseline stored, then the grade and
//! its warnings.

use super::cache;
use super::execute::Execution;
use super::plan::Plan;
use super::prepare::{AppliedCandidate, Prepared};
use super::race::{BaselineSide, CandidateSide, Raced, Store};
use crate::judge::Draft;
use crate::judge::grade::grade;
use crate::judge::verdict::{
    Aborted, ErrorCause, Outcome, RunInfo, Stage, Verdict, Warning, WarningKind,
};
use crate::observe::{Evidence, NotRunReason, bytecode};
use crate::run::Preset;
use crate::util::time::ms;
use crate::workspace::{Caveat, OnProtectedEdit};
use std::path::Path;
use std::time::{Duration, Instant};

impl Plan {
    /// The verdict from what the race produced.
    pub(super) fn conclude(&self, mut draft: Draft, raced: Raced, started: Instant) -> Verdict {
        draft.timings.prepare_ms = raced.prepare_ms;
        let (base_run, store) = match raced.baseline {
            BaselineSide::Failed(e) => return draft.fail(Stage::Baseline, e, started),
            BaselineSide::Skipped => (None, None),
            BaselineSide::Cached(entry) => (
                Some(Execution {
                    info: RunInfo {
                        cached: true,
                        ..entry.info
                    },
                    evidence: Ok(entry.evidence),
                }),
                None,
            ),
            BaselineSide::Ran { run, store, .. } => (Some(*run), store),
        };
        let (cand_run, applied) = match raced.candidate {
            CandidateSide::Ran(ran) => (ran.1, ran.0),
            CandidateSide::Rejected(failure) => {
                draft.patch.apply_failure = Some(failure);
                return draft.finish(Outcome::PatchFailed, None, None, started);
            }
            CandidateSide::Failed(e) => return draft.fail(Stage::Candidate, e, started),
        };
        // Held until graded: a pooled checkout stays locked while its bytecode is read.
        let prepared = self.record_applied(&mut draft, applied);
        draft.timings.test_ms = ms(raced.test_started.map_or(Duration::ZERO, |t| t.elapsed()));
        draft.runs.candidate = Some(cand_run.info);
        if let (Some(store), Some(run)) = (store, &base_run) {
            store_baseline(store, self, run);
        }
        draft.runs.baseline = base_run.as_ref().map(|r| r.info.clone());
        // A baseline that cannot be judged means the task, not the candidate, is in question.
        let base_evidence = match base_run.map(|r| r.evidence) {
            None => None,
            Some(Ok(evidence)) => Some(evidence),
            Some(Err(e)) => return draft.fail(Stage::Baseline, e.into_error(), started),
        };
        let base_failure = base_evidence
            .as_ref()
            .and_then(|e| e.runner_failure.clone());
        if let Some(why) = &base_failure {
            warn_runner_failed_at_base(&mut draft, why);
        }
        let cand_evidence = match cand_run.evidence {
            Ok(evidence) => match evidence.runner_failure.clone() {
                // Only after the patch: the candidate's doing (the attribution rule), and none
                // of the report's passes counts.
                Some(message) if base_evidence.is_some() && base_failure.is_none() => {
                    draft.aborted = Some(Aborted {
                        reason: NotRunReason::Crashed,
                        cause: ErrorCause::RunnerCrashed,
                        message,
                    });
                    Evidence::cut_short(evidence.attempts.into_iter().next(), NotRunReason::Crashed)
                }
                Some(message) if base_evidence.is_none() => {
                    let error = (ErrorCause::RunnerCrashed, unattributable(&message));
                    return draft.fail(Stage::Candidate, error, started);
                }
                _ => evidence,
            },
            Err(failure) => match (failure.not_run_reason(), &base_evidence) {
                // The baseline ran the same tests the same way and could be judged: what cut
                // the candidate's run short is the candidate's doing (the attribution rule).
                (Some(reason), Some(_)) => {
                    draft.aborted = Some(Aborted {
                        reason,
                        cause: failure.cause,
                        message: failure.message,
                    });
                    Evidence::cut_short(failure.partial.map(|p| *p), reason)
                }
                (Some(_), None) => {
                    let (cause, message) = failure.into_error();
                    let error = (cause, unattributable(&message));
                    return draft.fail(Stage::Candidate, error, started);
                }
                (None, _) => return draft.fail(Stage::Candidate, failure.into_error(), started),
            },
        };
        let workdir = &prepared.workdir;
        let judging = Instant::now();
        let mut verdict = self.judge(
            draft,
            &cand_evidence,
            base_evidence.as_ref(),
            workdir,
            started,
        );
        verdict.timings.judge_ms = ms(judging.elapsed());
        log::info!("judged in {} ms", verdict.timings.judge_ms);
        verdict
    }

    /// How the candidate went on, and what its checkout lacks, into the draft; the checkout
    /// is handed back.
    fn record_applied(&self, draft: &mut Draft, applied: AppliedCandidate) -> Prepared {
        let AppliedCandidate {
            applied,
            protected,
            overridden,
            caveats,
            hidden,
            prepared,
        } = applied;
        draft
            .warnings
            .extend(caveats.into_iter().map(caveat_warning));
        if !protected.is_empty() {
            let reverted = self.settings.protection.action == OnProtectedEdit::Revert;
            draft.warn(
                WarningKind::ProtectedEdit,
                format!(
                    "the patch edits protected paths (tests, test or CI configuration): {}{}",
                    named(&protected),
                    if reverted {
                        "; they were put back to base before the tests ran"
                    } else {
                        ""
                    }
                ),
                Vec::new(),
            );
        }
        draft.patch.protected_edits_reverted =
            !protected.is_empty() && self.settings.protection.action == OnProtectedEdit::Revert;
        draft.patch.protected_edits = protected;
        draft.patch.overridden_files = overridden;
        if let Some(hidden) = hidden {
            draft.patch.overridden_hunks = hidden.lost;
            draft.patch.merged_files = hidden.merged;
            draft.patch.test_patch_strategy = Some(hidden.applied.strategy);
            draft.patch.test_patch_moved_hunks = hidden.applied.moved;
        }
        draft.patch.apply_strategy = Some(applied.strategy);
        draft.patch.moved_hunks = applied.moved;
        prepared
    }

    /// Grade both runs' evidence and add what grading noticed.
    fn judge(
        &self,
        mut draft: Draft,
        candidate: &Evidence,
        baseline: Option<&Evidence>,
        workdir: &Path,
        started: Instant,
    ) -> Verdict {
        // Each side's reports indexed once, for every grading below.
        let syntax = self.command.ids();
        let (indexed, baseline_indexed) =
            (candidate.index(syntax), baseline.map(|b| b.index(syntax)));
        let (candidate, baseline) = (&indexed, baseline_indexed.as_ref());
        let mut graded = grade(self.requested(), candidate, baseline);
        if let Some((stage, error)) = Draft::none_observed(&graded) {
            return draft.fail(stage, error, started);
        }
        if let Some(selection) = &self.downstream {
            let ids = self.graded_ids(candidate, baseline);
            let mut report = selection.report.clone();
            report.grade(&grade(ids.downstream(), candidate, baseline).classification);
            if ids.downstream_in_outcome() {
                graded = grade(ids.outcome(), candidate, baseline);
                report.counted_as_p2p = true;
            }
            if !report.broken.is_empty() {
                draft.warn(
                    WarningKind::DownstreamBreakage,
                    format!(
                        "{} test(s) outside the task's lists that passed at base fail after \
                         the patch: it breaks code the task's tests do not cover",
                        report.broken.len()
                    ),
                    report.broken.iter().map(|t| t.id.clone()).collect(),
                );
            }
            draft.downstream = Some(report);
        }
        draft.warn_about(&graded, baseline.is_some());
        // Bytecode is the evidence; a user who switched it off explicitly gets no guess.
        let bytecode_off = self
            .settings
            .env
            .iter()
            .any(|(k, _)| Preset::Pytest.env_remove().contains(&k.as_str()));
        // A run the candidate cut short may have imported nothing: no guess from bytecode.
        let cut_short = candidate.evidence.not_run.is_some();
        if self.command.preset_of() == Some(Preset::Pytest) && !bytecode_off && !cut_short {
            let files: Vec<String> = draft
                .patch
                .files
                .iter()
                .filter(|f| !draft.patch.overridden_files.contains(f))
                .cloned()
                .collect();
            if bytecode::patched_python_imported(workdir, &files) == Some(false) {
                draft.warn(
                    WarningKind::PatchedCodeNotImported,
                    "none of the patched Python files was imported from the checkout \
                     (no bytecode in its __pycache__): the tests probably imported an \
                     installed copy; see --env PYTHONPATH={workdir}/src in the guide (docs/guide/src/sandboxes.md)"
                        .into(),
                    Vec::new(),
                );
            }
        }
        draft.graded(graded, started)
    }
}

/// Store a baseline that could be judged; one that could not is run again next time.
fn store_baseline(store: Store, plan: &Plan, run: &Execution) {
    let Ok(evidence) = &run.evidence else {
        return;
    };
    let entry = cache::Entry {
        evidence: plan.baseline_to_keep(evidence),
        // Paths into this run's directory mean nothing to a later run.
        info: RunInfo {
            dir: None,
            reports: Vec::new(),
            ..run.info.clone()
        },
    };
    // A cache that cannot be written costs a rerun next time, nothing more.
    match store.cache.store(&store.name, &entry) {
        Ok(()) => log::info!(
            "baseline stored in the cache ({})",
            store.cache.dir().display()
        ),
        Err(e) => log::warn!("the baseline could not be stored: {e}"),
    }
}

fn caveat_warning(caveat: Caveat) -> Warning {
    let (kind, message) = match caveat {
        Caveat::Submodules(paths) => (
            WarningKind::SubmodulesNotCheckedOut,
            format!(
                "the repository has submodules, which the checkout leaves empty: {}; tests \
                 that need them fail at base and after alike",
                paths.join(", ")
            ),
        ),
        Caveat::LfsPointers(patterns) => (
            WarningKind::LfsPointers,
            format!(
                "the repository keeps files in Git LFS ({}); the checkout holds their pointer \
                 text, not their content",
                patterns.join(", ")
            ),
        ),
    };
    Warning {
        kind,
        message,
        tests: Vec::new(),
    }
}

/// Up to five paths by name, then how many more: enough for a warning line.
fn named(paths: &[String]) -> String {
    let mut text = paths.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if paths.len() > 5 {
        text.push_str(&format!(" and {} more", paths.len() - 5));
    }
    text
}

/// A candidate's run cut short with no baseline to compare, said as an error.
fn unattributable(message: &str) -> String {
    format!(
        "{message}\n(with no baseline to compare, patchgrade cannot tell whether the patch or \
         the environment did this: run the baseline, or keep one in the cache, to have it \
         graded against the patch)"
    )
}

/// The warning for a runner that failed inside at base: whatever it does after the patch is
/// not the patch's doing.
fn warn_runner_failed_at_base(draft: &mut Draft, why: &str) {
    // Its first line: how the command ended (the output's end is in its logs).
    let why = why.lines().next().unwrap_or_default();
    let why = why.trim_end_matches("; its output ends with:");
    draft.warn(
        WarningKind::RunnerFailed,
        format!(
            "at base the {why}, so a runner failure after the patch is not the patch's doing: \
             the reports are taken as written, where a failure the runner could not write may \
             read as a pass"
        ),
        Vec::new(),
    );
}
