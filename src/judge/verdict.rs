//! The verdict: what was judged, the one document every front end reports (`check`,
//! `grade`, `batch`, the MCP tool) and the contract between judging and reporting.
//!
//! Serialised as the JSON document documented in the guide (docs/guide/src/json.md); `schema_version` changes only
//! when a field's meaning changes or a field is removed.

pub use super::classify::{Axis, GradedTest};
pub use super::differences::{OtherScoring, RuleDifference, ScoringRule};
pub use super::downstream::{Downstream, Method as DownstreamMethod};
pub use super::outcome::{Level, Outcome};
pub use super::scoring::{Effect, Scoring};
pub use crate::observe::{Group, IdSyntax, NotRunReason, TestStatus};
pub use crate::run::Termination;
use crate::run::sandbox::Isolation;
pub use crate::workspace::{ApplyFailure, ApplyStrategy, MovedHunk, OverriddenHunk};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The JSON schema version.
pub const SCHEMA_VERSION: u32 = 1;

/// The result of grading one candidate patch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    /// Version of this document's shape.
    pub schema_version: u32,
    /// One of the nine outcomes.
    pub outcome: Outcome,
    /// The model or agent that wrote the candidate (a prediction's `model_name_or_path`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_name_or_path: Option<String>,
    /// The outcome in one sentence.
    pub summary: String,
    /// What was graded against.
    pub task: TaskInfo,
    /// What the patch touched.
    pub patch: PatchInfo,
    /// Fail-to-pass axis.
    pub f2p: Axis,
    /// Pass-to-pass axis.
    pub p2p: Axis,
    /// Every requested test, F2P first.
    pub tests: Vec<GradedTest>,
    /// The tests outside the task's lists that exercise what the patch changed (`--downstream`):
    /// how they were found, and those the patch broke. The outcome is the task's lists' alone,
    /// unless they were counted as P2P tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downstream: Option<Downstream>,
    /// The rules the outcome, axes and effects follow: patchgrade's own (the default) or
    /// SWE-bench's (`--scoring swebench`).
    #[serde(default)]
    pub scoring: Scoring,
    /// SWE-bench's resolved flag for the same observations, when it is not this verdict's
    /// (`outcome == resolved`); `other_scoring.rules` says why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swebench_resolved: Option<bool>,
    /// The other scoring's outcome, when it differs, with the rule behind each test it counts
    /// differently.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_scoring: Option<OtherScoring>,
    /// Why the run could not be judged (outcome `error` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<RunError>,
    /// The candidate's run ended without a usable report while the baseline's did not: the
    /// candidate is to blame, so it was graded, the tests it did not report counting as
    /// failing (`not-run`). Says how the run ended and the end of its output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<Aborted>,
    /// Findings that do not change the outcome but should be read.
    pub warnings: Vec<Warning>,
    /// The test runs.
    pub runs: Runs,
    /// When grading started (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// Wall-clock times in milliseconds.
    pub timings: Timings,
    /// Where the commands ran: the sandbox, the image, whether the tests had the network.
    #[serde(default)]
    pub isolation: Isolation,
    /// F2P ids and messages were withheld (`--redact-f2p`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
}

impl Verdict {
    /// The verdict as the JSON document the guide documents (pretty-printed).
    pub fn json(&self) -> String {
        // A Verdict holds only strings, numbers, enums and maps with string keys.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    /// Withhold what would show an agent the hidden tests: F2P ids become `hidden-f2p-N`, their
    /// messages, details and hints go, the test patch's file names and the commands (which
    /// name the ids) go, and the ids are masked in free text (error messages, warnings).
    /// Counts, outcome and everything about P2P tests stay.
    pub fn redact_f2p(&mut self) {
        let mut hidden: Vec<(String, String)> = Vec::new();
        for t in self.tests.iter_mut().filter(|t| t.group == Group::F2p) {
            let alias = format!("hidden-f2p-{}", hidden.len() + 1);
            hidden.push((std::mem::replace(&mut t.id, alias.clone()), alias));
            t.message = None;
            t.details = None;
            t.base_message = None;
            t.did_you_mean.clear();
        }
        // A hint for a P2P typo may name a hidden test.
        let test_files = std::mem::take(&mut self.patch.test_patch_files);
        for t in &mut self.tests {
            t.did_you_mean.retain(|s| {
                !hidden.iter().any(|(id, _)| id == s)
                    && !test_files.iter().any(|f| s.starts_with(f.as_str()))
            });
        }
        // The hidden files' names go from free text too (ids first: they contain them).
        let files: Vec<(String, String)> = test_files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.clone(), format!("hidden-test-file-{}", i + 1)))
            .collect();
        let mask = |text: &mut String| {
            for (id, alias) in hidden.iter().chain(&files) {
                *text = text.replace(id.as_str(), alias);
            }
        };
        for t in self.tests.iter_mut().filter(|t| t.group == Group::P2p) {
            // A traceback through a hidden file quotes its code: withheld, not masked.
            if t.details
                .as_deref()
                .is_some_and(|d| files.iter().any(|(f, _)| d.contains(f.as_str())))
            {
                t.details = Some("(withheld: it quotes the hidden tests)".into());
            }
            for text in [&mut t.message, &mut t.base_message].into_iter().flatten() {
                mask(text);
            }
        }
        // The candidate's own list of files would say which of them the hidden tests took.
        let p = &mut self.patch;
        for f in p
            .overridden_files
            .iter_mut()
            .chain(&mut p.files)
            .chain(&mut p.protected_edits)
            .chain(&mut p.merged_files)
            .chain(p.overridden_hunks.iter_mut().map(|h| &mut h.file))
        {
            mask(f);
        }
        // Where the hidden tests' hunks went says where they are.
        p.test_patch_moved_hunks.clear();
        for w in &mut self.warnings {
            w.tests.iter_mut().for_each(mask);
            mask(&mut w.message);
        }
        if let Some(e) = &mut self.error {
            mask(&mut e.message);
        }
        if let Some(a) = &mut self.aborted {
            mask(&mut a.message);
        }
        mask(&mut self.summary);
        self.task.test_cmd = None;
        for run in [&mut self.runs.candidate, &mut self.runs.baseline]
            .into_iter()
            .flatten()
        {
            run.command = None;
        }
        self.redacted = true;
    }
}

