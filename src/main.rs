//! The `patchgrade` command line: a thin layer over the library.

mod cli;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use patchgrade::grade::FromReports;
use patchgrade::task::{TaskFile, parse_env, parse_id_file, test_command};
use patchgrade::{Check, IdSyntax, Outcome, Preset, Verdict, report};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Exit code for bad input or usage.
const EXIT_USAGE: u8 = 2;
/// Exit code for outcome `error`.
const EXIT_ERROR: u8 = 3;

#[derive(Parser)]
#[command(
    name = "patchgrade",
    version,
    about = "Grade a candidate patch from what its tests actually do"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Apply a patch in a temporary checkout, run the tests (and a baseline), classify.
    Check(Box<CheckArgs>),
    /// Classify from JUnit reports that were already produced (CI ran the tests).
    Grade(Box<GradeArgs>),
    /// Serve the check as an MCP tool (`check_patch`) over stdio, for one task.
    Mcp(Box<McpArgs>),
    /// Grade many tasks' predictions into an output directory (SWE-bench formats).
    Batch(Box<cli::offline::BatchArgs>),
    /// The outcome distribution of a batch output directory.
    Report(cli::offline::ReportArgs),
    /// Two batch runs compared task by task: transitions and paired tests.
    Compare(cli::offline::CompareArgs),
    /// Join the output directories of a sharded run.
    Merge(cli::offline::MergeArgs),
}

#[derive(clap::Args)]
struct GradeArgs {
    /// Report after the patch: a file or a directory of reports (repeatable).
    #[arg(long, value_name = "PATH", required = true)]
    junit: Vec<PathBuf>,
    /// Report at base: a file or a directory (repeatable). Without it every P2P failure is
    /// blamed on the patch.
    #[arg(long, value_name = "PATH")]
    base_junit: Vec<PathBuf>,
    #[command(flatten)]
    tests: TestIdArgs,
    /// The runner that wrote the reports (gives the id syntax).
    #[arg(long, value_name = "NAME")]
    runner: Option<String>,
    /// Id syntax, when it is not the runner's [default: pytest]
    #[arg(long, value_name = "SYNTAX")]
    ids: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
}

/// The requested tests.
#[derive(clap::Args)]
struct TestIdArgs {
    /// A fail-to-pass test id (repeatable).
    #[arg(long = "f2p", value_name = "ID")]
    f2p: Vec<String>,
    /// A pass-to-pass test id (repeatable).
    #[arg(long = "p2p", value_name = "ID")]
    p2p: Vec<String>,
    /// File of fail-to-pass ids: one per line, or a JSON array.
    #[arg(long, value_name = "FILE")]
    f2p_file: Option<PathBuf>,
    /// File of pass-to-pass ids: one per line, or a JSON array.
    #[arg(long, value_name = "FILE")]
    p2p_file: Option<PathBuf>,
}

impl TestIdArgs {
    /// F2P and P2P ids; flags and id files replace the task file's lists.
    fn resolve(
        self,
        task_f2p: Vec<String>,
        task_p2p: Vec<String>,
    ) -> Result<(Vec<String>, Vec<String>)> {
        Ok((
            ids(self.f2p, self.f2p_file.as_deref(), task_f2p)?,
            ids(self.p2p, self.p2p_file.as_deref(), task_p2p)?,
        ))
    }
}

/// How the verdict is written, for every subcommand that produces one.
#[derive(clap::Args)]
struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// Also write the graded tests as JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    junit_out: Option<PathBuf>,
    /// Size bound of `--format feedback`, in bytes.
    #[arg(long, value_name = "N", default_value_t = report::DEFAULT_MAX_BYTES)]
    max_bytes: usize,
    /// Withhold the F2P ids and messages (hidden tests), keeping their counts.
    #[arg(long)]
    redact_f2p: bool,
    /// Outcomes that exit 0 (comma list).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "resolved,no-breakage",
        value_delimiter = ','
    )]
    accept: Vec<Outcome>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// A summary with the grid, for people.
    Human,
    /// The whole verdict, for programs.
    Json,
    /// What to fix, bounded in size, for a language model.
    Feedback,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Baseline {
    Run,
    Skip,
}

#[derive(clap::Args)]
struct CheckArgs {
    /// The candidate patch (unified diff); `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    patch: Option<PathBuf>,
    #[command(flatten)]
    task: TaskArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(clap::Args)]
struct McpArgs {
    #[command(flatten)]
    task: TaskArgs,
    /// Size bound of the feedback text, in bytes.
    #[arg(long, value_name = "N", default_value_t = report::DEFAULT_MAX_BYTES)]
    max_bytes: usize,
    /// Withhold the F2P ids and messages (hidden tests) from the agent, keeping their counts.
    #[arg(long)]
    redact_f2p: bool,
}

