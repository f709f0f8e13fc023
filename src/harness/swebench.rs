//! SWE-bench's own files, both ways: its per-instance `report.json` and run report written from
//! patchgrade's results, and an evaluation it already ran (`logs/run_evaluation/<run>/<model>/
//! <instance>/`) read into results, so that `report` and `compare` show runs graded elsewhere.
//!
//! The shapes are those of `swebench.harness.grading.get_eval_report` and
//! `swebench.harness.reporting.make_run_report` (schema version 2).

use super::dataset::{InputError, Prediction};
use crate::judge::Draft;
use crate::judge::classify::{GradedTest, classify_effects};
use crate::judge::scoring::Effect;
use crate::judge::verdict::{
    ApplyFailure, ErrorCause, NotRunReason, Outcome, PatchInfo, RunInfo, Scoring, Stage, TaskInfo,
    Verdict, WarningKind,
};
use crate::observe::{Group, IdSyntax, TestStatus};
use crate::task::TaskFile;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What SWE-bench's log says when a patch did not apply (`APPLY_PATCH_FAIL`).
const APPLY_PATCH_FAIL: &str = ">>>>> Patch Apply Failed";
/// Its per-instance report and log.
const LOG_REPORT: &str = "report.json";
const LOG_INSTANCE: &str = "run_instance.log";

/// One axis of a report: the tests that passed and those that did not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuccessFailure {
    /// Counted as passing.
    pub success: Vec<String>,
    /// Counted as failing (failed, errored or absent from the log).
    pub failure: Vec<String>,
}

/// `tests_status` of a report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[allow(non_snake_case)]
pub struct TestsStatus {
    /// Fail-to-pass tests.
    pub FAIL_TO_PASS: SuccessFailure,
    /// Pass-to-pass tests.
    pub PASS_TO_PASS: SuccessFailure,
    /// Always empty: SWE-bench fills it only for its own validation runs.
    #[serde(default)]
    pub FAIL_TO_FAIL: SuccessFailure,
    /// Always empty, likewise.
    #[serde(default)]
    pub PASS_TO_FAIL: SuccessFailure,
}

/// One instance's entry of a `report.json` (the file maps the instance id to it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[allow(non_snake_case)]
pub struct InstanceReport {
    /// The prediction's patch was `null`.
    pub patch_is_None: bool,
    /// The prediction had a patch.
    pub patch_exists: bool,
    /// The patch applied and the test output could be read.
    pub patch_successfully_applied: bool,
    /// SWE-bench's resolved flag.
    pub resolved: bool,
    /// Per test, when the tests were read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_status: Option<TestsStatus>,
}

/// How SWE-bench's run report counts one result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// The prediction's patch is empty: not run.
    EmptyPatch,
    /// Run and graded (it has a `report.json`), resolved or not.
    Completed {
        /// SWE-bench's resolved flag.
        resolved: bool,
    },
    /// Run, but no report was written (the patch did not apply, the run timed out or failed).
    Error,
}

/// SWE-bench's category of a verdict: what its harness would have recorded for the same run.
/// A run whose tests could not be read still gets a report there (unresolved); one that timed
/// out (also when the candidate is graded for it), could not start, or whose patch did not
/// apply gets none (an error).
pub fn category(v: &Verdict) -> Category {
    // SWE-bench's harness raises on a timeout before it grades: no report, an error there,
    // whichever outcome the attribution rule gives here.
    if v.aborted
        .as_ref()
        .is_some_and(|a| a.reason == NotRunReason::TimedOut)
    {
        return Category::Error;
    }
    match v.outcome {
        Outcome::EmptyPatch => Category::EmptyPatch,
        Outcome::PatchFailed => Category::Error,
        Outcome::Error => match v.error.as_ref().map(|e| e.cause) {
            Some(
                ErrorCause::Timeout
                | ErrorCause::CommandFailedToStart
                | ErrorCause::SandboxFailed
                | ErrorCause::CheckoutFailed
                | ErrorCause::InvalidTask
                | ErrorCause::NotEvaluated,
            ) => Category::Error,
            _ => Category::Completed { resolved: false },
        },
        _ => Category::Completed {
            resolved: swebench_resolved(v),
        },
    }
}

/// SWE-bench's resolved flag for a verdict, whatever scoring graded it.
pub fn swebench_resolved(v: &Verdict) -> bool {
    // Recorded whenever it differs from this verdict's own.
    v.swebench_resolved
        .unwrap_or(v.outcome == Outcome::Resolved)
}

