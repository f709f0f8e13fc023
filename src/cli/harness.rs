//! The offline harness on the command line: `batch`, `report`, `compare`, `merge`.

use anyhow::{Context, Result};
use patchgrade::harness::{
    Comparison, Config, Event, Options, Plan, Shard, Summary, batch, gate, read_predictions,
    read_tasks, results, swebench,
};
use patchgrade::report::{self, CompareFormat, Compared, Run, RunFormat};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct BatchArgs {
    /// Tasks: SWE-bench instances, JSONL or a JSON list.
    #[arg(long, value_name = "FILE")]
    tasks: PathBuf,
    /// Predictions: SWE-bench's format, as JSONL, a JSON list or an object keyed by id.
    #[arg(long, value_name = "FILE")]
    predictions: PathBuf,
    /// The output directory (results/, logs/, cache/).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Tasks graded at once [default: the number of cores]
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Config file with [defaults] and [repos."owner/name"] entries.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Where clones live: the repository owner/name is DIR/owner__name.
    #[arg(long, value_name = "DIR")]
    repos_dir: Option<PathBuf>,
    /// Grade only part K of N (1 <= K <= N), for N machines sharing a run.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Skip tasks whose result already exists.
    #[arg(long)]
    resume: bool,
    /// With --resume, grade again the tasks whose result is `error`.
    #[arg(long)]
    retry_errors: bool,
    /// Also write every result (of this run and earlier ones in --out) as JUnit XML: a suite
    /// per task, its outcome as the status of one testcase.
    #[arg(long, value_name = "FILE")]
    junit_out: Option<PathBuf>,
    #[command(flatten)]
    reuse: super::ReuseArgs,
    #[command(
        flatten,
        next_help_heading = "For tasks that set none (nor their config entry)"
    )]
    command: super::CommandArgs,
    #[command(flatten)]
    apply: super::PatchArgs,
}

#[derive(clap::Args)]
pub struct ReportArgs {
    /// A batch output directory.
    dir: PathBuf,
    #[arg(long, value_enum, default_value = "human")]
    format: RunFormat,
    /// The dataset (JSONL or a JSON list): its tasks without a result are incomplete.
    #[arg(long, value_name = "FILE")]
    tasks: Option<PathBuf>,
    /// Also write each result as SWE-bench's DIR/<model>/<instance_id>/report.json (the
    /// layout of logs/run_evaluation/<run_id>); with --format swebench only.
    #[arg(long, value_name = "DIR")]
    instance_reports: Option<PathBuf>,
    /// Exit 1 when this holds, e.g. 'regression>0', 'resolve_rate<40%' (repeatable; NAME: an
    /// outcome, resolve_rate, regression_share, downstream_breakage, suspect, incomplete)
    #[arg(long, value_name = "CONDITION")]
    fail_if: Vec<gate::Condition>,
    /// Exit 1 when the resolve rate is below this (a fraction, or a percentage: 40%)
    #[arg(long, value_name = "RATE")]
    min_resolve_rate: Option<String>,
}

#[derive(clap::Args)]
pub struct CompareArgs {
    /// Run A (before).
    a: PathBuf,
    /// Run B (after).
    b: PathBuf,
    #[arg(long, value_enum, default_value = "human")]
    format: CompareFormat,
    /// Exit 1 when B's Regression rate is significantly higher than A's (exact McNemar test
    /// over the tasks both graded, p below --alpha)
    #[arg(long)]
    fail_on_worse: bool,
    /// The significance level of --fail-on-worse
    #[arg(long, value_name = "P", default_value = "0.05")]
    alpha: f64,
}

#[derive(clap::Subcommand)]
pub enum ImportCommand {
    /// SWE-bench's evaluation logs (logs/run_evaluation/<run>, or one model's directory in
    /// it), graded from each instance's report.json and run_instance.log.
    Swebench(ImportArgs),
}

#[derive(clap::Args)]
pub struct ImportArgs {
    /// The run's (or the model's) log directory.
    logs: PathBuf,
    /// The results directory to write (results/ in it must not hold results yet).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The dataset: names the tests SWE-bench counted neither way, and the repositories.
    #[arg(long, value_name = "FILE")]
    tasks: Option<PathBuf>,
    /// The predictions: name the models, and say which were empty or never evaluated.
    #[arg(long, value_name = "FILE")]
    predictions: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The joined output directory.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Output directories of the shards.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
}

