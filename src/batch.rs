//! `batch`: the predictions for many tasks graded concurrently into an output directory, one
//! result file per task (the JSON of `check --format json`), resumable and shardable.
//!
//! ```text
//! DIR/results/<instance_id>.json   the verdict, written atomically
//! DIR/logs/<instance_id>/          the tails of the runs' logs
//! DIR/cache/                       baselines, shared by every prediction of a task
//! ```

use crate::cache::BaselineCache;
use crate::check::{Check, CheckError};
use crate::dataset::{Config, Prediction};
use crate::draft::Draft;
use crate::outcome::Outcome;
use crate::task::{TaskFile, test_command};
use crate::verdict::{ErrorCause, PatchInfo, Stage, TaskInfo, Verdict};
use crate::workspace::ApplyFailure;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A deterministic part of a run: the `index`-th (1-based) of `count` parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which part, from 1.
    pub index: usize,
    /// How many parts.
    pub count: usize,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("invalid shard `{s}`: expected K/N with 1 <= K <= N, e.g. 2/4");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// Whether the `position`-th job (in instance id order) is this shard's. Round robin
    /// over the sorted ids, so shards are equal to within one task and a task's shard depends
    /// only on the task list.
    pub fn owns(self, position: usize) -> bool {
        position % self.count == self.index - 1
    }
}

/// What the flags give every task that neither it nor the config file sets.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    /// Preset runner name.
    pub runner: Option<String>,
    /// Test command template.
    pub test_cmd: Option<String>,
    /// Id syntax name.
    pub ids: Option<String>,
    /// Per-command timeout.
    pub timeout: Option<Duration>,
    /// `--retries`.
    pub retries: usize,
}

/// One prediction with its task, completed from the config.
#[derive(Debug, Clone)]
pub struct Job {
    /// The task.
    pub task: TaskFile,
    /// The candidate.
    pub prediction: Prediction,
}

impl Job {
    /// The task's instance id.
    pub fn id(&self) -> &str {
        &self.prediction.instance_id
    }
}

/// The jobs of a run, in instance id order, and the predictions that match no task.
#[derive(Debug, Default)]
pub struct Plan {
    /// Every prediction that has a task (this shard's, when sharded).
    pub jobs: Vec<Job>,
    /// Predictions whose instance id is not among the tasks.
    pub unknown: Vec<String>,
}

impl Plan {
    /// Pair predictions with tasks, fill in from the config, keep this shard's part.
    pub fn new(
        tasks: Vec<TaskFile>,
        predictions: Vec<Prediction>,
        config: &Config,
        repos_dir: Option<&Path>,
        shard: Option<Shard>,
    ) -> Plan {
        let mut by_id: std::collections::HashMap<String, TaskFile> = tasks
            .into_iter()
            .filter_map(|t| Some((t.instance_id.clone()?, t)))
            .collect();
        let mut plan = Plan::default();
        let mut predictions = predictions;
        predictions.sort_by(|a, b| a.instance_id.cmp(&b.instance_id));
        for prediction in predictions {
            match by_id.remove(&prediction.instance_id) {
                Some(mut task) => {
                    config.complete(&mut task, repos_dir);
                    plan.jobs.push(Job { task, prediction });
                }
                None => plan.unknown.push(prediction.instance_id),
            }
        }
        if let Some(shard) = shard {
            plan.jobs = std::mem::take(&mut plan.jobs)
                .into_iter()
                .enumerate()
                .filter(|(i, _)| shard.owns(*i))
                .map(|(_, j)| j)
                .collect();
        }
        plan
    }
}

/// How a run goes.
#[derive(Debug, Clone)]
pub struct Options {
    /// Tasks graded at once.
    pub jobs: usize,
    /// Skip tasks that already have a result.
    pub resume: bool,
    /// With `resume`, grade again the tasks whose result is `error`.
    pub retry_errors: bool,
    /// Where baselines are kept.
    pub cache: Option<Arc<BaselineCache>>,
    /// Reusable checkouts, when set.
    pub pool: Option<crate::pool::WorkdirPool>,
    /// Apply exactly or not at all.
    pub strict_apply: bool,
    /// Protected paths and what an edit to them does.
    pub protection: crate::protect::Protection,
    /// For tasks that do not say.
    pub defaults: Defaults,
}

/// What happened to one job, as it happens.
#[derive(Debug)]
pub enum Event<'a> {
    /// The run starts: `total` jobs to grade, `skipped` already graded (`--resume`).
    Start {
        /// Jobs to grade.
        total: usize,
        /// Jobs skipped.
        skipped: usize,
    },
    /// A job is graded and its result written.
    Graded {
        /// Its verdict.
        verdict: &'a Verdict,
        /// Jobs graded so far, this one included.
        done: usize,
    },
}