/// What is graded against: everything but the candidate patch.
#[derive(clap::Args)]
struct TaskArgs {
    /// Task file (TOML or JSON; SWE-bench instances accepted unchanged). Flags override it.
    #[arg(long, value_name = "FILE")]
    task: Option<PathBuf>,
    /// The git repository [default: .]
    #[arg(long, value_name = "PATH")]
    repo: Option<PathBuf>,
    /// The base revision [default: HEAD]
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// The hidden test patch, applied after the candidate.
    #[arg(long, value_name = "FILE")]
    test_patch: Option<PathBuf>,
    #[command(flatten)]
    tests: TestIdArgs,
    #[command(flatten)]
    command: cli::CommandArgs,
    #[command(flatten)]
    apply: cli::PatchArgs,
    /// Environment variable for the commands, KEY=VALUE (repeatable; {workdir} expands).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// Command run once in each fresh checkout before its tests ({workdir} expands).
    #[arg(long, value_name = "CMD")]
    setup_cmd: Option<String>,
    /// Run the tests on the unpatched base too, so P2P tests broken there are not blamed.
    #[arg(long, value_enum, default_value = "run")]
    baseline: Baseline,
    /// Keep the checkouts and logs under DIR.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    #[command(flatten)]
    reuse: cli::ReuseArgs,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    match cli.command {
        Command::Check(args) => stoppable(check(*args)).await,
        Command::Grade(args) => grade(*args),
        Command::Mcp(args) => mcp(*args).await,
        Command::Batch(args) => {
            stoppable(async {
                match cli::offline::batch(*args).await {
                    Ok(true) => ExitCode::SUCCESS,
                    Ok(false) => ExitCode::from(1),
                    Err(e) => usage_error(e),
                }
            })
            .await
        }
        Command::Report(args) => plain(cli::offline::report(args)),
        Command::Compare(args) => plain(cli::offline::compare(args)),
        Command::Merge(args) => plain(cli::offline::merge(args)),
    }
}

/// Run until done or until SIGINT/SIGTERM. Returning from select drops the work: its process
/// groups are killed and its temporary checkouts removed before the process exits; results
/// already written stay as they are.
async fn stoppable(work: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    tokio::select! {
        code = work => code,
        signal = interrupted() => {
            eprintln!("patchgrade: {signal}: stopped, test processes killed, checkouts removed");
            ExitCode::from(if signal == "interrupted" { 130 } else { 143 })
        }
    }
}

fn usage_error(e: anyhow::Error) -> ExitCode {
    eprintln!("patchgrade: error: {e:#}");
    ExitCode::from(EXIT_USAGE)
}

fn plain(done: Result<()>) -> ExitCode {
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => usage_error(e),
    }
}

async fn interrupted() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        let _ = tokio::signal::ctrl_c().await;
        return "interrupted";
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "interrupted",
        _ = term.recv() => "terminated",
    }
}

async fn check(mut args: CheckArgs) -> ExitCode {
    let output = std::mem::replace(
        &mut args.output,
        OutputArgs {
            format: Format::Human,
            junit_out: None,
            max_bytes: 0,
            redact_f2p: false,
            accept: Vec::new(),
        },
    );
    let verdict = match with_patch(args.patch, args.task) {
        Ok(check) => check.run().await.map_err(anyhow::Error::from),
        Err(e) => Err(e),
    };
    emit(verdict, &output)
}