/// `batch`: `Ok(true)` when every task got a result.
pub async fn batch(args: BatchArgs) -> Result<bool> {
    super::check::writable(args.junit_out.as_deref())?;
    let tasks = read_tasks(&args.tasks)?;
    let predictions = read_predictions(&args.predictions)?;
    let config = match &args.config {
        Some(path) => Config::load(path)?,
        None => Config::default(),
    };
    let defaults = args.command.layer()?;
    let plan = Plan::new(
        tasks,
        predictions,
        &config,
        args.repos_dir.as_deref(),
        &defaults,
        args.shard,
    );
    for id in &plan.unknown {
        eprintln!(
            "patchgrade: warning: {}: no task `{id}` in {}; not graded",
            args.predictions.display(),
            args.tasks.display()
        );
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let options = Options {
        jobs: args.jobs.unwrap_or(cores),
        resume: args.resume,
        retry_errors: args.retry_errors,
        check: patchgrade::CheckOptions {
            cache: args.reuse.cache(Some(args.out.join("cache"))),
            pool: args.reuse.pool(),
            strict_apply: args.apply.strict_apply,
            protection: Some(args.apply.protection()?),
        },
    };
    let mut progress = Progress::new(super::globals().quiet);
    let ran = batch::run(plan, &args.out, &options, |e| progress.on(e)).await?;
    progress.finish();
    for (id, message) in &ran.crashed {
        eprintln!("patchgrade: error: grading `{id}` failed inside patchgrade: {message}");
    }
    let verdicts = results::load(&args.out)?;
    let summary = Summary::of(&verdicts);
    let run = Run {
        summary: &summary,
        verdicts: &verdicts,
        title: "",
        tasks: None,
    };
    if let Some(path) = &args.junit_out {
        let xml = report::render(&run, RunFormat::Junit)?;
        patchgrade::write_atomically(path, xml.as_bytes())
            .with_context(|| format!("{}: cannot write", path.display()))?;
    }
    if !super::globals().quiet {
        eprint!("{}", report::render(&run, RunFormat::Human)?);
    }
    Ok(ran.crashed.is_empty())
}

/// A bar on a terminal, a line per task otherwise (CI logs).
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    total: usize,
    quiet: bool,
}

impl Progress {
    fn new(quiet: bool) -> Progress {
        Progress {
            bar: None,
            total: 0,
            quiet,
        }
    }