/// Shortest line of the hidden tests looked for in shown text: shorter ones (`import pytest`,
/// `assert x`) are too common to say anything.
const QUOTED_LINE: usize = 16;

/// What is left of a text that quotes the hidden tests.
const WITHHELD: &str = "(withheld: it quotes the hidden tests)";

impl Verdict {
    /// Withhold every text an agent would be shown that quotes the hidden tests, whatever
    /// ran it: code under test can read the applied test files and raise their text in a P2P
    /// failure, an error or a warning. `test_patch` is the hidden tests' diff; each line it
    /// adds, trimmed, of `QUOTED_LINE` characters or more, is looked for. Messages, details,
    /// base messages (downstream ones too), the run error, how a run was cut short, and
    /// warnings go whole, as F2P messages do under [`Verdict::redact_f2p`]; the counts stay.
    pub fn withhold_quotes(&mut self, test_patch: &[u8]) {
        let text = String::from_utf8_lossy(test_patch);
        let hidden: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
            .map(|l| l[1..].trim())
            .filter(|l| l.chars().count() >= QUOTED_LINE)
            .collect();
        if hidden.is_empty() {
            return;
        }
        let withhold = |text: &mut String| {
            if hidden.iter().any(|h| text.contains(h)) {
                *text = WITHHELD.to_string();
            }
        };
        let downstream = self.downstream.iter_mut().flat_map(|d| d.broken.iter_mut());
        for t in self.tests.iter_mut().chain(downstream) {
            for text in [&mut t.message, &mut t.details, &mut t.base_message]
                .into_iter()
                .flatten()
            {
                withhold(text);
            }
        }
        if let Some(e) = &mut self.error {
            withhold(&mut e.message);
        }
        if let Some(a) = &mut self.aborted {
            withhold(&mut a.message);
        }
        for w in &mut self.warnings {
            withhold(&mut w.message);
        }
    }
}

/// The task graded against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskInfo {
    /// SWE-bench style instance id, when the task file has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_id: Option<String>,
    /// The repository (`check` only; `grade` reads reports).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<PathBuf>,
    /// The project's `owner/name`, as a SWE-bench dataset writes it (`repo` there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo_name: Option<String>,
    /// The base revision as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The commit it resolved to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    /// The test command template.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_cmd: Option<String>,
    /// The id syntax the tests were matched with.
    pub ids: IdSyntax,
}

/// What the patches touched.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PatchInfo {
    /// Files the candidate patch touches.
    pub files: Vec<String>,
    /// Files the test patch touches.
    pub test_patch_files: Vec<String>,
    /// Files whose candidate edits were replaced whole by the test patch's version (the
    /// hidden tests win): test files, and files the test patch creates or deletes.
    pub overridden_files: Vec<String>,
    /// Candidate edits lost in files both patches change, merged hunk by hunk (code with its
    /// tests inside): each where a test hunk changes the same lines or their context.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overridden_hunks: Vec<OverriddenHunk>,
    /// Files both patches change, merged hunk by hunk rather than replaced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_files: Vec<String>,
    /// How the test patch applied: `exact`, or `fuzzy` when a hunk was at a line offset
    /// (never with context ignored); absent without a test patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_patch_strategy: Option<ApplyStrategy>,
    /// The test patch's hunks at an offset (hidden from a redacted verdict).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub test_patch_moved_hunks: Vec<MovedHunk>,
    /// Where the candidate failed to apply (outcome `patch-failed` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apply_failure: Option<ApplyFailure>,
    /// How the candidate applied: `exact`, or `fuzzy` when a hunk had to move or drop
    /// context (absent when it did not apply).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apply_strategy: Option<ApplyStrategy>,
    /// Candidate edits to protected paths (tests, their configuration, CI): warned about, or
    /// reverted, by `--on-protected-edit`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protected_edits: Vec<String>,
    /// Those edits were put back to base before the tests ran (`--on-protected-edit revert`),
    /// so they were not part of what was graded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub protected_edits_reverted: bool,
    /// With `fuzzy`: each hunk that moved (`offset` lines) or ignored context (`fuzz`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moved_hunks: Vec<MovedHunk>,
}

