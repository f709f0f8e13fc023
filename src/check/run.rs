//! Grading a check: validate it into a [`Plan`], then the stages in order (downstream
//! selection, the race of both sides, the conclusion), each a method of the plan in its own
//! file.

use super::builder::Check;
use super::plan::Plan;
use super::prepare::RunRoot;
use super::{Error, execute};
use crate::judge::Draft;
use crate::judge::verdict::{Outcome, Verdict, WarningKind};
use crate::run::Sandbox;
use crate::run::sandbox::SandboxChoice;
use crate::workspace::{Patch, Wrapper};
use std::sync::Arc;
use std::time::Instant;

impl Check {
    /// Grade the patch. `Err` only for bad input; everything observed is in the verdict.
    pub async fn run(&self) -> Result<Verdict, Error> {
        let started = Instant::now();
        let plan = self.validate()?;
        let mut draft = Draft::new(self.task_info(&plan), plan.patch_info());
        draft.scoring = self.settings.scoring;
        let Some(candidate) = plan.candidate.clone() else {
            return Ok(draft.finish(Outcome::EmptyPatch, None, None, started));
        };
        draft.patch.files = candidate.files().to_vec();
        if let Some(wrapper) = candidate.wrapper() {
            draft.warn(WarningKind::WrappedPatch, wrapped(wrapper), Vec::new());
        }
        if candidate.recounted() {
            draft.warn(
                WarningKind::RecountedHunks,
                "hunk headers whose line counts did not match their lines were counted again \
                 (`git apply --recount`); a plain `git apply` refuses such a patch"
                    .to_string(),
                Vec::new(),
            );
        }
        if !candidate.binary_without_data().is_empty() {
            let files = candidate.binary_without_data().join(", ");
            draft.warn(
                WarningKind::BinaryNotApplied,
                format!(
                    "not applied, the patch says only that they differ (`Binary files … \
                     differ`, no data; `git diff --binary` writes it): {files}"
                ),
                Vec::new(),
            );
        }
        draft.isolation = plan.sandbox.isolation(self.settings.network);
        draft.isolation.env = self.env_names(&plan);
        if !plan.sandbox.may_keep() {
            let why = match Sandbox::why_bwrap_is_unavailable() {
                Some(why) if self.settings.sandbox == SandboxChoice::Auto => {
                    format!("no sandbox works here ({why})")
                }
                _ => "--sandbox none".to_string(),
            };
            draft.warn(
                WarningKind::Unsandboxed,
                format!(
                    "the tests ran on the host as you, unsandboxed ({why}): code under test \
                     could reach the network, your files and the other side's run, so the \
                     baseline was not stored in the cache"
                ),
                Vec::new(),
            );
        }

        let root = Arc::new(RunRoot::new(self.settings.keep.as_deref())?);
        let mut plan = plan;
        plan.downstream = plan.select_downstream(&candidate, &root).await;
        let verdict = self.run_in(&root, plan, draft, candidate, started).await;
        if let Some(dir) = &self.settings.logs {
            execute::copy_logs(root.path(), dir);
        }
        Ok(verdict)
    }

    /// Prepare, run and judge both sides (see the module's doc).
    async fn run_in(
        &self,
        root: &Arc<RunRoot>,
        plan: Plan,
        draft: Draft,
        candidate: Patch,
        started: Instant,
    ) -> Verdict {
        let raced = plan.race(root, candidate).await;
        plan.conclude(draft, raced, started)
    }
}

/// The warning for a wrapped candidate.
fn wrapped(wrapper: Wrapper) -> String {
    let what = match wrapper {
        Wrapper::MarkdownFence => "a Markdown code fence",
        Wrapper::HtmlPre { decoded: false } => "an HTML <pre> block",
        Wrapper::HtmlPre { decoded: true } => {
            "an HTML <pre> block, with HTML escapes (&lt; and the like) in it"
        }
    };
    let decoded = if matches!(wrapper, Wrapper::HtmlPre { decoded: true }) {
        " and the escapes decoded"
    } else {
        ""
    };
    format!(
        "the patch came wrapped in {what}: the wrapper was taken off{decoded} before it was applied"
    )
}