/// The `report.json` SWE-bench would have written for this verdict, keyed by instance id;
/// `None` where it writes none (see [`category`]).
pub fn instance_report(v: &Verdict) -> Option<BTreeMap<String, InstanceReport>> {
    let Category::Completed { resolved } = category(v) else {
        return None;
    };
    let graded = v.outcome != Outcome::Error;
    let tests_status = graded.then(|| {
        let mut status = TestsStatus::default();
        for t in &v.tests {
            let effect = match v.scoring {
                Scoring::Swebench => t.effect,
                Scoring::Patchgrade => t.other_effect.unwrap_or(t.effect),
            };
            let axis = match t.group {
                Group::F2p => &mut status.FAIL_TO_PASS,
                Group::P2p => &mut status.PASS_TO_PASS,
            };
            match effect {
                Effect::Fixed | Effect::Kept => axis.success.push(t.id.clone()),
                Effect::NotFixed | Effect::Broken => axis.failure.push(t.id.clone()),
                // Patchgrade's own exclusion has no SWE-bench counterpart; recorded as its
                // other effect, so not reached for a verdict of either scoring.
                Effect::BrokenAtBase | Effect::Uncounted => {}
            }
        }
        status
    });
    let report = InstanceReport {
        patch_is_None: false,
        patch_exists: true,
        patch_successfully_applied: graded,
        resolved,
        tests_status,
    };
    Some(BTreeMap::from([(
        super::results::id(v).to_string(),
        report,
    )]))
}

/// SWE-bench's run report (`make_run_report`, schema version 2, without a docker client).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunReport {
    /// Instances of the dataset (the tasks, or the results when no tasks are given).
    pub total_instances: usize,
    /// Predictions submitted.
    pub submitted_instances: usize,
    /// Instances run and graded.
    pub completed_instances: usize,
    /// Of those, resolved.
    pub resolved_instances: usize,
    /// Of those, not resolved.
    pub unresolved_instances: usize,
    /// Predictions with an empty patch.
    pub empty_patch_instances: usize,
    /// Predictions run without a report.
    pub error_instances: usize,
    /// Their ids, sorted.
    pub completed_ids: Vec<String>,
    /// Instances of the dataset without a prediction.
    pub incomplete_ids: Vec<String>,
    /// Empty patches.
    pub empty_patch_ids: Vec<String>,
    /// Every prediction.
    pub submitted_ids: Vec<String>,
    /// Resolved.
    pub resolved_ids: Vec<String>,
    /// Unresolved.
    pub unresolved_ids: Vec<String>,
    /// Errors.
    pub error_ids: Vec<String>,
    /// Always 2.
    pub schema_version: u32,
    /// Always 0: no containers outlive patchgrade's runs.
    pub unstopped_instances: usize,
    /// Always empty.
    pub unstopped_containers: Vec<String>,
    /// Always empty.
    pub unremoved_images: Vec<String>,
}

/// The run report of these results; `tasks`, when given, is the dataset (its instances
/// without a result are incomplete).
pub fn run_report(verdicts: &[Verdict], tasks: Option<&[String]>) -> RunReport {
    let mut ids: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for v in verdicts {
        let id = super::results::id(v).to_string();
        let kind = match category(v) {
            Category::EmptyPatch => "empty",
            Category::Error => "error",
            Category::Completed { resolved } => {
                ids.entry("completed").or_default().insert(id.clone());
                if resolved { "resolved" } else { "unresolved" }
            }
        };
        ids.entry(kind).or_default().insert(id.clone());
        ids.entry("submitted").or_default().insert(id);
    }
    let submitted = ids.get("submitted").cloned().unwrap_or_default();
    let incomplete: BTreeSet<String> = tasks
        .unwrap_or_default()
        .iter()
        .filter(|t| !submitted.contains(*t))
        .cloned()
        .collect();
    let list = |k: &str| -> Vec<String> { ids.get(k).into_iter().flatten().cloned().collect() };
    RunReport {
        total_instances: tasks.map_or(verdicts.len(), <[String]>::len),
        submitted_instances: verdicts.len(),
        completed_instances: list("completed").len(),
        resolved_instances: list("resolved").len(),
        unresolved_instances: list("unresolved").len(),
        empty_patch_instances: list("empty").len(),
        error_instances: list("error").len(),
        completed_ids: list("completed"),
        incomplete_ids: incomplete.into_iter().collect(),
        empty_patch_ids: list("empty"),
        submitted_ids: list("submitted"),
        resolved_ids: list("resolved"),
        unresolved_ids: list("unresolved"),
        error_ids: list("error"),
        schema_version: 2,
        unstopped_instances: 0,
        unstopped_containers: Vec::new(),
        unremoved_images: Vec::new(),
    }
}