/// Which run could not be judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// The run on the patched checkout.
    Candidate,
    /// The run on the unpatched base (with the test patch).
    Baseline,
}

/// Why a run could not be judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCause {
    /// The test command did not write a report.
    NoReport,
    /// The report is not readable JUnit XML.
    UnreadableReport,
    /// The test command ran past `--timeout`.
    Timeout,
    /// The report holds no test case at all (the runner rejected the ids, or ran nothing).
    EmptyReport,
    /// The test command could not be started.
    CommandFailedToStart,
    /// `--setup-cmd` failed.
    SetupFailed,
    /// The test patch does not apply (the task is broken, not the candidate).
    TestPatchDoesNotApply,
    /// The checkout could not be prepared.
    CheckoutFailed,
    /// The task cannot be run as given (no repository, an unknown base, no test command, bad
    /// ids): `batch` grades the other tasks and records this one so.
    InvalidTask,
    /// The runner's exit status and its report disagree: it failed with every test passing,
    /// or passed with tests failing. One of them is not what the tests did.
    ReportContradictsExit,
    /// Not one requested test is in the reports of either run: the ids, the runner or the
    /// task is wrong, and no verdict about the patch would mean anything.
    NoRequestedTestRan,
    /// The sandbox (a container, most often) could not be started or confined the run.
    SandboxFailed,
    /// `derive`: the gold patch does not apply to the base.
    GoldDoesNotApply,
    /// Imported: the harness that ran it wrote no report (its run failed before the tests
    /// were graded: an image that would not build, a timeout, a crash).
    NotEvaluated,
    /// The command ran into its memory or process limit (`--memory`, `--pids`) and left no
    /// usable report.
    ResourceLimit,
    /// The runner itself failed (pytest's `INTERNALERROR`, which its JUnit report holds as
    /// the test case `pytest.internal`): its report is not the tests' whole record, and a
    /// failure it could not write may stand there as a pass.
    RunnerCrashed,
}

/// The reason for outcome `error`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunError {
    /// Which run.
    pub stage: Stage,
    /// Why.
    pub cause: ErrorCause,
    /// Details for people.
    pub message: String,
}

/// How the candidate cut its own run short (see [`Verdict::aborted`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Aborted {
    /// Why its tests were not run: `crashed`, `timed-out` or `setup-failed`.
    pub reason: NotRunReason,
    /// What exactly was observed (`no-report`, `empty-report`, `unreadable-report`,
    /// `timeout`, `setup-failed`): the cause an error would have had.
    pub cause: ErrorCause,
    /// How the command ended and the end of its output, for people.
    pub message: String,
}

/// Kinds of warning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum WarningKind {
    /// No P2P test is counted: the axis is vacuously all-kept.
    EmptyP2p,
    /// F2P tests already pass at base: the task is suspect.
    F2pPassesAtBase,
    /// F2P tests are in neither run's report: the task is suspect.
    F2pMissing,
    /// P2P tests are not in the base run's report; they were left out and the task is suspect.
    P2pMissingAtBase,
    /// P2P tests already fail at base; they were left out.
    P2pBrokenAtBase,
    /// The baseline was not run: every P2P failure is blamed on the patch.
    BaselineSkipped,
    /// An id matched several testcases.
    AmbiguousId,
    /// None of the patched Python files was imported from the checkout.
    PatchedCodeNotImported,
    /// Truncated ids (SWE-bench's pytest ids cut at a space) were run as their enclosing test
    /// and matched by prefix.
    WidenedId,
    /// The runner refused ids; they were left out of the run and count as missing.
    RejectedId,
    /// Tests failed and then passed (a runner's retry or `--retries`).
    Unstable,
    /// The candidate came wrapped in a Markdown fence or an HTML `<pre>` block, which was
    /// taken off (and HTML escapes decoded) before it was applied.
    WrappedPatch,
    /// Entries of the patch that say `Binary files … differ` with no binary data: nothing
    /// could be applied for those files, which the message names; the rest was applied.
    BinaryNotApplied,
    /// Hunk headers whose line counts did not match their lines were counted again, as `git
    /// apply --recount` does (a plain `git apply`, and so SWE-bench, refuses such a patch).
    RecountedHunks,
    /// The candidate edits protected paths (`patch.protected_edits`).
    ProtectedEdit,
    /// The repository has submodules; the checkout leaves them empty.
    SubmodulesNotCheckedOut,
    /// The repository keeps files in Git LFS; the checkout holds pointers.
    LfsPointers,
    /// Tests outside the task's lists that passed at base fail after the patch
    /// (`downstream.broken`): it breaks code the task's tests do not cover.
    DownstreamBreakage,
    /// The runner failed inside (pytest's `INTERNALERROR`) at base, so not by the patch's
    /// doing: the reports are taken as written, where a failure it could not write may read
    /// as a pass.
    RunnerFailed,
    /// The commands ran on the host as the user (`--sandbox none`, or no sandbox works here):
    /// code under test could reach the network, the user's files and the other side's run,
    /// and the baseline was not stored.
    Unsandboxed,
}