async fn mcp(args: McpArgs) -> ExitCode {
    let options = patchgrade::mcp::Options {
        redact_f2p: args.redact_f2p,
        max_bytes: args.max_bytes,
    };
    let served = match build(args.task) {
        Ok((task, _)) => patchgrade::mcp::serve(patchgrade::mcp::Server::new(task, options))
            .await
            .map_err(anyhow::Error::from),
        Err(e) => Err(e),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("patchgrade: error: {e:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// The task's check with the candidate patch (from the flag, else the task file).
fn with_patch(patch: Option<PathBuf>, task: TaskArgs) -> Result<Check> {
    let (check, from_task) = build(task)?;
    let patch = patch
        .or(from_task)
        .context("no candidate patch: give --patch FILE (or - for stdin)")?;
    Ok(check.patch(patch.display().to_string(), read_input(&patch)?))
}

fn grade(args: GradeArgs) -> ExitCode {
    let verdict = (|| -> Result<Verdict> {
        let syntax = id_syntax(args.ids.as_deref(), args.runner.as_deref())?;
        let (f2p, p2p) = args.tests.resolve(Vec::new(), Vec::new())?;
        let job = FromReports {
            junit: args.junit,
            base_junit: args.base_junit,
            f2p,
            p2p,
            ids: syntax,
            instance_id: None,
        };
        Ok(job.run()?)
    })();
    emit(verdict, &args.output)
}

/// The id syntax from `--ids`, else the runner's, else pytest's.
fn id_syntax(ids: Option<&str>, runner: Option<&str>) -> Result<IdSyntax> {
    Ok(match (ids, runner) {
        (Some(ids), _) => ids.parse()?,
        (None, Some(runner)) => runner.parse::<Preset>()?.id_syntax(),
        (None, None) => IdSyntax::Pytest,
    })
}

/// Print a verdict (or the bad-input error) and pick the exit code.
fn emit(verdict: Result<Verdict>, output: &OutputArgs) -> ExitCode {
    let mut verdict = match verdict {
        Ok(v) => v,
        Err(e) => {
            eprintln!("patchgrade: error: {e:#}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    if output.redact_f2p {
        verdict.redact_f2p();
    }
    let text = match output.format {
        Format::Human => report::human(&verdict),
        Format::Json => format!("{}\n", report::json(&verdict)),
        Format::Feedback => report::feedback(&verdict, output.max_bytes),
    };
    if let Err(e) = cli::stdout(&text) {
        eprintln!("patchgrade: error: {e:#}");
        return ExitCode::from(EXIT_USAGE);
    }
    if let Some(Err(e)) = output
        .junit_out
        .as_ref()
        .map(|path| write_junit(&verdict, path))
    {
        eprintln!("patchgrade: error: {e:#}");
        return ExitCode::from(EXIT_USAGE);
    }
    ExitCode::from(exit_code(&verdict, &output.accept))
}

fn exit_code(verdict: &Verdict, accept: &[Outcome]) -> u8 {
    if accept.contains(&verdict.outcome) {
        0
    } else if verdict.outcome == Outcome::Error {
        EXIT_ERROR
    } else {
        1
    }
}

fn write_junit(verdict: &Verdict, path: &Path) -> Result<()> {
    let xml = report::junit(verdict).context("cannot render the JUnit report")?;
    patchgrade::atomic::write(path, xml.as_bytes())
        .with_context(|| format!("{}: cannot write", path.display()))
}

/// Merge the task file and the flags (flags win) into a check without its patch, and the task
/// file's patch file if it names one.
fn build(args: TaskArgs) -> Result<(Check, Option<PathBuf>)> {
    let task = match &args.task {
        Some(path) => TaskFile::load(path)?,
        None => TaskFile::default(),
    };
    let repo = args
        .repo
        .or(task.repo_path)
        .unwrap_or_else(|| PathBuf::from("."));
    let mut check = Check::new(repo).base(args.base.or(task.base).unwrap_or_else(|| "HEAD".into()));

    match (args.test_patch.or(task.test_patch_file), task.test_patch) {
        (Some(path), _) => check = check.test_patch(path.display().to_string(), read_input(&path)?),
        (None, Some(text)) => {
            let origin = args
                .task
                .as_ref()
                .map(|p| format!("{} (test_patch)", p.display()));
            check = check.test_patch(origin.unwrap_or_default(), text)
        }
        (None, None) => {}
    }

    let (f2p, p2p) = args.tests.resolve(task.f2p, task.p2p)?;
    check = check.f2p(f2p).p2p(p2p);

    let command = test_command(
        args.command.test_cmd.clone().or(task.test_cmd).as_deref(),
        args.command.runner.clone().or(task.runner).as_deref(),
        args.command.ids.clone().or(task.ids).as_deref(),
    )
    .map_err(anyhow::Error::msg)?;
    if let Some(command) = command {
        check = check.command(command);
    }

    if let Some(t) = args.command.timeout()?.or(task.timeout) {
        check = check.timeout(t);
    }
    for (k, v) in task.env {
        check = check.env(k, v);
    }
    for kv in &args.env {
        let (k, v) = parse_env(kv).map_err(anyhow::Error::msg)?;
        check = check.env(k, v);
    }
    if let Some(cmd) = args.setup_cmd.or(task.setup_cmd) {
        check = check.setup_cmd(cmd);
    }
    check = check
        .baseline(args.baseline == Baseline::Run)
        .retries(args.command.retries);
    if let Some(dir) = args.keep {
        check = check.keep(dir);
    }
    if let Some(cache) = args.reuse.cache(patchgrade::BaselineCache::default_dir()) {
        check = check.baseline_cache(cache);
    }
    if let Some(pool) = args.reuse.pool() {
        check = check.workdir_pool(pool);
    }
    check = check
        .strict_apply(args.apply.strict_apply)
        .protection(args.apply.protection()?);
    if let Some(id) = task.instance_id {
        check = check.instance_id(id);
    }
    Ok((check, task.patch_file))
}

/// Ids from flags and an id file replace the task file's list.
fn ids(flags: Vec<String>, file: Option<&Path>, from_task: Vec<String>) -> Result<Vec<String>> {
    let mut ids = flags;
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        ids.extend(parse_id_file(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?);
    } else if ids.is_empty() {
        return Ok(from_task);
    }
    Ok(ids)
}

fn read_input(path: &Path) -> Result<Vec<u8>> {
    if path == Path::new("-") {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .context("stdin: cannot read")?;
        return Ok(buf);
    }
    std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))
}