/// What an import reads beside the logs: the dataset and the predictions, each optional.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sources<'a> {
    /// The tasks: their lists name the tests SWE-bench counted neither way, and their
    /// `repo` labels the results.
    pub tasks: Option<&'a [TaskFile]>,
    /// The predictions: their model names label the results, an empty one is an empty
    /// patch, and one without a log was not evaluated.
    pub predictions: Option<&'a [Prediction]>,
}

/// Read an evaluation SWE-bench ran into verdicts, one per instance directory (or
/// prediction). `dir` is a run's directory (`logs/run_evaluation/<run>`, holding one model's
/// directory) or a model's directory (holding one directory per instance).
pub fn import(dir: &Path, sources: Sources<'_>) -> Result<Vec<Verdict>, InputError> {
    let fail = |path: &Path, reason: String| InputError {
        path: path.to_path_buf(),
        line: None,
        reason,
    };
    let model_dir = model_dir(dir).map_err(|reason| fail(dir, reason))?;
    let model_name = model_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let tasks: BTreeMap<&str, &TaskFile> = sources
        .tasks
        .unwrap_or_default()
        .iter()
        .filter_map(|t| Some((t.instance_id.as_deref()?, t)))
        .collect();
    let mut verdicts = Vec::new();
    let mut seen = BTreeSet::new();
    for entry in read_dir(&model_dir).map_err(|e| fail(&model_dir, e))? {
        let Some(id) = entry
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        let prediction = sources
            .predictions
            .and_then(|ps| ps.iter().find(|p| p.instance_id == id));
        let mut v = read_instance(&entry, &id, tasks.get(id.as_str()).copied())?;
        v.model_name_or_path = prediction
            .and_then(|p| p.model_name_or_path.clone())
            .or_else(|| model_name.clone());
        seen.insert(id);
        verdicts.push(v);
    }
    // Predictions without a log: empty ones are not run by SWE-bench; the rest were not
    // evaluated.
    for p in sources.predictions.unwrap_or_default() {
        if seen.contains(&p.instance_id) {
            continue;
        }
        let task = tasks.get(p.instance_id.as_str()).copied();
        let draft = Draft::new(task_info(&p.instance_id, task), PatchInfo::default());
        let mut v = if p.model_patch.as_deref().is_none_or(str::is_empty) {
            draft.finish(Outcome::EmptyPatch, None, None, Instant::now())
        } else {
            not_evaluated(
                draft,
                "SWE-bench's run has no log for this prediction".into(),
            )
        };
        v.model_name_or_path = p.model_name_or_path.clone().or_else(|| model_name.clone());
        verdicts.push(v);
    }
    verdicts.sort_by(|a, b| super::results::id(a).cmp(super::results::id(b)));
    Ok(verdicts)
}

/// The directory holding the instance directories.
fn model_dir(dir: &Path) -> Result<PathBuf, String> {
    let is_instance = |d: &Path| d.join(LOG_REPORT).is_file() || d.join(LOG_INSTANCE).is_file();
    let children = read_dir(dir)?;
    if children.iter().any(|c| is_instance(c)) {
        return Ok(dir.to_path_buf());
    }
    let models: Vec<&PathBuf> = children
        .iter()
        .filter(|c| read_dir(c).is_ok_and(|g| g.iter().any(|g| is_instance(g))))
        .collect();
    match models.as_slice() {
        [one] => Ok(one.to_path_buf()),
        [] => Err(format!(
            "no SWE-bench evaluation here: no {LOG_REPORT} or {LOG_INSTANCE} in its \
             directories or theirs (give logs/run_evaluation/<run> or its model directory)"
        )),
        _ => Err(format!(
            "{} models' evaluations here; give one model's directory",
            models.len()
        )),
    }
}

/// The subdirectories of a directory, sorted.
fn read_dir(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| e.to_string())?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    Ok(dirs)
}

fn task_info(id: &str, task: Option<&TaskFile>) -> TaskInfo {
    TaskInfo {
        instance_id: Some(id.to_string()),
        repo: None,
        repo_name: task.and_then(|t| t.repo.clone()),
        base: task.and_then(|t| t.base.clone()),
        base_commit: task.and_then(|t| t.base.clone()),
        test_cmd: None,
        ids: IdSyntax::Pytest,
    }
}

fn not_evaluated(draft: Draft, message: String) -> Verdict {
    draft.fail(
        Stage::Candidate,
        (ErrorCause::NotEvaluated, message),
        Instant::now(),
    )
}

