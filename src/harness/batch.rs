//! `batch`: the predictions for many tasks graded concurrently into a results directory
//! ([`super::results`]), one verdict per task, resumable and shardable.

use super::dataset::{Config, Prediction};
use super::results::{WriteError, file_stem, result_path, write_result};
use crate::check::{Check, CheckOptions, Error};
use crate::judge::Draft;
use crate::judge::verdict::{ErrorCause, Outcome, PatchInfo, Stage, TaskInfo, Verdict};
use crate::observe::IdSyntax;
use crate::task::TaskFile;
use crate::workspace::ApplyFailure;
use std::path::Path;
use std::str::FromStr;
use std::time::Instant;

/// A deterministic part of a run: the `index`-th (1-based) of `count` parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which part, from 1.
    pub index: usize,
    /// How many parts.
    pub count: usize,
}

/// A shard that is not `K/N` with `1 <= K <= N`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid shard `{0}`: expected K/N with 1 <= K <= N, e.g. 2/4")]
pub struct ShardError(pub String);

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError(s.to_string());
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
    /// Pair predictions with tasks, stack each task over its config layers and `defaults`
    /// (what the caller gives every task that neither it nor the config sets), keep this
    /// shard's part.
    pub fn new(
        tasks: Vec<TaskFile>,
        predictions: Vec<Prediction>,
        config: &Config,
        repos_dir: Option<&Path>,
        defaults: &TaskFile,
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
                Some(task) => {
                    let task = config.complete(task, repos_dir, defaults);
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
    /// How every task's check runs.
    pub check: CheckOptions,
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

/// What one call of [`run`] did.
#[derive(Debug, Default)]
pub struct Ran {
    /// The verdicts it wrote (skipped tasks' results are on disk already).
    pub graded: Vec<Verdict>,
    /// Tasks whose grading panicked (a bug in patchgrade): no result was written, so a
    /// resumed run grades them again.
    pub crashed: Vec<(String, String)>,
}

/// Grade every job of the plan into `out`. One task's failure to be graded is its verdict
/// (`error`, `patch-failed`); only an unwritable output stops the run.
pub async fn run(
    plan: Plan,
    out: &Path,
    options: &Options,
    mut on_event: impl FnMut(Event<'_>),
) -> Result<Ran, WriteError> {
    let results = out.join("results");
    std::fs::create_dir_all(&results).map_err(|source| WriteError {
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

/// Grade one job; whatever goes wrong becomes its verdict, which names the model.
async fn grade_job(job: &Job, options: &Options, logs: &Path) -> Verdict {
    let mut verdict = grade_prediction(job, options, logs).await;
    verdict.model_name_or_path = job.prediction.model_name_or_path.clone();
    verdict
}

async fn grade_prediction(job: &Job, options: &Options, logs: &Path) -> Verdict {
    let started = Instant::now();
    let check = match build_check(job, options, logs) {
        Ok(check) => check,
        Err(reason) => return unjudged(job, started, Unjudged::Task(reason)),
    };
    match check.run().await {
        Ok(verdict) => verdict,
        Err(Error::Patch { origin, reason }) if origin == PREDICTION => {
            unjudged(job, started, Unjudged::Patch(reason.to_string()))
        }
        Err(e) => unjudged(job, started, Unjudged::Task(explain(e))),
    }
}

/// How the candidate patch is named in messages.
const PREDICTION: &str = "model_patch";

fn build_check(job: &Job, options: &Options, logs: &Path) -> Result<Check, String> {
    let check = Check::from_task(&job.task, &options.check).map_err(explain)?;
    let patch = job.prediction.model_patch.clone().unwrap_or_default();
    Ok(check.patch(PREDICTION, patch).logs(logs))
}

/// A task's error, with where a batch's tasks get what they lack.
fn explain(e: Error) -> String {
    let hint = match e {
        Error::NoRepository { .. } => {
            ", a path in its repository's config entry, or a clone in the repositories \
             directory (DIR/owner__name)"
        }
        Error::NoCommand => ": give the task a runner or test_cmd, or set one in the config",
        _ => "",
    };
    format!("{e}{hint}")
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
        repo_name: job.task.repo.clone(),
        base: job.task.base.clone(),
        base_commit: None,
        test_cmd: None,
        ids: IdSyntax::Pytest,
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
}