    fn on(&mut self, event: Event<'_>) {
        if self.quiet {
            return;
        }
        match event {
            Event::Start { total, skipped } => {
                self.total = total;
                if skipped > 0 {
                    eprintln!("patchgrade: {skipped} task(s) already graded, skipped (--resume)");
                }
                if std::io::stderr().is_terminal() {
                    let bar = indicatif::ProgressBar::new(total as u64);
                    if let Ok(style) = indicatif::ProgressStyle::with_template(
                        "{bar:40} {pos}/{len} {elapsed_precise} (eta {eta}) {msg}",
                    ) {
                        bar.set_style(style);
                    }
                    self.bar = Some(bar);
                }
            }
            Event::Graded { verdict, done } => {
                let line = format!(
                    "{}: {}",
                    verdict.task.instance_id.as_deref().unwrap_or("?"),
                    verdict.outcome
                );
                match &self.bar {
                    Some(bar) => {
                        bar.set_position(done as u64);
                        bar.set_message(line);
                    }
                    None => eprintln!("[{done}/{}] {line}", self.total),
                }
            }
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `report`: `Ok(false)` when a gate failed (said on stderr).
pub fn report(args: ReportArgs) -> Result<bool> {
    let verdicts = results::load(&args.dir)?;
    let tasks: Option<Vec<String>> = match &args.tasks {
        Some(path) => Some(
            read_tasks(path)?
                .into_iter()
                .filter_map(|t| t.instance_id)
                .collect(),
        ),
        None => None,
    };
    if args.instance_reports.is_some() && args.format != RunFormat::Swebench {
        anyhow::bail!("--instance-reports: only with --format swebench");
    }
    let s = match &tasks {
        Some(tasks) => Summary::with_tasks(&verdicts, tasks),
        None => Summary::of(&verdicts),
    };
    if let Some(dir) = &args.instance_reports {
        write_instance_reports(dir, &verdicts)?;
    }
    let title = run_name(&args.dir, &verdicts);
    let run = Run {
        summary: &s,
        verdicts: &verdicts,
        title: &title,
        tasks: tasks.as_deref(),
    };
    super::stdout(&report::render(&run, args.format)?)?;
    let mut conditions = args.fail_if;
    if let Some(rate) = &args.min_resolve_rate {
        conditions.push(format!("resolve_rate<{rate}").parse().map_err(|_| {
            anyhow::anyhow!("--min-resolve-rate: `{rate}` is not a rate (0.4, or 40%)")
        })?);
    }
    let failed = gate::check_summary(&s, &conditions);
    for line in &failed {
        eprintln!("patchgrade: {line}");
    }
    Ok(failed.is_empty())
}

/// SWE-bench's report.json of each result it would have one for, under its model's
/// directory (`/` in a model name written `__`, as SWE-bench does).
fn write_instance_reports(dir: &std::path::Path, verdicts: &[patchgrade::Verdict]) -> Result<()> {
    for v in verdicts {
        let Some(report) = swebench::instance_report(v) else {
            continue;
        };
        let model = v
            .model_name_or_path
            .as_deref()
            .unwrap_or("None")
            .replace('/', "__");
        let at = dir
            .join(results::file_stem(&model))
            .join(results::file_stem(results::id(v)));
        std::fs::create_dir_all(&at).with_context(|| format!("{}: cannot create", at.display()))?;
        let path = at.join("report.json");
        patchgrade::write_atomically(&path, serde_json::to_string_pretty(&report)?.as_bytes())
            .with_context(|| format!("{}: cannot write", path.display()))?;
    }
    Ok(())
}

pub fn import(command: ImportCommand) -> Result<()> {
    let ImportCommand::Swebench(args) = command;
    let tasks = args.tasks.as_deref().map(read_tasks).transpose()?;
    let predictions = args
        .predictions
        .as_deref()
        .map(read_predictions)
        .transpose()?;
    let sources = swebench::Sources {
        tasks: tasks.as_deref(),
        predictions: predictions.as_deref(),
    };
    let verdicts = swebench::import(&args.logs, sources)?;
    let written = results::write_all(&args.out, &verdicts)?;
    if super::globals().quiet {
        return Ok(());
    }
    eprintln!(
        "patchgrade: {written} result(s) in {}",
        args.out.join("results").display()
    );
    Ok(())
}

/// `compare`: `Ok(false)` when `--fail-on-worse` found B worse (said on stderr).
pub fn compare(args: CompareArgs) -> Result<bool> {
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        anyhow::bail!(
            "--alpha: {} is not a significance level (0 < P < 1)",
            args.alpha
        );
    }
    let a = results::load(&args.a)?;
    let b = results::load(&args.b)?;
    let c = Comparison::of(&a, &b).named(run_name(&args.a, &a), run_name(&args.b, &b));
    let compared = Compared {
        comparison: &c,
        a: &a,
        b: &b,
    };
    super::stdout(&report::render(&compared, args.format)?)?;
    let worse = args
        .fail_on_worse
        .then(|| gate::worse(&c, args.alpha))
        .flatten();
    if let Some(line) = &worse {
        eprintln!("patchgrade: {line}");
    }
    Ok(worse.is_none())
}

/// A run's name: its model, when every result names the same one, else its directory's name.
fn run_name(dir: &std::path::Path, verdicts: &[patchgrade::Verdict]) -> String {
    let mut models = verdicts.iter().map(|v| v.model_name_or_path.as_deref());
    let first = models.next().flatten();
    match first {
        Some(m) if models.all(|x| x == Some(m)) => m.to_string(),
        _ => dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string()),
    }
}

#[derive(clap::Args)]
pub struct SchemaArgs {
    /// The document: verdict (check, grade, batch results, the MCP tool), report, compare.
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(patchgrade::harness::schema::NAMES))]
    document: String,
}

pub fn schema(args: SchemaArgs) -> Result<()> {
    let text = patchgrade::harness::schema::schema(&args.document)
        .with_context(|| format!("no schema `{}`", args.document))?;
    super::stdout(&text)
}

pub fn merge(args: MergeArgs) -> Result<()> {
    let n = patchgrade::harness::merge::merge(&args.out, &args.dirs)
        .with_context(|| format!("cannot merge into {}", args.out.display()))?;
    if super::globals().quiet {
        return Ok(());
    }
    eprintln!(
        "patchgrade: {n} result(s) in {}",
        args.out.join("results").display()
    );
    Ok(())
}