/// One instance directory as a verdict.
fn read_instance(dir: &Path, id: &str, task: Option<&TaskFile>) -> Result<Verdict, InputError> {
    let started = Instant::now();
    let mut draft = Draft::new(task_info(id, task), PatchInfo::default());
    draft.scoring = Scoring::Swebench;
    let report_path = dir.join(LOG_REPORT);
    let log = std::fs::read_to_string(dir.join(LOG_INSTANCE)).unwrap_or_default();
    if !report_path.is_file() {
        if let Some(at) = log.find(APPLY_PATCH_FAIL) {
            let said: String = log[at + APPLY_PATCH_FAIL.len()..]
                .trim_start_matches(':')
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .take(3)
                .collect::<Vec<_>>()
                .join("; ");
            draft.patch.apply_failure = Some(ApplyFailure {
                file: None,
                hunk: None,
                message: format!("SWE-bench could not apply the patch: {said}"),
            });
            return Ok(draft.finish(Outcome::PatchFailed, None, None, started));
        }
        return Ok(not_evaluated(
            draft,
            format!("SWE-bench wrote no {LOG_REPORT} (see {LOG_INSTANCE})"),
        ));
    }
    let fail = |reason: String| InputError {
        path: report_path.clone(),
        line: None,
        reason,
    };
    let bytes = std::fs::read(&report_path).map_err(|e| fail(e.to_string()))?;
    let mut map: BTreeMap<String, InstanceReport> = serde_json::from_slice(&bytes)
        .map_err(|e| fail(format!("not a SWE-bench report.json: {e}")))?;
    let report = map
        .remove(id)
        .ok_or_else(|| fail(format!("no entry for `{id}`")))?;
    draft.runs.candidate = Some(RunInfo {
        attempts: 1,
        reports: vec![report_path.clone()],
        ..RunInfo::default()
    });
    if report.patch_is_None || !report.patch_exists {
        return Ok(draft.finish(Outcome::EmptyPatch, None, None, started));
    }
    let Some(status) = report
        .tests_status
        .filter(|_| report.patch_successfully_applied)
    else {
        return Ok(draft.fail(
            Stage::Candidate,
            (
                ErrorCause::NoReport,
                "SWE-bench read no test output from its log: the tests errored or did not \
                 run"
                .into(),
            ),
            started,
        ));
    };
    let tests = graded_tests(&status, task);
    draft.warn(
        WarningKind::BaselineSkipped,
        "graded by SWE-bench, which runs no baseline: P2P tests that already failed at base \
         are blamed on the patch, and each failure may be a failed, errored or absent test"
            .into(),
        Vec::new(),
    );
    let classification = classify_effects(tests);
    let outcome = classification.outcome;
    let mut v = draft.finish(outcome, Some(classification), None, started);
    // SWE-bench's own flag stands; it disagrees with the lists only for its fail-only
    // JavaScript repositories.
    if report.resolved != (outcome == Outcome::Resolved) {
        v.swebench_resolved = Some(report.resolved);
    }
    Ok(v)
}

/// The tests of a report, F2P first; with the task, its listed tests that the report counted
/// neither way too.
fn graded_tests(status: &TestsStatus, task: Option<&TaskFile>) -> Vec<GradedTest> {
    let mut tests = Vec::new();
    for (group, axis, listed) in [
        (
            Group::F2p,
            &status.FAIL_TO_PASS,
            task.and_then(|t| t.f2p.as_ref()),
        ),
        (
            Group::P2p,
            &status.PASS_TO_PASS,
            task.and_then(|t| t.p2p.as_ref()),
        ),
    ] {
        let (pass, fail) = match group {
            Group::F2p => (Effect::Fixed, Effect::NotFixed),
            Group::P2p => (Effect::Kept, Effect::Broken),
        };
        let test = |id: &String, effect| GradedTest {
            id: id.clone(),
            group,
            effect,
            other_effect: None,
            status: match effect {
                Effect::Fixed | Effect::Kept => TestStatus::Passed,
                Effect::Uncounted => TestStatus::Skipped,
                _ => TestStatus::Failed,
            },
            base_status: None,
            message: match effect {
                Effect::NotFixed | Effect::Broken => Some(
                    "failed, errored or absent from the log (SWE-bench's report does not say \
                     which)"
                        .into(),
                ),
                Effect::Uncounted => Some("counted neither way by SWE-bench (skipped)".into()),
                _ => None,
            },
            details: None,
            base_message: None,
            did_you_mean: Vec::new(),
            not_run_reason: None,
        };
        tests.extend(axis.success.iter().map(|id| test(id, pass)));
        tests.extend(axis.failure.iter().map(|id| test(id, fail)));
        for id in listed.into_iter().flatten() {
            if !axis.success.contains(id) && !axis.failure.contains(id) {
                tests.push(test(id, Effect::Uncounted));
            }
        }
    }
    tests
}