impl WarningKind {
    /// Whether this finding is about the task rather than the patch: the F2P or P2P lists
    /// disagree with what the base shows, so every verdict of the task is in question.
    pub fn suspects_task(self) -> bool {
        matches!(
            self,
            WarningKind::F2pPassesAtBase | WarningKind::F2pMissing | WarningKind::P2pMissingAtBase
        )
    }
}

/// A finding that does not change the outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Warning {
    /// What kind.
    pub kind: WarningKind,
    /// For people.
    pub message: String,
    /// The tests concerned, if any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tests: Vec<String>,
}

/// Both test runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Runs {
    /// The patched run, if it started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate: Option<RunInfo>,
    /// The baseline run, if there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<RunInfo>,
}

/// One run of the test command, or the reports `grade` was given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunInfo {
    /// The command as run (first attempt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Attempts: 1, plus one per `--retries` round or rerun without rejected ids.
    pub attempts: usize,
    /// The reports read (`grade`, or `check --keep`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reports: Vec<PathBuf>,
    /// How it ended (the exit code is recorded; the verdict comes from the report).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub termination: Option<Termination>,
    /// Wall-clock milliseconds of setup and tests.
    pub duration_ms: u64,
    /// Where its checkout and logs were kept (`--keep` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    /// The baseline was read from the cache, not run (its other fields are the stored run's).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
    /// Its fresh checkout started from a trusted baseline's build output (a build seed), so
    /// that its build was incremental, not cold.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub seeded: bool,
    /// The setup command was not run: it had run in this pool slot on this base already
    /// (`--setup-once`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub setup_reused: bool,
    /// Where its time went, step by step (`-v` prints it).
    #[serde(default)]
    pub steps: Steps,
}

/// One run's wall-clock milliseconds, step by step, in the order they happen. A step that did
/// not happen is 0.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Steps {
    /// Making the checkout (or resetting a pool slot), a build seed planted in it.
    pub checkout_ms: u64,
    /// Applying the candidate (the candidate's run only).
    pub apply_ms: u64,
    /// Applying the hidden tests (the test patch).
    pub hidden_tests_ms: u64,
    /// Starting the sandbox (a container; bwrap starts with each command).
    pub sandbox_ms: u64,
    /// The preset's dependency download.
    pub fetch_ms: u64,
    /// The setup command.
    pub setup_ms: u64,
    /// The test command, every attempt.
    pub command_ms: u64,
    /// Reading the JUnit reports.
    pub report_ms: u64,
}

impl Steps {
    /// `checkout 25 ms, apply 2 ms, …, report 3 ms`: the steps that took any time.
    pub fn describe(&self) -> String {
        let steps = [
            ("checkout", self.checkout_ms),
            ("apply", self.apply_ms),
            ("hidden tests", self.hidden_tests_ms),
            ("sandbox", self.sandbox_ms),
            ("fetch", self.fetch_ms),
            ("setup", self.setup_ms),
            ("command", self.command_ms),
            ("report", self.report_ms),
        ];
        let taken: Vec<String> = steps
            .iter()
            .filter(|(_, ms)| *ms > 0)
            .map(|(name, ms)| format!("{name} {ms} ms"))
            .collect();
        if taken.is_empty() {
            "nothing measurable".into()
        } else {
            taken.join(", ")
        }
    }
}

/// Wall-clock times in milliseconds.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Timings {
    /// Preparing both checkouts (they are prepared concurrently).
    pub prepare_ms: u64,
    /// Running tests (both runs are concurrent).
    pub test_ms: u64,
    /// Grading both runs' evidence into the verdict.
    #[serde(default)]
    pub judge_ms: u64,
    /// Everything.
    pub total_ms: u64,
}