/// A run that could not go on.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// The output directory or a result could not be written.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// What one call of [`run`] did.
#[derive(Debug, Default)]
pub struct Ran {
    /// The verdicts it wrote (skipped tasks' results are on disk already).
    pub graded: Vec<Verdict>,
    /// Tasks whose grading panicked (a bug in patchgrade): no result was written, so a
    /// resumed run grades them again.
    pub crashed: Vec<(String, String)>,
}

/// The file name for an instance id: ids are kept as they are where they are safe in a file
/// name, and bytes outside `[A-Za-z0-9._-]` are written `%XX` (so no id can escape the
/// directory or collide with another).
pub fn file_stem(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.starts_with('.') {
        out.replace_range(0..1, "%2E");
    }
    out
}

/// Where a task's result lives in an output directory.
pub fn result_path(out: &Path, id: &str) -> PathBuf {
    out.join("results").join(format!("{}.json", file_stem(id)))
}

/// Grade every job of the plan into `out`. One task's failure to be graded is its verdict
/// (`error`, `patch-failed`); only an unwritable output stops the run.
pub async fn run(
    plan: Plan,
    out: &Path,
    options: &Options,
    mut on_event: impl FnMut(Event<'_>),
) -> Result<Ran, BatchError> {
    let results = out.join("results");
    std::fs::create_dir_all(&results).map_err(|source| BatchError::Write {
        path: results.clone(),
        source,
    })?;
    let (todo, skipped): (Vec<Job>, Vec<Job>) = plan
        .jobs
        .into_iter()
        .partition(|job| !(options.resume && already_graded(out, job.id(), options)));
    on_event(Event::Start {
        total: todo.len(),
        skipped: skipped.len(),
    });
    // Jobs start in instance id order, at most `jobs` at a time, and each result is written
    // as soon as its job ends: a run stopped at any point keeps everything finished.
    let mut pending = todo.into_iter();
    let mut running = tokio::task::JoinSet::new();
    let mut names = std::collections::HashMap::new();
    let mut ran = Ran::default();
    loop {
        while running.len() < options.jobs.max(1) {
            let Some(job) = pending.next() else { break };
            let options = options.clone();
            let logs = out.join("logs").join(file_stem(job.id()));
            let id = job.id().to_string();
            let handle = running.spawn(async move {
                let id = job.id().to_string();
                (id, grade_job(&job, &options, &logs).await)
            });
            names.insert(handle.id(), id);
        }
        let Some(joined) = running.join_next().await else {
            break;
        };
        let (id, verdict) = match joined {
            Ok(done) => done,
            Err(e) => {
                let id = names.get(&e.id()).cloned().unwrap_or_default();
                ran.crashed.push((id, e.to_string()));
                continue;
            }
        };
        write_result(&result_path(out, &id), &verdict)?;
        ran.graded.push(verdict);
        on_event(Event::Graded {
            verdict: ran.graded.last().expect("just pushed"),
            done: ran.graded.len(),
        });
    }
    Ok(ran)
}

fn already_graded(out: &Path, id: &str, options: &Options) -> bool {
    let Ok(bytes) = std::fs::read(result_path(out, id)) else {
        return false;
    };
    match serde_json::from_slice::<Verdict>(&bytes) {
        Ok(v) => !(options.retry_errors && v.outcome == Outcome::Error),
        // A result that cannot be read is graded again rather than trusted.
        Err(_) => false,
    }
}

/// Write a result so that a reader (or a resumed run) sees the whole file or none.
pub fn write_result(path: &Path, verdict: &Verdict) -> Result<(), BatchError> {
    let fail = |source| BatchError::Write {
        path: path.to_path_buf(),
        source,
    };
    let json = format!("{}\n", crate::report::json(verdict));
    crate::atomic::write(path, json.as_bytes()).map_err(fail)
}

/// Grade one job; whatever goes wrong becomes its verdict.
async fn grade_job(job: &Job, options: &Options, logs: &Path) -> Verdict {
    let started = Instant::now();
    let check = match build_check(job, options, logs) {
        Ok(check) => check,
        Err(reason) => return unjudged(job, started, Unjudged::Task(reason)),
    };
    match check.run().await {
        Ok(verdict) => verdict,
        Err(CheckError::Patch { origin, reason }) if origin == PREDICTION => {
            unjudged(job, started, Unjudged::Patch(reason.to_string()))
        }
        Err(e) => unjudged(job, started, Unjudged::Task(e.to_string())),
    }
}

/// How the candidate patch is named in messages.
const PREDICTION: &str = "model_patch";

fn build_check(job: &Job, options: &Options, logs: &Path) -> Result<Check, String> {
    let task = &job.task;
    let repo = task.repo_path.clone().ok_or_else(|| {
        format!(
            "no repository for `{}`: give the task a repo_path, a [repos.\"{}\"] path in \
             --config, or --repos-dir",
            job.id(),
            task.repo.as_deref().unwrap_or("owner/name")
        )
    })?;
    let d = &options.defaults;
    let command = match (&task.test_cmd, &task.runner) {
        (None, None) => test_command(d.test_cmd.as_deref(), d.runner.as_deref(), d.ids.as_deref()),
        (cmd, runner) => test_command(cmd.as_deref(), runner.as_deref(), task.ids.as_deref()),
    }?
    .ok_or_else(|| {
        "no test command: give the task a runner or test_cmd, set one in --config, or pass \
         --runner/--test-cmd"
            .to_string()
    })?;
    let mut check = Check::new(repo)
        .instance_id(job.id())
        .base(task.base.clone().unwrap_or_else(|| "HEAD".into()))
        .patch(
            PREDICTION,
            job.prediction.model_patch.clone().unwrap_or_default(),
        )
        .f2p(task.f2p.clone())
        .p2p(task.p2p.clone())
        .command(command)
        .retries(d.retries)
        .logs(logs);
    if let Some(cache) = &options.cache {
        check = check.baseline_cache(cache.clone());
    }
    if let Some(pool) = &options.pool {
        check = check.workdir_pool(pool.clone());
    }
    check = check
        .strict_apply(options.strict_apply)
        .protection(options.protection.clone());
    match (&task.test_patch, &task.test_patch_file) {
        (Some(text), _) => check = check.test_patch("test_patch", text.clone()),
        (None, Some(path)) => {
            let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
            check = check.test_patch(path.display().to_string(), text);
        }
        (None, None) => {}
    }
    if let Some(t) = task.timeout.or(d.timeout) {
        check = check.timeout(t);
    }
    for (k, v) in &task.env {
        check = check.env(k, v);
    }
    if let Some(cmd) = &task.setup_cmd {
        check = check.setup_cmd(cmd);
    }
    Ok(check)
}

enum Unjudged {
    /// The prediction is not a patch at all.
    Patch(String),
    /// The task cannot be run as given.
    Task(String),
}

fn unjudged(job: &Job, started: Instant, why: Unjudged) -> Verdict {
    let task = TaskInfo {
        instance_id: Some(job.id().to_string()),
        repo: job.task.repo_path.clone(),
        base: job.task.base.clone(),
        base_commit: None,
        test_cmd: None,
        ids: crate::ids::IdSyntax::Pytest,
    };
    let draft = Draft::new(task, PatchInfo::default());
    match why {
        Unjudged::Patch(message) => {
            let mut draft = draft;
            draft.patch.apply_failure = Some(ApplyFailure {
                file: None,
                hunk: None,
                message,
            });
            draft.finish(Outcome::PatchFailed, None, None, started)
        }
        Unjudged::Task(message) => {
            draft.fail(Stage::Baseline, (ErrorCause::InvalidTask, message), started)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_evenly_and_deterministically() {
        assert!("0/2".parse::<Shard>().is_err());
        assert!("3/2".parse::<Shard>().is_err());
        assert!("x".parse::<Shard>().is_err());
        let shards: Vec<Shard> = (1..=3).map(|k| format!("{k}/3").parse().unwrap()).collect();
        for position in 0..10 {
            let owners = shards.iter().filter(|s| s.owns(position)).count();
            assert_eq!(owners, 1, "position {position}");
        }
        assert_eq!((0..10).filter(|p| shards[0].owns(*p)).count(), 4);
        assert_eq!((0..10).filter(|p| shards[2].owns(*p)).count(), 3);
    }

    #[test]
    fn file_stems_are_safe_and_distinct() {
        assert_eq!(file_stem("django__django-11099"), "django__django-11099");
        assert_eq!(file_stem("a/b"), "a%2Fb");
        assert_eq!(file_stem("../x"), "%2E.%2Fx");
        assert_eq!(file_stem(".hidden"), "%2Ehidden");
        assert_ne!(file_stem("a b"), file_stem("a_b"));
    }
}
